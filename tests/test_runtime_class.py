"""RuntimeClass: what the profile knows of the cluster's classes, what the RuntimeClass
admission plugin writes into a pod (tolerations, nodeSelector, overhead), and what it refuses
(GPU307)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpulint.admission import admit, runtime_class_refusal, with_manifest_runtime_classes
from gpulint.api import lint
from gpulint.errors import GpulintError
from gpulint.loader import load_text
from gpulint.model import PodTemplate
from gpulint.profile.dump import dump_profile
from gpulint.profile.kubectl import profile_from_objects
from gpulint.profile.load import load_profiles
from gpulint.profile.merge import ProfileFacts, merge
from gpulint.profile.model import ClusterProfile, FlavorToleration, RuntimeClass
from gpulint.profile.policy import RuntimeClassInEffect, runtime_classes_in_effect
from gpulint.profile.show import show_profile
from gpulint.scheduling import place
from gpulint.workloads import workload_of

#: The pools of tests/: an A100 pool tainted `dedicated=training` and an untainted L4 pool.
PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
spec:
  platform: kubeadm
  pools:
  - name: a100
    labels: {pool: a100}
    taints: [{key: dedicated, value: training, effect: NoSchedule}]
    allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 8}
    nodes: 1
  - name: l4
    labels: {pool: l4}
    allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: 2}
    nodes: 1
"""
CLASSES = """\
  runtimeClasses:
  - name: nvidia
    handler: nvidia
  - name: nvidia-a100
    handler: nvidia
    scheduling:
      nodeSelector: {pool: a100}
      tolerations:
      - {key: dedicated, operator: Equal, value: training, effect: NoSchedule}
    overhead:
      podFixed: {cpu: 500m, memory: 1Gi}
"""


def profile_of(tmp_path: Path, text: str) -> ClusterProfile:
    path = tmp_path / "profile.yaml"
    path.write_text(text, encoding="utf-8")
    return load_profiles([str(path)])


def pod(spec: str) -> PodTemplate:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + "".join(
        f"  {line}\n" for line in spec.strip("\n").splitlines()
    )
    workload = workload_of(load_text("pod.yaml", text).documents[0])
    assert workload is not None
    return workload.templates[0]


GPU_POD = """
containers:
- name: c
  image: cuda:12
  resources:
    limits: {cpu: "15", memory: 8Gi, nvidia.com/gpu: 1}
"""


# --- the profile ------------------------------------------------------------------------------


def test_declared_classes_are_read_and_known(tmp_path: Path) -> None:
    profile = profile_of(tmp_path, PROFILE + CLASSES)
    assert profile.runtime_classes_known
    assert profile.runtime_classes == (
        RuntimeClass("nvidia", "nvidia"),
        RuntimeClass(
            "nvidia-a100",
            "nvidia",
            {"pool": "a100"},
            (FlavorToleration("dedicated", "Equal", "training", "NoSchedule"),),
            {"cpu": Decimal("0.5"), "memory": Decimal(2**30)},
        ),
    )
    assert "RuntimeClass" in profile.object_kinds


def test_an_empty_list_is_known_and_no_list_is_not(tmp_path: Path) -> None:
    empty = profile_of(tmp_path, PROFILE + "  runtimeClasses: []\n")
    assert (empty.runtime_classes, empty.runtime_classes_known) == ((), True)
    assert "RuntimeClass" in empty.object_kinds
    unknown = profile_of(tmp_path, PROFILE)
    assert (unknown.runtime_classes, unknown.runtime_classes_known) == ((), False)
    assert "RuntimeClass" not in unknown.object_kinds


@pytest.mark.parametrize("classes", [CLASSES, "  runtimeClasses: []\n", ""])
def test_the_dump_reads_back_as_the_same_profile(tmp_path: Path, classes: str) -> None:
    profile = profile_of(tmp_path, PROFILE + classes)
    text = dump_profile(profile)
    assert ("runtimeClasses:" in text) == bool(classes)
    again = profile_of(tmp_path, text)
    assert again == profile
    assert again.runtime_classes_known == profile.runtime_classes_known


