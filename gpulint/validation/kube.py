"""The upstream OpenAPI schemas of each Kubernetes release, and validators built from them.

The schemas are those of the `kubernetes-validate` package (its `local-strict` set: every
object schema forbids fields it does not define, as the API server's strict field validation
does); the validator is `jsonschema-rs`. Both come with the optional `gpulint[schema]` extra:
together they are ten times the size of gpulint's other dependencies. Nothing here is imported
until an object needs validating; each kind's validator is built once per run, from the
definitions that kind reaches alone, which the cache directory keeps between runs (with the
index of the kinds each release serves).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpulint.validation.apiversions import Release, release
from gpulint.views import NamedTuple
from gpulint.yamltree import YMap, YSeq

#: What a user runs to get schema validation.
EXTRA = "pip install 'gpulint[schema]'"
#: The URI the definitions of a release are registered under (the `$id` they declare).
DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"

# Values the API server accepts for fields whose OpenAPI schema names no enum (server-side
# validation enforces them: `Unsupported value: "always": supported values: "Always", ...`).
# An empty value is defaulted, and null is no value: both stay valid.
_ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("io.k8s.api.core.v1.Container", "imagePullPolicy"): ("Always", "IfNotPresent", "Never"),
    ("io.k8s.api.core.v1.EphemeralContainer", "imagePullPolicy"): (
        "Always",
        "IfNotPresent",
        "Never",
    ),
    ("io.k8s.api.core.v1.PodSpec", "restartPolicy"): ("Always", "OnFailure", "Never"),
    ("io.k8s.api.core.v1.PodSpec", "dnsPolicy"): (
        "ClusterFirstWithHostNet",
        "ClusterFirst",
        "Default",
        "None",
    ),
    ("io.k8s.api.core.v1.PodSpec", "preemptionPolicy"): ("Never", "PreemptLowerPriority"),
    ("io.k8s.api.core.v1.Toleration", "effect"): ("NoSchedule", "PreferNoSchedule", "NoExecute"),
    ("io.k8s.api.core.v1.NodeSelectorRequirement", "operator"): (
        "In",
        "NotIn",
        "Exists",
        "DoesNotExist",
        "Gt",
        "Lt",
    ),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", "operator"): (
        "In",
        "NotIn",
        "Exists",
        "DoesNotExist",
    ),
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): ("TCP", "UDP", "SCTP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol"): ("TCP", "UDP", "SCTP"),
    ("io.k8s.api.core.v1.ServiceSpec", "type"): (
        "ClusterIP",
        "NodePort",
        "LoadBalancer",
        "ExternalName",
    ),
    ("io.k8s.api.apps.v1.DeploymentStrategy", "type"): ("Recreate", "RollingUpdate"),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "podManagementPolicy"): ("OrderedReady", "Parallel"),
    ("io.k8s.api.core.v1.TopologySpreadConstraint", "whenUnsatisfiable"): (
        "DoNotSchedule",
        "ScheduleAnyway",
    ),
    ("io.k8s.api.batch.v1.JobSpec", "completionMode"): ("NonIndexed", "Indexed"),
    ("io.k8s.api.batch.v1.CronJobSpec", "concurrencyPolicy"): ("Allow", "Forbid", "Replace"),
}


@functools.cache
def schema_directory() -> Path | None:
    """Where kubernetes-validate keeps its schemas; None without the extra."""
    # find_spec, not an import: the package's own __init__ imports PyYAML and jsonschema.
    import importlib.util

    try:
        spec = importlib.util.find_spec("kubernetes_validate")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        directory = Path(location) / "kubernetes-json-schema"
        if directory.is_dir():
            return directory
    return None


def available() -> bool:
    """Whether schema validation can run: the extra's schemas and validator are installed."""
    return schema_directory() is not None and _validator_installed()


def unavailable_note() -> tuple[str, ...]:
    """The run's note when schema validation (GPU012) is selected but cannot run."""
    if available():
        return ()
    return (f"GPU012 skipped: objects not validated against the Kubernetes schemas ({EXTRA})",)


@functools.cache
def _validator_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("jsonschema_rs") is not None


@functools.cache
def releases() -> tuple[Release, ...]:
    """The releases whose strict schemas are installed, oldest first."""
    directory = schema_directory()
    if directory is None:
        return ()
    found = []
    for entry in directory.iterdir():
        name = entry.name
        if name.startswith("v") and name.endswith("-local-strict"):
            version = release(name)
            if version is not None:
                found.append(version)
    return tuple(sorted(found))


