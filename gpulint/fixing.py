"""`gpulint check --fix` and `--diff`: apply the fixes findings carry, until none is left.

A fix can expose the next finding (a renamed GPU key makes the pod a GPU pod that now needs a
toleration), so fixing runs the checks again over the fixed text, in memory, until a pass
fixes nothing more or `MAX_PASSES` is reached. Files are written only at the end, and only
with `--fix`, each replaced atomically (gpulint.atomic); `--diff` shows the same changes and
writes nothing.

Every edit is verified before it counts (gpulint.edits.apply_fixes), and a finding keeps its
edits, and so its `[*]`, only where they will be made (`settle`): a fix that is not made says
why (`FixResult.notes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field, replace

from gpulint.findings import Finding, LintResult
from gpulint.views import NamedTuple, frozen_record
from gpulint.yamltree import parse

#: Enough for every chain of fixes gpulint knows (a rename, then a toleration), with room.
MAX_PASSES = 8
#: Marks of a file that something else writes: fixing it would be overwritten.
_GENERATED_MARKS = ("# Source: ", "DO NOT EDIT", "@generated")
_BOM = b"\xef\xbb\xbf"
# Where the diff splits lines: the line breaks the parser knows, not every one Python does
# (str.splitlines also breaks at VT, FF and the separators U+001C-U+001E).
_DIFF_LINES = "[^\r\n\x85\u2028\u2029]*(?:\r\n|[\n\r\x85\u2028\u2029])|[^\r\n\x85\u2028\u2029]+\\Z"


class Applicability:
    """How sure a fix is: safe ones apply with --fix, unsafe ones also need --unsafe-fixes."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class Source(NamedTuple):
    """A file as fixing reads it: its bytes, its text (without a BOM), and its syntax."""

    original: bytes
    text: str
    bom: bool
    is_json: bool

    def encode(self, text: str) -> bytes:
        """`text` as this file's bytes (its BOM kept)."""
        return (_BOM if self.bom else b"") + text.encode("utf-8")


class NotFixed(NamedTuple):
    """A fix that is not made: of a whole file (`finding` None) or of one finding."""

    path: str
    why: str
    finding: Finding | None = None

    def line(self) -> str:
        """`gpulint: PATH[:LINE:COLUMN: CODE]: not fixed: WHY`, escaped as findings are."""
        from gpulint.output.escape import one_line

        where = one_line(self.path, limit=len(self.path))
        if self.finding is not None:
            where += f":{self.finding.line}:{self.finding.column}: {self.finding.code}"
        return f"gpulint: {where}: not fixed: {one_line(self.why)}"


Read = Callable[[str], "Source | str"]


