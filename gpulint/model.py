"""Typed, positioned views of what the rules look at: files, documents, pods, containers.

Everything here is immutable and built once by the loader and `workloads.py`; rules read these
views and never walk raw mappings themselves. Positions are (line, column), 1-based.
A view that holds a node of the tree is a `frozen_view` (immutable, equal only to itself):
comparing whole subtrees would be slow and means nothing, and a node cannot be hashed. Plain
values (references, quantities, counts) are NamedTuples. Every run, however small, defines
these classes as it starts: a NamedTuple (`gpulint.views.NamedTuple`) costs about a twentieth
of a frozen dataclass to define, a `frozen_view` a tenth.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field
from decimal import Decimal
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from gpulint.fields import mapping_at, shown, text_of
from gpulint.quantity import parse_quantity
from gpulint.views import NamedTuple, frozen_view
from gpulint.yamltree import Pos, YMap

if TYPE_CHECKING:
    from gpulint.constraints import NodeSelectorTerm, PodAffinityTerm, Toleration

T = TypeVar("T")  # what a computation over the knowledge objects gives


class Severity(enum.IntEnum):
    """Finding severities, ordered so that `>=` means "at least as serious"."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        """The lower-case name used in config files, output and the catalogue."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """`"error"` -> Severity.ERROR; raises KeyError for an unknown name."""
        return cls[text.upper()]


class ObjectRef(NamedTuple):
    """Which Kubernetes object a finding is about."""

    api_version: str
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}"


class IssueKind(enum.Enum):
    """Problems the loader finds while reading a file (GPU000, GPU005, GPU008, GPU014,
    GPU030)."""

    SYNTAX = "syntax"
    NOT_A_MAPPING = "not-a-mapping"
    DUPLICATE_KEY = "duplicate-key"
    MISSING_NAME = "missing-name"
    NOT_UTF8 = "not-utf8"
    UNREADABLE = "unreadable"
    MALFORMED = "malformed"  # a field of the wrong type, which the API server refuses
    UNRENDERED_TEMPLATE = "unrendered-template"
    ENV_TEMPLATE = "env-template"  # envsubst placeholders where the API needs a value
    FILL_IN = "fill-in"  # a sample's values to fill in (`<instance-type>`) where it needs one
    NOT_RENDERED = "not-rendered"  # a chart or overlay its tool could not render


class LoadIssue(NamedTuple):
    """A problem found while loading, at a position in a file."""

    kind: IssueKind
    file: SourceFile
    pos: Pos
    message: str
    document: Document | None = None
    fix: str | None = None  # what to do, when more precise than the rule's own fix


class Suppression(NamedTuple):
    """An inline `# gpulint: ignore[CODE-or-name,...: reason]` comment.

    No selectors means every code; a `problem` (what is wrong with how it is written) means
    it suppresses nothing and is reported instead.
    """

    line: int
    column: int
    selectors: tuple[str, ...]  # codes, code prefixes or rule names, as written
    reason: str = ""
    problem: str | None = None


@frozen_view
class SourceFile:
    """One input file (or stdin) as it is reported."""

    path: str
    suppressions: Mapping[int, Suppression] = field(default_factory=dict)


#: The Namespace annotation whose tolerations the PodTolerationRestriction admission plugin
#: gives every pod of the namespace (kubernetes plugin/pkg/admission/podtolerationrestriction).
NAMESPACE_TOLERATIONS = "scheduler.alpha.kubernetes.io/defaultTolerations"
#: The ConfigMap of Knative Serving's feature flags (in `knative-serving`).
KNATIVE_FEATURES = "config-features"


@frozen_view
class Document:
    """One Kubernetes object: a YAML document, or an item of a `kind: List`."""

    file: SourceFile
    obj: YMap
    ref: ObjectRef
    source: str | None = None  # the Helm `# Source:` template this object was rendered from

    @property
    def kind_pos(self) -> Pos:
        """Where the object's `kind:` value is written (suppression comments may sit there)."""
        return self.obj.pos_of_value("kind")

    @cached_property
    def annotations(self) -> YMap:
        """metadata.annotations, or an empty mapping."""
        return mapping_at(self.obj, "metadata", "annotations")


