"""Profile inputs read before, kept as small pickles keyed by a hash of their bytes.

A kubectl dump of 5,000 nodes is 15 MB of YAML that takes seconds to parse, and a pre-commit
hook reads it again at every commit; what it says about the cluster (its pools, quotas and
priorities) is a few kilobytes. The cache keeps those facts per input file under a SHA-256 of
the file's bytes, the pool label, gpulint's version and the model the facts are made of (a
CRC-32 of its modules' sources), so a changed file, another `--pool-label`, or a gpulint whose
model differs never reads an entry it did not write.

An entry is the input's ProfileFacts pickled, without the file's name (the same bytes under
another name are the same entry). A hook reads it at every commit, so reading must cost little:
unpickling rebuilds the model objects in C, where decoding JSON field by field against the
type hints cost more than the rest of the cached run. A cache that cannot be read or written
never fails a run: the file is parsed as it would be without one. Only files that read without
error are stored.

The cache trusts nothing it did not write, since a `--cache-dir` may be shared: a directory
owned by another user, writable by others or in a directory others may write to without the
sticky bit, or whose `profiles/` or `renders/` is not the user's alone, is not used at all
(`cache_problem` says why); inside it, files are
opened relative to the directory without following symlinks, an entry that is not a regular
file of the user's own is ignored (a FIFO planted as an entry is never read, so it cannot
block), and the marker files are created only where nothing is. Where the platform cannot
open files that way (no `dir_fd`), no cache is used. Unpickling builds only the model's
classes and Decimal, never any other callable, and the result must be a list of ProfileFacts;
anything else is read as no entry.
"""

import binascii
import contextlib
import os
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpulint import __version__
from gpulint.cachedir import (
    PROFILES,
    cache_problem,
    default_cache_dir,
    open_own_directory,
    read_own_file,
    sha256,
    write_atomically,
)
from gpulint.profile.merge import PoolFacts, ProfileFacts
from gpulint.profile.model import ClusterProfile, Pool
from gpulint.views import NamedTuple

try:
    # The C unpickler that `pickle` re-exports: reading an entry does not import the pickle
    # module's Python code, which costs a run more than the rest of reading the entry.
    from _pickle import Unpickler, UnpicklingError
except ImportError:  # not CPython
    from pickle import Unpickler, UnpicklingError

#: Raised when the way entries are written changes; the classes' fields are hashed anyway.
CACHE_FORMAT = 2
_SUFFIX = ".pickle"


#: The modules whose classes an entry may hold: all that unpickling may build, besides
#: Decimal. gpulint.dra and gpulint.profile.objects are imported only for an entry that holds
#: their objects.
MODEL_MODULES = (
    "gpulint.dra",
    "gpulint.profile.merge",
    "gpulint.profile.model",
    "gpulint.profile.objects",
)


class ProfileCache(NamedTuple):
    """Where read profile inputs are kept."""

    directory: Path


def profile_cache(
    directory: str | None = None, warn: Callable[[str], None] | None = None
) -> ProfileCache | None:
    """The cache in `directory`, else in the default place; None when there is no such place,
    or when it cannot be trusted (then `warn` is told why)."""
    place = Path(directory) if directory else default_cache_dir(os.environ)
    if place is None:
        return None
    problem = cache_problem(place)
    if problem is not None:
        if warn is not None:
            warn(f"{problem}; running without a cache")
        return None
    return ProfileCache(place)


def entry_key(data: bytes, pool_label: str | None) -> str:
    """The name of the entry for a file of these bytes read with `pool_label`."""
    digest = entry_hash(len(data), pool_label)
    digest.update(data)
    return digest.hexdigest()


def entry_hash(size: int, pool_label: str | None) -> Any:
    """The hash whose digest, once it is fed a file's `size` bytes, is the name of the entry
    for that file read with `pool_label` (see entry_key)."""
    digest = sha256(size)
    header = (__version__, CACHE_FORMAT, pool_label)
    digest.update(repr(header).encode())
    digest.update(_layout())
    digest.update(_readers())
    digest.update(b"\0")
    return digest


def read_entry(cache: ProfileCache, key: str, path: str | None) -> list[ProfileFacts] | None:
    """The facts stored under `key`, as read from `path` (None: as they were stored, for an
    entry whose key holds the names); None when absent or unusable."""
    try:
        with (
            open_own_directory(cache.directory) as root,
            open_own_directory(PROFILES, root) as entries,
        ):
            data = read_own_file(f"{key}{_SUFFIX}", entries)
        if data is None:
            return None
        stored = _ModelUnpickler(data).load()
        if not isinstance(stored, list) or not stored or not all(map(_is_facts, stored)):
            return None
        return stored if path is None else [_with_path(item, path) for item in stored]
    # Anything may be in a file on disk; whatever it is, the run parses the input instead.
    except Exception:
        return None


