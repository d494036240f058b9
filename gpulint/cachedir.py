"""Where gpulint keeps what it can reuse between runs (read profiles, validated configs)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_cache_dir(environ: Mapping[str, str]) -> Path | None:
    """$XDG_CACHE_HOME/gpulint, else ~/.cache/gpulint (where pre-commit and pip keep theirs);
    None when there is no such place."""
    xdg = environ.get("XDG_CACHE_HOME", "")
    # The XDG spec says a relative value is to be ignored.
    if os.path.isabs(xdg):
        return Path(xdg) / "gpulint"
    try:
        return Path.home() / ".cache" / "gpulint"
    except RuntimeError:  # no HOME and no password entry: nowhere to keep a cache
        return None


def cache_dir(given: str | None, use_cache: bool = True) -> Path | None:
    """The cache directory a run uses: `given` (--cache-dir), else the default; None with
    --no-cache."""
    if not use_cache:
        return None
    return Path(given) if given else default_cache_dir(os.environ)
