"""What a pod asks of accelerators: the GPU resources it requests, and where it writes them."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import TYPE_CHECKING

from gpulint.accelerators import (
    former_name,
    is_extended_resource,
    is_extender_resource,
    looks_like_accelerator,
)

if TYPE_CHECKING:
    from gpulint.model import Container, PodTemplate
    from gpulint.yamltree import Pos

# Node labels that say "this node has an NVIDIA GPU" (GPU Operator, NFD, GKE, EKS, AKS, Karpenter).
NVIDIA_NODE_LABELS = (
    "nvidia.com/gpu.present",
    "feature.node.kubernetes.io/pci-10de.present",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "kubernetes.azure.com/accelerator",
    "karpenter.k8s.aws/instance-gpu-count",
    "eks.amazonaws.com/instance-gpu-count",
)
# Labels only GPU nodes carry: the NVIDIA ones, and NFD's for AMD's GPU PCI vendor (1002; AMD's
# CPUs are 1022) and the AMD GPU Operator's.
_GPU_NODE_LABELS = frozenset(
    (*NVIDIA_NODE_LABELS, "feature.node.kubernetes.io/pci-1002.present", "amd.com/gpu.present")
)
# Operators of a required node affinity expression that keep a pod on nodes carrying the label.
_REQUIRING = frozenset({"In", "Exists", "Gt", "Lt"})


def is_gpu_resource(name: str) -> bool:
    """An extended resource that reads as an accelerator (`nvidia.com/gpu`, MIG profiles ...),
    or an accelerator's former name that is not one (Koordinator's `kubernetes.io/gpu`)."""
    return (is_extended_resource(name) or former_name(name) is not None) and (
        looks_like_accelerator(name)
    )


def accelerator_names(requests: Iterable[str]) -> list[str]:
    """The resource names among `requests` that read as accelerators, whatever their amount.

    What a pod or container tries to ask of accelerators, even where `gpu_requests` finds
    nothing a node counts: a zero (`nvidia.com/gpu: 0`), a scheduler extender's resource
    alone (HAMi's `nvidia.com/gpumem`), a name the API refuses (`gpu`).
    """
    return [name for name in requests if looks_like_accelerator(name)]


def gpu_requests(template: PodTemplate) -> dict[str, Decimal]:
    """The accelerator resources the pod requests (effective request, > 0) that nodes count.

    Resources that only a scheduler extender fits (HAMi's gpumem) are left out: no node
    lists them.
    """
    return {
        name: amount
        for name, amount in template.effective_requests.items()
        if amount > 0 and is_gpu_resource(name) and not is_extender_resource(name)
    }


def selects_gpu_nodes(template: PodTemplate) -> bool:
    """Whether the pod runs only on GPU nodes: its nodeSelector, or every term of its required
    node affinity, asks for a label only GPU nodes carry (NFD's NVIDIA PCI label, GFD's, a
    cloud's accelerator label).

    A GPU node agent (GPUStack's worker, an exporter) uses the node's GPUs through the GPU
    runtime without requesting any: it is a GPU pod for what admission does to it.
    """
    from gpulint.constraints import required_node_affinity

    if any(
        template.node_selector.get(label, "") not in ("", "false", "0")
        for label in _GPU_NODE_LABELS
    ):
        return True
    terms = required_node_affinity(template.spec)
    return bool(terms) and all(
        any(
            expression.key in _GPU_NODE_LABELS
            and expression.operator in _REQUIRING
            and "false" not in expression.values
            for expression in term.match_expressions
        )
        for term in terms
    )


def gpu_limit_pos(template: PodTemplate, resource: str | None) -> tuple[Container, Pos] | None:
    """The first container's GPU limit (or request) for `resource` (any GPU when None)."""
    for container in template.containers:
        for quantities in (container.resources.limits, container.resources.requests):
            for name, quantity in quantities.items():
                if (name == resource) if resource else is_gpu_resource(name):
                    return container, quantity.key_pos
    return None
