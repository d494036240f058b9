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
from gpulint.device_plugins import (
    DAEMONSET_TOLERATIONS,
    nfd_labels,
    nfd_pci_workers,
    plugin_containers,
    plugin_image,
    pool_vendors,
)
from gpulint.images import ImageRef
from gpulint.model import Container, PodTemplate, Severity, Workload
from gpulint.profile.model import Pool, Taint
from gpulint.rules.base import CheckContext, Problem
from gpulint.scheduling import selector_mismatch, untolerated_taints

if TYPE_CHECKING:
    from gpulint.admission import Admission

# Labels written onto nodes at runtime by NFD, GFD or the GPU Operator, not by the pool config.
_DISCOVERED_LABEL_PREFIXES = ("feature.node.kubernetes.io/", "nvidia.com/")
# A full version (v0.17.0, 0.17.0-ubi8, 2.22.4.0); `v0.17`, `1`, `stable` float.
_FULL_VERSION = re.compile(r"v?[0-9]+\.[0-9]+\.[0-9]+")
# A tag naming the commit it was built from (gpushare's `v2-1.11-aff8a23`): one build, pinned.
_COMMIT_TAG = re.compile(
    r"(?:^|[-_.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?:$|[-_.])"
)


@dataclass(frozen=True)
class DevicePlugin:
    """A DaemonSet container that runs a GPU device plugin."""

    workload: Workload
    template: PodTemplate
    container: Container
    image: ImageRef
    vendor: str


def device_plugins(ctx: CheckContext) -> Iterator[DevicePlugin]:
    """Every device plugin container of every DaemonSet among the checked manifests."""
    for workload, template in ctx.pod_templates():
        if workload.kind != "DaemonSet":
            continue
        for container, ref, vendor in plugin_containers(template):
            yield DevicePlugin(workload, template, container, ref, vendor)


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
            f"device plugin container `{plugin.container.name}` image "
            f"`{plugin_image(plugin.container)}` {reason}: a node that restarts the plugin may "
            f"pull a different version than its neighbours, and a broken release takes every "
            f"GPU node with it",
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
    return admitted, (*admitted.tolerations, *DAEMONSET_TOLERATIONS)


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
            nfd_workers = nfd_pci_workers(ctx.documents)
        template = plugin.template
        admitted, tolerations = _admitted_tolerations(ctx, template)
        for pool in ctx.profile.pools:
            if plugin.vendor not in pool_vendors(pool):
                continue
            if pool.nodes and pool.dra_nodes >= pool.nodes:
                continue  # a DRA driver publishes the pool's GPUs; no device plugin needs to run
            what = f"device plugin `{plugin.workload.document.ref.name}` cannot run on GPU pool "
            labels = {**pool.labels, **nfd_labels(nfd_workers, pool, plugin.vendor)}
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
