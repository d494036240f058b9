"""The library entry point: `lint(paths, config, profile) -> LintResult`.

Files are checked one at a time, so memory does not grow with the number of files:

1. A byte scan picks the files that may hold knowledge objects (PriorityClass, ResourceQuota,
   LimitRange): they are few and small, decide verdicts on objects in other files, and are
   read first and kept for the whole run.
2. Each file is loaded, its workloads typed, and every per-document rule run on it (see
   `gpulint.rules.base`); suppressions are applied, its findings kept, and of its objects only
   what corpus-wide rules asked for (a few workloads, its HPAs without their trees) outlives
   the file. With `jobs` > 1 and enough input, worker processes do this step, in input order.
3. The corpus-wide rules run once over what was kept; then unused suppressions are reported.

HorizontalPodAutoscalers are many (one per scaled Deployment) and may sit in any file, so they
are not read first: the rules that need peak replica counts (GPU106, GPU201, GPU301) are
corpus-wide instead. Reading every HPA-bearing file twice would cost a third more parsing on
a typical chart repository.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gpulint.config import Config
from gpulint.findings import CheckedObject, Finding, LintResult
from gpulint.loader import (
    STDIN,
    Input,
    Inputs,
    LoadResult,
    RenderedInput,
    collection_paused,
    discover,
    load_bytes,
    load_path,
    read_bytes,
)
from gpulint.rules import UNUSED_SUPPRESSION, Rule, registry
from gpulint.rules.base import CheckContext, Problem
from gpulint.suppressions import SuppressionTracker
from gpulint.workloads import WorkloadShape, role_at, workload_of

if TYPE_CHECKING:
    from gpulint.live.verdict import DryRun
    from gpulint.model import Document, Workload
    from gpulint.profile.model import ClusterProfile
    from gpulint.render.options import RenderOptions
    from gpulint.replicas import Autoscaler
    from gpulint.spool import FindingSpool

#: The rule that reports what a server-side dry-run refused.
SERVER_REJECTED = "GPU900"
#: Kinds whose objects decide verdicts on objects in other files, read before the others.
KNOWLEDGE_KINDS = frozenset({"PriorityClass", "ResourceQuota", "LimitRange"})
_KNOWLEDGE_BYTES = re.compile(b"|".join(k.encode() for k in sorted(KNOWLEDGE_KINDS)))
#: Below this much input a process pool costs more to start than it saves.
PARALLEL_MIN_BYTES = 4 << 20
PARALLEL_MIN_FILES = 8


def available_cpus() -> int:
    """CPUs this process may run on (the default for `jobs`)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@collection_paused()
