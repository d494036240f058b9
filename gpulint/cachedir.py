"""Where gpulint keeps what it can reuse between runs (read profiles, validated configs)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


def default_cache_dir(environ: Mapping[str, str]) -> Path | None:
    """$XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint (where pre-commit and pip keep theirs);
    None when there is no such place."""
    xdg = environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says a relative value is to be ignored.
    if os.path.isabs(xdg):
        return Path(xdg) / "gpulint"
    try:
        return Path.home() / ".cache" / "gpulint"
    except RuntimeError:  # no HOME and no password entry: nowhere to keep a cache
        return None


#: Below this many files a run checks them faster than it hashes its plan and looks them up
#: in the results cache (gpulint.engine.cache): a pre-commit hook given a file or two is not
#: slowed down (its `context:` files, which are many, are looked up).
CACHE_MIN_FILES = 8

#: From this many bytes to hash on, OpenSSL's faster SHA-256 pays for loading it.
_LARGE = 1 << 20


def sha256(size: int = 0) -> Any:
    """A new SHA-256 hash object (as `hashlib.sha256()`) for about `size` bytes, without
    importing hashlib for small inputs where CPython has its own SHA-256 module.

    Every run with a config or a cached profile names its cache entries by a SHA-256, and
    importing hashlib loads OpenSSL's library, which costs such a run more than hashing a
    config or a small profile; a dump of megabytes hashes several times faster with OpenSSL.
    The digests are the same either way.
    """
    if size >= _LARGE:
        from hashlib import sha256 as openssl

        return openssl()
    # Chosen by version: an import that fails is tried again, through sys.path, at every call.
    try:
        if sys.version_info >= (3, 12):
            from _sha2 import sha256 as new
        else:
            from _sha256 import sha256 as new
    except ImportError:  # not CPython
        from hashlib import sha256 as new
    return new()


def cache_dir(given: str | None, use_cache: bool = True) -> Path | None:
    """The cache directory a run uses: `given` (--cache-dir), else the default; None with
    --no-cache."""
    if not use_cache:
        return None
    return Path(given) if given else default_cache_dir(os.environ)


def untrusted(info: os.stat_result) -> str | None:
    """Why a file or directory with this stat must not be trusted, or None: it belongs to
    another user (root is trusted, as git's safe.directory does), or it is a directory every
    user may write to without the sticky bit (anyone could replace what it holds). A group's
    write permission is the owner's choice (a umask of 002 gives it to the user's own group)."""
    import stat

    if info.st_uid not in (os.geteuid(), 0):
        return "belongs to another user"
    writable = info.st_mode & stat.S_IWOTH
    if stat.S_ISDIR(info.st_mode) and writable and not info.st_mode & stat.S_ISVTX:
        return "is writable by other users"
    return None


def untrusted_place(path: str | os.PathLike[str]) -> str | None:
    """`path: why` when the file or directory `path`, or the directory holding it, must not
    be trusted (see untrusted); None when both may be, or `path` is not there."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    why = untrusted(info)
    if why is not None:
        return f"{os.fspath(path)} {why}"
    parent = os.path.dirname(os.path.abspath(path))
    try:
        holder = os.stat(parent)
    except OSError:
        return None
    why = untrusted(holder)
    return None if why is None else f"{os.fspath(path)} is in {parent}, which {why}"


# Entries are opened relative to the cache directory, never through a symlink at the last step.
SAFE_OPEN = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# https://bford.info/cachedir/: backup tools skip a directory holding this file.
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by gpulint.\n"
)


def own_directory(path: Path | str, parent: int | None = None) -> int:
    """A descriptor of the directory `path` (relative to `parent`, never through a symlink
    there), if it is the user's own; raises OSError otherwise. The caller closes it."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NONBLOCK
    descriptor = os.open(path, flags | (_NOFOLLOW if parent is not None else 0), dir_fd=parent)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise PermissionError(f"{path}: not a directory of the user's own")
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@contextlib.contextmanager
def open_own_directory(path: Path | str, parent: int | None = None) -> Iterator[int]:
    """own_directory(path, parent), closed when the block ends."""
    descriptor = own_directory(path, parent)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


def read_own_file(name: str, directory: int) -> bytes | None:
    """The bytes of `name` in `directory` if it is a regular file of the user's own.

    Opened non-blocking: a FIFO planted under the name returns at once, and is refused.
    """
    import stat

    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=directory)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None
        data = stream.read()
        # Marked used (`sweep`), once a day at most: a run reading thousands of entries
        # writes nothing.
        if _MARKS_USED and time.time() - info.st_mtime > _DAY:
            with contextlib.suppress(OSError):
                os.utime(descriptor)
        return data


def create_new(directory: int, name: str, data: bytes) -> None:
    """Create `name` in `directory` with `data`; nothing when anything (a symlink too) is there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    try:
        descriptor = os.open(name, flags, 0o600, dir_fd=directory)
    except FileExistsError:
        return
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)


def write_atomically(directory: Path, entries: str, name: str, data: bytes) -> None:
    """Write `data` as `name` in the `entries` folder of the cache `directory`: to a temporary
    file first, then renamed, so no reader sees half an entry."""
    if not directory.is_dir():
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open_own_directory(directory) as root:
        try:
            os.mkdir(entries, 0o700, dir_fd=root)
        except FileExistsError:
            pass
        else:
            create_new(root, "CACHEDIR.TAG", CACHEDIR_TAG.encode())
            create_new(root, ".gitignore", b"*\n")
        with open_own_directory(entries, root) as folder:
            # os.urandom, not the secrets module: that imports hashlib, which loads OpenSSL.
            temporary = f".{os.urandom(8).hex()}.tmp"
            try:
                create_new(folder, temporary, data)
                os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise


