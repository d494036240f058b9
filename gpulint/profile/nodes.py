"""Node objects (`kubectl get nodes -o yaml`, or the API) -> pools.

Nodes are grouped by the label their provider uses to name node groups; per pool, the labels
and taints every node shares, the allocatable of a healthy node, how many nodes are Ready and
how many of those have GPUs in capacity but none allocatable (device plugin not ready).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Any

from gpulint.accelerators import is_known_accelerator, looks_like_accelerator
from gpulint.profile.merge import PoolFacts
from gpulint.profile.model import (
    KUBELET_LABELS,
    POOL_LABELS,
    LabelRequirement,
    Pool,
    Taint,
    unstated_node_labels,
)
from gpulint.profile.values import mapping, quantities, sequence, text

#: Labels that say a node has GPUs, whether or not the device plugin advertises them yet.
GPU_NODE_LABELS: tuple[str, ...] = (
    "nvidia.com/gpu.present",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "kubernetes.azure.com/accelerator",
)
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
# Labels that differ per node even inside one pool: the hostname, and the IDs managed platforms
# give each node (or its host).
_PER_NODE_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        # VKE's node ID (kubernetes/autoscaler cloudprovider/vultr, vultr_node_group.go).
        "vke.vultr.com/node-id",
        # The ID of an LKE node's host (linode/linode-cloud-controller-manager
        # cloud/linode/node_controller.go).
        "node.k8s.linode.com/host-uuid",
        # DOKS's node ID (docs.digitalocean.com/products/kubernetes/details/managed).
        "doks.digitalocean.com/node-id",
        # An IKS worker's ID (ibm-cloud-docs/containers, a worker's `kubectl describe node`).
        "ibm-cloud.kubernetes.io/worker-id",
    }
)
#: The most values a label may take across a pool's nodes and still be one a pod selects by.
MAX_VARYING_VALUES = 8
# Taints the node lifecycle controller, kubectl cordon or the autoscaler put on single nodes:
# facts about one node's state, not about the pool.
_STATE_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
_STATE_TAINT_KEYS = frozenset(
    {"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"}
)
# Label prefixes that reveal the platform (docs/platforms.md says where each is written).
_PROVIDER_LABEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("eks.amazonaws.com/", "eks"),
    ("alpha.eksctl.io/", "eks"),
    ("karpenter.k8s.aws/", "eks"),
    ("cloud.google.com/gke-", "gke"),
    ("kubernetes.azure.com/", "aks"),
    # OKE's cloud controller labels its nodes oci.oraclecloud.com/fault-domain (and more).
    ("oci.oraclecloud.com/", "oke"),
    # The Machine Config Operator labels every OpenShift node node.openshift.io/os_id.
    ("node.openshift.io/", "openshift"),
    # DOKS's reconciler keeps doks.digitalocean.com/node-pool (and more) on every node.
    ("doks.digitalocean.com/", "doks"),
)
# spec.providerID prefixes that name the platform on their own: OKE's are instance OCIDs.
_PROVIDER_ID_PREFIXES: tuple[tuple[str, str], ...] = (("ocid1.instance.", "oke"),)
_KUBEADM_LABEL = "node-role.kubernetes.io/control-plane"


@dataclass(frozen=True)
class NodeView:
    """What one Node object says, already parsed."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    capacity: Mapping[str, Decimal]
    allocatable: Mapping[str, Decimal]
    ready: bool
    schedulable: bool
    provider_id: str = ""  # spec.providerID

    @cached_property
    def device_plugin_not_ready(self) -> bool:
        """The node has accelerators the scheduler cannot use (the device plugin is not serving).

        Either capacity shows them but allocatable is 0, or the node is labelled as a GPU node
        and advertises no accelerator at all (cluster-autoscaler treats both as unready).
        """
        if any(
            amount > 0 and self.allocatable.get(name, Decimal(0)) == 0
            for name, amount in self.capacity.items()
            if is_accelerator_resource(name)
        ):
            return True
        labelled = any(self.labels.get(label, "false") != "false" for label in GPU_NODE_LABELS)
        return labelled and not any(
            amount > 0 for name, amount in self.allocatable.items() if is_accelerator_resource(name)
        )


def is_accelerator_resource(name: str) -> bool:
    """True for an extended resource a device plugin advertises for an accelerator."""
    return is_known_accelerator(name) or ("/" in name and looks_like_accelerator(name))


