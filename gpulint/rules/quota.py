"""Namespace admission limits on GPU pods: ResourceQuota (GPU301, GPU302), LimitRange (GPU303).

Both are enforced when a pod is created, never when its Deployment or Job is applied: the
workload is accepted and its controller then fails to create pods (`FailedCreate`). Quotas and
LimitRanges come from the cluster profile and from the checked manifests (see
`gpulint.profile.policy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import chain

from gpulint.accelerators import is_extended_resource
from gpulint.edits import Rename
from gpulint.fields import mapping_at, shown
from gpulint.gpus import gpu_limit_pos, gpu_requests, is_gpu_resource
from gpulint.model import (
    Container,
    ContainerRole,
    Document,
    DocumentLike,
    PodTemplate,
    Severity,
    Workload,
)
from gpulint.profile.model import LimitRangeItem, ResourceQuota
from gpulint.profile.policy import (
    LimitRangeInEffect,
    QuotaInEffect,
    global_default_class,
    limit_ranges_in_effect,
    priority_classes_in_effect,
    priority_values,
    quotas_in_effect,
)
from gpulint.quantity import format_quantity, parse_quantity
from gpulint.replicas import (
    PodDemand,
    describe_gang,
    gang_parts,
    groups_of,
    pod_demand,
    runs_to_completion,
    scaler_words,
    under_load_words,
)
from gpulint.rules.base import CheckContext, Problem
from gpulint.yamltree import Pos, YMap, YSeq

_REQUESTS_PREFIX = "requests."
_POD_COUNT_KEYS = ("pods", "count/pods")
_MAX_LISTED = 3


# ---------------------------------------------------------------------------------------------
# How many pods a workload may run at once


# ---------------------------------------------------------------------------------------------
# Which quotas charge a pod


def is_terminating(template: PodTemplate) -> bool:
    """Quota scope Terminating: the pod sets `activeDeadlineSeconds`."""
    value = template.spec.get("activeDeadlineSeconds")
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def has_cross_namespace_affinity(template: PodTemplate) -> bool:
    """Quota scope CrossNamespacePodAffinity: a pod (anti-)affinity term names namespaces."""
    for kind in ("podAffinity", "podAntiAffinity"):
        affinity = mapping_at(template.spec, "affinity", kind)
        for field in (
            "requiredDuringSchedulingIgnoredDuringExecution",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ):
            terms = affinity.get(field)
            for term in terms if isinstance(terms, YSeq) else ():
                term = mapping_at(term, "podAffinityTerm") or term
                if isinstance(term, YMap) and ("namespaces" in term or "namespaceSelector" in term):
                    return True
    return False


def _scope_matches(scope: str, template: PodTemplate) -> bool:
    if scope == "BestEffort":
        return template.best_effort
    if scope == "NotBestEffort":
        return not template.best_effort
    if scope == "Terminating":
        return is_terminating(template)
    if scope == "NotTerminating":
        return not is_terminating(template)
    if scope == "CrossNamespacePodAffinity":
        return has_cross_namespace_affinity(template)
    return False


def quota_charges(quota: ResourceQuota, template: PodTemplate, priority_class: str) -> bool:
    """Whether the quota's scopes and scopeSelector (all AND'ed) select the template's pods.

    `priority_class` is the class the pod ends up with after admission ("" for none).
    """
    if not all(_scope_matches(scope, template) for scope in quota.scopes):
        return False
    for requirement in quota.scope_selector:
        if requirement.scope_name != "PriorityClass":
            matched = _scope_matches(requirement.scope_name, template)
            if matched != (requirement.operator == "Exists"):
                return False
            continue
        # The quota evaluator matches a label set {PriorityClass: <name>}: the key is always
        # present, so Exists means "a class is set" and DoesNotExist never matches.
        if requirement.operator == "In" and priority_class not in requirement.values:
            return False
        if requirement.operator == "NotIn" and priority_class in requirement.values:
            return False
        if requirement.operator == "Exists" and not priority_class:
            return False
        if requirement.operator not in ("In", "NotIn", "Exists"):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# GPU301


@dataclass(frozen=True)
class _Charge:
    demand: PodDemand
    per_pod: Decimal
    is_gpu_pod: bool

    @property
    def total(self) -> Decimal:
        return self.per_pod * self.demand.pods


def _demands(ctx: CheckContext) -> list[tuple[str, PodDemand, str]]:
    """(namespace, demand, priority class after admission) of every checked pod template."""
    classes = priority_classes_in_effect(ctx.knowledge, ctx.profile)
    default = global_default_class(classes)
    found = []
    for workload, template in ctx.pod_templates(here=True):
        if workload.unknown_count or template.unknown_amounts:
            continue  # how many pods or GPUs it charges is not known (gpulint.placeholders)
        demand = pod_demand(workload, template, ctx.autoscalers_of(workload))
        if demand is None or demand.pods == 0:
            continue
        # The Priority admission plugin writes the default class into pods that name none,
        # before the quota is checked.
        priority_class = template.priority_class_name or (default.name if default else "")
        found.append((ctx.namespace_of(workload.document), demand, priority_class))
    return found


def _charges(
    key: str, quota: ResourceQuota, demands: Sequence[tuple[str, PodDemand, str]]
) -> list[_Charge]:
    charges = []
    for namespace, demand, priority_class in demands:
        if namespace != quota.namespace:
            continue
        if not quota_charges(quota, demand.template, priority_class):
            continue
        gpus = gpu_requests(demand.template)
        if key in _POD_COUNT_KEYS:
            charges.append(_Charge(demand, Decimal(1), bool(gpus)))
        elif (per_pod := gpus.get(key.removeprefix(_REQUESTS_PREFIX))) is not None:
            charges.append(_Charge(demand, per_pod, True))
    return charges


def _demand_pos(demand: PodDemand, resource: str | None) -> tuple[DocumentLike, Pos]:
    if demand.pos is not None:
        return demand.document, demand.pos
    found = gpu_limit_pos(demand.template, resource)
    pos = found[1] if found else demand.template.spec.pos
    return demand.template.document, pos


def _ref(demand: PodDemand, namespace: str) -> str:
    ref = demand.workload.document.ref
    return f"{ref.kind}/{namespace}/{ref.name}"


def gpu_quota_exceeded(ctx: CheckContext) -> Iterator[Problem]:
    """Used plus the peak GPU requests of every checked workload must fit every quota.

    Also reports GPU pods that a cpu/memory quota refuses because a container declares no
    request or limit for it (`failed quota: ...: must specify ...`).
    """
    sources = quotas_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    if not sources:
        return
    demands = _demands(ctx)
    limit_ranges = limit_ranges_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    priorities = priority_values(ctx.knowledge, ctx.profile)
    for source in sources:
        quota = source.quota
        for key, hard in quota.hard.items():
            if key in _POD_COUNT_KEYS:
                resource = None
            elif key.startswith(_REQUESTS_PREFIX) and is_gpu_resource(key[len(_REQUESTS_PREFIX) :]):
                resource = key[len(_REQUESTS_PREFIX) :]
            else:
                continue
            charges = _charges(key, quota, demands)
            used = quota.used.get(key, Decimal(0))
            requested = sum((c.total for c in charges), Decimal(0))
            if not charges or used + requested <= hard:
                continue
            gangs: dict[int, list[_Charge]] = {}
            for charge in charges:
                if charge.demand.workload.gang:
                    gangs.setdefault(id(charge.demand.workload), []).append(charge)
            limit = _Limit(source, key, resource, hard, used, requested)
            yield from _exceeded(limit, charges)
            for members in gangs.values():
                yield from _gang_exceeded(limit, members, charges, priorities)
        yield from _unspecified(source, demands, limit_ranges)


# Quota keys that make every container (init containers too) declare the matching request or
# limit: a legacy rule of the pod evaluator, kept for cpu and memory only.
_MUST_SPECIFY: dict[str, tuple[str, str]] = {
    "cpu": ("requests", "cpu"),
    "requests.cpu": ("requests", "cpu"),
    "limits.cpu": ("limits", "cpu"),
    "memory": ("requests", "memory"),
    "requests.memory": ("requests", "memory"),
    "limits.memory": ("limits", "memory"),
}


def limit_range_defaults(
    limit_ranges: Sequence[LimitRangeInEffect], namespace: str
) -> tuple[frozenset[str], frozenset[str]]:
    """(limits, requests) LimitRanger fills into every container of the namespace.

    A Container item's `max` becomes its default limit when `default` lacks it, and the
    default limit (or `min`) becomes the default request, as the API defaults the item.
    """
    limits: set[str] = set()
    requests: set[str] = set()
    for source in limit_ranges:
        if source.limit_range.namespace != namespace:
            continue
        for item in source.limit_range.items:
            if item.type != "Container":
                continue
            defaulted = {*item.default, *item.max}
            limits |= defaulted
            requests |= {*item.default_request, *defaulted, *item.min}
    return frozenset(limits), frozenset(requests)


def _unspecified(
    source: QuotaInEffect,
    demands: Sequence[tuple[str, PodDemand, str]],
    limit_ranges: Sequence[LimitRangeInEffect],
) -> Iterator[Problem]:
    """GPU pods refused because a cpu/memory quota needs a request or limit they do not set."""
    quota = source.quota
    required = {key: _MUST_SPECIFY[key] for key in quota.hard if key in _MUST_SPECIFY}
    if not required:
        return
    defaulted_limits, defaulted_requests = limit_range_defaults(limit_ranges, quota.namespace)
    for namespace, demand, priority_class in demands:
        template = demand.template
        if namespace != quota.namespace or not gpu_requests(template):
            continue
        if not quota_charges(quota, template, priority_class):
            continue
        missing: dict[str, list[Container]] = {}
        for container in _admitted(template):
            for key, (section, resource) in sorted(required.items()):
                if section == "requests":
                    present = resource in container.resources.effective_requests()
                    present = present or resource in defaulted_requests
                else:
                    present = resource in container.resources.limits
                    present = present or resource in defaulted_limits
                if not present:
                    missing.setdefault(key, []).append(container)
        if not missing:
            continue
        detail = "; ".join(
            f"{key} for: {','.join(sorted(c.name for c in containers))}"
            for key, containers in missing.items()
        )
        first = next(iter(missing.values()))[0]
        pos = first.resources.pos if first.resources.node is not None else first.pos
        yield Problem.at(
            template.document,
            pos,
            f"{source.label} tracks `{'`, `'.join(sorted(missing))}`, so every container and "
            f"init container must declare them; pod creation fails with `failed quota: "
            f"{quota.name}: must specify {detail}`",
            "Declare "
            + ", ".join(f"`{key}`" for key in sorted(missing))
            + " in every container (init containers too), or add a LimitRange default for "
            "them in the namespace.",
            involves=(source.document,),
        )


@dataclass(frozen=True)
class _Limit:
    """One hard key of a quota that the checked workloads overflow."""

    source: QuotaInEffect
    key: str
    resource: str | None  # None: a pod count key
    hard: Decimal
    used: Decimal
    requested: Decimal  # by every checked workload the quota charges, at their peak


def _exceeded(limit: _Limit, charges: Sequence[_Charge]) -> Iterator[Problem]:
    source, key, resource = limit.source, limit.key, limit.resource
    hard, used, requested = limit.hard, limit.used, limit.requested
    quota = source.quota
    # What never ends keeps its share; pods that run to completion give theirs back, and the
    # controllers retry the pods the quota refused (pods already counted in `used` may not end).
    ends = {id(c): runs_to_completion(c.demand.workload, c.demand.template) for c in charges}
    lasting = used + sum((c.total for c in charges if not ends[id(c)]), Decimal(0))
    # Of that, what the pods there surely are charge: an HPA adds pods above its minReplicas
    # only under load.
    surely = used + sum(
        (c.per_pod * c.demand.least for c in charges if not ends[id(c)]), Decimal(0)
    )
    for charge in charges:
        if not charge.is_gpu_pod or charge.demand.workload.gang:
            continue  # a gang is reported as a whole
        demand = charge.demand
        per_pod = None if resource is None else charge.per_pod
        breakdown = demand.describe(per_pod)
        others = [c for c in charges if c is not charge]
        total = used + requested
        if others:
            # Every workload's finding lists the same members in one order (by name, whatever
            # files were given), so the sum reads alike in each; this workload's own count
            # follows it.
            members = "; ".join(
                sorted(
                    f"{_ref(c.demand, quota.namespace)}: {format_quantity(c.total)}"
                    for c in charges
                )
            )
            own = f"; {_ref(demand, quota.namespace)}: {breakdown}"
        else:
            members, own = breakdown, ""
        arithmetic = (
            f"used {format_quantity(used)} + requested {format_quantity(requested)} "
            f"({members}) = {format_quantity(total)} > hard {format_quantity(hard)} `{key}`, "
            f"{format_quantity(total - hard)} over{own}"
        )
        own_turn = charge.per_pod if ends[id(charge)] else 0
        in_turn = hard > 0 and lasting + own_turn <= hard
        under_load = hard > 0 and not in_turn and surely + own_turn <= hard
        if hard == 0:
            consequence = f"no pod counted by `{key}` can be created in namespace {quota.namespace}"
        elif in_turn:
            consequence = (
                "pods beyond the quota are refused at creation until pods that run to completion "
                "(Jobs) finish and free it; their controllers create them then"
            )
        elif under_load:
            words = under_load_words(c.demand.autoscaler for c in charges)
            consequence = (
                f"if the {words.plural} scale up to {words.max_field}, pods beyond the quota are "
                f"refused at creation (at {words.min_field} all fit)"
            )
        elif demand.surge and total - charge.per_pod * demand.surge <= hard:
            consequence = "the surge pods of every rolling update are refused (exceeded quota)"
        else:
            consequence = "pods beyond the quota are refused at creation (exceeded quota)"
        document, pos = _demand_pos(demand, resource)
        message = f"{source.label}: {arithmetic}; {consequence}"
        # One number in every finding of this quota: what all the checked workloads need. The
        # count named is the one at the finding: an autoscaler's maximum when it sets it, and
        # its minimum too when even that many pods overflow (not only under load).
        count = "replicas"
        if demand.document.ref != demand.workload.document.ref:
            words = scaler_words(demand.document.ref.kind)
            count = words.max_field if under_load else f"{words.min_field} and {words.max_field}"
        fix = (
            f"Raise `{key}` of {quota.name} to {format_quantity(total)}, or lower {count} or "
            f"the GPUs per pod by {format_quantity(total - hard)} in all, or use a Recreate "
            f"strategy (or maxSurge: 0) so a rollout needs no headroom."
        )
        if in_turn:
            fix = (
                f"None needed if the wait is acceptable; to create them all at once, raise "
                f"`{key}` of {quota.name} to {format_quantity(total)}."
            )
        yield Problem.at(
            document,
            pos,
            message,
            fix,
            severity=Severity.WARNING if in_turn or under_load else None,
            names_workload=bool(others),
            involves=chain((source.document,), _documents(charges)),
        )


def _documents(charges: Iterable[_Charge]) -> Iterator[DocumentLike]:
    """The workloads a quota sum counts, and the HPAs that set their counts."""
    for charge in charges:
        yield charge.demand.workload.document
        yield charge.demand.document


def _gang_exceeded(
    limit: _Limit,
    members: Sequence[_Charge],
    charges: Sequence[_Charge],
    priorities: Mapping[str, int],
) -> Iterator[Problem]:
    """A gang whose pods the quota can never all admit, or not beside the other pods
    (`priorities`: the known priority classes' values, which order a Volcano Job's tasks)."""
    source, key, resource = limit.source, limit.key, limit.resource
    hard, used, requested = limit.hard, limit.used, limit.requested
    if not any(c.is_gpu_pod for c in members):
        return
    workload = members[0].demand.workload
    per_pod = {id(c.demand.template): c.per_pod for c in members}
    parts = tuple(
        (part, per_pod[id(part.template)])
        for part in gang_parts(workload, lambda t: per_pod.get(id(t), Decimal(0)), priorities)
        if id(part.template) in per_pod and part.pods
    )
    need = sum((part.pods * amount for part, amount in parts), Decimal(0))
    others = requested - sum((c.total for c in members), Decimal(0))
    if not parts:
        return
    if workload.group_gang and need <= hard:
        # Its groups are created one by one: those the quota admits run, the others are
        # refused, as a Deployment's replicas are (the caller found the sum over hard).
        yield _groups_exceeded(limit, members, charges, need, describe_gang(parts))
        return
    if used + others + need <= hard:
        return
    part = max(parts, key=lambda item: item[0].pods * item[1])[0]
    pos = part.count.pos
    document = workload.document
    if pos is None:
        found = gpu_limit_pos(part.template, resource)
        pos = found[1] if found else part.template.spec.pos
    ref = f"{_ref(members[0].demand, source.quota.namespace)}"
    gang_is = "each of its groups is a gang that" if workload.group_gang else "its gang"
    gang = f"{gang_is} needs {format_quantity(need)} `{key}` at once ({describe_gang(parts)})"
    if need > hard:
        message = (
            f"{source.label}: {ref} can never start: {gang}, but hard is "
            f"{format_quantity(hard)}; pods beyond it are refused (exceeded quota) and the "
            f"admitted ones wait for the rest forever"
        )
        fix = (
            f"Raise `{key}` of {source.quota.name} to at least {format_quantity(used + need)}, "
            f"or shrink the gang."
        )
        involved = _documents(members)
    else:
        message = (
            f"{source.label}: {ref} fits the quota alone but not alongside the others: {gang}, "
            f"and used {format_quantity(used)} + {format_quantity(others)} requested by the "
            f"other workloads leave {format_quantity(max(hard - used - others, Decimal(0)))} "
            f"of hard {format_quantity(hard)}: its last pods are refused (exceeded quota) "
            f"until others finish"
        )
        fix = (
            f"Raise `{key}` of {source.quota.name} to {format_quantity(used + others + need)}, "
            f"or admit the gangs one at a time (a queue such as Kueue holds whole jobs back)."
        )
        involved = _documents(charges)  # the others' requests are in the sum
    yield Problem.at(
        document,
        pos,
        message,
        fix,
        names_workload=True,
        involves=chain((source.document,), involved),
    )


def _groups_exceeded(
    limit: _Limit, members: Sequence[_Charge], charges: Sequence[_Charge], need: Decimal, parts: str
) -> Problem:
    """The groups of a group gang (a LeaderWorkerSet) and the other workloads' pods need more
    than the quota holds: the groups beyond it are refused at creation."""
    source, key = limit.source, limit.key
    hard, used, requested = limit.hard, limit.used, limit.requested
    demand = members[0].demand
    own = sum((c.total for c in members), Decimal(0))
    groups = groups_of(demand.template, demand.pods)
    # A group holds all its pods, though its gang may start with fewer (`minRoleReplicas`).
    whole = own / groups if groups else need
    at_once = f", {format_quantity(need)} at once" if need < whole else ""
    total = used + requested
    others = requested - own
    beside = f" + {format_quantity(others)} of the other workloads" if others else ""
    scaler = demand.document.ref
    scaled = ""
    words = scaler_words(scaler.kind)  # an HPA's, when no autoscaler sets the count
    if scaler != demand.workload.document.ref:
        scaled = f" ({words.max_field} of {words.noun} {scaler.name})"
    message = (
        f"{source.label}: {_ref(demand, source.quota.namespace)} requests "
        f"{format_quantity(own)} `{key}`: {groups} groups{scaled} of "
        f"{format_quantity(whole)} each{at_once} ({parts}); with used {format_quantity(used)}"
        f"{beside} "
        f"that is {format_quantity(total)} > hard {format_quantity(hard)}, "
        f"{format_quantity(total - hard)} over: the groups beyond the quota are refused at "
        "creation (exceeded quota)"
    )
    fix = (
        f"Raise `{key}` of {source.quota.name} to {format_quantity(total)}, or run fewer "
        f"groups (its replicas, or its {words.noun}'s {words.max_field})."
    )
    document, pos = _demand_pos(demand, limit.resource)
    return Problem.at(
        document,
        pos,
        message,
        fix,
        names_workload=True,
        involves=chain((source.document,), _documents(charges)),
    )


# ---------------------------------------------------------------------------------------------
# GPU302


def is_unenforced_quota_key(key: str) -> bool:
    """A hard key no quota evaluator charges: an extended resource without `requests.`.

    `nvidia.com/gpu` and `limits.nvidia.com/gpu` pass validation (names with `/` skip the
    standard-name check) but nothing ever counts them.
    """
    if key.startswith("count/") or ".storageclass.storage.k8s.io/" in key:
        return False
    return is_extended_resource(key)


def gpu_quota_key_not_enforced(ctx: CheckContext) -> Iterator[Problem]:
    """A quota on `nvidia.com/gpu` or `limits.nvidia.com/gpu` caps nothing."""
    yield from _account_quota_keys(ctx.knowledge)
    sources = quotas_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    if not sources:
        return
    templates = [
        (ctx.namespace_of(w.document), t)
        for w, t in ctx.pod_templates(here=True)
        if gpu_requests(t)
    ]
    for source in sources:
        quota = source.quota
        for key, hard in quota.hard.items():
            if not is_unenforced_quota_key(key):
                continue
            resource = key.removeprefix("limits.")
            enforced = f"{_REQUESTS_PREFIX}{resource}"
            capped = any(
                other.quota.namespace == quota.namespace and enforced in other.quota.hard
                for other in sources
            )
            effect = (
                f"it adds nothing to the `{enforced}` cap"
                if capped
                else f"`{resource}` in namespace {quota.namespace} is not capped at all"
            )
            message = (
                f"{source.label} caps `{key}: {format_quantity(hard)}`, a key no quota "
                f"evaluator charges: {effect}; only `{enforced}` is enforced for extended "
                f"resources"
            )
            fix = f"Rename the key to `{enforced}`."
            pos = source.hard_pos(key)
            if source.document is not None and pos is not None:
                # Renaming is safe only where it cannot collide with a key already written.
                edits = () if enforced in quota.hard else (Rename(pos, key, enforced),)
                yield Problem.at(source.document, pos, message, fix, edits=edits)
                continue
            for namespace, template in templates:
                found = gpu_limit_pos(template, resource)
                if namespace == quota.namespace and found is not None:
                    yield Problem.at(template.document, found[1], message, fix)


# kiosk's AccountQuota (loft-sh/kiosk pkg/apis/config/v1alpha1/accountquota_types.go): its
# `spec.quota` is a ResourceQuotaSpec, charged with Kubernetes' own quota evaluators across the
# account's namespaces, so the same keys go uncharged.
_ACCOUNT_QUOTA_GROUP = "config.kiosk.sh/"


def _account_quota_keys(documents: Iterable[DocumentLike]) -> Iterator[Problem]:
    """GPU302 on the `spec.quota.hard` keys of a kiosk AccountQuota that nothing charges."""
    for document in documents:
        ref = document.ref
        if ref.kind != "AccountQuota" or not ref.api_version.startswith(_ACCOUNT_QUOTA_GROUP):
            continue
        if not isinstance(document, Document):
            continue
        hard = mapping_at(document.obj, "spec", "quota", "hard")
        keys = [str(k) for k in hard]
        for key in keys:
            if not is_unenforced_quota_key(key):
                continue
            resource = key.removeprefix("limits.")
            enforced = f"{_REQUESTS_PREFIX}{resource}"
            effect = (
                f"it adds nothing to the `{enforced}` cap"
                if enforced in keys
                else f"`{resource}` is not capped for the account at all"
            )
            amount = parse_quantity(hard[key])
            shown_amount = format_quantity(amount) if amount is not None else shown(hard[key])
            message = (
                f"AccountQuota {ref.name} caps `{key}: {shown_amount}`, a key no quota evaluator "
                f"charges: {effect}; only `{enforced}` is enforced for extended resources"
            )
            pos = hard.pos_of_key(key)
            edits = () if enforced in keys else (Rename(pos, key, enforced),)
            yield Problem.at(
                document, pos, message, f"Rename the key to `{enforced}`.", edits=edits
            )


# ---------------------------------------------------------------------------------------------
# GPU303


@dataclass(frozen=True)
class _Violation:
    template: PodTemplate
    container: Container | None  # None: the pod as a whole (a `Pod` item)
    pos: Pos
    detail: str

    @property
    def subject(self) -> str:
        ref = self.template.document.ref
        who = f"{ref.kind}/{ref.name}"
        return f"{who} container `{self.container.name}`" if self.container else who


def _mentions(container: Container, resource: str) -> bool:
    resources = container.resources
    return resource in resources.limits or resource in resources.requests


def _limit_of(container: Container, resource: str) -> Decimal | None:
    quantity = container.resources.limits.get(resource)
    return quantity.amount if quantity is not None else None


def _request_of(container: Container, resource: str) -> Decimal | None:
    return container.resources.effective_requests().get(resource)


def _admitted(template: PodTemplate) -> tuple[Container, ...]:
    # LimitRanger fills containers and init containers; ephemeral containers have no resources.
    return tuple(c for c in template.containers if c.role is not ContainerRole.EPHEMERAL)


def _pod_total(
    template: PodTemplate, amount_of: Callable[[Container, str], Decimal | None], resource: str
) -> Decimal | None:
    """Pod-type sum: app containers and sidecars added, each plain init container max'ed."""
    total: Decimal | None = None
    init_max: Decimal | None = None
    for container in _admitted(template):
        amount = amount_of(container, resource)
        if amount is None:
            continue
        if container.role is ContainerRole.INIT:
            init_max = amount if init_max is None else max(init_max, amount)
        else:
            total = amount if total is None else total + amount
    if init_max is not None:
        total = init_max if total is None else max(total, init_max)
    return total