@functools.cache  # asked for each object, of the one or two releases a run targets
def schema_release(target: Release) -> Release | None:
    """The newest installed release not newer than `target` (the newest for a newer target);
    None when `target` is older than every installed release."""
    installed = releases()
    if not installed or target < installed[0]:
        return None
    return max(r for r in installed if r <= target) if target <= installed[-1] else installed[-1]


class KindSchema(NamedTuple):
    """Where the schema of one kind in one API version lives."""

    definition: str  # its name among the release's definitions
    release: Release


class ReleaseSchemas:
    """One release's schemas: which kinds each built-in API version serves, and the validators
    of the kinds asked for (each built once).

    A run reads the release's index of kinds and, for each kind it validates, the definitions
    that kind's schema reaches, from the cache directory (see `use_cache`); the release's whole
    definitions file (1.8 MB of JSON) is read only to make what the cache does not hold yet.
    """

    # A plain class: a handful per run, holding caches filled in place.
    def __init__(
        self, version: Release, key: str, kinds: dict[tuple[str, str], str], document: Any = None
    ) -> None:
        self.release = version
        # (apiVersion, kind) -> definition name, from each definition's group-version-kind.
        self.kinds = kinds
        self.groups = frozenset(_group(api_version) for api_version, _ in kinds)
        self._key = key  # names this release's entries in the cache
        self._document = document  # the whole definitions, once read
        self._reached: dict[str, dict[str, Any]] = {}
        self._validators: dict[str, Any] = {}
        # Each kind's entry as stored: every definition it reaches, marshalled one by one.
        self._stored: dict[str, dict[str, bytes]] = {}
        # The definitions decoded so far, shared by every kind that reaches them.
        self._decoded: dict[str, Any] = {}
        # The walks' nodes of the definitions decoded so far, by name (`surely_valid`).
        self.nodes: dict[str, _Node | None] = {}

    def definition(self, api_version: str, kind: str) -> str | None:
        """The definition of `kind` in `api_version`, when this release serves it."""
        return self.kinds.get((api_version, kind))

    def served_versions(self, group: str, kind: str) -> list[str]:
        """The API versions of `group` in which this release serves `kind`."""
        return sorted(v for v, k in self.kinds if k == kind and _group(v) == group)

    def definitions(self, definition: str) -> dict[str, Any]:
        """`definition` and every definition its schema refers to, by name (their `$defs`):
        all the validator of `definition` reads, and all a finding's message looks up."""
        found = self._reached.get(definition)
        if found is not None:
            return found
        stored = self._entry(definition)
        found = {name: self._decode(name, raw) for name, raw in stored.items()}
        if any(schema is None for schema in found.values()):  # an entry that does not decode
            document = self._whole()
            found = _reached(document["$defs"], definition) if document is not None else {}
        self._reached[definition] = found
        return found

    def reached(self, definition: str) -> Reached:
        """What `definitions(definition)` holds, each definition decoded when first looked up:
        the walk of a valid object (`surely_valid`) reads a few of the hundred definitions a
        Deployment reaches, and decoding them all cost a pre-commit run more than its walks."""
        return Reached(self, self._entry(definition))

    def _entry(self, definition: str) -> dict[str, bytes]:
        """The cache's entry of `definition` (made from the whole definitions, and stored,
        when the cache does not hold it)."""
        stored = self._stored.get(definition)
        if stored is not None:
            return stored
        name = f"{self._key}.{definition}{_SUFFIX}"
        stored = _read_entry(name)
        if not (
            isinstance(stored, dict)
            and isinstance(stored.get(definition), bytes)
            and all(type(raw) is bytes for raw in stored.values())
        ):
            import marshal

            document = self._whole()
            reached = _reached(document["$defs"], definition) if document is not None else {}
            self._reached[definition] = reached
            self._decoded.update(reached)
            stored = {name: marshal.dumps(schema) for name, schema in reached.items()}
            if reached:
                _write_entry(name, stored)
        self._stored[definition] = stored
        return stored

    def _decode(self, name: str, raw: bytes) -> Any:
        """The definition `name`, decoded from `raw` once per run; None when it does not decode
        to a schema."""
        found = self._decoded.get(name)
        if found is None:
            import marshal

            try:
                found = marshal.loads(raw)
            except (EOFError, ValueError, TypeError):
                return None
            if type(found) is not dict:
                return None
            self._decoded[name] = found
        return found

    def validator(self, definition: str) -> Any:
        """The validator of one definition (a jsonschema_rs validator), built on first use
        from the definitions it reaches alone."""
        found = self._validators.get(definition)
        if found is None:
            try:
                found = _build(definition, self.definitions(definition))
            except Exception:  # an entry of the cache that does not hold what it should
                document = self._whole()
                if document is None:
                    raise
                reached = self._reached[definition] = _reached(document["$defs"], definition)
                found = _build(definition, reached)
            self._validators[definition] = found
        return found

    def _whole(self) -> Any:
        """The release's whole definitions (read, and the server's enums added, once)."""
        if self._document is None:
            self._document = _read_definitions(self.release)
        return self._document


