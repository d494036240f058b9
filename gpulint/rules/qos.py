"""GPU601 gpu-pod-besteffort-cpu-memory: a GPU pod whose QoS class is BestEffort."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gpulint.gpus import accelerator_names
from gpulint.rules.base import CheckContext, Problem


def gpu_pod_besteffort(ctx: CheckContext) -> Iterator[Problem]:
    """QoS looks only at cpu and memory: a pod that asks only for GPUs is BestEffort."""
    if ctx.profile is not None and ctx.profile.provider == "gke-autopilot":
        # Autopilot gives a container that requests no cpu or memory its default requests
        # (cloud.google.com/kubernetes-engine/docs/concepts/autopilot-resource-requests,
        # "Default resource requests"): no pod it runs is BestEffort.
        return
    for _, template in ctx.pod_templates():
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


def _nonzero(requests: dict[str, Decimal]) -> list[str]:
    return [name for name, amount in requests.items() if amount != 0]