@dataclass(frozen=True)
class _Clause:
    """One way an item of a LimitRange breaks pods, with the pods it breaks."""

    clause: str  # the LimitRange field the finding points at
    resource: str
    summary: str  # what the clause does, for the message
    violations: tuple[_Violation, ...]
    always: bool  # a trap for any container, reported at the LimitRange even with no victims


def _container_clauses(
    item: LimitRangeItem, resource: str, templates: Sequence[PodTemplate]
) -> Iterator[_Clause]:
    maximum = item.max.get(resource)
    minimum = item.min.get(resource)
    default = item.default.get(resource)
    default_limit = default if default is not None else maximum
    default_request = item.default_request.get(resource)
    if default_request is None:
        default_request = default_limit if default_limit is not None else minimum
    containers = [(t, c) for t in templates for c in _admitted(t)]
    silent = [(t, c) for t, c in containers if not _mentions(c, resource)]
    name = f"`{resource}`"
    if maximum is not None:
        over = tuple(
            _Violation(t, c, c.resources.limits[resource].value_pos, f"limit {_fmt(limit)}")
            for t, c in containers
            if (limit := _limit_of(c, resource)) is not None and limit > maximum
        )
        if over:
            yield _Clause(
                "max",
                resource,
                f"`max` {name} per Container is {_fmt(maximum)}: a larger limit is refused "
                f"(maximum {resource} usage per Container is {_fmt(maximum)})",
                over,
                False,
            )
    if minimum is not None:
        under = tuple(
            _Violation(t, c, _quantity_pos(c, resource), f"request {_fmt(request)}")
            for t, c in containers
            if _mentions(c, resource)
            and (request := _request_of(c, resource)) is not None
            and request < minimum
        )
        if under:
            yield _Clause(
                "min",
                resource,
                f"`min` {name} per Container is {_fmt(minimum)}: a smaller request is refused "
                f"(minimum {resource} usage per Container is {_fmt(minimum)})",
                under,
                False,
            )
    if default_limit:
        clause = "default" if default is not None else "max"
        why = (
            f"`default` {name} is {_fmt(default_limit)}"
            if default is not None
            else f"`max` {name} {_fmt(default_limit)} without a `default` becomes the default limit"
        )
        yield _Clause(
            clause,
            resource,
            f"{why}: every container that does not mention {name} (CPU-only containers, "
            f"init containers and sidecars included) gets limit and request "
            f"{_fmt(default_limit)} and starts asking for GPUs",
            tuple(
                _Violation(t, c, c.pos, f"would get {resource}: {_fmt(default_limit)}")
                for t, c in silent
            ),
            True,
        )
    elif default_limit is None and default_request:
        clause = "defaultRequest" if item.default_request.get(resource) is not None else "min"
        yield _Clause(
            clause,
            resource,
            f"`{clause}` {name} {_fmt(default_request)} without a `default` or `max` gives "
            f"every container that does not set a {name} limit a request with no limit, which "
            f"the API refuses (Limit must be set for non overcommitable resources)",
            tuple(
                _Violation(t, c, c.pos, f"would get request {_fmt(default_request)}, no limit")
                for t, c in containers
                if _limit_of(c, resource) is None
            ),
            True,
        )


