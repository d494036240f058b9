"""`gpulint check` end to end through click's runner: exit codes, text and JSON output, stdin."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main
from tests.manifests import BEST_EFFORT, CLEAN, REQUEST_ONLY

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(*args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> Result:
    """`gpulint ARGS` in-process, through click's test runner."""
    return CliRunner().invoke(main, list(args), input=input, env=env)


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory, so paths in findings are relative and predictable."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    """Write `text` to `path`, creating parent directories."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def findings(result: Result) -> list[tuple[str, str, int, int]]:
    """(code, path, line, column) of every finding in a JSON report."""
    report = json.loads(result.stdout)
    return [(f["code"], f["path"], f["line"], f["column"]) for f in report["findings"]]


def test_text_format_location_code_severity_message_fix_and_summary(workdir: Path) -> None:
    write(workdir / "k8s" / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "k8s")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # Notes (such as rules skipped for want of a cluster profile) may stand before the summary.
    assert [*lines[:6], lines[-1]] == [
        "k8s/pod.yaml:10:28: GPU002 [error] container `c` requests `nvidia.com/gpu` without a "
        "limit; the API rejects it (Limit must be set for non overcommitable resources)",
        "   |",
        '10 |       requests: {cpu: "1", nvidia.com/gpu: 1}',
        "   |                            ^",
        "  = fix: Add `limits: {nvidia.com/gpu: 1}` or replace the request with that limit "
        "(the request defaults to the limit).",
        "",
        "Found 1 finding (1 error) in 1 file, 1 object.",
    ]


def test_concise_format_keeps_one_line_per_finding(workdir: Path) -> None:
    write(workdir / "k8s" / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "--output-format", "concise", "k8s")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    # One line per finding, as ruff's: no source line, origin or fix under it.
    assert [*lines[:2], lines[-1]] == [
        "k8s/pod.yaml:10:28: GPU002 [error] container `c` requests `nvidia.com/gpu` without a "
        "limit; the API rejects it (Limit must be set for non overcommitable resources)",
        "",
        "Found 1 finding (1 error) in 1 file, 1 object.",
    ]
    assert re.match(r"\d+ cluster-profile rules skipped: no --profile given \(GPU1", lines[2])
    assert len(lines) == 4


def test_clean_run_exits_0_with_passed_summary(workdir: Path) -> None:
    write(workdir / "pod.yaml", CLEAN)
    result = run("check", "--isolated", "pod.yaml")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "All checks passed (1 file, 1 object)."
    assert "pod.yaml" not in result.stdout


def test_default_path_is_the_working_directory(workdir: Path) -> None:
    write(workdir / "deep" / "er" / "pod.yml", REQUEST_ONLY)
    result = run("check", "--isolated")
    assert result.exit_code == 1
    assert result.stdout.startswith("deep/er/pod.yml:10:28: GPU002 ")


def test_no_ansi_codes_when_not_a_tty(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "pod.yaml")
    assert not ANSI.search(result.stdout)


def test_color_always_paints_location_and_code_even_through_a_pipe(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "--color", "always", "pod.yaml")
    assert result.stdout.startswith("\x1b[1mpod.yaml:10:28:\x1b[0m \x1b[31mGPU002\x1b[0m [error] ")
    assert ANSI.sub("", result.stdout) == run("check", "--isolated", "pod.yaml").stdout


def test_json_report_has_the_documented_shape(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "--format", "json", "pod.yaml")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert all(isinstance(note, str) for note in report.pop("notes"))
    assert report == {
        "version": 1,
        "findings": [
            {
                "code": "GPU002",
                "name": "gpu-limit-request-mismatch",
                "severity": "error",
                "path": "pod.yaml",
                "line": 10,
                "column": 28,
                "message": "container `c` requests `nvidia.com/gpu` without a limit; the API "
                "rejects it (Limit must be set for non overcommitable resources)",
                "fix": "Add `limits: {nvidia.com/gpu: 1}` or replace the request with that "
                "limit (the request defaults to the limit).",
                "autofix": None,
                "object": {"apiVersion": "v1", "kind": "Pod", "namespace": "ml", "name": "trainer"},
                "source": None,
                "rendered": None,
            }
        ],
        "summary": {"files": 1, "objects": 1, "findings": 1, "unchecked": 0},
    }


