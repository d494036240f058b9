"""After scheduling: the CUDA a container needs, the NVIDIA driver and GPU a pool has, and
whether the two go together.

A pod that passes every scheduler filter can still never do work: it binds, starts, and dies
at its first CUDA call (`CUDA driver version is insufficient for CUDA runtime version`, `no
kernel image is available for execution on the device`). The rules of GPU80x and `gpulint
diagnose` read this module; the facts it judges by are data, in gpulint.data.cuda.

Nothing here is a guess: a container whose CUDA is unknown, or a pool whose driver is unknown,
gets no verdict.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from gpulint.data.cuda import (
    DRIVER_FLOORS,
    FAMILY_FLOORS,
    GFD_COMPUTE,
    GFD_DRIVER_FULL,
    GFD_DRIVER_PARTS,
    GFD_RUNTIME_FULL,
    GFD_RUNTIME_PARTS,
    GPU_MODELS,
    IMAGES,
    NVIDIA_CUDA_COMPAT,
    DriverFloor,
    FamilyFloor,
    GpuModel,
    ImageCuda,
)
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.model import Container, Document
    from gpulint.profile.model import ClusterProfile, OperatorDriver, Pool
    from gpulint.yamltree import Pos

#: A dotted version as numbers: `570.124.06` -> (570, 124, 6).
Version = tuple[int, ...]

_VERSION = r"(\d+)(?:\.(\d+))?(?:\.(\d+))?"
_TRUE = frozenset({"1", "true", "yes", "on", "t", "y"})
#: The GPU Operator's kinds that say which driver it installs (gpulint.profile.gpu_operator).
_OPERATOR_KINDS = frozenset({"ClusterPolicy", "NVIDIADriver"})
#: The resource names whose pods the NVIDIA driver serves.
_NVIDIA_PREFIX = "nvidia.com/"


def parse_version(text: object) -> Version | None:
    """The leading `X[.Y[.Z]]` of `text` as numbers, or None when it does not start with one."""
    if not isinstance(text, str | int | float) or isinstance(text, bool):
        return None
    match = re.match(_VERSION, str(text).strip().lstrip("vV"))
    if match is None:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def at_least(have: Version, need: Version) -> bool:
    """Whether version `have` is `need` or newer (missing parts count as 0)."""
    width = max(len(have), len(need))
    return have + (0,) * (width - len(have)) >= need + (0,) * (width - len(need))


class CudaNeed(NamedTuple):
    """What one container's CUDA needs of the node it runs on."""

    image: str
    cuda: str  # as written: `13.0.0`, `12.8`
    version: Version
    origin: str  # where gpulint learnt it, for messages
    pos: Pos  # where the CUDA version is stated: the env value, else the image
    # The driver branches its cuda-compat package runs on (least version of each); None when
    # not stated, so forward compatibility may apply on a data center GPU.
    compat: tuple[str, ...] | None
    min_compute: Version | None  # the least compute capability its GPU code is built for
    kernels: bool  # a framework built for a list of architectures, not a bare CUDA runtime
    disable_require: Pos | None = None  # where NVIDIA_DISABLE_REQUIRE turns the check off


def uses_nvidia_gpus(container: Container) -> bool:
    """Whether the container asks for an NVIDIA GPU resource (a whole GPU, MIG slice, share)."""
    for quantities in (container.resources.limits, container.resources.requests):
        for name, quantity in quantities.items():
            if name.startswith(_NVIDIA_PREFIX) and (quantity.amount is None or quantity.amount > 0):
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


def container_cuda(container: Container) -> CudaNeed | None:
    """The CUDA the container needs: from its `NVIDIA_REQUIRE_CUDA` or `CUDA_VERSION` env (the
    values the NVIDIA runtime checks, which a manifest can set), else from the image table;
    None when unknown."""
    image = container.node.get("image")
    image = image if isinstance(image, str) else ""
    env = container_env(container)
    disable = env.get("NVIDIA_DISABLE_REQUIRE")
    disabled_at = disable[1] if disable and disable[0].strip().lower() in _TRUE else None
    row = image_row(image) if image else None
    # What the env cannot change: the GPU code the image is built with.
    min_compute = row[1].min_cc_version if row else None
    kernels = bool(row and row[1].row.kernels)
    stated = _stated_cuda(env)
    if stated is not None:
        cuda, version, origin, pos, compat = stated
        return CudaNeed(
            image, cuda, version, origin, pos, compat, min_compute, kernels, disabled_at
        )
    if row is None or (version := parse_version(row[0])) is None:
        return None
    cuda, known = row
    return CudaNeed(
        image,
        cuda,
        version,
        f"its tag: {known.row.family}",
        container.node.pos_of_value("image"),
        known.compat,
        min_compute,
        kernels,
        disabled_at,
    )


