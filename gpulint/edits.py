"""Fixes as text edits: minimal changes to a manifest that keep every byte they do not touch.

A rule knows what to change (a key to rename, a toleration to add) and where (the positions
the tree carries), but not the file's text. So an edit is a small record resolved against the
text when it is applied: a rename checks that the old name is still written where the tree
said (quoted or plain) and changes only those characters; an insertion adds whole lines (or,
in a flow collection or a JSON file, flow text) and takes its indentation from the text
around it. Lines are counted as the parser counts them: a lone CR, NEL, LS and PS end a line
too, so a position always lands on the character the tree meant.

Then the edited text is parsed again and compared with the tree the edits mean (`apply_fixes`):
a fix whose text does not parse, writes a key twice, or changes anything but its target (an
anchor repeated elsewhere, an insertion that lands in the wrong place) is not made and says why.
A fix must never damage a file.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gpulint.ignores import added_to_line
from gpulint.views import NamedTuple
from gpulint.yamltree import (
    PURE_PARSE_MAX_CHARS,
    BuiltMap,
    ParsedDocument,
    Pos,
    YMap,
    YSeq,
    is_flow_colon,
    last_line,
    normalize_line_breaks,
    parse,
    pure_events,
    resolve_plain,
)

_QUOTES = "\"'"
# Plain scalars that some YAML reader would take for something other than the string itself:
# YAML 1.1 words (go-yaml, Kubernetes' decoder) and anything that starts like a number
# (`0x10`, `1e3`, `0o17`, `1_000`, `12:30`, a date). Compiled on first use: only a fix that
# writes a value needs them.
_NEEDS_QUOTES = r"(?i)\A(?:|~|null|true|false|yes|no|on|off|y|n|[-+.]?[0-9].*|[-+]?\.(?:inf|nan))\Z"
_PLAIN = r"\A[A-Za-z0-9_][A-Za-z0-9_./\-]*\Z"
# Every line break the parser knows (yamltree.normalize_line_breaks): CRLF first, as one.
_BREAK = "\r\n|[\n\r\x85\u2028\u2029]"
#: A document whose fixes do not verify together is retried one fix at a time, up to this many.
_SINGLE_TRIES = 16


class Splice(NamedTuple):
    """Replace text[start:end] with `text` (offsets into the file's text)."""

    start: int
    end: int
    text: str


class Intent(NamedTuple):
    """What a splice means to the tree, for the check after the edit.

    `kind` is "rename" (the key or scalar value written at `pos` becomes `value`), "append"
    (the sequence starting at `pos`, or whose first item is at `pos`, gains the items
    `value`) or "add" (the mapping whose first key is at `pos` gains the key `value[0]`
    holding the items `value[1]`).
    """

    kind: str
    pos: Pos
    value: Any


class Resolved(NamedTuple):
    """An edit resolved against a text: the splice to make and what it means."""

    splice: Splice
    intent: Intent


class Refusal(NamedTuple):
    """An edit that cannot be made to this text, and why."""

    why: str


class Rename(NamedTuple):
    """Replace the scalar `old` written at `pos` (plain or quoted) by `new`."""

    pos: Pos
    old: str
    new: str

    def resolve(self, lines: Lines) -> Resolved | Refusal:
        """The splice that makes the change, or why it cannot be made."""
        start = lines.offset(self.pos)
        if start is None:
            return Refusal("the text changed where the fix goes")
        text = lines.text
        if text.startswith(self.old, start):
            splice = Splice(start, start + len(self.old), self.new)
            return Resolved(splice, Intent("rename", self.pos, resolve_plain(self.new)))
        if text[start : start + 1] in _QUOTES and text.startswith(self.old, start + 1):
            quote = text[start]
            end = start + 1 + len(self.old)
            if text[end : end + 1] == quote and not any(q in self.new for q in "\"'\\"):
                splice = Splice(start + 1, end, self.new)
                return Resolved(splice, Intent("rename", self.pos, self.new))
        return Refusal("the text changed where the fix goes")


Items = tuple[tuple[tuple[str, str], ...], ...]


class AppendItem(NamedTuple):
    """Add `items` (each a mapping's key/value pairs) after the last item of a sequence.

    `first_item` and `last_item` are where the sequence's first and last items start;
    `last_line` is the last line the last item writes on; `sequence` is where the sequence
    itself starts (its `[` when it is a flow sequence, which may be empty).
    """

    first_item: Pos
    last_item: Pos
    last_line: int
    items: Items
    sequence: Pos | None = None

    def resolve(self, lines: Lines) -> Resolved | Refusal:
        """Lines inserted after the last item, indented as the existing items are; or, in a
        flow sequence, flow mappings before its `]`."""
        intent = Intent("append", self.sequence or self.first_item, self.items)
        at = None if self.sequence is None else lines.offset(self.sequence)
        if at is not None and lines.text[at : at + 1] == "[":
            splice = lines.flow_append(self.sequence, self.last_item, self.items)
            return Refusal(splice) if isinstance(splice, str) else Resolved(splice, intent)
        if lines.json:
            return Refusal("JSON takes no block sequence")
        dash = lines.dash_column(self.first_item)
        if dash is None:
            return Refusal("the list's first item does not start its line after a `-`")
        content = self.first_item[1] - dash  # columns from the dash to the item's first key
        after = lines.block_end(self.last_line, dash)
        first = lines.offset(self.first_item) or 0
        if lines.text[first : first + 1] == "{":  # `- {key: a, ...}` items
            pad = " " * (dash - 1) + "-" + " " * (content - 1)
            new = "".join(f"{pad}{flow_mapping(item)}{lines.newline}" for item in self.items)
        else:
            new = "".join(item_lines(item, dash, content, lines.newline) for item in self.items)
        at = lines.line_start(after + 1)
        if at == len(lines.text) and not lines.ends_with_break():
            new = lines.newline + new  # the item was the file's last line, with no line break
        return Resolved(Splice(at, at, new), intent)


class AddKey(NamedTuple):
    """Add `key:` holding a sequence of `items` to the mapping whose first key is at
    `first_key`, as its first key.

    `sequence_hint` is where some other block sequence's first item of the same mapping starts
    (its `containers:`), so the new sequence follows the file's dash indentation; `mapping` is
    where the mapping starts (its `{` when it is a flow mapping).
    """

    first_key: Pos
    key: str
    items: Items
    sequence_hint: Pos | None = None
    mapping: Pos | None = None

    def resolve(self, lines: Lines) -> Resolved | Refusal:
        """Lines inserted above the mapping's first key, at its column; in a flow mapping, the
        key and a flow sequence before its first key."""
        intent = Intent("add", self.first_key, (self.key, self.items))
        line, column = self.first_key
        start = lines.offset(self.first_key)
        brace = None if self.mapping is None else lines.offset(self.mapping)
        if start is None:
            return Refusal("the text changed where the fix goes")
        if brace is not None and lines.text[brace : brace + 1] == "{":
            entry = f"{lines.scalar(self.key)}: [{', '.join(lines.flow(i) for i in self.items)}],"
            if lines.blank_before(self.first_key):  # the first key starts its own line
                splice = Splice(start, start, f"{entry}{lines.newline}{' ' * (column - 1)}")
            else:
                splice = Splice(start, start, f"{entry} ")
            return Resolved(splice, intent)
        if lines.json:
            return Refusal("JSON takes no block mapping")
        if not lines.blank_before(self.first_key):
            return Refusal("the mapping's first key shares its line with a `-` or a parent key")
        dash, content = column, 2  # `key:` then `- item` at the key's column
        if self.sequence_hint is not None:
            hint_dash = lines.dash_column(self.sequence_hint)
            if hint_dash is not None:  # a sibling sequence of the same mapping shows the style
                dash, content = hint_dash, self.sequence_hint[1] - hint_dash
        indent = " " * (column - 1)
        body = "".join(item_lines(item, dash, content, lines.newline) for item in self.items)
        at = lines.line_start(line)
        return Resolved(Splice(at, at, f"{indent}{self.key}:{lines.newline}{body}"), intent)


class AddIgnore(NamedTuple):
    """Make `line` suppress `codes`: a `# gpulint: ignore[...]` comment at its end, or the codes
    added to the one it holds (`gpulint check --add-ignore`)."""

    line: int
    codes: tuple[str, ...]

    def resolve(self, lines: Lines) -> Resolved | Refusal:
        """The splice that writes the comment, or why it cannot be written."""
        if lines.json:
            return Refusal("JSON has no comments")
        if not 1 <= self.line <= len(lines.starts):
            return Refusal("the text changed where the fix goes")
        added = added_to_line(lines.line(self.line), self.codes)
        if isinstance(added, str):
            return Refusal(added)
        at = lines.line_start(self.line) + added[0]
        # A comment changes no value: the check after the edit expects the same tree.
        return Resolved(Splice(at, at, added[1]), Intent("comment", (self.line, 1), at))


Edit = Rename | AppendItem | AddKey | AddIgnore


class Lines:
    """A file's text with its line starts: positions to offsets, indentation questions.

    Lines end where the parser ends them (`_BREAK`), so a comment holding a lone CR or a
    U+2028 moves no position. `json` says the file is JSON: insertions are written as JSON.
    """

    def __init__(self, text: str, is_json: bool = False) -> None:
        self.text = text
        self.json = is_json
        self.starts = [0]
        self.ends: list[int] = []  # where each line's text ends, before its break
        counts: dict[str, int] = {}
        for match in re.finditer(_BREAK, text):
            self.ends.append(match.start())
            self.starts.append(match.end())
            counts[match.group()] = counts.get(match.group(), 0) + 1
        self.ends.append(len(text))
        # Inserted lines end as most lines of the file end (LF, CRLF; a lone CR for old Macs).
        common = [b for b in ("\n", "\r\n", "\r") if counts.get(b)]
        self.newline = max(common, key=lambda b: counts[b]) if common else "\n"
        self._flow_ends: dict[Pos, Pos] | None = None

    def line_start(self, line: int) -> int:
        """The offset where 1-based `line` starts (the end of the text past the last line)."""
        if line - 1 < len(self.starts):
            return self.starts[line - 1]
        return len(self.text)

    def line(self, line: int) -> str:
        """The text of 1-based `line` without its line break."""
        if not 1 <= line <= len(self.starts):
            return ""
        return self.text[self.starts[line - 1] : self.ends[line - 1]]

    def ends_with_break(self) -> bool:
        """Whether the text's last line ends with a line break."""
        return len(self.starts) > 1 and self.starts[-1] == len(self.text)

    def offset(self, pos: Pos) -> int | None:
        """The offset of a 1-based (line, column), or None when the text has no such place."""
        line, column = pos
        if not 1 <= line <= len(self.starts) or column < 1:
            return None
        offset = self.starts[line - 1] + column - 1
        return offset if offset <= self.ends[line - 1] else None

    def position(self, offset: int) -> Pos:
        """The 1-based (line, column) of an offset."""
        import bisect

        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def dash_column(self, item: Pos) -> int | None:
        """The 1-based column of the `-` that opens the block sequence item starting at `item`."""
        text = self.line(item[0])[: item[1] - 1]
        stripped = text.rstrip(" ")
        if not stripped.endswith("-") or stripped[:-1].strip(" "):
            return None  # a flow sequence, or an item that is not first on its line
        return len(stripped)

    def blank_before(self, pos: Pos) -> bool:
        """True when only spaces precede `pos` on its line."""
        return not self.line(pos[0])[: pos[1] - 1].strip(" ")

    def block_end(self, line: int, column: int) -> int:
        """The last line of a block that starts at or before `line` at 1-based `column`.

        Lines after `line` indented deeper than `column` (a multi-line scalar, a nested
        value written below) belong to it; blank lines and comments are left to what follows.
        """
        last = line
        probe = line + 1
        while probe <= len(self.starts):
            text = self.line(probe)
            stripped = text.lstrip(" ")
            if stripped and not stripped.startswith("#"):
                if len(text) - len(stripped) < column:
                    break
                last = probe
            probe += 1
        return last

    def scalar(self, value: str) -> str:
        """`value` as a string scalar of this file: JSON's, or YAML's (yaml_scalar)."""
        return _json_string(value) if self.json else yaml_scalar(value)

    def flow(self, item: Sequence[tuple[str, str]]) -> str:
        """A mapping in flow style, in this file's syntax."""
        return "{" + ", ".join(f"{self.scalar(k)}: {self.scalar(v)}" for k, v in item) + "}"

    def flow_end(self, start: Pos) -> Pos | None:
        """Where the `]` or `}` closing the flow collection that starts at `start` is, as the
        parser sees it (quotes, comments and nesting included)."""
        if self._flow_ends is None:
            self._flow_ends = _flow_ends(self.text)
        return self._flow_ends.get(start)

    def flow_append(self, sequence: Pos, last_item: Pos, items: Items) -> Splice | str:
        """The splice adding `items` at the end of the flow sequence at `sequence`, or why not."""
        end = self.flow_end(sequence)
        close = None if end is None else self.offset(end)
        if close is None:
            return "the end of the flow list cannot be found"
        text = self.text
        before = close
        while before > 0 and text[before - 1] in " \t\r\n\x85\u2028\u2029":
            before -= 1
        open_at = self.offset(sequence)
        new = [self.flow(item) for item in items]
        if before - 1 == open_at:  # an empty list: `[]`
            return Splice(before, before, ", ".join(new))
        if self.position(close)[0] == sequence[0]:  # the whole list on one line
            lead = " " if text[before - 1] == "," else ", "
            return Splice(before, before, lead + ", ".join(new))
        indent = " " * (last_item[1] - 1)  # one item a line, at the last item's column
        nl = self.newline
        if text[before - 1] == ",":  # the list ends with a comma: so do the new items
            return Splice(before, before, "".join(f"{nl}{indent}{n}," for n in new))
        return Splice(before, before, "".join(f",{nl}{indent}{n}" for n in new))


def _flow_ends(text: str) -> dict[Pos, Pos]:
    """Start -> end of every flow collection of `text` (positions as the tree has them)."""
    from _ruamel_yaml import CParser

    text = normalize_line_breaks(text)
    ends: dict[Pos, Pos] = {}
    try:
        _collect_flow_ends(CParser(text).get_event, ends)
    except Exception as exc:  # a text that does not parse past here: what was found stands
        if is_flow_colon(exc) and len(text) <= PURE_PARSE_MAX_CHARS:
            # A `:` inside a flow scalar, which the tree reads as text (yamltree.parse): the
            # Python parser reads past it, and agrees with the C parser up to it.
            ends = {}
            with contextlib.suppress(Exception):
                _collect_flow_ends(pure_events(text), ends)
    return ends


def _collect_flow_ends(next_event: Callable[[], Any], ends: dict[Pos, Pos]) -> None:
    """Add to `ends` the start -> end of each flow collection of the events `next_event`
    gives, until the stream ends or the parser refuses the text."""
    from ruamel.yaml.events import (
        MappingEndEvent,
        MappingStartEvent,
        SequenceEndEvent,
        SequenceStartEvent,
        StreamEndEvent,
    )

    opened: list[Pos | None] = []
    while True:
        event = next_event()
        cls = type(event)
        if cls is MappingStartEvent or cls is SequenceStartEvent:
            mark = event.start_mark
            flow = event.flow_style
            opened.append((mark.line + 1, mark.column + 1) if flow else None)
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            start = opened.pop()
            if start is not None:
                mark = event.start_mark
                ends[start] = (mark.line + 1, mark.column + 1)
        elif cls is StreamEndEvent:
            return


def item_lines(
    item: Sequence[tuple[str, str]], dash: int, content: int, newline: str = "\n"
) -> str:
    """A block sequence item: `- k: v` at 1-based column `dash`, keys `content` past the dash."""
    pad = " " * (dash - 1)
    lines = []
    for index, (key, value) in enumerate(item):
        lead = "-" + " " * (content - 1) if index == 0 else " " * content
        lines.append(f"{pad}{lead}{yaml_scalar(key)}: {yaml_scalar(value)}{newline}")
    return "".join(lines)


def flow_mapping(item: Sequence[tuple[str, str]]) -> str:
    """A mapping in flow style: `{key: a, operator: Exists}`."""
    return "{" + ", ".join(f"{yaml_scalar(k)}: {yaml_scalar(v)}" for k, v in item) + "}"


def yaml_scalar(value: str) -> str:
    """`value` as a YAML string scalar: plain only when every YAML reader reads it back as
    that string (`0x10`, `1e3`, `yes`, `null`, `~` are quoted)."""
    if (
        re.match(_PLAIN, value)
        and not re.match(_NEEDS_QUOTES, value)
        and resolve_plain(value) == value
    ):
        return value
    return _json_string(value)  # a JSON string is a YAML double-quoted scalar


def _json_string(value: str) -> str:
    """`value` as a JSON string."""
    # The json module only here and in _is_json: a check whose findings carry edits imports
    # this module, and verifying a rename of plain keys in a YAML file writes no JSON.
    import json

    return json.dumps(value)


class Applied(NamedTuple):
    """What `apply_fixes` made of a text: the new text, the fixes made (by index), those that
    cannot be made with why, and those that wait for the next pass (they touch a place another
    fix changes)."""

    text: str
    applied: tuple[int, ...]
    refused: dict[int, str]
    waiting: tuple[int, ...]


def apply_fixes(text: str, fixes: Sequence[Sequence[Edit]], *, is_json: bool = False) -> Applied:
    """Apply each fix (the edits of one finding, all or none) that the text can take.

    Edits are resolved against the same text; a fix that overlaps one already taken waits for
    the next pass. Each document's fixes are then checked on that document's text alone, and
    the fixed text as a whole: parsed again and compared with the tree the fixes mean. A fix
    that breaks its document is refused with why; one that is fine alone but not with the
    others of its document waits for the next pass.
    """
    lines = Lines(text, is_json)
    refused: dict[int, str] = {}
    resolved: dict[int, list[Resolved]] = {}
    for index, edits in enumerate(fixes):
        made: list[Resolved] = []
        for edit in edits:
            result = edit.resolve(lines)
            if isinstance(result, Refusal):
                refused[index] = result.why
                break
            made.append(result)
        else:
            if made:
                resolved[index] = made
    chosen, waiting = _without_overlaps(resolved)
    if not chosen:
        return Applied(text, (), refused, tuple(sorted(waiting)))
    checker = _Checker(text, is_json, lines)
    checker.targets(resolved)
    by_document: dict[int, dict[int, list[Resolved]]] = {}
    accepted: dict[int, list[Resolved]] = {}
    for index in chosen:
        if not resolved[index]:  # the same edits as another fix: made with it
            accepted[index] = []
            continue
        where = checker.document_of(resolved[index])
        if isinstance(where, str):
            refused[index] = where
        else:
            by_document.setdefault(where, {})[index] = resolved[index]
    for number, made_here in by_document.items():
        good, bad, later = checker.check_document(number, made_here)
        accepted.update((i, made_here[i]) for i in good)
        refused.update(bad)
        waiting.extend(later)
    if accepted:
        new, starts = _splice_fixes(text, accepted)
        broken = checker.broken(new, accepted, starts)
        if not broken:
            return Applied(new, tuple(sorted(accepted)), refused, tuple(sorted(waiting)))
        # Each document was fine alone: what breaks now is refused, the rest tried again later.
        refused.update(broken)
        waiting.extend(i for i in accepted if i not in broken)
    return Applied(text, (), refused, tuple(sorted(waiting)))


def _without_overlaps(resolved: dict[int, list[Resolved]]) -> tuple[list[int], list[int]]:
    """The fixes whose splices overlap none taken before them, and those that wait."""
    import bisect

    taken: list[tuple[int, int]] = []  # (start, end) of the splices taken, in order
    chosen: list[int] = []
    waiting: list[int] = []
    seen: set[Splice] = set()
    for index in sorted(resolved, key=lambda i: min(r.splice for r in resolved[i])):
        splices = [r.splice for r in resolved[index] if r.splice not in seen]
        if not splices:  # the same edit as a fix already taken (one toleration, two findings)
            chosen.append(index)
            resolved[index] = []
            continue
        if any(_overlaps(s, taken) for s in splices):
            waiting.append(index)
            continue
        for splice in splices:
            bisect.insort(taken, (splice.start, splice.end))
        seen.update(splices)
        chosen.append(index)
    return chosen, waiting


def _overlaps(splice: Splice, taken: list[tuple[int, int]]) -> bool:
    """Whether `splice` overlaps a splice of `taken` (sorted, none overlapping another)."""
    import bisect

    at = bisect.bisect_left(taken, (splice.start, splice.end))
    for start, end in taken[max(at - 1, 0) : at + 1]:
        if splice.start == splice.end == start == end:
            return True  # two insertions at one place: the second waits for the next pass
        if splice.start < end and start < splice.end:
            return True
    return False


def _splice_fixes(text: str, fixes: dict[int, list[Resolved]]) -> tuple[str, dict[int, int]]:
    """`text` with the splices of `fixes` made; and where each fix's first splice starts in
    the new text (to tell which fix broke a place of it)."""
    splices = sorted((r.splice, index) for index, made in fixes.items() for r in made)
    pieces = []
    starts: dict[int, int] = {}
    at = shift = 0
    for splice, index in splices:
        pieces.append(text[at : splice.start])
        pieces.append(splice.text)
        starts.setdefault(index, splice.start + shift)
        shift += len(splice.text) - (splice.end - splice.start)
        at = splice.end
    pieces.append(text[at:])
    return "".join(pieces), starts


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, int]:
    """`text` with every edit that it can take applied (each edit a fix of its own); and how
    many were applied."""
    applied = apply_fixes(text, [(edit,) for edit in edits])
    return applied.text, len(applied.applied)


