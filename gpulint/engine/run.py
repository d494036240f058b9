"""A run in its phases: discover, plan, the per-file pass, context files, the corpus pass,
the report."""

from __future__ import annotations

from gpulint.engine.context import alongside_inputs, context_inputs, read_context, renders_of
from gpulint.engine.gather import check_every_file, corpus_findings
from gpulint.engine.plan import plan, server_rejections
from gpulint.engine.record import Run
from gpulint.engine.report import displayed, in_report_order, located
from gpulint.engine.variants import overlays_of_bases
from gpulint.findings import LintResult
from gpulint.loader import STDIN, discover, input_name
from gpulint.render.rendered import RenderFailure

#: The rule that needs the `gpulint[schema]` extra; a run without it says so once.
SCHEMA_RULE = "GPU012"


def run(record: Run) -> LintResult:
    """The findings of `record`, in report order, and what was looked at."""
    config = record.config
    # Checked in report order (findings are reported by path), so each file's findings can be
    # written out as soon as the file is checked.
    inputs = discover(
        [p for p in record.paths if p != STDIN],
        config.walk_excluded(record.cluster),
        record.stdin if STDIN in record.paths else None,
        record.overlay,
        record.render,
        record.allow_empty,
        ignored=config.gitignore_filter(),
        base=record.root,
    )
    context = context_inputs(config, inputs, record.cluster, record.render)
    # Other configs' files judged against the same cluster are summed with these, as context
    # whose findings their own runs report.
    alongside = alongside_inputs(record, inputs, context)
    elsewhere = frozenset(input_name(item) for item in alongside)
    context += alongside
    file_plan, skipped = plan(record, inputs, context)
    rejections = server_rejections(inputs, file_plan, record.dry_run)
    gathered = check_every_file(file_plan, inputs, record)
    given = read_context(file_plan, inputs, context, gathered) if context else None
    # A chart of the context stands where the given ones do: at its templates and values.
    renders = {**inputs.renders, **renders_of(context)}
    bases = overlays_of_bases(renders.values()) if len(renders) > 1 else {}
    if given is not None:
        # A change to a base is a change to the overlays built on it.
        given = given.union(*(bases[name] for name in given if name in bases))
    late = gathered.late + corpus_findings(
        file_plan, gathered, rejections, record.rules, given, bases, elsewhere
    )
    if renders:
        late = located(late, renders)
    late = list(displayed(late, record))
    notes = []
    if skipped:
        notes.append(
            f"{len(skipped)} cluster-profile rules skipped: no --profile given "
            f"({', '.join(r.code for r in skipped)})"
        )
    notes.extend(
        f"context: {record.display(item.name)}: {item.origin.message}; its objects are not counted"
        for item in renders_of(context).values()
        if isinstance(item.origin, RenderFailure)
    )
    if any(r.code == SCHEMA_RULE for r in record.rules):
        from gpulint.validation.kube import unavailable_note

        notes.extend(unavailable_note())
    return LintResult(
        findings=in_report_order(gathered.findings, late),
        files=gathered.files,
        objects=gathered.objects,
        notes=tuple(notes),
        checked=tuple(gathered.checked),
        unchecked=gathered.unchecked,
    )
