"""The pre-commit hook for real: `pre-commit try-repo` this checkout on a temporary git repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
BAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: trainer:1.0
        resources:
          requests: {cpu: "1", nvidia.com/gpu: 1}
"""
GOOD = BAD.replace(
    'requests: {cpu: "1", nvidia.com/gpu: 1}',
    'requests: {cpu: "1"}\n          limits: {nvidia.com/gpu: 1}',
)
# Helm templates are not YAML: the hook's exclude keeps them away from gpulint.
TEMPLATE = "kind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n"
NETWORK_TROUBLE = (
    "Could not find a version that satisfies",
    "No matching distribution found",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> None:
    """Run git in `repo` with a throwaway identity."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def make_repo(path: Path, files: dict[str, str]) -> Path:
    """A git repository at `path` with `files` committed."""
    path.mkdir()
    git(path, "init", "-q")
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "manifests")
    return path


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module, so the hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as a clean clone would have it: every tracked or untracked, not ignored file.

    try-repo's shadow copy of a dirty repository carries changes to tracked files only, so a
    module not yet added to git would be missing from the hook's install.
    """
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:  # not a git checkout (an unpacked sdist): use it as it is
        return ROOT
    snapshot = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git(snapshot, "init", "-q")
    git(snapshot, "add", "-A")
    git(snapshot, "commit", "-q", "-m", "snapshot")
    return snapshot


def try_repo(hook_repo: Path, repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """`pre-commit try-repo <hook_repo> gpulint --all-files` inside `repo`."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_INDEX_FILE", None)
    result = subprocess.run(
        [
            *PRE_COMMIT,
            "try-repo",
            str(hook_repo),
            "gpulint",
            "--all-files",
            "--verbose",
            "--color",
            "never",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    output = result.stdout + result.stderr
    if (
        result.returncode != 0
        and "Installing environment" in output
        and any(marker in output for marker in NETWORK_TROUBLE)
    ):
        pytest.skip(f"pre-commit could not reach the package index: {output[-400:]}")
    return result


def test_hook_manifest_is_valid() -> None:
    result = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hook_fails_on_a_bad_manifest_and_names_the_finding(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(
        tmp_path / "target",
        {
            "k8s/bad.yaml": BAD,
            "k8s/good.yml": GOOD,
            "chart/templates/pod.yaml": TEMPLATE,
            "README.md": "# not yaml\n",
        },
    )
    result = try_repo(hook_repo, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert (
        "k8s/bad.yaml:12:32: GPU002 [error] container `trainer` requests `nvidia.com/gpu`" in output
    )
    assert "chart/templates" not in output
    assert "Found 1 finding (1 error) in 2 files, 2 objects." in output


def test_hook_passes_on_a_clean_repo(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(tmp_path / "clean", {"k8s/good.yml": GOOD, "values.yaml": "replicas: 1\n"})
    result = try_repo(hook_repo, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Passed" in output