class _Checker:
    """The tree of a text before its fixes, and the check of a fixed text against it."""

    def __init__(self, text: str, json_text: bool, lines: Lines) -> None:
        self.text = text
        self.before = parse(text).documents
        self.json = json_text and _is_json(text)
        self._targets: dict[tuple[str, Pos], list[tuple[int, tuple[Any, ...]]]] | None = None
        self._shared: set[Pos] = set()
        # Where each document's text starts: the first at 0 (its comments are its own).
        starts = [0] + [lines.offset(d.pos) or 0 for d in self.before[1:]]
        self.bounds = list(zip(starts, [*starts[1:], len(text)], strict=True))

    def document_of(self, made: list[Resolved]) -> int | str:
        """The document a fix changes, or why it is not one place of one document."""
        documents = set()
        for resolved in made:
            where = self._target(resolved.intent)
            if isinstance(where, str):
                return where
            documents.add(where[0])
        if len(documents) != 1:
            return "its edits change several documents"
        return documents.pop()

    def check_document(
        self, number: int, fixes: dict[int, list[Resolved]]
    ) -> tuple[list[int], dict[int, str], list[int]]:
        """The fixes of document `number` checked on its text alone: those that are good, those
        that break it (with why), and those that wait (fine alone, not with the others)."""
        start, end = self.bounds[number]
        local: dict[int, list[Resolved]] = {}
        bad: dict[int, str] = {}
        for index, made in fixes.items():
            if all(start <= r.splice.start and r.splice.end <= end for r in made):
                local[index] = [
                    r._replace(
                        splice=r.splice._replace(
                            start=r.splice.start - start, end=r.splice.end - start
                        )
                    )
                    for r in made
                ]
            else:
                bad[index] = "its edits reach past its document"
        text = self.text[start:end]
        later: list[int] = []
        for _ in range(_SINGLE_TRIES):
            if not local:
                break
            new, starts = _splice_fixes(text, local)
            broken = self._broken_document(number, new, local, starts)
            if not broken:
                return list(local), bad, later
            if len(broken) > 1:  # told apart one fix at a time
                for index in broken:
                    alone = {index: local[index]}
                    new, starts = _splice_fixes(text, alone)
                    why_alone = self._broken_document(number, new, alone, starts).get(index)
                    if why_alone:
                        bad[index] = why_alone
                    else:
                        later.append(index)
            else:
                bad.update(broken)
            local = {i: made for i, made in local.items() if i not in broken}
        later.extend(local)
        return [], bad, later

    def _broken_document(
        self, number: int, new: str, fixes: dict[int, list[Resolved]], starts: dict[int, int]
    ) -> dict[int, str]:
        """The fixes that break `new`, the text of document `number` with them, and why."""
        after = parse(new)
        if after.error is not None:
            why = f"the fixed text would not parse ({after.error.problem})"
            at = Lines(new).offset((after.error.line, after.error.column))
            return dict.fromkeys(_written_before(starts, at), why)
        if len(after.documents) != 1:
            return dict.fromkeys(fixes, "the fix would change where documents start")
        intents = []
        for index, made in fixes.items():
            for resolved in made:
                where = self._target(resolved.intent)
                assert not isinstance(where, str)  # document_of has looked
                intents.append((index, resolved.intent, where[1]))
        why = _check_document(self.before[number], after.documents[0], intents)
        return {} if why is None else dict.fromkeys(fixes, why)

    def broken(
        self, new: str, fixes: dict[int, list[Resolved]], starts: dict[int, int]
    ) -> dict[int, str]:
        """The fixes that break `new`, with why; empty when `new` is what they mean.

        `starts` says where each fix's text starts in `new`: a place that breaks is blamed on
        the fixes written there.
        """
        after = parse(new)
        if after.error is not None:
            why = f"the fixed text would not parse ({after.error.problem})"
            at = Lines(new).offset((after.error.line, after.error.column))
            return dict.fromkeys(_written_before(starts, at), why)
        if self.json and not _is_json(new):
            return dict.fromkeys(fixes, "the fixed text would not be JSON")
        if len(after.documents) != len(self.before):
            return dict.fromkeys(fixes, "the fix would change where documents start")
        by_document: dict[int, list[tuple[int, Intent, tuple[Any, ...]]]] = {}
        broken: dict[int, str] = {}
        for index, made in fixes.items():
            for resolved in made:
                where = self._target(resolved.intent)
                if isinstance(where, str):
                    broken[index] = where
                else:
                    by_document.setdefault(where[0], []).append((index, resolved.intent, where[1]))
        if broken:  # edits that do not point at one place of the tree: nothing to compare
            return broken
        documents = list(zip(self.before, after.documents, strict=True))
        for number, (before, fixed) in enumerate(documents):
            intents = by_document.get(number)
            if not intents:
                if not _same(before.value, fixed.value):
                    lines = Lines(new)
                    start = lines.offset(fixed.pos) or 0 if number else 0
                    end = len(new)
                    if number + 1 < len(documents):
                        end = lines.offset(documents[number + 1][1].pos) or end
                    inside = [i for i, at in starts.items() if start <= at < end] or list(fixes)
                    return dict.fromkeys(inside, "the fix would change another document")
                continue
            why = _check_document(before, fixed, intents)
            if why is not None:
                for index, _, _ in intents:
                    broken.setdefault(index, why)
        return broken

    def targets(self, fixes: dict[int, list[Resolved]]) -> None:
        """Find, in one walk of the tree, where the intents of `fixes` point."""
        wanted = {r.intent.pos for made in fixes.values() for r in made}
        self._targets = _index(self.before, wanted, self._shared)

    def _target(self, intent: Intent) -> tuple[int, tuple[Any, ...]] | str:
        """(document, path) of what the intent changes, or why it is not one place."""
        if self._targets is None:
            self.targets({0: [Resolved(Splice(0, 0, ""), intent)]})
        assert self._targets is not None
        if intent.kind == "comment":  # of the document whose text holds the line
            number = max(i for i, (start, _) in enumerate(self.bounds) if start <= intent.value)
            return number, ("comment",)
        kinds = {"rename": ("key", "value"), "append": ("seq", "item"), "add": ("key",)}
        for kind in kinds[intent.kind]:
            found = self._targets.get((kind, intent.pos))
            if found:
                if intent.pos in self._shared or len(found) > 1:
                    return "it is in an anchored node that an alias or merge repeats elsewhere"
                document, path = found[0]
                return document, (kind, *path)
        return "the tree has nothing where the fix goes"


