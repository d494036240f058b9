"""GPU108: GPU pods whose only pools are at zero nodes with a template the autoscaler cannot
read GPUs from.

cluster-autoscaler adds a node to a group at zero nodes only when its picture of a new node
(the node template) would run the pending pod. On Cluster API that picture comes from the
`capacity.cluster-autoscaler.kubernetes.io/*` annotations or the infrastructure template's
status: without `gpu-type` and `gpu-count`, a pod asking for GPUs looks like it never fits, the
autoscaler logs `NotTriggerScaleUp`, and the pod stays Pending although the machines have GPUs.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.gpus import gpu_limit_pos, gpu_requests
from gpulint.rules.base import CheckContext, Problem
from gpulint.scheduling import describe_pools, usable


def gpu_template_not_advertised(ctx: CheckContext) -> Iterator[Problem]:
    """The pod can only run on pools at zero whose autoscaler template lacks its GPUs."""
    profile = ctx.profile
    if profile is None or not any(p.template_missing for p in profile.pools):
        return
    for _, template in ctx.pod_templates(here=True):
        gpus = gpu_requests(template)
        if not gpus:
            continue
        placement = ctx.placement(template)
        pools = usable(placement.eligible)
        if not placement.decidable or not pools or any(p.nodes > 0 for p in pools):
            continue
        missing = [name for name in gpus if all(name in p.template_missing for p in pools)]
        if not missing:
            continue
        resource = missing[0]
        found = gpu_limit_pos(template, resource)
        pos = found[1] if found else template.spec.pos
        which = "has" if len(pools) == 1 else "have"
        yield Problem.at(
            template.document,
            pos,
            f"pod requests {resource}, and {describe_pools(pools)} it can run on {which} no "
            f"node now; cluster-autoscaler's template of "
            f"{'it' if len(pools) == 1 else 'them'} does not advertise {resource}, so it "
            f"never adds a node for this pod, which stays Pending",
            f"Make the node group's template advertise {resource}: on a Cluster API "
            f"MachineDeployment the annotations `capacity.cluster-autoscaler.kubernetes.io/"
            f"gpu-type: {resource}` and `capacity.cluster-autoscaler.kubernetes.io/gpu-count`; "
            f"on an AWS Auto Scaling group the tag `k8s.io/cluster-autoscaler/node-template/"
            f"resources/{resource}`; or keep a node in the pool (min size 1).",
        )
