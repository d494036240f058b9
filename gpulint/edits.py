"""Fixes as text edits: minimal changes to a manifest that keep every byte they do not touch.

A rule knows what to change (a key to rename, a toleration to add) and where (the positions
the tree carries), but not the file's text. So an edit is a small record resolved against the
text when it is applied: a rename checks that the old name is still written where the tree
said (quoted or plain) and changes only those characters; an insertion adds whole lines and
takes its indentation from the lines around it. An edit that no longer matches the text, or
that would need a layout it cannot reproduce exactly (a flow mapping spread over lines, a
key that shares its line with a sequence dash), resolves to nothing and the file is left as
it is: a fix must never damage a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq, last_line

_QUOTES = "\"'"
# Plain scalars that YAML would read as something other than the string itself.
# Patterns compiled on first use: only a fix that writes a value needs them.
_NEEDS_QUOTES = (
    r"(?i)\A(?:|~|null|true|false|yes|no|on|off|y|n|[-+]?[0-9][0-9_.:eE+-]*|[-+]?\.(?:inf|nan))\Z"
)
_PLAIN = r"\A[A-Za-z0-9_][A-Za-z0-9_./\-]*\Z"


class Splice(NamedTuple):
    """Replace text[start:end] with `text` (offsets into the file's text)."""

    start: int
    end: int
    text: str


class Rename(NamedTuple):
    """Replace the scalar `old` written at `pos` (plain or quoted) by `new`."""

    pos: Pos
    old: str
    new: str

    def resolve(self, lines: Lines) -> Splice | None:
        """The splice that makes the change, or None when `old` is not written at `pos`."""
        start = lines.offset(self.pos)
        if start is None:
            return None
        text = lines.text
        if text.startswith(self.old, start):
            return Splice(start, start + len(self.old), self.new)
        if text[start : start + 1] in _QUOTES and text.startswith(self.old, start + 1):
            quote = text[start]
            end = start + 1 + len(self.old)
            if text[end : end + 1] == quote:
                return Splice(start + 1, end, self.new)
        return None


class AppendItem(NamedTuple):
    """Add `items` (each a mapping's key/value pairs) after the last item of a block sequence.

    `first_item` and `last_item` are where the sequence's first and last items start;
    `last_line` is the last line the last item writes on.
    """

    first_item: Pos
    last_item: Pos
    last_line: int
    items: tuple[tuple[tuple[str, str], ...], ...]

    def resolve(self, lines: Lines) -> Splice | None:
        """Lines inserted after the last item, indented as the existing items are."""
        dash = lines.dash_column(self.first_item)
        if dash is None:
            return None
        content = self.first_item[1] - dash  # columns from the dash to the item's first key
        after = lines.block_end(self.last_line, dash)
        if lines.text[lines.offset(self.first_item) or 0] == "{":  # `- {key: a, ...}` items
            pad = " " * (dash - 1) + "-" + " " * (content - 1)
            new = "".join(f"{pad}{flow_mapping(item)}{lines.newline}" for item in self.items)
        else:
            new = "".join(item_lines(item, dash, content, lines.newline) for item in self.items)
        at = lines.line_start(after + 1)
        if at == len(lines.text) and not lines.text.endswith("\n"):
            new = lines.newline + new  # the item was the file's last line, with no line break
        return Splice(at, at, new)


class AddKey(NamedTuple):
    """Add `key:` holding a block sequence of `items` to the mapping whose first key is at
    `first_key`, as its first key.

    `sequence_hint` is where some other block sequence's first item of the same mapping starts
    (its `containers:`), so the new sequence follows the file's dash indentation.
    """

    first_key: Pos
    key: str
    items: tuple[tuple[tuple[str, str], ...], ...]
    sequence_hint: Pos | None = None

    def resolve(self, lines: Lines) -> Splice | None:
        """Lines inserted above the mapping's first key, at its column."""
        line, column = self.first_key
        if not lines.blank_before(self.first_key):
            return None  # the key shares its line with a dash or a parent key
        dash, content = column, 2  # `key:` then `- item` at the key's column
        if self.sequence_hint is not None:
            hint_dash = lines.dash_column(self.sequence_hint)
            if hint_dash is not None:  # a sibling sequence of the same mapping shows the style
                dash, content = hint_dash, self.sequence_hint[1] - hint_dash
        indent = " " * (column - 1)
        body = "".join(item_lines(item, dash, content, lines.newline) for item in self.items)
        start = lines.line_start(line)
        return Splice(start, start, f"{indent}{self.key}:{lines.newline}{body}")


Edit = Rename | AppendItem | AddKey


class Lines:
    """A file's text with its line starts: positions to offsets, indentation questions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for match in re.finditer("\n", text):
            self.starts.append(match.end())
        self.newline = "\r\n" if "\r\n" in text else "\n"

    def line_start(self, line: int) -> int:
        """The offset where 1-based `line` starts (the end of the text past the last line)."""
        if line - 1 < len(self.starts):
            return self.starts[line - 1]
        return len(self.text)

    def line(self, line: int) -> str:
        """The text of 1-based `line` without its line break."""
        start = self.line_start(line)
        end = self.line_start(line + 1)
        return self.text[start:end].rstrip("\r\n")

    def offset(self, pos: Pos) -> int | None:
        """The offset of a 1-based (line, column), or None when the text has no such place."""
        line, column = pos
        if not 1 <= line <= len(self.starts) or column < 1:
            return None
        offset = self.starts[line - 1] + column - 1
        return offset if offset <= len(self.text) else None

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


def item_lines(
    item: Sequence[tuple[str, str]], dash: int, content: int, newline: str = "\n"
) -> str:
    """A block sequence item: `- k: v` at 1-based column `dash`, keys `content` past the dash."""
    pad = " " * (dash - 1)
    lines = []
    for index, (key, value) in enumerate(item):
        lead = "-" + " " * (content - 1) if index == 0 else " " * content
        lines.append(f"{pad}{lead}{key}: {yaml_scalar(value)}{newline}")
    return "".join(lines)


def flow_mapping(item: Sequence[tuple[str, str]]) -> str:
    """A mapping in flow style: `{key: a, operator: Exists}`."""
    return "{" + ", ".join(f"{key}: {yaml_scalar(value)}" for key, value in item) + "}"


def yaml_scalar(value: str) -> str:
    """`value` as a YAML string scalar: plain when YAML reads it back as that string."""
    if re.match(_PLAIN, value) and not re.match(_NEEDS_QUOTES, value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, int]:
    """`text` with every edit that still matches it applied; and how many were applied.

    Edits are resolved against the same text; one that overlaps an edit already taken, or
    that no longer matches, is left out (a later pass may apply it to the new text).
    """
    lines = Lines(text)
    splices: list[Splice] = []
    for edit in edits:
        splice = edit.resolve(lines)
        if splice is not None and splice not in splices:
            splices.append(splice)
    taken: list[Splice] = []
    for splice in sorted(splices, key=lambda s: (s.start, s.end)):
        if taken and splice.start < taken[-1].end:
            continue
        if taken and splice.start == taken[-1].start == splice.end == taken[-1].end:
            continue  # two insertions at one place: the second waits for the next pass
        taken.append(splice)
    for splice in reversed(taken):
        text = text[: splice.start] + splice.text + text[splice.end :]
    return text, len(taken)


def add_items(
    mapping: YMap, key: str, items: Sequence[tuple[tuple[str, str], ...]], style_from: str
) -> tuple[Edit, ...]:
    """Edits that add `items` to the block sequence `mapping[key]`, creating the key if absent.

    `style_from` names a sibling key holding a block sequence (a pod spec's `containers`),
    whose dash indentation a new sequence copies. Nothing when `mapping[key]` is not a block
    sequence of mappings that edits can extend.
    """
    if key not in mapping:
        if not mapping.spans:
            return ()
        first_key = min((span[0], span[1]) for span in mapping.spans.values())
        sibling = mapping.get(style_from)
        hint = sibling.pos_of_item(0) if isinstance(sibling, YSeq) and sibling.item_pos else None
        return (AddKey(first_key, key, tuple(items), hint),)
    sequence = mapping[key]
    if not isinstance(sequence, YSeq) or not sequence.item_pos:
        return ()
    first, last = sequence.item_pos[0], sequence.item_pos[-1]
    end = last_line(sequence[-1]) if isinstance(sequence[-1], (YMap, YSeq)) else last[0]
    return (AppendItem(first, last, end, tuple(items)),)