def test_a_bad_overhead_is_refused_at_its_line(tmp_path: Path) -> None:
    text = PROFILE + "  runtimeClasses:\n  - name: kata\n    overhead: {podFixed: {cpu: lots}}\n"
    with pytest.raises(GpulintError) as raised:
        profile_of(tmp_path, text)
    assert str(raised.value) == (
        f"{tmp_path / 'profile.yaml'}:17:32: spec.runtimeClasses.0.overhead.podFixed.cpu: "
        "'lots' is not a Kubernetes quantity (write it like 8, 500m or 16Gi)"
    )


def test_a_class_listed_twice_is_refused(tmp_path: Path) -> None:
    text = PROFILE + "  runtimeClasses:\n  - name: kata\n  - name: kata\n"
    with pytest.raises(GpulintError, match=r"spec\.runtimeClasses\.1\.name: `kata` is listed"):
        profile_of(tmp_path, text)


def test_profile_show_lists_the_classes(tmp_path: Path) -> None:
    shown = show_profile(profile_of(tmp_path, PROFILE + CLASSES)).splitlines()
    assert [line for line in shown if line.startswith("RuntimeClass")] == [
        "RuntimeClass nvidia: handler nvidia",
        "RuntimeClass nvidia-a100: handler nvidia; nodeSelector pool=a100; tolerates "
        "dedicated=training:NoSchedule; overhead cpu 0.5, memory 1Gi",
    ]
    none = show_profile(profile_of(tmp_path, PROFILE + "  runtimeClasses: []\n")).splitlines()
    assert [line for line in none if line.startswith("RuntimeClass")] == ["RuntimeClass: none"]


RUNTIME_CLASS = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "nvidia"},
    "handler": "nvidia",
}


def test_a_dump_of_runtime_classes_knows_them_all() -> None:
    listed = profile_from_objects([{"kind": "List", "items": [RUNTIME_CLASS]}])
    assert listed.runtime_classes == (RuntimeClass("nvidia", "nvidia"),)
    assert listed.runtime_classes_known
    # `kubectl get runtimeclasses -o yaml` on a cluster with none: known to be none.
    none = profile_from_objects([{"kind": "RuntimeClassList", "items": []}])
    assert (none.runtime_classes, none.runtime_classes_known) == ((), True)
    # A dump that lists other kinds only says nothing of RuntimeClasses.
    other = profile_from_objects([{"kind": "PriorityClassList", "items": []}])
    assert not other.runtime_classes_known


def test_a_dump_with_a_bad_overhead_is_refused() -> None:
    bad = {**RUNTIME_CLASS, "overhead": {"podFixed": {"cpu": "lots"}}}
    with pytest.raises(GpulintError, match=r"overhead\.podFixed\.cpu: 'lots' is not"):
        profile_from_objects([bad], source="dump.yaml")


def test_one_input_that_knows_every_class_makes_the_merge_know_them() -> None:
    known = ClusterProfile(runtime_classes=(RuntimeClass("nvidia"),), runtime_classes_known=True)
    other = ClusterProfile(runtime_classes=(RuntimeClass("kata"),))
    for order in ((known, other), (other, known)):
        merged = merge([ProfileFacts(p) for p in order])
        assert merged.runtime_classes_known
        assert {c.name for c in merged.runtime_classes} == {"nvidia", "kata"}
    assert not merge([ProfileFacts(other)]).runtime_classes_known


# --- the pod as admitted ----------------------------------------------------------------------


def test_the_class_tolerations_are_the_pods(tmp_path: Path) -> None:
    profile = profile_of(tmp_path, PROFILE + CLASSES)
    template = pod("runtimeClassName: nvidia-a100\n" + GPU_POD)
    admitted = admit(template, profile)
    assert admitted.certain
    assert [(t.key, t.value, t.effect) for t in admitted.tolerations] == [
        ("dedicated", "training", "NoSchedule")
    ]
    assert admitted.stages == ("RuntimeClass nvidia-a100 adds `dedicated`",)
    # Without them the A100 pool's taint keeps the pod out.
    assert place(template, profile).fits[0].untolerated
    verdict = place(template, profile, admitted.tolerations, admitted.node_selector)
    assert not verdict.fits[0].untolerated


