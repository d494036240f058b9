"""What a container image's CUDA needs of a node's NVIDIA driver, and what a GPU needs of an
image, kept as data with the source of every row.

- `DRIVER_FLOORS`: NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" (Linux x86_64),
  the least driver each toolkit release runs on as released.
- `FAMILY_FLOORS`: minor-version compatibility, the least driver of a major family on which
  anything built with that family runs (with a reduced feature set, and no PTX JIT beyond it).
- `IMAGES`: image repositories and tags whose CUDA is known without pulling them.
- `GPU_MODELS`: the compute capability of each GPU model family, and whether it is a data
  center GPU (forward compatibility works on those only).
- `GPU_OPERATOR_DRIVERS`: the driver each GPU Operator release installs by default.
- `SMOKE_IMAGES`: the CUDA base images `gpulint smoke` chooses from, per pool driver.

A row is listed only when its source states it; an image, tag or release not listed is
unknown, and gpulint then says nothing about it.
"""

from gpulint.views import NamedTuple

_TABLE3 = (
    "NVIDIA CUDA Toolkit Release Notes, Table 3 (docs.nvidia.com/cuda/cuda-toolkit-release-notes, "
    "13.x edition; docs.nvidia.com/cuda/archive/12.8.0/cuda-toolkit-release-notes)"
)
_TABLE3_OLD = (
    "NVIDIA CUDA Toolkit Release Notes, Table 3, as copied in "
    "blog.csdn.net/wangleiwavesharp/article/details/108768309"
)
_MINOR = "docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html, Table 1"


class DriverFloor(NamedTuple):
    """The least Linux driver a CUDA toolkit release needs."""

    cuda: str  # 12.8.1 for "12.8 Update 1"
    driver: str
    source: str


#: Newest first. A version between two rows needs at least the lower row's driver.
DRIVER_FLOORS: tuple[DriverFloor, ...] = (
    DriverFloor("13.2.1", "595.58.03", _TABLE3),
    DriverFloor("13.2.0", "595.45.04", _TABLE3),
    DriverFloor("13.1.1", "590.48.01", _TABLE3),
    DriverFloor("13.1.0", "590.44.01", _TABLE3),
    DriverFloor("13.0.2", "580.95.05", _TABLE3),
    DriverFloor("13.0.1", "580.82.07", _TABLE3),
    DriverFloor("13.0.0", "580.65.06", _TABLE3),
    DriverFloor("12.9.1", "575.57.08", _TABLE3),
    DriverFloor("12.9.0", "575.51.03", _TABLE3),
    DriverFloor("12.8.1", "570.124.06", _TABLE3),
    DriverFloor("12.8.0", "570.26", _TABLE3),
    DriverFloor("12.6.3", "560.35.05", _TABLE3),
    DriverFloor("12.6.1", "560.35.03", _TABLE3),
    DriverFloor("12.6.0", "560.28.03", _TABLE3),
    DriverFloor("12.5.1", "555.42.06", _TABLE3),
    DriverFloor("12.5.0", "555.42.02", _TABLE3),
    DriverFloor("12.4.1", "550.54.15", _TABLE3),
    DriverFloor("12.4.0", "550.54.14", _TABLE3),
    DriverFloor("12.3.1", "545.23.08", _TABLE3),
    DriverFloor("12.3.0", "545.23.06", _TABLE3),
    DriverFloor("12.2.2", "535.104.05", _TABLE3),
    DriverFloor("12.2.1", "535.86.09", _TABLE3),
    DriverFloor("12.2.0", "535.54.03", _TABLE3),
    DriverFloor("12.1.0", "530.30.02", _TABLE3),
    DriverFloor("12.0.1", "525.85.12", _TABLE3),
    DriverFloor("12.0.0", "525.60.13", _TABLE3),
    DriverFloor("11.8.0", "520.61.05", _TABLE3),
    DriverFloor("11.7.1", "515.48.07", _TABLE3),
    DriverFloor("11.7.0", "515.43.04", _TABLE3),
    DriverFloor("11.6.1", "510.47.03", _TABLE3),
    DriverFloor("11.6.0", "510.39.01", _TABLE3),
    DriverFloor("11.5.0", "495.29.05", _TABLE3),
    DriverFloor("11.4.3", "470.82.01", _TABLE3),
    DriverFloor("11.4.0", "470.42.01", _TABLE3),
    DriverFloor("11.1.0", "455.23.04", _TABLE3_OLD),
    DriverFloor("11.0.0", "450.36.06", _TABLE3_OLD),
    DriverFloor("10.2.0", "440.33", _TABLE3_OLD),
    DriverFloor("10.1.0", "418.39", _TABLE3_OLD),
    DriverFloor("10.0.0", "410.48", _TABLE3_OLD),
    DriverFloor("9.2.0", "396.26", _TABLE3_OLD),
    DriverFloor("9.0.0", "384.81", _TABLE3_OLD),
    DriverFloor("8.0.0", "367.48", _TABLE3_OLD),
)


