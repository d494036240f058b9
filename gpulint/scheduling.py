"""Where a pod template can run: the scheduler's filters, applied to the pools of a profile.

Pure predicates for nodeSelector, required node affinity, taints and tolerations (with the
ExtendedResourceToleration admission plugin), and resource fit, plus `place()`, which applies
them to every pool and keeps, for each pool that is rejected, why. A pool stands for all its
nodes: they share labels, taints and per-node allocatable, so one verdict covers them.
"""

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from functools import cached_property

from gpulint.accelerators import is_extended_resource, is_extender_resource
from gpulint.constraints import (
    NodeSelectorTerm,
    PodAffinityTerm,
    SelectorRequirement,
    Toleration,
)
from gpulint.gpus import is_gpu_resource
from gpulint.model import ContainerRole, PodTemplate, add_amounts
from gpulint.profile.model import ClusterProfile, LabelRequirement, Pool, Taint
from gpulint.quantity import format_quantity
from gpulint.views import NamedTuple, frozen_view
from gpulint.yamltree import Pos, YMap

#: Effects the scheduler filters on; PreferNoSchedule only lowers a node's score.
BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
#: What keeps a pod bound by spec.nodeName off its node: the scheduler never sees it, and the
#: kubelet's admission checks only NoExecute taints (pkg/kubelet/lifecycle/predicate.go).
BOUND_BLOCKING_EFFECTS = frozenset({"NoExecute"})
# Every node has these; a profile that leaves them out does not know them, so they do not
# constrain. So do huge pages (`hugepages-2Mi`), which the kubelet reports on every node, 0 or
# what the machine image reserves: a pool built from infrastructure code does not know them.
# Any other resource a pool does not list is one its nodes do not have.
_ALWAYS_PRESENT = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})
_HUGE_PAGES = "hugepages-"
_INT64 = r"[+-]?[0-9]+\Z"  # compiled on first use: only `Gt` and `Lt` compare numbers
_INT64_MAX = 2**63 - 1
_NODE_NAME_FIELD = "metadata.name"


class Filter:
    """The scheduler's filter plugins gpulint models, in the order the scheduler runs them: the
    names `PoolFit.failed` gives, as the scheduler calls them.

    Names of a plain class rather than an `enum.Enum`: defining an Enum costs every run with
    a profile about a million instructions at start, and nothing here needs more than a name.
    """

    TAINTS = "TaintToleration"
    NODE_AFFINITY = "NodeAffinity"
    RESOURCES = "NodeResourcesFit"


# ---------------------------------------------------------------------------------------------
# nodeSelector and required node affinity


def requirement_matches(requirement: SelectorRequirement, labels: Mapping[str, str]) -> bool:
    """Whether node labels satisfy one `matchExpressions` entry (labels.Requirement.Matches)."""
    key, operator, values = requirement.key, requirement.operator, requirement.values
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        # Nodes without the label match NotIn.
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt"):
        if key not in labels or len(values) != 1:
            return False
        have, wanted = _int64(labels[key]), _int64(values[0])
        if have is None or wanted is None:
            return False
        return have > wanted if operator == "Gt" else have < wanted
    return False


def _int64(text: str) -> int | None:
    if not re.match(_INT64, text):
        return None
    number = int(text)
    return number if -_INT64_MAX - 1 <= number <= _INT64_MAX else None


def can_carry(varying: Sequence[LabelRequirement], wanted: Sequence[SelectorRequirement]) -> bool:
    """Whether a pool whose nodes' label meets `varying` can have a node whose value satisfies
    every pod requirement in `wanted` (all on that one label).

    Each node carries one value, so `zone In [a, b]` satisfies `zone=a` and `zone NotIn [a]`
    but not `zone=c` nor `zone DoesNotExist`.
    """
    return any(
        all(r.allows(value) for r in varying)
        and all(requirement_matches(w, {} if value is None else {w.key: value}) for w in wanted)
        for value in _decisive_values(varying, wanted)
    )


def _decisive_values(
    varying: Sequence[LabelRequirement], wanted: Sequence[SelectorRequirement]
) -> Iterator[str | None]:
    """Values among which one satisfies both sides if any does: absence, every listed value,
    one listed nowhere, and integers next to each bound (enough to step over listed ones)."""
    requirements = (*varying, *wanted)
    listed = {v for r in requirements if r.operator in ("In", "NotIn") for v in r.values}
    yield None
    yield from sorted(listed)
    yield "x" * (max(map(len, listed), default=0) + 1)
    for requirement in requirements:
        if requirement.operator not in ("Gt", "Lt", "Gte", "Lte") or not requirement.values:
            continue
        bound = _int64(requirement.values[0])
        if bound is None:
            continue
        for step in range(len(listed) + 2):
            yield str(bound + step)
            yield str(bound - step)


