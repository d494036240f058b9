"""Per-file results kept between runs: a file whose bytes, and everything its check depends
on, did not change is not parsed or checked again.

An entry is one file's `FileOutcome` (its findings, suppression markers, and what the
corpus-wide rules keep of it), pickled under a SHA-256 of:

- the file's name and bytes (findings name the file, so the same bytes elsewhere are another
  entry);
- gpulint's version and a fingerprint of its installed sources (size and modification time
  of each module and data file: an upgraded or edited gpulint never reads an older entry);
- the plan the file is checked by: the per-file and corpus-wide rules that run, the config
  (select, ignores, severities, variables, workload shapes, Kubernetes version: every field),
  the profile, the assumed namespace, and the knowledge objects (quotas, LimitRanges,
  PriorityClasses, DRA objects, CRDs) of the other files, each digested field by field.

The profile and the knowledge objects are not stored in an entry: references to them are
written as their index and put back on reading, so the corpus pass sees the run's own objects.

Entries live under `results/` of the profile cache's directory and share its trust rules
(`gpulint.cachedir.cache_problem`): a directory of another user's, or one others may
write to, is not used; entries are opened without following symlinks and must be regular
files of the user's own. Unpickling builds only gpulint's own classes (and Decimal and
`pathlib` paths); anything else is read as no entry, and the file is checked as without a
cache. Renders (charts, overlays) are not cached here: their findings are traced to the
files they came from, which the render cache (`gpulint.render.cache`) keys.

Beside a context file's entry, its summary (`gpulint.engine.summaries`: what rules that
summarize keep of it, without trees) is stored under a key of its own; and what a run read of
many entries (the context outcomes, the knowledge objects) is stored together as a `Pack`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import io
import os
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from gpulint import __version__
from gpulint.cachedir import CACHE_MIN_FILES, RESULTS, sha256
from gpulint.engine.known import content_digest

if TYPE_CHECKING:
    from gpulint.engine.files import FileOutcome
    from gpulint.engine.plan import FilePlan
    from gpulint.engine.record import Run
    from gpulint.model import Document

try:
    # The C pickler and unpickler: a warm run does not import the pickle module's Python code.
    from _pickle import Pickler, Unpickler, UnpicklingError
except ImportError:  # not CPython
    from pickle import Pickler, Unpickler, UnpicklingError

#: Raised when the way entries are written changes.
RESULTS_FORMAT = 3
_SUFFIX = ".pickle"
#: Classes an entry may hold: these of the standard library, and gpulint's own as they are
#: found (each checked once).
_ALLOWED: dict[tuple[str, str], type] = {
    ("decimal", "Decimal"): Decimal,
    ("pathlib", "PosixPath"): Path,
    ("pathlib", "WindowsPath"): Path,
    ("pathlib", "PurePosixPath"): PurePath,
}


class ResultCache:
    """Where per-file results are kept, and the digest of the plan they were checked by."""

    def __init__(self, directory: Path, plan: FilePlan) -> None:
        self.directory = directory
        self.plan = plan
        digest = sha256()
        digest.update(repr((__version__, RESULTS_FORMAT, _sources_fingerprint())).encode())
        digest.update(plan_digest(plan))
        self._prefix = digest.digest()
        # The run's own objects that entries refer to by index, not by value.
        shared: list[object] = []
        if plan.profile is not None:
            shared.append(plan.profile)
            shared.extend(plan.profile.pools)
        for document in plan.knowledge:
            shared.extend((document, document.file))
        self._shared = shared
        self._index = {id(item): number for number, item in enumerate(shared)}
        self._folder: int | None = None

    def key(self, name: str, data: bytes) -> str:
        """The entry of the file `name` holding `data`."""
        return self.key_of(name, content_digest(data))

    def key_of(self, name: str, content: bytes) -> str:
        """The entry of the file `name` whose bytes have the SHA-256 `content`
        (`gpulint.engine.known`: a file known by its stat is not read to find its entry)."""
        digest = sha256()
        digest.update(self._prefix)
        digest.update(name.encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(content)
        return digest.hexdigest()

    def has(self, key: str) -> bool:
        """Whether an entry is stored under `key` (read() says whether it is usable)."""
        return os.path.lexists(self.directory / RESULTS / f"{key}{_SUFFIX}")

    def read(self, key: str) -> FileOutcome | None:
        """The outcome stored under `key`; None when absent or unusable."""
        from gpulint.engine.files import FileOutcome

        stored = self.load(key)
        return stored if isinstance(stored, FileOutcome) else None

    def load(self, key: str) -> Any:
        """What is stored under `key`; None when absent or unusable."""
        from gpulint.cachedir import read_own_file

        try:
            data = read_own_file(f"{key}{_SUFFIX}", self._entries())
            if data is None:
                return None
            return _ResultUnpickler(data, self._shared).load()
        # Anything may be in a file on disk; whatever it is, the file is checked instead.
        except Exception:
            return None

    def _entries(self) -> int:
        """A descriptor of the entries' folder, opened (and its owner checked) at the first
        read: a run reading thousands of entries opens the two directories once, not per
        entry. Closed with the cache."""
        if self._folder is None:
            import weakref

            from gpulint.cachedir import open_own_directory, own_directory

            with open_own_directory(self.directory) as root:
                folder = own_directory(RESULTS, root)
            self._folder = folder
            weakref.finalize(self, os.close, folder)
        return self._folder

    def write(self, key: str, outcome: object) -> None:
        """Store `outcome` under `key`; nothing when it or the cache cannot be written."""
        from gpulint.cachedir import write_atomically

        with contextlib.suppress(Exception):
            data = self.pickled(outcome)
            write_atomically(self.directory, RESULTS, f"{key}{_SUFFIX}", data)

    def pickled(self, outcome: object) -> bytes:
        """`outcome` as an entry holds it."""
        stream = io.BytesIO()
        pickler = Pickler(stream, protocol=5)
        index = self._index
        # References to the profile, its pools and the knowledge objects are written by index.
        pickler.persistent_id = lambda obj: index.get(id(obj))  # type: ignore[method-assign]
        pickler.dump(outcome)
        return stream.getvalue()


class Pack:
    """What the last runs read of many entries of one cache, in one entry: a pre-commit run
    with `context:` reads thousands of context files' outcomes (`gpulint.engine.context`) and
    hundreds of their knowledge objects (`gpulint.engine.plan`), and reading them as one
    pickle costs a fraction of reading each (one file, each class looked up once). Keyed by
    what keys their own entries (a file's name and the digest of its bytes, or the entry's
    key), so a value is taken from it only for the same file, bytes and plan; a key not in the
    pack is read from its own entry."""

    def __init__(self, cache: ResultCache, label: str, holds: Callable[[object], bool]) -> None:
        self._cache = cache
        digest = sha256()
        digest.update(cache._prefix)
        digest.update(label.encode("utf-8", "surrogateescape"))
        self._name = digest.hexdigest()
        stored = cache.load(self._name)
        if not isinstance(stored, dict) or not all(
            _plain_key(key) and holds(value) for key, value in stored.items()
        ):
            stored = {}
        self._stored: dict[PackKey, Any] = stored
        self._used: set[PackKey] = set()
        self._added: dict[PackKey, object] = {}

    def read(self, key: PackKey) -> Any:
        """What is packed under `key`; None when nothing is."""
        found = self._stored.get(key)
        if found is not None:
            self._used.add(key)
        return found

    def add(self, key: PackKey, value: object) -> None:
        """Pack `value` under `key` when the pack is written."""
        self._added[key] = value
        self._used.add(key)

    def write(self) -> None:
        """Store the pack when the run added to it: what it read and added, and what it held
        of other runs (another file given) while that is not much more than the run read."""
        if not self._added:
            return
        kept = self._stored
        if len(kept) > len(self._used) + _PACK_SPARE:
            kept = {key: found for key, found in kept.items() if key in self._used}
        self._cache.write(self._name, {**kept, **self._added})


#: What a pack's values are found by: an entry's key, or a file's name and the digest of
#: its bytes.
PackKey = str | tuple[str, bytes]


def _plain_key(key: object) -> bool:
    """Whether `key` is a PackKey."""
    return type(key) is str or (
        type(key) is tuple and len(key) == 2 and type(key[0]) is str and type(key[1]) is bytes
    )


#: A pack holding this many more values than a run read is rewritten with the run's own.
_PACK_SPARE = 1024


class KnowledgeCache(ResultCache):
    """Where the knowledge objects (quotas, LimitRanges, PriorityClasses, DRA objects, CRDs)
    read from each file are kept: they depend on the file's name and bytes alone."""

    def __init__(self, directory: Path, root: str = "") -> None:
        self.directory = directory
        digest = sha256()
        header = (__version__, RESULTS_FORMAT, "knowledge", _sources_fingerprint())
        digest.update(repr(header).encode())
        self._prefix = digest.digest()
        self._shared = []
        self._index = {}
        self._folder = None

        # The knowledge objects the last runs of the project `root` read.
        self.pack = Pack(self, f"knowledge pack of {root}", _documents)

    def documents(self, key: str) -> tuple[Document, ...] | None:
        """The knowledge objects stored under `key`; None when absent or unusable."""
        stored = self.pack.read(key)
        if stored is None:
            stored = self.load(key)
            if not _documents(stored):
                return None
            self.pack.add(key, stored)
        return stored

    def store(self, key: str, documents: tuple[Document, ...]) -> None:
        """Store the knowledge objects of the file whose entry is `key`."""
        self.write(key, documents)
        self.pack.add(key, documents)


