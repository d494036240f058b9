"""The resolved run the engine is fed: every option of `lint()` settled, every path absolute.

`gpulint.api` turns a `LintOptions` into one `Run` (the selection merged and its rules picked,
the profile read, paths taken from the root); the engine reads nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from gpulint.config import Config
from gpulint.loader import display_path
from gpulint.views import NamedTuple, frozen_record

if TYPE_CHECKING:
    from gpulint.live.verdict import DryRun
    from gpulint.loader import Input
    from gpulint.profile.model import ClusterProfile
    from gpulint.render.options import RenderOptions
    from gpulint.rules.base import Rule


class Alongside(NamedTuple):
    """Files another config governs, checked in the same command against the same cluster:
    corpus-wide rules count their objects with the run's own (a workload's replicas in two
    teams' folders share one pool), and their findings are their own config's run's."""

    paths: Sequence[str]  # absolute under the run's root, as that config's run reads them
    config: Config
    cluster: str | None = None  # the name that config gives the cluster (its `applied-to`)


@frozen_record
class Run:
    """One run, resolved: what to read, the rules to run, and how to name what it reports."""

    paths: Sequence[str]  # absolute under `root`; `-` stands for `stdin`
    config: Config
    rules: Sequence[Rule]  # the rules the selection picked, in code order
    profile: ClusterProfile | None = None
    namespace: str | None = None  # assumed for objects that name none
    dry_run: DryRun | None = None  # what a server's dry-run refused (GPU900)
    stdin: Input | None = None  # (name, bytes), or a RenderedInput of rendered output
    overlay: Mapping[str, bytes] | None = None  # input names to the bytes checked instead
    render: RenderOptions | None = None
    allow_empty: bool = True
    # Reported files are named relative to it (None: as read); `shown` names some otherwise
    # (stdin's, exactly as given).
    root: str | None = None
    shown: Mapping[str, str] = field(default_factory=dict)
    jobs: int = 1
    keep_checked: bool = True
    spool_findings: bool = False
    # The named cluster this run checks (gpulint.clusters): what the config applies to other
    # clusters only is not read. None: one cluster, or none named.
    cluster: str | None = None
    # Where per-file results are kept between runs (gpulint.engine.cache); None: not kept.
    results_cache: str | None = None
    warn: Callable[[str], None] | None = None  # told why the cache cannot be used
    alongside: Sequence[Alongside] = ()

    def display(self, path: str) -> str:
        """How the report names the file read as `path`: the one place paths become names."""
        if self.root is None:
            return path
        return self.shown.get(path) or display_path(path, self.root)
