"""Where a GPU pod's time goes after it is created: scheduling, pulling, starting, running.

Each pod's milestones come from its own status (creationTimestamp; the PodScheduled,
Initialized and Ready conditions; its containers' startedAt and finishedAt) and its image
pulls from the kubelet's `Pulled` events, in each format kubelets have written:

- `Successfully pulled image "<ref>" in <pull> (<total> including waiting). Image size: <N>
  bytes.` (1.30+: the CRI pull time, the time since the kubelet took the pull, which
  includes waiting behind other pulls, and the size);
- the same without the size (1.25-1.29), `... in <pull>` alone (older), or no time at all;
- `Container image "<ref>" already present on machine` (a cache hit).

Go durations there are like `1m21.284s` or `796ms`. What the dump lacks (events expire after
an hour by default) stays None: "not known", never zero.

GPU time before the first start is what the pod holds on its node, GPUs × (first container
start − PodScheduled), without running anything on them; a pod still starting holds them until
`now`. OpenCost bills a pod only while its containers run, so that time shows as node idle.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpulint.diagnose.events import Event, timestamp
from gpulint.diagnose.extra import percentile
from gpulint.profile.values import mapping, sequence, text

#: A Go duration (time.Duration.String): `1h2m3.5s`, `796ms`, `0s`.
_GO_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:h|m|s|ms|us|µs|ns))+")
_GO_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_DURATION = r"\d[\d.hmsuµn]*"
_PULLED = re.compile(
    r'Successfully pulled image "(?P<image>[^"]*)"'
    rf"(?: in (?P<pull>{_DURATION})(?: \((?P<total>{_DURATION}) including waiting\))?)?"
    r"(?:\.? Image size: (?P<size>\d+) bytes)?"
)
_PRESENT = re.compile(r'Container image "(?P<image>[^"]*)" already present on machine')
#: Phases whose p50/p95 are reported, in the order a pod goes through them.
PHASES = ("schedule", "pull", "pullWait", "beforeStart", "ready", "run")


def go_duration(value: str | None) -> float | None:
    """Seconds of a Go duration (`1m21.284s` -> 81.284); None for anything else."""
    if not value or not _GO_DURATION.fullmatch(value):
        return None
    return sum(float(n) * _GO_UNITS[unit] for n, unit in _GO_PART.findall(value))


@dataclass(frozen=True)
class ImagePull:
    """One image a pod needed, as its `Pulled` event tells it."""

    image: str
    cache_hit: bool  # already present on the node
    pull_seconds: float | None  # the CRI pull itself
    total_seconds: float | None  # since the kubelet took the pull: waiting included (1.25+)
    size_bytes: int | None

    @property
    def waiting_seconds(self) -> float | None:
        """Time queued behind other pulls (serialised pulls), when the kubelet says."""
        if self.pull_seconds is None or self.total_seconds is None:
            return None
        return max(0.0, self.total_seconds - self.pull_seconds)

    @property
    def seconds(self) -> float | None:
        """The pull as the pod waited for it: waiting included when the kubelet says."""
        return self.total_seconds if self.total_seconds is not None else self.pull_seconds


def image_pull(message: str) -> ImagePull | None:
    """The pull a `Pulled` event's message tells (any kubelet's format); None for another."""
    found = _PULLED.search(message)
    if found is not None:
        pull = go_duration(found["pull"])
        total = go_duration(found["total"])
        size = int(found["size"]) if found["size"] else None
        return ImagePull(found["image"], False, pull, total, size)
    present = _PRESENT.search(message)
    if present is not None:
        return ImagePull(present["image"], True, 0.0, 0.0, None)
    return None


@dataclass(frozen=True)
class PodTimeline:
    """A pod's milestones (None: not reached, or not in the dump) and what it holds."""

    namespace: str
    name: str
    workload: str  # `Job/train`, `Deployment/web`, or `Pod/<name>`
    node: str | None
    pool: str | None
    gpus: Decimal  # accelerators requested (0 for a CPU pod)
    images: tuple[str, ...]  # of its app containers
    created: datetime | None
    scheduled: datetime | None
    initialized: datetime | None
    started: datetime | None  # the first app container start
    ready: datetime | None
    finished: datetime | None
    pulls: tuple[ImagePull, ...]
    now: datetime

    @property
    def phases(self) -> dict[str, float | None]:
        """Seconds of each phase of PHASES (None: not known)."""
        pulls = [p for p in self.pulls if not p.cache_hit]
        known = all(p.seconds is not None for p in self.pulls)
        waits = [p.waiting_seconds for p in pulls]
        return {
            "schedule": _between(self.created, self.scheduled),
            "pull": sum((p.seconds or 0.0 for p in pulls), 0.0) if self.pulls and known else None,
            "pullWait": (
                sum((w or 0.0 for w in waits), 0.0) if pulls and None not in waits else None
            ),
            "beforeStart": _between(self.scheduled, self.started),
            "ready": _between(self.started, self.ready),
            "run": _between(self.started, self.finished),
        }

    @property
    def starting(self) -> bool:
        """Bound to a node and not started yet: it holds its node's resources, idle."""
        return self.scheduled is not None and self.started is None and self.finished is None

    @property
    def seconds_before_start(self) -> float | None:
        """Scheduled to first start, or to `now` while it is still starting."""
        if self.starting:
            return _between(self.scheduled, self.now)
        return _between(self.scheduled, self.started)

    @property
    def gpu_seconds_before_start(self) -> float | None:
        """GPUs × seconds_before_start: GPU time held without a container running."""
        before = self.seconds_before_start
        return None if before is None else float(self.gpus) * before

    @property
    def held_seconds(self) -> float | None:
        """Bound to the node until it finished (or until `now`)."""
        return _between(self.scheduled, self.finished or self.now)


