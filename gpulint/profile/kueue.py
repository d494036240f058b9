"""Kueue ClusterQueue and LocalQueue objects (from a dump, or a ClusterProfile) -> profile facts.

A workload labelled `kueue.x-k8s.io/queue-name: <LocalQueue>` is admitted by Kueue only when
its LocalQueue's ClusterQueue covers every resource it requests and has the quota for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.profile.model import (
    ClusterQueue,
    FlavorQuota,
    FlavorToleration,
    LocalQueue,
    ResourceFlavor,
)
from gpulint.profile.values import mapping, quantities, sequence, text

#: The label that puts a workload in a Kueue LocalQueue.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def cluster_queue_from_object(
    obj: Mapping[str, Any], display: str, path: Sequence[Any]
) -> ClusterQueue:
    """A ClusterQueue object; raises GpulintError at a quota that is not a quantity."""
    spec = mapping(obj.get("spec"))
    covered: set[str] = set()
    flavors: list[FlavorQuota] = []
    for g, group in enumerate(sequence(spec.get("resourceGroups"))):
        group = mapping(group)
        group_covers = frozenset(text(r) for r in sequence(group.get("coveredResources")))
        covered |= group_covers
        for f, flavor in enumerate(sequence(group.get("flavors"))):
            flavor = mapping(flavor)
            nominal: dict[str, Decimal] = {}
            borrowing: dict[str, Decimal] = {}
            for r, resource in enumerate(sequence(flavor.get("resources"))):
                resource = mapping(resource)
                name = text(resource.get("name"))
                where = [*path, "spec", "resourceGroups", g, "flavors", f, "resources", r]
                for key, target in (("nominalQuota", nominal), ("borrowingLimit", borrowing)):
                    if key in resource:
                        target.update(quantities(display, {name: resource[key]}, [*where, key]))
            flavors.append(FlavorQuota(text(flavor.get("name")), nominal, borrowing, group_covers))
    cohort = spec.get("cohort") or spec.get("cohortName")
    return ClusterQueue(
        text(mapping(obj.get("metadata")).get("name")),
        frozenset(covered),
        tuple(flavors),
        text(cohort) or None,
    )


def local_queue_from_object(obj: Mapping[str, Any]) -> LocalQueue:
    """A LocalQueue object: namespace, name and the ClusterQueue it feeds."""
    metadata = mapping(obj.get("metadata"))
    return LocalQueue(
        text(metadata.get("namespace")) or "default",
        text(metadata.get("name")),
        text(mapping(obj.get("spec")).get("clusterQueue")),
    )


def resource_flavor_from_object(obj: Mapping[str, Any]) -> ResourceFlavor:
    """A ResourceFlavor object: the node labels and tolerations Kueue gives admitted pods."""
    spec = mapping(obj.get("spec"))
    return ResourceFlavor(
        text(mapping(obj.get("metadata")).get("name")),
        {str(k): text(v) for k, v in mapping(spec.get("nodeLabels")).items()},
        tuple(
            FlavorToleration(
                text(t.get("key")),
                text(t.get("operator")) or "Equal",
                text(t.get("value")),
                text(t.get("effect")),
            )
            for t in map(mapping, sequence(spec.get("tolerations")))
        ),
    )
