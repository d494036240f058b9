"""The accelerator registry and GPU001's verdicts on names: severity, message and fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpulint.accelerators import (
    accelerator_info,
    gpu_model_resource,
    is_extender_resource,
    is_known_accelerator,
    is_network_device,
    looks_like_accelerator,
    meaning_of,
    near_miss,
    suggest_resource,
)
from gpulint.api import lint
from gpulint.data.accelerators import ANNOTATIONS, EXTENDER, MEMORY, RESOURCES
from gpulint.model import Severity

ROOT = Path(__file__).resolve().parent.parent
RESOURCES_CASES = ROOT / "fixtures" / "cases" / "resources"
PLUGIN = "device plugin"


@pytest.mark.parametrize(
    ("name", "shown", "unit", "served_by"),
    [
        ("nvidia.com/gpu", "nvidia.com/gpu", "device", "device plugin"),
        ("nvidia.com/mig-2g.20gb", "nvidia.com/mig-<g>g.<memory>gb", "slice", "device plugin"),
        ("nvidia.com/gpu-20gb", "nvidia.com/gpu-<N>gb", "slice", "device plugin"),
        ("nvidia.com/gpumem", "nvidia.com/gpumem", "memory", "scheduler extender"),
        ("volcano.sh/gpu-memory", "volcano.sh/gpu-memory", "memory", "device plugin"),
        (
            "aliyun.com/gpu-core.percentage",
            "aliyun.com/gpu-core.percentage",
            "cores",
            "device plugin",
        ),
        ("gpu.intel.com/millicores", "gpu.intel.com/millicores", "cores", "node feature"),
        ("huawei.com/Ascend910B3-memory", "huawei.com/Ascend<model>-memory", "memory", EXTENDER),
        ("amd.com/spx_nps1", "amd.com/<compute>_<memory>", "slice", "device plugin"),
        # NVIDIA's KubeVirt GPU device plugin: a passed-through GPU by its pci.ids name, as the
        # plugin writes it and as KubeVirt's docs do, and a vGPU type
        ("nvidia.com/TU104GL_TESLA_T4", "nvidia.com/<chip>_<device name>", "device", PLUGIN),
        ("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/<chip>_<device name>", "device", PLUGIN),
        ("nvidia.com/GA100_A100_PCIE_40GB", "nvidia.com/<chip>_<device name>", "device", PLUGIN),
        ("nvidia.com/GRID_T4-1Q", "nvidia.com/<GRID or NVIDIA>_<vGPU type>", "share", PLUGIN),
        ("nvidia.com/GRID_A100-1-5C", "nvidia.com/<GRID or NVIDIA>_<vGPU type>", "share", PLUGIN),
    ],
)
def test_registry_answers_what_a_name_is(name: str, shown: str, unit: str, served_by: str) -> None:
    entry = accelerator_info(name)
    assert entry is not None
    assert (entry.name, entry.unit, entry.served_by) == (shown, unit, served_by)


@pytest.mark.parametrize(
    "name",
    [
        "example.com/gpu",
        "nvidia.com/gpus",
        "nvidia.com/mig-1g5gb",
        "huawei.com/npu-x",
        # a model in lower case is no pci.ids chip name: GPU001 suggests the plugin's name
        "nvidia.com/ga100",
        "nvidia.com/GRID_T4",
    ],
)
def test_names_nothing_serves_are_unknown(name: str) -> None:
    assert accelerator_info(name) is None and not is_known_accelerator(name)


def test_every_family_pattern_is_written_under_a_literal_domain() -> None:
    # accelerator_info matches a name only against the patterns of its own domain, read as
    # the pattern's text up to the first `/`: that text must be a domain, not a regex.
    for family in RESOURCES:
        if family.pattern is not None:
            domain, slash, _ = family.pattern.partition("/")
            assert slash and re.fullmatch(r"(?:[a-z0-9-]+\\\.)+[a-z]+", domain), family.pattern


def test_every_entry_has_a_source_and_a_unit_text() -> None:
    assert all(r.source and r.one_unit and r.provider for r in RESOURCES)
    assert all(a.source and a.one_unit for a in ANNOTATIONS)
    # Only extender entries name an extender, and every extender entry does.
    assert all((r.served_by == EXTENDER) == (r.extender is not None) for r in RESOURCES)


def test_extender_resources() -> None:
    assert is_extender_resource("nvidia.com/gpucores")
    assert not is_extender_resource("nvidia.com/gpu")
    assert not is_extender_resource("volcano.sh/vgpu-memory")  # advertised by its plugin


@pytest.mark.parametrize(
    ("name", "meaning"),
    [
        ("volcano.sh/gpu-memory", MEMORY),
        ("example.com/gpu-mem", MEMORY),
        ("nvidia.com/gpucores", "cores"),
        ("example.com/gpu-cores", "cores"),
        ("nvidia.com/gpu.shared", "device"),
        ("example.com/gpu", "device"),
        # Koordinator's percentage of a GPU, under its name and its name before v1.2
        ("koordinator.sh/gpu", "percent"),
        ("kubernetes.io/gpu", "percent"),
        ("kubernetes.io/gpu-memory", MEMORY),
    ],
)
def test_meaning_of(name: str, meaning: str) -> None:
    assert meaning_of(name) == meaning


@pytest.mark.parametrize(
    ("name", "typo_of"),
    [
        ("nvidia.com/gpus", "nvidia.com/gpu"),
        ("nvidia.com/GPU", "nvidia.com/gpu"),
        ("nvidia/gpu", "nvidia.com/gpu"),
        ("nvidia.co/gpu", "nvidia.com/gpu"),
        ("amd.com/gpus", "amd.com/gpu"),
        ("volcano.sh/gpu-mem", "volcano.sh/gpu-memory"),
        ("nvidia.com/gpu-shared", "nvidia.com/gpu.shared"),
        # a percentage's typo is that percentage, not a device count
        ("koordinator.sh/gpus", "koordinator.sh/gpu"),
        # another vendor's plausible name, or a name of another meaning: not a typo
        ("example.com/gpu", None),
        ("acme.com/gpu", None),
        ("nvidia.com/gpu-memory", None),
        ("nvidia.com/gpu.memory", None),
    ],
)
def test_near_miss(name: str, typo_of: str | None) -> None:
    assert near_miss(name) == typo_of


def test_a_renamed_name_is_suggested_only_its_new_name() -> None:
    # `kubernetes.io/gpu: 100` is one GPU: `nvidia.com/gpu: 100` would be a hundred.
    both = ["koordinator.sh/gpu", "nvidia.com/gpu"]
    assert suggest_resource("kubernetes.io/gpu", both) == "koordinator.sh/gpu"
    assert suggest_resource("kubernetes.io/gpu", ["nvidia.com/gpu"]) is None
    assert suggest_resource("kubernetes.io/gpu-core", ["koordinator.sh/gpu-core"]) == (
        "koordinator.sh/gpu-core"
    )
    # A device count is never renamed to a percentage, nor the other way round.
    assert suggest_resource("nvidia.com/gpus", ["koordinator.sh/gpu"]) is None
    assert suggest_resource("koordinator.sh/gpus", ["nvidia.com/gpu"]) is None


@pytest.mark.parametrize("name", ["volcano.sh/gpu-mem", "example.com/gpu-memory", "x.io/gpucore"])
def test_suggestions_never_turn_memory_or_cores_into_devices(name: str) -> None:
    suggestion = suggest_resource(name, ["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/gpu.shared"])
    assert suggestion is None


def test_looks_like_accelerator_for_registry_names_without_gpu_words() -> None:
    assert looks_like_accelerator("huawei.com/Ascend910")
    assert looks_like_accelerator("amd.com/cpx_nps4")
    assert not looks_like_accelerator("memory")


@pytest.mark.parametrize(
    ("name", "resource", "model"),
    [
        ("nvidia.com/l4", "nvidia.com/gpu", "L4"),
        ("nvidia.com/a100", "nvidia.com/gpu", "A100"),
        ("nvidia.com/H100", "nvidia.com/gpu", "H100"),
        ("nvidia.com/a100-80gb", "nvidia.com/gpu", "A100"),
        ("nvidia.com/nvidia-h100-sxm5", "nvidia.com/gpu", "H100"),
        ("nvidia.com/tesla-t4", "nvidia.com/gpu", "T4"),
        ("nvidia.com/gh200", "nvidia.com/gpu", "GH200"),
        ("nvidia.com/rtx8000", "nvidia.com/gpu", "RTX8000"),
        ("amd.com/mi300x", "amd.com/gpu", "MI300X"),
        ("amd.com/Instinct-MI250X", "amd.com/gpu", "MI250X"),
    ],
)
def test_gpu_models_written_as_resource_names(name: str, resource: str, model: str) -> None:
    found = gpu_model_resource(name)
    assert found is not None and (found[0].resource, found[1]) == (resource, model)
    assert looks_like_accelerator(name)


@pytest.mark.parametrize(
    "name",
    [
        "nvidia.com/a100x",  # no such model
        "nvidia.com/l2",  # a catalogued model, but also a network word (layer 2)
        "nvidia.com/foo",
        "example.com/a100",  # a model under a domain that is not its vendor's
        "amd.com/h100",  # another vendor's model
        "nvidia.com/gpu",  # a known name, not a model
    ],
)
def test_names_that_are_not_gpu_models(name: str) -> None:
    assert gpu_model_resource(name) is None


@pytest.mark.parametrize(
    "name",
    [
        # NVIDIA network operator samples (Mellanox/network-operator example/)
        "rdma/rdma_shared_device_a",
        "nvidia.com/rdma_shared_device_a",
        "nvidia.com/hostdev",
        "nvidia.com/sriovlegacy",
        "nvidia.com/sriov-legacy",
        # the RDMA shared device plugin's README, the SR-IOV network operator, AMD's operator
        "rdma/hca_shared_devices_a",
        "openshift.io/mlnxnics",
        "nvidia.com/mlnxnics",
        "intel.com/intel_sriov_netdevice",
        "amd.com/nic",
        "amd.com/vnic",
        # user-chosen names that also hold an accelerator word
        "rdma/gpu_rail_0",
        "nvidia.com/sriov_gpu_nic",
    ],
)
def test_network_devices_are_never_accelerators(name: str) -> None:
    assert is_network_device(name)
    assert not looks_like_accelerator(name)


def test_other_names_under_a_gpu_vendor_domain_are_not_accelerators() -> None:
    # A network operator's user picks any name under nvidia.com/ (`cx7_qsfp`, `bf2_sf`): only
    # what a name says makes it an accelerator, never its domain alone.
    assert not looks_like_accelerator("nvidia.com/foo")
    assert not looks_like_accelerator("amd.com/xgmi")


def test_coverage_counts_gpu_models_but_not_network_devices(tmp_path: Path) -> None:
    from gpulint.loader import load_path
    from gpulint.requestscan import unchecked
    from gpulint.workloads import workload_of

    body = "apiVersion: example.com/v1\nkind: Trainer\nmetadata: {{name: t}}\n"
    body += "spec:\n  resources:\n    limits: {{{name}: 1}}\n"
    verdicts = {}
    for name in ("nvidia.com/a100", "rdma/rdma_shared_device_a", "nvidia.com/hostdev"):
        path = tmp_path / f"{name.replace('/', '_')}.yaml"
        path.write_text(body.format(name=name))
        document = load_path(path).documents[0]
        found = unchecked(document, workload_of(document))
        verdicts[name] = found is not None and found.requests_accelerators
    assert verdicts == {
        "nvidia.com/a100": True,
        "rdma/rdma_shared_device_a": False,
        "nvidia.com/hostdev": False,
    }


def _findings(path: Path, *extra: str) -> list[tuple[int, int, str, Severity, str | None]]:
    result = lint([str(path)])
    return [
        (f.line, f.column, f.message, f.severity, f.fix)
        for f in result.findings
        if f.code == "GPU001"
    ]


def test_gpu001_without_profile_severity_messages_and_fixes() -> None:
    found = _findings(RESOURCES_CASES / "GPU001-plausible-names.yaml")
    info_fix = (
        "Check the name against the plugin that serves it (docs/accelerators.md lists the "
        "known ones), or give a cluster profile."
    )
    unknown = (
        "a name no accelerator plugin or allocator known to gpulint serves: make sure one of "
        "the cluster's does (a cluster profile lets gpulint check)"
    )
    assert found == [
        (
            14,
            9,
            f"container `unknown-vendor` limits `example.com/gpu`, {unknown}",
            Severity.INFO,
            info_fix,
        ),
        (
            15,
            9,
            f"container `unknown-vendor` limits `nvidia.com/gpu-memory`, {unknown}",
            Severity.INFO,
            info_fix,
        ),
        (
            21,
            9,
            "container `near-misses` limits `volcano.sh/gpu-mem`, which no device plugin "
            "advertises: the pod can never be scheduled; did you mean `volcano.sh/gpu-memory`?",
            Severity.ERROR,
            "Rename the key to `volcano.sh/gpu-memory`.",
        ),
        (
            22,
            9,
            "container `near-misses` limits `nvidia.com/mig-3g40gb`, which is not a MIG "
            "resource name (`nvidia.com/mig-<g>g.<memory>gb`): no node advertises it and the "
            "pod can never be scheduled; did you mean `nvidia.com/mig-3g.40gb`?",
            Severity.ERROR,
            "Rename the key to `nvidia.com/mig-3g.40gb`.",
        ),
        (
            23,
            9,
            "container `near-misses` limits `nvidia.co/gpu`, which no device plugin "
            "advertises: the pod can never be scheduled; did you mean `nvidia.com/gpu`?",
            Severity.ERROR,
            "Rename the key to `nvidia.com/gpu`.",
        ),
    ]


def test_gpu001_bare_and_case_messages() -> None:
    found = {
        line: (message, fix)
        for line, _, message, _, fix in _findings(RESOURCES_CASES / "GPU001-unknown-names.yaml")
    }
    assert found[33] == (
        "container `bare` limits `gpu`, which has no domain prefix: the API rejects it (only "
        "cpu, memory, ephemeral-storage and hugepages-* may be unqualified); did you mean "
        "`nvidia.com/gpu`?",
        "Rename the key to `nvidia.com/gpu`.",
    )
    assert found[39] == (
        "container `upper-case` limits `nvidia.com/GPU`, which no device plugin advertises "
        "(resource names are case-sensitive): the pod can never be scheduled; did you mean "
        "`nvidia.com/gpu`?",
        "Rename the key to `nvidia.com/gpu`.",
    )


def test_docs_list_every_registry_entry() -> None:
    doc = (ROOT / "docs" / "accelerators.md").read_text()
    missing = [r.name for r in RESOURCES if f"| `{r.name}` |" not in doc]
    missing += [a.key for a in ANNOTATIONS if f"| `{a.key}` |" not in doc]
    assert missing == []


def test_profile_scheduler_extenders(tmp_path: Path) -> None:
    from gpulint.profile import load_profiles

    header = "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: c}\n"
    stated = tmp_path / "stated.yaml"
    stated.write_text(header + "spec:\n  schedulerExtenders: [hami]\n")
    unstated = tmp_path / "unstated.yaml"
    unstated.write_text(header + "spec: {}\n")
    assert load_profiles([str(stated)]).scheduler_extenders == frozenset({"hami"})
    assert load_profiles([str(unstated)]).scheduler_extenders is None
    # a later input that does not state it keeps the earlier one's
    assert load_profiles([str(stated), str(unstated)]).scheduler_extenders == {"hami"}


def test_profile_with_an_unknown_extender_is_one_line(tmp_path: Path) -> None:
    from gpulint.errors import GpulintError
    from gpulint.profile import load_profiles

    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: c}\n"
        "spec:\n  schedulerExtenders: [hami, gpushare]\n"
    )
    with pytest.raises(GpulintError) as info:
        load_profiles([str(path)])
    assert str(info.value).startswith(f"{path}:5:")
    assert "gpushare" in str(info.value) and "\n" not in str(info.value)


def test_profile_show_names_the_scheduler_extenders() -> None:
    from click.testing import CliRunner

    from gpulint.cli import main

    hami = str(ROOT / "fixtures" / "profiles" / "hami.yaml")
    result = CliRunner().invoke(main, ["profile", "show", "--profile", hami])
    assert result.exit_code == 0, result.output
    assert "Scheduler extenders: hami (spec.schedulerExtenders)\n" in result.output


GPU_SELECTOR_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  nodeSelector: {nvidia.com/gpu.present: "true"}
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
  - name: main
    image: "trainer:1"
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {%s}
"""


