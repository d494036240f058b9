"""`gpulint diagnose --live`: the same objects as a dump, read from the Kubernetes API.

Besides what live check reads (the profile, with the DRA objects), diagnose lists Events,
ReplicaSets, Jobs and Kueue's Workloads. A Kueue or DRA API group the cluster does not serve
means no objects of its kinds, as a dump without them: the diagnosis then says what it could
not judge. A list RBAC denies for an add-on or DRA is a note; one of the DIAGNOSE_READS stops
the run.

Events, ReplicaSets and Jobs are listed in large pages, each page handed to the gatherer
(gpulint.diagnose.gather) as it comes, which keeps only what a diagnosis reads: a cluster of a
million events is diagnosed in the memory of what it keeps. A list longer than MAX_LISTED stops
there, and the diagnosis says it read only that many.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.diagnose.extra import WorkloadSource
from gpulint.diagnose.gather import Gathered, Gatherer
from gpulint.errors import GpulintError
from gpulint.live.client import AccessDenied, ConnectionOptions, KubeClient, connect, path_segment
from gpulint.live.cluster import (
    KUEUE,
    DraReads,
    DraResource,
    ListCall,
    profile_from_cluster,
    read_cluster,
    read_dra,
)
from gpulint.profile.model import ClusterProfile

EVENTS = ListCall("", "events", "/api/v1/events")
REPLICA_SETS = ListCall("apps", "replicasets", "/apis/apps/v1/replicasets")
JOBS = ListCall("batch", "jobs", "/apis/batch/v1/jobs")
#: What diagnose reads beyond the profile; the gpulint-diagnose role of docs/rbac.yaml.
DIAGNOSE_READS: tuple[ListCall, ...] = (EVENTS, REPLICA_SETS, JOBS)
POD_PATH = "/api/v1/pods"
#: Objects per page of the lists diagnose pages through itself: few round trips on a large
#: cluster (the API server's default page is 500).
PAGE = 5000
#: Objects of one list read at most; past it the diagnosis goes on with what was read.
MAX_LISTED = 5_000_000
WORKLOADS = "workloads"
WORKLOADS_UNREAD = "Kueue Workloads not read (why Kueue holds a suspended job is not known)"
#: The DRA objects, and what the diagnosis cannot tell without each.
DIAGNOSE_DRA = DraReads(
    (
        DraResource(
            "deviceclasses",
            "DRA DeviceClasses",
            "only the known accelerator classes make a claim a GPU claim",
        ),
        DraResource(
            "resourceslices",
            "DRA ResourceSlices",
            "what the nodes offer for DRA claims is not known",
        ),
        DraResource(
            "resourceclaims",
            "DRA ResourceClaims",
            "pods with DRA claims are GPU pods only when they also request a GPU resource",
        ),
        DraResource(
            "resourceclaimtemplates",
            "DRA ResourceClaimTemplates",
            "pods with DRA claims are GPU pods only when they also request a GPU resource",
        ),
    ),
    "pods with DRA claims are GPU pods only when they also request a GPU resource",
)


@dataclass(frozen=True)
class LiveObjects:
    """What diagnose read from the cluster."""

    documents: Gathered  # what a diagnosis reads of the objects
    profile: ClusterProfile | None  # None: RBAC (a namespaced Role) denies the nodes
    notes: tuple[str, ...]  # what RBAC kept from being read
    workloads: WorkloadSource = WorkloadSource.LIVE  # whether Kueue's Workloads were listed


def read_live(
    options: ConnectionOptions,
    pool_label: str | None = None,
    namespaces: Sequence[str] = (),
    max_listed: int = MAX_LISTED,
    keep_jobs: Sequence[str] = (),
) -> LiveObjects:
    """Pods, Events, ReplicaSets, Jobs and Kueue Workloads of the cluster, and its profile
    (as live check, with the DRA objects).

    With `namespaces`, only their namespaced objects are listed (a namespaced Role suffices);
    the profile is read too when RBAC allows it, else the diagnosis goes without one, and the
    cluster-scoped DRA objects are listed on their own. A list of Events, ReplicaSets or Jobs
    longer than `max_listed` objects is read that far, and a note says so. The pods of the
    Jobs `keep_jobs` names are kept even when they ask for no accelerator.
    """
    from gpulint.diagnose.inputs import no_cycle_collection

    client = connect(options)
    try:
        with no_cycle_collection():
            return _read(client, pool_label, namespaces, max_listed, keep_jobs)
    finally:
        client.close()


def _read(
    client: KubeClient,
    pool_label: str | None,
    namespaces: Sequence[str],
    max_listed: int,
    keep_jobs: Sequence[str],
) -> LiveObjects:
    try:
        cluster = read_cluster(client, DIAGNOSE_DRA, whole=True)
    except AccessDenied:
        if not namespaces:
            raise
        cluster = None  # a namespaced Role: no nodes, quotas or queues
    gatherer = Gatherer(f"<live cluster {client.source}>", keep_jobs=keep_jobs)
    notes: list[str] = []
    profile = None
    if cluster is not None:
        source = f"live cluster ({client.source})"
        profile = profile_from_cluster(cluster, pool_label, source, client.namespace)
        notes += cluster.notes
        for node in cluster.nodes:
            gatherer.add(node)  # as in a dump: time to schedule names the pods' pools
    if cluster is not None and not namespaces:
        for pod in cluster.pods:
            gatherer.add(pod)
    else:
        for namespace in namespaces:
            for pod in client.list_all(_in(POD_PATH, namespace), "pods") or ():
                gatherer.add(pod)
    for call in DIAGNOSE_READS:
        for path in _scoped(call.path, namespaces):
            for obj in pages(client, path, call.what, call.query, max_listed, notes):
                gatherer.add(obj)
    if cluster is None:
        # Not in a profile: read as a dump's objects, within the namespaces where they are.
        dra_objects, dra_notes = read_dra(client, DIAGNOSE_DRA, namespaces=namespaces)
        for obj in dra_objects:
            gatherer.add(obj)
        notes += dra_notes
    workloads, note, source = _workloads(client, cluster.versions if cluster else None, namespaces)
    for obj in workloads:
        gatherer.add(obj)
    notes += [note] if note else []
    return LiveObjects(gatherer.done(), profile, tuple(notes), source)


def pages(
    client: KubeClient,
    path: str,
    what: str,
    query: Sequence[tuple[str, str]] = (),
    max_listed: int = MAX_LISTED,
    notes: list[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Every item of a list call, PAGE at a time, with the `kind` and `apiVersion` the API
    leaves out of list items; at most `max_listed` of them (then a note joins `notes`).

    The next page is asked for as soon as its continue token is known, in a thread, while
    the items of this one are handed on: the server pages while the diagnosis reads."""
    from concurrent.futures import ThreadPoolExecutor

    def fetch(token: str) -> Any:
        page_query = [*query, ("limit", str(PAGE))]
        if token:
            page_query.append(("continue", token))
        return client.request("GET", path, page_query)

    tokens: set[str] = set()
    listed = 0
    with ThreadPoolExecutor(1, thread_name_prefix="gpulint-page") as pool:
        coming = pool.submit(fetch, "")
        while True:
            response = coming.result()
            if response.status != 200:
                raise client.refused(response, "list", what)
            body = response.body
            items = body.get("items")
            if "items" not in body or not isinstance(items, list | None):
                raise GpulintError(
                    f"{client.server} answered the list of {what} with something that is not "
                    f"a Kubernetes list; check the server address of {client.source}"
                )
            metadata = body.get("metadata")
            token = str((metadata if isinstance(metadata, Mapping) else {}).get("continue") or "")
            if token in tokens:
                raise GpulintError(
                    f"{client.server} answered the list of {what} with a continue token it had "
                    f"given before: the list would never end; check the server address of "
                    f"{client.source}"
                )
            tokens.add(token)
            if token:
                coming = pool.submit(fetch, token)
            kind = str(body.get("kind") or "")
            item_kind = kind[: -len("List")] if kind.endswith("List") else kind
            api_version = body.get("apiVersion")
            del response, body
            for item in items or ():
                if listed >= max_listed:
                    if notes is not None:
                        notes.append(
                            f"the list of {what} goes on past {max_listed:,} objects: the "
                            f"diagnosis reads the first {max_listed:,} (what the others say is "
                            "not known)"
                        )
                    return
                if isinstance(item, dict):
                    listed += 1
                    yield {"apiVersion": api_version, "kind": item_kind, **item}
            if not token:
                return


