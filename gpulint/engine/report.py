"""Problems into findings: suppressions and ignores applied, roles named, duplicates dropped,
files named for display, findings of renders moved to the files they came from, report order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpulint.config import Config
from gpulint.findings import Finding
from gpulint.loader import display_path
from gpulint.rules import Rule
from gpulint.rules.base import CheckContext, Involved, Problem
from gpulint.suppressions import SharedTrackers, SuppressionTracker
from gpulint.workloads import role_at

if TYPE_CHECKING:
    from gpulint.engine.record import Run
    from gpulint.loader import RenderedInput
    from gpulint.model import Workload
    from gpulint.placeholders import Unknown
    from gpulint.spool import FindingSpool
    from gpulint.yamltree import Pos


def findings_of(
    rule: Rule,
    context: CheckContext,
    roles: dict[int, Workload],
    config: Config,
    tracker: SuppressionTracker | SharedTrackers,
    given: frozenset[str] | None = None,
    elsewhere: frozenset[str] = frozenset(),
) -> Iterator[Finding]:
    """What `rule` finds in `context`, less what the config and suppressions drop.

    `given`: the files of a run with `context:`; what it keeps is `reported_with_context`'s.
    `elsewhere`: files another config's run checks, which reports their findings.
    """
    # Pods built from one field share it (an Argo workflow's nodeSelector, given to each of
    # its templates): what is wrong with it is told once.
    seen: set[tuple[int, Pos, str]] = set()
    unknown = () if rule.code in PLACEHOLDER_RULES else context.loaded.unknown
    problems = rule.check_function()(context)
    if given is not None:
        problems = reported_with_context(problems, given)
    for problem in problems:
        if _dropped(problem, rule, config, tracker):
            continue
        if unknown and _not_judged(problem, unknown):
            continue
        if problem.file.path in elsewhere:
            continue
        problem = _name_role(problem, roles)
        key = (id(problem.file), problem.pos, problem.message)
        if key not in seen:
            seen.add(key)
            yield to_finding(rule, problem, config)


def reported_with_context(problems: Iterable[Problem], given: frozenset[str]) -> Iterator[Problem]:
    """What a corpus-wide rule reports in a run given only the files `given`, with the rest
    read as `context:`: every problem in a given file, then a problem in a context file only
    when it involves a given file that has no problem of that rule of its own (a commit that
    lowers a quota alone fails at the workloads the quota now refuses; a commit that adds a
    workload to a full pool fails at that workload, not again at each workload on the pool).
    """
    held: list[tuple[Problem, frozenset[str]]] = []
    flagged: set[str] = set()
    for problem in problems:
        if problem.file.path in given:
            flagged.add(problem.file.path)
            yield problem
        else:
            files = involved_given(problem, given)
            if files:
                held.append((problem, files))
    yield from (problem for problem, files in held if not files <= flagged)


def involved_given(problem: Problem, given: frozenset[str]) -> frozenset[str]:
    """The files of `given` holding an object a corpus-wide finding says it combines (the
    other workload sharing a quota, the quota itself); its `involves` is read once."""
    if isinstance(problem.involves, Involved):
        return frozenset(g for g in given if any(g in files for files in problem.involves.files))
    paths = (d.file.path for d in problem.involves if d is not None)
    return frozenset(path for path in paths if path in given)


#: The rules that list what placeholders leave unknown (envsubst's, a sample's to fill in);
#: each note points at one.
PLACEHOLDER_RULES = frozenset({"GPU008", "GPU014"})


def _not_judged(problem: Problem, unknown: Iterable[Unknown]) -> bool:
    """Whether `problem` points into what a placeholder decides (gpulint.placeholders): the
    field holding `$REPLICAS` is not judged, nor the `resources` block holding `${GPUS}`."""
    return any(u.file is problem.file and u.covers(problem.pos) for u in unknown)


def roles_of(workloads: Iterable[Workload]) -> dict[int, Workload]:
    """The workloads with roles (several pod templates), by id() of their document."""
    return {
        id(w.document): w for w in workloads if w.unread_roles or any(t.role for t in w.templates)
    }


def _name_role(problem: Problem, roles: dict[int, Workload]) -> Problem:
    """Prefix `PyTorchJob/llama-ft Worker: ` when the finding sits inside one role of a CRD.

    Rules speak of "this pod"; in a workload with several pod templates the reader needs to
    know which one. Messages that already name the workload say so (`names_workload`) and
    are left as they are.
    """
    if problem.names_workload:
        return problem
    document = problem.document
    workload = roles.get(id(document)) if document is not None else None
    if workload is None:
        return problem
    role = role_at(workload, problem.pos)
    if role is None:
        return problem
    ref = workload.document.ref
    return problem._replace(message=f"{ref.kind}/{ref.name} {role}: {problem.message}")


def _dropped(
    problem: Problem, rule: Rule, config: Config, tracker: SuppressionTracker | SharedTrackers
) -> bool:
    code = rule.code
    if config.ignored_in_file(problem.file.path, code):
        return True
    if problem.document is not None and config.ignored_object(problem.document.ref, code):
        return True
    return tracker.suppresses(problem.file, problem.pos[0], problem.document, code)


def to_finding(rule: Rule, problem: Problem, config: Config) -> Finding:
    """The finding `problem` of `rule` makes: the record's severity (as the config sets it) and
    fix text unless the problem gives its own, and its edits when the rule may fix."""
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


def unused_suppressions(
    rule: Rule, tracker: SuppressionTracker, rules: Sequence[Rule], config: Config
) -> list[Finding]:
    """GPU006: each suppression that suppressed nothing of the rules that ran."""
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
        findings.append(to_finding(rule, problem, config))
    return findings


INVALID_FIX = (
    "Name rules by code or name, with an optional reason after a colon: "
    '`# gpulint: ignore[GPU601: why]`, `gpulint.io/ignore: "gpu-limit-request-mismatch: why"` '
    "or `ignore.gpulint.io/GPU601: why`; `gpulint rules` lists them."
)


def invalid_suppressions(
    rule: Rule, tracker: SuppressionTracker, config: Config
) -> Iterator[Finding]:
    """GPU006: each suppression written wrongly or naming no rule (it suppresses nothing)."""
    for marker, message in tracker.invalid():
        if config.ignored_in_file(marker.file.path, rule.code):
            continue
        problem = Problem(marker.file, marker.pos, message, fix=INVALID_FIX)
        yield to_finding(rule, problem, config)


def displayed(findings: Iterable[Finding], run: Run) -> Iterator[Finding]:
    """`findings` with their files (and renders) named as the report names them."""
    if run.root is None:
        yield from findings
        return
    for finding in findings:
        path = run.display(finding.path)
        rendered = finding.rendered
        if rendered is not None:
            # The render's own name, not stdin's as given (which only names the file).
            rendered = rendered._replace(of=display_path(rendered.of, run.root))
        if path != finding.path or rendered != finding.rendered:
            finding = replace(finding, path=path, rendered=rendered)
        yield finding


def located(findings: list[Finding], renders: dict[str, RenderedInput]) -> list[Finding]:
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


def sort_key(finding: Finding) -> tuple[str, int, int, str]:
    """Report order: by path, line, column, then code."""
    return finding.sort_key


def spool() -> FindingSpool:
    """An empty spool that keeps findings on disk (only runs that spool import it)."""
    from gpulint.spool import FindingSpool

    return FindingSpool()


def in_report_order(
    per_file: list[Finding] | FindingSpool, late: list[Finding]
) -> tuple[Finding, ...] | FindingSpool:
    """Every finding in report order: per-file findings came in it, `late` ones in any."""
    if isinstance(per_file, list):
        return tuple(sorted([*per_file, *late], key=sort_key))
    per_file.add_late(late)
    return per_file
