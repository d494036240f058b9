"""The typed walk: a document of a known workload kind (gpulint.shapes) read into its typed
view (`Workload`, its `PodTemplate`s, their containers and replica counts), with every field on
the way that holds the wrong type named; then the accelerator scan (gpulint.requestscan) goes
on from what the walk did, so each mapping and list of a document is walked once.
"""

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

from gpulint.accelerators import is_extended_resource, looks_like_accelerator
from gpulint.fields import shown, wrong_type
from gpulint.model import (
    Container,
    ContainerRole,
    Document,
    ManagedElsewhere,
    PodTemplate,
    Quantity,
    ReplicaCount,
    Resources,
    RolePart,
    UnreadPart,
    Workload,
)
from gpulint.placeholders import placeholder_in
from gpulint.quantity import parse_quantity
from gpulint.requestscan import (
    SECTIONS,
    Unchecked,
    Walked,
    holds_no_requests,
    unchecked,
    walk_entries,
)
from gpulint.shapes import (
    POD_CONTAINERS,
    ContainerField,
    Count,
    ManagedBy,
    Role,
    WorkloadShape,
    api_group,
    path_steps,
    runs_no_pods_of_its_own,
    shape_for,
)
from gpulint.views import NamedTuple
from gpulint.yamltree import BuiltMap, Pos, YMap, YSeq, last_line


def _typed(
    document: Document, shape: WorkloadShape, walked: Walked
) -> tuple[Workload, tuple[tuple[Pos, str], ...]]:
    """The workload view of a document of `shape`, and its wrong-typed fields in document
    order; what the walk enumerates joins `walked`."""
    obj = document.obj
    problems: list[tuple[Pos, str]] = []
    templates: list[PodTemplate] = []
    unread: list[UnreadPart] = []
    unread_roles: list[RolePart] = []
    inherited = _priority_class(obj, shape.priority_class) if shape.priority_class else None
    for role in shape.roles:
        before = len(templates)
        for where, name, role_node in _descend([("", None, obj)], role.path, problems, walked):
            # An operator checks the fields it builds pods from; only the path to them is ours.
            below = [] if role.generated else problems
            if role.name_field is not None:
                field, default = role.name_field
                written = role_node.get(field)
                name = written if isinstance(written, str) and written else default
            role_name = _role_name(role, name)
            found = _role_template(
                document, role, where, role_node, role_name, below, walked, inherited
            )
            if isinstance(found, PodTemplate):
                templates.append(found)
            elif isinstance(found, UnreadPart):
                unread.append(found)
            elif role_name and role_node is not obj:
                written = _written(role, role_node)
                if written is not None:
                    template = written if type(written) is YMap else None
                    unread_roles.append(RolePart(role_name, role_node, template))
            for count in role.counts or ():
                base, base_where = (obj, "") if count.path.startswith("/") else (role_node, where)
                if not count.text:  # a count kept in a string is no field of the API's
                    _malformed_count(base_where, base, count.path.lstrip("/"), below)
            for field in role.integers:
                _malformed_count(where, role_node, field, below)
        if shape.declared and len(templates) == before and not role.optional:
            where = ".".join(p for p in (role.path, role.template) if p)
            unread.append(
                UnreadPart(
                    f"the config's `workloads:` path `{where}` for kind {shape.kind} is not "
                    "in this object",
                    document.kind_pos,
                    accelerators=False,
                )
            )
    first = templates[0].replicas if templates else _count(obj, obj, shape.roles[0])
    gang_min = _field_count(obj, shape.gang_min) if shape.gang_min else None
    counts = [first, gang_min, *(c for t in templates for c in (t.replicas, t.gang_min))]
    unknown = next((c for c in counts if c is not None and c.unknown is not None), None)
    workload = Workload(
        document,
        tuple(templates),
        first,
        shape.gang,
        gang_min,
        tuple(unread),
        tuple(unread_roles),
        _unknown_count(unknown) or (shape.unknown_count(obj) if shape.unknown_count else None),
        gang_min_in_order=shape.gang_min_in_order,
        group_gang=shape.group_gang,
        unjudged=shape.unjudged(obj) if shape.unjudged is not None else (),
        managed_elsewhere=_managed_elsewhere(obj, shape.managed_by) if shape.managed_by else None,
    )
    return workload, tuple(sorted(problems, key=_position))


def _managed_elsewhere(obj: YMap, managed_by: ManagedBy) -> ManagedElsewhere | None:
    """The controller the object's `managedBy` names, when it is not the kind's own."""
    *parents, leaf = path_steps(managed_by.path)
    node: Any = obj
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if not isinstance(node, YMap):
        return None
    value = node.get(leaf)
    # An empty or mistyped value is the schema's to refuse (GPU012), not a hand-over.
    if not isinstance(value, str) or not value or value in managed_by.own:
        return None
    return ManagedElsewhere(
        value, managed_by.path, node.pos_of_value(leaf), managed_by.honoured_from
    )


