"""Typed cluster facts: node pools, quotas, limit ranges, priority classes, admission plugins.

Every importer (gpulint's own ClusterProfile YAML, a kubectl dump, an eksctl config, a live
cluster) produces these; the scheduling model and the rules read only these.
"""

from collections.abc import Callable, Mapping
from dataclasses import field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import TYPE_CHECKING

from gpulint.views import NamedTuple, frozen_record

if TYPE_CHECKING:
    from gpulint.dra import Claim, DeviceClass, ResourceSlice
    from gpulint.profile.admission_policies import RequiredResources

    # Given here by __getattr__ (below), as these names for type checkers.
    from gpulint.profile.objects import ClusterQueue as ClusterQueue
    from gpulint.profile.objects import Condition as Condition
    from gpulint.profile.objects import CustomResourceDefinition as CustomResourceDefinition
    from gpulint.profile.objects import FlavorQuota as FlavorQuota
    from gpulint.profile.objects import FlavorToleration as FlavorToleration
    from gpulint.profile.objects import LimitRange as LimitRange
    from gpulint.profile.objects import LimitRangeItem as LimitRangeItem
    from gpulint.profile.objects import LocalQueue as LocalQueue
    from gpulint.profile.objects import OperatorDriver as OperatorDriver
    from gpulint.profile.objects import PriorityClass as PriorityClass
    from gpulint.profile.objects import ResourceFlavor as ResourceFlavor
    from gpulint.profile.objects import ResourceQuota as ResourceQuota
    from gpulint.profile.objects import RuntimeClass as RuntimeClass
    from gpulint.profile.objects import ScopeRequirement as ScopeRequirement
    from gpulint.profile.platforms import AdmissionFact

#: Labels that name a node's pool, most specific first.
POOL_LABELS: tuple[str, ...] = (
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    # DOKS's reconciler keeps it on every node (docs.digitalocean.com/products/kubernetes/
    # details/managed, "Automatic Application of Labels and Taints to Nodes"), beside a
    # per-node doks.digitalocean.com/node-id that would otherwise make each node a pool.
    "doks.digitalocean.com/node-pool",
    # Civo's pool ID (kubernetes/autoscaler cluster-autoscaler/cloudprovider/civo, the node
    # template it builds for a pool).
    "kubernetes.civo.com/civo-node-pool",
    # LKE's pool ID: linode/lke-ai-conformance's README lists a GPU node labelled
    # lke.linode.com/pool-id beside node.k8s.linode.com/host-uuid, the ID of the node's host
    # (linode/linode-cloud-controller-manager's node controller writes it), which differs node
    # by node.
    "lke.linode.com/pool-id",
    # ACK "creates a globally unique label alibabacloud.com/nodepool-id for each node pool"
    # (help.aliyun.com, "Schedule applications to specific node pools").
    "alibabacloud.com/nodepool-id",
    # TKE's node pool ID (TencentCloud/tencentcloud-cli, the tke DescribeExternalNodePools
    # example: the pool's labels).
    "tke.cloud.tencent.com/nodepool-id",
    # IBM Cloud Kubernetes Service's worker pool ID (ibm-cloud-docs/containers, "Deploying apps
    # to specific worker nodes by using labels"), beside a per-node
    # ibm-cloud.kubernetes.io/worker-id.
    "ibm-cloud.kubernetes.io/worker-pool-id",
)
#: How the pools of one Karpenter NodePool name their limit group: `NodePool <name>`.
NODEPOOL_GROUP = "NodePool "
#: The limit group of the pools GKE creates for a compute class (`ComputeClass <name>`).
COMPUTE_CLASS_GROUP = "ComputeClass "
#: The label GKE puts on the nodes of a flex-start node pool, whose VMs Dynamic Workload
#: Scheduler obtains when pods ask for them (queued provisioning included).
GKE_FLEX_START = "cloud.google.com/gke-flex-start"
#: The ClusterProfile field that holds the objects of each kind it lists (claims of both
#: kinds are in `resource_claims`).
OBJECT_FIELDS = {
    "ResourceQuota": "quotas",
    "LimitRange": "limit_ranges",
    "PriorityClass": "priority_classes",
    "RuntimeClass": "runtime_classes",
    "ClusterQueue": "cluster_queues",
    "LocalQueue": "local_queues",
    "ResourceFlavor": "resource_flavors",
    # Policy-engine objects that require requests or limits (admission_policies.py).
    "K8sRequiredResources": "resource_policies",
    "K8sContainerLimits": "resource_policies",
    "ClusterPolicy": "resource_policies",
    "Policy": "resource_policies",
    "DeviceClass": "device_classes",
    "ResourceSlice": "resource_slices",
}
#: Providers whose API servers run the ExtendedResourceToleration admission plugin
#: (platforms.py holds every admission fact with its source).
PROVIDERS_WITH_EXTENDED_RESOURCE_TOLERATION = frozenset({"eks", "gke", "gke-autopilot", "oke"})