def _between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


def condition_time(pod: Mapping[str, Any], kind: str) -> datetime | None:
    """When the pod's condition `kind` turned True (None when it is not True)."""
    for condition in sequence(mapping(pod.get("status")).get("conditions")):
        condition = mapping(condition)
        if condition.get("type") == kind and text(condition.get("status")) == "True":
            return timestamp(condition.get("lastTransitionTime"))
    return None


def container_times(pod: Mapping[str, Any]) -> tuple[datetime | None, datetime | None]:
    """(first start, last finish) of the app containers; the finish only once all ended."""
    starts: list[datetime] = []
    finishes: list[datetime] = []
    statuses = [mapping(s) for s in sequence(mapping(pod.get("status")).get("containerStatuses"))]
    for status in statuses:
        for state in (mapping(status.get("state")), mapping(status.get("lastState"))):
            running, ended = mapping(state.get("running")), mapping(state.get("terminated"))
            for value in (running.get("startedAt"), ended.get("startedAt")):
                moment = timestamp(value)
                if moment is not None:
                    starts.append(moment)
        finished = timestamp(
            mapping(mapping(status.get("state")).get("terminated")).get("finishedAt")
        )
        if finished is not None:
            finishes.append(finished)
    done = statuses and len(finishes) == len(statuses)
    return min(starts, default=None), max(finishes) if done else None


def pulls_of(events: Iterable[Event]) -> tuple[ImagePull, ...]:
    """Each image's pull from the pod's events: the real pull when there was one, else the
    cache hit (a restarted container finds its image present)."""
    found: dict[str, ImagePull] = {}
    for event in events:
        if event.reason != "Pulled":
            continue
        pull = image_pull(event.message)
        if pull is None:
            continue
        known = found.get(pull.image)
        if known is None or (known.cache_hit and not pull.cache_hit):
            found[pull.image] = pull
    return tuple(found.values())


def summary(values: Sequence[float | None]) -> dict[str, float | int | None]:
    """`{count, p50, p95}` of the known values (nearest rank), rounded to the millisecond."""
    known = sorted(v for v in values if v is not None)
    p50, p95 = percentile(known, 0.5), percentile(known, 0.95)  # type: ignore[arg-type]
    return {
        "count": len(known),
        "p50": None if p50 is None else round(p50, 3),
        "p95": None if p95 is None else round(p95, 3),
    }


def phase_summary(pods: Sequence[PodTimeline]) -> dict[str, dict[str, float | int | None]]:
    """p50/p95 of each phase over `pods`."""
    phases = [p.phases for p in pods]
    return {name: summary([p[name] for p in phases]) for name in PHASES}
