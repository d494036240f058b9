"""What a render may read: regular files inside the chart, the overlay, the checked tree.

A chart or overlay comes from a pull request, and helm reads every file of a chart (following
symlinks, `.git/` included), so the files are checked before a tool runs or a cache key reads
them: a symlink that points out of its chart or overlay, a device, a FIFO or a socket is
refused and named (`RenderError`), never opened. Paths a kustomization or the config names
(bases, values files, local dependencies) must lie inside the checked tree
(`RenderRun.tree`): the repository holding the chart or overlay.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gpulint.render.tools import RenderError, is_inside

__all__ = ["checked_files", "is_inside", "read_text", "regular_file"]

#: Version-control directories: never part of what kustomize reads, skipped by the key.
VCS_DIRECTORIES = (".git", ".hg", ".svn")


def checked_files(directory: Path, label: str, what: str, skip_vcs: bool) -> list[Path]:
    """Every file under `directory`, in a stable order, once each is known safe to read.

    Raises RenderError, naming the entry under `label` (the directory as reported), for an
    entry that is neither a regular file nor a directory, and for a symlink whose target is
    outside `directory` (`what` says what the directory is: "chart", "overlay"). Symlinked
    directories are not entered: their targets, inside `directory`, are walked where they
    are. With `skip_vcs`, version-control directories are skipped (kustomize never reads
    them); without it a `.git` entry is refused unless `.helmignore` leaves it out, since
    helm loads it into the chart (a checkout keeps credentials in `.git/config`).
    """
    top = Path(os.path.realpath(directory))
    found: list[Path] = []
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            shown = _shown(current, directory)
            raise RenderError(f"{label}: cannot read `{shown}`: {exc.strerror}") from None
        for entry in entries:
            path = Path(entry.path)
            if entry.name in VCS_DIRECTORIES:
                if skip_vcs:
                    continue
                if not _helm_ignores(directory, entry.name):
                    raise RenderError(
                        f"{label}: `{_shown(path, directory)}` is in the {what}, and helm would "
                        f"load it into the chart; add `{entry.name}/` to {what}'s .helmignore"
                    )
                continue
            mode = _refused_mode(path, top, label, what, directory)
            if stat.S_ISDIR(mode):
                if not entry.is_symlink():
                    pending.append(path)
            else:
                found.append(path)
    return sorted(found, key=lambda p: os.fsencode(p))


def regular_file(path: Path, label: str, what: str) -> None:
    """Raise RenderError unless `path` is (a symlink to) a regular file: `what` names it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise RenderError(f"{label}: {what} `{path}`: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise RenderError(f"{label}: {what} `{path}` is {_kind(mode)}, not a regular file")


def read_text(path: str | os.PathLike[str]) -> str | None:
    """The UTF-8 text of `path` when it is (a symlink to) a regular file, else None.

    Opened without blocking, so a FIFO put where a file was expected is never waited on.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as stream:
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return None
            return stream.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def _refused_mode(path: Path, top: Path, label: str, what: str, directory: Path) -> int:
    """The mode of what `path` leads to; RenderError when it is not readable safely."""
    try:
        own = os.lstat(path).st_mode
        if stat.S_ISLNK(own):
            if not is_inside(path, top):
                raise RenderError(
                    f"{label}: `{_shown(path, directory)}` is a symlink out of the {what}; "
                    f"gpulint reads only files inside the {what}"
                )
            own = os.stat(path).st_mode
    except OSError as exc:
        raise RenderError(f"{label}: `{_shown(path, directory)}`: {exc.strerror}") from None
    if not (stat.S_ISREG(own) or stat.S_ISDIR(own)):
        raise RenderError(
            f"{label}: `{_shown(path, directory)}` is {_kind(own)}, not a regular file; "
            f"gpulint does not read it"
        )
    return own


def _helm_ignores(chart: Path, name: str) -> bool:
    """Whether the chart's .helmignore has a line leaving out `name` (`.git`, `.git/`...)."""
    text = read_text(chart / ".helmignore")
    lines = text.splitlines() if text is not None else []
    wanted = {name, f"{name}/", f"/{name}", f"/{name}/", f"{name}*", f"{name}/*"}
    return any(line.strip() in wanted for line in lines)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "a special file"


def _shown(path: Path, directory: Path) -> str:
    """`path` relative to the chart or overlay directory, as the user wrote the tree."""
    try:
        return path.relative_to(directory).as_posix()
    except ValueError:
        return path.as_posix()