@frozen_record
class FixResult:
    """What fixing did: each changed file's text before and after, and the final check."""

    changed: dict[str, tuple[str, str]]  # path -> (original text, fixed text)
    fixed: int  # how many findings the applied edits fixed
    result: LintResult  # the check of the fixed text
    not_fixed: tuple[NotFixed, ...]  # files and findings whose fixes are not made, with why
    stdin: str | None = None  # the name of standard input: fixed for a diff, never written
    sources: dict[str, Source] = field(default_factory=dict)
    fixed_in: dict[str, int] = field(default_factory=dict)  # path -> findings fixed in it
    check: Callable[[Mapping[str, bytes]], LintResult] | None = None
    unsafe: bool = False
    root: str = "."
    written: tuple[str, ...] = ()  # set by write()

    def diff(self) -> str:
        """The unified diff of every change, in path order."""
        import difflib

        chunks = []
        for path in sorted(self.changed):
            before, after = self.changed[path]
            chunks.extend(
                difflib.unified_diff(
                    re.findall(_DIFF_LINES, before), re.findall(_DIFF_LINES, after), path, path
                )
            )
        return "".join(line if line.endswith("\n") else f"{line}\n" for line in chunks)

    def notes(self) -> list[str]:
        """The `not fixed` lines for standard error."""
        return [note.line() for note in self.not_fixed]

    def write(self) -> FixResult:
        """Replace every fixed file; what was written, and what not and why (`not_fixed`).

        A file that cannot be replaced (it changed since it was read, it is gone, read-only,
        a link out of the tree, the disk is full) is left as it is.
        """
        from gpulint.atomic import NotWritten
        from gpulint.atomic import replace as replace_file

        written: list[str] = []
        notes = list(self.not_fixed)
        for path, (_, after) in sorted(self.changed.items()):
            if path == self.stdin:
                why = "standard input is not fixed in place; --diff shows its fixes"
                notes.append(NotFixed(path, why))
                continue
            source = self.sources[path]
            try:
                replace_file(path, source.original, source.encode(after), self.root)
            except NotWritten as exc:
                notes.append(NotFixed(path, exc.why))
            else:
                written.append(path)
        return replace(
            self,
            written=tuple(written),
            not_fixed=tuple(notes),
            fixed=sum(self.fixed_in.get(p, 0) for p in written),
        )

    def final_result(self) -> LintResult:
        """The findings of the files as they are after `write`: those of the fixed text, or,
        when a file could not be written, of a new check (GpulintError when it is gone)."""
        unwritten = [p for p in self.changed if p not in self.written and p != self.stdin]
        if not unwritten or self.check is None:
            return self.result
        overlay = {p: self.sources[p].encode(self.changed[p][1]) for p in self.written}
        return settle(self.check(overlay), _reader(self.stdin, self.root), self.unsafe)[0]


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
    root: str = ".",
) -> FixResult:
    """Check, apply what can be fixed, check the fixed text again; repeat until stable.

    `check(overlay)` runs the checks with `overlay` (input name -> bytes) read instead of the
    file of that name. Fixes go only to files that can take them (`read_source`) and are
    verified edit by edit (`apply_fixes`); what is not fixed, and why, is in `not_fixed`.
    `stdin` (name, bytes) is fixed in memory like a file, for a diff: `FixResult.write` never
    writes it. Files are named relative to the working directory; `root` is the checked
    tree, out of which no symbolic link is followed.
    """
    from gpulint.edits import apply_fixes

    read = _reader(stdin, root)
    sources: dict[str, Source] = {}
    refused: dict[str, str] = {}
    texts: dict[str, str] = {}
    overlay: dict[str, bytes] = {}
    fixed_in: dict[str, int] = {}
    result = check(overlay)
    for _ in range(MAX_PASSES):
        progress = False
        for path, findings in _by_path(f for f in result.findings if applies(f, unsafe)):
            if path in refused:
                continue
            source = sources.get(path) or read(path)
            if isinstance(source, str):
                refused[path] = source
                continue
            sources[path] = source
            current = texts.get(path, source.text)
            made = apply_fixes(current, [f.edits for f in findings], is_json=source.is_json)
            if made.applied and made.text != current:
                texts[path] = made.text
                overlay[path] = source.encode(made.text)
                fixed_in[path] = fixed_in.get(path, 0) + len(made.applied)
                progress = True
        if not progress:
            break
        result = check(overlay)

    def current(path: str) -> Source | str:
        if path in refused:
            return refused[path]
        source = sources.get(path) or read(path)
        if isinstance(source, Source) and path in texts:
            return source._replace(text=texts[path])
        return source

    result, notes = settle(result, current, unsafe)
    notes = [NotFixed(p, why) for p, why in sorted(refused.items())] + notes
    changed = {p: (sources[p].text, text) for p, text in texts.items() if text != sources[p].text}
    return FixResult(
        changed,
        sum(fixed_in.values()),
        result,
        tuple(notes),
        stdin[0] if stdin else None,
        sources,
        fixed_in,
        check,
        unsafe,
        root,
    )


def add_ignores(
    check: Callable[[Mapping[str, bytes]], LintResult],
    *,
    stdin: tuple[str, bytes] | None = None,
    root: str = ".",
) -> FixResult:
    """`gpulint check --add-ignore`: a `# gpulint: ignore[CODE]` comment on the line of each
    finding, so that a repository adopting gpulint starts clean and only new findings fail.

    The comments are made as fixes are (`fix`): each line's codes in one edit, verified to
    leave every file's tree as it was, written atomically. What cannot take a comment (a JSON
    file, a rendered chart, a line holding a malformed suppression) stays reported, with why.
    """
    return fix(lambda overlay: ignore_edits(check(overlay)), stdin=stdin, root=root)


def ignore_edits(result: LintResult) -> LintResult:
    """`result` with each finding's edits replaced by the comment that suppresses it on its
    line (all the codes found on that line), and no other edit."""
    from gpulint.edits import AddIgnore
    from gpulint.rules import UNUSED_SUPPRESSION

    findings = tuple(result.findings)
    close = getattr(result.findings, "close", None)
    if close is not None:  # a spooled run: read back once, released here
        close()

    def takes_comment(finding: Finding) -> bool:
        # A suppression is not suppressed: GPU006 is fixed in the suppression itself. A render's
        # findings point into templates and values, which do not take YAML comments as a rule.
        return (
            finding.code != UNUSED_SUPPRESSION
            and finding.rendered is None
            and finding.source is None
        )

    codes: dict[tuple[str, int], set[str]] = {}
    for finding in findings:
        if takes_comment(finding):
            codes.setdefault((finding.path, finding.line), set()).add(finding.code)
    edits = {where: (AddIgnore(where[1], tuple(sorted(found))),) for where, found in codes.items()}
    marked = tuple(
        replace(finding, edits=edits[(finding.path, finding.line)], applicability="safe")
        if takes_comment(finding)
        else replace(finding, edits=(), applicability=None)
        for finding in findings
    )
    return replace(result, findings=marked)