#: What GKE Autopilot creates nodes for when a pod asks (cloud.google.com/kubernetes-engine/
#: docs/how-to/autopilot-gpus, .../how-to/tpus-autopilot): no pool has to list them.
AUTOPILOT_ON_DEMAND = frozenset({"nvidia.com/gpu", "google.com/tpu"})


class Taint(NamedTuple):
    """A node taint."""

    key: str
    value: str
    effect: str  # NoSchedule, PreferNoSchedule, NoExecute

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


#: Operators of a label requirement: a node selector's, and Karpenter's Gte/Lte.
LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"})


class LabelRequirement(NamedTuple):
    """What every node of a pool meets on a label whose value differs from node to node.

    A Karpenter NodePool that requires `topology.kubernetes.io/zone In [a, b]` launches nodes
    in either zone, each labelled with its own; one that requires `Exists` of a label labels
    each node with the value the pod it is launched for selects. A node's value (None: it lacks
    the label) satisfies every requirement of the pool on that key.
    """

    key: str
    operator: str  # one of LABEL_OPERATORS
    values: tuple[str, ...] = ()

    def allows(self, value: str | None) -> bool:
        """Whether a node whose label `key` is `value` (None: absent) satisfies it."""
        if self.operator == "In":
            return value is not None and value in self.values
        if self.operator == "NotIn":
            return value is None or value not in self.values
        if self.operator == "Exists":
            return value is not None
        if self.operator == "DoesNotExist":
            return value is None
        return value is not None and _compare(self.operator, value, self.values)

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"


#: Labels the kubelet and the cloud provider put on every node, with values a node group's
#: infrastructure code often does not state: the OS, the CPU architecture, the zone, the region,
#: and the hostname, which differs from node to node and no pool states (a Job pinned to one
#: node by `kubernetes.io/hostname` is not ruled out by a profile of pools).
NODE_LABELS = (
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "kubernetes.io/hostname",
)


#: The labels of NODE_LABELS the kubelet sets on every node, cloud or not.
KUBELET_LABELS = NODE_LABELS[2:]


def unstated_node_labels(
    labels: Mapping[str, str],
    said: frozenset[str] = frozenset(),
    keys: tuple[str, ...] = NODE_LABELS,
) -> tuple[LabelRequirement, ...]:
    """`Exists` for each of `keys` that `labels` and the keys in `said` leave open: every node
    carries one, so a pod selecting any value is not ruled out by a file that is silent."""
    return tuple(
        LabelRequirement(key, "Exists") for key in keys if key not in labels and key not in said
    )


_COMPARISONS: Mapping[str, Callable[[Decimal, Decimal], bool]] = {
    "Gt": Decimal.__gt__,
    "Lt": Decimal.__lt__,
    "Gte": Decimal.__ge__,
    "Lte": Decimal.__le__,
}


def _compare(operator: str, value: str, bounds: tuple[str, ...]) -> bool:
    try:
        have, bound = Decimal(value), Decimal(bounds[0])
    except (InvalidOperation, IndexError):
        return False
    return operator in _COMPARISONS and _COMPARISONS[operator](have, bound)


class GpuUser(NamedTuple):
    """A workload whose active pods hold extended resources on a pool's nodes."""

    namespace: str
    kind: str  # the controller: Deployment (for its ReplicaSets), StatefulSet, Job ..., or Pod
    name: str
    resources: Mapping[str, Decimal] = {}

    def is_workload(self, namespace: str, kind: str, name: str) -> bool:
        """True when these pods belong to the workload `namespace/kind/name`."""
        return (self.namespace, self.kind, self.name) == (namespace, kind, name)


