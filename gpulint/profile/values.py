"""Reading values out of parsed input files, with errors that point at file:line:col.

Inputs arrive as YMap/YSeq (from a file, positions known) or as plain dicts (from the API,
no positions); both are accepted and an error names the position when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.errors import GpulintError
from gpulint.fields import shown
from gpulint.quantity import parse_stored_quantity
from gpulint.yamltree import YMap, YSeq


def location(display: str, node: Any, key: Any = None) -> str:
    """`file:line:col` of `node[key]` (or of `node`), or just `file` when no position is kept."""
    if isinstance(node, YMap):
        line, column = node.pos_of_value(key) if key is not None else node.pos
        return f"{display}:{line}:{column}"
    if isinstance(node, YSeq):
        line, column = node.pos_of_item(key) if isinstance(key, int) else node.pos
        return f"{display}:{line}:{column}"
    return display


def mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else an empty one."""
    # A plain dict (what the API gives) first: thousands of nodes ask, and the ABC check is slow.
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def sequence(value: Any) -> Sequence[Any]:
    """`value` when it is a list, else an empty one."""
    return value if isinstance(value, list | tuple) else ()


def quantities(
    display: str, node: Any, path: Sequence[Any], negative_hint: str = "write 0 or more"
) -> dict[str, Decimal]:
    """`{resource: quantity}`; raises GpulintError at the first value that is not a quantity,
    or is negative (no Kubernetes object holds a negative amount)."""
    parsed: dict[str, Decimal] = {}
    for key, raw in mapping(node).items():
        amount = parse_stored_quantity(raw)
        if amount is None or amount < 0:
            # The value and key are cut: a profile may hold a value of any length.
            written = repr(shown(raw)) if isinstance(raw, str) else shown(raw)
            why = (
                "is not a Kubernetes quantity (write it like 8, 500m or 16Gi)"
                if amount is None
                else f"is negative; {negative_hint}"
            )
            from gpulint.schema import dotted  # only to name a bad value

            field = dotted([*path, shown(key)])
            raise GpulintError(f"{location(display, node, key)}: {field}: {written} {why}")
        parsed[str(key)] = amount
    return parsed


def check_quantities(display: str, node: Any, path: Sequence[Any]) -> None:
    """Raise GpulintError when a value of the `{resource: quantity}` mapping `node` is invalid."""
    quantities(display, node, path)


def text(value: Any) -> str:
    """A label or taint value as Kubernetes stores it: unquoted `true` or `8` are strings."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
