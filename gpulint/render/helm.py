"""`helm template` for one chart and one values set, with local dependencies built on the way."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpulint.render.cache import read_render, render_key, write_render
from gpulint.render.confine import checked_files, is_inside, read_text, regular_file
from gpulint.render.named import (
    HELM_YAML_PROBLEMS,
    Named,
    at_line,
    helm_document_line,
    inside_file,
    yaml_problem_named,
)
from gpulint.render.options import ServedApis
from gpulint.render.tools import (
    RenderError,
    RenderRun,
    ToolFailed,
    Unbuildable,
    find_tool,
    run_tool,
    tool_identity,
)
from gpulint.views import NamedTuple
from gpulint.yamltree import YMap, YSeq, parse

HELM_INSTALL = "install Helm 3 or 4 (https://helm.sh/docs/intro/install/)"
CHART_FILE = "Chart.yaml"
#: helm's own rule for a release name (chartutil.ValidateReleaseName): a DNS-1123 subdomain of
#: at most 53 characters.
RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
RELEASE_LIMIT = 53
#: A namespace name: a DNS-1123 label.
NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
NAMESPACE_LIMIT = 63
#: Where a chart keeps the files helm renders.
TEMPLATES = "templates"
#: `.Capabilities.APIVersions.Has "group/version"` in a template (also `$.Capabilities...`).
_API_PROBE = r'Capabilities\.APIVersions\.Has\s+"([^"\s]{1,300})"'
#: A custom resource's API as a chart names it: a group holding a dot (as every CRD's
#: must), a version, optionally a kind.
_CUSTOM_API = (
    r"(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\.)+[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
    r"/v[0-9]+(?:(?:alpha|beta)[0-9]+)?(?:/[A-Za-z][A-Za-z0-9]*)?"
)
#: The core group's versions as a probe names them (`v1`, `v1/Pod`): no group before them.
_CORE_VERSION = re.compile(r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?")
#: A template larger than this is not searched for API probes (helm's own limit on a
#: chart's files is far above any real template).
_TEMPLATE_LIMIT = 1 << 20
#: helm's own bound on what a packaged chart unpacks to (MaxDecompressedChartSize).
_ARCHIVE_LIMIT = 100 << 20
#: At most this many probed APIs are passed to helm.
_PROBE_LIMIT = 64
#: The release `helm template` names when given none: used for a chart whose `name:` is not a
#: valid release name.
DEFAULT_RELEASE = "release-name"
#: A Kubernetes release as `--kube-version` takes it (gpulint passes `MAJOR.MINOR`).
KUBE_VERSION = re.compile(r"[0-9]{1,3}\.[0-9]{1,4}")
#: helm's refusal of a chart whose `kubeVersion:` excludes the release it renders for.
_KUBE_VERSION_REFUSED = "chart requires kubeVersion"
#: helm's message for a template's own `required` or `fail`: the template's file and line.
_EXECUTION_AT = re.compile(r"execution error at \(([^():\s]{1,500}):(\d{1,7}):\d{1,7}\)")
#: A template's file as helm names it (`chart/templates/x.yaml`, a subchart's
#: `chart/charts/sub/templates/x.yaml`): its chart's name, then the path inside it.
_TEMPLATE_NAME = r"([^\s():\"'<>]{1,500})"
#: Where helm says a template stopped it, as (file, line, 0-based byte column): an action
#: that failed (helm 3: `template: F:L:C: executing`, helm 4: `F:L:C executing`), a `required`
#: or `fail`, a template that does not parse (a line, no column).
_TEMPLATE_AT = (
    re.compile(rf"^Error: (?:template: )?{_TEMPLATE_NAME}:(\d{{1,7}}):(\d{{1,7}}):? executing \""),
    re.compile(rf"^Error: execution error at \({_TEMPLATE_NAME}:(\d{{1,7}}):(\d{{1,7}})\)"),
    re.compile(rf"^Error: parse error at \({_TEMPLATE_NAME}:(\d{{1,7}})\)"),
)
#: A template whose output is not YAML: a line of that output, when go-yaml names one.
_TEMPLATE_YAML = re.compile(
    rf"^Error: YAML parse error on {_TEMPLATE_NAME}: error converting YAML to JSON: yaml: "
    r"(?:line (\d{1,7}): )?(.*)$"
)
#: The message a `required` or `fail` spells out as a literal in the template.
_STOP = re.compile(r'\b(?:required|fail)\s+"([^"\\]{1,200})"')
#: helm's refusal of values whose schema it could not load from a URL (helm 4: `failing
#: loading "https://..."`; helm 3.17: `Get "https://..."`): a schema whose `$id` or `$ref` is a
#: URL is fetched at every render, and a render of gpulint reaches no network.
_SCHEMA_FETCH = re.compile(
    r"values don't meet the specifications of the schema.*?(?:failing loading|Get) \"https?://",
    re.S,
)


@dataclass(frozen=True)
class HelmRender:
    """One `helm template` run: chart directory, release, namespace, values and --set."""

    chart: Path
    release: str
    namespace: str | None = None
    values: tuple[Path, ...] = ()
    set_values: tuple[str, ...] = ()
    # The cluster's release, `1.32`: what `.Capabilities.KubeVersion` says and a chart's
    # `kubeVersion:` is checked against. None: helm's default (the release it was built for).
    kube_version: str | None = None
    # Templates rendered with other text (path relative to the chart, text), in a copy of the
    # chart: how gpulint.render.locate tells which line of a template printed a line.
    template_overrides: tuple[tuple[str, str], ...] = ()
    # The APIs the cluster's release serves: the templates' probes of Kubernetes' own APIs
    # are answered from them rather than from the release helm was built with.
    served_apis: ServedApis | None = None

    def arguments(
        self,
        chart: Path,
        values: tuple[Path, ...] | None = None,
        api_versions: tuple[str, ...] = (),
    ) -> list[str]:
        """helm's arguments after `template`, for the chart at `chart` (a copy, an absolute
        path: helm takes a relative one that does not exist for a repository's chart), as for
        a cluster that also serves `api_versions`.

        Every option is one `--flag=value` word and the release and chart come after `--`, so
        no text of the chart or the config becomes a flag. Values files are absolute: helm
        reads `-` as stdin and `http://...` as a URL.
        """
        args = []
        if self.namespace:
            args.append(f"--namespace={self.namespace}")
        if self.kube_version and KUBE_VERSION.fullmatch(self.kube_version):
            args.append(f"--kube-version={self.kube_version}.0")
        for api in api_versions:
            args.append(f"--api-versions={api}")
        for path in self.values if values is None else values:
            args.append(f"--values={os.path.abspath(path)}")
        for assignment in self.set_values:
            args.append(f"--set={assignment}")
        return [*args, "--", self.release, str(chart)]


def is_valid_release(name: object) -> bool:
    """Whether `name` is a release name helm accepts."""
    return (
        isinstance(name, str)
        and len(name) <= RELEASE_LIMIT
        and RELEASE_NAME.fullmatch(name) is not None
    )


def checked_release(release: object, chart: Path, label: str) -> str:
    """The release to render `chart` as: `release` (from the config or the command line),
    else the chart's `name:`, else helm's default. RenderError for an invalid `release`."""
    if release is None or release == "":
        name = chart_name(chart)
        return name if is_valid_release(name) else DEFAULT_RELEASE
    if not is_valid_release(release):
        raise RenderError(
            f"{label}: release `{release}` is not a release name (lower-case letters, digits, "
            f"`-` and `.`, at most {RELEASE_LIMIT} characters)"
        )
    return str(release)


def checked_namespace(namespace: object, label: str) -> str | None:
    """`namespace` when it is a namespace name (or None); RenderError otherwise."""
    if namespace is None or namespace == "":
        return None
    if (
        not isinstance(namespace, str)
        or len(namespace) > NAMESPACE_LIMIT
        or NAMESPACE_NAME.fullmatch(namespace) is None
    ):
        raise RenderError(
            f"{label}: namespace `{namespace}` is not a namespace name (lower-case letters, "
            f"digits and `-`, at most {NAMESPACE_LIMIT} characters)"
        )
    return namespace


def is_chart(directory: Path) -> bool:
    """Whether `directory` holds a Helm chart."""
    return (directory / CHART_FILE).is_file()


def chart_metadata(chart: Path) -> YMap:
    """Chart.yaml as a mapping (empty when it does not parse: helm then says why)."""
    text = read_text(chart / CHART_FILE)
    if text is None:
        return YMap()
    documents = parse(text).documents
    value = documents[0].value if documents else None
    return value if isinstance(value, YMap) else YMap()


def is_library_chart(chart: Path) -> bool:
    """Whether Chart.yaml says `type: library`: helm renders such a chart only as another
    chart's dependency (`helm template` refuses it: "library charts are not installable")."""
    return chart_metadata(chart).get("type") == "library"


