"""Pending GPU pods and refused pod creations -> one cause each, with evidence and a fix.

A pod's cause comes from its newest FailedScheduling event (or, when events have expired, its
`PodScheduled` condition, which holds the same text). The scheduler reports, per node, the
first filter the node failed, in the order taints, node affinity, resources, then inter-pod
affinity and spread; so a node counted under `Insufficient nvidia.com/gpu` passed the taint and
selector filters, and a node counted under anti-affinity had room. `_from_histogram` picks the
reason that explains why the GPU nodes refused the pod from that order, with the cluster
profile (when given) to tell an unadvertised name, a device plugin that is down, and the taint
of releases that no longer print it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from decimal import Decimal

from gpulint.accelerators import is_known_accelerator, looks_like_accelerator, suggest_resource
from gpulint.constraints import toleration_yaml
from gpulint.diagnose.causes import (
    CAUSE_BY_SLUG,
    CLAIM_MISSING,
    NO_SCALE_UP,
    REFUSALS,
    SCHEDULER_REASONS,
    Cause,
)
from gpulint.diagnose.events import Event, newest, timestamp
from gpulint.diagnose.extra import (
    DraClaims,
    DraIndex,
    ScheduledPod,
    WorkloadSource,
    percentile,
    queued_jobs,
    scheduled_at,
)
from gpulint.diagnose.gather import Gathered, gather
from gpulint.diagnose.messages import (
    NodeCount,
    NodeHistogram,
    parse_histogram,
    parse_refusal,
    parse_scale_up,
)
from gpulint.diagnose.usage import PoolUsage
from gpulint.dra import ACCELERATOR_DRIVERS, DeviceClass, devices_per_node
from gpulint.gpus import gpu_requests
from gpulint.model import Document, PodTemplate, Workload
from gpulint.pods import pod_owner
from gpulint.profile.model import ClusterProfile, Pool, Taint
from gpulint.profile.nodes import node_view, pool_names
from gpulint.profile.values import mapping, sequence, text
from gpulint.scheduling import (
    admitted_tolerations,
    allocatable,
    first_pools,
    format_amount,
    has_required_placement,
    pool_fit,
    pool_gpus,
    untolerated_taints,
)
from gpulint.workloads import pod_template

DEFAULT_SCHEDULER = "default-scheduler"
# An extended resource name inside an admission message: `requests.nvidia.com/gpu=2`.
_RESOURCE_IN_TEXT = re.compile(r"(?:requests\.|limits\.)?([A-Za-z0-9][\w.-]*\.[a-z]+/[\w.-]+)")


@dataclass(frozen=True)
class Evidence:
    """What a cause rests on: an event, the pod's own status, or a cluster profile fact."""

    source: str  # event, pod, profile
    message: str
    reason: str | None = None  # the event or condition reason
    count: int | None = None  # how often the event was seen
    last_seen: datetime | None = None
    nodes: int | None = None  # N of `0/N nodes are available`
    node_reasons: tuple[NodeCount, ...] = ()


@dataclass(frozen=True)
class StuckPod:
    """A Pending GPU pod (or a controller whose GPU pods are refused) and why."""

    namespace: str
    name: str  # the pod, or the generate-name prefix of pods a controller cannot create
    owner: str | None  # `Deployment/trainer`, `ReplicaSet/web-7d9c5b6f4`, or None
    cause: Cause
    explanation: str  # one line: the cause as it applies to this pod
    pending_seconds: int | None
    evidence: tuple[Evidence, ...]
    confirm: str
    fix: str


@dataclass(frozen=True)
class Diagnosis:
    """Every stuck GPU pod of a dump or a cluster, and how long the others took to schedule."""

    pods: tuple[StuckPod, ...]
    now: datetime
    scheduled: tuple[ScheduledPod, ...] = ()  # GPU pods that were scheduled
    notes: tuple[str, ...] = ()  # what could not be judged, for lack of which objects
    #: Where `now` came from: "--now", "the dump's collection time" or "the current time".
    now_source: str = "the current time"

    def by_cause(self) -> dict[str, list[StuckPod]]:
        """Pods grouped by cause slug, most pods first (ties in the documented order)."""
        order = list(CAUSE_BY_SLUG)
        groups: dict[str, list[StuckPod]] = {}
        for pod in sorted(self.pods, key=lambda p: order.index(p.cause.slug)):
            groups.setdefault(pod.cause.slug, []).append(pod)
        return dict(sorted(groups.items(), key=lambda item: -len(item[1])))

    def time_to_schedule(self, pool: str | None = None) -> dict[str, int | None]:
        """`{count, p50, p95}` of creation -> PodScheduled seconds (nearest rank), of `pool`."""
        times = [s.seconds for s in self.scheduled if pool is None or s.pool == pool]
        return {"count": len(times), "p50": percentile(times, 0.5), "p95": percentile(times, 0.95)}

    def time_to_schedule_by_pool(self) -> dict[str, dict[str, int | None]]:
        """time_to_schedule per pool, pools by name."""
        return {
            pool: self.time_to_schedule(pool) for pool in sorted({s.pool for s in self.scheduled})
        }

    def pending_percentile(self, fraction: float) -> int | None:
        """The nearest-rank percentile of the pending times (None without any)."""
        return percentile(
            [p.pending_seconds for p in self.pods if p.pending_seconds is not None], fraction
        )


