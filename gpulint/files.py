"""Reading an input file a user names (a profile, a dump): one message for each way it fails."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from gpulint.errors import GpulintError
from gpulint.yamltree import byte_position

#: How much of a large input hash_input holds at a time.
_CHUNK = 1 << 20


def read_input(path: str, what: str, root: str | None = None) -> bytes:
    """The bytes of `path` (relative to `root` when given); a missing or unreadable file is a
    GpulintError naming `path` as given and `what` it is."""
    with _reading(path, what), open(_input(path, root), "rb", closefd=True) as stream:
        return stream.read()


def _input(path: str, root: str | None) -> int:
    """A descriptor of `path` (relative to `root`) to read: never a device, a FIFO of the
    tree or a socket (gpulint.filetypes)."""
    from gpulint.filetypes import open_input

    return open_input(path if root is None else os.path.join(root, path))


@contextmanager
def _reading(path: str, what: str) -> Iterator[None]:
    """An OSError reading `path` as a GpulintError naming `path` as given and `what` it is."""
    try:
        yield
    except FileNotFoundError:
        raise GpulintError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise GpulintError(f"{path}: cannot read {what}: {exc.strerror}") from None


def hash_input(
    path: str, what: str, new_hash: Callable[[int], Any], root: str | None = None
) -> tuple[Any, bytes | None]:
    """`new_hash(size)` fed the bytes of `path` (relative to `root` when given), and those
    bytes when the file is at most a megabyte or not a regular file (a pipe cannot be read
    again); a larger file is read a megabyte at a time and never held whole. Fails as
    read_input does."""
    with _reading(path, what), open(_input(path, root), "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size <= _CHUNK:
            data = stream.read()
            digest = new_hash(len(data))
            digest.update(data)
            return digest, data
        digest = new_hash(info.st_size)
        buffer = memoryview(bytearray(_CHUNK))
        while size := stream.readinto(buffer):
            digest.update(buffer[:size])
        return digest, None


def decode_input(path: str, data: bytes) -> str:
    """`data` as text (a UTF-8 BOM dropped); GpulintError at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = byte_position(data, exc.start)
        raise GpulintError(f"{path}:{line}:{column}: not valid UTF-8; save it as UTF-8") from None
