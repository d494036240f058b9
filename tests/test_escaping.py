"""Paths and manifest lines printed outside findings are escaped as findings are: no terminal
escape, no line break out of a name, no line a CI runner reads as a workflow command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.findings import Finding, RenderedAt
from gpulint.model import Severity
from gpulint.output.escape import diff_text
from gpulint.output.github import annotation
from gpulint.output.text import format_finding

# A pod whose fixable resource name (GPU001) is three lines below a block scalar line that
# begins, after its indentation, with `::`: the diff echoes it as context.
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - name: server
      image: server:1.0
      args:
        - |
          ::error title=pwned::gpulint
      resources:
        limits:
          "nvidia.com/gpus": 1
"""
HOSTILE = "a\x1b[2J\n::error::x.yaml"  # clears the screen, then a workflow command
SHOWN = "a\\x1b[2J\\n::error::x.yaml"
# What the Actions runner reads as a command: `::` at a line's start, after spaces.
COMMAND = re.compile(r"^\s*::", re.MULTILINE)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_diff_escapes_the_names_in_its_headers_and_the_lines_it_echoes(workdir: Path) -> None:
    (workdir / HOSTILE).write_text(POD)
    result = CliRunner().invoke(main, ["check", "--isolated", "--diff", "."])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:4] == [
        f"--- {SHOWN}",
        f"+++ {SHOWN}",
        "@@ -10,4 +10,4 @@",
        "           \\x3a:error title=pwned::gpulint",
    ]
    assert not COMMAND.search(result.stdout)
    assert "\x1b" not in result.output


def test_a_diff_keeps_its_tabs_and_crlf_line_breaks() -> None:
    diff = "--- a\n+++ a\n@@ -1 +1 @@\n-x:\t1\r\n+  ::y\x1b\r\n"
    assert diff_text(diff) == "--- a\n+++ a\n@@ -1 +1 @@\n-x:\t1\r\n+  ::y\\x1b\r\n"


def test_show_files_escapes_each_name(workdir: Path) -> None:
    (workdir / HOSTILE).write_text(POD)
    result = CliRunner().invoke(main, ["check", "--isolated", "--show-files", "."])
    assert result.stdout == f"{SHOWN}\n"


def test_the_not_fixed_line_escapes_the_name(workdir: Path) -> None:
    (workdir / HOSTILE).write_text(POD + "---\nkind: [\n")  # does not parse
    result = CliRunner().invoke(main, ["check", "--isolated", "--fix", "."])
    assert f"gpulint: {SHOWN}: not fixed: it does not parse (16:1: " in result.stderr
    assert not COMMAND.search(result.stderr)


def test_the_stdin_note_escapes_stdin_filename(workdir: Path) -> None:
    args = ["check", "--isolated", "--fix", "--stdin-filename", HOSTILE, "-"]
    result = CliRunner().invoke(main, args, input=POD)
    assert (
        f"gpulint: {SHOWN}: not fixed: standard input is not fixed in place; --diff shows its"
        " fixes\n" in result.stderr
    )
    assert not COMMAND.search(result.stderr)


def test_an_error_line_escapes_the_path_it_names(workdir: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--isolated", "--profile", HOSTILE, "."])
    assert result.exit_code == 2
    assert result.stderr == f"gpulint: error: {SHOWN}: profile file not found\n"


def test_the_render_a_finding_sits_in_is_named_escaped() -> None:
    rendered = RenderedAt(of=HOSTILE, line=3, column=5)
    finding = Finding(
        code="GPU002",
        name="gpu-limit-request-mismatch",
        severity=Severity.ERROR,
        path="chart/templates/pod.yaml",
        line=1,
        column=1,
        message="m",
        fix=None,
        rendered=rendered,
    )
    assert f"  = rendered: {SHOWN}:3:5" in format_finding(finding).splitlines()
    command = annotation(finding)
    assert "\x1b" not in command and "\n" not in command
    assert "rendered: a\\x1b[2J\\n::error::x.yaml:3:5" in command.replace("%0A", "\n")
