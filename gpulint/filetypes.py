"""Which inputs gpulint opens: regular files, and the pipes a shell names for `<(...)`.

A FIFO blocks the reader until someone writes to it, a device such as /dev/zero never ends,
and opening some devices does something (a terminal, a tape rewinds). A path may come from a
pull request (a symlink in the tree, a `context:` entry, a profile the config names), so a
path that is neither a regular file nor a directory is refused before it is opened, with one
exception: a pipe named as the shell names one for process substitution (`/dev/fd/63`,
`/proc/self/fd/63`) or `/dev/stdin`, which only the command line can give.

Nor is a symlink followed out of its tree (the git work tree holding it, else the working
directory): a pull request's `pod.yaml -> /proc/self/environ` would otherwise print the CI
environment as the source line of a syntax error.
"""

from __future__ import annotations

import errno
import functools
import os
import stat

#: What a refused path is said to be.
NOT_REGULAR = "not a regular file (a device, FIFO or socket is not read)"
_PIPE_NAMES = ("/dev/fd/", "/proc/self/fd/")


def is_pipe_name(path: str) -> bool:
    """Whether `path` is written as the shell writes a pipe it passes (`<(...)`, stdin)."""
    return path.startswith(_PIPE_NAMES) or path == "/dev/stdin"


def refused(path: str, mode: int) -> bool:
    """Whether a path of this mode (following symlinks) must not be opened for reading."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return False
    return not ((stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) and is_pipe_name(path))


def link_out_of_tree(path: str, mode: int | None = None) -> str | None:
    """The real path `path` leads to when a symlink on the way (the file itself, or a directory
    it is named through) leads outside its tree (the git work tree holding the link, else the
    working directory); None for anything else. `mode`: the path's own (lstat) mode, when the
    caller has it."""
    try:
        linked = stat.S_ISLNK(os.lstat(path).st_mode if mode is None else mode)
    except (OSError, ValueError):
        return None
    holder = os.path.dirname(os.path.abspath(path))
    if not linked and _real_directory(holder) == holder:
        return None
    real = os.path.realpath(path)
    top = os.path.realpath(_work_tree(holder) or os.getcwd())
    inside = real == top or real.startswith(top.rstrip(os.sep) + os.sep)
    return None if inside else real


@functools.lru_cache(maxsize=1024)
def _real_directory(directory: str) -> str:
    """os.path.realpath of a directory, once per directory: every file of a tree asks."""
    return os.path.realpath(directory)


def forget_directories() -> None:
    """Drop the real paths of directories looked up so far: each run (`lint()`) looks again,
    so a directory replaced by a link between two runs of one process is seen as a link."""
    _real_directory.cache_clear()


def _work_tree(directory: str) -> str | None:
    """The nearest directory at or above `directory` holding `.git`, if any."""
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def open_input(path: str) -> int:
    """A descriptor of `path` open for reading; OSError (with NOT_REGULAR) for a path that
    refused() names, or for a symlink out of its tree (link_out_of_tree). Checked before
    opening and again on what was opened, which is opened non-blocking (a FIFO put there
    meanwhile returns at once) and made blocking again for a pipe that is read."""
    target = None if is_pipe_name(path) else link_out_of_tree(path)
    if target is not None:
        raise OSError(errno.EXDEV, f"a symlink to {target}, outside the checked tree", path)
    if refused(path, os.stat(path).st_mode):
        raise OSError(errno.EINVAL, NOT_REGULAR, path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if refused(path, mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, path)
        if not stat.S_ISREG(mode):
            os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
