"""Event message texts -> structure: the scheduler's node histogram, autoscaler and admission.

Formats follow the supported Kubernetes releases (see docs/diagnose.md): the scheduler writes
`0/<N> nodes are available:[ <prefilter>.][ <count> <reason>, ...].[ preemption: ...]`; the
cluster-autoscaler writes `pod didn't trigger scale-up: <count> <reason>, ...`; controllers
write `Error creating: pods "<name>" is forbidden: <detail>` when admission refuses a pod.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HISTOGRAM = re.compile(r"\A\s*0/(?P<nodes>\d+) nodes are available:?\s*(?P<body>.*)\Z", re.S)
# Entries are `<count> <reason>` joined by ", "; a reason may itself hold ", " (the 1.18-1.23
# taint wording), but never ", " followed by a number.
_ENTRY_SPLIT = re.compile(r",\s+(?=\d+ )")
_ENTRY = re.compile(r"\A(?P<count>\d+) (?P<reason>.+)\Z", re.S)
# Preemption (PostFilter) text follows the histogram; newer releases put a DRA note before it.
_POSTFILTER = re.compile(
    r"\s*(?:(?:no new claims to deallocate|still not schedulable),\s*)?preemption:\s*", re.S
)
_SCALE_UP = re.compile(
    r"\A\s*pod didn't trigger scale-up(?: \((?P<note>[^)]*)\))?:?\s*(?P<body>.*)"
)
_FORBIDDEN = re.compile(
    r'(?:Error creating: )?pods? "(?P<name>[^"]*)" is (?P<verdict>forbidden|invalid): '
    r"(?P<detail>.*)",
    re.S,
)


@dataclass(frozen=True)
class NodeCount:
    """One entry of a histogram: how many nodes gave one reason."""

    count: int
    reason: str


@dataclass(frozen=True)
class NodeHistogram:
    """A parsed `0/N nodes are available: ...` message."""

    nodes: int
    reasons: tuple[NodeCount, ...]
    prefilter: str | None  # a PreFilter rejection replaces the per-node entries
    preemption: str | None  # what the PostFilter (preemption) added


@dataclass(frozen=True)
class Refusal:
    """An admission or validation refusal of a pod create, from a FailedCreate event."""

    pod_name: str  # the generate-name prefix for controller-made pods
    verdict: str  # forbidden (admission) or invalid (validation)
    detail: str


def parse_histogram(message: str) -> NodeHistogram | None:
    """The scheduler's node histogram, or None when `message` is not in a known format."""
    match = _HISTOGRAM.match(message.strip())
    if match is None:
        return None
    body, preemption = match["body"], None
    split = _POSTFILTER.search(body)
    if split is not None:
        body, preemption = body[: split.start()], _trim(body[split.end() :]) or None
    body = _trim(body)
    entries = _entries(body)
    if entries is None:
        return NodeHistogram(int(match["nodes"]), (), body or None, preemption)
    return NodeHistogram(int(match["nodes"]), entries, None, preemption)


def parse_scale_up(message: str) -> tuple[NodeCount, ...] | None:
    """The reasons of a cluster-autoscaler NotTriggerScaleUp message (None: another format).

    Older releases give one note in parentheses instead of counted reasons; it becomes one
    entry with count 0.
    """
    match = _SCALE_UP.match(message.strip())
    if match is None:
        return None
    found = _entries(_trim(match["body"])) or ()
    if match["note"]:
        found = (*found, NodeCount(0, match["note"]))
    return found


def parse_refusal(message: str) -> Refusal | None:
    """The refusal inside `Error creating: pods "x-" is forbidden: ...`, or None."""
    match = _FORBIDDEN.search(message.strip())
    if match is None:
        return None
    return Refusal(match["name"], match["verdict"], " ".join(match["detail"].split()))


def _entries(body: str) -> tuple[NodeCount, ...] | None:
    if not body:
        return None
    entries = []
    for part in _ENTRY_SPLIT.split(body):
        entry = _ENTRY.match(part.strip())
        if entry is None:
            return None
        entries.append(NodeCount(int(entry["count"]), _trim(entry["reason"])))
    return tuple(entries)


def _trim(text: str) -> str:
    """Without surrounding space and the closing period(s); `kubectl describe` shows `..`."""
    return " ".join(text.split()).rstrip(".").rstrip()
