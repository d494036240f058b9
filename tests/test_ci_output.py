"""`--format github|junit`, `--statistics`, `--quiet`, `--silent` and `gpulint profile validate`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import OUTPUT_FORMATS, main
from gpulint.findings import Finding
from gpulint.model import ObjectRef, Severity
from gpulint.output import FORMATTERS
from gpulint.output.github import annotation, escape_data, escape_property
from gpulint.output.options import OutputOptions
from tests.manifests import BEST_EFFORT, CLEAN, REQUEST_ONLY

GPU002_MESSAGE = (
    "container `c` requests `nvidia.com/gpu` without a limit; the API rejects it "
    "(Limit must be set for non overcommitable resources)"
)
GPU002_FIX = (
    "Add `limits: {nvidia.com/gpu: 1}` or replace the request with that limit "
    "(the request defaults to the limit)."
)


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository root as the working directory, with three pods in k8s/."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "pods.yaml").write_text(
        REQUEST_ONLY + "---\n" + BEST_EFFORT + "---\n" + CLEAN
    )
    return tmp_path


def test_the_cli_offers_exactly_the_formatters() -> None:
    assert set(OUTPUT_FORMATS) == set(FORMATTERS)


# --- GitHub workflow commands ------------------------------------------------------------


def test_escape_data_escapes_percent_first_then_cr_and_lf() -> None:
    assert escape_data("100% of 1\r\n2 a:b,c") == "100%25 of 1%0D%0A2 a:b,c"
    assert escape_data("%0A") == "%250A"  # an escape sequence in the text stays literal


def test_escape_property_also_escapes_colon_and_comma() -> None:
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Read a workflow command back as the runner does (ActionCommand.TryParseV2)."""
    match = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
    assert match, line
    name, listed, data = match.groups()

    def unescape(text: str) -> str:
        for escaped, plain in (
            ("%0D", "\r"),
            ("%0A", "\n"),
            ("%3A", ":"),
            ("%2C", ","),
            ("%25", "%"),
        ):
            text = text.replace(escaped, plain)
        return text

    properties = dict(item.split("=", 1) for item in (listed or "").split(",") if item)
    return name, {k: unescape(v) for k, v in properties.items()}, unescape(data)


def test_annotation_round_trips_through_the_runner_parser() -> None:
    finding = Finding(
        code="GPU102",
        name="missing-gpu-toleration",
        severity=Severity.WARNING,
        path="deploy/a,b:c.yaml",
        line=14,
        column=5,
        message="pod fits pool g5, except: taint 100%",
        fix="Add:\ntolerations:\n- key: sku",
        object=ObjectRef("apps/v1", "Deployment", "ml", "trainer"),
        source="chart/templates/d.yaml",
    )
    line = annotation(finding, OutputOptions(base="repo/"))
    assert "\n" not in line
    assert line.startswith(
        "::warning file=repo/deploy/a%2Cb%3Ac.yaml,line=14,col=5,"
        "title=GPU102 missing-gpu-toleration::pod fits pool g5, except: taint 100%25%0A"
    )
    assert parse_command(line) == (
        "warning",
        {
            "file": "repo/deploy/a,b:c.yaml",
            "line": "14",
            "col": "5",
            "title": "GPU102 missing-gpu-toleration",
        },
        "pod fits pool g5, except: taint 100%\nfrom: chart/templates/d.yaml\n"
        "fix: Add:\ntolerations:\n- key: sku",
    )


def test_github_format_annotates_each_finding_then_summarises(workdir: Path) -> None:
    result = run("check", "--isolated", "--format", "github", "k8s")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert parse_command(lines[0]) == (
        "error",
        {
            "file": "k8s/pods.yaml",
            "line": "10",
            "col": "28",
            "title": "GPU002 gpu-limit-request-mismatch",
        },
        f"{GPU002_MESSAGE}\nfix: {GPU002_FIX}",
    )
    assert lines[1].startswith(
        "::warning file=k8s/pods.yaml,line=19,col=5,title=GPU601 gpu-pod-besteffort-cpu-memory::"
    )
    assert lines[-1] == "Found 2 findings (1 error, 1 warning) in 1 file, 3 objects."