def chart_name(chart: Path) -> str:
    """The chart's `name:`, which is also the default release name; else the directory's."""
    name = chart_metadata(chart).get("name")
    return name if isinstance(name, str) and name else chart.resolve().name


def render_chart(
    request: HelmRender,
    cache_dir: Path | None,
    values: tuple[Path, ...] | None = None,
    run: RenderRun | None = None,
) -> str:
    """The rendered stream of `request` (with `values` instead of its values files, if given).

    Raises RenderError with helm's message when helm fails or when the chart holds what
    gpulint does not read (gpulint.render.confine), and GpulintError when helm is not
    installed or a dependency must come from the network.
    """
    run = run or RenderRun.start()
    label = str(request.chart)
    files = checked_files(request.chart, label, "chart", skip_vcs=False)
    checked_release(request.release, request.chart, label)
    checked_namespace(request.namespace, label)
    values = request.values if values is None else values
    for path in values:
        regular_file(path, label, "values file")
    deps = _local_dependencies(request.chart, run)
    targets = _targets(deps)
    for target in targets:
        files.extend(checked_files(target, label, "chart", skip_vcs=False))
    helm = find_tool("helm", HELM_INSTALL, run.tool_tree(request.chart))
    overrides = [
        f"override:{path}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"
        for path, text in request.template_overrides
    ]
    served = request.served_apis
    if served is not None:
        overrides.append(f"served:{served.digest()}")
    key = render_key(
        ["helm", tool_identity(helm), *request.arguments(Path("."), values), *overrides],
        [*files, *values],
    )
    cached = read_render(cache_dir, key)
    if cached is not None:
        return cached
    # The APIs the templates probe follow from the files the key hashes: they are looked for
    # (every template read, packaged subcharts unpacked) only for a render that is made.
    probes = _probes([request.chart, *targets], files)
    apis = tuple(a for a in probes if _is_custom_api(a))
    unserved: tuple[str, ...] = ()
    if served is not None:
        own = [a for a in probes if _api_group(a) in served.groups]
        apis = (*apis, *(a for a in own if a in served.served))
        unserved = tuple(a for a in own if a not in served.served)
    apis = apis[:_PROBE_LIMIT]
    ready = _ready_chart(request.chart, deps, helm, run, request.template_overrides, unserved)
    with ready as chart:
        arguments = request.arguments(Path(os.path.abspath(chart)), values, apis)
        command = [helm, "template", *arguments]
        try:
            text = _without_remote_schema(command, _what(request), run)
        except ToolFailed as exc:
            # A stand-in that stops the render: that dependency is on, and missing.
            stood_in = _stood_in(deps, exc)
            if stood_in is not None:
                raise stood_in from None
            refused = _at_template(_kube_version_refused(exc, request), request, unserved)
            raise _stopped_by_template(refused, request) from None
    write_render(cache_dir, key, text)
    return text


