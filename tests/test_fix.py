"""`gpulint check --fix`, `--diff` and `--unsafe-fixes` end to end, on a copy of fixtures/fix.

fixtures/fix/manifests.yaml has a misspelled GPU key with a trailing comment, a misspelled
`resources:` block, a pod that lacks the GPU pool's toleration (exposed only once its GPU key
is fixed) and a request that differs from its limit (exposed once `resources:` is fixed).
The expected results are the files next to it; only the lines a fix touches may differ.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BEFORE = (FIXTURES / "fix" / "manifests.yaml").read_text(encoding="utf-8")
AFTER_SAFE = (FIXTURES / "fix" / "manifests.fixed-safe.yaml").read_text(encoding="utf-8")
AFTER_UNSAFE = (FIXTURES / "fix" / "manifests.fixed-unsafe.yaml").read_text(encoding="utf-8")
GPU002_LEFT = (
    "manifests.yaml:44:45: GPU002 [error] container `score` requests 1 `nvidia.com/gpu` but "
    "limits it to 2; the API rejects requests that differ from the limit of an extended "
    "resource"
)


@pytest.fixture()
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the manifests and the profile they are checked against."""
    shutil.copy(FIXTURES / "fix" / "manifests.yaml", tmp_path / "manifests.yaml")
    shutil.copy(FIXTURES / "profiles" / "placement-eks.yaml", tmp_path / "cluster.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str, input: bytes | None = None) -> Result:
    """`gpulint check ARGS --profile cluster.yaml`, in-process."""
    return CliRunner().invoke(main, ["check", *args, "--profile", "cluster.yaml"], input=input)


def changed_lines(before: str, after: str) -> list[str]:
    """The removed and added lines between two texts."""
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
        if line[:1] in "+-" and not line.startswith(("---", "+++"))
    ]


def test_check_marks_fixable_findings_and_counts_them(workdir: Path) -> None:
    result = run("manifests.yaml")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    located = [line for line in lines if line.startswith("manifests.yaml:")]
    assert located[0].startswith("manifests.yaml:24:15: GPU001 [*] [error] container `server`")
    assert located[1].startswith("manifests.yaml:34:22: GPU104 [warning] pod requests no GPU")
    assert located[2].startswith("manifests.yaml:38:9: GPU004 [*] [error] container `score`")
    assert lines[-1] == (
        "Found 3 findings (2 errors, 1 warning) in 1 file, 2 objects. 2 fixable with --fix."
    )


def test_diff_shows_every_chained_fix_and_touches_nothing(workdir: Path) -> None:
    result = run("manifests.yaml", "--diff")
    assert result.exit_code == 1
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == BEFORE
    expected = "".join(
        difflib.unified_diff(
            BEFORE.splitlines(keepends=True),
            AFTER_SAFE.splitlines(keepends=True),
            "manifests.yaml",
            "manifests.yaml",
        )
    )
    assert result.stdout == expected
    assert "gpulint: would fix 3 findings in 1 file(s)" in result.stderr


def test_exit_zero_makes_a_diff_exit_0_as_in_ruff(workdir: Path) -> None:
    result = run("manifests.yaml", "--diff", "--exit-zero")
    assert result.exit_code == 0
    assert result.stdout.startswith("--- manifests.yaml\n+++ manifests.yaml\n")
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == BEFORE


def test_fix_applies_the_safe_fixes_and_reports_what_is_left(workdir: Path) -> None:
    result = run("manifests.yaml", "--fix")
    assert result.exit_code == 1
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == AFTER_SAFE
    assert result.stdout.splitlines()[0] == GPU002_LEFT
    assert result.stdout.splitlines()[-1] == (
        "Found 1 finding (1 error) in 1 file, 2 objects. 1 fixable with --fix --unsafe-fixes."
    )
    assert "gpulint: fixed 3 findings in 1 file(s)" in result.stderr


def test_only_the_lines_involved_differ_and_every_comment_survives() -> None:
    removed = [line[1:] for line in changed_lines(BEFORE, AFTER_SAFE) if line[0] == "-"]
    assert removed == [
        '              "nvidia.com/gpus": 1   # one L4',
        "        resoures:   # typo",
    ]
    added = [line[1:] for line in changed_lines(BEFORE, AFTER_SAFE) if line[0] == "+"]
    assert added == [
        "      tolerations:",
        "        - key: dedicated",
        "          operator: Equal",
        "          value: inference",
        "          effect: NoSchedule",
        '              "nvidia.com/gpu": 1   # one L4',
        "        resources:   # typo",
    ]
    comments = [line for line in BEFORE.splitlines() if "#" in line]
    assert all(any(c.split("#")[1] in a for a in AFTER_SAFE.splitlines()) for c in comments)


