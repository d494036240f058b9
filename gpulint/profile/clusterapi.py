"""Cluster API node groups (MachineDeployment, MachineSet, MachinePool) -> pools.

A node group is a pool named by its `metadata.name`. cluster-autoscaler's Cluster API provider
scales it between the annotations `cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size`
and `...-max-size`; without them the group keeps `spec.replicas` nodes. At zero nodes the
autoscaler knows what a new node would offer only from the `capacity.cluster-autoscaler.
kubernetes.io/*` annotations (cpu, memory, ephemeral-disk, maxPods, gpu-type and gpu-count,
labels `k=v,...`, taints `k=v:Effect,...`) or from the infrastructure template's
`status.capacity`: without them it cannot scale the group up from zero, and without
gpu-type/gpu-count it never adds a node for a pod that asks for GPUs.

What the nodes carry comes from the objects the group references when they are given in the
same inputs: the infrastructure machine template's instance type (`instanceType`, `vmSize`;
the instance catalogue gives its size), and the KubeadmConfigTemplate's
`joinConfiguration.nodeRegistration` (`taints`, `kubeletExtraArgs` `node-labels`). Machine
template labels under `node.cluster.x-k8s.io/` and `node-role.kubernetes.io/` are propagated
to the nodes by Cluster API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.errors import GpulintError
from gpulint.profile.autoscaler import EFFECTS, taint_list
from gpulint.profile.instances import catalogue_allocatable
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import ClusterProfile, Pool, Taint, unstated_node_labels
from gpulint.profile.values import location, mapping, sequence, text
from gpulint.quantity import parse_quantity

MIN_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX_SIZE = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
CAPACITY = "capacity.cluster-autoscaler.kubernetes.io/"
GROUP_KINDS = frozenset({"MachineDeployment", "MachineSet", "MachinePool"})
#: Resources of a capacity annotation, by the annotation's suffix.
_CAPACITY_RESOURCES = {"cpu": "cpu", "memory": "memory", "ephemeral-disk": "ephemeral-storage"}
_PROPAGATED = ("node.cluster.x-k8s.io/", "node-role.kubernetes.io/")
_INSTANCE_FIELDS = ("instanceType", "vmSize", "machineType", "flavor")


def is_clusterapi_object(data: Any) -> bool:
    """True for an object of a Cluster API group (`cluster.x-k8s.io`, `infrastructure.`,
    `bootstrap.`, `controlplane.`, `addons.cluster.x-k8s.io`...).

    Node groups make the pools; their bootstrap and machine templates are read where a group
    references them. The rest of a cluster template as `clusterctl generate cluster` writes it
    (the Cluster, its infrastructure cluster and control plane, ClusterResourceSets) describes
    no worker node and is read past, so the generated file is an input as it is.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        return False
    group = str(data.get("apiVersion", "")).partition("/")[0]
    return group == "cluster.x-k8s.io" or group.endswith(".cluster.x-k8s.io")


def facts_from_clusterapi(objects: Sequence[Mapping[str, Any]], display: str) -> ProfileFacts:
    """The pools of every node group among `objects`, with what their templates say."""
    by_kind_name = {
        (str(o.get("kind")), str(mapping(o.get("metadata")).get("name"))): o for o in objects
    }
    pools = [
        _group(display, obj, by_kind_name) for obj in objects if obj.get("kind") in GROUP_KINDS
    ]
    managed = next((o["kind"] for o in objects if o.get("kind") in _MANAGED_PLATFORMS), None)
    profile = ClusterProfile(
        provider=_MANAGED_PLATFORMS.get(managed or ""),
        provider_source=f"inferred from the Cluster API {managed} in {display}"
        if managed
        else None,
        sources=(display,),
    )
    return ProfileFacts(profile, tuple(pools))


# The control planes of Cluster API's managed-Kubernetes providers, and the platform whose
# API server each one is (CAPA's EKS, CAPZ's AKS, CAPG's GKE).
_MANAGED_PLATFORMS = {
    "AWSManagedControlPlane": "eks",
    "AzureManagedControlPlane": "aks",
    "GCPManagedControlPlane": "gke",
}