def field_requirement_matches(requirement: SelectorRequirement) -> bool | None:
    """A `matchFields` entry against a pool: None when it names nodes, which a pool cannot know.

    Only `metadata.name` with In/NotIn is valid; anything else matches no node.
    """
    if requirement.key == _NODE_NAME_FIELD and requirement.operator in ("In", "NotIn"):
        return None
    return False


class SelectorMismatch(NamedTuple):
    """Why a pool's nodes fail the pod's nodeSelector or required node affinity."""

    detail: str  # `nodeSelector disktype=ssd (pool has hdd)`
    pos: Pos  # the selector key or affinity expression responsible
    key: str = ""  # the node label (or field) it is about; "" for an empty term
    decidable: bool = True  # False: it depends on node names, which a profile does not know


#: Deprecated labels still set beside their stable names, with the same values: the OS and
#: architecture by the kubelet (`initialNode`), the instance type, zone and region by every
#: cloud's node controller (k8s.io/cloud-provider). By deprecated name.
_STABLE_TWIN = {
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}


def _with_twin(
    labels: Mapping[str, str], varying: Sequence[LabelRequirement], key: str
) -> tuple[Mapping[str, str], Sequence[LabelRequirement]]:
    """The pool's labels as a selector on `key` sees them: a pool that states a stable label
    and not its deprecated twin (a profile written from infrastructure code names the stable
    one) has the twin with the same values, as every node the kubelet and a cloud's node
    controller register does."""
    stable = _STABLE_TWIN.get(key)
    if stable is None or key in labels or any(r.key == key for r in varying):
        return labels, varying
    if stable in labels:
        return {**labels, key: labels[stable]}, varying
    twins = [LabelRequirement(key, r.operator, r.values) for r in varying if r.key == stable]
    return (labels, [*varying, *twins]) if twins else (labels, varying)


def _satisfiable(
    labels: Mapping[str, str],
    varying: Sequence[LabelRequirement],
    requirements: Sequence[SelectorRequirement],
) -> bool:
    """Whether some node of the pool meets every requirement of `requirements` (one key)."""
    key = requirements[-1].key
    labels, varying = _with_twin(labels, varying, key)
    domain = [r for r in varying if r.key == key]
    if key in labels or not domain:
        return all(requirement_matches(r, labels) for r in requirements)
    return can_carry(domain, requirements)


def term_mismatch(
    term: NodeSelectorTerm,
    labels: Mapping[str, str],
    varying: Sequence[LabelRequirement] = (),
    given: Sequence[SelectorRequirement] = (),
) -> SelectorMismatch | None:
    """Why one nodeSelectorTerm fails for a pool (expressions and fields are AND'ed).

    `varying`: the pool's requirements on labels that differ by node; `given`: the pod's
    nodeSelector, which one node must meet together with the term.
    """
    if not term.match_expressions and not term.match_fields:
        return SelectorMismatch("an empty nodeSelectorTerm matches no node", term.pos)
    held = list(given)
    for requirement in term.match_expressions:
        earlier = [r for r in held if r.key == requirement.key]
        held.append(requirement)
        if not _satisfiable(labels, varying, [*earlier, requirement]):
            state = _label_state(labels, requirement.key, varying)
            if earlier and _satisfiable(labels, varying, [requirement]):
                # Each alone is met by some node, but a node has one value of the label.
                together = ", ".join(
                    f"nodeSelector {r.key}={r.values[0]}"
                    if isinstance(r, _SelectorEntry)
                    else describe_requirement(r)
                    for r in earlier
                )
                state += f"; no single value also meets {together}"
            return SelectorMismatch(
                f"required affinity {describe_requirement(requirement)} ({state})",
                requirement.pos,
                requirement.key,
            )
    for requirement in term.match_fields:
        verdict = field_requirement_matches(requirement)
        if verdict is False:
            return SelectorMismatch(
                f"matchFields key `{requirement.key}` {requirement.operator} is not a valid "
                f"field selector (only metadata.name with In or NotIn)",
                requirement.pos,
                requirement.key,
            )
        if verdict is None:
            return SelectorMismatch(
                f"matchFields {describe_requirement(requirement)} pins node names, which a "
                f"pool profile cannot know",
                requirement.pos,
                requirement.key,
                decidable=False,
            )
    return None


