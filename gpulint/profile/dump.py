"""ClusterProfile -> gpulint's ClusterProfile YAML, which loads back to an equal profile."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gpulint.dra import ALLOCATION_ALL, Claim, DeviceClass, ResourceSlice
from gpulint.profile.clusterprofile import API_VERSION, KIND
from gpulint.profile.model import (
    KUBELET_LABELS,
    ClusterProfile,
    ClusterQueue,
    FlavorQuota,
    LimitRange,
    Pool,
    ResourceQuota,
    RuntimeClass,
)
from gpulint.quantity import format_quantity
from gpulint.yamltree import resolve_plain

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*\Z")
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def dump_profile(profile: ClusterProfile) -> str:
    """The profile as ClusterProfile YAML text (quantities in their shortest exact form)."""
    lines = [f"apiVersion: {API_VERSION}", f"kind: {KIND}"]
    if profile.name:
        lines += ["metadata:", f"  name: {_scalar(profile.name)}"]
    lines.append("spec:")
    spec: list[str] = []
    if profile.kubernetes_version:
        spec.append(f"kubernetesVersion: {json.dumps(profile.kubernetes_version)}")
    if profile.minimum_kubernetes_version:
        minimum = json.dumps(profile.minimum_kubernetes_version)
        spec.append(f"minimumKubernetesVersion: {minimum}")
    if profile.provider:
        spec.append(f"platform: {_scalar(profile.provider)}")
    declared = [
        (key, value)
        for key, value in (
            ("extendedResourceToleration", profile.extended_resource_toleration),
            ("podTolerationRestriction", profile.pod_toleration_restriction),
        )
        if value is not None
    ]
    if declared:
        spec += ["admission:", *(f"  {key}: {str(value).lower()}" for key, value in declared)]
    if profile.default_namespace:
        spec.append(f"defaultNamespace: {_scalar(profile.default_namespace)}")
    if profile.scheduler_extenders is not None:
        extenders = ", ".join(_scalar(e) for e in sorted(profile.scheduler_extenders))
        spec.append(f"schedulerExtenders: [{extenders}]")
    spec.append("pools:" if profile.pools else "pools: []")
    for pool in profile.pools:
        spec += _pool(pool)
    namespaces = _namespaces(profile)
    if namespaces:
        spec.append("namespaces:")
        spec += namespaces
    if profile.priority_classes:
        spec.append("priorityClasses:")
    for pc in profile.priority_classes:
        spec.append(
            f"- {{name: {_scalar(pc.name)}, value: {pc.value}, "
            f"globalDefault: {str(pc.global_default).lower()}, "
            f"preemptionPolicy: {_scalar(pc.preemption_policy)}}}"
        )
    if profile.runtime_classes_known:
        spec.append("runtimeClasses:" if profile.runtime_classes else "runtimeClasses: []")
    for runtime_class in profile.runtime_classes:
        spec += _runtime_class(runtime_class)
    if profile.cluster_queues:
        spec.append("clusterQueues:")
    for queue in profile.cluster_queues:
        spec += _cluster_queue(queue)
    if profile.local_queues:
        spec.append("localQueues:")
    for local in profile.local_queues:
        spec.append(
            f"- {{namespace: {_scalar(local.namespace)}, name: {_scalar(local.name)}, "
            f"clusterQueue: {_scalar(local.cluster_queue)}}}"
        )
    if profile.device_classes:
        spec.append("deviceClasses:")
    spec += [f"- {_device_class(c)}" for c in profile.device_classes]
    if profile.resource_slices:
        spec.append("resourceSlices:")
    for item in profile.resource_slices:
        spec += _resource_slice(item)
    lines += [f"  {line}" for line in spec]
    return "\n".join(lines) + "\n"


def _runtime_class(runtime_class: RuntimeClass) -> list[str]:
    """A RuntimeClass as `runtimeClasses:` lists it (the object's shape, its name for its
    metadata)."""
    lines = [f"- name: {_scalar(runtime_class.name)}"]
    if runtime_class.handler:
        lines.append(f"  handler: {_scalar(runtime_class.handler)}")
    if runtime_class.node_selector or runtime_class.tolerations:
        lines.append("  scheduling:")
        if runtime_class.node_selector:
            selector = {k: _scalar(v) for k, v in runtime_class.node_selector.items()}
            lines.append(f"    nodeSelector: {_flow(selector)}")
        if runtime_class.tolerations:
            lines.append("    tolerations:")
        for t in runtime_class.tolerations:
            fields = {"key": _scalar(t.key), "operator": _scalar(t.operator)}
            fields.update({"value": _scalar(t.value)} if t.value else {})
            fields.update({"effect": _scalar(t.effect)} if t.effect else {})
            lines.append(f"    - {_flow(fields)}")
    if runtime_class.overhead:
        lines.append(f"  overhead: {{podFixed: {_quantities(runtime_class.overhead)}}}")
    return lines


def _device_class(device_class: DeviceClass) -> str:
    fields = {"name": _scalar(device_class.name)}
    if device_class.drivers:
        fields["drivers"] = f"[{', '.join(_scalar(d) for d in sorted(device_class.drivers))}]"
    # None (selectors gpulint does not read) is written as no `attributes` at all.
    if device_class.attributes is not None:
        fields["attributes"] = _flow(
            {f"{domain}/{name}": _scalar(value) for domain, name, value in device_class.attributes}
        )
    if device_class.extended_resource_name:
        fields["extendedResourceName"] = _scalar(device_class.extended_resource_name)
    return _flow(fields)


def _resource_slice(item: ResourceSlice) -> list[str]:
    lines = [f"- driver: {_scalar(item.driver)}"]
    if item.node is not None:
        lines.append(f"  node: {_scalar(item.node)}")
    lines.append("  devices:" if item.devices else "  devices: []")
    for device in item.devices:
        attributes = _flow({k: _scalar(v) for k, v in device.attributes.items()})
        lines.append(f"  - {{name: {_scalar(device.name)}, attributes: {attributes}}}")
    return lines


def _claim(found: Claim) -> list[str]:
    lines = [f"- name: {_scalar(found.name)}"]
    if found.allocated:
        lines.append("  allocated: true")
    lines.append("  requests:" if found.requests else "  requests: []")
    for request in found.requests:
        fields = {"name": _scalar(request.name), "deviceClassName": _scalar(request.device_class)}
        if request.allocation_mode == ALLOCATION_ALL:
            fields["allocationMode"] = ALLOCATION_ALL
        else:
            fields["count"] = str(request.count)
        if request.alternatives:
            fields["alternatives"] = f"[{', '.join(_scalar(a) for a in request.alternatives)}]"
        if request.admin_access:
            fields["adminAccess"] = "true"
        lines.append(f"  - {_flow(fields)}")
    return lines


def _cluster_queue(queue: ClusterQueue) -> list[str]:
    """Its resource groups (one covering every resource when it knows none), with each
    flavor's quotas."""
    lines = [f"- name: {_scalar(queue.name)}"]
    if queue.cohort:
        lines.append(f"  cohort: {_scalar(queue.cohort)}")
    lines.append("  resourceGroups:")
    groups: dict[frozenset[str], list[FlavorQuota]] = {}
    for flavor in queue.flavors:
        groups.setdefault(flavor.covers or queue.covered, []).append(flavor)
    for covers, flavors in groups.items() if groups else ((queue.covered, []),):
        covered = ", ".join(_scalar(name) for name in sorted(covers))
        lines += [f"  - coveredResources: [{covered}]", "    flavors:"]
        lines += _flavors(flavors)
    return lines


