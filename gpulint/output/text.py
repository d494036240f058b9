"""Human output, ruff-like: `path:line:col: CODE message`, the source line with a caret under
the column, where the object came from, the fix; then a summary line.

`concise` output keeps the first line of each finding only, plus its origin and fix.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from collections.abc import Iterator

from gpulint.findings import Finding, LintResult
from gpulint.model import Severity
from gpulint.output.escape import MAX_NAME, escape_controls, no_command, one_line, text_block

_SEVERITY_COLOUR = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}
#: Longer source lines are shown as a window around the column, so a minified line does not
#: flood the terminal.
SNIPPET_WIDTH = 120
_ELLIPSIS = "…"
# Patterns compiled on first use (re caches them): only a run that shows a source line needs
# them, the second only on a document that names `Secret`. A document starts at a `---` line
# (then a space or the line's end), looked for with the line break before it: a pattern with
# a literal start is searched for fast, where `^` would be tried at every character.
_DOCUMENT_START = r"\n---(?=\s|\Z)"
# Lexical, so that it also holds in a file that does not parse: `kind: Secret` in block,
# flow or JSON style.
_SECRET_KIND = r"""(?:^|[\s{,-])["']?kind["']?\s*:\s*["']?Secret["']?\s*(?:[,}#]|$)"""


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def format_finding(
    finding: Finding, color: bool = False, source_line: str | None = None, concise: bool = False
) -> str:
    """The location, code and message; the `source_line` with a caret under the column (when
    given); where the object came from; the fix. `concise`: the first line alone."""
    # Paths, messages and fixes quote manifests and file names: escaped, one line each.
    path = one_line(finding.path, limit=len(finding.path))
    # A file named `:` would start the line with `::` once the position follows it.
    location = _paint(no_command(f"{path}:{finding.line}:{finding.column}:"), "1", color)
    code = _paint(finding.code, _SEVERITY_COLOUR[finding.severity], color)
    fixable = " [*]" if finding.applicability == "safe" else ""
    message = one_line(finding.message)
    # A finding of some named clusters only says which: `[error] [prod] ...`.
    where = f" [{', '.join(finding.clusters)}]" if finding.clusters else ""
    lines = [f"{location} {code}{fixable} [{finding.severity.label}]{where} {message}"]
    if concise:
        return lines[0]
    if source_line is not None:
        lines.extend(snippet(finding.line, finding.column, source_line, color))
    if finding.source:
        lines.append(f"  = from: {one_line(finding.source, MAX_NAME)}")
    if finding.rendered is not None:
        rendered = str(finding.rendered)  # names a chart directory: a path to escape
        lines.append(f"  = rendered: {one_line(rendered, len(rendered))}")
    if finding.fix:
        # A multi-line fix (a tolerations block to paste) stays a block under its heading.
        fix = text_block(finding.fix).replace("\n", "\n    ")
        lines.append(f"  = fix: {fix}")
    return "\n".join(lines)


def snippet(line: int, column: int, text: str, color: bool = False) -> list[str]:
    """Three lines: an empty gutter, `line | text`, and a caret under `column` (1-based)."""
    shown, offset = _window(text.expandtabs(1), column - 1)
    # A line that does not parse may hold control characters: shown escaped, caret kept.
    before = escape_controls(shown[:offset])
    shown, offset = before + escape_controls(shown[offset:]), len(before)
    gutter = " " * len(str(line))
    caret = _paint("^", "1;31", color)
    return [
        f"{gutter} |",
        f"{line} | {shown}".rstrip(),
        f"{gutter} | {' ' * _display_width(shown[:offset])}{caret}",
    ]


def _display_width(text: str) -> int:
    """The columns a terminal gives `text`: East Asian wide characters take two, combining
    marks none."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _window(text: str, index: int) -> tuple[str, int]:
    """`text` cut to SNIPPET_WIDTH characters around `index`, and `index` within the cut."""
    index = max(0, min(index, len(text)))
    if len(text) <= SNIPPET_WIDTH:
        return text, index
    start = max(0, min(index - SNIPPET_WIDTH // 2, len(text) - SNIPPET_WIDTH))
    end = start + SNIPPET_WIDTH
    shown = text[start:end]
    if start > 0:
        shown, index = _ELLIPSIS + shown, index + 1
    if end < len(text):
        shown += _ELLIPSIS
    return shown, index - start


class SourceLines:
    """The lines of reported files, read again for the snippets; one file is kept at a time
    (findings come sorted by path).

    Only regular files are read: a pipe given by name (`<(helm template ...)`) was consumed by
    the run. Input read from stdin is passed in as `stdin` (display name, bytes). The lines of
    a document that is a Secret are never shown: its data is what a log must not carry (a
    JSON file naming a Secret anywhere is one document, so none of it is shown).
    """

    def __init__(self, stdin: tuple[str, bytes] | None = None) -> None:
        self._stdin = stdin
        self._path: str | None = None
        self._lines: list[str | None] = []

    def line(self, path: str, number: int) -> str | None:
        """Line `number` (1-based) of the file reported as `path`, None if it cannot be shown."""
        if path != self._path:
            self._path, self._lines = path, self._read(path)
        if 1 <= number <= len(self._lines):
            return self._lines[number - 1]
        return None

    def _read(self, path: str) -> list[str | None]:
        if self._stdin is not None and path == self._stdin[0]:
            data = self._stdin[1]
        else:
            from gpulint.filetypes import link_out_of_tree

            try:
                # What the loader refused to read is not shown either.
                if not stat.S_ISREG(os.stat(path).st_mode) or link_out_of_tree(path):
                    return []
                with open(path, "rb") as stream:
                    data = stream.read()
            except (OSError, ValueError):  # ValueError: a name no file system takes (a NUL)
                return []
        # As the loader reads it: a BOM dropped, every line break the parser knows counted.
        from gpulint.yamltree import normalize_line_breaks

        text = normalize_line_breaks(data.decode("utf-8-sig", errors="replace"))
        lines: list[str | None] = list(text.split("\n"))
        # Each document, from one `---` line to the next, is looked at as one text first: only
        # one that holds the word is searched line by line. With a line break put in front, a
        # match starts where its line does in `text`.
        starts = (match.start() for match in re.finditer(_DOCUMENT_START, "\n" + text))
        offsets = [0, *starts, len(text)]
        for begin, end in itertools.pairwise(offsets):
            if "Secret" not in text[begin:end]:
                continue
            first, last = text.count("\n", 0, begin), text.count("\n", 0, end)
            if end == len(text):
                last += 1  # the last line has no line break after it
            if any(re.search(_SECRET_KIND, line) for line in lines[first:last] if line):
                lines[first:last] = [None] * (last - first)
        return lines


def summary_line(result: LintResult) -> str:
    """`Found 3 findings (2 errors, 1 warning) in 4 files, 9 objects.`

    Never "All checks passed" while an object requests accelerators gpulint did not check.
    """
    looked_at = f"{_plural(result.files, 'file')}, {_plural(result.objects, 'object')}"
    unchecked = ""
    if result.unchecked:
        verbs = ("requests", "was") if result.unchecked == 1 else ("request", "were")
        unchecked = (
            f"{_plural(result.unchecked, 'object')} {verbs[0]} accelerators but {verbs[1]} "
            "not checked"
        )
    if not result.findings:
        if unchecked:
            return f"No findings; {unchecked} ({looked_at})."
        return f"All checks passed ({looked_at})."
    parts = [
        _plural(result.count(severity), severity.label)
        for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if result.count(severity)
    ]
    total = _plural(len(result.findings), "finding")
    found = f"Found {total} ({', '.join(parts)}) in {looked_at}."
    if unchecked:
        found += f" {unchecked[0].upper()}{unchecked[1:]}."
    return found + _fixable(result)


def _fixable(result: LintResult) -> str:
    """` 2 fixable with --fix (1 more with --unsafe-fixes).`, or nothing."""
    safe = sum(1 for f in result.findings if f.applicability == "safe")
    unsafe = sum(1 for f in result.findings if f.applicability == "unsafe")
    if not safe and not unsafe:
        return ""
    more = f" ({unsafe} more with --unsafe-fixes)" if unsafe else ""
    if not safe:
        return f" {unsafe} fixable with --fix --unsafe-fixes."
    return f" {safe} fixable with --fix{more}."


def _plural(count: int, word: str) -> str:
    if word == "info":
        return f"{count} info"
    return f"{count} {word}{'' if count == 1 else 's'}"


def format_text(
    result: LintResult,
    color: bool = False,
    quiet: bool = False,
    sources: SourceLines | None = None,
    concise: bool = False,
) -> Iterator[str]:
    """Every finding (with its source line when `sources` can read it), any notes, then the
    summary; `quiet` keeps only the findings; `concise` gives each finding one line."""
    # Full output separates the findings' blocks by a blank line, as ruff does.
    separator = ""
    for finding in result.findings:
        line = sources.line(finding.path, finding.line) if sources is not None else None
        yield separator + format_finding(finding, color, line, concise) + "\n"
        separator = "\n" if sources is not None else ""
    if quiet:
        return
    tail = [*(one_line(note) for note in result.notes), summary_line(result)]
    yield ("\n" if result.findings else "") + "\n".join(tail) + "\n"
