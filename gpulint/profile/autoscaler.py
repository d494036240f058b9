"""cluster-autoscaler's view of a node group at zero nodes: ASG node-template tags.

On AWS the autoscaler builds the node it would add from the Auto Scaling group's launch
template (instance type: cpu, memory, GPUs) and the group's tags
`k8s.io/cluster-autoscaler/node-template/label/<key>` (= value),
`.../taint/<key>` (= `value:effect`) and `.../resources/<name>` (= quantity). A label the
tags do not carry is not on that template, so a pod that selects it never triggers a scale-up
from zero; a pod that selects none of them does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpulint.errors import GpulintError
from gpulint.profile.instances import NVIDIA
from gpulint.profile.model import Taint
from gpulint.profile.nodes import is_accelerator_resource
from gpulint.profile.values import location, mapping, sequence, text
from gpulint.quantity import parse_quantity

TAG_PREFIX = "k8s.io/cluster-autoscaler/node-template/"
#: Effect spellings Kubernetes, eksctl and the EKS/GKE APIs accept -> the Kubernetes spelling.
EFFECTS: Mapping[str, str] = {
    "NoSchedule": "NoSchedule",
    "PreferNoSchedule": "PreferNoSchedule",
    "NoExecute": "NoExecute",
    "NO_SCHEDULE": "NoSchedule",
    "PREFER_NO_SCHEDULE": "PreferNoSchedule",
    "NO_EXECUTE": "NoExecute",
}


def taint_list(display: str, raw: Any, field_path: str) -> tuple[Taint, ...]:
    """A list of Kubernetes taints (`key`, `value`, `effect`) written at `field_path`;
    raises GpulintError at the entry that lacks a key or a known effect."""
    entries = sequence(raw)
    found = []
    for index, item in enumerate(entries):
        item = mapping(item)
        effect = item.get("effect")
        if not item.get("key") or effect not in EFFECTS:
            raise GpulintError(
                f"{location(display, entries, index)}: {field_path}.{index}: expected a key "
                "and an effect NoSchedule, PreferNoSchedule or NoExecute"
            )
        found.append(Taint(str(item["key"]), text(item.get("value")), EFFECTS[effect]))
    return tuple(found)


@dataclass(frozen=True)
class NodeTemplate:
    """What node-template tags add to the autoscaler's zero-node template."""

    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    resources: Mapping[str, Decimal] = field(default_factory=dict)

    @property
    def tagged(self) -> bool:
        """True when any node-template tag is present."""
        return bool(self.labels or self.taints or self.resources)


def node_template_from_tags(tags: Mapping[str, Any]) -> NodeTemplate:
    """The labels, taints and resources of `k8s.io/cluster-autoscaler/node-template/*` tags.

    A taint tag whose value is not `value:effect` and a resource tag that is not a quantity are
    left out, as the autoscaler leaves them out.
    """
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    resources: dict[str, Decimal] = {}
    for key, raw in tags.items():
        key = str(key)
        if not key.startswith(TAG_PREFIX):
            continue
        kind, _, name = key[len(TAG_PREFIX) :].partition("/")
        value = "" if raw is None else str(raw)
        if kind == "label" and name:
            labels[name] = value
        elif kind == "taint" and name:
            taint_value, sep, effect = value.rpartition(":")
            if sep and effect in EFFECTS:
                taints.append(Taint(name, taint_value, EFFECTS[effect]))
        elif kind == "resources" and name:
            amount = parse_quantity(value)
            if amount is not None:
                resources[name] = amount
    return NodeTemplate(labels, tuple(taints), resources)


#: Labels the AWS provider puts on every zero-node template itself (its generic labels).
GENERIC_LABELS = frozenset(
    {
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "kubernetes.io/hostname",
        "node.kubernetes.io/instance-type",
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
    }
)


def template_lacks(template: NodeTemplate, labels: Mapping[str, str]) -> tuple[str, ...]:
    """The keys of `labels` (a group's own node labels) that the tags do not carry with the
    same value: the autoscaler's zero-node template lacks them.

    The autoscaler builds that template from the instance type whatever the tags say, so a
    group scales from zero all the same, but only for pods that require none of these labels.
    A taint the tags leave out lacks too, and only makes the autoscaler add a node the pod
    then does not tolerate: the scheduler's verdict on the real taint already covers it.
    """
    return tuple(
        k for k, v in labels.items() if k not in GENERIC_LABELS and template.labels.get(k) != v
    )


def aws_template_missing(
    allocatable: Mapping[str, Decimal], template: NodeTemplate
) -> tuple[str, ...]:
    """The accelerator resources a node of an Auto Scaling group has that cluster-autoscaler's
    zero-node template does not advertise.

    The AWS provider sizes the template from the instance type (cpu, memory and NVIDIA GPUs)
    and then the `resources/<name>` tags; any other accelerator (`aws.amazon.com/neuron`,
    `amd.com/gpu`) is in the template only when a tag advertises it, and a tag of 0 removes it.
    """
    missing = []
    for name, amount in allocatable.items():
        if amount <= 0 or not is_accelerator_resource(name):
            continue
        advertised = template.resources.get(name, amount if name == NVIDIA else Decimal(0))
        if advertised <= 0:
            missing.append(name)
    return tuple(missing)
