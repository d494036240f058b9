"""Kubernetes policy objects (ResourceQuota, LimitRange, PriorityClass, RuntimeClass) -> profile
dataclasses.

The same conversion serves a live API response, a kubectl dump and an object found in the
checked manifests: each is a mapping shaped like the Kubernetes object (a plain dict or a YMap).
Malformed parts are skipped rather than raised on, because manifest validation is the job of
other rules and a half-broken quota still caps what it can parse.

The `*_in_effect` functions join the profile's objects with those among the checked manifests:
a manifest object replaces the profile's of the same namespace and name, and remembers its
document so that rules can point at its keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from gpulint.fields import mapping_at
from gpulint.model import Document, of_kind
from gpulint.profile.model import (
    ClusterProfile,
    LimitRange,
    LimitRangeItem,
    PriorityClass,
    ResourceQuota,
    RuntimeClass,
    ScopeRequirement,
)
from gpulint.quantity import parse_stored_quantity
from gpulint.yamltree import Pos, YMap, YSeq

#: The namespace Kubernetes puts a namespaced object in when nothing else says.
DEFAULT_NAMESPACE = "default"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _name(obj: Mapping[str, Any]) -> str:
    name = _mapping(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


def _namespace(obj: Mapping[str, Any], namespace: str | None) -> str:
    # An explicit namespace (already resolved by the caller) wins over metadata: the caller
    # knows about --namespace and the profile's default, this module does not.
    if namespace:
        return namespace
    written = _mapping(obj.get("metadata")).get("namespace")
    return written if isinstance(written, str) and written else DEFAULT_NAMESPACE


def quantities(value: Any) -> dict[str, Decimal]:
    """A `{resource: quantity}` mapping with every valid quantity parsed; invalid ones dropped."""
    parsed: dict[str, Decimal] = {}
    for key, raw in _mapping(value).items():
        amount = parse_stored_quantity(raw)
        if isinstance(key, str) and amount is not None:
            parsed[key] = amount
    return parsed


def scope_requirements(scope_selector: Any) -> tuple[ScopeRequirement, ...]:
    """The `matchExpressions` of a ResourceQuota `scopeSelector`, malformed entries dropped."""
    requirements: list[ScopeRequirement] = []
    for expression in _sequence(_mapping(scope_selector).get("matchExpressions")):
        expression = _mapping(expression)
        scope_name = expression.get("scopeName")
        operator = expression.get("operator")
        if not isinstance(scope_name, str) or not isinstance(operator, str):
            continue
        values = tuple(str(v) for v in _sequence(expression.get("values")) if v is not None)
        requirements.append(ScopeRequirement(scope_name, operator, values))
    return tuple(requirements)


def quota_from_object(obj: Mapping[str, Any], namespace: str | None = None) -> ResourceQuota:
    """A ResourceQuota object (spec.hard, status.used, spec.scopes, spec.scopeSelector)."""
    spec = _mapping(obj.get("spec"))
    status = _mapping(obj.get("status"))
    scopes = tuple(s for s in _sequence(spec.get("scopes")) if isinstance(s, str))
    return ResourceQuota(
        namespace=_namespace(obj, namespace),
        name=_name(obj),
        hard=quantities(spec.get("hard")),
        used=quantities(status.get("used")),
        scopes=scopes,
        scope_selector=scope_requirements(spec.get("scopeSelector")),
    )


def limit_range_item_from_object(item: Mapping[str, Any]) -> LimitRangeItem:
    """One `spec.limits` entry of a LimitRange."""
    kind = item.get("type")
    return LimitRangeItem(
        type=kind if isinstance(kind, str) else "Container",
        max=quantities(item.get("max")),
        min=quantities(item.get("min")),
        default=quantities(item.get("default")),
        default_request=quantities(item.get("defaultRequest")),
        max_limit_request_ratio=quantities(item.get("maxLimitRequestRatio")),
    )


def limit_range_from_object(obj: Mapping[str, Any], namespace: str | None = None) -> LimitRange:
    """A LimitRange object (spec.limits)."""
    items = tuple(
        limit_range_item_from_object(item)
        for item in _sequence(_mapping(obj.get("spec")).get("limits"))
        if isinstance(item, Mapping)
    )
    return LimitRange(namespace=_namespace(obj, namespace), name=_name(obj), items=items)


def priority_class_from_object(obj: Mapping[str, Any]) -> PriorityClass:
    """A PriorityClass object (value, globalDefault, preemptionPolicy at the top level)."""
    value = obj.get("value")
    policy = obj.get("preemptionPolicy")
    return PriorityClass(
        name=_name(obj),
        value=value if isinstance(value, int) and not isinstance(value, bool) else 0,
        global_default=obj.get("globalDefault") is True,
        preemption_policy=policy if isinstance(policy, str) else "PreemptLowerPriority",
    )


def runtime_class_from_object(obj: Mapping[str, Any]) -> RuntimeClass:
    """A RuntimeClass object (node.k8s.io/v1: handler, scheduling and overhead at the top
    level); a toleration or selector value of the wrong type is skipped (the schema rules
    report it)."""
    from gpulint.profile.model import FlavorToleration

    scheduling = _mapping(obj.get("scheduling"))
    handler = obj.get("handler")
    tolerations = tuple(
        FlavorToleration(
            _text(t.get("key")),
            _text(t.get("operator")) or "Equal",
            _text(t.get("value")),
            _text(t.get("effect")),
        )
        for t in _sequence(scheduling.get("tolerations"))
        if isinstance(t, Mapping)
    )
    return RuntimeClass(
        name=_name(obj),
        handler=handler if isinstance(handler, str) else "",
        node_selector={
            str(k): _text(v)
            for k, v in _mapping(scheduling.get("nodeSelector")).items()
            if isinstance(v, str | int | float | bool)
        },
        tolerations=tolerations,
        overhead=quantities(_mapping(obj.get("overhead")).get("podFixed")),
    )


def _text(value: Any) -> str:
    """A scalar as the API stores it (`true`, `8`); anything else as no value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, str | int | float) else ""