@frozen_view
class DocumentKey:
    """A Document without its tree: enough to report a finding on it and to suppress one.

    What outlives a file's tree (autoscalers, facts for corpus-wide rules) points at its
    object with one of these.
    """

    file: SourceFile
    ref: ObjectRef
    source: str | None
    kind_pos: Pos

    @classmethod
    def of(cls, document: Document) -> DocumentKey:
        """The key of `document`."""
        return cls(document.file, document.ref, document.source, document.kind_pos)


#: What a finding can point at: a Document, or the key of one whose tree is gone.
DocumentLike = Document | DocumentKey


class Knowledge(tuple):  # type: ignore[type-arg]  (a tuple[Document, ...])
    """The knowledge objects of a run (PriorityClasses, ResourceQuotas, LimitRanges, DRA
    objects, CRDs, ... of every input), in input order.

    Every file's checks read them: what is drawn from them (the objects of a kind, an index of
    the CRDs) is computed once per run and kept here, not once per file, which would cost a
    run time in the square of its files.
    """

    def __new__(cls, documents: Iterable[Document] = ()) -> Knowledge:
        self = super().__new__(cls, documents)
        self._drawn: dict[object, Any] = {}
        return self

    def __reduce__(self) -> tuple[type[Knowledge], tuple[tuple[Document, ...]]]:
        # Sent to worker processes and stored without what was drawn from it.
        return (Knowledge, (tuple(self),))

    def drawn(self, compute: Callable[[Knowledge], T]) -> T:
        """`compute(self)`, computed once: `compute` must depend on the objects alone."""
        try:
            return self._drawn[compute]  # type: ignore[no-any-return]
        except KeyError:
            found = self._drawn[compute] = compute(self)
            return found

    def of_kind(self, *kinds: str) -> tuple[Document, ...]:
        """The objects of `kinds`, in input order."""
        key = ("kind", kinds)
        found = self._drawn.get(key)
        if found is None:
            wanted = frozenset(kinds)
            found = self._drawn[key] = tuple(d for d in self if d.ref.kind in wanted)
        return found  # type: ignore[no-any-return]


def of_kind(documents: Iterable[Document], *kinds: str) -> tuple[Document, ...]:
    """The documents of `kinds`, in order; of a run's `Knowledge`, from its index."""
    if isinstance(documents, Knowledge):
        return documents.of_kind(*kinds)
    wanted = frozenset(kinds)
    return tuple(d for d in documents if d.ref.kind in wanted)


def drawn(documents: Iterable[Document], compute: Callable[[Any], T]) -> T:
    """`compute(documents)`, computed once per run when `documents` is a run's `Knowledge`."""
    if isinstance(documents, Knowledge):
        return documents.drawn(compute)
    return compute(documents)


class ContainerRole(enum.Enum):
    """Where a container is declared; decides how its requests count for the pod."""

    APP = "container"
    INIT = "initContainer"
    SIDECAR = "sidecar"  # an initContainer with restartPolicy: Always
    EPHEMERAL = "ephemeralContainer"


class Quantity(NamedTuple):
    """A resource amount as written (`raw`), parsed (`amount`, None if invalid), and where."""

    resource: str
    raw: Any
    amount: Decimal | None
    key_pos: Pos
    value_pos: Pos
    # The envsubst placeholder an accelerator amount holds (`${GPUS}`): `amount` is then the
    # fewest it can be, one (gpulint.workloads).
    placeholder: str | None = None

    @property
    def shown(self) -> str:
        """The value as written, safe to quote in a message."""
        return shown(self.raw)


@frozen_view
class Resources:
    """A container's `resources:` block."""

    requests: Mapping[str, Quantity]
    limits: Mapping[str, Quantity]
    node: YMap | None
    pos: Pos

    def effective_requests(self) -> dict[str, Decimal]:
        """Requests after API defaulting: a missing request is copied from its limit."""
        result = {name: q.amount for name, q in self.limits.items() if q.amount is not None}
        for name, q in self.requests.items():
            if q.amount is not None:
                result[name] = q.amount
        return result


