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
            "× 1) = 9 > hard 8 `requests.nvidia.com/gpu`, 1 over; the surge pods of every "
            "rolling update are refused (exceeded quota)",
            [],
        )
    ]


# --- the platform repository: a chart with values per environment, a kustomize base with an
# overlay per environment, a namespace quota, two clusters with pools of their own ----------

CLUSTER_PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
metadata: {name: CLUSTER}
spec:
  kubernetesVersion: "1.31"
  provider: eks
  pools:
  - name: POOL
    labels: {eks.amazonaws.com/nodegroup: POOL, nvidia.com/gpu.present: "true"}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    allocatable: {cpu: "47", memory: 180Gi, pods: 110, nvidia.com/gpu: 4}
    nodes: 1
    minNodes: 1
    maxNodes: 2
"""

INFERENCE_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inference
spec:
  replicas: {{ .Values.replicas }}
  strategy: {type: Recreate}
  selector:
    matchLabels: {app: inference}
  template:
    metadata:
      labels: {app: inference}
    spec:
      nodeSelector:
        eks.amazonaws.com/nodegroup: {{ .Values.nodeGroup }}
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
        - name: server
          image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0
          resources:
            requests: {cpu: "4", memory: 16Gi}
            limits: {nvidia.com/gpu: {{ .Values.gpus }}, cpu: "4", memory: 16Gi}
"""

TRAINER_BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: ml
spec:
  replicas: 2
  strategy: {type: Recreate}
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
        - name: trainer
          image: nvcr.io/nvidia/pytorch:24.01-py3
          resources:
            requests: {cpu: "2", memory: 8Gi}
            limits: {nvidia.com/gpu: 1, cpu: "2", memory: 8Gi}
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
"""

PLATFORM_CONFIG = """\
clusters:
  staging: [clusters/staging.yaml]
  prod: [clusters/prod.yaml]
context: [k8s, charts]
charts:
  - path: charts/inference
    namespace: ml
    values-sets:
      dev: {clusters: [staging]}
      prod: {values: [charts/inference/values-prod.yaml], clusters: [prod]}
applied-to:
  k8s/overlays/staging: [staging]
  k8s/overlays/prod: [prod]