def test_the_class_node_selector_is_the_pods(tmp_path: Path) -> None:
    profile = profile_of(tmp_path, PROFILE + CLASSES)
    template = pod("runtimeClassName: nvidia-a100\n" + GPU_POD)
    admitted = admit(template, profile)
    assert admitted.node_selector == {"pool": "a100"}
    verdict = place(template, profile, admitted.tolerations, admitted.node_selector)
    assert [f.pool.name for f in verdict.fits if f.mismatch is None] == ["a100"]
    # A class without scheduling adds nothing: both pools match.
    plain = admit(pod("runtimeClassName: nvidia\n" + GPU_POD), profile)
    assert (plain.node_selector, plain.tolerations, plain.overhead) == ({}, (), {})


def test_the_class_overhead_adds_to_the_pods_requests(tmp_path: Path) -> None:
    profile = profile_of(tmp_path, PROFILE + CLASSES)
    template = pod("runtimeClassName: nvidia-a100\n" + GPU_POD)
    admitted = admit(template, profile)
    assert admitted.overhead == {"cpu": Decimal("0.5"), "memory": Decimal(2**30)}
    # 15 CPUs fit a 16-CPU node with the overhead's 0.5; 16 fit it alone, not with it.
    verdict = place(template, profile, admitted.tolerations, {}, admitted.overhead)
    assert verdict.fits[0].shortfalls == ()
    biggest = pod("runtimeClassName: nvidia-a100\n" + GPU_POD.replace('"15"', '"16"'))
    verdict = place(biggest, profile, admitted.tolerations, {}, admitted.overhead)
    assert [(s.resource, s.requested) for s in verdict.fits[0].shortfalls] == [
        ("cpu", Decimal("16.5"))
    ]
    # A pod that writes its own overhead keeps it (a different one is refused: GPU307).
    own = admit(pod("runtimeClassName: nvidia-a100\noverhead: {cpu: 500m}\n" + GPU_POD), profile)
    assert own.overhead == {}


def test_a_class_the_profile_may_lack_is_an_assumption(tmp_path: Path) -> None:
    unknown = profile_of(tmp_path, PROFILE)
    admitted = admit(pod("runtimeClassName: nvidia\n" + GPU_POD), unknown)
    assert not admitted.certain
    assert [(t.key, t.operator) for t in admitted.assumed] == [("", "Exists")]
    assert admitted.assumption_text.startswith(
        "this assumes RuntimeClass `nvidia`, which the profile does not define, adds no tolerations"
    )
    # Known to be missing: the pod is refused (GPU307), and admission adds nothing to it.
    known = profile_of(tmp_path, PROFILE + CLASSES)
    missing = admit(pod("runtimeClassName: kata\n" + GPU_POD), known)
    assert missing.certain and missing.tolerations == ()


def test_a_manifest_class_replaces_the_profiles(tmp_path: Path) -> None:
    profile = profile_of(tmp_path, PROFILE + CLASSES)
    text = (
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: nvidia}\n"
        "handler: nvidia\nscheduling:\n  nodeSelector: {pool: l4}\n"
    )
    documents = load_text("rc.yaml", text).documents
    merged = with_manifest_runtime_classes(profile, documents)
    assert merged.runtime_classes_known
    assert [c.node_selector for c in merged.runtime_classes if c.name == "nvidia"] == [
        {"pool": "l4"}
    ]
    assert with_manifest_runtime_classes(profile, ()) is profile


# --- what the plugin refuses ------------------------------------------------------------------


def classes_of(tmp_path: Path) -> dict[str, RuntimeClassInEffect]:
    return runtime_classes_in_effect((), profile_of(tmp_path, PROFILE + CLASSES))


