"""Many clusters in one run: `--profile NAME=FILE`, the config's `clusters:`, merged findings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.api import lint
from gpulint.clusters import group_profiles, merge_results, split_profile_argument
from gpulint.errors import GpulintError
from gpulint.findings import Finding, LintResult
from gpulint.model import Severity

PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"
PROD = str(PROFILES / "clusters-prod.yaml")
PROD_H100 = str(PROFILES / "clusters-prod-h100.yaml")
STAGING = str(PROFILES / "clusters-staging.yaml")

# A GPU pod without a toleration: prod taints its GPU pool and does not run
# ExtendedResourceToleration, staging does not taint it. It also has no cpu/memory request
# (GPU601), which holds in both clusters.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: default
spec:
  priorityClassName: standard
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        nvidia.com/gpu: 1
"""

GPU102_PROD = (
    "pod.yaml:6:1: GPU102 [*] [error] [prod] pod (requests 1 nvidia.com/gpu) fits pool gpu "
    "except for its taint nvidia.com/gpu=present:NoSchedule, which no toleration of the pod "
    "matches (this cluster does not run the ExtendedResourceToleration admission plugin, so "
    "requesting `nvidia.com/gpu` adds no toleration for it)"
)
GPU601_EVERYWHERE = (
    "pod.yaml:11:5: GPU601 [warning] pod requests nvidia.com/gpu but no container requests "
    "cpu or memory: its QoS class is BestEffort, so it is the first pod evicted when the "
    "node runs short"
)


def run(*args: str) -> Result:
    """`gpulint ARGS` in-process."""
    from gpulint.cli import main

    return CliRunner().invoke(main, list(args))


@pytest.fixture()
def pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pod.yaml in an empty working directory, so findings name it `pod.yaml`."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "pod.yaml"
    path.write_text(POD, encoding="utf-8")
    return path


def test_missing_toleration_is_reported_for_prod_only_in_text(pod: Path) -> None:
    result = run(
        "check", "--profile", f"prod={PROD}", "--profile", f"staging={STAGING}", "pod.yaml"
    )
    assert result.exit_code == 1
    headlines = [line for line in result.output.splitlines() if line.startswith("pod.yaml:")]
    assert headlines == [GPU102_PROD, GPU601_EVERYWHERE]
    # Distinct findings are counted once, not once per cluster.
    assert "Found 2 findings (1 error, 1 warning) in 1 file, 1 object." in result.output


def test_json_names_the_clusters_of_a_finding_of_some_clusters_only(pod: Path) -> None:
    result = run(
        "check", "--format", "json", "--profile", f"prod={PROD}", "--profile", f"staging={STAGING}"
    )
    assert result.exit_code == 1
    data = json.loads(result.output)
    found = [(f["code"], f["line"], f["column"], f.get("clusters")) for f in data["findings"]]
    assert found == [("GPU102", 6, 1, ["prod"]), ("GPU601", 11, 5, None)]
    assert data["summary"]["findings"] == 2


def test_sarif_puts_the_clusters_in_the_result_properties(pod: Path) -> None:
    result = run(
        "check", "--format", "sarif", "--profile", f"prod={PROD}", "--profile", f"staging={STAGING}"
    )
    assert result.exit_code == 1
    results = json.loads(result.output)["runs"][0]["results"]
    gpu102, gpu601 = results
    assert gpu102["ruleId"] == "GPU102"
    assert gpu102["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 6,
        "startColumn": 1,
    }
    assert gpu102["properties"] == {"clusters": ["prod"]}
    assert gpu601["ruleId"] == "GPU601"
    assert "properties" not in gpu601


def test_a_finding_of_every_cluster_is_reported_once_without_names(pod: Path) -> None:
    result = lint(["pod.yaml"], clusters={"prod": (PROD,), "staging": (STAGING,), "qa": (STAGING,)})
    assert [(f.code, f.clusters) for f in result.findings] == [
        ("GPU102", ("prod",)),
        ("GPU601", ()),
    ]
    # Two clusters of three: both named, in the order given.
    result = lint(["pod.yaml"], clusters={"staging": (STAGING,), "a": (PROD,), "b": (PROD,)})
    assert [(f.code, f.clusters) for f in result.findings] == [
        ("GPU102", ("a", "b")),
        ("GPU601", ()),
    ]


def test_text_shows_every_cluster_name_of_a_finding(pod: Path) -> None:
    result = run(
        "check",
        *("--profile", f"a={PROD}", "--profile", f"b={PROD}", "--profile", f"c={STAGING}"),
        "pod.yaml",
    )
    assert result.output.splitlines()[0].startswith("pod.yaml:6:1: GPU102 [*] [error] [a, b] pod")


def test_files_of_one_name_merge_into_one_cluster(pod: Path) -> None:
    result = lint(["pod.yaml"], clusters={"prod": (PROD, PROD_H100), "staging": (STAGING,)})
    gpu102 = next(f for f in result.findings if f.code == "GPU102")
    assert gpu102.clusters == ("prod",)
    # The H100 pool of the second file is one of prod's pools.
    assert gpu102.message.endswith(
        "; it would also fit h100 (taints nvidia.com/gpu=present:NoSchedule)"
    )
    shown = run(
        "profile",
        "show",
        *("--profile", f"prod={PROD}", "--profile", f"prod={PROD_H100}"),
        *("--profile", f"staging={STAGING}"),
    )
    assert shown.exit_code == 0
    prod, staging = shown.output.split("=== staging ===\n")
    assert prod.startswith("=== prod ===\n")
    assert [
        line.split()[0] for line in prod.splitlines() if line.startswith(("gpu ", "h100 "))
    ] == [
        "gpu",
        "h100",
    ]
    assert "Built from: " + STAGING in staging
    assert "h100" not in staging


