"""The README's commands work as written, and its rule table is the catalogue's."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = re.findall(r"^python3 -m venv .*$", README, flags=re.MULTILINE)


def test_readme_starts_with_the_two_setup_commands() -> None:
    assert len(COMMANDS) == 2
    install_and_demo, install_and_test = COMMANDS
    assert ".venv/bin/gpulint check fixtures/demo" in install_and_demo
    assert install_and_test.endswith("&& .venv/bin/python -m pytest")


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert COMMANDS[1] in ci


def test_demo_command_reports_the_demo_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    gpulint_part = COMMANDS[0].split("&& .venv/bin/gpulint ", 1)[1]
    args = [*shlex.split(gpulint_part), "--isolated", "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    found = [
        (f["path"], f["code"], f["line"], f["column"])
        for f in json.loads(result.stdout)["findings"]
    ]
    assert found == [
        ("fixtures/demo/placement.yaml", "GPU103", 10, 5),
        ("fixtures/demo/placement.yaml", "GPU202", 24, 3),
        ("fixtures/demo/placement.yaml", "GPU104", 49, 9),
        ("fixtures/demo/rendered-chart.yaml", "GPU004", 23, 11),
        ("fixtures/demo/training.yaml", "GPU001", 22, 13),
        ("fixtures/demo/training.yaml", "GPU601", 42, 9),
        ("fixtures/demo/training.yaml", "GPU002", 44, 13),
        ("fixtures/demo/training.yaml", "GPU003", 46, 29),
    ]


def test_readme_first_example_is_the_demo_output(monkeypatch: pytest.MonkeyPatch) -> None:
    # The finding the README opens with is printed, verbatim, by its quick-start command.
    monkeypatch.chdir(ROOT)
    example = re.search(r"```text\n(.*?)```", README, flags=re.DOTALL)
    assert example is not None
    gpulint_part = COMMANDS[0].split("&& .venv/bin/gpulint ", 1)[1]
    args = [*shlex.split(gpulint_part), "--isolated", "--color", "never"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert example.group(1) in result.stdout


def test_readme_rule_table_is_the_catalogue() -> None:
    table = CliRunner().invoke(main, ["rules", "--format", "markdown"]).stdout
    start = README.index("<!-- rules-table")
    block = README[README.index("\n", start) + 1 : README.index("<!-- end rules-table -->")]
    assert block == table


def test_python_example_prints_what_gpulint_check_reports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    example = re.search(r"### From Python\n.*?```python\n(.*?)```", README, flags=re.DOTALL)
    assert example is not None
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(example.group(1), namespace)
    printed = capsys.readouterr().out.splitlines()
    args = ["check", "fixtures/demo", "--profile", "fixtures/profiles/eks.yaml"]
    result = CliRunner().invoke(main, [*args, "--ignore", "GPU601", "--format", "json"])
    reported = [
        f"{f['path']}:{f['line']}:{f['column']}: {f['code']} [{f['severity']}] {f['message']}"
        for f in json.loads(result.stdout)["findings"]
    ]
    assert printed == reported
    assert [line.split(" ", 2)[1] for line in printed] == [
        "GPU103",
        "GPU202",
        "GPU104",
        "GPU004",
        "GPU001",
        "GPU002",
        "GPU003",
    ]
    assert namespace["exit_code"] == result.exit_code == 1