def _documents(value: object) -> bool:
    """Whether `value` is what a knowledge entry holds: a file's knowledge objects."""
    from gpulint.model import Document

    return isinstance(value, tuple) and all(isinstance(d, Document) for d in value)


class _ResultUnpickler(Unpickler):
    """Builds only gpulint's classes (and a few of the standard library's values)."""

    def __init__(self, data: bytes, shared: list[object]) -> None:
        super().__init__(io.BytesIO(data))
        self._shared = shared

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not int or not 0 <= pid < len(self._shared):
            raise UnpicklingError("unknown reference")
        return self._shared[pid]

    def find_class(self, module: str, name: str) -> Any:
        allowed = _ALLOWED.get((module, name))
        if allowed is not None:
            return allowed
        if module == "gpulint" or module.startswith("gpulint."):
            import importlib
            import sys

            loaded = sys.modules.get(module) or importlib.import_module(module)
            found = getattr(loaded, name, None)
            if isinstance(found, type) and found.__module__ == module:
                # A run reads thousands of entries naming the same few classes.
                _ALLOWED[module, name] = found
                return found
        raise UnpicklingError(f"{module}.{name} is not a gpulint class")


def plan_digest(plan: FilePlan) -> bytes:
    """What a file's outcome depends on besides its bytes, as bytes to hash: every field of
    the plan (rules by their codes, the knowledge objects by the digest of their files' bytes)
    but where the cache is and whether verdicts are kept."""
    from gpulint.rules import Rule

    def plain(value: Any) -> Any:
        if isinstance(value, Rule):
            return value.code
        if isinstance(value, tuple) and value and all(isinstance(v, Rule) for v in value):
            return tuple(v.code for v in value)
        return value

    parts = [
        (name, plain(getattr(plan, name))) for name in plan._fields if name not in _NOT_DIGESTED
    ]
    out: list[str] = []
    _canonical(parts, out, set())
    return "\x1f".join(out).encode("utf-8", "surrogateescape")


