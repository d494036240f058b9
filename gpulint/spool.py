"""Findings kept on disk while a large run goes on.

A run with few findings never fills a batch: it neither opens a file nor imports tempfile and
pickle, which a pre-commit run would otherwise pay for at start.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from typing import IO

from gpulint.findings import Finding


def _sort_key(finding: Finding) -> tuple[str, int, int, str]:
    return finding.sort_key


class FindingSpool:
    """Findings kept pickled in a temporary file, not in memory, and read back in report order.

    A run over a large corpus reports thousands of findings; written out one at a time they
    need memory for one at a time. The engine adds each file's findings as the file is checked,
    in report order (`extend`), and the few it finds at the end in any order (`add_late`);
    iterating merges the two. It can be iterated any number of times.
    """

    # Findings pickled together: fewer, larger records read back faster.
    _BATCH = 512

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None  # opened by the first full batch
        self._records: list[tuple[int, int]] = []  # (offset, length) of each pickled batch
        self._pending: list[Finding] = []
        self._late: list[Finding] = []
        self._count = 0
        self._in_memory = False  # set when the temporary file cannot be written

    def extend(self, findings: Iterable[Finding]) -> None:
        """Add findings that come after every finding added so far, in report order."""
        for finding in findings:
            self._pending.append(finding)
            self._count += 1
        if len(self._pending) >= self._BATCH:
            self._flush()

    def add_late(self, findings: Iterable[Finding]) -> None:
        """Add findings, in any order, that belong anywhere in the report."""
        for finding in findings:
            self._late.append(finding)
            self._count += 1

    def _flush(self) -> None:
        if not self._pending or self._in_memory:
            return
        import pickle
        import tempfile

        data = pickle.dumps(tuple(self._pending), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            if self._file is None:
                # Unbuffered: a full disk fails the write, not a later seek to read back.
                self._file = tempfile.TemporaryFile(buffering=0)  # noqa: SIM115 - as the spool
            self._file.seek(0, 2)
            offset = self._file.tell()
            unwritten = memoryview(data)
            while unwritten:
                written = self._file.write(unwritten)
                if not written:
                    raise OSError("no progress writing the spool")
                unwritten = unwritten[written:]
        except OSError:
            # No room in the temporary directory: the findings stay in memory, as a run
            # with few findings keeps them; what was written is read back as before.
            self._in_memory = True
            return
        self._records.append((offset, len(data)))
        self._pending = []

    def _in_order(self) -> Iterator[Finding]:
        if self._file is not None:
            yield from self._batches(self._file)
        yield from list(self._pending)

    def _batches(self, file: IO[bytes]) -> Iterator[Finding]:
        import pickle

        for offset, length in self._records:
            # Seek before each read: another iteration may have moved the file position.
            file.seek(offset)
            yield from pickle.loads(file.read(length))

    def __iter__(self) -> Iterator[Finding]:
        return heapq.merge(self._in_order(), sorted(self._late, key=_sort_key), key=_sort_key)

    def __len__(self) -> int:
        return self._count

    def close(self) -> None:
        """Delete the temporary file, if there is one."""
        if self._file is not None:
            self._file.close()
