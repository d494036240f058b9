"""`gpulint diagnose` reports: text for people, JSON (`{"version": 1, "pods": [...]}`) for tools."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from gpulint.diagnose.classify import Diagnosis, Evidence, StuckPod
from gpulint.diagnose.extra import ScheduledPod
from gpulint.output.escape import MAX_NAME, one_line, text_block
from gpulint.output.gputime import duration

if TYPE_CHECKING:
    from gpulint.diagnose.gputime import GpuTime

JSON_VERSION = 1
_INDENT = " " * 11  # continuation lines line up under the labels' values


def _slow(diagnosis: Diagnosis, threshold: int) -> list[ScheduledPod]:
    return sorted(
        (s for s in diagnosis.scheduled if s.seconds > threshold), key=lambda s: -s.seconds
    )


def diagnosis_json(
    diagnosis: Diagnosis, slow_threshold: int | None = None, gpu_time: GpuTime | None = None
) -> str:
    """The diagnosis as one JSON document (with `gpuTime` when `gpu_time` is given)."""
    document: dict[str, Any] = {
        "version": JSON_VERSION,
        "pods": [_pod(p) for p in diagnosis.pods],
        "summary": {
            "stuck": len(diagnosis.pods),
            "byCause": {slug: len(pods) for slug, pods in diagnosis.by_cause().items()},
            "pendingSeconds": {
                "p50": diagnosis.pending_percentile(0.5),
                "p95": diagnosis.pending_percentile(0.95),
            },
            "timeToSchedule": diagnosis.time_to_schedule(),
            "timeToScheduleByPool": diagnosis.time_to_schedule_by_pool(),
            "now": _time(diagnosis.now),
        },
        "notes": list(diagnosis.notes),
    }
    if slow_threshold is not None:
        document["slowToSchedule"] = {
            "thresholdSeconds": slow_threshold,
            "pods": [
                {"namespace": s.namespace, "name": s.name, "pool": s.pool, "seconds": s.seconds}
                for s in _slow(diagnosis, slow_threshold)
            ],
        }
    if gpu_time is not None:
        from gpulint.output.gputime import gpu_time_json

        document["gpuTime"] = gpu_time_json(gpu_time)
    return json.dumps(document, indent=2) + "\n"


def _pod(pod: StuckPod) -> dict[str, Any]:
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "owner": pod.owner,
        "cause": pod.cause.slug,
        "rule": pod.cause.rule,
        "pendingSeconds": pod.pending_seconds,
        "evidence": [_evidence(e) for e in pod.evidence],
        "confirm": pod.confirm,
        "fix": pod.fix,
    }


def _evidence(evidence: Evidence) -> dict[str, Any]:
    return {
        "source": evidence.source,
        "reason": evidence.reason,
        "message": evidence.message,
        "count": evidence.count,
        "lastSeen": _time(evidence.last_seen),
        "nodes": evidence.nodes,
        "nodeReasons": {c.reason: c.count for c in evidence.node_reasons},
    }


def diagnosis_text(diagnosis: Diagnosis, slow_threshold: int | None = None) -> str:
    """The summary by cause and time to schedule, then the pods grouped by cause (most pods
    first), then what could not be judged."""
    head = [_summary(diagnosis) if diagnosis.pods else "No Pending GPU pods."]
    head.extend(_schedule_lines(diagnosis, slow_threshold))
    parts = ["\n".join(head) + "\n"]
    for slug, pods in diagnosis.by_cause().items():
        title = f"== {slug}: {len(pods)} pod{'' if len(pods) == 1 else 's'} =="
        parts.append(title + "\n\n" + "\n".join(_block(*group) for group in _gangs(pods)))
    if diagnosis.notes:
        parts.append("".join(f"not judged: {note}\n" for note in diagnosis.notes))
    return "\n".join(parts)


def _schedule_lines(diagnosis: Diagnosis, slow_threshold: int | None) -> list[str]:
    overall = diagnosis.time_to_schedule()
    if not overall["count"]:
        return []
    pools = ", ".join(
        f"{pool} {_times(stats)}" for pool, stats in diagnosis.time_to_schedule_by_pool().items()
    )
    lines = [f"Time to schedule, {_times(overall)}; by pool: {pools}"]
    if slow_threshold is not None:
        slow = _slow(diagnosis, slow_threshold)
        lines.append(f"Scheduled after more than {duration(slow_threshold)}: {len(slow)}")
        lines.extend(
            f"  {s.namespace}/{s.name} (pool {s.pool}): {duration(s.seconds)}" for s in slow
        )
    return lines


def _times(stats: dict[str, int | None]) -> str:
    count, p50, p95 = stats["count"], stats["p50"], stats["p95"]
    if not count or p50 is None or p95 is None:
        return "no pods"
    return f"{count} GPU pod{'' if count == 1 else 's'}: p50 {duration(p50)}, p95 {duration(p95)}"


def _gangs(pods: list[StuckPod]) -> list[list[StuckPod]]:
    """`pods` (of one cause) in blocks: the pods of one workload stuck for the same reason (a
    gang's members, a Deployment's replicas) are one block, in the order of their first pod."""
    blocks: dict[tuple[str, ...], list[StuckPod]] = {}
    for pod in pods:
        if pod.owner is None:
            blocks[("pod", pod.namespace, pod.name)] = [pod]
            continue
        # What a pod's block says of it but its name: the same, and the block is shared.
        said = (pod.explanation, pod.fix, pod.confirm)
        key = (pod.namespace, pod.owner, *(t.replace(pod.name, "\0") for t in said))
        blocks.setdefault(key, []).append(pod)
    return list(blocks.values())


def _block(pod: StuckPod, *others: StuckPod) -> str:
    """One pod's block; with `others` of its workload stuck alike, theirs too, under one head
    naming them all (its evidence and commands are the first pod's)."""
    # Names, events and messages come from the cluster: escaped and cut like every report.
    count = f", {1 + len(others)} pods" if others else ""
    owner = f" ({one_line(pod.owner, MAX_NAME)}{count})" if pod.owner else ""
    waits = [p.pending_seconds for p in (pod, *others) if p.pending_seconds is not None]
    pending = f", pending {duration(max(waits))}" if waits else ""
    name = one_line(f"{pod.namespace}/{pod.name}", 2 * MAX_NAME)
    if others:
        shown = [one_line(p.name, MAX_NAME) for p in others[:3]]
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        name += f", {', '.join(shown)}{more}"
    lines = [f"{name}{owner}: {pod.cause.slug}{pending}"]
    lines.append(f"  why:     {one_line(pod.explanation)}")
    for evidence in pod.evidence:
        lines.append(_labelled("  seen:    ", _evidence_text(evidence)))
    lines.append(_labelled("  confirm: ", pod.confirm))
    lines.append(_labelled("  fix:     ", pod.fix))
    if pod.cause.rule:
        lines.append(f"  caught before merge by {pod.cause.rule} (gpulint check)")
    return "\n".join(lines) + "\n"


def _evidence_text(evidence: Evidence) -> str:
    if evidence.source != "event":
        return f"{evidence.source}: {evidence.message}"
    times = f" x{evidence.count}" if evidence.count and evidence.count > 1 else ""
    when = f", last {_time(evidence.last_seen)}" if evidence.last_seen else ""
    return f"{evidence.reason}{times}{when}: {evidence.message}"


def _labelled(label: str, text: str) -> str:
    return label + text_block(text).replace("\n", "\n" + _INDENT)


def _summary(diagnosis: Diagnosis) -> str:
    count = len(diagnosis.pods)
    causes = ", ".join(f"{slug} {len(pods)}" for slug, pods in diagnosis.by_cause().items())
    p50, p95 = diagnosis.pending_percentile(0.5), diagnosis.pending_percentile(0.95)
    pending = ""
    if p50 is not None and p95 is not None:
        pending = f"; pending p50 {duration(p50)}, p95 {duration(p95)}"
    return f"{count} stuck GPU pod{'' if count == 1 else 's'}: {causes}{pending}"


def _time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
