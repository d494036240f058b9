"""Reading fields of the parsed YAML tree, and naming its values in messages.

Below the typed views (gpulint.model) and the constraint views (gpulint.constraints), which
both read fields with these.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=4096)
def spelt_like(word: str, targets: tuple[str, ...]) -> bool:
    """Whether `word`, in any case, is one of `targets` or spelt like one: difflib's
    get_close_matches with a cutoff of 0.8 (GPU004's near misses of `resources:` and its
    sections). Asked for every key of every container: the same few keys repeat."""
    lower = word.lower()
    if lower in targets:
        return True
    # difflib's ratio is twice the characters matched over the characters of both words; it
    # is only computed where two cheaper bounds on it reach the cutoff (the words' lengths,
    # then the letters they share), and where the shorter word is part of the longer (a
    # letter missing or added at an end) it is the first bound. So difflib, a start-up's worth
    # of it, is imported only for a word that neither settles: most container keys are far
    # from `resources`, and `resource` is part of it.
    near = False
    for target in targets:
        total = len(lower) + len(target)
        if 2.0 * min(len(lower), len(target)) / total < _CLOSE:
            continue
        if 2.0 * _shared_letters(lower, target) / total < _CLOSE:
            continue
        if total >= _AUTOJUNK or not (lower in target or target in lower):
            near = True  # difflib must say
        else:
            return True
    if not near:
        return False
    import difflib  # only for a near miss: most runs never get here

    return bool(difflib.get_close_matches(lower, targets, n=1, cutoff=_CLOSE))


def _shared_letters(a: str, b: str) -> int:
    """How many letters of `a` `b` also has, each counted as often as both have it
    (difflib's quick_ratio counts them so)."""
    left = dict.fromkeys(b, 0)
    for letter in b:
        left[letter] += 1
    shared = 0
    for letter in a:
        if left.get(letter, 0) > 0:
            left[letter] -= 1
            shared += 1
    return shared


#: How alike a key must be spelt to a known one to be a near miss (difflib's ratio).
_CLOSE = 0.8
#: Below this length difflib's SequenceMatcher treats no character as junk (its `autojunk`
#: starts at 200 characters): the reasoning above holds for words of fewer in all.
_AUTOJUNK = 200
