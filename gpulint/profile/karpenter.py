"""Karpenter `NodePool`s (karpenter.sh/v1, v1beta1) -> one pool per instance type they allow.

A NodePool does not name one machine: its `requirements` allow every instance type whose
attributes satisfy them (family, size, category, generation, vCPUs, memory, GPU name,
manufacturer and count, ...). Each allowed type of the built-in catalogue becomes a pool
`<nodepool>/<type>` (`/<capacity type>` too when the NodePool allows several), carrying the
labels Karpenter puts on such a node, the NodePool's taints (startup taints are not required
to be tolerated and are left out), and what one node offers. So a pod fits the NodePool when
it fits one of its types, and a message says which types it does not fit and why.

Karpenter scales from zero by design and keeps no minimum. `limits` bound all nodes of the
NodePool together: a type whose one node would exceed them is never launched; each pool's
`maxNodes` is what the limits allow of that type alone, and the pools share the limits as a
group (`limit_group`), so capacity checks do not count them once per type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.errors import GpulintError
from gpulint.profile.autoscaler import taint_list
from gpulint.profile.instances import (
    INSTANCE_TYPES,
    NEURON,
    NVIDIA,
    InstanceType,
    accelerated_family,
    catalogue_allocatable,
    instance_type,
)
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import (
    LABEL_OPERATORS,
    NODEPOOL_GROUP,
    ClusterProfile,
    Condition,
    LabelRequirement,
    Pool,
    Taint,
    unstated_node_labels,
)
from gpulint.profile.nodes import is_accelerator_resource
from gpulint.profile.values import location, mapping, quantities, sequence, text

NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ZONE = "topology.kubernetes.io/zone"
#: max_nodes of a NodePool type that neither `nodes` nor any resource limit bounds.
UNLIMITED_NODES = 1000
_KINDS = frozenset({"NodePool", "EC2NodeClass", "NodeClass", "AKSNodeClass"})
_GROUPS = ("karpenter.sh/", "karpenter.k8s.aws/", "eks.amazonaws.com/", "karpenter.azure.com/")
# Karpenter's AWS provider and EKS Auto Mode spell the instance attribute labels alike, each
# under its own prefix: a node of Auto Mode carries `eks.amazonaws.com/instance-gpu-name`, one
# of self-managed Karpenter `karpenter.k8s.aws/instance-gpu-name` (AWS's EKS user guide,
# latest/ug/automode/create-node-pool.adoc, "EKS Auto Mode Supported Labels").
KARPENTER_PREFIX = "karpenter.k8s.aws/"
AUTO_MODE_PREFIX = "eks.amazonaws.com/"
_ATTRIBUTE_PREFIXES = (KARPENTER_PREFIX, AUTO_MODE_PREFIX)
#: The label by which a pod asks for an EKS Auto Mode node (`auto` on every one of them).
AUTO_MODE_COMPUTE_TYPE = "eks.amazonaws.com/compute-type"
# Attribute labels every node of the provider carries whose values the catalogue does not
# record (and those of GPU types alone): a pool has the label, with a value not known here.
_UNRECORDED = (
    "instance-hypervisor",
    "instance-encryption-in-transit-supported",
    "instance-cpu-manufacturer",
    "instance-ebs-bandwidth",
    "instance-network-bandwidth",
)
_UNRECORDED_GPU = ("instance-gpu-memory",)
# Karpenter's Azure provider (AKS node auto-provisioning) names its SKU attributes under
# `karpenter.azure.com/sku-*` (pkg/apis/v1beta1/labels.go of Azure/karpenter-provider-azure):
# `Standard_NC24ads_A100_v4` is sku-family `N`, sku-series `NCads_v4`, sku-version `4`,
# sku-gpu-name `A100`, sku-gpu-manufacturer `nvidia`, sku-gpu-count `1`.
AZURE_PREFIX = "karpenter.azure.com/"
#: The AKS label domain, where Karpenter repeats a SKU's vCPUs and memory.
AKS_PREFIX = "kubernetes.azure.com/"
_AZURE_RECORDED = frozenset(
    {"sku-name", "sku-family", "sku-series", "sku-version", "sku-cpu", "sku-memory",
     "sku-gpu-name", "sku-gpu-manufacturer", "sku-gpu-count"}
)  # fmt: skip
# Azure attribute labels every node carries with a value the catalogue does not record.
_AZURE_UNRECORDED = (
    "sku-networking-accelerated",
    "sku-storage-premium-capable",
    "sku-storage-ephemeralos-maxsize",
    "sku-hyperv-generation",
    "placement-scope",
)
# An Azure VM size: `Standard_` family letter, sub-family, vCPUs, additive features, an
# accelerator and a version (`Standard_NC24ads_A100_v4`, `Standard_NC6s_v3`).
_AZURE_SIZE = re.compile(
    r"Standard_(?P<family>[A-Z])(?P<sub>[A-Z]*)\d+(?P<features>[a-z]*)"
    r"(?:_(?P<accelerator>[A-Z][A-Z0-9]*))?(?:_v(?P<version>\d+))?$"
)
_OPERATORS = LABEL_OPERATORS
_CAPACITY_TYPES = ("on-demand", "spot", "reserved")
_ACCELERATOR_NAMES = {"inf": "inferentia", "trn": "trainium"}


#: A NodePool requirement reads like a label requirement of the pools it makes.
Requirement = LabelRequirement


def is_karpenter_object(data: Any) -> bool:
    """True for a Karpenter NodePool, EC2NodeClass, EKS Auto Mode NodeClass or (Azure)
    AKSNodeClass document."""
    return (
        isinstance(data, Mapping)
        and isinstance(data.get("kind"), str)
        and data["kind"] in _KINDS
        and str(data.get("apiVersion", "")).startswith(_GROUPS)
    )


def facts_from_karpenter(objects: Sequence[Mapping[str, Any]], display: str) -> ProfileFacts:
    """The pools the NodePools among `objects` can launch, and what their EC2NodeClasses leave
    to assumption (a class no input defines, custom AMIs under GPU types)."""
    nodepools = [o for o in objects if o.get("kind") == "NodePool"]
    ordered = sorted(nodepools, key=lambda o: -_weight(o))
    made = {id(obj): nodepool_pools(obj, display) for obj in ordered}
    pools = [facts for obj in ordered for facts in made[id(obj)]]
    defined = [
        key
        for obj in objects
        if obj.get("kind") == "EC2NodeClass"
        for key in node_class_keys(obj, display)
    ]
    defined += [
        key
        for obj in objects
        if obj.get("kind") == "AKSNodeClass"
        for key in aks_node_class_keys(obj, display)
    ]
    conditions = [
        condition
        for obj in ordered
        for condition in (
            *node_class_conditions(obj, made[id(obj)]),
            *aks_node_class_conditions(obj, made[id(obj)]),
        )
    ]
    aws = any(
        str(o.get("apiVersion", "")).startswith(("karpenter.k8s.aws/", "eks.amazonaws.com/"))
        for o in objects
    ) or any(
        str(mapping(_template_spec(o).get("nodeClassRef")).get("group", "")).startswith(
            ("karpenter.k8s.aws", "eks.amazonaws.com")
        )
        for o in nodepools
    )
    azure = not aws and (
        any(o.get("kind") == "AKSNodeClass" for o in objects) or any(map(is_azure, nodepools))
    )
    provider = "eks" if aws else "aks" if azure else None
    profile = ClusterProfile(
        provider=provider,
        provider_source=f"inferred from the Karpenter {'AWS' if aws else 'Azure'} node classes "
        f"in {display}"
        if provider
        else None,
        sources=(display,),
        defined=tuple(defined),
        conditions=tuple(conditions),
    )
    return ProfileFacts(profile, tuple(pools))


#: What a NodePool's nodeClassRef names, as ClusterProfile.defined spells it.
_NODE_CLASS = "EC2NodeClass/"
_CUSTOM_AMI = "/custom-ami"


def node_class_keys(node_class: Mapping[str, Any], display: str) -> list[str]:
    """What an EC2NodeClass defines for the NodePools that name it: itself, and whether it
    selects its own AMIs.

    Karpenter picks the accelerated variant of an EKS-optimized AMI family (an `alias` term, or
    `amiFamily` alone) for GPU instance types; AMIs selected by id, name, tags or SSM parameter
    are used as they are, and Karpenter cannot tell whether they carry a GPU driver.
    """
    name = mapping(node_class.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        raise GpulintError(
            f"{location(display, node_class)}: EC2NodeClass: metadata.name is missing"
        )
    spec = mapping(node_class.get("spec"))
    terms = [mapping(term) for term in sequence(spec.get("amiSelectorTerms"))]
    custom = spec.get("amiFamily") == "Custom" or any("alias" not in term for term in terms)
    return [f"{_NODE_CLASS}{name}", *([f"{_NODE_CLASS}{name}{_CUSTOM_AMI}"] if custom else [])]


def node_class_conditions(
    nodepool: Mapping[str, Any], pools: Sequence[PoolFacts]
) -> list[Condition]:
    """The assumptions a NodePool's EC2NodeClass decides: absent from every input, or
    selecting its own AMIs while the NodePool launches accelerator types."""
    ref = mapping(_template_spec(nodepool).get("nodeClassRef"))
    group = str(ref.get("group") or ref.get("apiVersion") or "")
    name = ref.get("name")
    if ref.get("kind") != "EC2NodeClass" and not group.startswith("karpenter.k8s.aws"):
        return []
    if not isinstance(name, str) or not name:
        return []
    nodepool_name = mapping(nodepool.get("metadata")).get("name")
    return _class_conditions(
        pools,
        f"{_NODE_CLASS}{name}",
        f"NodePool {nodepool_name} names EC2NodeClass {name}, which no profile input defines: "
        f"its AMIs are taken to carry the drivers its instance types need",
        _CUSTOM_AMI,
        f"EC2NodeClass {name} selects its own AMIs (amiSelectorTerms without an alias), so "
        f"Karpenter picks no accelerated variant for the accelerator types of NodePool "
        f"{nodepool_name}: those AMIs are taken to carry the accelerator driver",
    )


def _class_conditions(
    pools: Sequence[PoolFacts], key: str, missing: str, suffix: str, driverless: str
) -> list[Condition]:
    """A NodePool's assumptions about the node class `key` names: that an input defines it
    (`missing` says what is assumed when none does), and, when the NodePool launches
    accelerator types, that the class does not leave the driver out (`key` + `suffix`; what
    `driverless` assumes when it does)."""
    conditions = [Condition(key, False, missing)]
    if any(is_accelerator_resource(r) for view in pools for r in view.pool.allocatable):
        conditions.append(Condition(f"{key}{suffix}", True, driverless))
    return conditions


#: What a NodePool's nodeClassRef names on Azure, and a class that installs no GPU driver.
_AKS_NODE_CLASS = "AKSNodeClass/"
_NO_GPU_DRIVER = "/gpu-mode-none"


def aks_node_class_keys(node_class: Mapping[str, Any], display: str) -> list[str]:
    """What an AKSNodeClass defines for the NodePools that name it: itself, and whether it
    leaves the GPU driver out (`spec.gpu.mode: None`).

    With mode `Driver` (the default) AKS installs the NVIDIA driver on GPU SKUs; with `None`
    it installs none, for clusters whose GPU Operator (or other installer) brings the driver
    and device plugin (AKSNodeClass `spec.gpu.mode`, pkg/apis/v1beta1/aksnodeclass.go).
    """
    name = mapping(node_class.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        raise GpulintError(
            f"{location(display, node_class)}: AKSNodeClass: metadata.name is missing"
        )
    mode = mapping(mapping(node_class.get("spec")).get("gpu")).get("mode")
    none = [f"{_AKS_NODE_CLASS}{name}{_NO_GPU_DRIVER}"] if mode == "None" else []
    return [f"{_AKS_NODE_CLASS}{name}", *none]


def aks_node_class_conditions(
    nodepool: Mapping[str, Any], pools: Sequence[PoolFacts]
) -> list[Condition]:
    """The assumptions a NodePool's AKSNodeClass decides: absent from every input, or
    installing no GPU driver while the NodePool launches GPU sizes."""
    ref = mapping(_template_spec(nodepool).get("nodeClassRef"))
    name = ref.get("name")
    if not is_azure(nodepool) or not isinstance(name, str) or not name:
        return []
    nodepool_name = mapping(nodepool.get("metadata")).get("name")
    return _class_conditions(
        pools,
        f"{_AKS_NODE_CLASS}{name}",
        f"NodePool {nodepool_name} names AKSNodeClass {name}, which no profile input defines: "
        f"AKS is taken to install the GPU driver its GPU sizes need (gpu.mode Driver, the "
        f"default)",
        _NO_GPU_DRIVER,
        f"AKSNodeClass {name} sets gpu.mode None, so AKS installs no GPU driver on the GPU "
        f"sizes of NodePool {nodepool_name}: a GPU Operator or other installer is taken to "
        f"bring the driver and device plugin",
    )


def _weight(nodepool: Mapping[str, Any]) -> int:
    weight = mapping(nodepool.get("spec")).get("weight")
    return weight if isinstance(weight, int) and not isinstance(weight, bool) else 0


def _template_spec(nodepool: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(mapping(mapping(nodepool.get("spec")).get("template")).get("spec"))


def nodepool_pools(nodepool: Mapping[str, Any], display: str) -> list[PoolFacts]:
    """One pool per allowed catalogue instance type (and capacity type) of one NodePool."""
    metadata = mapping(nodepool.get("metadata"))
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        raise GpulintError(f"{location(display, nodepool)}: NodePool: metadata.name is missing")
    spec = mapping(nodepool.get("spec"))
    template = mapping(spec.get("template"))
    template_spec = mapping(template.get("spec"))
    requirements = _requirements(display, template_spec)
    template_labels = {
        str(k): text(v) for k, v in mapping(mapping(template.get("metadata")).get("labels")).items()
    }
    taints = _taints(display, template_spec)
    limits = quantities(display, spec.get("limits"), ["spec", "limits"])
    capacity_types = _capacity_types(requirements)
    azure = is_azure(nodepool)
    types = [t for t in allowed_types(requirements, azure) if _within(t, limits)]
    group = f"{NODEPOOL_GROUP}{name}"
    if not types:
        # No accelerator type of the catalogue: a NodePool of other machines, whose size
        # gpulint does not know; every requirement, on instance attributes too, is a label.
        # Accelerator types it names that the catalogue lacks have accelerators of unknown
        # number (Pool.allocatable_unknown).
        stated = [*requirements]
        if all(r.key != CAPACITY_TYPE for r in requirements):
            stated.append(Requirement(CAPACITY_TYPE, "In", capacity_types))
        labels, varying = requirement_labels(stated, template_labels, name, set())
        pool = Pool(name=name, labels=labels, label_requirements=varying, taints=taints,
                    max_nodes=UNLIMITED_NODES, scale_from_zero=True, limit_group=group,
                    group_limits=limits,
                    instance_type=_uncatalogued(requirements, azure))  # fmt: skip
        return [PoolFacts(pool, _STATED)]
    typed = {r.key for r in requirements if _recorded(_attribute(r.key, azure) or "", azure)}
    labels, varying = requirement_labels(
        requirements, template_labels, name, {*typed, CAPACITY_TYPE}
    )
    prefix = (
        AZURE_PREFIX if azure else AUTO_MODE_PREFIX if is_auto_mode(nodepool) else KARPENTER_PREFIX
    )
    if prefix == AUTO_MODE_PREFIX:
        labels.setdefault(AUTO_MODE_COMPUTE_TYPE, "auto")
    found = []
    for entry in types:
        allocatable = catalogue_allocatable(entry.name) or {}
        typed_labels = {
            **labels,
            **(azure_type_labels(entry) if azure else type_labels(entry, prefix)),
        }
        unrecorded = (
            _AZURE_UNRECORDED
            if azure
            else _UNRECORDED + (_UNRECORDED_GPU if NVIDIA in entry.accelerators else ())
        )
        open_labels = tuple(
            LabelRequirement(f"{prefix}{attribute}", "Exists")
            for attribute in unrecorded
            if f"{prefix}{attribute}" not in typed_labels
            and all(r.key != f"{prefix}{attribute}" for r in varying)
        )
        for capacity in capacity_types:
            suffix = f"/{capacity}" if len(capacity_types) > 1 else ""
            pool = Pool(
                name=f"{name}/{entry.name}{suffix}",
                labels={**typed_labels, CAPACITY_TYPE: capacity},
                label_requirements=(
                    *(r for r in varying if r.key not in typed_labels),
                    *open_labels,
                ),
                taints=taints,
                allocatable=allocatable,
                max_nodes=max_nodes(limits, allocatable),
                scale_from_zero=True,
                instance_type=entry.name,
                limit_group=group,
                group_limits=limits,
            )
            found.append(PoolFacts(pool, _STATED, frozenset({"allocatable"})))
    if azure and not _pinned_to_catalogue(requirements):
        found.append(_other_sizes(name, requirements, template_labels, taints, limits, group))
    return found


#: The name of the pool of an Azure NodePool's GPU sizes that the catalogue lacks.
OTHER_SIZES = "other N-series sizes"


def _pinned_to_catalogue(requirements: Sequence[Requirement]) -> bool:
    """Whether a NodePool names its sizes (`node.kubernetes.io/instance-type` or
    `karpenter.azure.com/sku-name` In) and the catalogue has every one of them."""
    return any(
        r.operator == "In"
        and _attribute(r.key, True) in ("node.kubernetes.io/instance-type", "sku-name")
        and all(instance_type(v) is not None for v in r.values)
        for r in requirements
    )


def _other_sizes(
    name: str,
    requirements: Sequence[Requirement],
    template_labels: Mapping[str, str],
    taints: tuple[Taint, ...],
    limits: Mapping[str, Decimal],
    group: str,
) -> PoolFacts:
    """The N-series sizes an Azure NodePool allows beyond the catalogue's few (NV, NCads A10,
    ND MI300X and every later launch): one pool whose labels are what the requirements allow
    and whose GPUs are of unknown number, so a pod selecting such a size is not ruled out and
    nothing is counted on it (Pool.allocatable_unknown)."""
    stated = [*requirements]
    if all(r.key != CAPACITY_TYPE for r in requirements):
        stated.append(Requirement(CAPACITY_TYPE, "In", _capacity_types(requirements)))
    labels, varying = requirement_labels(stated, template_labels, name, set())
    keys = {r.key for r in varying} | set(labels) | {f"{AZURE_PREFIX}sku-family"}
    # Every node carries its size's attributes, with values the requirements leave open.
    open_keys = [
        "node.kubernetes.io/instance-type",
        *(f"{AZURE_PREFIX}{a}" for a in (*sorted(_AZURE_RECORDED), *_AZURE_UNRECORDED)),
        *(f"{AKS_PREFIX}{a}" for a in sorted(_AKS_SKU)),
    ]
    varying = (
        *varying,
        *(LabelRequirement(key, "Exists") for key in open_keys if key not in keys),
        # Only the N series has GPUs: the pool stands for those sizes alone.
        LabelRequirement(f"{AZURE_PREFIX}sku-family", "In", ("N",)),
    )
    named = _uncatalogued(requirements, True) or "Standard_N*"
    pool = Pool(name=f"{name}/{OTHER_SIZES}", labels=labels, label_requirements=varying,
                taints=taints, max_nodes=max_nodes(limits, {}), scale_from_zero=True,
                limit_group=group, group_limits=limits,
                instance_type=f"{named} (sizes outside gpulint's catalogue)")  # fmt: skip
    return PoolFacts(pool, _STATED)


def requirement_labels(
    requirements: Sequence[Requirement],
    template_labels: Mapping[str, str],
    name: str,
    typed: set[str],
) -> tuple[dict[str, str], tuple[LabelRequirement, ...]]:
    """The labels a NodePool's nodes carry and the requirements on those that vary by node.

    A key required `In` one value is a label of every node; any other requirement (`In` several
    values, `Exists`, `NotIn`, `Gt` ...) leaves each node its own value within it, and the
    zone, region, OS and architecture are open unless required. Keys in `typed` are set per
    pool from its instance type and capacity type; template labels win over requirements.
    """
    by_key: dict[str, list[Requirement]] = {}
    for requirement in requirements:
        if requirement.key not in typed:
            by_key.setdefault(requirement.key, []).append(requirement)
    labels: dict[str, str] = {}
    varying: list[LabelRequirement] = []
    for key, found in by_key.items():
        if len(found) == 1 and found[0].operator == "In" and len(found[0].values) == 1:
            labels[key] = found[0].values[0]
        else:
            varying += found
    labels.update(template_labels)
    labels[NODEPOOL_LABEL] = name
    # Unless required, the zone and region come from where a node is launched, and the OS
    # and architecture of a type outside the catalogue are not known here.
    varying += unstated_node_labels(labels, frozenset(by_key) | typed)
    return labels, tuple(r for r in varying if r.key not in labels)


# What a NodePool states of each pool; the catalogue's allocatable is an estimate.
_STATED = frozenset(
    {"labels", "label_requirements", "taints", "nodes", "min_nodes", "max_nodes",
     "scale_from_zero", "instance_type", "limit_group", "group_limits"}
)  # fmt: skip


def _requirements(display: str, spec: Mapping[str, Any]) -> list[Requirement]:
    raw = sequence(spec.get("requirements"))
    found = []
    for index, item in enumerate(raw):
        item = mapping(item)
        operator = item.get("operator")
        if not isinstance(item.get("key"), str) or operator not in _OPERATORS:
            raise GpulintError(
                f"{location(display, raw, index)}: spec.template.spec.requirements.{index}: "
                f"expected a key and an operator among {', '.join(sorted(_OPERATORS))}"
            )
        values = tuple(text(v) for v in sequence(item.get("values")))
        found.append(Requirement(item["key"], operator, values))
    return found


def _taints(display: str, spec: Mapping[str, Any]) -> tuple[Taint, ...]:
    return taint_list(display, spec.get("taints"), "spec.template.spec.taints")


def _capacity_types(requirements: Iterable[Requirement]) -> tuple[str, ...]:
    """The capacity types the NodePool may launch; on-demand when it says nothing."""
    allowed = [
        c
        for c in _CAPACITY_TYPES
        if all(r.allows(c) for r in requirements if r.key == CAPACITY_TYPE)
    ]
    said = any(r.key == CAPACITY_TYPE for r in requirements)
    return tuple(allowed) if said else ("on-demand",)


def is_auto_mode(nodepool: Mapping[str, Any]) -> bool:
    """Whether a NodePool's nodes are EKS Auto Mode's: its nodeClassRef names a NodeClass of
    eks.amazonaws.com (Auto Mode's own class; self-managed Karpenter's is an EC2NodeClass)."""
    ref = mapping(_template_spec(nodepool).get("nodeClassRef"))
    group = str(ref.get("group") or ref.get("apiVersion") or "")
    return group.startswith("eks.amazonaws.com")


def is_azure(nodepool: Mapping[str, Any]) -> bool:
    """Whether a NodePool is Karpenter's Azure provider's (AKS node auto-provisioning): its
    nodeClassRef names an AKSNodeClass of karpenter.azure.com."""
    ref = mapping(_template_spec(nodepool).get("nodeClassRef"))
    group = str(ref.get("group") or ref.get("apiVersion") or "")
    return ref.get("kind") == "AKSNodeClass" or group.startswith("karpenter.azure.com")


def azure_type_labels(entry: InstanceType) -> dict[str, str]:
    """The well-known labels Karpenter's Azure provider puts on a node of VM size `entry`
    (pkg/providers/instancetype/instancetype.go: the SKU's name, family, series and version
    parsed from the size's name, its vCPUs, memory in MiB and GPUs)."""
    attributes = {
        "sku-name": entry.name,
        "sku-cpu": str(entry.cpu),
        "sku-memory": str(entry.memory_gib * 1024),
    }
    size = _AZURE_SIZE.match(entry.name)
    if size:
        version = size["version"] or "1"
        attributes["sku-family"] = size["family"]
        attributes["sku-series"] = f"{size['family']}{size['sub']}{size['features']}" + (
            f"_v{size['version']}" if size["version"] else ""
        )
        attributes["sku-version"] = version
        if size["accelerator"] and NVIDIA in entry.accelerators:
            attributes["sku-gpu-name"] = size["accelerator"]
    if NVIDIA in entry.accelerators:
        attributes["sku-gpu-manufacturer"] = "nvidia"
        attributes["sku-gpu-count"] = str(entry.accelerators[NVIDIA])
    return {
        "node.kubernetes.io/instance-type": entry.name,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        f"{AKS_PREFIX}sku-cpu": attributes["sku-cpu"],
        f"{AKS_PREFIX}sku-memory": attributes["sku-memory"],
        **{f"{AZURE_PREFIX}{key}": value for key, value in attributes.items()},
    }


def type_labels(entry: InstanceType, prefix: str = KARPENTER_PREFIX) -> dict[str, str]:
    """The well-known labels Karpenter puts on a node of instance type `entry` (AWS), its
    instance attributes under `prefix` (`eks.amazonaws.com/` on EKS Auto Mode)."""
    family, _, size = entry.name.partition(".")
    category = re.match(r"[a-z]+", family)
    generation = re.search(r"\d+", family)
    attributes = {
        "instance-family": family,
        "instance-size": size,
        "instance-cpu": str(entry.cpu),
        "instance-memory": str(entry.memory_gib * 1024),
    }
    if category:
        attributes["instance-category"] = category.group()
    if generation:
        attributes["instance-generation"] = generation.group()
    if NVIDIA in entry.accelerators:
        attributes["instance-gpu-name"] = entry.model
        attributes["instance-gpu-manufacturer"] = "nvidia"
        attributes["instance-gpu-count"] = str(entry.accelerators[NVIDIA])
    if NEURON in entry.accelerators and category:
        attributes["instance-accelerator-name"] = _ACCELERATOR_NAMES.get(
            category.group(), category.group()
        )
        attributes["instance-accelerator-manufacturer"] = "aws"
        attributes["instance-accelerator-count"] = str(entry.accelerators[NEURON])
    return {
        "node.kubernetes.io/instance-type": entry.name,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        **{f"{prefix}{key}": value for key, value in attributes.items()},
    }


def _attribute(key: str, azure: bool = False) -> str | None:
    """The type attribute a requirement key reads (`instance-gpu-name`, on Azure
    `sku-gpu-name`), or None."""
    if key in ("node.kubernetes.io/instance-type", "kubernetes.io/arch", "kubernetes.io/os"):
        return key
    if azure:
        for prefix in (AZURE_PREFIX, AKS_PREFIX):
            if key.startswith(prefix):
                attribute = key[len(prefix) :]
                return attribute if prefix == AZURE_PREFIX or attribute in _AKS_SKU else None
        return None
    for prefix in _ATTRIBUTE_PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) :]
    return None


