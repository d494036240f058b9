"""Replacing a file that `gpulint check --fix` fixed, so that no failure can lose its text.

The fixed text goes to a new file in the same directory, is flushed to the disk, and is then
renamed over the original: a kill or a full disk at any moment leaves either the old file or
the new one, never a part of either. The original is read again just before, and the file is
not written when it changed since the checks read it, is gone, or is not one this run may
replace: a symbolic link out of the checked tree, a file with other hard links (a new file
would leave them with the old text), or a read-only file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from gpulint.views import NamedTuple

#: Read at most this much more than the expected size when comparing: a file that grew is
#: stale whatever follows.
_SLACK = 1


class NotWritten(Exception):
    """The fix of a file was not written: `why` says what the user needs to know."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Place(NamedTuple):
    """Where a file named by the run really is: its directory and its name in it."""

    directory: str
    name: str


def locate(path: str, root: str) -> Place:
    """The real directory and name of `path` (relative to the working directory).

    NotWritten when a symbolic link on the way leads outside `root`: the checked tree is what
    the run may change.
    """
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    if real != absolute and not _inside(real, os.path.realpath(root)):
        raise NotWritten("it is a symbolic link to a file outside the checked tree")
    return Place(os.path.dirname(real), os.path.basename(real))


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def read_original(path: str, root: str) -> bytes:
    """The bytes of `path`; NotWritten when `replace` would refuse to replace it."""
    place = locate(path, root)
    directory = _open_directory(place)
    try:
        descriptor = _open_regular(place, directory)
        try:
            _refuse_to_replace(os.fstat(descriptor))
            return _read_all(descriptor)
        finally:
            os.close(descriptor)
    finally:
        os.close(directory)


def replace(path: str, original: bytes, data: bytes, root: str) -> None:
    """Replace the file at `path` (its text was `original`) by `data`, keeping mode and owner.

    Raises NotWritten, the file untouched, when it no longer holds `original`, is gone, is a
    symbolic link out of `root`, has other hard links, is read-only, or cannot be written.
    """
    place = locate(path, root)
    directory = _open_directory(place)
    try:
        descriptor = _open_regular(place, directory)
        try:
            before = os.fstat(descriptor)
            _refuse_to_replace(before)
            if _read_all(descriptor, len(original) + _SLACK) != original:
                raise NotWritten("it changed since gpulint read it; run gpulint again")
        finally:
            os.close(descriptor)
        temporary = _write_temporary(place, directory, data, before)
        try:
            _still_the_same(place, directory, before)
            os.replace(temporary, place.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=directory)
            raise
        with contextlib.suppress(OSError):  # some file systems cannot sync a directory
            os.fsync(directory)  # the rename itself reaches the disk
    except OSError as exc:
        raise NotWritten(f"cannot write the fix: {exc.strerror or exc}") from None
    finally:
        os.close(directory)


def _open_directory(place: Place) -> int:
    try:
        return os.open(place.directory, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise NotWritten("it no longer exists") from None
    except OSError as exc:
        raise NotWritten(f"cannot open its directory: {exc.strerror}") from None


def _open_regular(place: Place, directory: int) -> int:
    """A descriptor of the file itself, never of what a link put there since points at."""
    try:
        # O_NONBLOCK: a FIFO put in the file's place answers at once instead of waiting.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        descriptor = os.open(place.name, flags, dir_fd=directory)
    except FileNotFoundError:
        raise NotWritten("it no longer exists") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotWritten("it became a symbolic link") from None
        raise NotWritten(f"cannot read it: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise NotWritten("it is not a regular file")
    return descriptor


def _refuse_to_replace(info: os.stat_result) -> None:
    if info.st_nlink > 1:
        raise NotWritten(
            f"it has {info.st_nlink} hard links; a fixed copy would leave the other names with "
            "the old text (--diff shows the fix)"
        )
    writable = stat.S_IWUSR if info.st_uid == os.geteuid() else 0o222
    if not info.st_mode & writable:
        raise NotWritten("it is read-only")


def _read_all(descriptor: int, limit: int | None = None) -> bytes:
    chunks = []
    size = 0
    while limit is None or size < limit:
        chunk = os.read(descriptor, 1 << 20 if limit is None else min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _write_temporary(place: Place, directory: int, data: bytes, like: os.stat_result) -> str:
    """A new file next to the original holding `data`, with its mode and owner, on the disk."""
    name = f".{place.name}.gpulint-{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    descriptor = os.open(name, flags, 0o600, dir_fd=directory)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                view = view[written:]
            info = os.fstat(descriptor)
            if (info.st_uid, info.st_gid) != (like.st_uid, like.st_gid):
                try:
                    os.fchown(descriptor, like.st_uid, like.st_gid)
                except PermissionError:
                    raise NotWritten(
                        "cannot keep its owner and group; fix it as the user who owns it"
                    ) from None
            os.fchmod(descriptor, stat.S_IMODE(like.st_mode))
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=directory)
        raise
    return name


def _still_the_same(place: Place, directory: int, before: os.stat_result) -> None:
    """NotWritten when the file was replaced, written or removed while the fix was written."""
    try:
        now = os.stat(place.name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        raise NotWritten("it no longer exists") from None
    same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) == (
        before.st_dev,
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    if not same:
        raise NotWritten("it changed since gpulint read it; run gpulint again")