def affinity_mismatch(
    terms: tuple[NodeSelectorTerm, ...],
    labels: Mapping[str, str],
    pos: Pos,
    varying: Sequence[LabelRequirement] = (),
    given: Sequence[SelectorRequirement] = (),
) -> SelectorMismatch | None:
    """Why no nodeSelectorTerm matches (terms are OR'ed); `pos` is used when there are none."""
    if not terms:
        return SelectorMismatch("required node affinity lists no nodeSelectorTerms", pos)
    misses = []
    for term in terms:
        miss = term_mismatch(term, labels, varying, given)
        if miss is None:
            return None
        misses.append(miss)
    undecided = [m for m in misses if not m.decidable]
    if undecided:
        return undecided[0]
    if len(misses) == 1:
        return misses[0]
    detail = "; ".join(f"term {i}: {m.detail}" for i, m in enumerate(misses, start=1))
    return SelectorMismatch(f"no nodeSelectorTerm matches ({detail})", misses[0].pos, misses[0].key)


class _SelectorEntry(SelectorRequirement):
    """A nodeSelector entry read as the requirement `key In [value]`."""


def _selector_requirements(
    template: PodTemplate, added: Mapping[str, str] = {}
) -> tuple[SelectorRequirement, ...]:
    """The pod's nodeSelector as `key In [value]` requirements, each at its key, then the
    entries admission `added` (a Kueue flavor's nodeLabels), at the pod's `spec:`."""
    selector = template.spec.get("nodeSelector")
    written = tuple(
        _SelectorEntry(
            key,
            "In",
            (wanted,),
            selector.pos_of_key(key) if isinstance(selector, YMap) else template.spec.pos,
        )
        for key, wanted in template.node_selector.items()
    )
    extra = tuple(
        _SelectorEntry(key, "In", (wanted,), template.node.pos_of_key("spec"))
        for key, wanted in added.items()
        if key not in template.node_selector
    )
    return (*written, *extra)


def selector_mismatch(
    template: PodTemplate,
    labels: Mapping[str, str],
    varying: Sequence[LabelRequirement] = (),
    added: Mapping[str, str] = {},
) -> SelectorMismatch | None:
    """Why a pool's nodes fail nodeSelector or required affinity (both must match).

    `labels` are on every node of the pool; `varying` are its requirements on labels whose
    value differs by node (`pool.label_requirements`); `added`: nodeSelector entries admission
    adds (a Kueue flavor's nodeLabels).
    """
    given = _selector_requirements(template, added)
    for requirement in given:
        if not _satisfiable(labels, varying, [requirement]):
            key, wanted = requirement.key, requirement.values[0]
            return SelectorMismatch(
                f"nodeSelector {key}={wanted} ({_label_state(labels, key, varying)})",
                requirement.pos,
                key,
            )
    terms = template.required_node_affinity
    if terms is not None:
        where = template.spec.pos_of_key("affinity")
        miss = affinity_mismatch(terms, labels, where, varying, given)
        if miss is not None:
            return miss
    return _topology_mismatch(template, labels, varying)


def _topology_mismatch(
    template: PodTemplate, labels: Mapping[str, str], varying: Sequence[LabelRequirement]
) -> SelectorMismatch | None:
    """Why a pool's nodes fail the pod's required pod affinity whatever pods run: a node
    without a term's topologyKey label is never in a domain of it, even for the first pod of
    a group with affinity to itself (the scheduler's InterPodAffinity filter)."""
    for term in template.required_pod_affinity:
        key = term.topology_key
        required = SelectorRequirement(key, "Exists", (), term.pos)
        if key and not _satisfiable(labels, varying, [required]):
            return SelectorMismatch(
                f"required pod affinity topologyKey {key} ({_label_state(labels, key, varying)})",
                term.pos,
                key,
            )
    return None


