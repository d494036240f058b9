"""YAML/JSON text -> plain Python values that remember where each key and value starts.

The C parser of ruamel.yaml.clib produces events; building the tree from them here (instead of
composing ruamel nodes and constructing objects from those) keeps loading within a small factor
of the fastest YAML loaders while every mapping key, mapping value and sequence item keeps its
1-based line and column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from gpulint.views import NamedTuple

try:
    # A private module of ruamel.yaml.clib (pyproject.toml bounds it to the versions tested).
    from _ruamel_yaml import CParser
except ImportError as exc:
    raise ImportError(
        "the C parser of ruamel.yaml.clib (_ruamel_yaml.CParser) cannot be imported "
        f"({exc}): install a version gpulint supports: pip install 'ruamel.yaml.clib>=0.2.8,<0.3'",
        name="_ruamel_yaml",
    ) from exc
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.reader import ReaderError

#: (line, column), both 1-based.
Pos = tuple[int, int]


class YMap(dict):
    """A mapping that knows its own position and the position of each key and value."""

    __slots__ = ("pos", "spans")

    def __init__(self, pos: Pos = (1, 1)) -> None:
        # No dict.__init__ call: the parser makes one per mapping and it is empty already.
        self.pos = pos
        # key -> (key line, key column, value line, value column): one dict and one tuple per
        # key rather than two of each keeps large corpora within the loading budget.
        self.spans: dict[Any, tuple[int, int, int, int]] = {}

    def pos_of_key(self, key: Any) -> Pos:
        """Where `key` is written, or where the mapping starts when the key is absent."""
        span = self.spans.get(key)
        return (span[0], span[1]) if span else self.pos

    def pos_of_value(self, key: Any) -> Pos:
        """Where the value of `key` starts, or where the mapping starts when the key is absent."""
        span = self.spans.get(key)
        return (span[2], span[3]) if span else self.pos

    def update_from(self, other: YMap) -> None:
        """Take the entries of `other` with where each is written (later ones win), as an
        operator merges one written spec into another."""
        self.update(other)
        self.spans.update(other.spans)

    def with_entry(self, key: Any, value: Any, pos: Pos) -> YMap:
        """A copy of this mapping (its positions kept) with `key` set to `value`: what an
        operator builds from a written spec. A key it did not have is placed at `pos`."""
        copy = YMap(self.pos)
        copy.update_from(self)
        copy[key] = value
        copy.spans.setdefault(key, (*pos, *pos))
        return copy


class BuiltMap(YMap):
    """A pod spec gpulint built for a pod an operator writes from other fields
    (gpulint.operators): it is written nowhere, so no edit adds keys or items to it.

    `read_from` holds the id()s of the written mappings whose requests it carries in another
    shape (a Spark role's `gpu` field, the pod template whose container it rebuilt): the
    accelerator scan takes what they hold as read (gpulint.requestscan).
    """

    __slots__ = ("read_from",)

    def __init__(self, pos: Pos = (1, 1), read_from: tuple[int, ...] = ()) -> None:
        super().__init__(pos)
        self.read_from = read_from


class YSeq(list):
    """A sequence that knows its own position and the position of each item."""

    __slots__ = ("item_pos", "pos")

    def __init__(self, pos: Pos = (1, 1)) -> None:
        # No list.__init__ call: the parser makes one per sequence and it is empty already.
        self.pos = pos
        self.item_pos: list[Pos] = []

    def pos_of_item(self, index: int) -> Pos:
        """Where item `index` starts."""
        return self.item_pos[index] if 0 <= index < len(self.item_pos) else self.pos

    def append_at(self, item: Any, pos: Pos) -> None:
        """Append `item`, written at `pos` (an item an operator adds is placed where it says)."""
        self.append(item)
        self.item_pos.append(pos)

    def extend_from(self, other: YSeq) -> None:
        """Append the items of `other` with where each is written (an operator joins the
        lists of two written specs)."""
        self.extend(other)
        self.item_pos.extend(other.item_pos)


def last_line(node: YMap | YSeq) -> int:
    """The last line on which a key, value or item of `node` starts (scalars end where they
    start)."""
    last = node.pos[0]
    if isinstance(node, YMap):
        for key, value in node.items():
            span = node.spans.get(key)
            if span is not None:
                last = max(last, span[2])
            if isinstance(value, (YMap, YSeq)):
                last = max(last, last_line(value))
    else:
        for index, item in enumerate(node):
            last = max(last, node.pos_of_item(index)[0])
            if isinstance(item, (YMap, YSeq)):
                last = max(last, last_line(item))
    return last


class YamlSyntaxError(Exception):
    """The text is not well-formed YAML; `line`/`column` are 1-based."""

    def __init__(self, line: int, column: int, problem: str) -> None:
        super().__init__(line, column, problem)
        self.line = line
        self.column = column
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.problem}"


class DuplicateKey(NamedTuple):
    """A key written twice in one mapping: the later value silently wins.

    With `by_merge`, `pos` is the `<<` whose merge replaced the key written at `first`.
    """

    key: str
    pos: Pos
    first: Pos
    by_merge: bool = False


class Watched(NamedTuple):
    """A mapping key or string value holding the text `parse` watches for."""

    text: str
    pos: Pos  # where it is written (an alias: where the alias is)
    is_key: bool


#: What a document's mappings and lists hold of the watched text: by id(), the collection and
#: its (key or index, Watched or the mapping or list that holds more) entries leading there.
WatchedEntries = Mapping[int, tuple[Any, tuple[tuple[Any, Any], ...]]]
_NOTHING_WATCHED: WatchedEntries = MappingProxyType({})


class ParsedDocument(NamedTuple):
    """One YAML document: its value (None when empty), where it starts, duplicate keys."""

    value: Any
    pos: Pos  # the `---` line of an explicit document, else where its content starts
    duplicates: tuple[DuplicateKey, ...]
    value_pos: Pos  # where the value is written (findings about a non-mapping point here)
    # With `parse(watch=...)`: where the finished tree holds the watched text (watched_below).
    watched: WatchedEntries = _NOTHING_WATCHED


class ParseResult(NamedTuple):
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
# How every plain scalar that resolve_plain reads as a number starts.
_NUMBER_START = frozenset("0123456789+-.")


def resolve_plain(text: str) -> Any:
    """Type of an unquoted scalar: int, float, bool, None or str."""
    if not text:
        return None
    first = text[0]
    if first in "0123456789+-.":
        try:
            if text.isdigit() and text.isascii() and (first != "0" or len(text) == 1):
                return int(text)  # the usual number (a port, a count): no regex needed
            if _INT.match(text):
                return int(text.replace("_", ""))
            if _FLOAT.match(text) and text not in (".", "+", "-"):
                return float(text.replace("_", ""))
            if _OCT_HEX.match(text):
                return int(text, 0)
        except ValueError:
            # More digits than Python converts (4300): far beyond any float, which go-yaml
            # reads as the string it is.
            return text
    return _WORDS.get(text, text) if len(text) <= 5 else text


#: Collections nested deeper than this stop the parse. Kubernetes' YAML decoder allows 10000
#: levels, but no Kubernetes object comes near 100, the C scanner slows down with every level of
#: flow nesting (`[[[...`), and code that walks a tree recursively must stay far below Python's
#: recursion limit.
MAX_DEPTH = 500

# go-yaml v2 (under sigs.k8s.io/yaml, Kubernetes' YAML decoder) refuses a document once more
# than this share of the nodes it decoded came from expanding aliases ("billion laughs").
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


def parse(
    text: str, *, line_breaks_normalized: bool = False, watch: str | tuple[str, ...] = ""
) -> ParseResult:
    """Parse every document of `text`; stop at the first error and report it.

    Besides YAML syntax, an error is whatever Kubernetes' YAML decoder refuses: an unknown
    anchor, an anchor that contains itself, excessive aliasing, a `<<` merge of something other
    than mappings, a collection as a mapping key; and nesting deeper than MAX_DEPTH.
    `line_breaks_normalized` says the caller has passed `text` through normalize_line_breaks.
    With `watch` (a text, or several), each document lists where its tree holds it
    (ParsedDocument.watched), noted as the tree is built: text without it costs nothing more.
    """
    if not line_breaks_normalized:
        text = normalize_line_breaks(text)
    documents: list[ParsedDocument] = []
    present = [w for w in ((watch,) if type(watch) is str else watch) if w and w in text]
    try:
        _parse_into(text, documents, _watcher(present))
    except YamlSyntaxError as exc:
        return ParseResult(tuple(documents), exc)
    except Exception as exc:  # ruamel raises MarkedYAMLError subclasses; anything else is a bug
        if is_flow_colon(exc) and len(text) <= PURE_PARSE_MAX_CHARS:
            again = _parse_pure(text, _watcher(present))
            if again is not None:
                return again
        return ParseResult(tuple(documents), _syntax_error(exc, text))
    return ParseResult(tuple(documents), None)


#: The longest text read again by the Python parser (`_parse_pure`), which takes about 25 times
#: the C parser's time: a file of flow collections crafted to be refused would otherwise cost a
#: run minutes (128 MiB is the largest file gpulint reads); a manifest of this size or less,
#: which is every one a person writes, costs at most seconds.
PURE_PARSE_MAX_CHARS = 4 << 20


def is_flow_colon(exc: Exception) -> bool:
    """Whether the C parser refused a `:` inside a plain scalar of a flow collection
    (`{url: https://example.com}`): the libyaml it is built from predates YAML 1.2's rule that
    allows one not followed by a space, which Kubernetes' decoder (go-yaml) and libyaml 0.2
    follow."""
    return (
        getattr(exc, "problem", None) == "found unexpected ':'"
        and getattr(exc, "context", None) == "while scanning a plain scalar"
    )


def pure_events(text: str) -> Callable[[], Any]:
    """The next event of `text` by ruamel.yaml's Python parser (see is_flow_colon)."""
    from ruamel.yaml import YAML  # imported only for a text the C parser refuses

    return YAML(typ="safe", pure=True).parse(text).__next__


def _parse_pure(text: str, watch: str | re.Pattern[str]) -> ParseResult | None:
    """`text` parsed with ruamel.yaml's Python parser, which follows YAML 1.2 there: slower,
    so only for a text the C parser refused at a flow `:`. Its own syntax error, where the
    text is broken elsewhere; None for a character it refuses (its reader counts offsets
    otherwise than the C reader: the C parser's error is reported)."""
    documents: list[ParsedDocument] = []
    try:
        _parse_into(text, documents, watch, pure_events(text))
    except YamlSyntaxError as exc:
        return ParseResult(tuple(documents), exc)
    except ReaderError:
        return None
    except Exception as exc:
        return ParseResult(tuple(documents), _syntax_error(exc, text))
    return ParseResult(tuple(documents), None)


# Besides LF and CRLF, the C parser breaks lines at a lone CR, NEL, LS and PS (YAML 1.1).
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
_TO_LF = str.maketrans(dict.fromkeys(_OTHER_BREAKS, "\n"))


def position_at(
    root: Any, path: Sequence[Any], written: Callable[[YMap, Any], Any] | None = None
) -> Pos:
    """Where the value at `path` (keys and indexes) starts in a parsed tree, or its nearest
    existing ancestor's when it is absent. `written(mapping, step)`: the key a step is written
    as when the mapping has no key equal to it (a number the API reads as text)."""
    node, pos = root, getattr(root, "pos", (1, 1))
    for step in path:
        if isinstance(node, YMap):
            key = step if written is None or step in node else written(node, step)
            if key not in node:
                break
            pos, node = node.pos_of_value(key), node[key]
        elif isinstance(node, YSeq) and isinstance(step, int) and step < len(node):
            pos, node = node.pos_of_item(step), node[step]
        else:
            break
    return pos


def byte_position(data: bytes, offset: int) -> Pos:
    """(line, column) of a byte offset, the column counted in bytes (for text that is not UTF-8)."""
    return data.count(b"\n", 0, offset) + 1, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def normalize_line_breaks(text: str) -> str:
    """`text` with every line break the parser knows written as LF.

    Lines are then counted one way everywhere: by the parser, by the loader's comment scan and
    by an editor, which also shows a lone CR as a line break.
    """
    if not any(b in text for b in _OTHER_BREAKS):
        return text
    return text.replace("\r\n", "\n").translate(_TO_LF)


def _syntax_error(exc: Exception, text: str) -> YamlSyntaxError:
    if isinstance(exc, ReaderError):
        return _reader_error(exc, text)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    if context:
        problem = f"{problem} ({context})"
    if mark is None:
        return YamlSyntaxError(1, 1, problem)
    line, column = mark.line + 1, mark.column + 1
    # A merge left unresolved breaks the YAML a few lines below its first marker: name the cause.
    conflict = re.compile(_CONFLICT_MARKER).search(text, 0, _line_end(text, line))
    if conflict is not None:
        marker = " ".join(part for part in conflict.groups() if part)
        return YamlSyntaxError(
            text.count("\n", 0, conflict.start()) + 1,
            1,
            f"unresolved merge conflict: `{marker}` is a git conflict marker, not YAML; "
            "keep one side of the conflict and delete the marker lines",
        )
    if _char_at(text, mark.index) == "\t":
        problem += "; YAML does not allow tabs for indentation, use spaces"
    last = text.count("\n") + 1
    if line > last:  # the end of a text without a final newline: point at its last character
        line, column = last, len(text) - (text.rfind("\n") + 1) + 1
    return YamlSyntaxError(line, column, problem)


# Lines git writes around a conflict: `<<<<<<< HEAD`, `=======`, `>>>>>>> branch`. Compiled
# on first use: only a text that does not parse is searched for them.
_CONFLICT_MARKER = r"(?m)^(<{7}|={7}|>{7})(?:[ \t]+([^\s#]\S*))?(?:[ \t][^\n]*)?$"


def _line_end(text: str, line: int) -> int:
    """The offset just past line `line` (1-based) of `text`."""
    offset = -1
    for _ in range(line):
        offset = text.find("\n", offset + 1)
        if offset < 0:
            return len(text)
    return offset


def _reader_error(exc: ReaderError, text: str) -> YamlSyntaxError:
    """A character YAML does not allow; the C reader reports its UTF-8 byte offset."""
    prefix = text.encode("utf-8", "surrogatepass")[: exc.position]
    offset = len(prefix.decode("utf-8", "ignore"))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    character = exc.character if isinstance(exc.character, int) else 0
    return YamlSyntaxError(
        line, column, f"character U+{character:04X} is not allowed: {exc.reason}"
    )


def _char_at(text: str, index: int) -> str:
    return text[index] if 0 <= index < len(text) else ""


def _watcher(texts: Sequence[str]) -> str | re.Pattern[str]:
    """What `_parse_into` looks for in scalars: one text, a pattern of several, "" for none."""
    if len(texts) <= 1:
        return texts[0] if texts else ""
    return re.compile("|".join(map(re.escape, texts)))


def _holds(watch: str | re.Pattern[str], value: str) -> bool:
    """Whether scalar `value` holds what is watched (`_watcher`)."""
    return watch in value if isinstance(watch, str) else watch.search(value) is not None


def _parse_into(
    text: str,
    documents: list[ParsedDocument],
    watch: str | re.Pattern[str],
    events: Callable[[], Any] | None = None,
) -> None:
    # The hot path of every run: one pass over the C parser's events (or `events`, the next
    # event of another parser), dispatching on the event class by identity and keeping the
    # innermost open collection in locals.
    next_event = events or CParser(text).get_event
    anchors: dict[str, Any] = {}
    duplicates: list[DuplicateKey] = []
    # The enclosing collections, innermost last, each saved as (container, its spans or None,
    # its spans or item_pos, pending key or _NO_KEY, position of that key, keys merged in by
    # `<<`).
    stack: list[tuple[Any, Any, Any, Any, Pos, set[Any] | None]] = []
    container: Any = None  # the innermost open YMap/YSeq; None at document level
    key_positions: dict[Any, tuple[int, int, int, int]] | None = None  # None: not in a mapping
    positions: Any = None  # the container's spans (mapping) or item_pos (sequence)
    key: Any = _NO_KEY
    key_pos: Pos = (1, 1)
    merged: set[Any] | None = None
    doc_pos: Pos = (1, 1)
    value_pos: Pos = (1, 1)
    doc_value: Any = None
    # Alias bookkeeping, all per document: anchored collections still open (an alias to one
    # would make the tree contain itself), nodes added by expanding aliases, expanded sizes.
    open_anchored: set[int] = set()
    alias_nodes = 0
    sizes: dict[int, int] = {}
    doc_start = 0
    # What the document's collections hold of `watch`, as it is met (see _watch).
    watched: dict[int, tuple[Any, list[tuple[Any, Any]]]] = {}
    # With `watch`, scalars take a branch of their own below, which notes the watched ones:
    # this one, the hottest, stays as it is.
    scalar_event = None if watch else ScalarEvent
    while True:
        event = next_event()
        cls = type(event)
        if cls is scalar_event:
            mark = event.start_mark
            pos = (mark.line + 1, mark.column + 1)
            value = event.value
            if event.implicit[0]:  # plain and untagged
                # Most plain scalars are words (keys, names, images): skip the resolver for them.
                if not value or value[0] in _NUMBER_START or value in _WORDS:
                    value = resolve_plain(value)
            elif not event.style and event.tag != _STR_TAG:
                value = resolve_plain(value)
            if event.anchor:
                anchors[event.anchor] = value
        elif cls is MappingStartEvent:
            mark = event.start_mark
            stack.append((container, key_positions, positions, key, key_pos, merged))
            if len(stack) > MAX_DEPTH:
                raise _too_deep(mark)
            container = YMap((mark.line + 1, mark.column + 1))
            key_positions = positions = container.spans
            key, merged = _NO_KEY, None
            if event.anchor:
                anchors[event.anchor] = container
                open_anchored.add(id(container))
            continue
        elif cls is SequenceStartEvent:
            mark = event.start_mark
            stack.append((container, key_positions, positions, key, key_pos, merged))
            if len(stack) > MAX_DEPTH:
                raise _too_deep(mark)
            container = YSeq((mark.line + 1, mark.column + 1))
            key_positions, positions = None, container.item_pos
            if event.anchor:
                anchors[event.anchor] = container
                open_anchored.add(id(container))
            continue
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            value = container
            pos = value.pos
            container, key_positions, positions, key, key_pos, merged = stack.pop()
            if open_anchored:
                open_anchored.discard(id(value))
        elif cls is ScalarEvent:  # with `watch`: read as in the first branch, then noted
            mark = event.start_mark
            pos = (mark.line + 1, mark.column + 1)
            value = event.value
            if event.implicit[0]:
                if not value or value[0] in _NUMBER_START or value in _WORDS:
                    value = resolve_plain(value)
            elif not event.style and event.tag != _STR_TAG:
                value = resolve_plain(value)
            if event.anchor:
                anchors[event.anchor] = value
            if container is not None and type(value) is str and _holds(watch, value):
                _watch_scalar(watched, stack, container, key, value, pos)
        elif cls is AliasEvent:
            mark = event.start_mark
            pos = (mark.line + 1, mark.column + 1)
            value = anchors.get(event.anchor, _NO_KEY)
            alias_nodes += _alias_size(event.anchor, value, pos, open_anchored, sizes)
            if _excessive_aliasing(alias_nodes, mark.index - doc_start):
                raise YamlSyntaxError(*pos, "document contains excessive aliasing")
            if watch and container is not None:
                if type(value) is str and _holds(watch, value):
                    _watch_scalar(watched, stack, container, key, value, pos)
                elif id(value) in watched:
                    _watch(watched, stack, container, key, value)
        elif cls is DocumentStartEvent:
            mark = event.start_mark
            doc_pos = value_pos = (mark.line + 1, mark.column + 1)
            doc_value = None
            duplicates = []
            anchors = {}
            open_anchored, alias_nodes, sizes, doc_start = set(), 0, {}, mark.index
            continue
        elif cls is DocumentEndEvent:
            kept = _NOTHING_WATCHED
            if watched:
                kept, watched = _held(watched), {}
            documents.append(ParsedDocument(doc_value, doc_pos, tuple(duplicates), value_pos, kept))
            continue
        elif cls is StreamEndEvent:
            return
        else:
            continue

        if key_positions is None:
            if container is None:
                # The value's own position, not the `---` line: findings about a document that
                # is not a mapping point at what is written there.
                doc_value, value_pos = value, pos
            else:
                container.append(value)
                positions.append(pos)
        elif key is _NO_KEY:
            key = value if type(value) is str or isinstance(value, _KEY_TYPES) else _key(value, pos)
            key_pos = pos
        else:
            if key == "<<":
                merged, replaced = _merge(container, value, pos, merged)
                duplicates.extend(
                    DuplicateKey(str(name), key_pos, first, by_merge=True)
                    for name, first in replaced
                )
                if watch:
                    for source in (value,) if type(value) is YMap else value:
                        for name, held in watched.get(id(source), (None, ()))[1]:
                            _watch(watched, stack, container, name, held)
            else:
                if key in container and not (merged and key in merged):
                    first = key_positions[key]
                    duplicates.append(DuplicateKey(str(key), key_pos, (first[0], first[1])))
                container[key] = value
                positions[key] = key_pos + pos
            key = _NO_KEY


_NO_KEY = object()
_KEY_TYPES = (str, int, float, bool, type(None))


def _watch(
    watched: dict[int, tuple[Any, list[tuple[Any, Any]]]],
    stack: list[Any],
    container: Any,
    key: Any,
    item: Any,
) -> None:
    """Note that the open `container` holds `item` (a Watched scalar, or a collection holding
    some) as the value of `key`, as a key (a Watched one, when no key is pending) or as its
    next item; and so does each enclosing collection, up to the first already noted."""
    for parent, _, _, parent_key, _, _ in reversed(stack):
        if type(container) is YSeq:
            key = len(container)
        elif type(item) is Watched and item.is_key:
            key = item.text
        noted = watched.get(id(container))
        if noted is not None:
            noted[1].append((key, item))
            return
        watched[id(container)] = (container, [(key, item)])
        if parent is None:
            return
        container, key, item = parent, parent_key, container


def _watch_scalar(
    watched: dict[int, tuple[Any, list[tuple[Any, Any]]]],
    stack: list[Any],
    container: Any,
    key: Any,
    text: str,
    pos: Pos,
) -> None:
    """Note a scalar holding the watched text, read into the open `container` (see _watch)."""
    is_key = key is _NO_KEY and type(container) is YMap
    _watch(watched, stack, container, key, Watched(text, pos, is_key))


def _held(watched: dict[int, tuple[Any, list[tuple[Any, Any]]]]) -> WatchedEntries:
    """The entries of `watched` the finished document still holds, each once: a key written
    twice keeps only its last value, a merge only the keys nothing replaced, and a `<<` key
    holds nothing itself."""
    held = {}
    for ident, (holder, entries) in watched.items():
        kept: dict[tuple[Any, int], tuple[Any, Any]] = {}
        for key, item in entries:
            if type(holder) is YSeq:
                pass  # items are only appended
            elif type(item) is Watched:
                span = holder.spans.get(key)
                if span is None or (span[:2] if item.is_key else span[2:]) != item.pos:
                    continue
            elif holder.get(key) is not item:
                continue
            kept.setdefault((key, id(item)), (key, item))
        held[ident] = (holder, tuple(kept.values()))
    return held


def watched_below(
    watched: WatchedEntries, node: YMap | YSeq, skip: Container[Any] = ()
) -> Iterator[Watched]:
    """The keys and string values holding the watched text (see `parse`) that `node`, a
    mapping or list of a document, holds at any depth but below a key in `skip`: once per path
    to them, as a walk of the tree would meet them (an alias or merge is one more path)."""
    pending = [node]
    while pending:
        for key, item in watched.get(id(pending.pop()), (None, ()))[1]:
            if key in skip:
                continue
            if type(item) is Watched:
                yield item
            else:
                pending.append(item)


def _key(value: Any, pos: Pos) -> Any:
    """A mapping key that is not a plain scalar: go-yaml refuses collections as keys."""
    if isinstance(value, (YMap, YSeq)):
        raise YamlSyntaxError(*pos, "invalid map key: a mapping or sequence cannot be a key")
    return str(value)


def _too_deep(mark: Any) -> YamlSyntaxError:
    return YamlSyntaxError(
        mark.line + 1, mark.column + 1, f"nesting deeper than {MAX_DEPTH} levels; not read further"
    )


def _merge(
    target: YMap, source: Any, pos: Pos, earlier: set[Any] | None
) -> tuple[set[Any], list[tuple[Any, Pos]]]:
    """YAML merge key `<<`, applied the way go-yaml v2 (Kubernetes' decoder) applies it.

    The merge happens where `<<` is written: it replaces keys written before it, and keys
    written after it replace merged ones. Of a list of mappings, earlier mappings win.
    Returns every key a `<<` of this mapping has merged in so far, and the keys written
    before this `<<` that it replaced, with where they were written.
    """
    if isinstance(source, YMap):
        sources: list[YMap] = [source]
    elif isinstance(source, YSeq) and all(isinstance(m, YMap) for m in source):
        sources = list(reversed(source))
    else:
        raise YamlSyntaxError(*pos, "map merge requires map or sequence of maps as the value")
    merged = set(earlier) if earlier else set()
    replaced: list[tuple[Any, Pos]] = []
    for mapping in sources:
        for key, value in mapping.items():
            if key in target and key not in merged:
                span = target.spans[key]
                replaced.append((key, (span[0], span[1])))
            target[key] = value
            target.spans[key] = mapping.spans[key]
            merged.add(key)
    return merged, replaced


def _alias_size(
    anchor: str, value: Any, pos: Pos, open_anchored: set[int], sizes: dict[int, int]
) -> int:
    """How many nodes go-yaml decodes when it expands this alias; raises for a bad alias."""
    if value is _NO_KEY:
        raise YamlSyntaxError(*pos, f"unknown anchor '{anchor}' referenced")
    if not isinstance(value, (YMap, YSeq)):
        return 1
    if id(value) in open_anchored:
        raise YamlSyntaxError(*pos, f"anchor '{anchor}' value contains itself")
    return _expanded_size(value, sizes)


def _expanded_size(root: YMap | YSeq, sizes: dict[int, int]) -> int:
    """Nodes in `root` with every shared (aliased) part counted each time it appears.

    Iterative and memoised by identity, so an alias bomb costs time in its distinct nodes, not
    in its expansion. go-yaml counts a mapping's keys as nodes too.
    """
    pending: list[Any] = [root]
    while pending:
        node = pending[-1]
        if id(node) in sizes:
            pending.pop()
            continue
        children = list(node.values()) if isinstance(node, YMap) else node
        missing = [c for c in children if isinstance(c, (YMap, YSeq)) and id(c) not in sizes]
        if missing:
            pending.extend(missing)
            continue
        pending.pop()
        total = 1 + (len(node) if isinstance(node, YMap) else 0)
        for child in children:
            total += sizes[id(child)] if isinstance(child, (YMap, YSeq)) else 1
        sizes[id(node)] = total
    return sizes[id(root)]


def _excessive_aliasing(alias_nodes: int, characters: int) -> bool:
    """go-yaml v2's `document contains excessive aliasing` test.

    go-yaml compares alias-expanded nodes with all nodes decoded so far; the characters read in
    the document stand in for the nodes written in it (a node takes at least one character).
    """
    if alias_nodes <= 100:
        return False
    total = alias_nodes + characters
    if total <= 1000:
        return False
    if total <= _ALIAS_RATIO_LOW:
        allowed = 0.99
    elif total >= _ALIAS_RATIO_HIGH:
        allowed = 0.10
    else:
        span = _ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW
        allowed = 0.99 - 0.89 * (total - _ALIAS_RATIO_LOW) / span
    return alias_nodes / total > allowed
