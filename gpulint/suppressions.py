"""Inline `# gpulint: ignore[...]` comments and `gpulint.io/ignore` annotations.

A comment suppresses findings on its own line, or on every line of an object when it sits on
that object's `kind:` line. The annotation, on a workload or on its pod template, suppresses
findings about that object. Each use is recorded so unused suppressions can be reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gpulint.config import matches_selector
from gpulint.model import Document, DocumentLike, SourceFile, Workload
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap

ANNOTATION = "gpulint.io/ignore"
_SPLIT = r"[\s,]+"  # compiled on first use: only an object with the annotation needs it


class Marker(NamedTuple):
    """One place that suppresses findings; no codes means every code."""

    file: SourceFile
    pos: Pos
    codes: frozenset[str]
    kind: str  # "comment" or "annotation"

    def covers(self, code: str) -> bool:
        """True when this marker suppresses `code`."""
        return not self.codes or any(matches_selector(code, c) for c in self.codes)


class SuppressionTracker:
    """Answers "is this finding suppressed?" and remembers which markers were used.

    Markers are keyed by file path and position, not by object identity: findings of
    corpus-wide rules are judged after the file's tree is gone, possibly against a copy of a
    document read in another pass or process, and a tracker per file is merged into the run's.
    """

    def __init__(
        self, documents: Iterable[Document] = (), workloads: Iterable[Workload] = ()
    ) -> None:
        self._comments: dict[tuple[str, int], Marker] = {}
        self._annotations: dict[tuple[str, Pos], list[Marker]] = {}
        self._used: dict[tuple[str, Pos], set[str]] = {}
        self._markers: dict[tuple[str, Pos], Marker] = {}
        self._seen_files: set[str] = set()
        for document in documents:
            self._add_file(document.file)
            self._add_annotation(document, document.annotations)
        for workload in workloads:
            for template in workload.templates:
                if template.node is not workload.document.obj:
                    self._add_annotation(workload.document, template.annotations)

    def _add_file(self, file: SourceFile) -> None:
        if file.path in self._seen_files:
            return
        self._seen_files.add(file.path)
        for line, suppression in file.suppressions.items():
            self._add(Marker(file, (line, suppression.column), suppression.codes, "comment"))

    def _add(self, marker: Marker, used: Iterable[str] = ()) -> None:
        key = (marker.file.path, marker.pos)
        if key not in self._markers:
            self._markers[key] = marker
            if marker.kind == "comment":
                self._comments[(marker.file.path, marker.pos[0])] = marker
        if used:
            self._used.setdefault(key, set()).update(used)

    def _add_annotation(self, document: Document, annotations: YMap) -> None:
        value = annotations.get(ANNOTATION)
        if value is None:
            return
        codes = frozenset(c.upper() for c in re.split(_SPLIT, str(value)) if c)
        marker = Marker(document.file, annotations.pos_of_value(ANNOTATION), codes, "annotation")
        if (marker.file.path, marker.pos) not in self._markers:
            key = (document.file.path, document.kind_pos)
            self._annotations.setdefault(key, []).append(marker)
            self._add(marker)

    def merge(self, other: SuppressionTracker) -> None:
        """Take over the markers of `other` (one file's), and what they suppressed there."""
        for key, marker in other._markers.items():
            self._add(marker, other._used.get(key, ()))
        for key, markers in other._annotations.items():
            mine = self._annotations.setdefault(key, [])
            known = {m.pos for m in mine}
            mine.extend(m for m in markers if m.pos not in known)

    def suppresses(
        self, file: SourceFile, line: int, document: DocumentLike | None, code: str
    ) -> bool:
        """True (and the marker counted as used) when a marker covers this finding."""
        candidates = [self._comments.get((file.path, line))]
        if document is not None:
            kind_pos = document.kind_pos
            candidates.append(self._comments.get((file.path, kind_pos[0])))
            candidates.extend(self._annotations.get((document.file.path, kind_pos), ()))
        for marker in candidates:
            if marker is not None and marker.covers(code):
                self._used.setdefault((marker.file.path, marker.pos), set()).add(code)
                return True
        return False

    def unused(self) -> Iterator[tuple[Marker, tuple[str, ...]]]:
        """Markers that suppressed nothing, with the codes they named that matched nothing."""
        for key, marker in self._markers.items():
            used = self._used.get(key, set())
            if not marker.codes:
                if not used:
                    yield marker, ()
                continue
            idle = tuple(
                sorted(c for c in marker.codes if not any(matches_selector(u, c) for u in used))
            )
            if idle:
                yield marker, idle
