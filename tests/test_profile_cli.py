"""`gpulint check --profile`, `gpulint profile import` and `gpulint profile show`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.loader import display_path
from gpulint.profile import load_profiles

PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"
DUMP = str(PROFILES / "eks-prod-kubectl.yaml")
EKSCTL = str(PROFILES / "eks-prod-eksctl.yaml")
GKE = str(PROFILES / "gke.yaml")
BAD_PROFILE = (
    "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nspec:\n  pools:\n"
    "  - name: a\n    maxNodes: four\n"
)
POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
  - name: c
    image: registry.example.com/c:1.0
    resources:
      limits: {nvidia.com/gpu: 1}
"""
SKIPPED_NOTE = "cluster-profile rules skipped: no --profile given"


@pytest.fixture
def pod(tmp_path: Path) -> str:
    path = tmp_path / "pod.yaml"
    path.write_text(POD, encoding="utf-8")
    return str(path)


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_passes_the_profile_to_the_profile_rules(pod: str) -> None:
    code, out, _ = run("check", "--isolated", pod)
    assert SKIPPED_NOTE in out
    code, out, err = run("check", "--isolated", pod, "--profile", str(PROFILES / "eks.yaml"))
    assert code in (0, 1), err
    assert SKIPPED_NOTE not in out


def test_check_accepts_repeated_profiles_and_a_pool_label(pod: str) -> None:
    code, out, err = run(
        "check",
        "--isolated",
        pod,
        "--profile",
        DUMP,
        "--profile",
        EKSCTL,
        "--pool-label",
        "workload",
    )
    assert code in (0, 1), err
    assert SKIPPED_NOTE not in out


def test_a_bad_profile_is_a_one_line_error_with_exit_2(tmp_path: Path, pod: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_PROFILE, encoding="utf-8")
    expected = (
        f"gpulint: error: {bad}:6:15: spec.pools.0.maxNodes: 'four' is not of type 'integer' "
        "(see docs/profile.md)\n"
    )
    for args in (
        ("check", "--isolated", pod, "--profile", str(bad)),
        ("profile", "import", str(bad)),
        ("profile", "show", "--profile", str(bad)),
    ):
        result = CliRunner().invoke(main, list(args))
        assert (result.exit_code, result.stderr, result.stdout) == (2, expected, ""), args
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_missing_profile_is_an_error(tmp_path: Path, pod: str) -> None:
    missing = str(tmp_path / "none.yaml")
    code, _, err = run("check", "--isolated", pod, "--profile", missing)
    assert (code, err) == (2, f"gpulint: error: {missing}: profile file not found\n")


def test_check_without_a_profile_does_not_import_the_importers(pod: str) -> None:
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from gpulint.cli import main\n"
        f"CliRunner().invoke(main, ['check', '--isolated', {pod!r}])\n"
        "print(sorted(m for m in sys.modules if m in WANTED))\n"
    )
    wanted = [
        "gpulint.profile.load",
        "gpulint.profile.kubectl",
        "gpulint.profile.eksctl",
        "gpulint.profile.clusterprofile",
        "gpulint.profile.dump",
        "jsonschema",
    ]
    script = f"WANTED = {wanted!r}\n" + script
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out == "[]\n"


def test_profile_import_of_the_dump_round_trips(tmp_path: Path) -> None:
    target = tmp_path / "profile.yaml"
    code, out, err = run("profile", "import", DUMP, "-o", str(target))
    assert (code, out) == (0, "")
    assert err == f"gpulint: wrote the ClusterProfile (3 pools) to {target}\n"
    reloaded = load_profiles([str(target)])
    assert reloaded == load_profiles([DUMP])
    assert [p.name for p in reloaded.pools] == ["m5", "g5", "gpu-spot"]
    assert reloaded.pools[1].device_plugin_not_ready == 1


def test_profile_import_merges_and_prints_to_stdout(tmp_path: Path) -> None:
    code, out, _ = run("profile", "import", DUMP, EKSCTL)
    assert code == 0
    assert out.startswith(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: eks-prod\n"
        'spec:\n  kubernetesVersion: "1.31"\n'
        # The dump's nodes: the oldest release the API server can run.
        '  minimumKubernetesVersion: "v1.31.2-eks-7f9249a"\n'
        "  platform: eks\n  pools:\n  - name: m5\n"
    )
    target = tmp_path / "merged.yaml"
    target.write_text(out, encoding="utf-8")
    assert load_profiles([str(target)]) == load_profiles([DUMP, EKSCTL])


def test_profile_import_needs_files() -> None:
    code, _, err = run("profile", "import")
    assert code == 2 and "Missing argument 'FILES...'" in err


