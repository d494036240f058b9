"""What corpus-wide rules keep of context files, summed up without the workloads' trees.

A pre-commit run with `context:` reads the whole repository's kept workloads from the results
cache to judge the few files it was given. A rule whose record names a `summarizes:` function
(GPU201: each GPU demand's pools, counts and name) is given, for a context file, that summary
(`KeptSummary`) instead: the cache keeps it in an entry of its own beside the file's whole
outcome, which is read only when the check asks for a workload itself (a finding of its own,
`CheckContext.expand`) or when the summary could count it wrong:

- another input writes an object the summary holds (a variant, counted once with the others:
  `gpulint.engine.variants`), or
- the autoscaler that sets a workload's count in the run is not the one its file gives it
  (an HPA of another file, one that outranks it).

Either way the file's workloads are read in full and take the summary's place in the run's
order, so the check sees what it sees without summaries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpulint.loader import LoadResult
from gpulint.rules.base import KeptSummary, scaler_identity

if TYPE_CHECKING:
    from gpulint.engine.files import FileOutcome
    from gpulint.engine.plan import FilePlan
    from gpulint.model import DocumentLike, Workload
    from gpulint.replicas import Autoscaler
    from gpulint.rules.base import CheckContext

#: The autoscalers kept per target: (namespace as written, kind, name).
Scalers = dict[tuple[str | None, str, str], "Autoscaler"]


def add_autoscalers(chosen: Scalers, scalers: Iterable[Autoscaler]) -> None:
    """Keep in `chosen` the autoscaler that scales each target: the first, unless a later one
    outranks it (Autoscaler.outranks: an HPA a ScaledObject cannot adopt)."""
    for scaler in scalers:
        target = _target(scaler)
        kept = chosen.get(target)
        if kept is None or scaler.outranks(kept):
            chosen[target] = scaler


def _target(scaler: Autoscaler) -> tuple[str | None, str, str]:
    """What `scaler` scales: its namespace as written, the target's kind and name."""
    return scaler.document.ref.namespace, scaler.target_kind, scaler.target_name


def kept_context(plan: FilePlan, outcome: FileOutcome, code: str) -> CheckContext:
    """The context of what the rule `code` kept of one file, alone: its workloads with the
    verdicts on their templates, and the autoscalers the file gives them."""
    chosen: Scalers = {}
    add_autoscalers(chosen, outcome.autoscalers)
    return plan.context(
        LoadResult((), plan.knowledge, ()),
        tuple(outcome.kept.get(code, ())),
        all_autoscalers=tuple(chosen.values()),
        placements={id(t): verdict for t, verdict, _ in outcome.placements},
        admissions={id(t): found for t, _, found in outcome.placements if found is not None},
    )


def summarized(plan: FilePlan, outcome: FileOutcome, name: str, source: str) -> FileOutcome:
    """`outcome` of the context file `name` (its whole outcome stored under `source`) as the
    corpus pass reads it: what each rule that summarizes keeps of it summed up in place of
    the workloads, and nothing it does not read (no rule's empty list, no tracker without a
    marker: a context file gets no per-file finding)."""
    outcome = outcome._replace(
        kept={code: found for code, found in outcome.kept.items() if found},
        tracker=(
            outcome.tracker
            if outcome.tracker is not None and outcome.tracker.holds_markers
            else None
        ),
    )
    rules = [r for r in plan.corpus_wide if r.summarizes and outcome.kept.get(r.code)]
    if not rules:
        return outcome
    kept = dict(outcome.kept)
    found = []
    for rule in rules:
        summarize = rule.summary_function()
        assert summarize is not None
        ctx = kept_context(plan, outcome, rule.code)
        assert ctx.all_autoscalers is not None
        chosen = {_target(scaler): scaler for scaler in ctx.all_autoscalers}
        workloads = ctx.workloads
        objects = tuple(
            (ctx.namespace_of(w.document), w.kind, w.document.ref.name) for w in workloads
        )
        targets = [(w.document.ref.namespace, w.kind, w.document.ref.name) for w in workloads]
        scaled = tuple((t, scaler_identity(chosen.get(t))) for t in targets)
        found.append((rule.code, KeptSummary(name, source, objects, scaled, summarize(ctx))))
        del kept[rule.code]
    # The verdicts of the templates still kept whole, and those only.
    still = {id(t) for workloads in kept.values() for w in workloads for t in w.templates}
    return outcome._replace(
        kept=kept,
        placements=tuple(p for p in outcome.placements if id(p[0]) in still),
        summaries=tuple(found),
    )


def in_place(
    items: Sequence[Workload | KeptSummary],
    namespace_of: Callable[[DocumentLike], str],
    scalers: Mapping[tuple[str | None, str, str], Autoscaler],
    expand: Callable[[KeptSummary], Sequence[Workload]],
) -> list[Workload | KeptSummary]:
    """`items` (what a rule kept, file after file) with each summary that could count its
    workloads wrong replaced, in place, by the workloads themselves (`expand`)."""
    if not any(isinstance(item, KeptSummary) for item in items):
        return list(items)
    counts: Counter[tuple[str, str, str]] = Counter()
    for item in items:  # (thousands of summaries: plain loops)
        if isinstance(item, KeptSummary):
            for found in item.objects:
                if found[2]:
                    counts[found] += 1
        elif item.document.ref.name:
            ref = item.document.ref
            counts[namespace_of(item.document), ref.kind, ref.name] += 1
    result: list[Workload | KeptSummary] = []
    for item in items:
        if isinstance(item, KeptSummary) and not _holds(item, counts, scalers):
            result.extend(expand(item))
        else:
            result.append(item)
    return result


def _holds(
    summary: KeptSummary,
    counts: Mapping[tuple[str, str, str], int],
    scalers: Mapping[tuple[str | None, str, str], Autoscaler],
) -> bool:
    """Whether `summary` counts its workloads as the run does: no other input writes one of
    its objects, and each is scaled by the autoscaler its file gives it."""
    for found in summary.objects:
        if found[2] and counts[found] != 1:
            return False
    for target, assumed in summary.scaled:
        scaler = scalers.get(target)
        if (scaler is None) is not (assumed is None) or (
            scaler is not None and scaler_identity(scaler) != assumed
        ):
            return False
    return True


def split(
    ordered: Iterable[Workload | KeptSummary],
) -> tuple[tuple[Workload, ...], tuple[tuple[int, KeptSummary], ...]]:
    """The workloads of `ordered`, and each summary after the number of them before it."""
    workloads: list[Workload] = []
    summaries: list[tuple[int, KeptSummary]] = []
    for item in ordered:
        if isinstance(item, KeptSummary):
            summaries.append((len(workloads), item))
        else:
            workloads.append(item)
    return tuple(workloads), tuple(summaries)
