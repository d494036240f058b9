"""The GPU time section of `gpulint diagnose` reports: its JSON value and its text.

Seconds are rounded to the millisecond (the kubelet's durations are in milliseconds), money to
the cent (half up) per run; hourly rates keep four decimals. Every figure the text shows is in
the JSON value, and the HTML report (gpulint.output.diagnose_html) reads the same value.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from gpulint.diagnose.pulls import PULL_SECONDS, PULL_SHARE, pull_fix, speed_ups
from gpulint.diagnose.timeline import PHASES
from gpulint.output.escape import MAX_NAME, one_line

if TYPE_CHECKING:
    from gpulint.diagnose.gputime import Comparison, GpuTime, RunCost
    from gpulint.diagnose.pulls import PoolPulls
    from gpulint.diagnose.timeline import PodTimeline

CENT = Decimal("0.01")
#: How the text names each phase.
PHASE_NAMES = {
    "schedule": "to schedule",
    "pull": "pulling",
    "pullWait": "waiting for other pulls",
    "beforeStart": "scheduled to first start",
    "ready": "started to ready",
    "run": "running",
}


def dollars(amount: Decimal | None) -> float | None:
    """Dollars rounded to the cent (half up), as a JSON number."""
    return None if amount is None else float(amount.quantize(CENT, ROUND_HALF_UP))


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def gpu_time_json(report: GpuTime) -> dict[str, Any]:
    """The GPU time section as a JSON value."""
    value: dict[str, Any] = {
        "pods": [_pod(p) for p in report.pods],
        "byWorkload": report.by_workload(),
        "byPool": report.by_pool(),
        "beforeStart": report.before_start(),
        "runs": [_run(r) for r in report.runs],
        "prices": None,
        "comparison": None if report.comparison is None else _comparison(report.comparison),
        "notes": list(report.notes),
        "slowPulls": [_slow_pulls(f) for f in report.pulls],
    }
    if report.prices is not None:
        value["prices"] = {"file": report.prices.path, "layout": report.prices.layout}
    return value


def _pod(pod: PodTimeline) -> dict[str, Any]:
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "workload": pod.workload,
        "node": pod.node,
        "pool": pod.pool,
        "gpus": float(pod.gpus),
        "images": list(pod.images),
        "created": _time(pod.created),
        "scheduled": _time(pod.scheduled),
        "initialized": _time(pod.initialized),
        "started": _time(pod.started),
        "ready": _time(pod.ready),
        "finished": _time(pod.finished),
        "starting": pod.starting,
        "phases": {k: _seconds(v) for k, v in pod.phases.items()},
        "pulls": [
            {
                "image": p.image,
                "cacheHit": p.cache_hit,
                "pullSeconds": _seconds(p.pull_seconds),
                "waitingSeconds": _seconds(p.waiting_seconds),
                "totalSeconds": _seconds(p.total_seconds),
                "sizeBytes": p.size_bytes,
            }
            for p in pod.pulls
        ],
        "secondsBeforeStart": _seconds(pod.seconds_before_start),
        "gpuSecondsBeforeStart": _seconds(pod.gpu_seconds_before_start),
    }


def _run(run: RunCost) -> dict[str, Any]:
    hourly = run.hourly
    return {
        "namespace": run.namespace,
        "job": run.job,
        "pods": len(run.pods),
        "gpus": float(run.gpus),
        "durationSeconds": _seconds(run.duration_seconds),
        "gpuSeconds": _seconds(run.gpu_seconds),
        "gpuSecondsBeforeStart": _seconds(run.gpu_seconds_before_start),
        "hourly": None if hourly is None else float(round(hourly, 4)),
        "cost": dollars(run.cost),
        "costBeforeStart": dollars(run.cost_before_start),
        "prices": [
            {"pod": p.timeline.name, "market": p.price.market, "row": p.price.row}
            for p in run.pods
            if p.price is not None
        ],
    }


def _comparison(comparison: Comparison) -> dict[str, Any]:
    return {
        "baseline": f"{comparison.baseline.namespace}/{comparison.baseline.job}",
        "candidate": f"{comparison.candidate.namespace}/{comparison.candidate.job}",
        "speedup": None if comparison.speedup is None else round(comparison.speedup, 4),
        "breakEven": None
        if comparison.break_even is None
        else float(round(comparison.break_even, 4)),
        "candidateCheaper": comparison.candidate_cheaper,
        "verdict": verdict(comparison),
    }


def verdict(comparison: Comparison) -> str:
    """One sentence: which variant costs less per run, and why (or what is not known)."""
    base, cand = comparison.baseline, comparison.candidate
    names = f"{cand.namespace}/{cand.job} against {base.namespace}/{base.job}"
    speedup = comparison.speedup
    said = (
        f"speedup {speedup:.2f}x"
        if speedup is not None
        else "speedup not known (a run has not finished)"
    )
    if comparison.break_even is None:
        return f"{names}: {said}; break-even not known (give --prices with both runs' nodes)"
    said += f", break-even {comparison.break_even:.2f}x"
    cheaper = comparison.candidate_cheaper
    if cheaper is None:
        return f"{names}: {said}"
    a, b = dollars(base.cost), dollars(cand.cost)
    if cheaper:
        return f"{names}: {said}: {cand.job} is cheaper per run (${b:.2f} against ${a:.2f})"
    return f"{names}: {said}: {cand.job} is not cheaper per run (${b:.2f} against ${a:.2f})"


def gpu_time_text(report: GpuTime) -> str:
    """The GPU time section as text: GPU time before the first start, phases by pool and by
    workload, each pod's timeline, runs and the comparison."""
    before = report.before_start()
    lines = [
        f"GPU time: {len(report.pods)} GPU pod{'' if len(report.pods) == 1 else 's'} bound to "
        f"nodes; {_span(before['gpuSeconds'])} GPU time held before the first container start"
    ]
    if report.pods:
        for what, values in (("pool", before["byPool"]), ("image", before["byImage"])):
            shown = ", ".join(f"{one_line(k, MAX_NAME)} {_span(v)}" for k, v in values.items())
            lines.append(f"  by {what}: {shown}")
        lines.append("Phases, p50 / p95:")
        for what, groups in (("pool", report.by_pool()), ("workload", report.by_workload())):
            for key, phases in groups.items():
                known = [
                    f"{PHASE_NAMES[p]} {_span(s['p50'])} / {_span(s['p95'])}"
                    for p in PHASES
                    if (s := phases[p])["count"]
                ]
                lines.append(
                    f"  {what} {one_line(key, MAX_NAME)}: {', '.join(known) or 'not known'}"
                )
        lines.append("Pods:")
        lines.extend(_pod_line(p) for p in report.pods)
    if report.runs:
        source = f" (prices: {one_line(report.prices.path)})" if report.prices else ""
        lines.append(f"Runs{source}:")
        for run in report.runs:
            took = (
                duration(int(run.duration_seconds))
                if run.duration_seconds is not None
                else "running"
            )
            gpu = f", {run.gpus:g} GPU" if run.gpus else ""
            money = ""
            if run.cost is not None:
                money = (
                    f", ${dollars(run.cost):.2f} per run, ${dollars(run.cost_before_start):.2f} "
                    f"of it before the first start ({run.hourly:.4f} $/h)"
                )
            elif report.prices is None:
                money = f", {run.gpu_seconds / 3600:.2f} GPU-hours"
            lines.append(
                f"  {one_line(f'{run.namespace}/{run.job}', MAX_NAME)}: {len(run.pods)} "
                f"pod{'' if len(run.pods) == 1 else 's'}{gpu}, {took}{money}"
            )
    if report.comparison is not None:
        lines.append(f"Break-even: {one_line(verdict(report.comparison))}")
    if report.pulls:
        lines.append(
            f"Image pulls dominate start-up (pulls, waiting included, >= {PULL_SHARE:.0%} of "
            f"created to first start and >= {_span(PULL_SECONDS)}):"
        )
        for finding in report.pulls:
            lines.append(_slow_pulls_line(finding))
            lines.append(one_line(f"    fix: {pull_fix(finding)}"))
    lines.extend(f"not known: {one_line(n)}" for n in report.notes)
    return "\n".join(lines) + "\n"