class _Facts(dict):
    """Template values for one pod; a value the cause does not need is empty."""

    def __missing__(self, key: str) -> str:
        return ""


@dataclass(frozen=True)
class _Verdict:
    slug: str
    explanation: str
    evidence: tuple[Evidence, ...] = ()
    facts: Mapping[str, str] = field(default_factory=dict)


def diagnose(
    documents: Sequence[Document] | Gathered,
    profile: ClusterProfile | None = None,
    now: datetime | None = None,
    *,
    namespaces: Collection[str] = (),
    names: Sequence[str] = (),
    pool_label: str | None = None,
    workloads: WorkloadSource = WorkloadSource.DUMP,
    typed: Sequence[Workload] | None = None,
    now_source: str | None = None,
) -> Diagnosis:
    """Classify every Pending, unbound GPU pod, every controller refused GPU pods and every GPU
    job Kueue has not admitted; measure how long the scheduled GPU pods took to schedule.

    `documents` hold Pods, Events and optionally the controllers (ReplicaSets, Jobs ...),
    Nodes, Kueue Workloads and DRA objects; `now` defaults to the current time, never to the
    newest time the objects record (a stuck pod with no recent event would read "pending 0s");
    `now_source` says where a given `now` came from (default "--now"). `namespaces` and
    `names` (substrings or globs of the pod, job or owner name) keep only what they match;
    `workloads` says where Kueue's Workloads were looked for (a dump, or a cluster that
    served, refused or lacks them).
    `typed` are the documents that run pods as the loader typed them; None types them here
    (objects read from the API). `documents` may also be what `read_dumps` or live mode
    gathered of them (gpulint.diagnose.gather), read in one pass.
    """
    if isinstance(documents, Gathered):
        gathered = documents
    else:
        gathered = gather(documents, _typed_workloads(typed))
    if now is None:
        now, now_source = datetime.now(timezone.utc), "the current time"
    dra = DraIndex.of(gathered.dra, profile)
    usage = PoolUsage(gathered, pool_label)
    stuck = [
        _diagnose_pod(document, template, gathered, profile, now, claims, dra, usage)
        for document, template, claims in _pending_gpu_pods(gathered.pods, dra)
    ]
    stuck.extend(_refused_creations(gathered, now))
    stuck.extend(_queued(gathered, profile, now, dra, workloads))
    stuck.extend(_crashed(gathered, pool_label))
    scheduled = _scheduled(gathered, dra, pool_label)

    def wanted(namespace: str, *candidates: str | None) -> bool:
        if namespaces and namespace not in namespaces:
            return False
        return not names or any(
            _name_matches(pattern, c) for pattern in names for c in candidates if c
        )

    return Diagnosis(
        tuple(p for p in stuck if wanted(p.namespace, p.name, (p.owner or "/").split("/", 1)[1])),
        now,
        tuple(s for s in scheduled if wanted(s.namespace, s.name)),
        tuple((*gathered.notes, *_notes(gathered, dra, profile, workloads))),
        now_source or "--now",
    )


def _typed_workloads(
    typed: Sequence[Workload] | None,
) -> Callable[[Document], Workload | None] | None:
    """The typed workload view of a document: the loader's when it typed them, else None
    (read where needed)."""
    if typed is None:
        return None
    known = {id(w.document): w for w in typed}
    return lambda document: known.get(id(document))


def _name_matches(pattern: str, name: str) -> bool:
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


def _is_gpu_pod(template: PodTemplate, document: Document, dra: DraIndex) -> DraClaims | None:
    """None when the pod requests no accelerator; else its DRA claims (maybe none)."""
    namespace = document.ref.namespace or "default"
    claims = dra.claims_of(document.obj, template.spec, namespace)
    if gpu_requests(template) or claims.accelerator(dra.classes):
        return claims
    return None


