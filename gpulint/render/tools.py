"""Finding and running helm, kubectl and kustomize as a pull request's charts require: found
only by absolute path outside the checked tree, run in a reduced environment with no
cluster, no network and no git, within one time budget for every render of the run."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpulint.errors import GpulintError

#: How many seconds one helm or kustomize run may take before the check gives up.
TOOL_TIMEOUT = 120.0
#: How many seconds all the renders of one run may take together (charts, values sets,
#: tracing re-renders, fix passes): a template that loops costs this once, not once per render.
RENDER_BUDGET = 300.0
#: The longest tool message shown, in characters.
MESSAGE_LIMIT = 300
#: Where the children's HTTP(S) proxy points: the discard port of this machine, which nothing
#: serves, so a request to any non-loopback address fails at once.
DEAD_PROXY = "http://127.0.0.1:9"


class RenderError(GpulintError):
    """A chart or overlay that cannot be rendered: the tool's own message, exit 2; at `pos` in
    its Chart.yaml or kustomization when known (in `file` instead, a path relative to the
    chart or overlay, when the tool named a file of it), with `fix` when there is one better
    than GPU030's."""

    def __init__(
        self,
        message: str,
        pos: tuple[int, int] | None = None,
        fix: str | None = None,
        file: str | None = None,
    ):
        super().__init__(message)
        self.pos = pos
        self.fix = fix
        self.file = file


class ToolInTree(GpulintError):
    """The only tool of a name on PATH is inside the checked tree, which gpulint never runs."""


class ToolMissing(GpulintError):
    """The tool a chart or overlay needs is not on PATH: that render is skipped with a note."""


class ToolFailed(RenderError):
    """The tool ran and refused the chart or overlay: that render is skipped with a note."""


class Unbuildable(RenderError):
    """A chart or overlay that cannot be built from what the tree holds: a chart dependency
    that only a repository has, an overlay entry naming a file that is not there (kustomize
    would try it as a remote). Nothing is fetched or built; that render is skipped with a
    note, as a failing tool's is."""


class RenderTimeout(RenderError):
    """A render that outlasted its timeout or the run's budget."""


@dataclass(frozen=True)
class RenderRun:
    """What every render of one run shares: the run's root and the deadline of the budget."""

    root: Path  # the real path of the run's root
    deadline: float  # time.monotonic() after which no render starts
    budget: float = RENDER_BUDGET

    @classmethod
    def start(cls, root: str | None = None, budget: float = RENDER_BUDGET) -> RenderRun:
        """A run from `root` (default: the working directory), starting now."""
        real = Path(os.path.realpath(root if root is not None else os.getcwd()))
        return cls(real, time.monotonic() + budget, budget)

    def remaining(self) -> float:
        """Seconds left for renders."""
        return self.deadline - time.monotonic()

    def tree(self, directory: Path) -> Path:
        """The checked tree of a chart or overlay: the repository holding it, else the run's
        root when it is inside the root, else itself. Its bases, local dependencies and the
        config's values files must lie inside it."""
        repository = repository_of(directory)
        if repository is not None:
            return repository
        return self.root if is_inside(directory, self.root) else Path(os.path.realpath(directory))

    def tool_tree(self, directory: Path) -> Path:
        """Where no tool rendering `directory` may come from: the repository holding it, else
        the directory itself (never a whole home directory a run happens to start in)."""
        return repository_of(directory) or Path(os.path.realpath(directory))


