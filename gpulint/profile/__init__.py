"""The cluster profile: what gpulint knows about the cluster a manifest will be applied to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpulint.profile.model import ClusterProfile, GpuUser, Pool, Taint

if TYPE_CHECKING:
    from gpulint.profile.cache import ProfileCache
    from gpulint.profile.objects import (
        LimitRange,
        LimitRangeItem,
        PriorityClass,
        ResourceQuota,
        ScopeRequirement,
    )

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


#: The classes of __all__ that gpulint.profile.objects defines.
_OBJECTS = frozenset(
    {"LimitRange", "LimitRangeItem", "PriorityClass", "ResourceQuota", "ScopeRequirement"}
)


def __getattr__(name: str) -> object:
    """The object classes of __all__, defined on first use (see gpulint.profile.objects)."""
    if name in _OBJECTS:
        from gpulint.profile import objects

        return getattr(objects, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
