"""GPU610: imagePullPolicy Always (written, or implied by `latest`) on a GPU pod's image whose
size gpulint/data/image_sizes.py states; an image of unknown size is not reported."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gpulint import images
from gpulint.data.image_sizes import IMAGE_SIZES
from gpulint.images import reference_problem
from gpulint.rules.pulls import image_size, implies_always
from tests.test_cli import run

COST = (
    "every start of this GPU pod asks the registry for the tag, and when the tag has moved the "
    "kubelet pulls the new layers while the GPUs wait; a registry outage or rate limit keeps "
    "the pod from starting"
)


def test_every_size_row_is_sourced_multi_gb_and_its_tag_pattern_compiles() -> None:
    for row in IMAGE_SIZES:
        assert re.search(r"[\w.-]+/[\w.-]+(#| PR #)\d+", row.source), row
        assert row.gigabytes >= 2, row
        re.compile(row.tag)
        assert all(not r.startswith(("docker.io/", "library/")) for r in row.repositories)


@pytest.mark.parametrize(
    ("image", "gigabytes"),
    [
        ("vllm/vllm-openai:latest", 12.6),
        ("docker.io/vllm/vllm-openai", 12.6),  # no tag: latest
        ("vllm/vllm-openai:v0.6.3", 9.0),
        ("vllm/vllm-openai:v0.4.0", None),  # before the measured releases
        ("nvcr.io/nvidia/pytorch:23.03-py3", 20.0),
        ("nvcr.io/nvidia/pytorch:24.05-py3", None),  # not measured: say nothing
        ("nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3", 18.5),
        ("nvcr.io/nvidia/tritonserver:23.01-py3-min@sha256:abc", 8.27),
        ("registry.example.com/vllm/vllm-openai:latest", None),  # another registry's image
    ],
)
def test_image_size_lookup(image: str, gigabytes: float | None) -> None:
    row = image_size(image)
    assert (row.gigabytes if row else None) == gigabytes


@pytest.mark.parametrize(
    ("image", "always"),
    [
        ("vllm/vllm-openai", True),
        ("vllm/vllm-openai:latest", True),
        ("localhost:5000/vllm", True),  # a registry port is no tag
        ("vllm/vllm-openai:v0.6.3", False),
        ("vllm/vllm-openai:latest@sha256:abc", False),
    ],
)
def test_which_images_default_to_always(image: str, always: bool) -> None:
    assert implies_always(image) is always


def test_written_and_implied_always_are_reported_at_their_field(tmp_path: Path) -> None:
    manifest = tmp_path / "serve.yaml"
    manifest.write_text(
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata: {name: serve}\n"
        "spec:\n"
        "  containers:\n"
        "  - name: vllm\n"
        "    image: vllm/vllm-openai:latest\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
        "  - name: triton\n"
        "    image: nvcr.io/nvidia/tritonserver:24.06-py3\n"
        "    imagePullPolicy: Always\n"
        "  - name: sidecar\n"
        "    image: registry.example.com/proxy:latest\n"
    )
    result = run(
        "check", "--no-cache", "--select", "GPU610", "--output-format", "concise", str(manifest)
    )
    assert result.exit_code == 0, result.output  # warnings only
    lines = [line for line in result.output.splitlines() if "GPU610" in line]
    assert lines == [
        f"{manifest}:7:12: GPU610 [warning] vllm/vllm-openai:latest has the tag latest and no "
        "imagePullPolicy, which then defaults to Always; it is vLLM's OpenAI server image, about "
        "12.6 GB (source: vllm-project/vllm#27154 (2025-10-18: 12.64 GB); PR #22377 (2025-08: "
        f"28.6 GB)): {COST}",
        f"{manifest}:11:22: GPU610 [warning] imagePullPolicy: Always on "
        "nvcr.io/nvidia/tritonserver:24.06-py3, NGC Triton Inference Server 24.06, about 15.5 GB "
        f"(source: triton-inference-server/server#7474 (2024-07-25)): {COST}",
    ]


def test_off_by_default(tmp_path: Path) -> None:
    manifest = tmp_path / "serve.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: serve}\nspec:\n  containers:\n"
        "  - name: vllm\n    image: vllm/vllm-openai:latest\n"
        "    resources:\n      requests: {cpu: '1', memory: 1Gi}\n"
        "      limits: {memory: 1Gi, nvidia.com/gpu: 1}\n"
    )
    result = run("check", "--no-cache", "--output-format", "concise", str(manifest))
    assert "GPU610" not in result.output


# --- GPU202 with the pool's p95 image pull -----------------------------------------------

PROFILE = Path(__file__).parent.parent / "fixtures" / "profiles" / "pulls-gke.yaml"
JOB = (
    "apiVersion: batch/v1\n"
    "kind: Job\n"
    "metadata: {{name: finetune, namespace: ml}}\n"
    "spec:\n"
    "  activeDeadlineSeconds: {deadline}\n"
    "  template:\n"
    "    spec:\n"
    "      restartPolicy: Never\n"
    "      nodeSelector: {{cloud.google.com/gke-nodepool: {pool}}}\n"
    "      tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n"
    "      containers:\n"
    "      - name: train\n"
    "        image: registry.example.com/ml/finetune:2.1\n"
    "        resources:\n"
    "          requests: {{cpu: '4', memory: 16Gi}}\n"
    "          limits: {{memory: 16Gi, nvidia.com/gpu: {gpus}}}\n"
)


def gpu202(tmp_path: Path, deadline: int, pool: str = "gpu-l4", gpus: int = 1) -> list[str]:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB.format(deadline=deadline, pool=pool, gpus=gpus))
    result = run(
        "check", "--no-cache", "--profile", str(PROFILE), "--select", "GPU202",
        "--output-format", "concise", str(manifest),
    )  # fmt: skip
    return [line.split(" GPU202 ", 1)[1] for line in result.output.splitlines() if "GPU202" in line]


def test_gpu202_adds_the_pools_p95_pull_to_provisioning_and_says_so(tmp_path: Path) -> None:
    assert gpu202(tmp_path, 600) == [
        "[warning] activeDeadlineSeconds: 600 counts the time pods wait Pending, but they can "
        "only run on pool gpu-l4, with 0 nodes now and about 420 s to provision one plus 350 s "
        "to pull the images (the pool's p95 pull, imagePullSeconds in the profile), 770 s in "
        "all: the Job can fail with DeadlineExceeded before a pod starts"
    ]
    # Longer than provisioning alone (420 s), shorter than provisioning plus the pull.
    assert len(gpu202(tmp_path, 500)) == 1
    assert gpu202(tmp_path, 770) == []


def test_gpu202_without_a_known_pull_counts_provisioning_alone(tmp_path: Path) -> None:
    assert gpu202(tmp_path, 500, "gpu-h100", 8) == [
        "[warning] activeDeadlineSeconds: 500 counts the time pods wait Pending, but they can "
        "only run on pool gpu-h100, with 0 nodes now and about 600 s to provision one: the Job "
        "can fail with DeadlineExceeded before a pod starts"
    ]
    assert gpu202(tmp_path, 600, "gpu-h100", 8) == []


def test_a_profile_with_a_bad_image_pull_seconds_is_one_line_and_exit_2(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.read_text().replace("imagePullSeconds: 350", "imagePullSeconds: -3"))
    manifest = tmp_path / "job.yaml"
    manifest.write_text(JOB.format(deadline=600, pool="gpu-l4", gpus=1))
    result = run("check", "--no-cache", "--profile", str(profile), str(manifest))
    assert result.exit_code == 2
    assert "imagePullSeconds" in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("image", "problem"),
    [
        ("nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04", None),
        ("vllm/vllm-openai", None),
        ("localhost:5000/team/tool:v1", None),
        ("[::1]:5000/tool:1", None),
        ("Registry.Example.com/team/tool:1", None),  # a host may hold capitals
        ("x_y__z--w:1", None),
        ("busybox@sha256:" + "a" * 64, None),
        ("ubuntu:22.04 ", "holds whitespace, which no reference may"),
        ("MyOrg/Trainer:1", "names its repository in capitals, which a reference may not"),
        ("repo:tag:more", "is not a reference of the form `registry/path:tag` or `path@digest`"),
        ("repo:-dash", "is not a reference of the form `registry/path:tag` or `path@digest`"),
        ("a" * 64, "is 64 hexadecimal digits, which reads as an image ID, not a name"),
        ("tool@sha256:" + "A" * 64, "has a sha256 digest that is not 64 lowercase hex digits"),
        ("tool@md5:" + "a" * 32, "has a digest of algorithm `md5`, not sha256, sha384 or sha512"),
        ("r/" + "a" * 260, "has a repository name of 262 characters, more than 255"),
    ],
)
def test_image_references_as_the_kubelet_parses_them(image: str, problem: str | None) -> None:
    assert reference_problem(image) == problem


def test_the_quick_test_of_a_reference_never_passes_one_the_grammar_refuses() -> None:
    # The string tests that spare compiling the grammar must be stricter than it: every
    # reference they pass, the grammar passes too (random shapes from a small alphabet).
    rng = random.Random(804)
    parts = ["a", "b1", "Z", "0", ".", "_", "__", "-", "--", ":", "/", "5000", "x.io", "@", " "]
    passed = 0
    for _ in range(20000):
        image = "".join(rng.choice(parts) for _ in range(rng.randint(1, 9)))
        if images._plainly_valid(image):
            passed += 1
            assert re.match(images._REFERENCE, image), image
    assert passed > 500  # the quick test does pass the ordinary shapes


def test_an_invalid_image_is_quoted_escaped_and_cut(tmp_path: Path) -> None:
    pod = (
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": '
        '[{"name": "c", "image": "%s", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}'
    )
    path = tmp_path / "pod.json"
    path.write_text(pod % ("A" * 5000), encoding="utf-8")
    result = run("check", "--select", "GPU804", "--format", "concise", str(path))
    (line,) = [x for x in result.output.splitlines() if "GPU804" in x]
    assert f"image `{'A' * 199}…` of container `c` names its repository in capitals" in line
    path.write_text(pod % "ab\\u0000c", encoding="utf-8")
    result = run("check", "--select", "GPU804", "--format", "concise", str(path))
    assert "image `ab\\x00c` of container `c` is not a reference" in result.output
