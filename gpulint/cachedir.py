"""Where gpulint keeps what it can reuse between runs (read profiles, validated configs)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
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
