"""`helm template` for one chart and one values set, with local dependencies built on the way."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpulint.render.cache import read_render, render_key, tree_files, write_render
from gpulint.render.tools import RenderError, find_tool, run_tool, tool_identity
from gpulint.yamltree import YMap, YSeq, parse

HELM_INSTALL = "install Helm 3 or 4 (https://helm.sh/docs/intro/install/)"
CHART_FILE = "Chart.yaml"


@dataclass(frozen=True)
class HelmRender:
    """One `helm template` run: chart directory, release, namespace, values and --set."""

    chart: Path
    release: str
    namespace: str | None = None
    values: tuple[Path, ...] = ()
    set_values: tuple[str, ...] = ()

    def arguments(self, chart: Path, values: tuple[Path, ...] | None = None) -> list[str]:
        """helm's arguments after `template`, for the chart at `chart` (maybe a copy)."""
        args = [self.release, str(chart)]
        if self.namespace:
            args += ["--namespace", self.namespace]
        for path in self.values if values is None else values:
            args += ["--values", str(path)]
        for assignment in self.set_values:
            args += ["--set", assignment]
        return args


def is_chart(directory: Path) -> bool:
    """Whether `directory` holds a Helm chart."""
    return (directory / CHART_FILE).is_file()


def chart_metadata(chart: Path) -> YMap:
    """Chart.yaml as a mapping (empty when it does not parse: helm then says why)."""
    try:
        text = (chart / CHART_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return YMap()
    documents = parse(text).documents
    value = documents[0].value if documents else None
    return value if isinstance(value, YMap) else YMap()


def chart_name(chart: Path) -> str:
    """The chart's `name:`, which is also the default release name; else the directory's."""
    name = chart_metadata(chart).get("name")
    return name if isinstance(name, str) and name else chart.resolve().name


def render_chart(
    request: HelmRender, cache_dir: Path | None, values: tuple[Path, ...] | None = None
) -> str:
    """The rendered stream of `request` (with `values` instead of its values files, if given).

    Raises RenderError with helm's message when helm fails, and GpulintError when helm is not
    installed or a dependency must come from the network.
    """
    helm = find_tool("helm", HELM_INSTALL)
    values = request.values if values is None else values
    key = render_key(
        ["helm", tool_identity(helm), *request.arguments(Path("."), values)],
        [*tree_files(request.chart), *values],
    )
    cached = read_render(cache_dir, key)
    if cached is not None:
        return cached
    with _ready_chart(request.chart, helm) as chart:
        text = run_tool([helm, "template", *request.arguments(chart, values)], _what(request))
    write_render(cache_dir, key, text)
    return text


def _what(request: HelmRender) -> str:
    return f"{request.chart}: helm template failed"


@contextmanager
def _ready_chart(chart: Path, helm: str) -> Iterator[Path]:
    """The chart to render: itself, or a copy with its missing `file://` dependencies built.

    The copy keeps the user's tree untouched (no charts/*.tgz or Chart.lock left behind).
    """
    missing = _missing_dependencies(chart)
    if not missing:
        yield chart
        return
    remote = [(name, repo) for name, repo in missing if not repo.startswith("file://")]
    if remote:
        name, repo = remote[0]
        raise RenderError(
            f"{chart}: dependency `{name}` ({repo or 'no repository'}) is not in "
            f"{chart}/charts/; run `helm dependency build {chart}` where the network is "
            "reachable, then check again"
        )
    with tempfile.TemporaryDirectory(prefix="gpulint-chart-") as tmp:
        copy = Path(tmp) / chart.resolve().name
        shutil.copytree(chart, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        chart_file = copy / CHART_FILE
        text = chart_file.read_text(encoding="utf-8")
        for _, repo in missing:
            # Relative to the original chart, not to the copy.
            target = (chart / repo.removeprefix("file://")).resolve()
            text = text.replace(repo, f"file://{target}")
        chart_file.write_text(text, encoding="utf-8")
        run_tool([helm, "dependency", "build", str(copy)], f"{chart}: helm dependency build failed")
        yield copy


def _missing_dependencies(chart: Path) -> list[tuple[str, str]]:
    """(name, repository) of each dependency in Chart.yaml that charts/ does not hold."""
    dependencies = chart_metadata(chart).get("dependencies")
    if not isinstance(dependencies, YSeq):
        return []
    present = _present_subcharts(chart / "charts")
    missing = []
    for item in dependencies:
        if not isinstance(item, YMap):
            continue
        name, repo = _text(item.get("name")), _text(item.get("repository"))
        if name and name not in present:
            missing.append((name, repo))
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
