"""Validation of objects against the target release's schemas and the CRDs among the inputs
(GPU010-GPU012): the target's sources, CRDs of other files, caching, and the run without the
`gpulint[schema]` extra. The findings of single files are the fixtures of
fixtures/cases/schema/."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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


def node(name: str, kubelet: str, **labels: str) -> str:
    """A GPU node of a `kubectl get nodes -o yaml` dump, with its kubelet's version."""
    return f"""\
- apiVersion: v1
  kind: Node
  metadata:
    name: {name}
    labels: {json.dumps({"node.kubernetes.io/instance-type": "g6.xlarge", **labels})}
  status:
    allocatable: {{cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}}
    capacity: {{cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}}
    conditions: [{{type: Ready, status: "True"}}]
    nodeInfo: {{kubeletVersion: {kubelet}}}
"""


NODES = (
    "apiVersion: v1\nkind: List\nitems:\n"
    + node("gpu-1", "v1.31.4-eks-0a21954")
    + node("gpu-2", "v1.30.8-eks-0a21954")
    # A virtual kubelet reports a version of its own, not bound to the API server's.
    + node("aci", "v1.35.0-vk-azure-aci-1.6.2", type="virtual-kubelet")
)

# Pod-level `spec.resources` is in the schemas from 1.32; DeviceClass `resource.k8s.io/v1` is
# served from 1.34; `apps/v1beta1` Deployments were removed in 1.16.
NEWER_FIELDS = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  resources:
    limits: {cpu: "4"}
  hostNetwork: "yes"
  containers:
  - name: trainer
    image: trainer:1.0
    resources:
      limits: {nvidia.com/gpu: 1}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
