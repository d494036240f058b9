"""`--format sarif`: valid against the official schema, at the right places, stable fingerprints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpulint.catalogue import load_catalogue
from gpulint.cli import main
from gpulint.output.catalogue import rule_help_uri
from gpulint.output.sarif import FINGERPRINT_KEY, SRCROOT
from tests.manifests import REQUEST_ONLY
from tests.sarif_schema import validated_sarif

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "cases"


def check(*args: str) -> tuple[int, str]:
    """`gpulint check ARGS` in-process: exit code and stdout."""
    result = CliRunner().invoke(main, ["check", "--isolated", *args])
    return result.exit_code, result.stdout


def sarif_of(*args: str) -> dict[str, Any]:
    """The schema-validated SARIF log of `gpulint check ARGS --format sarif`."""
    return validated_sarif(check(*args, "--format", "sarif")[1])


def places(run: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """(ruleId, uri, startLine, startColumn) of every result."""
    found = []
    for result in run["results"]:
        physical = result["locations"][0]["physicalLocation"]
        region = physical["region"]
        uri = physical["artifactLocation"]["uri"]
        found.append((result["ruleId"], uri, region["startLine"], region["startColumn"]))
    return found


def json_places(*args: str) -> list[tuple[str, str, int, int]]:
    report = json.loads(check(*args, "--format", "json")[1])
    return [(f["code"], f["path"], f["line"], f["column"]) for f in report["findings"]]


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository root as the working directory."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_demo_sarif_validates_and_points_at_the_demo_findings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    args = ("fixtures/demo", "--profile", "fixtures/profiles/eks.yaml")
    (run,) = sarif_of(*args)["runs"]
    assert places(run) == json_places(*args)
    assert ("GPU001", "fixtures/demo/training.yaml", 22, 13) in places(run)
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == SRCROOT
        for r in run["results"]
    )
    assert run["originalUriBaseIds"] == {SRCROOT: {"uri": ROOT.as_uri() + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_every_fixture_directory_gives_valid_sarif_at_the_json_positions(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = (f"fixtures/cases/{case}", "--profile", "fixtures/profiles/eks.yaml")
    assert places(sarif_of(*args)["runs"][0]) == json_places(*args)


def test_driver_lists_the_whole_catalogue_and_results_index_into_it(repo: Path) -> None:
    (repo / "pod.yaml").write_text(REQUEST_ONLY)
    (run,) = sarif_of("pod.yaml")["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["informationUri"]) == (
        "gpulint",
        "https://github.com/gpulint/gpulint",
    )
    assert [rule["id"] for rule in driver["rules"]] == list(load_catalogue())
    gpu002 = next(rule for rule in driver["rules"] if rule["id"] == "GPU002")
    assert gpu002["name"] == "gpu-limit-request-mismatch"
    assert gpu002["helpUri"] == rule_help_uri("GPU002")
    assert gpu002["helpUri"].endswith("/docs/rules.md#gpu002")
    assert gpu002["defaultConfiguration"] == {"level": "error", "enabled": True}
    assert "**Use instead**" in gpu002["help"]["markdown"]
    off = next(rule for rule in driver["rules"] if rule["id"] == "GPU402")
    assert off["defaultConfiguration"] == {"level": "note", "enabled": False}
    (result,) = run["results"]
    assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "GPU002"
    assert result["level"] == "error"
    assert result["message"]["text"].startswith("container `c` requests `nvidia.com/gpu`")
    assert result["locations"][0]["logicalLocations"] == [
        {"fullyQualifiedName": "Pod/ml/trainer", "kind": "resource"}
    ]


def test_uris_are_relative_to_the_repository_root_not_the_working_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy = repo / "deploy" / "prod"
    (deploy / "k8s").mkdir(parents=True)
    (deploy / "k8s" / "pod.yaml").write_text(REQUEST_ONLY)
    monkeypatch.chdir(deploy)
    (run,) = sarif_of("k8s")["runs"]
    assert places(run) == [("GPU002", "deploy/prod/k8s/pod.yaml", 10, 28)]
    assert run["originalUriBaseIds"][SRCROOT]["uri"] == repo.as_uri() + "/"


def test_helm_source_template_is_a_related_location(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    (run,) = sarif_of("fixtures/demo/rendered-chart.yaml")["runs"]
    (result,) = [r for r in run["results"] if r["ruleId"] == "GPU004"]
    assert result["relatedLocations"] == [
        {
            "id": 1,
            "message": {"text": "rendered from this Helm template"},
            "physicalLocation": {
                "artifactLocation": {"uri": "embeddings/templates/deployment.yaml"}
            },
        }
    ]


def fingerprints(run: dict[str, Any]) -> dict[tuple[str, int], str]:
    return {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r[
            "partialFingerprints"
        ][FINGERPRINT_KEY]
        for r in run["results"]
    }


def test_fingerprints_survive_lines_inserted_above(repo: Path) -> None:
    path = repo / "pod.yaml"
    path.write_text(REQUEST_ONLY)
    before = fingerprints(sarif_of("pod.yaml")["runs"][0])
    path.write_text("# a comment\n# and another\n---\n" + REQUEST_ONLY.replace("cpu", "memory"))
    after = fingerprints(sarif_of("pod.yaml")["runs"][0])
    assert list(before) == [("GPU002", 10)]
    assert list(after) == [("GPU002", 13)]
    assert list(before.values()) == list(after.values())


def test_fingerprints_tell_apart_identical_findings_and_other_objects(repo: Path) -> None:
    twice = REQUEST_ONLY.replace(
        '      requests: {cpu: "1", nvidia.com/gpu: 1}',
        '      requests: {cpu: "1", nvidia.com/gpu: 1}\n'
        "  - name: c\n"
        "    resources:\n"
        '      requests: {cpu: "1", nvidia.com/gpu: 1}',
    )
    other = REQUEST_ONLY.replace("name: trainer", "name: other")
    (repo / "pod.yaml").write_text(twice + "---\n" + other)
    prints = list(fingerprints(sarif_of("pod.yaml")["runs"][0]).values())
    assert len(prints) == 3
    assert len(set(prints)) == 3


def test_a_line_number_inside_a_message_does_not_change_the_fingerprint(repo: Path) -> None:
    duplicate = REQUEST_ONLY.replace("  namespace: ml\n", "  namespace: ml\n  name: again\n")
    path = repo / "pod.yaml"
    path.write_text(duplicate)
    before = sarif_of("pod.yaml")["runs"][0]
    path.write_text("# moved\n" + duplicate)
    after = sarif_of("pod.yaml")["runs"][0]
    (message,) = [r["message"]["text"] for r in before["results"] if r["ruleId"] == "GPU000"]
    assert "lines 4 and 6" in message
    assert [r["partialFingerprints"] for r in before["results"]] == [
        r["partialFingerprints"] for r in after["results"]
    ]


def test_output_is_deterministic_and_notes_are_notifications(repo: Path) -> None:
    (repo / "pod.yaml").write_text(REQUEST_ONLY)
    first, second = check("pod.yaml", "--format", "sarif"), check("pod.yaml", "--format", "sarif")
    assert first == second
    (invocation,) = validated_sarif(first[1])["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True
    assert (
        "cluster-profile rules skipped"
        in invocation["toolExecutionNotifications"][0]["message"]["text"]
    )


def test_a_clean_run_is_a_valid_log_with_no_results_and_exit_0(repo: Path) -> None:
    (repo / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    code, text = check("ok.yaml", "--format", "sarif")
    assert code == 0
    assert validated_sarif(text)["runs"][0]["results"] == []


def test_stdin_and_odd_file_names_are_valid_uris(repo: Path) -> None:
    (repo / "my pods#1.yaml").write_text(REQUEST_ONLY)
    result = CliRunner().invoke(
        main,
        ["check", "--isolated", "--format", "sarif", "my pods#1.yaml", "-"],
        input=b"kind: [\n",
    )
    (run,) = validated_sarif(result.stdout)["runs"]
    assert [uri for _, uri, _, _ in places(run)] == ["%3Cstdin%3E", "my%20pods%231.yaml"]
