"""The library entry point: `lint(paths, config, profile) -> LintResult`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpulint.config import Config
from gpulint.findings import CheckedObject, Finding, LintResult
from gpulint.loader import STDIN, collection_paused, discover, load
from gpulint.model import Workload
from gpulint.rules import UNUSED_SUPPRESSION, Rule, build_registry
from gpulint.rules.base import CheckContext, Problem
from gpulint.suppressions import SuppressionTracker
from gpulint.workloads import WorkloadShape, role_at, workload_of

if TYPE_CHECKING:
    from gpulint.live.verdict import DryRun
    from gpulint.profile.model import ClusterProfile

#: The rule that reports what a server-side dry-run refused.
SERVER_REJECTED = "GPU900"


@collection_paused()
def lint(
    paths: Sequence[str],
    config: Config | None = None,
    profile: ClusterProfile | None = None,
    *,
    stdin: tuple[str, bytes] | None = None,
    namespace: str | None = None,
    dry_run: DryRun | None = None,
) -> LintResult:
    """Check the manifests under `paths` (and `stdin` as (name, bytes)); return the findings.

    `-` among `paths` stands for `stdin`; `namespace` is the one assumed for objects that name
    none. `dry_run` (live mode) sends the objects to the API server before the rules run, so
    GPU900 can report what it refused. Raises GpulintError for a missing or unreadable path.
    """
    config = config or Config()
    files = discover([p for p in paths if p != STDIN], config.is_excluded)
    loaded = load(files, stdin if STDIN in paths else None)
    shapes: tuple[WorkloadShape, ...] = config.workloads
    workloads = tuple(w for d in loaded.documents if (w := workload_of(d, shapes)) is not None)
    roles = {id(w.document): w for w in workloads if any(t.role for t in w.templates)}
    context = CheckContext(loaded, workloads, profile, namespace)
    rules = [r for r in build_registry() if config.is_selected(r.code, r.enabled)]
    skipped = [r for r in rules if r.needs_profile and profile is None]
    if dry_run is not None and any(r.code == SERVER_REJECTED for r in rules):
        rejections = dry_run(loaded.documents, context.namespace_of)
        context = replace(context, rejections=tuple(rejections))
    tracker = SuppressionTracker(loaded.documents, workloads)
    kinds = {d.ref.kind for d in loaded.documents}

    findings: list[Finding] = []
    for rule in rules:
        # Asking a rule for its check imports the rule's module: only for rules that can run.
        runs = rule not in skipped and rule.has_work(kinds, profile is not None)
        check = rule.check if runs else None
        if check is None:
            continue
        for problem in check(context):
            if _dropped(problem, rule, config, tracker):
                continue
            findings.append(_finding(rule, _name_role(problem, roles), config))
    unused_rule = next((r for r in rules if r.code == UNUSED_SUPPRESSION), None)
    if config.report_unused_ignores and unused_rule is not None:
        findings.extend(_unused_suppressions(unused_rule, tracker, rules, config))

    notes = []
    if skipped:
        notes.append(
            f"{len(skipped)} cluster-profile rules skipped: no --profile given "
            f"({', '.join(r.code for r in skipped)})"
        )
    return LintResult(
        findings=tuple(sorted(findings, key=lambda f: f.sort_key)),
        files=len(loaded.files),
        objects=len(loaded.documents),
        notes=tuple(notes),
        checked=tuple(CheckedObject(d.file.path, d.ref, d.source) for d in loaded.documents),
    )


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
    return replace(problem, message=f"{ref.kind}/{ref.name} {role}: {problem.message}")


def _dropped(problem: Problem, rule: Rule, config: Config, tracker: SuppressionTracker) -> bool:
    code = rule.info.code
    if config.ignored_in_file(problem.file.path, code):
        return True
    if problem.document is not None and config.ignored_object(problem.document.ref, code):
        return True
    return tracker.suppresses(problem.file, problem.pos[0], problem.document, code)


def _finding(rule: Rule, problem: Problem, config: Config) -> Finding:
    info = rule.info
    document = problem.document
    return Finding(
        code=info.code,
        name=info.name,
        severity=config.severity.get(info.code, problem.severity or info.severity),
        path=problem.file.path,
        line=problem.pos[0],
        column=problem.pos[1],
        message=problem.message,
        fix=problem.fix if problem.fix is not None else info.fix,
        object=document.ref if document is not None else None,
        source=document.source if document is not None else None,
    )


def _unused_suppressions(
    rule: Rule, tracker: SuppressionTracker, rules: Sequence[Rule], config: Config
) -> list[Finding]:
    enabled = {r.info.code for r in rules}
    findings = []
    for marker, codes in tracker.unused():
        # A suppression of a rule that did not run cannot be judged.
        live = [c for c in codes if any(code.startswith(c) for code in enabled)]
        if marker.codes and not live:
            continue
        what = f"no {', '.join(live)} finding" if live else "nothing"
        if config.ignored_in_file(marker.file.path, rule.info.code):
            continue
        problem = Problem(
            marker.file,
            marker.pos,
            f"unused suppression ({marker.kind}): {what} here to suppress",
        )
        findings.append(_finding(rule, problem, config))
    return findings
