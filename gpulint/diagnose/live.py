"""`gpulint diagnose --live`: the same objects as a dump, read from the Kubernetes API."""

from __future__ import annotations

from collections.abc import Sequence

from gpulint.live.client import AccessDenied, ConnectionOptions, connect
from gpulint.live.cluster import ListCall, profile_from_cluster, read_cluster
from gpulint.model import Document
from gpulint.pods import api_document
from gpulint.profile.model import ClusterProfile

EVENTS = ListCall("", "events", "/api/v1/events")
REPLICA_SETS = ListCall("apps", "replicasets", "/apis/apps/v1/replicasets")
JOBS = ListCall("batch", "jobs", "/apis/batch/v1/jobs")
#: What diagnose reads beyond the profile; the gpulint-diagnose role of docs/rbac.yaml.
DIAGNOSE_READS: tuple[ListCall, ...] = (EVENTS, REPLICA_SETS, JOBS)


def read_live(
    options: ConnectionOptions,
    pool_label: str | None = None,
    namespaces: Sequence[str] = (),
) -> tuple[tuple[Document, ...], ClusterProfile | None]:
    """Pods, Events, ReplicaSets and Jobs of the cluster, and its profile (as live check).

    With `namespaces`, only their objects are listed (a namespaced Role suffices); the
    profile is read too when RBAC allows it, else the diagnosis goes without one.
    """
    client = connect(options)
    try:
        if not namespaces:
            cluster = read_cluster(client)
            profile: ClusterProfile | None = profile_from_cluster(
                cluster, pool_label, f"live cluster ({client.source})", client.namespace
            )
            pods = list(cluster.pods)
            listed = [
                client.list_all(call.path, call.what, call.query) or [] for call in DIAGNOSE_READS
            ]
        else:
            try:
                cluster = read_cluster(client)
                profile = profile_from_cluster(
                    cluster, pool_label, f"live cluster ({client.source})", client.namespace
                )
            except AccessDenied:
                profile = None  # a namespaced Role: no nodes, quotas or queues
            pods, listed = [], []
            for namespace in namespaces:
                pods += client.list_all(_in(POD_PATH, namespace), "pods") or []
                listed += [
                    client.list_all(_in(call.path, namespace), call.what, call.query) or []
                    for call in DIAGNOSE_READS
                ]
    finally:
        client.close()
    objects = [*pods, *(obj for items in listed for obj in items)]
    return tuple(api_document(obj) for obj in objects), profile


POD_PATH = "/api/v1/pods"


def _in(path: str, namespace: str) -> str:
    """`/api/v1/events` -> `/api/v1/namespaces/<ns>/events`."""
    head, _, resource = path.rpartition("/")
    return f"{head}/namespaces/{namespace}/{resource}"