def _group(
    display: str, group: Mapping[str, Any], known: Mapping[tuple[str, str], Mapping[str, Any]]
) -> PoolFacts:
    metadata = mapping(group.get("metadata"))
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise GpulintError(f"{location(display, group)}: {group['kind']}: metadata.name is missing")
    annotations = mapping(metadata.get("annotations"))
    spec = mapping(group.get("spec"))
    machine = mapping(mapping(spec.get("template")).get("spec"))
    replicas = _count(display, spec, "replicas", f"{group['kind']} {name}: spec.replicas")
    low = _count(display, annotations, MIN_SIZE, MIN_SIZE)
    high = _count(display, annotations, MAX_SIZE, MAX_SIZE)
    autoscaled = low is not None and high is not None
    # The autoscaler sets replicas itself, starting from the minimum, when it is left out.
    nodes = replicas if replicas is not None else (low if autoscaled else 1)
    infrastructure = known.get(_ref(machine.get("infrastructureRef")), {})
    instance = _instance_type(infrastructure)
    bootstrap = known.get(_ref(mapping(machine.get("bootstrap")).get("configRef")), {})
    kubelet_labels = _node_labels(bootstrap)
    propagated = {
        str(k): text(v)
        for k, v in mapping(
            mapping(mapping(spec.get("template")).get("metadata")).get("labels")
        ).items()
        if str(k).startswith(_PROPAGATED)
    }
    template_labels = _pairs(text(annotations.get(f"{CAPACITY}labels")))
    managed_labels, managed_taints = _managed_node_group(display, infrastructure)
    labels = {**kubelet_labels, **propagated, **managed_labels, **template_labels}
    # cluster-autoscaler's zero-node template has the annotation's labels and those Cluster
    # API propagates from the machine template, never kubelet's `--node-labels`.
    lacking = tuple(k for k in kubelet_labels if k not in template_labels and k not in propagated)
    if instance:
        labels.setdefault("node.kubernetes.io/instance-type", instance)
    taints = (
        _kubeadm_taints(display, bootstrap)
        + managed_taints
        + _annotation_taints(display, annotations, f"{CAPACITY}taints")
    )
    taints = tuple(dict.fromkeys(taints))
    advertised = _template_capacity(display, annotations, infrastructure)
    allocatable = catalogue_allocatable(instance) or {}
    has_gpus = {k: v for k, v in {**allocatable, **advertised}.items() if "/" in k and v > 0}
    values: dict[str, Any] = {
        "labels": labels,
        "taints": taints,
        "min_nodes": low if autoscaled else nodes,
        "max_nodes": high if autoscaled else nodes,
        # At zero nodes the autoscaler needs a template with at least cpu and memory.
        "scale_from_zero": autoscaled and {"cpu", "memory"} <= advertised.keys(),
        "instance_type": instance,
        "template_missing": tuple(k for k in has_gpus if k not in advertised and autoscaled),
        "template_missing_labels": lacking if autoscaled else (),
        "template_labels_by": "capacity-annotation",
    }
    stated = set(values) - ({"instance_type"} if instance is None else set())
    estimated = {"nodes"}
    merged = {**allocatable, **advertised}
    if merged:
        values["allocatable"] = merged
        (stated if advertised and not allocatable else estimated).add("allocatable")
    # The OS, architecture, zone and region every node has, which the objects may not say.
    unsaid = unstated_node_labels(labels)
    pool = Pool(name=name, nodes=nodes, label_requirements=unsaid, **values)
    estimated.add("label_requirements")
    return PoolFacts(pool, frozenset(stated), frozenset(estimated))


def _ref(ref: Any) -> tuple[str, str]:
    ref = mapping(ref)
    return str(ref.get("kind")), str(ref.get("name"))


def _count(display: str, node: Mapping[str, Any], key: str, what: str) -> int | None:
    raw = node.get(key)
    if raw is None:
        return None
    try:
        value = int(str(raw))
    except ValueError:
        value = -1
    if isinstance(raw, bool) or value < 0:
        raise GpulintError(
            f"{location(display, node, key)}: {what}: {raw!r} is not a node count (write a "
            "whole number, 0 or more)"
        )
    return value


def _instance_type(infrastructure: Mapping[str, Any]) -> str | None:
    """The machine type of a machine template (`spec.template.spec.instanceType`) or of an
    infrastructure machine pool, which states it in its own spec (CAPA's
    `AWSManagedMachinePool` and `AWSMachinePool`... `spec.instanceType`)."""
    spec = mapping(infrastructure.get("spec"))
    for machine in (mapping(mapping(spec.get("template")).get("spec")), spec):
        for key in _INSTANCE_FIELDS:
            if isinstance(machine.get(key), str) and machine[key]:
                return machine[key]
    return None


# CAPA's AWSManagedMachinePool spells taint effects as EKS's API does, in kebab case.
_MANAGED_EFFECTS = {
    "no-schedule": "NoSchedule",
    "prefer-no-schedule": "PreferNoSchedule",
    "no-execute": "NoExecute",
}