def _pending_gpu_pods(
    documents: Iterable[Document], dra: DraIndex
) -> Iterable[tuple[Document, PodTemplate, DraClaims]]:
    for document in documents:
        obj = document.obj
        if document.ref.kind != "Pod" or text(mapping(obj.get("status")).get("phase")) != "Pending":
            continue
        if not document.ref.name:
            continue  # no API object lacks a name: a hand-edited or truncated dump
        if mapping(obj.get("spec")).get("nodeName"):
            continue  # bound: pulling images or starting, not waiting for the scheduler
        template = pod_template(document, obj)
        claims = _is_gpu_pod(template, document, dra) if template is not None else None
        if template is not None and claims is not None:
            yield document, template, claims


def _scheduled(gathered: Gathered, dra: DraIndex, pool_label: str | None) -> list[ScheduledPod]:
    """Every GPU pod that was scheduled, with its pool (from the dump's Nodes) and time."""
    nodes = [node_view(n) for n in gathered.nodes]
    pools = pool_names(nodes, pool_label) if nodes else {}
    found = []
    for document in gathered.pods:
        if not document.ref.name:
            continue
        obj = document.obj
        at = scheduled_at(obj)
        created = timestamp(mapping(obj.get("metadata")).get("creationTimestamp"))
        if at is None or created is None:
            continue
        template = pod_template(document, obj)
        if template is None or _is_gpu_pod(template, document, dra) is None:
            continue
        node = text(mapping(obj.get("spec")).get("nodeName"))
        found.append(
            ScheduledPod(
                document.ref.namespace or "default",
                document.ref.name,
                pools.get(node, "unknown"),
                max(0, int((at - created).total_seconds())),
            )
        )
    return found


def _notes(
    gathered: Gathered,
    dra: DraIndex,
    profile: ClusterProfile | None,
    workloads: WorkloadSource,
) -> Iterator[str]:
    kinds = set(gathered.kinds)
    if profile is not None and profile.pools:
        kinds.add("Node")  # read into the profile (live mode, or --profile)
    if "Event" not in kinds:
        yield (
            "no Events: causes come from the pods' PodScheduled conditions only, and pod "
            "creations refused by admission (quota, LimitRange, PriorityClass) are not seen"
        )
    if "Node" not in kinds:
        yield (
            "no Nodes: a taint that 1.35+ does not print cannot be named, a device plugin that "
            "stopped serving is not seen, and time to schedule has no pools"
        )
    queued = bool(gathered.queued)
    # A denied list is noted by live mode, and a cluster without Kueue is said in the job's
    # evidence: the note is for a dump without them, or a cluster that holds none.
    unexplained = workloads in (WorkloadSource.DUMP, WorkloadSource.LIVE)
    if queued and "Workload" not in kinds and unexplained:
        yield "no Workloads: why Kueue holds a suspended job is not known"
    claimed = gathered.claimed
    if claimed and not dra.claims:
        yield (
            "no ResourceClaims or ResourceClaimTemplates: pods with DRA claims are GPU pods "
            "only when they also request a GPU resource"
        )
    if claimed and not dra.slices:
        yield "no ResourceSlices: what the nodes offer for DRA claims is not known"


# ---------------------------------------------------------------------------------------------
# Pods


def _diagnose_pod(
    document: Document,
    template: PodTemplate,
    gathered: Gathered,
    profile: ClusterProfile | None,
    now: datetime,
    claims: DraClaims,
    dra: DraIndex,
    usage: PoolUsage | None = None,
) -> StuckPod:
    obj = document.obj
    metadata = mapping(obj.get("metadata"))
    namespace, name = document.ref.namespace or "default", document.ref.name
    gpus = gpu_requests(template)
    classes = claims.device_classes
    resource = sorted(gpus)[0] if gpus else (classes[0] if classes else "the DRA devices")
    mine = gathered.events_about("Pod", namespace, name, text(metadata.get("uid")))
    verdict = _claim_verdict(claims, mine, dra) or _pod_verdict(template, gpus, mine, profile)
    if verdict.slug == "resource-claim-unallocatable":
        verdict = _unallocatable(verdict, claims, dra)
    if verdict.slug == "pool-at-max-size" and profile is not None and usage is not None:
        verdict = _at_max_size(verdict, template, gpus, profile, usage)
    facts = _Facts(
        namespace=namespace,
        pod=name,
        resource=resource,
        resource_path=resource.replace(".", "\\."),
        describe=f"pod {name}",
    )
    _, kind, owner_name = pod_owner(obj)
    created = timestamp(metadata.get("creationTimestamp"))
    return _stuck(
        namespace,
        name,
        None if kind == "Pod" else f"{kind}/{owner_name}",
        verdict,
        _seconds(now, created),
        facts,
    )