def zero_node_mismatch(
    template: PodTemplate, pool: Pool, added: Mapping[str, str] = {}
) -> SelectorMismatch | None:
    """Why cluster-autoscaler never adds a node to an empty pool for this pod: its zero-node
    template lacks a label the pod requires (`pool.template_missing_labels`), though the
    pool's nodes carry it. None when the pool has nodes, or the template matches the pod."""
    if pool.nodes > 0 or not pool.template_missing_labels:
        return None
    lacking = frozenset(pool.template_missing_labels) & frozenset(selector_keys(template, added))
    if not lacking:
        return None
    labels = {k: v for k, v in pool.labels.items() if k not in lacking}
    miss = selector_mismatch(template, labels, pool.label_requirements, added)
    if miss is None or miss.key not in lacking:
        return None
    return miss._replace(
        detail=miss.detail.replace(
            "pool lacks the label",
            "the pool has no node, and cluster-autoscaler's zero-node template lacks the label",
        )
    )


def satisfied_requirements(
    template: PodTemplate, labels: Mapping[str, str], varying: Sequence[LabelRequirement] = ()
) -> int:
    """How many nodeSelector entries and expressions of the best term these labels satisfy.

    Ranks pools that fail placement by how close they come, so a message can name the one
    selector entry that keeps the nearest pool out.
    """
    given = _selector_requirements(template)
    selected = sum(1 for r in given if _satisfiable(labels, varying, [r]))
    terms = template.required_node_affinity or ()
    best = max(
        (sum(1 for r in t.match_expressions if _satisfiable(labels, varying, [r])) for t in terms),
        default=0,
    )
    return selected + best


def has_required_placement(template: PodTemplate) -> bool:
    """Whether the pod restricts its nodes by nodeSelector or required node affinity."""
    return bool(template.node_selector) or template.required_node_affinity is not None


def describe_requirement(requirement: SelectorRequirement) -> str:
    """`key In [a, b]`, `key Exists`: a requirement as it reads in a message."""
    if requirement.operator in ("Exists", "DoesNotExist") or not requirement.values:
        return f"{requirement.key} {requirement.operator}"
    return f"{requirement.key} {requirement.operator} [{', '.join(requirement.values)}]"


def label_text(
    labels: Mapping[str, str], key: str, varying: Sequence[LabelRequirement] = ()
) -> str:
    """A pool's `key` for a message: `us-west-2a`, `one of us-west-2a, us-west-2b`, `(not set)`."""
    labels, varying = _with_twin(labels, varying, key)
    if key in labels:
        return labels[key]
    domain = [r for r in varying if r.key == key]
    if not domain:
        return "(not set)"
    if len(domain) == 1 and domain[0].operator == "In":
        values = domain[0].values
        return values[0] if len(values) == 1 else f"one of {', '.join(values)}"
    if len(domain) == 1 and domain[0].operator == "Exists":
        return "any value"
    if len(domain) == 1 and domain[0].operator == "NotIn":
        return f"any value but {', '.join(domain[0].values)}"
    return "a value with " + " and ".join(str(r).removeprefix(f"{key} ") for r in domain)


def _label_state(labels: Mapping[str, str], key: str, varying: Sequence[LabelRequirement]) -> str:
    text = label_text(labels, key, varying)
    return "pool lacks the label" if text == "(not set)" else f"pool has {text}"


# ---------------------------------------------------------------------------------------------
# Taints and tolerations


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Toleration.ToleratesTaint: empty effect = every effect, empty key = every key."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    # Lt/Gt exist only behind an alpha feature gate (off by default); unknown operators never
    # match.
    return False


def untolerated_taints(
    tolerations: Iterable[Toleration],
    taints: Iterable[Taint],
    effects: frozenset[str] = BLOCKING_EFFECTS,
) -> tuple[Taint, ...]:
    """The NoSchedule/NoExecute taints no toleration matches, in the pool's order (`effects`:
    those that keep the pod off, BOUND_BLOCKING_EFFECTS for a pod bound by nodeName)."""
    held = tuple(tolerations)
    return tuple(
        taint
        for taint in taints
        if taint.effect in effects and not any(tolerates(t, taint) for t in held)
    )


def blocking_effects(template: PodTemplate) -> frozenset[str]:
    """The taint effects that keep the pod off a node: a pod bound by spec.nodeName bypasses
    the scheduler, so only NoExecute taints, which the kubelet checks, refuse it."""
    return BOUND_BLOCKING_EFFECTS if template.node_name else BLOCKING_EFFECTS