class Reached:
    """The definitions one kind reaches (`ReleaseSchemas.reached`), looked up by name as a dict
    is (`get`, `in`), each decoded on first use."""

    __slots__ = ("_stored", "schemas")

    def __init__(self, schemas: ReleaseSchemas, stored: dict[str, bytes]) -> None:
        self.schemas = schemas  # the release whose definitions these are
        self._stored = stored

    def get(self, name: str, default: Any = None) -> Any:
        """The definition `name` (`default` when the kind does not reach it, or it does not
        decode)."""
        raw = self._stored.get(name)
        if raw is None:
            return default
        found = self.schemas._decode(name, raw)
        return default if found is None else found

    def __contains__(self, name: object) -> bool:
        return name in self._stored


def _build(definition: str, definitions: dict[str, Any]) -> Any:
    jsonschema_rs = import_jsonschema_rs()
    document = {"$schema": _DRAFT, "$id": DEFINITIONS_URI, "$defs": definitions}
    registry = jsonschema_rs.Registry([(DEFINITIONS_URI, document)])
    reference = {"$ref": f"{DEFINITIONS_URI}#/$defs/{definition}"}
    return jsonschema_rs.validator_for(reference, registry=registry)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


#: The JSON Schema dialect of kubernetes-validate's definitions (their `$schema`).
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _definitions_path(version: Release) -> Path | None:
    directory = schema_directory()
    if directory is None:
        return None
    return directory / f"v{version[0]}.{version[1]}.0-local-strict" / "_definitions.json"


def _read_definitions(version: Release) -> Any:
    """The whole definitions of installed release `version`, with the values the server
    accepts for fields whose schema names none (`_ENUMS`); None when they cannot be read."""
    path = _definitions_path(version)
    if path is None:
        return None
    import json

    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("$defs"), dict):
        return None
    for (name, field), values in _ENUMS.items():
        schema = document["$defs"].get(name)
        prop = schema.get("properties", {}).get(field) if schema else None
        if isinstance(prop, dict) and "enum" not in prop:
            prop["enum"] = [*values, "", None]
    return document


def _kinds_of(document: Any) -> dict[tuple[str, str], str]:
    """(apiVersion, kind) -> the definition of that kind, for every object kind defined."""
    kinds: dict[tuple[str, str], str] = {}
    for name, schema in document["$defs"].items():
        properties = schema.get("properties") or {}
        if "metadata" not in properties or "apiVersion" not in properties:
            continue  # DeleteOptions, WatchEvent ... list every group, and are no objects
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            group, version = gvk.get("group", ""), gvk.get("version", "")
            api_version = f"{group}/{version}" if group else version
            kinds.setdefault((api_version, gvk.get("kind", "")), name)
    return kinds


_REF = "#/$defs/"
# Keywords whose value is a schema, a list of schemas, or a mapping of names to schemas.
_SCHEMA = ("additionalProperties", "items", "not")
_SCHEMAS = ("allOf", "anyOf", "oneOf")


def _reached(definitions: dict[str, Any], start: str) -> dict[str, Any]:
    """`start` and every definition reachable from it through `$ref`, without descriptions
    and `x-kubernetes-` extensions (nine tenths of the bytes, and no validator reads them)."""
    reached: dict[str, Any] = {}
    waiting = [start]
    while waiting:
        name = waiting.pop()
        if name in reached or name not in definitions:
            continue
        refs: list[str] = []
        reached[name] = _described_less(definitions[name], refs)
        waiting.extend(refs)
    return reached