def test_github_paths_are_relative_to_the_repository_root(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workdir / "k8s")
    lines = run("check", "--isolated", "--format", "github", "pods.yaml").stdout.splitlines()
    assert lines[0].startswith("::error file=k8s/pods.yaml,line=10,col=28,")


def test_info_findings_are_notices(workdir: Path) -> None:
    (workdir / ".gpulint.yaml").write_text("select: [GPU601]\nseverity: {GPU601: info}\n")
    result = run("check", "--format", "github", "k8s")
    assert result.stdout.startswith("::notice file=k8s/pods.yaml,line=19,col=5,")
    assert result.exit_code == 0


def test_step_summary_is_appended_when_github_asks_for_it(workdir: Path) -> None:
    summary = workdir / "summary.md"
    summary.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    result = run("check", "--isolated", "--format", "github", "k8s", env=env)
    assert result.exit_code == 1
    assert summary.read_text().splitlines() == [
        "earlier step",
        "### gpulint",
        "",
        "Found 2 findings (1 error, 1 warning) in 1 file, 3 objects.",
        "",
        "| severity | rule | location | object | message |",
        "|---|---|---|---|---|",
        f"| error | GPU002 gpu-limit-request-mismatch | `k8s/pods.yaml:10:28` | Pod/ml/trainer "
        f"| {GPU002_MESSAGE} |",
        "| warning | GPU601 gpu-pod-besteffort-cpu-memory | `k8s/pods.yaml:19:5` "
        "| Pod/besteffort | pod requests nvidia.com/gpu but no container requests cpu or memory: "
        "its QoS class is BestEffort, so it is the first pod evicted when the node runs short |",
        "",
    ]
    run("check", "--isolated", "--format", "text", "k8s", env=env)
    assert summary.read_text().count("### gpulint") == 1  # only the github format writes it


def test_an_unwritable_step_summary_is_one_line_and_exit_2(workdir: Path) -> None:
    env = {"GITHUB_STEP_SUMMARY": str(workdir / "missing" / "summary.md")}
    result = run("check", "--isolated", "--format", "github", "k8s", env=env)
    assert result.exit_code == 2
    assert result.stderr.startswith("gpulint: error: ")
    assert "cannot write the job summary" in result.stderr


# --- JUnit --------------------------------------------------------------------------------


def test_junit_has_a_testcase_per_object_and_a_failure_per_finding(workdir: Path) -> None:
    (workdir / "k8s" / "broken.yaml").write_text("kind: [\n")
    result = run("check", "--isolated", "--format", "junit", "k8s")
    assert result.exit_code == 1
    assert result.stdout.startswith("<?xml version='1.0' encoding='utf-8'?>\n<testsuites ")
    suites = ElementTree.fromstring(result.stdout)
    (suite,) = suites
    counts = {"tests": "4", "failures": "3", "errors": "0", "skipped": "0"}
    assert suites.attrib == {"name": "gpulint", **counts}
    assert suite.attrib == {"name": "gpulint", **counts}
    cases = {
        (c.get("classname"), c.get("name")): [f.get("type") for f in c.iter("failure")]
        for c in suite
    }
    assert cases == {
        ("k8s/pods.yaml", "Pod/ml/trainer"): ["GPU002"],
        ("k8s/pods.yaml", "Pod/besteffort"): ["GPU601"],
        ("k8s/pods.yaml", "Pod/clean"): [],
        ("k8s/broken.yaml", "(file)"): ["GPU000"],
    }
    (failure,) = suite.find("testcase[@name='Pod/ml/trainer']").iter("failure")
    assert failure.get("message") == f"GPU002 {GPU002_MESSAGE}"
    assert failure.text == (
        f"k8s/pods.yaml:10:28: GPU002 [error] {GPU002_MESSAGE}\n  = fix: {GPU002_FIX}"
    )


