"""Context files known by what their bytes were when last read: a pre-commit run given one
file reads the thousands of unchanged context files again only to learn that they did not
change. The index keeps, per file, its stat (device, inode, size, modification and change
times, in nanoseconds), the SHA-256 of its bytes and which of the words the runs look for
(`read_once`) they hold; a file whose stat is the same is known without being read, and its
cache entries are found by that digest (`ResultCache.key_of`).

Only regular files are indexed (a symlink, or a file reached through a directory that links out
of the tree, is read, and judged, each time). The stat is
trusted as git trusts its index: the change time cannot be set back by a user,
and a file recorded within `_RACY_NS` of being written is not recorded at all (a write in
the same clock tick as the read would leave its stat unchanged). The index lives under
`files/` of the cache directory, one per project root, with the cache's trust rules (read
without following symlinks, only the user's own regular files, only plain values
unpickled; anything else is read as no index).
"""

from __future__ import annotations

import contextlib
import io
import os
import time
from collections.abc import Sequence
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import Any

from gpulint.cachedir import FILES, sha256
from gpulint.filetypes import link_out_of_tree
from gpulint.loader import read_bytes
from gpulint.views import NamedTuple

#: Raised when what the index holds changes.
INDEX_FORMAT = 2
#: A file changed less than this before it was read is not recorded (git's "racily clean").
_RACY_NS = 2_000_000_000
#: An index holding this many more entries than a run looked up is rewritten with its own.
_SPARE = 4096


class KnownFile(NamedTuple):
    """A context file the index knows: its bytes are read only when a cache entry for them is
    missing (`read`)."""

    name: str
    digest: bytes  # SHA-256 of its bytes
    words: frozenset[bytes]  # those of the index's words its bytes hold

    def names_any(self, words: Sequence[bytes]) -> bool:
        """Whether its bytes hold any of `words` (each one of the index's)."""
        return not self.words.isdisjoint(words)

    def read(self) -> bytes | None:
        """The file's bytes if they are still those of `digest`; None otherwise."""
        data = read_bytes(Path(self.name))
        if isinstance(data, OSError) or content_digest(data) != self.digest:
            return None
        return data


def content_digest(data: bytes) -> bytes:
    """The SHA-256 of `data`, as cache keys name a file's bytes."""
    digest = sha256(len(data))
    digest.update(data)
    return bytes(digest.digest())


_Stat = tuple[int, int, int, int, int]
#: Its stat, the digest of its bytes, and the index's words it holds (bit n: word n).
_Entry = tuple[_Stat, bytes, int]


