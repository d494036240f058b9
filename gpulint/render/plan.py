"""Which charts and overlays a run renders, and their rendered streams as inputs.

Discovery finds directories holding a `Chart.yaml` or a kustomization (walking, or above a
file given by name) and hands them here. A chart is rendered once per values set; an overlay
once; a kustomization that another one found in the same run builds on (a base) is checked
only through it, so its objects are not reported twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpulint.errors import GpulintError
from gpulint.render.confine import checked_files, is_inside
from gpulint.render.helm import (
    HelmRender,
    checked_namespace,
    checked_release,
    is_library_chart,
    render_chart,
)
from gpulint.render.kustomize import (
    KustomizeOrigin,
    build_overlay,
    kustomization_file,
    referenced_directories,
)
from gpulint.render.locate import HelmOrigin
from gpulint.render.options import RenderOptions
from gpulint.render.rendered import RenderedInput, RenderFailure
from gpulint.render.tools import RenderError, RenderRun, ToolFailed, ToolMissing, Unbuildable

HELM, KUSTOMIZE = "helm", "kustomize"


def plan_renders(
    marks: Iterable[tuple[str, str]],
    options: RenderOptions,
    check: Callable[[str, bytes], None] | None = None,
    jobs: int = 1,
) -> dict[str, list[RenderedInput]]:
    """The rendered inputs of every marked (directory, kind), by directory.

    `check(name, data)` is called on each render (it raises for one without objects). Raises
    GpulintError when a tool is missing or fails, or an input is refused
    (gpulint.render.confine); all renders share one RenderRun: one tree, one time budget.
    Up to `jobs` charts and overlays are rendered at once (each tool is a process of its
    own); what is returned, and which error is raised, is what rendering them one after the
    other in order gives.
    """
    marks = dict(marks)
    run = options.run or RenderRun.start(options.root)
    for directory, kind in marks.items():
        if kind == KUSTOMIZE:
            # Before its kustomization is read for its bases.
            checked_files(Path(directory), directory, "overlay", skip_vcs=True)
    used = {
        p.resolve()
        for directory, kind in marks.items()
        if kind == KUSTOMIZE
        for p in referenced_directories(Path(directory))
    }
    cache_dir = options.cache_path()

    def render(directory: str, kind: str) -> list[RenderedInput]:
        try:
            if kind == HELM:
                return _chart_inputs(directory, options, cache_dir, run)
            if Path(directory).resolve() in used:
                return []  # checked through the overlays that use it
            text = build_overlay(Path(directory), cache_dir, run)
            origin = KustomizeOrigin(Path(directory), directory)
            return [RenderedInput(directory, text.encode(), origin)]
        except (ToolMissing, ToolFailed, Unbuildable) as exc:
            # The rest of the run is still checked; the chart or overlay is one finding.
            return [_not_rendered(directory, kind, exc)]

    renders: dict[str, list[RenderedInput]] = {}
    with _renderer(jobs, len(marks)) as submit:
        pending = [
            (directory, submit(render, directory, kind)) for directory, kind in marks.items()
        ]
        for directory, found in pending:
            renders[directory] = found()
            if check is not None:
                for item in renders[directory]:
                    if not isinstance(item.origin, RenderFailure):
                        check(item.name, item.data)
    return renders


@contextmanager
def _renderer(jobs: int, count: int) -> Iterator[Callable[..., Callable[[], Any]]]:
    """`submit(function, *args)`, which gives a function returning what `function(*args)`
    returns (or raising what it raises): in up to `jobs` threads, else when asked for.

    When the caller stops with an error, renders not started are not started."""
    if jobs <= 1 or count <= 1:
        yield lambda function, *args: lambda: function(*args)
        return
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(min(jobs, count), thread_name_prefix="gpulint-render")
    try:
        yield lambda function, *args: pool.submit(function, *args).result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _not_rendered(directory: str, kind: str, exc: GpulintError) -> RenderedInput:
    """A chart or overlay its tool could not render, as an input holding only the reason,
    named by its Chart.yaml or kustomization file, or by the file of it the tool named."""
    home = kustomization_file(Path(directory)) if kind == KUSTOMIZE else None
    name = os.path.join(directory, home.name if home is not None else "Chart.yaml")
    if kind == HELM:
        name = os.path.join(directory, _chart_file(Path(directory)))
    message = str(exc)
    # Reported at the chart's own file: the directory it names goes without saying.
    for prefix in (directory, os.path.abspath(directory)):
        message = message.removeprefix(f"{prefix}: ")
    if isinstance(exc, RenderError):
        if exc.file is not None:
            # The file of the chart or overlay the tool named: the template to edit.
            name = os.path.join(directory, exc.file)
        return RenderedInput(name, b"", RenderFailure(message, exc.pos or (1, 1), exc.fix))
    return RenderedInput(name, b"", RenderFailure(message))


def _chart_file(chart: Path) -> str:
    return next((n for n in ("Chart.yaml", "Chart.yml") if (chart / n).is_file()), "Chart.yaml")


def _chart_inputs(
    directory: str, options: RenderOptions, cache_dir: Path | None, run: RenderRun
) -> list[RenderedInput]:
    chart = Path(directory)
    # Before Chart.yaml is read for the default release name.
    checked_files(chart, directory, "chart", skip_vcs=False)
    if is_library_chart(chart):
        # Its templates are checked through the charts that depend on it; on its own it
        # makes no objects, and helm refuses to render it.
        return []
    from_config = chart.resolve() in options.charts
    settings = options.settings_for(chart)
    release = checked_release(settings.release, chart, directory)
    namespace = checked_namespace(settings.namespace, directory)
    items = []
    for values_set in settings.sets:
        bound = options.cluster is not None and values_set.clusters
        if bound and options.cluster not in values_set.clusters:
            continue  # applied to other clusters only
        values = tuple(Path(v) for v in values_set.values)
        if from_config:
            # The config comes with the pull request; the command line is the user's own.
            _values_inside(chart, values, directory, run)
        request = HelmRender(
            chart,
            release,
            namespace,
            values,
            tuple(values_set.set_values),
            options.kube_version,
            served_apis=options.served_apis() if options.served_apis is not None else None,
        )
        text = render_chart(request, cache_dir, run=run)
        label = directory if values_set.name is None else f"{directory}[{values_set.name}]"
        origin = HelmOrigin(request, label, directory, cache_dir, run=run)
        items.append(RenderedInput(label, text.encode(), origin))
    return items


def _values_inside(chart: Path, values: tuple[Path, ...], label: str, run: RenderRun) -> None:
    tree = run.tree(chart)
    for path in values:
        if not is_inside(path, tree):
            raise RenderError(
                f"{label}: values file `{path}` of the config is outside the checked tree "
                f"{tree}; gpulint reads only files inside it"
            )
