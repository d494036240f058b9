"""Rendered streams kept on disk, keyed by everything that decides them.

A pre-commit run on an unchanged chart should not start helm. The key hashes the tool build
(path, size, mtime: see `tool_identity`), the command's flags, and the bytes of every file the
render reads (the chart or overlay tree, the values files). Entries live next to the profile
cache, under `renders/` of the same directory (`--cache-dir`, `$GPULINT_CACHE_DIR`, else
`$XDG_CACHE_HOME/gpulint` or `~/.cache/gpulint`). A cache that cannot be read or written never
fails a run: the chart is rendered as it would be without one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from gpulint import __version__
from gpulint.cachedir import RENDERS, open_own_directory, read_own_file, write_atomically


def render_key(parts: Sequence[str], files: Iterable[Path]) -> str:
    """A hash of `parts` (tool, flags) and of the names and bytes of `files`.

    Only regular files are read (the files were checked by gpulint.render.confine; a file
    replaced by a FIFO or a device since is hashed by its kind, never read).
    """
    digest = hashlib.sha256()
    for part in (__version__, *parts):
        digest.update(os.fsencode(part))
        digest.update(b"\0")
    for path in files:
        # fsencode: a file name that is not UTF-8 is hashed as the bytes it is.
        digest.update(os.fsencode(path))
        digest.update(b"\0")
        digest.update(_file_bytes(path))
        digest.update(b"\0")
    return digest.hexdigest()


def _file_bytes(path: Path) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO does not wait for a writer.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:  # a file that cannot be read still changes the key
        return f"<{exc.errno}>".encode()
    with os.fdopen(descriptor, "rb") as stream:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return f"<mode {mode:o}>".encode()
        try:
            return stream.read()
        except OSError as exc:
            return f"<{exc.errno}>".encode()


def read_render(cache_dir: Path | None, key: str) -> str | None:
    """The stream stored under `key`, or None (a file that is not the user's own, or not a
    regular file, is not read; a read marks the entry used, gpulint.cachedir.sweep)."""
    if cache_dir is None:
        return None
    try:
        with open_own_directory(cache_dir) as root, open_own_directory(RENDERS, root) as folder:
            data = read_own_file(f"{key}.yaml", folder)
        return None if data is None else data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def write_render(cache_dir: Path | None, key: str, text: str) -> None:
    """Store `text` under `key`; nothing when the cache cannot be written."""
    if cache_dir is None:
        return
    with contextlib.suppress(OSError, UnicodeEncodeError):
        write_atomically(cache_dir, RENDERS, f"{key}.yaml", text.encode("utf-8"))
