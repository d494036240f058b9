"""`managedBy`: a job handed to another controller (MultiKueue) has no pods on the cluster it is
applied to, so its pods are not judged against that cluster's nodes and admission (GPU021 says
so); a Job's field is honoured only from the release whose API server keeps it by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main

PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  managedBy: %s
  template:
    spec:
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: "4", memory: 16Gi}
          limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
      restartPolicy: Never
"""


def _findings(tmp_path: Path, manifest: str, profile: str) -> list[tuple[str, int, int, str]]:
    path = tmp_path / "job.yaml"
    path.write_text(manifest, encoding="utf-8")
    args = ["check", "--isolated", "--format", "json", str(path), "--profile", profile]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    found = json.loads(result.stdout)["findings"]
    return [(f["code"], f["line"], f["column"], f["message"]) for f in found]


def test_a_job_handed_to_multikueue_is_not_judged_against_the_manager(tmp_path: Path) -> None:
    found = _findings(
        tmp_path, JOB % "kueue.x-k8s.io/multikueue", str(PROFILES / "multikueue-manager.yaml")
    )
    assert [(code, line, column) for code, line, column, _ in found] == [("GPU021", 5, 14)]
    assert found[0][3].startswith(
        "Job/train is handed to `kueue.x-k8s.io/multikueue` by `spec.managedBy`: "
    )


def test_the_job_controllers_own_name_is_judged_here(tmp_path: Path) -> None:
    found = _findings(
        tmp_path, JOB % "kubernetes.io/job-controller", str(PROFILES / "multikueue-manager.yaml")
    )
    assert [(code, line, column) for code, line, column, _ in found] == [("GPU001", 13, 44)]


@pytest.mark.parametrize("value", ['""', "[kueue.x-k8s.io/multikueue]"])
def test_a_value_that_names_no_controller_hands_nothing_over(tmp_path: Path, value: str) -> None:
    found = _findings(tmp_path, JOB % value, str(PROFILES / "multikueue-manager.yaml"))
    assert "GPU021" not in {code for code, *_ in found}
    assert ("GPU001", 13, 44) in {(code, line, column) for code, line, column, _ in found}


def test_before_1_32_the_job_controller_still_runs_the_job(tmp_path: Path) -> None:
    """The field is alpha in 1.30 and 1.31: the API server drops it unless the JobManagedBy
    gate is on, and the Job controller creates the pods on this cluster."""
    found = _findings(tmp_path, JOB % "kueue.x-k8s.io/multikueue", str(PROFILES / "cpu-only.yaml"))
    assert [(code, line, column) for code, line, column, _ in found] == [("GPU001", 13, 44)]
