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
from gpulint.suppressions import SuppressionTracker
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.engine.plan import FilePlan
    from gpulint.model import PodTemplate, Workload
    from gpulint.replicas import Autoscaler
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
    tracker: SuppressionTracker  # the file's suppression markers, and which were used
    unchecked: int = 0  # objects that request accelerators gpulint did not check (GPU007)
    # The placement verdicts already computed on the kept workloads' templates, so the
    # corpus-wide checks do not compute them again (sent with them from a worker process).
    placements: tuple[tuple[PodTemplate, Placement], ...] = ()


def check_file(plan: FilePlan, item: Input) -> FileOutcome:
    """Load one input, run the per-document rules on it, keep what corpus-wide rules need."""
    loaded = load_input(item, plan.config.variables, plan.config.workloads)
    workloads = loaded.workloads
    context = plan.context(loaded, workloads)
    tracker = SuppressionTracker(loaded.documents, workloads)
    roles = roles_of(workloads)
    # A rule that cannot find anything in this file's kinds is not run, so a run that has
    # nothing for it never imports its module.
    kinds = plan.knowledge_kinds.union(d.ref.kind for d in loaded.documents)
    profile_kinds = plan.profile.object_kinds if plan.profile is not None else ()
    findings = sorted(
        (
            finding
            for rule in plan.per_document
            if rule.has_work(kinds, profile_kinds)
            for finding in findings_of(rule, context, roles, plan.config, tracker)
        ),
        key=sort_key,
    )
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
    checked = loaded.documents if plan.keep_checked else ()
    kept_workloads = {id(w): w for found in kept.values() for w in found}.values()
    return FileOutcome(
        len(loaded.files),
        len(loaded.documents),
        tuple(findings),
        tuple(CheckedObject(d.file.path, d.ref, d.source) for d in checked),
        kept,
        # Kept only for the corpus-wide rules that count pods; a plain check needs none.
        context.autoscalers if plan.corpus_wide else (),
        tracker,
        sum(1 for found in context.unchecked if found.requests_accelerators),
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
        message = f"not rendered, so not checked: {item.origin.message}"
        return LoadResult(
            (source,), (), (LoadIssue(IssueKind.NOT_RENDERED, source, (1, 1), message),)
        )
    return load_bytes(item[0], item[1], variables, shapes)
