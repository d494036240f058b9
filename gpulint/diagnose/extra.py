"""What a dump says beyond Pending pods: Kueue Workloads, DRA claims, scheduled pods' times.

Kueue creates a job suspended and unsuspends it once its Workload is admitted: until then no
pod exists, and the reason is the Workload's `QuotaReserved`/`Admitted` condition. A DRA pod
asks for GPUs through claims whose DeviceClass decides whether they are accelerators. Every
pod that did schedule records when (`PodScheduled=True`), which gives time to schedule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from gpulint.diagnose.events import timestamp
from gpulint.dra import (
    Claim,
    DeviceClass,
    ResourceSlice,
    claim,
    claim_of,
    device_class,
    generated_claim_names,
    is_accelerator_class,
    pod_claims,
    resource_slice,
)
from gpulint.model import Document
from gpulint.profile.model import ClusterProfile
from gpulint.profile.values import mapping, sequence, text

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def queue_name(metadata: Mapping[str, Any]) -> str:
    """The LocalQueue an object names: its label, else the deprecated annotation Kueue still
    reads (kubernetes-sigs/kueue pkg/controller/jobframework, QueueNameForObject); "" if none."""
    for field in ("labels", "annotations"):
        queue = text(mapping(metadata.get(field)).get(QUEUE_LABEL))
        if queue:
            return queue
    return ""


#: Job kinds Kueue suspends, and the path of each one's `suspend` flag.
SUSPEND_PATHS: Mapping[str, tuple[str, ...]] = {
    "Job": ("spec", "suspend"),
    "JobSet": ("spec", "suspend"),
    "RayJob": ("spec", "suspend"),
    "RayCluster": ("spec", "suspend"),
    "PyTorchJob": ("spec", "runPolicy", "suspend"),
    "TFJob": ("spec", "runPolicy", "suspend"),
    "MPIJob": ("spec", "runPolicy", "suspend"),
}
_FLAVOR = re.compile(r"for (?P<resource>\S+) in flavor (?P<flavor>[^,\s]+)")
_UNAVAILABLE = re.compile(r"resource (?P<resource>\S+) unavailable in ClusterQueue")


@dataclass(frozen=True)
class DraIndex:
    """The DRA objects of a dump and its profile."""

    claims: tuple[Claim, ...]
    classes: tuple[DeviceClass, ...]
    slices: tuple[ResourceSlice, ...]

    @classmethod
    def of(cls, documents: Iterable[Document], profile: ClusterProfile | None) -> DraIndex:
        """Index the DRA objects among `documents` and in `profile`."""
        claims: list[Claim] = list(profile.resource_claims) if profile else []
        classes: list[DeviceClass] = list(profile.device_classes) if profile else []
        slices: list[ResourceSlice] = list(profile.resource_slices) if profile else []
        for document in documents:
            kind = document.ref.kind
            if kind in ("ResourceClaim", "ResourceClaimTemplate"):
                claims.append(claim(document.obj))
            elif kind == "DeviceClass":
                classes.append(device_class(document.obj))
            elif kind == "ResourceSlice" and not (profile and profile.resource_slices):
                slices.append(resource_slice(document.obj))
        return cls(tuple(dict.fromkeys(claims)), tuple(classes), tuple(slices))

    def knows(self, kind: str) -> bool:
        """Whether the dump lists objects of `kind` (then a missing one does not exist)."""
        return any(c.kind == kind for c in self.claims)

    def claims_of(
        self, pod: Mapping[str, object], spec: Mapping[str, object], namespace: str
    ) -> DraClaims:
        """The claims a pod's `resourceClaims` entries resolve to, and those that are missing."""
        generated = generated_claim_names(pod)
        found: list[Claim] = []
        missing: list[str] = []
        for entry in pod_claims(spec):
            made = generated.get(entry.name)
            target = None
            if made:
                target = next(
                    (
                        c
                        for c in self.claims
                        if (c.kind, c.namespace, c.name) == ("ResourceClaim", namespace, made)
                    ),
                    None,
                )
            target = target or claim_of(entry, namespace, self.claims)
            if target is not None:
                found.append(target)
            elif entry.target and self.knows(entry.kind):
                missing.append(f"{entry.kind} {entry.target}")
        return DraClaims(bool(pod_claims(spec)), tuple(found), tuple(missing))