def _unknown_count(count: ReplicaCount | None) -> str | None:
    """`` `replicas` is `$N` `` for a count an envsubst placeholder holds, else None."""
    if count is None or count.unknown is None:
        return None
    unknown = next((f for f in (*count.factors, count) if f.unknown is not None), count)
    return f"`{unknown.field}` is `{shown(unknown.unknown)}`"


def _written(role: Role, role_node: YMap) -> Any:
    """The pod template the role's mapping holds, readable or not (the value written, or the
    mapping itself when that is the template); None when it holds none.

    An operator's role built from other fields holds none, nor does a role the kind leaves
    out (a LeaderWorkerSet without `leaderTemplate`) or an Argo template that runs no pod.
    """
    if role.derive is not None:
        return None
    if role.template:
        return _at(role_node, role.template)
    if role.spec:
        return role_node  # the role's mapping is the template
    written = any(_at(role_node, f.path) is not None for f in role.containers if f.path)
    return role_node if written else None


def _role_name(role: Role, found: str | None) -> str | None:
    """The role's fixed name, with `{}` standing for the name found on the way (`prefill`)."""
    if role.name is None:
        return found
    return role.name.format(found) if "{}" in role.name and found else role.name


def _position(problem: tuple[Pos, str]) -> Pos:
    return problem[0]


def workload_of(document: Document, extra: Sequence[WorkloadShape] = ()) -> Workload | None:
    """The typed workload view of a document, or None when it runs no pods."""
    shape = shape_for(document, extra)
    return None if shape is None else _typed(document, shape, {})[0]


def _role_template(
    document: Document,
    role: Role,
    where: str,
    role_node: YMap,
    name: str | None,
    problems: list[tuple[Pos, str]],
    walked: Walked,
    inherited_priority: tuple[str, Pos] | None = None,
) -> PodTemplate | UnreadPart | None:
    """The pod template of one role's mapping; the written one's wrong types join `problems`.

    A role whose operator builds the pod (`derive`) gives the pod it builds, or the UnreadPart
    it cannot build. `inherited_priority`: the class the workload gives pods naming none.
    """
    node = spec = None
    containers: tuple[Container, ...] = ()
    # A path without `*` or `[]` steps: at most one template, and one spec in it.
    for found in _descend([(where, None, role_node)], role.template, problems, walked):
        for spec_where, _, spec in _descend([found], role.spec, problems, walked):
            node = found[2]
            containers = _containers(spec_where, spec, role.containers, problems, walked)
    obj = document.obj
    if role.derive is not None:
        derived = role.derive(obj, role_node)
        if not isinstance(derived, YMap):
            return derived
        if derived is not spec:
            # Built by gpulint from the role's fields: only what is written is type-checked.
            containers = _containers("", derived, role.containers, [], walked)
            node = spec = derived
    if node is None or spec is None:
        return None
    if not role.spec and not containers:
        return None  # an Argo steps/DAG template runs no pod of its own
    gang_min = None
    if role.gang_min and (role.gang_min_if is None or _at(obj, role.gang_min_if) is True):
        written = _gang_min(obj, role_node, role.gang_min)
        gang_min = written if written is not None and written.pos is not None else None
    return PodTemplate(
        document,
        node,
        spec,
        containers,
        name,
        _count(obj, role_node, role, where),
        gang_min,
        role_node if role_node is not obj else None,
        role.operator_resources,
        inherited_priority,
        (role.completed_by[0], role_node.pos, role.completed_by[1]) if role.completed_by else None,
        role.init_container(obj, name) if callable(role.init_container) else role.init_container,
    )


def _gang_min(obj: YMap, role_node: YMap, path: str) -> ReplicaCount | None:
    """The role's gang minimum at `path`: from the role's mapping, or from the object root
    after a `/`, with `{}` standing for the role's `name`; None when the role has no name to
    look up (a name that is no string, or one with a dot, which would step into the map)."""
    if not path.startswith("/"):
        return _field_count(role_node, path)
    if "{}" in path:
        name = role_node.get("name")
        if not isinstance(name, str) or not name or "." in name:
            return None
        path = path.replace("{}", name)
        found = _field_count(obj, path[1:])
        # Named by its map and key (`minRoleReplicas.prefill`), not by the role's name alone.
        field = ".".join(path_steps(path[1:])[-2:])
        return ReplicaCount(found.value, field, found.pos, unknown=found.unknown)
    return _field_count(obj, path[1:])


def _priority_class(obj: YMap, path: str) -> tuple[str, Pos] | None:
    """The priority class name the object writes at `path`, with its position; None when it
    writes none (or no string: the schema check reports that)."""
    *parents, key = path_steps(path)
    holder = _at(obj, ".".join(parents)) if parents else obj
    if not isinstance(holder, YMap):
        return None
    value = holder.get(key)
    if not isinstance(value, str) or not value:
        return None
    return value, holder.pos_of_value(key)


