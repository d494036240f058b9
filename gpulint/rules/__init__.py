"""The rules: one check function per catalogue record (rules/GPUxxx.yaml).

Which function checks which rule is the record's `check:`; the registry (gpulint/_registry.py,
generated from the records) lists every rule's engine facts, so a run imports only the modules
of the rules it runs: a `gpulint check` without a profile never imports the placement or
capacity rules, and `gpulint rules` imports no rule at all.
"""

from __future__ import annotations

from gpulint.catalogue import Rule, registry

#: The code the engine reports for a suppression that suppressed nothing.
UNUSED_SUPPRESSION = "GPU006"

__all__ = ["UNUSED_SUPPRESSION", "Rule", "registry"]
