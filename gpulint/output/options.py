"""What a formatter needs to know besides the findings: colour, quietness, the repository root."""

import posixpath
from pathlib import Path

from gpulint.views import NamedTuple


class OutputOptions(NamedTuple):
    """How to render a report."""

    color: bool = False
    quiet: bool = False  # findings only: no notes, no summary line
    # Reported paths are relative to the working directory; `base` (`""` or `deploy/k8s/`)
    # makes them relative to the repository root, which is what SARIF and GitHub expect.
    base: str = ""
    root: Path | None = None  # the repository root (SARIF names it by its file URI)
    # Input read from stdin as (display name, bytes): the text report shows its lines too.
    stdin: tuple[str, bytes] | None = None


def repository_path(path: str, options: OutputOptions) -> str:
    """A reported path relative to the repository root; absolute paths and `<stdin>` stay."""
    if not options.base or path.startswith(("/", "<")):
        return path
    return posixpath.normpath(options.base + path)


def repository_options(
    cwd: Path,
    *,
    color: bool = False,
    quiet: bool = False,
    stdin: tuple[str, bytes] | None = None,
) -> OutputOptions:
    """Options whose `base` and `root` come from the git repository around `cwd`.

    Outside a git repository the working directory stands in for the root.
    """
    root = next((d for d in (cwd, *cwd.parents) if (d / ".git").exists()), cwd)
    base = cwd.relative_to(root).as_posix()
    return OutputOptions(
        color=color,
        quiet=quiet,
        base="" if base == "." else base + "/",
        root=root,
        stdin=stdin,
    )


#: Plain output for paths that are already repository-relative.
DEFAULT_OPTIONS = OutputOptions()
