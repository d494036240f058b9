"""Finding and running helm, kubectl and kustomize."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from gpulint.errors import GpulintError

#: How many seconds a helm or kustomize run may take before the check gives up.
TOOL_TIMEOUT = 120.0


class RenderError(GpulintError):
    """A chart or overlay that cannot be rendered: the tool's own message, exit 2."""


def find_tool(name: str, install: str) -> str:
    """The path of `name` on PATH; a GpulintError naming what to install when it is absent."""
    found = shutil.which(name)
    if found is None:
        raise GpulintError(f"`{name}` is not on PATH: {install}")
    return found


def tool_identity(path: str) -> str:
    """What identifies a tool build without running it: its real path, size and mtime."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return real
    return f"{real}:{info.st_size}:{info.st_mtime_ns}"


def run_tool(command: Sequence[str], what: str, cwd: Path | None = None) -> str:
    """The standard output of `command`; a RenderError carrying the tool's own message."""
    try:
        done = subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            check=False,
            timeout=TOOL_TIMEOUT,
            cwd=cwd,
            # Never ask for credentials or a passphrase on a terminal: a hook has none.
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise RenderError(f"{what}: {command[0]} took more than {TOOL_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise RenderError(f"{what}: cannot run {command[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        message = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise RenderError(f"{what}: {message}")
    return done.stdout