def _flavors(flavors: list[FlavorQuota]) -> list[str]:
    """The `flavors:` entries of one resource group."""
    lines: list[str] = []
    for flavor in flavors:
        lines += [f"    - name: {_scalar(flavor.name)}", "      resources:"]
        for name, amount in flavor.nominal.items():
            entry = {"name": _scalar(name), "nominalQuota": _quantity(amount)}
            if name in flavor.borrowing_limit:
                entry["borrowingLimit"] = _quantity(flavor.borrowing_limit[name])
            lines.append(f"      - {_flow(entry)}")
    return lines


def _pool(pool: Pool) -> list[str]:
    lines = [f"- name: {_scalar(pool.name)}"]
    body = [f"labels: {_flow({k: _scalar(v) for k, v in pool.labels.items()})}"]
    # Reading a pool back opens the kubelet's OS and architecture labels it leaves out, last.
    written = list(pool.label_requirements)
    while written and written[-1].operator == "Exists" and written[-1].key in KUBELET_LABELS:
        written.pop()
    if written:
        requirements = ", ".join(
            _flow(
                {"key": _scalar(r.key), "operator": _scalar(r.operator)}
                | ({"values": f"[{', '.join(_scalar(v) for v in r.values)}]"} if r.values else {})
            )
            for r in written
        )
        body.append(f"labelRequirements: [{requirements}]")
    taints = ", ".join(
        _flow({"key": _scalar(t.key), "value": _scalar(t.value), "effect": _scalar(t.effect)})
        for t in pool.taints
    )
    body.append(f"taints: [{taints}]")
    if pool.instance_type:
        body.append(f"instanceType: {_scalar(pool.instance_type)}")
    body.append(f"allocatable: {_quantities(pool.allocatable)}")
    body += [
        f"nodes: {pool.nodes}",
        f"minNodes: {pool.min_nodes}",
        f"maxNodes: {pool.max_nodes}",
        f"scaleFromZero: {str(pool.scale_from_zero).lower()}",
    ]
    if pool.provisioning_seconds is not None:
        body.append(f"provisioningSeconds: {pool.provisioning_seconds}")
    if pool.image_pull_seconds is not None:
        body.append(f"imagePullSeconds: {pool.image_pull_seconds}")
    body.append(f"devicePluginNotReady: {pool.device_plugin_not_ready}")
    if pool.limit_group is not None:
        body.append(f"limitGroup: {_scalar(pool.limit_group)}")
    if pool.group_limits:
        body.append(f"groupLimits: {_quantities(pool.group_limits)}")
    if pool.template_missing:
        body.append(f"templateMissing: [{', '.join(_scalar(n) for n in pool.template_missing)}]")
    if pool.template_missing_labels:
        keys = ", ".join(_scalar(n) for n in pool.template_missing_labels)
        body.append(f"templateMissingLabels: [{keys}]")
    if pool.labels_observed:
        body.append("labelsObserved: true")
    if pool.unknown_amounts:
        unknown = ", ".join(_scalar(n) for n in sorted(pool.unknown_amounts))
        body.append(f"unknownAmounts: [{unknown}]")
    if pool.dra_nodes:
        body.append(f"draNodes: {pool.dra_nodes}")
    if pool.gpus_in_use:
        body.append(f"gpusInUse: {_quantities(pool.gpus_in_use)}")
    if pool.gpus_in_use_by:
        body.append("gpusInUseBy:")
    for user in pool.gpus_in_use_by:
        fields = {
            "namespace": _scalar(user.namespace),
            "kind": _scalar(user.kind),
            "name": _scalar(user.name),
            "resources": _quantities(user.resources),
        }
        body.append(f"- {_flow(fields)}")
    return lines + [f"  {line}" for line in body]


