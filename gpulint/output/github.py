"""GitHub Actions: `::error file=...,line=...` workflow commands and a job-summary table.

GitHub turns each command into an annotation on the pull request's diff. Escaping follows the
workflow-command format of actions/toolkit (`escapeData`, `escapeProperty` in command.ts).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.findings import Finding, LintResult
from gpulint.model import Severity
from gpulint.output.escape import MAX_NAME, markdown, markdown_code, one_line, text_block
from gpulint.output.options import DEFAULT_OPTIONS, OutputOptions, repository_path
from gpulint.output.text import summary_line

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape a command's message: `%`, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a command property value: as data, plus `:` and `,`, which delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, options: OutputOptions = DEFAULT_OPTIONS) -> str:
    """One workflow command; the message carries the fix and the Helm template on extra lines."""
    path = repository_path(finding.path, options)
    properties = {
        "file": one_line(path, len(path)),
        "line": str(finding.line),
        "col": str(finding.column),
        "title": f"{finding.code} {finding.name}",
    }
    # escape_data keeps the command on one line; the texts are cut and lose their controls.
    message = one_line(finding.message)
    if finding.clusters:  # of some named clusters only
        message = f"[{', '.join(finding.clusters)}] {message}"
    if finding.source:
        message += f"\nfrom: {one_line(finding.source, MAX_NAME)}"
    if finding.rendered is not None:
        rendered = str(finding.rendered)
        message += f"\nrendered: {one_line(rendered, len(rendered))}"
    if finding.fix:
        message += f"\nfix: {text_block(finding.fix)}"
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{COMMANDS[finding.severity]} {listed}::{escape_data(message)}"


def format_github(result: LintResult, options: OutputOptions = DEFAULT_OPTIONS) -> Iterator[str]:
    """An annotation per finding, then (unless quiet) the notes and the summary line."""
    for finding in result.findings:
        yield annotation(finding, options) + "\n"
    if not options.quiet:
        notes = (one_line(note) for note in result.notes)
        yield "".join(f"{line}\n" for line in (*notes, summary_line(result)))


def step_summary(result: LintResult, options: OutputOptions = DEFAULT_OPTIONS) -> str:
    """Markdown for `$GITHUB_STEP_SUMMARY`: the summary line and a table of the findings."""
    lines = ["### gpulint", "", summary_line(result), ""]
    # Messages and names come from manifests: Markdown-escaped, so they hold no HTML or link.
    if result.findings:
        lines += ["| severity | rule | location | object | message |", "|---|---|---|---|---|"]
        for f in result.findings:
            where = f"{repository_path(f.path, options)}:{f.line}:{f.column}"
            lines.append(
                f"| {f.severity.label} | {f.code} {f.name} | {markdown_code(where, len(where))} "
                f"| {markdown(str(f.object or ''), MAX_NAME)} | {markdown(f.message)} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"