def node_view(
    node: Mapping[str, Any],
    display: str = "<nodes>",
    path: Sequence[Any] = (),
    seen: dict[tuple[Any, ...], dict[str, Decimal]] | None = None,
) -> NodeView:
    """Parse one Node object; raises GpulintError for a quantity that does not parse.

    `seen` (one for the nodes of one read) keeps the amounts already parsed: the nodes of a
    pool state the same capacity and allocatable, and a cluster has thousands of them.
    """
    metadata = mapping(node.get("metadata"))
    spec = mapping(node.get("spec"))
    status = mapping(node.get("status"))
    conditions = sequence(status.get("conditions"))
    ready = any(
        mapping(c).get("type") == "Ready" and str(mapping(c).get("status")) == "True"
        for c in conditions
    )
    taints = tuple(
        Taint(str(t.get("key", "")), text(t.get("value")), str(t.get("effect", "")))
        for t in map(mapping, sequence(spec.get("taints")))
    )
    return NodeView(
        name=str(metadata.get("name", "")),
        labels={
            k if type(k) is str else str(k): v if type(v) is str else text(v)
            for k, v in mapping(metadata.get("labels")).items()
        },
        taints=taints,
        capacity=_amounts(display, status.get("capacity"), [*path, "status", "capacity"], seen),
        allocatable=_amounts(
            display, status.get("allocatable"), [*path, "status", "allocatable"], seen
        ),
        ready=ready,
        schedulable=spec.get("unschedulable") is not True,
        provider_id=text(spec.get("providerID")),
    )


def _amounts(
    display: str,
    value: Any,
    path: Sequence[Any],
    seen: dict[tuple[Any, ...], dict[str, Decimal]] | None,
) -> Mapping[str, Decimal]:
    """The parsed `{resource: quantity}` of `value`, from `seen` when written alike before.

    Only a mapping of strings (as the API writes amounts) is kept: a key of other values
    could equal one that does not parse (`True == 1`) and skip its error.
    """
    if seen is None or type(value) is not dict or any(type(v) is not str for v in value.values()):
        return quantities(display, value, path)
    key = tuple(value.items())
    found = seen.get(key)
    if found is None:
        found = seen[key] = quantities(display, value, path)
    return found


def labelled_pool(node: NodeView, pool_label: str | None = None) -> str | None:
    """The pool a node's pool label names (`--pool-label`, else a provider's), or None."""
    for label in (pool_label,) if pool_label else POOL_LABELS:
        if node.labels.get(label):
            return node.labels[label]
    return None


def pool_names(nodes: Iterable[NodeView], pool_label: str | None = None) -> dict[str, str]:
    """Node name -> pool name, for every node.

    Nodes with a pool label form the pool it names. The others (kubeadm, k3s, bare metal) are
    grouped by what the scheduler reads: labels less the per-node ones, taints less the state
    taints, and the cpu and extended resources they offer. Such a pool is named by its
    instance type (`g5.12xlarge`, `g5.12xlarge-2` for a second shape of it), else by what its
    nodes' names share (`gpu-worker-*`).
    """
    names: dict[str, str] = {}
    shapes: dict[tuple[Any, ...], list[NodeView]] = {}
    for node in nodes:
        found = labelled_pool(node, pool_label)
        if found is not None:
            names[node.name] = found
        else:
            shapes.setdefault(_shape(node), []).append(node)
    taken = set(names.values())
    last: dict[str, int] = {}  # per base name, the last number given, so naming stays linear
    for members in shapes.values():
        name = _instance_type_of(members[0]) or _shared_name(members)
        unique, n = name, last.get(name, 1)
        while unique in taken:
            n += 1
            unique = f"{name}-{n}"
        last[name] = n
        taken.add(unique)
        for node in members:
            names[node.name] = unique
    return names


def _shape(node: NodeView) -> tuple[Any, ...]:
    """What makes two unlabelled nodes interchangeable for the scheduler."""
    labels = frozenset(
        (k, v) for k, v in node.labels.items() if k not in _PER_NODE_LABELS and v != node.name
    )
    taints = frozenset(t for t in node.taints if not _is_state_taint(t))
    # Memory differs by a few KiB between identical machines; cpu and devices do not.
    offered = frozenset((k, v) for k, v in node.allocatable.items() if k == "cpu" or "/" in k)
    return labels, taints, offered


def _instance_type_of(node: NodeView) -> str | None:
    return next((node.labels[k] for k in INSTANCE_TYPE_LABELS if node.labels.get(k)), None)


def _shared_name(members: list[NodeView]) -> str:
    """The nodes' common name prefix with `*` (`gpu-worker-*`), or the one node's name."""
    if len(members) == 1:
        return members[0].name
    first, last = min(n.name for n in members), max(n.name for n in members)
    size = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    # `gpu-worker-1` and `gpu-worker-12` share `gpu-worker-1`: a number is per node.
    prefix = first[:size].rstrip("0123456789-_.")
    return f"{prefix}-*" if prefix else f"{members[0].name}+{len(members) - 1}"


def pools_from_nodes(
    nodes: Iterable[NodeView | Mapping[str, Any]], pool_label: str | None = None
) -> tuple[Pool, ...]:
    """Group Node objects into pools (see the module docstring), in order of first appearance."""
    return tuple(facts.pool for facts in pool_facts_from_nodes(nodes, pool_label))