def test_unsafe_fixes_leave_no_error(workdir: Path) -> None:
    result = run("manifests.yaml", "--fix", "--unsafe-fixes")
    assert result.exit_code == 0, result.stdout
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == AFTER_UNSAFE
    assert changed_lines(AFTER_SAFE, AFTER_UNSAFE) == [
        '-          requests: {cpu: "1", memory: 4Gi, nvidia.com/gpu: 1}',
        '+          requests: {cpu: "1", memory: 4Gi, nvidia.com/gpu: 2}',
    ]
    assert result.stdout.splitlines()[-1] == "All checks passed (1 file, 2 objects)."


def test_json_says_which_findings_are_fixable(workdir: Path) -> None:
    findings = json.loads(run("manifests.yaml", "--format", "json").stdout)["findings"]
    assert [(f["code"], f["autofix"]) for f in findings] == [
        ("GPU001", "safe"),
        ("GPU104", None),
        ("GPU004", "safe"),
    ]


def test_the_fixed_file_is_stable(workdir: Path) -> None:
    (workdir / "manifests.yaml").write_text(AFTER_UNSAFE, encoding="utf-8")
    result = run("manifests.yaml", "--diff", "--unsafe-fixes")
    assert (result.exit_code, result.stdout) == (0, "")


def test_fix_on_stdin_does_not_crash_and_writes_nothing(workdir: Path) -> None:
    result = run("-", "--fix", "--stdin-filename", "manifests.yaml", input=b"x: [")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    result = run("-", "--fix", "--stdin-filename", "manifests.yaml", input=BEFORE.encode())
    assert result.exit_code == 1
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == BEFORE
    assert result.stderr == (
        "gpulint: manifests.yaml: not fixed: standard input is not fixed in place; "
        "--diff shows its fixes\n"
    )


def test_diff_of_stdin_shows_its_fixes(workdir: Path) -> None:
    result = run("-", "--diff", input=BEFORE.encode())
    assert result.exit_code == 1
    assert '+              "nvidia.com/gpu": 1   # one L4' in result.stdout.splitlines()


@pytest.mark.parametrize(
    ("text", "mark"),
    [
        ("# Source: chart/templates/deploy.yaml\n", "# Source:"),  # rendered Helm output
        ("# Code generated by kustomize. DO NOT EDIT.\n", "DO NOT EDIT"),
    ],
)
def test_generated_files_are_named_not_touched(workdir: Path, text: str, mark: str) -> None:
    (workdir / "manifests.yaml").write_text(text + BEFORE, encoding="utf-8")
    result = run("manifests.yaml", "--fix")
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == text + BEFORE
    assert result.stderr == (
        f"gpulint: manifests.yaml: not fixed: a tool generated it (`{mark}`); "
        "fix what it is generated from\n"
    )


def test_a_file_that_does_not_parse_is_not_touched(workdir: Path) -> None:
    broken = BEFORE + "---\nkind: [\n"
    (workdir / "manifests.yaml").write_text(broken, encoding="utf-8")
    result = run("manifests.yaml", "--fix")
    assert (workdir / "manifests.yaml").read_text(encoding="utf-8") == broken
    assert result.stderr == (
        "gpulint: manifests.yaml: not fixed: it does not parse (43:1: did not find expected "
        "node content (while parsing a flow node))\n"
    )


def test_fix_with_live_is_refused_in_one_line(workdir: Path) -> None:
    result = CliRunner().invoke(main, ["check", "manifests.yaml", "--fix", "--live"])
    assert result.exit_code == 2
    message = "--fix and --diff check against a --profile, not --live"
    assert result.stderr == f"gpulint: error: {message}\n"


def test_findings_in_rendered_helm_output_are_not_marked_fixable(workdir: Path) -> None:
    rendered = (FIXTURES / "demo" / "rendered-chart.yaml").read_text(encoding="utf-8")
    (workdir / "rendered.yaml").write_text(rendered, encoding="utf-8")
    result = run("rendered.yaml", "--output-format", "json")
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["source"], f["autofix"]) for f in findings] == [
        ("GPU004", "embeddings/templates/deployment.yaml", None)
    ]


QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus, namespace: ml}
spec:
  hard:
    nvidia.com/gpu: 4
