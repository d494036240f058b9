"""What the per-file pass leaves for the corpus pass and the report, and the corpus pass: the
corpus-wide rules once over what the files kept, then the suppressions that suppressed
nothing."""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import groupby
from typing import TYPE_CHECKING

from gpulint.cachedir import CACHE_MIN_FILES
from gpulint.engine.files import FileOutcome, lanes_of
from gpulint.engine.plan import FilePlan
from gpulint.engine.pool import Listed, check_files
from gpulint.engine.report import displayed, findings_of, roles_of, spool, unused_suppressions
from gpulint.engine.summaries import add_autoscalers, in_place, kept_context, split
from gpulint.engine.variants import Variants, one_per_object
from gpulint.findings import CheckedObject, Finding
from gpulint.loader import Input, Inputs, LoadResult, RenderedInput
from gpulint.model import Workload
from gpulint.suppressions import SuppressionTracker

if TYPE_CHECKING:
    from gpulint.admission import Admission
    from gpulint.engine.cache import ResultCache
    from gpulint.engine.record import Run
    from gpulint.live.verdict import ServerRejection
    from gpulint.replicas import Autoscaler
    from gpulint.rules import Rule
    from gpulint.rules.base import CheckContext, KeptSummary
    from gpulint.scheduling import Placement
    from gpulint.spool import FindingSpool


class Gathered:
    """What the per-file phase leaves for the corpus-wide phase and the report."""

    # A plain class: one instance per run, filled in place (a dataclass costs more to define).
    def __init__(self, findings: list[Finding] | FindingSpool) -> None:
        self.findings = findings
        self.late: list[Finding] = []  # anywhere in the report
        self.checked: list[CheckedObject] = []
        # Per corpus-wide rule, in file order; a summary stands for a context file's.
        self.kept: dict[str, list[Workload | KeptSummary]] = {}
        # One autoscaler of a target counts (replicas.autoscaler_for), so only it is kept.
        self.scalers: dict[tuple[str | None, str, str], Autoscaler] = {}
        self.tracker = SuppressionTracker()
        self.files = 0
        self.objects = 0
        self.unchecked = 0  # objects that request accelerators gpulint did not check (GPU007)
        self.placements: dict[int, Placement] = {}  # of kept templates
        self.admissions: dict[int, Admission] = {}  # of kept templates
        # The kept workloads by object, to keep one of identical copies (context files too).
        self.variants: Variants | None = None
        # The whole outcome of a context file whose kept workloads a summary stands for.
        self.read_whole: Callable[[KeptSummary], FileOutcome] | None = None

    def add_autoscalers(self, outcome: FileOutcome) -> None:
        """Keep the autoscaler that scales each target among the file's (the first, unless a
        later one outranks it)."""
        add_autoscalers(self.scalers, outcome.autoscalers)

    def add_kept(
        self, outcome: FileOutcome, variants: Variants | None = None, only: str | None = None
    ) -> list[Workload]:
        """Keep the workloads the file gave each corpus-wide rule (`only`: that one's, which
        are returned rather than kept), the verdicts on their templates, and its summaries;
        with `variants`, not those that repeat one kept already."""
        kept: dict[int, Workload] = {}
        for code, workloads in outcome.kept.items():
            if only is not None and code != only:
                continue
            for workload in workloads:
                if variants is None or not variants.repeats(code, workload):
                    if only is None:
                        self.kept[code].append(workload)
                    kept[id(workload)] = workload
        if only is None:
            for code, summary in outcome.summaries:
                self.kept[code].append(summary)
        if outcome.placements:
            self._add_placements(outcome, kept.values())
        return list(kept.values())

    def expanded(self, summary: KeptSummary, code: str) -> list[Workload]:
        """The workloads `summary` stands for, with the verdicts on their templates."""
        assert self.read_whole is not None, "a summary comes from a run that reads it whole"
        return self.add_kept(self.read_whole(summary), only=code)

    def expander(self, plan: FilePlan, code: str) -> Callable[[KeptSummary], CheckContext]:
        """What gives a check of rule `code` the context of a summarized file alone."""
        read_whole = self.read_whole
        assert read_whole is not None, "a summary comes from a run that reads it whole"
        return lambda summary: kept_context(plan, read_whole(summary), code)

    def _add_placements(self, outcome: FileOutcome, kept: Iterable[Workload]) -> None:
        # By id() of templates kept for the whole run: a dropped one's id may be reused.
        templates = {id(t) for w in kept for t in w.templates}
        for template, verdict, admission in outcome.placements:
            if id(template) in templates:
                self.placements[id(template)] = verdict
                if admission is not None:
                    self.admissions[id(template)] = admission


