"""The per-file pass: load one input, run the per-document rules on it, and keep the little
that the corpus-wide rules need of it (the rest of its tree is dropped with it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpulint.engine.report import findings_of, invalid_suppressions, roles_of, sort_key
from gpulint.findings import CheckedObject, Finding
from gpulint.loader import Input, LoadResult, RenderedInput, load_bytes, load_path
from gpulint.model import IssueKind, LoadIssue, SourceFile
from gpulint.render.rendered import RenderFailure
from gpulint.suppressions import SharedTrackers, SuppressionTracker
from gpulint.views import NamedTuple
from gpulint.workloads import with_server_configs, with_training_runtimes

if TYPE_CHECKING:
    from gpulint.admission import Admission
    from gpulint.engine.plan import FilePlan
    from gpulint.model import PodTemplate, Workload
    from gpulint.profile.model import ClusterProfile
    from gpulint.replicas import Autoscaler
    from gpulint.rules import Rule
    from gpulint.rules.base import CheckContext, KeptSummary
    from gpulint.scheduling import Placement
    from gpulint.shapes import WorkloadShape


class FileOutcome(NamedTuple):
    """What outlives one checked file: findings, and the little corpus-wide rules need."""

    files: int
    objects: int
    findings: tuple[Finding, ...]
    checked: tuple[CheckedObject, ...]
    kept: dict[str, tuple[Workload, ...]]  # per corpus-wide rule code, the workloads it needs
    autoscalers: tuple[Autoscaler, ...]
    # The file's suppression markers, and which were used (None: it holds none, as a context
    # file's outcome says: gpulint.engine.summaries.slimmed).
    tracker: SuppressionTracker | None
    unchecked: int = 0  # objects that request accelerators gpulint did not check (GPU007)
    # The placement verdicts already computed on the kept workloads' templates, with the
    # admissions they rest on, so the corpus-wide checks do not compute them again (sent with
    # them from a worker process, kept with them in the results cache).
    placements: tuple[tuple[PodTemplate, Placement, Admission | None], ...] = ()
    # Per corpus-wide rule code, what its `summarizes:` function summed up of the workloads it
    # kept, in place of them (a context file's, read from the results cache: `summarized`).
    summaries: tuple[tuple[str, KeptSummary], ...] = ()


class Lanes(NamedTuple):
    """The plans of several clusters checking the same files (one plan: a plain run), and
    which of them each per-file rule can run for once: those that agree on the fields of
    their profiles it reads (`Rule.profile_fields`)."""

    plans: tuple[FilePlan, ...]
    # Each per-file rule of any plan, with the plans (by index) that run it, grouped by what
    # the rule reads of their profiles: the findings of a group are the same for each.
    shared: tuple[tuple[Rule, tuple[tuple[int, ...], ...]], ...]


def lanes_of(plans: Sequence[FilePlan]) -> Lanes:
    """The lanes of `plans`, which differ in their profiles (and the rules those leave out)
    and agree on everything else; the one place that decides which plans share a rule's
    findings."""
    rules: dict[str, Rule] = {}
    for plan in plans:
        rules.update((rule.code, rule) for rule in plan.per_document)
    shared = []
    for rule in rules.values():
        groups: list[tuple[object, list[int]]] = []
        for lane, plan in enumerate(plans):
            if rule not in plan.per_document:
                continue
            read = _profile_read(rule, plan.profile, lane)
            found = next((g for key, g in groups if key == read), None)
            if found is None:
                groups.append((read, [lane]))
            else:
                found.append(lane)
        shared.append((rule, tuple(tuple(g) for _, g in groups)))
    return Lanes(tuple(plans), tuple(shared))


def _profile_read(rule: Rule, profile: ClusterProfile | None, lane: int) -> object:
    """What `rule` reads of `profile`: equal for two lanes only when its findings are."""
    if rule.profile_fields is None:
        return ("lane", lane)  # the whole profile: never shared
    if profile is None:
        return None
    return ("profile", tuple(getattr(profile, name) for name in rule.profile_fields))


def check_file(plan: FilePlan, item: Input) -> FileOutcome:
    """Load one input, run the per-document rules on it, keep what corpus-wide rules need."""
    return check_file_in(lanes_of((plan,)), item)[0]


def check_file_in(lanes: Lanes, item: Input) -> tuple[FileOutcome, ...]:
    """check_file() for each plan of `lanes`: the input loaded and typed once, each rule run
    once for the plans that agree on what it reads of their profiles."""
    plans = lanes.plans
    first = plans[0]
    loaded = load_input(item, first.config.variables, first.config.workloads)
    # A Seldon Server's pods are its ServerConfig's, of this file or another (knowledge).
    workloads = with_server_configs(loaded.workloads, loaded.documents, first.knowledge)
    # A TrainJob's pod is its training runtime's trainer step, of this file or another.
    workloads = with_training_runtimes(workloads, loaded.documents, first.knowledge)
    contexts = [plan.context(loaded, workloads) for plan in plans]
    trackers = [SuppressionTracker(loaded.documents, workloads)]
    trackers.extend(trackers[0].copy() for _ in plans[1:])
    roles = roles_of(workloads)
    # A rule that cannot find anything in this file's kinds is not run, so a run that has
    # nothing for it never imports its module.
    kinds = first.knowledge_kinds.union(d.ref.kind for d in loaded.documents)
    profile_kinds = [p.profile.object_kinds if p.profile is not None else () for p in plans]
    found: list[list[Finding]] = [[] for _ in plans]
    for rule, groups in lanes.shared:
        for group in groups:
            working = [lane for lane in group if rule.has_work(kinds, profile_kinds[lane])]
            if not working:
                continue
            lane = working[0]
            tracker = (
                trackers[lane]
                if len(working) == 1
                else SharedTrackers([trackers[other] for other in working])
            )
            findings = list(findings_of(rule, contexts[lane], roles, first.config, tracker))
            for other in working:
                found[other].extend(findings)
    # What does not depend on the profile is the same for every plan.
    checked = tuple(
        CheckedObject(d.file.path, d.ref, d.source)
        for d in (loaded.documents if first.keep_checked else ())
    )
    scalers = contexts[0].autoscalers if any(plan.corpus_wide for plan in plans) else ()
    unchecked = sum(1 for scan in contexts[0].unchecked if scan.requests_accelerators)
    return tuple(
        _outcome(plan, item, loaded, context, tracker, findings, checked, scalers, unchecked)
        for plan, context, tracker, findings in zip(plans, contexts, trackers, found, strict=True)
    )


def _outcome(
    plan: FilePlan,
    item: Input,
    loaded: LoadResult,
    context: CheckContext,
    tracker: SuppressionTracker,
    findings: list[Finding],
    checked: tuple[CheckedObject, ...],
    scalers: tuple[Autoscaler, ...],
    unchecked: int,
) -> FileOutcome:
    """One plan's outcome of a file, given the findings its per-file rules gave."""
    # Findings of one code come from one rule, in the order it gave them: sorting by code
    # among equal positions gives the order whatever order the rules ran in.
    findings.sort(key=sort_key)
    if plan.suppression_rule is not None:
        findings.extend(invalid_suppressions(plan.suppression_rule, tracker, plan.config))
        findings.sort(key=sort_key)
    if isinstance(item, RenderedInput):
        located = item.origin.locate(findings, item.data.decode("utf-8"))
        findings = sorted(located, key=sort_key)
    kept = {}
    for rule in plan.corpus_wide:
        keeps = rule.keeps_function()
        kept[rule.code] = tuple(keeps(context)) if keeps is not None else ()
    if plan.place_kept and plan.profile is not None and any(kept.values()):
        context.gpu_placements  # noqa: B018  (computes the verdicts placements_of() returns)
    kept_workloads = {id(w): w for found in kept.values() for w in found}.values()
    return FileOutcome(
        len(loaded.files),
        len(loaded.documents),
        tuple(findings),
        checked,
        kept,
        # Kept only for the corpus-wide rules that count pods; a plain check needs none.
        scalers if plan.corpus_wide else (),
        tracker,
        unchecked,
        context.placements_of(kept_workloads),
    )


def load_input(
    item: Input,
    variables: Mapping[str, str] | None = None,
    shapes: Sequence[WorkloadShape] = (),
) -> LoadResult:
    """One input loaded: a file by its path, stdin or a render from its bytes (a render its
    tool could not make: the reason, as a load issue at its Chart.yaml or kustomization)."""
    if isinstance(item, str):
        return load_path(Path(item), variables, shapes)
    if isinstance(item, RenderedInput) and isinstance(item.origin, RenderFailure):
        source = SourceFile(item.name)
        failure = item.origin
        message = f"not rendered, so not checked: {failure.message}"
        issue = LoadIssue(IssueKind.NOT_RENDERED, source, failure.pos, message, fix=failure.fix)
        return LoadResult((source,), (), (issue,))
    return load_bytes(item[0], item[1], variables, shapes, isinstance(item, RenderedInput))