def _namespaces(profile: ClusterProfile) -> list[str]:
    names = list(
        dict.fromkeys(
            [q.namespace for q in profile.quotas]
            + [r.namespace for r in profile.limit_ranges]
            + [c.namespace for c in profile.resource_claims]
        )
    )
    lines: list[str] = []
    for name in names:
        lines.append(f"- name: {_scalar(name)}")
        quotas = [q for q in profile.quotas if q.namespace == name]
        ranges = [r for r in profile.limit_ranges if r.namespace == name]
        if quotas:
            lines.append("  resourceQuotas:")
            lines += [f"  {line}" for q in quotas for line in _quota(q)]
        if ranges:
            lines.append("  limitRanges:")
            lines += [f"  {line}" for r in ranges for line in _limit_range(r)]
        for key, kind in (
            ("resourceClaims", "ResourceClaim"),
            ("resourceClaimTemplates", "ResourceClaimTemplate"),
        ):
            claims = [c for c in profile.resource_claims if (c.namespace, c.kind) == (name, kind)]
            if claims:
                lines.append(f"  {key}:")
                lines += [f"  {line}" for c in claims for line in _claim(c)]
    return lines


def _quota(quota: ResourceQuota) -> list[str]:
    lines = [
        f"- name: {_scalar(quota.name)}",
        f"  hard: {_quantities(quota.hard)}",
        f"  used: {_quantities(quota.used)}",
    ]
    if quota.scopes:
        lines.append(f"  scopes: [{', '.join(_scalar(s) for s in quota.scopes)}]")
    if quota.scope_selector:
        expressions = ", ".join(
            _flow(
                {
                    "scopeName": _scalar(r.scope_name),
                    "operator": _scalar(r.operator),
                    "values": f"[{', '.join(_scalar(v) for v in r.values)}]",
                }
            )
            for r in quota.scope_selector
        )
        lines.append(f"  scopeSelector: {{matchExpressions: [{expressions}]}}")
    return lines


def _limit_range(limit_range: LimitRange) -> list[str]:
    lines = [f"- name: {_scalar(limit_range.name)}", "  limits:" if limit_range.items else ""]
    for item in limit_range.items:
        fields = {
            "type": _scalar(item.type),
            "max": _quantities(item.max),
            "min": _quantities(item.min),
            "default": _quantities(item.default),
            "defaultRequest": _quantities(item.default_request),
            "maxLimitRequestRatio": _quantities(item.max_limit_request_ratio),
        }
        lines.append(f"  - {_flow(fields)}")
    return [line for line in lines if line]


def _flow(items: Mapping[str, str]) -> str:
    """`{a: b, c: d}` from already rendered keys' values (keys rendered here)."""
    return "{" + ", ".join(f"{_scalar(k)}: {v}" for k, v in items.items()) + "}"


def _quantities(values: Mapping[str, Decimal]) -> str:
    return _flow({name: _quantity(amount) for name, amount in values.items()})


def _quantity(amount: Decimal) -> str:
    if amount == 0:
        return "0"
    if amount == amount.to_integral_value():
        whole = int(amount)
        for suffix, factor in _BINARY:
            if whole % factor == 0 and whole >= factor:
                return f"{whole // factor}{suffix}"
        return str(whole)
    milli = amount * 1000
    if milli == milli.to_integral_value():
        return f"{int(milli)}m"
    return _scalar(format_quantity(amount))


def _scalar(value: Any) -> str:
    """A YAML scalar that reads back as the same string: plain when safe, else quoted."""
    text = str(value)
    if _PLAIN.match(text) and resolve_plain(text) == text:
        return text
    return json.dumps(text)