def write_entry(cache: ProfileCache, key: str, path: str | None, facts: list[ProfileFacts]) -> None:
    """Store `facts`, read from `path` (None: as they are, names and all), under `key`;
    nothing when the cache cannot be written."""
    import pickle

    unnamed = facts if path is None else [_without_path(item, path) for item in facts]
    if any(item is None for item in unnamed):
        return
    # A value of no model class cannot be written or read back: the run goes on without an entry.
    with contextlib.suppress(OSError, pickle.PickleError, TypeError, AttributeError):
        data = pickle.dumps(unnamed, protocol=pickle.HIGHEST_PROTOCOL)
        if _ModelUnpickler(data).load() == unnamed:  # only what reads back as it was
            _write_atomically(cache.directory, f"{key}{_SUFFIX}", data)


class _ModelUnpickler(Unpickler):
    """Unpickles only the model's classes and Decimal: an entry can name no other callable."""

    def __init__(self, data: bytes) -> None:
        import io

        super().__init__(io.BytesIO(data))

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("decimal", "Decimal"):
            return Decimal
        if module in MODEL_MODULES:
            import importlib

            found = getattr(importlib.import_module(module), name, None)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise UnpicklingError(f"{module}.{name} is not a profile model class")


def _is_facts(item: object) -> bool:
    """A ProfileFacts whose profile and pool views are of their classes."""
    return (
        isinstance(item, ProfileFacts)
        and isinstance(item.profile, ClusterProfile)
        and isinstance(item.pools, tuple)
        and all(isinstance(view, PoolFacts) and isinstance(view.pool, Pool) for view in item.pools)
    )


def _write_atomically(directory: Path, name: str, data: bytes) -> None:
    """Write `data` as the entry `name`, so no reader sees half of it."""
    write_atomically(directory, PROFILES, name, data)


def _without_path(facts: ProfileFacts, path: str) -> ProfileFacts | None:
    """`facts` with the file's name taken out of its provenance; None if it is not where
    _with_path puts it back."""
    profile = facts.profile
    source = profile.provider_source
    if profile.sources != (path,) or (source is not None and not source.endswith(path)):
        return None
    prefix = None if source is None else source[: len(source) - len(path)]
    return facts._replace(profile=replace(profile, sources=(), provider_source=prefix))


def _with_path(facts: ProfileFacts, path: str) -> ProfileFacts:
    profile = facts.profile
    prefix = profile.provider_source
    source = None if prefix is None else prefix + path
    return facts._replace(profile=replace(profile, sources=(path,), provider_source=source))


def _layout() -> bytes:
    """What changes when the model does: a CRC-32 of the model modules' sources, else (a
    package without its sources) every field of every model class, with its declared type.

    Reading the sources spares a run importing gpulint.dra for a profile without DRA objects.
    They are three times a small profile's size: a checksum tells one version of them from
    another (nobody crafts a model to collide) at a tenth of what SHA-256 takes over them.
    """
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = []
    try:
        for module in MODEL_MODULES:
            name = os.path.join(package, *module.split(".")[1:]) + ".py"
            with open(name, "rb") as stream:
                sources.append(stream.read())
    except OSError:
        return model_fields().encode()
    return b"crc32:%08x" % binascii.crc32(b"".join(sources))


def _readers() -> bytes:
    """The name, size and time of every module that turns inputs into facts (gpulint/profile,
    gpulint/data): a change to an importer within one version, as in a checkout installed
    for development, leaves the entries it made unused. Stated, not read: a run reads a cached
    profile on every commit."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = []
    for folder in ("profile", "data"):
        with contextlib.suppress(OSError), os.scandir(os.path.join(package, folder)) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    with contextlib.suppress(OSError):
                        info = entry.stat()
                        found.append(f"{folder}/{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(sorted(found)).encode()


def model_fields() -> str:
    """Every field of every class of the model modules, with its declared type (as written:
    evaluating the annotations costs more than reading an entry)."""
    import importlib

    modules = [importlib.import_module(name) for name in MODEL_MODULES]
    return ";".join(
        f"{value.__qualname__}({','.join(f'{k}:{v}' for k, v in annotations.items())})"
        for module in modules
        for _, value in sorted(vars(module).items())
        if isinstance(value, type) and value.__module__ == module.__name__
        if (annotations := vars(value).get("__annotations__"))
    )
