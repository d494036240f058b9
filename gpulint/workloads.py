"""The one place that knows where each workload kind keeps its pod template(s) and replicas.

Kinds are data (`WorkloadShape`), so a custom resource is added by adding a shape (users do so
with `workloads:` in the config). A shape lists its roles: each role is a dotted path from the
object root to the mapping that declares it, where `*` steps over every value of a mapping (the
key names the role, as in `spec.pytorchReplicaSpecs.*`) and `name[]` over every item of a list
(a field of the item names the role, as `groupName` in `spec.workerGroupSpecs[]`). From the
role's mapping, `template` leads to the pod template and `counts` are the fields whose product
is the number of pods the role runs.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

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


class Count(NamedTuple):
    """A field that multiplies a role's pod count."""

    path: str  # dotted, from the role's mapping; a leading `/` starts at the object root
    default: int = 1
    less: int = 0  # subtracted from the value (LeaderWorkerSet `size` counts the leader) ...
    less_if: str | None = None  # ... only when this field of the role's mapping is present


class ContainerField(NamedTuple):
    """Where a pod spec keeps containers of one kind."""

    path: str  # from the pod spec; "" is the spec itself (a TrainJob trainer)
    role: ContainerRole
    single: bool = False  # one container mapping rather than a list (Argo `container:`)
    resources: str = "resources"


POD_CONTAINERS: tuple[ContainerField, ...] = (
    ContainerField("containers", ContainerRole.APP),
    ContainerField("initContainers", ContainerRole.INIT),
    ContainerField("ephemeralContainers", ContainerRole.EPHEMERAL),
)
# An Argo Workflow template is both the pod's spec and its container's home.
ARGO_CONTAINERS: tuple[ContainerField, ...] = (
    ContainerField("container", ContainerRole.APP, single=True),
    ContainerField("script", ContainerRole.APP, single=True),
    ContainerField("containerSet.containers", ContainerRole.APP),
    ContainerField("initContainers", ContainerRole.INIT),
    ContainerField("sidecars", ContainerRole.APP),
)


class Role(NamedTuple):
    """One group of identical pods of a workload: its template and how many pods it runs."""

    path: str  # from the object root to the role's mapping ("" is the object itself)
    template: str = "template"  # from the role's mapping to the mapping holding `spec`
    spec: str = "spec"  # from the template to the pod spec ("" : the template is the spec)
    counts: tuple[Count, ...] | None = (Count("replicas"),)  # None: one pod per node; (): one
    name: str | None = None  # a fixed role name (`head`); else the `*` key, or for `[]` the
    # item's `name` (`groupName` for Ray)
    gang_min: str | None = None  # field of the role's mapping: fewest pods a gang needs
    gang_min_if: str | None = None  # object path that must be true for `gang_min` to count
    containers: tuple[ContainerField, ...] = POD_CONTAINERS


class WorkloadShape(NamedTuple):
    """Where a kind keeps its pod templates and how many pods it runs."""

    kind: str
    api_versions: tuple[str, ...]  # globs over apiVersion: `apps/*`, `v1`
    roles: tuple[Role, ...]
    gang: bool = False  # all pods must run at once before any does useful work
    gang_min: str | None = None  # object path: fewest pods of all roles together


def _kubeflow(kind: str, specs: str, *groups: str) -> WorkloadShape:
    return WorkloadShape(
        kind,
        tuple(f"{g}/*" for g in groups or ("kubeflow.org",)),
        (Role(f"spec.{specs}.*"),),
        gang=True,
        gang_min="spec.runPolicy.schedulingPolicy.minAvailable",
    )


def _ray(kind: str, cluster: str, *extra: Role) -> WorkloadShape:
    """A KubeRay kind whose cluster spec sits at `cluster` (`spec` for a RayCluster)."""
    return WorkloadShape(
        kind,
        ("ray.io/*",),
        (
            Role(f"{cluster}.headGroupSpec", counts=(), name="head"),
            Role(
                f"{cluster}.workerGroupSpecs[]",
                counts=(Count("replicas", default=0), Count("numOfHosts")),
                gang_min="minReplicas",
                gang_min_if=f"{cluster}.enableInTreeAutoscaling",
            ),
            *extra,
        ),
        gang=True,
    )


