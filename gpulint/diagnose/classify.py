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

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from decimal import Decimal

from gpulint.accelerators import is_known_accelerator, looks_like_accelerator, suggest_resource
from gpulint.constraints import toleration_yaml
from gpulint.diagnose.causes import (
    CAUSE_BY_SLUG,
    NO_SCALE_UP,
    REFUSALS,
    SCHEDULER_REASONS,
    Cause,
)
from gpulint.diagnose.events import Event, events_of, newest, times_in, timestamp
from gpulint.diagnose.messages import (
    NodeCount,
    NodeHistogram,
    parse_histogram,
    parse_refusal,
    parse_scale_up,
)
from gpulint.gpus import gpu_requests
from gpulint.model import Document, PodTemplate
from gpulint.pods import pod_owner
from gpulint.profile.model import ClusterProfile, Pool, Taint
from gpulint.profile.values import mapping, sequence, text
from gpulint.scheduling import (
    admitted_tolerations,
    has_required_placement,
    pool_fit,
    pool_gpus,
    untolerated_taints,
)
from gpulint.workloads import pod_template, workload_of

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
    """Every stuck GPU pod of a dump or a cluster."""

    pods: tuple[StuckPod, ...]
    now: datetime

    def by_cause(self) -> dict[str, list[StuckPod]]:
        """Pods grouped by cause slug, causes in the documented order."""
        groups: dict[str, list[StuckPod]] = {}
        for slug in CAUSE_BY_SLUG:
            members = [p for p in self.pods if p.cause.slug == slug]
            if members:
                groups[slug] = members
        return groups

    def pending_percentile(self, fraction: float) -> int | None:
        """The nearest-rank percentile of the pending times (None without any)."""
        times = sorted(p.pending_seconds for p in self.pods if p.pending_seconds is not None)
        if not times:
            return None
        return times[max(0, math.ceil(fraction * len(times)) - 1)]


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
    documents: Sequence[Document],
    profile: ClusterProfile | None = None,
    now: datetime | None = None,
) -> Diagnosis:
    """Classify every Pending, unbound GPU pod and every controller refused GPU pods.

    `documents` hold Pods, Events and optionally the controllers (ReplicaSets, Jobs ...);
    `now` defaults to the newest time the objects record, so a dump reads as of its capture.
    """
    events = events_of(documents)
    if now is None:
        now = max(times_in(documents, events), default=datetime.now(timezone.utc))
    stuck = [
        _diagnose_pod(document, template, events, profile, now)
        for document, template in _pending_gpu_pods(documents)
    ]
    stuck.extend(_refused_creations(documents, events, now))
    return Diagnosis(tuple(stuck), now)


def _pending_gpu_pods(documents: Iterable[Document]) -> Iterable[tuple[Document, PodTemplate]]:
    for document in documents:
        obj = document.obj
        if document.ref.kind != "Pod" or text(mapping(obj.get("status")).get("phase")) != "Pending":
            continue
        if not document.ref.name:
            continue  # no API object lacks a name: a hand-edited or truncated dump
        if mapping(obj.get("spec")).get("nodeName"):
            continue  # bound: pulling images or starting, not waiting for the scheduler
        template = pod_template(document, obj)
        if template is not None and gpu_requests(template):
            yield document, template


# ---------------------------------------------------------------------------------------------
# Pods


def _diagnose_pod(
    document: Document,
    template: PodTemplate,
    events: Sequence[Event],
    profile: ClusterProfile | None,
    now: datetime,
) -> StuckPod:
    obj = document.obj
    metadata = mapping(obj.get("metadata"))
    namespace, name = document.ref.namespace or "default", document.ref.name
    gpus = gpu_requests(template)
    resource = sorted(gpus)[0]
    mine = [e for e in events if e.about("Pod", namespace, name, text(metadata.get("uid")))]
    verdict = _pod_verdict(template, gpus, mine, profile)
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
        named = (Taint(first.groups["key"], first.groups.get("value", ""), "NoSchedule"),)
        return _taint_verdict(first, named if "key" in first.groups else (), False)
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
# Controllers whose pod creations are refused (FailedCreate)


def _refused_creations(
    documents: Sequence[Document], events: Sequence[Event], now: datetime
) -> list[StuckPod]:
    controllers = {
        (d.ref.kind, d.ref.namespace or "default", d.ref.name): d
        for d in documents
        if d.ref.kind != "Pod" and d.ref.kind != "Event"
    }
    owners: dict[tuple[str, str, str], list[Event]] = {}
    for event in events:
        if event.reason in ("FailedCreate", "SuccessfulCreate") and event.kind != "Pod":
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
        if latest is None or not _creates_gpu_pods(controllers.get(key), latest.message):
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


def _creates_gpu_pods(controller: Document | None, message: str) -> bool:
    """From the controller's pod template when the dump has it, else from the message."""
    if controller is not None:
        workload = workload_of(controller)
        if workload is not None:
            return any(gpu_requests(t) for t in workload.templates)
    return any(looks_like_accelerator(r) for r in _resources_in(message))


def _resources_in(message: str) -> list[str]:
    return [m.group(1) for m in _RESOURCE_IN_TEXT.finditer(message)]


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