def _pod_verdict(
    template: PodTemplate,
    gpus: Mapping[str, Decimal],
    events: Sequence[Event],
    profile: ClusterProfile | None,
) -> _Verdict:
    gates = [text(mapping(g).get("name")) for g in sequence(template.spec.get("schedulingGates"))]
    if gates:
        return _Verdict(
            "scheduling-gated",
            f"the pod has schedulingGates {', '.join(gates)}: the scheduler waits until they "
            "are removed",
            (Evidence("pod", f"spec.schedulingGates: {', '.join(gates)}"),),
            {"gates": ", ".join(gates)},
        )
    scheduler_event = newest(
        e for e in events if e.reason == "FailedScheduling" and not e.from_autoscaler
    )
    scaling = newest(e for e in events if e.from_autoscaler)
    if scheduler_event is not None:
        message, evidence = scheduler_event.message, _event_evidence(scheduler_event)
    else:
        condition = _unschedulable_condition(template)
        if condition is None:
            return _no_events(template)
        message = condition
        evidence = Evidence("pod", message, "Unschedulable")
    histogram = parse_histogram(message)
    if histogram is not None:
        evidence = _with_histogram(evidence, histogram)
    verdict = None if histogram is None else _from_histogram(histogram, template, gpus, profile)
    if verdict is None:
        return _Verdict(
            "unclassified",
            f"no cause gpulint knows in the scheduler's message: {message}",
            (evidence,),
        )
    if verdict.slug == "insufficient-gpu" and scaling is not None:
        verdict = _with_autoscaler(verdict, scaling)
    return _Verdict(verdict.slug, verdict.explanation, (evidence, *verdict.evidence), verdict.facts)


def _unschedulable_condition(template: PodTemplate) -> str | None:
    """The PodScheduled=False condition's message: the scheduler's text after events expired."""
    for condition in sequence(mapping(template.node.get("status")).get("conditions")):
        condition = mapping(condition)
        if condition.get("type") == "PodScheduled" and text(condition.get("status")) == "False":
            message = " ".join(text(condition.get("message")).split())
            if message:
                return message
    return None


def _no_events(template: PodTemplate) -> _Verdict:
    scheduler = text(template.spec.get("schedulerName")) or DEFAULT_SCHEDULER
    if scheduler != DEFAULT_SCHEDULER:
        return _Verdict(
            "no-events",
            f"no event about the pod; it asks for schedulerName {scheduler}, which may not run",
            (Evidence("pod", f"spec.schedulerName: {scheduler}"),),
            {
                "no_events_fix": f"Check that a scheduler named {scheduler} runs in the cluster, "
                f"or remove schedulerName to use {DEFAULT_SCHEDULER}."
            },
        )
    return _Verdict(
        "no-events",
        "no event about the pod: the scheduler has not tried it yet, or its events expired",
        (Evidence("pod", "no FailedScheduling event and no PodScheduled condition"),),
        {
            "no_events_fix": "Check the scheduler's health and logs (kubectl -n kube-system logs "
            "-l component=kube-scheduler) and any admission webhooks; events expire after an "
            "hour by default, so run diagnose again while the pod is new."
        },
    )


def _event_evidence(event: Event) -> Evidence:
    counts = parse_scale_up(event.message) if event.from_autoscaler else None
    return Evidence(
        "event", event.message, event.reason, event.count, event.last_seen, None, counts or ()
    )


def _with_histogram(evidence: Evidence, histogram: NodeHistogram) -> Evidence:
    return replace(evidence, nodes=histogram.nodes, node_reasons=histogram.reasons)


@dataclass(frozen=True)
class _Reason:
    """One histogram entry matched to a cause; `groups` hold the resource or the taint."""

    entry: NodeCount
    slug: str
    groups: Mapping[str, str]


def _matched(histogram: NodeHistogram) -> list[_Reason]:
    found = []
    for entry in histogram.reasons:
        for pattern, slug in SCHEDULER_REASONS:
            match = pattern.match(entry.reason)
            if match is not None:
                groups = {k: v for k, v in match.groupdict().items() if v is not None}
                found.append(_Reason(entry, slug, groups))
                break
    return found


