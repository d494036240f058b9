"""gpulint's own format, `apiVersion: gpulint.io/v1alpha1`, `kind: ClusterProfile` -> facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpulint.accelerators import is_extended_resource
from gpulint.errors import GpulintError
from gpulint.profile.instances import catalogue_allocatable
from gpulint.profile.kueue import cluster_queue_from_object, local_queue_from_object
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import (
    KUBELET_LABELS,
    NODE_LABELS,
    ClusterProfile,
    GpuUser,
    LabelRequirement,
    OperatorDriver,
    Pool,
    Taint,
    unstated_node_labels,
)
from gpulint.profile.platforms import ZONED
from gpulint.profile.policy import (
    limit_range_from_object,
    priority_class_from_object,
    quota_from_object,
    runtime_class_from_object,
)
from gpulint.profile.values import check_quantities, location, mapping, quantities, sequence, text
from gpulint.quantity import format_quantity
from gpulint.schema import dotted, validate

if TYPE_CHECKING:
    from gpulint.dra import Claim, DeviceClass, DeviceRequest, ResourceSlice
    from gpulint.profile.objects import RuntimeClass

API_VERSION = "gpulint.io/v1alpha1"
KIND = "ClusterProfile"
SCHEMA_HINT = " (see docs/profile.md)"

# ClusterProfile pool key -> Pool field, for the fields copied as they are written.
_POOL_KEYS: Mapping[str, str] = {
    "nodes": "nodes",
    "minNodes": "min_nodes",
    "maxNodes": "max_nodes",
    "scaleFromZero": "scale_from_zero",
    "provisioningSeconds": "provisioning_seconds",
    "imagePullSeconds": "image_pull_seconds",
    "instanceType": "instance_type",
    "devicePluginNotReady": "device_plugin_not_ready",
    "limitGroup": "limit_group",
    "draNodes": "dra_nodes",
    "driverVersion": "driver_version",
}


def is_cluster_profile(data: Any) -> bool:
    """True for a document that declares itself a gpulint ClusterProfile."""
    return (
        isinstance(data, Mapping)
        and data.get("kind") == KIND
        and (str(data.get("apiVersion", "")).startswith("gpulint.io/"))
    )


def facts_from_cluster_profile(data: Any, display: str) -> ProfileFacts:
    """Validate a ClusterProfile document against the schema and read it."""
    validate(display, data, "profile", unknown="field", hint=SCHEMA_HINT)
    spec = mapping(data.get("spec"))
    _check_unique(display, spec, "pools")
    _check_unique(display, spec, "namespaces")
    _check_unique(display, spec, "priorityClasses")
    _check_unique(display, spec, "runtimeClasses")
    _check_unique(display, spec, "deviceClasses")
    admission = mapping(spec.get("admission"))
    provider = spec.get("platform") or spec.get("provider")
    if spec.get("platform") and spec.get("provider") and spec["platform"] != spec["provider"]:
        raise GpulintError(
            f"{display}: spec.platform ({spec['platform']}) and spec.provider "
            f"({spec['provider']}) disagree; write only spec.platform"
        )
    profile = ClusterProfile(
        name=mapping(data.get("metadata")).get("name"),
        kubernetes_version=spec.get("kubernetesVersion"),
        minimum_kubernetes_version=spec.get("minimumKubernetesVersion"),
        provider=provider,
        provider_source=f"declared in {display}" if provider else None,
        extended_resource_toleration=admission.get("extendedResourceToleration"),
        pod_toleration_restriction=admission.get("podTolerationRestriction"),
        default_namespace=spec.get("defaultNamespace"),
        scheduler_extenders=(
            frozenset(spec["schedulerExtenders"]) if "schedulerExtenders" in spec else None
        ),
        quotas=tuple(_quotas(display, spec)),
        limit_ranges=tuple(_limit_ranges(display, spec)),
        priority_classes=tuple(
            priority_class_from_object({**pc, "metadata": {"name": pc["name"]}})
            for pc in sequence(spec.get("priorityClasses"))
        ),
        runtime_classes=tuple(_runtime_classes(display, spec)),
        # Written at all (even `[]`): the cluster's classes are these and no others.
        runtime_classes_known="runtimeClasses" in spec,
        cluster_queues=tuple(
            cluster_queue_from_object(
                {"metadata": {"name": q["name"]}, "spec": q}, display, ["spec", "clusterQueues", i]
            )
            for i, q in enumerate(sequence(spec.get("clusterQueues")))
        ),
        local_queues=tuple(
            local_queue_from_object(
                {"metadata": {"name": q["name"], "namespace": q["namespace"]}, "spec": q}
            )
            for q in sequence(spec.get("localQueues"))
        ),
        device_classes=tuple(_device_class(c) for c in sequence(spec.get("deviceClasses"))),
        resource_slices=tuple(_resource_slice(r) for r in sequence(spec.get("resourceSlices"))),
        resource_claims=tuple(_claims(spec)),
        sources=(display,),
        **_gpu_operator(display, spec),
    )
    # Which labels every node has though a pool does not state them: the kubelet's, and on
    # a cloud the zone and region.
    unstated = NODE_LABELS if provider in ZONED else KUBELET_LABELS
    pools = tuple(
        _pool(display, pool, ["spec", "pools", i], unstated)
        for i, pool in enumerate(sequence(spec.get("pools")))
    )
    return ProfileFacts(profile, pools)


def _gpu_operator(display: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """`spec.gpuOperator`: the driver the GPU Operator installs, stated or its release's default."""
    if "gpuOperator" not in spec:
        return {}
    operator = mapping(spec["gpuOperator"])
    if "driverVersion" in operator:
        driver = text(operator["driverVersion"])
        origin = f"GPU Operator driver.version in {display}"
        return {"gpu_operator_drivers": (OperatorDriver(driver, origin),)}
    from gpulint.data.cuda import GPU_OPERATOR_RELEASES

    version = text(operator.get("version", ""))
    wanted = version if version.startswith("v") else f"v{version}"
    release = next((r for r in GPU_OPERATOR_RELEASES if r.version == wanted), None)
    if release is None:
        known = ", ".join(r.version for r in GPU_OPERATOR_RELEASES)
        raise GpulintError(
            f"{location(display, operator, 'version')}: spec.gpuOperator.version: gpulint does "
            f"not know the default driver of GPU Operator `{version}` (it knows {known}); write "
            "spec.gpuOperator.driverVersion, the driver.version your installation sets"
        )
    origin = f"GPU Operator {release.version} default driver ({release.source})"
    return {"gpu_operator_drivers": (OperatorDriver(release.driver, origin),)}