def check_every_file(plan: FilePlan, inputs: Inputs, run: Run) -> Gathered:
    """Load and check each file in turn, keeping only what outlives it."""
    return check_every_file_in((plan,), (inputs,), (run,))[0]


def check_every_file_in(
    plans: Sequence[FilePlan], inputs: Sequence[Inputs], runs: Sequence[Run]
) -> list[Gathered]:
    """check_every_file() for runs against different profiles (one plan, inputs and run
    each), whose plans agree on all but their profiles: each file loaded once for the runs
    that read it, and each rule run once for the plans it gives the same findings in
    (`files.lanes_of`). Runs given the same `Inputs` read every file together."""
    all_gathered = [_gathered(*lane) for lane in zip(plans, runs, inputs, strict=True)]
    caches = [_result_cache(plan, found.files) for plan, found in zip(plans, inputs, strict=True)]
    for lanes, items in shared_inputs(inputs, runs[0].jobs > 1):
        shared = lanes_of([plans[lane] for lane in lanes])
        caught = [caches[lane] for lane in lanes]
        for outcomes in check_files(shared, items, runs[0].jobs, caught):
            for lane, outcome in zip(lanes, outcomes, strict=True):
                _add_outcome(all_gathered[lane], outcome, plans[lane], runs[lane])
    return all_gathered


def _result_cache(plan: FilePlan, files: int) -> ResultCache | None:
    """gpulint.engine.cache.result_cache(plan, files), without importing that module (and the
    C pickler it reads entries with) for a run it would not cache: a pre-commit run of a file
    or two."""
    if plan.cache_directory is None or files < CACHE_MIN_FILES:
        return None
    from gpulint.engine.cache import result_cache

    return result_cache(plan, files)


def shared_inputs(
    inputs: Sequence[Inputs], sized: bool = False
) -> Iterator[tuple[tuple[int, ...], Inputs | Listed]]:
    """The inputs of several runs (by index, `lanes`), in runs of consecutive inputs that the
    same runs read, in report order: each run's inputs come in its own order. `sized`: the
    runs are sized for `pool.worth_processes` (a file's size is then looked up)."""
    if all(found is inputs[0] for found in inputs):
        yield tuple(range(len(inputs))), inputs[0]
        return
    streams = [_named(found, lane) for lane, found in enumerate(inputs)]
    pending: tuple[int, ...] = ()
    items: list[Input] = []
    size = 0
    for lanes, item in _alike(heapq.merge(*streams, key=lambda entry: entry[0])):
        if lanes != pending and items:
            yield pending, Listed(items, size)
            items, size = [], 0
        pending = lanes
        items.append(item)
        size += _size(item) if sized else 0
    if items:
        yield pending, Listed(items, size)


def _named(inputs: Inputs, lane: int) -> Iterator[tuple[str, int, Input]]:
    """Each input with the name that orders it, and the run (lane) reading it."""
    for item in inputs:
        yield inputs.report_name(item), lane, item


def _alike(
    merged: Iterable[tuple[str, int, Input]],
) -> Iterator[tuple[tuple[int, ...], Input]]:
    """Each input of the merged streams once, with the runs (lanes) that read it alike."""
    for _, entries in groupby(merged, key=lambda entry: entry[0]):
        found: list[tuple[object, list[int], Input]] = []  # (what it reads, lanes, input)
        last: dict[int, int] = {}  # the last of `found` each lane is in: its order is kept
        for _, lane, item in entries:
            read = what_is_read(item)
            at = next(
                (
                    n
                    for n, (other, lanes, _) in enumerate(found)
                    if n > last.get(lane, -1) and lane not in lanes and other == read
                ),
                None,
            )
            if at is None:
                at = len(found)
                found.append((read, [], item))
            found[at][1].append(lane)
            last[lane] = at
        for _, lanes, item in found:
            yield tuple(lanes), item