"""


def test_the_newest_kubelet_is_a_lower_bound_and_what_a_newer_release_accepts_a_warning(
    tmp_path: Path,
) -> None:
    (tmp_path / "nodes.yaml").write_text(NODES, encoding="utf-8")
    result = found(
        tmp_path,
        {"pod.yaml": NEWER_FIELDS, "old.yaml": OLD_DEPLOYMENT},
        profile_paths=(str(tmp_path / "nodes.yaml"),),
    )
    bound = "the oldest release the API server can run"
    source = "the cluster profile's minimumKubernetesVersion"
    assert result == [
        # Removed long before the oldest release the nodes allow: refused by any of them.
        (
            "GPU010",
            "old.yaml",
            "1:13",
            "Deployment `apps/v1beta1` is not served by Kubernetes 1.31 (removed in 1.16): the "
            "API server refuses the object; use `apps/v1`",
        ),
        (
            "GPU012",
            "pod.yaml",
            "5:3",
            "unknown field `spec.resources` (did you mean `resourceClaims`?): the API server "
            "refuses the object under strict field validation (`kubectl apply`'s default), and "
            f"drops the field otherwise (Kubernetes 1.31: {bound}, by {source}; 1.37 accepts "
            "it)",
        ),
        # A wrong type in every release is an error.
        (
            "GPU012",
            "pod.yaml",
            "7:16",
            "`spec.hostNetwork` is a string (`yes`), but the API needs a boolean (true or false)",
        ),
        (
            "GPU010",
            "pod.yaml",
            "14:13",
            f"DeviceClass `resource.k8s.io/v1` is not served by Kubernetes 1.31, {bound} "
            f"({source}); 1.37 serves it: the API server refuses the object unless it runs a "
            "release that serves it",
        ),
    ]
    profile = (str(tmp_path / "nodes.yaml"),)
    severities = {
        (f.code, f.line): f.severity.name
        for f in lint([str(tmp_path / "pod.yaml")], profile_paths=profile).findings
        if f.code in CODES
    }
    assert severities == {
        ("GPU012", 5): "WARNING",
        ("GPU012", 7): "ERROR",
        ("GPU010", 14): "WARNING",
    }


def test_a_stated_version_wins_over_the_nodes_bound(tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(NODES, encoding="utf-8")
    (tmp_path / "cluster.yaml").write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: ml}\n"
        'spec:\n  kubernetesVersion: "1.35"\n  pools: []\n',
        encoding="utf-8",
    )
    profiles = (str(tmp_path / "nodes.yaml"), str(tmp_path / "cluster.yaml"))
    result = found(tmp_path, {"pod.yaml": NEWER_FIELDS}, profile_paths=profiles)
    assert [(code, where) for code, _, where, _ in result] == [("GPU012", "7:16")]


def test_the_nodes_bound_is_kept_by_profile_export_and_shown(tmp_path: Path) -> None:
    from gpulint.profile import load_profiles
    from gpulint.profile.dump import dump_profile
    from gpulint.profile.show import show_profile

    (tmp_path / "nodes.yaml").write_text(NODES, encoding="utf-8")
    profile = load_profiles([str(tmp_path / "nodes.yaml")])
    assert profile.minimum_kubernetes_version == "v1.31.4-eks-0a21954"
    assert profile.kubernetes_version is None
    exported = dump_profile(profile)
    assert 'minimumKubernetesVersion: "v1.31.4-eks-0a21954"' in exported
    (tmp_path / "exported.yaml").write_text(exported, encoding="utf-8")
    assert load_profiles([str(tmp_path / "exported.yaml")]) == profile
    assert "Kubernetes v1.31.4-eks-0a21954 or newer" in show_profile(profile)


def test_infrastructure_code_states_the_control_plane_release(tmp_path: Path) -> None:
    pytest.importorskip("tfparse")
    from gpulint.profile import load_profiles

    eks, gke, two = tmp_path / "eks", tmp_path / "gke", tmp_path / "two"
    for directory in (eks, gke, two):
        directory.mkdir()
    # A node group's version is its kubelets', not the control plane's.
    (eks / "main.tf").write_text(
        'resource "aws_eks_cluster" "ml" {\n  name    = "ml"\n  version = "1.25"\n}\n'
        'module "gpu" {\n'
        '  source             = "terraform-aws-modules/eks/aws//modules/eks-managed-node-group"\n'
        '  name               = "gpu"\n  kubernetes_version = "1.24"\n'
        '  instance_types     = ["g6.xlarge"]\n}\n',
        encoding="utf-8",
    )
    # GKE upgrades a control plane past its min_master_version: the oldest it runs.
    (gke / "main.tf").write_text(
        'resource "google_container_cluster" "ml" {\n  name               = "ml"\n'
        '  min_master_version = "1.31.5-gke.1014001"\n}\n',
        encoding="utf-8",
    )
    # Two clusters of different releases in one module: neither is the target.
    (two / "main.tf").write_text(
        'resource "aws_eks_cluster" "a" {\n  name    = "a"\n  version = "1.25"\n}\n'
        'resource "aws_eks_cluster" "b" {\n  name    = "b"\n  version = "1.33"\n}\n',
        encoding="utf-8",
    )
    versions = {
        name: (p.kubernetes_version, p.minimum_kubernetes_version)
        for name in ("eks", "gke", "two")
        for p in [load_profiles([str(tmp_path / name)])]
    }
    assert versions == {
        "eks": ("1.25", None),
        "gke": (None, "1.31.5-gke.1014001"),
        "two": (None, None),
    }
    result = found(tmp_path, {"hpa.yaml": HPA_V2BETA2}, profile_paths=(str(eks),))
    assert [(code, where) for code, _, where, _ in result] == [("GPU011", "1:13")]
    result = found(tmp_path, {"pod.yaml": NEWER_FIELDS}, profile_paths=(str(gke),))
    assert [(code, where, "accepts it" in message) for code, _, where, message in result] == [
        ("GPU012", "5:3", True),
        ("GPU012", "7:16", False),
        ("GPU010", "14:13", False),
    ]


def test_an_eksctl_config_states_the_control_plane_release(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\n"
        'metadata: {name: ml, region: us-east-1, version: "1.25"}\n'
        "managedNodeGroups:\n- {name: gpu, instanceType: g6.xlarge, minSize: 0, maxSize: 2}\n",
        encoding="utf-8",
    )
    profile = (str(tmp_path / "cluster.yaml"),)
    result = found(tmp_path, {"hpa.yaml": HPA_V2BETA2}, profile_paths=profile)
    assert [(code, where) for code, _, where, _ in result] == [("GPU011", "1:13")]


def crd_item(text: str) -> str:
    """`text`, one object, as an item of a List."""
    lines = text.splitlines()
    return "".join(f"{'- ' if i == 0 else '  '}{line}\n" for i, line in enumerate(lines))


def test_the_crds_of_a_cluster_dump_validate_the_custom_resources(tmp_path: Path) -> None:
    dump = "apiVersion: v1\nkind: List\nitems:\n" + node("gpu-1", "v1.35.1") + crd_item(CRD)
    (tmp_path / "dump.yaml").write_text(dump, encoding="utf-8")
    profile = (str(tmp_path / "dump.yaml"),)
    result = found(tmp_path, {"run.yaml": RUN}, profile_paths=profile)
    assert [(code, where, message) for code, _, where, message in result] == [
        (
            "GPU011",
            "1:13",
            "example.com/v1 TrainingRun is deprecated; use v2 (CustomResourceDefinition "
            "`trainingruns.example.com`)",
        ),
        ("GPU012", "5:9", "`spec.gpus`: 0 is less than the minimum of 1"),
    ]
    # A CRD among the inputs is what will be applied: it replaces the cluster's.
    upgraded = CRD.replace("- name: v1", "- name: v2").replace("deprecated: true", "")
    result = found(tmp_path, {"crd.yaml": upgraded, "run.yaml": RUN}, profile_paths=profile)
    assert [(code, where) for code, _, where, _ in result] == [("GPU010", "1:13")]
    assert "(it serves `example.com/v2`)" in result[0][3]


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _built_in_objects() -> list[tuple[str, Any]]:
    """(where, document) of every object of the fixtures' files that is a built-in kind."""
    from gpulint.loader import load

    paths = sorted(
        p
        for folder in ("cases", "real")
        for p in (FIXTURES / folder).rglob("*")
        if p.suffix in (".yaml", ".yml", ".json")
    )
    documents = load(paths).documents
    return [(f"{d.file.path}:{d.kind_pos[0]}", d) for d in documents]