def _managed_node_group(
    display: str, infrastructure: Mapping[str, Any]
) -> tuple[dict[str, str], tuple[Taint, ...]]:
    """The labels and taints an EKS managed node group of CAPA (`AWSManagedMachinePool`
    `spec.labels`, `spec.taints`) puts on its nodes; none for any other infrastructure."""
    if infrastructure.get("kind") != "AWSManagedMachinePool":
        return {}, ()
    spec = mapping(infrastructure.get("spec"))
    labels = {str(k): text(v) for k, v in mapping(spec.get("labels")).items()}
    taints = []
    raw = sequence(spec.get("taints"))
    for index, item in enumerate(raw):
        item = mapping(item)
        effect = _MANAGED_EFFECTS.get(str(item.get("effect")))
        if not isinstance(item.get("key"), str) or effect is None:
            raise GpulintError(
                f"{location(display, raw, index)}: AWSManagedMachinePool spec.taints.{index}: "
                "expected a key and an effect no-schedule, prefer-no-schedule or no-execute"
            )
        taints.append(Taint(item["key"], text(item.get("value")), effect))
    return labels, tuple(taints)


def _template_capacity(
    display: str, annotations: Mapping[str, Any], infrastructure: Mapping[str, Any]
) -> dict[str, Decimal]:
    """What the autoscaler's zero-node template offers: infrastructure status, then annotations."""
    status = mapping(mapping(infrastructure.get("status")).get("capacity"))
    found = {str(k): q for k, v in status.items() if (q := parse_quantity(v)) is not None}
    for suffix, resource in _CAPACITY_RESOURCES.items():
        key = f"{CAPACITY}{suffix}"
        if key in annotations:
            found[resource] = _quantity(display, annotations, key)
    if f"{CAPACITY}maxPods" in annotations:
        found["pods"] = _quantity(display, annotations, f"{CAPACITY}maxPods")
    gpu_type = text(annotations.get(f"{CAPACITY}gpu-type"))
    if gpu_type and f"{CAPACITY}gpu-count" in annotations:
        found[gpu_type] = _quantity(display, annotations, f"{CAPACITY}gpu-count")
    return found


def _quantity(display: str, annotations: Mapping[str, Any], key: str) -> Decimal:
    amount = parse_quantity(annotations[key])
    if amount is None:
        raise GpulintError(
            f"{location(display, annotations, key)}: {key}: {annotations[key]!r} is not a "
            "Kubernetes quantity (write it like 8, 500m or 16Gi)"
        )
    return amount


def _pairs(written: str) -> dict[str, str]:
    """`k=v,k2=v2` -> labels."""
    pairs = (item.partition("=") for item in written.split(",") if item.strip())
    return {key.strip(): value.strip() for key, _, value in pairs if key.strip()}


def _annotation_taints(display: str, annotations: Mapping[str, Any], key: str) -> tuple[Taint, ...]:
    """`k=v:NoSchedule,k2:NoExecute` -> taints; an unknown effect is an error at the value."""
    found = []
    for item in text(annotations.get(key)).split(","):
        if not item.strip():
            continue
        head, _, effect = item.strip().rpartition(":")
        taint_key, _, value = head.partition("=")
        if not taint_key or effect not in EFFECTS:
            raise GpulintError(
                f"{location(display, annotations, key)}: {key}: {item.strip()!r} is not "
                "`key=value:Effect` with an effect NoSchedule, PreferNoSchedule or NoExecute"
            )
        found.append(Taint(taint_key, value, EFFECTS[effect]))
    return tuple(found)


def _registration(bootstrap: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = mapping(mapping(mapping(bootstrap.get("spec")).get("template")).get("spec"))
    return mapping(mapping(spec.get("joinConfiguration")).get("nodeRegistration"))


def _node_labels(bootstrap: Mapping[str, Any]) -> dict[str, str]:
    """kubelet's `--node-labels` from kubeletExtraArgs (a map, or v1beta2's name/value list)."""
    extra = _registration(bootstrap).get("kubeletExtraArgs")
    if isinstance(extra, Mapping):
        return _pairs(text(extra.get("node-labels")))
    for item in sequence(extra):
        if mapping(item).get("name") == "node-labels":
            return _pairs(text(mapping(item).get("value")))
    return {}


def _kubeadm_taints(display: str, bootstrap: Mapping[str, Any]) -> tuple[Taint, ...]:
    return taint_list(
        display,
        _registration(bootstrap).get("taints"),
        "joinConfiguration.nodeRegistration.taints",
    )
