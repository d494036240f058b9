"""Dump files -> their objects as plain values, read without positions and one at a time.

A diagnosis points at no line of a dump, so a dump is not built as the loader's positioned tree:
a JSON dump is read by the C JSON parser, a YAML dump from the C YAML parser's events (as
gpulint.yamltree reads them, scalars resolved alike, without the positions), handing over each
item of a `kind: List` as soon as it is complete, so the list is never held whole. Whatever
this reader does not take (aliases, merge keys, a syntax error, a file of no objects) it gives
up on with `Unread`, and the caller reads the file with the loader, which reports the problem at
its line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gpulint.data.tool_configs import is_tool_config
from gpulint.yamltree import (
    _NUMBER_START,
    _STR_TAG,
    _WORDS,
    MAX_DEPTH,
    CParser,
    normalize_line_breaks,
    resolve_plain,
)


class Unread(Exception):
    """The fast reader does not take this file; read it with the loader."""


def is_object(value: Any) -> bool:
    """An API object, as the loader tells one: a mapping with apiVersion and kind, not a
    tool's local configuration."""
    if type(value) is not dict and not isinstance(value, Mapping):
        return False
    api_version, kind = value.get("apiVersion"), value.get("kind")
    if not api_version or not kind:
        return False
    if type(api_version) is str and type(kind) is str:
        known = _TOOL_CONFIG.get((api_version, kind))
        if known is None:
            known = _TOOL_CONFIG[api_version, kind] = is_tool_config(api_version, kind)
        return not known
    return not is_tool_config(str(api_version), str(kind))


#: is_tool_config of each (apiVersion, kind) met: a dump repeats a few pairs.
_TOOL_CONFIG: dict[tuple[str, str], bool] = {}


def expand_lists(value: Any) -> Iterator[Mapping[str, Any]]:
    """The objects `value` stands for: a `kind: List` (or `FooList`) for its object items."""
    if not is_object(value):
        return
    kind = value.get("kind")
    items = value.get("items") if kind == "List" or str(kind).endswith("List") else None
    if isinstance(items, list):
        for item in items:
            yield from expand_lists(item)
        return
    yield value


def read_objects(text: str, take: Callable[[Mapping[str, Any]], None]) -> int:
    """Give every object of a dump's `text` to `take`, in file order; the number given.

    Raises Unread for what only the loader reads (or reports).
    """
    if text.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except ValueError:
            pass  # JSON-looking YAML (flow style), or broken: the YAML reader decides
        else:
            del text
            count = 0
            for obj in expand_lists(value):
                take(obj)
                count += 1
            return count
    return _read_yaml(text, take)


def _read_yaml(text: str, take: Callable[[Mapping[str, Any]], None]) -> int:
    """The events of the C parser -> plain values; items of a root list handed over one by one."""
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

    try:
        parser = CParser(normalize_line_breaks(text))
    except Exception as exc:
        raise Unread(str(exc)) from None
    next_event = parser.get_event
    del text
    count = 0
    no_key = _NO_KEY
    # The enclosing collections, innermost last: (container, pending key).
    stack: list[tuple[Any, Any]] = []
    container: Any = None
    key: Any = no_key
    root: Any = None
    # While the root mapping's `items` sequence is open, its mappings are handed over as they
    # end (and checked to be a List's items at the root's end).
    items: list[Any] | None = None
    given = False
    while True:
        try:
            event = next_event()
        except Exception as exc:
            raise Unread(str(exc)) from None
        cls = type(event)
        if cls is ScalarEvent:
            if event.anchor:
                raise Unread("anchor")
            value = event.value
            if event.implicit[0]:
                if not value or value[0] in _NUMBER_START or value in _WORDS:
                    value = resolve_plain(value)
            elif not event.style and event.tag != _STR_TAG:
                value = resolve_plain(value)
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            if event.anchor:
                raise Unread("anchor")
            stack.append((container, key))
            if len(stack) > MAX_DEPTH:
                raise Unread("too deep")
            container = {} if cls is MappingStartEvent else []
            key = no_key
            if len(stack) == 1:
                root = container
            elif (
                cls is SequenceStartEvent
                and len(stack) == 2
                and stack[1][1] == "items"
                and stack[1][0] is root
            ):
                items = container
            continue
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            value = container
            container, key = stack.pop()
            if container is items and items is not None:
                # An item of the root's `items`: handed over now, not kept.
                given = True
                for obj in expand_lists(value):
                    take(obj)
                    count += 1
                continue
            if value is items:
                items = None
        elif cls is AliasEvent:
            raise Unread("alias")
        elif cls is DocumentStartEvent:
            root, container, key = None, None, no_key
            continue
        elif cls is DocumentEndEvent:
            if given and not (is_object(root) and str(root.get("kind")).endswith("List")):
                raise Unread("items of something other than a List")
            if not given:
                for obj in expand_lists(root):
                    take(obj)
                    count += 1
            given = False
            continue
        elif cls is StreamEndEvent:
            return count
        else:
            continue

        if container is None:
            root = value
        elif type(container) is list:
            container.append(value)
        elif key is no_key:
            if isinstance(value, dict | list):
                raise Unread("a collection as a key")
            if value == "<<":
                raise Unread("merge key")
            key = value
        else:
            container[key] = value
            key = no_key


_NO_KEY = object()