class FileIndex:
    """The index of one project root, as read at the start of a run; `write` stores what the
    run learnt."""

    def __init__(self, directory: Path, root: str, words: Sequence[bytes]) -> None:
        self.directory = directory
        self.words = tuple(words)
        header = repr((INDEX_FORMAT, root, self.words)).encode("utf-8", "surrogateescape")
        digest = sha256()
        digest.update(header)
        self._name = f"{digest.hexdigest()}.pickle"
        self._entries = self._read()
        self._learnt: dict[str, _Entry] = {}
        self._held: dict[int, frozenset[bytes]] = {}
        self._directories: dict[str, bool] = {}  # whether a directory links out of its tree
        self._seen = 0

    def known(self, name: str, info: os.stat_result | None = None) -> KnownFile | bytes | OSError:
        """The file `name` as the index knows it, else its bytes read (and learnt), or why
        they cannot be read (as `read_bytes`). `info`: its lstat, when the walk took it."""
        self._seen += 1
        if info is None:
            try:
                info = os.lstat(name)
            except (OSError, ValueError) as exc:
                return exc if isinstance(exc, OSError) else OSError(str(exc))
        if not S_ISREG(info.st_mode) or self._out_of_tree(name, info.st_mode):
            # A symlink (or anything but a regular file), or a file named through a directory
            # that links out of the tree, is read each time: whether it may be read at all
            # (`gpulint.filetypes.open_input`) is asked each time too.
            return read_bytes(Path(name))
        stat = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        entry = self._entries.get(name)
        if entry is not None and entry[0] == stat:
            held = self._held.get(entry[2])
            if held is None:  # few files differ in which words they hold
                held = self._held[entry[2]] = frozenset(
                    word for n, word in enumerate(self.words) if entry[2] >> n & 1
                )
            return KnownFile(name, entry[1], held)
        data = read_bytes(Path(name))
        if isinstance(data, OSError):
            return data
        recent = time.time_ns() - _RACY_NS
        if len(data) == info.st_size and max(info.st_mtime_ns, info.st_ctime_ns) < recent:
            found = sum(1 << n for n, word in enumerate(self.words) if word in data)
            self._learnt[name] = (stat, content_digest(data), found)
        return data

    def _out_of_tree(self, name: str, mode: int) -> bool:
        """Whether `name` (of lstat `mode`) leads out of its tree through a symlink
        (`link_out_of_tree`); asked once per directory for the files that are no symlink."""
        if S_ISLNK(mode):
            return link_out_of_tree(name, mode) is not None
        directory = os.path.dirname(name)
        found = self._directories.get(directory)
        if found is None:
            found = self._directories[directory] = link_out_of_tree(name, mode) is not None
        return found

    def write(self) -> None:
        """Store the entries the run learnt (nothing when it learnt none)."""
        if not self._learnt:
            return
        from gpulint.cachedir import write_atomically

        entries = self._entries
        if len(entries) > self._seen + _SPARE:  # files gone long ago are let go
            entries = {}
        entries = {**entries, **self._learnt}
        stream = io.BytesIO()
        with contextlib.suppress(Exception):
            _pickler(stream).dump(entries)
            write_atomically(self.directory, FILES, self._name, stream.getvalue())

    def _read(self) -> dict[str, _Entry]:
        from gpulint.cachedir import open_own_directory, read_own_file

        try:
            with (
                open_own_directory(self.directory) as root,
                open_own_directory(FILES, root) as folder,
            ):
                data = read_own_file(self._name, folder)
            if data is None:
                return {}
            entries = _plain_unpickler(io.BytesIO(data)).load()
        # Anything may be in a file on disk; whatever it is, every file is read instead.
        except Exception:
            return {}
        return entries if _well_formed(entries) else {}


def _pickler(stream: io.BytesIO) -> Any:
    """A pickler of plain values to `stream` (the C one: imported by a run that writes)."""
    try:
        from _pickle import Pickler
    except ImportError:  # not CPython
        from pickle import Pickler
    return Pickler(stream, protocol=5)


def _plain_unpickler(stream: io.BytesIO) -> Any:
    """An unpickler that builds plain values only: an index holds no class."""
    try:
        from _pickle import Unpickler, UnpicklingError
    except ImportError:  # not CPython
        from pickle import Unpickler, UnpicklingError

    class PlainUnpickler(Unpickler):  # type: ignore[misc,valid-type]
        def find_class(self, module: str, name: str) -> Any:
            raise UnpicklingError(f"{module}.{name}: an index holds no class")

    return PlainUnpickler(stream)


def _well_formed(entries: object) -> bool:
    """Whether `entries` has the index's shape (name: ((5 ints), digest, words held))."""
    if not isinstance(entries, dict):
        return False
    for name, entry in entries.items():
        if not (type(name) is str and type(entry) is tuple and len(entry) == 3):
            return False
        stat, digest, found = entry
        if not (
            type(stat) is tuple
            and len(stat) == 5
            and type(stat[0]) is type(stat[1]) is type(stat[2]) is int
            and type(stat[3]) is type(stat[4]) is int
            and type(digest) is bytes
            and len(digest) == 32
            and type(found) is int
        ):
            return False
    return True