@dataclass(frozen=True)
class QuotaInEffect:
    """A ResourceQuota that applies, and the manifest object it was read from (None: profile)."""

    quota: ResourceQuota
    document: Document | None = None

    @property
    def label(self) -> str:
        """`ResourceQuota ml/gpu-quota`, marked when it comes from the profile."""
        origin = "" if self.document is not None else " (cluster profile)"
        return f"ResourceQuota {self.quota.namespace}/{self.quota.name}{origin}"

    def hard_pos(self, key: str) -> Pos | None:
        """Where `spec.hard[key]` is written, when the quota is a checked manifest."""
        if self.document is None:
            return None
        return mapping_at(self.document.obj, "spec", "hard").pos_of_key(key)


@dataclass(frozen=True)
class LimitRangeInEffect:
    """A LimitRange that applies, and the manifest object it was read from (None: profile)."""

    limit_range: LimitRange
    document: Document | None = None

    @property
    def label(self) -> str:
        """`LimitRange ml/gpu-limits`, marked when it comes from the profile."""
        origin = "" if self.document is not None else " (cluster profile)"
        return f"LimitRange {self.limit_range.namespace}/{self.limit_range.name}{origin}"

    def clause_pos(self, index: int, clause: str, resource: str) -> Pos | None:
        """Where `spec.limits[index].<clause>[resource]` is written (clause as in the API)."""
        if self.document is None:
            return None
        items = mapping_at(self.document.obj, "spec").get("limits")
        mappings = (
            [item for item in items if isinstance(item, YMap)] if isinstance(items, YSeq) else []
        )
        if index >= len(mappings):
            return None
        return mapping_at(mappings[index], clause).pos_of_key(resource)


@dataclass(frozen=True)
class PriorityClassInEffect:
    """A PriorityClass that exists, and the manifest object it was read from (None: profile)."""

    priority_class: PriorityClass
    document: Document | None = None


@dataclass(frozen=True)
class RuntimeClassInEffect:
    """A RuntimeClass that exists, and the manifest object it was read from (None: profile)."""

    runtime_class: RuntimeClass
    document: Document | None = None


def _objects(documents: Iterable[Document], kind: str) -> Iterator[Document]:
    # A run's knowledge objects are indexed by kind: every file's checks ask.
    return (d for d in of_kind(documents, kind) if d.ref.api_version in _CORE_APIS[kind])


_CORE_APIS: dict[str, frozenset[str]] = {
    "ResourceQuota": frozenset({"v1"}),
    "LimitRange": frozenset({"v1"}),
    "PriorityClass": frozenset(
        {"scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"}
    ),
    # v1alpha1 nests the same fields under `spec` (and served until 1.25): not read.
    "RuntimeClass": frozenset({"node.k8s.io/v1", "node.k8s.io/v1beta1"}),
}