def _written_before(starts: dict[int, int], offset: int | None) -> list[int]:
    """The fix whose text starts last at or before `offset` (all of them when unknown)."""
    if offset is None:
        return list(starts)
    before = [(at, index) for index, at in starts.items() if at <= offset]
    return [max(before)[1]] if before else list(starts)


def _is_json(text: str) -> bool:
    import json

    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _index(
    documents: Sequence[ParsedDocument], wanted: set[Pos], shared: set[Pos]
) -> dict[tuple[str, Pos], list[tuple[int, tuple[Any, ...]]]]:
    """The key, value, sequence and item positions of the documents that are `wanted` ->
    (document, path).

    A node that aliases repeat is reached by several paths: its positions go to `shared`.
    """
    found: dict[tuple[str, Pos], list[tuple[int, tuple[Any, ...]]]] = {}

    def note(kinds: tuple[str, ...], pos: Pos, where: tuple[int, tuple[Any, ...]], again: bool):
        for kind in kinds:
            found.setdefault((kind, pos), []).append(where)
        if again:
            shared.add(pos)

    for number, document in enumerate(documents):
        seen: set[int] = set()
        if not isinstance(document.value, (YMap, YSeq)):
            continue
        stack: list[tuple[Any, tuple[Any, ...], bool]] = [(document.value, (), False)]
        while stack:
            node, path, repeated = stack.pop()
            repeated = repeated or id(node) in seen
            seen.add(id(node))
            if isinstance(node, YMap):
                for key, span in node.spans.items():
                    key_pos, value_pos = span[:2], span[2:]
                    if key_pos in wanted:
                        note(("key",), key_pos, (number, (*path, key)), repeated)
                    if value_pos in wanted:
                        note(("value",), value_pos, (number, (*path, key)), repeated)
                    child = node.get(key)
                    if isinstance(child, (YMap, YSeq)):
                        stack.append((child, (*path, key), repeated))
                continue
            if node.pos in wanted:
                note(("seq",), node.pos, (number, path), repeated)
            for index, pos in enumerate(node.item_pos):
                if pos in wanted:
                    note(("item", "value"), pos, (number, (*path, index)), repeated)
                child = node[index]
                if isinstance(child, (YMap, YSeq)):
                    stack.append((child, (*path, index), repeated))
    return found