def test_a_missing_class_is_refused_only_when_every_class_is_known(tmp_path: Path) -> None:
    template = pod("runtimeClassName: kata\n" + GPU_POD)
    classes = classes_of(tmp_path)
    assert runtime_class_refusal(template, classes, known=False) is None
    refusal = runtime_class_refusal(template, classes, known=True)
    assert refusal is not None
    assert refusal.pos == template.runtime_class_pos == (5, 21)
    assert refusal.message == (
        "runtimeClassName `kata` names a RuntimeClass the cluster does not have (it has "
        "`nvidia`, `nvidia-a100`): the API server refuses every such pod (`pod rejected: "
        'RuntimeClass "kata" not found`), and its workload never gets one'
    )
    assert runtime_class_refusal(pod("runtimeClassName: nvidia\n" + GPU_POD), classes, True) is None


def test_a_contradicted_node_selector_is_refused(tmp_path: Path) -> None:
    template = pod("runtimeClassName: nvidia-a100\nnodeSelector: {pool: l4}\n" + GPU_POD)
    refusal = runtime_class_refusal(template, classes_of(tmp_path), known=False)
    assert refusal is not None
    assert refusal.pos == (6, 24)
    assert refusal.message == (
        "RuntimeClass `nvidia-a100` requires nodeSelector `pool: a100`, and the pod selects "
        "`pool: l4`: the API server refuses the pod (`conflict: "
        "runtimeClass.scheduling.nodeSelector[pool] = a100; pod.spec.nodeSelector[pool] = l4`)"
    )
    same = pod("runtimeClassName: nvidia-a100\nnodeSelector: {pool: a100}\n" + GPU_POD)
    assert runtime_class_refusal(same, classes_of(tmp_path), known=True) is None


def test_an_overhead_other_than_the_class_is_refused(tmp_path: Path) -> None:
    template = pod("runtimeClassName: nvidia-a100\noverhead: {cpu: 500m}\n" + GPU_POD)
    refusal = runtime_class_refusal(template, classes_of(tmp_path), known=True)
    assert refusal is not None
    assert refusal.pos == (6, 3)
    assert "(`pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`)" in (
        refusal.message
    )
    same = pod("runtimeClassName: nvidia-a100\noverhead: {cpu: 500m, memory: 1Gi}\n" + GPU_POD)
    assert runtime_class_refusal(same, classes_of(tmp_path), known=True) is None


def test_gpu307_is_silent_when_the_profile_does_not_know_every_class(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  runtimeClassName: kata\n"
        + "".join(f"  {line}\n" for line in GPU_POD.strip("\n").splitlines()),
        encoding="utf-8",
    )
    (tmp_path / "unknown.yaml").write_text(PROFILE, encoding="utf-8")
    (tmp_path / "known.yaml").write_text(PROFILE + CLASSES, encoding="utf-8")
    silent = lint([str(manifest)], profile_paths=(str(tmp_path / "unknown.yaml"),))
    assert [f.code for f in silent.findings if f.code == "GPU307"] == []
    found = lint([str(manifest)], profile_paths=(str(tmp_path / "known.yaml"),))
    assert [(f.code, f.line, f.column) for f in found.findings if f.code == "GPU307"] == [
        ("GPU307", 5, 21)
    ]


def test_a_class_of_a_context_file_exists_and_admits_the_pod(tmp_path: Path) -> None:
    from gpulint.config import Config

    (tmp_path / "profile.yaml").write_text(PROFILE + CLASSES, encoding="utf-8")
    (tmp_path / "rc.yaml").write_text(
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata-a100}\n"
        "handler: kata\nscheduling:\n  tolerations:\n"
        "  - {key: dedicated, operator: Exists, effect: NoSchedule}\n",
        encoding="utf-8",
    )
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  runtimeClassName: kata-a100\n"
        "  nodeSelector: {pool: a100}\n"
        + "".join(f"  {line}\n" for line in GPU_POD.strip("\n").splitlines()),
        encoding="utf-8",
    )
    options = {"profile_paths": (str(tmp_path / "profile.yaml"),), "root": str(tmp_path)}
    alone = lint(["pod.yaml"], config=Config(root=tmp_path), **options).findings
    # Without the context the class is missing, and nothing tolerates the A100 taint.
    assert sorted((f.code, f.line) for f in alone) == [("GPU102", 4), ("GPU307", 5)]
    config = Config(root=tmp_path, context=("rc.yaml",))
    assert lint(["pod.yaml"], config=config, **options).findings == ()
