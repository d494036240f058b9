"""Dynamic Resource Allocation: claims a pod names, classes a claim names, devices nodes offer.

GPU701 a container claims a name its pod does not declare; GPU702 a pod names a ResourceClaim
or ResourceClaimTemplate that does not exist; GPU703 a request names a DeviceClass that does
not exist; GPU704 a request wants more devices than any node's ResourceSlices publish; GPU705
two DeviceClasses serve the same extended resource name.

DRA objects come from every input (they are knowledge objects, read before the files are
checked) and from the profile (a kubectl dump that lists `deviceclasses,resourceslices,
resourceclaims,resourceclaimtemplates`, or a live cluster). Absence is only a defect where
gpulint can know: the profile lists objects of that kind, or the inputs define others of that
kind in the same namespace and the missing name is a near-miss of one of them (a typo, not an
object made elsewhere).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from gpulint.model import ContainerRole, Document
from gpulint.rules.base import CheckContext, Problem
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq

if TYPE_CHECKING:
    from gpulint.dra import DraObjects, PodClaim

# gpulint.dra is imported only once a pod declares claims or a DRA object is read: GPU701 and
# GPU702 look at every pod template, and most have no claims.

_CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")


def _objects(ctx: CheckContext) -> DraObjects:
    from gpulint.dra import dra_objects

    return dra_objects(ctx.knowledge, ctx.documents, ctx.profile, ctx.namespace_of)


def _did_you_mean(name: str, candidates: Sequence[str]) -> str:
    import difflib  # only for a finding

    # Never the name itself: it is the one that was not found.
    others = sorted({c for c in candidates if c != name})
    close = difflib.get_close_matches(name, others, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) or "none"


def _some(names: Sequence[str], most: int = 3) -> str:
    """`a`, `b`, `c` and 2 more."""
    shown = _names(names[:most])
    return f"{shown} and {len(names) - most} more" if len(names) > most else shown


# ---------------------------------------------------------------------------------------------
# GPU701


def container_claim_undeclared(ctx: CheckContext) -> Iterator[Problem]:
    """A container's `resources.claims[].name` names no entry of the pod's `resourceClaims`."""
    for _, template in ctx.pod_templates():
        declared: list[str] | None = None  # read once a container claims something
        for container in template.containers:
            if container.role is ContainerRole.EPHEMERAL:
                continue
            resources = container.resources.node
            entries = resources.get("claims") if isinstance(resources, YMap) else None
            if not isinstance(entries, YSeq):
                continue
            if declared is None:
                from gpulint.dra import pod_claims

                declared = [c.name for c in pod_claims(template.spec)]
            for index, entry in enumerate(entries):
                if not isinstance(entry, YMap) or not isinstance(entry.get("name"), str):
                    continue
                name = entry["name"]
                # A resource name written as a claim (`nvidia.com/gpu`) is GPU004's finding.
                if name in declared or "/" in name:
                    continue
                yield Problem.at(
                    template.document,
                    entry.pos_of_value("name") if "name" in entry else entries.pos_of_item(index),
                    f"container `{container.name}` claims `{name}`, which no entry of the pod's "
                    f"`resourceClaims` declares (declared: {_names(declared)})"
                    f"{_did_you_mean(name, declared)}; the API server rejects the pod",
                )


# ---------------------------------------------------------------------------------------------
# GPU702


def _claim_entry_pos(spec: YMap, entry: PodClaim) -> Pos:
    entries = spec.get("resourceClaims")
    if not isinstance(entries, YSeq):
        return spec.pos
    item = entries[entry.index]
    key = "resourceClaimTemplateName" if entry.template_name else "resourceClaimName"
    return item.pos_of_value(key) if isinstance(item, YMap) else entries.pos_of_item(entry.index)


def resource_claim_not_found(ctx: CheckContext) -> Iterator[Problem]:
    """A pod names a ResourceClaim or ResourceClaimTemplate that does not exist."""
    objects: DraObjects | None = None  # built for the first pod that declares claims
    for _, template in ctx.pod_templates():
        if not template.spec.get("resourceClaims"):
            continue
        from gpulint.dra import pod_claims

        entries = pod_claims(template.spec)
        if not entries:
            continue
        if objects is None:
            objects = _objects(ctx)
        namespace = ctx.namespace_of(template.document)
        for entry in entries:
            target = entry.target
            if target is None or not objects.claims_known(entry.kind, namespace):
                continue
            # A claim of the inputs may be in the profile too: each name once, sorted.
            same = sorted(
                {
                    c.name
                    for c in (*objects.claims, *objects.created)
                    if (c.kind, c.namespace) == (entry.kind, namespace)
                }
            )
            if target in same:
                continue
            hint = _did_you_mean(target, same)
            # Known from the inputs alone, a missing name is a defect only as a near-miss of one
            # they define: a chart renders its own templates beside names its values take for
            # templates made elsewhere (llm-d-modelservice's `decode.resourceClaims`).
            if not hint and entry.kind not in objects.profiled_claim_kinds:
                continue
            consequence = (
                "no claim is made for the pod"
                if entry.template_name
                else "the scheduler waits for it"
            )
            yield Problem.at(
                template.document,
                _claim_entry_pos(template.spec, entry),
                f"resourceClaims entry `{entry.name}` names {entry.kind} `{target}`, which does "
                f"not exist in namespace `{namespace}` (there: {_some(same)})"
                f"{hint}: {consequence} and the pod stays Pending",
            )


# ---------------------------------------------------------------------------------------------
# GPU703 and GPU704: the requests of ResourceClaims and ResourceClaimTemplates


class _RequestNode(NamedTuple):
    """Where one device request (or firstAvailable alternative) is written."""

    name: str
    node: YMap  # the mapping holding deviceClassName, count, allocationMode


def _request_nodes(document: Document) -> Iterator[_RequestNode]:
    spec = document.obj.get("spec")
    if document.ref.kind == "ResourceClaimTemplate" and isinstance(spec, YMap):
        spec = spec.get("spec")
    devices = spec.get("devices") if isinstance(spec, YMap) else None
    requests = devices.get("requests") if isinstance(devices, YMap) else None
    for request in requests if isinstance(requests, YSeq) else ():
        if not isinstance(request, YMap):
            continue
        name = str(request.get("name") or "")
        exactly = request.get("exactly")
        if isinstance(exactly, YMap):
            yield _RequestNode(name, exactly)
        alternatives = request.get("firstAvailable")
        for alternative in alternatives if isinstance(alternatives, YSeq) else ():
            if isinstance(alternative, YMap):
                yield _RequestNode(f"{name}/{alternative.get('name') or ''}", alternative)
        if "deviceClassName" in request:  # v1beta1: the request itself names the class
            yield _RequestNode(name, request)


def _claim_documents(ctx: CheckContext) -> Iterator[Document]:
    yield from (d for d in ctx.documents if d.ref.kind in _CLAIM_KINDS)


def device_class_not_found(ctx: CheckContext) -> Iterator[Problem]:
    """A claim's request names a DeviceClass that does not exist."""
    objects = _objects(ctx)
    known = objects.classes
    listed = bool(objects.profile_classes)  # the profile lists the cluster's classes
    for document in _claim_documents(ctx):
        for request in _request_nodes(document):
            name = request.node.get("deviceClassName")
            if not isinstance(name, str) or not name or name in known:
                continue
            from gpulint.dra import DRIVER_CLASSES, NOT_TYPO_TARGETS

            driver = DRIVER_CLASSES.get(name)
            # Without the cluster's list, a driver's class is taken as installed with the
            # driver, and only a near-miss of a class is surely wrong.
            if not listed and driver is not None:
                continue
            # A driver's own class is no typo: it is missing from the cluster, not misspelt.
            targets = [c for c in DRIVER_CLASSES if c not in NOT_TYPO_TARGETS]
            hint = "" if driver else _did_you_mean(name, [*known, *targets])
            if not listed and not hint:
                continue
            if not listed:
                where = "neither the inputs nor the DRA drivers gpulint knows define"
            else:
                where = f"the cluster does not define (it has {_some(sorted(known))})"
            installed_by = (
                f"; {driver} installs it, so that driver is not installed or runs a release "
                "without this class"
                if driver
                else ""
            )
            yield Problem.at(
                document,
                request.node.pos_of_value("deviceClassName"),
                f"request `{request.name}` names DeviceClass `{name}`, which {where}{hint}"
                f"{installed_by}: the claim can never be allocated",
            )