def _runtime_classes(display: str, spec: Mapping[str, Any]) -> list[RuntimeClass]:
    """`spec.runtimeClasses`, each shaped as the RuntimeClass object (name for metadata)."""
    found = []
    for i, item in enumerate(sequence(spec.get("runtimeClasses"))):
        overhead = mapping(item.get("overhead")).get("podFixed")
        path = ["spec", "runtimeClasses", i, "overhead", "podFixed"]
        check_quantities(display, overhead, path)
        found.append(runtime_class_from_object({**item, "metadata": {"name": item["name"]}}))
    return found


def _check_unique(display: str, spec: Mapping[str, Any], key: str) -> None:
    items = sequence(spec.get(key))
    seen: set[str] = set()
    for index, item in enumerate(items):
        name = item["name"]
        if name in seen:
            raise GpulintError(
                f"{location(display, item, 'name')}: spec.{key}.{index}.name: `{name}` is "
                f"listed twice; give each entry of `{key}` its own name"
            )
        seen.add(name)


def _pool(
    display: str, item: Mapping[str, Any], path: list[Any], unstated: tuple[str, ...]
) -> PoolFacts:
    values: dict[str, Any] = {field: item[key] for key, field in _POOL_KEYS.items() if key in item}
    stated = set(values)
    estimated: set[str] = set()
    if "labels" in item:
        values["labels"] = {str(k): text(v) for k, v in item["labels"].items()}
        stated.add("labels")
    written = tuple(
        LabelRequirement(r["key"], r["operator"], tuple(text(v) for v in r.get("values", ())))
        for r in sequence(item.get("labelRequirements"))
    )
    # The kubelet labels every node with its OS and architecture (and a cloud with its zone
    # and region): a pool that does not say which leaves them open rather than absent. Labels
    # read from the nodes themselves lack only what no pool states (the hostname).
    if item.get("labelsObserved") is True:
        unstated = KUBELET_LABELS
    values["label_requirements"] = written + unstated_node_labels(
        values.get("labels", {}), frozenset(r.key for r in written), unstated
    )
    (stated if "labelRequirements" in item else estimated).add("label_requirements")
    if "taints" in item:
        values["taints"] = tuple(
            Taint(t["key"], text(t.get("value", "")), t["effect"]) for t in item["taints"]
        )
        stated.add("taints")
    if "allocatable" in item:
        values["allocatable"] = quantities(display, item["allocatable"], [*path, "allocatable"])
        stated.add("allocatable")
    else:
        from_catalogue = catalogue_allocatable(item.get("instanceType"))
        if from_catalogue is not None:
            values["allocatable"] = from_catalogue
            estimated.add("allocatable")
    if "templateMissing" in item:
        values["template_missing"] = tuple(str(name) for name in item["templateMissing"])
        stated.add("template_missing")
    if "templateMissingLabels" in item:
        missing = item["templateMissingLabels"]
        values["template_missing_labels"] = tuple(str(name) for name in missing)
        stated.add("template_missing_labels")
    if "labelsObserved" in item:
        values["labels_observed"] = item["labelsObserved"] is True
        stated.add("labels_observed")
    if "unknownAmounts" in item:
        values["unknown_amounts"] = frozenset(str(name) for name in item["unknownAmounts"])
        stated.add("unknown_amounts")
    if "groupLimits" in item:
        values["group_limits"] = quantities(display, item["groupLimits"], [*path, "groupLimits"])
        stated.add("group_limits")
    if "gpusInUse" in item:
        values["gpus_in_use"] = _gpus_in_use(display, item["gpusInUse"], [*path, "gpusInUse"])
        stated.add("gpus_in_use")
    if "gpusInUseBy" in item:
        values["gpus_in_use_by"] = _gpus_in_use_by(display, item, [*path, "gpusInUseBy"])
        stated.add("gpus_in_use_by")
    return PoolFacts(Pool(name=item["name"], **values), frozenset(stated), frozenset(estimated))