def _stated_cuda(
    env: Mapping[str, tuple[str, Pos]],
) -> tuple[str, Version, str, Pos, tuple[str, ...] | None] | None:
    """The CUDA the env states: `NVIDIA_REQUIRE_CUDA` first, then (legacy) `CUDA_VERSION`."""
    if "NVIDIA_REQUIRE_CUDA" in env:
        text, pos = env["NVIDIA_REQUIRE_CUDA"]
        required = parse_requirement(text)
        if required is not None and (version := parse_version(required[0])) is not None:
            return required[0], version, "NVIDIA_REQUIRE_CUDA in its env", pos, required[1]
    if "CUDA_VERSION" in env:
        text, pos = env["CUDA_VERSION"]
        version = parse_version(text)
        if version is not None:
            return text.strip(), version, "CUDA_VERSION in its env", pos, None
    return None


def parse_requirement(text: str) -> tuple[str, tuple[str, ...]] | None:
    """`cuda>=12.8 brand=tesla,driver>=535,driver<536 ...` -> ("12.8", ("535", ...)): the CUDA
    version asked for and the Tesla driver branches accepted instead (space: or; comma: and)."""
    cuda = None
    branches: list[str] = []
    for term in text.split():
        conditions = term.split(",")
        if len(conditions) == 1 and conditions[0].startswith("cuda>="):
            cuda = conditions[0][len("cuda>=") :]
        elif "brand=tesla" in conditions:
            lows = [c[len("driver>=") :] for c in conditions if c.startswith("driver>=")]
            branches += lows[:1]
    if cuda is None or parse_version(cuda) is None:
        return None
    return cuda, tuple(dict.fromkeys(branches))


class KnownImage(NamedTuple):
    """An image's table row, with what its tag says."""

    row: ImageCuda
    compat: tuple[str, ...] | None

    @property
    def min_cc_version(self) -> Version | None:
        """The least compute capability, as a version."""
        return parse_version(self.row.min_cc) if self.row.min_cc else None


def image_row(image: str) -> tuple[str, KnownImage] | None:
    """The CUDA version of `image` and its table row, or None when the table does not know it."""
    # As gpulint.images splits it, without its dataclass (a run defines none as it starts).
    rest = image.strip().partition("@")[0]
    head, slash, last_part = rest.rpartition("/")
    name, colon, tag = last_part.partition(":")
    if not colon or not tag:
        return None
    repository = _normalised(f"{head}{slash}{name}")
    last = repository.rsplit("/", 1)[-1]
    for row in IMAGES:
        if repository not in row.repositories and not (
            last in row.repositories
            and "/" not in last
            and all("/" not in r for r in row.repositories)
        ):
            continue
        match = re.fullmatch(row.tag, tag)
        if match is None:
            continue
        groups = match.groupdict()
        if groups.get("cuda"):
            cuda = groups["cuda"]
        elif groups.get("cu"):
            digits = groups["cu"]
            cuda = f"{digits[:-1]}.{digits[-1]}"
        else:
            cuda = row.cuda or ""
        compat = row.compat
        if compat is None and row.repositories[0] == "nvidia/cuda":
            compat = NVIDIA_CUDA_COMPAT.get(".".join(cuda.split(".")[:2]))
        return cuda, KnownImage(row, compat)
    return None


def _normalised(repository: str) -> str:
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if repository.startswith(prefix):
            repository = repository[len(prefix) :]
            break
    return repository.removeprefix("library/")


# ---------------------------------------------------------------------------------------------
# The driver floors


def driver_floor(cuda: Version) -> DriverFloor | None:
    """The least driver CUDA `cuda` needs (Table 3), or None for a version before the table."""
    for row in DRIVER_FLOORS:
        row_version = parse_version(row.cuda)
        if row_version is not None and at_least(cuda, row_version):
            # An older minor of the same release line needs no less than its own GA row.
            return row
    return None