def repository_of(path: str | os.PathLike[str]) -> Path | None:
    """The nearest directory at or above `path` with a `.git` entry (a checkout)."""
    start = Path(os.path.realpath(path))
    for directory in (start, *start.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return None


def is_inside(path: str | os.PathLike[str], tree: Path) -> bool:
    """Whether the real path of `path` (symlinks resolved) is `tree` or below it."""
    real = os.path.realpath(path)
    base = os.path.realpath(tree)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def find_tool(name: str, install: str, tree: Path) -> str:
    """The absolute path of `name` in an absolute PATH entry, not inside `tree`.

    Relative and empty PATH entries (`bin:`, `.:`, `::`) are skipped: they name directories
    of whatever the working directory is, the checked tree. So is a tool whose real path is
    inside `tree` (a `bin/helm` the pull request adds). Raises GpulintError naming what to
    install when no tool is left.
    """
    refused = None
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        candidate = os.path.join(entry, name)
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        if is_inside(candidate, tree):
            refused = refused or candidate
            continue
        return candidate
    if refused is not None:
        raise ToolInTree(
            f"`{name}` is found only inside the checked tree ({refused}), which gpulint never "
            f"runs: {install}"
        )
    raise ToolMissing(f"`{name}` is not on PATH: {install}")


def tool_identity(path: str) -> str:
    """What identifies a tool build without running it: its real path, size and mtime."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return real
    return f"{real}:{info.st_size}:{info.st_mtime_ns}"


def child_environment(sandbox: Path) -> dict[str, str]:
    """The whole environment of a tool run: nothing of gpulint's own (no CI secrets).

    Every home is an empty directory under `sandbox`, so no kubeconfig, Helm repository,
    plugin, registry login or git configuration of the machine is read. KUBECONFIG is an
    empty file and the in-cluster variables are absent: helm has no cluster to ask (`lookup`
    returns nothing). PATH is an empty directory: neither tool needs another program, and
    kustomize finds no git to fetch a remote base with. Proxies point at a dead port.
    """
    homes = {
        "HOME": "home",
        "TMPDIR": "tmp",
        "XDG_CACHE_HOME": "cache",
        "XDG_CONFIG_HOME": "config",
        "XDG_DATA_HOME": "data",
        "HELM_CACHE_HOME": "helm/cache",
        "HELM_CONFIG_HOME": "helm/config",
        "HELM_DATA_HOME": "helm/data",
        "HELM_PLUGINS": "helm/plugins",
        "PATH": "bin",
    }
    env = {}
    for variable, directory in homes.items():
        path = sandbox / directory
        path.mkdir(parents=True, exist_ok=True)
        env[variable] = str(path)
    kubeconfig = sandbox / "kubeconfig"
    kubeconfig.touch()
    env |= {
        "KUBECONFIG": str(kubeconfig),
        "HELM_NO_PLUGINS": "1",
        # No git protocol allowed, no git configuration read, no prompt, no ssh.
        "GIT_ALLOW_PROTOCOL": "",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_SSH_COMMAND": str(sandbox / "no-ssh"),
        "NO_PROXY": "",
        "no_proxy": "",
        "LC_ALL": "C",
    }
    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[variable] = env[variable.lower()] = DEAD_PROXY
    return env


def run_tool(command: Sequence[str], what: str, run: RenderRun, cwd: Path | None = None) -> str:
    """The standard output of `command`; RenderError with the tool's message (cleaned) when
    it fails, prints text that is not UTF-8, or outlasts its timeout or the run's budget."""
    remaining = run.remaining()
    if remaining <= 0:
        raise RenderTimeout(_over_budget(what, run))
    timeout = min(TOOL_TIMEOUT, remaining)
    try:
        with tempfile.TemporaryDirectory(
            prefix="gpulint-render-", ignore_cleanup_errors=True
        ) as sandbox:
            env = child_environment(Path(sandbox))
            done = subprocess.run(
                list(command),
                capture_output=True,
                check=False,
                timeout=timeout,
                cwd=cwd or sandbox,
                env=env,
                # Never ask for credentials or a passphrase on a terminal: a hook has none.
                stdin=subprocess.DEVNULL,
            )
    except subprocess.TimeoutExpired:
        if timeout < TOOL_TIMEOUT:
            raise RenderTimeout(_over_budget(what, run)) from None
        raise RenderTimeout(f"{what}: took more than {TOOL_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise ToolFailed(f"{what}: cannot run {command[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        message = tool_message(done.stderr.decode("utf-8", "replace"))
        raise ToolFailed(f"{what}: {message or f'exit status {done.returncode}'}")
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RenderError(
            f"{what}: the output is not UTF-8 (byte {exc.start}); Kubernetes reads only UTF-8"
        ) from None


def _over_budget(what: str, run: RenderRun) -> str:
    return (
        f"{what}: the renders of this run took more than {run.budget:.0f} s in all, "
        "which gpulint allows (a template that loops?)"
    )


_HINT = re.compile(r"\s*Use --debug flag to render out invalid YAML\s*")
# helm's `fail` and `required`: the message after the template's position is the template's.
_EXECUTION = re.compile(r"(execution error at \([^)]*\)):.*", re.DOTALL)
# A function a template calls may quote the data it was given (`include` of a file's text).
_CALLING = re.compile(r"(error calling [\w.]+):.*", re.DOTALL)


def tool_message(stderr: str) -> str:
    """helm's or kustomize's error as one line, without text a template may have computed.

    The message of a `fail` or `required` and what follows `error calling FUNCTION:` are
    dropped, since a template can put a file's contents there; the rest is the tool's own
    text and the template's source (name, line, column, action). Cut to MESSAGE_LIMIT.
    """
    text = _HINT.sub(" ", stderr)
    hidden = "is not shown (it may hold file contents)"
    text = _EXECUTION.sub(rf"\1: the template's message {hidden}", text)
    text = _CALLING.sub(rf"\1: its message {hidden}", text)
    text = " ".join(text.split())
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    return text