def _described_less(schema: Any, refs: list[str]) -> Any:
    """`schema` without its `description`s and extensions; the definitions it refers to
    added to `refs`."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for keyword, value in schema.items():
        if (keyword == "description" and isinstance(value, str)) or keyword.startswith("x-"):
            continue  # annotations: no validator asserts them
        if keyword == "$ref" and isinstance(value, str) and value.startswith(_REF):
            refs.append(value[len(_REF) :])
        if keyword == "properties" and isinstance(value, dict):
            value = {field: _described_less(sub, refs) for field, sub in value.items()}
        elif keyword in _SCHEMA:
            value = _described_less(value, refs)
        elif keyword in _SCHEMAS and isinstance(value, list):
            value = [_described_less(sub, refs) for sub in value]
        out[keyword] = value
    return out


# --- objects that cannot fail -------------------------------------------------------------

#: The keywords of the (description-less) built-in definitions whose meaning `surely_valid`
#: knows exactly; `format` is an annotation in draft 2020-12 (jsonschema-rs asserts formats
#: only when asked to, and gpulint does not ask).
_KNOWN = frozenset(
    {"type", "properties", "additionalProperties", "required", "items", "enum", "$ref"}
    | {"oneOf", "format"}
)


def surely_valid(
    value: Any,
    definition: str,
    definitions: dict[str, Any] | Reached,
    said_elsewhere: Callable[[str, str], bool] | None = None,
) -> bool:
    """True only when `value` surely satisfies the built-in `definition` (whose `$defs` are
    `definitions`, as `ReleaseSchemas.definitions` or `.reached` gives them): then the
    validator, and the import of jsonschema-rs it needs, can be skipped. False when it does
    not, and whenever this is not sure (a keyword or a value it does not model): the validator
    then decides and says what is wrong. Most objects of a pre-commit run are valid.

    `said_elsewhere(definition, key)`: an unknown field `key` of a `definition` that another
    rule reports (GPU012 would drop its finding), which does not make the object invalid here.
    """
    # A release's definitions are walked with its nodes; others with nodes of their own.
    nodes = definitions.schemas.nodes if isinstance(definitions, Reached) else {}
    walk = _Walk(definitions, nodes, said_elsewhere)
    node = _definition(definition, walk)
    if node is None:
        return False
    try:
        return _valid(value, node, walk)
    except RecursionError:
        return False


class _Walk(NamedTuple):
    definitions: dict[str, Any] | Reached
    nodes: dict[str, _Node | None]  # the node of each definition walked, by name
    said_elsewhere: Callable[[str, str], bool] | None


class _Node:
    """One schema of a definition, its keywords read once: a walk reads the same few hundred
    schemas for every object of a run. Its fields' and items' nodes, and the node of the
    definition it refers to, are made when a walk first reaches them."""

    __slots__ = (
        "enum", "extra", "fields", "items", "kind", "leaf", "one_of", "owner", "properties",
        "ref", "required", "schema", "sure", "target",
    )  # fmt: skip

    def __init__(self, schema: Any, owner: str) -> None:
        self.schema = schema  # held: nodes are found by its id
        self.owner = owner  # the definition it is part of (the one a finding would name)
        self.fields: dict[str, _Node | bool] = {}
        self.items: _Node | None = None
        self.ref = self.kind = self.enum = self.one_of = self.leaf = None
        self.target: _Node | None = None  # the node `ref` names, once looked up
        self.required: tuple[str, ...] | None = ()
        self.properties: dict[str, Any] | None = {}
        self.extra: Any = True
        # Not sure of a schema that is no mapping, or states a keyword this does not model.
        self.sure = type(schema) is dict and _KNOWN.issuperset(schema)
        if not self.sure:
            return
        reference = schema.get("$ref")
        if reference is not None:
            if type(reference) is not str or not reference.startswith(_REF):
                self.sure = False
                return
            self.ref = reference[len(_REF) :]
        kind = schema.get("type")
        if type(kind) is str:
            kind = [kind]
        if kind is not None:
            if type(kind) is not list:
                self.sure = False
                return
            self.kind = frozenset(kind)
        if "enum" in schema:
            # Only strings and null, whose equality is JSON's (in Python, 1 == 1.0 == True).
            enum = schema["enum"]
            choices = enum if isinstance(enum, list) else ()
            self.enum = frozenset(c for c in choices if c is None or isinstance(c, str))
        if "oneOf" in schema:
            # The value types (as _json_types gives them) for which exactly one choice holds.
            choices = schema["oneOf"]
            self.one_of = frozenset(t for t in _TYPES if _one_of(t, choices))
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        self.properties = properties if isinstance(properties, dict) else None
        self.required = tuple(required) if isinstance(required, list) else None
        self.extra = schema.get("additionalProperties", True)
        if _LEAF.issuperset(schema):
            # Most fields: a scalar whose schema states a type alone; the Python types of the
            # scalars it holds (an int is an integer and a number, a bool is neither).
            kind = self.kind if self.kind is not None else _ANY_TYPE
            self.leaf = frozenset(
                [str] * ("string" in kind)
                + [bool] * ("boolean" in kind)
                + [int] * ("integer" in kind or "number" in kind)
            )

    def field(self, key: str) -> _Node | bool:
        """The node of the value of field `key` of a mapping (True: anything goes, False: a
        field the schema forbids)."""
        found = self.fields.get(key)
        if found is None:
            assert self.properties is not None
            sub = self.properties.get(key)
            if sub is None:
                sub = self.extra
            found = sub if sub is True or sub is False else _Node(sub, self.owner)
            self.fields[key] = found
        return found

    def item(self) -> _Node:
        """The node of each item of an array."""
        if self.items is None:
            self.items = _Node(self.schema["items"], self.owner)
        return self.items


_ANY_TYPE = frozenset({"string", "boolean", "integer", "number"})


def _definition(name: str, walk: _Walk) -> _Node | None:
    """The node of definition `name` (None: the definitions have no such schema)."""
    if name in walk.nodes:
        return walk.nodes[name]
    schema = walk.definitions.get(name)
    node = walk.nodes[name] = None if schema is None else _Node(schema, name)
    return node


def _valid(value: Any, node: _Node, walk: _Walk) -> bool:
    if not node.sure:
        return False
    if node.ref is not None:
        target = node.target
        if target is None:
            target = node.target = _definition(node.ref, walk)
            if target is None:
                return False
        if not _valid(value, target, walk):
            return False
    types = _TYPES_OF.get(type(value)) or _json_types(value)
    if types is None:
        return False  # a value JSON has no type for (a float that is no number ...)
    if node.kind is not None and types.isdisjoint(node.kind):
        return False
    enum = node.enum
    if enum is not None and not ((value is None or types is _STRING) and value in enum):
        return False
    if node.one_of is not None and types not in node.one_of:
        return False
    if types is _OBJECT:
        return _valid_mapping(value, node, walk)
    if types is _ARRAY and "items" in node.schema:
        items = node.item()
        for item in value:
            if not _valid(item, items, walk):
                return False
    return True


def _valid_mapping(value: dict[Any, Any], node: _Node, walk: _Walk) -> bool:
    if node.properties is None or node.required is None:
        return False
    fields = node.fields
    for key, item in value.items():
        sub = fields.get(key)
        if sub is None:
            if not isinstance(key, str):
                return False  # the API reads it as its text; the validator is told so
            sub = node.field(key)
        if sub is True:
            continue
        if sub is False:
            # The validator does not look inside an unknown field: its one finding is all.
            if walk.said_elsewhere is not None and walk.said_elsewhere(node.owner, key):
                continue
            return False
        leaf = sub.leaf
        if leaf is not None:
            scalar = type(item)
            if scalar is str or scalar is int or scalar is bool:
                if scalar in leaf:
                    continue
                return False
        if not _valid(item, sub, walk):
            return False
    required = node.required  # mostly empty: no generator made for it
    return not required or all(name in value for name in required)


_LEAF = frozenset({"type", "format"})


def _json_types(value: Any) -> frozenset[str] | None:
    """The JSON Schema types `value` has (an integer is a number, as 2.0 is an integer)."""
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return _INTEGER if value.is_integer() else _NUMBER
    for python, types in _TYPES_BY_CLASS:
        if isinstance(value, python):
            return types
    return None


_STRING = frozenset({"string"})
_BOOLEAN = frozenset({"boolean"})
_INTEGER = frozenset({"integer", "number"})
_NUMBER = frozenset({"number"})
_NULL = frozenset({"null"})
_OBJECT = frozenset({"object"})
_ARRAY = frozenset({"array"})
_TYPES = (_STRING, _BOOLEAN, _INTEGER, _NUMBER, _NULL, _OBJECT, _ARRAY)
# In the order _json_types tries them (a bool is an int); floats are told apart by value.
_TYPES_BY_CLASS: tuple[tuple[type, frozenset[str]], ...] = (
    (str, _STRING),
    (bool, _BOOLEAN),
    (int, _INTEGER),
    (type(None), _NULL),
    (dict, _OBJECT),
    (list, _ARRAY),
)
# By the exact class of a value: the parser's scalars, mappings and sequences.
_TYPES_OF: dict[type, frozenset[str]] = {**dict(_TYPES_BY_CLASS), YMap: _OBJECT, YSeq: _ARRAY}


def _one_of(types: frozenset[str], choices: Any) -> bool:
    """Exactly one choice holds; only choices that state nothing but types are judged (the
    quantities and int-or-strings), where the count is exact."""
    if not isinstance(choices, list):
        return False
    held = 0
    for choice in choices:
        if not isinstance(choice, dict) or set(choice) != {"type"}:
            return False
        kind = choice["type"]
        held += bool(types.intersection([kind] if isinstance(kind, str) else kind))
    return held == 1


@functools.cache
def release_schemas(version: Release) -> ReleaseSchemas | None:
    """The schemas of installed release `version` (see `schema_release`), read once: its
    index of kinds from the cache when it is there, else from the whole definitions."""
    path = _definitions_path(version)
    if path is None:
        return None
    try:
        info = path.stat()
    except OSError:
        return None
    key = _entry_key(version, str(path), info.st_size, info.st_mtime_ns)
    name = f"{key}.kinds{_SUFFIX}"
    stored = _read_entry(name)
    if _is_index(stored):
        return ReleaseSchemas(version, key, {(v, k): d for v, k, d in stored})
    document = _read_definitions(version)
    if document is None:
        return None
    kinds = _kinds_of(document)
    _write_entry(name, [[*pair, definition] for pair, definition in kinds.items()])
    return ReleaseSchemas(version, key, kinds, document)


@functools.cache  # asked for by each chart a run renders
def served_apis(target: Release) -> tuple[frozenset[str], frozenset[str]] | None:
    """What release `target` serves, as a chart's `.Capabilities.APIVersions.Has` asks:
    every `group/version` and `group/version/Kind`; and Kubernetes' own API groups (those of
    `target` and of the newest release installed, `""` for the core group). None without
    the extra or for a release outside those installed."""
    installed = releases()
    if not installed or target < installed[0] or target > installed[-1]:
        return None
    version = schema_release(target)
    schemas = release_schemas(version) if version is not None else None
    newest = release_schemas(installed[-1])
    if schemas is None or newest is None:
        return None
    served = {api for api, _ in schemas.kinds}
    served.update(f"{api}/{kind}" for api, kind in schemas.kinds)
    return frozenset(served), schemas.groups | newest.groups


def _is_index(stored: Any) -> bool:
    # A definition's name becomes the name of a file: never a path. A loop of plain checks,
    # not generators: every run with schema rules checks the index's hundred and more rows.
    if not isinstance(stored, list):
        return False
    for entry in stored:
        if not isinstance(entry, list) or len(entry) != 3:
            return False
        api_version, kind, definition = entry
        if not (
            isinstance(api_version, str) and isinstance(kind, str) and isinstance(definition, str)
        ):
            return False
        if "/" in definition or definition.startswith("."):
            return False
    return True


# --- what is kept between runs --------------------------------------------------------------

#: The folder of the cache directory that holds the index of kinds and the definitions each
#: kind reaches, per installed release. Bump _FORMAT when what is stored there changes.
_FORMAT = "4"
# Entries hold dicts, lists, strings, numbers, booleans and None in marshal's format: read with
# no module to import, several times faster than JSON. marshal builds nothing that runs (what
# is read is checked for its shape, and only the user's own files are read); its format is
# that of this Python, which names the entries.
_SUFFIX = f".{sys.implementation.cache_tag}.marshal"
_cache: list[Path | None] = [None]


def use_cache(directory: str | os.PathLike[str] | None) -> None:
    """Keep what is derived from the installed schemas in `directory` (the run's cache
    directory), or nowhere (None: --no-cache). A directory the rest of the run does not
    trust (cachedir.cache_problem) is not used either."""
    place = None
    if directory is not None:
        from gpulint.cachedir import cache_problem

        if cache_problem(Path(directory)) is None:
            place = Path(directory)
    _cache[0] = place


def _entry_key(version: Release, *installed: object) -> str:
    """What names a release's entries: the release, and a digest of which installed file they
    were made from (its path, size and time: another kubernetes-validate is another file) and
    of what gpulint adds to it."""
    from gpulint.cachedir import sha256

    digest = sha256()
    digest.update(repr((_FORMAT, installed, sorted(_ENUMS.items()))).encode())
    return f"v{version[0]}.{version[1]}-{digest.hexdigest()[:32]}"


def _read_entry(name: str) -> Any:
    """What is stored as `name`, when the cache holds it as a file of the user's own."""
    directory = _cache[0]
    if directory is None:
        return None
    import marshal

    from gpulint.cachedir import SCHEMAS, open_own_directory, read_own_file

    try:
        with (
            open_own_directory(directory) as root,
            open_own_directory(SCHEMAS, root) as entries,
        ):
            data = read_own_file(name, entries)
        return None if data is None else marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _write_entry(name: str, value: Any) -> None:
    """Store `value` under `name` (atomically); nothing when the cache cannot be written."""
    directory = _cache[0]
    if directory is None:
        return
    import marshal

    from gpulint.cachedir import SCHEMAS, write_atomically

    with contextlib.suppress(OSError):
        write_atomically(directory, SCHEMAS, name, marshal.dumps(value))