@frozen_view
class Container:
    """One container, init container, sidecar or ephemeral container of a pod template."""

    name: str
    role: ContainerRole
    index: int
    node: YMap
    pos: Pos
    resources: Resources
    # Fields its API has beside a Kubernetes container's (Argo `script:`: `source`).
    own_fields: tuple[str, ...] = ()

    @property
    def field_path(self) -> str:
        """API-style path such as `initContainers[1]`, used in messages."""
        return f"{_LIST_NAMES[self.role]}[{self.index}]"


#: The resources a pod's QoS class is computed from.
QOS_RESOURCES = frozenset({"cpu", "memory"})
_LIST_NAMES = {
    ContainerRole.APP: "containers",
    ContainerRole.INIT: "initContainers",
    ContainerRole.SIDECAR: "initContainers",
    ContainerRole.EPHEMERAL: "ephemeralContainers",
}


@frozen_view
class PodTemplate:
    """A pod template (or a bare Pod) with its containers and placement constraints."""

    document: Document
    node: YMap  # the mapping that holds `metadata` and `spec`
    spec: YMap
    containers: tuple[Container, ...]
    role: str | None = None  # the replica role for workloads with several templates
    # How many pods of this template run at once (None: one per eligible node, a DaemonSet).
    replicas: ReplicaCount | None = None
    # The fewest pods of this role a gang needs at once (Ray worker minReplicas, Volcano task
    # minAvailable), when the workload says so.
    gang_min: ReplicaCount | None = None
    role_node: YMap | None = None  # the mapping that declares the role (name, count, template)
    # An operator completes the pod's resources (KServe's default cpu/memory, Knative's
    # queue-proxy sidecar) or writes them itself: the pod is never BestEffort.
    operator_resources: bool = False
    # The priority class its pods get when the template names none, and where the workload
    # writes it (a Volcano Job's `spec.priorityClassName`).
    inherited_priority_class: tuple[str, Pos] | None = None
    # The object its operator completes the pod from that is not among the inputs (a Seldon
    # Server's ServerConfig), as messages name it, and where the workload names it: what it
    # adds (tolerations above all) is unknown. A third item says what makes a verdict certain
    # when no input can (an Armada server's configuration); else it is checking that object.
    completed_by: tuple[str, Pos] | tuple[str, Pos, str] | None = None
    # An operator adds an init container that requests cpu and memory (a PaddleJob's
    # `coord-paddle`): the pod is never BestEffort, though its app containers still request
    # only what the template writes (an HPA's utilization reads those).
    operator_init_container: bool = False

    @cached_property
    def annotations(self) -> YMap:
        """The template's metadata.annotations (for a Pod, the object's own)."""
        return mapping_at(self.node, "metadata", "annotations")

    @property
    def runs_no_pods(self) -> bool:
        """Whether it is a template other objects run (a ServerConfig, a ServingRuntime) and no
        pod of its own: a role that runs none counts zero pods, written at no field."""
        return self.replicas is not None and self.replicas.value == 0 and not self.replicas.field

    @cached_property
    def unknown_amounts(self) -> Mapping[str, str]:
        """The accelerator resources whose amount an envsubst placeholder holds, with it
        (`nvidia.com/gpu: ${N}`): the pod asks for them, how many is not known (the loader
        counts the fewest, one; gpulint.placeholders leaves what depends on it not judged)."""
        return {
            name: q.placeholder
            for c in self.containers
            for quantities in (c.resources.limits, c.resources.requests)
            for name, q in quantities.items()
            if q.placeholder is not None
        }

    @cached_property
    def app_containers(self) -> tuple[Container, ...]:
        """Containers that run for the pod's whole life: app containers and sidecars."""
        return tuple(
            c for c in self.containers if c.role in (ContainerRole.APP, ContainerRole.SIDECAR)
        )

    @cached_property
    def best_effort(self) -> bool:
        """QoS class BestEffort: no container asks for cpu or memory (GPUs do not count), nor
        the pod itself: pod-level `resources` (PodLevelResources, beta and on by default from
        Kubernetes 1.34) decide the QoS class when they are set."""
        if self.operator_resources or self.operator_init_container:
            return False
        pod_level = self.spec.get("resources")
        if isinstance(pod_level, YMap) and any(
            isinstance(section := pod_level.get(key), YMap) and section.keys() & QOS_RESOURCES
            for key in ("requests", "limits")
        ):
            return False
        return not any(
            name in QOS_RESOURCES
            for c in self.containers
            if c.role is not ContainerRole.EPHEMERAL
            for name in (*c.resources.requests, *c.resources.limits)
        )

    @cached_property
    def effective_requests(self) -> dict[str, Decimal]:
        """The pod's request per resource, computed the way the scheduler and quota do."""
        return pod_requests(self.containers, self.spec)

    @cached_property
    def app_requests(self) -> dict[str, Decimal]:
        """The sum, per resource, of what the app containers and sidecars request (limits
        standing in for missing requests): what the pod holds once it runs. Init containers
        and the pod's overhead are left out; `effective_requests` counts them as the
        scheduler does, so the two differ when an init container asks for more."""
        total: dict[str, Decimal] = {}
        for container in self.app_containers:
            add_amounts(total, container.resources.effective_requests())
        return total

    @cached_property
    def node_selector(self) -> Mapping[str, str]:
        """spec.nodeSelector as strings (positions via `self.spec['nodeSelector']`)."""
        selector = self.spec.get("nodeSelector")
        if not isinstance(selector, YMap):
            return {}
        return {str(k): text_of(v) for k, v in selector.items()}

    @cached_property
    def tolerations(self) -> tuple[Toleration, ...]:
        """spec.tolerations as typed values."""
        from gpulint import constraints  # only rules about nodes and pools read them

        return constraints.tolerations(self.spec)

    @property
    def tolerations_pos(self) -> Pos:
        """Where `tolerations:` is written, or the `spec:` key when the pod writes none (where
        a finding about what it does not tolerate points)."""
        if "tolerations" in self.spec:
            return self.spec.pos_of_key("tolerations")
        return self.node.pos_of_key("spec")

    @cached_property
    def required_node_affinity(self) -> tuple[NodeSelectorTerm, ...] | None:
        """The required node affinity terms (OR'ed), or None when there is none."""
        from gpulint import constraints

        return constraints.required_node_affinity(self.spec)

    @property
    def priority_class_name(self) -> str | None:
        """The priority class its pods get: spec.priorityClassName, else the one the workload
        gives pods that name none; None when neither is set."""
        own = self.own_priority_class_name
        if own is None and self.inherited_priority_class is not None:
            return self.inherited_priority_class[0]
        return own

    @property
    def node_name(self) -> str | None:
        """spec.nodeName, when the pod is bound to a node by name and never scheduled."""
        return text_of(self.spec.get("nodeName")) or None

    @property
    def own_priority_class_name(self) -> str | None:
        """The template's own spec.priorityClassName, when set."""
        value = self.spec.get("priorityClassName")
        return text_of(value) or None

    @property
    def priority_class_pos(self) -> Pos:
        """Where the class of `priority_class_name` is written (the template's spec when
        neither names one)."""
        if self.own_priority_class_name is None and self.inherited_priority_class is not None:
            return self.inherited_priority_class[1]
        return self.spec.pos_of_value("priorityClassName")

    @property
    def runtime_class_name(self) -> str | None:
        """spec.runtimeClassName, when set to a name (None: unset, empty or not a string)."""
        value = self.spec.get("runtimeClassName")
        return value if isinstance(value, str) and value else None

    @property
    def runtime_class_pos(self) -> Pos:
        """Where the value of spec.runtimeClassName is written."""
        return self.spec.pos_of_value("runtimeClassName")

    @cached_property
    def labels(self) -> Mapping[str, str]:
        """The template's metadata.labels as strings (the labels its pods get)."""
        return {str(k): text_of(v) for k, v in mapping_at(self.node, "metadata", "labels").items()}

    @cached_property
    def required_pod_affinity(self) -> tuple[PodAffinityTerm, ...]:
        """podAffinity.requiredDuringSchedulingIgnoredDuringExecution terms."""
        from gpulint import constraints

        return constraints.required_pod_affinity(self.spec)

    @cached_property
    def required_pod_anti_affinity(self) -> tuple[PodAffinityTerm, ...]:
        """podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution terms."""
        from gpulint import constraints

        return constraints.required_pod_anti_affinity(self.spec)