def lint(
    paths: Sequence[str],
    config: Config | None = None,
    profile: ClusterProfile | None = None,
    *,
    stdin: tuple[str, bytes] | None = None,
    namespace: str | None = None,
    dry_run: DryRun | None = None,
    jobs: int = 1,
    keep_checked: bool = True,
    spool_findings: bool = False,
    rules: Sequence[Rule] | None = None,
    overlay: Mapping[str, bytes] | None = None,
    render: RenderOptions | None = None,
    allow_empty: bool = True,
) -> LintResult:
    """Check the manifests under `paths` (and `stdin` as (name, bytes)); return the findings.

    `-` among `paths` stands for `stdin`; `namespace` is the one assumed for objects that name
    none. `dry_run` (live mode) sends the objects to the API server before the rules run, so
    GPU900 can report what it refused. `jobs` > 1 checks files in that many processes when the
    input is large enough to pay for them; the result is the same. `keep_checked=False` leaves
    `LintResult.checked` empty (only the JUnit report lists every object; on a large corpus the
    list is most of what a run keeps). `spool_findings=True` keeps the findings in a temporary
    file (`LintResult.findings` is then a FindingSpool: iterable, not indexable), so a run's
    memory does not grow with its findings. `rules` replaces the catalogue's rules (a
    catalogue of one's own, see `gpulint.catalogue.read_records`). `overlay` maps input
    names to the bytes to check instead of theirs (fixes not yet written). `render` says
    how charts and overlays among the inputs are rendered (gpulint.render); their findings
    point at the files the author edits. Raises GpulintError for a missing or unreadable
    path, a chart or overlay that cannot be rendered, and (with `allow_empty` False) stdin
    or a render without any Kubernetes object.
    """
    config = config or Config()
    # Checked in report order (findings are reported by path), so each file's findings can be
    # written out as soon as the file is checked.
    inputs = discover(
        [p for p in paths if p != STDIN],
        config.is_excluded,
        stdin if STDIN in paths else None,
        overlay,
        render,
        allow_empty,
    )
    candidates = registry() if rules is None else rules
    rules = [r for r in candidates if config.is_selected(r.code, r.enabled)]
    skipped = [r for r in rules if r.needs_profile and profile is None]
    active = [r for r in rules if r.check is not None and r not in skipped]
    if dry_run is None:  # only a server's dry-run gives GPU900 anything to report
        active = [r for r in active if r.code != SERVER_REJECTED]
    knowledge = knowledge_documents(inputs)
    known_kinds = frozenset(d.ref.kind for d in knowledge)
    plan = FilePlan(
        config,
        profile,
        namespace,
        tuple(r for r in active if not r.corpus_wide),
        # Whether a corpus-wide rule has work is known before any file is checked: it judges
        # workloads against knowledge objects or the profile, never against one file's kinds.
        tuple(r for r in active if r.corpus_wide and r.has_work(known_kinds, profile is not None)),
        knowledge,
        known_kinds,
        keep_checked,
    )
    rejections = ()
    if dry_run is not None and any(r.code == SERVER_REJECTED for r in active):
        # The server judges objects against the namespaces the same manifests create, so it
        # gets every object at once; live mode checks a handful of files.
        everything = LoadResult.merged([_load(item) for item in inputs])
        rejections = tuple(dry_run(everything.documents, plan.context(everything).namespace_of))
        del everything

    tracker = SuppressionTracker()
    unused_rule = (
        next((r for r in rules if r.code == UNUSED_SUPPRESSION), None)
        if config.report_unused_ignores
        else None
    )
    # A file's suppression markers matter once it is checked only to corpus-wide findings and
    # to the report of markers that suppressed nothing.
    keep_markers = bool(plan.corpus_wide) or unused_rule is not None
    findings: list[Finding] | FindingSpool = [] if not spool_findings else _spool()
    checked: list[CheckedObject] = []
    kept: dict[str, list[Workload]] = {r.code: [] for r in plan.corpus_wide}
    # Only the first HPA of a target counts (replicas.autoscaler_for), so only it is kept.
    scalers: dict[tuple[str | None, str, str], Autoscaler] = {}
    file_count = object_count = unchecked = 0
    late: list[Finding] = []  # found after every file was checked: anywhere in the report
    for outcome in _check_files(plan, inputs, jobs):
        file_count += outcome.files
        object_count += outcome.objects
        unchecked += outcome.unchecked
        # A render's findings point into the files it was rendered from: anywhere in the report.
        findings.extend(f for f in outcome.findings if f.rendered is None)
        late.extend(f for f in outcome.findings if f.rendered is not None)
        checked.extend(outcome.checked)
        for scaler in outcome.autoscalers:
            target = (scaler.document.ref.namespace, scaler.target_kind, scaler.target_name)
            scalers.setdefault(target, scaler)
        if keep_markers:
            tracker.merge(outcome.tracker)
        for code, workloads in outcome.kept.items():
            kept[code].extend(workloads)

    everything_kept = {id(w): w for found in kept.values() for w in found}.values()
    roles = _roles(everything_kept)
    for rule in plan.corpus_wide:
        context = replace(
            plan.context(LoadResult((), plan.knowledge, ()), tuple(kept[rule.code])),
            rejections=rejections,
            all_autoscalers=tuple(scalers.values()),
        )
        late.extend(_findings(rule, context, roles, config, tracker))
    if unused_rule is not None:
        late.extend(_unused_suppressions(unused_rule, tracker, rules, config))
    if inputs.renders:
        late = _located(late, inputs.renders)

    notes = []
    if skipped:
        notes.append(
            f"{len(skipped)} cluster-profile rules skipped: no --profile given "
            f"({', '.join(r.code for r in skipped)})"
        )
    return LintResult(
        findings=_in_report_order(findings, late),
        files=file_count,
        objects=object_count,
        notes=tuple(notes),
        checked=tuple(checked),
        unchecked=unchecked,
    )


