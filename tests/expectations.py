"""Expectation comments in fixture files.

`# expect: GPU003:17, GPU601` on a line says those findings point at that line (the number
after the colon is the column; without it any column on the line matches).
`# expect@12: GPU000:3` names the line explicitly, for lines that cannot carry a comment.
`# fixture-args: --profile ../profiles/eks.yaml` adds command-line arguments for the file
(paths relative to the fixture). JSON files keep their expectations in `<name>.expect`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

_EXPECT = re.compile(r"#\s*expect(?:@(\d+))?:\s*(.+?)\s*$")
_ITEM = re.compile(r"^(GPU\d{3})(?::(\d+))?$")
_ARGS = re.compile(r"#\s*fixture-args:\s*(.+?)\s*$")


@dataclass(frozen=True)
class Expected:
    code: str
    line: int
    column: int | None


def expectations_text(path: Path) -> str:
    """The text holding a fixture's expectation comments."""
    sidecar = path.with_name(path.name + ".expect")
    return sidecar.read_text() if sidecar.exists() else path.read_text()


def parse_expectations(text: str) -> list[Expected]:
    """Every expectation written in `text`."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        if not match:
            continue
        target = int(match.group(1)) if match.group(1) else number
        for item in match.group(2).split(","):
            parsed = _ITEM.match(item.strip())
            if not parsed:
                raise ValueError(f"line {number}: bad expectation {item!r}")
            column = int(parsed.group(2)) if parsed.group(2) else None
            found.append(Expected(parsed.group(1), target, column))
    return found


def fixture_args(path: Path) -> list[str]:
    """Extra command-line arguments the fixture asks for, with paths made absolute."""
    args: list[str] = []
    for line in expectations_text(path).splitlines():
        match = _ARGS.search(line)
        if match:
            for arg in shlex.split(match.group(1)):
                candidate = path.parent / arg
                args.append(
                    str(candidate.resolve())
                    if not arg.startswith("-") and candidate.exists()
                    else arg
                )
    return args


def unmatched(expected: list[Expected], actual: list[tuple[str, int, int]]) -> tuple[list, list]:
    """(expected but missing, reported but not expected), matching each finding once."""
    remaining = list(actual)
    missing = []
    # Exact-column expectations first, so a column-less one cannot steal their finding.
    for exp in sorted(expected, key=lambda e: e.column is None):
        hit = next(
            (
                a
                for a in remaining
                if a[0] == exp.code and a[1] == exp.line and exp.column in (None, a[2])
            ),
            None,
        )
        if hit is None:
            missing.append(exp)
        else:
            remaining.remove(hit)
    return missing, remaining