def _without_remote_schema(command: list[str], what: str, run: RenderRun) -> str:
    """`helm template` as `command` runs it, or, when helm refused the values only because
    their schema names a URL it could not fetch, run again without checking the schema.

    A chart on bjw-s's common library (immich's) carries the library's values.schema.json,
    whose `$id` is a raw.githubusercontent.com URL its relative `$ref`s resolve against: helm
    fetches them at every render where the network is reachable. Where it is not (a render of
    gpulint never reaches it), the chart's objects are what helm renders without the schema;
    what the schema says of the values is left to helm where it can fetch it. A helm too old
    for `--skip-schema-validation` (before 3.16) refuses the flag: the first refusal stands.
    """
    try:
        return run_tool(command, what, run)
    except ToolFailed as exc:
        if _SCHEMA_FETCH.search(str(exc)) is None:
            raise
        try:
            return run_tool([*command[:2], "--skip-schema-validation", *command[2:]], what, run)
        except ToolFailed:
            raise exc from None


def _kube_version_refused(exc: ToolFailed, request: HelmRender) -> ToolFailed:
    """`exc`, at the chart's `kubeVersion:` with a fix naming the release to state, when helm
    refused the chart for the release it rendered for (its own default, unless the run stated
    the cluster's): a chart for the clusters it supports is not a broken chart."""
    if _KUBE_VERSION_REFUSED not in str(exc):
        return exc
    metadata = chart_metadata(request.chart)
    if request.kube_version:
        fix = (
            f"The chart does not support Kubernetes {request.kube_version}, the release of the "
            "cluster profile (or the config's `kubernetesVersion:`): use a version of the chart "
            "that does, or correct the release stated."
        )
    else:
        fix = (
            "State the cluster's release, `kubernetesVersion:` in the config or a cluster "
            "profile that gives it (`--profile`): the chart is then rendered for that release."
        )
    pos = metadata.pos_of_key("kubeVersion") if "kubeVersion" in metadata else None
    return ToolFailed(str(exc), pos, fix)