class FilePlan(NamedTuple):
    """What checking one file needs; sent to each worker process once per batch of files."""

    config: Config
    profile: ClusterProfile | None
    namespace: str | None
    per_document: tuple[Rule, ...]
    corpus_wide: tuple[Rule, ...]
    knowledge: tuple[Document, ...]
    knowledge_kinds: frozenset[str] = frozenset()
    keep_checked: bool = True

    def context(self, loaded: LoadResult, workloads: tuple[Workload, ...] = ()) -> CheckContext:
        """A context for `loaded` and its `workloads`, with the profile and knowledge objects."""
        return CheckContext(
            loaded, workloads, self.profile, self.namespace, knowledge=self.knowledge
        )


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


def knowledge_documents(inputs: Iterable[Input]) -> tuple[Document, ...]:
    """The PriorityClasses, ResourceQuotas and LimitRanges among the inputs, in input order.

    Only files whose bytes name one of those kinds are parsed here (and again when checked).
    """
    found: list[Document] = []
    for item in inputs:
        name, data = (item, read_bytes(Path(item))) if isinstance(item, str) else item[:2]
        if isinstance(data, OSError) or not _KNOWLEDGE_BYTES.search(data):
            continue
        loaded = load_bytes(name, data)
        found.extend(d for d in loaded.documents if d.ref.kind in KNOWLEDGE_KINDS)
    return tuple(found)


