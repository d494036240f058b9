"""One pass over the objects of dumps or a cluster -> what a diagnosis keeps of them.

A dump of a large cluster holds hundreds of thousands of Events and tens of thousands of pods,
of which a diagnosis reads the GPU pods, the Events about them and about controllers that
could not create pods, the Nodes (pools), Kueue's objects and the DRA objects. `Gatherer`
takes the objects one at a time, as plain JSON values (the fast dump reader, the API) or as
the loader's Documents, and keeps only those: each kept object is converted to the typed
model's tree once, and Events are indexed by the object they are about, so a pod's events are
one lookup rather than a scan of every Event.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import Any

from gpulint.diagnose.events import _EPOCH, Event, event_from_object, timestamp
from gpulint.diagnose.extra import SUSPEND_PATHS, queue_name
from gpulint.gpus import gpu_requests
from gpulint.model import Document, ObjectRef, SourceFile, Workload
from gpulint.pods import pod_owner, positioned
from gpulint.profile.values import mapping
from gpulint.workloads import shape_for
from gpulint.workloads import workload_of as read_workload_of

#: Kinds whose objects a diagnosis reads whole (few per cluster): DRA and Kueue.
DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"})
#: Reasons of the controller events that say whether pod creations are refused.
CREATE_REASONS = frozenset({"FailedCreate", "SuccessfulCreate"})
#: Kinds that may cache or pre-pull images on nodes (few per cluster): read by
#: gpulint.diagnose.pulls.
IMAGE_HELPER_KINDS = frozenset({"DaemonSet", "ImageCache"})
#: Built-in kinds whose pods' requests are all under their template's `requests`/`limits`,
#: `overhead` and `resourceClaims` keys: a plain object without such a key creates no GPU pod.
_PLAIN_KINDS = frozenset(
    {"Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"}
)
_RESOURCE_KEYS = frozenset({"requests", "limits", "overhead"})
_CORE_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", "storage"})

Key = tuple[str, str, str]  # (kind, namespace, name)


def may_request_accelerator(value: Any) -> bool:
    """Whether an object may ask for an accelerator: some `requests`, `limits` or `overhead`
    names a resource beyond cpu, memory, storage and hugepages, or it has `resourceClaims`.

    A cheap superset of gpu_requests (and of DRA claims), read on plain values before the
    typed model is built, so that only such objects are built.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):  # a plain dict or the loader's YMap
            for key, item in node.items():
                if key in _RESOURCE_KEYS and isinstance(item, dict):
                    if any(
                        type(name) is not str
                        or (name not in _CORE_RESOURCES and not name.startswith("hugepages-"))
                        for name in item
                    ):
                        return True
                elif key == "resourceClaims" and item:
                    return True
                elif isinstance(item, dict | list):
                    stack.append(item)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, dict | list))
    return False


def object_ref(obj: Mapping[str, Any]) -> ObjectRef:
    """The reference of an object, named as the loader names it (name, else generateName)."""
    metadata = _mapping(obj.get("metadata"))
    name = _scalar(metadata.get("name")) or _scalar(metadata.get("generateName"))
    return ObjectRef(
        _scalar(obj.get("apiVersion")),
        _scalar(obj.get("kind")),
        _scalar(metadata.get("namespace")) or None,
        name,
    )


def _scalar(value: Any) -> str:
    if type(value) is str:
        return value
    return "" if value is None or isinstance(value, Mapping | list) else str(value)


