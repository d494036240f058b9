"""Where a diagnosis reads its objects: dump files (`kubectl get pods,events -A -o yaml`)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from gpulint.errors import GpulintError
from gpulint.files import decode_input, read_input
from gpulint.loader import LoadResult, load_text
from gpulint.model import Document, IssueKind, Workload
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

    documents: tuple[Document, ...]
    profile: ClusterProfile | None  # what their Nodes/quotas (and profile inputs) describe
    typed: tuple[Workload, ...]  # the documents that run pods, typed as the loader read them


def read_dumps(
    paths: Sequence[str],
    profile_paths: Sequence[str] = (),
    pool_label: str | None = None,
) -> Dumps:
    """The objects of every dump file, and the profile their Nodes/quotas (and `profile_paths`)
    describe (None when there are none). Raises GpulintError, one line, for a bad input."""
    documents: list[Document] = []
    typed: list[Workload] = []
    facts: list[ProfileFacts] = []
    for path in paths:
        loaded = _read_dump(path)
        found = loaded.documents
        documents.extend(found)
        typed.extend(loaded.workloads)
        cluster_objects = [d.obj for d in found if d.ref.kind in PROFILE_KINDS]
        if cluster_objects:
            facts.append(facts_from_objects(cluster_objects, pool_label, path))
    if not any(d.ref.kind in _JUDGED for d in documents):
        raise GpulintError(
            f"{', '.join(paths)}: no Pod, Event, Job or Workload objects; give the output of "
            f"`{DUMP_COMMAND}`"
        )
    for path in profile_paths:
        facts.extend(read_profile_file(path, pool_label))
    return Dumps(tuple(documents), merge(facts) if facts else None, tuple(typed))


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