class ManagedElsewhere(NamedTuple):
    """A workload whose `managedBy` names a controller other than its kind's own: that
    controller, not this cluster's, decides where its pods run (MultiKueue's worker clusters,
    a federation's member clusters)."""

    controller: str  # the value written: `kueue.x-k8s.io/multikueue`
    field: str  # where, from the object root: `spec.managedBy`
    pos: Pos
    # The Kubernetes release from which the API server keeps the field and the built-in
    # controller leaves such a workload alone by default (a Job's, beta in 1.32); None when
    # the kind's operator honours it whatever the release.
    honoured_from: tuple[int, int] | None = None


class ReplicaCount(NamedTuple):
    """How many pods a workload runs at once, and where that number is written."""

    value: int
    field: str  # "replicas", "parallelism", ...
    pos: Pos | None  # None when the count is the default
    # The counts multiplied into `value` (JobSet replicas × Job parallelism); empty when the
    # count is one field.
    factors: tuple[ReplicaCount, ...] = ()
    # The placeholder (`$REPLICAS`) the field holds instead of a number: the count is unknown
    # and `value` is only the kind's default.
    unknown: str | None = None
    # Subtracted from the field's value to give `value` (a LeaderWorkerSet's `size` counts
    # its leader, which is not a worker).
    less: int = 0

    def describe(self) -> str:
        """`replicas: 3`, `replicas 1 by default`, `replicas: 2 × parallelism: 4`,
        `replicas: 3 × (size: 4 - 1)`."""
        return " × ".join(_factor_text(p) for p in self.factors or (self,))

    @classmethod
    def product(cls, factors: Sequence[ReplicaCount]) -> ReplicaCount:
        """The count `factors` multiply to (one pod for none), named by the first written one
        (the field to change), unknown when one of them is."""
        if not factors:
            return cls(1, "", None)
        if len(factors) == 1:
            return factors[0]
        value = 1
        for factor in factors:
            value *= factor.value
        lead = next((f for f in factors if f.pos is not None), factors[0])
        unknown = next((f.unknown for f in factors if f.unknown is not None), None)
        return cls(value, lead.field, lead.pos, tuple(factors), unknown)