class FamilyFloor(NamedTuple):
    """The least driver on which any toolkit of a major family runs (minor-version
    compatibility: CUDA 11 and later)."""

    major: int
    driver: str
    source: str


#: Major families before 11 have no minor-version compatibility: Table 3 is their only floor.
FAMILY_FLOORS: tuple[FamilyFloor, ...] = (
    # ">= 580": the first R580 release, that of 13.0 GA.
    FamilyFloor(13, "580.65.06", f"{_MINOR}; 13.0 GA row of Table 3"),
    # ">= 525": the first R525 release, that of 12.0 GA.
    FamilyFloor(12, "525.60.13", f"{_MINOR}; 12.0 GA row of Table 3"),
    # ">= 450", and "450.80.02 ... as indicated" for 11.0.
    FamilyFloor(11, "450.80.02", _MINOR),
)

#: The driver branches that a CUDA image's forward-compatibility package (cuda-compat) runs
#: on, per source. Forward compatibility works only on data center GPUs
#: (docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html).
FORWARD_COMPAT_GPUS = "NVIDIA data center GPUs (and select NGC-Server-Ready RTX SKUs)"


class ImageCuda(NamedTuple):
    """Container images whose CUDA version is known from their repository and tag."""

    family: str  # what the images are, for messages: `NGC Triton Inference Server 25.08`
    repositories: tuple[str, ...]  # without a `docker.io/` or `library/` prefix
    tag: str  # a regular expression the whole tag matches; group `cuda` gives the version
    cuda: str | None  # the version when the tag does not carry it
    # The driver branches (with the least version of each) its cuda-compat package supports;
    # None when not stated (forward compatibility may then apply on a data center GPU).
    compat: tuple[str, ...] | None
    min_cc: str | None  # the least compute capability its GPU code is built for
    kernels: (
        bool  # ships GPU code built for a list of architectures (a framework), not a bare runtime
    )
    source: str


_NVCR = "nvcr.io/nvidia/"
_NGC_TAG = r"{release}(?:-[a-z0-9.-]+)?"


def _ngc(
    product: str,
    repository: str,
    release: str,
    cuda: str,
    compat: tuple[str, ...] | None,
    min_cc: str | None,
    source: str,
    tag_form: str = _NGC_TAG,
) -> ImageCuda:
    """One NGC framework container release (`YY.MM`, any `-py3` / `-pyt-python-py3` variant,
    or the variants `tag_form` allows)."""
    tag = tag_form.format(release=release.replace(".", r"\."))
    return ImageCuda(
        f"NGC {product} {release}", (_NVCR + repository,), tag, cuda, compat, min_cc, True, source
    )


# Forward-compatible branches as the NGC release notes of each era state them (the least
# version of each). The notes' "requires driver N" sentence lags Table 3 and is not used.
_NGC_2023 = ("450.51", "470.57", "510.47", "515.65", "525.85", "530.30")
_NGC_2308 = ("450.51", "470.57", "510.47", "525.85", "535.86")
_NGC_2025 = ("470.57", "525.85", "535.86", "545.23")
# Triton's variants are built on other stacks: `-trtllm-python-py3` on TensorRT-LLM's CUDA
# (25.10-trtllm is CUDA 12.9.1 where 25.10-py3 is 13.0.2), `-vllm-python-py3` on vLLM's. A
# release row covers its plain `-py3` images only; the TensorRT-LLM variant has rows of its own.
_TRITON_TAG = r"{release}(?:-py3(?:-sdk|-min|-igpu)?)?"
_TRTLLM_TAG = r"{release}-trtllm-python-py3"
_TRITON_MATRIX = (
    "docs.nvidia.com/deeplearning/triton-inference-server/{}user-guide/docs/introduction/"
    "compatibility.html, Container Name: trtllm-python-py3, CUDA version column"
)
_TRITON_NOTES = "docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-{}.html"
_SDK_NOTES = "docs.nvidia.com/deeplearning/sdk/inference-release-notes/rel-{}.html"

