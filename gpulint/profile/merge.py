"""Combining what several inputs say about one cluster into one ClusterProfile.

Each importer returns ProfileFacts: the cluster-level facts plus, for every pool, which pool
fields the input states and which it only estimates. Pools are joined by name; per field the
latest input that states it wins, and an estimate is used only when no input states the field.
That is how a kubectl dump (current nodes, labels, allocatable) and an eksctl config (min/max
sizes, taints, instance type; node count and allocatable only estimated) of the same cluster
combine whichever order they are given in. An input that lists every node of the cluster (a
kubectl dump with nodes, a live cluster) also says that a pool it lacks has no node now.

Merging is linear in the number of pool views: pools are grouped by name in one pass.
"""

from collections.abc import Iterable, Sequence
from dataclasses import fields, replace
from typing import Any

from gpulint.profile.model import ClusterProfile, Pool
from gpulint.views import NamedTuple

#: Pool fields an input can state (everything but the name it is joined by).
POOL_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Pool) if f.name != "name")
_STATED, _ESTIMATED = 2, 1


class PoolFacts(NamedTuple):
    """One input's view of a pool: the values, and which of them it states or estimates."""

    pool: Pool
    stated: frozenset[str] = frozenset()
    estimated: frozenset[str] = frozenset()


class ProfileFacts(NamedTuple):
    """One input's view of a cluster; `profile.pools` is ignored in favour of `pools`.

    `nodes_complete`: the input lists every node of the cluster, so a pool it does not have
    has 0 nodes now (an eksctl config's `desiredCapacity` is then only what was asked for).
    """

    profile: ClusterProfile
    pools: tuple[PoolFacts, ...] = ()
    nodes_complete: bool = False


def merge(inputs: Sequence[ProfileFacts]) -> ClusterProfile:
    """One ClusterProfile from every input, later inputs winning (see the module docstring)."""
    cluster = ClusterProfile()
    for facts in inputs:
        cluster = _merge_cluster(cluster, facts.profile)
    views: dict[str, list[tuple[int, PoolFacts]]] = {}
    for order, facts in enumerate(inputs):
        for view in facts.pools:
            views.setdefault(view.pool.name, []).append((order, view))
    for order, facts in enumerate(inputs):
        if facts.nodes_complete:
            present = {view.pool.name for view in facts.pools}
            for name, found in views.items():
                if name not in present:
                    found.append((order, _no_node(name)))
    pools = tuple(
        _merge_pool(name, [view for _, view in sorted(found, key=lambda entry: entry[0])])
        for name, found in views.items()
    )
    defined = set(cluster.defined)
    decided = [c.text for c in cluster.conditions if (c.key in defined) == c.if_defined]
    assumptions = tuple(dict.fromkeys((*cluster.assumptions, *decided)))
    return replace(cluster, pools=pools, assumptions=assumptions)


def _no_node(name: str) -> PoolFacts:
    """What a complete list of nodes says about a pool it does not have: no node now."""
    return PoolFacts(Pool(name=name), frozenset({"nodes", "device_plugin_not_ready"}))


