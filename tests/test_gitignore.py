"""`.gitignore` in directory walks: the matcher agrees with git, and `gpulint check` skips what
git ignores unless told not to."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.gitignore import GitIgnore
from tests.manifests import REQUEST_ONLY

# .gitignore files (by directory) and the paths to ask about; a path ending in `/` is a
# directory. The answers are git's own (`git check-ignore`), asked in the test below.
IGNORES = {
    "": (
        "# a comment\n"
        "build/\n"
        "*.gen.yaml\n"
        "/rooted.yaml\n"
        "docs/**/draft-*.yaml\n"
        "cache/**\n"
        "!cache/keep.yaml\n"
        "**/tmp\n"
        "lit\\#eral.yaml\n"
        "\\!bang.yaml\n"
        "trailing.yaml\\ \n"
        "ch[ab]rt?.yaml\n"
        "k8s/*.yaml\n"
        "!k8s/keep-*.yaml\n"
        "notes.yaml\n"
        "*.tmp.yaml\n"
        "deep/exact.yaml\n"
        "*.d/\n"
    ),
    "sub/": "local.yaml\n/only-here.yaml\n!build/\n",
}
PATHS = [
    "build/",
    "sub/build/",
    "a.gen.yaml",
    "sub/deep/b.gen.yaml",
    "rooted.yaml",
    "sub/rooted.yaml",
    "docs/draft-a.yaml",
    "docs/x/y/draft-b.yaml",
    "docs/final.yaml",
    "cache/x.yaml",
    "cache/keep.yaml",
    "tmp/",
    "a/b/tmp/",
    "tmp.yaml",
    "lit#eral.yaml",
    "!bang.yaml",
    "trailing.yaml ",
    "trailing.yaml",
    "chart1.yaml",
    "chbrtz.yaml",
    "chcrt1.yaml",
    "k8s/app.yaml",
    "k8s/keep-me.yaml",
    "k8s/nested/app.yaml",
    "sub/local.yaml",
    "sub/x/local.yaml",
    "local.yaml",
    "sub/only-here.yaml",
    "sub/x/only-here.yaml",
    "notes.yaml",
    "x/notes.yaml",
    "x/anotes.yaml",
    "a.tmp.yaml",
    "x/y/b.tmp.yaml",
    "x/tmp.yaml",
    "deep/exact.yaml",
    "x/deep/exact.yaml",
    "conf.d/",
    "x/conf.d/",
    "x/conf.d",
]


def _is_dir(path: str) -> bool:
    return path.endswith("/")


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # a work tree, as far as gpulint looks
    for directory, text in IGNORES.items():
        (tmp_path / directory).mkdir(parents=True, exist_ok=True)
        (tmp_path / directory / ".gitignore").write_text(text)
    return tmp_path


def test_the_matcher_agrees_with_git(tree: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    shutil.rmtree(tree / ".git")
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    asked = [p.rstrip("/") + ("/" if _is_dir(p) else "") for p in PATHS]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=tree,
        input="\0".join(asked) + "\0",
        capture_output=True,
        text=True,
    )
    by_git = set(filter(None, done.stdout.split("\0")))
    matcher = GitIgnore()
    ours = {p for p in asked if matcher(str(tree / p.rstrip("/")), _is_dir(p))}
    assert ours == by_git
    # The table has both answers in it, or it would prove little.
    assert 10 < len(by_git) < len(PATHS) - 5


def test_a_path_gets_the_same_answer_however_it_is_written(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A walk names files relative to the working directory (or absolute, as given); each
    # directory's absolute path is worked out once for all its files.
    monkeypatch.chdir(tree / "sub")
    absolute = GitIgnore()
    expected = [absolute(str(tree / p.rstrip("/")), _is_dir(p)) for p in PATHS]
    for written in (lambda p: f"../{p}", lambda p: f"./../{p}", lambda p: f"{tree}/./{p}"):
        matcher = GitIgnore()
        found = [matcher(written(p.rstrip("/")), _is_dir(p)) for p in PATHS]
        assert found == expected
    assert any(expected) and not all(expected)


def test_outside_a_work_tree_nothing_is_ignored(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.yaml\n")
    assert not GitIgnore()(str(tmp_path / "a.yaml"), False)


def test_info_exclude_counts_as_a_root_ignore_file(tree: Path) -> None:
    (tree / ".git" / "info").mkdir()
    (tree / ".git" / "info" / "exclude").write_text("private.yaml\n")
    assert GitIgnore()(str(tree / "sub" / "private.yaml"), False)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A work tree with a manifest in k8s/ and the same one in a gitignored build/."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n")
    for name in ("k8s/pod.yaml", "build/pod.yaml"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(REQUEST_ONLY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def checked(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["check", "--isolated", "--format", "json", *args])
    assert result.exit_code == 1, result.output
    return [f["path"] for f in json.loads(result.stdout)["findings"]]


def test_a_gitignored_file_is_not_checked(repo: Path) -> None:
    assert checked() == ["k8s/pod.yaml"]
    assert checked(".") == ["k8s/pod.yaml"]


def test_no_respect_gitignore_checks_it(repo: Path) -> None:
    assert checked("--no-respect-gitignore") == ["build/pod.yaml", "k8s/pod.yaml"]
    (repo / ".gpulint.yaml").write_text("respect-gitignore: false\n")
    result = CliRunner().invoke(main, ["check", "--format", "json"])
    assert [f["path"] for f in json.loads(result.stdout)["findings"]] == [
        "build/pod.yaml",
        "k8s/pod.yaml",
    ]


def test_a_path_named_on_the_command_line_is_checked(repo: Path) -> None:
    # As git lints tracked files a pattern matches, and pre-commit names tracked files only.
    assert checked("build/pod.yaml") == ["build/pod.yaml"]
    assert checked("build") == ["build/pod.yaml"]
