"""Inputs a pull request controls that are not regular files, `context:` globs that leave the
project, and variables that multiply a file past the size limit: each is refused, never read
without end, never blocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main

NOT_REGULAR = "not a regular file (a device, FIFO or socket is not read)"
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - name: c
      image: c:1.0
      resources:
        limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pod.yaml").write_text(POD)
    monkeypatch.chdir(repo)
    return repo


def gpulint(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """gpulint in a child process: were a FIFO opened, the test fails on the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "gpulint", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def findings(stdout: str) -> list[tuple[str, str, int, str]]:
    return [(f["code"], f["path"], f["line"], f["message"]) for f in json.loads(stdout)["findings"]]


# --- manifests ---------------------------------------------------------------------------


def test_a_fifo_given_by_name_is_a_finding_not_a_wait(repo: Path) -> None:
    os.mkfifo(repo / "pipe.yaml")  # nobody writes to it
    done = gpulint(repo, "check", "--isolated", "--format", "json", "pipe.yaml")
    assert findings(done.stdout) == [("GPU000", "pipe.yaml", 1, f"cannot read file: {NOT_REGULAR}")]


def test_a_symlink_to_a_device_given_by_name_is_a_finding(repo: Path) -> None:
    # What pre-commit passes for a symlink a pull request adds.
    (repo / "zero.yaml").symlink_to("/dev/zero")
    done = gpulint(repo, "check", "--isolated", "--format", "json", "zero.yaml")
    refusal = "cannot read file: a symlink to /dev/zero, outside the checked tree"
    assert findings(done.stdout) == [("GPU000", "zero.yaml", 1, refusal)]


def test_a_symlink_to_a_fifo_in_the_tree_is_a_finding(repo: Path) -> None:
    os.mkfifo(repo / "pipe")
    (repo / "pipe.yaml").symlink_to("pipe")
    done = gpulint(repo, "check", "--isolated", "--format", "json", "pipe.yaml")
    assert findings(done.stdout) == [("GPU000", "pipe.yaml", 1, f"cannot read file: {NOT_REGULAR}")]


@pytest.mark.parametrize("walked", [False, True], ids=["given", "walked"])
def test_a_symlink_out_of_the_tree_is_never_read_into_the_report(repo: Path, walked: bool) -> None:
    secret = repo.parent / "credentials"
    secret.write_text("[default]\naws_secret_access_key = CI-SECRET-1234\n")
    (repo / ".git").mkdir()  # the work tree the link is in
    (repo / "creds.yaml").symlink_to(secret)
    done = gpulint(repo, "check", "--isolated", "." if walked else "creds.yaml")
    assert "CI-SECRET-1234" not in done.stdout + done.stderr
    assert (
        f"creds.yaml:1:1: GPU000 [error] cannot read file: a symlink to {secret}, outside the "
        "checked tree"
    ) in done.stdout


def test_a_symlink_inside_the_work_tree_is_read(repo: Path) -> None:
    (repo / ".git").mkdir()
    (repo / "k8s").mkdir()
    (repo / "k8s" / "pod.yaml").symlink_to("../pod.yaml")
    done = gpulint(repo, "check", "--isolated", "--format", "json", "k8s/pod.yaml")
    assert (done.returncode, findings(done.stdout)) == (0, [])


def test_a_pipe_named_as_the_shell_names_one_is_still_read(repo: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, POD.replace('cpu: "1", ', "").encode())
    os.close(write_end)
    pipe = f"/dev/fd/{read_end}"
    done = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", "--isolated", "--format=json", pipe],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        pass_fds=(read_end,),
    )
    os.close(read_end)
    assert json.loads(done.stdout)["summary"]["objects"] == 1