def _argo_workflow(kind: str, spec: str) -> WorkloadShape:
    return WorkloadShape(
        kind,
        ("argoproj.io/*",),
        (Role(f"{spec}.templates[]", template="", spec="", counts=(), containers=ARGO_CONTAINERS),),
    )


_SPEC_REPLICAS = (Count("replicas"),)
_PARALLELISM = (Count("parallelism"),)

BUILTIN_SHAPES: tuple[WorkloadShape, ...] = (
    WorkloadShape("Pod", ("v1",), (Role("", template="", counts=()),)),
    WorkloadShape("Deployment", ("apps/*", "extensions/*"), (Role("spec"),)),
    WorkloadShape("ReplicaSet", ("apps/*", "extensions/*"), (Role("spec"),)),
    WorkloadShape("StatefulSet", ("apps/*",), (Role("spec"),)),
    WorkloadShape("DaemonSet", ("apps/*", "extensions/*"), (Role("spec", counts=None),)),
    WorkloadShape("ReplicationController", ("v1",), (Role("spec"),)),
    WorkloadShape("Job", ("batch/*",), (Role("spec", counts=_PARALLELISM),)),
    WorkloadShape("CronJob", ("batch/*",), (Role("spec.jobTemplate.spec", counts=_PARALLELISM),)),
    # Kubeflow training operator (v1) and mpi-operator (v2beta1): one template per role key.
    _kubeflow("PyTorchJob", "pytorchReplicaSpecs"),
    _kubeflow("TFJob", "tfReplicaSpecs"),
    _kubeflow("MPIJob", "mpiReplicaSpecs"),
    _kubeflow("XGBoostJob", "xgbReplicaSpecs"),
    _kubeflow("PaddleJob", "paddleReplicaSpecs"),
    _kubeflow("JAXJob", "jaxReplicaSpecs"),
    # Kubeflow Trainer v2: the runtime holds the pod template; the TrainJob sets the nodes and
    # the resources of each.
    WorkloadShape(
        "TrainJob",
        ("trainer.kubeflow.org/*",),
        (
            Role(
                "spec.trainer",
                template="",
                spec="",
                counts=(Count("numNodes"),),
                name="node",
                containers=(ContainerField("", ContainerRole.APP, True, "resourcesPerNode"),),
            ),
        ),
        gang=True,
    ),
    _ray("RayCluster", "spec"),
    _ray(
        "RayJob",
        "spec.rayClusterSpec",
        Role("spec", template="submitterPodTemplate", counts=(), name="submitter"),
    ),
    _ray("RayService", "spec.rayClusterConfig"),
    WorkloadShape(
        "JobSet",
        ("jobset.x-k8s.io/*",),
        (
            Role(
                "spec.replicatedJobs[]",
                template="template.spec.template",
                counts=(Count("replicas"), Count("template.spec.parallelism")),
            ),
        ),
        gang=True,
    ),
    WorkloadShape(
        "LeaderWorkerSet",
        ("leaderworkerset.x-k8s.io/*",),
        (
            Role(
                "spec.leaderWorkerTemplate",
                template="leaderTemplate",
                counts=(Count("/spec.replicas"),),
                name="leader",
            ),
            Role(
                "spec.leaderWorkerTemplate",
                template="workerTemplate",
                counts=(Count("/spec.replicas"), Count("size", less=1, less_if="leaderTemplate")),
                name="worker",
            ),
        ),
        gang=True,
    ),
    WorkloadShape("Rollout", ("argoproj.io/*",), (Role("spec"),)),
    _argo_workflow("Workflow", "spec"),
    _argo_workflow("WorkflowTemplate", "spec"),
    _argo_workflow("ClusterWorkflowTemplate", "spec"),
    _argo_workflow("CronWorkflow", "spec.workflowSpec"),
    WorkloadShape(
        "Job",
        ("batch.volcano.sh/*",),
        (Role("spec.tasks[]", gang_min="minAvailable"),),
        gang=True,
        gang_min="spec.minAvailable",
    ),
)


def shape_index(shapes: Iterable[WorkloadShape]) -> dict[str, tuple[WorkloadShape, ...]]:
    """Shapes by kind, in the order given (the first whose apiVersion matches wins)."""
    index: dict[str, list[WorkloadShape]] = {}
    for shape in shapes:
        index.setdefault(shape.kind, []).append(shape)
    return {kind: tuple(found) for kind, found in index.items()}


_BUILTIN_INDEX = shape_index(BUILTIN_SHAPES)


