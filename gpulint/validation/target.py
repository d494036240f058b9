"""Which Kubernetes release a run checks objects against, and where that was learnt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulint.validation.apiversions import Release, release, shown
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.rules.base import CheckContext

#: The newest release gpulint knows of: the default target without a stated version.
NEWEST: Release = (1, 37)


class Target(NamedTuple):
    """The release objects are checked against."""

    release: Release
    source: str  # "the config's kubernetesVersion", "the cluster profile", "the default"

    @property
    def name(self) -> str:
        """`Kubernetes 1.35`."""
        return f"Kubernetes {shown(self.release)}"


def target_of(ctx: CheckContext) -> Target:
    """The config's `kubernetesVersion`, else the cluster profile's version, else the newest
    release gpulint knows (or the newest with installed schemas, when that is newer)."""
    stated = ctx.kubernetes_version
    if stated and (found := release(stated)) is not None:
        return Target(found, "the config's kubernetesVersion")
    profile = ctx.profile
    if profile is not None and profile.kubernetes_version:
        found = release(str(profile.kubernetes_version))
        if found is not None:
            return Target(found, "the cluster profile")
    from gpulint.validation.kube import releases

    installed = releases()
    newest = max(NEWEST, installed[-1]) if installed else NEWEST
    return Target(newest, "the default")
