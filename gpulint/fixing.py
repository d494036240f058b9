"""`gpulint check --fix` and `--diff`: apply the fixes findings carry, until none is left.

A fix can expose the next finding (a renamed GPU key makes the pod a GPU pod that now needs a
toleration), so fixing runs the checks again over the fixed text, in memory, until a pass
fixes nothing more or `MAX_PASSES` is reached. Files are written only at the end, and only
with `--fix`; `--diff` shows the same changes and writes nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpulint.edits import apply_edits
from gpulint.findings import Finding, LintResult
from gpulint.yamltree import parse

#: Enough for every chain of fixes gpulint knows (a rename, then a toleration), with room.
MAX_PASSES = 8
#: Marks of a file that something else writes: fixing it would be overwritten.
_GENERATED_MARKS = ("# Source: ", "DO NOT EDIT", "@generated")


class Applicability:
    """How sure a fix is: safe ones apply with --fix, unsafe ones also need --unsafe-fixes."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class FixResult:
    """What fixing did: each changed file's text before and after, and the final check."""

    changed: dict[str, tuple[str, str]]  # path -> (original text, fixed text)
    fixed: int  # how many findings the applied edits fixed
    result: LintResult  # the check of the fixed text
    not_in_place: tuple[str, ...]  # inputs with fixes that cannot be applied to them
    stdin: str | None = None  # the name of standard input: fixed for a diff, never written

    def diff(self) -> str:
        """The unified diff of every change, in path order."""
        chunks = []
        for path in sorted(self.changed):
            before, after = self.changed[path]
            chunks.extend(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    path,
                    path,
                )
            )
        return "".join(line if line.endswith("\n") else f"{line}\n" for line in chunks)

    def write(self) -> list[str]:
        """Write every fixed file in place (line breaks as they were); return their paths."""
        written = []
        for path, (_, after) in sorted(self.changed.items()):
            if path != self.stdin:
                Path(path).write_bytes(after.encode("utf-8"))
                written.append(path)
        return written


def applies(finding: Finding, unsafe: bool) -> bool:
    """Whether `finding` carries edits that this run may apply."""
    if not finding.edits:
        return False
    return finding.applicability == Applicability.SAFE or (
        unsafe and finding.applicability == Applicability.UNSAFE
    )


def fix(
    check: Callable[[Mapping[str, bytes]], LintResult],
    *,
    unsafe: bool = False,
    stdin: tuple[str, bytes] | None = None,
) -> FixResult:
    """Check, apply what can be fixed, check the fixed text again; repeat until stable.

    `check(overlay)` runs the checks with `overlay` (input name -> bytes) read instead of the
    file of that name. Fixes go only to text that can take them (`fixable`); the inputs that
    cannot are named in `not_in_place`. `stdin` (name, bytes) is fixed in memory like a file,
    for a diff: `FixResult.write` never writes it.
    """

    def read(path: str) -> bytes:
        return stdin[1] if stdin is not None and path == stdin[0] else Path(path).read_bytes()

    texts: dict[str, tuple[str, str]] = {}
    overlay: dict[str, bytes] = {}
    fixed = 0
    refused: set[str] = set()
    result = check(overlay)
    for _ in range(MAX_PASSES):
        by_path: dict[str, list[Finding]] = {}
        for finding in result.findings:
            if applies(finding, unsafe):
                by_path.setdefault(finding.path, []).append(finding)
        progress = False
        for path, findings in by_path.items():
            original = texts[path][0] if path in texts else _text(path, read)
            if original is None or not fixable(original):
                refused.add(path)
                continue
            current = texts[path][1] if path in texts else original
            new, applied = apply_edits(current, _edits(findings))
            if applied and new != current:
                texts[path] = (original, new)
                overlay[path] = new.encode("utf-8")
                fixed += applied
                progress = True
        if not progress:
            break
        result = check(overlay)
    changed = {path: pair for path, pair in texts.items() if pair[0] != pair[1]}
    return FixResult(changed, fixed, result, tuple(sorted(refused)), stdin[0] if stdin else None)


def fixable(text: str) -> bool:
    """False for text that a tool generated (rendered Helm output, a generated file), or that
    does not parse (past a syntax error the tree, and so where edits go, is unknown)."""
    head = text[:4096]
    if any(mark in head for mark in _GENERATED_MARKS):
        return False
    return parse(text).error is None


def _edits(findings: Iterable[Finding]) -> list:
    return [edit for finding in findings for edit in finding.edits]


def _text(path: str, read: Callable[[str], bytes]) -> str | None:
    try:
        return read(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
