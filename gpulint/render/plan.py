"""Which charts and overlays a run renders, and their rendered streams as inputs.

Discovery finds directories holding a `Chart.yaml` or a kustomization (walking, or above a
file given by name) and hands them here. A chart is rendered once per values set; an overlay
once; a kustomization that another one found in the same run builds on (a base) is checked
only through it, so its objects are not reported twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from gpulint.render.helm import HelmRender, chart_name, render_chart
from gpulint.render.kustomize import KustomizeOrigin, build_overlay, referenced_directories
from gpulint.render.locate import HelmOrigin
from gpulint.render.options import RenderOptions
from gpulint.render.rendered import RenderedInput

HELM, KUSTOMIZE = "helm", "kustomize"


def plan_renders(
    marks: Iterable[tuple[str, str]],
    options: RenderOptions,
    check: Callable[[str, bytes], None] | None = None,
) -> dict[str, list[RenderedInput]]:
    """The rendered inputs of every marked (directory, kind), by directory.

    `check(name, data)` is called on each render (it raises for one without objects). Raises
    GpulintError when a tool is missing or fails.
    """
    marks = dict(marks)
    used = {
        p.resolve()
        for directory, kind in marks.items()
        if kind == KUSTOMIZE
        for p in referenced_directories(Path(directory))
    }
    cache_dir = options.cache_path()
    renders: dict[str, list[RenderedInput]] = {}
    for directory, kind in marks.items():
        if kind == HELM:
            renders[directory] = _chart_inputs(directory, options, cache_dir)
        elif Path(directory).resolve() in used:
            renders[directory] = []  # checked through the overlays that use it
        else:
            text = build_overlay(Path(directory), cache_dir)
            origin = KustomizeOrigin(Path(directory), directory)
            renders[directory] = [RenderedInput(directory, text.encode(), origin)]
        if check is not None:
            for item in renders[directory]:
                check(item.name, item.data)
    return renders


def _chart_inputs(
    directory: str, options: RenderOptions, cache_dir: Path | None
) -> list[RenderedInput]:
    chart = Path(directory)
    settings = options.settings_for(chart)
    release = settings.release or chart_name(chart)
    items = []
    for values_set in settings.sets:
        request = HelmRender(
            chart,
            release,
            settings.namespace,
            tuple(Path(v) for v in values_set.values),
            values_set.set_values,
        )
        text = render_chart(request, cache_dir)
        label = directory if values_set.name is None else f"{directory}[{values_set.name}]"
        origin = HelmOrigin(request, label, directory, cache_dir)
        items.append(RenderedInput(label, text.encode(), origin))
    return items