@functools.lru_cache(maxsize=1024)
def _split(path: str) -> tuple[str, ...]:
    """`spec.workerGroupSpecs[].template` -> (`spec`, `workerGroupSpecs`, `[]`, `template`)."""
    steps: list[str] = []
    for step in path.split(".") if path else ():
        if step.endswith("[]"):
            steps.extend((step[:-2], "[]") if step != "[]" else ("[]",))
        else:
            steps.append(step)
    return tuple(steps)


def api_group(api_version: str) -> str:
    """`apps/v1` -> `apps`; `v1` -> `` (the core group)."""
    return api_version.rpartition("/")[0]


@functools.lru_cache(maxsize=256)
def _version_matches(api_version: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(api_version, p) for p in patterns)


def shape_for(document: Document, extra: Sequence[WorkloadShape] = ()) -> WorkloadShape | None:
    """The shape of the document's kind, if it is a workload kind gpulint knows.

    `extra` shapes (from the config) are tried before the built-in ones.
    """
    kind, api_version = document.ref.kind, document.ref.api_version
    for shape in (*(s for s in extra if s.kind == kind), *_BUILTIN_INDEX.get(kind, ())):
        if _version_matches(api_version, shape.api_versions):
            return shape
    return None


def workload_of(document: Document, extra: Sequence[WorkloadShape] = ()) -> Workload | None:
    """The typed workload view of a document, or None when it runs no pods."""
    shape = shape_for(document, extra)
    if shape is None:
        return None
    obj = document.obj
    templates = tuple(
        template
        for role in shape.roles
        for name, role_node in _walk(obj, role.path)
        if (template := _role_template(document, role, role_node, role.name or name)) is not None
    )
    first = templates[0].replicas if templates else _count(obj, obj, shape.roles[0])
    gang_min = _field_count(obj, shape.gang_min) if shape.gang_min else None
    return Workload(document, templates, first, shape.gang, gang_min)


def _role_template(
    document: Document, role: Role, role_node: YMap, name: str | None
) -> PodTemplate | None:
    node = _at(role_node, role.template)
    spec = _at(node, role.spec)
    if not isinstance(node, YMap) or not isinstance(spec, YMap):
        return None
    containers = tuple(_pod_containers(spec, role.containers))
    if not role.spec and not containers:
        return None  # an Argo steps/DAG template runs no pod of its own
    obj = document.obj
    gang_min = None
    if role.gang_min and (role.gang_min_if is None or _at(obj, role.gang_min_if) is True):
        written = _field_count(role_node, role.gang_min)
        gang_min = written if written.pos is not None else None
    return PodTemplate(
        document,
        node,
        spec,
        containers,
        name,
        _count(obj, role_node, role),
        gang_min,
        role_node if role_node is not obj else None,
    )


def _walk(node: Any, path: str) -> list[tuple[str | None, YMap]]:
    """Every mapping at `path` below `node`, with the role name its `*`/`[]` step gave."""
    found: list[tuple[str | None, Any]] = [(None, node)]
    previous = ""
    for step in _split(path):
        below: list[tuple[str | None, Any]] = []
        for role, current in found:
            if step == "*" and isinstance(current, YMap):
                below.extend((str(key), child) for key, child in current.items())
            elif step == "[]" and isinstance(current, YSeq):
                below.extend(
                    (_item_name(item, previous, i), item) for i, item in enumerate(current)
                )
            elif isinstance(current, YMap) and step in current:
                below.append((role, current[step]))
        found = below
        previous = step
    return [(role, mapping) for role, mapping in found if isinstance(mapping, YMap)]


_NAME_FIELDS = ("name", "groupName")


def _item_name(item: Any, list_name: str, index: int) -> str:
    if isinstance(item, YMap):
        for field in _NAME_FIELDS:
            if item.get(field):
                return str(item[field])
    return f"{list_name}[{index}]"


def _at(node: Any, path: str) -> Any:
    """The value at a dotted path without `*`/`[]` steps, or None."""
    for step in _split(path):
        if not isinstance(node, YMap):
            return None
        node = node.get(step)
    return node