# --- --statistics, --quiet, --silent ----------------------------------------------------------


def test_statistics_count_per_code_most_frequent_first(workdir: Path) -> None:
    (workdir / "k8s" / "more.yaml").write_text(REQUEST_ONLY.replace("trainer", "second"))
    result = run("check", "--isolated", "--statistics", "k8s")
    assert result.exit_code == 1
    assert result.stdout == (
        "2\tGPU002\t    gpu-limit-request-mismatch\n1\tGPU601\t    gpu-pod-besteffort-cpu-memory\n"
    )
    result = run("check", "--isolated", "--statistics", "--format", "json", "k8s")
    assert json.loads(result.stdout) == [
        {"code": "GPU002", "name": "gpu-limit-request-mismatch", "count": 2, "fixable": 0},
        {"code": "GPU601", "name": "gpu-pod-besteffort-cpu-memory", "count": 1, "fixable": 0},
    ]


def test_statistics_mark_the_codes_fix_can_fix_as_ruff_does(workdir: Path) -> None:
    typo = REQUEST_ONLY.replace("    resources:", "    resoures:")
    (workdir / "k8s" / "more.yaml").write_text(typo.replace("trainer", "second"))
    result = run("check", "--isolated", "--statistics", "k8s")
    assert result.stdout.splitlines() == [
        "1\tGPU002\t    gpu-limit-request-mismatch",
        "1\tGPU004\t[*] misplaced-resources-key",
        "1\tGPU601\t    gpu-pod-besteffort-cpu-memory",
    ]
    result = run("check", "--isolated", "--statistics", "--format", "json", "k8s")
    assert json.loads(result.stdout)[1] == {
        "code": "GPU004",
        "name": "misplaced-resources-key",
        "count": 1,
        "fixable": 1,
    }


def test_statistics_of_a_clean_run_is_empty(workdir: Path) -> None:
    (workdir / "clean.yaml").write_text(CLEAN)
    result = run("check", "--isolated", "--statistics", "clean.yaml")
    assert (result.exit_code, result.stdout) == (0, "")


def test_statistics_with_a_report_format_is_a_usage_error(workdir: Path) -> None:
    result = run("check", "--isolated", "--statistics", "--format", "sarif", "k8s")
    assert result.exit_code == 2
    assert result.stderr == (
        "gpulint: error: --statistics prints text or json, not --format sarif\n"
    )


def test_quiet_prints_the_findings_without_notes_or_summary(workdir: Path) -> None:
    loud = run("check", "--isolated", "k8s").stdout
    quiet = run("check", "--isolated", "--quiet", "k8s")
    assert quiet.exit_code == 1
    assert loud.startswith(quiet.stdout)
    assert quiet.stdout.splitlines()[:5] == [
        f"k8s/pods.yaml:10:28: GPU002 [error] {GPU002_MESSAGE}",
        "   |",
        '10 |       requests: {cpu: "1", nvidia.com/gpu: 1}',
        "   |                            ^",
        f"  = fix: {GPU002_FIX}",
    ]
    assert quiet.stdout.endswith("(limits equal to the requests make the pod Guaranteed).\n")
    assert "Found" not in quiet.stdout and "skipped" not in quiet.stdout
    github = run("check", "--isolated", "-q", "--format", "github", "k8s").stdout.splitlines()
    assert [line[:9] for line in github] == ["::error f", "::warning"]


def test_quiet_clean_run_prints_nothing(workdir: Path) -> None:
    (workdir / "clean.yaml").write_text(CLEAN)
    result = run("check", "--isolated", "-q", "clean.yaml")
    assert (result.exit_code, result.stdout) == (0, "")


def test_silent_prints_nothing_but_keeps_the_exit_code_and_the_output_file(workdir: Path) -> None:
    result = run("check", "--isolated", "--silent", "k8s")
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", "")
    result = run("check", "--isolated", "-s", "--format", "json", "-o", "r.json", "k8s")
    assert (result.exit_code, result.stdout) == (1, "")
    assert len(json.loads((workdir / "r.json").read_text())["findings"]) == 2


