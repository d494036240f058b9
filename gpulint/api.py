"""The library entry point: `lint(paths, LintOptions(...)) -> LintResult`.

Files are checked one at a time, so memory does not grow with the number of files:

1. A byte scan picks the files that may hold knowledge objects (PriorityClass, ResourceQuota,
   LimitRange): they are few and small, decide verdicts on objects in other files, and are
   read first and kept for the whole run.
2. Each file is loaded, its workloads typed, and every per-document rule run on it (see
   `gpulint.rules.base`); suppressions are applied, its findings kept, and of its objects only
   what corpus-wide rules asked for (a few workloads, its HPAs without their trees) outlives
   the file. With `jobs` > 1 and enough input, worker processes do this step, in input order.
3. The corpus-wide rules run once over what was kept; then unused suppressions are reported.

With `context:` in the config (a pre-commit hook is given only the changed files), the files
it names are context: their knowledge objects join those of step 1, and of their other files
only what corpus-wide rules keep (workloads, HPAs) is read, with no per-file rule run on them.
A finding in a context file is reported only when it is a corpus-wide one that involves the
given files: the check says it combines one of their objects (`Problem.involves`: a workload
sharing the quota, the quota).

HorizontalPodAutoscalers are many (one per scaled Deployment) and may sit in any file, so they
are not read first: the rules that need peak replica counts (GPU106, GPU201, GPU301) are
corpus-wide instead. Reading every HPA-bearing file twice would cost a third more parsing on
a typical chart repository.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import field, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpulint.config import Config
from gpulint.errors import GpulintError
from gpulint.findings import CheckedObject, Finding, LintResult
from gpulint.loader import (
    STDIN,
    Input,
    Inputs,
    LoadResult,
    RenderedInput,
    collection_paused,
    discover,
    display_path,
    input_name,
    load_bytes,
    load_path,
    read_bytes,
)
from gpulint.rules import UNUSED_SUPPRESSION, Rule, registry, rule_codes
from gpulint.rules.base import CheckContext, Problem
from gpulint.suppressions import SuppressionTracker
from gpulint.views import NamedTuple, frozen_record
from gpulint.workloads import WorkloadShape, role_at

if TYPE_CHECKING:
    from gpulint.live.client import ConnectionOptions
    from gpulint.live.verdict import DryRun, ServerRejection
    from gpulint.model import Document, PodTemplate, Workload
    from gpulint.profile.model import ClusterProfile
    from gpulint.render.options import RenderOptions
    from gpulint.replicas import Autoscaler
    from gpulint.scheduling import Placement
    from gpulint.spool import FindingSpool
    from gpulint.yamltree import Pos

#: The rule that reports what a server-side dry-run refused.
SERVER_REJECTED = "GPU900"
#: The rule that needs the `gpulint[schema]` extra; a run without it says so once.
SCHEMA_RULE = "GPU012"
#: Kinds whose objects decide verdicts on objects in other files, read before the others.
KNOWLEDGE_KINDS = frozenset(
    {"PriorityClass", "ResourceQuota", "LimitRange"}
    # DRA objects: claims and classes that pods and claims of other files name.
    | {"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"}
    # The schemas of custom resources in other files (gpulint.validation.crds).
    | {"CustomResourceDefinition"}
)
_KNOWLEDGE_BYTES = tuple(k.encode() for k in sorted(KNOWLEDGE_KINDS))
#: Below this much input a process pool costs more to start than it saves.
PARALLEL_MIN_BYTES = 4 << 20
PARALLEL_MIN_FILES = 8


def available_cpus() -> int:
    """CPUs this process may run on (the default for `jobs`)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


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
    config = with_overrides(
        options.config,
        select=options.select,
        extend_select=options.extend_select,
        ignore=options.ignore,
        report_unused_ignores=options.report_unused_ignores,
    )
    options = replace(
        options,
        config=config,
        select=None,
        extend_select=None,
        ignore=None,
        report_unused_ignores=None,
    )
    clusters = options.clusters
    if clusters is None and not options.profile_paths and options.profile is None:
        clusters = config.clusters if options.live is None else None
    if clusters:
        return _lint_clusters(paths, replace(options, clusters={}), clusters)
    if options.live is not None:
        return _lint_live(paths, options)
    if options.profile_paths:
        if options.profile is not None:
            raise GpulintError("give a profile or profile paths, not both")
        profile = read_profile(
            options.profile_paths,
            options.pool_label,
            options.cache_dir,
            options.use_cache,
            options.warn,
            root=options.root,
        )
        options = replace(options, profile=profile, profile_paths=())
    return _lint(paths, options)


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


