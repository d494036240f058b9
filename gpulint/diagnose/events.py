"""Event and Pod objects (from a dump or the API) -> the typed facts a diagnosis reads."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from gpulint.errors import GpulintError
from gpulint.model import Document
from gpulint.profile.values import mapping, text

#: Components whose FailedScheduling / NotTriggerScaleUp events speak for an autoscaler.
AUTOSCALERS = ("cluster-autoscaler", "karpenter")
SCALE_UP_REASONS = frozenset({"NotTriggerScaleUp", "TriggeredScaleUp"})


@dataclass(frozen=True)
class Event:
    """One core/v1 Event, reduced to what a diagnosis needs."""

    kind: str  # of the involved object
    namespace: str
    name: str
    uid: str
    reason: str
    message: str
    count: int
    first_seen: datetime | None
    last_seen: datetime | None
    source: str  # the component (or reporting controller) that wrote it

    def about(self, kind: str, namespace: str, name: str, uid: str = "") -> bool:
        """Whether the event is about this object (a stale namesake's events do not count)."""
        if (self.kind, self.namespace, self.name) != (kind, namespace, name):
            return False
        return not (uid and self.uid and uid != self.uid)

    @property
    def from_autoscaler(self) -> bool:
        """Written by cluster-autoscaler or Karpenter rather than by the scheduler."""
        return self.reason in SCALE_UP_REASONS or any(a in self.source for a in AUTOSCALERS)


def events_of(documents: Iterable[Document]) -> tuple[Event, ...]:
    """Every Event among `documents`, oldest first."""
    found = [event_from_object(d.obj) for d in documents if d.ref.kind == "Event"]
    return tuple(sorted(found, key=lambda e: e.last_seen or _EPOCH))


def event_from_object(obj: Any) -> Event:
    """One Event object (core/v1 shape, as `kubectl get events -o yaml` writes it)."""
    involved = mapping(obj.get("involvedObject") or obj.get("regarding"))
    metadata = mapping(obj.get("metadata"))
    source = mapping(obj.get("source"))
    series = mapping(obj.get("series"))
    first = timestamp(obj.get("firstTimestamp")) or timestamp(obj.get("eventTime"))
    last = (
        timestamp(series.get("lastObservedTime"))
        or timestamp(obj.get("lastTimestamp"))
        or timestamp(obj.get("eventTime"))
        or first
        or timestamp(metadata.get("creationTimestamp"))
    )
    count = obj.get("count") or series.get("count") or 1
    return Event(
        kind=text(involved.get("kind")),
        namespace=text(involved.get("namespace") or metadata.get("namespace")),
        name=text(involved.get("name")),
        uid=text(involved.get("uid")),
        reason=text(obj.get("reason")),
        message=" ".join(text(obj.get("message") or obj.get("note")).split()),
        count=count if isinstance(count, int) else 1,
        first_seen=first or last,
        last_seen=last,
        source=text(source.get("component") or obj.get("reportingComponent")),
    )


def newest(events: Iterable[Event]) -> Event | None:
    """The event seen last (events_of sorts oldest first, so the last one wins ties)."""
    found = None
    for event in events:
        if found is None or (event.last_seen or _EPOCH) >= (found.last_seen or _EPOCH):
            found = event
    return found


def timestamp(value: Any) -> datetime | None:
    """An RFC 3339 time (`2024-05-01T10:00:00Z`, with optional fraction), as aware UTC."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except GpulintError:
        return None


def parse_time(value: str) -> datetime:
    """Parse `--now` and API timestamps; raises GpulintError naming the value."""
    raw = value.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    head, dot, rest = raw.partition(".")
    if dot:
        # Python 3.10 wants exactly 3 or 6 fraction digits; the API writes 6, users write any.
        digits = "".join(c for c in rest if c.isdigit())
        zone = rest[len(digits) :]
        raw = f"{head}.{(digits + '000000')[:6]}{zone}"
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise GpulintError(
            f"`{value}` is not an RFC 3339 time (write it like 2024-05-01T10:00:00Z)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def times_in(documents: Iterable[Document], events: Iterable[Event]) -> Iterator[datetime]:
    """Every time the objects record: pod creations and event sightings."""
    for document in documents:
        created = timestamp(mapping(document.obj.get("metadata")).get("creationTimestamp"))
        if created is not None:
            yield created
    for event in events:
        if event.last_seen is not None:
            yield event.last_seen


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