class Gathered:
    """What a diagnosis reads of a dump or a cluster (see the module docstring)."""

    def __init__(self) -> None:
        self.pods: list[Document] = []  # pods that may request an accelerator
        self.nodes: list[Mapping[str, Any]] = []
        self.dra: list[Document] = []
        self.kueue_workloads: list[Document] = []  # kind Workload
        self.queued: list[Document] = []  # jobs of SUSPEND_PATHS kinds with a queue label
        #: Events about each object, oldest first (see `events_about`).
        self.events: dict[Key, list[Event]] = {}
        self.create_events: list[Event] = []  # FailedCreate/SuccessfulCreate of controllers
        #: Whether each controller (a kind with pod templates) creates GPU pods.
        self.controllers: dict[Key, bool] = {}
        #: Each Job's startTime and completionTime, by (namespace, name): a run's duration.
        self.jobs: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.kinds: set[str] = set()
        self.image_helpers: list[Mapping[str, Any]] = []  # DaemonSets and ImageCaches
        self.claimed = False  # some pod has resourceClaims
        self.newest: datetime | None = None  # the newest time the objects record
        self.collected: datetime | None = None  # when the dump was taken, if it records it
        self.notes: list[str] = []  # what was left unread, and why
        self.workload_of: Callable[[Document], Workload | None] = read_workload_of

    def events_about(self, kind: str, namespace: str, name: str, uid: str = "") -> list[Event]:
        """The events about this object, oldest first (a stale namesake's do not count)."""
        return [
            e
            for e in self.events.get((kind, namespace, name), ())
            if e.about(kind, namespace, name, uid)
        ]

    def workload(self, document: Document) -> Workload | None:
        """The typed workload view of a kept document."""
        return self.workload_of(document)