def _descend(
    found: list[tuple[str, str | None, YMap]],
    path: str,
    problems: list[tuple[Pos, str]],
    walked: Walked,
) -> list[tuple[str, str | None, YMap]]:
    """The mappings at `path` below each (field path, role name, mapping) of `found`.

    A `*` step names the role by its key, a `[]` step by the item's name (see _item_name);
    a plain step keeps the name. Values of the wrong type on the way are added to `problems`,
    except the object's own top-level fields (field path ""). What a `*` or `[]` step
    enumerates joins `walked`, with its (key or index, value) entries.
    """
    steps = path_steps(path)
    index = 0
    while index < len(steps):
        step = steps[index]
        listed = index + 1 < len(steps) and steps[index + 1] == "[]"
        index += 2 if listed else 1
        below: list[tuple[str, str | None, YMap]] = []
        for where, name, node in found:
            if step == "*":
                entries = walk_entries(node, walked)
            else:
                entries = ((step, node[step]),) if step in node else ()
            for key, value in entries:
                field = f"{where}.{key}" if where else str(key)
                if not listed:
                    if type(value) is YMap:
                        below.append((field, str(key) if step == "*" else name, value))
                    elif where and (message := wrong_type(field, value, YMap)):
                        problems.append((node.pos_of_value(key), message))
                    continue
                if type(value) is not YSeq:
                    if message := wrong_type(field, value, YSeq):
                        problems.append((node.pos_of_value(key), message))
                    continue
                for position, item in walk_entries(value, walked):
                    if type(item) is YMap:
                        item_name = _item_name(item, step, position)
                        below.append((f"{field}[{position}]", item_name, item))
                    elif message := wrong_type(f"{field}[{position}]", item, YMap):
                        problems.append((value.pos_of_item(position), message))
        found = below
    return found


_NAME_FIELDS = ("name", "groupName")


def _item_name(item: Any, list_name: str, index: int) -> str:
    if isinstance(item, YMap):
        for field in _NAME_FIELDS:
            if item.get(field):
                return str(item[field])
    return f"{list_name}[{index}]"


def _at(node: Any, path: str) -> Any:
    """The value at a dotted path without `*`/`[]` steps, or None."""
    for step in path_steps(path):
        if not isinstance(node, YMap):
            return None
        node = node.get(step)
    return node


def _count(obj: YMap, role_node: YMap, role: Role, where: str = "") -> ReplicaCount | None:
    """The role's pod count: the product of its count fields (`where`: the field path of the
    role's mapping, for counts read from the mapping holding it)."""
    if role.counts is None:
        return None
    if not role.runs:
        return ReplicaCount(0, "", None)
    if role.count_by is not None:
        return role.count_by(obj, role_node)
    factors = []
    for count in role.counts:
        base = obj if count.path.startswith("/") else role_node
        factor = _factor(base, count)
        if factor.pos is None and factor.unknown is None:
            factor = _fallback(obj, where, count) or factor
        if count.less and (count.less_if is None or _at(role_node, count.less_if) is not None):
            less = min(count.less, factor.value)
            factor = ReplicaCount(factor.value - less, factor.field, factor.pos, less=less)
        factors.append(factor)
    return ReplicaCount.product(factors)


def _fallback(obj: YMap, where: str, count: Count) -> ReplicaCount | None:
    """The first of the count's `fallbacks` that is written, read as its `path` would be."""
    for path in count.fallbacks:
        if path.startswith("../"):
            # The mapping whose list holds the role's: `where` less its last step.
            parent = _at_field_path(obj, where.rpartition(".")[0]) if "." in where else None
            base, path = parent, path[3:]
        else:
            base = obj
        if not isinstance(base, YMap):
            continue
        found = _field_count(base, path.lstrip("/"), count.default, count.text)
        if found.pos is not None or found.unknown is not None:
            return found
    return None


def _at_field_path(obj: YMap, where: str) -> Any:
    """The value at a field path as _descend writes them (`spec.predictors[0]`), or None."""
    node: Any = obj
    for key, index in re.findall(_FIELD_STEP, where):
        if key:
            node = node.get(key) if isinstance(node, YMap) else None
        else:
            node = node[int(index)] if isinstance(node, YSeq) and int(index) < len(node) else None
    return node


# Compiled on first use: only counts read from the mapping holding a role's need it.
_FIELD_STEP = r"([^.\[\]]+)|\[(\d+)\]"


