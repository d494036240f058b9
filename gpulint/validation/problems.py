"""A validator's errors on one object, as findings at the exact key or value in the file.

Each error of jsonschema-rs names the path of the value (`instance_path`) and the schema
keyword it failed (`schema_path`); the tree gpulint parsed gives the position of that path, and
the schema the field names a did-you-mean is chosen from.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from gpulint.fields import field_path, shown, type_name, with_article
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq, position_at


class FieldProblem(NamedTuple):
    """One thing the API server refuses in an object."""

    what: str  # "unknown" | "type" | "required" | "enum" | "value"
    pos: Pos
    message: str
    fix: str
    parent: str = ""  # the schema definition the field belongs to (`io.k8s.api.core.v1.Container`)
    key: str = ""  # an unknown field's name
    path: tuple[Any, ...] = ()  # of the value (an unknown field's mapping)


_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "object": "a mapping",
    "array": "a list",
}
# Definitions whose values may be one of two types (their schema is a oneOf).
_EITHER = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": (
        "a quantity (a string such as `500m` or a number)"
    ),
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "an integer or a string",
}


def field_problems(
    validator: Any, obj: YMap, schema: dict[str, Any], definitions: dict[str, Any] | None = None
) -> Iterator[FieldProblem]:
    """What `validator` finds wrong in `obj`, one problem per error.

    `schema` is the schema the validator was built from and `definitions` the `$defs` its
    references lead to (the built-in kinds'), read for the fields a mapping may have.
    """
    instance: Any = obj
    try:
        if validator.is_valid(obj):
            return
    except ValueError:
        # A key that is no string (`1: a`): Kubernetes' YAML decoder makes it one.
        instance = _string_keys(obj)
        if validator.is_valid(instance):
            return
    for error in validator.iter_errors(instance):
        for problem in _problems(error, obj, schema, definitions):
            yield problem._replace(path=tuple(error.instance_path))


def _problems(
    error: Any, obj: YMap, schema: dict[str, Any], definitions: dict[str, Any] | None
) -> Iterator[FieldProblem]:
    path = list(error.instance_path)
    keyword = error.kind.name
    details = error.kind.as_dict()
    owner, subschema = _subschema(list(error.schema_path), schema, definitions)
    node = _node_at(obj, path)
    if keyword == "additionalProperties" and isinstance(node, YMap):
        allowed = list((subschema or {}).get("properties") or ())
        for key in details.get("unexpected") or ():
            yield _unknown(node, path, str(key), allowed, owner)
        return
    pos = position_at(obj, path, _key_of)
    where = field_path(path) or "(the object)"
    if keyword == "required":
        name = details.get("property")
        yield FieldProblem(
            "required",
            node.pos if isinstance(node, (YMap, YSeq)) and node else pos,
            f"`{where}` has no `{name}`, which the API requires",
            f"Add `{name}:` to `{where}`.",
            owner,
        )
    elif keyword == "type":
        wanted = [t for t in details.get("types") or () if t != "null"]
        yield _wrong_type(path, node, pos, " or ".join(_WORDS.get(t, t) for t in wanted), owner)
    elif keyword in ("oneOf", "anyOf") and owner in _EITHER:
        yield _wrong_type(path, node, pos, _EITHER[owner], owner)
    elif keyword == "enum":
        choices = [c for c in details.get("options") or () if c not in ("", None)]
        yield _not_allowed(where, node, pos, choices, owner)
    else:
        message = error.message
        if isinstance(node, (YMap, YSeq)) or len(message) > 120:
            message = f"{shown(node)} fails the schema's `{keyword}`"
        yield FieldProblem(
            "value",
            pos,
            f"`{where}`: {message}",
            "Change the value to one the kind's schema allows.",
            owner,
        )


#: What an unknown field's message says of it, after naming it.
REFUSED_OR_DROPPED = (
    ": the API server refuses the object under strict field validation (`kubectl apply`'s "
    "default), and drops the field otherwise"
)


def _unknown(node: YMap, path: list[Any], key: str, allowed: list[str], owner: str) -> FieldProblem:
    where = field_path([*path, key])
    guess = closest(key, allowed)
    if guess:
        message = f"unknown field `{where}` (did you mean `{guess}`?)"
        fix = f"Rename `{key}` to `{guess}`."
    else:
        message = f"unknown field `{where}`"
        fix = "Remove the field, or move it to where the kind's API defines it."
    return FieldProblem(
        "unknown", node.pos_of_key(key), message + REFUSED_OR_DROPPED, fix, owner, key
    )


def _wrong_type(path: list[Any], node: Any, pos: Pos, wanted: str, owner: str) -> FieldProblem:
    found = with_article(type_name(node))
    if isinstance(node, bool):
        found = f"a boolean (`{shown(node)}`)"
    elif not isinstance(node, (YMap, YSeq)) and node is not None:
        found = f"{found} (`{shown(node)}`)"
    section = path[-2] if len(path) >= 2 else None
    if section in ("annotations", "labels") and path[-3:-2] == ["metadata"]:
        noun = "annotation" if section == "annotations" else "label"
        if not isinstance(node, (YMap, YSeq)):
            return FieldProblem(
                "type",
                pos,
                f"{noun} `{path[-1]}` has {found} as its value: {noun} values are strings, "
                "and the API refuses the object",
                f'Quote the value: `{path[-1]}: "{shown(node)}"`.',
                owner,
            )
    fix = f"Write {wanted} here."
    if wanted == "a string" and not isinstance(node, (YMap, YSeq)):
        fix = f'Quote the value: `"{shown(node)}"`.'
    return FieldProblem(
        "type", pos, f"`{field_path(path)}` is {found}, but the API needs {wanted}", fix, owner
    )


def _not_allowed(where: str, node: Any, pos: Pos, choices: list[Any], owner: str) -> FieldProblem:
    listed = ", ".join(f"`{shown(c)}`" for c in choices[:8])
    more = f" and {len(choices) - 8} more" if len(choices) > 8 else ""
    texts = [str(c) for c in choices if isinstance(c, str)]
    guess = closest(str(node), texts) if isinstance(node, str) else None
    message = f"`{where}: {shown(node)}` is not a value the API accepts ({listed}{more})"
    if guess:
        message += f"; did you mean `{guess}`?"
    fix = f"Write `{guess}`." if guess else "Use one of the values the API accepts."
    return FieldProblem("enum", pos, message, fix, owner)


def closest(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate `word` most likely misspells, if any is close enough."""
    lower = word.lower()
    for candidate in candidates:
        if candidate.lower() == lower:
            return candidate
    import difflib  # only a finding gets here

    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
    if not found:
        by_case = {c.lower(): c for c in candidates}
        found = [by_case[m] for m in difflib.get_close_matches(lower, list(by_case), 1, 0.75)]
    return found[0] if found else None


def _subschema(
    schema_path: list[Any], schema: dict[str, Any], definitions: dict[str, Any] | None
) -> tuple[str, dict[str, Any] | None]:
    """The definition the failing keyword sits in (its name, when it is a built-in one) and
    the schema node holding that keyword."""
    owner, node, steps = "", schema, schema_path[:-1]
    if definitions is not None and "$defs" in schema_path:
        start = len(schema_path) - 1 - schema_path[::-1].index("$defs")
        owner = str(schema_path[start + 1]) if start + 1 < len(schema_path) else ""
        node, steps = definitions.get(owner), schema_path[start + 2 : -1]
    for step in steps:
        if (isinstance(node, dict) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and step < len(node)
        ):
            node = node[step]
        elif step != "$ref":
            return owner, None
    return owner, node if isinstance(node, dict) else None


def _node_at(obj: Any, path: list[Any]) -> Any:
    node = obj
    for step in path:
        if isinstance(node, YMap):
            node = node.get(step, node.get(_key_of(node, step)))
        elif isinstance(node, YSeq) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return None
    return node


def _key_of(node: YMap, step: Any) -> Any:
    # A key written as a number or boolean, which the API reads as its text.
    return next((k for k in node if not isinstance(k, str) and _text(k) == step), step)


def _text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


def _string_keys(value: Any) -> Any:
    """`value` with every mapping key as the text the API reads it as (positions dropped)."""
    if isinstance(value, dict):
        return {_text(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value
