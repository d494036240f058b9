"""What rendering needs from the command line and the config: values sets, variables, cache.

Every run reads these (the config holds chart settings), so they are NamedTuples: cheaper to
define than frozen dataclasses.
"""

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gpulint.views import NamedTuple


class ValuesSet(NamedTuple):
    """One way to render a chart: values files (helm's `-f`) and `--set` assignments."""

    name: str | None = None  # None: the values given on the command line, or the defaults
    values: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()
    clusters: tuple[str, ...] = ()  # the named clusters it is applied to; (): every cluster


class ChartSettings(NamedTuple):
    """How one chart is rendered: release, namespace and its values sets."""

    release: str | None = None
    namespace: str | None = None
    sets: tuple[ValuesSet, ...] = (ValuesSet(),)


class ServedApis(NamedTuple):
    """The Kubernetes API versions a release serves, for a chart's capability probes.

    `helm template` answers `.Capabilities.APIVersions.Has` from the Kubernetes release helm
    was built with, whatever `--kube-version` says: a chart that picks `resource.k8s.io/v1`
    when it is served would be rendered in it for a cluster that serves only `v1beta1`.
    """

    #: `group/version` and `group/version/Kind` (`v1`, `v1/Pod` for the core group) it serves.
    served: frozenset[str]
    #: Kubernetes' own API groups (`""` for the core group): a probe of another group is a
    #: custom resource's, left to helm and gpulint.render.helm.probed_apis.
    groups: frozenset[str]

    def digest(self) -> str:
        """A hash of what it says, for the render cache's key."""
        import hashlib

        text = "\n".join(sorted(self.served)) + "\0" + "\n".join(sorted(self.groups))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RenderOptions(NamedTuple):
    """What rendering charts, overlays and env templates needs from the command line/config."""

    #: Per chart directory (as the user wrote it, resolved): settings from the config.
    charts: Mapping[Path, ChartSettings] = MappingProxyType({})
    #: Settings for charts given on the command line or found by walking.
    default: ChartSettings = ChartSettings()
    cache_dir: str | None = None  # --cache-dir; None: the profile cache's default place
    use_cache: bool = True
    #: The run's root (gpulint.api.LintOptions.root): the checked tree is the repository
    #: holding it. None: the working directory.
    root: str | None = None
    #: The tree and time budget every render shares (gpulint.render.tools.RenderRun); None:
    #: one starts with the first render of each check. Set it to share one budget between
    #: the checks of a `--fix` run.
    run: Any = None
    #: The named cluster a run checks (gpulint.clusters): values sets bound to others are
    #: not rendered. None: every values set.
    cluster: str | None = None
    #: The release of the cluster a run checks, `1.32` (the config's `kubernetesVersion:`, else
    #: the profile's): charts are rendered for it (helm's `--kube-version`). None: helm's default.
    kube_version: str | None = None
    #: What that release serves (ServedApis, or None to leave them to helm), asked for when a
    #: chart is rendered: a chart's probes of Kubernetes' own APIs are answered from it. None:
    #: helm's own answers (the release helm was built with).
    served_apis: Callable[[], ServedApis | None] | None = None

    def cache_path(self) -> Path | None:
        """Where renders are kept: next to the profile cache; None with --no-cache."""
        if not self.use_cache:
            return None
        from gpulint.profile.cache import profile_cache

        cache = profile_cache(self.cache_dir)
        return None if cache is None else cache.directory

    def settings_for(self, chart: Path) -> ChartSettings:
        """The settings the config gives `chart`, else the command line's."""
        return self.charts.get(chart.resolve(), self.default)


def shared_run(options: RenderOptions | None, root: str | None = None) -> RenderOptions:
    """`options` (the defaults for None) with one RenderRun for every check made with them:
    the checks of a `--fix` run share one time budget, started now, and one checked tree
    (that of `root`, default the working directory)."""
    from gpulint.render.tools import RenderRun

    options = options or RenderOptions()
    return options._replace(run=RenderRun.start(root or options.root))
