"""Context files (`context:` in the config): the files a run given only some files judges them
against. Their knowledge objects join the plan's; of their other objects only what corpus-wide
rules keep (workloads, HPAs, ScaledObjects) is read, and no per-file rule runs on them."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gpulint.config import Config
from gpulint.engine.files import FileOutcome, check_file
from gpulint.engine.known import KnownFile, content_digest
from gpulint.engine.plan import FilePlan, names_any
from gpulint.engine.summaries import summarized
from gpulint.errors import GpulintError
from gpulint.loader import Input, Inputs, RenderedInput, discover, input_name, read_bytes

if TYPE_CHECKING:
    from gpulint.engine.cache import Pack, ResultCache
    from gpulint.engine.gather import Gathered
    from gpulint.engine.record import Run
    from gpulint.render.options import RenderOptions
    from gpulint.rules.base import KeptSummary

#: A context file is read only if its bytes may hold what corpus-wide rules keep.
_CONTEXT_BYTES = (
    b"containers",
    b"HorizontalPodAutoscaler",
    b"ScaledObject",
    b"DaskAutoscaler",
    # Its pods are built from fields that are no pod spec (gpulint.operators).
    b"SparkApplication",
)


def context_inputs(
    config: Config,
    given: Inputs,
    cluster: str | None = None,
    render: RenderOptions | None = None,
) -> tuple[list[Input], Mapping[str, os.stat_result]]:
    """The files under the config's `context` that are not among the given inputs (stdin
    named as one of them, `--stdin-filename k8s/a.yaml`, stands for it), less what the config
    applies to clusters other than `cluster`; its charts rendered as `render` says. With them,
    the stat the walk took of those it met by their own names (`Inputs.stats`)."""
    paths = config.context_paths()
    if not paths:
        return [], {}
    seen = {os.path.realpath(input_name(item)) for item in given}
    # A chart or overlay the given files already render is not rendered again as context.
    rendered = {os.path.realpath(name) for name in given.renders}
    try:
        found = discover(
            paths,
            config.excluded_in(cluster),
            render=render,
            ignored=config.gitignore_filter(),
            listed=True,
        )
    except GpulintError as exc:
        # A chart under `context` is rendered for any file given: say why it was.
        raise GpulintError(f"{config.context_where()}: context: {exc}") from None
    # Resolving every context file's path costs a stat per directory above it: only a file
    # that is one of the given ones (the same inode) can resolve to one of theirs.
    inodes = {_inode(path) for path in seen} - {None}
    stats = found.stats
    items = [
        item
        for item in found
        if (
            _inode(item, stats.get(item)) not in inodes or os.path.realpath(item) not in seen
            if isinstance(item, str)
            else os.path.realpath(input_name(item)) not in rendered
        )
    ]
    return items, stats


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


def read_once(
    context: Iterable[Input],
    knowledge: Sequence[bytes],
    cache: Path | None = None,
    root: str = "",
    stats: Mapping[str, os.stat_result] | None = None,
) -> list[Input | KnownFile]:
    """The context inputs with each file's bytes (name, bytes): the knowledge scan and
    read_context both read them, and a file is read once. A file whose bytes name neither
    what corpus-wide rules keep nor a kind of `knowledge` is left out (both passes would skip
    it); one that cannot be read stays a path (both say nothing of it). With the `cache`
    directory (trusted), a file that did not change since a run of the project `root` read
    it is not read: it is a KnownFile (`gpulint.engine.known`), read only if a cache entry
    for it is missing. `stats`: the stat the walk took of some (`context_inputs`)."""
    words = (*_CONTEXT_BYTES, *knowledge)
    index = None
    if cache is not None:
        from gpulint.engine.known import FileIndex

        index = FileIndex(cache, root, words)
    found: list[Input | KnownFile] = []
    for item in context:
        if not isinstance(item, str):
            found.append(item)
            continue
        if index is None:
            known = read_bytes(Path(item))
        else:
            known = index.known(item, stats.get(item) if stats is not None else None)
        if isinstance(known, KnownFile):
            if known.names_any(words):
                found.append(known)
        elif isinstance(known, OSError):
            found.append(item)
        elif names_any(known, words):
            found.append((item, known))
    if index is not None:
        index.write()
    return found


def _inode(path: str, info: os.stat_result | None = None) -> tuple[int, int] | None:
    """The device and inode of the file at `path` (None: none there); `info`: its stat, when
    the walk took it."""
    if info is None:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return None
    return info.st_dev, info.st_ino


def renders_of(context: Sequence[Input | KnownFile]) -> dict[str, RenderedInput]:
    """The chart and overlay renders among the context's inputs, by name."""
    return {item.name: item for item in context if isinstance(item, RenderedInput)}


