"""Kueue admission (GPU310): a workload whose queue can never admit its GPUs.

Kueue admits a workload only when the ClusterQueue behind its LocalQueue covers every resource
the workload requests and one flavor has quota for all of its pods at once; otherwise the job
stays suspended, with no event on any pod.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpulint.rules.base import CheckContext, Problem

if TYPE_CHECKING:
    from gpulint.profile.model import ClusterProfile


def kueue_queue_lacks_gpu_quota(ctx: CheckContext) -> Iterator[Problem]:
    """The workload's LocalQueue or ClusterQueue is missing, or cannot admit its GPUs."""
    profile = ctx.profile
    if profile is None:
        return
    # Here, not at the top: a run without queues does not import Kueue's model.
    from gpulint.admission import with_manifest_queues
    from gpulint.kueue import gpus_at_once, queue_label, queue_problem

    # The queues among the inputs are applied with the workloads they admit: their quota is
    # judged as the profile's. A queue is called missing only when the profile lists the
    # cluster's queues; else one named but defined nowhere here is not known.
    queues = with_manifest_queues(profile, ctx.knowledge, ctx.namespace_of)
    listed = bool(profile.cluster_queues or profile.local_queues)
    if not (queues.cluster_queues or queues.local_queues):
        return
    for workload in ctx.workloads:
        found = queue_label(workload)
        gpus = gpus_at_once(workload)
        if found is None or not gpus:
            continue
        name, pos = found
        namespace = ctx.namespace_of(workload.document)
        if not listed and not _defined(queues, namespace, name):
            continue
        message = queue_problem(queues, workload, namespace, name, gpus)
        if message is not None:
            # Every queue problem names the workload Kueue holds back.
            yield Problem.at(workload.document, pos, message[0], message[1], names_workload=True)


def _defined(queues: ClusterProfile, namespace: str, name: str) -> bool:
    """Whether the LocalQueue `namespace/name` and the ClusterQueue it feeds are both known."""
    local = next(
        (q for q in queues.local_queues if (q.namespace, q.name) == (namespace, name)), None
    )
    return local is not None and any(q.name == local.cluster_queue for q in queues.cluster_queues)