class Gatherer:
    """Takes objects one at a time (`add`) and keeps what a diagnosis reads (`done`)."""

    def __init__(
        self,
        source: str = "<dump>",
        workload_of: Callable[[Document], Workload | None] | None = None,
        keep_jobs: Collection[str] = (),
    ) -> None:
        """`keep_jobs` names Jobs (`name` or `namespace/name`) whose pods are kept whether or
        not they ask for accelerators (the CPU variant of a comparison)."""
        self.gathered = Gathered()
        self._keep_jobs = frozenset(keep_jobs)
        if workload_of is not None:
            self.gathered.workload_of = workload_of
        self._file = SourceFile(source)
        self._times: dict[str, datetime | None] = {}
        self._seen_pods: set[tuple[str, str]] = set()
        self._kept_pods: set[tuple[str, str]] = set()

    def add(self, obj: Mapping[str, Any], document: Document | None = None) -> None:
        """One object (a plain JSON value, or the tree of `document` when given)."""
        gathered = self.gathered
        metadata = _mapping(obj.get("metadata"))
        self._saw(metadata.get("creationTimestamp"))
        if obj.get("kind") == "Event":
            # Most objects of a dump: no reference built, and most are dropped unread.
            gathered.kinds.add("Event")
            self._event(obj, metadata)
            return
        ref = document.ref if document is not None else object_ref(obj)
        kind = ref.kind
        gathered.kinds.add(kind)
        if kind in IMAGE_HELPER_KINDS:
            gathered.image_helpers.append(obj)
        if kind == "Pod":
            self._pod(obj, ref, document)
        elif kind == "Node":
            if ref.name:
                gathered.nodes.append(obj)
        elif kind in DRA_KINDS:
            gathered.dra.append(document or self._document(obj, ref))
        else:
            self._controller(obj, ref, document, metadata)

    def add_all(self, documents: Iterable[Document]) -> None:
        """Every document (the loader's)."""
        for document in documents:
            self.add(document.obj, document)

    def done(self) -> Gathered:
        """What was kept: each object's events sorted oldest first, stray pod events dropped."""
        gathered = self.gathered
        kept = self._kept_pods
        for key in [k for k in gathered.events if k[0] == "Pod" and (k[1], k[2]) not in kept]:
            del gathered.events[key]
        for events in gathered.events.values():
            events.sort(key=_last_seen)
        gathered.create_events.sort(key=_last_seen)
        return gathered

    # -----------------------------------------------------------------------------------------

    def _document(self, obj: Mapping[str, Any], ref: ObjectRef) -> Document:
        """A kept plain object as the typed model's Document (converted once)."""
        return Document(self._file, positioned(obj), ref)

    def _parsed(self, value: Any) -> datetime | None:
        """`timestamp(value)`, remembered: a dump repeats the same few thousand seconds."""
        if not isinstance(value, str) or not value:
            return timestamp(value)
        times = self._times
        if value in times:
            return times[value]
        if len(times) > 100_000:
            times.clear()  # a cache, not a record: keep it small on long dumps
        moment = times[value] = timestamp(value)
        return moment

    def _saw(self, value: Any) -> None:
        """Note a time the objects record (the default `now` is the newest)."""
        if value:
            moment = self._parsed(value)
            if moment is not None:
                self._saw_time(moment)

    def _saw_time(self, moment: datetime) -> None:
        if self.gathered.newest is None or moment > self.gathered.newest:
            self.gathered.newest = moment

    def _event(self, obj: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
        involved = _mapping(obj.get("involvedObject") or obj.get("regarding"))
        gathered = self.gathered
        if involved.get("kind") == "Pod":
            namespace = involved.get("namespace") or metadata.get("namespace") or ""
            pod = (str(namespace), str(involved.get("name") or ""))
            if pod in self._seen_pods and pod not in self._kept_pods:
                self._saw_last_seen(obj)
                return  # about a pod that requests no accelerator
        event = event_from_object(obj)
        if event.last_seen is not None:
            self._saw_time(event.last_seen)
        if event.kind != "Pod" and event.reason in CREATE_REASONS:
            gathered.create_events.append(event)
        elif event.kind == "Pod":
            gathered.events.setdefault((event.kind, event.namespace, event.name), []).append(event)

    def _saw_last_seen(self, obj: Mapping[str, Any]) -> None:
        """Note when an event that is not kept was seen last, as event_from_object reads it
        (its metadata.creationTimestamp, the last resort, `add` has noted)."""
        series = _mapping(obj.get("series"))
        for value in (
            series.get("lastObservedTime"),
            obj.get("lastTimestamp"),
            obj.get("eventTime"),
            obj.get("firstTimestamp"),
        ):
            moment = self._parsed(value) if value else None
            if moment is not None:
                self._saw_time(moment)
                return

    def _pod(self, obj: Mapping[str, Any], ref: ObjectRef, document: Document | None) -> None:
        gathered = self.gathered
        spec = mapping(obj.get("spec"))
        if spec.get("resourceClaims"):
            gathered.claimed = True
        key = (ref.namespace or "default", ref.name)
        self._seen_pods.add(key)
        if not may_request_accelerator(spec) and not self._of_kept_job(obj):
            return
        self._kept_pods.add(key)
        gathered.pods.append(document or self._document(obj, ref))

    def _of_kept_job(self, obj: Mapping[str, Any]) -> bool:
        if not self._keep_jobs:
            return False
        namespace, kind, name = pod_owner(obj)
        return kind == "Job" and bool({name, f"{namespace}/{name}"} & self._keep_jobs)

    def _controller(
        self,
        obj: Mapping[str, Any],
        ref: ObjectRef,
        document: Document | None,
        metadata: Mapping[str, Any],
    ) -> None:
        gathered = self.gathered
        kind = ref.kind
        if kind == "Workload":
            gathered.kueue_workloads.append(document or self._document(obj, ref))
            return
        queued = kind in SUSPEND_PATHS and bool(queue_name(metadata))
        key = (kind, ref.namespace or "default", ref.name)
        if kind == "Job":
            status = _mapping(obj.get("status"))
            times = {k: status.get(k) for k in ("startTime", "completionTime")}
            gathered.jobs[key[1], key[2]] = {"status": times}
        probe = document or Document(self._file, {}, ref)  # shape_for reads the ref alone
        if shape_for(probe) is None:
            gathered.controllers.pop(key, None)  # as a controller without a typed view
            if queued:
                gathered.queued.append(document or self._document(obj, ref))
            return
        if document is None and kind in _PLAIN_KINDS and not may_request_accelerator(obj):
            gathered.controllers[key] = False
            if queued:
                gathered.queued.append(self._document(obj, ref))
            return
        document = document or self._document(obj, ref)
        workload = gathered.workload_of(document)
        if workload is None:
            gathered.controllers.pop(key, None)
        else:
            gathered.controllers[key] = any(gpu_requests(t) for t in workload.templates)
        if queued:
            gathered.queued.append(document)


def _mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else an empty one (a plain dict without the ABC check)."""
    if type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else _EMPTY


_EMPTY: Mapping[str, Any] = {}


def _last_seen(event: Event) -> datetime:
    return event.last_seen or _EPOCH


def gather(
    documents: Iterable[Document],
    workload_of: Callable[[Document], Workload | None] | None = None,
) -> Gathered:
    """What a diagnosis reads of the loader's `documents`."""
    gatherer = Gatherer(workload_of=workload_of)
    gatherer.add_all(documents)
    return gatherer.done()
