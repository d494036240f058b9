"""The cluster profile: what gpulint knows about the cluster a manifest will be applied to."""

from __future__ import annotations

from gpulint.profile.model import (
    ClusterProfile,
    LimitRange,
    LimitRangeItem,
    Pool,
    PriorityClass,
    ResourceQuota,
    ScopeRequirement,
    Taint,
)

__all__ = [
    "ClusterProfile",
    "LimitRange",
    "LimitRangeItem",
    "Pool",
    "PriorityClass",
    "ResourceQuota",
    "ScopeRequirement",
    "Taint",
]