def _factor(base: YMap, count: Count) -> ReplicaCount:
    """One count field's value, divided by its `per` field and raised to its peaks."""
    path = count.path.lstrip("/")
    factor = _field_count(base, path, count.default, count.text)
    if count.per is not None and factor.pos is not None:
        divisor = _field_count(base, count.per, 1, count.text)
        factor = factor._replace(
            value=max(1, factor.value // max(divisor.value, 1)),
            unknown=factor.unknown or divisor.unknown,
        )
    for peak in count.peaks:
        other = _field_count(base, peak, 0, count.text)
        if other.unknown is not None:
            factor = factor._replace(unknown=factor.unknown or other.unknown)
        elif other.pos is not None and other.value > factor.value:
            factor = other._replace(unknown=factor.unknown)
    return factor


def _field_count(base: YMap, path: str, default: int = 1, text: bool = False) -> ReplicaCount:
    """The non-negative integer at `path` below `base`, or `default` where it is not written.

    With `text`, a string of digits counts too (annotations are strings).
    """
    *parents, leaf = path_steps(path)
    node: Any = base
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if isinstance(node, YMap) and leaf in node:
        value = _integer(node[leaf], text)
        if value is not None and 0 <= value <= INT32_MAX:
            return ReplicaCount(value, leaf, node.pos_of_key(leaf))
        placeholder = placeholder_in(node[leaf])
        if placeholder is not None:  # an envsubst template's `replicas: $N`: not known
            return ReplicaCount(default, leaf, node.pos_of_key(leaf), unknown=placeholder)
    return ReplicaCount(default, leaf, None)


def pod_template(document: Document, node: YMap, role: str | None = None) -> PodTemplate | None:
    """The typed view of a mapping holding a pod `spec`, or None when it has no spec."""
    spec = node.get("spec")
    if not isinstance(spec, YMap):
        return None
    containers = _containers("spec", spec, POD_CONTAINERS, [], {})
    return PodTemplate(document, node, spec, containers, role)


def _containers(
    where: str,
    spec: YMap,
    fields: Sequence[ContainerField],
    problems: list[tuple[Pos, str]],
    walked: Walked,
) -> tuple[Container, ...]:
    """The containers of the pod spec at field path `where`; wrong-typed ones join `problems`,
    the lists enumerated join `walked`."""
    found: list[Container] = []
    for field in fields:
        if not field.path:
            if field.single:  # the spec is the container (a TrainJob's trainer)
                found.append(_container(where, spec, field, 0, spec.pos, problems))
            continue
        parent, _, key = field.path.rpartition(".")
        for holder_where, _, holder in _descend([(where, None, spec)], parent, problems, walked):
            value = holder.get(key)
            if value is None:
                continue
            path = f"{holder_where}.{key}" if holder_where else key
            if field.single:
                if type(value) is YMap:
                    pos = holder.pos_of_key(key)
                    found.append(_container(path, value, field, 0, pos, problems))
                elif holder_where and (message := wrong_type(path, value, YMap)):
                    problems.append((holder.pos_of_value(key), message))
            elif type(value) is not YSeq:
                if message := wrong_type(path, value, YSeq):
                    problems.append((holder.pos_of_value(key), message))
            else:
                for index, item in walk_entries(value, walked):
                    item_pos = value.pos_of_item(index)
                    if type(item) is YMap:
                        item_where = f"{path}[{index}]"
                        found.append(_container(item_where, item, field, index, item_pos, problems))
                    elif message := wrong_type(f"{path}[{index}]", item, YMap):
                        problems.append((item_pos, message))
    return tuple(found)


def _container(
    where: str,
    item: YMap,
    field: ContainerField,
    index: int,
    pos: Pos,
    problems: list[tuple[Pos, str]],
) -> Container:
    role = field.role
    if role is ContainerRole.INIT and item.get("restartPolicy") == "Always":
        role = ContainerRole.SIDECAR
    return Container(
        name=str(item.get("name") or (field.name if field.single else f"#{index}")),
        role=role,
        index=index,
        node=item,
        pos=pos,
        resources=_resources(where, item, field.resources, problems),
        own_fields=field.own_fields,
    )


def _resources(where: str, container: YMap, key: str, problems: list[tuple[Pos, str]]) -> Resources:
    node = container.get(key)
    if type(node) is not YMap:
        if node is not None and (message := wrong_type(f"{where}.{key}", node, YMap)):
            problems.append((container.pos_of_value(key), message))
        return Resources({}, {}, None, container.pos_of_key(key))
    for section in SECTIONS:
        value = node.get(section)
        if value is not None and type(value) is not YMap:
            message = wrong_type(f"{where}.{key}.{section}", value, YMap) or ""
            problems.append((node.pos_of_value(section), message))
    return Resources(
        requests=_quantities(node.get("requests")),
        limits=_quantities(node.get("limits")),
        node=node,
        pos=container.pos_of_key(key),
    )


def _quantities(node: Any) -> dict[str, Quantity]:
    if not isinstance(node, YMap):
        return {}
    quantities: dict[str, Quantity] = {}
    for name, value in node.items():
        resource = str(name)
        placeholder = _amount_placeholder(resource, value)
        quantities[resource] = Quantity(
            resource=resource,
            raw=value,
            amount=_AT_LEAST_ONE if placeholder else _amount(value),
            key_pos=node.pos_of_key(name),
            value_pos=node.pos_of_value(name),
            placeholder=placeholder,
        )
    return quantities


def _amount_placeholder(resource: str, value: Any) -> str | None:
    """The envsubst placeholder an accelerator amount holds (`nvidia.com/gpu: ${N}`), if any.

    The pod asks for the accelerator all the same: its amount counts as the fewest it can
    be, one, so the rules that do not depend on how many (pools, taints, selectors) judge the
    pod as a GPU pod; those that do point into its `resources` block, which the placeholder
    leaves not judged (gpulint.placeholders).
    """
    if not (is_extended_resource(resource) and looks_like_accelerator(resource)):
        return None
    return placeholder_in(value)


_AT_LEAST_ONE = Decimal(1)


def _amount(value: Any) -> Decimal | None:
    if value is None:
        return Decimal(0)  # Quantity.UnmarshalJSON reads `null` as zero
    return _text_amount(value) if type(value) is str else parse_quantity(value)


# The same few quantities ("1", "500m", "16Gi") are written in every manifest; Decimals are
# immutable, so one parse of each text serves them all.
@functools.lru_cache(maxsize=4096)
def _text_amount(text: str) -> Decimal | None:
    return parse_quantity(text)


def _malformed_count(where: str, base: YMap, path: str, problems: list[tuple[Pos, str]]) -> None:
    *parents, leaf = path_steps(path)
    node: Any = base
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if not isinstance(node, YMap) or node.get(leaf) is None:
        return
    if placeholder_in(node[leaf]) is not None:
        return  # unknown until substituted, not malformed (gpulint.placeholders)
    field = f"{where}.{path}" if where else path
    count = _integer(node[leaf])
    if count is None:
        problems.append((node.pos_of_value(leaf), wrong_type(field, node[leaf], int) or ""))
    elif count < 0:
        problems.append(
            (node.pos_of_value(leaf), f"`{field}` is negative; the API server rejects the object")
        )
    elif count > INT32_MAX:
        problems.append(
            (
                node.pos_of_value(leaf),
                f"`{field}` is larger than {INT32_MAX}, the most the API's int32 field holds; "
                "the API server rejects the object",
            )
        )


#: Replica counts, parallelism and gang sizes are int32 fields in every API that has them.
INT32_MAX = 2**31 - 1


def _integer(value: Any, text: bool = False) -> int | None:
    """An integer field as the API reads it: `3.0` (YAML float, JSON 3) is 3, `"3"` is no int
    (unless the field is `text`, a count kept in a string)."""
    if isinstance(value, bool):
        return None
    if text and isinstance(value, str):
        digits = value.strip()
        # isdigit() also holds for `²`, which int() refuses, and for 5000 digits, which it
        # refuses too: neither is a count.
        usable = digits.isdigit() and digits.isascii() and len(digits) <= 19
        return int(digits) if usable else None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


def role_at(workload: Workload, pos: Pos) -> str | None:
    """The role whose part of the manifest holds `pos`, for workloads with named roles.

    A role's part is the mapping that declares it (its count and template), or only its
    template when that mapping also holds other roles (LeaderWorkerSet, RayJob's submitter).
    A role whose template is of the wrong type has its part too, so that what is wrong in it
    is told as in any role (unless its mapping holds other roles: then it has none).
    """
    parts = [RolePart(t.role, t.role_node or t.node, t.node) for t in workload.templates if t.role]
    parts += workload.unread_roles
    # A value that several roles' mappings hold (Airflow gives both Spark roles the pod
    # settings of its `kubernetes` section) is written for all of them: neither role's part.
    shared = _shared_keys(parts) if len(parts) > 1 else frozenset()
    if shared and any(_writes(part.node, pos, shared) for part in parts):
        return None
    for index, (role, node, template) in enumerate(parts):
        extent = _extent(node, shared)
        if any(i != index and _inside(_start(o), extent) for i, o in enumerate(parts)):
            if template is None:
                continue  # which part of the shared mapping is this role's is not known
            extent = _extent(template)
        if _inside(pos, extent):
            return role
    # A pod gpulint built from fields outside the role's mapping (a Spark executor's GPU from
    # the application's `sparkConf`): the role whose pod alone holds a value written there.
    holders = {t.role for t in workload.templates if t.role and _holds(t.spec, pos)}
    return holders.pop() if len(holders) == 1 else None


def _holds(spec: YMap, pos: Pos) -> bool:
    """Whether a pod spec gpulint built (a BuiltMap) holds a key, value or item written at
    `pos`."""
    return isinstance(spec, BuiltMap) and _written_at(spec, pos)


def _start(part: RolePart) -> Pos:
    """Where a role's template starts, or its mapping when its template is no mapping."""
    return (part.node if part.template is None else part.template).pos


def _extent(node: YMap, shared: frozenset[Any] = frozenset()) -> tuple[Pos, Pos]:
    """From where `node` starts to the last line it writes, without its `shared` keys."""
    if not shared:
        return node.pos, (last_line(node), 10**9)
    last = node.pos[0]
    for key, value in node.items():
        span = node.spans.get(key)
        if span in shared:
            continue
        if span is not None:
            last = max(last, span[2])
        if isinstance(value, (YMap, YSeq)):
            last = max(last, last_line(value))
    return node.pos, (last, 10**9)


def _shared_keys(parts: list[RolePart]) -> frozenset[Any]:
    """The spans of the keys that more than one role's mapping holds as written at one place
    (Airflow gives both Spark roles the pod settings of its `kubernetes` section). Roles
    declared by one mapping (a LeaderWorkerSet's) are told apart by their templates."""
    seen: set[Any] = set()
    shared: set[Any] = set()
    nodes = {id(part.node): part.node for part in parts}
    for node in nodes.values():
        spans = set(node.spans.values())
        shared |= seen & spans
        seen |= spans
    return frozenset(shared)


def _writes(node: YMap, pos: Pos, shared: frozenset[Any]) -> bool:
    """Whether a `shared` key of `node`, or its value, is written at `pos`."""
    for key, value in node.items():
        span = node.spans.get(key)
        if span not in shared:
            continue
        if span[:2] == pos or span[2:] == pos:
            return True
        if isinstance(value, (YMap, YSeq)) and _written_at(value, pos):
            return True
    return False


def _written_at(node: YMap | YSeq, pos: Pos) -> bool:
    """Whether a key, value or item of `node`, at any depth, is written at `pos`."""
    pending: list[Any] = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, YMap):
            if any(span[:2] == pos or span[2:] == pos for span in item.spans.values()):
                return True
            pending.extend(v for v in item.values() if isinstance(v, (YMap, YSeq)))
        elif isinstance(item, YSeq):
            if pos in item.item_pos:
                return True
            pending.extend(v for v in item if isinstance(v, (YMap, YSeq)))
    return False


