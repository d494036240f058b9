"""The library entry point: `lint(paths, LintOptions(...)) -> LintResult`.

`lint` resolves its options into one run record (`gpulint.engine.record.Run`): the command
line's selection merged over the config once and the rules it selects picked, the profile read
(from its inputs, a named cluster's, or a live cluster), every path taken from the root. The
engine (`gpulint.engine`) checks that run; named clusters are one run each (sharing what does
not depend on the profile), their findings merged (`gpulint.clusters`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpulint.config import Config
from gpulint.engine.plan import KNOWLEDGE_KINDS
from gpulint.engine.pool import available_cpus
from gpulint.engine.record import Alongside, Run
from gpulint.engine.run import run, run_clusters
from gpulint.errors import GpulintError
from gpulint.findings import LintResult
from gpulint.loader import STDIN, RenderedInput
from gpulint.rules import Rule, registry, rule_codes
from gpulint.views import frozen_record

if TYPE_CHECKING:
    from gpulint.live.client import ConnectionOptions
    from gpulint.live.verdict import DryRun
    from gpulint.profile.model import ClusterProfile
    from gpulint.render.options import RenderOptions, ServedApis
    from gpulint.validation.apiversions import Release

__all__ = [
    "KNOWLEDGE_KINDS",
    "LintOptions",
    "available_cpus",
    "lint",
    "read_profile",
    "with_overrides",
    "with_profile",
]


@frozen_record
class LintOptions:
    """Everything a run takes besides the paths: what `gpulint check` reads from its options.

    `lint(paths, options)`, or `lint(paths, field=value, ...)` for the fields to change.
    """

    config: Config = field(default_factory=Config)
    # Command-line selection, applied over `config` as `gpulint check` applies its options
    # (see `with_overrides`); None: as the config says.
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    report_unused_ignores: bool | None = None
    profile: ClusterProfile | None = None
    # Profile inputs read for the run (ClusterProfile, kubectl dump, eksctl config), instead of
    # `profile`; through the cache in `cache_dir` when `use_cache`.
    profile_paths: tuple[str, ...] = ()
    # Named clusters (name -> profile inputs): every rule runs against each, and the findings
    # are merged (gpulint.clusters); None: `profile_paths`, else the config's `clusters:`.
    clusters: Mapping[str, tuple[str, ...]] | None = None
    pool_label: str | None = None
    cache_dir: str | None = None
    use_cache: bool = False
    warn: Callable[[str], None] | None = None  # told what the run does not do, and why
    # Live mode: the profile is read from this cluster; `server_dry_run` dry-runs every object.
    live: ConnectionOptions | None = None
    server_dry_run: bool = False
    dry_run: DryRun | None = None  # what a server's dry-run refused (live mode sets it)
    stdin: tuple[str, bytes] | None = None  # `-` among the paths: (display name, bytes)
    # The directory relative paths among `paths` (and `overlay`'s names) are taken from, and
    # findings name files relative to (see lint); None: paths as given.
    root: str | None = None
    namespace: str | None = None  # assumed for objects that name none
    jobs: int = 1
    keep_checked: bool = True
    spool_findings: bool = False
    rules: Sequence[Rule] | None = None
    overlay: Mapping[str, bytes] | None = None
    render: RenderOptions | None = None
    allow_empty: bool = True
    # The paths other configs govern in the same command, each with its config (a directory
    # walk over two teams' folders, each with its `.gpulint.yaml`): corpus-wide rules count
    # their objects with this run's wherever both are judged against the same cluster (the
    # same profile given to both, or a named cluster of the same name or profile inputs); their
    # findings are their own configs' runs'.
    alongside: Sequence[tuple[Sequence[str], Config]] = ()


def with_overrides(
    config: Config,
    *,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    report_unused_ignores: bool | None = None,
) -> Config:
    """`config` with command-line selection applied; raises GpulintError for a selector that
    selects no rule.

    `select` starts a new selection (as in ruff): the config's ignore and extend-select no
    longer apply, so `select=["GPU002"]` runs GPU002 whatever the file says.
    """
    if select:
        config = replace(config, extend_select=(), ignore=())
    config = config.with_overrides(
        select=tuple(select) if select else None,
        extend_select=tuple(extend_select) if extend_select else None,
        ignore=tuple(ignore) if ignore else None,
        report_unused_ignores=report_unused_ignores,
    )
    codes = rule_codes()
    for group in (config.select, config.extend_select, config.ignore):
        for selector in group or ():
            if selector != "ALL" and not any(code.startswith(selector) for code in codes):
                raise GpulintError(f"`{selector}` selects no rule (see `gpulint rules`)")
    return config


def lint(paths: Sequence[str], options: LintOptions | None = None, **changes: Any) -> LintResult:
    """Check the manifests under `paths` (and `stdin`) as `gpulint check` does; the findings.

    `changes` are LintOptions fields. `-` among `paths` stands for `options.stdin`. A profile
    is read from `profile_paths` or, with `live`, from the cluster (whose notes join the
    result's); `dry_run` (live mode with `server_dry_run`) sends the objects to the API server
    before the rules run, so GPU900 can report what it refused. `jobs` > 1 checks files in that
    many processes when the input is large enough to pay for them; the result is the same.
    `keep_checked=False` leaves `LintResult.checked` empty (only the JUnit report lists every
    object). `spool_findings=True` keeps the findings in a temporary file
    (`LintResult.findings` is then a FindingSpool: iterable, not indexable), so a run's memory
    does not grow with its findings. `rules` replaces the catalogue's rules (a catalogue of
    one's own, see `gpulint.catalogue.read_records`). `overlay` maps input names to the bytes
    to check instead of theirs (fixes not yet written). `render` says how charts and overlays
    among the inputs are rendered (gpulint.render); their findings point at the files the
    author edits.

    `root` makes the run independent of the working directory, which it never reads:
    relative paths (and stdin's name, and the values files of `render`) are relative to it,
    files inside it are reported relative to it (`k8s/a.yaml`) and others by their absolute
    paths; stdin is reported under its name as given. The command line passes its working
    directory, as ruff reports paths. Without `root`, paths are read and reported as given
    (a relative one means what it means to any file function). A config without a file
    (`Config(root=None)`) takes `root` as the directory its globs are relative to. Profile
    inputs (`profile_paths`, `clusters`) and `cache_dir` are relative to it too; messages and
    the profile name the profile inputs as given, and Terraform files relative to `root`.
    Live mode finds its kubeconfig as kubectl does (`--kubeconfig` as given, `$KUBECONFIG`).

    Raises GpulintError for a missing or unreadable path or profile, a bad
    selector, a chart or overlay that cannot be rendered, and (with `allow_empty` False)
    stdin or a render without any Kubernetes object.
    """
    if isinstance(paths, str):  # a str is a sequence of one-letter paths
        raise TypeError("lint() takes a list of paths: lint([path]), not lint(path)")
    options = replace(options or LintOptions(), **changes)
    from gpulint.filetypes import forget_directories

    # Whether a directory links out of the tree is looked up again by each run of a process.
    forget_directories()
    # The one place the selection is resolved: every cluster's run shares it.
    config = with_overrides(
        options.config,
        select=options.select,
        extend_select=options.extend_select,
        ignore=options.ignore,
        report_unused_ignores=options.report_unused_ignores,
    )
    clusters = options.clusters
    if clusters is None and not options.profile_paths and options.profile is None:
        clusters = config.clusters if options.live is None else None
    if clusters:
        return _lint_clusters(paths, options, config, clusters)
    if options.live is not None:
        return _lint_live(paths, options, config)
    return run(_record(paths, with_profile(options), config, _alongside(options, config)))


def with_profile(options: LintOptions) -> LintOptions:
    """`options` with its `profile_paths` read into `profile`, as lint() reads them: for a
    caller that runs lint() again on the same options (`gpulint check --fix`, once per pass
    over the fixed texts)."""
    if not options.profile_paths:
        return options
    if options.profile is not None:
        raise GpulintError("give a profile or profile paths, not both")
    return replace(options, profile=_read_profile(options, options.profile_paths), profile_paths=())


def read_profile(
    paths: Sequence[str],
    pool_label: str | None = None,
    cache_dir: str | None = None,
    use_cache: bool = False,
    warn: Callable[[str], None] | None = None,
    root: str | None = None,
) -> ClusterProfile | None:
    """The merged profile of `paths` (None: none given), through the cache in `cache_dir` if
    `use_cache` (`warn` is told when the cache cannot be used).

    Relative paths, `cache_dir` among them, are taken from `root` when given; messages name
    the profile inputs as given."""
    if not paths:
        return None
    # Only now: a run without a profile does not import the importers.
    from gpulint.profile import load_profiles

    cache = None
    if use_cache:
        from gpulint.profile.cache import profile_cache

        cache = profile_cache(_under(root, cache_dir), warn=warn)
    return load_profiles(paths, pool_label, cache, root)


def _read_profile(options: LintOptions, paths: Sequence[str]) -> ClusterProfile | None:
    """read_profile() of `paths` with the cache, pool label and root of `options`."""
    return read_profile(
        paths, options.pool_label, options.cache_dir, options.use_cache, options.warn, options.root
    )


def _under(root: str | None, path: str | None) -> str | None:
    """`path` taken from `root` (None and absolute paths as they are)."""
    return path if root is None or path is None else os.path.join(root, path)


def _lint_clusters(
    paths: Sequence[str],
    options: LintOptions,
    config: Config,
    clusters: Mapping[str, Sequence[str]],
) -> LintResult:
    """A run against each named cluster's profile inputs, the findings merged."""
    from gpulint.clusters import merge_results

    if options.live is not None:
        raise GpulintError("--live reads one cluster: drop the named --profile clusters")
    # Findings are merged in memory, so no run spools them.
    options = replace(options, spool_findings=False)
    from gpulint.render.options import RenderOptions

    records = {}
    for name, files in clusters.items():
        try:
            profile = _read_profile(options, files)
        except GpulintError as exc:
            raise GpulintError(f"cluster {name}: {exc}") from exc
        # What the config applies to other clusters only is not read in this one's run.
        render = (options.render or RenderOptions())._replace(cluster=name)
        bound = replace(options, profile=profile, render=render)
        alongside = _alongside(options, config, name, files)
        records[name] = replace(_record(paths, bound, config, alongside), cluster=name)
    # The runs share what does not depend on the profile (gpulint.engine.run.run_clusters).
    return merge_results(run_clusters(records))


def _lint_live(paths: Sequence[str], options: LintOptions, config: Config) -> LintResult:
    """A run against the profile read from the cluster; the cluster's notes join the result's."""
    assert options.live is not None
    if options.profile is not None or options.profile_paths:
        raise GpulintError("--live reads the profile from the cluster: drop --profile")
    from gpulint.live.session import open_live

    cluster = open_live(options.live, options.pool_label)
    try:
        dry_run = cluster.dry_run if options.server_dry_run else None
        live = replace(options, profile=cluster.profile, dry_run=dry_run)
        result = run(_record(paths, live, config, _alongside(options, config)))
    finally:
        cluster.close()
    return replace(result, notes=(*cluster.notes, *result.notes))


def _alongside(
    options: LintOptions,
    config: Config,
    cluster: str | None = None,
    inputs: Sequence[str] = (),
) -> tuple[Alongside, ...]:
    """The other configs' paths (`options.alongside`) judged against the cluster this run
    checks: every one when the options give the profile (the command line's applies to every
    config), else those whose config names `cluster` too, or a cluster of the same profile
    inputs (`inputs`), or, when this run has none, those whose config names none either."""
    others = [([p for p in paths if p != STDIN], c) for paths, c in options.alongside]
    if not others:
        return ()
    if options.clusters or options.profile_paths or options.profile or options.live:
        return tuple(Alongside(tuple(p), c, cluster) for p, c in others)
    if cluster is None or not config.clusters:
        return tuple(Alongside(tuple(p), c) for p, c in others if not c.clusters)
    same = tuple(inputs)
    return tuple(
        Alongside(tuple(paths), other, name)
        for paths, other in others
        for name, files in other.clusters.items()
        if name == cluster or tuple(files) == same
    )


def _record(
    paths: Sequence[str],
    options: LintOptions,
    config: Config,
    alongside: Sequence[Alongside] = (),
) -> Run:
    """The run `options` (its profile read) describe, every path it reads taken from `root`:
    what the engine checks."""
    candidates = registry() if options.rules is None else options.rules
    selected = tuple(r for r in candidates if config.is_selected(r.code, r.enabled))
    profile = _with_platform(options.profile, config)
    record = Run(
        paths=tuple(paths),
        config=config,
        rules=selected,
        profile=profile,
        namespace=options.namespace,
        dry_run=options.dry_run,
        stdin=options.stdin,
        overlay=options.overlay,
        render=_for_release(options.render, config, profile),
        allow_empty=options.allow_empty,
        jobs=options.jobs,
        keep_checked=options.keep_checked,
        spool_findings=options.spool_findings,
        results_cache=_results_cache(options),
        warn=options.warn,
        alongside=tuple(alongside),
    )
    root = options.root
    return record if root is None else _from_root(record, root)


def _for_release(
    render: RenderOptions | None, config: Config, profile: ClusterProfile | None
) -> RenderOptions | None:
    """`render` with the release charts are rendered for: the one the run checks objects
    against, when the config or the profile states it (a chart whose `kubeVersion:` excludes
    helm's own default release renders for the cluster it is installed on)."""
    if config.kubernetes_version is None and profile is None:
        return render  # a plain run imports nothing more
    from gpulint.render.options import RenderOptions
    from gpulint.validation.apiversions import shown
    from gpulint.validation.target import stated_release

    found = stated_release(config.kubernetes_version, profile)
    if found is None:
        return render
    # Asked for only when a chart is rendered: a run without one reads no schema.
    served = functools.partial(_served_apis, found)
    return (render or RenderOptions())._replace(kube_version=shown(found), served_apis=served)


def _served_apis(found: Release) -> ServedApis | None:
    """What release `found` serves, for the charts' probes of Kubernetes' own APIs (helm
    answers them from its own release otherwise); None without the `schema` extra."""
    from gpulint.render.options import ServedApis
    from gpulint.validation import kube

    if not kube.available():
        return None
    known = kube.served_apis(found)
    return None if known is None else ServedApis(*known)


def _with_platform(profile: ClusterProfile | None, config: Config) -> ClusterProfile | None:
    """`profile` with the config's `platform:` and `admission:` over what it declares or its
    inputs show, as a ClusterProfile's `spec.platform` and `spec.admission` are applied."""
    if profile is None or (config.platform is None and not config.admission):
        return profile
    where = config.path or "the config"
    if config.platform is not None:
        profile = replace(profile, provider=config.platform, provider_source=f"declared in {where}")
    for key, attribute in (
        ("extendedResourceToleration", "extended_resource_toleration"),
        ("podTolerationRestriction", "pod_toleration_restriction"),
    ):
        declared = config.admission.get(key)
        if declared is not None:
            changes = {
                attribute: declared,
                f"{attribute}_source": f"declared in {where} (admission)",
            }
            profile = replace(profile, **changes)
    return profile


def _results_cache(options: LintOptions) -> str | None:
    """The cache directory per-file results are kept in (taken from `root`); None without
    `use_cache`, or with a dry-run, whose verdicts come from a server rather than the files."""
    if not options.use_cache or options.dry_run is not None:
        return None
    from gpulint.cachedir import cache_dir

    place = cache_dir(_under(options.root, options.cache_dir))
    return None if place is None else os.fspath(place)


def _from_root(record: Run, root: str) -> Run:
    """`record` with every path it reads absolute under `root`, and its findings named
    relative to it (stdin's name as given)."""
    overlay = record.overlay
    if overlay:
        overlay = {os.path.join(root, name): data for name, data in overlay.items()}
    stdin = record.stdin
    shown: dict[str, str] = {}
    if stdin is not None:
        # Its name is a path too (`--stdin-filename k8s/a.yaml`): per-file-ignores match it.
        # Findings name it exactly as given, which --fix looks for.
        named = os.path.join(root, stdin[0])
        shown[named] = stdin[0]
        stdin = (
            stdin._replace(name=named) if isinstance(stdin, RenderedInput) else (named, stdin[1])
        )
    config = record.config
    if config.root is None:
        config = replace(config, root=Path(root))
    render = record.render
    if render is not None:
        # Values files given with the paths (helm's -f) are relative to the root too.
        sets = tuple(
            values_set._replace(values=tuple(os.path.join(root, v) for v in values_set.values))
            for values_set in render.default.sets
        )
        render = render._replace(
            default=render.default._replace(sets=sets),
            cache_dir=_under(root, render.cache_dir),
            root=root,
        )
    alongside = tuple(
        other._replace(paths=tuple(os.path.join(root, p) for p in other.paths))
        for other in record.alongside
    )
    return replace(
        record,
        alongside=alongside,
        paths=tuple(p if p == STDIN else os.path.join(root, p) for p in record.paths),
        config=config,
        overlay=overlay,
        stdin=stdin,
        render=render,
        root=root,
        shown=shown,
    )