def _from_histogram(
    histogram: NodeHistogram,
    template: PodTemplate,
    gpus: Mapping[str, Decimal],
    profile: ClusterProfile | None,
) -> _Verdict | None:
    """The cause that explains why the GPU nodes refused the pod (see the module docstring)."""
    reasons = _matched(histogram)
    if not reasons:
        return None
    short = [r for r in reasons if r.groups.get("resource") in gpus]
    if short:
        unusable = _unusable_resource(short[0], template, profile)
        if unusable is not None:
            return unusable
    taints = [r for r in reasons if r.slug == "untolerated-taint"]
    gpu_taint = _gpu_taint_verdict(taints, template, gpus, profile) if taints else None
    if gpu_taint is not None:
        return gpu_taint
    unallocatable = [r for r in reasons if r.slug == "resource-claim-unallocatable"]
    if unallocatable:
        # Counted there, a node passed taints and node affinity: it lacks the devices.
        return _simple(unallocatable[0], "no node can allocate the pod's DRA claims")
    if short and has_required_placement(template):
        # The nodes that passed the pod's own selector are full: capacity, not placement.
        return _shortage(short[0])
    spread = [r for r in reasons if r.slug == "anti-affinity"]
    if spread:
        return _simple(spread[0], "pod (anti-)affinity or spread constraints")
    if short:
        return _shortage(short[0])
    other = [r for r in reasons if r.slug == "insufficient-gpu"]
    if other:
        return _simple(other[0], "the nodes that may run the pod are full")
    selector = [r for r in reasons if r.slug == "node-selector-mismatch"]
    if selector:
        return _selector_verdict(selector[0], template)
    if taints:
        first = taints[0]
        # 1.35+ writes no taint: only the count of nodes.
        key = first.groups.get("key")
        named = (Taint(key, first.groups.get("value", ""), "NoSchedule"),) if key else ()
        return _taint_verdict(first, named, False)
    return None


def _simple(reason: _Reason, what: str) -> _Verdict:
    return _Verdict(reason.slug, f"{what}: {reason.entry.count} {reason.entry.reason}")


def _unusable_resource(
    reason: _Reason, template: PodTemplate, profile: ClusterProfile | None
) -> _Verdict | None:
    """`Insufficient R` because no node can give R at all: plugin down, or a wrong name.

    A pool whose device plugin is down counts only when the pod could run there otherwise
    (its placement matches and it tolerates the taints).
    """
    resource = reason.groups["resource"]
    counted = f"{reason.entry.count} {reason.entry.reason}"
    if profile is not None:
        advertised = {n for p in profile.pools for n, amount in pool_gpus(p).items() if amount}
        # A plugin that never registered leaves a vendor name absent; a typo is absent anyway.
        down = [
            fit.pool
            for fit in (pool_fit(template, p, profile) for p in profile.pools)
            if fit.pool.device_plugin_not_ready
            and fit.matches_placement
            and fit.tolerated
            and (
                resource in fit.pool.allocatable
                or (resource not in advertised and is_known_accelerator(resource))
            )
        ]
        if down:
            pools = "; ".join(
                f"pool {p.name}: device plugin not ready on {p.device_plugin_not_ready} node(s)"
                for p in down
            )
            return _Verdict(
                "device-plugin-not-ready",
                f"{counted}, and the GPU nodes' device plugin is not serving ({pools})",
                (Evidence("profile", pools),),
            )
        if resource in advertised:
            return None
        suggestion = suggest_resource(resource, sorted(advertised))
        known = ", ".join(sorted(advertised)) or "none"
        return _Verdict(
            "resource-not-advertised",
            f"{counted}: no pool advertises {resource} (advertised: {known})",
            (Evidence("profile", f"advertised accelerator resources: {known}"),),
            {"suggestion": f" (`{suggestion}`?)" if suggestion else ""},
        )
    if is_known_accelerator(resource):
        return None
    suggestion = suggest_resource(resource)
    return _Verdict(
        "resource-not-advertised",
        f"{counted}: {resource} is no name a device plugin advertises",
        (),
        {"suggestion": f" (`{suggestion}`?)" if suggestion else ""},
    )


def _shortage(reason: _Reason) -> _Verdict:
    return _Verdict(
        "insufficient-gpu",
        f"the nodes that may run the pod have no free {reason.groups['resource']}: "
        f"{reason.entry.count} {reason.entry.reason}",
    )


def _with_autoscaler(verdict: _Verdict, event: Event) -> _Verdict:
    """A shortage the autoscaler refuses to fix is the pool's size, not the wait."""
    evidence = (*verdict.evidence, _event_evidence(event))
    if event.reason != "TriggeredScaleUp" and NO_SCALE_UP.search(event.message):
        return _Verdict(
            "pool-at-max-size",
            f"{verdict.explanation}, and the autoscaler will not add a node: {event.message}",
            evidence,
            verdict.facts,
        )
    return _Verdict(verdict.slug, verdict.explanation, evidence, verdict.facts)


