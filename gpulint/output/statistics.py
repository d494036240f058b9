"""`--statistics`: how many findings each rule produced, most frequent first (as in ruff)."""

from __future__ import annotations

import json
from collections import Counter

from gpulint.findings import LintResult


def code_counts(result: LintResult) -> list[tuple[str, str, int, int]]:
    """(code, name, count, fixable) per code with findings, by count descending, then code;
    `fixable` counts the findings `--fix` fixes (`[*]`)."""
    counts: Counter[tuple[str, str]] = Counter()
    fixable: Counter[tuple[str, str]] = Counter()
    for finding in result.findings:
        counts[finding.code, finding.name] += 1
        fixable[finding.code, finding.name] += finding.applicability == "safe"
    return sorted(
        ((code, name, n, fixable[code, name]) for (code, name), n in counts.items()),
        key=lambda c: (-c[2], c[0]),
    )


def statistics_text(result: LintResult) -> str:
    """`count<TAB>code<TAB>[*] name` lines (as ruff's: `[*]` when `--fix` fixes some of them,
    spaces otherwise), the counts right-aligned; nothing for a clean run."""
    counts = code_counts(result)
    width = max((len(str(n)) for _, _, n, _ in counts), default=1)
    return "".join(
        f"{n:>{width}}\t{code}\t{'[*]' if fixed else '   '} {name}\n"
        for code, name, n, fixed in counts
    )


def statistics_json(result: LintResult) -> str:
    """`[{"code": ..., "name": ..., "count": ..., "fixable": ...}]`."""
    rows = [
        {"code": code, "name": name, "count": n, "fixable": fixed}
        for code, name, n, fixed in code_counts(result)
    ]
    return json.dumps(rows, indent=2) + "\n"
