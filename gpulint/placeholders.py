"""Placeholders a template leaves where the API needs a value: an envsubst template's
(`replicas: $N`, `serviceAccountName: ${SA}`) and a documentation sample's values to fill in
(`nvidia.com/gpu: <number-of-gpus>`): which fields they make unknown, and what is then not
judged.

A placeholder makes only its own field unknown. The rest of the file is checked; a finding
that points into what the placeholder decides (its entry, or the whole `resources`,
`nodeSelector`, `affinity` or `tolerations` block holding it) is not judged, and a count field
holding one makes the workload's pod count unknown (gpulint.workloads).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from typing import Any

from gpulint.fields import shown
from gpulint.model import SourceFile
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, Watched, WatchedEntries, YMap, YSeq, last_line

# Compiled on first use: only files holding `$` are searched.
_BRACED = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}"
_WHOLE = r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)\Z"
#: A value to fill in: `<instance-type>`, `<YOUR_NAMESPACE>`, `<N>`. No Kubernetes name, label
#: value or quantity holds `<`; text that may (commands, annotations) is not looked at
#: (unknown_fields' `skip`). A file holding none anywhere is not watched for one
#: (loader.load_text).
FILL_IN_ANYWHERE = r"<[A-Za-z][A-Za-z0-9 _./-]{0,62}>"
#: A value a script fills in with sed: `__NUM_NODES__`. No Kubernetes name, label value,
#: quantity or count starts with `_`.
SED_FILL_IN_ANYWHERE = r"__[A-Z][A-Z0-9_]{0,62}__"
# Either counts only as the whole of a scalar.
_FILL_IN = FILL_IN_ANYWHERE + r"\Z"
_SED_FILL_IN = SED_FILL_IN_ANYWHERE + r"\Z"
# Blocks a rule judges as a whole: one unknown value in them leaves the block not judged (a
# request/limit pair, a selector against the pools, tolerations against the taints).
_JUDGED_WHOLE = frozenset(
    {"resources", "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints"}
)
_END = 10**9  # a column past any line's end
# Fields whose contents are text read at run time (`skip`), but which are mappings in every
# API: a placeholder as the whole value (`data: ${CNI_RESOURCES}`, as Cluster API templates
# write it) is what envsubst puts the mapping in, not text that stays.
_MAPPINGS = frozenset({"data", "stringData", "annotations"})


class Unknown(NamedTuple):
    """A field holding a placeholder, and the part of its file a rule cannot judge."""

    file: SourceFile
    placeholder: str  # as written: `$REPLICAS`, `${GSBUCKET}`
    field: str  # its path in the object: `spec.replicas`
    pos: Pos
    start: Pos  # what is not judged: from here...
    end: Pos  # ...to here

    def covers(self, pos: Pos) -> bool:
        """Whether a finding at `pos` points into what this placeholder decides."""
        return self.start <= pos <= self.end

    def describe(self) -> str:
        """`` `spec.replicas` is `$REPLICAS` ``, as the GPU008 note lists it."""
        return f"`{_short(self.field)}` is `{shown(self.placeholder)}`"


def placeholder_in(text: Any) -> str | None:
    """The placeholder a key or string value holds: `${NAME}` anywhere (no Kubernetes name or
    quantity holds braces), a bare `$NAME`, a `<value to fill in>` or a `__NAME__` only as the
    whole value (`$`, `<` and `_` also start ordinary text); None for anything else."""
    if type(text) is not str:
        return None
    if text.startswith("<"):
        return text if re.match(_FILL_IN, text) else None
    if text.startswith("__"):
        return text if re.match(_SED_FILL_IN, text) else None
    if "$" not in text:
        return None
    braced = re.search(_BRACED, text)
    if braced:
        return braced.group(0)
    return text if re.match(_WHOLE, text) else None


def is_fill_in(placeholder: str) -> bool:
    """Whether `placeholder` is a documentation sample's value to fill in (`<N>`,
    `__NUM_NODES__`), not an envsubst variable."""
    return placeholder.startswith(("<", "__"))


def unknown_fields(
    file: SourceFile, watched: WatchedEntries, obj: YMap, skip: Container[Any] = ()
) -> list[Unknown]:
    """The fields of `obj` holding a placeholder, below no key in `skip` (text the shell or the
    program expands at run time), each once, in the order they are written."""
    found: dict[tuple[str, Pos], Unknown] = {}
    pending: list[tuple[Any, str, tuple[Pos, Pos] | None]] = [(obj, "", None)]
    while pending:
        node, path, unit = pending.pop()
        for key, item in watched.get(id(node), (None, ()))[1]:
            if key in skip and not (key in _MAPPINGS and _whole(item)):
                continue
            step = _step(path, node, key)
            here = unit
            if here is None and type(node) is YMap and key in _JUDGED_WHOLE:
                value = node.get(key)
                last = last_line(value) if isinstance(value, (YMap, YSeq)) else node.pos[0]
                here = (node.pos_of_key(key), (max(last, node.pos_of_value(key)[0]), _END))
            if type(item) is not Watched:
                pending.append((item, step, here))
                continue
            placeholder = None if _several_lines(item.text) else placeholder_in(item.text)
            if placeholder is None:
                continue
            if here is None:
                start = item.pos if item.is_key or type(node) is not YMap else node.pos_of_key(key)
                here = (min(start, item.pos), (item.pos[0], _END))
            found.setdefault((step, item.pos), Unknown(file, placeholder, step, item.pos, *here))
    return sorted(found.values(), key=lambda u: u.pos)


def _several_lines(text: str) -> bool:
    """Whether `text` runs over several lines (a block scalar: a dashboard's JSON, a config
    file). No field the API reads as a name, an amount or a count holds one, so a `${...}` in
    it is that text's own syntax (a Grafana variable, a shell's), for the program that reads
    it to expand, and leaves nothing a rule judges unknown."""
    return "\n" in text.rstrip("\n")


def _whole(item: Any) -> bool:
    """Whether `item` is a scalar that is one placeholder and nothing else."""
    text = item.text if type(item) is Watched else None
    return type(text) is str and placeholder_in(text) == text.strip()


def _short(field: str) -> str:
    """A field path as the note names it: from the pod spec on, when it is in one
    (`containers[0].resources.limits.nvidia.com/gpu`), at most 60 printable characters."""
    _, found, below = field.rpartition(".spec.")
    text = below if found else field
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= _FIELD_MAX else "…" + text[-(_FIELD_MAX - 1) :]


_FIELD_MAX = 60


def _step(path: str, node: Any, key: Any) -> str:
    if type(node) is YSeq:
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def not_judged(unknown: Iterable[Unknown]) -> str:
    """The GPU008 note: every field left unknown, and how to give the values."""
    return (
        f"this file is an envsubst template; not judged: {_listed(unknown)} (the rest is "
        "checked); give the values (--var NAME=VALUE, or `variables:` in the config) to check "
        "them too"
    )


def not_filled(unknown: Iterable[Unknown]) -> str:
    """The GPU014 note: every field a sample leaves to fill in, and what to do."""
    return (
        f"this file is a sample with values to fill in; not judged: {_listed(unknown)} (the "
        "rest is checked); the API server refuses them as written: check the copy you apply, "
        "with its values"
    )


def _listed(unknown: Iterable[Unknown]) -> str:
    listed = list(dict.fromkeys(u.describe() for u in unknown))
    more = f" and {len(listed) - 5} more" if len(listed) > 5 else ""
    return ", ".join(listed[:5]) + more
