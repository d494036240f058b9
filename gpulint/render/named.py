"""Where a tool's refusal of a chart or overlay points: the file of the chart or overlay it
names, and the line and column there, as gpulint reports them (1-based, in characters).

The tool's message is untrusted text (a template or a file name may put anything in it): a
name is used only when it leads to a regular file inside the chart or overlay directory,
never through `..`, an absolute path or a link out of it; anything else names no position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from gpulint.render.confine import is_inside, read_text
from gpulint.views import NamedTuple

#: What Go's strings.TrimSpace trims (unicode.IsSpace).
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)
#: helm's document separator (releaseutil.SplitManifests); `\s` of Go's regexp is this class.
_HELM_SEPARATOR = re.compile(r"(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*")
#: kustomize's document separator (kyaml's splitDocuments).
_KYAML_SEPARATOR = re.compile(r"\n---.*\n")
#: The YAML problems whose `line N` is the line holding the problem, as the YAML library of
#: each tool reports it: go-yaml's scanner errors. Its parser errors (`did not find expected
#: key`) give the line before the problem, and some scanner errors the line where a key
#: started: they name no position.
HELM_YAML_PROBLEMS = (
    "mapping values are not allowed in this context",
    "found character that cannot start any token",
    "found a tab character that violates indentation",
    "found unknown escape character",
)
KUSTOMIZE_YAML_PROBLEMS = (
    "mapping values are not allowed in this context",
    "found character that cannot start any token",
    "found unknown escape character",
)


class Named(NamedTuple):
    """A file of the chart or overlay (its path relative to that directory, POSIX) and a
    position in it."""

    file: str
    pos: tuple[int, int]


def inside_file(directory: Path, relative: Sequence[str]) -> tuple[str, str] | None:
    """(the path, its text) of the file `relative` (path segments) names below `directory`,
    when it is a readable regular file inside it; else None."""
    if not relative or any(part in ("", ".", "..") or "\\" in part for part in relative):
        return None
    path = directory.joinpath(*relative)
    if not is_inside(path, directory):
        return None
    text = read_text(path)
    if text is None:
        return None
    return str(PurePosixPath(*relative)), text


def at_line(text: str, line: int, offset: int | None = None) -> tuple[int, int]:
    """The position of `line` (1-based) and the 0-based byte `offset` in it (Go's
    text/template counts so), as gpulint's (line, column); the file's first line when `line`
    is not one of it, the line's first column when `offset` is not one of the line."""
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return (1, 1)
    if offset is None:
        return (line, 1)
    raw = lines[line - 1].encode("utf-8")
    if not 0 <= offset <= len(raw):
        return (line, 1)
    try:
        return (line, len(raw[:offset].decode("utf-8")) + 1)
    except UnicodeDecodeError:  # inside a character
        return (line, 1)


def yaml_problem_named(
    found: tuple[str, str],
    match: re.Match[str],
    problems: Sequence[str],
    document_line: Callable[[str, int], int | None],
) -> Named:
    """The file `found` (its path, its text) at the line a tool's YAML error names (`match`:
    the line in group 2, the problem in group 3), when the problem is one whose line is its
    own (`problems`) and `document_line` finds that line in the file; else at its first line."""
    file, text = found
    line = None
    if match.group(2) is not None and match.group(3) in problems:
        line = document_line(text, int(match.group(2)))
    return Named(file, at_line(text, line) if line is not None else (1, 1))


def helm_document_line(text: str, line: int) -> int | None:
    """The line of the template `text` that is `line` of the document helm parsed, when the
    template renders to itself (no action) and holds one document; else None.

    helm parses each document of a template's output apart (releaseutil.SplitManifests: the
    output trimmed, split at `---`, each part trimmed), and names a line of that part.
    """
    if "{{" in text or "<no value>" in text:  # helm's render drops `<no value>`
        return None
    start = len(text) - len(text.lstrip(_GO_SPACE))
    body = text.strip(_GO_SPACE)
    pieces, previous = [], 0
    for separator in _HELM_SEPARATOR.finditer(body):
        pieces.append((previous, body[previous : separator.start()]))
        previous = separator.end()
    pieces.append((previous, body[previous:]))
    documents = [
        offset + len(piece) - len(piece.lstrip(_GO_SPACE))
        for offset, piece in pieces
        if piece.strip(_GO_SPACE)
    ]
    if len(documents) != 1:
        return None
    return text[: start + documents[0]].count("\n") + line


def kustomize_document_line(text: str, line: int) -> int | None:
    """The line of the resource file `text` that is `line` of the document kustomize parsed,
    when the file holds one document (kyaml counts lines from each document's start)."""
    if _KYAML_SEPARATOR.search(text.replace("\r\n", "\n")):
        return None
    return line
