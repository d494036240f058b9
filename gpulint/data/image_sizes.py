"""How big common GPU images are, each row with its source.

A row names a repository and the tags (a regular expression the whole tag matches) whose size
a public source states, and the size it states (the least, when it states a range). An image
or tag not listed is of unknown size, and gpulint then says nothing about it: sizes grow from
release to release (vLLM's image went from about 9 GB in 2024-08 to 12.6 GB in 2025-10) and a
family is listed only as far as its measured tags reach.
"""

from gpulint.views import NamedTuple


class ImageSize(NamedTuple):
    """The size of the tags of one image repository, as a source states it."""

    family: str  # for messages: `vLLM's OpenAI server image`
    repositories: tuple[str, ...]  # without a `docker.io/` or `library/` prefix
    tag: str  # a regular expression the whole tag matches
    gigabytes: float  # the size stated (its least, for a range)
    source: str  # where the size is stated


_TRITON = "nvcr.io/nvidia/tritonserver"

IMAGE_SIZES: tuple[ImageSize, ...] = (
    ImageSize(
        "vLLM's OpenAI server image",
        ("vllm/vllm-openai",),
        r"latest|nightly",
        12.6,
        "vllm-project/vllm#27154 (2025-10-18: 12.64 GB); PR #22377 (2025-08: 28.6 GB)",
    ),
    ImageSize(
        "vLLM's OpenAI server image",
        ("vllm/vllm-openai",),
        r"v0\.(?:[5-9]|1[01])\.\d+(?:\.post\d+)?",
        9.0,
        "vllm-project/vllm#7609 (2024-08-16: 9 GB, 5 GB compressed); #27154 (2025-10-18: 12.64 GB)",
    ),
    ImageSize(
        "ROCm's vLLM image",
        ("rocm/vllm",),
        r"[A-Za-z0-9._-]+",
        7.5,
        "ROCm/vllm#363 (2025-01-15: about 22 GB, a nightly 7.5 GB compressed)",
    ),
    ImageSize(
        "NGC PyTorch 23.03",
        ("nvcr.io/nvidia/pytorch",),
        r"23\.03-py3",
        20.0,
        "d4l3k/torchdrive PR #4 (2023-04-11)",
    ),
    ImageSize(
        "NGC Triton Inference Server 22.12",
        (_TRITON,),
        r"22\.12-py3",
        14.0,
        "triton-inference-server/server#5383 (2023-02, `docker images`)",
    ),
    ImageSize(
        "NGC Triton Inference Server 22.12 SDK",
        (_TRITON,),
        r"22\.12-py3-sdk",
        9.63,
        "triton-inference-server/server#5383 (2023-02, `docker images`)",
    ),
    ImageSize(
        "NGC Triton Inference Server 23.01",
        (_TRITON,),
        r"23\.01-py3",
        16.0,
        "triton-inference-server/server#5383 (2023-02, `docker images`)",
    ),
    ImageSize(
        "NGC Triton Inference Server 23.01 (minimal)",
        (_TRITON,),
        r"23\.01-py3-min",
        8.27,
        "triton-inference-server/server#5383 (2023-02, `docker images`)",
    ),
    ImageSize(
        "NGC Triton Inference Server 23.01 (TensorFlow 2, Python)",
        (_TRITON,),
        r"23\.01-tf2-python-py3",
        10.2,
        "triton-inference-server/server#5383 (2023-02, `docker images`)",
    ),
    ImageSize(
        "NGC Triton Inference Server with TensorRT-LLM",
        (_TRITON,),
        r"24\.0[45]-trtllm-python-py3",
        18.5,
        "triton-inference-server/server#7335 (2024-06-08, the NGC catalogue)",
    ),
    ImageSize(
        "NGC Triton Inference Server 24.06",
        (_TRITON,),
        r"24\.06-py3",
        15.5,
        "triton-inference-server/server#7474 (2024-07-25)",
    ),
    ImageSize(
        "the CUDA 10.0 cuDNN 7 devel image",
        ("nvidia/cuda",),
        r"10\.0-cudnn7-devel-ubuntu18\.04",
        3.05,
        "ufoym/deepo#113 (2019-06-19)",
    ),
)