def _pod_clauses(
    item: LimitRangeItem, resource: str, templates: Sequence[PodTemplate]
) -> Iterator[_Clause]:
    for clause, bound in (("max", item.max.get(resource)), ("min", item.min.get(resource))):
        if bound is None:
            continue
        amount_of = _limit_of if clause == "max" else _request_of
        what = "limit" if clause == "max" else "request"
        violations = []
        for template in templates:
            total = _pod_total(template, amount_of, resource)
            found = gpu_limit_pos(template, resource)
            pos = found[1] if found else template.spec.pos
            if total is None:
                detail = f"sets no {resource} {what}"
            elif (clause == "max" and total > bound) or (clause == "min" and total < bound):
                detail = f"pod {what} {_fmt(total)}"
            else:
                continue
            violations.append(_Violation(template, None, pos, detail))
        if violations:
            word = "maximum" if clause == "max" else "minimum"
            yield _Clause(
                clause,
                resource,
                f"`{clause}` `{resource}` per Pod is {_fmt(bound)}: every pod needs a "
                f"{resource} {what} within it, and a pod with none is refused too ({word} "
                f"{resource} usage per Pod is {_fmt(bound)})",
                tuple(violations),
                False,
            )


def _quantity_pos(container: Container, resource: str) -> Pos:
    quantity = container.resources.requests.get(resource) or container.resources.limits[resource]
    return quantity.value_pos


