"""Device plugins: how gpulint knows one, and those the checked manifests install.

A node advertises an accelerator only while a device plugin runs on it and stays registered
with the kubelet. GPU5xx judge the plugin DaemonSets themselves; GPU001 asks, of a resource no
pool of a cluster profile advertises, whether a plugin among the inputs would advertise it once
it runs (a profile dumped before the plugin was installed shows no such allocatable).

A plugin is installed by its DaemonSet (a static manifest or a rendered chart), by an operator's
custom resource (the GPU Operator's ClusterPolicy, the AMD GPU Operator's DeviceConfig, Intel's
GpuDevicePlugin), or, with no device behind it, by run-ai's fake-gpu-operator, whose plugin
advertises simulated `nvidia.com/gpu` on the nodes of its node pools.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from gpulint.constraints import Toleration, tolerations
from gpulint.fields import mapping_at, text_of
from gpulint.gpus import NVIDIA_NODE_LABELS
from gpulint.images import ImageRef, parse_image
from gpulint.model import Container, ContainerRole, Document, PodTemplate
from gpulint.profile.instances import instance_type
from gpulint.scheduling import pool_gpus, selector_mismatch, untolerated_taints
from gpulint.views import NamedTuple
from gpulint.yamltree import YMap

if TYPE_CHECKING:
    from gpulint.profile.model import Pool, Taint

#: Image repository names (last path component) of GPU device plugins, by vendor.
PLUGIN_IMAGES: Mapping[str, str] = {
    "k8s-device-plugin": "nvidia",  # NVIDIA; AMD publishes rocm/k8s-device-plugin
    "nvidia-gpu-device-plugin": "nvidia",  # GKE's own plugin
    "gpu-operator": "nvidia",
    "intel-gpu-plugin": "intel",
    "neuron-device-plugin": "neuron",
    "docker-k8s-device-plugin": "habana",  # vault.habana.ai/docker-k8s-device-plugin/...
    "k8s-gpushare-plugin": "aliyun",  # Alibaba gpushare: registry.*.aliyuncs.com/acs/...
}
#: Programs shipped in a device plugin's image that are not the plugin: NVIDIA's image also
#: runs GPU Feature Discovery and, in its Helm chart, the config-manager and MPS sidecars;
#: AMD's (`rocm/k8s-device-plugin:labeller-*`) runs the node labeller.
COMPANION_PROGRAMS = frozenset(
    {"gpu-feature-discovery", "config-manager", "mps-control-daemon", "k8s-node-labeller"}
)
#: Resource-name prefixes each vendor's plugin advertises.
VENDOR_RESOURCES: Mapping[str, tuple[str, ...]] = {
    "nvidia": ("nvidia.com/",),
    "amd": ("amd.com/",),
    "intel": ("gpu.intel.com/",),
    "neuron": ("aws.amazon.com/neuron",),
    "habana": ("habana.ai/",),
    # gpushare registers only the memory with the kubelet; it patches `aliyun.com/gpu-count`
    # into node status itself.
    "aliyun": ("aliyun.com/gpu-mem",),
}
#: What each vendor's plugin advertises as it is shipped: a MIG profile, a shared or
#: partitioned device needs a configuration of the plugin or of the devices.
DEFAULT_RESOURCES: Mapping[str, tuple[str, ...]] = {
    "nvidia": ("nvidia.com/gpu",),
    "amd": ("amd.com/gpu",),
    "intel": ("gpu.intel.com/i915", "gpu.intel.com/xe"),
    "neuron": ("aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice"),
    "habana": ("habana.ai/gaudi",),
    "aliyun": ("aliyun.com/gpu-mem", "aliyun.com/gpu-count"),
}
#: The devices each vendor's plugin advertises, in a message.
VENDOR_DEVICES: Mapping[str, str] = {
    "nvidia": "NVIDIA GPUs",
    "amd": "AMD GPUs",
    "intel": "Intel GPUs",
    "neuron": "Neuron devices",
    "habana": "Gaudi devices",
    "aliyun": "NVIDIA GPUs",
}
# Karpenter's and EKS Auto Mode's spelling of the same node label.
_MANUFACTURER_LABELS = (
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "eks.amazonaws.com/instance-gpu-manufacturer",
)
_NEURON_LABEL = "karpenter.k8s.aws/instance-accelerator-count"
#: Tolerations the DaemonSet controller adds to every DaemonSet pod.
DAEMONSET_TOLERATIONS = tuple(
    Toleration(key, "Exists", "", effect, None, (0, 0))
    for key, effect in (
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
        ("node.kubernetes.io/network-unavailable", "NoSchedule"),
    )
)
# run-ai/fake-gpu-operator (deploy/fake-gpu-operator): its device plugin DaemonSet selects
# `nvidia.com/gpu.deploy.device-plugin: "true"`, which its status-updater writes on every node
# of a node pool (a node labelled with the topology's `nodePoolLabelKey`) that KWOK does not
# simulate (internal/status-updater/handlers/node/labels.go).
_FAKE_PLUGIN = "run-ai/fake-gpu-operator/device-plugin"
_FAKE_POOL_LABEL = "run.ai/simulated-gpu-node-pool"
_FAKE_LABELS: Mapping[str, str] = {"nvidia.com/gpu.deploy.device-plugin": "true"}
_FAKE_RESOURCE = "nvidia.com/gpu"


class _Operator(NamedTuple):
    """How an operator's custom resource installs its vendor's device plugin."""

    group: str  # the resource's API group, with its `/`
    vendor: str
    switch: tuple[str, ...]  # the spec path of the plugin's on/off switch (default on)
    tolerations: tuple[str, ...]  # the spec path of the plugin's tolerations
    node_selector: str  # the spec field of its node selector ("": its vendor's nodes)
    # The tolerations of the plugin when the resource gives none.
    default_tolerations: tuple[Toleration, ...] = ()


_OPERATORS: Mapping[str, _Operator] = {
    # NVIDIA GPU Operator: operands run on the nodes it labels nvidia.com/gpu.present, with
    # `daemonsets.tolerations` in place of their own (which tolerate nvidia.com/gpu).
    "ClusterPolicy": _Operator(
        "nvidia.com/",
        "nvidia",
        ("devicePlugin", "enabled"),
        ("daemonsets", "tolerations"),
        "",
        (Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule", None, (0, 0)),),
    ),
    # AMD GPU Operator: on the nodes of `spec.selector`.
    "DeviceConfig": _Operator(
        "amd.com/",
        "amd",
        ("devicePlugin", "enableDevicePlugin"),
        ("devicePlugin", "devicePluginTolerations"),
        "selector",
    ),
    # Intel Device Plugins Operator: on the nodes of `spec.nodeSelector`.
    "GpuDevicePlugin": _Operator(
        "deviceplugin.intel.com/", "intel", (), ("tolerations",), "nodeSelector"
    ),
}
#: The kinds of those custom resources (read before the other inputs, gpulint.engine.plan).
OPERATOR_KINDS = frozenset(_OPERATORS)
# Node labels written by NFD rules or the operators themselves on the nodes of their vendor's
# devices (`feature.node.kubernetes.io/amd-gpu`, `intel.feature.node.kubernetes.io/gpu`).
_DISCOVERED_LABELS = ("feature.node.kubernetes.io/", "nvidia.com/", "amd.com/")


def plugin_image(container: Container) -> str | None:
    """The container's image, when it names one."""
    image = container.node.get("image")
    return image if isinstance(image, str) and image else None