def _stopped_by_template(exc: ToolFailed, request: HelmRender) -> ToolFailed:
    """`exc`, with a fix saying what to give, when a template of the chart stopped the render
    itself (a `required` or `fail`): the chart is not broken, it asks for a value.

    helm's message for it is not shown (a template may compute it from a file); the message
    the template spells out as a literal, on the line helm names, is the chart's own text.
    """
    match = _EXECUTION_AT.search(str(exc))
    if match is None:
        return exc
    said = None
    # `chart/templates/x.yaml`: the chart's own file (a subchart's is under `charts/`).
    _, _, inside = match.group(1).partition("/")
    path = request.chart / inside
    text = read_text(path) if inside and is_inside(path, request.chart) else None
    lines = text.split("\n") if text is not None else []
    line = int(match.group(2))
    if 0 < line <= len(lines):
        found = _STOP.findall(lines[line - 1])
        said = found[0] if len(found) == 1 else None
    asked = f' (its template says "{said}")' if said else " (a `required` or `fail`)"
    fix = (
        f"The chart stopped its own render{asked}: give it the values it asks for with "
        "`--set` or `--values` (or the config's `charts:`), then check again."
    )
    return ToolFailed(str(exc), exc.pos, fix, exc.file)


def _at_template(exc: ToolFailed, request: HelmRender, unserved: tuple[str, ...]) -> ToolFailed:
    """`exc`, at the template helm names and the line and column it gives, when the template
    is a file of the chart (or of a subchart under its `charts/`) and nothing placed `exc`
    already; as it is otherwise (reported at the chart's Chart.yaml)."""
    if exc.pos is not None or exc.file is not None or request.template_overrides:
        return exc
    named = _template_named(str(exc).removeprefix(f"{_what(request)}: "), request.chart)
    if named is None:
        return exc
    if unserved:
        # A probe of an API the cluster does not serve is answered `false` in the rendered
        # copy: the columns helm counts on its line are not the template's.
        text = read_text(request.chart / named.file) or ""
        line = text.split("\n")[named.pos[0] - 1]
        if re.search(_API_PROBE, line):
            named = Named(named.file, (named.pos[0], 1))
    return ToolFailed(str(exc), named.pos, exc.fix, named.file)


def _template_named(message: str, chart: Path) -> Named | None:
    """The file of `chart` and the position in it helm's `message` names, if any."""
    for pattern in _TEMPLATE_AT:
        match = pattern.search(message)
        if match is not None:
            found = _template_file(chart, match.group(1))
            if found is None:
                return None
            column = int(match.group(3)) if match.lastindex == 3 else None
            return Named(found[0], at_line(found[1], int(match.group(2)), column))
    match = _TEMPLATE_YAML.search(message)
    if match is None:
        return None
    found = _template_file(chart, match.group(1))
    if found is None:
        return None
    # A line of what the template printed: the template's own line only when it printed
    # itself, one document.
    return yaml_problem_named(found, match, HELM_YAML_PROBLEMS, helm_document_line)


def _template_file(chart: Path, name: str) -> tuple[str, str] | None:
    """(path inside `chart`, text) of the template helm names `name`: the chart's name, each
    subchart as `charts/NAME` (a directory under its parent's `charts/` whose Chart.yaml
    names it), then `templates/...`; None for any other name (a packaged subchart, a
    dependency built from outside the chart, a path out of it)."""
    parts = name.split("/")
    if not parts or parts[0] != _metadata_name(chart):
        return None
    relative: list[str] = []
    parts = parts[1:]
    while len(parts) > 2 and parts[0] == "charts":
        subchart = _subchart_named(chart.joinpath(*relative), parts[1])
        if subchart is None:
            return None
        relative += ["charts", subchart]
        parts = parts[2:]
    if not parts or parts[0] != TEMPLATES:
        return None
    return inside_file(chart, relative + parts)