def _factor_text(count: ReplicaCount) -> str:
    written = count.value + count.less
    text = (
        f"{count.field}: {written}"
        if count.pos is not None
        else f"{count.field} {written} by default"
    )
    return f"({text} - {count.less})" if count.less else text


class UnreadPart(NamedTuple):
    """A part of a workload whose pods gpulint cannot read: why, and where."""

    reason: str  # completes "gpulint did not read its pods: ..."
    pos: Pos
    accelerators: bool = True  # whether that part runs accelerator pods, as far as known
    fix: str | None = None  # what to do, when not the usual (check the pods it creates)
    # The mapping whose accelerator requests this part already explains (a ModelMesh
    # predictor's `resources`): they are not reported again as requests no pod reads.
    explains: YMap | None = None


class RolePart(NamedTuple):
    """Where one named role of a workload is written."""

    role: str
    node: YMap  # the mapping that declares the role
    template: YMap | None  # its pod template, when that is a mapping


@frozen_view
class Workload:
    """A Kubernetes object that creates pods: its templates and replica count."""

    document: Document
    templates: tuple[PodTemplate, ...]
    replicas: ReplicaCount | None  # None for kinds that run one pod per node (DaemonSet)
    # A gang: the workload's pods are useless until all of them (or `gang_min`) run at once.
    gang: bool = False
    gang_min: ReplicaCount | None = None  # fewest pods of all roles together (minAvailable)
    # Pods an operator builds that gpulint cannot, and declared pod paths that found nothing.
    unread: tuple[UnreadPart, ...] = ()
    # Named roles whose pod template is written but not readable (a field of the wrong type on
    # the way to its pod spec): a finding in one still names its role.
    unread_roles: tuple[RolePart, ...] = ()
    # Why how many pods it runs is not known (a count field holding `$REPLICAS`, a kind whose
    # pod spec was found only by its shape), worded to complete "not judged: ..."; None when
    # known. Checks that count pods (capacity, quota, Kueue) leave such a workload out.
    unknown_count: str | None = None
    # Its kind is not modelled: its pod templates were found by their shape (GPU009).
    by_shape: bool = False
    # `gang_min` is met with the first pods in role order (Volcano), not the cheapest.
    gang_min_in_order: bool = False
    # Each of its groups (the first factor of every template's count, a LeaderWorkerSet's
    # `replicas`) is a gang of its own: the groups start, and an HPA scales them, one by one.
    group_gang: bool = False
    # What its operator decides from fields whose effect gpulint does not judge (a pod
    # affinity to another workload's pods), each completing "{ref}: ..." with where it is
    # written (GPU013).
    # A note may carry its own fix text as a third item.
    unjudged: tuple[tuple[str, Pos] | tuple[str, Pos, str], ...] = ()
    # The controller its `managedBy` hands it to, when not its kind's own.
    managed_elsewhere: ManagedElsewhere | None = None

    @property
    def kind(self) -> str:
        """The object's kind."""
        return self.document.ref.kind

    @cached_property
    def active_deadline(self) -> ReplicaCount | None:
        """The Job's `activeDeadlineSeconds` (a CronJob's in its jobTemplate), when written.

        The Job clock starts before its pods are scheduled, so Pending time counts against it.
        """
        if self.kind == "Job":
            spec = mapping_at(self.document.obj, "spec")
        elif self.kind == "CronJob":
            spec = mapping_at(self.document.obj, "spec", "jobTemplate", "spec")
        else:
            return None
        value = spec.get("activeDeadlineSeconds")
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        return ReplicaCount(
            value, "activeDeadlineSeconds", spec.pos_of_key("activeDeadlineSeconds")
        )