def _check_document(
    before: ParsedDocument,
    fixed: ParsedDocument,
    intents: list[tuple[int, Intent, tuple[Any, ...]]],
) -> str | None:
    """Why `fixed` is not `before` with the intents applied; None when it is."""
    if len(fixed.duplicates) > len(before.duplicates):
        key = fixed.duplicates[-1].key
        return f"`{key}` would be written twice in one mapping"
    expected = _plain(before.value)
    for _, intent, (kind, *path) in intents:
        if intent.kind == "comment":
            continue
        if intent.kind == "append":
            sequence = _walk(expected, path[:-1] if kind == "item" else path)
            sequence.extend(dict(item) for item in intent.value)
            continue
        *parents, last = path
        holder = _walk(expected, parents)
        if intent.kind == "rename" and kind == "key":
            if intent.value != last and intent.value in holder:
                return f"`{intent.value}` is already a key there"
            holder[intent.value] = holder.pop(last)
        elif intent.kind == "rename":
            holder[last] = intent.value
        else:  # add: the mapping holding the key at `pos` gains a key
            key, items = intent.value
            if key in holder:
                return f"`{key}` is already a key there"
            holder[key] = [dict(item) for item in items]
    if not _same(expected, fixed.value):
        return "the fixed text would change more than the fix (the edit lands in the wrong place)"
    return None