def plugin_vendor(image: ImageRef) -> str | None:
    """The vendor whose device plugin the image is, or None for any other image."""
    vendor = PLUGIN_IMAGES.get(image.name)
    if vendor == "nvidia" and image.name == "k8s-device-plugin" and "rocm" in image.repository:
        return "amd"
    if vendor == "habana" and "habana" not in image.repository:
        return None  # a generic name: only Habana's registry path says it is theirs
    return vendor


def runs_companion(container: Container) -> bool:
    """True when the container runs another program of the plugin's image (by its command,
    or, without one, by its name)."""
    command = container.node.get("command")
    if isinstance(command, list) and command and isinstance(command[0], str):
        return command[0].rsplit("/", 1)[-1] in COMPANION_PROGRAMS
    return container.name in COMPANION_PROGRAMS


def plugin_containers(template: PodTemplate) -> Iterator[tuple[Container, ImageRef, str]]:
    """The containers of a DaemonSet's pod that run a vendor's device plugin, with their image
    and vendor."""
    for container in template.containers:
        if container.role is ContainerRole.EPHEMERAL or (image := plugin_image(container)) is None:
            continue
        ref = parse_image(image)
        vendor = plugin_vendor(ref)
        if vendor is not None and not runs_companion(container):
            yield container, ref, vendor