"""


def test_renaming_a_never_enforced_quota_key_is_unsafe(workdir: Path) -> None:
    # The rename switches enforcement on: pods the quota never refused may now be refused.
    (workdir / "quota.yaml").write_text(QUOTA, encoding="utf-8")
    result = run("quota.yaml", "--fix")
    assert (workdir / "quota.yaml").read_text(encoding="utf-8") == QUOTA
    assert result.stdout.startswith("quota.yaml:6:5: GPU302 [warning] ResourceQuota")
    assert "1 fixable with --fix --unsafe-fixes." in result.stdout
    run("quota.yaml", "--fix", "--unsafe-fixes")
    fixed = QUOTA.replace("nvidia.com/gpu: 4", "requests.nvidia.com/gpu: 4")
    assert (workdir / "quota.yaml").read_text(encoding="utf-8") == fixed


# Pods operators build from a pod mapping written in another field (Dynamo's `extraPodSpec`
# with only its main container, a Slinky NodeSet's `template.spec`, a BentoDeployment
# runner's `extraPodSpec`), and a runner that writes none. Every GPU pool of the profile is
# tainted and the cluster runs no ExtendedResourceToleration.
OPERATOR_PODS = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: graph}
spec:
  services:
    Worker:
      replicas: 1
      resources:
        limits: {gpu: "1"}
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0
---
apiVersion: slinky.slurm.net/v1beta1
kind: NodeSet
metadata: {name: gpu}
spec:
  replicas: 1
  slurmd:
    image: ghcr.io/slinkyproject/slurmd:25.05
    resources:
      limits: {nvidia.com/gpu: 1}
  template:
    spec:
      hostname: gpu
---
apiVersion: serving.yatai.ai/v2alpha1
kind: BentoDeployment
metadata: {name: iris}
spec:
  bento: iris-1
  runners:
  - name: runner1
    resources:
      limits: {gpu: "1"}
    extraPodSpec:
      nodeSelector: {kubernetes.io/os: linux}
  - name: runner2
    resources:
      limits: {gpu: "1"}
"""


def test_a_toleration_for_an_operator_pod_goes_where_the_operator_reads_pod_fields(
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "operators.yaml"
    manifest.write_text(OPERATOR_PODS, encoding="utf-8")
    profile = str(FIXTURES / "profiles" / "placement-kubeadm.yaml")
    args = ["check", str(manifest), "--profile", profile, "--output-format", "json"]
    fixed = CliRunner().invoke(main, [*args, "--fix", "--unsafe-fixes"])
    assert "gpulint: fixed 3 findings in 1 file(s)" in fixed.stderr
    toleration = ["- key: nvidia.com/gpu", "  operator: Equal", "  value: present"]
    toleration.append("  effect: NoSchedule")
    added = [line[1:] for line in changed_lines(OPERATOR_PODS, manifest.read_text("utf-8"))]
    # Above the first key of each pod mapping, never inside `mainContainer` or the NodeSet's
    # own `spec`; runner2 writes no pod mapping, so nothing is added for it.
    assert added == [
        *(" " * 8 + line for line in ["tolerations:", *toleration]),
        *(" " * 6 + line for line in ["tolerations:", *toleration]),
        *(" " * 6 + line for line in ["tolerations:", *toleration]),
    ]
    assert OPERATOR_PODS.count("\n") + 15 == manifest.read_text("utf-8").count("\n")
    # The pods now tolerate the taint: only runner2's finding is left.
    findings = json.loads(CliRunner().invoke(main, args).stdout)["findings"]
    left = [f for f in findings if f["code"] == "GPU102"]
    assert [(f["line"], f["column"]) for f in left] == [(53, 5)]
    assert "give it through the operator's own setting" in left[0]["fix"]


def test_in_a_flow_mapping_the_toleration_goes_before_its_first_key(tmp_path: Path) -> None:
    # The NodeSet's `template` and runner1's `extraPodSpec` written as flow mappings.
    flow = OPERATOR_PODS.replace(
        "extraPodSpec:\n      nodeSelector: {kubernetes.io/os: linux}",
        "extraPodSpec: {nodeSelector: {kubernetes.io/os: linux}}",
    ).replace("template:\n    spec:\n      hostname: gpu", "template: {spec: {hostname: gpu}}")
    manifest = tmp_path / "operators.yaml"
    manifest.write_text(flow, encoding="utf-8")
    profile = str(FIXTURES / "profiles" / "placement-kubeadm.yaml")
    CliRunner().invoke(main, ["check", str(manifest), "--profile", profile, "--fix"])
    toleration = "{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}"
    added = [
        line[1:] for line in changed_lines(flow, manifest.read_text("utf-8")) if line[0] == "+"
    ]
    assert added[-2:] == [
        f"  template: {{spec: {{tolerations: [{toleration}], hostname: gpu}}}}",
        f"    extraPodSpec: {{tolerations: [{toleration}], "
        "nodeSelector: {kubernetes.io/os: linux}}",
    ]