def quotas_in_effect(
    documents: Iterable[Document],
    profile: ClusterProfile | None,
    namespace_of: Callable[[Document], str],
) -> tuple[QuotaInEffect, ...]:
    """Every ResourceQuota: the profile's, replaced by a manifest one of the same namespace/name.

    A manifest quota rarely carries `status.used`; the live usage the profile recorded for the
    quota it replaces still describes the cluster, so it is kept.
    """
    from_profile = {(q.namespace, q.name): q for q in (profile.quotas if profile else ())}
    result: dict[tuple[str, str], QuotaInEffect] = {
        key: QuotaInEffect(quota) for key, quota in from_profile.items()
    }
    for document in _objects(documents, "ResourceQuota"):
        quota = quota_from_object(document.obj, namespace_of(document))
        key = (quota.namespace, quota.name)
        replaced = from_profile.get(key)
        if not quota.used and replaced is not None:
            quota = quota._replace(used=replaced.used)
        result[key] = QuotaInEffect(quota, document)
    return tuple(result.values())


def limit_ranges_in_effect(
    documents: Iterable[Document],
    profile: ClusterProfile | None,
    namespace_of: Callable[[Document], str],
) -> tuple[LimitRangeInEffect, ...]:
    """Every LimitRange: the profile's, replaced by a manifest one of the same namespace/name."""
    result: dict[tuple[str, str], LimitRangeInEffect] = {
        (lr.namespace, lr.name): LimitRangeInEffect(lr)
        for lr in (profile.limit_ranges if profile else ())
    }
    for document in _objects(documents, "LimitRange"):
        limit_range = limit_range_from_object(document.obj, namespace_of(document))
        result[(limit_range.namespace, limit_range.name)] = LimitRangeInEffect(
            limit_range, document
        )
    return tuple(result.values())


class _HasName(Protocol):
    @property
    def name(self) -> str: ...


_Named = TypeVar("_Named", bound=_HasName)
_InEffect = TypeVar("_InEffect")


def priority_classes_in_effect(
    documents: Iterable[Document], profile: ClusterProfile | None
) -> dict[str, PriorityClassInEffect]:
    """Every PriorityClass by name: the profile's, replaced by a manifest one of the same name."""
    known = profile.priority_classes if profile else ()
    read = priority_class_from_object
    return _by_name(documents, "PriorityClass", known, read, PriorityClassInEffect)


def runtime_classes_in_effect(
    documents: Iterable[Document], profile: ClusterProfile | None
) -> dict[str, RuntimeClassInEffect]:
    """Every RuntimeClass known by name: the profile's, replaced by a manifest one of the same
    name (it is applied with the pods that name it)."""
    known = profile.runtime_classes if profile else ()
    read = runtime_class_from_object
    return _by_name(documents, "RuntimeClass", known, read, RuntimeClassInEffect)


def _by_name(
    documents: Iterable[Document],
    kind: str,
    known: Iterable[_Named],
    read: Callable[[YMap], _Named],
    in_effect: Callable[[_Named, Document | None], _InEffect],
) -> dict[str, _InEffect]:
    """The profile's objects of a kind (`known`) by name, each replaced by a manifest object
    of the same name (`read` from its tree), as `in_effect` wraps them."""
    result = {item.name: in_effect(item, None) for item in known}
    for document in _objects(documents, kind):
        item = read(document.obj)
        if item.name:
            result[item.name] = in_effect(item, document)
    return result


def priority_values(
    documents: Iterable[Document], profile: ClusterProfile | None
) -> dict[str, int]:
    """The value of every PriorityClass known (priority_classes_in_effect), by name; with
    those every API server creates (kube-apiserver's SystemPriorityClasses)."""
    values = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
    for name, found in priority_classes_in_effect(documents, profile).items():
        values[name] = found.priority_class.value
    return values


def global_default_class(classes: Mapping[str, PriorityClassInEffect]) -> PriorityClass | None:
    """The class pods without `priorityClassName` get; with several defaults the lowest wins."""
    defaults = [c.priority_class for c in classes.values() if c.priority_class.global_default]
    return min(defaults, key=lambda pc: pc.value) if defaults else None
