"""What the per-file pass leaves for the corpus pass and the report, and the corpus pass: the
corpus-wide rules once over what the files kept, then the suppressions that suppressed
nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from gpulint.engine.files import FileOutcome
from gpulint.engine.plan import FilePlan
from gpulint.engine.pool import check_files
from gpulint.engine.report import displayed, findings_of, roles_of, spool, unused_suppressions
from gpulint.engine.variants import Variants, one_per_object
from gpulint.findings import CheckedObject, Finding
from gpulint.loader import Inputs, LoadResult
from gpulint.suppressions import SuppressionTracker

if TYPE_CHECKING:
    from gpulint.engine.record import Run
    from gpulint.live.verdict import ServerRejection
    from gpulint.model import Workload
    from gpulint.replicas import Autoscaler
    from gpulint.rules import Rule
    from gpulint.scheduling import Placement
    from gpulint.spool import FindingSpool


class Gathered:
    """What the per-file phase leaves for the corpus-wide phase and the report."""

    # A plain class: one instance per run, filled in place (a dataclass costs more to define).
    def __init__(self, findings: list[Finding] | FindingSpool) -> None:
        self.findings = findings
        self.late: list[Finding] = []  # anywhere in the report
        self.checked: list[CheckedObject] = []
        self.kept: dict[str, list[Workload]] = {}
        # Only the first HPA of a target counts (replicas.autoscaler_for), so only it is kept.
        self.scalers: dict[tuple[str | None, str, str], Autoscaler] = {}
        self.tracker = SuppressionTracker()
        self.files = 0
        self.objects = 0
        self.unchecked = 0  # objects that request accelerators gpulint did not check (GPU007)
        self.placements: dict[int, Placement] = {}  # of kept templates
        # The kept workloads by object, to keep one of identical copies (context files too).
        self.variants: Variants | None = None

    def add_autoscalers(self, outcome: FileOutcome) -> None:
        """Keep the first HPA of each target among the file's."""
        for scaler in outcome.autoscalers:
            target = (scaler.document.ref.namespace, scaler.target_kind, scaler.target_name)
            self.scalers.setdefault(target, scaler)

    def add_kept(self, outcome: FileOutcome, variants: Variants | None = None) -> None:
        """Keep the workloads the file gave each corpus-wide rule, and the verdicts on their
        templates; with `variants`, not those that repeat one kept already."""
        kept: dict[int, Workload] = {}
        for code, workloads in outcome.kept.items():
            for workload in workloads:
                if variants is None or not variants.repeats(code, workload):
                    self.kept[code].append(workload)
                    kept[id(workload)] = workload
        if not outcome.placements:
            return
        # By id() of templates kept for the whole run: a dropped one's id may be reused.
        templates = {id(t) for w in kept.values() for t in w.templates}
        self.placements.update(
            (id(t), verdict) for t, verdict in outcome.placements if id(t) in templates
        )


def check_every_file(plan: FilePlan, inputs: Inputs, run: Run) -> Gathered:
    """Load and check each file in turn, keeping only what outlives it."""
    gathered = Gathered([] if not run.spool_findings else spool())
    gathered.kept = {r.code: [] for r in plan.corpus_wide}
    # A file's suppression markers matter once it is checked only to corpus-wide findings and
    # to the report of markers that suppressed nothing.
    keep_markers = bool(plan.corpus_wide) or plan.unused_rule is not None
    from gpulint.engine.cache import result_cache

    cache = result_cache(plan, inputs.files)
    variants = Variants(plan.context(LoadResult((), (), ())).namespace_of, inputs.renders)
    gathered.variants = variants
    for outcome in check_files(plan, inputs, run.jobs, cache):
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
        if keep_markers:
            gathered.tracker.merge(outcome.tracker)
        gathered.add_kept(outcome, variants)
    return gathered


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
    everything_kept = {id(w): w for kept in gathered.kept.values() for w in kept}.values()
    roles = roles_of(everything_kept)
    for rule in plan.corpus_wide:
        namespace_of = plan.context(LoadResult((), (), ())).namespace_of
        kept = one_per_object(gathered.kept[rule.code], namespace_of, gathered.scalers, bases or {})
        context = plan.context(
            LoadResult((), plan.knowledge, ()),
            kept,
            rejections=rejections,
            all_autoscalers=tuple(gathered.scalers.values()),
            placements=gathered.placements,
        )
        found.extend(
            findings_of(rule, context, roles, plan.config, gathered.tracker, given, elsewhere)
        )
    if plan.unused_rule is not None:
        unused = unused_suppressions(plan.unused_rule, gathered.tracker, selected, plan.config)
        found.extend(f for f in unused if given is None or f.path in given)
    return found
