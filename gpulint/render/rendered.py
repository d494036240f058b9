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
