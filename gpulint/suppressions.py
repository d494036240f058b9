"""Inline `# gpulint: ignore[...]` comments and `gpulint.io/ignore` annotations.

A comment suppresses findings on its own line, or on every line of an object when it sits on
that object's `kind:` line. The annotation, on a workload or on its pod template, suppresses
findings about that object; so does a per-rule key, `ignore.gpulint.io/GPU601: "reason"`.
Each names rules by code, code prefix or name, with an optional reason after a colon. Each use
is recorded so unused suppressions can be reported; one written wrongly, or naming no rule,
suppresses nothing and is reported (GPU006).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from gpulint.config import matches_selector
from gpulint.fields import shown
from gpulint.ignores import parse_ignore_list
from gpulint.model import Document, DocumentLike, SourceFile, Workload
from gpulint.rules import registry
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap

ANNOTATION = "gpulint.io/ignore"
RULE_KEY_PREFIX = "ignore.gpulint.io/"  # `ignore.gpulint.io/GPU601: "reason"`, as kube-linter
_CODE_PREFIX = r"GPU\d{0,3}"


class Marker(NamedTuple):
    """One place that suppresses findings.

    `codes`: the codes and code prefixes it names (rule names resolved); `blanket`: it names
    none and suppresses every code; `unknown`: what it names that is no rule; `problem`: why it
    is malformed (it then suppresses nothing).
    """

    file: SourceFile
    pos: Pos
    codes: frozenset[str]
    kind: str  # "comment" or "annotation"
    blanket: bool = False
    unknown: tuple[str, ...] = ()
    problem: str | None = None
    reason: str = ""

    def covers(self, code: str) -> bool:
        """True when this marker suppresses `code`."""
        if self.problem is not None:
            return False
        return self.blanket or any(matches_selector(code, c) for c in self.codes)


def resolve(selectors: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Selectors as written -> (the codes or prefixes they name, those that name no rule).

    A code or prefix is matched whatever its case (`gpu002`); a rule name is one of the
    catalogue's (`gpu-pod-besteffort-cpu-memory`); `ALL` is every rule.
    """
    codes: set[str] = set()
    unknown: list[str] = []
    rules = registry()
    for selector in selectors:
        upper = selector.upper()
        if upper == "ALL" or (
            re.fullmatch(_CODE_PREFIX, upper) and any(r.code.startswith(upper) for r in rules)
        ):
            codes.add(upper)
            continue
        code = next((r.code for r in rules if r.name == selector.lower()), None)
        if code is None:
            unknown.append(selector)
        else:
            codes.add(code)
    return frozenset(codes), tuple(unknown)


def _closest_rule(selector: str) -> str | None:
    """The rule name or code `selector` most likely misspells, if any is close."""
    import difflib  # only for a suppression that names no rule

    rules = registry()
    if re.match(r"GPU\d", selector.upper()):
        found = difflib.get_close_matches(selector.upper(), [r.code for r in rules], 1, 0.8)
    else:
        found = difflib.get_close_matches(selector.lower(), [r.name for r in rules], 1, 0.75)
    return found[0] if found else None


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
            codes, unknown = resolve(suppression.selectors)
            self._add(
                Marker(
                    file,
                    (line, suppression.column),
                    codes,
                    "comment",
                    blanket=not suppression.selectors,
                    unknown=unknown,
                    problem=suppression.problem,
                    reason=suppression.reason,
                )
            )

    def _add(self, marker: Marker, used: Iterable[str] = ()) -> None:
        key = (marker.file.path, marker.pos)
        if key not in self._markers:
            self._markers[key] = marker
            if marker.kind == "comment":
                self._comments[(marker.file.path, marker.pos[0])] = marker
        if used:
            self._used.setdefault(key, set()).update(used)

    def _add_annotation(self, document: Document, annotations: YMap) -> None:
        for key, value in annotations.items():
            if not isinstance(key, str):
                continue
            if key == ANNOTATION:
                selectors, reason = parse_ignore_list(str(value) if value is not None else "")
                problem = None if selectors else "names no rule: list the codes or rule names"
                pos = annotations.pos_of_value(key)
            elif key.startswith(RULE_KEY_PREFIX):
                selectors = (key[len(RULE_KEY_PREFIX) :],)
                reason = str(value).strip() if value is not None else ""
                problem = None if selectors[0] else "names no rule after the slash"
                pos = annotations.pos_of_key(key)
            else:
                continue
            codes, unknown = resolve(selectors)
            marker = Marker(
                document.file, pos, codes, "annotation", False, unknown, problem, reason
            )
            if (marker.file.path, marker.pos) not in self._markers:
                self._annotations.setdefault((document.file.path, document.kind_pos), []).append(
                    marker
                )
                self._add(marker)

    @property
    def holds_markers(self) -> bool:
        """Whether it holds any marker: merging one that holds none changes nothing."""
        return bool(self._markers or self._annotations)

    def merge(self, other: SuppressionTracker) -> None:
        """Take over the markers of `other` (one file's), and what they suppressed there."""
        for key, marker in other._markers.items():
            self._add(marker, other._used.get(key, ()))
        for key, markers in other._annotations.items():
            mine = self._annotations.setdefault(key, [])
            known = {m.pos for m in mine}
            mine.extend(m for m in markers if m.pos not in known)

    def copy(self) -> SuppressionTracker:
        """A tracker of the same markers, counting their use apart from this one (one
        cluster's findings of a file, in a run against several)."""
        copied = SuppressionTracker()
        copied.merge(self)
        return copied

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
        """Markers that suppressed nothing, with the codes they named that matched nothing.

        Malformed markers and names of no rule are left to `invalid`.
        """
        for key, marker in self._markers.items():
            if marker.problem is not None:
                continue
            used = self._used.get(key, set())
            if marker.blanket:
                if not used:
                    yield marker, ()
                continue
            idle = tuple(
                sorted(c for c in marker.codes if not any(matches_selector(u, c) for u in used))
            )
            if idle:
                yield marker, idle

    def invalid(self) -> Iterator[tuple[Marker, str]]:
        """Each marker written wrongly or naming no rule, with what is wrong (GPU006 always)."""
        for marker in self._markers.values():
            if marker.problem is not None:
                yield (
                    marker,
                    (
                        f"malformed suppression ({marker.kind}): {marker.problem}; "
                        "it suppresses nothing"
                    ),
                )
                continue
            for selector in marker.unknown:
                closest = _closest_rule(selector)
                hint = f' (did you mean "{closest}"?)' if closest else ""
                yield (
                    marker,
                    (
                        f'unknown suppression ({marker.kind}): "{shown(selector)}" is no rule\'s '
                        f"code or name{hint}; it suppresses nothing"
                    ),
                )


class SharedTrackers:
    """Copies of one file's tracker (one per cluster) asked as one, for a rule whose findings
    are the same in those clusters: what one suppresses each does, and counts as used."""

    def __init__(self, trackers: Sequence[SuppressionTracker]) -> None:
        self._trackers = trackers

    def suppresses(
        self, file: SourceFile, line: int, document: DocumentLike | None, code: str
    ) -> bool:
        """True (and the marker counted as used in every copy) when a marker covers this
        finding."""
        # Every copy is asked, so that each counts the marker as used.
        answers = [t.suppresses(file, line, document, code) for t in self._trackers]
        return answers[0]