def _gpus_in_use(display: str, node: Any, path: Sequence[Any]) -> dict[str, Decimal]:
    """`gpusInUse`, held to what a live cluster reports: extended resources, none negative."""
    hint = "write the amount the pods on the pool's nodes request (0 or more)"
    in_use = quantities(display, node, path, negative_hint=hint)
    for name in in_use:
        where = f"{location(display, node, name)}: {dotted([*path, name])}"
        if not is_extended_resource(name):
            raise GpulintError(
                f"{where}: `{name}` is not an extended resource; gpusInUse counts only "
                "resources such as nvidia.com/gpu, which the scheduler never overcommits"
            )
    return in_use


def _gpus_in_use_by(
    display: str, pool: Mapping[str, Any], path: Sequence[Any]
) -> tuple[GpuUser, ...]:
    """`gpusInUseBy`: one entry per workload, together holding no more than `gpusInUse`."""
    users: list[GpuUser] = []
    entries = pool["gpusInUseBy"]
    for index, entry in enumerate(entries):
        user = GpuUser(
            namespace=entry["namespace"],
            kind=entry["kind"],
            name=entry["name"],
            resources=_gpus_in_use(display, entry["resources"], [*path, index, "resources"]),
        )
        if any(u.is_workload(user.namespace, user.kind, user.name) for u in users):
            raise GpulintError(
                f"{location(display, entries, index)}: {dotted([*path, index])}: "
                f"{user.kind} {user.namespace}/{user.name} is listed twice; write one entry per "
                "workload with the sum of its pods' resources"
            )
        users.append(user)
    in_use = _gpus_in_use(display, pool.get("gpusInUse"), [*path[:-1], "gpusInUse"])
    for name in dict.fromkeys(n for u in users for n in u.resources):
        held = sum((u.resources.get(name, Decimal(0)) for u in users), Decimal(0))
        if held > in_use.get(name, Decimal(0)):
            raise GpulintError(
                f"{location(display, pool, 'gpusInUseBy')}: {dotted(path)}: the workloads hold "
                f"{format_quantity(held)} {name} together, more than gpusInUse "
                f"({format_quantity(in_use.get(name, Decimal(0)))}); gpusInUse is the total of "
                "every pod on the pool's nodes, so raise it to at least that"
            )
    return tuple(users)