@frozen_record
class Pool:
    """A group of identical nodes (node group, node pool, Karpenter NodePool)."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    # Labels whose value differs from node to node (a NodePool's zones): each node carries a
    # value these allow. A key in `labels` is the same on every node and is not listed here.
    label_requirements: tuple[LabelRequirement, ...] = ()
    taints: tuple[Taint, ...] = ()
    allocatable: Mapping[str, Decimal] = field(default_factory=dict)  # per node
    nodes: int = 0  # Ready nodes now
    min_nodes: int = 0
    max_nodes: int = 0
    # What its input could not say about `max_nodes` and took instead, as its assumption reads
    # (a Terraform variable without a default, a regional GKE pool's zones): a verdict that the
    # pool is too small rests on it. It goes with the `max_nodes` it was taken for.
    ceiling_assumed: str | None = None
    scale_from_zero: bool = False  # the autoscaler can add a node while the pool has none
    provisioning_seconds: int | None = None  # scale-up until a Ready node advertises GPUs
    # The p95 of its GPU pods' image pulls, waiting included (`gpulint diagnose --timeline`).
    image_pull_seconds: int | None = None
    instance_type: str | None = None
    # Its input names an instance type the files cannot decide (a Terraform variable without a
    # default, a data source): what a node has is unknown, as for a type nothing describes.
    instance_type_unknown: bool = False
    # Node labels its input cannot decide whether its nodes carry (DOKS's GPU labels on a pool
    # of a Droplet size the files do not decide): placed as absent; a verdict that holds only
    # while they are absent is a warning naming them (rules.placement.certainty).
    undecided_labels: tuple[str, ...] = ()
    # The taints its nodes carry when they carry those labels, one per alternative (DOKS
    # taints a GPU node by its brand, nvidia.com/gpu or amd.com/gpu): each is tried.
    undecided_taints: tuple[Taint, ...] = ()
    device_plugin_not_ready: int = 0  # nodes whose capacity shows GPUs but allocatable 0
    # Extended resources (GPUs) already requested by running/pending pods on the pool's nodes,
    # summed over the pool; known only from a live cluster, so free = nodes x allocatable - this.
    gpus_in_use: Mapping[str, Decimal] = field(default_factory=dict)
    # Who holds `gpus_in_use`, so a checked workload's own running pods are not counted twice.
    gpus_in_use_by: tuple[GpuUser, ...] = ()
    # Pools that share one ceiling (the instance types of a Karpenter NodePool, whose `limits`
    # bound all its nodes together): their name, and the ceiling over all of them per resource
    # (`nodes` for a node count).
    limit_group: str | None = None
    group_limits: Mapping[str, Decimal] = field(default_factory=dict)
    # Extended resources a node of the pool has that cluster-autoscaler's zero-node template
    # does not advertise: with the pool at zero, a pod asking for one never triggers a scale-up.
    template_missing: tuple[str, ...] = ()
    # Node labels (keys) a node of the pool carries that cluster-autoscaler's zero-node
    # template does not (a self-managed Auto Scaling group whose tags do not repeat them):
    # with the pool at zero nodes, a pod that requires one never triggers a scale-up.
    template_missing_labels: tuple[str, ...] = ()
    # Where a label joins that template, for fix texts: "capacity-annotation" (a Cluster API
    # group's `capacity.cluster-autoscaler.kubernetes.io/labels`); None: an Auto Scaling
    # group's `k8s.io/cluster-autoscaler/node-template/label/` tags.
    template_labels_by: str | None = field(default=None, compare=False)
    # Extended resources the pool's nodes have in an amount its files do not say (the EFA
    # interfaces of an eksctl group with `efaEnabled`, counted by EC2 at launch): not judged.
    unknown_amounts: frozenset[str] = frozenset()
    # Its labels were read from its nodes (a live cluster, a node dump): what an in-cluster
    # labeller (GPU Feature Discovery, NFD) sets is on them when it runs, and absent when not.
    labels_observed: bool = field(default=False, compare=False)
    # Where the pool is written (`infra/main.tf:14`), for messages; not a cluster fact.
    defined_at: str | None = field(default=None, compare=False)
    # Nodes that publish accelerators through DRA ResourceSlices (a DRA driver rather than a
    # device plugin serves them, so an empty allocatable is no broken plugin).
    dra_nodes: int = 0
    # The NVIDIA driver of the pool's nodes (`570.124.06`), declared where no node label says
    # it (gpulint.cuda reads GPU Feature Discovery's labels first).
    driver_version: str | None = None

    @property
    def can_grow(self) -> bool:
        """True when the pool can ever have a node: it has one, or it can scale up to one."""
        return self.nodes > 0 or (self.max_nodes > 0 and self.scale_from_zero)

    @property
    def made_per_pod(self) -> bool:
        """True for a pool of a Karpenter NodePool or of a GKE compute class's node
        auto-creation, or a GKE flex-start pool (Dynamic Workload Scheduler): nodes are
        launched for pending pods and never kept warm, so waiting for one is how the pool
        works, not a choice to revisit."""
        if self.labels.get(GKE_FLEX_START) == "true":
            return True
        return (self.limit_group or "").startswith((NODEPOOL_GROUP, COMPUTE_CLASS_GROUP))

    @property
    def allocatable_unknown(self) -> bool:
        """Whether what one node has is unknown: nothing says what a node of the pool has (no
        `allocatable` written, none read from a node) and its instance type is not known from
        its input, or is of a family with accelerators that gpulint's catalogue does not list
        (a launch newer than the catalogue). Its extended resources, GPUs included, are then
        not judged. A type of a family without accelerators (`m5.2xlarge`) has none."""
        if self.allocatable:
            return False
        if self.instance_type is None:
            return self.instance_type_unknown
        from gpulint.profile.instances import accelerated_family  # the rare case only

        return accelerated_family(self.instance_type)

    def may_have(self, resource: str) -> bool:
        """Whether a node may have `resource` though the pool does not list it: an amount its
        files do not say (`unknown_amounts`), or an instance type nothing describes."""
        return resource in self.unknown_amounts or self.allocatable_unknown

    @property
    def described(self) -> str:
        """The pool's name for messages, with where it is written when known."""
        return f"{self.name} ({self.defined_at})" if self.defined_at else self.name

    @property
    def ceiling(self) -> int:
        """The most nodes the pool can ever have."""
        return max(self.nodes, self.max_nodes)

    def label_domain(self, key: str) -> str | tuple[LabelRequirement, ...] | None:
        """What the pool's nodes carry as `key`: one value, the requirements on a value that
        differs by node, or None when they lack the label."""
        if key in self.labels:
            return self.labels[key]
        varying = tuple(r for r in self.label_requirements if r.key == key)
        return varying or None


