"""`.gitignore` rules for the directories gpulint walks, read without running git.

Inside a git work tree (a `.git` directory or file upward), a file or directory met while
walking a directory is skipped when the `.gitignore` files from the work tree's root down to
its directory, and `.git/info/exclude`, ignore it: the last matching pattern wins, `!`
re-includes, a pattern with a slash is anchored to its file's directory, a trailing slash
matches directories only, and `**` spans directories (gitignore(5)). An ignored directory is
not entered, so nothing under it comes back. Git's global excludes file is not read.

Paths named on the command line are checked whatever the rules say, as git itself lints
tracked files that a pattern matches (and pre-commit names tracked files only).
"""

import os
import re
from collections.abc import Callable

from gpulint.views import NamedTuple

_GIT = ".git"
_IGNORE_FILE = ".gitignore"


class Pattern(NamedTuple):
    """One line of a `.gitignore`: whether it matches a path relative to its base."""

    matches: Callable[[str], object]
    negated: bool
    directory_only: bool


class IgnoreFile(NamedTuple):
    """The patterns of one ignore file and the directory they are relative to."""

    base: str  # absolute, without a trailing slash
    patterns: tuple[Pattern, ...]


def parse_patterns(text: str) -> tuple[Pattern, ...]:
    """The patterns of a `.gitignore` text, in order; blank lines and comments are dropped."""
    patterns = []
    for raw in text.splitlines():
        line = _strip_trailing_spaces(raw)
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith(("\\!", "\\#")):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        # A slash at the start or in the middle anchors the pattern to the file's directory;
        # otherwise it matches a name at any depth below it.
        anchored = "/" in line
        patterns.append(Pattern(_matcher(line.lstrip("/"), anchored), negated, directory_only))
    return tuple(patterns)


#: What makes a gitignore line a glob rather than a name.
_GLOB = frozenset("*?[\\")


def _matcher(glob: str, anchored: bool) -> Callable[[str], object]:
    """A test of relative paths for one pattern. Most lines are a plain name (`dist`) or a
    suffix (`*.log`): those are compared as strings, without compiling a regular expression
    (a tenth of a pre-commit run's walk of a project with a long `.gitignore`)."""
    if _GLOB.isdisjoint(glob):
        if anchored:
            return glob.__eq__
        tail = f"/{glob}"
        return lambda path: path == glob or path.endswith(tail)
    suffix = glob[1:]
    if not anchored and glob[0] == "*" and _GLOB.isdisjoint(suffix):
        # `*.log` matches the last part of the path: `*` does not cross a slash.
        return lambda path: path[path.rfind("/") + 1 :].endswith(suffix)
    body = _translate(glob)
    return re.compile(body if anchored else f"(?:.*/)?{body}", re.DOTALL).match


def _strip_trailing_spaces(line: str) -> str:
    """Trailing spaces are dropped unless escaped with a backslash."""
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "
    return stripped


def _translate(glob: str) -> str:
    """A gitignore glob (without its anchoring slash) as a regular expression, whole-match."""
    out = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**", i):
            before = i == 0 or glob[i - 1] == "/"
            after = i + 2 == n or glob[i + 2] == "/"
            if before and after:
                if i + 2 == n:  # `a/**`: everything inside
                    out.append(".*")
                    i += 2
                else:  # `**/a`, `a/**/b`: zero or more directories
                    out.append("(?:.*/)?")
                    i += 3
                continue
            out.append("[^/]*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = _class_end(glob, i)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            inner = glob[i + 1 : end]
            if inner.startswith(("!", "^")):
                inner = "^" + inner[1:]
            out.append(f"[{inner.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out) + r"\Z"


def _class_end(glob: str, start: int) -> int:
    """Index of the `]` closing the character class opened at `start`, -1 if none."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    end = glob.find("]", i)
    return end


def is_ignored(files: tuple[IgnoreFile, ...], path: str, is_dir: bool) -> bool:
    """Whether the absolute `path` is ignored by `files` (outermost first): last match wins."""
    ignored = False
    for ignore in files:
        relative = path[len(ignore.base) + 1 :] if path.startswith(ignore.base + "/") else None
        if relative is None:
            continue
        for pattern in ignore.patterns:
            if pattern.directory_only and not is_dir:
                continue
            if pattern.matches(relative):
                ignored = not pattern.negated
    return ignored


class GitIgnore:
    """Answers "is this walked path ignored?", reading each directory's `.gitignore` once."""

    def __init__(self) -> None:
        # directory (absolute) -> the ignore files that apply inside it, outermost first;
        # None outside any git work tree.
        self._rules: dict[str, tuple[IgnoreFile, ...] | None] = {}
        # Each walked directory's absolute path: the files of one are many.
        self._absolute: dict[str, str] = {}

    def __call__(self, path: str, is_dir: bool) -> bool:
        """Whether `path` (as walked: relative to the working directory, or absolute, a
        directory's path and an entry's name) is ignored."""
        head, slash, name = path.rpartition("/")
        head = head or slash  # `/name`: in the root directory
        directory = self._absolute.get(head)
        if directory is None:
            directory = self._absolute[head] = os.path.abspath(head or os.curdir)
        if name in ("", os.curdir, os.pardir):  # no entry's name: resolved whole
            absolute = os.path.abspath(path)
            directory = os.path.dirname(absolute)
        else:
            absolute = f"{directory.rstrip('/')}/{name}"
        rules = self._rules_in(directory)
        return rules is not None and is_ignored(rules, absolute, is_dir)

    def _rules_in(self, directory: str) -> tuple[IgnoreFile, ...] | None:
        if directory in self._rules:
            return self._rules[directory]
        if os.path.exists(os.path.join(directory, _GIT)):
            inherited: tuple[IgnoreFile, ...] = ()
            exclude = _read_ignore(os.path.join(directory, _GIT, "info", "exclude"), directory)
            if exclude is not None:
                inherited = (exclude,)
        else:
            parent = os.path.dirname(directory)
            if parent == directory:
                self._rules[directory] = None
                return None
            above = self._rules_in(parent)
            if above is None:
                self._rules[directory] = None
                return None
            inherited = above
        own = _read_ignore(os.path.join(directory, _IGNORE_FILE), directory)
        rules = (*inherited, own) if own is not None else inherited
        self._rules[directory] = rules
        return rules


#: The most of a `.gitignore` read: a symlink to /dev/zero must not fill the memory.
_MAX_IGNORE_BYTES = 16 << 20


def _read_ignore(path: str, base: str) -> IgnoreFile | None:
    from gpulint.filetypes import open_input

    try:
        # Never a FIFO (which blocks) or a device, nor a symlink out of the tree.
        with open(open_input(path), encoding="utf-8", errors="replace") as stream:
            text = stream.read(_MAX_IGNORE_BYTES)
    except OSError:  # no such file, not readable, or refused: nothing is ignored by it
        return None
    patterns = parse_patterns(text)
    return IgnoreFile(base.rstrip("/") or "/", patterns) if patterns else None