@dataclass(frozen=True)
class DraClaims:
    """A pod's DRA claims as the dump resolves them."""

    declared: bool  # the pod has resourceClaims entries
    found: tuple[Claim, ...]
    missing: tuple[str, ...]  # `ResourceClaimTemplate x` the dump shows does not exist

    def accelerator(self, classes: Sequence[DeviceClass]) -> bool:
        """A claim asks for an accelerator class, or a missing claim leaves it unknown."""
        return bool(self.missing) or any(
            is_accelerator_class(r.device_class, classes) for c in self.found for r in c.requests
        )

    @property
    def device_classes(self) -> tuple[str, ...]:
        """The classes the claims request, in order."""
        return tuple(dict.fromkeys(r.device_class for c in self.found for r in c.requests))


# ---------------------------------------------------------------------------------------------
# Kueue


@dataclass(frozen=True)
class QueuedJob:
    """A GPU job Kueue holds suspended: its Workload's verdict, when the dump has it."""

    namespace: str
    kind: str
    name: str
    queue: str | None
    created: datetime | None
    message: str  # the condition's message, or why it is not known
    reason: str | None
    since: datetime | None
    resource: str | None
    flavor: str | None
    cluster_queue: str | None


def _path(obj: Mapping[str, object], keys: Sequence[str]) -> object:
    value: object = obj
    for key in keys:
        value = mapping(value).get(key)
    return value


def _not_admitted(workload: Mapping[str, object]) -> tuple[str, str | None, datetime | None] | None:
    """(message, reason, since) of a Workload Kueue has not admitted; None once admitted."""
    conditions = [mapping(c) for c in sequence(mapping(workload.get("status")).get("conditions"))]
    state = {text(c.get("type")): c for c in conditions}
    for done in ("Admitted", "Finished"):
        if text(state.get(done, {}).get("status")) == "True":
            return None
    for kind in ("QuotaReserved", "Admitted", "Evicted"):
        condition = state.get(kind)
        if condition and text(condition.get("message")):
            return (
                " ".join(text(condition.get("message")).split()),
                text(condition.get("reason")) or None,
                timestamp(condition.get("lastTransitionTime")),
            )
    return "the Workload has no admission condition yet: Kueue has not considered it", None, None


class WorkloadSource(Enum):
    """Where diagnose looked for Kueue's Workloads, which say why a queued job waits."""

    DUMP = "dump"  # the dump files (which may lack them)
    LIVE = "live"  # listed from the cluster
    LIVE_DENIED = "live-denied"  # the cluster refused to list them (RBAC)
    LIVE_UNSERVED = "live-unserved"  # the cluster serves no Kueue API


def _no_workload(kind: str, source: WorkloadSource, any_workload: bool) -> str:
    """Why a suspended queued job has no Workload that explains it, by where gpulint looked."""
    unmade = (
        f"Kueue has made none (is its controller running, with the integration for {kind} enabled?)"
    )
    if source is WorkloadSource.LIVE_DENIED:
        return (
            f"its Workload, which says why, could not be read: gpulint may not list "
            f"{KUEUE_WORKLOADS} (see the note)"
        )
    if source is WorkloadSource.LIVE_UNSERVED:
        return (
            "the cluster serves no Kueue API (kueue.x-k8s.io), so nothing admits it: install "
            f"Kueue, or remove the `{QUEUE_LABEL}` label"
        )
    if source is WorkloadSource.LIVE:
        return f"the cluster has no Workload for it: {unmade}"
    if any_workload:
        return f"no Workload of the dump belongs to it: {unmade}"
    return "the dump has no Workload that says why (add `workloads` to the kubectl get)"


KUEUE_WORKLOADS = "workloads.kueue.x-k8s.io"