def _count(obj: YMap, role_node: YMap, role: Role) -> ReplicaCount | None:
    """The role's pod count: the product of its count fields."""
    if role.counts is None:
        return None
    factors = []
    for count in role.counts:
        base = obj if count.path.startswith("/") else role_node
        factor = _field_count(base, count.path.lstrip("/"), count.default)
        if count.less and (count.less_if is None or _at(role_node, count.less_if) is not None):
            factor = ReplicaCount(max(0, factor.value - count.less), factor.field, factor.pos)
        factors.append(factor)
    if not factors:
        return ReplicaCount(1, "", None)
    if len(factors) == 1:
        return factors[0]
    value = 1
    for factor in factors:
        value *= factor.value
    # The field to change is the first one written, else the first one.
    lead = next((f for f in factors if f.pos is not None), factors[0])
    return ReplicaCount(value, lead.field, lead.pos, tuple(factors))


def _field_count(base: YMap, path: str, default: int = 1) -> ReplicaCount:
    """The non-negative integer at `path` below `base`, or `default` where it is not written."""
    *parents, leaf = _split(path)
    node: Any = base
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if isinstance(node, YMap) and leaf in node:
        value = _integer(node[leaf])
        if value is not None and value >= 0:
            return ReplicaCount(value, leaf, node.pos_of_key(leaf))
    return ReplicaCount(default, leaf, None)


def pod_template(document: Document, node: YMap, role: str | None = None) -> PodTemplate | None:
    """The typed view of a mapping holding a pod `spec`, or None when it has no spec."""
    spec = node.get("spec")
    if not isinstance(spec, YMap):
        return None
    return PodTemplate(document, node, spec, tuple(_pod_containers(spec, POD_CONTAINERS)), role)


def _pod_containers(spec: YMap, fields: Sequence[ContainerField]) -> Iterator[Container]:
    for field in fields:
        if field.single:
            parent, _, key = field.path.rpartition(".")
            holder = _at(spec, parent) if key else None
            item = spec if not key else (holder.get(key) if isinstance(holder, YMap) else None)
            if isinstance(item, YMap):
                pos = holder.pos_of_key(key) if isinstance(holder, YMap) else item.pos
                yield _container(item, field, 0, pos)
            continue
        items = _at(spec, field.path)
        if isinstance(items, YSeq):
            yield from _containers(items, field)


def _containers(items: YSeq, field: ContainerField) -> Iterator[Container]:
    for index, item in enumerate(items):
        if isinstance(item, YMap):
            yield _container(item, field, index, items.pos_of_item(index))


def _container(item: YMap, field: ContainerField, index: int, pos: Pos) -> Container:
    role = field.role
    if role is ContainerRole.INIT and item.get("restartPolicy") == "Always":
        role = ContainerRole.SIDECAR
    return Container(
        name=str(item.get("name") or ("main" if field.single else f"#{index}")),
        role=role,
        index=index,
        node=item,
        pos=pos,
        resources=_resources(item, field.resources),
    )