#: The folders of the cache directory, each written by one module: a marker per config that
#: validated (gpulint.config), the index of context files (gpulint.engine.known), read
#: profiles (gpulint.profile.cache), renders (gpulint.render.cache), per-file results
#: (gpulint.engine.cache), each release's schemas (gpulint.validation.kube), and the values
#: files of the renders that locate a values line (gpulint.render.locate).
CONFIGS, FILES, PROFILES, RENDERS, RESULTS, SCHEMAS, VALUES = (
    "configs",
    "files",
    "profiles",
    "renders",
    "results",
    "schemas",
    "values",
)

#: An entry not read or written for this many days is removed (`sweep`).
UNUSED_DAYS = 30
_DAY = 86400
#: The folders whose entries are named by a digest of what they were made from, so that a
#: change of config, profile, manifest or gpulint version leaves the old ones unused.
SWEPT_FOLDERS = (CONFIGS, FILES, PROFILES, RENDERS, RESULTS, VALUES)
#: Every folder: a run reads from each without checking who may write to it, so a cache
#: whose folders are not all the user's own is not used (cache_problem).
FOLDERS = (*SWEPT_FOLDERS, SCHEMAS)
#: What sweep() removes: entries (a SHA-256, and a suffix) and temporary files of writes that
#: were cut short; nothing else, whatever directory `--cache-dir` names.
#: (A string: only a run that sweeps compiles it.)
_SWEPT_NAME = r"[0-9a-f]{64}(\.[a-z]+)?|\.[0-9a-f]{16}\.tmp"
_SWEPT_MARK = ".swept"


def cache_problem(directory: Path) -> str | None:
    """Why the cache in `directory` must not be used, or None.

    A directory that does not exist yet is fine: it is created, for the user alone.
    """
    import stat

    if not SAFE_OPEN:
        return "this platform cannot open cache files without following symlinks"
    try:
        info = os.stat(directory)
    except OSError:
        return None  # created on the first write, or not writable: entries are then skipped
    if not stat.S_ISDIR(info.st_mode):
        return f"cache directory {directory} is not a directory"
    if info.st_uid != os.geteuid():
        return f"cache directory {directory} belongs to another user"
    if untrusted(info) is not None:
        return f"cache directory {directory} is writable by other users"
    parent = os.path.dirname(os.path.abspath(directory))
    with contextlib.suppress(OSError):
        if untrusted(os.stat(parent)) is not None:
            return f"cache directory {directory} is in {parent}, which is writable by other users"
    # Every folder's entries are read with no check of their own: its directory must be the
    # user's alone.
    for name in FOLDERS:
        try:
            entries = os.lstat(directory / name)
        except OSError:
            continue
        if not stat.S_ISDIR(entries.st_mode) or entries.st_uid != os.geteuid():
            return f"{directory / name} is not a directory of the user's own"
        if entries.st_mode & stat.S_IWOTH:
            return f"{directory / name} is writable by other users"
    return None


#: What the platform must offer: an entry's time set through its descriptor (to mark it
#: used), and a folder listed, and its entries stated, touched and removed, through the
#: folder's descriptor without following a symlink (to sweep). Without them, nothing is.
_MARKS_USED = os.utime in os.supports_fd
_SWEEPS = (
    _MARKS_USED
    and os.scandir in os.supports_fd
    and {os.stat, os.utime, os.unlink} <= os.supports_dir_fd
    and {os.stat, os.utime} <= os.supports_follow_symlinks
)


def sweep(directory: Path, now: float | None = None) -> None:
    """Remove the entries of the cache `directory` that no run read or wrote for UNUSED_DAYS
    (a read marks an entry used, `read_own_file`), at most once a day: a cache kept across
    upgrades and changes of config or profile would otherwise grow without end. Nothing
    fails a run: what cannot be removed stays."""
    if not _SWEEPS:
        return
    import re
    import stat

    now = time.time() if now is None else now
    with contextlib.suppress(OSError), open_own_directory(directory) as root:
        try:
            marked = os.stat(_SWEPT_MARK, dir_fd=root, follow_symlinks=False).st_mtime
        except FileNotFoundError:
            marked = None
        if marked is not None and now - marked < _DAY:
            return
        # Marked first: runs started meanwhile do not sweep too.
        if marked is None:
            create_new(root, _SWEPT_MARK, b"")
        else:
            os.utime(_SWEPT_MARK, dir_fd=root, follow_symlinks=False)
        oldest = now - UNUSED_DAYS * _DAY
        for folder in SWEPT_FOLDERS:
            with contextlib.suppress(OSError), open_own_directory(folder, root) as entries:
                for entry in os.scandir(entries):
                    if not re.fullmatch(_SWEPT_NAME, entry.name):
                        continue
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        # A write cut short is left a day, not a month.
                        since = now - _DAY if entry.name.endswith(".tmp") else oldest
                        if stat.S_ISREG(info.st_mode) and info.st_mtime < since:
                            os.unlink(entry.name, dir_fd=entries)
