"""Reading fields of the parsed YAML tree, and naming its values in messages.

Below the typed views (gpulint.model) and the constraint views (gpulint.constraints), which
both read fields with these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpulint.yamltree import YMap, YSeq


def mapping_at(node: Any, *keys: str) -> YMap:
    """The mapping at `node[k1][k2]...`, or an empty mapping when any step is missing."""
    for key in keys:
        if not isinstance(node, YMap):
            return _EMPTY
        node = node.get(key)
    return node if isinstance(node, YMap) else _EMPTY


_EMPTY = YMap()


def wrong_type(field: str, value: Any, expected: type) -> str | None:
    """The message for `field` holding a value that is not of the `expected` type, or None.

    The message names the type found, never the value: a wrong-typed field may hold anything.
    """
    if value is None or type(value) is expected:
        return None
    found, wanted = type_name(value), _EXPECTED[expected]
    if value is None or found == wanted:
        return None
    return (
        f"`{field}` is {with_article(found)}, not {with_article(wanted)}; "
        "the API server rejects the object"
    )


_EXPECTED = {str: "string", YMap: "mapping", YSeq: "list", int: "integer", bool: "boolean"}
# bool before int: YAML's `true` is no integer.
_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (YMap, "mapping"),
    (YSeq, "list"),
    (str, "string"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
)


def with_article(noun: str) -> str:
    """`list` -> `a list`, `integer` -> `an integer`."""
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"


def type_name(value: Any) -> str:
    """What a parsed YAML value is, in the words messages use."""
    return next((name for t, name in _TYPE_NAMES if isinstance(value, t)), type(value).__name__)


_SHOWN_MAX = 40


def shown(value: Any) -> str:
    """A value as a message may quote it: YAML spelling, one line, at most 40 characters.

    A mapping or list is never printed (it may hold anything), only its brackets.
    """
    if isinstance(value, (dict, list)):
        return "{…}" if isinstance(value, dict) else "[…]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 1] + "…"


def text_of(value: Any) -> str:
    """A scalar as the API reads it into a string field: null is empty, booleans are lower-case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def field_path(path: Sequence[Any]) -> str:
    """A field as a message names it: `["spec", "containers", 0, "resources"]` ->
    `spec.containers[0].resources`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text