def pool_facts_from_nodes(
    nodes: Iterable[NodeView | Mapping[str, Any]],
    pool_label: str | None = None,
    dra_nodes: frozenset[str] = frozenset(),
) -> tuple[PoolFacts, ...]:
    """Like pools_from_nodes, saying which pool fields the nodes state and which are guesses.

    `dra_nodes` names the nodes that publish accelerators in DRA ResourceSlices.
    """
    views = [node if isinstance(node, NodeView) else node_view(node) for node in nodes]
    names = pool_names(views, pool_label)
    groups: dict[str, list[NodeView]] = {}
    for view in views:
        groups.setdefault(names[view.name], []).append(view)
    return tuple(_pool(name, members, dra_nodes) for name, members in groups.items())


def _pool(name: str, members: list[NodeView], dra_nodes: frozenset[str]) -> PoolFacts:
    usable = [n for n in members if n.ready and n.schedulable]
    # Shared facts come from the nodes that work, so one broken node does not skew the pool.
    typical = usable or members
    healthy = [n for n in typical if not n.device_plugin_not_ready] or typical
    label_sets = [{k: v for k, v in n.labels.items() if k not in _PER_NODE_LABELS} for n in typical]
    labels = _common(label_sets)
    taints = [t for t in typical[0].taints if not _is_state_taint(t)]
    taints = [t for t in taints if all(t in n.taints for n in typical)]
    allocatable = _minimum(n.allocatable for n in healthy)
    instance_type = next((labels[k] for k in INSTANCE_TYPE_LABELS if k in labels), None)
    count = len(usable)
    pool = Pool(
        name=name,
        labels=labels,
        label_requirements=_varying(label_sets, labels),
        taints=tuple(taints),
        allocatable=allocatable,
        nodes=count,
        min_nodes=count,
        max_nodes=count,
        instance_type=instance_type,
        # A GPU node served by a DRA driver advertises no GPU resource: not a broken plugin.
        device_plugin_not_ready=sum(
            1 for n in usable if n.device_plugin_not_ready and n.name not in dra_nodes
        ),
        dra_nodes=sum(1 for n in usable if n.name in dra_nodes),
        labels_observed=True,
    )
    stated = {
        "labels", "label_requirements", "taints", "allocatable", "nodes", "device_plugin_not_ready",
        "labels_observed",
    }  # fmt: skip
    if dra_nodes:
        stated.add("dra_nodes")
    if instance_type is not None:
        stated.add("instance_type")
    # Without autoscaler settings the best guess is that the pool stays the size it is.
    return PoolFacts(pool, frozenset(stated), frozenset({"min_nodes", "max_nodes"}))


def _is_state_taint(taint: Taint) -> bool:
    return taint.key.startswith(_STATE_TAINT_PREFIXES) or taint.key in _STATE_TAINT_KEYS


def _common(label_sets: Iterable[Mapping[str, str]]) -> dict[str, str]:
    sets = list(label_sets)
    if not sets:
        return {}
    first = sets[0]
    return {k: v for k, v in first.items() if all(s.get(k) == v for s in sets[1:])}


def _varying(
    label_sets: list[dict[str, str]], common: Mapping[str, str]
) -> tuple[LabelRequirement, ...]:
    """Labels every node carries with values that differ (the zones of a multi-zone group),
    as `In` the values seen; a label with more values than MAX_VARYING_VALUES names nodes,
    not something a pod selects a pool by, and is left out. The kubelet's OS and architecture
    labels, which every node has, are open when the nodes given lack them."""
    found: list[LabelRequirement] = []
    if not label_sets:
        return unstated_node_labels(common, keys=KUBELET_LABELS)
    for key in label_sets[0]:
        values = {s.get(key) for s in label_sets}
        if None not in values and 1 < len(values) <= MAX_VARYING_VALUES:
            found.append(LabelRequirement(key, "In", tuple(sorted(v for v in values if v))))
    said = frozenset(r.key for r in found)
    return (*found, *unstated_node_labels(common, said, KUBELET_LABELS))


def _minimum(allocatables: Iterable[Mapping[str, Decimal]]) -> dict[str, Decimal]:
    items = list(allocatables)
    if not items:
        return {}
    shared = [k for k in items[0] if all(k in a for a in items[1:])]
    return {k: min(a[k] for a in items) for k in shared}


def provider_from_nodes(nodes: Iterable[NodeView]) -> tuple[str, str] | None:
    """(provider, evidence) from well-known node labels, or None when the labels say nothing."""
    views = list(nodes)
    for prefix, provider in _PROVIDER_ID_PREFIXES:
        if any(n.provider_id.startswith(prefix) for n in views):
            return provider, f"node spec.providerID {prefix}*"
    for prefix, provider in _PROVIDER_LABEL_PREFIXES:
        if any(k.startswith(prefix) for n in views for k in n.labels):
            return provider, f"node labels {prefix}*"
    if any(_KUBEADM_LABEL in n.labels for n in views):
        return "kubeadm", f"node label {_KUBEADM_LABEL} and no cloud provider labels"
    return None
