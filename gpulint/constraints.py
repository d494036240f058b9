"""A pod template's demands on nodes, typed: tolerations, required node and pod anti-affinity.

Only the rules that match pods against nodes and pools read these, so PodTemplate builds them
(and imports this module) on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpulint.fields import mapping_at, text_of
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq

if TYPE_CHECKING:
    from gpulint.profile.model import Taint


class Toleration(NamedTuple):
    """One entry of `tolerations:`."""

    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None
    pos: Pos


class SelectorRequirement(NamedTuple):
    """One `matchExpressions`/`matchFields` entry of a node selector term."""

    key: str
    operator: str
    values: tuple[str, ...]
    pos: Pos


class NodeSelectorTerm(NamedTuple):
    """One term of `requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`."""

    match_expressions: tuple[SelectorRequirement, ...]
    match_fields: tuple[SelectorRequirement, ...]
    pos: Pos


class PodAffinityTerm(NamedTuple):
    """One required pod (anti-)affinity term: which pods, counted per which topology domain."""

    topology_key: str
    match_labels: Mapping[str, str]
    match_expressions: tuple[SelectorRequirement, ...]
    has_selector: bool  # a term without labelSelector selects no pods
    namespaces: tuple[str, ...]  # empty: the pod's own namespace
    pos: Pos


def tolerations(spec: YMap) -> tuple[Toleration, ...]:
    """spec.tolerations as typed values."""
    items = spec.get("tolerations")
    if not isinstance(items, YSeq):
        return ()
    return tuple(
        Toleration(
            key=text_of(item.get("key")),
            operator=text_of(item.get("operator")) or "Equal",
            value=text_of(item.get("value")),
            effect=text_of(item.get("effect")),
            toleration_seconds=_int_or_none(item.get("tolerationSeconds")),
            pos=items.pos_of_item(i),
        )
        for i, item in enumerate(items)
        if isinstance(item, YMap)
    )


def required_node_affinity(spec: YMap) -> tuple[NodeSelectorTerm, ...] | None:
    """The required node affinity terms (OR'ed), or None when there is none."""
    required = mapping_at(
        spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"
    )
    terms = required.get("nodeSelectorTerms")
    if "nodeSelectorTerms" not in required:
        return None
    if not isinstance(terms, YSeq):
        return ()
    return tuple(
        NodeSelectorTerm(
            match_expressions=_requirements(term.get("matchExpressions")),
            match_fields=_requirements(term.get("matchFields")),
            pos=terms.pos_of_item(i),
        )
        for i, term in enumerate(terms)
        if isinstance(term, YMap)
    )


def required_pod_anti_affinity(spec: YMap) -> tuple[PodAffinityTerm, ...]:
    """podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution terms."""
    return required_pod_affinity(spec, "podAntiAffinity")


def required_pod_affinity(spec: YMap, kind: str = "podAffinity") -> tuple[PodAffinityTerm, ...]:
    """The requiredDuringSchedulingIgnoredDuringExecution terms of `kind` (podAffinity or
    podAntiAffinity)."""
    anti = mapping_at(spec, "affinity", kind)
    items = anti.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(items, YSeq):
        return ()
    terms = []
    for i, item in enumerate(items):
        if not isinstance(item, YMap):
            continue
        selector = item.get("labelSelector")
        namespaces = item.get("namespaces")
        terms.append(
            PodAffinityTerm(
                topology_key=text_of(item.get("topologyKey")),
                match_labels={
                    str(k): text_of(v) for k, v in mapping_at(selector, "matchLabels").items()
                },
                match_expressions=_requirements(
                    selector.get("matchExpressions") if isinstance(selector, YMap) else None
                ),
                has_selector=isinstance(selector, YMap),
                namespaces=tuple(text_of(n) for n in namespaces)
                if isinstance(namespaces, YSeq)
                else (),
                pos=items.pos_of_item(i),
            )
        )
    return tuple(terms)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _requirements(items: Any) -> tuple[SelectorRequirement, ...]:
    if not isinstance(items, YSeq):
        return ()
    result = []
    for i, item in enumerate(items):
        if not isinstance(item, YMap):
            continue
        values = item.get("values")
        result.append(
            SelectorRequirement(
                key=text_of(item.get("key")),
                operator=text_of(item.get("operator")),
                values=tuple(text_of(v) for v in values) if isinstance(values, YSeq) else (),
                pos=items.pos_of_item(i),
            )
        )
    return tuple(result)


def toleration_yaml(taint: Taint) -> str:
    """The toleration entry that tolerates exactly `taint`, as YAML list item lines."""
    if taint.value:
        lines = [f"- key: {taint.key}", "  operator: Equal", f'  value: "{taint.value}"']
    else:
        lines = [f"- key: {taint.key}", "  operator: Exists"]
    return "\n".join([*lines, f"  effect: {taint.effect}"])


def toleration_fields(taint: Taint) -> tuple[tuple[str, str], ...]:
    """The fields of the toleration that tolerates exactly `taint`, in the order written."""
    if taint.value:
        match = (("key", taint.key), ("operator", "Equal"), ("value", taint.value))
    else:
        match = (("key", taint.key), ("operator", "Exists"))
    return (*match, ("effect", taint.effect))
