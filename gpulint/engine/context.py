"""Context files (`context:` in the config): the files a run given only some files judges them
against. Their knowledge objects join the plan's; of their other objects only what corpus-wide
rules keep (workloads, HPAs) is read, and no per-file rule runs on them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpulint.config import Config
from gpulint.engine.files import FileOutcome, check_file
from gpulint.engine.plan import FilePlan, names_any
from gpulint.errors import GpulintError
from gpulint.loader import Input, Inputs, RenderedInput, discover, input_name, read_bytes

if TYPE_CHECKING:
    from gpulint.engine.cache import ResultCache
    from gpulint.engine.gather import Gathered
    from gpulint.engine.record import Run
    from gpulint.render.options import RenderOptions

#: A context file is read only if its bytes may hold what corpus-wide rules keep.
_CONTEXT_BYTES = (b"containers", b"HorizontalPodAutoscaler")


def context_inputs(
    config: Config,
    given: Inputs,
    cluster: str | None = None,
    render: RenderOptions | None = None,
) -> list[Input]:
    """The files under the config's `context` that are not among the given inputs (stdin
    named as one of them, `--stdin-filename k8s/a.yaml`, stands for it), less what the config
    applies to clusters other than `cluster`; its charts rendered as `render` says."""
    paths = config.context_paths()
    if not paths:
        return []
    seen = {os.path.realpath(input_name(item)) for item in given}
    # A chart or overlay the given files already render is not rendered again as context.
    rendered = {os.path.realpath(name) for name in given.renders}
    try:
        found = discover(
            paths,
            config.excluded_in(cluster),
            render=render,
            ignored=config.gitignore_filter(),
        )
    except GpulintError as exc:
        # A chart under `context` is rendered for any file given: say why it was.
        raise GpulintError(f"{config.context_where()}: context: {exc}") from None
    # Resolving every context file's path costs a stat per directory above it: only a file
    # that is one of the given ones (the same inode) can resolve to one of theirs.
    inodes = {_inode(path) for path in seen} - {None}
    return [
        item
        for item in found
        if (
            _inode(item) not in inodes or os.path.realpath(item) not in seen
            if isinstance(item, str)
            else os.path.realpath(input_name(item)) not in rendered
        )
    ]


def alongside_inputs(record: Run, given: Inputs, context: Sequence[Input]) -> list[Input]:
    """The files other configs of the command govern and judge against this run's cluster
    (`Run.alongside`), walked as their own runs walk them, less what this run already reads;
    their charts rendered with their config's chart settings unless the command line set
    every chart's."""
    if not record.alongside:
        return []
    from gpulint.render.options import RenderOptions

    seen = {os.path.realpath(input_name(item)) for item in (*given, *context)}
    found: list[Input] = []
    for other in record.alongside:
        render = record.render or RenderOptions()
        if render.charts == record.config.charts:
            render = render._replace(charts=other.config.charts)
        items = discover(
            list(other.paths),
            other.config.walk_excluded(other.cluster),
            render=render,
            ignored=other.config.gitignore_filter(),
        )
        for item in items:
            real = os.path.realpath(input_name(item))
            if real not in seen:
                seen.add(real)
                found.append(item)
    return found


def read_once(context: Iterable[Input], knowledge: Sequence[bytes]) -> list[Input]:
    """The context inputs with each file's bytes (name, bytes): the knowledge scan and
    read_context both read them, and a file is read once. A file whose bytes name neither
    what corpus-wide rules keep nor a kind of `knowledge` is left out (both passes would skip
    it); one that cannot be read stays a path (both say nothing of it)."""
    words = (*_CONTEXT_BYTES, *knowledge)
    found: list[Input] = []
    for item in context:
        if not isinstance(item, str):
            found.append(item)
            continue
        data = read_bytes(Path(item))
        if isinstance(data, OSError):
            found.append(item)
        elif names_any(data, words):
            found.append((item, data))
    return found


def _inode(path: str) -> tuple[int, int] | None:
    """The device and inode of the file at `path` (None: none there)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def renders_of(context: Sequence[Input]) -> dict[str, RenderedInput]:
    """The chart and overlay renders among the context's inputs, by name."""
    return {item.name: item for item in context if isinstance(item, RenderedInput)}


def read_context(
    plan: FilePlan,
    inputs: Inputs,
    context: Sequence[Input],
    gathered: Gathered,
) -> frozenset[str]:
    """Add to `gathered` what corpus-wide rules keep of the context files (no per-file rule
    runs on them); return the given files' names. With the plan's results cache, a context file
    whose bytes did not change is read from it (a pre-commit hook's context rarely changes)."""
    given = frozenset(input_name(item) for item in inputs)
    context_plan = plan._replace(
        per_document=(), keep_checked=False, unused_rule=None, suppression_rule=None
    )
    cache = None
    if plan.corpus_wide:
        from gpulint.engine.cache import result_cache

        cache = result_cache(context_plan, len(context))
        if cache is not None:
            context_plan = context_plan._replace(place_kept=True)
    if gathered.variants is not None:
        gathered.variants.renders.update(renders_of(context))
    # Without a corpus-wide rule at work, context files were wanted for knowledge only.
    items = context if plan.corpus_wide else ()
    for outcome in _context_outcomes(context_plan, items, cache):
        gathered.add_autoscalers(outcome)
        gathered.tracker.merge(outcome.tracker)  # a suppression there still applies there
        gathered.add_kept(outcome, gathered.variants)
    return given


def _context_outcomes(
    plan: FilePlan, items: Iterable[Input], cache: ResultCache | None = None
) -> Iterator[FileOutcome]:
    """What corpus-wide rules keep of each context file; files that cannot hold it are not
    parsed, and those `cache` holds are read from it."""
    for item in items:
        if isinstance(item, str):
            data = read_bytes(Path(item))
            if isinstance(data, OSError):
                continue
            item = (item, data)
        if not isinstance(item, RenderedInput) and not names_any(item[1], _CONTEXT_BYTES):
            continue  # (read_once keeps a file holding knowledge objects only)
        if cache is None or isinstance(item, RenderedInput):
            yield check_file(plan, item)
            continue
        key = cache.key(item[0], item[1])
        outcome = cache.read(key)
        if outcome is None:
            outcome = check_file(plan, item)
            cache.write(key, outcome)
        yield outcome
