"""GPU001 against a cluster profile dumped before a device plugin was installed: a plugin among
the inputs (this file, another input, a `context:` file) that would advertise the resource on
a pool it runs on turns the error into a warning naming that assumption; a plugin that runs on
no pool that may have its devices changes nothing."""

from __future__ import annotations

from pathlib import Path

from gpulint.api import lint
from gpulint.config import Config
from gpulint.model import Severity

ROOT = Path(__file__).resolve().parent.parent
PROFILE = str(ROOT / "fixtures" / "profiles" / "plugin-not-installed.yaml")

POD = """apiVersion: v1
kind: Pod
metadata: {name: cuda, namespace: ml}
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: cuda
    image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
    resources:
      limits: {cpu: 500m, memory: 512Mi, %s: 1}
"""
PLUGIN = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  selector:
    matchLabels: {app: plugin}
  template:
    metadata:
      labels: {app: plugin}
    spec:
%s      containers:
      - name: plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
        livenessProbe:
          exec: {command: [test, -S, /var/lib/kubelet/device-plugins/nvidia-gpu.sock]}
"""
TOLERATES = "      tolerations:\n      - {key: nvidia.com/gpu, operator: Exists}\n"
NOT_ADVERTISED = (
    "container `cuda` limits `nvidia.com/gpu`, which no pool of this cluster advertises (no "
    "pool advertises an accelerator): the pod can never be scheduled"
)


def _warning(what: str, where: str, pools: str, resource: str = "nvidia.com/gpu") -> str:
    return (
        f"container `cuda` limits `{resource}`, which no pool of this cluster advertises yet "
        f"(no pool advertises an accelerator); {what} {where} would advertise it: unless it is "
        f"installed and runs on {pools}, the pod can never be scheduled"
    )


def _gpu001(
    tmp_path: Path,
    files: dict[str, str],
    profile: str = PROFILE,
    given: list[str] | None = None,
    **config: object,
) -> list[tuple[object, ...]]:
    """GPU001's findings of a run on `files` (written under `tmp_path`), or on those of them
    `given`, against `profile`."""
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = lint(
        list(files) if given is None else given,
        root=str(tmp_path),
        config=Config(select=("GPU001",), **config),  # type: ignore[arg-type]
        profile_paths=(profile,),
    )
    return [(f.path, f.line, f.column, f.severity, f.message, f.fix) for f in result.findings]


def test_a_plugin_in_the_same_file_makes_the_pool_advertise_it(tmp_path: Path) -> None:
    files = {"pod.yaml": PLUGIN % TOLERATES + "---\n" + POD % "nvidia.com/gpu"}
    where = "DaemonSet `nvidia-device-plugin` (line 2)"
    assert _gpu001(tmp_path, files) == [
        (
            "pod.yaml",
            29,
            42,
            Severity.WARNING,
            _warning("device plugin", where, "pool `a10g`"),
            "Install device plugin DaemonSet `nvidia-device-plugin` before the pod; a profile of "
            "the cluster dumped once it runs lets gpulint count the `nvidia.com/gpu` its pools "
            "advertise.",
        )
    ]


def test_a_plugin_of_another_input_or_of_the_context_counts(tmp_path: Path) -> None:
    files = {"pod.yaml": POD % "nvidia.com/gpu", "plugin.yaml": PLUGIN % TOLERATES}
    where = "DaemonSet `nvidia-device-plugin` (in plugin.yaml)"
    message = _warning("device plugin", where, "pool `a10g`")
    assert [f[:5] for f in _gpu001(tmp_path, files)] == [
        ("pod.yaml", 11, 42, Severity.WARNING, message)
    ]
    # The plugin as a context file of a run given the pod alone: read with the knowledge
    # objects of the run.
    assert [f[:5] for f in _gpu001(tmp_path, {}, given=["pod.yaml"], context=("plugin.yaml",))] == [
        ("pod.yaml", 11, 42, Severity.WARNING, message)
    ]
    assert [f[:5] for f in _gpu001(tmp_path, {}, given=["pod.yaml"])] == [
        ("pod.yaml", 11, 42, Severity.ERROR, NOT_ADVERTISED)
    ]


def test_a_plugin_that_cannot_run_on_the_gpu_pool_leaves_the_error(tmp_path: Path) -> None:
    # No toleration for the pool's nvidia.com/gpu taint: GPU503 reports the DaemonSet.
    files = {"pod.yaml": PLUGIN % "" + "---\n" + POD % "nvidia.com/gpu"}
    assert [f[:5] for f in _gpu001(tmp_path, files)] == [
        ("pod.yaml", 27, 42, Severity.ERROR, NOT_ADVERTISED)
    ]


def test_a_plugin_of_another_vendor_or_a_mig_profile_leaves_the_error(tmp_path: Path) -> None:
    amd = (PLUGIN % TOLERATES).replace("nvcr.io/nvidia/k8s-device-plugin", "rocm/k8s-device-plugin")
    files = {"pod.yaml": amd + "---\n" + POD % "nvidia.com/gpu"}
    assert [f[3] for f in _gpu001(tmp_path, files)] == [Severity.ERROR]
    files = {"pod.yaml": PLUGIN % TOLERATES + "---\n" + POD % "nvidia.com/mig-1g.10gb"}
    assert [f[3] for f in _gpu001(tmp_path, files)] == [Severity.ERROR]


def test_a_pool_whose_accelerators_the_profile_does_not_tell_is_named_with_that_assumption(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "kubeadm.yaml"
    profile.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: onprem}\n"
        "spec:\n  kubernetesVersion: '1.33'\n  provider: kubeadm\n  pools:\n"
        "  - name: workers\n    labels: {kubernetes.io/os: linux}\n"
        "    allocatable: {cpu: '31', memory: 120Gi, pods: 110}\n    nodes: 3\n",
        encoding="utf-8",
    )
    files = {"pod.yaml": PLUGIN % TOLERATES + "---\n" + POD % "nvidia.com/gpu"}
    pools = (
        "pool `workers` and the nodes there have NVIDIA GPUs (the profile does not say which "
        "accelerators they carry)"
    )
    where = "DaemonSet `nvidia-device-plugin` (line 2)"
    assert [f[:5] for f in _gpu001(tmp_path, files, str(profile))] == [
        ("pod.yaml", 29, 42, Severity.WARNING, _warning("device plugin", where, pools))
    ]


CLUSTER_POLICY = """apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin: {enabled: %s}
"""


def test_the_gpu_operator_installs_the_plugin_on_its_vendor_pools(tmp_path: Path) -> None:
    files = {"pod.yaml": CLUSTER_POLICY % "true" + "---\n" + POD % "nvidia.com/gpu"}
    # Its operands tolerate nvidia.com/gpu unless `daemonsets.tolerations` says otherwise.
    message = _warning("ClusterPolicy `cluster-policy`", "(line 2)", "pool `a10g`")
    assert [f[:5] for f in _gpu001(tmp_path, files)] == [
        ("pod.yaml", 17, 42, Severity.WARNING, message)
    ]
    files = {"pod.yaml": CLUSTER_POLICY % "false" + "---\n" + POD % "nvidia.com/gpu"}
    assert [f[3] for f in _gpu001(tmp_path, files)] == [Severity.ERROR]
    tolerating_other = CLUSTER_POLICY % "true" + "  daemonsets:\n    tolerations: [{key: gpu}]\n"
    files = {"pod.yaml": tolerating_other + "---\n" + POD % "nvidia.com/gpu"}
    assert [f[3] for f in _gpu001(tmp_path, files)] == [Severity.ERROR]


def test_operator_resources_of_amd_and_intel_read_their_selector(tmp_path: Path) -> None:
    profile = tmp_path / "amd.yaml"
    profile.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: amd}\n"
        "spec:\n  kubernetesVersion: '1.33'\n  provider: kubeadm\n  pools:\n"
        "  - name: mi300x\n    labels: {rack: a}\n"
        "    allocatable: {cpu: '31', memory: 120Gi, pods: 110}\n    nodes: 1\n",
        encoding="utf-8",
    )
    device_config = (
        "apiVersion: amd.com/v1alpha1\nkind: DeviceConfig\nmetadata: {name: default}\n"
        "spec:\n  selector: {feature.node.kubernetes.io/amd-gpu: 'true', rack: %s}\n"
    )
    # The NFD label its operator writes on AMD nodes counts as there; `rack` must match.
    files = {"pod.yaml": device_config % "a" + "---\n" + POD % "amd.com/gpu"}
    pools = (
        "pool `mi300x` and the nodes there have AMD GPUs (the profile does not say which "
        "accelerators they carry)"
    )
    message = _warning("DeviceConfig `default`", "(line 2)", pools, "amd.com/gpu")
    assert [f[:5] for f in _gpu001(tmp_path, files, str(profile))] == [
        ("pod.yaml", 17, 42, Severity.WARNING, message)
    ]
    files = {"pod.yaml": device_config % "b" + "---\n" + POD % "amd.com/gpu"}
    assert [f[3] for f in _gpu001(tmp_path, files, str(profile))] == [Severity.ERROR]


FAKE_PROFILE = str(ROOT / "fixtures" / "real" / "profiles" / "kind-fake-gpu-operator.yaml")
FAKE = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: device-plugin}
spec:
  selector:
    matchLabels: {app: device-plugin}
  template:
    metadata:
      labels: {app: device-plugin}
    spec:
      containers:
      - name: nvidia-device-plugin-ctr
        image: ghcr.io/run-ai/fake-gpu-operator/device-plugin:0.0.1
      nodeSelector: {nvidia.com/gpu.deploy.device-plugin: "true"}
"""
TOPOLOGY = """apiVersion: v1
kind: ConfigMap
metadata: {name: topology}
data:
  topology.yml: |-
    nodePoolLabelKey: %s
"""