def test_profile_show_table() -> None:
    code, out, err = run("profile", "show", "--profile", GKE)
    assert (code, err) == (0, "")
    header = (
        "POOL          INSTANCE        GPUS/NODE         NODES NOW/MIN/MAX  FROM ZERO  "
        "PLUGIN NOT READY  TAINTS                             LABELS"
    )
    lines = out.splitlines()
    assert lines[:4] == [
        f"Cluster gke-ml: Kubernetes 1.30; platform gke, declared in {GKE}",
        # Named as given, relative to the working directory when inside it.
        f"Built from: {display_path(GKE, os.getcwd())}",
        "",
        header,
    ]
    assert lines[4].split() == [
        "default-pool",
        "e2-standard-8",
        "-",
        "3/3/5",
        "no",
        "0",
        "-",
        "cloud.google.com/gke-nodepool=default-pool,cloud.google.com/machine-family=e2,"
        "kubernetes.io/arch=amd64,kubernetes.io/os=linux,"
        "node.kubernetes.io/instance-type=e2-standard-8",
    ]
    assert lines[5].split()[:8] == [
        "l4-pool",
        "g2-standard-24",
        "2",
        "nvidia.com/gpu",
        "1/0/8",
        "yes",
        "0",
        "nvidia.com/gpu=present:NoSchedule",
    ]
    assert lines[6].split()[:5] == ["a100-pool", "a2-highgpu-8g", "8", "nvidia.com/gpu", "0/0/2"]
    assert lines[7:] == [
        "",
        "ExtendedResourceToleration: on (GKE 'Run GPUs in GKE Standard node pools' (cloud.google"
        ".com/kubernetes-engine/docs/how-to/gpus): GKE runs ExtendedResourceToleration for its "
        "nvidia.com/gpu taint; set spec.admission.extendedResourceToleration to override)",
        "compute-class toleration: on (GKE mutates a pod that selects a compute class by "
        "nodeSelector or node affinity with the toleration of its taint (kubernetes-engine-"
        "samples autoscaling/custom-compute-classes/vap))",
        "Arm toleration: on (GKE 'Prepare an Arm workload for deployment' (cloud.google.com/"
        "kubernetes-engine/docs/how-to/prepare-arm-workloads-for-deployment): a pod that selects "
        "kubernetes.io/arch=arm64 by nodeSelector or node affinity is given the toleration of the "
        "Arm nodes' taint)",
        "Autopilot GPU rules: off (GKE Standard has no Autopilot constraints)",
        "Autopilot resource mutator: off (an Autopilot webhook: it runs only on Autopilot "
        "clusters)",
        "PodTolerationRestriction: unknown (no page of the platform found that says whether it "
        "runs PodTolerationRestriction; set spec.admission.podTolerationRestriction to override)",
        "ResourceQuota default/gpu-quota: used/hard requests.nvidia.com/gpu 2/8",
        "PriorityClass training-high: 10000 (PreemptLowerPriority)",
    ]


def test_profile_show_of_a_dump_reports_not_ready_plugins_and_hidden_labels() -> None:
    code, out, _ = run("profile", "show", "--profile", DUMP, "--profile", EKSCTL)
    assert code == 0
    rows = {line.split()[0]: line.split() for line in out.splitlines()[4:9]}
    assert rows["g5"][2:7] == ["8", "nvidia.com/gpu", "2/1/4", "yes", "1"]
    assert rows["p4d"][2:7] == ["8", "nvidia.com/gpu", "0/0/4", "yes", "0"]
    # A self-managed group scales from zero, but its untagged label is not on the template.
    assert rows["m5"][2:6] == ["-", "2/2/6", "yes", "0"]
    assert (
        "cluster-autoscaler's template of m5 lacks the labels workload: no scale-up from zero "
        "for pods that require them" in out
    )
    assert "beta.kubernetes.io/" not in out
    assert (
        "(20 deprecated or bookkeeping labels not shown; `gpulint profile import` lists every "
        "label)" in out
    )
    assert f"platform eks, inferred from the eksctl ClusterConfig {EKSCTL}" in out