def what_is_read(item: Input) -> object:
    """What checking `item` reads: a render's name, bytes and how its findings are traced
    back, but not the time budget its cluster's renders shared (`RenderRun`)."""
    if not isinstance(item, RenderedInput) or getattr(item.origin, "run", None) is None:
        return item
    return item._replace(origin=replace(item.origin, run=None))


def _size(item: Input) -> int:
    if not isinstance(item, str):
        return len(item[1])
    try:
        return os.stat(item).st_size
    except (OSError, ValueError):
        return 0


def _gathered(plan: FilePlan, run: Run, inputs: Inputs) -> Gathered:
    gathered = Gathered([] if not run.spool_findings else spool())
    gathered.kept = {r.code: [] for r in plan.corpus_wide}
    gathered.variants = Variants(plan.context(LoadResult((), (), ())).namespace_of, inputs.renders)
    return gathered


def _add_outcome(gathered: Gathered, outcome: FileOutcome, plan: FilePlan, run: Run) -> None:
    """Keep what outlives one checked file."""
    gathered.files += outcome.files
    gathered.objects += outcome.objects
    gathered.unchecked += outcome.unchecked
    # A render's findings point into the files it was rendered from: anywhere in the report.
    findings = [f for f in outcome.findings if f.rendered is None]
    gathered.findings.extend(displayed(findings, run))
    gathered.late.extend(f for f in outcome.findings if f.rendered is not None)
    if run.root is None:
        gathered.checked.extend(outcome.checked)
    else:
        gathered.checked.extend(c._replace(path=run.display(c.path)) for c in outcome.checked)
    gathered.add_autoscalers(outcome)
    # A file's suppression markers matter once it is checked only to corpus-wide findings and
    # to the report of markers that suppressed nothing.
    if plan.corpus_wide or plan.unused_rule is not None:
        gathered.tracker.merge(outcome.tracker)
    gathered.add_kept(outcome, gathered.variants)


def corpus_findings(
    plan: FilePlan,
    gathered: Gathered,
    rejections: tuple[ServerRejection, ...],
    selected: Sequence[Rule],
    given: frozenset[str] | None = None,
    bases: Mapping[str, frozenset[str]] | None = None,
    elsewhere: frozenset[str] = frozenset(),
) -> list[Finding]:
    """The corpus-wide rules' findings over what the files kept, then unused suppressions.

    `given`: the files of a run with `context:`; only findings that involve them are kept.
    Each object is counted once (`gpulint.engine.variants`): `bases` names the renders
    built on each kustomize base of the run. `elsewhere`: files another config's run checks;
    findings in them are that run's to report.
    """
    found: list[Finding] = []
    namespace_of = plan.context(LoadResult((), (), ())).namespace_of
    for rule in (r for r in plan.corpus_wide if r.summarizes):
        gathered.kept[rule.code] = in_place(
            gathered.kept[rule.code],
            namespace_of,
            gathered.scalers,
            lambda summary, code=rule.code: gathered.expanded(summary, code),
        )
    everything_kept = {
        id(w): w for kept in gathered.kept.values() for w in kept if isinstance(w, Workload)
    }.values()
    roles = roles_of(everything_kept)
    for rule in plan.corpus_wide:
        ordered = one_per_object(
            gathered.kept[rule.code], namespace_of, gathered.scalers, bases or {}
        )
        kept, summaries = split(ordered)
        context = plan.context(
            LoadResult((), plan.knowledge, ()),
            kept,
            rejections=rejections,
            all_autoscalers=tuple(gathered.scalers.values()),
            placements=gathered.placements,
            admissions=gathered.admissions,
            given=given,
            summaries=summaries,
            expand=gathered.expander(plan, rule.code) if summaries else None,
        )
        found.extend(
            findings_of(rule, context, roles, plan.config, gathered.tracker, given, elsewhere)
        )
    if plan.unused_rule is not None:
        unused = unused_suppressions(plan.unused_rule, gathered.tracker, selected, plan.config)
        found.extend(f for f in unused if given is None or f.path in given)
    return found