# --- gpulint profile validate -----------------------------------------------------------------


PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"


def test_profile_validate_accepts_every_bundled_profile() -> None:
    files = sorted(str(p) for p in PROFILES.glob("*.yaml"))
    result = run("profile", "validate", *files)
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == f"gpulint: {len(files)} of {len(files)} profile inputs valid\n"


def test_profile_validate_prints_one_line_per_bad_file_and_exits_2(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nspec:\n"
        "  pools:\n  - name: a\n    nodez: 3\n"
    )
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: ClusterProfile\nspec: [\n")
    result = run("profile", "validate", str(PROFILES / "eks.yaml"), str(typo), str(broken))
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert lines[0] == f"{typo}:6:5: unknown field `spec.pools.0.nodez` (see docs/profile.md)"
    assert re.fullmatch(rf"{re.escape(str(broken))}:\d+:\d+: invalid YAML: .+", lines[1])
    assert len(lines) == 2
    assert result.stderr == "gpulint: 1 of 3 profile inputs valid\n"


def test_profile_validate_without_files_checks_the_config_clusters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "profiles").mkdir()
    shutil.copy(PROFILES / "eks.yaml", tmp_path / "profiles" / "eks.yaml")
    (tmp_path / "profiles" / "typo.yaml").write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nspec:\n"
        "  pools:\n  - name: a\n    nodez: 3\n"
    )
    (tmp_path / ".gpulint.yaml").write_text(
        "clusters:\n  prod: [profiles/eks.yaml]\n  staging: [profiles/typo.yaml]\n"
    )
    monkeypatch.chdir(tmp_path)
    result = run("profile", "validate")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2,
        "cluster staging: profiles/typo.yaml:6:5: unknown field `spec.pools.0.nodez` "
        "(see docs/profile.md)\n",
        "gpulint: 1 of 2 profile inputs valid\n",
    )
    (tmp_path / ".gpulint.yaml").write_text("clusters:\n  prod: [profiles/eks.yaml]\n")
    result = run("profile", "validate")
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        "",
        "gpulint: 1 of 1 profile input valid\n",
    )


def test_profile_validate_without_files_or_clusters_says_what_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run("profile", "validate")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "gpulint: error: profile validate needs --profile FILE, or `clusters:` in the config "
        "file (no config file (.gpulint.yaml) found)\n"
    )


# --- what ruff and yamllint users expect --------------------------------------------------


def test_output_format_is_the_same_option_as_format(workdir: Path) -> None:
    by_alias = run("check", "--isolated", "--output-format", "json", "k8s")
    by_name = run("check", "--isolated", "--format", "json", "k8s")
    assert by_alias.exit_code == by_name.exit_code == 1
    assert by_alias.stdout == by_name.stdout
    assert [f["code"] for f in json.loads(by_alias.stdout)["findings"]] == ["GPU002", "GPU601"]


def test_exit_zero_reports_findings_and_exits_0(workdir: Path) -> None:
    result = run("check", "--isolated", "--exit-zero", "k8s")
    assert result.exit_code == 0
    assert f"k8s/pods.yaml:10:28: GPU002 [error] {GPU002_MESSAGE}" in result.stdout
    # A usage error is still one.
    result = run("check", "--isolated", "--exit-zero", "missing")
    assert result.exit_code == 2
    assert result.stderr == "gpulint: error: missing: no such file or directory\n"


def test_in_github_actions_text_is_followed_by_annotations(workdir: Path) -> None:
    summary = workdir / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = run("check", "--isolated", "k8s", env=env)
    assert result.exit_code == 1
    text = run("check", "--isolated", "k8s").stdout
    assert result.stdout.startswith(text)
    annotations = result.stdout[len(text) :].splitlines()
    assert [parse_command(line)[:2] for line in annotations] == [
        (
            "error",
            {
                "file": "k8s/pods.yaml",
                "line": "10",
                "col": "28",
                "title": "GPU002 gpu-limit-request-mismatch",
            },
        ),
        (
            "warning",
            {
                "file": "k8s/pods.yaml",
                "line": "19",
                "col": "5",
                "title": "GPU601 gpu-pod-besteffort-cpu-memory",
            },
        ),
    ]
    assert summary.read_text().startswith("### gpulint\n")