def _subchart_named(parent: Path, name: str) -> str | None:
    """The directory under `parent`'s `charts/` holding the subchart helm calls `name`."""
    charts = parent / "charts"
    try:
        candidates = sorted(p.name for p in charts.iterdir() if p.is_dir())
    except OSError:
        return None
    # helm names a subchart by its Chart.yaml, not by its directory: the same name first.
    candidates.sort(key=lambda directory: directory != name)
    for directory in candidates:
        if is_inside(charts / directory, parent) and _metadata_name(charts / directory) == name:
            return directory
    return None


def _metadata_name(chart: Path) -> str | None:
    name = chart_metadata(chart).get("name")
    return name if isinstance(name, str) and name else None


def probed_apis(charts: Iterable[Path], files: Iterable[Path]) -> tuple[str, ...]:
    """The custom resource APIs the templates among `files` (of the chart directories
    `charts`) ask about (`.Capabilities.APIVersions.Has "apps.nvidia.com/v1alpha1"`), sorted.

    An operator's chart writes its objects (the NIM Operator's NIMServices, a
    ServiceMonitor) only where the cluster serves their API, and installs them where it
    does. `helm template` knows no cluster, so it serves only Kubernetes' own APIs: the
    chart would render without those objects, and their GPU requests would never be
    checked. The chart is rendered as for the cluster it is written for, one that serves
    what it asks about. Kubernetes' own groups (no dot, or `*.k8s.io`) are left to helm, or,
    for a cluster whose release is known, answered from what it serves
    (`HelmRender.served_apis`).
    """
    return tuple(a for a in _probes(charts, files) if _is_custom_api(a))[:_PROBE_LIMIT]


def _probes(charts: Iterable[Path], files: Iterable[Path]) -> tuple[str, ...]:
    """Every API the templates among `files` (of the chart directories `charts`) ask
    about, sorted."""
    roots = list(charts)
    found: set[str] = set()
    for path in files:
        parts = next((path.relative_to(r).parts for r in roots if path.is_relative_to(r)), ())
        if path.suffix == ".tgz" and parts[-2:-1] == ("charts",):
            texts: Iterable[str] = _packaged_templates(path)
        elif TEMPLATES in parts[:-1]:
            text = read_text(path)
            texts = () if text is None or len(text) > _TEMPLATE_LIMIT else (text,)
        else:
            continue
        for text in texts:
            found.update(re.findall(_API_PROBE, text))
    return tuple(sorted(found))


def _api_group(api: str) -> str:
    """The group of a probed API (`resource.k8s.io/v1` -> `resource.k8s.io`; `v1/Pod` -> "")."""
    first = api.partition("/")[0]
    return "" if _CORE_VERSION.fullmatch(first) else first


def _is_custom_api(api: str) -> bool:
    """Whether `api` (`group/version` or `group/version/Kind`) is a custom resource's."""
    group = api.partition("/")[0]
    return re.fullmatch(_CUSTOM_API, api) is not None and not (
        group == "k8s.io" or group.endswith(".k8s.io")
    )


def _packaged_templates(archive: Path) -> Iterator[str]:
    """The template texts of a packaged subchart (`charts/name-1.2.3.tgz`), as helm reads
    them: every regular file under a `templates/` directory, read in one pass, never
    extracted, and no more of the archive than helm itself would unpack."""
    import gzip
    import tarfile

    try:
        with gzip.open(archive) as unzipped:
            stream = _Bounded(unzipped, _ARCHIVE_LIMIT)
            with tarfile.open(fileobj=stream, mode="r|") as packaged:  # type: ignore[call-overload]
                for member in packaged:
                    if not member.isfile() or member.size > _TEMPLATE_LIMIT:
                        continue
                    if TEMPLATES not in member.name.split("/")[:-1]:
                        continue
                    data = packaged.extractfile(member)
                    if data is not None:
                        yield data.read().decode("utf-8", errors="replace")
    except (OSError, EOFError, tarfile.TarError, _TooLarge):
        return  # helm says what is wrong with the archive when it renders the chart


class _TooLarge(Exception):
    """An archive that unpacks to more than helm accepts."""


class _Bounded:
    """A binary stream that raises _TooLarge once more than `limit` bytes are read."""

    def __init__(self, stream: Any, limit: int) -> None:
        self._stream, self._left = stream, limit

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._left -= len(data)
        if self._left < 0:
            raise _TooLarge
        return data


def _what(request: HelmRender) -> str:
    return f"{request.chart}: helm template failed"


class _Remote(NamedTuple):
    """A missing dependency from a repository that a condition can turn off: rendered with
    a stand-in that stops the render if it is on after all (then `error` is reported)."""

    name: str
    version: str
    repo_at: tuple[int, int]  # where its `repository:` value is written in Chart.yaml
    error: Unbuildable


