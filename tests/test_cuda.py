"""The CUDA / driver data (every row read), what gpulint learns of an image and a pool, and the
verdicts GPU801-GPU803 and `gpulint diagnose` rest on.

The findings themselves, with their exact positions and messages, are asserted by the
fixtures of fixtures/cases/cuda and their snapshots (tests/test_fixtures.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.cuda import (
    CudaNeed,
    at_least,
    container_cuda,
    driver_floor,
    family_floor,
    gpu_model,
    highest_cuda,
    image_row,
    judge_architecture,
    judge_driver,
    parse_requirement,
    parse_version,
    pool_driver,
    pool_gpu,
)
from gpulint.cuda_containers import IMAGE_REPOSITORIES, may_know_cuda
from gpulint.data.cuda import (
    ARCHITECTURE_CEILINGS,
    ARCHITECTURE_FLOORS,
    DRIVER_FLOORS,
    FAMILY_FLOORS,
    GPU_MODELS,
    GPU_OPERATOR_RELEASES,
    IMAGES,
    NVIDIA_CUDA_COMPAT,
)
from gpulint.data.gpu_products import GFD_FAMILIES, GKE_FAMILIES
from gpulint.loader import load_path
from gpulint.model import Container
from gpulint.profile.instances import INSTANCE_TYPES, NVIDIA
from gpulint.profile.load import load_profiles
from gpulint.profile.model import Pool
from gpulint.workloads import workload_of

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ROOT / "fixtures" / "profiles" / "cuda"
DRIVERS = load_profiles([str(PROFILES / "cuda-drivers.yaml")])


def pool(name: str) -> Pool:
    return next(p for p in DRIVERS.pools if p.name == name)


def container(tmp_path: Path, image: str, env: str = "") -> Container:
    """The first container of a one-GPU pod running `image` with `env` lines."""
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        f"  - name: c\n    image: {image}\n{env}"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n",
        encoding="utf-8",
    )
    document = load_path(path).documents[0]
    workload = workload_of(document)
    assert workload is not None
    return workload.templates[0].containers[0]


def test_the_repositories_known_without_the_tables_are_the_image_tables() -> None:
    # may_know_cuda reads IMAGE_REPOSITORIES instead of the table: a row added to one and not
    # the other would lose its images' findings.
    assert {r for row in IMAGES for r in row.repositories} == IMAGE_REPOSITORIES


@pytest.mark.parametrize(
    ("image", "env", "known"),
    [
        ("nvcr.io/nvidia/tritonserver:25.08-py3", "", True),
        ("docker.io/library/nvidia/cuda:12.8.1-base-ubuntu22.04", "", True),
        ("registry.local:5000/dlc/huggingface-pytorch-inference:2.1.0-gpu-py310", "", True),
        ("registry.local:5000/team/pytorch/pytorch:2.7.0-cuda12.8-cudnn9-runtime", "", False),
        ("registry.example.com/ml/serving:2.3.0", "", False),
        ("trainer:1.0", "    env: [{name: CUDA_VERSION, value: '12.4.1'}]\n", True),
        ("trainer:1.0", "    env: [{name: NVIDIA_REQUIRE_CUDA, value: 'cuda>=12.8'}]\n", True),
        ("trainer:1.0", "    env: [{name: OTHER, value: '1'}]\n", False),
    ],
)
def test_only_a_container_the_tables_know_nothing_of_skips_them(
    tmp_path: Path, image: str, env: str, known: bool
) -> None:
    found = container(tmp_path, image, env)
    assert may_know_cuda(found) is known
    if not known:  # what the rules no longer ask the tables: they would have said nothing
        assert container_cuda(found) is None


# --- the data: every row --------------------------------------------------------------------


def test_every_driver_floor_parses_is_sourced_and_newest_first() -> None:
    versions = [parse_version(row.cuda) for row in DRIVER_FLOORS]
    drivers = [parse_version(row.driver) for row in DRIVER_FLOORS]
    assert all(v is not None and len(v) == 3 for v in versions)
    assert all(d is not None for d in drivers)
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    # A newer toolkit never needs an older driver.
    assert drivers == sorted(drivers, reverse=True)
    for row in DRIVER_FLOORS:
        assert row.source and driver_floor(parse_version(row.cuda) or ()) == row


def test_table3_rows_the_issue_names() -> None:
    table = {row.cuda: row.driver for row in DRIVER_FLOORS}
    assert table["13.0.0"] == "580.65.06"
    assert table["12.8.1"] == "570.124.06"
    assert table["12.0.0"] == "525.60.13"
    # A version between rows needs the lower row's driver; one before the table, none.
    assert driver_floor((12, 7)) == next(r for r in DRIVER_FLOORS if r.cuda == "12.6.3")
    assert driver_floor((7, 5)) is None


def test_every_family_floor_is_the_first_driver_of_its_major() -> None:
    for family in FAMILY_FLOORS:
        assert family.source and family_floor((family.major, 9)) == family
        ga = [r for r in DRIVER_FLOORS if parse_version(r.cuda)[:2] == (family.major, 0)]
        if family.major >= 12:
            assert family.driver == ga[-1].driver
    assert family_floor((10, 2)) is None


def test_highest_cuda_reads_table3_backwards() -> None:
    assert highest_cuda((570, 124, 6)) == "12.8.1"
    assert highest_cuda((580, 65, 6)) == "13.0.0"
    assert highest_cuda((535, 104, 5)) == "12.2.2"
    assert highest_cuda((300,)) is None


# Per image row, a reference and the CUDA gpulint must read from it.
IMAGE_EXAMPLES = {
    "the official CUDA image": ("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "12.4.1"),
    "NVIDIA's CUDA sample image": ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", "12.5.0"),
    "the PyTorch image": ("pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", "12.8"),
    "the SGLang image": ("docker.io/lmsysorg/sglang:v0.4.6.post4-cu124", "12.4"),
    "a Hugging Face Deep Learning Container": (
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:"
        "2.4.0-tgi3.0.1-gpu-py311-cu124-ubuntu22.04-v2.0",
        "12.4",
    ),
    "vLLM 0.8": ("vllm/vllm-openai:v0.8.5", "12.4"),
    "vLLM 0.9": ("vllm/vllm-openai:v0.9.2", "12.8"),
    "vLLM 0.23": ("docker.io/vllm/vllm-openai:v0.23.0", "13.0.2"),
}


@pytest.mark.parametrize("row", IMAGES, ids=lambda r: r.family)
def test_every_image_row_is_sourced_and_read_from_its_tag(row) -> None:
    assert row.source and row.repositories
    re.compile(row.tag)
    if row.family.startswith("NGC "):
        release = row.family.rsplit(" ", 1)[1]
        variant = "-trtllm-python-py3" if "TensorRT-LLM" in row.family else "-py3"
        image, cuda = f"{row.repositories[0]}:{release}{variant}", row.cuda
    else:
        image, cuda = IMAGE_EXAMPLES[row.family]
    found = image_row(image)
    assert found is not None and found[1].row == row and found[0] == cuda
    assert parse_version(found[0]) is not None
    if row.min_cc is not None:
        assert parse_version(row.min_cc) is not None
    for base in row.compat or ():
        assert parse_version(base) is not None


def test_every_listed_example_is_a_row() -> None:
    assert set(IMAGE_EXAMPLES) == {r.family for r in IMAGES if not r.family.startswith("NGC ")}


@pytest.mark.parametrize(
    "image",
    [
        "vllm/vllm-openai:latest",  # no CUDA in the tag, and latest moves
        "vllm/vllm-openai:v0.11.0",  # a release the table does not list
        "nvcr.io/nvidia/tritonserver:24.01-py3",
        "nvidia/cuda@sha256:" + "a" * 64,  # a digest alone
        "example.com/team/cuda:12.8.1",  # another repository with a CUDA-like tag
        "lmsysorg/sglang:latest",
    ],
)
def test_images_the_table_does_not_know_are_unknown(image: str) -> None:
    assert image_row(image) is None


def test_nvidia_cuda_compat_branches_come_with_the_minor_version() -> None:
    for minor, branches in NVIDIA_CUDA_COMPAT.items():
        assert parse_version(minor) is not None and all(b.isdigit() for b in branches)
    found = image_row("nvidia/cuda:12.8.1-base-ubuntu22.04")
    assert found is not None and found[1].compat == NVIDIA_CUDA_COMPAT["12.8"]
    found = image_row("nvidia/cuda:11.8.0-base-ubuntu22.04")
    assert found is not None and found[1].compat is None  # not stated: forward compat may apply


def test_every_gpu_model_and_every_catalogued_gpu_resolves() -> None:
    names = {m.model for m in GPU_MODELS}
    assert len(names) == len(GPU_MODELS)
    for model in GPU_MODELS:
        assert parse_version(model.compute) is not None and model.architecture
    for family in (*GFD_FAMILIES, *GKE_FAMILIES):
        for value in family.values:
            found = gpu_model(value)
            assert found is not None and found.model == family.model, value
    for entry in INSTANCE_TYPES.values():
        if NVIDIA in entry.accelerators:
            assert gpu_model(entry.model) is not None, entry.name
    assert gpu_model("NVIDIA-GeForce-RTX-4090") is None


def test_every_architecture_floor_and_operator_release_parses() -> None:
    for floor in ARCHITECTURE_FLOORS:
        assert parse_version(floor.compute) and parse_version(floor.cuda) and floor.source
    for ceiling in ARCHITECTURE_CEILINGS:
        assert parse_version(ceiling.compute) and parse_version(ceiling.cuda) and ceiling.source
    for release in GPU_OPERATOR_RELEASES:
        assert parse_version(release.driver) and release.source.endswith(release.version)


@pytest.mark.parametrize("release", GPU_OPERATOR_RELEASES, ids=lambda r: r.version)
def test_a_gpu_operator_release_gives_its_default_driver(tmp_path, release) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: c}\n"
        f"spec:\n  gpuOperator: {{version: {release.version}}}\n  pools:\n  - name: gpu\n"
        "    allocatable: {nvidia.com/gpu: 8}\n",
        encoding="utf-8",
    )
    profile = load_profiles([str(path)])
    driver = pool_driver(profile.pools[0], profile)
    assert driver is not None and driver.text == release.driver
    assert driver.origin.startswith(f"GPU Operator {release.version} default driver")


# --- what a container needs -----------------------------------------------------------------


def test_requirement_strings_as_the_runtime_reads_them() -> None:
    text = (
        "cuda>=12.8 brand=unknown,driver>=470,driver<471 brand=tesla,driver>=470,driver<471 "
        "brand=tesla,driver>=535,driver<536 brand=grid,driver>=550,driver<551"
    )
    assert parse_requirement(text) == ("12.8", ("470", "535"))
    assert parse_requirement("cuda>=13.0") == ("13.0", ())
    assert parse_requirement("brand=tesla,driver>=535,driver<536") is None
    assert parse_requirement("cuda>=abc") is None


def test_env_is_stronger_than_the_tag(tmp_path) -> None:
    image = "nvcr.io/nvidia/tritonserver:25.08-py3"
    by_tag = container_cuda(container(tmp_path, image))
    assert by_tag is not None and (by_tag.cuda, by_tag.compat) == ("13.0.0", row_compat(image))
    assert by_tag.origin == "its tag: NGC Triton Inference Server 25.08"
    env = (
        "    env:\n    - {name: CUDA_VERSION, value: '12.2.2'}\n"
        "    - name: NVIDIA_REQUIRE_CUDA\n"
        "      value: 'cuda>=12.1 brand=tesla,driver>=470,driver<471'\n"
    )
    required = container_cuda(container(tmp_path, image, env))
    assert required is not None
    assert (required.cuda, required.origin, required.compat) == (
        "12.1",
        "NVIDIA_REQUIRE_CUDA in its env",
        ("470",),
    )
    assert required.pos == (11, 14)  # the value, where the finding points
    assert required.min_compute == (7, 5)  # the image's build does not change
    legacy_env = "    env:\n    - {name: CUDA_VERSION, value: '12.2.2'}\n"
    legacy = container_cuda(container(tmp_path, image, legacy_env))
    assert legacy is not None and (legacy.cuda, legacy.origin) == (
        "12.2.2",
        "CUDA_VERSION in its env",
    )


def row_compat(image: str) -> tuple[str, ...] | None:
    found = image_row(image)
    assert found is not None
    return found[1].compat


def test_unknown_cuda_and_disable_require(tmp_path) -> None:
    assert container_cuda(container(tmp_path, "example.com/app:1.0")) is None
    env = "    env:\n    - {name: NVIDIA_DISABLE_REQUIRE, value: 'true'}\n"
    need = container_cuda(container(tmp_path, "vllm/vllm-openai:v0.9.2", env))
    assert need is not None and need.disable_require == (9, 45)


# --- what a pool has, and the verdicts ------------------------------------------------------


def test_pool_drivers_from_every_source() -> None:
    shown = {
        p.name: (d.text, d.origin) if (d := pool_driver(p, DRIVERS)) else None
        for p in DRIVERS.pools
    }
    assert shown == {
        "a100-r570": ("570.124.06", "node label nvidia.com/cuda.driver-version.full"),
        "h100-r580": ("580.65.06", "node label nvidia.com/cuda.driver-version.full"),
        "v100-r515": ("515.105.01", "driverVersion of the pool in the profile"),
        "v100-r535": ("535.104.05", "node labels nvidia.com/cuda.driver.*"),
        "t4-cuda124": (
            "a driver for CUDA 12.4",
            "node label nvidia.com/cuda.runtime-version.full (the newest CUDA the driver runs)",
        ),
        "b200": ("580.95.05", "node label nvidia.com/cuda.driver-version.full"),
        "l4-unknown": None,
    }
    gpu = pool_gpu(pool("t4-cuda124"))
    assert gpu is not None and (gpu.compute, gpu.datacenter) == ((7, 5), None)


def need_of(tmp_path: Path, image: str) -> CudaNeed:
    need = container_cuda(container(tmp_path, image))
    assert need is not None
    return need


@pytest.mark.parametrize(
    ("image", "pool_name", "verdict"),
    [
        # The issue's examples.
        ("nvcr.io/nvidia/tritonserver:25.08-py3", "a100-r570", "error"),
        ("nvcr.io/nvidia/tritonserver:25.08-py3", "h100-r580", None),
        ("nvidia/cuda:12.8.1-base-ubuntu22.04", "v100-r515", "error"),
        ("nvidia/cuda:12.8.1-base-ubuntu22.04", "v100-r535", "warning"),
        # Forward compatibility on R535, which Triton 25.08's notes list.
        ("nvcr.io/nvidia/tritonserver:25.08-py3", "v100-r535", "warning"),
        # The driver that runs CUDA 12.4 at most.
        ("nvidia/cuda:12.4.1-base-ubuntu22.04", "t4-cuda124", None),
        ("nvidia/cuda:12.6.3-base-ubuntu22.04", "t4-cuda124", "warning"),
        ("nvidia/cuda:9.0-devel", "v100-r515", None),
    ],
)
def test_driver_verdicts(tmp_path, image, pool_name, verdict) -> None:
    target = pool(pool_name)
    driver = pool_driver(target, DRIVERS)
    assert driver is not None
    found = judge_driver(need_of(tmp_path, image), driver, pool_gpu(target))
    assert (None if found is None else "error" if found.certain else "warning") == verdict


def test_a_gpu_that_is_not_a_data_center_gpu_gets_no_forward_compatibility(tmp_path) -> None:
    from gpulint.cuda import PoolDriver, PoolGpu

    need = need_of(tmp_path, "nvidia/cuda:12.8.1-base-ubuntu22.04")
    driver = PoolDriver("535.104.05", (535, 104, 5), None, "test")
    # 535 clears the family floor: minor-version compatibility needs no data center GPU.
    assert judge_driver(need, driver, PoolGpu("RTX", (8, 9), False)).certain is False
    old = PoolDriver("470.256.02", (470, 256, 2), None, "test")
    on_rtx = judge_driver(need, old, PoolGpu("RTX", (8, 9), False))
    on_a100 = judge_driver(need, old, PoolGpu("A100", (8, 0), True))
    assert on_rtx is not None and on_rtx.certain and "not one" in on_rtx.reason
    assert on_a100 is not None and not on_a100.certain and "covers R470" in on_a100.reason


def test_architecture_verdicts(tmp_path) -> None:
    v100, b200 = pool_gpu(pool("v100-r535")), pool_gpu(pool("b200"))
    assert v100 is not None and b200 is not None
    triton = judge_architecture(need_of(tmp_path, "nvcr.io/nvidia/tritonserver:25.08-py3"), v100)
    assert triton is not None and triton.certain
    assert (
        judge_architecture(need_of(tmp_path, "nvcr.io/nvidia/tritonserver:23.08-py3"), v100) is None
    )
    base = judge_architecture(need_of(tmp_path, "nvidia/cuda:12.6.3-base-ubuntu22.04"), b200)
    assert base is not None and not base.certain  # a bare runtime: what is built on it decides
    assert (
        judge_architecture(need_of(tmp_path, "nvidia/cuda:12.8.1-base-ubuntu22.04"), b200) is None
    )


def test_versions_compare_as_numbers() -> None:
    assert parse_version("570.124.06") == (570, 124, 6)
    assert parse_version("v25.3.0") == (25, 3, 0)
    assert parse_version("13.0.0.044") == (13, 0, 0)
    assert parse_version(True) is None and parse_version("abc") is None
    assert at_least((580,), (580, 0, 0)) and not at_least((570, 211, 1), (580, 65, 6))


# --- the profile ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("  gpuOperator: {version: v19.1.0}\n", "does not know the default driver of GPU Operator"),
        ("  gpuOperator: {driver: x}\n", "gpuOperator"),
        ("  pools:\n  - name: gpu\n    driverVersion: R535\n", "driverVersion"),
    ],
)
def test_a_bad_driver_declaration_is_one_line_and_exit_2(tmp_path, spec, error) -> None:
    profile = tmp_path / "cluster.yaml"
    profile.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: c}\n"
        f"spec:\n{spec}",
        encoding="utf-8",
    )
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n")
    result = CliRunner().invoke(
        main, ["check", "--isolated", "--profile", str(profile), str(manifest)]
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and error in lines[0] and "Traceback" not in result.output


def test_a_driver_version_merges_with_the_pool_of_another_input(tmp_path) -> None:
    declared = tmp_path / "drivers.yaml"
    declared.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: c}\n"
        "spec:\n  pools:\n  - name: gpu-workers\n    driverVersion: '550.127.05'\n",
        encoding="utf-8",
    )
    kubeadm = ROOT / "fixtures" / "real" / "profiles" / "kubeadm-gpu.yaml"
    profile = load_profiles([str(kubeadm), str(declared)])
    workers = next(p for p in profile.pools if p.name == "gpu-workers")
    assert workers.driver_version == "550.127.05"
    assert workers.allocatable  # the other input's facts stay


# --- the published manifests ----------------------------------------------------------------

REAL = ROOT / "fixtures" / "real"


def test_published_manifests_are_judged_against_realistic_drivers_without_an_error() -> None:
    """Every GPU container of fixtures/real whose CUDA gpulint knows, on every pool of its
    cluster profile it can run on whose driver is known: never a certain failure."""
    from gpulint.scheduling import place
    from tests.test_real_world import FILES, header

    judged = set()
    for path in FILES:
        cluster = header(path).get("cluster")
        if cluster is None:
            continue
        profile = load_profiles([str(path.parent / cluster)])
        for document in load_path(path).documents:
            workload = workload_of(document)
            for template in workload.templates if workload else ():
                eligible = place(template, profile).eligible
                for item in template.containers:
                    need = container_cuda(item)
                    if need is None:
                        continue
                    for target in eligible:
                        driver = pool_driver(target, profile)
                        if driver is None:
                            continue
                        verdict = judge_driver(need, driver, pool_gpu(target))
                        assert verdict is None, (path.name, need.image, target.name, verdict)
                        judged.add((need.image, driver.text))
    # The images of the corpus gpulint knows, each against the drivers its clusters run.
    assert judged == {
        ("vllm/vllm-openai:v0.8.5", "570.133.20"),
        ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", "570.133.20"),
        ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04", "570.133.20"),
        ("nvcr.io/nvidia/k8s/cuda-sample:nbody-cuda11.7.1-ubuntu18.04", "550.127.05"),
        ("nvidia/cuda:13.0.2-base-ubi8", "580.95.05"),
    }


OPERATOR_DUMP = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-1
    labels: {pool: a100, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
  status:
    allocatable: {cpu: "94", memory: 1000Gi, pods: "110", nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata:
    name: h100-1
    labels: {pool: h100, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  status:
    allocatable: {cpu: "222", memory: 1900Gi, pods: "110", nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata:
    name: cpu-1
    labels: {pool: cpu}
  status:
    allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: nvidia.com/v1
  kind: ClusterPolicy
  metadata: {name: cluster-policy}
  spec:
    driver: {enabled: true, version: 550.127.05}
- apiVersion: nvidia.com/v1alpha1
  kind: NVIDIADriver
  metadata: {name: h100-driver}
  spec:
    version: 580.95.05
    nodeSelector: {pool: h100}
"""


