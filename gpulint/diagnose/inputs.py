"""Where a diagnosis reads its objects: dump files (`kubectl get pods,events -A -o yaml`)."""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from gpulint.diagnose.dumpread import Unread, read_objects
from gpulint.diagnose.events import timestamp
from gpulint.diagnose.gather import Gathered, Gatherer
from gpulint.errors import GpulintError
from gpulint.files import decode_input, read_input
from gpulint.loader import LoadResult, load_text
from gpulint.model import IssueKind
from gpulint.profile.kubectl import KINDS as PROFILE_KINDS
from gpulint.profile.kubectl import facts_from_objects
from gpulint.profile.load import read_profile_file
from gpulint.profile.merge import ProfileFacts, merge
from gpulint.profile.model import ClusterProfile
from gpulint.views import NamedTuple

#: One dump of everything diagnose reads; leave out kinds the cluster does not serve.
DUMP_COMMAND = (
    "kubectl get pods,events,replicasets,jobs,nodes,resourcequotas,workloads,localqueues,"
    "resourceclaims,resourceclaimtemplates,deviceclasses,resourceslices -A -o yaml > dump.yaml"
)
#: Kinds a dump must hold one of: what diagnose judges.
_JUDGED = frozenset({"Pod", "Event", "Workload", "Job", "JobSet", "RayJob", "PyTorchJob"})
_DURATION = re.compile(r"\A(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?\Z")


def is_dump_argument(argument: str) -> bool:
    """A positional argument names a dump (a file, `-`, or a YAML/JSON name), not a pod."""
    return (
        argument == "-"
        or os.path.exists(argument)
        or argument.endswith((".yaml", ".yml", ".json"))
        or os.sep in argument
    )


def parse_duration(value: str) -> int:
    """`90`, `90s`, `5m`, `1h30m` -> seconds; raises GpulintError naming the value."""
    text = value.strip()
    if text.isdigit():
        return int(text)
    match = _DURATION.match(text)
    if not text or match is None or not any(match.groupdict().values()):
        raise GpulintError(f"`{value}` is not a duration (write it like 90s, 5m or 1h30m)")
    return sum(int(match[k] or 0) * n for k, n in (("h", 3600), ("m", 60), ("s", 1)))


# Problems that leave the file unread; a duplicate key or a nameless object does not.
_FATAL = frozenset({IssueKind.SYNTAX, IssueKind.UNRENDERED_TEMPLATE})


class Dumps(NamedTuple):
    """What the dump files hold."""

    documents: Gathered  # what a diagnosis reads of their objects
    profile: ClusterProfile | None  # what their Nodes/quotas (and profile inputs) describe
    typed: None  # kept for callers that unpack three values: gathered objects are typed


def read_dumps(
    paths: Sequence[str],
    profile_paths: Sequence[str] = (),
    pool_label: str | None = None,
    keep_jobs: Sequence[str] = (),
) -> Dumps:
    """What a diagnosis reads of every dump file's objects, and the profile their Nodes/quotas
    (and `profile_paths`) describe (None when there are none). Raises GpulintError, one line,
    for a bad input.

    Each file is read once, without positions (gpulint.diagnose.dumpread); a file that reader
    does not take is read by the loader, which reports a broken one at its line. The pods of
    the Jobs `keep_jobs` names are kept even when they ask for no accelerator.
    """
    by_loader: set[str] = set()
    while True:
        try:
            with no_cycle_collection():
                gathered, facts = _gather(paths, by_loader, pool_label, keep_jobs)
            break
        except Unread as unread:
            by_loader.add(str(unread.args[0]))  # read again, this file by the loader
    if not gathered.kinds & _JUDGED:
        raise GpulintError(
            f"{', '.join(paths)}: no Pod, Event, Job or Workload objects; give the output of "
            f"`{DUMP_COMMAND}`"
        )
    # The dump's Nodes are what the cluster is now: merged last, so their taints, labels and
    # capacity win over a description (Terraform, eksctl ...), which fills only what a dump
    # cannot know (pool maxima, the nodes a pool at zero would get).
    described = [f for path in profile_paths for f in read_profile_file(path, pool_label)]
    facts = [*described, *facts]
    return Dumps(gathered, merge(facts) if facts else None, None)


def _gather(
    paths: Sequence[str], by_loader: set[str], pool_label: str | None, keep_jobs: Sequence[str]
) -> tuple[Gathered, list[ProfileFacts]]:
    """One pass over every file; Unread(path) when the fast reader gives up on `path`."""
    gatherer = Gatherer(keep_jobs=keep_jobs)
    facts: list[ProfileFacts] = []
    for path in paths:
        cluster_objects: list[Mapping[str, Any]] = []
        if path in by_loader:
            for document in _read_dump(path).documents:
                gatherer.add(document.obj, document)
                if document.ref.kind in PROFILE_KINDS:
                    cluster_objects.append(document.obj)
        else:
            take = _taking(gatherer, cluster_objects)
            text = decode_input(path, read_input(path, "dump"))
            collected = _collected(text)
            if collected is not None and (
                gatherer.gathered.collected is None or collected > gatherer.gathered.collected
            ):
                gatherer.gathered.collected = collected
            try:
                count = read_objects(text, take)
            except Unread:
                raise Unread(path) from None
            if not count:
                raise Unread(path)  # the loader says why the file holds no object
        if cluster_objects:
            facts.append(facts_from_objects(cluster_objects, pool_label, path))
    return gatherer.done(), facts


#: The first line a dump may carry to record when it was taken, written by
#: `{ echo "# collected: $(date -u +%FT%TZ)"; kubectl get ... -o yaml; } > dump.yaml`.
_COLLECTED = re.compile(r"\A# collected: (\S+)[ \t]*\r?$", re.MULTILINE)


def _collected(text: str) -> datetime | None:
    """When the dump was taken, if its first line records it; None otherwise (kubectl's own
    output records no such time)."""
    match = _COLLECTED.match(text)
    return timestamp(match[1]) if match else None


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cycle collector off while a dump's objects are built: they hold no cycles, and
    its passes over millions of new containers make reading a large dump grow faster than
    the dump (a third of json.load's time on a 758 MB dump)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _taking(
    gatherer: Gatherer, cluster_objects: list[Mapping[str, Any]]
) -> Callable[[Mapping[str, Any]], None]:
    """What takes each object of a file: the gatherer, and the profile's list of its kinds."""

    def take(obj: Mapping[str, Any]) -> None:
        gatherer.add(obj)
        if str(obj.get("kind")) in PROFILE_KINDS:
            cluster_objects.append(obj)

    return take


def _read_dump(path: str) -> LoadResult:
    result = load_text(path, decode_input(path, read_input(path, "dump")))
    fatal = next((i for i in result.issues if i.kind in _FATAL), None)
    if fatal is not None:
        line, column = fatal.pos
        raise GpulintError(f"{path}:{line}:{column}: {fatal.message}")
    if not result.documents:
        raise GpulintError(
            f"{path}: no Kubernetes objects in this file; give the output of `{DUMP_COMMAND}`"
        )
    return result