def allowed_types(requirements: Sequence[Requirement], azure: bool = False) -> list[InstanceType]:
    """The catalogue types (AWS, or Azure VM sizes for an Azure NodePool) every requirement on
    an instance attribute allows.

    A requirement on an attribute the catalogue does not record (`instance-hypervisor`,
    `instance-gpu-memory`, `sku-storage-premium-capable`) is taken as satisfied: it cannot
    rule a type out here.
    """
    found = []
    for entry in INSTANCE_TYPES.values():
        if entry.provider != ("aks" if azure else "eks"):
            continue
        labels = azure_type_labels(entry) if azure else type_labels(entry)
        known = {_attribute(k, azure): v for k, v in labels.items()}
        if all(
            r.allows(known.get(attribute))
            for r in requirements
            if (attribute := _attribute(r.key, azure)) is not None and _recorded(attribute, azure)
        ):
            found.append(entry)
    return found


def _uncatalogued(requirements: Sequence[Requirement], azure: bool = False) -> str | None:
    """The accelerator instance types (`g7e.12xlarge`, `Standard_NV36ads_A10_v5`) and families
    (`g7e.*`, `Standard_N*`) a NodePool's requirements allow by name, none of them in the
    catalogue; None when there are none."""
    named = []
    for requirement in requirements:
        attribute = _attribute(requirement.key, azure)
        if azure and attribute in _AZURE_GPU_ATTRIBUTES and requirement.operator in _ASKS_FOR:
            # Only Azure's N series has GPUs: a requirement on one asks for an N-series size.
            values = " ".join(requirement.values)
            named.append(f"Standard_N* ({requirement.key} {requirement.operator} {values})".strip())
            continue
        if requirement.operator != "In":
            continue
        if attribute in ("node.kubernetes.io/instance-type", "sku-name"):
            named += [v for v in requirement.values if accelerated_family(v)]
        elif attribute == "instance-family" and not azure:
            named += [f"{v}.*" for v in requirement.values if accelerated_family(f"{v}.")]
        elif azure and attribute in ("sku-family", "sku-series"):
            named += [f"Standard_{v}*" for v in requirement.values if v.startswith("N")]
    return ", ".join(dict.fromkeys(named)) or None


