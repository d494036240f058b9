"""What is deployed where: a kustomize base and its overlays, and a chart's values sets, are
variants of the same objects, counted once by the corpus-wide rules (quota, capacity)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main
from tests.binaries import venv_kubectl
from tests.repos import write_files

# helm4_dir and tool_env: the official binaries, on a PATH of their own.
pytest_plugins = ["tests.binaries"]

QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: "8"}
"""

BASE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: ml}
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - name: app
          image: nvcr.io/nvidia/pytorch:24.01-py3
          resources:
            limits: {nvidia.com/gpu: 1}
"""

OVERLAY_REPLICAS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: ml}
spec:
  replicas: REPLICAS
"""


def base_and_overlay(replicas: int) -> dict[str, str]:
    """A quota of 8 GPUs in `ml`, a base of 2 one-GPU replicas and a prod overlay of
    `replicas`, with `context: [k8s]` as docs/pre-commit.md recommends."""
    return {
        ".gpulint.yaml": "context: [k8s]\nselect: [GPU301]\n",
        "k8s/quota.yaml": QUOTA,
        "k8s/base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "k8s/base/deployment.yaml": BASE_DEPLOYMENT,
        "k8s/overlays/prod/kustomization.yaml": (
            "resources: [../../base]\npatches:\n  - path: replicas.yaml\n"
        ),
        "k8s/overlays/prod/replicas.yaml": OVERLAY_REPLICAS.replace("REPLICAS", str(replicas)),
    }


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_env, helm4_dir: Path) -> Path:
    """An empty working directory, helm v4 and kubectl on PATH."""
    kubectl = venv_kubectl() or helm4_dir / "kubectl"
    tool_env(helm=helm4_dir / "helm", kubectl=kubectl)
    work = tmp_path / "repo"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def check(*args: str) -> Result:
    """`gpulint check --format json ARGS` in-process."""
    return CliRunner().invoke(main, ["check", "--format", "json", *args])


def found(result: Result) -> list[tuple[str, str, int, int, str, list[str]]]:
    """(code, path, line, column, message, clusters) of each finding of a JSON report."""
    return [
        (f["code"], f["path"], f["line"], f["column"], f["message"], f.get("clusters") or [])
        for f in json.loads(result.stdout)["findings"]
    ]


@pytest.mark.parametrize(
    "given",
    [
        "k8s/overlays/prod/replicas.yaml",
        "k8s/overlays/prod/kustomization.yaml",
        "k8s/base/deployment.yaml",
        "k8s/quota.yaml",
        "k8s",
    ],
)
def test_a_base_and_its_overlay_are_one_object_under_the_quota(repo: Path, given: str) -> None:
    # (6 replicas + 2 surge) × 1 GPU is the quota exactly: the base's 2 replicas are the same
    # Deployment, not 3 more GPUs.
    write_files(repo, base_and_overlay(6))
    result = check(given)
    assert result.exit_code == 0, result.output
    assert found(result) == []


@pytest.mark.parametrize(
    "given",
    ["k8s/overlays/prod/replicas.yaml", "k8s/base/deployment.yaml", "k8s/quota.yaml", "k8s"],
)
def test_an_overlay_overflowing_the_quota_is_reported_once_whatever_file_changed(
    repo: Path, given: str
) -> None:
    # A change to the base is a change to the overlay built on it: its finding is reported.
    write_files(repo, base_and_overlay(7))
    result = check(given)
    assert result.exit_code == 1, result.output
    assert found(result) == [
        (
            "GPU301",
            "k8s/overlays/prod/replicas.yaml",
            5,
            3,
            "ResourceQuota ml/gpu: used 0 + requested 9 ((7 replicas + 2 rolling-update surge) "
            "× 1) > hard 8 `requests.nvidia.com/gpu`; the surge pods of every rolling update "
            "are refused (exceeded quota)",
            [],
        )
    ]