def _fmt(amount: Decimal) -> str:
    return format_quantity(amount)


def _victims(violations: Sequence[_Violation]) -> str:
    listed = [f"{v.subject} ({v.detail})" for v in violations[:_MAX_LISTED]]
    more = len(violations) - _MAX_LISTED
    return ", ".join(listed) + (f" and {more} more" if more > 0 else "")


def gpu_limitrange_conflict(ctx: CheckContext) -> Iterator[Problem]:
    """A LimitRange that refuses GPU pods or hands GPUs to containers that never asked."""
    sources = limit_ranges_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    if not sources:
        return
    by_namespace: dict[str, list[PodTemplate]] = {}
    for workload, template in ctx.pod_templates(here=True):
        by_namespace.setdefault(ctx.namespace_of(workload.document), []).append(template)
    for source in sources:
        templates = by_namespace.get(source.limit_range.namespace, [])
        for index, item in enumerate(source.limit_range.items):
            resources = sorted(
                {
                    name
                    for amounts in (item.max, item.min, item.default, item.default_request)
                    for name in amounts
                    if is_gpu_resource(name)
                }
            )
            for resource in resources:
                if item.type == "Container":
                    clauses = _container_clauses(item, resource, templates)
                elif item.type == "Pod":
                    clauses = _pod_clauses(item, resource, templates)
                else:
                    continue
                for clause in clauses:
                    yield from _clause_problems(source, index, clause)


