"""Inline `# gpulint: ignore[...]` comments and `gpulint.io/ignore` annotations.

A comment suppresses findings on its own line, or on every line of an object when it sits on
that object's `kind:` line. The annotation, on a workload or on its pod template, suppresses
findings about that object. Each use is recorded so unused suppressions can be reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpulint.config import matches_selector
from gpulint.model import Document, SourceFile, Workload
from gpulint.yamltree import Pos, YMap

ANNOTATION = "gpulint.io/ignore"
_SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True, eq=False)
class Marker:
    """One place that suppresses findings; no codes means every code."""

    file: SourceFile
    pos: Pos
    codes: frozenset[str]
    kind: str  # "comment" or "annotation"

    def covers(self, code: str) -> bool:
        """True when this marker suppresses `code`."""
        return not self.codes or any(matches_selector(code, c) for c in self.codes)


class SuppressionTracker:
    """Answers "is this finding suppressed?" and remembers which markers were used."""

    def __init__(self, documents: Iterable[Document], workloads: Iterable[Workload]) -> None:
        self._comments: dict[tuple[int, int], Marker] = {}
        self._annotations: dict[int, list[Marker]] = {}
        self._used: dict[int, set[str]] = {}
        self._markers: list[Marker] = []
        self._seen_files: set[int] = set()
        for document in documents:
            self._add_file(document.file)
            self._add_annotation(document, document.annotations)
        for workload in workloads:
            for template in workload.templates:
                if template.node is not workload.document.obj:
                    self._add_annotation(workload.document, template.annotations)

    def _add_file(self, file: SourceFile) -> None:
        if id(file) in self._seen_files:
            return
        self._seen_files.add(id(file))
        for line, suppression in file.suppressions.items():
            marker = Marker(file, (line, suppression.column), suppression.codes, "comment")
            self._comments[(id(file), line)] = marker
            self._markers.append(marker)

    def _add_annotation(self, document: Document, annotations: YMap) -> None:
        value = annotations.get(ANNOTATION)
        if value is None:
            return
        codes = frozenset(c.upper() for c in _SPLIT.split(str(value)) if c)
        marker = Marker(document.file, annotations.pos_of_value(ANNOTATION), codes, "annotation")
        self._annotations.setdefault(id(document), []).append(marker)
        self._markers.append(marker)

    def suppresses(self, file: SourceFile, line: int, document: Document | None, code: str) -> bool:
        """True (and the marker counted as used) when a marker covers this finding."""
        candidates = [self._comments.get((id(file), line))]
        if document is not None:
            candidates.append(self._comments.get((id(file), document.kind_pos[0])))
            candidates.extend(self._annotations.get(id(document), ()))
        for marker in candidates:
            if marker is not None and marker.covers(code):
                self._used.setdefault(id(marker), set()).add(code)
                return True
        return False

    def unused(self) -> Iterator[tuple[Marker, tuple[str, ...]]]:
        """Markers that suppressed nothing, with the codes they named that matched nothing."""
        for marker in self._markers:
            used = self._used.get(id(marker), set())
            if not marker.codes:
                if not used:
                    yield marker, ()
                continue
            idle = tuple(
                sorted(c for c in marker.codes if not any(matches_selector(u, c) for u in used))
            )
            if idle:
                yield marker, idle