def _inside(pos: Pos, extent: tuple[Pos, Pos]) -> bool:
    return extent[0] <= pos <= extent[1]


class WorkloadReading(NamedTuple):
    """What the loader's one walk over a document finds."""

    workload: Workload | None  # None: the document runs no pods (not a workload kind)
    # Fields on the way to its pods that hold the wrong type, as (position, message), in
    # document order.
    malformed: tuple[tuple[Pos, str], ...] = ()
    # The accelerator requests (and parts of the workload) that no pod template read holds.
    unchecked: Unchecked | None = None


def read_workload(document: Document, extra: Sequence[WorkloadShape] = ()) -> WorkloadReading:
    """The document's typed workload view, its wrong-typed fields and its unread accelerator
    requests, in one walk.

    `extra` shapes (the config's `workloads:`) are tried before the built-in ones, and their
    fields are type-checked the same way. The typed view skips what it cannot read (a string
    `replicas` counts as the default, a container that is not a mapping is no container);
    `malformed` names each such value. The object's own top-level fields are the loader's to
    check. The accelerator scan then walks only what typing did not: it skips what the pod
    templates read and goes on from the children of what typing enumerated, so each mapping
    and list of the document is walked once.
    """
    shape = shape_for(document, extra)
    walked: Walked = {}
    if shape is None:
        found = None if holds_no_requests(document) else _found_by_shape(document, walked)
        return WorkloadReading(found, (), unchecked(document, found, walked))
    workload, malformed = _typed(document, shape, walked)
    return WorkloadReading(workload, malformed, unchecked(document, workload, walked))


