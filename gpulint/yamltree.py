"""YAML/JSON text -> plain Python values that remember where each key and value starts.

The C parser of ruamel.yaml.clib produces events; building the tree from them here (instead of
composing ruamel nodes and constructing objects from those) keeps loading within a small factor
of the fastest YAML loaders while every mapping key, mapping value and sequence item keeps its
1-based line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from _ruamel_yaml import CParser

#: (line, column), both 1-based.
Pos = tuple[int, int]


class YMap(dict):
    """A mapping that knows its own position and the position of each key and value."""

    __slots__ = ("key_pos", "pos", "value_pos")

    def __init__(self, pos: Pos = (1, 1)) -> None:
        super().__init__()
        self.pos = pos
        self.key_pos: dict[Any, Pos] = {}
        self.value_pos: dict[Any, Pos] = {}

    def pos_of_key(self, key: Any) -> Pos:
        """Where `key` is written, or where the mapping starts when the key is absent."""
        return self.key_pos.get(key, self.pos)

    def pos_of_value(self, key: Any) -> Pos:
        """Where the value of `key` starts, or where the mapping starts when the key is absent."""
        return self.value_pos.get(key, self.pos)


class YSeq(list):
    """A sequence that knows its own position and the position of each item."""

    __slots__ = ("item_pos", "pos")

    def __init__(self, pos: Pos = (1, 1)) -> None:
        super().__init__()
        self.pos = pos
        self.item_pos: list[Pos] = []

    def pos_of_item(self, index: int) -> Pos:
        """Where item `index` starts."""
        return self.item_pos[index] if 0 <= index < len(self.item_pos) else self.pos


@dataclass(frozen=True)
class YamlSyntaxError(Exception):
    """The text is not well-formed YAML; `line`/`column` are 1-based."""

    line: int
    column: int
    problem: str

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.problem}"


@dataclass(frozen=True)
class DuplicateKey:
    """A key written twice in one mapping: the later value silently wins."""

    key: str
    pos: Pos
    first: Pos


@dataclass(frozen=True)
class ParsedDocument:
    """One YAML document: its value (None when empty), start position, duplicate keys."""

    value: Any
    pos: Pos
    duplicates: tuple[DuplicateKey, ...]


@dataclass(frozen=True)
class ParseResult:
    """Every document parsed before the end of the text, or before the first syntax error."""

    documents: tuple[ParsedDocument, ...]
    error: YamlSyntaxError | None


_INT = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)\Z")
_OCT_HEX = re.compile(r"0(?:o[0-7]+|x[0-9a-fA-F]+)\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?\Z")
# Words resolved the way Kubernetes' YAML decoder (YAML 1.1 rules) resolves them.
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL", "~"), None),
    ".inf": float("inf"),
    "-.inf": float("-inf"),
    ".nan": float("nan"),
}
_STR_TAG = "tag:yaml.org,2002:str"


def resolve_plain(text: str) -> Any:
    """Type of an unquoted scalar: int, float, bool, None or str."""
    if not text:
        return None
    first = text[0]
    if first in "0123456789+-.":
        if _INT.match(text):
            return int(text.replace("_", ""))
        if _FLOAT.match(text) and text not in (".", "+", "-"):
            return float(text.replace("_", ""))
        if _OCT_HEX.match(text):
            return int(text, 0)
    return _WORDS.get(text, text) if len(text) <= 5 else text


def parse(text: str) -> ParseResult:
    """Parse every document of `text`; stop at the first syntax error and report it."""
    documents: list[ParsedDocument] = []
    try:
        _parse_into(text, documents)
    except Exception as exc:  # ruamel raises MarkedYAMLError subclasses; anything else is a bug
        return ParseResult(tuple(documents), _syntax_error(exc))
    return ParseResult(tuple(documents), None)


def _syntax_error(exc: Exception) -> YamlSyntaxError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    if context:
        problem = f"{problem} ({context})"
    if mark is None:
        return YamlSyntaxError(1, 1, problem)
    return YamlSyntaxError(mark.line + 1, mark.column + 1, problem)


def _parse_into(text: str, documents: list[ParsedDocument]) -> None:
    parser = CParser(text)
    next_event = parser.get_event
    anchors: dict[str, Any] = {}
    duplicates: list[DuplicateKey] = []
    # Each open collection: [container, pending key or _NO_KEY, position of that key,
    # keys that came from a `<<` merge (None until a merge happens)].
    stack: list[list[Any]] = []
    doc_pos: Pos = (1, 1)
    doc_value: Any = None
    while True:
        event = next_event()
        name = type(event).__name__
        if name == "ScalarEvent":
            mark = event.start_mark
            pos = (mark.line + 1, mark.column + 1)
            if event.style or event.tag == _STR_TAG:
                value = event.value
            else:
                value = resolve_plain(event.value)
            if event.anchor:
                anchors[event.anchor] = value
        elif name == "MappingStartEvent" or name == "SequenceStartEvent":
            mark = event.start_mark
            pos = (mark.line + 1, mark.column + 1)
            container = YMap(pos) if name == "MappingStartEvent" else YSeq(pos)
            if event.anchor:
                anchors[event.anchor] = container
            stack.append([container, _NO_KEY, None, None])
            continue
        elif name == "MappingEndEvent" or name == "SequenceEndEvent":
            value = stack.pop()[0]
            pos = value.pos
        elif name == "AliasEvent":
            mark = event.start_mark
            pos = (mark.line + 1, mark.column + 1)
            value = anchors.get(event.anchor)
        elif name == "DocumentStartEvent":
            mark = event.start_mark
            doc_pos = (mark.line + 1, mark.column + 1)
            doc_value = None
            duplicates = []
            anchors = {}
            continue
        elif name == "DocumentEndEvent":
            documents.append(ParsedDocument(doc_value, doc_pos, tuple(duplicates)))
            continue
        elif name == "StreamEndEvent":
            return
        else:
            continue
        if not stack:
            doc_value = value
            continue
        top = stack[-1]
        container = top[0]
        if type(container) is YSeq:
            container.append(value)
            container.item_pos.append(pos)
        elif top[1] is _NO_KEY:
            top[1] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
            top[2] = pos
        else:
            key = top[1]
            top[1] = _NO_KEY
            if key == "<<" and isinstance(value, (YMap, YSeq)):
                top[3] = _merge(container, value)
                continue
            if key in container and not (top[3] and key in top[3]):
                duplicates.append(DuplicateKey(str(key), top[2], container.key_pos[key]))
            container[key] = value
            container.key_pos[key] = top[2]
            container.value_pos[key] = pos


_NO_KEY = object()


def _merge(target: YMap, source: YMap | YSeq) -> set[Any]:
    """YAML merge key `<<`: keys already in `target` win; returns the keys merged in."""
    merged: set[Any] = set()
    for mapping in [source] if isinstance(source, YMap) else source:
        if not isinstance(mapping, YMap):
            continue
        for key, value in mapping.items():
            if key not in target:
                target[key] = value
                target.key_pos[key] = mapping.key_pos[key]
                target.value_pos[key] = mapping.value_pos[key]
                merged.add(key)
    return merged
