"""`gpulint check --add-ignore` (ruff's `--add-noqa`) and `--skip-kind`, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main
from gpulint.edits import AddIgnore, apply_fixes

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer   # owner: ml
spec:
  selector: {matchLabels: {app: c}}
  template:
    spec:
      containers:
      - name: c
        image: trainer:1.0
        resources:
          requests:
            nvidia.com/gpu: 1
          limits:
            nvidia.com/gpu: 0.5  # gpulint: ignore[GPU002: tracked in OPS-12]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpus: 1}}}
"""

# Only the lines of findings change; the comment already there keeps its reason.
ADDED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer   # owner: ml
spec:
  selector: {matchLabels: {app: c}}
  template:
    spec:
      containers:
      - name: c
        image: trainer:1.0
        resources:  # gpulint: ignore[GPU601]
          requests:
            nvidia.com/gpu: 1  # gpulint: ignore[GPU002]
          limits:
            nvidia.com/gpu: 0.5  # gpulint: ignore[GPU002, GPU003: tracked in OPS-12]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpus: 1}}}\
  # gpulint: ignore[GPU001, GPU601]
"""


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding d.yaml."""
    (tmp_path / "d.yaml").write_text(MANIFEST, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    """`gpulint check --isolated ARGS`, in-process."""
    return CliRunner().invoke(main, ["check", "--isolated", *args])


def test_add_ignore_comments_every_finding_and_the_check_then_passes(workdir: Path) -> None:
    result = run("--add-ignore", "--output-format", "concise", "d.yaml")
    assert (workdir / "d.yaml").read_text(encoding="utf-8") == ADDED
    assert result.stderr == "gpulint: added ignore comments for 5 findings in 1 file(s)\n"
    assert "All checks passed (1 file, 2 objects)." in result.stdout
    assert result.exit_code == 0
    again = run("--output-format", "json", "d.yaml")
    assert json.loads(again.stdout)["findings"] == []
    assert again.exit_code == 0


def test_add_ignore_with_diff_prints_the_comments_and_writes_nothing(workdir: Path) -> None:
    result = run("--add-ignore", "--diff", "d.yaml")
    assert (workdir / "d.yaml").read_text(encoding="utf-8") == MANIFEST
    assert result.stdout.splitlines()[:5] == [
        "--- d.yaml",
        "+++ d.yaml",
        "@@ -9,15 +9,15 @@",
        "       containers:",
        "       - name: c",
    ]
    assert [line for line in result.stdout.splitlines() if line.startswith("+ ")] == [
        "+        resources:  # gpulint: ignore[GPU601]",
        "+            nvidia.com/gpu: 1  # gpulint: ignore[GPU002]",
        "+            nvidia.com/gpu: 0.5  # gpulint: ignore[GPU002, GPU003: tracked in OPS-12]",
        "+  - {name: c, image: x, resources: {limits: {nvidia.com/gpus: 1}}}  "
        "# gpulint: ignore[GPU001, GPU601]",
    ]
    assert result.stderr == "gpulint: would add ignore comments for 5 findings in 1 file(s)\n"
    assert result.exit_code == 1


def test_a_line_with_a_malformed_suppression_is_left_and_says_why(workdir: Path) -> None:
    text = MANIFEST.replace("nvidia.com/gpu: 1\n", "nvidia.com/gpu: 1  # gpulint: ignore GPU2\n")
    (workdir / "d.yaml").write_text(text, encoding="utf-8")
    result = run("--add-ignore", "--output-format", "concise", "d.yaml")
    assert result.stderr.splitlines()[0] == (
        "gpulint: d.yaml:14:13: GPU002: not fixed: the line holds a malformed suppression "
        "(GPU006): correct it first"
    )
    assert result.stderr.splitlines()[1] == (
        "gpulint: added ignore comments for 4 findings in 1 file(s)"
    )
    located = [line.split(" [")[0] for line in result.stdout.splitlines() if ": GPU" in line]
    assert located == ["d.yaml:14:13: GPU002", "d.yaml:14:32: GPU006"]
    assert result.exit_code == 1


def test_a_json_manifest_takes_no_comment(workdir: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
    }
    (workdir / "p.json").write_text(json.dumps(pod, indent=2) + "\n", encoding="utf-8")
    before = (workdir / "p.json").read_text(encoding="utf-8")
    result = run("--add-ignore", "p.json")
    assert (workdir / "p.json").read_text(encoding="utf-8") == before
    assert result.stderr == ("gpulint: p.json:11:9: GPU601: not fixed: JSON has no comments\n")


def test_add_ignore_and_fix_are_exclusive(workdir: Path) -> None:
    result = run("--add-ignore", "--fix", "d.yaml")
    assert result.stderr == (
        "gpulint: error: --add-ignore and --fix: choose one (fix first, then add ignores)\n"
    )
    assert result.exit_code == 2


def test_a_comment_inside_a_block_scalar_is_refused_by_the_check_of_the_tree() -> None:
    text = "a: |\n  line one\n  line two\nb: 1\n"
    made = apply_fixes(text, [(AddIgnore(2, ("GPU001",)),), (AddIgnore(4, ("GPU002",)),)])
    # The comment would be text of the scalar: refused; the other waits for the next pass.
    assert (made.text, made.applied, made.waiting) == (text, (), (1,))
    assert made.refused == {
        0: "the fixed text would change more than the fix (the edit lands in the wrong place)"
    }
    made = apply_fixes(text, [(AddIgnore(4, ("GPU002",)),)])
    assert made.text == "a: |\n  line one\n  line two\nb: 1  # gpulint: ignore[GPU002]\n"


def test_skip_kind_drops_findings_about_objects_of_that_kind(workdir: Path) -> None:
    def codes(*args: str) -> list[tuple[str, int]]:
        out = json.loads(run("--output-format", "json", *args, "d.yaml").stdout)
        return [(f["code"], f["line"]) for f in out["findings"]]

    deployment = [("GPU601", 12), ("GPU002", 14), ("GPU003", 16)]
    assert codes() == [*deployment, ("GPU601", 23), ("GPU001", 23)]
    assert codes("--skip-kind", "Pod") == deployment
    assert codes("--skip-kind", "deployment", "--skip-kind", "Pod") == []
    assert codes("--skip-kind", "Dep*") == [("GPU601", 23), ("GPU001", 23)]
