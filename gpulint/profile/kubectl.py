"""Kubernetes objects (a `kubectl get nodes,resourcequotas,limitranges,priorityclasses -A -o
yaml` dump, with `clusterqueues,localqueues` where Kueue runs, or what the API returns) -> a
ClusterProfile.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.dra import DRA_KINDS, claim, device_class, dra_nodes, resource_slice
from gpulint.profile.admission_policies import POLICY_KINDS, required_resources
from gpulint.profile.kueue import (
    cluster_queue_from_object,
    local_queue_from_object,
    resource_flavor_from_object,
)
from gpulint.profile.merge import ProfileFacts, merge
from gpulint.profile.model import ClusterProfile, CustomResourceDefinition
from gpulint.profile.nodes import NodeView, node_view, pool_facts_from_nodes, provider_from_nodes
from gpulint.profile.policy import (
    limit_range_from_object,
    priority_class_from_object,
    quota_from_object,
    runtime_class_from_object,
)
from gpulint.profile.values import check_quantities, mapping, sequence

#: Kinds read from a dump; anything else in it is ignored.
KINDS = frozenset(
    {
        "Node",
        "ResourceQuota",
        "LimitRange",
        "PriorityClass",
        # What the RuntimeClass admission plugin writes into the pods that name one.
        "RuntimeClass",
        "ClusterQueue",
        "LocalQueue",
        # The node labels and tolerations Kueue writes into the pods it admits to a flavor.
        "ResourceFlavor",
        # The GPU Operator's: which driver it installs (gpulint.profile.gpu_operator).
        "ClusterPolicy",
        "NVIDIADriver",
        # The schemas of the custom resources of the inputs (gpulint.validation.crds).
        "CustomResourceDefinition",
    }
    | DRA_KINDS
    | POLICY_KINDS
)
_LIST_KINDS = frozenset({"List", *(f"{kind}List" for kind in KINDS)})
_LIMIT_KEYS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def is_kubernetes_objects(data: Any) -> bool:
    """True for a `kind: List` dump or one of the objects a dump holds."""
    return isinstance(data, Mapping) and _kind(data) in _LIST_KINDS | KINDS


def _kind(obj: Mapping[str, Any]) -> str | None:
    kind = obj.get("kind")
    return kind if isinstance(kind, str) else None


def profile_from_objects(
    objects: Iterable[Mapping[str, Any]],
    pool_label: str | None = None,
    source: str = "kubectl dump",
) -> ClusterProfile:
    """A profile from Node, ResourceQuota, LimitRange and PriorityClass objects (or Lists).

    Accepts plain dicts (from the API) as well as parsed files; `source` names where the
    objects came from in messages and in `ClusterProfile.sources`.
    """
    return merge([facts_from_objects(objects, pool_label, source)])


def facts_from_objects(
    objects: Iterable[Mapping[str, Any]],
    pool_label: str | None = None,
    source: str = "kubectl dump",
    nodes: list[NodeView] | None = None,
) -> ProfileFacts:
    """What the objects say, for merging with other inputs (see gpulint.profile.merge).

    The view of each Node is appended to `nodes` when given (live mode reads them again)."""
    nodes = [] if nodes is None else nodes
    quotas, limit_ranges, priority_classes, runtime_classes = [], [], [], []
    # A `kubectl get runtimeclasses` lists every class: even an empty RuntimeClassList says so.
    runtime_classes_known = False
    cluster_queues, local_queues, flavors, policies = [], [], [], []
    classes, slices, claims = [], [], []
    operator_drivers = []
    kubelets: list[str] = []
    crds: list[CustomResourceDefinition] = []
    amounts: dict[tuple[Any, ...], dict[str, Decimal]] = {}  # the nodes' amounts, parsed once
    for obj, path, listed in _flatten(objects):
        kind = _kind(obj)
        runtime_classes_known = runtime_classes_known or listed == "RuntimeClassList"
        if kind == "Node":
            nodes.append(node_view(obj, source, path, amounts))
            info = mapping(mapping(obj.get("status")).get("nodeInfo"))
            # A virtual kubelet reports its own version, not one the skew policy bounds.
            virtual = mapping(mapping(obj.get("metadata")).get("labels")).get("type")
            if isinstance(info.get("kubeletVersion"), str) and virtual != "virtual-kubelet":
                kubelets.append(info["kubeletVersion"])
        elif kind == "CustomResourceDefinition":
            crd = _crd(obj)
            if crd is not None:
                crds.append(crd)
        elif kind == "ResourceQuota":
            check_quantities(source, mapping(obj.get("spec")).get("hard"), [*path, "spec", "hard"])
            check_quantities(
                source, mapping(obj.get("status")).get("used"), [*path, "status", "used"]
            )
            quotas.append(quota_from_object(obj))
        elif kind == "LimitRange":
            for i, item in enumerate(sequence(mapping(obj.get("spec")).get("limits"))):
                for key in _LIMIT_KEYS:
                    item_path = [*path, "spec", "limits", i, key]
                    check_quantities(source, mapping(item).get(key), item_path)
            limit_ranges.append(limit_range_from_object(obj))
        elif kind == "PriorityClass":
            priority_classes.append(priority_class_from_object(obj))
        elif kind == "RuntimeClass":
            overhead = mapping(obj.get("overhead")).get("podFixed")
            check_quantities(source, overhead, [*path, "overhead", "podFixed"])
            runtime_classes.append(runtime_class_from_object(obj))
            runtime_classes_known = True
        elif kind == "ClusterQueue":
            cluster_queues.append(cluster_queue_from_object(obj, source, path))
        elif kind == "LocalQueue":
            local_queues.append(local_queue_from_object(obj))
        elif kind == "ResourceFlavor":
            flavors.append(resource_flavor_from_object(obj))
        elif kind in POLICY_KINDS and (policy := required_resources(obj)) is not None:
            # Kyverno's ClusterPolicy; the GPU Operator's (nvidia.com) is read below.
            policies.append(policy)
        elif kind == "DeviceClass":
            classes.append(device_class(obj))
        elif kind == "ResourceSlice":
            slices.append(resource_slice(obj))
        elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
            claims.append(claim(obj))
        elif kind in ("ClusterPolicy", "NVIDIADriver"):
            from gpulint.profile.gpu_operator import operator_driver

            driver = operator_driver(obj, source)
            operator_drivers += [driver] if driver else []
    inferred = provider_from_nodes(nodes)
    profile = ClusterProfile(
        provider=inferred[0] if inferred else None,
        provider_source=f"inferred from {inferred[1]} in {source}" if inferred else None,
        quotas=tuple(quotas),
        limit_ranges=tuple(limit_ranges),
        priority_classes=tuple(priority_classes),
        runtime_classes=tuple(runtime_classes),
        runtime_classes_known=runtime_classes_known,
        cluster_queues=tuple(cluster_queues),
        local_queues=tuple(local_queues),
        resource_flavors=tuple(flavors),
        resource_policies=tuple(policies),
        device_classes=tuple(classes),
        resource_slices=tuple(slices),
        resource_claims=tuple(claims),
        gpu_operator_drivers=tuple(operator_drivers),
        minimum_kubernetes_version=newest_release(kubelets),
        custom_resource_definitions=tuple(crds),
        sources=(source,),
    )
    # A dump of nodes lists all of them: a node group it lacks has no node now.
    served = dra_nodes(slices, classes)
    return ProfileFacts(
        profile, pool_facts_from_nodes(nodes, pool_label, served), nodes_complete=bool(nodes)
    )


def newest_release(versions: Iterable[str]) -> str | None:
    """The newest of kubelet versions (`v1.31.4-eks-0a21954`) by minor release; None when none
    reads as one."""
    from gpulint.validation.apiversions import release

    # Each distinct version once: a cluster's thousands of nodes run a few.
    read = [(found, text) for text in set(versions) if (found := release(text)) is not None]
    return max(read)[1] if read else None


def _crd(obj: Mapping[str, Any]) -> CustomResourceDefinition | None:
    """A CRD's name and spec; None for one without them (the dump is not refused for it)."""
    import json

    name, spec = mapping(obj.get("metadata")).get("name"), obj.get("spec")
    if not isinstance(name, str) or not isinstance(spec, Mapping):
        return None
    return CustomResourceDefinition(name, json.dumps(spec, sort_keys=True, default=str))


def _flatten(
    objects: Iterable[Mapping[str, Any]], path: Sequence[Any] = (), listed: str | None = None
) -> Iterator[tuple[Mapping[str, Any], list[Any], str | None]]:
    """Every object with its path, and the kind of List it came in (None: none); an empty
    List is given as itself, so that a reader learns that it listed nothing."""
    for index, obj in enumerate(objects):
        if not isinstance(obj, Mapping):
            continue
        # A top-level object keeps the path of its own document; items of a List get theirs.
        here = [*path, index] if path else []
        kind = _kind(obj)
        if kind in _LIST_KINDS:
            items = sequence(obj.get("items"))
            if not items:
                yield obj, here, kind
            yield from _flatten(items, [*here, "items"], kind)
        else:
            yield obj, here, listed