def family_floor(cuda: Version) -> FamilyFloor | None:
    """The least driver of the major family of `cuda` (CUDA 11 and later), else None."""
    return next((f for f in FAMILY_FLOORS if f.major == cuda[0]), None)


def highest_cuda(driver: Version) -> str | None:
    """The newest CUDA release whose Table 3 floor `driver` meets, as written there."""
    for row in DRIVER_FLOORS:
        floor = parse_version(row.driver)
        if floor is not None and at_least(driver, floor):
            return row.cuda
    return None


# ---------------------------------------------------------------------------------------------
# What a pool has


class PoolDriver(NamedTuple):
    """The NVIDIA driver of a pool's nodes."""

    text: str  # `570.124.06`, or `R535` / `CUDA 12.2` when only that is known
    version: Version  # the driver, or the least driver consistent with what is known
    ceiling: Version | None  # the highest CUDA it runs, when that is what is known
    origin: str

    @property
    def branch(self) -> int:
        """The driver's major branch: 570 for 570.124.06."""
        return self.version[0]


def pool_driver(
    pool: Pool,
    profile: ClusterProfile | None = None,
    manifests: Sequence[OperatorDriver] = (),
) -> PoolDriver | None:
    """The driver of the pool's nodes: declared for the pool, from GPU Feature Discovery's
    labels, or the one the cluster's GPU Operator installs (`manifests`: its objects among the
    checked manifests, before those of the profile); None when unknown."""
    declared = pool.driver_version
    if declared:
        version = parse_version(declared)
        if version is not None:
            return PoolDriver(declared, version, None, "driverVersion of the pool in the profile")
    labels = pool.labels
    full = labels.get(GFD_DRIVER_FULL)
    if full and (version := parse_version(full)) is not None:
        return PoolDriver(full, version, None, f"node label {GFD_DRIVER_FULL}")
    for keys in GFD_DRIVER_PARTS:
        if keys[0] in labels and keys[1] in labels:
            text = ".".join(labels[k] for k in keys if k in labels)
            version = parse_version(text)
            if version is not None:
                return PoolDriver(text, version, None, f"node labels {keys[0].rsplit('.', 1)[0]}.*")
    ceiling = _runtime_label(labels)
    if ceiling is not None:
        text, origin = ceiling
        cuda = parse_version(text)
        floor = driver_floor(cuda) if cuda else None
        if cuda is not None and floor is not None:
            least = parse_version(floor.driver) or (0,)
            return PoolDriver(f"a driver for CUDA {text}", least, cuda[:2], origin)
    if (profile is not None or manifests) and _nvidia_pool(pool):
        # An NVIDIADriver's nodeSelector picks its nodes: the most specific that applies wins;
        # at equal specificity the checked manifests (what is being deployed) come first.
        known = (*manifests, *(profile.gpu_operator_drivers if profile is not None else ()))
        operators = [d for d in known if d.applies_to(pool.labels)]
        for operator in sorted(operators, key=lambda d: -len(d.node_selector)):
            version = parse_version(operator.version)
            if version is not None:
                return PoolDriver(operator.version, version, None, operator.origin)
    return None


def manifest_operator_drivers(documents: Iterable[Document]) -> tuple[OperatorDriver, ...]:
    """The drivers the GPU Operator's ClusterPolicy and NVIDIADriver objects among `documents`
    install (a rendered gpu-operator chart holds its values' `driver.version` so)."""
    objects = [
        d.obj
        for d in documents
        if d.ref.kind in _OPERATOR_KINDS
        and str(d.obj.get("apiVersion", "")).startswith("nvidia.com/")
    ]
    if not objects:
        return ()
    from gpulint.profile.gpu_operator import operator_driver

    # Named, not located: a knowledge object's path is as the run was given it.
    found = (operator_driver(obj, "the checked manifests") for obj in objects)
    return tuple(driver for driver in found if driver is not None)


def _runtime_label(labels: Mapping[str, str]) -> tuple[str, str] | None:
    full = labels.get(GFD_RUNTIME_FULL)
    if full:
        return full, f"node label {GFD_RUNTIME_FULL} (the newest CUDA the driver runs)"
    for major, minor in GFD_RUNTIME_PARTS:
        if major in labels and minor in labels:
            return f"{labels[major]}.{labels[minor]}", f"node labels {major.rsplit('.', 1)[0]}.*"
    return None


