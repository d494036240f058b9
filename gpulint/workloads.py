"""The one place that knows where each workload kind keeps its pod template(s) and replicas.

Kinds are data (`WorkloadShape`), so a custom resource is added by adding a shape. A template
path is a dotted path from the object root to the mapping holding `metadata` and `spec`
(`""` = the object itself, as for a Pod); `*` steps over every value of a mapping (one template
per role, as in `spec.pytorchReplicaSpecs.*.template`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpulint.model import (
    Container,
    ContainerRole,
    Document,
    PodTemplate,
    Quantity,
    ReplicaCount,
    Resources,
    Workload,
    wrong_type,
)
from gpulint.quantity import parse_quantity
from gpulint.yamltree import Pos, YMap, YSeq


@dataclass(frozen=True)
class WorkloadShape:
    """Where a kind keeps its pod templates and how many pods it runs."""

    kind: str
    api_groups: tuple[str, ...]  # "" is the core group
    template_paths: tuple[str, ...]
    replicas_path: str | None  # None: one pod per eligible node (DaemonSet)
    default_replicas: int = 1


BUILTIN_SHAPES: tuple[WorkloadShape, ...] = (
    WorkloadShape("Pod", ("",), ("",), None),
    WorkloadShape("Deployment", ("apps", "extensions"), ("spec.template",), "spec.replicas"),
    WorkloadShape("ReplicaSet", ("apps", "extensions"), ("spec.template",), "spec.replicas"),
    WorkloadShape("StatefulSet", ("apps",), ("spec.template",), "spec.replicas"),
    WorkloadShape("DaemonSet", ("apps", "extensions"), ("spec.template",), None),
    WorkloadShape("ReplicationController", ("",), ("spec.template",), "spec.replicas"),
    WorkloadShape("Job", ("batch",), ("spec.template",), "spec.parallelism"),
    WorkloadShape(
        "CronJob",
        ("batch",),
        ("spec.jobTemplate.spec.template",),
        "spec.jobTemplate.spec.parallelism",
    ),
)

_SHAPES_BY_KIND = {shape.kind: shape for shape in BUILTIN_SHAPES}


def _split(path: str) -> tuple[str, ...]:
    return tuple(path.split(".")) if path else ()


# Dotted paths split once, not once per document.
_STEPS: dict[str, tuple[str, ...]] = {
    path: _split(path)
    for shape in BUILTIN_SHAPES
    for path in (*shape.template_paths, shape.replicas_path or "")
}


def api_group(api_version: str) -> str:
    """`apps/v1` -> `apps`; `v1` -> `` (the core group)."""
    return api_version.rpartition("/")[0]


def shape_for(document: Document) -> WorkloadShape | None:
    """The shape of the document's kind, if it is a workload kind gpulint knows."""
    shape = _SHAPES_BY_KIND.get(document.ref.kind)
    if shape is None or api_group(document.ref.api_version) not in shape.api_groups:
        return None
    return shape


def workload_of(document: Document) -> Workload | None:
    """The typed workload view of a document, or None when it runs no pods."""
    shape = shape_for(document)
    if shape is None:
        return None
    templates = tuple(
        template
        for path in shape.template_paths
        for role, node in _walk(document.obj, path)
        if (template := pod_template(document, node, role)) is not None
    )
    return Workload(document, templates, _replicas(document.obj, shape))


def _walk(node: Any, path: str) -> list[tuple[str | None, YMap]]:
    """Every mapping at `path` below `node`, with the `*` key it passed (the role)."""
    steps = _STEPS.get(path)
    if steps is None:
        steps = _split(path)
    found: list[tuple[str | None, Any]] = [(None, node)]
    for step in steps:
        below: list[tuple[str | None, Any]] = []
        for role, current in found:
            if not isinstance(current, YMap):
                continue
            if step == "*":
                below.extend((str(key), child) for key, child in current.items())
            elif step in current:
                below.append((role, current[step]))
        found = below
    return [(role, mapping) for role, mapping in found if isinstance(mapping, YMap)]


def pod_template(document: Document, node: YMap, role: str | None = None) -> PodTemplate | None:
    """The typed view of a mapping holding a pod `spec`, or None when it has no spec."""
    spec = node.get("spec")
    if not isinstance(spec, YMap):
        return None
    containers = (
        *_containers(spec, "containers", ContainerRole.APP),
        *_containers(spec, "initContainers", ContainerRole.INIT),
        *_containers(spec, "ephemeralContainers", ContainerRole.EPHEMERAL),
    )
    return PodTemplate(document, node, spec, containers, role)


