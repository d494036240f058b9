"""`gpulint diagnose --live`: the same objects as a dump, read from the Kubernetes API."""

from __future__ import annotations

from gpulint.live.client import ConnectionOptions, connect
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
    options: ConnectionOptions, pool_label: str | None = None
) -> tuple[tuple[Document, ...], ClusterProfile]:
    """Pods, Events, ReplicaSets and Jobs of the cluster, and its profile (as live check)."""
    client = connect(options)
    try:
        cluster = read_cluster(client)
        profile = profile_from_cluster(
            cluster, pool_label, f"live cluster ({client.source})", client.namespace
        )
        listed = [
            client.list_all(call.path, call.what, call.query) or [] for call in DIAGNOSE_READS
        ]
    finally:
        client.close()
    objects = [*cluster.pods, *(obj for items in listed for obj in items)]
    return tuple(api_document(obj) for obj in objects), profile
