"""A run in its phases: discover, plan, the per-file pass, context files, the corpus pass,
the report."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from gpulint.engine.context import (
    alongside_inputs,
    context_inputs,
    read_context,
    read_once,
    renders_of,
)
from gpulint.engine.gather import (
    Gathered,
    check_every_file,
    check_every_file_in,
    corpus_findings,
    what_is_read,
)
from gpulint.engine.known import KnownFile
from gpulint.engine.plan import KNOWLEDGE_BYTES, FilePlan, plan, server_rejections
from gpulint.engine.record import Run
from gpulint.engine.report import displayed, in_report_order, located
from gpulint.engine.variants import overlays_of_bases
from gpulint.errors import GpulintError
from gpulint.findings import LintResult
from gpulint.loader import STDIN, Input, Inputs, discover, input_name
from gpulint.render.rendered import RenderFailure
from gpulint.rules import Rule
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.live.verdict import ServerRejection

#: The rule that needs the `gpulint[schema]` extra; a run without it says so once.
SCHEMA_RULE = "GPU012"
#: The rules that read the installed schemas (GPU010 and GPU011 their index of kinds).
SCHEMA_RULES = frozenset({"GPU010", "GPU011", SCHEMA_RULE})


class Prepared(NamedTuple):
    """A run before its per-file pass: its inputs, context files and plan."""

    inputs: Inputs
    context: list[Input | KnownFile]
    plan: FilePlan
    skipped: list[Rule]
    rejections: tuple[ServerRejection, ...]
    # The context files that are other configs' files (whose own runs report their findings).
    elsewhere: frozenset[str] = frozenset()


def run(record: Run) -> LintResult:
    """The findings of `record`, in report order, and what was looked at."""
    prepared = prepare(record, *discovered(record))
    gathered = check_every_file(prepared.plan, prepared.inputs, record)
    return finish(record, prepared, gathered)


def run_clusters(records: Mapping[str, Run]) -> dict[str, LintResult]:
    """The result of each named cluster's run (`records`: the same run against each one's
    profile), each as `run` gives it; raises GpulintError naming the cluster it is about.

    The runs share their per-file pass: each file is loaded and typed once for the clusters
    that read it (all of them, unless the config applies it to some only), and each rule runs
    once for those whose profiles agree on what it reads (for the many rules that read nothing
    of it, once for all). Runs whose knowledge objects differ (a quota applied to some clusters
    only) share nothing of it.
    """
    read: list[tuple[object, str]] = []  # what each first run of some inputs read, and its name
    prepared: dict[str, Prepared] = {}
    for name, record in records.items():
        with _about(name):
            inputs, context, elsewhere = discovered(record)
            key = (_read_inputs(inputs, context), elsewhere)
            same = next((first for other, first in read if other == key), None)
            if same is None:
                read.append((key, name))
                prepared[name] = prepare(record, inputs, context, elsewhere)
            else:  # the same inputs: read once, and their knowledge objects too
                first = prepared[same]
                prepared[name] = prepare(record, first.inputs, first.context, elsewhere, first.plan)
    passes: list[tuple[object, list[str]]] = []
    for name, ready in prepared.items():
        key = _shared_by(ready.plan)
        names = next((names for other, names in passes if other == key), None)
        if names is None:
            passes.append((key, [name]))
        else:
            names.append(name)
    results: dict[str, LintResult] = {}
    for _, names in passes:
        with _about(names[0]):
            plans = [prepared[name].plan for name in names]
            inputs = [prepared[name].inputs for name in names]
            all_gathered = check_every_file_in(plans, inputs, [records[n] for n in names])
        for name, gathered in zip(names, all_gathered, strict=True):
            with _about(name):
                results[name] = finish(records[name], prepared[name], gathered)
    return {name: results[name] for name in records}


def _shared_by(file_plan: FilePlan) -> object:
    """What of a plan, besides its profile, a file's check depends on: plans equal in it share
    their per-file pass."""
    return (
        file_plan.config,
        file_plan.namespace,
        file_plan.knowledge_digest,
        file_plan.knowledge_kinds,
        dict(file_plan.file_namespaces),
        file_plan.keep_checked,
        file_plan.suppression_rule,
    )


@contextmanager
def _about(cluster: str) -> Iterator[None]:
    """A GpulintError raised inside names `cluster`."""
    try:
        yield
    except GpulintError as exc:
        raise GpulintError(f"cluster {cluster}: {exc}") from exc


def _read_inputs(inputs: Inputs, context: Sequence[Input | KnownFile]) -> object:
    """What a run reads, to tell whether two clusters' runs read the same: each input's name
    and, where it is not a file read by path, its bytes (and a render's origin)."""
    return tuple(map(what_is_read, inputs)), tuple(map(what_is_read, context))


def discovered(record: Run) -> tuple[Inputs, list[Input | KnownFile], frozenset[str]]:
    """The inputs of `record` in report order (charts and overlays rendered), its context
    files, and the names of those that are other configs' files (`Run.alongside`)."""
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
        jobs=record.jobs,
    )
    context, stats = context_inputs(config, inputs, record.cluster, record.render)
    # Other configs' files judged against the same cluster are summed with these, as context
    # whose findings their own runs report.
    alongside = alongside_inputs(record, inputs, context)
    index = _file_index(record, context)
    read = read_once(context + alongside, KNOWLEDGE_BYTES, *index, stats)
    return inputs, read, frozenset(input_name(item) for item in alongside)


def _file_index(record: Run, context: Sequence[Input]) -> tuple[Path | None, str]:
    """Where the context files' index is kept (None: nowhere), and the project it is of."""
    if record.results_cache is None or not context:
        return None, ""
    from gpulint.cachedir import cache_problem

    directory = Path(record.results_cache)
    # An untrusted directory is not used; the plan says why (`cache.trusted_directory`).
    if cache_problem(directory) is not None:
        return None, ""
    return directory, record.root or os.path.abspath(os.curdir)


def prepare(
    record: Run,
    inputs: Inputs,
    context: list[Input | KnownFile],
    elsewhere: frozenset[str] = frozenset(),
    read: FilePlan | None = None,
) -> Prepared:
    """`record` planned over its `inputs` and `context` files (`elsewhere`: those that are
    other configs' files; `read`: the plan of another cluster's run of the same ones, whose
    knowledge objects it takes)."""
    if any(r.code in SCHEMA_RULES for r in record.rules):
        from gpulint.validation.kube import use_cache

        # Before any worker is forked: they keep what they derive from the schemas there too.
        use_cache(record.results_cache)
    file_plan, skipped = plan(record, inputs, context, read)
    rejections = server_rejections(inputs, file_plan, record.dry_run)
    return Prepared(inputs, context, file_plan, skipped, rejections, elsewhere)


def finish(record: Run, prepared: Prepared, gathered: Gathered) -> LintResult:
    """The context files and the corpus pass after the per-file pass, and the result."""
    inputs, context, file_plan, skipped, rejections, elsewhere = prepared
    # A chart of the context stands where the given ones do: at its templates and values.
    renders = {**inputs.renders, **renders_of(context)}
    bases = overlays_of_bases(renders.values()) if len(renders) > 1 else {}
    given = read_context(file_plan, inputs, context, gathered, bases) if context else None
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