#: Plan fields an outcome does not depend on, or that another field stands for.
_NOT_DIGESTED = frozenset({"knowledge", "cache_directory", "place_kept"})


def _canonical(value: Any, out: list[str], active: set[int]) -> None:
    """`value` written field by field in an order that does not depend on the process (set
    order and object addresses do): equal values give equal text."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, Decimal)):
        out.append(f"{type(value).__name__}:{value!r}")
        return
    if isinstance(value, enum.Enum):
        out.append(f"enum:{type(value).__qualname__}.{value.name}")
        return
    if isinstance(value, PurePath):
        out.append(f"path:{value}")
        return
    if callable(value) and not isinstance(value, type) and not hasattr(value, "__dict__"):
        out.append(f"callable:{getattr(value, '__qualname__', type(value).__qualname__)}")
        return
    if id(value) in active:  # a cycle: the same object again
        out.append("cycle")
        return
    active.add(id(value))
    try:
        out.append(f"<{type(value).__module__}.{type(value).__qualname__}")
        if isinstance(value, dict):
            items = []
            for key, item in value.items():
                written: list[str] = []
                _canonical(key, written, active)
                _canonical(item, written, active)
                items.append("\x1e".join(written))
            out.extend(sorted(items))
            for slot in getattr(type(value), "__slots__", ()):
                out.append(f"@{slot}")
                _canonical(getattr(value, slot, None), out, active)
        elif isinstance(value, (set, frozenset)):
            members = []
            for item in value:
                written = []
                _canonical(item, written, active)
                members.append("\x1e".join(written))
            out.extend(sorted(members))
        elif isinstance(value, (list, tuple)):
            for item in value:
                _canonical(item, out, active)
            for slot in getattr(type(value), "__slots__", ()):
                out.append(f"@{slot}")
                _canonical(getattr(value, slot, None), out, active)
        elif dataclasses.is_dataclass(value):
            for spec in dataclasses.fields(value):
                out.append(f".{spec.name}")
                _canonical(getattr(value, spec.name), out, active)
        elif hasattr(value, "__match_args__") and hasattr(value, "__dict__"):
            # A gpulint.views.frozen_view: its fields, not the cached properties computed so far.
            for name in type(value).__match_args__:
                out.append(f".{name}")
                _canonical(getattr(value, name, None), out, active)
        elif hasattr(value, "__dict__"):
            for name, item in sorted(vars(value).items()):
                out.append(f".{name}")
                _canonical(item, out, active)
        else:
            # Nothing to tell one such value from another: an entry is never reused for it.
            out.append(f"unique:{id(value)}:{os.getpid()}")
        out.append(">")
    finally:
        active.discard(id(value))


def _sources_fingerprint() -> tuple[tuple[str, int, int], ...]:
    """Size and modification time of every file of the installed gpulint package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found: list[tuple[str, int, int]] = []
    _fingerprint_into(package, "", found)
    return tuple(found)


