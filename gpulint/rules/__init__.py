"""The rule registry: catalogue entries joined with the check functions that implement them.

Which module implements which rule is data here, so a run imports only the modules of the
rules it runs: a `gpulint check` without a profile never imports the placement or capacity
rules, and `gpulint rules` imports no rule at all.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpulint.catalogue import (
    NEEDS_PROFILE,
    OFF_BY_DEFAULT,
    RuleInfo,
    catalogue_codes,
    catalogue_entry,
)

if TYPE_CHECKING:
    from gpulint.rules.base import Check, CorpusCheck

#: The codes each module of gpulint.rules implements; its CHECKS maps them to functions.
MODULE_CODES: dict[str, tuple[str, ...]] = {
    "manifest": ("GPU000", "GPU005"),
    "resources": ("GPU001", "GPU002", "GPU003", "GPU004"),
    "placement": ("GPU101", "GPU102", "GPU103", "GPU104", "GPU105", "GPU106"),
    "capacity": ("GPU201", "GPU202"),
    "quota": ("GPU301", "GPU302", "GPU303"),
    "kueue": ("GPU310",),
    "priority": ("GPU401", "GPU402"),
    "device_plugin": ("GPU501", "GPU502", "GPU503"),
    "qos": ("GPU601",),
    "live": ("GPU900",),
}
RULE_MODULES: dict[str, str] = {
    code: module for module, codes in MODULE_CODES.items() for code in codes
}
#: Rules whose verdict on an object depends on objects in other files (their check is a
#: CorpusCheck): they run once, after every file, over what each file kept for them.
CORPUS_CODES = frozenset({"GPU106", "GPU201", "GPU301", "GPU302", "GPU303", "GPU900"})
#: Rules that judge only objects of these kinds among the checked manifests.
SUBJECT_KINDS: dict[str, frozenset[str]] = dict.fromkeys(
    ("GPU501", "GPU502", "GPU503"), frozenset({"DaemonSet"})
)
#: Rules that judge pods against cluster objects of these kinds, which the cluster profile or
#: the checked manifests define.
POLICY_KINDS: dict[str, frozenset[str]] = {
    "GPU301": frozenset({"ResourceQuota"}),
    "GPU302": frozenset({"ResourceQuota"}),
    "GPU303": frozenset({"LimitRange"}),
    "GPU401": frozenset({"PriorityClass"}),
    "GPU402": frozenset({"PriorityClass"}),
}
#: Codes the engine reports itself rather than a check function.
ENGINE_CODES = frozenset({"GPU006"})
UNUSED_SUPPRESSION = "GPU006"


def check_of(code: str) -> Check | CorpusCheck | None:
    """The function that checks rule `code`, its module imported now (None: an engine code)."""
    module = RULE_MODULES.get(code)
    if module is None:
        return None
    checks: dict[str, Check | CorpusCheck] = importlib.import_module(
        f"gpulint.rules.{module}"
    ).CHECKS
    return checks[code]


def all_checks() -> dict[str, Check | CorpusCheck]:
    """Every rule module's CHECKS merged: imports every rule module."""
    checks: dict[str, Check | CorpusCheck] = {}
    for module in MODULE_CODES:
        checks.update(importlib.import_module(f"gpulint.rules.{module}").CHECKS)
    return checks


@dataclass(frozen=True)
class Rule:
    """A rule's code and where its check lives (None for codes the engine reports itself)."""

    code: str
    module: str | None

    @property
    def info(self) -> RuleInfo:
        """The rule's catalogue entry; asking for it reads the entry's file (once)."""
        return catalogue_entry(self.code)

    @property
    def enabled(self) -> bool:
        """Whether the rule runs when the configuration does not say otherwise."""
        return self.code not in OFF_BY_DEFAULT

    @property
    def needs_profile(self) -> bool:
        """Whether the rule only runs when a cluster profile is given."""
        return self.code in NEEDS_PROFILE

    @property
    def check(self) -> Check | CorpusCheck | None:
        """The check function; asking for it imports the rule's module."""
        return check_of(self.code)

    def has_work(self, kinds: Collection[str], profile_given: bool) -> bool:
        """False when the rule cannot find anything in manifests of `kinds`.

        Such a rule is not run, so a run that has nothing for it never imports its module.
        """
        code = self.code
        if code in SUBJECT_KINDS:
            return not SUBJECT_KINDS[code].isdisjoint(kinds)
        if code in POLICY_KINDS:
            return profile_given or not POLICY_KINDS[code].isdisjoint(kinds)
        return True


def build_registry() -> tuple[Rule, ...]:
    """Every rule in code order; fails loudly if the catalogue and the checks disagree."""
    codes = catalogue_codes()
    missing_entries = sorted(set(RULE_MODULES) - set(codes))
    missing_checks = sorted(set(codes) - set(RULE_MODULES) - ENGINE_CODES)
    if missing_entries or missing_checks:
        raise RuntimeError(
            f"rule catalogue out of step: no entry for {missing_entries}, "
            f"no check for {missing_checks}"
        )
    return tuple(Rule(code, RULE_MODULES.get(code)) for code in codes)
