"""Kueue admission (GPU310): a workload whose queue can never admit its GPUs.

Kueue admits a workload only when the ClusterQueue behind its LocalQueue covers every resource
the workload requests and one flavor has quota for all of its pods at once; otherwise the job
stays suspended, with no event on any pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.rules.base import CheckContext, Problem


def kueue_queue_lacks_gpu_quota(ctx: CheckContext) -> Iterator[Problem]:
    """The workload's LocalQueue or ClusterQueue is missing, or cannot admit its GPUs."""
    profile = ctx.profile
    if profile is None or not (profile.cluster_queues or profile.local_queues):
        return
    # Here, not at the top: a run whose profile has no queue does not import Kueue's model.
    from gpulint.kueue import gpus_at_once, queue_label, queue_problem

    for workload in ctx.workloads:
        found = queue_label(workload)
        gpus = gpus_at_once(workload)
        if found is None or not gpus:
            continue
        name, pos = found
        namespace = ctx.namespace_of(workload.document)
        message = queue_problem(profile, workload, namespace, name, gpus)
        if message is not None:
            # Every queue problem names the workload Kueue holds back.
            yield Problem.at(workload.document, pos, message[0], message[1], names_workload=True)
