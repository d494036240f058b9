"""Formatters: pure functions from a LintResult to the text a user or a CI system reads."""

from __future__ import annotations

from collections.abc import Callable

from gpulint.catalogue import load_catalogue
from gpulint.findings import LintResult
from gpulint.output.github import format_github
from gpulint.output.json import format_json
from gpulint.output.junit import format_junit
from gpulint.output.options import OutputOptions
from gpulint.output.sarif import format_sarif
from gpulint.output.statistics import statistics_json, statistics_text
from gpulint.output.text import format_text

Formatter = Callable[[LintResult, OutputOptions], str]

FORMATTERS: dict[str, Formatter] = {
    "text": lambda result, options: format_text(result, options.color, options.quiet),
    "json": lambda result, _options: format_json(result),
    "sarif": lambda result, options: format_sarif(
        result, tuple(load_catalogue().values()), options
    ),
    "github": format_github,
    "junit": lambda result, _options: format_junit(result),
}

#: `--statistics`: one count per code instead of the findings, in the formats that have one.
STATISTICS: dict[str, Formatter] = {
    "text": lambda result, _options: statistics_text(result),
    "json": lambda result, _options: statistics_json(result),
}