def _walk(node: Any, path: Sequence[Any]) -> Any:
    for step in path:
        node = node[step]
    return node


def _plain(node: Any) -> Any:
    """A copy of a tree of plain dicts and lists: every alias its own copy."""
    if isinstance(node, dict):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_plain(item) for item in node]
    return node


def _same(a: Any, b: Any) -> bool:
    """Equal trees, types included (`1` is not `true`, `"1"` is not `1`); NaN equals NaN."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if not isinstance(y, list) or len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif type(x) is not type(y) or (x != y and not _both_nan(x, y)):
            return False
    return True


def _both_nan(x: Any, y: Any) -> bool:
    return isinstance(x, float) and math.isnan(x) and math.isnan(y)


def add_items(
    mapping: YMap, key: str, items: Sequence[tuple[tuple[str, str], ...]], style_from: str
) -> tuple[Edit, ...]:
    """Edits that add `items` to the sequence `mapping[key]`, creating the key if absent.

    `style_from` names a sibling key holding a block sequence (a pod spec's `containers`),
    whose dash indentation a new sequence copies. Nothing when `mapping[key]` is not a
    sequence.
    """
    if isinstance(mapping, BuiltMap):
        return ()  # an operator's pod: its fields are not where the object writes them
    if key not in mapping:
        if not mapping.spans:
            return ()
        first_key = min((span[0], span[1]) for span in mapping.spans.values())
        sibling = mapping.get(style_from)
        hint = sibling.pos_of_item(0) if isinstance(sibling, YSeq) and sibling.item_pos else None
        return (AddKey(first_key, key, tuple(items), hint, mapping.pos),)
    sequence = mapping[key]
    if not isinstance(sequence, YSeq):
        return ()
    if not sequence.item_pos:  # `[]`: items go inside the brackets
        return (
            AppendItem(sequence.pos, sequence.pos, sequence.pos[0], tuple(items), sequence.pos),
        )
    first, last = sequence.item_pos[0], sequence.item_pos[-1]
    end = last_line(sequence[-1]) if isinstance(sequence[-1], (YMap, YSeq)) else last[0]
    return (AppendItem(first, last, end, tuple(items), sequence.pos),)
