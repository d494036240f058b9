"""The rule registry: catalogue entries joined with the check functions that implement them."""

from __future__ import annotations

from dataclasses import dataclass

from gpulint.catalogue import RuleInfo, load_catalogue
from gpulint.rules import (
    capacity,
    device_plugin,
    kueue,
    live,
    manifest,
    placement,
    priority,
    qos,
    quota,
    resources,
)
from gpulint.rules.base import Check, CorpusCheck

CHECKS: dict[str, Check | CorpusCheck] = {
    **manifest.CHECKS,
    **resources.CHECKS,
    **placement.CHECKS,
    **capacity.CHECKS,
    **qos.CHECKS,
    **quota.CHECKS,
    **kueue.CHECKS,
    **priority.CHECKS,
    **device_plugin.CHECKS,
    **live.CHECKS,
}
#: Codes the engine reports itself rather than a check function.
ENGINE_CODES = frozenset({"GPU006"})
UNUSED_SUPPRESSION = "GPU006"


@dataclass(frozen=True)
class Rule:
    """A catalogue entry and its check (None for codes the engine reports itself)."""

    info: RuleInfo
    check: Check | CorpusCheck | None


def build_registry() -> tuple[Rule, ...]:
    """Every rule in code order; fails loudly if the catalogue and the checks disagree."""
    catalogue = load_catalogue()
    missing_entries = sorted(set(CHECKS) - set(catalogue))
    missing_checks = sorted(set(catalogue) - set(CHECKS) - ENGINE_CODES)
    if missing_entries or missing_checks:
        raise RuntimeError(
            f"rule catalogue out of step: no entry for {missing_entries}, "
            f"no check for {missing_checks}"
        )
    return tuple(Rule(info, CHECKS.get(code)) for code, info in catalogue.items())
