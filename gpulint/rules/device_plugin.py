"""GPU device plugin DaemonSets: pinned images (GPU501), liveness (GPU502), reach (GPU503).

A node advertises GPUs only while a device plugin pod runs on it and stays registered with the
kubelet. A plugin that is upgraded by a floating tag, wedges unnoticed, or cannot be scheduled
onto a GPU pool leaves those nodes advertising nothing: every GPU pod reports
`Insufficient nvidia.com/gpu` although the hardware is there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpulint.constraints import Toleration
from gpulint.gpus import NVIDIA_NODE_LABELS as _NVIDIA_LABELS
from gpulint.images import ImageRef, parse_image
from gpulint.model import Container, ContainerRole, PodTemplate, Severity, Workload
from gpulint.profile.instances import instance_type
from gpulint.profile.model import Pool, Taint
from gpulint.rules.base import CheckContext, Problem
from gpulint.scheduling import pool_gpus, selector_mismatch, untolerated_taints
from gpulint.yamltree import YMap, parse

if TYPE_CHECKING:
    from gpulint.admission import Admission

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
# Karpenter's and EKS Auto Mode's spelling of the same node label.
_MANUFACTURER_LABELS = (
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "eks.amazonaws.com/instance-gpu-manufacturer",
)
_NEURON_LABEL = "karpenter.k8s.aws/instance-accelerator-count"
# Labels written onto nodes at runtime by NFD, GFD or the GPU Operator, not by the pool config.
_DISCOVERED_LABEL_PREFIXES = ("feature.node.kubernetes.io/", "nvidia.com/")
# A full version (v0.17.0, 0.17.0-ubi8, 2.22.4.0); `v0.17`, `1`, `stable` float.
_FULL_VERSION = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+")
# A tag naming the commit it was built from (gpushare's `v2-1.11-aff8a23`): one build, pinned.
_COMMIT_TAG = re.compile(
    r"(?:^|[-_.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?:$|[-_.])"
)
# Tolerations the DaemonSet controller adds to every DaemonSet pod.
_DAEMONSET_TOLERATIONS = tuple(
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


@dataclass(frozen=True)
class DevicePlugin:
    """A DaemonSet container that runs a GPU device plugin."""

    workload: Workload
    template: PodTemplate
    container: Container
    image: ImageRef
    vendor: str


def _image(container: Container) -> str | None:
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


def device_plugins(ctx: CheckContext) -> Iterator[DevicePlugin]:
    """Every device plugin container of every DaemonSet among the checked manifests."""
    for workload, template in ctx.pod_templates():
        if workload.kind != "DaemonSet":
            continue
        for container in template.containers:
            if container.role is ContainerRole.EPHEMERAL or (image := _image(container)) is None:
                continue
            ref = parse_image(image)
            vendor = plugin_vendor(ref)
            if vendor is not None and not _runs_companion(container):
                yield DevicePlugin(workload, template, container, ref, vendor)


def _runs_companion(container: Container) -> bool:
    """True when the container runs another program of the plugin's image (by its command,
    or, without one, by its name)."""
    command = container.node.get("command")
    if isinstance(command, list) and command and isinstance(command[0], str):
        return command[0].rsplit("/", 1)[-1] in COMPANION_PROGRAMS
    return container.name in COMPANION_PROGRAMS


def unpinned_reason(image: ImageRef) -> str | None:
    """Why the image floats (no tag, `latest`, a partial version), or None when pinned."""
    if image.digest or "$" in (image.tag or ""):
        return None  # pinned, or a tag the deploy substitutes (`${VERSION}`)
    if image.tag is None:
        return "has no tag, so it pulls `latest`"
    if image.tag == "latest":
        return "uses `latest`"
    if not _FULL_VERSION.match(image.tag) and not _COMMIT_TAG.search(image.tag):
        return f"uses the floating tag `{image.tag}`"
    return None


def device_plugin_image_unpinned(ctx: CheckContext) -> Iterator[Problem]:
    """A device plugin whose image can change under a running cluster."""
    for plugin in device_plugins(ctx):
        reason = unpinned_reason(plugin.image)
        if reason is None:
            continue
        yield Problem.at(
            plugin.template.document,
            plugin.container.node.pos_of_value("image"),
            f"device plugin container `{plugin.container.name}` image `{_image(plugin.container)}` "
            f"{reason}: a node that restarts the plugin may pull a different version than its "
            f"neighbours, and a broken release takes every GPU node with it",
        )


def device_plugin_without_liveness_probe(ctx: CheckContext) -> Iterator[Problem]:
    """A device plugin with no livenessProbe: a wedged plugin is never restarted."""
    for plugin in device_plugins(ctx):
        if "livenessProbe" in plugin.container.node:
            continue
        yield Problem.at(
            plugin.template.document,
            plugin.container.pos,
            f"device plugin container `{plugin.container.name}` has no livenessProbe: when it "
            f"wedges or loses its kubelet registration the pod stays Running while the node "
            f"advertises 0 {_devices(plugin.vendor)}, and nothing restarts it",
        )


# What a vendor's plugin advertises, in a message; GPUs unless named here.
_DEVICE_NOUNS: Mapping[str, str] = {
    "neuron": "Neuron devices",
    "habana": "Gaudi devices",
    "aliyun": "shared GPU memory (`aliyun.com/gpu-mem`)",
}


def _devices(vendor: str) -> str:
    return _DEVICE_NOUNS.get(vendor, "GPUs")


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
    elif any(pool.labels.get(label, "") not in ("", "false", "0") for label in _NVIDIA_LABELS):
        vendors.add("nvidia")
    if pool.labels.get(_NEURON_LABEL, "") not in ("", "0"):
        vendors.add("neuron")
    return frozenset(vendors)


# The PCI vendor ID NFD names a vendor's devices by (`pci-<vendor>.present`).
_PCI_VENDORS: Mapping[str, str] = {"nvidia": "10de", "amd": "1002"}
_NFD_CONF = "nfd-worker.conf"


def _nfd_pci_workers(ctx: CheckContext) -> tuple[PodTemplate, ...]:
    """The NFD workers among the manifests that name PCI display devices by vendor alone
    (`pci-10de.present`), as the NVIDIA device plugin chart and the GPU Operator configure them.

    NFD labels a device `feature.node.kubernetes.io/pci-<fields>.present`, the fields being its
    worker config's `sources.pci.deviceLabelFields` ([class, vendor] by default) for the device
    classes of `deviceClassWhitelist` (03, 0b40, 12 by default); with the default naming a
    GPU's label depends on its board's class (0300 or 0302), so only the vendor-only naming is
    told from the config alone.
    """
    for document in ctx.documents:
        if document.ref.kind != "ConfigMap" or not isinstance(document.obj.get("data"), YMap):
            continue
        conf = document.obj["data"].get(_NFD_CONF)
        if isinstance(conf, str) and _labels_pci_by_vendor(conf):
            return tuple(_nfd_workers(ctx))
    return ()


def _nfd_labels(workers: tuple[PodTemplate, ...], pool: Pool, vendor: str) -> dict[str, str]:
    """The PCI label those NFD workers write on the pool's nodes of `vendor`'s devices."""
    pci = _PCI_VENDORS.get(vendor)
    if pci is None or not any(_nfd_worker_runs_on(t, pool) for t in workers):
        return {}
    return {f"feature.node.kubernetes.io/pci-{pci}.present": "true"}


def _nfd_workers(ctx: CheckContext) -> Iterator[PodTemplate]:
    for workload, template in ctx.pod_templates():
        if workload.kind != "DaemonSet":
            continue
        for container in template.containers:
            image = _image(container)
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
    tolerations = (*template.tolerations, *_DAEMONSET_TOLERATIONS)
    return not untolerated_taints(tolerations, pool.taints)


def _labels_pci_by_vendor(conf: str) -> bool:
    """Whether an NFD worker config names PCI display devices by vendor alone."""
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


def _selector_hint(detail: str) -> str:
    if any(prefix in detail for prefix in _DISCOVERED_LABEL_PREFIXES):
        return (
            " (that label is written by NFD or the GPU Operator; if they run there, record it "
            "in the profile's pool labels)"
        )
    return ""


def _admitted_tolerations(
    ctx: CheckContext, template: PodTemplate
) -> tuple[Admission, tuple[Toleration, ...]]:
    """A DaemonSet's pod as admitted, and the tolerations it surely carries: its own, a
    RuntimeClass's scheduling.tolerations (`nvidia`, which device plugins and GPU agents
    name), and those the DaemonSet controller adds."""
    admitted = ctx.admission(template)
    return admitted, (*admitted.tolerations, *_DAEMONSET_TOLERATIONS)


def _assumed_away(admitted: Admission, blocking: Iterable[Taint]) -> bool:
    """Whether what admission adds only if an assumption holds tolerates every taint of
    `blocking`: the verdict then rests on that assumption (a warning naming it)."""
    return not untolerated_taints(admitted.assumed, blocking)


def device_plugin_misses_gpu_nodes(ctx: CheckContext) -> Iterator[Problem]:
    """A device plugin DaemonSet that cannot run on a GPU pool: that pool advertises 0 GPUs."""
    if ctx.profile is None:
        return
    nfd_workers: tuple[PodTemplate, ...] | None = None
    for plugin in device_plugins(ctx):
        if nfd_workers is None:
            nfd_workers = _nfd_pci_workers(ctx)
        template = plugin.template
        admitted, tolerations = _admitted_tolerations(ctx, template)
        for pool in ctx.profile.pools:
            if plugin.vendor not in pool_vendors(pool):
                continue
            if pool.nodes and pool.dra_nodes >= pool.nodes:
                continue  # a DRA driver publishes the pool's GPUs; no device plugin needs to run
            what = f"device plugin `{plugin.workload.document.ref.name}` cannot run on GPU pool "
            labels = {**pool.labels, **_nfd_labels(nfd_workers, pool, plugin.vendor)}
            mismatch = selector_mismatch(template, labels, pool.label_requirements)
            if mismatch is not None and mismatch.decidable:
                yield Problem.at(
                    template.document,
                    mismatch.pos,
                    f"{what}`{pool.name}`: {mismatch.detail}{_selector_hint(mismatch.detail)}; "
                    f"its nodes will advertise 0 {_devices(plugin.vendor)}",
                )
                continue
            blocking = untolerated_taints(tolerations, pool.taints)
            if blocking:
                taints = ", ".join(f"`{taint}`" for taint in blocking)
                unsure = _assumed_away(admitted, blocking)
                assumption = f"; {admitted.assumption_text}" if unsure else ""
                yield Problem.at(
                    template.document,
                    template.tolerations_pos,
                    f"{what}`{pool.name}`: it does not tolerate the pool's taint {taints}; its "
                    f"nodes will advertise 0 {_devices(plugin.vendor)}{assumption}",
                    "Add a toleration for "
                    + ", ".join(f"`{t.key}` ({t.effect})" for t in blocking)
                    + " to the device plugin DaemonSet (Helm chart value `tolerations`).",
                    severity=Severity.WARNING if unsure else None,
                )


def gpu_agent_misses_gpu_nodes(ctx: CheckContext) -> Iterator[Problem]:
    """A GPU node agent DaemonSet (no GPU request, kept on GPU nodes by its node selection)
    that tolerates a taint of none of the pools it selects: it runs on no GPU node."""
    if ctx.profile is None:
        return
    from gpulint.gpus import gpu_requests, selects_gpu_nodes

    plugins = {id(plugin.template) for plugin in device_plugins(ctx)}  # GPU503's
    for workload, template in ctx.pod_templates():
        if (
            workload.kind != "DaemonSet"
            or id(template) in plugins
            or gpu_requests(template)
            or not selects_gpu_nodes(template)
        ):
            continue
        admitted, tolerations = _admitted_tolerations(ctx, template)
        blocked: list[tuple[Pool, tuple[str, ...]]] = []
        unsure = False
        for pool in ctx.profile.pools:
            if selector_mismatch(template, pool.labels, pool.label_requirements) is not None:
                continue  # not a pool it selects (or not known to be: a label NFD writes)
            blocking = untolerated_taints(tolerations, pool.taints)
            if not blocking:
                break  # it runs on this GPU pool
            unsure = unsure or _assumed_away(admitted, blocking)
            blocked.append((pool, tuple(str(taint) for taint in blocking)))
        else:
            if not blocked:
                continue
            pools = "; ".join(
                f"`{pool.name}`: " + ", ".join(f"`{taint}`" for taint in taints)
                for pool, taints in blocked
            )
            keys = dict.fromkeys(t for _, taints in blocked for t in taints)
            message = (
                f"GPU node agent `{workload.document.ref.name}` is kept on GPU nodes (it "
                f"requests no GPU) and tolerates none of their taints ({pools}): the DaemonSet "
                "places no pod on any of them"
            )
            if unsure:
                message += f"; {admitted.assumption_text}"
            yield Problem.at(
                template.document,
                template.tolerations_pos,
                message,
                "Add a toleration for " + ", ".join(f"`{k}`" for k in keys) + " to the "
                "DaemonSet (the chart's `tolerations` value, where it has one).",
                severity=Severity.WARNING if unsure else None,
            )
