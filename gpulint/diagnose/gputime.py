"""GPU time and money of a dump or a cluster: each GPU pod's timeline, the GPU time held before
the first container start, cost per run of Jobs and the GPU-versus-CPU break-even.

Cost per run (with `--prices`) is the sum over the run's pods of the time each held its node
(PodScheduled until its containers finished, or until now) × the node's hourly price × the
pod's share of the node (its GPUs over the node's; for a pod without GPUs, the larger of its
CPU and memory requests over the node's allocatable) / 3600. The part spent before the first
container start is priced the same way. Of a CPU and a GPU variant of a job, the GPU one is
cheaper per run exactly when its speedup (the CPU run's duration over the GPU run's) exceeds
the break-even speedup, the ratio of the runs' hourly rates (GPU over CPU).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpulint.diagnose.events import timestamp
from gpulint.diagnose.gather import Gathered
from gpulint.diagnose.prices import NodePrice, PriceTable
from gpulint.diagnose.pulls import PoolPulls, pull_findings
from gpulint.diagnose.timeline import (
    PodTimeline,
    condition_time,
    container_times,
    phase_summary,
    pulls_of,
)
from gpulint.errors import GpulintError
from gpulint.gpus import gpu_requests
from gpulint.model import PodTemplate
from gpulint.pods import pod_owner
from gpulint.profile.nodes import node_view, pool_names
from gpulint.profile.values import mapping, sequence, text
from gpulint.quantity import parse_quantity
from gpulint.workloads import pod_template

_HOUR = Decimal(3600)


@dataclass(frozen=True)
class PodCost:
    """What one pod of a run costs, with its node's price."""

    timeline: PodTimeline
    share: Decimal  # of its node
    price: NodePrice | None

    @property
    def hourly(self) -> Decimal | None:
        """The pod's share of its node's hourly price."""
        return None if self.price is None else self.price.hourly * self.share

    def cost(self, seconds: float | None) -> Decimal | None:
        """Dollars of `seconds` of the pod's share of its node."""
        if self.hourly is None or seconds is None:
            return None
        return self.hourly * Decimal(repr(seconds)) / _HOUR


@dataclass(frozen=True)
class RunCost:
    """One Job's run: its pods, how long it took, GPU time and (with prices) dollars."""

    namespace: str
    job: str
    pods: tuple[PodCost, ...]
    duration_seconds: float | None  # the Job's startTime to completionTime (else its pods')

    @property
    def gpus(self) -> Decimal:
        """The GPUs its pods request."""
        return sum((p.timeline.gpus for p in self.pods), Decimal(0))

    @property
    def priced(self) -> bool:
        """Every pod's node has a price."""
        return bool(self.pods) and all(p.price is not None for p in self.pods)

    @property
    def hourly(self) -> Decimal | None:
        """Dollars per hour while its pods hold their nodes."""
        if not self.priced:
            return None
        return sum((p.hourly or Decimal(0) for p in self.pods), Decimal(0))

    @property
    def cost(self) -> Decimal | None:
        """Dollars per run."""
        costs = [p.cost(p.timeline.held_seconds) for p in self.pods]
        return sum(costs, Decimal(0)) if self.priced and None not in costs else None  # type: ignore[arg-type]

    @property
    def cost_before_start(self) -> Decimal | None:
        """Dollars of the run spent before each pod's first container start."""
        costs = [p.cost(p.timeline.seconds_before_start) for p in self.pods]
        return sum(costs, Decimal(0)) if self.priced and None not in costs else None  # type: ignore[arg-type]

    @property
    def gpu_seconds(self) -> float:
        """GPU-seconds held by its pods."""
        return sum(float(p.timeline.gpus) * (p.timeline.held_seconds or 0.0) for p in self.pods)

    @property
    def gpu_seconds_before_start(self) -> float:
        """GPU-seconds held before the first container starts."""
        return sum(p.timeline.gpu_seconds_before_start or 0.0 for p in self.pods)


@dataclass(frozen=True)
class Comparison:
    """A CPU and a GPU variant of one job: which is cheaper per run."""

    baseline: RunCost  # the CPU variant (or the first named)
    candidate: RunCost  # the GPU variant
    speedup: float | None  # baseline duration / candidate duration
    break_even: Decimal | None  # candidate hourly / baseline hourly

    @property
    def candidate_cheaper(self) -> bool | None:
        """Whether the GPU variant costs less per run (None: not known)."""
        a, b = self.baseline.cost, self.candidate.cost
        return None if a is None or b is None else b < a