def _under(root: str | None, path: str | None) -> str | None:
    """`path` taken from `root` (None and absolute paths as they are)."""
    return path if root is None or path is None else os.path.join(root, path)


def _lint_clusters(
    paths: Sequence[str], options: LintOptions, clusters: Mapping[str, Sequence[str]]
) -> LintResult:
    """lint() against each named cluster's profile inputs, the findings merged."""
    from gpulint.clusters import merge_results

    if options.live is not None:
        raise GpulintError("--live reads one cluster: drop the named --profile clusters")
    # Findings are merged in memory, so no run spools them.
    options = replace(options, profile=None, spool_findings=False)
    results = {}
    for name, files in clusters.items():
        try:
            results[name] = lint(paths, options, profile_paths=tuple(files))
        except GpulintError as exc:
            raise GpulintError(f"cluster {name}: {exc}") from exc
    return merge_results(results)


def _lint_live(paths: Sequence[str], options: LintOptions) -> LintResult:
    """lint() against the profile read from the cluster; the cluster's notes join the result's."""
    assert options.live is not None
    if options.profile is not None or options.profile_paths:
        raise GpulintError("--live reads the profile from the cluster: drop --profile")
    from gpulint.live.session import open_live

    cluster = open_live(options.live, options.pool_label)
    try:
        dry_run = cluster.dry_run if options.server_dry_run else None
        result = _lint(paths, replace(options, profile=cluster.profile, dry_run=dry_run))
    finally:
        cluster.close()
    return replace(result, notes=(*cluster.notes, *result.notes))


def _lint(paths: Sequence[str], options: LintOptions) -> LintResult:
    """The run from `options.root`: every path it reads absolute, every path it reports
    relative to the root."""
    root = options.root
    if root is None:
        return _lint_paths(paths, options)
    overlay = options.overlay
    if overlay:
        overlay = {os.path.join(root, name): data for name, data in overlay.items()}
    stdin = options.stdin
    shown: dict[str, str] = {}
    if stdin is not None:
        # Its name is a path too (`--stdin-filename k8s/a.yaml`): per-file-ignores match it.
        # Findings name it exactly as given, which --fix looks for.
        named = os.path.join(root, stdin[0])
        shown[named] = stdin[0]
        stdin = (
            stdin._replace(name=named) if isinstance(stdin, RenderedInput) else (named, stdin[1])
        )
    config = options.config
    if config.root is None:
        config = replace(config, root=Path(root))
    absolute = [p if p == STDIN else os.path.join(root, p) for p in paths]
    render = options.render
    if render is not None:
        # Values files given with the paths (helm's -f) are relative to the root too.
        sets = tuple(
            values_set._replace(values=tuple(os.path.join(root, v) for v in values_set.values))
            for values_set in render.default.sets
        )
        render = render._replace(
            default=render.default._replace(sets=sets), cache_dir=_under(root, render.cache_dir)
        )
    options = replace(options, config=config, overlay=overlay, render=render, stdin=stdin)
    return _lint_paths(absolute, options, shown)


def _displayed(
    findings: Iterable[Finding], root: str | None, shown: Mapping[str, str]
) -> Iterator[Finding]:
    """`findings` with their files (and renders) named relative to `root` when inside it, and
    the paths in `shown` (stdin's) as it says."""
    if root is None:
        yield from findings
        return
    for finding in findings:
        path = shown.get(finding.path) or display_path(finding.path, root)
        rendered = finding.rendered
        if rendered is not None:
            rendered = rendered._replace(of=display_path(rendered.of, root))
        if path != finding.path or rendered != finding.rendered:
            finding = replace(finding, path=path, rendered=rendered)
        yield finding


