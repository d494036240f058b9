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


def gpu_limit_pos(template: PodTemplate, resource: str | None) -> tuple[Container, Pos] | None:
    """The first container's GPU limit (or request) for `resource` (any GPU when None)."""
    for container in template.containers:
        for quantities in (container.resources.limits, container.resources.requests):
            for name, quantity in quantities.items():
                if (name == resource) if resource else is_gpu_resource(name):
                    return container, quantity.key_pos
    return None