def _nvidia_pool(pool: Pool) -> bool:
    return any(name.startswith(_NVIDIA_PREFIX) for name in pool.allocatable) or any(
        key.startswith("nvidia.com/gpu.") for key in pool.labels
    )


class PoolGpu(NamedTuple):
    """The GPU of a pool's nodes."""

    name: str
    compute: Version
    datacenter: bool | None  # None: not known


_MODELS = {m.model: m for m in GPU_MODELS}
_LABELS = ("nvidia.com/gpu.product", "cloud.google.com/gke-accelerator",
           "karpenter.k8s.aws/instance-gpu-name",
           "eks.amazonaws.com/instance-gpu-name")  # fmt: skip


def pool_gpu(pool: Pool) -> PoolGpu | None:
    """The GPU model of the pool's nodes (product labels, instance type) and its compute
    capability (GFD's `nvidia.com/gpu.compute.*` when the model is not one gpulint knows)."""
    for label in _LABELS:
        model = gpu_model(pool.labels.get(label))
        if model is not None:
            return PoolGpu(model.model, parse_version(model.compute) or (0,), model.datacenter)
    if pool.instance_type:
        from gpulint.profile.instances import instance_type

        entry = instance_type(pool.instance_type)
        model = gpu_model(entry.model) if entry else None
        if model is not None:
            return PoolGpu(model.model, parse_version(model.compute) or (0,), model.datacenter)
    major, minor = (pool.labels.get(key) for key in GFD_COMPUTE)
    if major and minor and (compute := parse_version(f"{major}.{minor}")) is not None:
        product = pool.labels.get("nvidia.com/gpu.product") or "GPU"
        return PoolGpu(product, compute, None)
    return None


def gpu_model(value: str | None) -> GpuModel | None:
    """The model family a GPU product label, GKE accelerator type or catalogue model names:
    `NVIDIA-A100-SXM4-80GB`, `nvidia-tesla-v100`, `a10g` ..."""
    if not value:
        return None
    words = [w for w in re.split(r"[-_ ]+", value) if w]
    while words and words[0].lower() in ("nvidia", "tesla"):
        words = words[1:]
    return _MODELS.get(words[0].upper()) if words else None


# ---------------------------------------------------------------------------------------------
# The verdicts


class DriverVerdict(NamedTuple):
    """Why a pool's driver cannot (error) or may not (warning) run a container's CUDA."""

    certain: bool  # True: the container fails on this pool; False: it depends (a warning)
    floor: DriverFloor  # what Table 3 asks
    reason: str  # completes "pool P has driver D: ..."


def judge_driver(need: CudaNeed, driver: PoolDriver, gpu: PoolGpu | None) -> DriverVerdict | None:
    """The verdict of Table 3, minor-version and forward compatibility; None when it runs."""
    floor = driver_floor(need.version)
    if floor is None:
        return None
    if runs_as_released(need.version, driver):
        return None
    family = family_floor(need.version)
    if family is not None and _meets_family(driver, need, family):
        return DriverVerdict(
            False,
            floor,
            f"below the {floor.driver} CUDA {need.cuda} was released with, but at least CUDA "
            f"{need.version[0]}'s family floor {family.driver}: minor-version compatibility runs "
            "it unless it calls an API newer than the driver or JIT-compiles PTX (the image then "
            "fails with cudaErrorCallRequiresNewerDriver or 'no kernel image is available')",
        )
    below = (
        f"below CUDA {need.version[0]}'s family floor {family.driver}"
        if family is not None
        else f"below the {floor.driver} CUDA {need.cuda} needs (before CUDA 11 there is no "
        "minor-version compatibility)"
    )
    forward = _forward_compatibility(need, driver, gpu)
    if forward is None:
        return DriverVerdict(True, floor, f"{below}, and {_why_no_forward(need, driver, gpu)}")
    return DriverVerdict(
        False, floor, f"{below}; it runs only through forward compatibility: {forward}"
    )


def runs_as_released(cuda: Version, driver: PoolDriver) -> bool:
    """Whether `driver` meets the Table 3 floor of CUDA `cuda` (no compatibility needed); True
    for a CUDA older than the table."""
    floor = driver_floor(cuda)
    if floor is None:
        return True
    if driver.ceiling is not None:
        return at_least(driver.ceiling, cuda[:2])
    return at_least(driver.version, parse_version(floor.driver) or (0,))