#: The attributes of the AKS label domain Karpenter sets from the SKU.
_AKS_SKU = frozenset({"sku-cpu", "sku-memory"})
_AZURE_GPU_ATTRIBUTES = frozenset({"sku-gpu-name", "sku-gpu-manufacturer", "sku-gpu-count"})
#: Operators by which a requirement asks for the attribute to be there.
_ASKS_FOR = frozenset({"In", "Exists", "Gt", "Gte"})


def _recorded(attribute: str, azure: bool = False) -> bool:
    if azure:
        return attribute in _AZURE_RECORDED or attribute in (
            "node.kubernetes.io/instance-type",
            "kubernetes.io/arch",
            "kubernetes.io/os",
        )
    return attribute in {
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "instance-family",
        "instance-size",
        "instance-category",
        "instance-generation",
        "instance-cpu",
        "instance-memory",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-accelerator-name",
        "instance-accelerator-manufacturer",
        "instance-accelerator-count",
    }


def _within(entry: InstanceType, limits: Mapping[str, Decimal]) -> bool:
    """Karpenter never launches a node that alone exceeds the NodePool's limits."""
    allocatable = catalogue_allocatable(entry.name) or {}
    return all(
        allocatable.get(k, Decimal(0)) <= limit for k, limit in limits.items() if k != "nodes"
    )


def max_nodes(limits: Mapping[str, Decimal], allocatable: Mapping[str, Decimal]) -> int:
    """The most nodes of one type the limits allow: `nodes`, or a limit over one node's share."""
    bounds = [int(limits["nodes"])] if "nodes" in limits else []
    for name, limit in limits.items():
        per_node = allocatable.get(name)
        if name != "nodes" and per_node:
            bounds.append(int(limit // per_node))
    return min(bounds) if bounds else UNLIMITED_NODES
