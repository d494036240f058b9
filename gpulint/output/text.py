"""Human output, ruff-like: `path:line:col: CODE message`, the fix, then a summary line."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.findings import Finding, LintResult
from gpulint.model import Severity

_SEVERITY_COLOUR = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def format_finding(finding: Finding, color: bool = False) -> str:
    """Two or three lines: location, code and message; where it came from; the fix."""
    location = _paint(f"{finding.path}:{finding.line}:{finding.column}:", "1", color)
    code = _paint(finding.code, _SEVERITY_COLOUR[finding.severity], color)
    lines = [f"{location} {code} [{finding.severity.label}] {finding.message}"]
    if finding.source:
        lines.append(f"  = from: {finding.source}")
    if finding.fix:
        # A multi-line fix (a tolerations block to paste) stays a block under its heading.
        fix = finding.fix.replace("\n", "\n    ")
        lines.append(f"  = fix: {fix}")
    return "\n".join(lines)


def summary_line(result: LintResult) -> str:
    """`Found 3 findings (2 errors, 1 warning) in 4 files, 9 objects.`"""
    looked_at = f"{_plural(result.files, 'file')}, {_plural(result.objects, 'object')}"
    if not result.findings:
        return f"All checks passed ({looked_at})."
    parts = [
        _plural(result.count(severity), severity.label)
        for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if result.count(severity)
    ]
    total = _plural(len(result.findings), "finding")
    return f"Found {total} ({', '.join(parts)}) in {looked_at}."


def _plural(count: int, word: str) -> str:
    if word == "info":
        return f"{count} info"
    return f"{count} {word}{'' if count == 1 else 's'}"


def format_text(result: LintResult, color: bool = False, quiet: bool = False) -> Iterator[str]:
    """Every finding, any notes, then the summary; `quiet` keeps only the findings."""
    for finding in result.findings:
        yield format_finding(finding, color) + "\n"
    if quiet:
        return
    tail = [*result.notes, summary_line(result)]
    yield ("\n" if result.findings else "") + "\n".join(tail) + "\n"
