"""Validation of objects against the target release's schemas and the CRDs among the inputs
(GPU010-GPU012): the target's sources, CRDs of other files, caching, and the run without the
`gpulint[schema]` extra. The findings of single files are the fixtures of
fixtures/cases/schema/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpulint.api import lint
from gpulint.config import Config
from gpulint.validation import kube

CODES = ("GPU010", "GPU011", "GPU012")

HPA_V2BETA2 = """\
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata: {name: trainer}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: trainer}
  maxReplicas: 4
"""

OLD_DEPLOYMENT = """\
apiVersion: apps/v1beta1
kind: Deployment
metadata: {name: legacy}
spec:
  template:
    spec:
      containers: [{name: trainer, image: "trainer:1.0"}]
"""

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: trainingruns.example.com}
spec:
  group: example.com
  names: {kind: TrainingRun, plural: trainingruns}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    deprecated: true
    deprecationWarning: example.com/v1 TrainingRun is deprecated; use v2
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [gpus]
            properties:
              gpus: {type: integer, minimum: 1}
"""

RUN = """\
apiVersion: example.com/v1
kind: TrainingRun
metadata: {name: llama}
spec:
  gpus: 0
"""


def found(tmp_path: Path, files: dict[str, str], **options: object) -> list[tuple[str, ...]]:
    """(code, file, line:column, message) of every GPU010-GPU012 finding of a run."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = [str(tmp_path / name) for name in files]
    result = lint(paths, root=str(tmp_path), **options)
    return [
        (f.code, f.path, f"{f.line}:{f.column}", f.message)
        for f in result.findings
        if f.code in CODES
    ]


def test_a_removed_version_against_1_35_names_its_replacement(tmp_path: Path) -> None:
    config = Config(kubernetes_version="1.35")
    assert found(tmp_path, {"old.yaml": OLD_DEPLOYMENT}, config=config) == [
        (
            "GPU010",
            "old.yaml",
            "1:13",
            "Deployment `apps/v1beta1` is not served by Kubernetes 1.35 (removed in 1.16): the "
            "API server refuses the object; use `apps/v1`",
        )
    ]


def test_the_config_version_decides_deprecated_or_removed(tmp_path: Path) -> None:
    warned = found(tmp_path, {"hpa.yaml": HPA_V2BETA2}, config=Config(kubernetes_version="1.25"))
    assert warned == [
        (
            "GPU011",
            "hpa.yaml",
            "1:13",
            "HorizontalPodAutoscaler `autoscaling/v2beta2` is deprecated since 1.23, removed in "
            "Kubernetes 1.26: the API server refuses it from then on; use `autoscaling/v2`",
        )
    ]
    removed = found(
        tmp_path, {"hpa.yaml": HPA_V2BETA2}, config=Config(kubernetes_version="v1.26.3")
    )
    assert [(code, where) for code, _, where, _ in removed] == [("GPU010", "1:13")]


def test_the_profile_version_is_the_target_without_a_config_version(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: old}\n"
        'spec:\n  kubernetesVersion: "1.25"\n  pools:\n  - name: cpu\n    nodes: 1\n'
        '    allocatable: {cpu: "8", memory: 32Gi}\n',
        encoding="utf-8",
    )
    result = found(tmp_path, {"hpa.yaml": HPA_V2BETA2}, profile_paths=(str(profile),))
    assert [(code, where) for code, _, where, _ in result] == [("GPU011", "1:13")]


def test_a_crd_in_another_input_validates_its_objects(tmp_path: Path) -> None:
    result = found(tmp_path, {"crd.yaml": CRD, "run.yaml": RUN})
    assert result == [
        (
            "GPU011",
            "run.yaml",
            "1:13",
            "example.com/v1 TrainingRun is deprecated; use v2 (CustomResourceDefinition "
            "`trainingruns.example.com`)",
        ),
        ("GPU012", "run.yaml", "5:9", "`spec.gpus`: 0 is less than the minimum of 1"),
    ]


def test_a_custom_resource_without_its_crd_is_not_guessed_at(tmp_path: Path) -> None:
    assert found(tmp_path, {"run.yaml": RUN.replace("gpus: 0", "gpus: [nonsense]")}) == []


def test_keys_that_are_no_strings_are_read_as_the_api_reads_them(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {1: 2}\ndata: {}\n"
    result = found(tmp_path, {"cm.yaml": text})
    assert [(code, where) for code, _, where, _ in result] == [("GPU012", "5:15")]
    assert "label `1` has an integer (`2`)" in result[0][3]


def test_each_release_and_kind_is_read_and_built_once() -> None:
    version = kube.schema_release((1, 35))
    assert version == (1, 35)
    schemas = kube.release_schemas(version)
    assert schemas is kube.release_schemas(version)
    definition = schemas.definition("apps/v1", "Deployment")
    assert definition == "io.k8s.api.apps.v1.Deployment"
    assert schemas.validator(definition) is schemas.validator(definition)
    assert schemas.definition("apps/v1beta1", "Deployment") is None


_WITHOUT_EXTRA = """\
import sys
sys.modules["kubernetes_validate"] = None  # as if the extra were not installed
from gpulint.cli import main
sys.argv = ["gpulint", *sys.argv[1:]]
main()
"""


def test_without_the_extra_the_run_says_so_once_and_still_knows_removed_versions(
    tmp_path: Path,
) -> None:
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(OLD_DEPLOYMENT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA, "check", "--format", "json", "a.yaml", "b.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    report = json.loads(done.stdout)
    assert [(f["code"], f["path"]) for f in report["findings"] if f["code"] in CODES] == [
        ("GPU010", "a.yaml"),
        ("GPU010", "b.yaml"),
    ]
    note = "GPU012 skipped: objects not validated against the Kubernetes schemas"
    assert sum(note in line for line in report["notes"]) == 1