def _at_max_size(
    verdict: _Verdict,
    template: PodTemplate,
    gpus: Mapping[str, Decimal],
    profile: ClusterProfile,
    usage: PoolUsage,
) -> _Verdict:
    """The pool the autoscaler will not grow, named: its nodes and GPUs used of its maximum,
    and the workloads that hold them. The pools are those the pod would run on (placement,
    taints, a node's room for its GPUs); without any known, the verdict is left as it is."""
    resource = sorted(gpus)[0]
    pools = [
        fit.pool
        for fit in (pool_fit(template, p, profile) for p in profile.pools)
        if fit.matches_placement
        and fit.tolerated
        and allocatable(fit.pool, resource) >= gpus[resource]
    ]
    if not pools:
        return verdict
    texts = []
    for pool in pools:
        # The autoscaler says the pool is at its maximum: a profile that states a higher one
        # (the cloud's quota stops it) shows both.
        ceiling = max(pool.max_nodes, pool.nodes)
        total = allocatable(pool, resource) * pool.nodes
        holders = sorted(
            usage.of(pool.name).items(),
            key=lambda item: (-item[1][0].get(resource, Decimal(0)), item[0]),
        )
        used = sum((held.get(resource, Decimal(0)) for _, (held, _) in holders), Decimal(0))
        held_by = [
            f"{kind}/{namespace}/{name} {format_amount(resource, held[resource])} "
            f"({pods} pod{'' if pods == 1 else 's'})"
            for (namespace, kind, name), (held, pods) in holders
            if resource in held
        ]
        text_ = (
            f"pool {pool.name} is at its maximum size: {pool.nodes}/{ceiling} nodes, "
            f"{format_amount(resource, used)}/{format_amount(resource, total)} {resource} in use"
        )
        if held_by:
            text_ += f", held by {first_pools(held_by, '; ')}"
        texts.append(text_)
    names = ", ".join(p.name for p in pools)
    return _Verdict(
        verdict.slug,
        f"{verdict.explanation}; {'; '.join(texts)}",
        verdict.evidence,
        {**verdict.facts, "pools": f" of {names}"},
    )


def _gpu_taint_verdict(
    taints: Sequence[_Reason],
    template: PodTemplate,
    gpus: Mapping[str, Decimal],
    profile: ClusterProfile | None,
) -> _Verdict | None:
    """The untolerated taint of a GPU node, when the histogram shows one."""
    for reason in taints:
        key = reason.groups.get("key")
        if key is None:
            continue
        value = reason.groups.get("value", "")
        if _gpu_taint(key, value, gpus, profile):
            taint = _profile_taint(key, value, profile) or Taint(key, value, "NoSchedule")
            return _taint_verdict(reason, (taint,), True)
    unnamed = next((r for r in taints if "key" not in r.groups), None)
    if unnamed is None:
        return None
    if profile is not None:
        # This release does not print the taint: compare the pod with the GPU pools' taints.
        found = _untolerated_gpu_taints(template, gpus, profile)
        return _taint_verdict(unnamed, found, True) if found else None
    tolerated = [t.key for t in template.tolerations]
    if any(k in gpus or looks_like_accelerator(k) or "gpu" in k.lower() for k in tolerated):
        return None  # the pod tolerates the GPU taint; some other node's taint is counted
    return _taint_verdict(unnamed, (), True)


def _gpu_taint(
    key: str, value: str, gpus: Mapping[str, Decimal], profile: ClusterProfile | None
) -> bool:
    if key in gpus or looks_like_accelerator(key) or "gpu" in f"{key}={value}".lower():
        return True
    return profile is not None and any(
        t.key == key for p in profile.pools if pool_gpus(p) for t in p.taints
    )


def _profile_taint(key: str, value: str, profile: ClusterProfile | None) -> Taint | None:
    if profile is None:
        return None
    return next(
        (t for p in profile.pools for t in p.taints if t.key == key and t.value == value), None
    )


def _untolerated_gpu_taints(
    template: PodTemplate, gpus: Mapping[str, Decimal], profile: ClusterProfile
) -> tuple[Taint, ...]:
    tolerations = admitted_tolerations(template, profile)
    found: list[Taint] = []
    for pool in _gpu_pools(profile, gpus):
        for taint in untolerated_taints(tolerations, pool.taints):
            if taint not in found:
                found.append(taint)
    return tuple(found)


def _gpu_pools(profile: ClusterProfile, gpus: Mapping[str, Decimal]) -> list[Pool]:
    return [p for p in profile.pools if any(name in pool_gpus(p) for name in gpus)]


def _taint_verdict(reason: _Reason, taints: Sequence[Taint], on_gpu_nodes: bool) -> _Verdict:
    counted = f"{reason.entry.count} {reason.entry.reason}"
    where = "the GPU nodes" if on_gpu_nodes else "nodes"
    if taints:
        names = ", ".join(str(t) for t in taints)
        explanation = f"{where} carry {names}, which the pod does not tolerate: {counted}"
        toleration = "tolerations:\n" + "\n".join(toleration_yaml(t) for t in taints)
    else:
        explanation = f"{where} carry a taint the pod does not tolerate: {counted}"
        toleration = (
            "(this Kubernetes release does not print the taint: compare the nodes' taints "
            "with the pod's tolerations, or pass the nodes dump / --profile)"
        )
    return _Verdict("untolerated-taint", explanation, (), {"toleration": toleration})