def extended_resource_tolerations(template: PodTemplate) -> tuple[Toleration, ...]:
    """What ExtendedResourceToleration adds: `{key: <name>, Exists, NoSchedule}` per name.

    It reads the (defaulted) requests of containers and init containers only; pod-level
    resources and ephemeral containers are not inspected.
    """
    names: dict[str, None] = {}
    for container in template.containers:
        if container.role is ContainerRole.EPHEMERAL:
            continue
        for name in container.resources.effective_requests():
            if is_extended_resource(name):
                names[name] = None
    return tuple(
        Toleration(name, "Exists", "", "NoSchedule", None, template.spec.pos) for name in names
    )


def admitted_tolerations(
    template: PodTemplate, profile: ClusterProfile | None
) -> tuple[Toleration, ...]:
    """The pod's tolerations after admission: its own, plus ERT's when the cluster runs it."""
    if profile is not None and profile.extended_resource_toleration_enabled:
        return (*template.tolerations, *extended_resource_tolerations(template))
    return template.tolerations


# ---------------------------------------------------------------------------------------------
# Resource fit


class Shortfall(NamedTuple):
    """A resource one node of a pool has less of than the pod requests."""

    resource: str
    requested: Decimal
    allocatable: Decimal

    @property
    def reason(self) -> str:
        """The scheduler's wording: `Insufficient nvidia.com/gpu`, `Too many pods`."""
        return "Too many pods" if self.resource == "pods" else f"Insufficient {self.resource}"

    @property
    def detail(self) -> str:
        """The reason with the numbers: `Insufficient nvidia.com/gpu (pod requests 16, a node
        has 8)`."""
        return (
            f"{self.reason} (pod requests {format_amount(self.resource, self.requested)}, "
            f"a node has {format_amount(self.resource, self.allocatable)})"
        )


_BINARY_UNITS = (("Ti", Decimal(2**40)), ("Gi", Decimal(2**30)), ("Mi", Decimal(2**20)))


def format_amount(resource: str, amount: Decimal) -> str:
    """An amount as a manifest would write it: memory in Gi/Mi, everything else plain."""
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, size in _BINARY_UNITS:
            if amount >= size:
                return f"{format_quantity(round(amount / size, 2))}{suffix}"
    return format_quantity(amount)


def allocatable(pool: Pool, resource: str) -> Decimal:
    """Per-node allocatable of `resource`; 0 for an extended resource the pool does not list."""
    return pool.allocatable.get(resource, Decimal(0))


def resource_shortfalls(requests: Mapping[str, Decimal], pool: Pool) -> tuple[Shortfall, ...]:
    """Every resource (and the pod slot) one node of `pool` cannot give the pod."""
    short = []
    if "pods" in pool.allocatable and pool.allocatable["pods"] < 1:
        short.append(Shortfall("pods", Decimal(1), pool.allocatable["pods"]))
    for name, amount in requests.items():
        # What the pool does not list and may still have, it is not judged on.
        unknown = name in _ALWAYS_PRESENT or name.startswith(_HUGE_PAGES) or pool.may_have(name)
        if amount <= 0 or (unknown and name not in pool.allocatable):
            continue
        if is_extender_resource(name):
            continue  # a scheduler extender fits it (HAMi's gpumem); allocatable never lists it
        available = allocatable(pool, name)
        if amount > available:
            short.append(Shortfall(name, amount, available))
    return tuple(short)


# ---------------------------------------------------------------------------------------------
# GPUs


def pool_gpus(pool: Pool) -> dict[str, Decimal]:
    """The accelerator resources one node of the pool advertises (> 0)."""
    return {
        name: amount
        for name, amount in pool.allocatable.items()
        if amount > 0 and is_gpu_resource(name)
    }


def is_gpu_pool(pool: Pool) -> bool:
    """Whether the pool's nodes advertise any accelerator."""
    return bool(pool_gpus(pool))


# ---------------------------------------------------------------------------------------------
# Pod (anti-)affinity


def label_selector_matches(term: PodAffinityTerm, labels: Mapping[str, str]) -> bool:
    """Whether a term's labelSelector selects pods with `labels` (no selector selects none)."""
    if not term.has_selector:
        return False
    if any(labels.get(k) != v for k, v in term.match_labels.items()):
        return False
    return all(requirement_matches(r, labels) for r in term.match_expressions)


# ---------------------------------------------------------------------------------------------
# Placement: every filter against every pool