@frozen_record
class ClusterProfile:
    """Everything gpulint knows about one cluster."""

    name: str | None = None
    kubernetes_version: str | None = None  # the API server's release, where an input states it
    # The oldest release the API server can run, where only that is known: the newest kubelet
    # among the nodes (no kubelet is newer than its API server) or GKE's min_master_version.
    minimum_kubernetes_version: str | None = None
    # The platform (platforms.PLATFORMS: eks, gke, gke-autopilot, oke ...), declared or inferred.
    provider: str | None = None
    extended_resource_toleration: bool | None = None  # None: infer from the provider
    pod_toleration_restriction: bool | None = None  # None: infer from the provider
    default_namespace: str | None = None
    # The scheduler extenders the cluster runs (`hami`); None: not stated, so resources that
    # only an extender serves are taken as served.
    scheduler_extenders: frozenset[str] | None = None
    pools: tuple[Pool, ...] = ()
    quotas: "tuple[ResourceQuota, ...]" = ()
    limit_ranges: "tuple[LimitRange, ...]" = ()
    priority_classes: "tuple[PriorityClass, ...]" = ()
    runtime_classes: "tuple[RuntimeClass, ...]" = ()
    # Whether `runtime_classes` is every RuntimeClass of the cluster (a live read, a dump of
    # them, `runtimeClasses:` declared): only then is a class it lacks known to be missing.
    runtime_classes_known: bool = False
    cluster_queues: "tuple[ClusterQueue, ...]" = ()
    local_queues: "tuple[LocalQueue, ...]" = ()
    resource_flavors: "tuple[ResourceFlavor, ...]" = ()
    resource_policies: "tuple[RequiredResources, ...]" = ()
    # Dynamic Resource Allocation objects, from a dump that lists them or the API.
    device_classes: "tuple[DeviceClass, ...]" = ()
    resource_slices: "tuple[ResourceSlice, ...]" = ()
    resource_claims: "tuple[Claim, ...]" = ()  # ResourceClaims and ResourceClaimTemplates
    # The drivers the cluster's GPU Operator installs on NVIDIA pools that state none of their
    # own (a ClusterPolicy's, NVIDIADriver objects', or declared in a ClusterProfile).
    gpu_operator_drivers: "tuple[OperatorDriver, ...]" = ()
    # The CustomResourceDefinitions a dump lists, for validating the custom resources of the
    # inputs (gpulint.validation.crds). Not written by `profile export`, hence not compared.
    custom_resource_definitions: "tuple[CustomResourceDefinition, ...]" = field(
        default=(), compare=False
    )
    # Provenance, not cluster facts: two profiles of the same cluster read from different
    # inputs compare equal.
    sources: tuple[str, ...] = field(default=(), compare=False)  # files, or "live cluster"
    provider_source: str | None = field(default=None, compare=False)  # how `provider` was learnt
    # Where `extended_resource_toleration` was declared (None: the profile's spec.admission).
    extended_resource_toleration_source: str | None = field(default=None, compare=False)
    # Where `pod_toleration_restriction` was declared (None: the profile's spec.admission).
    pod_toleration_restriction_source: str | None = field(default=None, compare=False)
    # Values the inputs could not decide (a Terraform data source ...) and what was taken instead.
    assumptions: tuple[str, ...] = field(default=(), compare=False)
    # What the inputs define (`EC2NodeClass/gpu`) and the assumptions that depend on it, which
    # merging all inputs of a cluster turns into `assumptions`.
    defined: tuple[str, ...] = field(default=(), compare=False)
    conditions: "tuple[Condition, ...]" = field(default=(), compare=False)

    @property
    def extended_resource_toleration_enabled(self) -> bool:
        """Whether the API server is known to add tolerations for requested extended resources."""
        return self.admission_fact("ExtendedResourceToleration").state is True

    def admission_fact(self, name: str) -> "AdmissionFact":
        """What the cluster's API server does about `name` (platforms.FACTS): on, off or
        unknown, with its source."""
        from gpulint.profile.platforms import platform_fact

        declared, where = self.declared_fact(name)
        fact = platform_fact(self.provider, name, declared)
        if declared is not None and where:
            return fact._replace(source=where)
        return fact

    def declared_fact(self, name: str) -> tuple[bool | None, str | None]:
        """The state a profile or config declares for the admission fact `name` (None: none
        declared), and where it was declared (None: the profile's spec.admission)."""
        from gpulint.profile.platforms import (
            EXTENDED_RESOURCE_TOLERATION,
            POD_TOLERATION_RESTRICTION,
        )

        if name == EXTENDED_RESOURCE_TOLERATION:
            return self.extended_resource_toleration, self.extended_resource_toleration_source
        if name == POD_TOLERATION_RESTRICTION:
            return self.pod_toleration_restriction, self.pod_toleration_restriction_source
        return None, None

    def advertised_resources(self) -> frozenset[str]:
        """Every resource name some pool's nodes advertise, or that the platform creates nodes
        for on demand (GKE Autopilot: GPUs and TPUs)."""
        if self.provider == "gke-autopilot":
            return self.pool_index.advertised | AUTOPILOT_ON_DEMAND
        return self.pool_index.advertised

    @cached_property
    def object_kinds(self) -> frozenset[str]:
        """The kinds of Kubernetes object the profile lists at least one of (ResourceQuota,
        PriorityClass, DeviceClass ...): rules that read only other kinds have nothing to read."""
        listed = {kind for kind, name in OBJECT_FIELDS.items() if getattr(self, name)}
        if self.runtime_classes_known:
            listed.add("RuntimeClass")  # that none exists is something to judge pods against
        return frozenset(listed | {c.kind for c in self.resource_claims})

    @cached_property
    def pool_index(self) -> "PoolIndex":
        """The pools grouped by what the scheduler's filters read, built on first use."""
        return PoolIndex.of(self.pools)


