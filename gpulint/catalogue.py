"""The rule catalogue: one YAML file per rule under `rules/`, shipped inside the wheel.

It is the single source of every rule's code, name, default severity and documentation;
`gpulint rules`, `gpulint explain` and the findings' fix texts all read it from here. An entry
is read when it is first asked for: a run reads only those of the rules that report something.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from gpulint.model import Severity
from gpulint.yamltree import YMap, parse

CATALOGUE_FIELDS = ("code", "name", "severity", "summary", "why", "example", "fixed", "fix")
# Which rules are off by default or need a profile is known here rather than written in their
# entries: a run must know it for every rule, and reading every entry would cost a pre-commit
# run on one file over a quarter of its work.
#: Rules a run leaves out unless the configuration selects them.
OFF_BY_DEFAULT = frozenset({"GPU402"})
#: Rules that only run when a cluster profile is given.
NEEDS_PROFILE = frozenset(
    {
        "GPU101",
        "GPU102",
        "GPU103",
        "GPU104",
        "GPU105",
        "GPU106",
        "GPU201",
        "GPU202",
        "GPU310",
        "GPU503",
    }
)
_SUFFIX = ".yaml"


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
def catalogue_codes() -> tuple[str, ...]:
    """Every code the catalogue has an entry for, in code order (from the file names alone)."""
    names = os.listdir(catalogue_dir())
    return tuple(
        sorted(
            n.removesuffix(_SUFFIX) for n in names if n.startswith("GPU") and n.endswith(_SUFFIX)
        )
    )


@functools.cache
def catalogue_entry(code: str) -> RuleInfo:
    """The entry of rule `code`, read from its file the first time it is asked for."""
    path = catalogue_dir() / f"{code}{_SUFFIX}"
    result = parse(path.read_text(encoding="utf-8"))
    if result.error is not None or not result.documents:
        raise ValueError(f"{path}: broken catalogue entry: {result.error}")
    entry = result.documents[0].value
    if not isinstance(entry, YMap):
        raise ValueError(f"{path}: a catalogue entry must be a mapping")
    if set(entry) != set(CATALOGUE_FIELDS) or entry["code"] != code:
        raise ValueError(
            f"{path}: a catalogue entry has exactly the keys {', '.join(CATALOGUE_FIELDS)}, "
            f"and `code: {code}`"
        )
    return RuleInfo(
        **{key: str(entry[key]).strip() for key in CATALOGUE_FIELDS if key != "severity"},
        severity=Severity.parse(str(entry["severity"])),
        enabled=code not in OFF_BY_DEFAULT,
        needs_profile=code in NEEDS_PROFILE,
    )


def load_catalogue() -> dict[str, RuleInfo]:
    """Every catalogue entry by code, in code order (reads every entry)."""
    return {code: catalogue_entry(code) for code in catalogue_codes()}
