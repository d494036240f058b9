"""Kueue admission: which LocalQueue a workload names, and whether its ClusterQueue can ever
admit it.

Kueue admits a workload only when the ClusterQueue behind its LocalQueue covers every resource
the workload requests and one flavor has quota for all of its pods at once; otherwise the job
stays suspended, with no event on any pod. A workload it can admit alone waits, suspended, for
quota while others run: it is queued, not stuck.
"""

from __future__ import annotations

from decimal import Decimal

from gpulint.fields import mapping_at
from gpulint.gpus import gpu_requests
from gpulint.model import Workload
from gpulint.profile.kueue import QUEUE_LABEL
from gpulint.profile.model import ClusterProfile, ClusterQueue, FlavorQuota
from gpulint.quantity import format_quantity
from gpulint.yamltree import Pos


def queue_label(workload: Workload) -> tuple[str, Pos] | None:
    """The LocalQueue a workload names, and where: on the object, else on a pod template.

    Kueue reads the label, else the annotation of the same key, which it still honours though
    deprecated (kubernetes-sigs/kueue pkg/controller/jobframework, QueueNameForObject).
    """
    for labels in (
        mapping_at(workload.document.obj, "metadata", "labels"),
        mapping_at(workload.document.obj, "metadata", "annotations"),
        *(mapping_at(t.node, "metadata", "labels") for t in workload.templates),
    ):
        value = labels.get(QUEUE_LABEL)
        if value:
            return str(value), labels.pos_of_value(QUEUE_LABEL)
    return None


def gpus_at_once(workload: Workload) -> dict[str, Decimal]:
    """GPUs of each resource all of the workload's pods request together (what Kueue admits)."""
    total: dict[str, Decimal] = {}
    for template in workload.templates:
        pods = template.replicas.value if template.replicas is not None else 1
        for name, amount in gpu_requests(template).items():
            total[name] = total.get(name, Decimal(0)) + pods * amount
    return total


def admitting_queue(profile: ClusterProfile, workload: Workload, namespace: str) -> str | None:
    """The ClusterQueue that can admit `workload` on its own, or None (no queue, or never)."""
    found = queue_label(workload)
    if found is None:
        return None
    if queue_problem(profile, workload, namespace, found[0], gpus_at_once(workload)):
        return None
    local = next(q for q in profile.local_queues if (q.namespace, q.name) == (namespace, found[0]))
    return local.cluster_queue


def queue_problem(
    profile: ClusterProfile,
    workload: Workload,
    namespace: str,
    name: str,
    gpus: dict[str, Decimal],
) -> tuple[str, str] | None:
    """(message, fix) when the queue is missing or can never admit `gpus` at once, else None."""
    ref = workload.document.ref
    local = next(
        (q for q in profile.local_queues if (q.namespace, q.name) == (namespace, name)), None
    )
    if local is None:
        known = sorted(q.name for q in profile.local_queues if q.namespace == namespace)
        return (
            f"LocalQueue {namespace}/{name} does not exist (queues in {namespace}: "
            f"{', '.join(known) or 'none'}): Kueue keeps {ref} suspended and creates no pods",
            f"Name an existing LocalQueue in `{QUEUE_LABEL}`, or create {namespace}/{name}.",
        )
    queue = next((q for q in profile.cluster_queues if q.name == local.cluster_queue), None)
    if queue is None:
        return (
            f"LocalQueue {namespace}/{name} points at ClusterQueue {local.cluster_queue}, which "
            f"does not exist: Kueue keeps {ref} suspended and creates no pods",
            f"Create ClusterQueue {local.cluster_queue}, or use another LocalQueue.",
        )
    for resource, need in gpus.items():
        if resource not in queue.covered:
            covered = ", ".join(sorted(queue.covered)) or "nothing"
            return (
                f"ClusterQueue {queue.name} (LocalQueue {namespace}/{name}) does not cover "
                f"`{resource}` (coveredResources: {covered}): Kueue never admits {ref}, which "
                f"requests {format_quantity(need)} at once",
                f"Add `{resource}` to a resourceGroup of ClusterQueue {queue.name} with a "
                f"nominalQuota of at least {format_quantity(need)}, or use a queue that has it.",
            )
        most = _most(queue, resource)
        if most is not None and need > most[1]:
            return (
                f"ClusterQueue {queue.name} (LocalQueue {namespace}/{name}) can give at most "
                f"{format_quantity(most[1])} `{resource}` (flavor {most[0].name}), but {ref} "
                f"needs {format_quantity(need)} at once: Kueue never admits it",
                f"Raise the nominalQuota of `{resource}` in ClusterQueue {queue.name} to "
                f"{format_quantity(need)}, or shrink the job.",
            )
    return None


def _most(queue: ClusterQueue, resource: str) -> tuple[FlavorQuota, Decimal] | None:
    """The flavor that can give the most of `resource`; None when borrowing has no bound.

    A queue in a cohort may borrow what the other queues leave unused, up to its
    borrowingLimit; without one the bound depends on the whole cohort.
    """
    best: tuple[FlavorQuota, Decimal] | None = None
    for flavor in queue.flavors:
        if resource not in flavor.nominal:
            continue
        amount = flavor.nominal[resource]
        if queue.cohort:
            if resource not in flavor.borrowing_limit:
                return None
            amount += flavor.borrowing_limit[resource]
        if best is None or amount > best[1]:
            best = (flavor, amount)
    return best