# --- profiles ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "refusal"),
    [("fifo", NOT_REGULAR), ("device", "a symlink to /dev/zero, outside the checked tree")],
)
def test_a_profile_that_is_not_a_regular_file_is_one_line_and_exit_2(
    repo: Path, kind: str, refusal: str
) -> None:
    if kind == "fifo":
        os.mkfifo(repo / "cluster.yaml")
    else:
        (repo / "cluster.yaml").symlink_to("/dev/zero")
    done = gpulint(repo, "check", "--isolated", "--profile", "cluster.yaml", "pod.yaml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"gpulint: error: cluster.yaml: cannot read profile: {refusal}\n"


def test_a_profile_the_config_names_as_a_fifo_is_refused(repo: Path) -> None:
    os.mkfifo(repo / "cluster.yaml")
    (repo / ".gpulint.yaml").write_text("clusters:\n  prod: [cluster.yaml]\n")
    done = gpulint(repo, "check", "pod.yaml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("gpulint: error: ")
    assert done.stderr.endswith(f"cluster.yaml: cannot read profile: {NOT_REGULAR}\n")


@pytest.mark.parametrize("written", ["/proc/self/environ", "../../home/ci/.kube/config"])
def test_a_cluster_profile_out_of_the_project_is_a_config_error_at_its_line(
    repo: Path, written: str
) -> None:
    (repo / ".gpulint.yaml").write_text(f'clusters:\n  prod: ["cluster.yaml", "{written}"]\n')
    done = gpulint(repo, "check", "pod.yaml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"gpulint: error: {repo / '.gpulint.yaml'}:2:26: clusters: `{written}` is outside the "
        f"project root {repo}\n"
    )


# --- context: ----------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["/**/*.yaml", "../../**/*.yaml", "k8s/../../x.yaml"])
def test_a_context_glob_out_of_the_project_is_a_config_error_at_its_line(
    repo: Path, pattern: str
) -> None:
    (repo / ".gpulint.yaml").write_text(f'fail-on: error\ncontext:\n  - "{pattern}"\n')
    done = gpulint(repo, "check", "pod.yaml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"gpulint: error: {repo / '.gpulint.yaml'}:3:5: context: `{pattern}` is outside the "
        f"project root {repo}\n"
    )


def test_a_context_glob_through_a_symlink_out_of_the_project_is_refused(repo: Path) -> None:
    outside = repo.parent / "outside"
    outside.mkdir()
    (outside / "quota.yaml").write_text("kind: ResourceQuota\n")
    (repo / "k8s").mkdir()
    (repo / "k8s" / "more.yaml").symlink_to(outside / "quota.yaml")
    (repo / ".gpulint.yaml").write_text('context: ["k8s/*.yaml"]\n')
    done = gpulint(repo, "check", "pod.yaml")
    assert done.returncode == 2
    assert done.stderr == (
        f"gpulint: error: {repo / '.gpulint.yaml'}:1:11: context: `k8s/*.yaml` names "
        f"{repo / 'k8s' / 'more.yaml'}, a link to {outside / 'quota.yaml'} outside {repo}\n"
    )


def test_a_context_glob_does_not_follow_symlinked_directories(repo: Path) -> None:
    # Two links to `..`: a walk following them would visit 2**40 paths.
    (repo / "k8s").mkdir()
    (repo / "k8s" / "quota.yaml").write_text(POD)
    (repo / "k8s" / "up").symlink_to("..")
    (repo / "k8s" / "up2").symlink_to("..")
    (repo / ".gpulint.yaml").write_text('context: ["**/*.yaml"]\n')
    done = gpulint(repo, "check", "--format", "json", "pod.yaml")
    assert (done.returncode, done.stderr) == (0, "")
    assert findings(done.stdout) == []


def test_a_context_entry_that_is_a_fifo_is_not_read(repo: Path) -> None:
    os.mkfifo(repo / "pipe.yaml")
    (repo / ".gpulint.yaml").write_text('context: ["pipe.yaml", "*.yaml"]\n')
    done = gpulint(repo, "check", "--format", "json", "pod.yaml")
    assert (done.returncode, done.stderr) == (0, "")
    assert findings(done.stdout) == []


# --- size limits after substitution ------------------------------------------------------


def test_variables_that_multiply_a_file_past_the_limit_are_a_finding(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gpulint.loader.MAX_FILE_BYTES", 1 << 20)  # 128 MiB in the product
    (repo / ".gpulint.yaml").write_text(f"variables:\n  X: {'x' * 1000}\n")
    (repo / "pod.yaml").write_text(POD + "# " + "$X " * 2000 + "\n")  # 2 MB once substituted
    result = CliRunner().invoke(main, ["check", "--format", "json", "pod.yaml"])
    assert findings(result.stdout) == [
        (
            "GPU000",
            "pod.yaml",
            1,
            "larger than 1 MiB once `variables` are substituted, which gpulint refuses",
        )
    ]


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_gitignore_that_is_not_a_regular_file_is_not_read(repo: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(repo / ".gitignore")  # blocks whoever opens it
    else:
        (repo / ".gitignore").symlink_to("/dev/zero")  # never ends
    done = gpulint(repo, "check", "--isolated", "--format", "json", ".")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["summary"]["files"] == 1


def test_a_config_that_links_out_of_the_tree_is_not_read(repo: Path) -> None:
    secret = repo.parent / "settings.yaml"
    secret.write_text("token: CI-SECRET-1234\n")
    (repo / ".git").mkdir()
    (repo / ".gpulint.yaml").symlink_to(secret)
    done = gpulint(repo, "check", "pod.yaml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"gpulint: error: {repo / '.gpulint.yaml'}: cannot read config: a symlink to {secret}, "
        "outside the checked tree\n"
    )


def test_a_manifest_named_through_a_directory_linked_out_of_the_tree_is_not_read(
    repo: Path,
) -> None:
    outside = repo.parent / "elsewhere"
    outside.mkdir()
    (outside / "pod.yaml").write_text(POD.replace("nvidia.com/gpu", "CI-SECRET-1234"))
    (repo / ".git").mkdir()
    (repo / "linked").symlink_to(outside)
    done = gpulint(repo, "check", "--format", "json", "linked/pod.yaml")
    assert (done.returncode, done.stderr) == (1, "")
    assert "CI-SECRET" not in done.stdout
    assert findings(done.stdout) == [
        (
            "GPU000",
            "linked/pod.yaml",
            1,
            f"cannot read file: a symlink to {outside / 'pod.yaml'}, outside the checked tree",
        )
    ]


def test_a_fifo_named_by_stdin_filename_is_not_opened(repo: Path) -> None:
    # Rendered text on stdin is compared with the file it names, unless that is no regular file.
    os.mkfifo(repo / "x")
    rendered = "# Source: chart/templates/pod.yaml\n" + POD
    done = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", "--isolated", "-", "--stdin-filename", "x"],
        input=rendered,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All checks passed" in done.stdout
