"""`--format gitlab`: a GitLab Code Quality report, valid, at the right lines, stable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from gpulint.cli import main
from tests.manifests import REQUEST_ONLY

# The report format of GitLab's "Code Quality report format" table (docs.gitlab.com/ci/testing/
# code_quality): the fields GitLab reads, their types and the severities it knows.
CODE_QUALITY_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}


def gitlab_report(tmp_path: Path, files: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and the validated report of `gpulint check --format gitlab` on `files`."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = CliRunner().invoke(
        main,
        ["check", "--isolated", "--format", "gitlab", *sorted(str(tmp_path / n) for n in files)],
    )
    report = json.loads(result.stdout)
    jsonschema.validate(report, CODE_QUALITY_SCHEMA)
    return result.exit_code, report


def test_each_finding_is_an_issue_at_its_line_with_gitlab_severity(tmp_path: Path) -> None:
    code, report = gitlab_report(tmp_path, {"pod.yaml": REQUEST_ONLY})
    assert code == 1
    assert [(i["check_name"], i["severity"], i["location"]["lines"]["begin"]) for i in report] == [
        ("GPU002", "major", 10)
    ]
    (issue,) = report
    assert issue["location"]["path"] == str(tmp_path / "pod.yaml")
    assert issue["location"]["positions"] == {"begin": {"line": 10, "column": 28}}
    assert issue["description"].startswith("GPU002 gpu-limit-request-mismatch: container ")
    assert issue["content"]["body"] == (
        "Add `limits: {nvidia.com/gpu: 1}` or replace the request with that limit (the request"
        " defaults to the limit)."
    )


def test_fingerprints_ignore_lines_above_and_tell_identical_findings_apart(
    tmp_path: Path,
) -> None:
    _, before = gitlab_report(tmp_path, {"pod.yaml": REQUEST_ONLY})
    twice = "# a comment above\n" + REQUEST_ONLY + "---\n" + REQUEST_ONLY
    _, after = gitlab_report(tmp_path, {"pod.yaml": twice})
    assert after[0]["location"]["lines"]["begin"] == 11
    assert after[0]["fingerprint"] == before[0]["fingerprint"]
    assert after[1]["fingerprint"] != after[0]["fingerprint"]


def test_a_clean_run_is_an_empty_report(tmp_path: Path) -> None:
    code, report = gitlab_report(
        tmp_path, {"ok.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"}
    )
    assert (code, report) == (0, [])


def test_output_file_writes_the_report_as_ruff_and_kubeconform_users_spell_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "pod.yaml").write_text(REQUEST_ONLY)
    report = tmp_path / "gl-code-quality.json"
    result = CliRunner().invoke(
        main,
        [
            "check",
            "--isolated",
            "--format",
            "gitlab",
            "--output-file",
            str(report),
            str(tmp_path / "pod.yaml"),
        ],
    )
    assert result.exit_code == 1
    assert result.stdout == ""
    assert [i["check_name"] for i in json.loads(report.read_text())] == ["GPU002"]
