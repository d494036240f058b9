"""Live mode end to end: connect, read the cluster once, offer the dry-run to the engine."""

from __future__ import annotations

from dataclasses import dataclass

from gpulint.live.client import ConnectionOptions, KubeClient, connect
from gpulint.live.cluster import (
    device_plugin_notes,
    profile_from_cluster,
    read_cluster,
)
from gpulint.live.dryrun import dry_runner
from gpulint.live.verdict import DryRun
from gpulint.profile.model import ClusterProfile


@dataclass(frozen=True)
class LiveCluster:
    """A connected cluster and the profile read from it."""

    client: KubeClient
    profile: ClusterProfile
    # For the run's summary: add-ons RBAC kept from being read, nodes whose device plugin is
    # not serving.
    notes: tuple[str, ...]

    @property
    def dry_run(self) -> DryRun:
        """The --server-dry-run hook for `gpulint.api.lint`."""
        return dry_runner(self.client)

    def close(self) -> None:
        """Release the connection."""
        self.client.close()


def open_live(options: ConnectionOptions, pool_label: str | None = None) -> LiveCluster:
    """Connect and build the ClusterProfile; raises GpulintError when the API cannot be read."""
    client = connect(options)
    try:
        # The server's release is the one objects are validated against (gpulint.validation).
        objects = read_cluster(client, with_version=True)
        profile = profile_from_cluster(
            objects, pool_label, f"live cluster ({client.source})", client.namespace
        )
    except BaseException:
        client.close()
        raise
    notes = (*_connection_notes(client), *objects.notes, *device_plugin_notes(profile.pools))
    return LiveCluster(client, profile, notes)


def _connection_notes(client: KubeClient) -> tuple[str, ...]:
    if client.verified:
        return ()
    return (
        f"the TLS certificate of the Kubernetes API at {client.server} is not verified "
        f"(insecure-skip-tls-verify in {client.source})",
    )
