"""GPU601 gpu-pod-besteffort-cpu-memory: a GPU pod whose QoS class is BestEffort."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gpulint.gpus import accelerator_names
from gpulint.model import of_kind
from gpulint.rules.base import CheckContext, Problem


def gpu_pod_besteffort(ctx: CheckContext) -> Iterator[Problem]:
    """QoS looks only at cpu and memory: a pod that asks only for GPUs is BestEffort, unless
    its namespace's LimitRange gives it cpu or memory."""
    if ctx.profile is not None and ctx.profile.provider == "gke-autopilot":
        # Autopilot gives a container that requests no cpu or memory its default requests
        # (cloud.google.com/kubernetes-engine/docs/concepts/autopilot-resource-requests,
        # "Default resource requests"): no pod it runs is BestEffort.
        return
    defaulted: frozenset[str] | None = None
    for workload, template in ctx.pod_templates():
        # A zero asks for nothing (`nvidia.com/gpu: "0"` beside a MIG slice): not named, and
        # a pod that asks only zeros asks no accelerator to be evicted from.
        asked = [
            (c, names)
            for c in template.containers
            if (names := accelerator_names(_nonzero(c.resources.effective_requests())))
        ]
        if not asked:
            continue
        if not template.best_effort:
            continue
        if defaulted is None:
            defaulted = _defaulted_namespaces(ctx)
        if ctx.namespace_of(workload.document) in defaulted:
            continue
        first = asked[0][0]
        gpus = ", ".join(sorted({name for _, names in asked for name in names}))
        yield Problem.at(
            template.document,
            first.resources.pos,
            f"pod requests {gpus} but no container requests cpu or memory: its QoS class is "
            f"BestEffort, so it is the first pod evicted when the node runs short",
            f"Add cpu and memory requests to container `{first.name}` (limits equal to the "
            f"requests make the pod Guaranteed).",
        )


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
            if item.type == "Container" and any(r in _QOS for values in given for r in values):
                found.add(source.limit_range.namespace)
    return frozenset(found)


#: The resources a pod's QoS class is computed from.
_QOS = frozenset({"cpu", "memory"})


def _nonzero(requests: dict[str, Decimal]) -> list[str]:
    return [name for name, amount in requests.items() if amount != 0]