def _check_files(plan: FilePlan, inputs: Inputs, jobs: int) -> Iterator[FileOutcome]:
    """Every input's outcome, in input order; in `jobs` processes when that pays."""
    if jobs <= 1 or not _worth_processes(inputs, jobs):
        yield from (check_file(plan, item) for item in inputs)
        return
    # Imported here: a pre-commit run on a few files never starts a process.
    from concurrent.futures import Future, ProcessPoolExecutor

    size = max(1, min(64, len(inputs) // (jobs * 8)))
    items = iter(inputs)
    # Two batches per worker in flight: the inputs are walked as the workers take them, and
    # neither they nor the outcomes queue up whole (Executor.map would submit every batch).
    in_flight: deque[Future[list[FileOutcome]]] = deque()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        while batch := list(islice(items, size)):
            in_flight.append(pool.submit(_check_batch, plan, batch))
            if len(in_flight) >= 2 * jobs:
                yield from in_flight.popleft().result()
        while in_flight:
            yield from in_flight.popleft().result()


def _worth_processes(inputs: Inputs, jobs: int) -> bool:
    """Enough input that worker processes save more than they cost to start and feed."""
    return inputs.files >= max(PARALLEL_MIN_FILES, 2 * jobs) and inputs.size >= PARALLEL_MIN_BYTES


@collection_paused()
def _check_batch(plan: FilePlan, batch: list[Input]) -> list[FileOutcome]:
    return [check_file(plan, item) for item in batch]


def check_file(plan: FilePlan, item: Input) -> FileOutcome:
    """Load one input, run the per-document rules on it, keep what corpus-wide rules need."""
    loaded = _load(item)
    shapes: tuple[WorkloadShape, ...] = plan.config.workloads
    workloads = tuple(w for d in loaded.documents if (w := workload_of(d, shapes)) is not None)
    context = plan.context(loaded, workloads)
    tracker = SuppressionTracker(loaded.documents, workloads)
    roles = _roles(workloads)
    # A rule that cannot find anything in this file's kinds is not run, so a run that has
    # nothing for it never imports its module.
    kinds = plan.knowledge_kinds.union(d.ref.kind for d in loaded.documents)
    profile_given = plan.profile is not None
    findings = sorted(
        (
            finding
            for rule in plan.per_document
            if rule.has_work(kinds, profile_given)
            for finding in _findings(rule, context, roles, plan.config, tracker)
        ),
        key=_sort_key,
    )
    if isinstance(item, RenderedInput):
        located = item.origin.locate(findings, item.data.decode("utf-8"))
        findings = sorted(located, key=_sort_key)
    kept = {}
    for rule in plan.corpus_wide:
        keeps = rule.keeps_function()
        kept[rule.code] = tuple(keeps(context)) if keeps is not None else ()
    checked = loaded.documents if plan.keep_checked else ()
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
    )


def _located(findings: list[Finding], renders: dict[str, RenderedInput]) -> list[Finding]:
    """`findings` with those still at a position of a render moved to the files it came from."""
    out = [f for f in findings if f.rendered is not None or f.path not in renders]
    by_render: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.rendered is None and finding.path in renders:
            by_render.setdefault(finding.path, []).append(finding)
    for name, found in by_render.items():
        item = renders[name]
        out.extend(item.origin.locate(found, item.data.decode("utf-8")))
    return out


def _sort_key(finding: Finding) -> tuple[str, int, int, str]:
    return finding.sort_key


def _spool() -> FindingSpool:
    from gpulint.spool import FindingSpool  # only runs that spool

    return FindingSpool()


def _in_report_order(
    per_file: list[Finding] | FindingSpool, late: list[Finding]
) -> tuple[Finding, ...] | FindingSpool:
    """Every finding in report order: per-file findings came in it, `late` ones in any."""
    if isinstance(per_file, list):
        return tuple(sorted([*per_file, *late], key=_sort_key))
    per_file.add_late(late)
    return per_file


def _load(item: Input) -> LoadResult:
    return load_path(Path(item)) if isinstance(item, str) else load_bytes(item[0], item[1])


def _roles(workloads: Iterable[Workload]) -> dict[int, Workload]:
    return {id(w.document): w for w in workloads if any(t.role for t in w.templates)}


def _findings(
    rule: Rule,
    context: CheckContext,
    roles: dict[int, Workload],
    config: Config,
    tracker: SuppressionTracker,
) -> Iterator[Finding]:
    for problem in rule.check_function()(context):
        if not _dropped(problem, rule, config, tracker):
            yield _finding(rule, _name_role(problem, roles), config)


def _name_role(problem: Problem, roles: dict[int, Workload]) -> Problem:
    """Prefix `PyTorchJob/llama-ft Worker: ` when the finding sits inside one role of a CRD.

    Rules speak of "this pod"; in a workload with several pod templates the reader needs to
    know which one. Messages that already name the workload are left as they are.
    """
    document = problem.document
    workload = roles.get(id(document)) if document is not None else None
    if workload is None or f"{workload.kind}/" in problem.message:
        return problem
    role = role_at(workload, problem.pos)
    if role is None:
        return problem
    ref = workload.document.ref
    return problem._replace(message=f"{ref.kind}/{ref.name} {role}: {problem.message}")


def _dropped(problem: Problem, rule: Rule, config: Config, tracker: SuppressionTracker) -> bool:
    code = rule.code
    if config.ignored_in_file(problem.file.path, code):
        return True
    if problem.document is not None and config.ignored_object(problem.document.ref, code):
        return True
    return tracker.suppresses(problem.file, problem.pos[0], problem.document, code)


def _finding(rule: Rule, problem: Problem, config: Config) -> Finding:
    document = problem.document
    # Rendered Helm output is fixed in its templates or values, never in place.
    rendered = document is not None and document.source is not None
    edits = problem.edits if rule.autofix and not rendered else ()
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=config.severity.get(rule.code, problem.severity or rule.severity),
        path=problem.file.path,
        line=problem.pos[0],
        column=problem.pos[1],
        message=problem.message,
        fix=problem.fix if problem.fix is not None else rule.fix,
        object=document.ref if document is not None else None,
        source=document.source if document is not None else None,
        edits=edits,
        applicability=rule.autofix if edits else None,
    )


def _unused_suppressions(
    rule: Rule, tracker: SuppressionTracker, rules: Sequence[Rule], config: Config
) -> list[Finding]:
    enabled = {r.code for r in rules}
    findings = []
    for marker, codes in tracker.unused():
        # A suppression of a rule that did not run cannot be judged.
        live = [c for c in codes if any(code.startswith(c) for code in enabled)]
        if marker.codes and not live:
            continue
        what = f"no {', '.join(live)} finding" if live else "nothing"
        if config.ignored_in_file(marker.file.path, rule.code):
            continue
        problem = Problem(
            marker.file,
            marker.pos,
            f"unused suppression ({marker.kind}): {what} here to suppress",
        )
        findings.append(_finding(rule, problem, config))
    return findings
