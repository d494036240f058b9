"""The cluster profile: what gpulint knows about the cluster a manifest will be applied to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpulint.profile.model import (
    ClusterProfile,
    GpuUser,
    LimitRange,
    LimitRangeItem,
    Pool,
    PriorityClass,
    ResourceQuota,
    ScopeRequirement,
    Taint,
)

if TYPE_CHECKING:
    from gpulint.profile.cache import ProfileCache

__all__ = [
    "ClusterProfile",
    "GpuUser",
    "LimitRange",
    "LimitRangeItem",
    "Pool",
    "PriorityClass",
    "ResourceQuota",
    "ScopeRequirement",
    "Taint",
    "load_profiles",
]


def load_profiles(
    paths: Sequence[str],
    pool_label: str | None = None,
    cache: ProfileCache | None = None,
    root: str | None = None,
) -> ClusterProfile:
    """Read and merge `--profile` inputs (relative ones from `root` when given), later files
    winning (see gpulint.profile.load)."""
    # Imported here: `gpulint check` without --profile must not pay for the importers.
    from gpulint.profile.load import load_profiles as load

    return load(paths, pool_label, cache, root)
