"""`--statistics`: how many findings each rule produced, most frequent first (as in ruff)."""

from __future__ import annotations

import json
from collections import Counter

from gpulint.findings import LintResult


def code_counts(result: LintResult) -> list[tuple[str, str, int]]:
    """(code, name, count) per code with findings, by count descending, then code."""
    counts = Counter((f.code, f.name) for f in result.findings)
    return sorted(
        ((code, name, n) for (code, name), n in counts.items()), key=lambda c: (-c[2], c[0])
    )


def statistics_text(result: LintResult) -> str:
    """`count<TAB>code<TAB>name` lines, the counts right-aligned; nothing for a clean run."""
    counts = code_counts(result)
    width = max((len(str(n)) for _, _, n in counts), default=1)
    return "".join(f"{n:>{width}}\t{code}\t{name}\n" for code, name, n in counts)


def statistics_json(result: LintResult) -> str:
    """`[{"code": ..., "name": ..., "count": ...}]`."""
    rows = [{"code": code, "name": name, "count": n} for code, name, n in code_counts(result)]
    return json.dumps(rows, indent=2) + "\n"