def test_profile_show_has_a_gpus_in_use_column_when_the_profile_knows_them() -> None:
    code, out, _ = run("profile", "show", "--profile", str(PROFILES / "placement-in-use.yaml"))
    assert code == 0
    lines = out.splitlines()
    assert lines[3].split()[:5] == ["POOL", "INSTANCE", "GPUS/NODE", "GPUS", "IN"]
    rows = {line.split()[0]: line.split()[2:6] for line in lines[4:9]}
    # In use / on the nodes now: g5 has 2 nodes × 4 GPUs.
    assert rows == {
        "system": ["-", "-", "3/2/6", "yes"],
        "g5": ["4", "nvidia.com/gpu", "6/8", "2/1/3"],
        "p4d": ["8", "nvidia.com/gpu", "0/0", "0/0/4"],
        "p5-reserved": ["8", "nvidia.com/gpu", "0/0", "0/0/0"],
        "g6-inference": ["1", "nvidia.com/gpu", "0/1", "1/1/2"],
    }
    # Without gpusInUse anywhere the column is left out rather than shown as zeros.
    _, plain, _ = run("profile", "show", "--profile", str(PROFILES / "placement-eks.yaml"))
    assert "GPUS IN USE" not in plain


def test_profile_show_needs_a_profile_or_the_config_clusters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("profile", "show")
    assert (code, out) == (2, "")
    assert err == (
        "gpulint: error: profile show needs --profile FILE, or `clusters:` in the config file "
        "(no config file (.gpulint.yaml) found)\n"
    )


def test_profile_show_reads_the_config_clusters_and_names_their_files_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "profiles").mkdir()
    for name in ("gke.yaml", "eks.yaml"):
        (tmp_path / "profiles" / name).write_bytes((PROFILES / name).read_bytes())
    (tmp_path / ".gpulint.yaml").write_text(
        "clusters:\n  prod: [profiles/gke.yaml]\n  staging: [profiles/eks.yaml]\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run("profile", "show")
    assert (code, err) == (0, "")
    by_flags = run(
        "profile", "show", "--profile", "prod=profiles/gke.yaml", "--profile",
        "staging=profiles/eks.yaml",
    )  # fmt: skip
    assert out == by_flags[1]
    lines = out.splitlines()
    assert lines[0] == "=== prod ==="
    assert lines[2] == "Built from: profiles/gke.yaml"
    assert "=== staging ===" in lines
    assert "Built from: profiles/eks.yaml" in lines


def test_profile_show_says_who_holds_the_gpus_in_use() -> None:
    code, out, _ = run("profile", "show", "--profile", str(PROFILES / "placement-in-use-by.yaml"))
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("In use on")] == [
        "In use on g5: Deployment serving/server 4 nvidia.com/gpu; "
        "StatefulSet serving/cache 4 nvidia.com/gpu",
        "In use on g6-inference: Deployment batch/classifier 1 nvidia.com/gpu",
    ]
    _, without, _ = run("profile", "show", "--profile", str(PROFILES / "placement-in-use.yaml"))
    assert "In use on" not in without


PROFILE_HEAD = "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: x}\n"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (PROFILE_HEAD + "spec:\n  pools:\n  - name: a\n    nodes: -3\n",
         "7:12: spec.pools.0.nodes: -3 is less than the minimum of 0"),
        (PROFILE_HEAD + "spec:\n  pools:\n  - name: a\n    colour: blue\n",
         "7:5: unknown field `spec.pools.0.colour`"),
        (PROFILE_HEAD + "spec:\n  pools:\n  - name: a\n    labels: {a: {b: " + "x" * 60 + "}}\n",
         "7:17: spec.pools.0.labels.a: `{…}` is not of type 'string', 'number', 'boolean'"),
        (PROFILE_HEAD + "spec: [1]\n", "4:7: spec: [1] is not of type 'object'"),
        (PROFILE_HEAD + "spec:\n  pools: !!python/object/apply:os.system [id]\n",
         "5:43: spec.pools.0: 'id' is not of type 'object'"),
        ("a: &a [*a]\n", "1:8: invalid YAML: anchor 'a' value contains itself"),
        ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, data: {p: cA==}}\n",
         "1:1: no Node, ResourceQuota, LimitRange, PriorityClass, Kueue or DRA object in this "
         "list; give the output of `kubectl get nodes,resourcequotas,limitranges,priorityclasses "
         "-A -o yaml`"),
    ],
    ids=["negative", "unknown-field", "long-value", "wrong-type", "tag", "self-alias", "secrets"],
)  # fmt: skip
def test_a_malformed_profile_is_one_line_naming_the_place(
    tmp_path: Path, pod: str, text: str, error: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--isolated", pod, "--profile", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"gpulint: error: {bad}:{error}")
    assert result.stderr.count("\n") == 1
    assert "cA==" not in result.stderr


def test_a_profile_that_is_not_utf8_names_the_byte(tmp_path: Path, pod: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"apiVersion: v1\nkind: \xff\n")
    result = CliRunner().invoke(main, ["check", "--isolated", pod, "--profile", str(bad)])
    assert (result.exit_code, result.stderr) == (
        2,
        f"gpulint: error: {bad}:2:7: not valid UTF-8; save it as UTF-8\n",
    )