def _workloads(
    client: KubeClient, versions: Mapping[str, str] | None, namespaces: Sequence[str]
) -> tuple[list[dict[str, Any]], str | None, WorkloadSource]:
    """Kueue's Workloads at the version the cluster serves (none without Kueue), a note when
    RBAC denies them, and what came of the reading. `versions` holds what the cluster read
    found, if it was read."""
    try:
        if versions is None:
            version = client.preferred_version(KUEUE.group)
        else:
            version = versions.get(KUEUE.group)
        if version is None:
            # Kueue is not installed, or its discovery was denied (noted)
            return [], None, WorkloadSource.LIVE_UNSERVED
        found: list[dict[str, Any]] = []
        what = f"{WORKLOADS}.{KUEUE.group}"
        for path in _scoped(f"/apis/{KUEUE.group}/{version}/{WORKLOADS}", namespaces):
            found += client.list_all(path, what, optional=True) or []
    except AccessDenied as denied:
        return [], f"{WORKLOADS_UNREAD}: {denied}", WorkloadSource.LIVE_DENIED
    return found, None, WorkloadSource.LIVE


def _scoped(path: str, namespaces: Sequence[str]) -> list[str]:
    """`path` cluster-wide, or its path in each of `namespaces`."""
    return [_in(path, n) for n in namespaces] if namespaces else [path]


def _in(path: str, namespace: str) -> str:
    """`/api/v1/events` -> `/api/v1/namespaces/<ns>/events`."""
    head, _, resource = path.rpartition("/")
    return f"{head}/namespaces/{path_segment(namespace)}/{resource}"