def test_findings_are_sorted_by_path_line_column(workdir: Path) -> None:
    write(workdir / "b.yaml", REQUEST_ONLY)
    write(workdir / "a" / "z.yaml", BEST_EFFORT + "---\n" + REQUEST_ONLY)
    result = run("check", "--isolated", "--format", "json", ".")
    assert findings(result) == [
        ("GPU601", "a/z.yaml", 8, 5),
        ("GPU002", "a/z.yaml", 20, 28),
        ("GPU002", "b.yaml", 10, 28),
    ]


def test_helm_source_comment_is_reported_per_document() -> None:
    result = run(
        "check", "--isolated", "--format", "json", str(FIXTURES / "helm" / "rendered.yaml")
    )
    sources = {(f["code"], f["line"]): f["source"] for f in json.loads(result.stdout)["findings"]}
    assert sources == {
        # The Deployment has no spec.selector: a schema finding of the same document.
        ("GPU012", 16): "trainer/templates/deployment.yaml",
        ("GPU002", 25): "trainer/templates/deployment.yaml",
        ("GPU601", 39): "trainer/templates/job.yaml",
    }


def test_helm_source_is_shown_in_text_output(workdir: Path) -> None:
    text = "# Source: chart/templates/pod.yaml\n" + REQUEST_ONLY
    write(workdir / "rendered.yaml", text)
    lines = run("check", "--isolated", "rendered.yaml").stdout.splitlines()
    assert lines[0].startswith("rendered.yaml:11:28: GPU002 [error] ")
    assert lines[4] == "  = from: chart/templates/pod.yaml"


def test_document_without_its_own_source_comment_gets_none(workdir: Path) -> None:
    text = "# Source: chart/templates/a.yaml\n" + REQUEST_ONLY + "---\n" + REQUEST_ONLY
    write(workdir / "rendered.yaml", text)
    report = json.loads(run("check", "--isolated", "--format", "json", "rendered.yaml").stdout)
    assert [(f["line"], f["source"]) for f in report["findings"]] == [
        (11, "chart/templates/a.yaml"),
        (22, None),
    ]


def test_output_file_gets_the_report_and_stdout_stays_empty(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "--format", "json", "-o", "report.json", "pod.yaml")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "gpulint: wrote the json report to report.json\n"
    result = run("check", "--isolated", "--statistics", "--output-file", "stats.txt", "pod.yaml")
    assert result.stderr == "gpulint: wrote the statistics to stats.txt\n"
    report = json.loads((workdir / "report.json").read_text())
    assert report["summary"] == {"files": 1, "objects": 1, "findings": 1, "unchecked": 0}


