"""The scalars of a YAML text as written: where each key and value's characters are.

Mapping a rendered position back to a source file compares the characters written at both
ends, so each scalar is known by its content span (inside quotes, when quoted). Only scalars
written on one line whose text reads back as the parsed value are kept: anything else (block
scalars, escapes, folded lines) cannot be compared character for character.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq, parse


class Token(NamedTuple):
    """One scalar as written: its content, where the content starts, and where it is."""

    text: str  # the characters written (without quotes)
    offset: int  # where `text` starts in the whole text
    pos: Pos  # where the scalar (its opening quote, if any) is written
    is_key: bool
    path: tuple[Any, ...]  # keys and list indexes from the document root; the key itself last


class TextIndex:
    """Offsets of the lines of a text, to turn (line, column) into an offset and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        self.starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")

    def offset(self, pos: Pos) -> int:
        """The offset of 1-based (line, column)."""
        line, column = pos
        return self.starts[line - 1] + column - 1 if 0 < line <= len(self.starts) else -1

    def position(self, offset: int) -> Pos:
        """The 1-based (line, column) of `offset`."""
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its line break."""
        start = self.starts[number - 1]
        end = self.text.find("\n", start)
        return self.text[start : end if end >= 0 else len(self.text)]


def tokens(text: str) -> tuple[TextIndex, dict[Pos, Token]]:
    """Every comparable scalar of `text`, by the position it is written at."""
    index = TextIndex(text)
    found: dict[Pos, Token] = {}
    for number, document in enumerate(parse(text).documents):
        if isinstance(document.value, (YMap, YSeq)):
            for token in _walk(index, document.value, (number,)):
                found[token.pos] = token
    return index, found


def _walk(index: TextIndex, node: YMap | YSeq, path: tuple[Any, ...]) -> Iterator[Token]:
    if isinstance(node, YMap):
        for key, value in node.items():
            key_line, key_column, value_line, value_column = node.spans.get(key, (0, 0, 0, 0))
            if not key_line:
                continue
            token = _token(index, key, (key_line, key_column), True, (*path, key))
            if token is not None:
                yield token
            yield from _value(index, value, (value_line, value_column), (*path, key))
    else:
        for number, item in enumerate(node):
            yield from _value(index, item, node.pos_of_item(number), (*path, number))


def _value(index: TextIndex, value: Any, pos: Pos, path: tuple[Any, ...]) -> Iterator[Token]:
    if isinstance(value, (YMap, YSeq)):
        yield from _walk(index, value, path)
        return
    token = _token(index, value, pos, False, path)
    if token is not None:
        yield token


def _token(index: TextIndex, value: Any, pos: Pos, is_key: bool, path: tuple) -> Token | None:
    # bool and null are words a template tests rather than text it copies.
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    start = index.offset(pos)
    if start < 0:
        return None
    text = index.text
    quote = text[start : start + 1]
    if quote in ("'", '"'):
        content = str(value)
        end = start + 1 + len(content)
        if text[start + 1 : end] != content or text[end : end + 1] != quote or "\n" in content:
            return None
        return Token(content, start + 1, pos, is_key, path)
    line_end = text.find("\n", start)
    rest = text[start : line_end if line_end >= 0 else len(text)]
    content = _plain_text(rest, is_key)
    if not content or not _reads_as(content, value):
        return None
    return Token(content, start, pos, is_key, path)


def _plain_text(rest: str, is_key: bool) -> str:
    """The plain scalar at the start of `rest` (what is left of its line)."""
    end = len(rest)
    for stop in (" #", "\t#", ": ", ":\t") if is_key else (" #", "\t#"):
        found = rest.find(stop)
        if found >= 0:
            end = min(end, found)
    if is_key and rest[:end].endswith(":"):
        end -= 1
    # In flow collections a plain scalar ends at `,`, `]` or `}`.
    for stop in (",", "]", "}"):
        found = rest.find(stop, 0, end)
        if found >= 0:
            end = found
    return rest[:end].rstrip()


def _reads_as(content: str, value: Any) -> bool:
    if isinstance(value, str):
        return content == value
    try:
        return type(value)(content.replace("_", "")) == value
    except ValueError:
        return False