def _lint_paths(
    paths: Sequence[str], options: LintOptions, shown: Mapping[str, str] | None = None
) -> LintResult:
    """The run in its phases: discover, plan, load and check each file, corpus checks, report.

    Findings name files relative to `options.root`, or as `shown` says.
    """
    shown = shown or {}
    config = options.config
    # Checked in report order (findings are reported by path), so each file's findings can be
    # written out as soon as the file is checked.
    inputs = discover(
        [p for p in paths if p != STDIN],
        config.is_excluded,
        options.stdin if STDIN in paths else None,
        options.overlay,
        options.render,
        options.allow_empty,
        ignored=config.gitignore_filter(),
        base=options.root,
    )
    context_inputs = _context_inputs(config, inputs)
    selected, plan, skipped = _plan(inputs, options, context_inputs)
    rejections = _server_rejections(inputs, plan, options.dry_run)
    gathered = _check_every_file(plan, inputs, options, shown)
    given = _read_context(plan, inputs, context_inputs, gathered) if context_inputs else None
    late = gathered.late + _corpus_findings(plan, gathered, rejections, selected, given)
    # A chart of the context stands where the given ones do: at its templates and values.
    renders = {**inputs.renders, **_renders_of(context_inputs)}
    if renders:
        late = _located(late, renders)
    late = list(_displayed(late, options.root, shown))
    notes = []
    if skipped:
        notes.append(
            f"{len(skipped)} cluster-profile rules skipped: no --profile given "
            f"({', '.join(r.code for r in skipped)})"
        )
    if any(r.code == SCHEMA_RULE for r in selected):
        from gpulint.validation.kube import unavailable_note

        notes.extend(unavailable_note())
    return LintResult(
        findings=_in_report_order(gathered.findings, late),
        files=gathered.files,
        objects=gathered.objects,
        notes=tuple(notes),
        checked=tuple(gathered.checked),
        unchecked=gathered.unchecked,
    )


def _plan(
    inputs: Inputs, options: LintOptions, context_inputs: Sequence[Input] = ()
) -> tuple[list[Rule], FilePlan, list[Rule]]:
    """The rules selected, the plan each file is checked by, and the rules left out for want
    of a profile."""
    config, profile = options.config, options.profile
    candidates = registry() if options.rules is None else options.rules
    selected = [r for r in candidates if config.is_selected(r.code, r.enabled)]
    skipped = [r for r in selected if r.needs_profile and profile is None]
    active = [r for r in selected if r.check is not None and r not in skipped]
    if options.dry_run is None:  # only a server's dry-run gives GPU900 anything to report
        active = [r for r in active if r.code != SERVER_REJECTED]
    knowledge = knowledge_documents(inputs) + knowledge_documents(context_inputs)
    known_kinds = frozenset(d.ref.kind for d in knowledge)
    profile_kinds = profile.object_kinds if profile is not None else frozenset()
    plan = FilePlan(
        config,
        profile,
        options.namespace,
        tuple(r for r in active if not r.corpus_wide),
        # Whether a corpus-wide rule has work is known before any file is checked: it judges
        # workloads against knowledge objects or the profile, never against one file's kinds.
        tuple(r for r in active if r.corpus_wide and r.has_work(known_kinds, profile_kinds)),
        knowledge,
        known_kinds,
        options.keep_checked,
        _unused_rule(selected, config),
    )
    return selected, plan, skipped


def _unused_rule(selected: Sequence[Rule], config: Config) -> Rule | None:
    if not config.report_unused_ignores:
        return None
    return next((r for r in selected if r.code == UNUSED_SUPPRESSION), None)


def _server_rejections(
    inputs: Inputs, plan: FilePlan, dry_run: DryRun | None
) -> tuple[ServerRejection, ...]:
    """What the API server refused of the objects, when GPU900 runs."""
    if dry_run is None or not any(r.code == SERVER_REJECTED for r in plan.corpus_wide):
        return ()
    # The server judges objects against the namespaces the same manifests create, so it
    # gets every object at once; live mode checks a handful of files.
    everything = LoadResult.merged([_load(item) for item in inputs])
    return tuple(dry_run(everything.documents, plan.context(everything).namespace_of))


class Gathered:
    """What the per-file phase leaves for the corpus-wide phase and the report."""

    # A plain class: one instance per run, filled in place (a dataclass costs more to define).
    def __init__(self, findings: list[Finding] | FindingSpool) -> None:
        self.findings = findings
        self.late: list[Finding] = []  # anywhere in the report
        self.checked: list[CheckedObject] = []
        self.kept: dict[str, list[Workload]] = {}
        # Only the first HPA of a target counts (replicas.autoscaler_for), so only it is kept.
        self.scalers: dict[tuple[str | None, str, str], Autoscaler] = {}
        self.tracker = SuppressionTracker()
        self.files = 0
        self.objects = 0
        self.unchecked = 0  # objects that request accelerators gpulint did not check (GPU007)
        self.placements: dict[int, Placement] = {}  # of kept templates