class _Deps(NamedTuple):
    """What a chart's `charts/` lacks: local dependencies to build, remote ones to stand in."""

    local: tuple[_Local, ...] = ()
    remote: tuple[_Remote, ...] = ()


class _Local(NamedTuple):
    """A missing `file://` dependency: its `repository:` text, the chart it names, and what
    that chart's own `charts/` lacks."""

    repo: str
    target: Path
    nested: _Deps


#: How deep `file://` dependencies of dependencies are followed.
_NESTING_LIMIT = 8
#: A version helm matches exactly (a stand-in is given it): `4.2.12`, `1.0.0-rc.1`.
_EXACT_VERSION = re.compile(r"v?[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(?:-[0-9A-Za-z.-]{1,64})?")
#: A chart name that is safe as a directory name.
_CHART_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
#: The stand-in's one template: helm renders it only if the dependency is enabled.
_STAND_IN = '{{ fail "a dependency gpulint could not fetch is enabled" }}\n'


def _local_dependencies(
    chart: Path,
    run: RenderRun,
    tree: Path | None = None,
    within: tuple[Path, ...] = (),
    at: tuple[int, int] | None = None,
) -> _Deps:
    """What `chart`'s `charts/` lacks: each missing `file://` dependency, checked to be a
    chart inside the checked tree, with what its own `charts/` lacks (helm packages a local
    dependency as its directory is, so one whose `charts/` is not built renders without them:
    an umbrella over charts that share a library chart); and each missing dependency from a
    repository that a condition may turn off (see _stand_in_for). RenderError for any other
    dependency from a repository (at `at`, the entry of the chart checked that leads to it,
    else at its own entry), or for dependencies that name each other."""
    top = within[0] if within else chart
    remote = []
    missing = _missing_dependencies(chart)
    for name, repo, pos, item in missing:
        if repo.startswith("file://"):
            continue
        # A dependency's own is named from the chart checked, whose directory the report drops.
        whose = f" of its dependency {os.path.relpath(chart, top)}" if within else ""
        error = Unbuildable(
            f"{top}: dependency `{name}` ({repo or 'no repository'}){whose} is not in its "
            "`charts/`; run `helm dependency build` on the chart where the network is "
            "reachable, then check again",
            pos=at or pos,
            fix="Run `helm dependency build` on the chart where the network is reachable (or "
            "commit its `charts/`), then check again.",
        )
        if not _stand_in_for(chart, name, item):
            raise error
        remote.append(_Remote(name, str(item["version"]), item.pos_of_value("repository"), error))
    tree = tree or run.tree(chart)
    within = (*within, chart)
    local = []
    for name, repo, pos, _ in missing:
        if not repo.startswith("file://"):
            continue
        # Relative to the original chart, not to the copy.
        target = Path(os.path.normpath(chart / repo.removeprefix("file://")))
        if not is_inside(target, tree) or not is_chart(target):
            raise RenderError(
                f"{top}: dependency `{name}` ({repo}) is not a chart inside {tree}; "
                "gpulint builds only local dependencies of the checked tree"
            )
        if any(os.path.samefile(target, c) for c in within) or len(within) > _NESTING_LIMIT:
            raise RenderError(
                f"{top}: dependency `{name}` ({repo}) depends on the chart that depends on "
                "it, or its dependencies nest too deep; helm cannot build them either"
            )
        nested = _local_dependencies(target, run, tree, within, at or pos)
        local.append(_Local(repo, target, nested))
    return _Deps(tuple(local), tuple(remote))


def _stand_in_for(chart: Path, name: str, item: YMap) -> bool:
    """Whether a missing dependency from a repository may be rendered with a stand-in: one
    that a `condition:` or `tags:` can turn off (helm then renders nothing of it, and the
    stand-in stops the render if it is on), whose exact version and `repository:` value the
    stand-in can take, and whose values no template of `chart` reads (the real chart's
    defaults would be among them, the stand-in has none)."""
    version, alias = item.get("version"), item.get("alias")
    if not (item.get("condition") or item.get("tags")) or "repository" not in item:
        return False
    if not isinstance(version, str) or not _EXACT_VERSION.fullmatch(version):
        return False
    if not _CHART_NAME.fullmatch(name):
        return False
    names = [name, *([alias] if isinstance(alias, str) and alias else [])]
    reads = re.compile(r"(?:Values\.|Subcharts\.|\")(?:" + "|".join(map(re.escape, names)) + r")\b")
    templates = chart / TEMPLATES
    if not templates.is_dir():
        return True
    for path in sorted(templates.rglob("*")):
        if not path.is_file() or not is_inside(path, chart):
            continue
        text = read_text(path)
        if text is None or len(text) > _TEMPLATE_LIMIT or reads.search(text):
            return False
    return True


