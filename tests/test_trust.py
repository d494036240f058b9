"""A config file or a cache another user could have written is not obeyed: it is passed over
with one warning naming it, as git's safe.directory passes over a repository.

Giving a file to another user needs root: these tests are skipped otherwise."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.config import _validated_marker

OTHER_USER = 65534  # nobody
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
# GPU001: an error, which `fail-on: never` would turn into exit 0.
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - name: c
      image: c:1.0
      resources:
        limits: {cpu: "1", memory: 1Gi, "nvidia.com/gpus": 1}
"""
OBEYED = "fail-on: never\n"


def as_another_user(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    os.chown(path, OTHER_USER, OTHER_USER, follow_symlinks=False)


def writable_by_all(path: Path, sticky: bool = False) -> None:
    path.chmod(0o777 | (stat.S_ISVTX if sticky else 0))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pod.yaml").write_text(POD)
    monkeypatch.chdir(repo)
    return repo


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args, "pod.yaml"])
    return result.exit_code, result.stderr


def test_a_config_of_another_user_is_ignored_with_one_warning(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(OBEYED)
    as_another_user(repo / ".gpulint.yaml")
    assert check() == (
        1,
        f"gpulint: warning: {repo / '.gpulint.yaml'} belongs to another user: config ignored "
        "(pass --config to use it)\n",
    )


def test_a_pyproject_table_of_another_user_is_ignored(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.gpulint]\nfail-on = "never"\n')
    as_another_user(repo / "pyproject.toml")
    code, err = check()
    assert code == 1
    assert err.startswith(f"gpulint: warning: {repo / 'pyproject.toml'} belongs to another user")


def test_a_config_in_a_directory_everyone_may_write_is_ignored(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(OBEYED)
    writable_by_all(repo)
    assert check() == (
        1,
        f"gpulint: warning: {repo / '.gpulint.yaml'} is in {repo}, which is writable by other "
        "users: config ignored (pass --config to use it)\n",
    )


def test_a_config_passed_over_lets_the_one_above_apply(repo: Path) -> None:
    (repo.parent / ".gpulint.yaml").write_text("fail-on: warning\n")
    (repo / ".gpulint.yaml").write_text(OBEYED)
    writable_by_all(repo)
    code, err = check()
    assert code == 1 and err.count("\n") == 1


def test_a_sticky_directory_everyone_may_write_is_trusted_like_tmp(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(OBEYED)
    writable_by_all(repo, sticky=True)
    assert check() == (0, "")


def test_a_config_given_by_name_is_used_whoever_owns_it(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(OBEYED)
    as_another_user(repo / ".gpulint.yaml")
    assert check("--config", ".gpulint.yaml") == (0, "")


def test_a_validation_marker_of_another_user_does_not_skip_validation(
    repo: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    invalid = b"fail-on: sometimes\n"
    (repo / ".gpulint.yaml").write_bytes(invalid)
    marker = _validated_marker(cache, ".gpulint.yaml", invalid)
    assert marker is not None
    marker.parent.mkdir(parents=True)
    marker.touch()  # planted: these bytes "validated"
    as_another_user(marker.parent)
    result = CliRunner().invoke(main, ["check", "--cache-dir", str(cache), "pod.yaml"])
    assert result.exit_code == 2
    assert result.stderr.startswith("gpulint: error: ")
    assert "sometimes" in result.stderr


# --- the cache directory -----------------------------------------------------------------


def check_with_profile(cache: Path) -> tuple[int, str]:
    profile = str(FIXTURES / "profiles" / "placement-eks.yaml")
    args = ["check", "--isolated", "--cache-dir", str(cache), "--profile", profile, "pod.yaml"]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stderr


#: Every folder of the cache: each is read with no check of its own.
SHARED_FOLDERS = ("configs", "files", "profiles", "renders", "results", "schemas", "values")


@pytest.mark.parametrize("folder", SHARED_FOLDERS)
def test_a_folder_of_another_user_in_a_shared_cache_is_one_warning_and_no_cache(
    repo: Path, tmp_path: Path, folder: str
) -> None:
    cache = tmp_path / "cache"
    (cache / folder).mkdir(parents=True)
    as_another_user(cache / folder)
    assert check_with_profile(cache) == (
        1,
        f"gpulint: warning: {cache / folder} is not a directory of the user's own; "
        "running without a cache\n",
    )
    assert list(cache.rglob("*")) == [cache / folder]  # nothing written


@pytest.mark.parametrize("folder", SHARED_FOLDERS)
def test_a_folder_everyone_may_write_is_not_used(repo: Path, tmp_path: Path, folder: str) -> None:
    cache = tmp_path / "cache"
    (cache / folder).mkdir(parents=True)
    writable_by_all(cache / folder, sticky=True)  # others could still add entries
    assert check_with_profile(cache) == (
        1,
        f"gpulint: warning: {cache / folder} is writable by other users; running without a cache\n",
    )


def test_a_cache_directory_everyone_may_write_is_not_used(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    writable_by_all(cache)
    assert check_with_profile(cache) == (
        1,
        f"gpulint: warning: cache directory {cache} is writable by other users; "
        "running without a cache\n",
    )
    assert list(cache.iterdir()) == []


def test_a_cache_in_a_directory_everyone_may_write_is_not_used(repo: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    cache = shared / "cache"
    cache.mkdir(parents=True)
    writable_by_all(shared)
    assert check_with_profile(cache) == (
        1,
        f"gpulint: warning: cache directory {cache} is in {shared}, which is writable by "
        "other users; running without a cache\n",
    )
