"""GKE `ComputeClass`es (cloud.google.com/v1) -> the node pools GKE creates for them.

A custom compute class lists `priorities`, the machines GKE tries in order; with
`nodePoolAutoCreation.enabled` GKE creates node pools of them for the pending pods that select
the class (`nodeSelector: cloud.google.com/compute-class: <name>`). Each priority rule that
names a machine (`machineType`, or a `gpu` of a type and count the catalogue knows) becomes a
pool `<class>/<machine type>` (`/spot` for a Spot rule) of zero nodes that scales from zero,
whose nodes carry the class's label and taint and, for a GPU rule, GKE's accelerator label and
GPU taint. Rules that name existing node pools (`nodepools:`) add no pool: those come from the
inputs that describe the cluster's pools.

Sources: GKE "About custom compute classes" and "Configure node auto-creation" (the
`cloud.google.com/compute-class=<name>:NoSchedule` taint and label on the nodes of a class);
GoogleCloudPlatform/accelerated-platforms custom_compute_class manifests (GPU rules of
`machineType`, `gpu.type`, `gpu.count`, `spot`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpulint.errors import GpulintError
from gpulint.profile.instances import INSTANCE_TYPES, NVIDIA, catalogue_allocatable
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import (
    COMPUTE_CLASS_GROUP,
    ClusterProfile,
    LabelRequirement,
    Pool,
    Taint,
    unstated_node_labels,
)
from gpulint.profile.platforms import COMPUTE_CLASS_LABEL
from gpulint.profile.values import location, mapping, sequence

_ACCELERATOR = "cloud.google.com/gke-accelerator"
_NODEPOOL = "cloud.google.com/gke-nodepool"
_SPOT = "cloud.google.com/gke-spot"
_DRIVER = "cloud.google.com/gke-gpu-driver-version"
_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
#: max_nodes of a pool GKE creates on demand (no limit a class states).
UNLIMITED_NODES = 1000
_STATED = frozenset(
    {"labels", "label_requirements", "taints", "nodes", "min_nodes", "max_nodes",
     "scale_from_zero", "instance_type", "limit_group"}
)  # fmt: skip


def is_compute_class(data: Any) -> bool:
    """True for a GKE ComputeClass document."""
    return (
        isinstance(data, Mapping)
        and data.get("kind") == "ComputeClass"
        and str(data.get("apiVersion", "")).startswith("cloud.google.com/")
    )


def facts_from_compute_classes(objects: Sequence[Mapping[str, Any]], display: str) -> ProfileFacts:
    """The pools GKE can create for the compute classes among `objects`."""
    pools = [facts for obj in objects for facts in class_pools(obj, display)]
    profile = ClusterProfile(
        provider="gke",
        provider_source=f"inferred from the GKE ComputeClasses in {display}",
        sources=(display,),
    )
    return ProfileFacts(profile, tuple(pools))


def class_pools(compute_class: Mapping[str, Any], display: str) -> list[PoolFacts]:
    """One pool per machine of each priority rule GKE may create nodes of for the class."""
    name = mapping(compute_class.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        raise GpulintError(
            f"{location(display, compute_class)}: ComputeClass: metadata.name is missing"
        )
    spec = mapping(compute_class.get("spec"))
    if mapping(spec.get("nodePoolAutoCreation")).get("enabled") is not True:
        return []  # only the node pools its rules name, which other inputs describe
    found: dict[str, PoolFacts] = {}
    for rule in sequence(spec.get("priorities")):
        rule = mapping(rule)
        if rule.get("nodepools"):
            continue
        spot = rule.get("spot") is True
        for machine in _machines(rule):
            pool = _pool(name, rule, machine, spot)
            found.setdefault(pool.name, PoolFacts(pool, _STATED, frozenset({"allocatable"})))
    return list(found.values())


def _machines(rule: Mapping[str, Any]) -> Iterator[str]:
    """The machine types a rule allows: its `machineType`, else every GKE type of the
    catalogue with its `gpu` type (and count, when given)."""
    machine = rule.get("machineType")
    if isinstance(machine, str) and machine:
        yield machine
        return
    gpu = mapping(rule.get("gpu"))
    kind, count = gpu.get("type"), gpu.get("count")
    if not isinstance(kind, str):
        return
    for entry in INSTANCE_TYPES.values():
        gpus = entry.accelerators.get(NVIDIA) if entry.provider == "gke" else None
        if gpus and entry.model == kind and count in (None, gpus):
            yield entry.name


def _pool(name: str, rule: Mapping[str, Any], machine: str, spot: bool) -> Pool:
    gpu = mapping(rule.get("gpu"))
    labels = {COMPUTE_CLASS_LABEL: name, _INSTANCE_TYPE: machine}
    taints = [Taint(COMPUTE_CLASS_LABEL, name, "NoSchedule")]
    allocatable = catalogue_allocatable(machine) or {}
    accelerator = gpu.get("type") or (
        INSTANCE_TYPES[machine].model if allocatable.get(NVIDIA) else None
    )
    if isinstance(accelerator, str):
        labels[_ACCELERATOR] = accelerator
        # GKE taints its GPU nodes, and runs ExtendedResourceToleration for that taint.
        taints.append(Taint(NVIDIA, "present", "NoSchedule"))
        driver = gpu.get("driverVersion")
        if isinstance(driver, str) and driver:
            labels[_DRIVER] = driver
    if spot:
        labels[_SPOT] = "true"
    requirements = (
        # GKE names the node pools it creates: a node has one, which no input states.
        LabelRequirement(_NODEPOOL, "Exists"),
        *unstated_node_labels(labels),
    )
    return Pool(
        name=f"{name}/{machine}{'/spot' if spot else ''}",
        labels=labels,
        label_requirements=requirements,
        taints=tuple(taints),
        allocatable=allocatable,
        nodes=0,
        min_nodes=0,
        max_nodes=UNLIMITED_NODES,
        scale_from_zero=True,
        instance_type=machine,
        # Created for pending pods, never kept warm; the class states no limit of its own.
        limit_group=f"{COMPUTE_CLASS_GROUP}{name}",
    )