def _containers(spec: YMap, key: str, role: ContainerRole) -> Iterator[Container]:
    items = spec.get(key)
    if not isinstance(items, YSeq):
        return
    for index, item in enumerate(items):
        if not isinstance(item, YMap):
            continue
        actual_role = role
        if role is ContainerRole.INIT and item.get("restartPolicy") == "Always":
            actual_role = ContainerRole.SIDECAR
        yield Container(
            name=str(item.get("name") or f"#{index}"),
            role=actual_role,
            index=index,
            node=item,
            pos=items.pos_of_item(index),
            resources=_resources(item),
        )


def _resources(container: YMap) -> Resources:
    node = container.get("resources")
    if not isinstance(node, YMap):
        return Resources({}, {}, None, container.pos_of_key("resources"))
    return Resources(
        requests=_quantities(node.get("requests")),
        limits=_quantities(node.get("limits")),
        node=node,
        pos=container.pos_of_key("resources"),
    )


def _quantities(node: Any) -> dict[str, Quantity]:
    if not isinstance(node, YMap):
        return {}
    return {
        str(name): Quantity(
            resource=str(name),
            raw=value,
            amount=_amount(value),
            key_pos=node.pos_of_key(name),
            value_pos=node.pos_of_value(name),
        )
        for name, value in node.items()
    }


def _amount(value: Any) -> Decimal | None:
    if value is None:
        return Decimal(0)  # Quantity.UnmarshalJSON reads `null` as zero
    return _text_amount(value) if type(value) is str else parse_quantity(value)


# The same few quantities ("1", "500m", "16Gi") are written in every manifest; Decimals are
# immutable, so one parse of each text serves them all.
@functools.lru_cache(maxsize=4096)
def _text_amount(text: str) -> Decimal | None:
    return parse_quantity(text)


def _replicas(obj: YMap, shape: WorkloadShape) -> ReplicaCount | None:
    if shape.replicas_path is None:
        return None
    *parents, leaf = _STEPS.get(shape.replicas_path) or shape.replicas_path.split(".")
    node: Any = obj
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if isinstance(node, YMap) and leaf in node:
        value = _count(node[leaf])
        if value is not None and value >= 0:
            return ReplicaCount(value, leaf, node.pos_of_key(leaf))
    return ReplicaCount(shape.default_replicas, leaf, None)