def test_the_fake_operator_plugin_runs_on_the_nodes_of_its_node_pools(tmp_path: Path) -> None:
    files = {"pod.yaml": FAKE + "---\n" + POD % "nvidia.com/gpu"}
    where = "device plugin DaemonSet `device-plugin` (line 2)"
    message = _warning("fake-gpu-operator's", where, "pool `worker`")
    assert [f[:5] for f in _gpu001(tmp_path, files, FAKE_PROFILE)] == [
        ("pod.yaml", 26, 42, Severity.WARNING, message)
    ]
    # Its node pools are those of the topology's label key: the worker carries another one.
    topology = TOPOLOGY % "example.com/fake-pool"
    files = {"pod.yaml": topology + "---\n" + FAKE + "---\n" + POD % "nvidia.com/gpu"}
    assert [f[3] for f in _gpu001(tmp_path, files, FAKE_PROFILE)] == [Severity.ERROR]
    # It advertises nvidia.com/gpu only.
    files = {"pod.yaml": FAKE + "---\n" + POD % "amd.com/gpu"}
    assert [f[3] for f in _gpu001(tmp_path, files, FAKE_PROFILE)] == [Severity.ERROR]


def test_a_plugin_on_pools_the_pod_cannot_go_to_leaves_the_error(tmp_path: Path) -> None:
    # The plugin runs on the a10g pool; the pod selects the general pool.
    selecting = (POD % "nvidia.com/gpu").replace(
        "spec:\n", "spec:\n  nodeSelector: {eks.amazonaws.com/nodegroup: general}\n"
    )
    files = {"pod.yaml": PLUGIN % TOLERATES + "---\n" + selecting}
    assert [f[:5] for f in _gpu001(tmp_path, files)] == [
        ("pod.yaml", 30, 42, Severity.ERROR, NOT_ADVERTISED)
    ]
