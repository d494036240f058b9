"""`gpulint diagnose --format html`: one self-contained page (inline CSS and SVG, no script,
no external asset) with the stuck pods, each GPU pod's timeline, phase bars per pool, GPU time
before the first start, runs and the break-even.

The page is drawn from the JSON report's values (gpulint.output.diagnose.diagnosis_json), so
it shows the same figures; every text from the cluster is HTML-escaped.
"""

from __future__ import annotations

import json
from datetime import datetime
from html import escape
from typing import Any

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#1d2330;max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:3px 10px;border-bottom:1px solid #e3e6ee;
text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}
.legend span{display:inline-block;margin-right:1.2em}
.sw{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.note{color:#666}svg text{font:11px system-ui,sans-serif}
""".strip()
#: Phase colours of the timeline bars.
_COLOURS = {
    "schedule": "#9aa5b8",
    "beforeStart": "#e8923a",
    "run": "#3b9b5f",
    "starting": "#d64545",
}
_LABELS = {
    "schedule": "created to scheduled",
    "beforeStart": "scheduled to first start (pull, init)",
    "run": "running",
    "starting": "still starting",
}


def diagnosis_html(report_json: str) -> str:
    """The HTML page of a JSON report (`diagnosis_json`, with its `gpuTime` section)."""
    report = json.loads(report_json)
    gpu = report.get("gpuTime") or {}
    summary = report["summary"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>gpulint diagnose</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>gpulint diagnose</h1>",
        f'<p>As of <time data-figure="now">{_e(summary["now"])}</time>: '
        f'<b data-figure="stuck">{summary["stuck"]}</b> stuck GPU pods.</p>',
        *_stuck(report["pods"]),
        *_gpu_time(gpu),
        *_notes([*report.get("notes", ()), *gpu.get("notes", ())]),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _stuck(pods: list[dict[str, Any]]) -> list[str]:
    if not pods:
        return []
    rows = [
        f"<tr><td>{_e(p['namespace'])}/{_e(p['name'])}</td><td>{_e(p['owner'] or '')}</td>"
        f"<td>{_e(p['cause'])}</td><td class=n>{_e(p['pendingSeconds'])}</td></tr>"
        for p in pods
    ]
    return [
        "<h2>Stuck GPU pods</h2>",
        "<table><tr><th>pod</th><th>owner</th><th>cause</th><th>pending s</th></tr>",
        *rows,
        "</table>",
    ]


def _gpu_time(gpu: dict[str, Any]) -> list[str]:
    if not gpu:
        return []
    before = gpu["beforeStart"]
    out = [
        "<h2>GPU time before the first container start</h2>",
        f'<p><b data-figure="gpu-seconds-before-start">{before["gpuSeconds"]}</b> GPU-seconds '
        "held by pods bound to a node whose containers had not started.</p>",
        _pairs("by pool", before["byPool"], "GPU-seconds"),
        _pairs("by image", before["byImage"], "GPU-seconds"),
        "<h2>Timeline per GPU pod</h2>",
        _timeline(gpu["pods"]),
        _pod_table(gpu["pods"]),
        "<h2>Phases per pool (p50, seconds)</h2>",
        _phase_bars(gpu["byPool"]),
        _phase_table("pool", gpu["byPool"]),
        "<h2>Phases per workload</h2>",
        _phase_table("workload", gpu["byWorkload"]),
    ]
    if gpu["runs"]:
        out += ["<h2>Runs</h2>", _runs(gpu["runs"], gpu.get("prices"))]
    comparison = gpu.get("comparison")
    if comparison:
        out += [
            "<h2>Break-even</h2>",
            "<table><tr><th>baseline</th><th>candidate</th><th>speedup</th><th>break-even</th></tr>"
            f"<tr><td>{_e(comparison['baseline'])}</td><td>{_e(comparison['candidate'])}</td>"
            f'<td class=n data-figure="speedup">{_e(comparison["speedup"])}</td>'
            f'<td class=n data-figure="break-even">{_e(comparison["breakEven"])}</td></tr></table>',
            f'<p data-figure="verdict">{_e(comparison["verdict"])}</p>',
        ]
    return out


def _pairs(title: str, values: dict[str, float], unit: str) -> str:
    rows = "".join(f"<tr><td>{_e(k)}</td><td class=n>{_e(v)}</td></tr>" for k, v in values.items())
    return f"<table><tr><th>{_e(title)}</th><th>{_e(unit)}</th></tr>{rows}</table>"


def _parse(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _timeline(pods: list[dict[str, Any]]) -> str:
    """One bar per pod on a shared time axis: its phases as coloured segments."""
    spans = []
    for pod in pods:
        created, scheduled = _parse(pod["created"]), _parse(pod["scheduled"])
        started, finished = _parse(pod["started"]), _parse(pod["finished"])
        start = created or scheduled
        if start is None:
            continue
        end_of_start = started or (
            scheduled + _seconds(pod["secondsBeforeStart"]) if scheduled else None
        )
        segments = []
        if created and scheduled:
            segments.append(("schedule", created, scheduled))
        if scheduled and end_of_start:
            segments.append(
                ("starting" if pod["starting"] else "beforeStart", scheduled, end_of_start)
            )
        if started and finished:
            segments.append(("run", started, finished))
        spans.append((pod, start, segments))
    if not spans:
        return '<p class="note">No GPU pod with known times.</p>'
    lo = min(s for _, s, _ in spans)
    hi = max([lo, *(end for _, _, segs in spans for _, _, end in segs)])
    total = max((hi - lo).total_seconds(), 1.0)
    width, left, row = 900, 260, 22
    height = row * len(spans) + 30
    out = [
        f'<svg role="img" aria-label="timeline of GPU pods" width="{width + left + 10}" '
        f'height="{height}" viewBox="0 0 {width + left + 10} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (pod, _, segments) in enumerate(spans):
        y = 10 + i * row
        out.append(f'<text x="0" y="{y + 13}">{_e(pod["namespace"])}/{_e(pod["name"])[:60]}</text>')
        for phase, begin, end in segments:
            x = left + width * (begin - lo).total_seconds() / total
            w = max(1.0, width * (end - begin).total_seconds() / total)
            seconds = (end - begin).total_seconds()
            out.append(
                f'<rect class="phase-{phase}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="16" '
                f'fill="{_COLOURS[phase]}"><title>{_e(_LABELS[phase])}: {seconds:g} s</title>'
                "</rect>"
            )
    out.append(f'<text x="{left}" y="{height - 4}">{_e(lo.strftime("%Y-%m-%dT%H:%M:%SZ"))}</text>')
    out.append(
        f'<text x="{left + width}" y="{height - 4}" text-anchor="end">'
        f"{_e(hi.strftime('%Y-%m-%dT%H:%M:%SZ'))}</text></svg>"
    )
    legend = "".join(
        f'<span><i class="sw" style="background:{c}"></i>{_e(_LABELS[p])}</span>'
        for p, c in _COLOURS.items()
    )
    return "\n".join(out) + f'<p class="legend">{legend}</p>'


def _seconds(value: float | None) -> Any:
    from datetime import timedelta

    return timedelta(seconds=value or 0)


def _pod_table(pods: list[dict[str, Any]]) -> str:
    rows = []
    for pod in pods:
        phases = pod["phases"]
        pulls = "; ".join(
            f"{p['image']} (cache hit)"
            if p["cacheHit"]
            else f"{p['image']}: pull {p['pullSeconds']} s, waiting {p['waitingSeconds']} s, "
            f"{p['sizeBytes']} bytes"
            for p in pod["pulls"]
        )
        rows.append(
            f"<tr><td>{_e(pod['namespace'])}/{_e(pod['name'])}</td><td>{_e(pod['workload'])}</td>"
            f"<td>{_e(pod['pool'])}</td><td class=n>{_e(pod['gpus'])}</td>"
            f"<td class=n>{_e(phases['schedule'])}</td><td class=n>{_e(phases['pull'])}</td>"
            f"<td class=n>{_e(phases['beforeStart'])}</td><td class=n>{_e(phases['run'])}</td>"
            f'<td class=n data-figure="gpu-seconds-before-start-of-{_e(pod["name"])}">'
            f"{_e(pod['gpuSecondsBeforeStart'])}</td><td>{_e(pulls)}</td></tr>"
        )
    return (
        "<table><tr><th>pod</th><th>workload</th><th>pool</th><th>GPUs</th><th>schedule s</th>"
        "<th>pull s</th><th>before start s</th><th>run s</th><th>GPU-s before start</th>"
        "<th>images</th></tr>" + "".join(rows) + "</table>"
    )


def _phase_bars(groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    phases = ("schedule", "pull", "beforeStart", "run")
    if not groups:
        return ""
    peak = max([1.0, *(s[p]["p50"] or 0 for s in groups.values() for p in phases)])
    width, left, row = 700, 260, 18
    height = row * len(phases) * len(groups) + 10 * len(groups) + 10
    out = [
        f'<svg role="img" aria-label="phase bars per pool" width="{width + left + 80}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    y = 5
    for pool, stats in groups.items():
        for phase in phases:
            p50 = stats[phase]["p50"]
            w = width * (p50 or 0) / peak
            colour = _COLOURS.get(phase, "#5b7bd5")
            out.append(f'<text x="0" y="{y + 12}">{_e(pool)[:40]} {_e(phase)}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="14" fill="{colour}"/>')
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + 12}">{_e(p50)}</text>')
            y += row
        y += 10
    return "\n".join(out) + "</svg>"


def _phase_table(what: str, groups: dict[str, dict[str, dict[str, Any]]]) -> str:
    phases = ("schedule", "pull", "pullWait", "beforeStart", "ready", "run")
    head = "".join(f"<th>{_e(p)} p50 / p95</th>" for p in phases)
    rows = "".join(
        f"<tr><td>{_e(key)}</td>"
        + "".join(f"<td class=n>{_e(s[p]['p50'])} / {_e(s[p]['p95'])}</td>" for p in phases)
        + "</tr>"
        for key, s in groups.items()
    )
    return f"<table><tr><th>{_e(what)}</th>{head}</tr>{rows}</table>"


def _runs(runs: list[dict[str, Any]], prices: dict[str, Any] | None) -> str:
    rows = "".join(
        f"<tr><td>{_e(r['namespace'])}/{_e(r['job'])}</td><td class=n>{r['pods']}</td>"
        f"<td class=n>{_e(r['gpus'])}</td><td class=n>{_e(r['durationSeconds'])}</td>"
        f"<td class=n>{_e(r['gpuSeconds'])}</td><td class=n>{_e(r['hourly'])}</td>"
        f'<td class=n data-figure="cost-{_e(r["job"])}">{_e(r["cost"])}</td>'
        f'<td class=n data-figure="cost-before-start-{_e(r["job"])}">'
        f"{_e(r['costBeforeStart'])}</td></tr>"
        for r in runs
    )
    source = (
        f'<p class="note">Prices: {_e(prices["file"])} ({_e(prices["layout"])}).</p>'
        if prices
        else ""
    )
    return (
        "<table><tr><th>job</th><th>pods</th><th>GPUs</th><th>duration s</th><th>GPU-s</th>"
        "<th>$ / h</th><th>$ per run</th><th>$ before first start</th></tr>"
        + rows
        + "</table>"
        + source
    )


def _notes(notes: list[str]) -> list[str]:
    if not notes:
        return []
    return ["<h2>Not judged</h2>", "<ul>", *(f"<li>{_e(n)}</li>" for n in notes), "</ul>"]
