"""Worker processes for large inputs: files are checked in batches, outcomes come back in
input order, and Ctrl-C stops the run with one line rather than a traceback per worker."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING

from gpulint.engine.files import FileOutcome, check_file
from gpulint.errors import GpulintError
from gpulint.loader import Input, Inputs, collection_paused

if TYPE_CHECKING:
    from gpulint.engine.cache import ResultCache
    from gpulint.engine.plan import FilePlan


class Listed(list[Input]):
    """Some inputs, with the count and size `worth_processes` judges them by."""

    def __init__(self, items: list[Input], size: int) -> None:
        super().__init__(items)
        self.files = len(items)
        self.size = size


def _through_cache(
    plan: FilePlan, inputs: Inputs | Listed, jobs: int, cache: ResultCache
) -> Iterator[FileOutcome]:
    """check_files() with the stored outcomes read rather than computed: the files without
    one are checked (in processes when they are enough) and stored, in input order."""
    looked = []  # (input, key, whether an entry is there): no outcome is held ahead
    missing: list[Input] = []
    size = 0
    for item, key, data in cache.keyed(inputs):
        stored = key is not None and cache.has(key)
        looked.append((item, key, stored))
        if not stored:
            missing.append(item)
            size += len(data) if data is not None else 0
    checked = check_files(plan, Listed(missing, size), jobs)
    for item, key, stored in looked:
        outcome = cache.read(key) if stored and key is not None else None
        if outcome is None:
            outcome = next(checked) if not stored else check_file(plan, item)
            if key is not None:
                cache.write(key, outcome)
        yield outcome


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
    plan: FilePlan, inputs: Inputs | Listed, jobs: int, cache: ResultCache | None = None
) -> Iterator[FileOutcome]:
    """Every input's outcome, in input order; in `jobs` processes when that pays. With a
    `cache`, a file whose entry is there is read from it, and the others are stored."""
    if cache is not None:
        yield from _through_cache(plan, inputs, jobs, cache)
        return
    if jobs <= 1 or not worth_processes(inputs, jobs):
        yield from (check_file(plan, item) for item in inputs)
        return
    # Imported here: a pre-commit run on a few files never starts a process.
    from concurrent.futures import Future, ProcessPoolExecutor

    size = max(1, min(64, len(inputs) // (jobs * 8)))
    items = iter(inputs)
    # Two batches per worker in flight: the inputs are walked as the workers take them, and
    # neither they nor the outcomes queue up whole (Executor.map would submit every batch).
    from concurrent.futures.process import BrokenProcessPool

    in_flight: deque[Future[list[FileOutcome]]] = deque()
    with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_ignores_interrupts) as pool:
        try:
            while batch := list(islice(items, size)):
                if in_flight:
                    in_flight.append(pool.submit(_check_batch, plan, batch))
                else:
                    # The first submit forks every worker: a Ctrl-C between a fork and the
                    # worker's initializer would kill that worker with a traceback, so the
                    # signal waits, blocked, until every worker ignores it.
                    with _interrupts_held():
                        in_flight.append(pool.submit(_check_batch, plan, batch))
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
def _check_batch(plan: FilePlan, batch: list[Input]) -> list[FileOutcome]:
    return [check_file(plan, item) for item in batch]
