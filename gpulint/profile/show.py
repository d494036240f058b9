"""ClusterProfile -> the text `gpulint profile show` prints: what gpulint believes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from gpulint.loader import display_path
from gpulint.profile.model import (
    NODE_LABELS,
    ClusterProfile,
    Pool,
)
from gpulint.profile.nodes import is_accelerator_resource
from gpulint.profile.platforms import (
    EXTENDED_RESOURCE_TOLERATION,
    FACTS,
    POD_TOLERATION_RESTRICTION,
)
from gpulint.quantity import format_quantity

if TYPE_CHECKING:
    from gpulint.profile.objects import RuntimeClass

_HEADERS = (
    "POOL",
    "INSTANCE",
    "GPUS/NODE",
    "NODES NOW/MIN/MAX",
    "FROM ZERO",
    "PLUGIN NOT READY",
    "TAINTS",
    "LABELS",
)
# Shown after GPUS/NODE only when some pool knows its GPUs in use (a live cluster or its
# snapshot): a hand-written profile usually does not, and a column of zeros would claim it.
_IN_USE_HEADER = "GPUS IN USE"
# Labels left out of the table: deprecated copies of GA labels and per-image bookkeeping that
# no workload selects on. The profile keeps them.
_HIDDEN_LABEL_PREFIXES = (
    "beta.kubernetes.io/",
    "failure-domain.beta.kubernetes.io/",
    "k8s.io/cloud-provider-aws",
    "eks.amazonaws.com/nodegroup-image",
    "eks.amazonaws.com/sourceLaunchTemplate",
    "topology.k8s.aws/zone-id",
)


def show_profile(profile: ClusterProfile, root: str | None = None) -> str:
    """A summary line, the table of pools, the admission line, quotas, priorities, queues and
    DRA objects; the files it was built from named relative to `root` when inside it."""
    lines = [_cluster_line(profile)]
    if profile.sources:
        lines.append(f"Built from: {', '.join(display_path(s, root) for s in profile.sources)}")
    lines.append("")
    if profile.pools:
        in_use_known = any(pool.gpus_in_use for pool in profile.pools)
        lines += _table(
            _headers(in_use_known), [_row(pool, in_use_known) for pool in profile.pools]
        )
        hidden = sum(len(pool.labels) - len(shown_labels(pool.labels)) for pool in profile.pools)
        if hidden:
            lines.append(
                f"({hidden} deprecated or bookkeeping labels not shown; "
                "`gpulint profile import` lists every label)"
            )
        lines += [in_use_by_line(pool) for pool in profile.pools if pool.gpus_in_use_by]
        lines += [
            f"cluster-autoscaler's template of {pool.name} does not advertise "
            f"{', '.join(pool.template_missing)}: no scale-up from zero for pods that ask for it"
            for pool in profile.pools
            if pool.template_missing
        ]
        lines += [
            f"cluster-autoscaler's template of {pool.name} lacks the labels "
            f"{', '.join(pool.template_missing_labels)}: no scale-up from zero for pods that "
            "require them"
            for pool in profile.pools
            if pool.template_missing_labels
        ]
    else:
        lines.append("No node pools.")
    lines += [f"Assumed: {assumption}" for assumption in profile.assumptions]
    lines += ["", *admission_lines(profile)]
    if profile.scheduler_extenders is not None:
        extenders = ", ".join(sorted(profile.scheduler_extenders)) or "none"
        lines.append(f"Scheduler extenders: {extenders} (spec.schedulerExtenders)")
    for quota in profile.quotas:
        limits = ", ".join(
            f"{name} {format_quantity(quota.used.get(name, Decimal(0)))}/{format_quantity(hard)}"
            for name, hard in quota.hard.items()
        )
        lines.append(f"ResourceQuota {quota.namespace}/{quota.name}: used/hard {limits or '-'}")
    for limit_range in profile.limit_ranges:
        lines.append(f"LimitRange {limit_range.namespace}/{limit_range.name}")
    for pc in profile.priority_classes:
        default = ", global default" if pc.global_default else ""
        lines.append(f"PriorityClass {pc.name}: {pc.value} ({pc.preemption_policy}{default})")
    for runtime_class in profile.runtime_classes:
        lines.append(f"RuntimeClass {runtime_class.name}{_runtime_class_text(runtime_class)}")
    if profile.runtime_classes_known and not profile.runtime_classes:
        lines.append("RuntimeClass: none")
    for queue in profile.cluster_queues:
        quotas = "; ".join(
            f"{flavor.name}: {_quantities_text(flavor.nominal)}" for flavor in queue.flavors
        )
        cohort = f", cohort {queue.cohort}" if queue.cohort else ""
        lines.append(f"ClusterQueue {queue.name}: nominal {quotas or '-'}{cohort}")
    for local in profile.local_queues:
        lines.append(f"LocalQueue {local.namespace}/{local.name} -> {local.cluster_queue}")
    for flavor in profile.resource_flavors:
        tolerations = ", ".join(
            f"{t.key}{'=' + t.value if t.value else ''}:{t.effect or '*'}"
            for t in flavor.tolerations
        )
        labels = ", ".join(f"{k}={v}" for k, v in flavor.node_labels.items())
        lines.append(
            f"ResourceFlavor {flavor.name}: nodeLabels {labels or '-'}; tolerations "
            f"{tolerations or '-'} (Kueue writes both into the pods it admits to it)"
        )
    for policy in profile.resource_policies:
        wanted = [f"{r} request" for r in policy.requests] + [f"{r} limit" for r in policy.limits]
        where = ", ".join(policy.namespaces) or "every namespace"
        lines.append(
            f"Policy {policy.label}: refuses containers without a {', '.join(wanted)} ({where})"
        )
    lines += dra_lines(profile)
    return "\n".join(lines) + "\n"


def dra_lines(profile: ClusterProfile) -> list[str]:
    """Each DeviceClass with what it selects, serves and finds in the ResourceSlices; each
    ResourceClaimTemplate; the ResourceClaims counted (a pod's generated claims are many)."""
    from gpulint.dra import devices_per_node

    lines = []
    for device_class in profile.device_classes:
        selects = [f"driver {d}" for d in sorted(device_class.drivers)]
        selects += [
            f"{domain}/{name}={value}" for domain, name, value in device_class.attributes or ()
        ]
        if device_class.attributes is None:
            which = "of its drivers " if device_class.drivers else ""
            selects.append(f"selectors not read (every device {which}counts)")
        facts = [", ".join(selects) or "any device"]
        if device_class.extended_resource_name:
            facts.append(f"serves {device_class.extended_resource_name}")
        if profile.resource_slices:
            per_node = devices_per_node(device_class, profile.resource_slices)
            total, most = sum(per_node.values()), max(per_node.values(), default=0)
            if "*" in per_node:
                facts.append(f"{most} devices on every node")
            elif per_node:
                nodes = f"{len(per_node)} node{'s' if len(per_node) > 1 else ''}"
                facts.append(f"{total} devices on {nodes}, at most {most} on one")
            else:
                facts.append("no device in the ResourceSlices")
        lines.append(f"DeviceClass {device_class.name}: {'; '.join(facts)}")
    if profile.device_classes and not profile.resource_slices:
        lines.append("ResourceSlices: none listed (GPU704 counts no devices)")
    claims = [c for c in profile.resource_claims if c.kind == "ResourceClaim"]
    lines += [
        f"{found.kind} {found.namespace}/{found.name}: "
        f"{'; '.join(r.describe() for r in found.requests) or 'no device requests'}"
        for found in profile.resource_claims
        if found.kind == "ResourceClaimTemplate"
    ]
    if claims:
        allocated = sum(1 for c in claims if c.allocated)
        namespaces = len({c.namespace for c in claims})
        lines.append(
            f"ResourceClaims: {len(claims)} in {namespaces} namespace"
            f"{'s' if namespaces > 1 else ''}, {allocated} allocated"
        )
    return lines


#: The spec.admission key that declares each admission fact a profile may declare.
_DECLARED_KEYS = {
    EXTENDED_RESOURCE_TOLERATION: "extendedResourceToleration",
    POD_TOLERATION_RESTRICTION: "podTolerationRestriction",
}


def _runtime_class_text(runtime_class: RuntimeClass) -> str:
    """`: handler nvidia, nodeSelector a=b, tolerates k:NoSchedule, overhead cpu 250m`."""
    parts = [f"handler {runtime_class.handler}"] if runtime_class.handler else []
    if runtime_class.node_selector:
        selector = ", ".join(f"{k}={v}" for k, v in runtime_class.node_selector.items())
        parts.append(f"nodeSelector {selector}")
    if runtime_class.tolerations:
        tolerated = ", ".join(
            f"{t.key or '*'}{'=' + t.value if t.value else ''}:{t.effect or '*'}"
            for t in runtime_class.tolerations
        )
        parts.append(f"tolerates {tolerated}")
    if runtime_class.overhead:
        from gpulint.scheduling import format_amount  # memory as 2Gi, not in bytes

        amounts = runtime_class.overhead.items()
        parts.append("overhead " + ", ".join(f"{r} {format_amount(r, a)}" for r, a in amounts))
    return f": {'; '.join(parts)}" if parts else ""


def _quantities_text(amounts: Mapping[str, Decimal]) -> str:
    return ", ".join(f"{name} {format_quantity(a)}" for name, a in amounts.items()) or "-"


def _cluster_line(profile: ClusterProfile) -> str:
    facts = []
    if profile.kubernetes_version:
        facts.append(f"Kubernetes {profile.kubernetes_version}")
    elif profile.minimum_kubernetes_version:
        facts.append(f"Kubernetes {profile.minimum_kubernetes_version} or newer")
    if profile.provider:
        how = f", {profile.provider_source}" if profile.provider_source else ""
        facts.append(f"platform {profile.provider}{how}")
    else:
        facts.append("platform unknown (nothing recognised it; declare spec.platform)")
    if profile.default_namespace:
        facts.append(f"default namespace {profile.default_namespace}")
    return f"Cluster {profile.name or '(unnamed)'}: {'; '.join(facts)}"


def admission_line(profile: ClusterProfile) -> str:
    """Whether ExtendedResourceToleration is on, off or unknown, and where that comes from."""
    return _fact_line(profile, EXTENDED_RESOURCE_TOLERATION)


def admission_lines(profile: ClusterProfile) -> list[str]:
    """Every admission fact of the platform, on, off or unknown, each with its source."""
    return [_fact_line(profile, name) for name in FACTS]


def _fact_line(profile: ClusterProfile, name: str) -> str:
    fact = profile.admission_fact(name)
    key = _DECLARED_KEYS.get(name)
    declared, where = profile.declared_fact(name)
    if declared is not None:
        if where:
            return f"{name}: {fact.shown} ({where})"
        return f"{name}: {fact.shown} (declared in the profile (spec.admission.{key}))"
    hint = f"; set spec.admission.{key} to override" if key else ""
    return f"{name}: {fact.shown} ({fact.source}{hint})"


def gpus_per_node(pool: Pool) -> str:
    """`8 nvidia.com/gpu`, several joined by commas, or `-` for a pool without accelerators."""
    found = [
        f"{format_quantity(amount)} {name}"
        for name, amount in pool.allocatable.items()
        if is_accelerator_resource(name)
    ]
    return ", ".join(found) or "-"


def gpus_in_use(pool: Pool) -> str:
    """`6/16` (in use / on the nodes now) per accelerator, in GPUS/NODE order, or `-`."""
    names = [name for name in pool.allocatable if is_accelerator_resource(name)]
    names += [n for n in pool.gpus_in_use if is_accelerator_resource(n) and n not in names]
    found = [
        f"{format_quantity(pool.gpus_in_use.get(name, Decimal(0)))}/"
        f"{format_quantity(pool.nodes * pool.allocatable.get(name, Decimal(0)))}"
        for name in names
    ]
    return ", ".join(found) or "-"


def in_use_by_line(pool: Pool) -> str:
    """`In use on g5: Deployment ml/llm-serve 4 nvidia.com/gpu; Pod ml/debug 1 nvidia.com/gpu`."""
    users = "; ".join(
        f"{user.kind} {user.namespace}/{user.name} "
        + ", ".join(f"{format_quantity(amount)} {name}" for name, amount in user.resources.items())
        for user in pool.gpus_in_use_by
    )
    return f"In use on {pool.name}: {users}"


def shown_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The labels the table prints: all but deprecated copies and bookkeeping labels."""
    return {k: v for k, v in labels.items() if not k.startswith(_HIDDEN_LABEL_PREFIXES)}


def _headers(in_use_known: bool) -> tuple[str, ...]:
    return (*_HEADERS[:3], *((_IN_USE_HEADER,) if in_use_known else ()), *_HEADERS[3:])


def _row(pool: Pool, in_use_known: bool) -> tuple[str, ...]:
    labels = ",".join(
        [f"{k}={v}" for k, v in sorted(shown_labels(pool.labels).items())]
        # An open OS, architecture, zone or region is what infrastructure code leaves unsaid
        # of every pool: not worth a column.
        + [
            str(r)
            for r in pool.label_requirements
            if not r.key.startswith(_HIDDEN_LABEL_PREFIXES)
            and not (r.operator == "Exists" and r.key in NODE_LABELS)
        ]
    )
    return (
        pool.name,
        pool.instance_type or "-",
        gpus_per_node(pool),
        *((gpus_in_use(pool),) if in_use_known else ()),
        f"{pool.nodes}/{pool.min_nodes}/{pool.max_nodes}",
        "yes" if pool.scale_from_zero else "no",
        str(pool.device_plugin_not_ready) + (f" ({pool.dra_nodes} DRA)" if pool.dra_nodes else ""),
        ",".join(str(t) for t in pool.taints) or "-",
        labels or "-",
    )


def _table(headers: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in (headers, *rows)
    ]