def test_in_github_actions_a_chosen_format_is_printed_alone(workdir: Path) -> None:
    env = {"GITHUB_ACTIONS": "true"}
    for chosen in ("text", "json"):
        result = run("check", "--isolated", "--format", chosen, "k8s", env=env)
        assert "::error" not in result.stdout, chosen
    result = run("check", "--isolated", "--silent", "k8s", env=env)
    assert (result.exit_code, result.stdout) == (1, "")


def test_annotations_go_to_the_log_when_the_report_goes_to_a_file(workdir: Path) -> None:
    result = run("check", "--isolated", "-o", "report.txt", "k8s", env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1
    assert [line[:9] for line in result.stdout.splitlines()] == ["::error f", "::warning"]
    assert (workdir / "report.txt").read_text().startswith("k8s/pods.yaml:10:28: GPU002 ")


def test_sarif_output_is_written_beside_the_printed_report(workdir: Path) -> None:
    from tests.sarif_schema import validated_sarif

    result = run("check", "--isolated", "--sarif-output", "out.sarif", "k8s")
    assert result.exit_code == 1
    assert result.stdout.startswith("k8s/pods.yaml:10:28: GPU002 ")
    sarif = validated_sarif((workdir / "out.sarif").read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["GPU002", "GPU601"]


def test_sarif_output_that_cannot_be_written_is_exit_2(workdir: Path) -> None:
    result = run("check", "--isolated", "--sarif-output", "missing/out.sarif", "k8s")
    assert result.exit_code == 2
    assert "missing/out.sarif: cannot write SARIF report" in result.stderr


def test_show_files_lists_what_would_be_checked_and_checks_nothing(workdir: Path) -> None:
    (workdir / "k8s" / "more.yml").write_text(CLEAN)
    (workdir / "k8s" / "notes.txt").write_text("not a manifest\n")
    (workdir / ".gpulint.yaml").write_text("exclude: [k8s/more.yml]\n")
    result = run("check", "--show-files")
    assert (result.exit_code, result.stdout) == (0, "k8s/pods.yaml\n")
    result = run("check", "--isolated", "--show-files", "k8s", "-", "--stdin-filename", "a.yaml")
    assert (result.exit_code, result.stdout) == (0, "a.yaml\nk8s/more.yml\nk8s/pods.yaml\n")


def test_show_settings_names_where_each_setting_came_from(workdir: Path) -> None:
    (workdir / "k8s" / ".gpulint.yaml").write_text(
        "ignore: [GPU601]\nseverity: {GPU002: warning}\nfail-on: never\n"
    )
    result = run("check", "--show-settings", "--select", "GPU0", "k8s")
    assert result.exit_code == 0
    config = workdir / "k8s" / ".gpulint.yaml"
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        f"config file: {config}",
        f"root (globs are relative to it): {config.parent}",
    ]
    assert 'select = ["GPU0"]  # command line' in lines
    assert 'severity = {"GPU002": "warning"}  # ' + str(config) in lines
    assert 'fail-on = "never"  # ' + str(config) in lines
    assert "exclude = []  # default" in lines


def test_help_says_how_to_turn_on_shell_completion() -> None:
    result = run("--help")
    assert 'eval "$(_GPULINT_COMPLETE=bash_source gpulint)"' in result.stdout


def test_shell_completion_completes_commands_and_options(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("gpulint")
    if not script.exists():
        pytest.skip("the gpulint console script is not installed")
    env = {
        **os.environ,
        "_GPULINT_COMPLETE": "bash_complete",
        "COMP_WORDS": "gpulint check --output-f",
        "COMP_CWORD": "2",
    }
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.stdout.splitlines() == ["plain,--output-format", "plain,--output-file"]