def _check_every_file(
    plan: FilePlan, inputs: Inputs, options: LintOptions, shown: Mapping[str, str]
) -> Gathered:
    """Load and check each file in turn, keeping only what outlives it."""
    gathered = Gathered([] if not options.spool_findings else _spool())
    gathered.kept = {r.code: [] for r in plan.corpus_wide}
    # A file's suppression markers matter once it is checked only to corpus-wide findings and
    # to the report of markers that suppressed nothing.
    keep_markers = bool(plan.corpus_wide) or plan.unused_rule is not None
    for outcome in _check_files(plan, inputs, options.jobs):
        gathered.files += outcome.files
        gathered.objects += outcome.objects
        gathered.unchecked += outcome.unchecked
        # A render's findings point into the files it was rendered from: anywhere in the report.
        findings = [f for f in outcome.findings if f.rendered is None]
        gathered.findings.extend(_displayed(findings, options.root, shown))
        gathered.late.extend(f for f in outcome.findings if f.rendered is not None)
        if options.root is None:
            gathered.checked.extend(outcome.checked)
        else:
            gathered.checked.extend(
                c._replace(path=shown.get(c.path) or display_path(c.path, options.root))
                for c in outcome.checked
            )
        for scaler in outcome.autoscalers:
            target = (scaler.document.ref.namespace, scaler.target_kind, scaler.target_name)
            gathered.scalers.setdefault(target, scaler)
        if keep_markers:
            gathered.tracker.merge(outcome.tracker)
        for code, workloads in outcome.kept.items():
            gathered.kept[code].extend(workloads)
        gathered.placements.update((id(t), verdict) for t, verdict in outcome.placements)
    return gathered


#: A context file is read only if its bytes may hold what corpus-wide rules keep.
_CONTEXT_BYTES = (b"containers", b"HorizontalPodAutoscaler")


def _context_inputs(config: Config, given: Inputs) -> list[Input]:
    """The files under the config's `context` that are not among the given inputs (stdin
    named as one of them, `--stdin-filename k8s/a.yaml`, stands for it)."""
    paths = config.context_paths()
    if not paths:
        return []
    seen = {os.path.realpath(input_name(item)) for item in given}
    try:
        found = discover(paths, config.is_excluded, ignored=config.gitignore_filter())
    except GpulintError as exc:
        # A chart under `context` is rendered for any file given: say why it was.
        raise GpulintError(f"{config.context_where()}: context: {exc}") from None
    return [i for i in found if not isinstance(i, str) or os.path.realpath(i) not in seen]


def _renders_of(context_inputs: Sequence[Input]) -> dict[str, RenderedInput]:
    """The chart and overlay renders among the context's inputs, by name."""
    return {item.name: item for item in context_inputs if isinstance(item, RenderedInput)}


def _read_context(
    plan: FilePlan, inputs: Inputs, context_inputs: Sequence[Input], gathered: Gathered
) -> frozenset[str]:
    """Add to `gathered` what corpus-wide rules keep of the context files (no per-file rule
    runs on them); return the given files' names."""
    given = frozenset(input_name(item) for item in inputs)
    context_plan = plan._replace(per_document=(), keep_checked=False, unused_rule=None)
    # Without a corpus-wide rule at work, context files were wanted for knowledge only.
    for outcome in _context_outcomes(context_plan, context_inputs if plan.corpus_wide else ()):
        for scaler in outcome.autoscalers:
            target = (scaler.document.ref.namespace, scaler.target_kind, scaler.target_name)
            gathered.scalers.setdefault(target, scaler)
        gathered.tracker.merge(outcome.tracker)  # a suppression there still applies there
        for code, workloads in outcome.kept.items():
            gathered.kept[code].extend(workloads)
    return given


def _context_outcomes(plan: FilePlan, items: Iterable[Input]) -> Iterator[FileOutcome]:
    """What corpus-wide rules keep of each context file; files that cannot hold it are not
    parsed."""
    for item in items:
        if isinstance(item, str):
            data = read_bytes(Path(item))
            if isinstance(data, OSError) or not _names_any(data, _CONTEXT_BYTES):
                continue
            item = (item, data)
        yield check_file(plan, item)


