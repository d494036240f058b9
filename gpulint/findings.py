"""What a run produces: findings and the summary the formatters print."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpulint.model import ObjectRef, Severity
from gpulint.views import NamedTuple, frozen_record

if TYPE_CHECKING:
    from gpulint.edits import Edit
    from gpulint.spool import FindingSpool


class RenderedAt(NamedTuple):
    """Where a finding sits in a rendered stream (`helm template`, `kubectl kustomize` output).

    `of` names the render: the chart or overlay, and the values set when there are several.
    """

    of: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.of}:{self.line}:{self.column}"


@frozen_record
class Finding:
    """One reported problem, at its file:line:column, with the fix to apply."""

    code: str
    name: str
    severity: Severity
    path: str
    line: int
    column: int
    message: str
    fix: str | None
    object: ObjectRef | None = None
    source: str | None = None  # the Helm template the object was rendered from
    edits: tuple[Edit, ...] = ()  # text edits that fix it
    applicability: str | None = None  # of the edits: "safe" or "unsafe" (see gpulint.fixing)
    # Set for objects gpulint rendered: path:line:column is then the file the author edits.
    rendered: RenderedAt | None = None
    # The named clusters it holds in, when checked against several and it holds in some only
    # (gpulint.clusters); empty: it holds in every cluster checked.
    clusters: tuple[str, ...] = ()

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        """Findings are reported by path, line, column, then code."""
        return self.path, self.line, self.column, self.code


class CheckedObject(NamedTuple):
    """One Kubernetes object a run looked at, and the file it was read from."""

    path: str
    ref: ObjectRef
    source: str | None = None  # the Helm template the object was rendered from


@frozen_record
class LintResult:
    """Findings of a run plus what was looked at."""

    # In report order; a FindingSpool when the run kept its findings on disk.
    findings: tuple[Finding, ...] | FindingSpool
    files: int
    objects: int
    notes: tuple[str, ...] = ()
    checked: tuple[CheckedObject, ...] = ()  # every object, in input order
    # Objects that request accelerators where gpulint reads no pod (GPU007), selected or not.
    unchecked: int = 0

    def count(self, severity: Severity) -> int:
        """How many findings have exactly `severity`."""
        return sum(1 for f in self.findings if f.severity is severity)

    def fails(self, threshold: Severity | None) -> bool:
        """True when a finding is at or above `threshold` (None: never fail)."""
        return threshold is not None and any(f.severity >= threshold for f in self.findings)


def merge_runs(results: Sequence[LintResult]) -> LintResult:
    """One result of runs over different files (each path checked with its own config): the
    findings in report order, what was looked at summed, each note once.

    A finding two runs both report (one in a `context:` file both read, involving files of
    each) is reported as often as one run reports it, not once per run.
    """
    from collections import Counter

    most: Counter[Finding] = Counter()
    for result in results:
        for finding, times in Counter(result.findings).items():
            most[finding] = max(most[finding], times)
    findings = sorted(most.elements(), key=lambda f: f.sort_key)
    return LintResult(
        findings=tuple(findings),
        files=sum(result.files for result in results),
        objects=sum(result.objects for result in results),
        notes=tuple(dict.fromkeys(note for result in results for note in result.notes)),
        checked=tuple(c for result in results for c in result.checked),
        unchecked=sum(result.unchecked for result in results),
    )
