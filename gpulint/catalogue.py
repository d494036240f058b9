"""The rule catalogue: one YAML file per rule under `rules/`, shipped inside the wheel.

It is the single source of every rule's code, name, default severity and documentation;
`gpulint rules`, `gpulint explain` and the findings' fix texts all read it from here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from gpulint.model import Severity
from gpulint.yamltree import YMap, parse

CATALOGUE_FIELDS = ("code", "name", "severity", "summary", "why", "example", "fixed", "fix")


@dataclass(frozen=True)
class RuleInfo:
    """One catalogue entry."""

    code: str
    name: str
    severity: Severity
    summary: str
    why: str
    example: str
    fixed: str
    fix: str
    enabled: bool = True  # selected when the configuration does not say otherwise
    needs_profile: bool = False  # only runs when a cluster profile is given


def catalogue_dir() -> Path:
    """Where the catalogue lives: inside the installed package, or `rules/` of a checkout."""
    # The package directory itself rather than importlib.resources, which costs a run more
    # to import than reading the whole catalogue.
    package = Path(__file__).resolve().parent
    packaged = package / "catalogue"
    return packaged if packaged.is_dir() else package.parent / "rules"


@functools.cache
def load_catalogue() -> dict[str, RuleInfo]:
    """Every catalogue entry by code, in code order."""
    entries: dict[str, RuleInfo] = {}
    for path in sorted(catalogue_dir().glob("GPU*.yaml")):
        result = parse(path.read_text(encoding="utf-8"))
        if result.error is not None or not result.documents:
            raise ValueError(f"{path}: broken catalogue entry: {result.error}")
        entry = result.documents[0].value
        if not isinstance(entry, YMap):
            raise ValueError(f"{path}: a catalogue entry must be a mapping")
        info = RuleInfo(
            **{key: str(entry[key]).strip() for key in CATALOGUE_FIELDS if key != "severity"},
            severity=Severity.parse(str(entry["severity"])),
            enabled=bool(entry.get("enabled", True)),
            needs_profile=bool(entry.get("needs_profile", False)),
        )
        entries[info.code] = info
    return dict(sorted(entries.items()))