def test_a_missing_profile_of_a_named_cluster_is_one_line_and_exit_2(pod: Path) -> None:
    result = run("check", "--profile", f"prod={PROD}", "--profile", "staging=missing.yaml")
    assert result.exit_code == 2
    assert result.output == (
        "gpulint: error: cluster staging: missing.yaml: profile file not found\n"
    )
    result = run("check", "--profile", "prod=", "pod.yaml")
    assert result.exit_code == 2
    assert result.output == "gpulint: error: --profile prod=: no profile file after `prod=`\n"


def test_named_and_unnamed_profiles_are_not_mixed(pod: Path) -> None:
    result = run("check", "--profile", f"prod={PROD}", "--profile", STAGING, "pod.yaml")
    assert result.exit_code == 2
    assert result.output == (
        f"gpulint: error: --profile {STAGING} names no cluster while others do: "
        "give every --profile as NAME=FILE, or none\n"
    )


def test_a_file_named_with_an_equals_sign_is_a_plain_profile(pod: Path) -> None:
    Path("team=prod.yaml").write_text(Path(PROD).read_text(encoding="utf-8"), encoding="utf-8")
    assert split_profile_argument("team=prod.yaml") == (None, "team=prod.yaml")
    assert group_profiles(["team=prod.yaml"]) == {}
    result = run("check", "--profile", "team=prod.yaml", "pod.yaml")
    assert result.exit_code == 1
    assert "GPU102 [*] [error] pod (requests" in result.output  # no cluster names
    # Not a simple name before `=`, or a directory of that name: a path, not a cluster.
    assert split_profile_argument("a/b=c.yaml") == (None, "a/b=c.yaml")
    Path("dumps").mkdir()
    assert split_profile_argument("dumps=x.yaml") == (None, "dumps=x.yaml")
    assert split_profile_argument("prod.eu-1=x.yaml") == ("prod.eu-1", "x.yaml")


def test_config_clusters_are_relative_to_the_config_and_the_command_line_wins(
    pod: Path,
) -> None:
    config = pod.parent / "cfg" / ".gpulint.yaml"
    config.parent.mkdir()
    (config.parent / "prod.yaml").write_text(Path(PROD).read_text(encoding="utf-8"))
    (config.parent / "staging.yaml").write_text(Path(STAGING).read_text(encoding="utf-8"))
    config.write_text("clusters:\n  prod: [prod.yaml]\n  staging: [staging.yaml]\n")
    result = run("check", "--config", str(config), "pod.yaml")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == GPU102_PROD
    # Any --profile replaces the config's clusters.
    result = run("check", "--config", str(config), "--profile", STAGING, "pod.yaml")
    assert result.exit_code == 0
    assert "GPU102" not in result.output


def test_a_bad_clusters_key_is_one_line_and_exit_2(pod: Path) -> None:
    config = pod.parent / ".gpulint.yaml"
    config.write_text("clusters:\n  prod: prod.yaml\n")
    result = run("check", "pod.yaml")
    assert result.exit_code == 2
    assert result.output == (
        f"gpulint: error: {config.as_posix()}:2:9: clusters.prod: 'prod.yaml' is not of type "
        "'array'\n"
    )


def test_live_and_named_clusters_do_not_mix(pod: Path) -> None:
    from gpulint.live.client import ConnectionOptions

    with pytest.raises(GpulintError, match="--live reads one cluster"):
        lint(["pod.yaml"], live=ConnectionOptions(), clusters={"prod": (PROD,)})


def test_github_annotation_names_the_clusters(pod: Path) -> None:
    result = run(
        "check",
        "--format",
        "github",
        "--profile",
        f"prod={PROD}",
        "--profile",
        f"staging={STAGING}",
    )
    first, second = result.output.splitlines()[:2]
    assert first.startswith(
        "::error file=pod.yaml,line=6,col=1,title=GPU102 missing-gpu-toleration::[prod] pod "
    )
    assert "::pod requests nvidia.com/gpu" in second


def test_diff_against_named_clusters_adds_the_toleration_prod_needs(pod: Path) -> None:
    result = run("check", "--diff", "--profile", f"prod={PROD}", "--profile", f"staging={STAGING}")
    assert result.exit_code == 1
    assert "+  tolerations:\n+  - key: nvidia.com/gpu\n" in result.output


def _finding(message: str) -> Finding:
    return Finding("GPU103", "n", Severity.ERROR, "chart/templates/a.yaml", 9, 7, message, None)


def test_a_finding_a_cluster_reports_twice_names_that_cluster_once() -> None:
    """Two values sets rendered to one template line: one cluster's finding, twice."""
    twice = _finding("pool gpu-l40s missing")
    staging = LintResult(findings=(twice, twice), files=1, objects=2)
    prod = LintResult(
        findings=(twice, twice, _finding("pool gpu-a10g missing")), files=1, objects=2
    )
    merged = merge_results({"staging": staging, "prod": prod})
    assert [(f.message, f.clusters) for f in merged.findings] == [
        ("pool gpu-l40s missing", ()),
        ("pool gpu-l40s missing", ()),
        ("pool gpu-a10g missing", ("prod",)),
    ]


def test_messages_that_differ_by_cluster_are_each_tagged_with_their_cluster() -> None:
    staging = LintResult(
        findings=(_finding("no pool a"), _finding("no pool a")), files=1, objects=1
    )
    prod = LintResult(findings=(_finding("no pool b"),), files=1, objects=1)
    merged = merge_results({"staging": staging, "prod": prod})
    assert [(f.message, f.clusters) for f in merged.findings] == [
        ("no pool b", ("prod",)),
        ("no pool a", ("staging",)),
        ("no pool a", ("staging",)),
    ]