# API groups whose objects hold pod specs that are patterns or patches, not pods (Kyverno's
# `validate.pattern`, `mutate.patchStrategicMerge`): never read as pods.
_POLICY_GROUPS = frozenset({"kyverno.io", "policies.kyverno.io", "templates.gatekeeper.sh"})
# Characters of a policy's wildcard pattern (`image: "!*:latest"`), never of an image.
_PATTERN_CHARS = frozenset("*?!|()")


def _found_by_shape(document: Document, walked: Walked) -> Workload | None:
    """The pod templates of an object of a kind gpulint does not model, found by their shape:
    every pod spec (a `containers` list of containers with a `name` and an `image`) at any
    depth, with its PodTemplateSpec (`metadata`, `spec`) when it is one. Each is checked as a
    pod; how many pods the object runs is not known (`unknown_count`). None when it holds no
    pod spec: its accelerator requests are then GPU007's. What the search enumerates joins
    `walked`, for the accelerator scan to go on from."""
    obj = document.obj
    if api_group(document.ref.api_version) in _POLICY_GROUPS:
        return None
    templates: list[PodTemplate] = []
    # Each entry: its path, its parent, the node, and the object written inside this one that
    # holds it (an OpenShift Template's `objects[]`), if any.
    pending: list[tuple[str, Any, Any, YMap | None]] = [
        (str(k), obj, v, None)
        for k, v in walk_entries(obj, walked)
        if k not in _NOT_PODS and type(v) in _NODES
    ]
    pending.reverse()
    while pending:
        where, parent, node, owner = pending.pop()
        if type(node) is YMap and _is_pod_spec(node, walked):
            template = parent if _is_template(parent, node, obj) else node
            role = where.rpartition(".")[0] if template is parent else where
            containers = _containers("", node, POD_CONTAINERS, [], walked)
            # Inside an object of a kind that runs no pod of its own (a ServingRuntime in a
            # Template): a template other objects run, as that kind is read on its own.
            runs = owner is None or not _runs_no_pods(owner)
            count = ReplicaCount(1 if runs else 0, "", None)
            templates.append(PodTemplate(document, template, node, containers, role, count))
            continue
        listed = type(node) is YSeq
        if not listed and _is_embedded_object(node):
            owner = node
        children = [
            (f"{where}[{k}]" if listed else f"{where}.{k}", node, v, owner)
            for k, v in walk_entries(node, walked)
            if type(v) in _NODES and k not in _NO_POD_SPECS
        ]
        pending.extend(reversed(children))
    if not templates:
        return None
    ref = document.ref
    return Workload(
        document,
        tuple(templates),
        templates[0].replicas,
        unknown_count=f"how many pods a {ref.kind} ({ref.api_version}) runs",
        by_shape=True,
    )


