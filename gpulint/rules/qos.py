"""GPU601 gpu-pod-besteffort-cpu-memory: a GPU pod whose QoS class is BestEffort."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from gpulint.gpus import accelerator_names
from gpulint.model import QOS_RESOURCES, ContainerRole, of_kind
from gpulint.rules.base import CheckContext, Problem
from gpulint.views import NamedTuple
from gpulint.yamltree import YSeq

if TYPE_CHECKING:
    from gpulint.dra import Claim, DraObjects
    from gpulint.model import Container, PodTemplate

# gpulint.dra is imported only once a BestEffort pod declares resourceClaims.


def gpu_pod_besteffort(ctx: CheckContext) -> Iterator[Problem]:
    """QoS looks only at cpu and memory: a pod that asks only for GPUs (as resources or through
    DRA claims) is BestEffort, unless its namespace's LimitRange gives it cpu or memory."""
    if ctx.profile is not None and ctx.profile.provider == "gke-autopilot":
        # Autopilot gives a container that requests no cpu or memory its default requests
        # (cloud.google.com/kubernetes-engine/docs/concepts/autopilot-resource-requests,
        # "Default resource requests"): no pod it runs is BestEffort.
        return
    defaulted: frozenset[str] | None = None
    dra: DraObjects | None = None  # read for the first BestEffort pod that declares claims
    for workload, template in ctx.pod_templates():
        # A zero asks for nothing (`nvidia.com/gpu: "0"` beside a MIG slice): not named, and
        # a pod that asks only zeros asks no accelerator to be evicted from.
        asked = [
            (c, names)
            for c in template.containers
            if (names := accelerator_names(_nonzero(c.resources.effective_requests())))
        ]
        declares_claims = isinstance(template.spec.get("resourceClaims"), YSeq)
        if not asked and not declares_claims:
            continue
        if not template.best_effort:
            continue
        namespace = ctx.namespace_of(workload.document)
        claimed: list[_ClaimedAccelerators] = []
        if declares_claims:
            if dra is None:
                from gpulint.dra import dra_objects

                dra = dra_objects(ctx.knowledge, ctx.documents, ctx.profile, ctx.namespace_of)
            claimed = _claimed_accelerators(template, namespace, dra)
        if not asked and not claimed:
            continue
        if defaulted is None:
            defaulted = _defaulted_namespaces(ctx)
        if namespace in defaulted:
            continue
        first = _first_container(template, [c for c, _ in asked], claimed)
        if first is None:
            continue  # a pod without app containers: the API server refuses it
        yield Problem.at(
            template.document,
            first.resources.pos if first.resources.node is not None else first.pos,
            f"pod {_what_it_asks(asked, claimed)} but no container requests cpu or memory: its "
            f"QoS class is BestEffort, so it is the first pod evicted when the node runs short",
            f"Add cpu and memory requests to container `{first.name}` (limits equal to the "
            f"requests make the pod Guaranteed).",
        )


def _what_it_asks(
    asked: Sequence[tuple[Container, list[str]]], claimed: Sequence[_ClaimedAccelerators]
) -> str:
    """`requests nvidia.com/gpu`, `claims gpu.nvidia.com devices (ResourceClaimTemplate
    `single-gpu`)`, or both joined by `and`."""
    said = []
    if asked:
        said.append("requests " + ", ".join(sorted({n for _, names in asked for n in names})))
    if claimed:
        # A claim two entries name is one claim (and its devices one set).
        claims = dict.fromkeys(
            f"{', '.join(c.classes)} devices ({c.claim.kind} `{c.claim.name}`)" for c in claimed
        )
        said.append("claims " + ", ".join(claims))
    return " and ".join(said)


# ---------------------------------------------------------------------------------------------
# Accelerators a pod gets through Dynamic Resource Allocation


class _ClaimedAccelerators(NamedTuple):
    """A pod's `resourceClaims` entry whose claim surely gets accelerators."""

    entry: str  # the entry's name, as containers' `resources.claims` name it
    claim: Claim
    classes: tuple[str, ...]  # the accelerator DeviceClasses it requests


def _claimed_accelerators(
    template: PodTemplate, namespace: str, dra: DraObjects
) -> list[_ClaimedAccelerators]:
    """The pod's claims that surely get accelerators. A claim gpulint does not have, or whose
    DeviceClass it cannot tell hands out accelerators, is left out: the pod may ask for none."""
    from gpulint.dra import accelerator_classes, claim_of, pod_claims

    found = []
    for entry in pod_claims(template.spec):
        target = claim_of(entry, namespace, dra.claims)
        if target is not None and (classes := accelerator_classes(target, dra.classes.values())):
            found.append(_ClaimedAccelerators(entry.name, target, classes))
    return found


def _first_container(
    template: PodTemplate, asking: Sequence[Container], claimed: Sequence[_ClaimedAccelerators]
) -> Container | None:
    """Where cpu and memory requests go: the first container that asks for an accelerator or
    names an accelerator claim, else (the pod holds a claim no container names) the first app
    container."""
    entries = {c.entry for c in claimed}
    for container in template.containers:
        if container in asking:
            return container
        node = container.resources.node  # (its resources as read, whatever key holds them)
        if entries and node is not None and container.role is not ContainerRole.EPHEMERAL:
            from gpulint.dra import container_claim_names  # only a pod with claims gets here

            if entries.intersection(container_claim_names({"resources": node})):
                return container
    return next(iter(template.app_containers), None)


def _defaulted_namespaces(ctx: CheckContext) -> frozenset[str]:
    """Namespaces whose LimitRanges give a container that asks for no cpu or memory a request
    or a limit of one: LimitRanger writes a `Container` item's defaults into every container
    that lacks them, and the API's defaulting makes its `max` the default limit and its
    `default` limit, else its `min`, the default request (kubernetes/kubernetes
    pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem). Pods admitted there are never
    BestEffort."""
    if not of_kind(ctx.knowledge, "LimitRange") and not (ctx.profile and ctx.profile.limit_ranges):
        return frozenset()  # (and a run without one does not import the policy module)
    from gpulint.profile.policy import limit_ranges_in_effect

    found = set()
    for source in limit_ranges_in_effect(ctx.knowledge, ctx.profile, ctx.namespace_of):
        for item in source.limit_range.items:
            given = (item.max, item.min, item.default, item.default_request)
            if item.type == "Container" and any(
                r in QOS_RESOURCES for values in given for r in values
            ):
                found.add(source.limit_range.namespace)
    return frozenset(found)


def _nonzero(requests: dict[str, Decimal]) -> list[str]:
    return [name for name, amount in requests.items() if amount != 0]