def _slow_pulls(finding: PoolPulls) -> dict[str, Any]:
    return {
        "pool": finding.pool,
        "startedPods": finding.started,
        "pods": [f"{p.namespace}/{p.name}" for p in finding.dominated],
        "pullSecondsP95": _seconds(finding.pull_p95),
        "waitingSecondsP95": _seconds(finding.waiting_p95),
        "shareP95": round(finding.share_p95, 3),
        "images": [{"image": i, "sizeBytes": s} for i, s in finding.images],
        "streamingNodes": finding.streaming[0],
        "nodes": finding.streaming[1],
        "caches": list(finding.caches),
        "daemonSetsKnown": finding.daemonsets_known,
        "speedUps": list(speed_ups(finding)),
        "fix": pull_fix(finding),
    }


def _slow_pulls_line(finding: PoolPulls) -> str:
    count = len(finding.dominated)
    waiting = (
        f" ({_span(finding.waiting_p95)} of it waiting behind other pulls)"
        if finding.waiting_p95
        else ""
    )
    images = ", ".join(
        f"{i} {s / 1e9:.1f} GB" if s is not None else f"{i} (size not known)"
        for i, s in finding.images
    )
    return one_line(
        f"  pool {finding.pool}: {count} of {finding.started} started GPU "
        f"pod{'' if finding.started == 1 else 's'}; pulls p95 {_span(finding.pull_p95)}{waiting}, "
        f"{finding.share_p95:.0%} of created to first start; {images}; speed-ups: "
        f"{'; '.join(speed_ups(finding))}"
    )