# Top-level fields that hold no pod of the object's: what the cluster reports, its metadata.
_NOT_PODS = frozenset({"apiVersion", "kind", "metadata", "status"})
_NODES = (YMap, YSeq)
# Fields that never hold a pod spec, left to the accelerator scan: requirements and claims.
_NO_POD_SPECS = frozenset({"resources", "resourceClaims", "annotations", "labels"})


def _is_embedded_object(node: YMap) -> bool:
    """Whether a mapping inside an object is an object of its own: an `apiVersion` and a
    `kind` (an OpenShift Template's `objects[]`, a ManifestWork's manifests)."""
    return isinstance(node.get("apiVersion"), str) and isinstance(node.get("kind"), str)


def _runs_no_pods(embedded: YMap) -> bool:
    return runs_no_pods_of_its_own(str(embedded["kind"]), str(embedded["apiVersion"]), embedded)


def _is_pod_spec(node: YMap, walked: Walked) -> bool:
    """A mapping with a `containers` list whose items all are containers with a `name`, at
    least one with an image reference (a policy's wildcard pattern is none)."""
    containers = node.get("containers")
    if type(containers) is not YSeq or not containers:
        return False
    items = [c for _, c in walk_entries(containers, walked)]
    if not all(type(c) is YMap and isinstance(c.get("name"), str) for c in items):
        return False
    images = [c.get("image") for c in items]
    return any(
        type(i) is str and i and "{{" not in i and _PATTERN_CHARS.isdisjoint(i) for i in images
    )


def _is_template(parent: Any, spec: YMap, obj: YMap) -> bool:
    """Whether `spec` is the `spec` of a PodTemplateSpec (`metadata` and `spec`, nothing else)."""
    return (
        type(parent) is YMap
        and parent is not obj
        and parent.get("spec") is spec
        and set(parent) <= {"metadata", "spec"}
    )


_SELDON_GROUP = "mlops.seldon.io"


def with_server_configs(
    workloads: Sequence[Workload], *documents: Iterable[Document]
) -> tuple[Workload, ...]:
    """`workloads` with each Seldon Core 2 Server read as the pods the operator runs: its
    ServerConfig's pod spec with the Server's `podSpec` merged in (gpulint.operators
    seldon_server_pod), when its ServerConfig is among `documents` (the file's, the run's
    knowledge objects). A Server whose ServerConfig is not there is read from its own
    `podSpec` alone, marked so that gpulint.admission takes the missing one to possibly
    tolerate any taint."""
    return _with_objects_named(
        workloads,
        documents,
        ("Server", _SELDON_GROUP),
        ("ServerConfig",),
        lambda server, configs: _server_built(server, configs) or _completed_by_unknown(server),
    )


#: Objects of a kind by kind and name, each once: at the file and position it is written.
_Named = dict[tuple[str, str], dict[tuple[str, Pos], Document]]


def _with_objects_named(
    workloads: Sequence[Workload],
    documents: Iterable[Iterable[Document]],
    kind: tuple[str, str],
    named: tuple[str, ...],
    build: Callable[[Workload, _Named], Workload | None],
) -> tuple[Workload, ...]:
    """`workloads` with each of `kind` (its kind and API group) replaced by what `build`
    makes of it (None: kept as read) and of the objects of the `named` kinds of the same
    group among `documents`, which objects of that kind name."""
    found = [w for w in workloads if (w.kind, api_group(w.document.ref.api_version)) == kind]
    if not found:
        return tuple(workloads)
    objects: _Named = {}
    for document in itertools.chain(*documents):
        ref = document.ref
        if ref.kind in named and api_group(ref.api_version) == kind[1]:
            # The same object may come from the file and from the knowledge objects.
            place = (document.file.path, document.obj.pos)
            objects.setdefault((ref.kind, ref.name), {})[place] = document
    built = {id(w): build(w, objects) for w in found}
    return tuple(built.get(id(w)) or w for w in workloads)