def test_output_file_is_never_coloured(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    run("check", "--isolated", "--color", "always", "--output", "report.txt", "pod.yaml")
    text = (workdir / "report.txt").read_text()
    assert text.startswith("pod.yaml:10:28: GPU002 [error] ")
    assert not ANSI.search(text)


def test_stdin_with_stdin_filename(workdir: Path) -> None:
    result = run(
        "check",
        "--isolated",
        "--format",
        "json",
        "-",
        "--stdin-filename",
        "k8s/from-helm.yaml",
        input=REQUEST_ONLY.encode(),
    )
    assert result.exit_code == 1
    assert findings(result) == [("GPU002", "k8s/from-helm.yaml", 10, 28)]


def test_stdin_without_a_name_is_reported_as_stdin(workdir: Path) -> None:
    result = run(
        "check", "--isolated", "-", input=CLEAN.encode() + b"---\n" + REQUEST_ONLY.encode()
    )
    assert result.exit_code == 1
    assert result.stdout.startswith("<stdin>:21:28: GPU002 ")


def test_stdin_together_with_files(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "--format", "json", "pod.yaml", "-", input=b"[a")
    assert findings(result) == [("GPU000", "<stdin>", 1, 3), ("GPU002", "pod.yaml", 10, 28)]


def test_broken_yaml_next_to_good_files_reports_both(workdir: Path) -> None:
    write(workdir / "k8s" / "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n")
    write(workdir / "k8s" / "good.yaml", REQUEST_ONLY)
    write(workdir / "k8s" / "clean.yaml", CLEAN)
    result = run("check", "--isolated", "--format", "json", "k8s")
    assert result.exit_code == 1
    assert findings(result) == [
        ("GPU000", "k8s/bad.yaml", 5, 1),
        ("GPU002", "k8s/good.yaml", 10, 28),
    ]
    report = json.loads(result.stdout)
    assert report["summary"] == {"files": 3, "objects": 2, "findings": 2, "unchecked": 0}
    syntax = report["findings"][0]
    assert (syntax["name"], syntax["object"], syntax["source"]) == ("invalid-manifest", None, None)
    assert syntax["message"] == "did not find expected ',' or ']' (while parsing a flow sequence)"


def test_a_json_tool_config_with_comments_is_not_a_manifest(workdir: Path) -> None:
    # tsconfig.json, .vscode/settings.json: JSON with comments, which pre-commit tags `json`.
    write(workdir / "tsconfig.json", '{\n  // strict\n  "compilerOptions": {"strict": true,},\n}\n')
    write(workdir / "k8s" / "bad.json", '{"apiVersion": "v1", "kind": "Pod",\n "metadata": {,}}\n')
    result = run("check", "--isolated", "--format", "json", "tsconfig.json", "k8s")
    assert result.exit_code == 1
    # A JSON file that names a kind is still a manifest that does not parse.
    assert findings(result) == [("GPU000", "k8s/bad.json", 2, 15)]
    assert json.loads(result.stdout)["summary"]["files"] == 2


def test_directories_are_recursive_and_skip_hidden_dirs_and_other_suffixes(workdir: Path) -> None:
    for name in (
        ".git/pod.yaml",
        ".github/workflows/pod.yaml",
        "k8s/.hidden.yaml",
        "k8s/notes.txt",
        "k8s/a/b/c/deep.yml",
        "k8s/pod.json",
    ):
        write(workdir / name, REQUEST_ONLY)
    result = run("check", "--isolated", "--format", "json", ".")
    assert [(code, path) for code, path, _, _ in findings(result)] == [
        ("GPU002", "k8s/a/b/c/deep.yml"),
        ("GPU002", "k8s/pod.json"),
    ]


def test_a_hidden_file_named_explicitly_is_checked(workdir: Path) -> None:
    write(workdir / ".pod.yaml", REQUEST_ONLY)
    assert findings(run("check", "--isolated", "--format", "json", ".pod.yaml")) == [
        ("GPU002", ".pod.yaml", 10, 28)
    ]


def test_missing_path_exits_2_with_one_line_and_no_traceback(workdir: Path) -> None:
    result = run("check", "--isolated", "nope/pod.yaml")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "gpulint: error: nope/pod.yaml: no such file or directory\n"


def test_a_url_is_refused_as_a_path_without_reaching_the_network(workdir: Path) -> None:
    for url in ("https://example.com/pod.yaml", "s3://bucket/pod.yaml"):
        result = run("check", "--isolated", url)
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr == (
            f"gpulint: error: {url}: not a local path; gpulint reads files, not URLs: download "
            "the manifest and check the file\n"
        )
    # Escapes in the name are shown, not sent to the terminal.
    result = run("check", "--isolated", "http://\x1b[31mx/a.yaml")
    assert result.stderr.startswith("gpulint: error: http://\\x1b[31mx/a.yaml: not a local path")
    # A file that is named like one is read.
    (workdir / "http:").mkdir()
    (workdir / "http:" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
    )
    assert run("check", "--isolated", "http://pod.yaml").exit_code == 0


def test_warning_only_run_exits_0_by_default(workdir: Path) -> None:
    write(workdir / "pod.yaml", BEST_EFFORT)
    result = run("check", "--isolated", "pod.yaml")
    assert result.exit_code == 0
    assert result.stdout.startswith("pod.yaml:8:5: GPU601 [warning] ")
    assert result.stdout.endswith("Found 1 finding (1 warning) in 1 file, 1 object.\n")


@pytest.mark.parametrize(
    ("fail_on", "text", "exit_code"),
    [
        ("warning", BEST_EFFORT, 1),
        ("info", BEST_EFFORT, 1),
        ("error", BEST_EFFORT, 0),
        ("never", REQUEST_ONLY, 0),
        ("error", REQUEST_ONLY, 1),
        ("warning", CLEAN, 0),
    ],
)
def test_fail_on_threshold(workdir: Path, fail_on: str, text: str, exit_code: int) -> None:
    write(workdir / "pod.yaml", text)
    assert run("check", "--isolated", "--fail-on", fail_on, "pod.yaml").exit_code == exit_code


def test_info_finding_alone_exits_0_and_1_with_fail_on_info(workdir: Path) -> None:
    write(
        workdir / "templates" / "pod.yaml", "kind: Pod\nmetadata:\n  name: {{ .Values.x }}\n  - a\n"
    )
    assert run("check", "--isolated", ".").exit_code == 0
    result = run("check", "--isolated", "--fail-on", "info", ".")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith("templates/pod.yaml:3:9: GPU005 [info] ")
    assert result.stdout.splitlines()[-1] == "Found 1 finding (1 info) in 1 file, 0 objects."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--select", "GPU0009"],
            "gpulint: error: `GPU0009` selects no rule (see `gpulint rules`)\n",
        ),
        (["--ignore", "XYZ"], "gpulint: error: `XYZ` selects no rule (see `gpulint rules`)\n"),
        (
            ["--extend-select", "GPU0,GPU6019"],
            "gpulint: error: `GPU6019` selects no rule (see `gpulint rules`)\n",
        ),
    ],
)
def test_unknown_selector_exits_2(workdir: Path, args: list[str], message: str) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", *args, "pod.yaml")
    assert result.exit_code == 2
    assert result.stderr == message


