"""The rules: one check function per catalogue record (rules/GPUxxx.yaml).

Which function checks which rule is the record's `check:`; the registry (gpulint/_registry.py,
generated from the records) lists every rule's engine facts, so a run imports only the modules
of the rules it runs: a `gpulint check` without a profile never imports the placement or
capacity rules, and `gpulint rules` imports no rule at all.
"""

from __future__ import annotations

from gpulint.rules.base import Rule

#: The code the engine reports for a suppression that suppressed nothing.
UNUSED_SUPPRESSION = "GPU006"


def registry() -> tuple[Rule, ...]:
    """Every rule in code order, as the generated gpulint/_registry.py lists them."""
    from gpulint._registry import RULES

    return RULES


def rule_codes() -> tuple[str, ...]:
    """Every rule's code, in code order (what selectors are checked against)."""
    return tuple(rule.code for rule in registry())


__all__ = ["UNUSED_SUPPRESSION", "Rule", "registry", "rule_codes"]