def test_the_gpu_operator_objects_of_a_dump_give_the_pools_drivers(tmp_path) -> None:
    from gpulint.profile.cache import ProfileCache

    path = tmp_path / "dump.yaml"
    path.write_text(OPERATOR_DUMP, encoding="utf-8")
    cache = ProfileCache(tmp_path / "cache")
    # Read twice through the cache: the second run reads the pickled facts back.
    for _ in range(2):
        profile = load_profiles([str(path)], pool_label="pool", cache=cache)
        shown = {
            p.name: (d.text, d.origin) if (d := pool_driver(p, profile)) else None
            for p in profile.pools
        }
        assert shown == {
            "a100": ("550.127.05", f"ClusterPolicy cluster-policy driver version in {path}"),
            "h100": ("580.95.05", f"NVIDIADriver h100-driver driver version in {path}"),
            "cpu": None,  # no NVIDIA GPU: no driver of the operator's
        }


@pytest.mark.parametrize(
    "driver",
    [
        "{enabled: false, version: 550.127.05}",  # the node image brings its own
        "{useNvidiaDriverCRD: true, version: 550.127.05}",  # NVIDIADriver objects say
        "{usePrecompiled: true, version: '570'}",  # a branch alone
        "{enabled: true}",  # the operator's default, whose release the object does not name
    ],
)
def test_a_cluster_policy_that_names_no_driver_says_nothing(tmp_path, driver) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        OPERATOR_DUMP.split("- apiVersion: nvidia.com/v1\n")[0]
        + f"- apiVersion: nvidia.com/v1\n  kind: ClusterPolicy\n  metadata: {{name: p}}\n"
        f"  spec:\n    driver: {driver}\n",
        encoding="utf-8",
    )
    profile = load_profiles([str(path)], pool_label="pool")
    assert [pool_driver(p, profile) for p in profile.pools] == [None, None, None]


