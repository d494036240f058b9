"""CustomResourceDefinitions among the inputs: the versions they serve, and their schemas as
JSON Schema.

A CRD's `openAPIV3Schema` is a structural schema: the API server prunes (and, under strict field
validation, refuses) fields it does not specify unless `x-kubernetes-preserve-unknown-fields`
says otherwise, and drops nulls before validating. The conversion below says the same in
JSON Schema; CEL rules (`x-kubernetes-validations`) and formats are not checked.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from gpulint.views import NamedTuple
from gpulint.yamltree import YMap, YSeq

if TYPE_CHECKING:
    from gpulint.model import Document
    from gpulint.profile.model import CustomResourceDefinition

_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_NUMBERS = ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
_MORE_NUMBERS = ("minProperties", "maxProperties", "multipleOf")


class CrdVersion(NamedTuple):
    """One version of a kind that a CustomResourceDefinition defines."""

    crd: str  # the CRD's metadata.name
    served: bool
    deprecated: bool
    warning: str  # its deprecationWarning, or empty
    schema: Any  # its openAPIV3Schema (a YMap), or None
    key: tuple[str, int, int, str]  # the CRD's file, position and version: a validator's key


class CrdKinds(NamedTuple):
    """What the CRDs in scope define: each (apiVersion, kind) and the groups they cover."""

    versions: dict[tuple[str, str], CrdVersion]
    kinds: dict[tuple[str, str], tuple[str, ...]]  # (group, kind) -> every version defined


def crd_kinds(documents: Iterable[Document]) -> CrdKinds:
    """The kinds the CustomResourceDefinitions among `documents` define (the first CRD of a
    group and kind wins)."""
    versions: dict[tuple[str, str], CrdVersion] = {}
    kinds: dict[tuple[str, str], list[str]] = {}
    for document in documents:
        if document.ref.kind != "CustomResourceDefinition":
            continue
        line, column = document.kind_pos
        spec = document.obj.get("spec")
        where = (document.file.path, line, column)
        _add_crd(versions, kinds, document.ref.name, spec, where)
    return CrdKinds(versions, {key: tuple(found) for key, found in kinds.items()})


def _defined(spec: Any) -> tuple[str, str] | None:
    """The (group, kind) a CRD's `spec` defines; None when it defines none (a field missing
    or of the wrong type)."""
    if not isinstance(spec, dict):
        return None
    group, names = spec.get("group"), spec.get("names")
    kind = names.get("kind") if isinstance(names, dict) else None
    listed = spec.get("versions")
    if not isinstance(group, str) or not isinstance(kind, str) or not isinstance(listed, list):
        return None
    return group, kind


def without_shadowed_crds(
    documents: Iterable[Document], seen: set[tuple[str, str]] | None = None
) -> Iterator[Document]:
    """`documents` less each CRD whose group and kind an earlier one defines: `crd_kinds`
    reads only the first, and a CRD (its schema) is the largest object a run keeps. Copies of
    one chart's CRDs in many directories then cost what one copy does.

    `seen`: the (group, kind) pairs defined before `documents` (updated with theirs)."""
    seen = set() if seen is None else seen
    for document in documents:
        if document.ref.kind == "CustomResourceDefinition":
            defined = _defined(document.obj.get("spec"))
            if defined is not None:
                if defined in seen:
                    continue
                seen.add(defined)
        yield document


@functools.lru_cache(maxsize=4)
def cluster_crds(crds: tuple[CustomResourceDefinition, ...]) -> CrdKinds:
    """The kinds the CRDs of a cluster profile (a dump's) define; built once per run."""
    import json

    versions: dict[tuple[str, str], CrdVersion] = {}
    kinds: dict[tuple[str, str], list[str]] = {}
    for crd in crds:
        try:
            spec = json.loads(crd.spec)
        except ValueError:
            continue
        _add_crd(versions, kinds, crd.name, spec, (f"<profile>/{crd.name}", 0, 0))
    return CrdKinds(versions, {key: tuple(found) for key, found in kinds.items()})


def with_cluster_crds(inputs: CrdKinds, cluster: CrdKinds) -> CrdKinds:
    """The CRDs of the inputs, and the cluster's for the kinds no input defines (an input's CRD
    is what will be applied)."""
    if not cluster.kinds:
        return inputs
    kinds = {**{k: v for k, v in cluster.kinds.items() if k not in inputs.kinds}, **inputs.kinds}
    versions = {
        **{
            key: version
            for key, version in cluster.versions.items()
            if (key[0].rpartition("/")[0], key[1]) not in inputs.kinds
        },
        **inputs.versions,
    }
    return CrdKinds(versions, kinds)


def _add_crd(
    versions: dict[tuple[str, str], CrdVersion],
    kinds: dict[tuple[str, str], list[str]],
    name: str,
    spec: Any,
    where: tuple[str, int, int],
) -> None:
    """Record the versions of one CRD's `spec` (a parsed mapping, from a file or a dump)."""
    defined = _defined(spec)
    if defined is None or defined in kinds:
        return
    group, kind = defined
    listed = spec["versions"]
    kinds[(group, kind)] = []
    for entry in listed:
        version = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(version, str):
            continue
        kinds[(group, kind)].append(version)
        schema = entry.get("schema")
        openapi = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        warning = entry.get("deprecationWarning")
        versions[(f"{group}/{version}", kind)] = CrdVersion(
            name,
            entry.get("served") is not False,
            entry.get("deprecated") is True,
            warning if isinstance(warning, str) else "",
            openapi if isinstance(openapi, dict) else None,
            (*where, version),
        )


def json_schema(openapi: Any) -> dict[str, Any]:
    """A CRD version's `openAPIV3Schema` as a JSON Schema (draft 2020-12) of its objects."""
    schema = _convert(openapi, branch=False)
    properties = schema.setdefault("properties", {})
    # Every object has these whether or not the CRD's schema names them.
    for implicit in ("apiVersion", "kind", "metadata"):
        properties.setdefault(implicit, {})
    if openapi.get("x-kubernetes-preserve-unknown-fields") is not True:
        schema["additionalProperties"] = False
    return schema


def _convert(node: Any, branch: bool) -> dict[str, Any]:
    """One schema node. `branch`: inside allOf/anyOf/oneOf/not, where a structural schema only
    adds constraints (types and the fields an object may have are stated outside)."""
    if not isinstance(node, dict):
        return {}
    out: dict[str, Any] = {}
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string") is True:
        out["type"] = ["integer", "string", "null"]
    elif not branch and isinstance(kind, str) and kind in _TYPES:
        out["type"] = [kind, "null"]  # nulls are dropped before validation
    properties = node.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {str(k): _convert(v, branch) for k, v in properties.items()}
    if node.get("x-kubernetes-embedded-resource") is True:
        embedded = out.setdefault("properties", {})
        for implicit in ("apiVersion", "kind", "metadata"):
            embedded.setdefault(implicit, {})
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _convert(extra, branch)
    elif (
        not branch
        and "properties" in out
        and extra is not True
        and node.get("x-kubernetes-preserve-unknown-fields") is not True
    ):
        out["additionalProperties"] = False
    items = node.get("items")
    if isinstance(items, dict):
        out["items"] = _convert(items, branch)
    required = node.get("required")
    if isinstance(required, list) and all(isinstance(r, str) for r in required):
        out["required"] = list(required)
    enum = node.get("enum")
    if isinstance(enum, list) and enum:
        out["enum"] = [*_plain_values(enum), None]
    for keyword in (*_NUMBERS, *_MORE_NUMBERS):
        value = node.get(keyword)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[keyword] = value
    # OpenAPI 3.0 writes an exclusive bound as a flag beside the bound.
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(flag) is True and bound in out:
            out[flag] = out.pop(bound)
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        out["pattern"] = pattern
    for combinator in ("allOf", "anyOf", "oneOf"):
        choices = node.get(combinator)
        if isinstance(choices, list) and choices:
            out[combinator] = [_convert(choice, branch=True) for choice in choices]
    if isinstance(node.get("not"), dict):
        out["not"] = _convert(node["not"], branch=True)
    return out


def _plain_values(values: Iterable[Any]) -> Iterator[Any]:
    for value in values:
        if isinstance(value, YMap):
            yield {str(k): next(_plain_values((v,))) for k, v in value.items()}
        elif isinstance(value, YSeq):
            yield list(_plain_values(value))
        else:
            yield value