def _clause_problems(source: LimitRangeInEffect, index: int, clause: _Clause) -> Iterator[Problem]:
    pos = source.clause_pos(index, clause.clause, clause.resource)
    if source.document is not None and pos is not None:
        if not clause.violations and not clause.always:
            return
        victims = f"; in the checked manifests: {_victims(clause.violations)}"
        message = f"{source.label}: {clause.summary}{victims if clause.violations else ''}"
        refused = (v.template.document for v in clause.violations)
        yield Problem.at(source.document, pos, message, involves=refused)
        return
    for violation in clause.violations:
        yield Problem.at(
            violation.template.document,
            violation.pos,
            f"{source.label}: {clause.summary}; {violation.subject} {violation.detail}",
            names_workload=True,
            involves=(source.document,),
        )


def governed_workloads(ctx: CheckContext) -> Iterator[Workload]:
    """Workloads in a namespace that a ResourceQuota or LimitRange governs.

    Quotas sum the pods of every workload in the namespace, and a LimitRange in the manifests
    lists the pods it breaks; other namespaces have nothing to check.
    """
    quotas = quotas_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    namespaces = {s.quota.namespace for s in quotas}
    namespaces |= {
        s.limit_range.namespace
        for s in limit_ranges_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    }
    if namespaces:
        yield from (
            w
            for w in ctx.workloads
            if ctx.namespace_of(w.document) in namespaces and ctx.managed_elsewhere(w) is None
        )