def queued_jobs(
    workloads: Sequence[Document],
    queued: Sequence[Document],
    profile: ClusterProfile | None,
    is_gpu: object,
    source: WorkloadSource = WorkloadSource.DUMP,
) -> Iterator[QueuedJob]:
    """GPU jobs Kueue has not admitted: from Workloads, else from suspended queued jobs.

    `workloads` are the objects of kind Workload, `queued` the jobs of SUSPEND_PATHS kinds with
    a queue label; `is_gpu(document)` says whether an object's pods request accelerators;
    `source` where the Workloads were looked for, which decides what is said of a job none
    explains.
    """
    owned: set[tuple[str, str, str]] = set()
    local_queues = {
        (q.namespace, q.name): q.cluster_queue for q in (profile.local_queues if profile else ())
    }
    for document in workloads:
        if not document.ref.api_version.startswith("kueue.x-k8s.io/"):
            continue
        obj = document.obj
        metadata = mapping(obj.get("metadata"))
        namespace = document.ref.namespace or "default"
        owners = [mapping(o) for o in sequence(metadata.get("ownerReferences"))]
        owner = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
        kind = text(owner.get("kind")) if owner else "Workload"
        name = text(owner.get("name")) if owner else document.ref.name
        owned.add((namespace, kind, name))
        verdict = _not_admitted(obj)
        if verdict is None or not is_gpu(document):
            continue
        message, reason, since = verdict
        queue = text(mapping(obj.get("spec")).get("queueName")) or None
        admission = mapping(mapping(obj.get("status")).get("admission"))
        cluster_queue = text(admission.get("clusterQueue")) or local_queues.get(
            (namespace, queue or "")
        )
        created = timestamp(metadata.get("creationTimestamp"))
        yield _job(namespace, kind, name, queue, created, message, reason, since, cluster_queue)
    any_workload = any(d.ref.kind == "Workload" for d in workloads)
    for document in queued:
        path = SUSPEND_PATHS.get(document.ref.kind)
        obj = document.obj
        queue = queue_name(mapping(obj.get("metadata")))
        namespace = document.ref.namespace or "default"
        if path is None or not queue or _path(obj, path) is not True:
            continue
        if (namespace, document.ref.kind, document.ref.name) in owned or not is_gpu(document):
            continue
        message = (
            f"suspended in LocalQueue {queue}; "
            f"{_no_workload(document.ref.kind, source, any_workload)}"
        )
        created = timestamp(mapping(obj.get("metadata")).get("creationTimestamp"))
        cluster_queue = local_queues.get((namespace, queue))
        kind, name = document.ref.kind, document.ref.name
        yield _job(namespace, kind, name, queue, created, message, None, None, cluster_queue)


def _job(
    namespace: str,
    kind: str,
    name: str,
    queue: str | None,
    created: datetime | None,
    message: str,
    reason: str | None,
    since: datetime | None,
    cluster_queue: str | None,
) -> QueuedJob:
    found = _FLAVOR.search(message) or _UNAVAILABLE.search(message)
    groups = found.groupdict() if found else {}
    return QueuedJob(
        namespace, kind, name, queue, created, message, reason, since,
        groups.get("resource"), groups.get("flavor"), cluster_queue,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Time to schedule


@dataclass(frozen=True)
class ScheduledPod:
    """A GPU pod that was scheduled, and how long after its creation."""

    namespace: str
    name: str
    pool: str
    seconds: int


def scheduled_at(obj: Mapping[str, object]) -> datetime | None:
    """When the pod's PodScheduled condition turned True."""
    for condition in sequence(mapping(obj.get("status")).get("conditions")):
        condition = mapping(condition)
        if condition.get("type") == "PodScheduled" and text(condition.get("status")) == "True":
            return timestamp(condition.get("lastTransitionTime"))
    return None


def percentile(values: Sequence[int], fraction: float) -> int | None:
    """The nearest-rank percentile (None for no values)."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = math.ceil(round(fraction * len(ordered), 9))  # 0.95 × 20 is 19, not 19.000000000000004
    return ordered[max(0, rank - 1)]