_TRITON_L4 = """apiVersion: v1
kind: Pod
metadata: {name: triton, namespace: ml}
spec:
  nodeSelector: {pool: l4-unknown}
  containers:
  - name: triton
    image: nvcr.io/nvidia/tritonserver:25.08-py3
    resources: {limits: {nvidia.com/gpu: 1}}
"""
_POLICY = """apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  driver: {enabled: true, version: "550.127.05"}
"""
_NVIDIADRIVER = """apiVersion: nvidia.com/v1alpha1
kind: NVIDIADriver
metadata: {name: l4}
spec:
  nodeSelector: {pool: l4-unknown}
  version: "580.95.05"
"""
_KYVERNO = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-limits}
spec:
  driver: {version: "550.127.05"}
"""


def _gpu801(tmp_path: Path, **files: str) -> list[tuple[str, int, int, str, str]]:
    from gpulint.api import lint
    from gpulint.config import Config

    paths = []
    for name, text in files.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return [
        (Path(f.path).name, f.line, f.column, f.severity.label, f.message)
        for f in lint(paths, config=Config(), profile=DRIVERS).findings
        if f.code == "GPU801"
    ]


def test_a_cluster_policy_in_another_checked_file_gives_the_unlabelled_pools_driver(
    tmp_path: Path,
) -> None:
    (found,) = _gpu801(tmp_path, a_operator=_POLICY, b_app=_TRITON_L4)
    assert found[:4] == ("b_app.yaml", 8, 12, "error")
    assert (
        "l4-unknown has 550.127.05 (ClusterPolicy cluster-policy driver version in the checked "
        "manifests): below CUDA 13's family floor 580.65.06" in found[4]
    )


def test_an_nvidiadriver_for_the_pool_outranks_the_cluster_policy(tmp_path: Path) -> None:
    # Its nodeSelector picks the L4 nodes: 580.95.05 runs CUDA 13.0.0, so nothing is said.
    assert _gpu801(tmp_path, a=_POLICY + "---\n" + _NVIDIADRIVER, b=_TRITON_L4) == []


def test_other_cluster_policies_and_a_disabled_driver_say_nothing(tmp_path: Path) -> None:
    disabled = _POLICY.replace("enabled: true", "enabled: false")
    assert _gpu801(tmp_path, a=_KYVERNO, b=_TRITON_L4) == []
    assert _gpu801(tmp_path, a=disabled, b=_TRITON_L4) == []


def test_the_operator_kinds_read_among_manifests_are_those_the_profile_reads() -> None:
    from gpulint.cuda import _OPERATOR_KINDS
    from gpulint.engine.plan import KNOWLEDGE_KINDS
    from gpulint.profile.gpu_operator import KINDS

    assert _OPERATOR_KINDS == KINDS
    assert KINDS <= KNOWLEDGE_KINDS  # read in every input, whichever file the pod is in


@pytest.mark.parametrize(
    ("image", "cuda"),
    [
        # The TensorRT-LLM variant of a release is built on another CUDA than its -py3 image.
        ("nvcr.io/nvidia/tritonserver:25.10-trtllm-python-py3", "12.9.1"),
        ("nvcr.io/nvidia/tritonserver:25.10-py3", "13.0.2"),
        ("nvcr.io/nvidia/tritonserver:25.08-trtllm-python-py3", "12.9.0"),
        ("nvcr.io/nvidia/tritonserver:25.08-py3-sdk", "13.0.0"),
        ("nvcr.io/nvidia/tritonserver:24.07-trtllm-python-py3", "12.4.1"),
        # Variants without a row of their own are unknown, not their release's -py3 CUDA.
        ("nvcr.io/nvidia/tritonserver:25.10-vllm-python-py3", None),
        ("nvcr.io/nvidia/tritonserver:25.03-trtllm-python-py3", None),
    ],
)
def test_triton_variants_get_their_own_cuda(image: str, cuda: str | None) -> None:
    found = image_row(image)
    assert (found[0] if found else None) == cuda


def test_every_trtllm_row_names_its_tag_and_matrix() -> None:
    rows = [r for r in IMAGES if "TensorRT-LLM" in r.family]
    assert len(rows) == 16
    for row in rows:
        release = row.family.rsplit(" ", 1)[1]
        found = image_row(f"nvcr.io/nvidia/tritonserver:{release}-trtllm-python-py3")
        assert found is not None and found[0] == row.cuda and found[1].row is row
        assert driver_floor(parse_version(row.cuda)) is not None
        assert "compatibility.html" in row.source and "trtllm-python-py3" in row.source
