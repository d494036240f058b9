"""JSON Schema validation of gpulint's own files (config, cluster profile) with positions.

A schema error becomes one `file:line:col: field: message` line: the position comes from the
parsed tree (YMap/YSeq), or from a `locate` function for formats whose parser keeps none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from gpulint.errors import GpulintError
from gpulint.fields import shown
from gpulint.yamltree import Pos, YMap, YSeq, position_at

#: Turns a path of keys and indexes into the (line, column) it refers to.
Locate = Callable[[list[Any]], Pos]


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema `gpulint/schemas/<name>.schema.json` shipped in the package."""
    # Here, not at the top: a run without a config file or a profile reads no schema.
    import json
    from importlib import resources

    text = (resources.files("gpulint") / "schemas" / f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


def dotted(path: Sequence[Any]) -> str:
    """`["spec", "pools", 0, "name"]` -> `spec.pools.0.name`."""
    return ".".join(str(p) for p in path)


def validate(
    display: str,
    data: Any,
    schema_name: str,
    locate: Locate | None = None,
    *,
    unknown: str = "setting",
    hint: str = "",
) -> None:
    """Raise GpulintError for the first schema violation of `data`, naming file:line:col.

    `unknown` names what an unexpected key is (`unknown setting ...`); `hint` is appended to
    every message to tell the user where to look.
    """
    import jsonschema

    locate = locate or (lambda path_: position_at(data, path_))
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    # The shallowest error first: a wrong type higher up explains everything below it.
    error = min(errors, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    path = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(str(k) for k in error.instance if k not in allowed)
        if extra:
            path.append(extra[0])
            line, column = _key_position(data, path, locate)
            raise GpulintError(
                f"{display}:{line}:{column}: unknown {unknown} `{dotted(path)}`{hint}"
            )
    line, column = locate(path)
    where = dotted(path) or "(top level)"
    raise GpulintError(f"{display}:{line}:{column}: {where}: {_message(error)}{hint}")


def _message(error: Any) -> str:
    """jsonschema's message, with a long quoted value (it may hold anything) cut to its type."""
    choices = error.validator_value if error.validator == "anyOf" else None
    if choices and all(list(choice) == ["required"] for choice in choices):
        names = ", ".join(f"`{choice['required'][0]}`" for choice in choices)
        return f"one of {names} is required"
    quoted = repr(error.instance)
    if len(quoted) > 40 and quoted in error.message:
        return error.message.replace(quoted, f"`{shown(error.instance)}`")
    return error.message


def _key_position(data: Any, path: list[Any], locate: Locate) -> Pos:
    parent_path, key = path[:-1], path[-1]
    node = data
    for step in parent_path:
        node = node[step] if isinstance(node, (YMap, YSeq)) else None
    if isinstance(node, YMap):
        return node.pos_of_key(key)
    return locate(path)
