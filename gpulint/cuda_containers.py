"""What a container says of its CUDA without the CUDA tables: whether it asks for NVIDIA GPUs,
its literal env, and whether gpulint.cuda could know the CUDA it needs at all.

The GPU80x rules ask these of every container first; gpulint.cuda and its tables
(gpulint.data.cuda) are imported only for a container whose CUDA may be known, so a run whose
GPU containers run images the tables do not list never reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.model import Container
    from gpulint.yamltree import Pos

#: The resource names whose pods the NVIDIA driver serves.
NVIDIA_PREFIX = "nvidia.com/"
#: The env variables the NVIDIA runtime reads the CUDA an image needs from.
CUDA_ENV = ("NVIDIA_REQUIRE_CUDA", "CUDA_VERSION")
#: Every repository a row of gpulint.data.cuda.IMAGES names (tests/test_cuda.py keeps the two
#: equal): an image of any other repository is not in the table.
IMAGE_REPOSITORIES = frozenset(
    {
        "huggingface-pytorch-inference",
        "huggingface-pytorch-tgi-inference",
        "huggingface-pytorch-training",
        "lmsysorg/sglang",
        "nvcr.io/nvidia/cuda",
        "nvcr.io/nvidia/dgl",
        "nvcr.io/nvidia/k8s/cuda-sample",
        "nvcr.io/nvidia/mxnet",
        "nvcr.io/nvidia/pytorch",
        "nvcr.io/nvidia/sglang",
        "nvcr.io/nvidia/tensorflow",
        "nvcr.io/nvidia/tritonserver",
        "nvidia/cuda",
        "pytorch/pytorch",
        "vllm/vllm-openai",
    }
)


def uses_nvidia_gpus(container: Container) -> bool:
    """Whether the container asks for an NVIDIA GPU resource (a whole GPU, MIG slice, share)."""
    for quantities in (container.resources.limits, container.resources.requests):
        for name, quantity in quantities.items():
            if name.startswith(NVIDIA_PREFIX) and (quantity.amount is None or quantity.amount > 0):
                return True
    return False


def container_env(container: Container) -> dict[str, tuple[str, Pos]]:
    """The literal `env:` values of the container (valueFrom is not known before it runs)."""
    from gpulint.yamltree import YMap, YSeq

    found: dict[str, tuple[str, Pos]] = {}
    env = container.node.get("env")
    if not isinstance(env, YSeq):
        return found
    for item in env:
        if isinstance(item, YMap) and isinstance(item.get("name"), str):
            value = item.get("value")
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                found[item["name"]] = (str(value), item.pos_of_value("value"))
    return found


def image_repository(image: str) -> str:
    """The repository of an image reference, without its tag or digest, and without the
    `docker.io/` and `library/` that name Docker Hub's default."""
    rest = image.strip().partition("@")[0]
    head, slash, last_part = rest.rpartition("/")
    repository = head + slash + last_part.partition(":")[0]
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if repository.startswith(prefix):
            repository = repository[len(prefix) :]
            break
    return repository.removeprefix("library/")


def may_know_cuda(container: Container) -> bool:
    """False when gpulint.cuda.container_cuda surely finds no CUDA for the container: its env
    states none, and its image's repository (nor the repository's last part, which a row of
    bare names also matches) is not one the image table lists."""
    env = container.node.get("env")
    if env is not None and any(key in container_env(container) for key in CUDA_ENV):
        return True
    image = container.node.get("image")
    if not isinstance(image, str):
        return False
    repository = image_repository(image)
    return repository in IMAGE_REPOSITORIES or repository.rsplit("/", 1)[-1] in IMAGE_REPOSITORIES
