"""Karpenter `NodePool`s (karpenter.sh/v1) -> pool facts, joined by name with the nodes.

A NodePool states the labels and taints every node it launches gets, that it can launch from
zero, and its `limits`. What one node offers is only estimated, from the instance types its
requirements allow (the built-in catalogue), dropping the types bigger than the limits the way
Karpenter does (reference section 9.2). Its nodes carry `karpenter.sh/nodepool: <name>`, so
the pool the nodes form and the NodePool merge into one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from gpulint.profile.instances import INSTANCE_TYPES, catalogue_allocatable
from gpulint.profile.karpenter import max_nodes
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import ClusterProfile, Pool, Taint
from gpulint.profile.values import mapping, sequence
from gpulint.quantity import parse_quantity

NODEPOOL_LABEL = "karpenter.sh/nodepool"
INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
#: Karpenter's AWS well-known label for a family (`p4d`), standing for all its sizes.
INSTANCE_FAMILY_KEY = "karpenter.k8s.aws/instance-family"


def facts_from_nodepools(nodepools: Iterable[Mapping[str, Any]], source: str) -> ProfileFacts:
    """What the NodePools say about the pools they launch."""
    return ProfileFacts(ClusterProfile(sources=(source,)), tuple(_pool(np) for np in nodepools))


def _pool(nodepool: Mapping[str, Any]) -> PoolFacts:
    name = str(mapping(nodepool.get("metadata")).get("name") or "")
    spec = mapping(nodepool.get("spec"))
    template = mapping(mapping(spec.get("template")).get("spec"))
    template_labels = mapping(mapping(mapping(spec.get("template")).get("metadata")).get("labels"))
    labels = {str(k): str(v) for k, v in template_labels.items()}
    labels[NODEPOOL_LABEL] = name
    requirements = [mapping(r) for r in sequence(template.get("requirements"))]
    for requirement in requirements:
        values = [str(v) for v in sequence(requirement.get("values"))]
        # A single allowed value is a label every launched node carries.
        if requirement.get("operator") == "In" and len(values) == 1:
            labels[str(requirement.get("key"))] = values[0]
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", "")))
        for t in map(mapping, sequence(template.get("taints")))
    )
    limits = {
        str(k): amount
        for k, v in mapping(spec.get("limits")).items()
        if (amount := parse_quantity(v)) is not None
    }
    instance, allocatable = _largest_instance(_instance_types(requirements), limits)
    pool = Pool(
        name=name,
        labels=labels,
        taints=taints,
        allocatable=allocatable,
        max_nodes=max_nodes(limits, allocatable),
        scale_from_zero=True,
        instance_type=instance,
    )
    # Karpenter keeps no minimum: a NodePool with no pods pending shrinks to zero nodes.
    stated = {"labels", "taints", "min_nodes", "max_nodes", "scale_from_zero"}
    estimated = {"allocatable", "instance_type"} if instance is not None else set()
    return PoolFacts(pool, frozenset(stated), frozenset(estimated))


def _instance_types(requirements: Iterable[Mapping[str, Any]]) -> list[str]:
    """Instance types an `In` requirement allows, by name or by family."""
    names: list[str] = []
    for requirement in requirements:
        if requirement.get("operator") != "In":
            continue
        values = [str(v) for v in sequence(requirement.get("values"))]
        if requirement.get("key") in INSTANCE_TYPE_KEYS:
            names.extend(values)
        elif requirement.get("key") == INSTANCE_FAMILY_KEY:
            names.extend(n for n in INSTANCE_TYPES for f in values if n.startswith(f"{f}."))
    return names


def _largest_instance(
    names: Iterable[str], limits: Mapping[str, Decimal]
) -> tuple[str | None, dict[str, Decimal]]:
    """The allowed catalogue type offering the most accelerators within the limits."""
    best: tuple[str | None, dict[str, Decimal]] = (None, {})
    best_key: tuple[Decimal, Decimal] = (Decimal(-1), Decimal(-1))
    for name in names:
        allocatable = catalogue_allocatable(name)
        if allocatable is None:
            continue
        if any(allocatable.get(k, Decimal(0)) > limit for k, limit in limits.items()):
            continue
        accelerators = sum(v for k, v in allocatable.items() if "/" in k)
        key = (accelerators, allocatable.get("cpu", Decimal(0)))
        if key > best_key:
            best, best_key = (name, allocatable), key
    return best
