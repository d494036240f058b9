"""A run in its phases: discover, plan, the per-file pass, context files, the corpus pass,
the report."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from gpulint.engine.context import context_inputs, read_context, renders_of
from gpulint.engine.gather import Gathered, check_every_file, check_every_file_in, corpus_findings
from gpulint.engine.plan import FilePlan, plan, server_rejections
from gpulint.engine.record import Run
from gpulint.engine.report import displayed, in_report_order, located
from gpulint.engine.variants import overlays_of_bases
from gpulint.errors import GpulintError
from gpulint.findings import LintResult
from gpulint.loader import STDIN, Input, Inputs, discover
from gpulint.render.rendered import RenderedInput, RenderFailure
from gpulint.rules import Rule
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.live.verdict import ServerRejection

#: The rule that needs the `gpulint[schema]` extra; a run without it says so once.
SCHEMA_RULE = "GPU012"


class Prepared(NamedTuple):
    """A run before its per-file pass: its inputs, context files and plan."""

    inputs: Inputs
    context: list[Input]
    plan: FilePlan
    skipped: list[Rule]
    rejections: tuple[ServerRejection, ...]


def run(record: Run) -> LintResult:
    """The findings of `record`, in report order, and what was looked at."""
    prepared = prepare(record, *discovered(record))
    gathered = check_every_file(prepared.plan, prepared.inputs, record)
    return finish(record, prepared, gathered)


def run_clusters(records: Mapping[str, Run]) -> dict[str, LintResult]:
    """The result of each named cluster's run (`records`: the same run against each one's
    profile), each as `run` gives it; raises GpulintError naming the cluster it is about.

    The runs whose inputs and context files are the same (all of them, unless the config
    applies some files to some clusters only) share their per-file pass: each file is loaded
    and typed once, and each rule runs once for the clusters whose profiles agree on what it
    reads (for most rules that do not read the profile, once for all).
    """
    groups: list[tuple[object, list[str]]] = []  # (what they read, the clusters reading it)
    prepared: dict[str, Prepared] = {}
    for name, record in records.items():
        with _about(name):
            inputs, context = discovered(record)
            read = _read_inputs(inputs, context)
            group = next((names for key, names in groups if key == read), None)
            first = prepared[group[0]].plan if group else None
            prepared[name] = prepare(record, inputs, context, first)
            if group is None:
                groups.append((read, [name]))
            else:
                group.append(name)
    results: dict[str, LintResult] = {}
    for _, names in groups:
        with _about(names[0]):
            plans = [prepared[name].plan for name in names]
            inputs = prepared[names[0]].inputs
            all_gathered = check_every_file_in(plans, inputs, [records[n] for n in names])
        for name, gathered in zip(names, all_gathered, strict=True):
            with _about(name):
                results[name] = finish(records[name], prepared[name], gathered)
    return {name: results[name] for name in records}


@contextmanager
def _about(cluster: str) -> Iterator[None]:
    """A GpulintError raised inside names `cluster`."""
    try:
        yield
    except GpulintError as exc:
        raise GpulintError(f"cluster {cluster}: {exc}") from exc


def _read_inputs(inputs: Inputs, context: Sequence[Input]) -> object:
    """What a run reads, to tell whether two clusters' runs read the same: each input's name
    and, where it is not a file read by path, its bytes (and a render's origin)."""
    return tuple(map(_read, inputs)), tuple(map(_read, context))


def _read(item: Input) -> object:
    """What checking `item` reads: a render's name, bytes and how its findings are traced
    back, but not the time budget its cluster's renders shared (`RenderRun`)."""
    if not isinstance(item, RenderedInput) or getattr(item.origin, "run", None) is None:
        return item
    return item._replace(origin=replace(item.origin, run=None))


def discovered(record: Run) -> tuple[Inputs, list[Input]]:
    """The inputs of `record` in report order (charts and overlays rendered), and its context
    files."""
    config = record.config
    # Checked in report order (findings are reported by path), so each file's findings can be
    # written out as soon as the file is checked.
    inputs = discover(
        [p for p in record.paths if p != STDIN],
        config.excluded_in(record.cluster),
        record.stdin if STDIN in record.paths else None,
        record.overlay,
        record.render,
        record.allow_empty,
        ignored=config.gitignore_filter(),
        base=record.root,
    )
    return inputs, context_inputs(config, inputs, record.cluster, record.render)


def prepare(
    record: Run, inputs: Inputs, context: list[Input], read: FilePlan | None = None
) -> Prepared:
    """`record` planned over its `inputs` and `context` files (`read`: the plan of another
    cluster's run of the same ones, whose knowledge objects it takes)."""
    file_plan, skipped = plan(record, inputs, context, read)
    rejections = server_rejections(inputs, file_plan, record.dry_run)
    return Prepared(inputs, context, file_plan, skipped, rejections)


def finish(record: Run, prepared: Prepared, gathered: Gathered) -> LintResult:
    """The context files and the corpus pass after the per-file pass, and the result."""
    inputs, context, file_plan, skipped, rejections = prepared
    given = read_context(file_plan, inputs, context, gathered) if context else None
    # A chart of the context stands where the given ones do: at its templates and values.
    renders = {**inputs.renders, **renders_of(context)}
    bases = overlays_of_bases(renders.values()) if len(renders) > 1 else {}
    if given is not None:
        # A change to a base is a change to the overlays built on it.
        given = given.union(*(bases[name] for name in given if name in bases))
    late = gathered.late + corpus_findings(
        file_plan, gathered, rejections, record.rules, given, bases
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