# ---------------------------------------------------------------------------------------------
# GPU304


def limitrange_refuses_pod(ctx: CheckContext) -> Iterator[Problem]:
    """A LimitRange that, once LimitRanger has filled in its defaults, refuses a GPU pod over a
    resource other than GPUs."""
    sources = limit_ranges_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    if not sources:
        return
    from gpulint.admission import limit_range_refusals  # only runs with a LimitRange

    for workload, template in ctx.pod_templates(here=True):
        if not gpu_requests(template):
            continue
        namespace = ctx.namespace_of(workload.document)
        in_namespace = [s for s in sources if s.limit_range.namespace == namespace]
        for refusal in limit_range_refusals(template, in_namespace):
            yield Problem.at(
                template.document,
                refusal.pos,
                refusal.message,
                involves=(refusal.involves,),
            )


# ---------------------------------------------------------------------------------------------
# GPU306


def policy_refuses_pod(ctx: CheckContext) -> Iterator[Problem]:
    """An enforced Gatekeeper or Kyverno policy that requires requests or limits a GPU pod's
    container does not set (after LimitRange defaults)."""
    from gpulint.admission import policy_refusals
    from gpulint.profile.admission_policies import required_resources

    policies = list(ctx.profile.resource_policies if ctx.profile else ())
    policies += [found for d in ctx.documents if (found := required_resources(d.obj)) is not None]
    if not policies:
        return
    limit_ranges = limit_ranges_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of)
    for workload, template in ctx.pod_templates(here=True):
        if not gpu_requests(template):
            continue
        namespace = ctx.namespace_of(workload.document)
        applying = [p for p in policies if p.applies_to(namespace)]
        in_namespace = [s for s in limit_ranges if s.limit_range.namespace == namespace]
        for refusal in policy_refusals(template, applying, in_namespace):
            yield Problem.at(template.document, refusal.pos, refusal.message)
