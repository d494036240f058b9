"""Throwaway git repositories for tests that run real tools (pre-commit, act) on them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Output of pip when the package index cannot be reached: such runs skip, not fail.
NETWORK_TROUBLE = (
    "Could not find a version that satisfies",
    "No matching distribution found",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
)


def git(repo: Path, *args: str) -> None:
    """Run git in `repo` with a throwaway identity."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def write_files(path: Path, files: dict[str, str]) -> None:
    """Write each `name: text` of `files` under `path`."""
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A git repository at `path` with `files` committed."""
    path.mkdir()
    git(path, "init", "-q")
    write_files(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "manifests")
    return path


def snapshot_checkout(path: Path, extra: dict[str, str] | None = None) -> Path:
    """This checkout as a clean clone would have it (plus `extra` files), committed at `path`.

    Every tracked or untracked, not ignored file is copied: tools that clone or copy a dirty
    repository carry changes to tracked files only, so a new module would be missing.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.split("\0")):
            source = ROOT / name
            if source.is_file():
                target = path / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    else:  # an unpacked sdist
        shutil.copytree(ROOT, path, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_BUILT))
    write_files(path, extra or {})
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "snapshot")
    return path


_BUILT = (".venv", ".git", "__pycache__", "*.egg-info", ".pytest_cache", ".ruff_cache")