# --- the validator --------------------------------------------------------------------------


def import_jsonschema_rs() -> Any:
    """The `jsonschema_rs` module, imported without the rest of the standard library's
    `email.utils`.

    Its extension module calls `email.utils.parsedate_to_datetime` once as it is imported (on
    its own build date, for its `__build__` record), and `email.utils` brings `socket`,
    `random`, `urllib.parse`, `email.charset` and more: most of what importing the validator
    costs a pre-commit run. While it is imported, a stand-in module serves that function from
    what it is made of (`email._parseaddr` and `datetime`) and anything else from the real
    module; the stand-in is then taken away, and `import email.utils` anywhere gives the real
    module as always.
    """
    import sys

    module = sys.modules.get("jsonschema_rs")
    if module is not None:
        return module
    if "email.utils" in sys.modules:
        import jsonschema_rs

        return jsonschema_rs
    import types

    stand_in = types.ModuleType("email.utils")
    stand_in.parsedate_to_datetime = _parsedate_to_datetime  # type: ignore[attr-defined]
    stand_in.__getattr__ = _real_email_utils  # type: ignore[method-assign]
    stand_in._stand_in = True  # type: ignore[attr-defined]
    sys.modules["email.utils"] = stand_in
    try:
        import jsonschema_rs
    finally:
        _without_stand_in()
    return jsonschema_rs


def _without_stand_in() -> None:
    import sys

    if getattr(sys.modules.get("email.utils"), "_stand_in", False):
        del sys.modules["email.utils"]
    email = sys.modules.get("email")
    if email is not None and getattr(email.__dict__.get("utils"), "_stand_in", False):
        del email.utils


def _real_email_utils(name: str) -> Any:
    """An attribute of the real `email.utils`, asked of the stand-in."""
    import importlib

    _without_stand_in()
    return getattr(importlib.import_module("email.utils"), name)


def _parsedate_to_datetime(data: str) -> Any:
    """`email.utils.parsedate_to_datetime` (Python 3.10 to 3.14 write it so), on the parser
    `email.utils` takes from `email._parseaddr`; the real one where that is not there."""
    import datetime

    try:
        from email._parseaddr import _parsedate_tz
    except ImportError:
        return _real_email_utils("parsedate_to_datetime")(data)
    parsed = _parsedate_tz(data)
    if parsed is None:
        raise ValueError(f'Invalid date value or format "{data}"')
    *fields, offset = parsed
    if offset is None:
        return datetime.datetime(*fields[:6])
    zone = datetime.timezone(datetime.timedelta(seconds=offset))
    return datetime.datetime(*fields[:6], tzinfo=zone)
