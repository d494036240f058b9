"""How many pods of a workload run at once: replica counts, the HPAs that raise them, gangs.

The rules that weigh pods against capacity and quotas share these answers; a run that checks
neither never imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal

from gpulint.model import Document, DocumentKey, DocumentLike, PodTemplate, ReplicaCount, Workload
from gpulint.quantity import format_quantity
from gpulint.yamltree import Pos, YMap


@dataclass(frozen=True)
class Autoscaler:
    """A HorizontalPodAutoscaler of the checked manifests and the workload it scales."""

    document: DocumentKey  # kept for the whole run, so without its tree
    target_kind: str
    target_name: str
    max_replicas: int
    pos: Pos  # where maxReplicas is written


def autoscalers(documents: Iterable[Document]) -> Iterator[Autoscaler]:
    """Every HorizontalPodAutoscaler with a scaleTargetRef and a maxReplicas."""
    for document in documents:
        if document.ref.kind != "HorizontalPodAutoscaler":
            continue
        spec = document.obj.get("spec")
        if not isinstance(spec, YMap):
            continue
        target = spec.get("scaleTargetRef")
        maximum = spec.get("maxReplicas")
        if not isinstance(target, YMap) or not isinstance(maximum, int):
            continue
        yield Autoscaler(
            DocumentKey.of(document),
            str(target.get("kind", "")),
            str(target.get("name", "")),
            maximum,
            spec.pos_of_key("maxReplicas"),
        )


def autoscaler_for(workload: Workload, scalers: Iterable[Autoscaler]) -> Autoscaler | None:
    """The HPA (same namespace, matching kind and name) that scales `workload`, if any."""
    ref = workload.document.ref
    kind, name, namespace = ref.kind, ref.name, ref.namespace
    # Every workload scans every HPA: compare the most selective field first.
    for scaler in scalers:
        if (
            scaler.target_name == name
            and scaler.target_kind == kind
            and scaler.document.ref.namespace == namespace
        ):
            return scaler
    return None


@dataclass(frozen=True)
class PeakReplicas:
    """The most pods of each template a workload runs at once, and where that is written."""

    count: int
    field: str  # what to change: "replicas", "parallelism", "maxReplicas"; "" for a bare Pod
    document: DocumentLike  # the workload, or the HPA that scales it
    pos: Pos | None  # None: the kind's default, or a bare Pod
    autoscaler: Autoscaler | None = None  # set when the HPA's maxReplicas is the peak
    replicas: ReplicaCount | None = None  # the count as the workload writes it

    def describe(self) -> str:
        """How a message names the count: `replicas: 3`, `replicas: 2 × parallelism: 4`."""
        if self.autoscaler is not None:
            ref = self.document.ref
            where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
            return f"HPA {where} maxReplicas: {self.count}"
        if self.replicas is None or not self.field:
            return "1 pod"
        return self.replicas.describe()


def peak_replicas(
    workload: Workload, scalers: Iterable[Autoscaler], template: PodTemplate | None = None
) -> PeakReplicas | None:
    """The peak pod count of `template` (else the workload's first); None for kinds that run
    one pod per node (DaemonSet).

    With an HPA the peak is the larger of its maxReplicas and the written replica count: the
    HPA moves the count into its range, but a count above maxReplicas exists until it does.
    """
    count = template.replicas if template is not None else workload.replicas
    if count is None:
        return None
    peak = PeakReplicas(count.value, count.field, workload.document, count.pos, None, count)
    if count.factors or not count.field:
        return peak  # an HPA scales a single replica count
    scaler = autoscaler_for(workload, scalers)
    if scaler is not None and scaler.max_replicas >= count.value:
        return PeakReplicas(
            scaler.max_replicas, "maxReplicas", scaler.document, scaler.pos, scaler, count
        )
    return peak


@dataclass(frozen=True)
class GangPart:
    """One role's share of a gang: the pods it needs at once and where that is written."""

    template: PodTemplate
    pods: int
    count: ReplicaCount  # the field to change to shrink this part


def gang_parts(
    workload: Workload, amount: Callable[[PodTemplate], Decimal]
) -> tuple[GangPart, ...]:
    """The pods each role of a gang needs at once, to hold the least of `amount` in total.

    A role's share is its pod count, or its own gang minimum (Ray worker `minReplicas` under
    autoscaling, Volcano task `minAvailable`). A workload-wide minimum (`minAvailable`) is met
    with the pods that hold the least `amount`: less can never start the job.
    """
    parts = []
    for template in workload.templates:
        count = template.gang_min or template.replicas
        if count is None:
            continue
        pods = count.value
        if template.gang_min is not None and template.replicas and template.replicas.factors:
            # minReplicas counts groups; a group of a multi-host Ray worker has numOfHosts pods.
            pods *= template.replicas.value // max(template.replicas.factors[0].value, 1)
        parts.append(GangPart(template, pods, count))
    minimum = workload.gang_min
    if minimum is None or minimum.pos is None or any(t.gang_min for t in workload.templates):
        return tuple(parts)
    left = minimum.value
    chosen = []
    for part in sorted(parts, key=lambda p: amount(p.template)):
        take = min(left, part.pods)
        if take:
            chosen.append(GangPart(part.template, take, minimum))
        left -= take
    return tuple(chosen)


def describe_gang(parts: Iterable[tuple[GangPart, Decimal]]) -> str:
    """`Master: replicas: 1 × 8 per pod; Worker: 2 of minAvailable: 5 × 8 per pod`."""
    return "; ".join(
        f"{part.template.role or 'pod'}: {_part_count(part)} × {format_quantity(amount)} per pod"
        for part, amount in parts
    )


def _part_count(part: GangPart) -> str:
    described = part.count.describe()
    return described if part.count.value == part.pods else f"{part.pods} of {described}"