def _meets_family(driver: PoolDriver, need: CudaNeed, family: FamilyFloor) -> bool:
    if driver.ceiling is not None:
        return driver.ceiling[0] >= need.version[0]
    return at_least(driver.version, parse_version(family.driver) or (0,))


def _forward_compatibility(need: CudaNeed, driver: PoolDriver, gpu: PoolGpu | None) -> str | None:
    """How forward compatibility could still run the image (None: it cannot)."""
    if gpu is not None and gpu.datacenter is False:
        return None
    if need.compat is None:
        return (
            "whether the image's cuda-compat package covers R"
            f"{driver.branch} is not stated, and it works on data center GPUs only"
        )
    for base in need.compat:
        least = parse_version(base)
        if least is not None and least[0] == driver.branch and at_least(driver.version, least):
            where = "" if gpu and gpu.datacenter else " on a data center GPU"
            return (
                f"its cuda-compat package covers R{driver.branch}{where}, if the image's compat "
                "libraries are loaded (the NVIDIA runtime's enable-cuda-compat hook or "
                "ldconfig in the image; CDI specs without that hook leave them out)"
            )
    return None


def _why_no_forward(need: CudaNeed, driver: PoolDriver, gpu: PoolGpu | None) -> str:
    if gpu is not None and gpu.datacenter is False:
        return f"forward compatibility needs a data center GPU ({gpu.name} is not one)"
    listed = ", ".join(f"R{b.split('.')[0]}" for b in need.compat or ())
    if need.origin.startswith("NVIDIA_REQUIRE_CUDA"):
        accepts = f"accepts Tesla drivers of {listed}" if listed else "accepts no older branch"
        return f"forward compatibility cannot help: its NVIDIA_REQUIRE_CUDA {accepts}"
    covers = f"covers {listed}" if listed else "covers no older branch"
    return (
        f"forward compatibility cannot help: the image's cuda-compat {covers}, not R{driver.branch}"
    )


class ArchVerdict(NamedTuple):
    """Why an image has no GPU code for a pool's GPU."""

    certain: bool
    reason: str
    needs: str  # what image would run: `an image built for CUDA 12.8 or later`


def judge_architecture(need: CudaNeed, gpu: PoolGpu) -> ArchVerdict | None:
    """Whether the image's GPU code covers the pool's compute capability; None when it does,
    or when that is not known."""
    shown = ".".join(map(str, gpu.compute))
    if need.min_compute is not None and not at_least(gpu.compute, need.min_compute):
        floor = ".".join(map(str, need.min_compute))
        return ArchVerdict(
            True,
            f"it is built for compute capability {floor} and later, and {gpu.name} is {shown}",
            f"an image built for compute capability {shown}",
        )
    from gpulint.data.cuda import ARCHITECTURE_CEILINGS, ARCHITECTURE_FLOORS

    for ceiling in ARCHITECTURE_CEILINGS:
        least = parse_version(ceiling.compute) or (0,)
        if at_least(need.version, parse_version(ceiling.cuda) or (0,)) and not at_least(
            gpu.compute, least
        ):
            return ArchVerdict(
                need.kernels,
                f"CUDA {ceiling.cuda} and later build no code for {ceiling.dropped} GPUs "
                f"(compute capability below {ceiling.compute}), and {gpu.name} is {shown}"
                + ("" if need.kernels else " (a bare CUDA runtime: what is built on it decides)"),
                f"an image built with a CUDA older than {ceiling.cuda}",
            )
    for floor in ARCHITECTURE_FLOORS:
        compute = parse_version(floor.compute) or (0,)
        cuda = parse_version(floor.cuda) or (0,)
        if at_least(gpu.compute, compute) and not at_least(need.version, cuda):
            return ArchVerdict(
                need.kernels,
                f"{floor.architecture} GPUs ({gpu.name}, compute capability {shown}) need code "
                f"built with CUDA {floor.cuda} or later, and the image has CUDA {need.cuda}"
                + ("" if need.kernels else " (a bare CUDA runtime: what is built on it decides)"),
                f"an image built with CUDA {floor.cuda} or later",
            )
    return None
