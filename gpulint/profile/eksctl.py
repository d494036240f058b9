"""An eksctl `ClusterConfig` (apiVersion eksctl.io/v1alpha5) -> facts about its node groups.

It states sizes, taints and instance types; it can only estimate the current node count
(`desiredCapacity`), the labels kubelet ends up with and the allocatable (from the built-in
instance catalogue), so a kubectl dump of the same cluster wins those when both are given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpulint.errors import GpulintError
from gpulint.profile.autoscaler import (
    EFFECTS,
    aws_template_missing,
    node_template_from_tags,
    template_lacks,
)
from gpulint.profile.instances import EFA, catalogue_allocatable
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import (
    ClusterProfile,
    LabelRequirement,
    Pool,
    Taint,
    unstated_node_labels,
)
from gpulint.profile.values import location, mapping, sequence, text

DEFAULT_NODE_COUNT = 2  # eksctl's DefaultNodeCount, used only when no size is written
DEFAULT_MANAGED_MAX_SIZE = 1  # eksctl's DefaultMaxSize: a managed group's maxSize is at least 1
DEFAULT_INSTANCE_TYPE = "m5.large"  # eksctl's default
_GROUP_KEYS = (("nodeGroups", False), ("managedNodeGroups", True))


def is_eksctl_config(data: Any) -> bool:
    """True for an eksctl ClusterConfig document."""
    return (
        isinstance(data, Mapping)
        and data.get("kind") == "ClusterConfig"
        and str(data.get("apiVersion", "")).startswith("eksctl.io/")
    )


def facts_from_eksctl(data: Mapping[str, Any], display: str) -> ProfileFacts:
    """The node groups and managed node groups of an eksctl ClusterConfig."""
    metadata = mapping(data.get("metadata"))
    version = metadata.get("version")
    if version is not None and not isinstance(version, str):
        # Unquoted 1.30 is the number 1.3: the version cannot be recovered from it.
        raise GpulintError(
            f"{location(display, metadata, 'version')}: metadata.version: write the version "
            f'quoted, like "1.31"'
        )
    pools = []
    for key, managed in _GROUP_KEYS:
        groups = data.get(key)
        if groups is not None and not isinstance(groups, list):
            raise GpulintError(f"{location(display, data, key)}: {key}: expected a list")
        for index, group in enumerate(sequence(groups)):
            pools.append(_node_group(display, group, [key, index], managed, data.get(key)))
    profile = ClusterProfile(
        name=metadata.get("name") if isinstance(metadata.get("name"), str) else None,
        kubernetes_version=version,
        provider="eks",
        provider_source=f"inferred from the eksctl ClusterConfig {display}",
        sources=(display,),
    )
    return ProfileFacts(profile, tuple(pools))


ZONE = "topology.kubernetes.io/zone"


def _node_group(display: str, group: Any, path: list[Any], managed: bool, parent: Any) -> PoolFacts:
    where = ".".join(str(p) for p in path)
    if not isinstance(group, Mapping):
        raise GpulintError(f"{location(display, parent, path[-1])}: {where}: expected a mapping")
    name = group.get("name")
    if not isinstance(name, str) or not name:
        raise GpulintError(
            f"{location(display, group)}: {where}.name: every node group needs a name"
        )
    desired, min_size, max_size = _sizes(display, group, where, managed)
    instance = _instance_type(display, group, where)
    user_labels = {str(k): text(v) for k, v in mapping(group.get("labels")).items()}
    taints = _taints(display, group, where)
    labels = {**_implied_labels(name, instance, managed), **user_labels}
    # cluster-autoscaler builds a zero-node template of every group from its instance type; a
    # managed group's labels come from the EKS API, a self-managed group's only from ASG tags,
    # which eksctl writes with propagateASGTags or the config writes itself under `tags`.
    tagged = node_template_from_tags(mapping(group.get("tags")))
    told = managed or group.get("propagateASGTags") is True
    values: dict[str, Any] = {
        "taints": taints,
        "min_nodes": min_size,
        "max_nodes": max_size,
        "scale_from_zero": max_size > 0,
        "template_missing_labels": () if told else template_lacks(tagged, user_labels),
        "instance_type": instance,
    }
    estimated = {"nodes", "labels"}
    allocatable = catalogue_allocatable(instance)
    if allocatable is not None:
        values["allocatable"] = allocatable
        estimated.add("allocatable")
    if group.get("efaEnabled") is True:
        # eksctl attaches every EFA interface the type has and installs the EFA device plugin.
        values["unknown_amounts"] = frozenset({EFA})
    if not managed:
        # The ASG's template has NVIDIA GPUs from the instance type, other accelerators only
        # from `node-template/resources/*` tags.
        values["template_missing"] = aws_template_missing(allocatable or {}, tagged)
    # A node is in one of the group's availabilityZones; the OS, architecture, zone and region
    # every node has are open where the config does not say.
    zones = tuple(text(z) for z in sequence(group.get("availabilityZones")))
    said = (LabelRequirement(ZONE, "In", zones),) if zones else ()
    unsaid = unstated_node_labels(labels, frozenset(r.key for r in said))
    pool = Pool(name=name, labels=labels, label_requirements=said + unsaid, nodes=desired, **values)
    estimated.add("label_requirements")
    return PoolFacts(pool, frozenset(values) - {"allocatable"}, frozenset(estimated))


def _sizes(
    display: str, group: Mapping[str, Any], where: str, managed: bool
) -> tuple[int, int, int]:
    """(desiredCapacity, minSize, maxSize) with eksctl's defaults for the unwritten ones.

    eksctl fills minSize from desiredCapacity (else 2), maxSize from desiredCapacity (else
    minSize), then desiredCapacity from minSize: so `minSize: 0` alone means no node now.
    """
    desired = _count(display, group, "desiredCapacity", where)
    min_size = _count(display, group, "minSize", where)
    max_size = _count(display, group, "maxSize", where)
    if min_size is None:
        min_size = DEFAULT_NODE_COUNT if desired is None else desired
    if max_size is None:
        max_size = min_size if desired is None else desired
        if managed and max_size == 0:
            max_size = DEFAULT_MANAGED_MAX_SIZE
    return (min_size if desired is None else desired), min_size, max_size


def _implied_labels(name: str, instance: str, managed: bool) -> dict[str, str]:
    labels = {"alpha.eksctl.io/nodegroup-name": name, "node.kubernetes.io/instance-type": instance}
    if managed:
        labels["eks.amazonaws.com/nodegroup"] = name
    return labels


def _count(display: str, group: Mapping[str, Any], key: str, where: str) -> int | None:
    value = group.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GpulintError(
            f"{location(display, group, key)}: {where}.{key}: {value!r} is not a node count "
            "(write a whole number, 0 or more)"
        )
    return value


def _instance_type(display: str, group: Mapping[str, Any], where: str) -> str:
    listed: Sequence[Any] = sequence(group.get("instanceTypes")) or sequence(
        mapping(group.get("instancesDistribution")).get("instanceTypes")
    )
    # With several types, cluster-autoscaler sizes the zero-node template by the first one.
    value = group.get("instanceType") or (listed[0] if listed else DEFAULT_INSTANCE_TYPE)
    if not isinstance(value, str):
        raise GpulintError(
            f"{location(display, group, 'instanceType')}: {where}.instanceType: expected a name "
            "like g5.12xlarge"
        )
    from gpulint.placeholders import placeholder_in

    if placeholder_in(value) is not None:
        # A template's `$INSTANCE_TYPE`: what the group's nodes have is not written, and a
        # pool of no known type would advertise no GPU (a false "no pool advertises" error).
        key = "instanceType" if "instanceType" in group else None
        raise GpulintError(
            f"{location(display, group, key)}: {where}.instanceType: {value!r} is a "
            "placeholder, not an instance type: write the type the cluster is created with "
            "(substitute the template's variables first)"
        )
    return value


def _taints(display: str, group: Mapping[str, Any], where: str) -> tuple[Taint, ...]:
    raw = group.get("taints")
    if raw is None:
        return ()
    if isinstance(raw, Mapping):
        return tuple(_taint_from_map_entry(display, raw, key, where) for key in raw)
    if isinstance(raw, list):
        return tuple(_taint_from_item(display, raw, i, where) for i in range(len(raw)))
    raise GpulintError(
        f"{location(display, group, 'taints')}: {where}.taints: expected a list of "
        '{key, value, effect} or a map of key: "value:effect"'
    )


def _taint_from_map_entry(display: str, raw: Mapping[str, Any], key: str, where: str) -> Taint:
    written = text(raw[key])
    value, sep, effect = written.rpartition(":")
    if not sep or effect not in EFFECTS:
        raise GpulintError(
            f"{location(display, raw, key)}: {where}.taints.{key}: {written!r} is not "
            '"value:effect" (e.g. "present:NoSchedule")'
        )
    return Taint(str(key), value, EFFECTS[effect])


def _taint_from_item(display: str, raw: list[Any], index: int, where: str) -> Taint:
    item = raw[index]
    field = f"{where}.taints.{index}"
    if not isinstance(item, Mapping) or not item.get("key"):
        raise GpulintError(
            f"{location(display, raw, index)}: {field}: expected {{key, value, effect}}"
        )
    effect = item.get("effect")
    if not isinstance(effect, str) or effect not in EFFECTS:
        raise GpulintError(
            f"{location(display, item, 'effect')}: {field}.effect: {effect!r} is not one of "
            "NoSchedule, PreferNoSchedule, NoExecute (or NO_SCHEDULE, PREFER_NO_SCHEDULE, "
            "NO_EXECUTE)"
        )
    return Taint(str(item["key"]), text(item.get("value")), EFFECTS[effect])