def settle(
    result: LintResult, read: Read, unsafe: bool = True
) -> tuple[LintResult, list[NotFixed]]:
    """`result` with the edits (and so the `[*]`) left only on findings whose fix will be made
    to the text `read(path)` gives; and why each fix of this run (`applies(f, unsafe)`) is not.

    A result without edits is returned as it is, without reading anything.
    """
    pending = [f for f in result.findings if f.edits]
    if not pending:
        return result, []
    from gpulint.edits import apply_fixes

    notes: list[NotFixed] = []
    dropped: set[int] = set()
    for path, findings in _by_path(pending):
        source = read(path)
        if isinstance(source, str):
            why = {id(f): source for f in findings}
        else:
            made = apply_fixes(source.text, [f.edits for f in findings], is_json=source.is_json)
            why = {id(findings[i]): text for i, text in made.refused.items()}
        for finding in findings:
            if id(finding) in why:
                dropped.add(id(finding))
                if applies(finding, unsafe) and not isinstance(source, str):
                    notes.append(NotFixed(path, why[id(finding)], finding))
    if not dropped:
        return result, notes
    kept = {id(f) for f in pending if id(f) not in dropped}
    settled = _Settled(result.findings, kept, pending)
    # A large run spools its findings on disk: they are read again rather than kept.
    findings = tuple(settled) if isinstance(result.findings, tuple) else settled
    return replace(result, findings=findings), notes


class _Settled:
    """A run's findings, those not in `kept` of `pending` without their edits."""

    def __init__(self, findings: Iterable[Finding], kept: set[int], pending: list[Finding]):
        self._findings = findings
        self._pending = pending  # holds the findings whose ids `kept` names
        self._kept = {_identity(f) for f in pending if id(f) in kept}

    def __iter__(self) -> Iterator[Finding]:
        for finding in self._findings:
            if finding.edits and _identity(finding) not in self._kept:
                finding = replace(finding, edits=(), applicability=None)
            yield finding

    def __len__(self) -> int:
        return len(self._findings)  # type: ignore[arg-type]

    def close(self) -> None:
        """Release what the findings hold on disk."""
        close = getattr(self._findings, "close", None)
        if close is not None:
            close()


def _identity(finding: Finding) -> tuple[str, int, int, str, str]:
    # A spooled finding read again is a new object: it is told apart by where it is and what.
    return finding.path, finding.line, finding.column, finding.code, finding.message


def read_source(data: bytes, path: str) -> Source | str:
    """The file's bytes as a Source, or why fixes are not made to it: a file that a tool
    generated (rendered Helm output, a generated file), that is not UTF-8, or that does not
    parse (past a syntax error the tree, and so where edits go, is unknown)."""
    bom = data.startswith(_BOM)
    try:
        text = data[3 if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    head = text[:4096]
    for mark in _GENERATED_MARKS:
        if mark in head:
            return f"a tool generated it (`{mark.strip()}`); fix what it is generated from"
    error = parse(text).error
    if error is not None:
        return f"it does not parse ({error.line}:{error.column}: {error.problem})"
    is_json = path.lower().endswith(".json") or (
        text.lstrip()[:1] in ("{", "[") and _strict_json(text)
    )
    return Source(data, text, bom, is_json)


def _strict_json(text: str) -> bool:
    import json

    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _reader(stdin: tuple[str, bytes] | None, root: str) -> Read:
    """How fixing reads an input: standard input from memory, a file as `--fix` would
    replace it (gpulint.atomic)."""

    from gpulint.atomic import NotWritten, read_original

    def read(path: str) -> Source | str:
        if stdin is not None and path == stdin[0]:
            return read_source(stdin[1], path)
        try:
            return read_source(read_original(path, root), path)
        except NotWritten as exc:
            return exc.why

    return read


def check_marks(result: LintResult, stdin: tuple[str, bytes] | None = None) -> LintResult:
    """`result` of a plain check with `[*]` (the edits) only on findings `--fix` would fix."""
    return settle(result, _reader(stdin, "."))[0]


def _by_path(findings: Iterable[Finding]) -> Iterator[tuple[str, list[Finding]]]:
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    return iter(by_path.items())