"""


def platform_repo() -> dict[str, str]:
    """dev values and the staging overlay go to staging (pool gpu-a10g), prod values and the
    prod overlay to prod (pool gpu-l40s); a quota of 8 GPUs in `ml` in both. The chart names
    no namespace: `charts[].namespace` installs it in `ml`."""
    profile = CLUSTER_PROFILE
    return {
        ".gpulint.yaml": PLATFORM_CONFIG,
        "clusters/staging.yaml": profile.replace("CLUSTER", "staging").replace("POOL", "gpu-a10g"),
        "clusters/prod.yaml": profile.replace("CLUSTER", "prod").replace("POOL", "gpu-l40s"),
        "charts/inference/Chart.yaml": "apiVersion: v2\nname: inference\nversion: 0.1.0\n",
        "charts/inference/values.yaml": "replicas: 1\ngpus: 1\nnodeGroup: gpu-a10g\n",
        "charts/inference/values-prod.yaml": "replicas: 6\nnodeGroup: gpu-l40s\n",
        "charts/inference/templates/deployment.yaml": INFERENCE_TEMPLATE,
        "k8s/quota.yaml": QUOTA,
        "k8s/base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "k8s/base/deployment.yaml": TRAINER_BASE,
        "k8s/overlays/staging/kustomization.yaml": (
            "resources: [../../base]\npatches:\n  - path: pool.yaml\n"
        ),
        # A pool staging does not have: true in staging only.
        "k8s/overlays/staging/pool.yaml": (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: trainer, namespace: ml}\n"
            "spec:\n  template:\n    spec:\n      nodeSelector:\n"
            "        eks.amazonaws.com/nodegroup: gpu-h100\n"
        ),
        "k8s/overlays/prod/kustomization.yaml": (
            "resources: [../../base]\npatches:\n  - path: replicas.yaml\n"
        ),
        "k8s/overlays/prod/replicas.yaml": OVERLAY_REPLICAS.replace("REPLICAS", "4").replace(
            "name: app", "name: trainer"
        ),
    }


#: In prod, inference (6 replicas of the prod values) and the trainer (4 replicas of the prod
#: overlay) overflow both the quota and gpu-l40s (2 nodes × 4); in staging, dev's 1 and the
#: staging overlay's 2 fit, but the staging overlay pins a pool staging does not have.
PROD_QUOTA = (
    "ResourceQuota ml/gpu: used 0 + requested 10 (Deployment/ml/inference: 6; "
    "Deployment/ml/trainer: 4) = 10 > hard 8 `requests.nvidia.com/gpu`, 2 over; {own}; pods "
    "beyond the quota are refused at creation (exceeded quota)"
)
STAGING_POOL = (
    "nodeSelector eks.amazonaws.com/nodegroup=gpu-h100 names a pool this cluster does not have "
    "(pools by eks.amazonaws.com/nodegroup: gpu-a10g)"
)


def platform_findings(result: Result) -> list[tuple[str, str, int, int, str, list[str], str]]:
    """(code, path, line, column, message, clusters, render) of each finding."""
    return [
        (
            f["code"],
            f["path"],
            f["line"],
            f["column"],
            f["message"],
            f.get("clusters") or [],
            f["rendered"]["of"],
        )
        for f in json.loads(result.stdout)["findings"]
    ]


@pytest.mark.parametrize("given", [".", "k8s/overlays/prod/replicas.yaml"])
def test_the_platform_repo_gives_each_true_finding_once_tagged_with_its_cluster(
    repo: Path, given: str
) -> None:
    write_files(repo, platform_repo())
    result = check(given)
    assert result.exit_code == 1, result.output
    found = platform_findings(result)
    # GPU201's wording is the capacity rule's; here only where it is and which cluster.
    # Given the overlay's file, which has findings of its own, the chart's (on the same pool
    # and quota) are not told again.
    chart = (
        []
        if given != "."
        else [
            (
                "GPU201",
                "charts/inference/templates/deployment.yaml",
                6,
                3,
                ["prod"],
                "charts/inference[prod]",
            )
        ]
    )
    assert [f[:4] + f[5:] for f in found if f[0] == "GPU201"] == [
        *chart,
        ("GPU201", "k8s/overlays/prod/replicas.yaml", 5, 3, ["prod"], "k8s/overlays/prod"),
    ]
    others = [f for f in found if f[0] != "GPU201"]
    expected = [
        *[
            (
                "GPU301",
                "charts/inference/templates/deployment.yaml",
                6,
                3,
                PROD_QUOTA.format(own="Deployment/ml/inference: 6 replicas × 1"),
                ["prod"],
                "charts/inference[prod]",
            )
            for _ in chart
        ],
        (
            "GPU301",
            "k8s/overlays/prod/replicas.yaml",
            5,
            3,
            PROD_QUOTA.format(own="Deployment/ml/trainer: 4 replicas × 1"),
            ["prod"],
            "k8s/overlays/prod",
        ),
    ]
    if given == ".":
        # A pre-commit run given the prod overlay's file is not about staging's overlay.
        expected.append(
            (
                "GPU103",
                "k8s/overlays/staging/pool.yaml",
                8,
                9,
                f"{STAGING_POOL}: the pod stays Pending; did you mean `gpu-a10g`?",
                ["staging"],
                "k8s/overlays/staging",
            )
        )
    assert others == expected


def test_unbound_variants_are_judged_against_every_cluster(repo: Path) -> None:
    # Without `clusters:` on the values sets and `applied-to:`, each variant is judged against
    # both clusters: prod's pool is missing in staging, dev's in prod.
    files = platform_repo()
    files[".gpulint.yaml"] = (
        PLATFORM_CONFIG.split("applied-to:")[0]
        .replace(", clusters: [prod]", "")
        .replace("{clusters: [staging]}", "{}")
    )
    write_files(repo, files)
    result = check("charts")
    codes = [(f[0], f[1], f[5]) for f in platform_findings(result) if f[0] == "GPU103"]
    assert codes == [
        ("GPU103", "charts/inference/templates/deployment.yaml", ["prod"]),
        ("GPU103", "charts/inference/templates/deployment.yaml", ["staging"]),
    ]


def test_a_binding_to_a_cluster_the_config_does_not_name_is_refused_at_its_line(
    repo: Path,
) -> None:
    files = platform_repo()
    files[".gpulint.yaml"] = PLATFORM_CONFIG.replace(
        "k8s/overlays/prod: [prod]", "k8s/overlays/prod: [prd]"
    )
    write_files(repo, files)
    result = check(".")
    assert result.exit_code == 2
    assert result.stderr == (
        f"gpulint: error: {repo / '.gpulint.yaml'}:13:23: cluster `prd` is not among "
        "`clusters:` (staging, prod)\n"
    )


def test_a_charts_namespace_is_the_namespace_of_its_objects(repo: Path) -> None:
    # The chart names no namespace; installed in `ml`, its prod replicas overflow ml's quota.
    files = platform_repo()
    files[".gpulint.yaml"] = (
        "charts:\n  - path: charts/inference\n    namespace: ml\n    values-sets:\n"
        "      dev: {}\n      prod: {values: [charts/inference/values-prod.yaml]}\n"
    )
    files["k8s/quota.yaml"] = QUOTA.replace('"8"', '"4"')
    write_files(repo, files)
    result = check("--select", "GPU301", "charts", "k8s/quota.yaml")
    assert result.exit_code == 1, result.output
    # dev's 1 replica and prod's 6 are one Deployment: 6, not 7.
    assert found(result) == [
        (
            "GPU301",
            "charts/inference/templates/deployment.yaml",
            6,
            3,
            "ResourceQuota ml/gpu: used 0 + requested 6 (6 replicas × 1) = 6 > hard 4 "
            "`requests.nvidia.com/gpu`, 2 over; pods beyond the quota are refused at creation "
            "(exceeded quota)",
            [],
        )
    ]