def test_bad_option_value_is_a_usage_error(workdir: Path) -> None:
    result = run("check", "--isolated", "--fail-on", "sometimes", ".")
    assert result.exit_code == 2
    assert "Invalid value for '--fail-on'" in result.stderr
    assert "Traceback" not in result.output


def test_select_is_case_insensitive_and_takes_comma_lists(workdir: Path) -> None:
    write(workdir / "pod.yaml", BEST_EFFORT + "---\n" + REQUEST_ONLY)
    result = run("check", "--isolated", "--format", "json", "--select", "gpu002,GPU6", "pod.yaml")
    assert [f[0] for f in findings(result)] == ["GPU601", "GPU002"]
    result = run("check", "--isolated", "--format", "json", "--select", "GPU6", "pod.yaml")
    assert [f[0] for f in findings(result)] == ["GPU601"]


def test_ignore_prefix_with_more_specific_extend_select(workdir: Path) -> None:
    write(workdir / "pod.yaml", BEST_EFFORT + "---\n" + REQUEST_ONLY)
    result = run(
        "check",
        "--isolated",
        "--format",
        "json",
        "--ignore",
        "GPU",
        "--extend-select",
        "GPU002",
        "pod.yaml",
    )
    assert [f[0] for f in findings(result)] == ["GPU002"]


@pytest.mark.parametrize("args", [("--version",), ("-V",), ("version",)])
def test_version_option_short_option_and_command(args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.exit_code == 0
    assert result.stdout == "gpulint 0.1.0\n"


def _run_on_a_tty(workdir: Path, env: dict[str, str]) -> str:
    """Run the real `gpulint check` with its stdout on a pseudo-terminal; return what it wrote."""
    leader, follower = pty.openpty()
    process = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", "--isolated", "pod.yaml"],
        cwd=workdir,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={k: v for k, v in {**os.environ, **env}.items() if v},
        timeout=60,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal is closed once everything has been read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.returncode == 1, process.stderr
    return b"".join(chunks).decode()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_colour_on_a_tty_unless_no_color_is_set(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    coloured = _run_on_a_tty(workdir, {"NO_COLOR": ""})
    assert "\x1b[1mpod.yaml:10:28:\x1b[0m \x1b[31mGPU002\x1b[0m [error]" in coloured
    plain = _run_on_a_tty(workdir, {"NO_COLOR": "1"})
    assert "pod.yaml:10:28: GPU002 [error]" in plain
    assert not ANSI.search(plain)


def test_unwritable_output_file_exits_2(workdir: Path) -> None:
    write(workdir / "pod.yaml", REQUEST_ONLY)
    result = run("check", "--isolated", "-o", "missing-dir/report.txt", "pod.yaml")
    assert result.exit_code == 2
    assert result.stderr == (
        "gpulint: error: missing-dir/report.txt: cannot write report: No such file or directory\n"
    )