@pytest.mark.parametrize("version", [(1, 30), (1, 37)])
def test_an_object_said_surely_valid_is_one_the_validator_accepts(
    version: tuple[int, int],
) -> None:
    # The validator is skipped for what surely_valid accepts: that must be nothing it refuses.
    schemas = kube.release_schemas(version)
    accepted = refused = 0
    for where, document in _built_in_objects():
        definition = schemas.definition(document.ref.api_version, document.ref.kind)
        if definition is None:
            continue
        valid = schemas.validator(definition).is_valid(kube_instance(document.obj))
        if kube.surely_valid(document.obj, definition, schemas.definitions(definition)):
            assert valid, where
            accepted += 1
        refused += not valid
    # Not a vacuous agreement: most objects are judged without the validator, and the
    # fixtures hold objects it refuses.
    assert accepted > 300 and refused > 20


def kube_instance(obj: Any) -> Any:
    """`obj` as the validator is given it: keys that are no strings as their text."""
    from gpulint.validation.problems import _string_keys

    return _string_keys(obj)


def test_only_what_gpu004_reports_is_passed_over(tmp_path: Path) -> None:
    # A container's `resource:` is GPU004's; `volumeMount:` is unknown to it, and GPU012's.
    text = OLD_DEPLOYMENT.replace("apps/v1beta1", "apps/v1").replace(
        "spec:\n  template:", "spec:\n  selector: {matchLabels: {app: a}}\n  template:"
    )
    schemas = kube.release_schemas((1, 37))
    definition = "io.k8s.api.apps.v1.Deployment"
    definitions = schemas.definitions(definition)
    from gpulint.loader import load
    from gpulint.rules.schema_rules import _unknown_said

    for key, passed in (("resource", True), ("volumeMount", False)):
        (tmp_path / "d.yaml").write_text(
            text.replace('image: "trainer:1.0"}', f'image: "t:1", {key}: {{}}}}'),
            encoding="utf-8",
        )
        (document,) = load([tmp_path / "d.yaml"]).documents
        assert not kube.surely_valid(document.obj, definition, definitions)
        assert kube.surely_valid(document.obj, definition, definitions, _unknown_said) is passed


def test_what_the_schemas_give_is_kept_in_the_cache_and_another_users_entry_ignored(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    files = {"typo.yaml": "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: t}\n"}
    options = {"config": Config(kubernetes_version="1.35"), "cache_dir": str(cache)}
    kube.release_schemas.cache_clear()  # read once per process: this run reads the cache
    first = found(tmp_path, files, use_cache=True, **options)
    assert [(code, where) for code, _, where, _ in first] == [("GPU010", "1:13")]
    assert "(did you mean `Deployment`?)" in first[0][3]
    # No object was validated: the index of the kinds 1.35 serves is all that was kept.
    (index,) = (cache / "schemas").iterdir()
    assert index.name.startswith("v1.35-") and ".kinds." in index.name
    assert index.stat().st_mode & 0o077 == 0
    kube.release_schemas.cache_clear()
    assert found(tmp_path, files, use_cache=True, **options) == first

    # The index is what the run reads: one that serves the typo is believed...
    served = [["apps/v1", "Deploymnet", "io.k8s.api.apps.v1.Deployment"]]
    index.write_bytes(marshal.dumps(served))
    kube.release_schemas.cache_clear()
    believed = found(tmp_path, files, use_cache=True, **options)
    assert [code for code, *_ in believed] == ["GPU012"]  # served: no GPU010, and validated
    # ... unless another user wrote it.
    if os.geteuid() != 0:
        pytest.skip("making a file of another user's needs root")
    os.chown(index, 12345, 12345)
    kube.release_schemas.cache_clear()
    assert found(tmp_path, files, use_cache=True, **options) == first
    kube.release_schemas.cache_clear()


def test_copies_of_a_crd_are_kept_once_and_the_first_validates_every_file(
    tmp_path: Path,
) -> None:
    from gpulint.engine.plan import plan
    from gpulint.engine.record import Run
    from gpulint.loader import discover
    from gpulint.rules import registry

    # The same chart's CRDs copied into many directories: the first copy is what
    # `crd_kinds` reads; the others (here a looser one, which would allow 0) are not kept.
    looser = CRD.replace("minimum: 1", "minimum: 0").replace("trainingruns.", "copy.")
    for directory in ("a", "b", "c"):
        (tmp_path / directory).mkdir()
    files = {"a/crd.yaml": CRD, "b/crd.yaml": looser, "c/crd.yaml": looser, "run.yaml": RUN}
    result = found(tmp_path, files)
    assert [(code, path, where) for code, path, where, _ in result] == [
        ("GPU011", "run.yaml", "1:13"),
        ("GPU012", "run.yaml", "5:9"),
    ]
    paths = [str(tmp_path / name) for name in files]
    record = Run(paths=paths, config=Config(), rules=registry())
    knowledge = plan(record, discover(paths))[0].knowledge
    assert [(d.file.path, d.ref.name) for d in knowledge] == [
        (paths[0], "trainingruns.example.com")
    ]