class PoolIndex(NamedTuple):
    """The pools of a profile grouped by the facts the scheduler's filters read.

    Large clusters repeat a few node group shapes across zones and teams: a filter that reads
    only taints, only allocatable or only some labels can be run once per distinct value and
    its verdict shared by every pool that has that value.
    """

    pools: tuple[Pool, ...]
    taint_sets: tuple[tuple[Taint, ...], ...]  # distinct, in order of first appearance
    taint_set_of: tuple[int, ...]  # per pool, its index in taint_sets
    allocatable_pools: tuple[
        Pool, ...
    ]  # the first pool of each distinct allocatable (and unknowns)
    allocatable_of: tuple[int, ...]  # per pool, its index in allocatable_pools
    # label -> per pool value (None: lacks it; requirements: the value differs by node)
    label_columns: Mapping[str, tuple[str | tuple[LabelRequirement, ...] | None, ...]]
    by_label: Mapping[tuple[str, str], tuple[Pool, ...]]  # (label, value) -> pools
    advertised: frozenset[str]  # every resource some pool advertises

    @classmethod
    def of(cls, pools: tuple[Pool, ...]) -> "PoolIndex":
        """Index `pools`."""
        taint_sets: dict[tuple[Taint, ...], int] = {}
        allocatables: dict[tuple[frozenset[tuple[str, Decimal]], bool, frozenset[str]], int] = {}
        allocatable_pools: list[Pool] = []
        allocatable_of = []
        by_label: dict[tuple[str, str], list[Pool]] = {}
        for pool in pools:
            taint_sets.setdefault(pool.taints, len(taint_sets))
            # What a node is judged on: what it lists, and what it may have unlisted (two
            # pools that list nothing differ when one's instance type is not known).
            shape = (
                frozenset(pool.allocatable.items()),
                pool.allocatable_unknown,
                pool.unknown_amounts,
            )
            if shape not in allocatables:
                allocatables[shape] = len(allocatable_pools)
                allocatable_pools.append(pool)
            allocatable_of.append(allocatables[shape])
            for item in pool.labels.items():
                by_label.setdefault(item, []).append(pool)
            for key, value in _listed_values(pool):
                by_label.setdefault((key, value), []).append(pool)
        labels = dict.fromkeys(
            [label for pool in pools for label in pool.labels]
            + [r.key for pool in pools for r in pool.label_requirements]
        )
        return cls(
            pools=pools,
            taint_sets=tuple(taint_sets),
            taint_set_of=tuple(taint_sets[pool.taints] for pool in pools),
            allocatable_pools=tuple(allocatable_pools),
            allocatable_of=tuple(allocatable_of),
            label_columns={k: tuple(pool.label_domain(k) for pool in pools) for k in labels},
            by_label={item: tuple(found) for item, found in by_label.items()},
            advertised=frozenset(name for pool in pools for name in pool.allocatable),
        )

    def column(self, label: str) -> tuple[str | tuple[LabelRequirement, ...] | None, ...]:
        """Each pool's `label_domain(label)`, in pool order."""
        return self.label_columns.get(label) or (None,) * len(self.pools)