@dataclass(frozen=True)
class GpuTime:
    """Where the GPU pods' time (and money) went."""

    pods: tuple[PodTimeline, ...]  # GPU pods bound to a node, by namespace and name
    runs: tuple[RunCost, ...]  # Jobs with GPU pods (and the compared ones)
    comparison: Comparison | None
    prices: PriceTable | None
    notes: tuple[str, ...]
    pulls: tuple[PoolPulls, ...] = ()  # pools whose start-up is dominated by image pulls

    def by_workload(self) -> dict[str, dict[str, dict[str, float | int | None]]]:
        """Phase p50/p95 per workload (`namespace/Kind/name`)."""
        groups: dict[str, list[PodTimeline]] = {}
        for pod in self.pods:
            groups.setdefault(f"{pod.namespace}/{pod.workload}", []).append(pod)
        return {key: phase_summary(pods) for key, pods in sorted(groups.items())}

    def by_pool(self) -> dict[str, dict[str, dict[str, float | int | None]]]:
        """Phase p50/p95 per pool."""
        groups: dict[str, list[PodTimeline]] = {}
        for pod in self.pods:
            groups.setdefault(pod.pool or "unknown", []).append(pod)
        return {key: phase_summary(pods) for key, pods in sorted(groups.items())}

    def before_start(self) -> dict[str, Any]:
        """GPU-seconds held before the first start: in all, by image and by pool."""
        by_image: dict[str, float] = {}
        by_pool: dict[str, float] = {}
        total = 0.0
        for pod in self.pods:
            held = pod.gpu_seconds_before_start
            if held is None:
                continue
            total += held
            image = pod.images[0] if pod.images else "unknown"
            by_image[image] = by_image.get(image, 0.0) + held
            by_pool[pod.pool or "unknown"] = by_pool.get(pod.pool or "unknown", 0.0) + held
        return {
            "gpuSeconds": round(total, 3),
            "byImage": {k: round(v, 3) for k, v in sorted(by_image.items())},
            "byPool": {k: round(v, 3) for k, v in sorted(by_pool.items())},
        }


def gpu_time(
    gathered: Gathered,
    now: datetime,
    pool_label: str | None = None,
    prices: PriceTable | None = None,
    compare: tuple[str, str] | None = None,
) -> GpuTime:
    """The timeline of every GPU pod bound to a node, the runs of Jobs with GPU pods (priced
    with `prices`) and the comparison of the two Jobs `compare` names (`name` or
    `namespace/name`). Raises GpulintError when a compared Job is not in the objects."""
    nodes = {text(mapping(n.get("metadata")).get("name")): n for n in gathered.nodes}
    views = [node_view(n) for n in gathered.nodes]
    pools = pool_names(views, pool_label) if views else {}
    wanted = set(compare or ())
    timelines: list[PodTimeline] = []
    by_job: dict[tuple[str, str], list[PodCost]] = {}
    notes: list[str] = []
    unpriced: set[str] = set()
    for document in gathered.pods:
        obj = document.obj
        template = pod_template(document, obj)
        if template is None:
            continue
        gpus = sum(gpu_requests(template).values(), Decimal(0))
        namespace, kind, owner = pod_owner(obj)
        named = kind == "Job" and (owner in wanted or f"{namespace}/{owner}" in wanted)
        if not gpus and not named:
            continue
        node_name = text(mapping(obj.get("spec")).get("nodeName")) or None
        timeline = _timeline(
            document.ref.name,
            namespace,
            f"{kind}/{owner}",
            obj,
            template,
            gathered,
            now,
            node_name,
            pools.get(node_name or ""),
            gpus,
        )
        if timeline.scheduled is None:
            continue  # not bound: diagnosed as Pending, holds nothing
        if gpus:
            timelines.append(timeline)
        if kind == "Job":
            node = nodes.get(node_name or "")
            price = prices.price(node) if prices is not None and node is not None else None
            if prices is not None and price is None:
                unpriced.add(_instance_type(node) or f"node {node_name}")
            share = _share(template, gpus, node)
            by_job.setdefault((namespace, owner), []).append(PodCost(timeline, share, price))
    if unpriced:
        notes.append(
            f"no price in {prices.path if prices else ''} for {', '.join(sorted(unpriced))}: "
            "the runs on them are not priced"
        )
    runs = tuple(
        RunCost(ns, job, tuple(pods), _duration(gathered.jobs.get((ns, job)), pods))
        for (ns, job), pods in sorted(by_job.items())
    )
    comparison = _compare(runs, compare) if compare else None
    timelines.sort(key=lambda t: (t.namespace, t.name))
    slow = pull_findings(timelines, gathered.nodes, pools, gathered.image_helpers, gathered.kinds)
    return GpuTime(tuple(timelines), runs, comparison, prices, tuple(notes), slow)