def _fake_plugin(template: PodTemplate) -> bool:
    """Whether the pod runs fake-gpu-operator's device plugin."""
    for container in template.containers:
        image = plugin_image(container)
        if image is not None and parse_image(image).repository.endswith(_FAKE_PLUGIN):
            return True
    return False


def pool_vendors(pool: Pool) -> frozenset[str]:
    """The accelerator vendors a pool's nodes carry, from allocatable, labels or instance type."""
    resources = set(pool_gpus(pool))
    known = instance_type(pool.instance_type)
    if known is not None:
        resources.update(name for name, count in known.accelerators.items() if count > 0)
    vendors = {
        vendor
        for vendor, prefixes in VENDOR_RESOURCES.items()
        if any(name.startswith(prefixes) for name in resources)
    }
    manufacturer = next(
        (pool.labels[label].lower() for label in _MANUFACTURER_LABELS if label in pool.labels), ""
    )
    if manufacturer in VENDOR_RESOURCES:
        vendors.add(manufacturer)
    elif any(pool.labels.get(label, "") not in ("", "false", "0") for label in NVIDIA_NODE_LABELS):
        vendors.add("nvidia")
    if pool.labels.get(_NEURON_LABEL, "") not in ("", "0"):
        vendors.add("neuron")
    return frozenset(vendors)


def _hardware_unknown(pool: Pool) -> bool:
    """Whether nothing the profile says of the pool tells which accelerators its nodes carry:
    no vendor, and no instance type, or one of a family with accelerators that gpulint's
    catalogue does not list (`m5.2xlarge` has none)."""
    if pool_vendors(pool):
        return False
    kind = pool.instance_type
    if not kind:
        return True
    from gpulint.profile.instances import accelerated_family

    return instance_type(kind) is None and accelerated_family(kind)


class PluginInstall(NamedTuple):
    """A device plugin the inputs install: the object that installs it and where it may run."""

    document: Document
    what: str  # "device plugin DaemonSet `x`", "GPU Operator ClusterPolicy `x`"
    vendor: str
    template: PodTemplate | None  # the DaemonSet's pod; None for an operator's resource
    node_selector: Mapping[str, str]  # an operator resource's node selector
    tolerations: tuple[Toleration, ...]  # an operator resource's plugin tolerations
    simulated: bool  # advertises on every node it runs on, with no device behind it

    def advertises(self, resource: str) -> bool:
        """Whether the plugin, as shipped, advertises `resource` on the nodes it runs on."""
        if self.simulated:
            return resource == _FAKE_RESOURCE
        return resource in DEFAULT_RESOURCES[self.vendor]


def plugin_installs(documents: Iterable[Document]) -> tuple[PluginInstall, ...]:
    """The device plugins the objects of `documents` install, in their order."""
    from gpulint.workloads import workload_of

    found = []
    for document in documents:
        kind = document.ref.kind
        if kind == "DaemonSet":
            workload = workload_of(document)
            if workload is None or not workload.templates:
                continue
            template = workload.templates[0]
            what = f"device plugin DaemonSet `{document.ref.name}`"
            if _fake_plugin(template):
                what = f"fake-gpu-operator's {what}"
                found.append(PluginInstall(document, what, "nvidia", template, {}, (), True))
                continue
            vendor = next((v for _, _, v in plugin_containers(template)), None)
            if vendor is not None:
                found.append(PluginInstall(document, what, vendor, template, {}, (), False))
        elif kind in _OPERATORS:
            install = _operator_install(document)
            if install is not None:
                found.append(install)
    return tuple(found)


