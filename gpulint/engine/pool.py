"""Worker processes for large inputs: files are checked in batches, outcomes come back in
input order, and Ctrl-C stops the run with one line rather than a traceback per worker."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby, islice
from pathlib import Path
from typing import TYPE_CHECKING

from gpulint.engine.files import FileOutcome, Lanes, check_file_in, lanes_of
from gpulint.errors import GpulintError
from gpulint.loader import Input, Inputs, RenderedInput, collection_paused, read_bytes

if TYPE_CHECKING:
    from gpulint.engine.cache import ResultCache


class Listed(list[Input]):
    """Some inputs, with the count and size `worth_processes` judges them by."""

    def __init__(self, items: list[Input], size: int) -> None:
        super().__init__(items)
        self.files = len(items)
        self.size = size


def _through_cache(
    lanes: Lanes, inputs: Inputs | Listed, jobs: int, caches: Sequence[ResultCache | None]
) -> Iterator[tuple[FileOutcome, ...]]:
    """check_files() with the stored outcomes read rather than computed: the files without
    one for some plan are checked for those plans (in processes when they are enough) and
    stored, in input order."""
    # (input, key per plan, whether an entry is there per plan): no outcome is held ahead
    looked: list[tuple[Input, tuple[str | None, ...], tuple[bool, ...]]] = []
    missing: list[tuple[Input, Lanes, int]] = []
    for item, name, data in _read(inputs):
        keys = tuple(
            cache.key(name, data) if cache is not None and data is not None else None
            for cache in caches
        )
        stored = tuple(
            key is not None and cache is not None and cache.has(key)
            for cache, key in zip(caches, keys, strict=True)
        )
        looked.append((item, keys, stored))
        if not all(stored):
            missing.append((item, _only(lanes, stored), len(data) if data is not None else 0))
    checked = _check_missing(missing, jobs)
    for item, keys, stored in looked:
        outcomes: list[FileOutcome | None] = [
            cache.read(key) if here and cache is not None and key is not None else None
            for cache, key, here in zip(caches, keys, stored, strict=True)
        ]
        if not all(stored):
            for lane, outcome in zip(_absent(stored), next(checked), strict=True):
                outcomes[lane] = outcome
        if None in outcomes:  # an entry there but unusable: checked again
            unread = tuple(outcome is not None for outcome in outcomes)
            again = check_file_in(_only(lanes, unread), item)
            for lane, outcome in zip(_absent(unread), again, strict=True):
                outcomes[lane] = outcome
        for lane, (cache, key, here) in enumerate(zip(caches, keys, stored, strict=True)):
            if cache is not None and key is not None and not here:
                cache.write(key, outcomes[lane])
        yield tuple(o for o in outcomes if o is not None)


def _read(inputs: Iterable[Input]) -> Iterator[tuple[Input, str, bytes | None]]:
    """Each input with its name and bytes (None: not kept in the cache, as a render or an
    unreadable file)."""
    for item in inputs:
        if isinstance(item, RenderedInput):
            yield item, item.name, None
        elif isinstance(item, str):
            data = read_bytes(Path(item))
            yield item, item, None if isinstance(data, OSError) else data
        else:
            yield item, item[0], item[1]


def _absent(present: tuple[bool, ...]) -> list[int]:
    return [lane for lane, here in enumerate(present) if not here]


def _only(lanes: Lanes, present: tuple[bool, ...]) -> Lanes:
    """`lanes` for the plans whose outcome is not `present`."""
    if not any(present):
        return lanes
    return lanes_of([plan for plan, here in zip(lanes.plans, present, strict=True) if not here])


def _check_missing(
    missing: list[tuple[Input, Lanes, int]], jobs: int
) -> Iterator[tuple[FileOutcome, ...]]:
    """The outcomes of `missing` (inputs, each with the lanes it lacks an entry for and its
    size), in order: a run of inputs lacking the same lanes at once, in processes when that
    pays."""
    for _, run in groupby(missing, key=lambda entry: id(entry[1])):
        entries = list(run)
        items = [item for item, _, _ in entries]
        yield from check_files(entries[0][1], Listed(items, sum(s for _, _, s in entries)), jobs)


#: Below this much input a process pool costs more to start than it saves.
PARALLEL_MIN_BYTES = 4 << 20
PARALLEL_MIN_FILES = 8


def available_cpus() -> int:
    """CPUs this process may run on (the default for `jobs`)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_files(
    lanes: Lanes,
    inputs: Inputs | Listed,
    jobs: int,
    caches: Sequence[ResultCache | None] = (),
) -> Iterator[tuple[FileOutcome, ...]]:
    """Every input's outcomes (one per plan of `lanes`), in input order; in `jobs` processes
    when that pays. With `caches` (one per plan), a file whose entry is there is read from
    it, and the others are stored."""
    if any(cache is not None for cache in caches):
        yield from _through_cache(lanes, inputs, jobs, caches)
        return
    if jobs <= 1 or not worth_processes(inputs, jobs):
        yield from (check_file_in(lanes, item) for item in inputs)
        return
    # Imported here: a pre-commit run on a few files never starts a process.
    from concurrent.futures import Future, ProcessPoolExecutor

    size = max(1, min(64, len(inputs) // (jobs * 8)))
    items = iter(inputs)
    # Two batches per worker in flight: the inputs are walked as the workers take them, and
    # neither they nor the outcomes queue up whole (Executor.map would submit every batch).
    from concurrent.futures.process import BrokenProcessPool

    in_flight: deque[Future[list[tuple[FileOutcome, ...]]]] = deque()
    with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_ignores_interrupts) as pool:
        try:
            while batch := list(islice(items, size)):
                if in_flight:
                    in_flight.append(pool.submit(_check_batch, lanes, batch))
                else:
                    # The first submit forks every worker: a Ctrl-C between a fork and the
                    # worker's initializer would kill that worker with a traceback, so the
                    # signal waits, blocked, until every worker ignores it.
                    with _interrupts_held():
                        in_flight.append(pool.submit(_check_batch, lanes, batch))
                if len(in_flight) >= 2 * jobs:
                    yield from in_flight.popleft().result()
            while in_flight:
                yield from in_flight.popleft().result()
        except BrokenProcessPool:
            raise GpulintError(
                "a process checking files stopped unexpectedly (killed, or out of memory); "
                "run again, or with --jobs 1"
            ) from None
        except BaseException:
            # Ctrl-C: the batches not started are dropped; the workers finish theirs and stop.
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _worker_ignores_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group: only the main one answers it,
    with one line, instead of a traceback from each worker."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Forked while the main process held the signal blocked (_interrupts_held).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT stays pending, not delivered, inside the block; it arrives when the block ends."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def worth_processes(inputs: Inputs | Listed, jobs: int) -> bool:
    """Enough input that worker processes save more than they cost to start and feed."""
    return inputs.files >= max(PARALLEL_MIN_FILES, 2 * jobs) and inputs.size >= PARALLEL_MIN_BYTES


@collection_paused()
def _check_batch(lanes: Lanes, batch: list[Input]) -> list[tuple[FileOutcome, ...]]:
    return [check_file_in(lanes, item) for item in batch]
