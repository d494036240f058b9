"""`gpulint smoke`: the Jobs it writes, and that every one of them lints clean.

Every profile in fixtures/profiles is covered: a new profile file is a new test case.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.api import lint
from gpulint.cli import main
from gpulint.config import Config
from gpulint.errors import GpulintError
from gpulint.profile import Pool, Taint, load_profiles
from gpulint.profile.model import ClusterProfile
from gpulint.scheduling import pool_gpus
from gpulint.smoke import (
    DEFAULT_PROVISIONING_SECONDS,
    RUN_SECONDS,
    SMOKE_LABEL,
    SmokeOptions,
    dump_jobs,
    smoke_jobs,
)

ROOT = Path(__file__).resolve().parent.parent
PROFILES = sorted((ROOT / "fixtures" / "profiles").glob("*.yaml"))
EKS = str(ROOT / "fixtures" / "profiles" / "eks.yaml")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["smoke", *args])


def write_jobs(tmp_path: Path, profile: ClusterProfile, **options: object) -> Path:
    jobs = smoke_jobs(profile, options=SmokeOptions(**options)).jobs  # type: ignore[arg-type]
    path = tmp_path / "smoke.yaml"
    path.write_text(dump_jobs(jobs), encoding="utf-8")
    return path


@pytest.mark.parametrize("profile_path", PROFILES, ids=[p.stem for p in PROFILES])
def test_every_smoke_job_lints_clean_against_its_profile(tmp_path, profile_path) -> None:
    profile = load_profiles([str(profile_path)])
    if not any(pool_gpus(p) for p in profile.pools):
        # An overlay profile (queues only, merged with another): nothing to smoke-test.
        with pytest.raises(GpulintError, match="no pool of the profile advertises"):
            smoke_jobs(profile)
        return
    path = write_jobs(tmp_path, profile)
    # Unused suppressions are reported too: the GPU103 annotation of a cold pool's Job must
    # suppress a real finding, not sit there.
    result = lint([str(path)], config=Config(report_unused_ignores=True), profile=profile)
    assert result.findings == ()
    gpu_pools = [p.name for p in profile.pools if p.can_grow and pool_gpus(p)]
    assert result.objects == len(gpu_pools) > 0


def test_the_cold_pool_annotation_suppresses_a_real_scale_from_zero_warning(tmp_path) -> None:
    profile = load_profiles([EKS])
    text = write_jobs(tmp_path, profile).read_text(encoding="utf-8")
    bare = tmp_path / "bare.yaml"
    bare.write_text(text.replace("  annotations:\n    gpulint.io/ignore: GPU103\n", ""), "utf-8")
    found = [
        (f.code, f.object.name)
        for f in lint([str(bare)], config=Config(), profile=profile).findings
    ]
    assert found == [("GPU103", "gpulint-smoke-p4d")]


def test_job_requests_one_unit_selects_the_pool_and_tolerates_its_taints() -> None:
    jobs = smoke_jobs(load_profiles([EKS])).jobs
    assert [j["metadata"]["name"] for j in jobs] == ["gpulint-smoke-g5", "gpulint-smoke-p4d"]
    g5 = jobs[0]
    assert g5["metadata"]["namespace"] == "ml"  # the profile's default namespace
    assert g5["metadata"]["labels"] == {SMOKE_LABEL: "true", "gpulint.io/pool": "g5"}
    assert "annotations" not in g5["metadata"]  # g5 has nodes: nothing to suppress
    spec = g5["spec"]
    # g5 provisions in 420 s; the deadline counts the Pending time.
    assert spec["activeDeadlineSeconds"] == 420 + RUN_SECONDS
    assert spec["ttlSecondsAfterFinished"] == 3600
    assert spec["backoffLimit"] == 0
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {"eks.amazonaws.com/nodegroup": "g5"}
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    (container,) = pod["containers"]
    assert container["image"] == "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
    assert container["command"] == ["nvidia-smi"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert container["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert jobs[1]["metadata"]["annotations"] == {"gpulint.io/ignore": "GPU103"}


def _pool(name: str, resource: str, provisioning: int | None = None) -> Pool:
    return Pool(
        name=name,
        labels={"karpenter.sh/nodepool": name},
        taints=(Taint(resource, "", "NoSchedule"), Taint("spot", "true", "PreferNoSchedule")),
        allocatable={"cpu": Decimal(16), "memory": Decimal(2**36), resource: Decimal(2)},
        nodes=1,
        provisioning_seconds=provisioning,
    )


def test_vendor_checks_and_the_default_provisioning_time() -> None:
    profile = ClusterProfile(
        pools=(_pool("mi300", "amd.com/gpu"), _pool("inf2", "aws.amazon.com/neuron"))
    )
    amd, neuron = smoke_jobs(profile).jobs
    amd_pod = amd["spec"]["template"]["spec"]
    assert amd_pod["containers"][0]["command"] == ["rocm-smi"]
    # Exists for a taint without value; PreferNoSchedule never blocks, so no toleration.
    assert amd_pod["tolerations"] == [
        {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert amd_pod["nodeSelector"] == {"karpenter.sh/nodepool": "mi300"}
    assert neuron["spec"]["template"]["spec"]["containers"][0]["command"] == ["neuron-ls"]
    assert amd["metadata"]["namespace"] == "default"
    assert amd["spec"]["activeDeadlineSeconds"] == DEFAULT_PROVISIONING_SECONDS + RUN_SECONDS


def test_cli_writes_the_jobs_and_check_passes_them(tmp_path) -> None:
    out = tmp_path / "smoke.yaml"
    result = run("--profile", EKS, "--pool", "g5", "-o", str(out), "-n", "smoke")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"gpulint: wrote 1 smoke-test Job to {out}\n"
    text = out.read_text(encoding="utf-8")
    assert text.count("kind: Job") == 1 and "namespace: smoke" in text
    check = CliRunner().invoke(main, ["check", "--isolated", "--profile", EKS, str(out)])
    assert check.exit_code == 0, check.output


def test_image_and_command_override_the_vendor_check(tmp_path) -> None:
    profile = tmp_path / "xpu.yaml"
    profile.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nspec:\n  pools:\n  - name: xpu\n"
        "    labels: {cloud.google.com/gke-nodepool: xpu}\n"
        "    allocatable: {vendor.example.com/gpu: 4}\n    nodes: 1\n",
        encoding="utf-8",
    )
    unknown = run("--profile", str(profile))
    assert unknown.exit_code == 2
    assert unknown.stderr == (
        "gpulint: error: pool xpu advertises vendor.example.com/gpu, for which gpulint knows no "
        "device check: pass --image and --command\n"
    )
    given = run(
        "--profile", str(profile), "--image", "example/npu-smi:1.0", "--command", "npu-smi -l"
    )
    assert given.exit_code == 0, given.output
    assert (
        "image: example/npu-smi:1.0\n        command:\n        - npu-smi\n        - -l\n"
        in given.stdout
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ([], "smoke needs the cluster's pools: pass --profile FILE or --live"),
        (["--profile", EKS, "--pool", "x"], "no pool `x` in the profile (GPU pools: g5, p4d)"),
        (["--profile", EKS, "--pool", "m5"], "pool `m5` advertises no accelerator"),
        (["--profile", EKS, "--command", "'"], "--command: No closing quotation"),
        (["--profile", EKS, "--live"], "--live reads the profile from the cluster: drop --profile"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, error) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and error in result.stderr


def test_a_pool_that_can_never_get_a_node_is_skipped_with_a_note() -> None:
    kubeadm = str(ROOT / "fixtures" / "profiles" / "placement-kubeadm.yaml")
    result = run("--profile", kubeadm)
    assert result.exit_code == 0, result.output
    assert "gpulint-smoke-p5-reserved" not in result.stdout
    assert result.stderr == (
        "gpulint: note: skipped pool p5-reserved: no node and cannot scale up, a smoke test "
        "would wait forever\n"
    )


def test_a_pool_at_zero_is_selected_only_by_labels_the_autoscalers_template_has(
    tmp_path,
) -> None:
    # A self-managed Auto Scaling group at zero whose tags name `gpu` but not `team`: a Job
    # that required `team` would never make cluster-autoscaler add a node.
    pool = Pool(
        name="g5",
        labels={"node.kubernetes.io/instance-type": "g5.xlarge", "gpu": "yes", "team": "ml"},
        allocatable={
            "cpu": Decimal(4),
            "memory": Decimal(16 * 2**30),
            "nvidia.com/gpu": Decimal(1),
        },
        max_nodes=2,
        scale_from_zero=True,
        template_missing_labels=("team",),
    )
    profile = ClusterProfile(provider="eks", pools=(pool,))
    (job,) = smoke_jobs(profile).jobs
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {
        "node.kubernetes.io/instance-type": "g5.xlarge",
        "gpu": "yes",
    }
    path = write_jobs(tmp_path, profile)
    assert (
        lint([str(path)], config=Config(report_unused_ignores=True), profile=profile).findings == ()
    )