def _selector_verdict(reason: _Reason, template: PodTemplate) -> _Verdict:
    selector = ", ".join(f"{k}={v}" for k, v in template.node_selector.items())
    affinity = " and required node affinity" if template.required_node_affinity else ""
    placement = f"nodeSelector {selector}{affinity}" if selector else "required node affinity"
    if not has_required_placement(template):
        placement = "a scheduler-enforced node affinity"
    return _Verdict(
        "node-selector-mismatch",
        f"{placement} matches no node that can take the pod: "
        f"{reason.entry.count} {reason.entry.reason}",
        facts={"selector_note": f" (the pod asks for {placement})"},
    )


# ---------------------------------------------------------------------------------------------
# DRA claims and Kueue


def _claim_verdict(claims: DraClaims, events: Sequence[Event], dra: DraIndex) -> _Verdict | None:
    """A claim that does not exist: the dump lacks it, or the control plane said so."""
    failed = newest(
        e
        for e in events
        if e.reason == "FailedResourceClaimCreation"
        or (e.reason == "FailedScheduling" and CLAIM_MISSING.search(e.message))
    )
    if not claims.missing and failed is None:
        return None
    evidence = (_event_evidence(failed),) if failed is not None else ()
    what = ", ".join(claims.missing) or "its claim"
    found = _CLAIM_NAMED.search(failed.message) if failed is not None else None
    ref = claims.missing[0] if claims.missing else (found.group(0) if found else "the claim")
    return _Verdict(
        "resource-claim-missing",
        f"the pod's resourceClaims name {what}, which does not exist in the namespace",
        (
            *evidence,
            *(Evidence("pod", f"spec.resourceClaims: {m} not in the dump") for m in claims.missing),
        ),
        {"claim_ref": ref},
    )


_CLAIM_NAMED = re.compile(r'resource claim template "[^"]+"|resourceclaim\S* "[^"]+"', re.I)


def _unallocatable(verdict: _Verdict, claims: DraClaims, dra: DraIndex) -> _Verdict:
    """Name the claims' requests and, with ResourceSlices, what the nodes offer."""
    requests = "; ".join(c.describe() for c in claims.found) or "claims not in the dump"
    offers = []
    for name in claims.device_classes:
        known = next((c for c in dra.classes if c.name == name), None)
        if known is None and name in ACCELERATOR_DRIVERS:
            # A driver's own class (not in the dump): every device of the driver, as a bound.
            known = DeviceClass(name, frozenset({name}), None)
        if known is None or not dra.slices:
            continue
        per_node = devices_per_node(known, dra.slices)
        shown = ", ".join(f"{n} {count}" for n, count in sorted(per_node.items())) or "none"
        offers.append(f"{name}: {shown}")
    evidence = [*verdict.evidence, Evidence("pod", f"claims: {requests}")]
    note = ""
    if offers:
        evidence.append(Evidence("profile", "ResourceSlices offer per node: " + "; ".join(offers)))
        note = f" ({'; '.join(offers)})"
    return _Verdict(
        verdict.slug,
        f"{verdict.explanation}; the pod claims {requests}",
        tuple(evidence),
        {**verdict.facts, "offer_note": note},
    )


def _queued(
    gathered: Gathered,
    profile: ClusterProfile | None,
    now: datetime,
    dra: DraIndex,
    workloads: WorkloadSource,
) -> list[StuckPod]:
    def is_gpu(document: Document) -> bool:
        workload = gathered.workload(document)
        if workload is None:
            return False
        return any(
            gpu_requests(t)
            or dra.claims_of({}, t.spec, document.ref.namespace or "default").accelerator(
                dra.classes
            )
            for t in workload.templates
        )

    stuck = []
    for job in queued_jobs(gathered.kueue_workloads, gathered.queued, profile, is_gpu, workloads):
        cluster_queue = job.cluster_queue or (
            f"$(kubectl get localqueue {job.queue} -n {job.namespace} "
            "-o jsonpath='{.spec.clusterQueue}')"
        )
        facts = _Facts(
            namespace=job.namespace,
            pod=job.name,
            resource=job.resource or "the GPU resource",
            flavor_note=f" in flavor {job.flavor}" if job.flavor else "",
            cluster_queue=cluster_queue,
            describe=f"{job.kind.lower()} {job.name}",
        )
        where = f"LocalQueue {job.queue}" if job.queue else "its queue"
        if job.cluster_queue:
            where += f" (ClusterQueue {job.cluster_queue})"
        verdict = _Verdict(
            "kueue-inadmissible",
            f"Kueue has not admitted {job.kind} {job.name} from {where}: {job.message}",
            (Evidence("workload", job.message, job.reason, None, job.since),),
        )
        pending = _seconds(now, job.created)
        stuck.append(
            _stuck(job.namespace, job.name, f"{job.kind}/{job.name}", verdict, pending, facts)
        )
    return stuck