def _operator_install(document: Document) -> PluginInstall | None:
    operator = _OPERATORS[document.ref.kind]
    if not document.ref.api_version.startswith(operator.group):
        return None  # Kyverno's ClusterPolicy
    spec = mapping_at(document.obj, "spec")
    switch = operator.switch
    if switch and mapping_at(spec, *switch[:-1]).get(switch[-1]) is False:
        return None
    labels = mapping_at(spec, operator.node_selector) if operator.node_selector else {}
    path = operator.tolerations
    holder = YMap()  # what constraints.tolerations reads: the list under `tolerations`
    given = mapping_at(spec, *path[:-1]).get(path[-1])
    if given is not None:
        holder["tolerations"] = given
    return PluginInstall(
        document,
        f"{document.ref.kind} `{document.ref.name}`",
        operator.vendor,
        None,
        {str(k): text_of(v) for k, v in labels.items()},
        tolerations(holder) if given is not None else operator.default_tolerations,
        False,
    )


def is_plugin_install(document: Document) -> bool:
    """Whether `document` installs a device plugin (a plugin DaemonSet or an operator's
    resource): one other files' checks read."""
    return bool(plugin_installs((document,)))


def reaches(
    install: PluginInstall,
    pool: Pool,
    held: Sequence[Toleration] = (),
    fake_pool_label: str = _FAKE_POOL_LABEL,
    added: Mapping[str, str] = {},
) -> bool:
    """Whether the plugin would run on the pool's nodes: its node selection matches them and
    it tolerates their taints, as GPU503 judges it. `held`: the tolerations admission gives
    its pod (with those the DaemonSet controller adds); `fake_pool_label`: the label
    fake-gpu-operator's node pools carry; `added`: the labels an NFD worker of the inputs
    writes on the pool's nodes (`nfd_labels`). An operator's resource runs its plugin where its
    node selector matches, labels its vendor's discovery writes counting as there on the pools
    that may have its devices."""
    if install.template is None:
        # Labels the vendor's discovery writes are there if the nodes have its devices.
        devices = may_have_devices(install, pool) is not False
        wanted = {
            key: value
            for key, value in install.node_selector.items()
            if not (devices and _discovered(key))
        }
        if any(pool.labels.get(key) != value for key, value in wanted.items()):
            return False
        return not _untolerated((*install.tolerations, *DAEMONSET_TOLERATIONS), pool.taints)
    labels = {**pool.labels, **added}
    if install.simulated and fake_pool_label in pool.labels:
        labels.update(_FAKE_LABELS)
    mismatch = selector_mismatch(install.template, labels, pool.label_requirements)
    if mismatch is not None and mismatch.decidable:
        return False
    return not _untolerated(
        held or (*install.template.tolerations, *DAEMONSET_TOLERATIONS), pool.taints
    )


def _untolerated(held: Sequence[Toleration], taints: Sequence[Taint]) -> bool:
    return bool(untolerated_taints(held, taints))


def _discovered(key: str) -> bool:
    return any(part in key for part in _DISCOVERED_LABELS)


def may_have_devices(install: PluginInstall, pool: Pool) -> bool | None:
    """Whether the pool's nodes have what the plugin advertises: True for a pool of its vendor
    (and for any pool of a simulating plugin), None when the profile does not tell, False for a
    pool known to carry none of its vendor's devices."""
    if install.simulated or install.vendor in pool_vendors(pool):
        return True
    return None if _hardware_unknown(pool) else False