def pod_requests(containers: tuple[Container, ...], spec: YMap) -> dict[str, Decimal]:
    """Effective pod request per resource (component-helpers PodRequests).

    App containers are summed; restartable init containers (sidecars) are added and also stay
    beside every later init container; each plain init container counts together with the
    sidecars started before it; the result is the per-resource max of the two.
    """
    result: dict[str, Decimal] = {}
    sidecars: dict[str, Decimal] = {}
    init_max: dict[str, Decimal] = {}
    for container in containers:
        requests = container.resources.effective_requests()
        if container.role is ContainerRole.APP:
            add_amounts(result, requests)
        elif container.role is ContainerRole.SIDECAR:
            add_amounts(result, requests)
            add_amounts(sidecars, requests)
            _max(init_max, sidecars)
        elif container.role is ContainerRole.INIT:
            use = dict(sidecars)
            add_amounts(use, requests)
            _max(init_max, use)
    _max(result, init_max)
    overhead = spec.get("overhead")
    if isinstance(overhead, YMap):
        add_amounts(
            result,
            {k: a for k, v in overhead.items() if (a := parse_quantity(v)) is not None},
        )
    return result


def add_amounts(target: dict[str, Decimal], extra: Mapping[str, Decimal]) -> None:
    """Add each amount of `extra` to `target`, per resource."""
    for name, amount in extra.items():
        target[name] = target.get(name, Decimal(0)) + amount


def _max(target: dict[str, Decimal], other: Mapping[str, Decimal]) -> None:
    for name, amount in other.items():
        if amount > target.get(name, Decimal(0)):
            target[name] = amount
