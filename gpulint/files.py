"""Reading an input file a user names (a profile, a dump): one message for each way it fails."""

from __future__ import annotations

from pathlib import Path

from gpulint.errors import GpulintError
from gpulint.yamltree import byte_position


def read_input(path: str, what: str, root: str | None = None) -> bytes:
    """The bytes of `path` (relative to `root` when given); a missing or unreadable file is a
    GpulintError naming `path` as given and `what` it is."""
    try:
        return (Path(path) if root is None else Path(root, path)).read_bytes()
    except FileNotFoundError:
        raise GpulintError(f"{path}: {what} file not found") from None
    except OSError as exc:
        raise GpulintError(f"{path}: cannot read {what}: {exc.strerror}") from None


def decode_input(path: str, data: bytes) -> str:
    """`data` as text (a UTF-8 BOM dropped); GpulintError at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = byte_position(data, exc.start)
        raise GpulintError(f"{path}:{line}:{column}: not valid UTF-8; save it as UTF-8") from None