# ---------------------------------------------------------------------------------------------
# Controllers whose pod creations are refused (FailedCreate)


def _refused_creations(gathered: Gathered, now: datetime) -> list[StuckPod]:
    owners: dict[tuple[str, str, str], list[Event]] = {}
    for event in gathered.create_events:
        owners.setdefault((event.kind, event.namespace, event.name), []).append(event)
    stuck = []
    for key, seen in owners.items():
        last_success = newest(e for e in seen if e.reason == "SuccessfulCreate")
        failures = [
            e
            for e in seen
            if e.reason == "FailedCreate"
            and (last_success is None or _after(e.last_seen, last_success.last_seen))
        ]
        latest = newest(failures)
        if latest is None:
            continue
        if not _creates_gpu_pods(gathered.controllers.get(key), latest.message):
            continue
        started = min((e.first_seen for e in failures if e.first_seen), default=None)
        stuck.append(_refused(key, latest, started, now))
    return stuck


def _refused(
    owner: tuple[str, str, str], event: Event, started: datetime | None, now: datetime
) -> StuckPod:
    kind, namespace, name = owner
    refusal = parse_refusal(event.message)
    detail = refusal.detail if refusal is not None else event.message
    slug, groups = "unclassified", {}
    for pattern, candidate in REFUSALS:
        match = pattern.search(detail)
        if match is not None:
            slug = candidate
            groups = {k: v for k, v in match.groupdict().items() if v is not None}
            break
    resources = [r for r in _resources_in(detail) if looks_like_accelerator(r)]
    facts = _Facts(
        namespace=namespace,
        pod=refusal.pod_name if refusal is not None else name,
        resource=resources[0] if resources else "the GPU",
        quota_arg=f" {groups['quota']}" if "quota" in groups else "",
        priority_class=groups.get("priority_class", ""),
        runtime_class=groups.get("runtime_class", ""),
        describe=f"{kind.lower()} {name}",
    )
    what = "admission refuses its pods" if slug != "unclassified" else "its pods are refused"
    verdict = _Verdict(
        slug,
        f"{kind} {name}: {what}: {detail}",
        (_event_evidence(event),),
    )
    pod_name = refusal.pod_name if refusal is not None and refusal.pod_name else name
    return _stuck(namespace, pod_name, f"{kind}/{name}", verdict, _seconds(now, started), facts)


def _creates_gpu_pods(controller: bool | None, message: str) -> bool:
    """From the controller's pod template when the dump has it (whether it requests GPUs),
    else from the message."""
    if controller is not None:
        return controller
    return any(looks_like_accelerator(r) for r in _resources_in(message))


def _resources_in(message: str) -> list[str]:
    return [m.group(1) for m in _RESOURCE_IN_TEXT.finditer(message)]


def _crashed(gathered: Gathered, pool_label: str | None) -> Iterator[StuckPod]:
    """GPU pods that were scheduled and failed at their first CUDA call (diagnose.crashed)."""
    from gpulint.diagnose.crashed import CAUSE, crashed_gpu_pods

    for pod in crashed_gpu_pods(gathered.pods, gathered.events_about, gathered.nodes, pool_label):
        evidence = tuple(
            Evidence(source, message, reason) for source, message, reason in pod.evidence
        )
        verdict = _Verdict(CAUSE, pod.explanation, evidence, pod.facts)
        yield _stuck(
            pod.namespace,
            pod.name,
            pod.owner,
            verdict,
            None,
            _Facts(namespace=pod.namespace, pod=pod.name),
        )


# ---------------------------------------------------------------------------------------------


def _stuck(
    namespace: str,
    name: str,
    owner: str | None,
    verdict: _Verdict,
    pending: int | None,
    facts: _Facts,
) -> StuckPod:
    cause = CAUSE_BY_SLUG[verdict.slug]
    facts.update(verdict.facts)
    return StuckPod(
        namespace=namespace,
        name=name,
        owner=owner,
        cause=cause,
        explanation=verdict.explanation,
        pending_seconds=pending,
        evidence=verdict.evidence,
        confirm=cause.confirm.format_map(facts),
        fix=cause.fix.format_map(facts),
    )


def _seconds(now: datetime, since: datetime | None) -> int | None:
    if since is None:
        return None
    return max(0, int((now - since).total_seconds()))


def _after(first: datetime | None, second: datetime | None) -> bool:
    if first is None or second is None:
        return second is None
    return first > second