def _resources(container: YMap, key: str = "resources") -> Resources:
    node = container.get(key)
    if not isinstance(node, YMap):
        return Resources({}, {}, None, container.pos_of_key(key))
    return Resources(
        requests=_quantities(node.get("requests")),
        limits=_quantities(node.get("limits")),
        node=node,
        pos=container.pos_of_key(key),
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


def malformed_fields(
    document: Document, extra: Sequence[WorkloadShape] = ()
) -> Iterator[tuple[Pos, str]]:
    """Fields on the way to a workload's pods that hold the wrong type, as (position, message).

    The typed views skip what they cannot read (a string `replicas` counts as the default, a
    container that is not a mapping is no container); this names each such value instead. The
    object's own top-level fields are the loader's to check.
    """
    shape = shape_for(document, extra)
    if shape is None:
        return
    obj = document.obj
    problems: list[tuple[Pos, str]] = []
    for role in shape.roles:
        for where, role_node in _descend([("", obj)], role.path, problems):
            for found in _descend([(where, role_node)], role.template, problems):
                for spec_where, spec in _descend([found], role.spec, problems):
                    _malformed_containers(spec_where, spec, role.containers, problems)
            for count in role.counts or ():
                base, base_where = (obj, "") if count.path.startswith("/") else (role_node, where)
                _malformed_count(base_where, base, count.path.lstrip("/"), problems)
    yield from problems


def _descend(
    found: list[tuple[str, YMap]], path: str, problems: list[tuple[Pos, str]]
) -> list[tuple[str, YMap]]:
    """The mappings at `path` below each (field path, mapping) of `found`, with their field paths.

    Values of the wrong type on the way are added to `problems`, except the object's own
    top-level fields (field path "").
    """
    steps = _split(path)
    index = 0
    while index < len(steps):
        step = steps[index]
        listed = index + 1 < len(steps) and steps[index + 1] == "[]"
        index += 2 if listed else 1
        below: list[tuple[str, YMap]] = []
        for where, node in found:
            for key in list(node) if step == "*" else [step] if step in node else []:
                field = f"{where}.{key}" if where else str(key)
                value = node[key]
                if not listed:
                    if type(value) is YMap:
                        below.append((field, value))
                    elif where and (message := wrong_type(field, value, YMap)):
                        problems.append((node.pos_of_value(key), message))
                    continue
                if type(value) is not YSeq:
                    if message := wrong_type(field, value, YSeq):
                        problems.append((node.pos_of_value(key), message))
                    continue
                for position, item in enumerate(value):
                    if type(item) is YMap:
                        below.append((f"{field}[{position}]", item))
                    elif message := wrong_type(f"{field}[{position}]", item, YMap):
                        problems.append((value.pos_of_item(position), message))
        found = below
    return found


def _malformed_containers(
    where: str,
    spec: YMap,
    fields: Sequence[ContainerField],
    problems: list[tuple[Pos, str]],
) -> None:
    # Every container of every workload passes here: field paths are only built for a finding.
    for field in fields:
        if field.single:
            items = (
                _descend([(where, spec)], field.path, problems) if field.path else [(where, spec)]
            )
        else:
            items = _descend([(where, spec)], f"{field.path}[]", problems)
        for container_where, container in items:
            resources = container.get(field.resources)
            if resources is None:
                continue
            if type(resources) is not YMap:
                name = f"{container_where}.{field.resources}"
                if message := wrong_type(name, resources, YMap):
                    problems.append((container.pos_of_value(field.resources), message))
                continue
            for section in _SECTIONS:
                value = resources.get(section)
                if value is not None and type(value) is not YMap:
                    name = f"{container_where}.{field.resources}.{section}"
                    message = wrong_type(name, value, YMap) or ""
                    problems.append((resources.pos_of_value(section), message))


def _malformed_count(where: str, base: YMap, path: str, problems: list[tuple[Pos, str]]) -> None:
    *parents, leaf = _split(path)
    node: Any = base
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if not isinstance(node, YMap) or node.get(leaf) is None:
        return
    field = f"{where}.{path}" if where else path
    count = _integer(node[leaf])
    if count is None:
        problems.append((node.pos_of_value(leaf), wrong_type(field, node[leaf], int) or ""))
    elif count < 0:
        problems.append(
            (node.pos_of_value(leaf), f"`{field}` is negative; the API server rejects the object")
        )


def _integer(value: Any) -> int | None:
    """An integer field as the API reads it: `3.0` (YAML float, JSON 3) is 3, `"3"` is no int."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


_SECTIONS = ("requests", "limits")


def role_at(workload: Workload, pos: Pos) -> str | None:
    """The role whose part of the manifest holds `pos`, for workloads with named roles.

    A role's part is the mapping that declares it (its count and template), or only its
    template when that mapping also holds other roles (LeaderWorkerSet, RayJob's submitter).
    """
    roles = [t for t in workload.templates if t.role]
    for template in roles:
        extent = _extent(template.role_node or template.node)
        if any(o is not template and _inside(o.node.pos, extent) for o in roles):
            extent = _extent(template.node)
        if _inside(pos, extent):
            return template.role
    return None


def _extent(node: YMap) -> tuple[Pos, Pos]:
    return node.pos, (_last_line(node), 10**9)


def _inside(pos: Pos, extent: tuple[Pos, Pos]) -> bool:
    return extent[0] <= pos <= extent[1]


def _last_line(node: Any) -> int:
    """The last line a mapping or sequence writes on (scalars end where they start)."""
    last = node.pos[0]
    if isinstance(node, YMap):
        for key, value in node.items():
            span = node.spans.get(key)
            if span is not None:
                last = max(last, span[2])
            if isinstance(value, (YMap, YSeq)):
                last = max(last, _last_line(value))
    elif isinstance(node, YSeq):
        for item in node:
            if isinstance(item, (YMap, YSeq)):
                last = max(last, _last_line(item))
        if node.item_pos:
            last = max(last, node.item_pos[-1][0])
    return last
