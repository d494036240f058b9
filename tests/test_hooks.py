"""The pre-commit hooks' definitions: which changed files each hook gets (pre-commit's own
classifier over .pre-commit-hooks.yaml), and what `gpulint check --changed-files` makes of them.
The hooks run for real under pre-commit in test_precommit.py (slow)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from pre_commit.clientlib import load_manifest
from pre_commit.commands.run import Classifier

from gpulint.cli import main
from tests.repos import make_repo

# helm4_dir and tool_env: the official binaries, on a PATH of their own.
pytest_plugins = ["tests.binaries"]

ROOT = Path(__file__).resolve().parent.parent

CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "chart/values.yaml": "gpus: 1\n",
    "chart/templates/_helpers.tpl": '{{- define "trainer.name" -}}trainer{{- end }}\n',
    "chart/templates/pod.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ include "trainer.name" . }}
spec:
  containers:
  - name: trainer
    image: trainer:1.0
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits:
        nvidia.com/gpus: {{ .Values.gpus }}
""",
    # A Helm template outside any chart, a README, and a manifest beside the chart.
    "stray/templates/pod.yaml": "kind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n",
    "k8s/README.md": "# manifests\n\nnote: this: is not yaml\n",
    "k8s/job.yaml": """\
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  containers:
  - name: job
    image: job:1.0
    resources:
      requests: {cpu: "1", nvidia.com/gpu: 1}
""",
}


def hook_files(repo: Path, changed: list[str]) -> dict[str, list[str]]:
    """The changed files pre-commit gives each hook of .pre-commit-hooks.yaml, by hook id."""
    hooks = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        classifier = Classifier(changed)
        # The hook's attributes, as pre-commit's Hook record holds them.
        return {
            hook["id"]: list(classifier.filenames_for_hook(SimpleNamespace(**hook)))
            for hook in hooks
        }
    finally:
        os.chdir(cwd)


def test_one_hook_gets_every_changed_file_of_a_chart(tmp_path: Path) -> None:
    # A commit changing a chart's values, template and helper: the gpulint hook gets all of
    # them (one process: one render), gpulint-charts none (a second process would render it
    # again). Text files of other names are left out unless a config's `files:` says otherwise.
    repo = make_repo(tmp_path / "repo", CHART)
    given = hook_files(repo, sorted(CHART))
    assert given["gpulint"] == sorted(set(CHART) - {"k8s/README.md"})
    assert given["gpulint-charts"] == []


def test_changed_files_render_a_chart_once_and_skip_what_is_no_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_env, helm4_dir: Path
) -> None:
    # helm is a script that notes each render and runs the official build.
    log = tmp_path / "renders.log"
    wrapper = tmp_path / "wrap" / "helm"
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\n[ "$1" = template ] && echo "$@" >> {log}\nexec {helm4_dir / "helm"} "$@"\n'
    )
    wrapper.chmod(0o755)
    repo = make_repo(tmp_path / "repo", CHART)
    tool_env(helm=wrapper)
    monkeypatch.chdir(repo)
    args = ["check", "--isolated", "--no-cache", "--format", "json", "--changed-files"]
    result = CliRunner().invoke(main, [*args, *sorted(CHART)])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert [(f["code"], f["path"], f["line"], f["column"]) for f in report["findings"]] == [
        ("GPU001", "chart/templates/pod.yaml", 12, 9),
        ("GPU002", "k8s/job.yaml", 9, 28),
    ]
    assert report["findings"][0]["message"] == (
        "container `trainer` limits `nvidia.com/gpus`, which no device plugin advertises: "
        "the pod can never be scheduled; did you mean `nvidia.com/gpu`?"
    )
    # The chart (four of its files given) and the manifest: the README and the template
    # outside a chart are not read.
    assert report["summary"]["files"] == 2
    assert len(log.read_text().splitlines()) == 1
    # Given only files that are no manifests, the hook checks nothing (not the directory).
    result = CliRunner().invoke(main, [*args, "k8s/README.md", "stray/templates/pod.yaml"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["summary"]["files"] == 0
    # Without the flag, a file given by name is read whatever its name.
    result = CliRunner().invoke(main, [*args[:-1], "k8s/README.md"])
    assert [f["code"] for f in json.loads(result.stdout)["findings"]] == ["GPU000"]
