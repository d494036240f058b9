"""The catalogue as `gpulint rules` (table, json, markdown) and `gpulint explain` show it."""

from __future__ import annotations

import json
from collections.abc import Sequence

from gpulint.catalogue import RuleInfo


def rule_to_dict(info: RuleInfo) -> dict[str, object]:
    """One catalogue entry as JSON-ready data."""
    return {
        "code": info.code,
        "name": info.name,
        "severity": info.severity.label,
        "enabled": info.enabled,
        "needs_profile": info.needs_profile,
        "summary": info.summary,
        "why": info.why,
        "example": info.example,
        "fixed": info.fixed,
        "fix": info.fix,
    }


def _flags(info: RuleInfo) -> str:
    flags = []
    if not info.enabled:
        flags.append("off by default")
    if info.needs_profile:
        flags.append("needs --profile")
    return ", ".join(flags)


def rules_table(entries: Sequence[RuleInfo]) -> str:
    """Aligned plain-text columns: code, name, severity, summary."""
    name_width = max((len(e.name) for e in entries), default=4)
    lines = [f"{'CODE':<7} {'NAME':<{name_width}} {'SEVERITY':<8} SUMMARY"]
    for e in entries:
        flags = f" ({_flags(e)})" if _flags(e) else ""
        lines.append(f"{e.code:<7} {e.name:<{name_width}} {e.severity.label:<8} {e.summary}{flags}")
    return "\n".join(lines) + "\n"


def rules_json(entries: Sequence[RuleInfo]) -> str:
    """Every entry, in full."""
    return json.dumps([rule_to_dict(e) for e in entries], indent=2) + "\n"


def rules_markdown(entries: Sequence[RuleInfo]) -> str:
    """A markdown table for docs and the README."""
    lines = ["| code | name | severity | what it catches |", "|---|---|---|---|"]
    for e in entries:
        flags = f" *({_flags(e)})*" if _flags(e) else ""
        lines.append(f"| {e.code} | {e.name} | {e.severity.label} | {e.summary}{flags} |")
    return "\n".join(lines) + "\n"


def explain_text(info: RuleInfo) -> str:
    """The whole entry, ruff-style: what it does, why it matters, example, use instead, fix."""
    flags = f" ({_flags(info)})" if _flags(info) else ""
    sections = [
        f"{info.code} {info.name} [{info.severity.label}]{flags}",
        "",
        "What it does",
        _indent(info.summary),
        "",
        "Why it matters",
        _indent(info.why),
        "",
        "Example",
        _indent(info.example),
        "",
        "Use instead",
        _indent(info.fixed),
        "",
        "Fix",
        _indent(info.fix),
    ]
    return "\n".join(sections) + "\n"


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())