def read_context(
    plan: FilePlan,
    inputs: Inputs,
    context: Sequence[Input | KnownFile],
    gathered: Gathered,
    bases: Mapping[str, frozenset[str]] | None = None,
) -> frozenset[str]:
    """Add to `gathered` what corpus-wide rules keep of the context files (no per-file rule
    runs on them); return the given files' names (with the renders built on a given kustomize
    base, by `bases`: a change to a base is a change to them). With the plan's results cache,
    a context file whose bytes did not change is read from it (a pre-commit hook's context
    rarely changes). When the given files hold nothing a corpus-wide finding can combine,
    the context's workloads are not read: no finding of theirs could involve the given files."""
    given = frozenset(input_name(item) for item in inputs)
    given = given.union(*(bases[name] for name in given if name in bases)) if bases else given
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
    items = context if plan.corpus_wide and _gives_any(plan, gathered, given, context) else ()
    pack = None
    if cache is not None and items:
        from gpulint.engine.cache import Pack
        from gpulint.engine.files import FileOutcome

        gathered.read_whole = functools.partial(_whole_outcome, context_plan, cache)
        pack = Pack(cache, "context pack", lambda value: isinstance(value, FileOutcome))
    for outcome in _context_outcomes(context_plan, items, cache, pack):
        gathered.add_autoscalers(outcome)
        if outcome.tracker is not None:  # a suppression there still applies there
            gathered.tracker.merge(outcome.tracker)
        gathered.add_kept(outcome, gathered.variants)
    if pack is not None:
        pack.write()
    return given


def _gives_any(
    plan: FilePlan, gathered: Gathered, given: frozenset[str], context: Sequence[Input | KnownFile]
) -> bool:
    """Whether the given files (already checked into `gathered`) hold anything a corpus-wide
    finding combines (`Problem.involves`): a workload a corpus-wide rule keeps, an HPA or
    ScaledObject, a knowledge object (a quota, LimitRange, PriorityClass), or a kustomize base
    of a context overlay (whose objects are then given too)."""
    return (
        any(gathered.kept.values())
        or bool(gathered.scalers)
        or any(document.file.path in given for document in plan.knowledge)
        or any(isinstance(item, RenderedInput) and item.name in given for item in context)
    )


def _context_outcomes(
    plan: FilePlan,
    items: Iterable[Input | KnownFile],
    cache: ResultCache | None = None,
    pack: Pack | None = None,
) -> Iterator[FileOutcome]:
    """What corpus-wide rules keep of each context file; files that cannot hold it are not
    parsed, and those `cache` holds are read from it (a KnownFile is read only when not):
    from the `pack` of the last runs' context outcomes first."""
    for item in items:
        if isinstance(item, RenderedInput):
            yield check_file(plan, item)
            continue
        data: bytes | OSError | None
        if isinstance(item, KnownFile):
            name, data, holds = item.name, None, item.names_any(_CONTEXT_BYTES)
        else:
            name, data = (item, read_bytes(Path(item))) if isinstance(item, str) else item[:2]
            holds = not isinstance(data, OSError) and names_any(data, _CONTEXT_BYTES)
        if not holds:
            continue  # (read_once keeps a file holding knowledge objects only)
        key = ""
        packed: tuple[str, bytes] = (name, b"")
        if cache is not None:
            assert not isinstance(data, OSError)
            # In the pack (of this plan's runs) by its name and bytes, as its own entry is.
            packed = (name, content_digest(data) if data is not None else item.digest)
            outcome = pack.read(packed) if pack is not None else None
            if outcome is not None:
                yield outcome
                continue
            key = cache.key_of(*packed)
            # Its summary (gpulint.engine.summaries), else its whole outcome summed up again.
            outcome = cache.read(summary_key(key)) or cache.read(key)
            if outcome is not None:
                outcome = _summed_up(plan, cache, outcome, name, key)
                if pack is not None:
                    pack.add(packed, outcome)
                yield outcome
                continue
        if data is None:
            data = item.read() if isinstance(item, KnownFile) else None
            if data is None:  # changed since it was looked at: as one not read
                continue
        outcome = check_file(plan, (name, data))
        if cache is not None:
            cache.write(key, outcome)
            outcome = _summed_up(plan, cache, outcome, name, key)
            if pack is not None:
                pack.add(packed, outcome)
        yield outcome


def summary_key(key: str) -> str:
    """The entry of the summary of the file whose whole outcome is stored under `key` (named
    as every entry is, which the cache's sweep recognizes)."""
    from gpulint.cachedir import sha256

    digest = sha256()
    digest.update(f"{key}:summary".encode())
    return digest.hexdigest()


def _summed_up(
    plan: FilePlan, cache: ResultCache, outcome: FileOutcome, name: str, key: str
) -> FileOutcome:
    """`outcome` (of the file `name`, stored whole under `key`) as the corpus pass reads it
    (`summarized`), stored as its summary when rules summed up what they keep of it."""
    if outcome.summaries:  # read as one
        return outcome
    summed = summarized(plan, outcome, name, key)
    if summed.summaries:
        cache.write(summary_key(key), summed)
    return summed


def _whole_outcome(plan: FilePlan, cache: ResultCache, summary: KeptSummary) -> FileOutcome:
    """The whole outcome of the file `summary` sums up: from the cache, or checked again if
    its entry is gone (the file as it is now)."""
    found = cache.read(summary.source)
    return found if found is not None else check_file(plan, summary.path)
