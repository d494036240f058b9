"""A rendered chart or overlay as an input of a run."""

from typing import Any

from gpulint.views import NamedTuple


class RenderedInput(NamedTuple):
    """A chart or overlay gpulint rendered, checked like bytes read from stdin.

    `origin` (gpulint.render: HelmOrigin or KustomizeOrigin) moves the findings from the
    rendered stream to the files the author edits.
    """

    name: str
    data: bytes
    origin: Any


class RenderFailure(NamedTuple):
    """The origin of a chart or overlay its tool could not render: nothing to trace, and the
    reason reported at its Chart.yaml or kustomization.yaml (GPU030)."""

    message: str
    pos: tuple[int, int] = (1, 1)  # where in that file, when the reason is at a line of it
    fix: str | None = None  # what to do, when more precise than GPU030's

    def locate(self, findings: Any, rendered: str) -> list[Any]:
        """The findings where they are: at the chart's or overlay's own file."""
        return list(findings)