def _targets(deps: _Deps) -> list[Path]:
    """Every chart `deps` names, at any depth, each once."""
    found: list[Path] = []
    for item in deps.local:
        for target in (item.target, *_targets(item.nested)):
            if target not in found:
                found.append(target)
    return found


def _stood_in(deps: _Deps, failure: ToolFailed) -> Unbuildable | None:
    """The dependency whose stand-in stopped the render (helm names the stand-in's template,
    `charts/NAME/templates/not-fetched.yaml`), if one did."""
    found = re.findall(r"charts/([^/\s()]+)/templates/not-fetched\.yaml", str(failure))
    if not found:
        return None
    for remote in deps.remote:
        if remote.name == found[-1]:
            return remote.error
    return next((e for item in deps.local if (e := _stood_in(item.nested, failure))), None)


@contextmanager
def _ready_chart(
    chart: Path,
    deps: _Deps,
    helm: str,
    run: RenderRun,
    overrides: tuple[tuple[str, str], ...] = (),
    unserved: tuple[str, ...] = (),
) -> Iterator[Path]:
    """The chart to render: itself, or a copy with its missing `file://` dependencies built
    (each from a copy with its own built first), its missing remote ones stood in for,
    `overrides` written over its templates and the probes of the `unserved` APIs answered
    `false` in its templates and those of its dependencies.

    The copy keeps the user's tree untouched (no charts/*.tgz or Chart.lock left behind).
    """
    if not deps.local and not deps.remote and not overrides and not unserved:
        yield chart
        return
    with contextlib.ExitStack() as stack:
        built = [
            (
                item.repo,
                stack.enter_context(
                    _ready_chart(item.target, item.nested, helm, run, unserved=unserved)
                ),
            )
            for item in deps.local
        ]
        tmp = Path(
            stack.enter_context(
                tempfile.TemporaryDirectory(prefix="gpulint-chart-", ignore_cleanup_errors=True)
            )
        )
        copy = tmp / chart.resolve().name
        chart_file = copy / CHART_FILE
        try:
            shutil.copytree(chart, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            text = chart_file.read_text(encoding="utf-8")
            # By position first: the replacements below keep every line's number.
            for remote in deps.remote:
                text = _repository_to(text, remote, _write_stand_in(tmp, remote))
            for repo, target in built:
                # The whole value (up to its quote, a comment or the end of its flow
                # mapping): `file://../tei` must not rewrite `file://../teirerank`.
                text = re.sub(
                    re.escape(repo) + r"(?=[\"'\s,}\]#]|$)",
                    lambda _, target=target: f"file://{target.resolve()}",
                    text,
                    flags=re.M,
                )
            chart_file.write_text(text, encoding="utf-8")
            for path, template in overrides:
                _override(copy, path, template)
            if unserved:
                _answer_probes(copy, unserved)
        except UnicodeDecodeError:
            raise RenderError(f"{chart}: {CHART_FILE} is not UTF-8 text") from None
        except OSError as exc:  # shutil.Error too: a file of the chart that cannot be read
            reason = exc.strerror or "a file of the chart cannot be read"
            raise RenderError(
                f"{chart}: cannot copy the chart to build its dependencies: {reason}"
            ) from None
        try:
            if deps.local or deps.remote:
                run_tool(
                    [helm, "dependency", "build", "--", str(copy)],
                    f"{chart}: helm dependency build failed",
                    run,
                )
        except ToolFailed:
            if deps.remote:
                raise deps.remote[0].error from None
            raise
        yield copy


def _override(copy: Path, path: str, text: str) -> None:
    """Write `text` as the copy's file `path`: a regular file of the copy, never through a
    symlink (the copy keeps the chart's links, which may point into the user's tree)."""
    target = copy / path
    if (
        Path(path).is_absolute()
        or ".." in Path(path).parts
        or target.is_symlink()
        or not target.is_file()
        or not target.resolve().is_relative_to(copy.resolve())
    ):
        raise RenderError(f"{path}: not a template of the chart")
    target.unlink()  # a new file: nothing written reaches what the old name was linked to
    target.write_text(text, encoding="utf-8")


def _answer_probes(copy: Path, unserved: tuple[str, ...]) -> None:
    """Write `false` for each probe of an `unserved` API in the copy's templates (its own and
    its unpacked subcharts'), as helm answers it on a cluster that does not serve it.

    Only the probe's words change, within their line: every line keeps its number, which
    gpulint.render.locate reads. Packaged subcharts (`charts/*.tgz`) and templates that are
    symlinks are left to helm's own answer.
    """
    probe = re.compile(
        r'\$?\.Capabilities\.APIVersions\.Has\s+"(?:'
        + "|".join(re.escape(api) for api in unserved)
        + r')"'
    )
    inside = copy.resolve()
    # os.walk never enters a linked directory: the copy keeps the chart's links, which may
    # point into the user's tree, and nothing is written there.
    for directory, _, names in os.walk(copy):
        for name in sorted(names):
            path = Path(directory, name)
            parts = path.relative_to(copy).parts
            template = TEMPLATES in parts[:-1] and path.is_file() and not path.is_symlink()
            if template and path.resolve().is_relative_to(inside):
                _answer_in(path, probe)


def _answer_in(path: Path, probe: re.Pattern[str]) -> None:
    """Rewrite the probes `probe` matches in the template at `path` as `false`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return  # helm reads it as it is
    answered = probe.sub("false", text)
    if answered != text:
        path.unlink()  # a new file, as _override writes
        path.write_text(answered, encoding="utf-8")


def _write_stand_in(tmp: Path, remote: _Remote) -> Path:
    """A chart named and versioned as `remote`, whose one template stops the render."""
    directory = tmp / "stand-ins" / remote.name
    (directory / TEMPLATES).mkdir(parents=True)
    (directory / CHART_FILE).write_text(
        f"apiVersion: v2\nname: {remote.name}\nversion: {remote.version}\n", encoding="utf-8"
    )
    (directory / TEMPLATES / "not-fetched.yaml").write_text(_STAND_IN, encoding="utf-8")
    return directory


def _repository_to(text: str, remote: _Remote, directory: Path) -> str:
    """Chart.yaml `text` with `remote`'s `repository:` value (quoted or plain, on one line)
    naming `directory` instead; its error when the value is not found where it was parsed."""
    lines = text.split("\n")
    line, column = remote.repo_at
    if not 0 < line <= len(lines):
        raise remote.error
    written, start = lines[line - 1], column - 1
    quote = written[start : start + 1]
    if quote in ('"', "'"):
        end = written.find(quote, start + 1)
    else:
        found = re.match(r"[^\s,}\]#]+", written[start:])
        end = start + len(found.group()) - 1 if found else -1
    if end < start:
        raise remote.error
    lines[line - 1] = f'{written[:start]}"file://{directory}"{written[end + 1 :]}'
    return "\n".join(lines)


def built_dependencies(chart: Path) -> dict[str, Path]:
    """The `file://` dependencies `chart`'s `charts/` lacks, which gpulint builds in a copy:
    the directory each comes from, by the name helm prints its templates under in `# Source:`
    (`<chart>/charts/<alias, else name>/templates/...`)."""
    found = {}
    for name, repo, _, item in _missing_dependencies(chart):
        if repo.startswith("file://"):
            printed = _text(item.get("alias")) or name
            found[printed] = Path(os.path.normpath(chart / repo.removeprefix("file://")))
    return found


def _missing_dependencies(chart: Path) -> list[tuple[str, str, tuple[int, int], YMap]]:
    """(name, repository, where its entry starts in Chart.yaml, the entry) of each
    dependency that charts/ does not hold."""
    dependencies = chart_metadata(chart).get("dependencies")
    if not isinstance(dependencies, YSeq):
        return []
    present = _present_subcharts(chart / "charts")
    missing = []
    for index, item in enumerate(dependencies):
        if not isinstance(item, YMap):
            continue
        name, repo = _text(item.get("name")), _text(item.get("repository"))
        if name and name not in present:
            missing.append((name, repo, dependencies.pos_of_item(index), item))
    return missing


def _present_subcharts(directory: Path) -> set[str]:
    present = set()
    if not directory.is_dir():
        return present
    for entry in directory.iterdir():
        if entry.is_dir() and is_chart(entry):
            present.add(chart_name(entry))
        elif entry.name.endswith(".tgz"):
            # name-1.2.3.tgz; a chart name may itself hold dashes.
            present.add(entry.name[: -len(".tgz")].rsplit("-", 1)[0])
    return present


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
