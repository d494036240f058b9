"""Which Kubernetes release a run checks objects against, and where that was learnt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulint.validation.apiversions import Release, release, shown
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.profile.model import ClusterProfile
    from gpulint.rules.base import CheckContext

#: The newest release gpulint knows of: the default target without a stated version.
NEWEST: Release = (1, 37)


class Target(NamedTuple):
    """The release objects are checked against."""

    release: Release
    source: str  # "the config's kubernetesVersion", "the cluster profile", "the default"
    # When `release` is only the oldest the API server can run (the newest kubelet of the
    # nodes): the newest it may run. What only some release between them refuses is a warning.
    upper: Release | None = None

    @property
    def name(self) -> str:
        """`Kubernetes 1.35`."""
        return f"Kubernetes {shown(self.release)}"


def target_of(ctx: CheckContext) -> Target:
    """The config's `kubernetesVersion`, else the cluster profile's version (stated, or the
    live server's), else the oldest release the profile's nodes allow (a lower bound), else the
    newest release gpulint knows (or the newest with installed schemas, when that is newer)."""
    found = _stated(ctx.kubernetes_version, ctx.profile)
    if found is None:
        return Target(_newest(), "the default")
    stated, source = found
    if source == _MINIMUM:
        # A kubelet is never newer than its API server, which may be up to three minor
        # releases ahead (the skew policy): the oldest is the target, and verdicts that a
        # newer release would change are warnings.
        newest = _newest()
        return Target(stated, source, newest if stated < newest else None)
    return Target(stated, source)


def stated_release(stated: str | None, profile: ClusterProfile | None) -> Release | None:
    """The release `target_of` takes from the config's `kubernetesVersion` (`stated`) or the
    cluster profile (its version, else its minimum); None when neither states one. Charts are
    rendered for it (gpulint.render), so a chart sees the release its objects are checked
    against."""
    found = _stated(stated, profile)
    return found[0] if found is not None else None


_MINIMUM = "the cluster profile's minimumKubernetesVersion"


def _stated(stated: str | None, profile: ClusterProfile | None) -> tuple[Release, str] | None:
    """The first release stated, and where: the config's `kubernetesVersion`, the profile's
    version, the profile's minimum."""
    candidates: list[tuple[object, str]] = [(stated, "the config's kubernetesVersion")]
    if profile is not None:
        candidates.append((profile.kubernetes_version, "the cluster profile"))
        candidates.append((profile.minimum_kubernetes_version, _MINIMUM))
    for text, source in candidates:
        if text and (found := release(str(text))) is not None:
            return found, source
    return None


def _newest() -> Release:
    from gpulint.validation.kube import releases

    installed = releases()
    return max(NEWEST, installed[-1]) if installed else NEWEST