#: The brand=tesla branches of the `NVIDIA_REQUIRE_CUDA` of the official nvidia/cuda images,
#: per CUDA minor version (space-separated alternatives to `cuda>=X.Y`).
NVIDIA_CUDA_COMPAT: dict[str, tuple[str, ...]] = {
    # nvidia/cuda:12.8.1 image history (ENV NVIDIA_REQUIRE_CUDA), as printed by an image
    # inspection in the code index (id 22547696651)
    "12.8": ("470", "535", "550", "560", "565"),
    # vllm/vllm-openai:v0.23.0 image env, built FROM nvidia/cuda:13.0.2 (code index id
    # 66974901641); the same string in nvidia/cuda:13.0.2-base-ubuntu22.04 (id 57385264673)
    "13.0": ("535", "550", "565", "570", "575"),
}
_NVIDIA_CUDA_SOURCE = (
    "tag `<X.Y.Z>-{base,runtime,devel}[-cudnn]-<os>` of gitlab.com/nvidia/container-images/cuda; "
    "NVIDIA_REQUIRE_CUDA per minor version in NVIDIA_CUDA_COMPAT"
)

IMAGES: tuple[ImageCuda, ...] = (
    ImageCuda(
        "the official CUDA image",
        ("nvidia/cuda", "nvcr.io/nvidia/cuda"),
        r"(?P<cuda>\d+\.\d+(?:\.\d+)?)(?:-[a-z0-9.-]+)?",
        None,
        None,  # per minor version: NVIDIA_CUDA_COMPAT
        None,
        False,
        _NVIDIA_CUDA_SOURCE,
    ),
    ImageCuda(
        "NVIDIA's CUDA sample image",
        ("nvcr.io/nvidia/k8s/cuda-sample",),
        r"[a-z]+-cuda(?P<cuda>\d+\.\d+(?:\.\d+)?)(?:-[a-z0-9.-]+)?",
        None,
        None,
        None,
        False,
        "tags `<sample>-cuda<X.Y.Z>[-<os>]` as the GPU Operator and device plugin docs use them "
        "(NVIDIA/gpu-operator tests/gpu-pod.yaml)",
    ),
    ImageCuda(
        "the PyTorch image",
        ("pytorch/pytorch",),
        r"[0-9.]+-cuda(?P<cuda>\d+\.\d+)-cudnn\d+-(?:runtime|devel)",
        None,
        None,
        None,
        True,
        "tags `<torch>-cuda<X.Y>-cudnn<N>-{runtime,devel}` of hub.docker.com/r/pytorch/pytorch "
        "(e.g. 2.11.0-cuda12.8-cudnn9-runtime)",
    ),
    ImageCuda(
        "the SGLang image",
        ("lmsysorg/sglang",),
        r"v[0-9][0-9a-z.]*-cu(?P<cu>\d{3})",
        None,
        None,
        None,
        True,
        "tags `v<version>-cu<XYZ>` of hub.docker.com/r/lmsysorg/sglang (e.g. v0.4.6.post4-cu124); "
        "sgl-project/sglang docker/Dockerfile selects the torch index from ARG CUDA_VERSION",
    ),
    ImageCuda(
        "a Hugging Face Deep Learning Container",
        (
            "huggingface-pytorch-tgi-inference",
            "huggingface-pytorch-inference",
            "huggingface-pytorch-training",
        ),
        r"[0-9a-z.+-]*-gpu-py3\d+-cu(?P<cu>\d{3})-[a-z0-9.-]+",
        None,
        None,
        None,
        True,
        "tags `<torch>-tgi<version>-gpu-py311-cu124-ubuntu22.04-v2.0` of the SageMaker Hugging "
        "Face DLCs (huggingface/hub-docs docs/sagemaker/tgi.md)",
    ),
    ImageCuda(
        "vLLM 0.8",
        ("vllm/vllm-openai",),
        r"v0\.8\.\d+",
        "12.4",
        ("470", "525", "535"),
        None,
        True,
        "vllm/vllm-openai:v0.8.5 image env NVIDIA_REQUIRE_CUDA=cuda>=12.4 brand=tesla,driver>=470 "
        "... 525 ... 535 (docker inspect in the code index, id 67128530027); vLLM v0.9.0 release "
        "notes: the default was CUDA 12.4 until then",
    ),
    ImageCuda(
        "vLLM 0.9",
        ("vllm/vllm-openai",),
        r"v0\.9\.\d+",
        "12.8",
        None,
        None,
        True,
        "vLLM v0.9.0 release notes: 'The default wheel has been upgraded from CUDA 12.4 to CUDA "
        "12.8'; vllm-project/vllm#18813 (v0.9.0 container: unsatisfied condition cuda>=12.8)",
    ),
    ImageCuda(
        "vLLM 0.23",
        ("vllm/vllm-openai",),
        r"v0\.23\.\d+",
        "13.0.2",
        None,  # VLLM_ENABLE_CUDA_COMPATIBILITY=0 in the image: whether compat libs load varies
        "7.5",
        True,
        "vllm/vllm-openai:v0.23.0 image env CUDA_VERSION=13.0.2, TORCH_CUDA_ARCH_LIST=7.5 8.0 8.6 "
        "8.9 9.0 10.0 12.0+PTX (code index id 66974901641)",
    ),
    _ngc("Triton Inference Server", "tritonserver", "22.05", "11.7", None, "6.0",
         _SDK_NOTES.format("22-05"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "22.12", "11.8.0", None, "6.0",
         _SDK_NOTES.format("22-12"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "23.04", "12.1.0", _NGC_2023, "6.0",
         _SDK_NOTES.format("23-04"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "23.05", "12.1.1", _NGC_2023, "6.0",
         _TRITON_NOTES.format("23-05"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "23.06", "12.1.1", _NGC_2023, "6.0",
         _SDK_NOTES.format("23-06"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "23.07", "12.1.1", _NGC_2023, "6.0",
         _SDK_NOTES.format("23-07"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "23.08", "12.2.1", _NGC_2308, "6.0",
         _SDK_NOTES.format("23-08"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "25.03", "12.8.1", _NGC_2025, "7.5",
         _TRITON_NOTES.format("25-03"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "25.08", "13.0.0", _NGC_2025, "7.5",
         _TRITON_NOTES.format("25-08"), _TRITON_TAG),
    _ngc("Triton Inference Server", "tritonserver", "25.10", "13.0.2", _NGC_2025, "7.5",
         _TRITON_NOTES.format("25-10"), _TRITON_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.12", "13.0.2", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.11", "13.0.2", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.10", "12.9.1", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.09", "12.9.1", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.08", "12.9.0", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.07", "12.9.0", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.06", "12.9.0", None,
         None, _TRITON_MATRIX.format(""), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "25.01", "12.8.0", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2540/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.12", "12.6.3", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2540/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.11", "12.6.3", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.10", "12.5.1", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.09", "12.5.1", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.08", "12.5.1", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.07", "12.4.1", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.06", "12.4.0", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("Triton Inference Server with TensorRT-LLM", "tritonserver", "24.05", "12.3.2", None,
         None, _TRITON_MATRIX.format("archives/triton-inference-server-2530/"), _TRTLLM_TAG),
    _ngc("TensorFlow", "tensorflow", "22.10", "11.8.0", ("450.51", "470.57", "510.47", "515.65"),
         "6.0", "docs.nvidia.com/deeplearning/frameworks/tensorflow-release-notes/rel-22-10.html"),
    _ngc("TensorFlow", "tensorflow", "23.01", "12.0.1",
         ("450.51", "470.57", "510.47", "515.65", "525.85"), "6.0",
         "docs.nvidia.com/deeplearning/frameworks/tensorflow-release-notes/rel-23-01.html"),
    _ngc("MXNet", "mxnet", "22.05", "11.7", None, "6.0",
         "docs.nvidia.com/deeplearning/frameworks/mxnet-release-notes/rel_22-05.html"),
    _ngc("MXNet", "mxnet", "24.05", "12.4.1", None, "6.0",
         "docs.nvidia.com/deeplearning/frameworks/mxnet-release-notes/rel-24-05.html"),
    _ngc("DGL", "dgl", "23.07", "12.1.1", None, "6.0",
         "docs.nvidia.com/deeplearning/frameworks/dgl-release-notes/rel-23-07.html"),
    _ngc("PyTorch", "pytorch", "19.03", "10.1.0", ("384.111", "410"), "6.0",
         "docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel_19-03.html"),
    _ngc("PyTorch", "pytorch", "19.05", "10.1.1", ("384.111", "410"), "6.0",
         "docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel_19-05.html"),
    _ngc("SGLang", "sglang", "25.10", "13.0.2", ("470.57", "525.85", "535.86", "550.54"), None,
         "docs.nvidia.com/deeplearning/frameworks/sglang-release-notes/rel-25-10.html"),
)  # fmt: skip


class GpuModel(NamedTuple):
    """A GPU model family: its compute capability and whether it is a data center GPU."""

    model: str  # the token of gpulint.data.gpu_products and the instance catalogue: `V100`
    compute: str  # compute capability, `7.0`
    datacenter: bool | None  # None: not known (a workstation card NVIDIA may list as such)
    architecture: str


_CUDA_GPUS = "developer.nvidia.com/cuda-gpus"
#: Every family of gpulint.data.gpu_products and of the instance catalogue.
GPU_MODELS: tuple[GpuModel, ...] = (
    GpuModel("K80", "3.7", True, "Kepler"),
    GpuModel("M60", "5.2", True, "Maxwell"),
    GpuModel("P4", "6.1", True, "Pascal"),
    GpuModel("P40", "6.1", True, "Pascal"),
    GpuModel("P100", "6.0", True, "Pascal"),
    GpuModel("V100", "7.0", True, "Volta"),
    GpuModel("V100S", "7.0", True, "Volta"),
    GpuModel("T4", "7.5", True, "Turing"),
    GpuModel("A2", "8.6", True, "Ampere"),
    GpuModel("A10", "8.6", True, "Ampere"),
    GpuModel("A10G", "8.6", True, "Ampere"),
    GpuModel("A16", "8.6", True, "Ampere"),
    GpuModel("A30", "8.0", True, "Ampere"),
    GpuModel("A40", "8.6", True, "Ampere"),
    GpuModel("A100", "8.0", True, "Ampere"),
    GpuModel("A800", "8.0", True, "Ampere"),
    GpuModel("L2", "8.9", True, "Ada Lovelace"),
    GpuModel("L4", "8.9", True, "Ada Lovelace"),
    GpuModel("L20", "8.9", True, "Ada Lovelace"),
    GpuModel("L40", "8.9", True, "Ada Lovelace"),
    GpuModel("L40S", "8.9", True, "Ada Lovelace"),
    GpuModel("L40G", "8.9", True, "Ada Lovelace"),
    # RTX 4000 Ada and RTX 6000 Ada (DigitalOcean's gpu-4000adax1-20gb, gpu-6000adax1-48gb):
    # workstation cards; forward compatibility covers "select NGC Server Ready SKUs of RTX
    # cards", and no list of those was found, so whether it covers these is not known.
    GpuModel("RTX4000ADA", "8.9", None, "Ada Lovelace"),
    GpuModel("RTX6000ADA", "8.9", None, "Ada Lovelace"),
    GpuModel("H20", "9.0", True, "Hopper"),
    GpuModel("H100", "9.0", True, "Hopper"),
    GpuModel("H800", "9.0", True, "Hopper"),
    GpuModel("H200", "9.0", True, "Hopper"),
    GpuModel("GH200", "9.0", True, "Hopper"),
    GpuModel("B200", "10.0", True, "Blackwell"),
    GpuModel("GB200", "10.0", True, "Blackwell"),
)
GPU_MODELS_SOURCE = f"{_CUDA_GPUS}; ai-dock/llama.cpp-cuda release notes (7.5 T4 ... 12.0 RTX PRO)"


class ArchitectureFloor(NamedTuple):
    """The first CUDA release that builds code for a compute capability."""

    compute: str
    cuda: str
    architecture: str
    source: str


#: Newest first: code for a GPU of this compute capability or above needs this CUDA.
ARCHITECTURE_FLOORS: tuple[ArchitectureFloor, ...] = (
    ArchitectureFloor(
        "10.0",
        "12.8",
        "Blackwell",
        "pytorch/pytorch PR #141724 (sm_100 needs CUDA > 12.6); CUDA 12.8 release notes "
        "(Blackwell support); Salad docs: RTX 50-series needs CUDA 12.8",
    ),
    ArchitectureFloor(
        "8.9",
        "11.8",
        "Ada Lovelace and Hopper",
        "gitlab.kitware.com/cmake/cmake/-/merge_requests/8031; pytorch/vision#7052",
    ),
)


class ArchitectureCeiling(NamedTuple):
    """The first CUDA release that no longer builds code for GPUs below a compute capability."""

    cuda: str
    compute: str  # the least compute capability it builds for
    dropped: str
    source: str


ARCHITECTURE_CEILINGS: tuple[ArchitectureCeiling, ...] = (
    ArchitectureCeiling(
        "13.0",
        "7.5",
        "Maxwell, Pascal and Volta",
        "numba-cuda installation docs: supported compute capabilities 'for CUDA 13 ... range "
        "from 7.5 to 12.1'",
    ),
)


class OperatorRelease(NamedTuple):
    """The component versions a GPU Operator release deploys by default."""

    version: str
    driver: str
    toolkit: str
    device_plugin: str
    cdi_default: bool
    source: str


_OPERATOR_VALUES = "NVIDIA/gpu-operator deployments/gpu-operator/values.yaml at tag {}"
GPU_OPERATOR_RELEASES: tuple[OperatorRelease, ...] = tuple(
    OperatorRelease(version, driver, toolkit, plugin, cdi, _OPERATOR_VALUES.format(version))
    for version, driver, toolkit, plugin, cdi in (
        ("v24.3.0", "550.54.15", "v1.15.0", "v0.15.0", False),
        ("v24.6.0", "550.90.07", "v1.16.1", "v0.16.1", False),
        ("v24.9.0", "550.127.05", "v1.17.0", "v0.17.0", False),
        ("v25.3.0", "570.124.06", "v1.17.5", "v0.17.1", False),
        ("v25.10.0", "580.95.05", "v1.18.0", "v0.18.0", True),
        ("v26.3.0", "580.126.20", "v1.19.0", "v0.19.0", True),
        ("v26.7.0", "595.91.07", "v1.20.0", "v0.20.0", True),
    )
)

#: GPU Feature Discovery's driver labels (NVIDIA/k8s-device-plugin internal/lm/nvml.go): the
#: driver itself, and the highest CUDA it supports (`cuda.runtime-version`, computed from
#: cudaDriverGetVersion, not from any container).
GFD_DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
GFD_DRIVER_PARTS = (
    ("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver-version.minor",
     "nvidia.com/cuda.driver-version.revision"),
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
)  # fmt: skip
GFD_RUNTIME_FULL = "nvidia.com/cuda.runtime-version.full"
GFD_RUNTIME_PARTS = (
    ("nvidia.com/cuda.runtime-version.major", "nvidia.com/cuda.runtime-version.minor"),
    ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"),
)
GFD_COMPUTE = ("nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor")
GFD_SOURCE = "NVIDIA/k8s-device-plugin internal/lm/nvml.go @ 1b826acc6"


class SmokeImage(NamedTuple):
    """A CUDA base image a smoke test can run `nvidia-smi` in."""

    cuda: str  # the Table 3 row whose driver it needs as released
    image: str
    source: str


_BASE_TAG = "tag `{}` of nvcr.io/nvidia/cuda (gitlab.com/nvidia/container-images/cuda)"
#: Newest first; the first is the default, for pools whose driver is unknown. Only releases
#: whose tags NVIDIA still publishes under its support policy (EOL tags are deleted six months
#: after their last driver branch's end of life: gitlab.com/nvidia/container-images/cuda
#: doc/support-policy.md), one per driver branch a pool may still have.
SMOKE_IMAGES: tuple[SmokeImage, ...] = tuple(
    SmokeImage(cuda, f"nvcr.io/nvidia/cuda:{tag}", _BASE_TAG.format(tag))
    for cuda, tag in (
        ("12.4.1", "12.4.1-base-ubuntu22.04"),  # R550
        ("12.2.2", "12.2.2-base-ubuntu22.04"),  # R535
        ("11.8.0", "11.8.0-base-ubuntu22.04"),  # R520 (no R525 pool runs a newer tag)
    )
)