def _timeline(
    name: str,
    namespace: str,
    workload: str,
    obj: Mapping[str, Any],
    template: PodTemplate,
    gathered: Gathered,
    now: datetime,
    node: str | None,
    pool: str | None,
    gpus: Decimal,
) -> PodTimeline:
    metadata = mapping(obj.get("metadata"))
    events = gathered.events_about("Pod", namespace, name, text(metadata.get("uid")))
    started, finished = container_times(obj)
    phase = text(mapping(obj.get("status")).get("phase"))
    images = tuple(text(mapping(c).get("image")) for c in sequence(template.spec.get("containers")))
    return PodTimeline(
        namespace=namespace,
        name=name,
        workload=workload,
        node=node,
        pool=pool,
        gpus=gpus,
        images=tuple(i for i in images if i),
        created=timestamp(metadata.get("creationTimestamp")),
        scheduled=condition_time(obj, "PodScheduled") if node else None,
        initialized=condition_time(obj, "Initialized"),
        started=started,
        ready=condition_time(obj, "Ready"),
        finished=finished if phase in ("Succeeded", "Failed") else None,
        pulls=pulls_of(events),
        now=now,
    )


def _instance_type(node: Mapping[str, Any] | None) -> str:
    labels = mapping(mapping((node or {}).get("metadata")).get("labels"))
    return text(labels.get("node.kubernetes.io/instance-type"))


def _share(template: PodTemplate, gpus: Decimal, node: Mapping[str, Any] | None) -> Decimal:
    """The pod's share of its node (see the module docstring); the whole node when the node's
    allocatable is not known."""
    allocatable = mapping(mapping((node or {}).get("status")).get("allocatable"))
    requests = template.effective_requests
    shares: list[Decimal] = []
    if gpus:
        offered = sum(
            (parse_quantity(allocatable.get(r)) or Decimal(0) for r in gpu_requests(template)),
            Decimal(0),
        )
        shares.append(gpus / offered if offered else Decimal(1))
    else:
        for resource in ("cpu", "memory"):
            offered = parse_quantity(allocatable.get(resource))
            asked = requests.get(resource)
            if offered and asked is not None:
                shares.append(asked / offered)
    return min(Decimal(1), max(shares)) if shares else Decimal(1)


def _duration(job: Mapping[str, Any] | None, pods: Sequence[PodCost]) -> float | None:
    """The Job's startTime to completionTime; else its first pod's creation to its last
    pod's finish; None while it runs."""
    status = mapping((job or {}).get("status"))
    start, end = timestamp(status.get("startTime")), timestamp(status.get("completionTime"))
    if start is not None and end is not None:
        return max(0.0, (end - start).total_seconds())
    created = [p.timeline.created for p in pods if p.timeline.created]
    finished = [p.timeline.finished for p in pods]
    if not created or None in finished:
        return None
    return max(0.0, (max(finished) - min(created)).total_seconds())  # type: ignore[type-var]


def _compare(runs: Sequence[RunCost], names: tuple[str, str]) -> Comparison:
    found = []
    for name in names:
        run = next((r for r in runs if name in (r.job, f"{r.namespace}/{r.job}")), None)
        if run is None:
            raise GpulintError(
                f"--compare: no Job `{name}` with pods bound to a node in the dump (name it "
                "as NAME or NAMESPACE/NAME)"
            )
        found.append(run)
    first, second = found
    baseline, candidate = (second, first) if first.gpus and not second.gpus else (first, second)
    speedup = None
    if baseline.duration_seconds and candidate.duration_seconds:
        speedup = baseline.duration_seconds / candidate.duration_seconds
    break_even = None
    if baseline.hourly and candidate.hourly is not None:
        break_even = candidate.hourly / baseline.hourly
    return Comparison(baseline, candidate, speedup, break_even)