def _involves_given(problem: Problem, given: frozenset[str]) -> bool:
    """Whether a corpus-wide finding belongs in a run given only some files: its object is in
    one of them, or an object it says it combines is (the other workload sharing a quota, the
    quota itself)."""
    if problem.file.path in given:
        return True
    return any(d is not None and d.file.path in given for d in problem.involves)


def _corpus_findings(
    plan: FilePlan,
    gathered: Gathered,
    rejections: tuple[ServerRejection, ...],
    selected: Sequence[Rule],
    given: frozenset[str] | None = None,
) -> list[Finding]:
    """The corpus-wide rules' findings over what the files kept, then unused suppressions.

    `given`: the files of a run with `context:`; only findings that involve them are kept.
    """
    found: list[Finding] = []
    everything_kept = {id(w): w for kept in gathered.kept.values() for w in kept}.values()
    roles = _roles(everything_kept)
    for rule in plan.corpus_wide:
        context = plan.context(
            LoadResult((), plan.knowledge, ()),
            tuple(gathered.kept[rule.code]),
            rejections=rejections,
            all_autoscalers=tuple(gathered.scalers.values()),
            placements=gathered.placements,
        )
        found.extend(_findings(rule, context, roles, plan.config, gathered.tracker, given))
    if plan.unused_rule is not None:
        unused = _unused_suppressions(plan.unused_rule, gathered.tracker, selected, plan.config)
        found.extend(f for f in unused if given is None or f.path in given)
    return found


class FilePlan(NamedTuple):
    """What checking one file needs; sent to each worker process once per batch of files."""

    config: Config
    profile: ClusterProfile | None
    namespace: str | None
    per_document: tuple[Rule, ...]
    corpus_wide: tuple[Rule, ...]
    knowledge: tuple[Document, ...]
    knowledge_kinds: frozenset[str] = frozenset()
    keep_checked: bool = True
    unused_rule: Rule | None = None  # GPU006, when unused suppressions are reported

    def context(
        self,
        loaded: LoadResult,
        workloads: tuple[Workload, ...] = (),
        **corpus_wide: Any,
    ) -> CheckContext:
        """A context for `loaded` and its `workloads`, with the profile and knowledge objects
        (and, for a corpus-wide check, the other `CheckContext` fields in `corpus_wide`)."""
        return CheckContext(
            loaded,
            workloads,
            self.profile,
            self.namespace,
            knowledge=self.knowledge,
            kubernetes_version=self.config.kubernetes_version,
            **corpus_wide,
        )


class FileOutcome(NamedTuple):
    """What outlives one checked file: findings, and the little corpus-wide rules need."""

    files: int
    objects: int
    findings: tuple[Finding, ...]
    checked: tuple[CheckedObject, ...]
    kept: dict[str, tuple[Workload, ...]]  # per corpus-wide rule code, the workloads it needs
    autoscalers: tuple[Autoscaler, ...]
    tracker: SuppressionTracker  # the file's suppression markers, and which were used
    unchecked: int = 0  # objects that request accelerators gpulint did not check (GPU007)
    # The placement verdicts already computed on the kept workloads' templates, so the
    # corpus-wide checks do not compute them again (sent with them from a worker process).
    placements: tuple[tuple[PodTemplate, Placement], ...] = ()


def knowledge_documents(inputs: Iterable[Input]) -> tuple[Document, ...]:
    """The PriorityClasses, ResourceQuotas and LimitRanges among the inputs, in input order.

    Only files whose bytes name one of those kinds are parsed here (and again when checked).
    """
    found: list[Document] = []
    for item in inputs:
        name, data = (item, read_bytes(Path(item))) if isinstance(item, str) else item[:2]
        if isinstance(data, OSError) or not _names_any(data, _KNOWLEDGE_BYTES):
            continue
        loaded = load_bytes(name, data)
        found.extend(d for d in loaded.documents if d.ref.kind in KNOWLEDGE_KINDS)
    return tuple(found)


def _names_any(data: bytes, words: Sequence[bytes]) -> bool:
    # Substring searches rather than one compiled alternation: compiling it cost every run
    # more than searching a whole corpus this way.
    return any(word in data for word in words)