@pytest.mark.parametrize(
    "limits",
    ['nvidia.com/gpu: "0"', 'nvidia.com/gpumem: "4000"', 'gpu: "1"'],
    ids=["zero", "extender-only", "refused-name"],
)
def test_a_pod_that_writes_an_accelerator_nodes_do_not_count_is_not_one_without_gpus(
    tmp_path: Path, limits: str
) -> None:
    # gpu_requests keeps only what nodes count; GPU104 ("pod requests no GPU") speaks of
    # any accelerator a pod writes.
    from gpulint.gpus import accelerator_names, gpu_requests
    from gpulint.loader import load_text

    text = GPU_SELECTOR_POD % limits
    (template,) = load_text("pod.yaml", text).workloads[0].templates
    assert gpu_requests(template) == {}
    assert accelerator_names(template.effective_requests) == [limits.partition(":")[0]]
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(text, encoding="utf-8")
    profile = str(ROOT / "fixtures" / "profiles" / "placement-eks.yaml")
    assert lint([str(manifest)], select=("GPU104",), profile_paths=(profile,)).findings == ()
    # Without the accelerator, the same pod is one.
    manifest.write_text(GPU_SELECTOR_POD % "memory: 1Gi", encoding="utf-8")
    found = lint([str(manifest)], select=("GPU104",), profile_paths=(profile,)).findings
    assert [(f.code, f.line, f.column, f.message) for f in found] == [
        (
            "GPU104",
            5,
            18,
            "pod requests no GPU, but its required placement only matches GPU pools g5, p4d, "
            "p5-reserved and 1 more like them: it takes a GPU node's cpu and memory without a "
            "GPU, and the device plugin gives its containers no device; it does not tolerate "
            "their taints either (g6-inference: dedicated=inference:NoSchedule), so it stays "
            "Pending",
        )
    ]


def test_a_served_name_is_not_taken_for_a_misspelling_of_its_vendors_default() -> None:
    # The KubeVirt plugin's passthrough GPU is a device of NVIDIA's, but no misspelt
    # `nvidia.com/gpu`; an unknown name with the vendor's word in it still is.
    assert suggest_resource("nvidia.com/TU104GL_Tesla_T4", ["nvidia.com/gpu"]) is None
    assert suggest_resource("nvidia/gpu", ["nvidia.com/gpu"]) == "nvidia.com/gpu"