def _merge_cluster(base: ClusterProfile, later: ClusterProfile) -> ClusterProfile:
    provider, provider_source = base.provider, base.provider_source
    if later.provider is not None:
        provider, provider_source = later.provider, later.provider_source
    return ClusterProfile(
        name=_later(base.name, later.name),
        kubernetes_version=_later(base.kubernetes_version, later.kubernetes_version),
        minimum_kubernetes_version=_later(
            base.minimum_kubernetes_version, later.minimum_kubernetes_version
        ),
        provider=provider,
        provider_source=provider_source,
        extended_resource_toleration=_later(
            base.extended_resource_toleration, later.extended_resource_toleration
        ),
        pod_toleration_restriction=_later(
            base.pod_toleration_restriction, later.pod_toleration_restriction
        ),
        default_namespace=_later(base.default_namespace, later.default_namespace),
        scheduler_extenders=_later(base.scheduler_extenders, later.scheduler_extenders),
        quotas=_by_key(base.quotas, later.quotas, lambda q: (q.namespace, q.name)),
        limit_ranges=_by_key(
            base.limit_ranges, later.limit_ranges, lambda r: (r.namespace, r.name)
        ),
        priority_classes=_by_key(base.priority_classes, later.priority_classes, lambda c: c.name),
        runtime_classes=_by_key(base.runtime_classes, later.runtime_classes, lambda c: c.name),
        # One input that lists every class makes the set known; the others add to it.
        runtime_classes_known=base.runtime_classes_known or later.runtime_classes_known,
        cluster_queues=_by_key(base.cluster_queues, later.cluster_queues, lambda q: q.name),
        local_queues=_by_key(
            base.local_queues, later.local_queues, lambda q: (q.namespace, q.name)
        ),
        resource_flavors=_by_key(base.resource_flavors, later.resource_flavors, lambda f: f.name),
        resource_policies=_by_key(
            base.resource_policies, later.resource_policies, lambda p: (p.kind, p.name)
        ),
        device_classes=_by_key(base.device_classes, later.device_classes, lambda c: c.name),
        # Slices describe the nodes as one input saw them: the latest input that has any wins.
        resource_slices=later.resource_slices or base.resource_slices,
        resource_claims=_by_key(
            base.resource_claims, later.resource_claims, lambda c: (c.kind, c.namespace, c.name)
        ),
        gpu_operator_drivers=_by_key(
            base.gpu_operator_drivers,
            later.gpu_operator_drivers,
            lambda d: frozenset(d.node_selector.items()),
        ),
        custom_resource_definitions=_by_key(
            base.custom_resource_definitions, later.custom_resource_definitions, lambda c: c.name
        ),
        sources=tuple(dict.fromkeys((*base.sources, *later.sources))),
        assumptions=(*base.assumptions, *later.assumptions),
        defined=(*base.defined, *later.defined),
        conditions=(*base.conditions, *later.conditions),
    )


def _later(base: Any, later: Any) -> Any:
    return base if later is None else later


def _by_key(base: Iterable[Any], later: Iterable[Any], key: Any) -> tuple[Any, ...]:
    merged = {key(item): item for item in base}
    merged.update({key(item): item for item in later})
    return tuple(merged.values())


def _merge_pool(name: str, views: Sequence[PoolFacts]) -> Pool:
    values: dict[str, Any] = {}
    # Only the fields some view gives are ranked; a pool that one input alone describes (the
    # usual pre-commit run's profile) takes each from it without ranking.
    given = frozenset().union(*(view.stated | view.estimated for view in views))
    for field_name in POOL_FIELDS:
        if field_name not in given:
            continue
        if len(views) == 1:
            ranked = [(_STATED, 0, views[0].pool)]
        else:
            ranked = sorted(
                (
                    (_STATED if field_name in view.stated else _ESTIMATED, order, view.pool)
                    for order, view in enumerate(views)
                    if field_name in view.stated or field_name in view.estimated
                ),
                key=lambda entry: entry[:2],
            )
        if field_name == "labels":
            # Every input's labels are on the nodes; a stated value wins a conflict.
            labels: dict[str, str] = {}
            for _, _, pool in ranked:
                labels.update(pool.labels)
            values[field_name] = labels
        elif field_name in ("gpus_in_use_by", "ceiling_assumed"):
            # Who holds the GPUs comes from the input whose total wins, and what a maximum
            # was assumed from from the input whose maximum wins, so the two agree.
            continue
        else:
            values[field_name] = getattr(ranked[-1][2], field_name)
            if field_name == "gpus_in_use":
                values["gpus_in_use_by"] = ranked[-1][2].gpus_in_use_by
            elif field_name == "max_nodes":
                values["ceiling_assumed"] = ranked[-1][2].ceiling_assumed
    return Pool(name=name, **values)