def _fingerprint_into(folder: str, prefix: str, found: list[tuple[str, int, int]]) -> None:
    """Add the files of `folder` (named `prefix` + name) and of its folders, in name order.

    A pre-commit run with `context:` starts by this walk: scandir's entries give each name
    and path without a join or a relpath per file (most of the walk's cost otherwise)."""
    try:
        with os.scandir(folder) as listed:
            entries = sorted(listed, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                if name != "__pycache__":
                    _fingerprint_into(entry.path, f"{prefix}{name}/", found)
            elif name.endswith((".py", ".json", ".yaml", ".txt")):
                info = entry.stat()
                found.append((prefix + name, info.st_size, info.st_mtime_ns))


def trusted_directory(record: Run) -> Path | None:
    """The cache directory of `record` if it keeps one that can be trusted (else
    `record.warn` is told why)."""
    if record.results_cache is None:
        return None
    from gpulint.cachedir import cache_problem

    directory = Path(record.results_cache)
    problem = cache_problem(directory)
    if problem is not None:
        if record.warn is not None:
            record.warn(f"{problem}; running without a cache")
        return None
    from gpulint.cachedir import sweep

    sweep(directory)  # entries unused for a month go, once a day at most
    return directory


def result_cache(plan: FilePlan, files: int) -> ResultCache | None:
    """The results cache for the `files` files checked by `plan`, when its run keeps one and
    they are enough for it to pay; None otherwise."""
    if plan.cache_directory is None or files < CACHE_MIN_FILES:
        return None
    return ResultCache(plan.cache_directory, plan)