def _pod_line(pod: PodTimeline) -> str:
    marks = [f"created {_time(pod.created) or 'not known'}"]
    for label, moment in (
        ("scheduled", pod.scheduled),
        ("initialized", pod.initialized),
        ("started", pod.started),
        ("ready", pod.ready),
        ("finished", pod.finished),
    ):
        if moment is not None and pod.created is not None:
            marks.append(f"{label} +{_span((moment - pod.created).total_seconds())}")
    if pod.starting:
        marks.append(f"not started after {_span(pod.seconds_before_start)}")
    pulls = []
    for pull in pod.pulls:
        if pull.cache_hit:
            pulls.append(f"{pull.image} already present")
            continue
        parts = [
            f"{_span(pull.pull_seconds)} pull"
            if pull.pull_seconds is not None
            else "pull time not known"
        ]
        if pull.waiting_seconds is not None:
            parts.append(f"{_span(pull.waiting_seconds)} waiting")
        if pull.size_bytes is not None:
            parts.append(f"{pull.size_bytes / 1e9:.1f} GB")
        pulls.append(
            f"{pull.image} {' + '.join(parts[:2])}{', ' + parts[2] if len(parts) > 2 else ''}"
        )
    pulled = f"; pulled {'; '.join(pulls)}" if pulls else "; no Pulled event"
    where = f"{pod.workload}, pool {pod.pool or 'unknown'}, {pod.gpus:g} GPU"
    head = f"{pod.namespace}/{pod.name} ({where})"
    return one_line(f"  {head}: {', '.join(marks)}{pulled}")


def duration(seconds: int) -> str:
    """`45s`, `12m30s`, `3h5m`, `2d4h`: the two largest units."""
    units = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
    parts = []
    rest = seconds
    for name, size in units:
        if rest >= size or (name == "s" and not parts):
            parts.append(f"{rest // size}{name}")
            rest %= size
        if len(parts) == 2:
            break
    return "".join(p for p in parts if not p.startswith("0") or len(parts) == 1)


def _span(seconds: float | None) -> str:
    """`3m40s`, `27.7s`, `2h5m`: seconds below a minute keep their tenths."""
    if seconds is None:
        return "not known"
    if seconds < 60 and seconds != int(seconds):
        return f"{seconds:.1f}s"
    return duration(round(seconds))
