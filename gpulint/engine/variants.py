"""Variants of the same objects: what corpus-wide rules count once.

An object of a cluster is its (namespace, kind, name): applying two manifests of it leaves one
object. A kustomize base and the overlays built on it, the values sets of one chart, and two
files writing the same object are alternatives, not additions. So the corpus-wide rules (quota
sums, pool capacity, DRA claims) count each object once: an overlay over the base it builds
on, else the alternative asking for the most GPUs, the one whose verdict must hold wherever
any of them is applied. Per-file rules still judge every variant on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gpulint.errors import GpulintError
from gpulint.rules.base import KeptSummary

if TYPE_CHECKING:
    from gpulint.loader import RenderedInput
    from gpulint.model import DocumentLike, Workload
    from gpulint.replicas import Autoscaler


#: What a corpus-wide rule keeps: workloads, and summaries of a context file's.
W = TypeVar("W")


def installed_namespaces(inputs: Iterable[object]) -> dict[str, str]:
    """The namespace each chart render among `inputs` is installed in, by render name: what
    `helm install -n` gives the objects that name none (kustomize writes its `namespace:`
    into the objects it builds)."""
    from gpulint.loader import RenderedInput

    renders = [item for item in inputs if isinstance(item, RenderedInput)]
    if not renders:
        return {}
    from gpulint.render.locate import HelmOrigin

    return {
        item.name: item.origin.request.namespace
        for item in renders
        if isinstance(item.origin, HelmOrigin) and item.origin.request.namespace
    }


def overlays_of_bases(renders: Iterable[RenderedInput]) -> dict[str, frozenset[str]]:
    """For each kustomize render that another render of the run builds on (a base), the
    names of the renders built on it."""
    from gpulint.render.kustomize import KustomizeOrigin, overlay_files

    overlays = [
        (item.name, Path(item.origin.directory).resolve())
        for item in renders
        if isinstance(item.origin, KustomizeOrigin)
    ]
    if len(overlays) < 2:
        return {}
    built_on: dict[str, set[str]] = {}
    for name, directory in overlays:
        try:
            used = {d.resolve() for d in overlay_files(directory).directories}
        except (GpulintError, OSError):
            continue  # already built once: reading it again failing leaves it unrelated
        for other, other_directory in overlays:
            if other != name and other_directory in used:
                built_on.setdefault(other, set()).add(name)
    return {base: frozenset(names) for base, names in built_on.items()}


class Variants:
    """The workloads kept so far by object, to drop a later copy identical to one of them as
    files are checked: `one_per_object` would pick the first of equals anyway (identical
    trees ask for the same GPUs under any HPA), so keeping the copies, trees and all, until
    the corpus pass only grows the run's memory with the number of copies.

    Only copies read from plain files are dropped: a render may be a kustomize base, which
    gives way to an overlay built on it whatever their GPUs (`_applied`)."""

    def __init__(
        self, namespace_of: Callable[[DocumentLike], str], renders: Iterable[str] = ()
    ) -> None:
        self._namespace_of = namespace_of
        self.renders = set(renders)
        self._kept: dict[tuple[str, str, str, str], list[Workload]] = {}

    def repeats(self, code: str, workload: Workload) -> bool:
        """Whether rule `code` keeps a copy of `workload` already (else it is noted as kept)."""
        document = workload.document
        ref = document.ref
        if not ref.name or document.file.path in self.renders:
            return False
        key = (code, self._namespace_of(document), ref.kind, ref.name)
        kept = self._kept.setdefault(key, [])
        if any(same_tree(document.obj, other.document.obj) for other in kept):
            return True
        kept.append(workload)
        return False


def same_tree(a: object, b: object) -> bool:
    """Whether two parsed trees hold the same values of the same types (`1` is not `true`,
    as `==` would have it), keys in the same order; positions are not compared."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return len(a) == len(b) and all(
            same_tree(key, other_key) and same_tree(value, other_value)
            for (key, value), (other_key, other_value) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def one_per_object(
    workloads: Iterable[W],
    namespace_of: Callable[[DocumentLike], str],
    scalers: Mapping[tuple[str | None, str, str], Autoscaler],
    bases: Mapping[str, frozenset[str]],
) -> tuple[W, ...]:
    """`workloads` with each object once: of the variants of one (namespace, kind, name), an
    overlay's over the base it builds on (`bases`), else the one asking for the most GPUs
    (the first of equals). Unnamed objects (`generateName`) are each their own, and so is a
    summary of a file's (`gpulint.engine.summaries`: none of its objects has a variant)."""
    groups: dict[object, list[W]] = {}
    for workload in workloads:
        key: object = id(workload)
        if not isinstance(workload, KeptSummary) and workload.document.ref.name:
            ref = workload.document.ref
            key = (namespace_of(workload.document), ref.kind, ref.name)
        group = groups.setdefault(key, [])
        if all(w is not workload for w in group):
            group.append(workload)
    if all(len(group) == 1 for group in groups.values()):
        return tuple(group[0] for group in groups.values())
    return tuple(_applied(group, scalers, bases) for group in groups.values())


def _applied(
    group: list[Workload],
    scalers: Mapping[tuple[str | None, str, str], Autoscaler],
    bases: Mapping[str, frozenset[str]],
) -> Workload:
    if len(group) == 1:
        return group[0]
    files = {w.document.file.path for w in group}
    # A base whose overlay is among the variants is not applied on its own.
    applied = [w for w in group if not bases.get(w.document.file.path, frozenset()) & files]
    return max(applied or group, key=lambda w: _gpus_at_peak(w, scalers))


def _gpus_at_peak(
    workload: Workload, scalers: Mapping[tuple[str | None, str, str], Autoscaler]
) -> Decimal:
    """The GPUs a workload's pods ask for at their peak count (surge included)."""
    from gpulint.gpus import gpu_requests
    from gpulint.replicas import pod_demand

    # The one autoscaler kept per target (Gathered.add_autoscalers): a lookup, not a scan.
    ref = workload.document.ref
    scaler = scalers.get((ref.namespace, ref.kind, ref.name))
    total = Decimal(0)
    for template in workload.templates:
        gpus = sum(gpu_requests(template).values(), Decimal(0))
        demand = pod_demand(workload, template, [scaler] if scaler is not None else [])
        total += gpus * (1 if demand is None else demand.pods)
    return total