def fake_pool_label(documents: Iterable[Document]) -> str:
    """The node pool label of fake-gpu-operator's topology ConfigMap among `documents`
    (`nodePoolLabelKey`), or its default."""
    from gpulint.yamltree import parse

    for document in documents:
        if document.ref.kind != "ConfigMap" or document.ref.name != "topology":
            continue
        text = mapping_at(document.obj, "data").get("topology.yml")
        if not isinstance(text, str):
            continue
        parsed = parse(text).documents
        root = parsed[0].value if parsed else None
        key = root.get("nodePoolLabelKey") if isinstance(root, YMap) else None
        if isinstance(key, str) and key:
            return key
    return _FAKE_POOL_LABEL


# The PCI vendor ID NFD names a vendor's devices by (`pci-<vendor>.present`).
_PCI_VENDORS: Mapping[str, str] = {"nvidia": "10de", "amd": "1002"}
_NFD_CONF = "nfd-worker.conf"


def nfd_pci_workers(documents: Iterable[Document]) -> tuple[PodTemplate, ...]:
    """The NFD workers among `documents` that name PCI display devices by vendor alone
    (`pci-10de.present`), as the NVIDIA device plugin chart and the GPU Operator configure them.

    NFD labels a device `feature.node.kubernetes.io/pci-<fields>.present`, the fields being its
    worker config's `sources.pci.deviceLabelFields` ([class, vendor] by default) for the device
    classes of `deviceClassWhitelist` (03, 0b40, 12 by default); with the default naming a
    GPU's label depends on its board's class (0300 or 0302), so only the vendor-only naming is
    told from the config alone.
    """
    documents = tuple(documents)
    for document in documents:
        if document.ref.kind != "ConfigMap" or not isinstance(document.obj.get("data"), YMap):
            continue
        conf = document.obj["data"].get(_NFD_CONF)
        if isinstance(conf, str) and _labels_pci_by_vendor(conf):
            return tuple(_nfd_workers(documents))
    return ()


def nfd_labels(workers: tuple[PodTemplate, ...], pool: Pool, vendor: str) -> dict[str, str]:
    """The PCI label those NFD workers write on the pool's nodes of `vendor`'s devices."""
    pci = _PCI_VENDORS.get(vendor)
    if pci is None or not any(_nfd_worker_runs_on(t, pool) for t in workers):
        return {}
    return {f"feature.node.kubernetes.io/pci-{pci}.present": "true"}


def _nfd_workers(documents: Iterable[Document]) -> Iterator[PodTemplate]:
    from gpulint.workloads import workload_of

    for document in documents:
        workload = workload_of(document) if document.ref.kind == "DaemonSet" else None
        for template in workload.templates if workload is not None else ():
            for container in template.containers:
                image = plugin_image(container)
                command = container.node.get("command")
                if (
                    image is not None
                    and parse_image(image).name == "node-feature-discovery"
                    and isinstance(command, list)
                    and "nfd-worker" in command
                ):
                    yield template
                    break


def _nfd_worker_runs_on(template: PodTemplate, pool: Pool) -> bool:
    mismatch = selector_mismatch(template, pool.labels, pool.label_requirements)
    if mismatch is not None and mismatch.decidable:
        return False
    tolerations = (*template.tolerations, *DAEMONSET_TOLERATIONS)
    return not untolerated_taints(tolerations, pool.taints)


def _labels_pci_by_vendor(conf: str) -> bool:
    """Whether an NFD worker config names PCI display devices by vendor alone."""
    from gpulint.yamltree import parse

    parsed = parse(conf).documents
    root = parsed[0].value if parsed else None
    sources = root.get("sources") if isinstance(root, YMap) else None
    pci = sources.get("pci") if isinstance(sources, YMap) else None
    if not isinstance(pci, YMap) or pci.get("deviceLabelFields") != ["vendor"]:
        return False
    classes = pci.get("deviceClassWhitelist", ["03", "0b40", "12"])
    return isinstance(classes, list) and any(
        isinstance(c, str) and c.startswith("03") for c in classes
    )