def _listed_values(pool: Pool) -> list[tuple[str, str]]:
    """The (label, value) pairs a varying label of the pool lists and allows (`zone In [a, b]`)."""
    found = []
    for requirement in pool.label_requirements:
        domain = pool.label_domain(requirement.key)
        if requirement.operator != "In" or not isinstance(domain, tuple):
            continue
        found += [
            (requirement.key, value)
            for value in requirement.values
            if all(r.allows(value) for r in domain)
        ]
    return list(dict.fromkeys(found))


#: The classes of the cluster's other objects (gpulint.profile.objects), importable from here.
_OBJECTS = frozenset(
    {
        "ClusterQueue",
        "Condition",
        "CustomResourceDefinition",
        "FlavorQuota",
        "FlavorToleration",
        "LimitRange",
        "LimitRangeItem",
        "LocalQueue",
        "OperatorDriver",
        "PriorityClass",
        "ResourceFlavor",
        "ResourceQuota",
        "RuntimeClass",
        "ScopeRequirement",
    }
)


def __getattr__(name: str) -> object:
    """The classes of gpulint.profile.objects, defined on first use: a profile of pools alone
    (the usual pre-commit run) never makes them."""
    if name in _OBJECTS:
        from gpulint.profile import objects

        return getattr(objects, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