_TRAINER_GROUP = "trainer.kubeflow.org"
_RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")


def with_training_runtimes(
    workloads: Sequence[Workload], *documents: Iterable[Document]
) -> tuple[Workload, ...]:
    """`workloads` with each Kubeflow Trainer TrainJob read as the pods Trainer runs: its
    trainer step's pod from the runtime its `runtimeRef` names, with the `trainer`'s fields
    (gpulint.operators trainjob_pod), when that runtime is among `documents` (the file's, the
    run's knowledge objects). A TrainJob whose runtime is not there is read from its `trainer`
    alone, marked so that gpulint.admission takes the runtime to possibly tolerate any taint."""
    return _with_objects_named(
        workloads, documents, ("TrainJob", _TRAINER_GROUP), _RUNTIME_KINDS, _trainjob_built
    )


def _trainjob_built(job: Workload, runtimes: _Named) -> Workload | None:
    """The TrainJob's workload with its pod built around its runtime's trainer step, or from
    its `trainer` alone and completed by the runtime when that is not known (or not one
    object); None when the TrainJob names no runtime or writes no `trainer`."""
    from gpulint.operators import trainer_pod_spec, trainjob_pod  # only runs with TrainJobs

    document = job.document
    spec = document.obj.get("spec")
    ref = spec.get("runtimeRef") if isinstance(spec, YMap) else None
    if not isinstance(spec, YMap) or not isinstance(ref, YMap) or not job.templates:
        return None
    name = ref.get("name")
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if not isinstance(name, str) or not name or not isinstance(kind, str):
        return None
    anchor = ref.pos_of_value("name")
    found = list(runtimes.get((kind, name), {}).values())
    if kind == "TrainingRuntime":
        # A TrainingRuntime is read from the TrainJob's own namespace.
        found = [d for d in found if d.ref.namespace == document.ref.namespace] or found
    runtime_pod = trainer_pod_spec(found[0].obj) if len(found) == 1 else None
    shape = shape_for(document)
    if shape is None or len(shape.roles) != 1:
        return None

    def build(obj: YMap, role_node: YMap) -> YMap:
        return trainjob_pod(role_node, runtime_pod, anchor)

    role = shape.roles[0]._replace(derive=build)
    workload = _typed(document, shape._replace(roles=(role,)), {})[0]
    if workload is None or runtime_pod is not None:
        return workload
    return _completed_by(workload, f"{kind} `{shown(name)}`", anchor)


def _completed_by_unknown(server: Workload) -> Workload:
    """The Server read from its own `podSpec`, each template marked as completed by a
    ServerConfig gpulint does not have."""
    spec = server.document.obj.get("spec")
    if not isinstance(spec, YMap) or not server.templates:
        return server
    name = spec.get("serverConfig")
    what = f"ServerConfig `{shown(name)}`" if name else "its ServerConfig"
    where = spec.pos_of_value("serverConfig") if name else spec.pos
    return _completed_by(server, what, where)


def _completed_by(workload: Workload, what: str, where: Pos) -> Workload:
    """`workload` with each template marked as completed by `what` (named at `where`), an
    object gpulint does not have: gpulint.admission takes it to possibly tolerate any taint."""
    templates = tuple(
        PodTemplate(
            **{
                **{field: getattr(t, field) for field in PodTemplate.__match_args__},
                "completed_by": (what, where),
            }
        )
        for t in workload.templates
    )
    fields = {field: getattr(workload, field) for field in Workload.__match_args__}
    return Workload(**{**fields, "templates": templates})


def _server_built(server: Workload, configs: _Named) -> Workload | None:
    """The Server's workload with its pods built from its ServerConfig; None when the
    ServerConfig is not known (or not one object)."""
    document = server.document
    spec = document.obj.get("spec")
    name = spec.get("serverConfig") if isinstance(spec, YMap) else None
    if not isinstance(name, str) or not isinstance(spec, YMap):
        return None
    found = list(configs.get(("ServerConfig", name), {}).values())
    if len(found) > 1:
        # The operator reads ServerConfigs from its own namespace, that of its Servers.
        namespace = document.ref.namespace
        found = [d for d in found if d.ref.namespace == namespace]
    if len(found) != 1:
        return None
    config_spec = found[0].obj.get("spec")
    pod = config_spec.get("podSpec") if isinstance(config_spec, YMap) else None
    if not isinstance(pod, YMap):
        return None
    shape = shape_for(document)
    if shape is None or len(shape.roles) != 1:
        return None
    anchor = spec.pos_of_value("serverConfig")

    def build(obj: YMap, role_node: YMap) -> YMap:
        from gpulint.operators import seldon_server_pod  # only runs with Seldon Servers

        return seldon_server_pod(role_node.get("podSpec"), pod, anchor)

    role = shape.roles[0]._replace(derive=build)
    return _typed(document, shape._replace(roles=(role,)), {})[0]