def _count(value: Any) -> int | None:
    """An integer field as the API reads it: `3.0` (YAML float, JSON 3) is 3, `"3"` is no int."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


def malformed_fields(document: Document) -> Iterator[tuple[Pos, str]]:
    """Fields on the way to a workload's pods that hold the wrong type, as (position, message).

    The typed views skip what they cannot read (a string `replicas` counts as the default, a
    container that is not a mapping is no container); this names each such value instead.
    """
    shape = shape_for(document)
    if shape is None:
        return
    for path in shape.template_paths:
        templates: list[tuple[str, YMap]] = [("", document.obj)]
        for step in _STEPS.get(path) or _split(path):
            below: list[tuple[str, YMap]] = []
            for where, node in templates:
                keys = list(node) if step == "*" else [step] if step in node else []
                for key in keys:
                    field = f"{where}.{key}" if where else str(key)
                    if isinstance(node[key], YMap):
                        below.append((field, node[key]))
                    elif message := wrong_type(field, node[key], YMap):
                        yield node.pos_of_value(key), message
            templates = below
        for where, template in templates:
            yield from _malformed_template(where, template)
    if shape.replicas_path is not None:
        *parents, leaf = _STEPS.get(shape.replicas_path) or _split(shape.replicas_path)
        node: Any = document.obj
        for step in parents:
            node = node.get(step) if isinstance(node, YMap) else None
        if isinstance(node, YMap) and node.get(leaf) is not None:
            field, count = shape.replicas_path, _count(node[leaf])
            if count is None:
                yield node.pos_of_value(leaf), wrong_type(field, node[leaf], int) or ""
            elif count < 0:
                message = f"`{field}` is negative; the API server rejects the object"
                yield node.pos_of_value(leaf), message


def _malformed_template(where: str, template: YMap) -> Iterator[tuple[Pos, str]]:
    spec = template.get("spec")
    if not isinstance(spec, YMap):
        # The object's own `spec` (a Pod's) is checked with every object's top-level fields.
        if where and (message := wrong_type(f"{where}.spec", spec, YMap)):
            yield template.pos_of_value("spec"), message
        return
    prefix = f"{where}.spec" if where else "spec"
    # Every container of every workload passes here: field paths are only built for a finding.
    for key in ("containers", "initContainers", "ephemeralContainers"):
        items = spec.get(key)
        if type(items) is not YSeq:
            if message := wrong_type(f"{prefix}.{key}", items, YSeq):
                yield spec.pos_of_value(key), message
            continue
        for index, item in enumerate(items):
            if type(item) is not YMap:
                if message := wrong_type(f"{prefix}.{key}[{index}]", item, YMap):
                    yield items.pos_of_item(index), message
                continue
            resources = item.get("resources")
            if type(resources) is not YMap:
                field = f"{prefix}.{key}[{index}].resources"
                if message := wrong_type(field, resources, YMap):
                    yield item.pos_of_value("resources"), message
                continue
            for section in _SECTIONS:
                value = resources.get(section)
                if value is not None and type(value) is not YMap:
                    field = f"{prefix}.{key}[{index}].resources.{section}"
                    yield resources.pos_of_value(section), wrong_type(field, value, YMap) or ""


_SECTIONS = ("requests", "limits")


@dataclass(frozen=True)
class Autoscaler:
    """A HorizontalPodAutoscaler of the checked manifests and the workload it scales."""

    document: Document
    target_kind: str
    target_name: str
    max_replicas: int
    pos: Pos  # where maxReplicas is written


def autoscalers(documents: Iterable[Document]) -> Iterator[Autoscaler]:
    """Every HorizontalPodAutoscaler with a scaleTargetRef and a maxReplicas."""
    for document in documents:
        if document.ref.kind != "HorizontalPodAutoscaler":
            continue
        spec = document.obj.get("spec")
        if not isinstance(spec, YMap):
            continue
        target = spec.get("scaleTargetRef")
        maximum = spec.get("maxReplicas")
        if not isinstance(target, YMap) or not isinstance(maximum, int):
            continue
        yield Autoscaler(
            document,
            str(target.get("kind", "")),
            str(target.get("name", "")),
            maximum,
            spec.pos_of_key("maxReplicas"),
        )


def autoscaler_for(workload: Workload, scalers: Iterable[Autoscaler]) -> Autoscaler | None:
    """The HPA (same namespace, matching kind and name) that scales `workload`, if any."""
    ref = workload.document.ref
    kind, name, namespace = ref.kind, ref.name, ref.namespace
    # Every workload scans every HPA: compare the most selective field first.
    for scaler in scalers:
        if (
            scaler.target_name == name
            and scaler.target_kind == kind
            and scaler.document.ref.namespace == namespace
        ):
            return scaler
    return None


@dataclass(frozen=True)
class PeakReplicas:
    """The most pods of each template a workload runs at once, and where that is written."""

    count: int
    field: str  # what to change: "replicas", "parallelism", "maxReplicas"; "" for a bare Pod
    document: Document  # the workload, or the HPA that scales it
    pos: Pos | None  # None: the kind's default, or a bare Pod
    autoscaler: Autoscaler | None = None  # set when the HPA's maxReplicas is the peak


def peak_replicas(workload: Workload, scalers: Iterable[Autoscaler]) -> PeakReplicas | None:
    """The workload's peak pod count; None for kinds that run one pod per node (DaemonSet).

    With an HPA the peak is the larger of its maxReplicas and the written replica count: the
    HPA moves the count into its range, but a count above maxReplicas exists until it does.
    """
    count = workload.replicas
    if count is None:
        if workload.kind != "Pod":
            return None
        return PeakReplicas(1, "", workload.document, None)
    peak = PeakReplicas(count.value, count.field, workload.document, count.pos)
    scaler = autoscaler_for(workload, scalers)
    if scaler is not None and scaler.max_replicas >= count.value:
        return PeakReplicas(scaler.max_replicas, "maxReplicas", scaler.document, scaler.pos, scaler)
    return peak
