"""The catalogue as `gpulint rules` (table, json, markdown) and `gpulint explain` show it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.catalogue import RuleInfo

PROJECT_URL = "https://github.com/gpulint/gpulint"
#: Where `gpulint rules --format docs` is published; SARIF `helpUri`s point into it.
RULES_DOC_URL = f"{PROJECT_URL}/blob/main/docs/rules.md"
RULES_DOC_COMMAND = "python -m gpulint.catalogue"


def rule_anchor(code: str) -> str:
    """The anchor of a rule's section in docs/rules.md: its `## GPU102` heading, slugged."""
    return code.lower()


def rule_help_uri(code: str) -> str:
    """The address of a rule's documentation."""
    return f"{RULES_DOC_URL}#{rule_anchor(code)}"


def rule_to_dict(info: RuleInfo) -> dict[str, object]:
    """One catalogue entry as JSON-ready data."""
    return {
        "code": info.code,
        "name": info.name,
        "severity": info.severity.label,
        "enabled": info.enabled,
        "needs_profile": info.needs_profile,
        "scope": info.rule.scope,
        "judges": sorted(info.rule.judges),
        "reads": sorted(info.rule.reads),
        "summary": info.summary,
        "why": info.why,
        "example": info.example,
        "fixed": info.fixed,
        "fix": info.fix,
        "autofix": info.rule.autofix,
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


def rules_document(entries: Sequence[RuleInfo]) -> str:
    """docs/rules.md: an index table, then one section per rule with why, example and fix."""
    lines = [
        "# Rules",
        "",
        f"<!-- generated from the catalogue (rules/*.yaml) by `{RULES_DOC_COMMAND}` -->",
        "",
        "Every rule gpulint has, from its catalogue. `gpulint explain CODE` prints the same",
        "text in a terminal. Suppress a finding with `# gpulint: ignore[CODE]` on its line.",
        "",
        "| code | name | severity | what it catches |",
        "|---|---|---|---|",
    ]
    for e in entries:
        lines.append(
            f"| [{e.code}](#{rule_anchor(e.code)}) | {e.name} | {e.severity.label} | {e.summary} |"
        )
    for e in entries:
        facts = [f"**{e.name}**", f"default severity: {e.severity.label}"]
        if _flags(e):
            facts.append(_flags(e))
        lines += [
            "",
            f"## {e.code}",
            "",
            " · ".join(facts),
            "",
            e.summary,
            "",
            "**Why it matters**",
            "",
            e.why,
            "",
            "**Example**",
            "",
            "```yaml",
            e.example,
            "```",
            "",
            "**Use instead**",
            "",
            "```yaml",
            e.fixed,
            "```",
            "",
            f"**Fix:** {e.fix}",
            "",
            f"**Autofix:** {_autofix(e)}",
        ]
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
        "",
        "Autofix",
        _indent(_autofix(info)),
    ]
    return "\n".join(sections) + "\n"


def _autofix(info: RuleInfo) -> str:
    """What `gpulint check --fix` does for the rule's findings."""
    if info.rule.autofix == "safe":
        return "safe: `gpulint check --fix` applies it where the finding shows `[*]`."
    if info.rule.autofix == "unsafe":
        return "unsafe: the fix needs a choice, so `--fix` applies it only with `--unsafe-fixes`."
    return "none: the fix needs a person."


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())
