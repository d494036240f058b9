"""Formatters: pure functions from a LintResult to the text a user or a CI system reads.

Each formatter imports its module when it is called: a run imports only the format it prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.findings import LintResult
    from gpulint.output.options import OutputOptions

#: A formatter gives the report in pieces, written as they come: a report of thousands of
#: findings is never held whole.
Formatter = Callable[["LintResult", "OutputOptions"], Iterable[str]]


def _text(result: LintResult, options: OutputOptions) -> Iterable[str]:
    from gpulint.output.text import SourceLines, format_text

    return format_text(result, options.color, options.quiet, SourceLines(options.stdin))


def _concise(result: LintResult, options: OutputOptions) -> Iterable[str]:
    from gpulint.output.text import format_text

    return format_text(result, options.color, options.quiet, concise=True)


def _json(result: LintResult, _options: OutputOptions) -> Iterable[str]:
    from gpulint.output.json import format_json

    return format_json(result)


def _sarif(result: LintResult, options: OutputOptions) -> Iterable[str]:
    from gpulint.catalogue import load_catalogue
    from gpulint.output.sarif import format_sarif

    return (format_sarif(result, tuple(load_catalogue().values()), options),)


def _github(result: LintResult, options: OutputOptions) -> Iterable[str]:
    from gpulint.output.github import format_github

    return format_github(result, options)


def _junit(result: LintResult, _options: OutputOptions) -> Iterable[str]:
    from gpulint.output.junit import format_junit

    return (format_junit(result),)


def _gitlab(result: LintResult, options: OutputOptions) -> Iterable[str]:
    from gpulint.output.gitlab import format_gitlab

    return format_gitlab(result, options)


def _statistics_text(result: LintResult, _options: OutputOptions) -> Iterable[str]:
    from gpulint.output.statistics import statistics_text

    return (statistics_text(result),)


def _statistics_json(result: LintResult, _options: OutputOptions) -> Iterable[str]:
    from gpulint.output.statistics import statistics_json

    return (statistics_json(result),)


FORMATTERS: dict[str, Formatter] = {
    "text": _text,
    "concise": _concise,
    "json": _json,
    "sarif": _sarif,
    "github": _github,
    "junit": _junit,
    "gitlab": _gitlab,
}

#: `--statistics`: one count per code instead of the findings, in the formats that have one.
STATISTICS: dict[str, Formatter] = {
    "text": _statistics_text,
    "concise": _statistics_text,
    "json": _statistics_json,
}