def _quotas(display: str, spec: Mapping[str, Any]) -> list[Any]:
    found = []
    for n, namespace in enumerate(sequence(spec.get("namespaces"))):
        for q, quota in enumerate(sequence(namespace.get("resourceQuotas"))):
            path = ["spec", "namespaces", n, "resourceQuotas", q]
            check_quantities(display, quota.get("hard"), [*path, "hard"])
            check_quantities(display, quota.get("used"), [*path, "used"])
            obj = {
                "metadata": {"name": quota["name"], "namespace": namespace["name"]},
                "spec": {
                    key: quota[key] for key in ("hard", "scopes", "scopeSelector") if key in quota
                },
                "status": {"used": quota.get("used", {})},
            }
            found.append(quota_from_object(obj))
    return found


def _limit_ranges(display: str, spec: Mapping[str, Any]) -> list[Any]:
    found = []
    for n, namespace in enumerate(sequence(spec.get("namespaces"))):
        for r, limit_range in enumerate(sequence(namespace.get("limitRanges"))):
            for i, item in enumerate(sequence(limit_range.get("limits"))):
                for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
                    path = ["spec", "namespaces", n, "limitRanges", r, "limits", i, key]
                    check_quantities(display, item.get(key), path)
            obj = {
                "metadata": {"name": limit_range["name"], "namespace": namespace["name"]},
                "spec": {"limits": list(sequence(limit_range.get("limits")))},
            }
            found.append(limit_range_from_object(obj))
    return found


# ---------------------------------------------------------------------------------------------
# DRA: DeviceClasses, ResourceSlices, claims and templates, in the shape gpulint.dra views them.
# gpulint.dra is imported only for a profile that lists such objects.


def _attributes(node: Any) -> dict[str, str]:
    return {str(key): text(value) for key, value in mapping(node).items()}


def _device_class(item: Mapping[str, Any]) -> DeviceClass:
    from gpulint.dra import DeviceClass

    # Absent: the class's selectors say more than gpulint reads (every device of its drivers).
    attributes = None
    if "attributes" in item:
        attributes = tuple(
            _requirement(qualified, value)
            for qualified, value in _attributes(item["attributes"]).items()
        )
    return DeviceClass(
        name=item["name"],
        drivers=frozenset(str(d) for d in sequence(item.get("drivers"))),
        attributes=attributes,
        extended_resource_name=item.get("extendedResourceName"),
    )


def _requirement(qualified: str, value: str) -> tuple[str, str, str]:
    """`gpu.nvidia.com/type: gpu` as the (domain, name, value) a DeviceClass view holds."""
    domain, _, name = qualified.rpartition("/")
    return domain, name, value


def _resource_slice(item: Mapping[str, Any]) -> ResourceSlice:
    from gpulint.dra import Device, ResourceSlice

    return ResourceSlice(
        driver=item["driver"],
        node=item.get("node"),
        devices=tuple(
            Device(d["name"], _attributes(d.get("attributes")))
            for d in sequence(item.get("devices"))
        ),
    )


def _request(item: Mapping[str, Any]) -> DeviceRequest:
    from gpulint.dra import ALLOCATION_ALL, DeviceRequest

    mode = item.get("allocationMode", "ExactCount")
    return DeviceRequest(
        name=item["name"],
        device_class=item["deviceClassName"],
        count=0 if mode == ALLOCATION_ALL else item.get("count", 1),
        allocation_mode=mode,
        alternatives=tuple(str(a) for a in sequence(item.get("alternatives"))),
        admin_access=item.get("adminAccess") is True,
    )


def _claims(spec: Mapping[str, Any]) -> list[Claim]:
    """The ResourceClaims and ResourceClaimTemplates of every `spec.namespaces[]` entry."""
    found = []
    for namespace in sequence(spec.get("namespaces")):
        for key, kind in (
            ("resourceClaims", "ResourceClaim"),
            ("resourceClaimTemplates", "ResourceClaimTemplate"),
        ):
            if not namespace.get(key):
                continue
            from gpulint.dra import Claim

            found += [
                Claim(
                    kind,
                    namespace["name"],
                    item["name"],
                    tuple(_request(r) for r in sequence(item.get("requests"))),
                    allocated=bool(item.get("allocated", False)),
                )
                for item in sequence(namespace.get(key))
            ]
    return found
