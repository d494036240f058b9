"""The cluster's objects a profile may list besides its pools: ResourceQuotas, LimitRanges,
PriorityClasses, RuntimeClasses, Kueue's queues and flavors, CustomResourceDefinitions, the GPU
Operator's drivers, and the conditions an importer leaves to the merge.

gpulint.profile.model gives them under its own name too; they are kept apart so that a run
whose profile lists none of them (pools alone, the usual pre-commit run) does not define their
thirteen classes at start.
"""

from collections.abc import Mapping
from decimal import Decimal

from gpulint.views import NamedTuple


class ScopeRequirement(NamedTuple):
    """One `scopeSelector.matchExpressions` entry of a ResourceQuota."""

    scope_name: str
    operator: str
    values: tuple[str, ...] = ()


class ResourceQuota(NamedTuple):
    """A namespace ResourceQuota: hard limits and, when known, current usage."""

    namespace: str
    name: str
    hard: Mapping[str, Decimal] = {}
    used: Mapping[str, Decimal] = {}
    scopes: tuple[str, ...] = ()
    scope_selector: tuple[ScopeRequirement, ...] = ()


class LimitRangeItem(NamedTuple):
    """One `spec.limits` entry of a LimitRange (`type` Container, Pod, ...)."""

    type: str
    max: Mapping[str, Decimal] = {}
    min: Mapping[str, Decimal] = {}
    default: Mapping[str, Decimal] = {}
    default_request: Mapping[str, Decimal] = {}
    max_limit_request_ratio: Mapping[str, Decimal] = {}


class LimitRange(NamedTuple):
    """A namespace LimitRange."""

    namespace: str
    name: str
    items: tuple[LimitRangeItem, ...] = ()


class PriorityClass(NamedTuple):
    """A PriorityClass."""

    name: str
    value: int = 0
    global_default: bool = False
    preemption_policy: str = "PreemptLowerPriority"


class FlavorQuota(NamedTuple):
    """One flavor of a Kueue ClusterQueue resource group, with its quota per resource."""

    name: str
    nominal: Mapping[str, Decimal] = {}
    borrowing_limit: Mapping[str, Decimal] = {}  # absent: unlimited
    # The coveredResources of its resource group: Kueue assigns each pod set one flavor per
    # group whose resources it requests. Empty: the queue's whole `covered` (one group).
    covers: frozenset[str] = frozenset()


class ClusterQueue(NamedTuple):
    """A Kueue ClusterQueue: the resources it covers and each flavor's nominal quota."""

    name: str
    covered: frozenset[str] = frozenset()  # coveredResources of every resource group
    flavors: tuple[FlavorQuota, ...] = ()
    cohort: str | None = None  # a queue in a cohort may borrow unused quota of the others


class LocalQueue(NamedTuple):
    """A Kueue LocalQueue: what `kueue.x-k8s.io/queue-name` names, in one namespace."""

    namespace: str
    name: str
    cluster_queue: str


class FlavorToleration(NamedTuple):
    """One toleration a Kueue ResourceFlavor writes into the pods it admits."""

    key: str
    operator: str
    value: str
    effect: str


class ResourceFlavor(NamedTuple):
    """A Kueue ResourceFlavor: Kueue writes its nodeLabels into the nodeSelector and its
    tolerations into the tolerations of every pod it admits to the flavor."""

    name: str
    node_labels: Mapping[str, str] = {}
    tolerations: tuple[FlavorToleration, ...] = ()


class RuntimeClass(NamedTuple):
    """A node.k8s.io RuntimeClass: what the RuntimeClass admission plugin writes into every pod
    that names it (its scheduling nodeSelector and tolerations, its overhead)."""

    name: str
    handler: str = ""
    node_selector: Mapping[str, str] = {}
    # Same four fields as a flavor's: what the scheduler's taint filter reads of a toleration.
    tolerations: tuple[FlavorToleration, ...] = ()
    overhead: Mapping[str, Decimal] = {}  # overhead.podFixed


class CustomResourceDefinition(NamedTuple):
    """A CustomResourceDefinition of a cluster: its name and its `spec` as JSON text (hashable,
    and read only when an input has one of its kinds)."""

    name: str
    spec: str


class Condition(NamedTuple):
    """An assumption that holds depending on whether some input defines an object.

    A NodePool in one file may name an EC2NodeClass in another: whether it is missing is known
    only once every input of the cluster is read, so the importer states the condition and the
    merge decides it.
    """

    key: str  # an object an input may define: `EC2NodeClass/gpu`
    if_defined: bool  # the assumption holds when the object is defined (True) or absent (False)
    text: str


class OperatorDriver(NamedTuple):
    """A driver the NVIDIA GPU Operator installs: on every NVIDIA pool, or on the nodes its
    nodeSelector picks (an NVIDIADriver object)."""

    version: str  # `570.124.06`
    origin: str  # how it is known, for messages
    node_selector: Mapping[str, str] = {}

    def applies_to(self, labels: Mapping[str, str]) -> bool:
        """Whether nodes with `labels` get this driver."""
        return all(labels.get(key) == value for key, value in self.node_selector.items())