def device_request_exceeds_nodes(ctx: CheckContext) -> Iterator[Problem]:
    """A request wants more devices of a class than any node's ResourceSlices publish."""
    profile = ctx.profile
    if profile is None or not profile.resource_slices:
        return
    from gpulint.dra import ALLOCATION_ALL, devices_per_node

    objects = _objects(ctx)
    slices = profile.resource_slices
    for document in _claim_documents(ctx):
        for request in _request_nodes(document):
            name = request.node.get("deviceClassName")
            found = objects.classes.get(name) if isinstance(name, str) else None
            if found is None:
                continue
            mode = request.node.get("allocationMode")
            count = request.node.get("count", 1)
            if mode == ALLOCATION_ALL:
                count = 1  # every matching device of one node: at least one must exist
            if isinstance(count, bool) or not isinstance(count, int):
                continue
            per_node = devices_per_node(found, slices)
            most = max(per_node.values(), default=0)
            if count <= most:
                continue
            offered = (
                f"at most {most} on one node ({_busiest(per_node)})" if most else "none on any node"
            )
            key = "count" if "count" in request.node else "deviceClassName"
            yield Problem.at(
                document,
                request.node.pos_of_value(key),
                f"request `{request.name}` wants {count} device(s) of class `{name}`, but the "
                f"cluster's ResourceSlices publish {offered}: the claim can never be allocated",
            )


def _busiest(per_node: dict[str, int]) -> str:
    node = max(per_node, key=lambda n: (per_node[n], n))
    return "every node" if node == "*" else f"node {node}"


# ---------------------------------------------------------------------------------------------
# GPU705


def extended_resource_served_twice(ctx: CheckContext) -> Iterator[Problem]:
    """Two DeviceClasses name the same `extendedResourceName`; the scheduler uses one of them."""
    objects = _objects(ctx)
    owners: dict[str, str] = {}
    # The profile's classes first, then the inputs' in order: a later class is the second.
    for known in objects.profile_classes:
        if known.extended_resource_name:
            owners.setdefault(known.extended_resource_name, known.name)
    in_this_file = {id(d.obj) for d in ctx.documents}
    for view, document in objects.input_classes:
        resource = view.extended_resource_name
        if not resource:
            continue
        first = owners.setdefault(resource, view.name)
        if first == view.name or id(document.obj) not in in_this_file:
            continue
        spec = document.obj.get("spec")
        pos = (
            spec.pos_of_value("extendedResourceName")
            if isinstance(spec, YMap)
            else document.kind_pos
        )
        yield Problem.at(
            document,
            pos,
            f"DeviceClass `{view.name}` serves extended resource `{resource}`, which DeviceClass "
            f"`{first}` serves too: the scheduler maps the name to the newest of them, so pods "
            f"asking for `{resource}` get devices of one class only",
        )