class PoolFit(NamedTuple):
    """How one pool's nodes fare against a pod template, filter by filter."""

    pool: Pool
    untolerated: tuple[Taint, ...]
    mismatch: SelectorMismatch | None
    shortfalls: tuple[Shortfall, ...]

    @property
    def matches_placement(self) -> bool:
        """The pool's nodes satisfy nodeSelector and required node affinity."""
        return self.mismatch is None

    @property
    def tolerated(self) -> bool:
        """The pod tolerates every blocking taint of the pool."""
        return not self.untolerated

    @property
    def has_room(self) -> bool:
        """One empty node of the pool has room for the pod."""
        return not self.shortfalls

    @property
    def eligible(self) -> bool:
        """The pod passes every filter on the pool's nodes."""
        return self.matches_placement and self.tolerated and self.has_room

    @property
    def failed(self) -> tuple[str, ...]:
        """The filters the pool fails, in the scheduler's order."""
        failed: list[str] = []
        if not self.tolerated:
            failed.append(Filter.TAINTS)
        if not self.matches_placement:
            failed.append(Filter.NODE_AFFINITY)
        if not self.has_room:
            failed.append(Filter.RESOURCES)
        return tuple(failed)

    @property
    def reason(self) -> str | None:
        """The scheduler's FailedScheduling reason for this pool's nodes (None: eligible).

        The scheduler stops at the first filter a node fails, so this is the first one.
        """
        if not self.failed:
            return None
        first = self.failed[0]
        if first == Filter.TAINTS:
            taint = self.untolerated[0]
            return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
        if first == Filter.NODE_AFFINITY:
            return "node(s) didn't match Pod's node affinity/selector"
        return ", ".join(s.reason for s in self.shortfalls)

    @property
    def explanation(self) -> str | None:
        """The first reason with what a message needs: the taint, the selector, the numbers."""
        return self.explanations[0] if self.failed else None

    @property
    def explanations(self) -> tuple[str, ...]:
        """Every failed filter's reason, in the scheduler's order. The scheduler reports only
        the first, but a pool failing two is not made to fit by fixing one."""
        return tuple(self._explain(f) for f in self.failed)

    def _explain(self, failed: str) -> str:
        if failed == Filter.TAINTS:
            taints = ", ".join(str(t) for t in self.untolerated)
            plural = "s" if len(self.untolerated) > 1 else ""
            return f"untolerated taint{plural} {taints}"
        if failed == Filter.NODE_AFFINITY and self.mismatch is not None:
            return self.mismatch.detail
        return "; ".join(s.detail for s in self.shortfalls)


@frozen_view
class Placement:
    """Where a pod template can run in a cluster: a verdict for every pool."""

    template: PodTemplate
    fits: tuple[PoolFit, ...]

    # Cached: every placement and capacity rule asks these of the same placement.
    @cached_property
    def eligible(self) -> tuple[Pool, ...]:
        """Pools whose nodes pass every filter."""
        return tuple(f.pool for f in self.fits if f.eligible)

    @cached_property
    def rejected(self) -> tuple[PoolFit, ...]:
        """Pools whose nodes fail some filter, with why."""
        return tuple(f for f in self.fits if not f.eligible)

    @cached_property
    def decidable(self) -> bool:
        """False when the answer for some pool depends on node names (matchFields)."""
        return all(f.mismatch is None or f.mismatch.decidable for f in self.fits)

    def fit(self, pool_name: str) -> PoolFit | None:
        """The verdict for one pool, by name."""
        return next((f for f in self.fits if f.pool.name == pool_name), None)


def pool_fit(template: PodTemplate, pool: Pool, profile: ClusterProfile | None) -> PoolFit:
    """Every filter of the pod template against one pool."""
    return PoolFit(
        pool=pool,
        untolerated=untolerated_taints(
            admitted_tolerations(template, profile), pool.taints, blocking_effects(template)
        ),
        mismatch=selector_mismatch(template, pool.labels, pool.label_requirements)
        or zero_node_mismatch(template, pool),
        shortfalls=resource_shortfalls(template.effective_requests, pool),
    )