def _check_files(plan: FilePlan, inputs: Inputs, jobs: int) -> Iterator[FileOutcome]:
    """Every input's outcome, in input order; in `jobs` processes when that pays."""
    if jobs <= 1 or not _worth_processes(inputs, jobs):
        yield from (check_file(plan, item) for item in inputs)
        return
    # Imported here: a pre-commit run on a few files never starts a process.
    from concurrent.futures import Future, ProcessPoolExecutor

    size = max(1, min(64, len(inputs) // (jobs * 8)))
    items = iter(inputs)
    # Two batches per worker in flight: the inputs are walked as the workers take them, and
    # neither they nor the outcomes queue up whole (Executor.map would submit every batch).
    from concurrent.futures.process import BrokenProcessPool

    in_flight: deque[Future[list[FileOutcome]]] = deque()
    with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_ignores_interrupts) as pool:
        try:
            while batch := list(islice(items, size)):
                if in_flight:
                    in_flight.append(pool.submit(_check_batch, plan, batch))
                else:
                    # The first submit forks every worker: a Ctrl-C between a fork and the
                    # worker's initializer would kill that worker with a traceback, so the
                    # signal waits, blocked, until every worker ignores it.
                    with _interrupts_held():
                        in_flight.append(pool.submit(_check_batch, plan, batch))
                if len(in_flight) >= 2 * jobs:
                    yield from in_flight.popleft().result()
            while in_flight:
                yield from in_flight.popleft().result()
        except BrokenProcessPool:
            raise GpulintError(
                "a process checking files stopped unexpectedly (killed, or out of memory); "
                "run again, or with --jobs 1"
            ) from None
        except BaseException:
            # Ctrl-C: the batches not started are dropped; the workers finish theirs and stop.
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _worker_ignores_interrupts() -> None:
    """Ctrl-C reaches every process of the terminal's group: only the main one answers it,
    with one line, instead of a traceback from each worker."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Forked while the main process held the signal blocked (_interrupts_held).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT stays pending, not delivered, inside the block; it arrives when the block ends."""
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _worth_processes(inputs: Inputs, jobs: int) -> bool:
    """Enough input that worker processes save more than they cost to start and feed."""
    return inputs.files >= max(PARALLEL_MIN_FILES, 2 * jobs) and inputs.size >= PARALLEL_MIN_BYTES


@collection_paused()
def _check_batch(plan: FilePlan, batch: list[Input]) -> list[FileOutcome]:
    return [check_file(plan, item) for item in batch]


def check_file(plan: FilePlan, item: Input) -> FileOutcome:
    """Load one input, run the per-document rules on it, keep what corpus-wide rules need."""
    loaded = _load(item, plan.config.variables, plan.config.workloads)
    workloads = loaded.workloads
    context = plan.context(loaded, workloads)
    tracker = SuppressionTracker(loaded.documents, workloads)
    roles = _roles(workloads)
    # A rule that cannot find anything in this file's kinds is not run, so a run that has
    # nothing for it never imports its module.
    kinds = plan.knowledge_kinds.union(d.ref.kind for d in loaded.documents)
    profile_kinds = plan.profile.object_kinds if plan.profile is not None else ()
    findings = sorted(
        (
            finding
            for rule in plan.per_document
            if rule.has_work(kinds, profile_kinds)
            for finding in _findings(rule, context, roles, plan.config, tracker)
        ),
        key=_sort_key,
    )
    if isinstance(item, RenderedInput):
        located = item.origin.locate(findings, item.data.decode("utf-8"))
        findings = sorted(located, key=_sort_key)
    kept = {}
    for rule in plan.corpus_wide:
        keeps = rule.keeps_function()
        kept[rule.code] = tuple(keeps(context)) if keeps is not None else ()
    checked = loaded.documents if plan.keep_checked else ()
    kept_workloads = {id(w): w for found in kept.values() for w in found}.values()
    return FileOutcome(
        len(loaded.files),
        len(loaded.documents),
        tuple(findings),
        tuple(CheckedObject(d.file.path, d.ref, d.source) for d in checked),
        kept,
        # Kept only for the corpus-wide rules that count pods; a plain check needs none.
        context.autoscalers if plan.corpus_wide else (),
        tracker,
        sum(1 for found in context.unchecked if found.requests_accelerators),
        context.placements_of(kept_workloads),
    )


def _located(findings: list[Finding], renders: dict[str, RenderedInput]) -> list[Finding]:
    """`findings` with those still at a position of a render moved to the files it came from."""
    out = [f for f in findings if f.rendered is not None or f.path not in renders]
    by_render: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.rendered is None and finding.path in renders:
            by_render.setdefault(finding.path, []).append(finding)
    for name, found in by_render.items():
        item = renders[name]
        out.extend(item.origin.locate(found, item.data.decode("utf-8")))
    return out


def _sort_key(finding: Finding) -> tuple[str, int, int, str]:
    return finding.sort_key


def _spool() -> FindingSpool:
    from gpulint.spool import FindingSpool  # only runs that spool

    return FindingSpool()


def _in_report_order(
    per_file: list[Finding] | FindingSpool, late: list[Finding]
) -> tuple[Finding, ...] | FindingSpool:
    """Every finding in report order: per-file findings came in it, `late` ones in any."""
    if isinstance(per_file, list):
        return tuple(sorted([*per_file, *late], key=_sort_key))
    per_file.add_late(late)
    return per_file


def _load(
    item: Input,
    variables: Mapping[str, str] | None = None,
    shapes: Sequence[WorkloadShape] = (),
) -> LoadResult:
    if isinstance(item, str):
        return load_path(Path(item), variables, shapes)
    return load_bytes(item[0], item[1], variables, shapes)


def _roles(workloads: Iterable[Workload]) -> dict[int, Workload]:
    return {
        id(w.document): w for w in workloads if w.unread_roles or any(t.role for t in w.templates)
    }


def _findings(
    rule: Rule,
    context: CheckContext,
    roles: dict[int, Workload],
    config: Config,
    tracker: SuppressionTracker,
    given: frozenset[str] | None = None,
) -> Iterator[Finding]:
    # Pods built from one field share it (an Argo workflow's nodeSelector, given to each of
    # its templates): what is wrong with it is told once.
    seen: set[tuple[int, Pos, str]] = set()
    for problem in rule.check_function()(context):
        if _dropped(problem, rule, config, tracker):
            continue
        if given is not None and not _involves_given(problem, given):
            continue
        problem = _name_role(problem, roles)
        key = (id(problem.file), problem.pos, problem.message)
        if key not in seen:
            seen.add(key)
            yield _finding(rule, problem, config)


def _name_role(problem: Problem, roles: dict[int, Workload]) -> Problem:
    """Prefix `PyTorchJob/llama-ft Worker: ` when the finding sits inside one role of a CRD.

    Rules speak of "this pod"; in a workload with several pod templates the reader needs to
    know which one. Messages that already name the workload say so (`names_workload`) and
    are left as they are.
    """
    if problem.names_workload:
        return problem
    document = problem.document
    workload = roles.get(id(document)) if document is not None else None
    if workload is None:
        return problem
    role = role_at(workload, problem.pos)
    if role is None:
        return problem
    ref = workload.document.ref
    return problem._replace(message=f"{ref.kind}/{ref.name} {role}: {problem.message}")


def _dropped(problem: Problem, rule: Rule, config: Config, tracker: SuppressionTracker) -> bool:
    code = rule.code
    if config.ignored_in_file(problem.file.path, code):
        return True
    if problem.document is not None and config.ignored_object(problem.document.ref, code):
        return True
    return tracker.suppresses(problem.file, problem.pos[0], problem.document, code)


def _finding(rule: Rule, problem: Problem, config: Config) -> Finding:
    document = problem.document
    # Rendered Helm output is fixed in its templates or values, never in place.
    rendered = document is not None and document.source is not None
    edits = problem.edits if rule.autofix and not rendered else ()
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=config.severity.get(rule.code, problem.severity or rule.severity),
        path=problem.file.path,
        line=problem.pos[0],
        column=problem.pos[1],
        message=problem.message,
        fix=problem.fix if problem.fix is not None else rule.fix,
        object=document.ref if document is not None else None,
        source=document.source if document is not None else None,
        edits=edits,
        applicability=rule.autofix if edits else None,
    )


def _unused_suppressions(
    rule: Rule, tracker: SuppressionTracker, rules: Sequence[Rule], config: Config
) -> list[Finding]:
    enabled = {r.code for r in rules}
    findings = []
    for marker, codes in tracker.unused():
        # A suppression of a rule that did not run cannot be judged.
        live = [c for c in codes if any(code.startswith(c) for code in enabled)]
        if marker.codes and not live:
            continue
        what = f"no {', '.join(live)} finding" if live else "nothing"
        if config.ignored_in_file(marker.file.path, rule.code):
            continue
        problem = Problem(
            marker.file,
            marker.pos,
            f"unused suppression ({marker.kind}): {what} here to suppress",
        )
        findings.append(_finding(rule, problem, config))
    return findings
