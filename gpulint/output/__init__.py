"""Formatters: pure functions from a LintResult to the text a user or a CI system reads."""

from __future__ import annotations

from collections.abc import Callable

from gpulint.findings import LintResult
from gpulint.output.json import format_json
from gpulint.output.text import format_text

Formatter = Callable[[LintResult, bool], str]

FORMATTERS: dict[str, Formatter] = {
    "text": format_text,
    "json": lambda result, _color: format_json(result),
}