def place(
    template: PodTemplate,
    profile: ClusterProfile,
    tolerations: tuple[Toleration, ...] | None = None,
    added: Mapping[str, str] = {},
    overhead: Mapping[str, Decimal] = {},
) -> Placement:
    """The verdict of every pool of the profile for the pod template.

    The same as `pool_fit` for each pool, but through the profile's pool index: each filter
    runs once per distinct taint set, allocatable and value of the labels the pod selects on,
    and the pod's admitted tolerations are worked out once, so the cost follows the number of
    distinct node group shapes rather than the number of pools. `tolerations`: the pod's
    tolerations after admission (`admission.admit`); None: its own and, when the cluster is
    known to run it, ExtendedResourceToleration's. `added`: the nodeSelector entries admission
    adds (a RuntimeClass's, a Kueue flavor's nodeLabels); `overhead`: the pod overhead it sets
    (a RuntimeClass's), which the scheduler adds to the pod's requests.
    """
    index = profile.pool_index
    if tolerations is None:
        tolerations = admitted_tolerations(template, profile)
    effects = blocking_effects(template)
    untolerated = [untolerated_taints(tolerations, taints, effects) for taints in index.taint_sets]
    requests = template.effective_requests
    if overhead:
        requests = dict(requests)
        add_amounts(requests, overhead)
    shortfalls = [resource_shortfalls(requests, pool) for pool in index.allocatable_pools]
    # A deprecated label reads its stable twin where a pool does not state it (_with_twin).
    keys = [(key, _STABLE_TWIN.get(key)) for key in selector_keys(template, added)]
    columns = [index.column(k) for pair in keys for k in pair if k is not None]
    selected = zip(*columns, strict=True) if columns else [()] * len(index.pools)
    mismatches: dict[tuple[object, ...], SelectorMismatch | None] = {}
    fits = []
    for i, (pool, values) in enumerate(zip(index.pools, selected, strict=True)):
        if values in mismatches:
            mismatch = mismatches[values]
        else:
            mismatch = mismatches[values] = selector_mismatch(
                template, pool.labels, pool.label_requirements, added
            )
        if mismatch is None and pool.template_missing_labels:
            mismatch = zero_node_mismatch(template, pool, added)
        fits.append(
            PoolFit(
                pool,
                untolerated[index.taint_set_of[i]],
                mismatch,
                shortfalls[index.allocatable_of[i]],
            )
        )
    return Placement(template, tuple(fits))


def selector_keys(template: PodTemplate, added: Mapping[str, str] = {}) -> tuple[str, ...]:
    """Every node label the pod's nodeSelector (with what admission `added`) and required node
    affinity read."""
    keys = dict.fromkeys([*template.node_selector, *added])
    for term in template.required_node_affinity or ():
        keys.update(dict.fromkeys(r.key for r in term.match_expressions))
    keys.update(dict.fromkeys(t.topology_key for t in template.required_pod_affinity))
    return tuple(keys)


def pools_named(profile: ClusterProfile, label: str, value: str) -> tuple[Pool, ...]:
    """The pools whose nodes carry `label=value`."""
    return profile.pool_index.by_label.get((label, value), ())


def usable(pools: Iterable[Pool]) -> tuple[Pool, ...]:
    """The pools that have a node now or can get one."""
    return tuple(p for p in pools if p.can_grow)


def node_ceiling(pool: Pool) -> int:
    """The most nodes the pool can have (0 when it has none and cannot scale up)."""
    return pool.ceiling if pool.can_grow else 0


def ceiling_assumptions(pools: Iterable[Pool]) -> tuple[str, ...]:
    """What the most nodes of `pools` rests on where their inputs could not say it, each once:
    a verdict that they are too few is then a warning naming it."""
    return tuple(dict.fromkeys(p.ceiling_assumed for p in pools if p.ceiling_assumed))


def ceiling_note(assumptions: Sequence[str]) -> str:
    """`; the pools' maximum is assumed: ...` for a message, "" without assumptions."""
    if not assumptions:
        return ""
    return "; the pools' maximum is assumed: " + "; ".join(assumptions)


#: Pools a message names before `and N more like them`.
MAX_NAMED_POOLS = 3


def describe_pools(pools: tuple[Pool, ...]) -> str:
    """`pool g5`, `pools g5, p4d`, or `pools a, b, c and 9 more like them`, for messages."""
    names = first_pools([p.described for p in pools], ", ")
    return f"pool {names}" if len(pools) == 1 else f"pools {names}"


def first_pools(items: Sequence[str], separator: str = "; ") -> str:
    """At most MAX_NAMED_POOLS of `items` (one per pool), then `and N more like them`.

    A cluster whose nodes carry no pool label can have hundreds of pools: a message that
    named each would bury the one that matters.
    """
    shown = separator.join(items[:MAX_NAMED_POOLS])
    more = len(items) - MAX_NAMED_POOLS
    return f"{shown} and {more:,} more like them" if more > 0 else shown
