"""`gpulint smoke`: one Job per GPU pool that proves a pod lands there and sees its device.

Each Job requests exactly one unit of the pool's accelerator, selects the pool by its pool
label, tolerates its taints and runs the vendor's device check (DEVICE_CHECKS). Its
deadline is the pool's provisioning time plus the run time, since a Job's deadline counts the
time its pod waits Pending; finished Jobs delete themselves, and all carry a label to clean up
by (`kubectl delete jobs -A -l gpulint.io/smoke-test`).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.accelerators import KNOWN_RESOURCES
from gpulint.errors import GpulintError
from gpulint.profile.model import POOL_LABELS, ClusterProfile, Pool, Taint
from gpulint.scheduling import pool_gpus

SMOKE_LABEL = "gpulint.io/smoke-test"
POOL_LABEL = "gpulint.io/pool"
#: Pulling the check image and running it.
RUN_SECONDS = 300
#: cluster-autoscaler's --max-node-provision-time default, for pools that do not say.
DEFAULT_PROVISIONING_SECONDS = 900
TTL_SECONDS = 3600
CPU, MEMORY = "250m", "256Mi"
# A smoke Job for a pool at zero nodes waits for a scale-up on purpose: that is what it tests.
_COLD_POOL_RULE = "GPU103"
_NEVER = "a smoke test would wait forever"
_DNS_LABEL = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class DeviceCheck:
    """How a smoke test proves a container sees its accelerator: an image and a command."""

    vendor: str
    image: str  # pinned: a smoke test must not change under a moving tag
    command: tuple[str, ...]


#: Resource-name prefix -> the vendor's device check, as each vendor's device plugin documents
#: its test pod. `gpulint smoke --image/--command` replaces them.
DEVICE_CHECKS: tuple[tuple[str, DeviceCheck], ...] = (
    (
        "nvidia.com/",
        # The default of gpulint.data.cuda.SMOKE_IMAGES; a pool whose driver is older gets an
        # older CUDA (nvidia_image).
        DeviceCheck("NVIDIA", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", ("nvidia-smi",)),
    ),
    ("amd.com/", DeviceCheck("AMD", "docker.io/rocm/rocm-terminal:6.2.1", ("rocm-smi",))),
    (
        "gpu.intel.com/",
        DeviceCheck("Intel", "docker.io/library/busybox:1.36", ("ls", "-l", "/dev/dri")),
    ),
    (
        "habana.ai/",
        DeviceCheck(
            "Intel Gaudi",
            "vault.habana.ai/gaudi-docker/1.18.0/ubuntu22.04/habanalabs/pytorch-installer-2.4.0"
            ":latest",
            ("hl-smi",),
        ),
    ),
    (
        "aws.amazon.com/neuron",
        DeviceCheck(
            "AWS Neuron",
            "public.ecr.aws/neuron/pytorch-inference-neuronx:2.1.2-neuronx-py310-sdk2.20.0-ubuntu20.04",
            ("neuron-ls",),
        ),
    ),
    (
        "google.com/tpu",
        DeviceCheck(
            "Google TPU", "docker.io/library/busybox:1.36", ("sh", "-c", "ls -l /dev/accel*")
        ),
    ),
)


def device_check(resource: str) -> DeviceCheck | None:
    """The vendor's device check for an accelerator resource name, or None when unknown."""
    return next((check for prefix, check in DEVICE_CHECKS if resource.startswith(prefix)), None)


@dataclass(frozen=True)
class SmokeOptions:
    """What the user chose: namespace, and an image/command instead of the vendor's check."""

    namespace: str | None = None
    image: str | None = None
    command: tuple[str, ...] = ()
    run_seconds: int = RUN_SECONDS


@dataclass(frozen=True)
class SmokeJobs:
    """The Jobs written, and the GPU pools left out with why."""

    jobs: tuple[dict[str, Any], ...]
    skipped: tuple[str, ...]


def smoke_jobs(
    profile: ClusterProfile, pool_name: str | None = None, options: SmokeOptions | None = None
) -> SmokeJobs:
    """A smoke-test Job for every GPU pool (or the one named); raises GpulintError when the
    named pool is missing or cannot run one, or no pool has GPUs."""
    options = options or SmokeOptions()
    pools = [p for p in profile.pools if pool_gpus(p)]
    if pool_name is not None:
        chosen = [p for p in profile.pools if p.name == pool_name]
        if not chosen:
            known = ", ".join(p.name for p in pools) or "none"
            raise GpulintError(f"no pool `{pool_name}` in the profile (GPU pools: {known})")
        if not pool_gpus(chosen[0]):
            raise GpulintError(f"pool `{pool_name}` advertises no accelerator: nothing to test")
        if not chosen[0].can_grow:
            raise GpulintError(f"pool `{pool_name}` has no node and cannot scale up: {_NEVER}")
        pools = chosen
    if not pools:
        raise GpulintError("no pool of the profile advertises an accelerator: nothing to test")
    jobs, skipped = [], []
    for pool in pools:
        if not pool.can_grow:
            skipped.append(f"pool {pool.name}: no node and cannot scale up, {_NEVER}")
            continue
        jobs.append(smoke_job(pool, profile, options))
    return SmokeJobs(tuple(jobs), tuple(skipped))


def smoke_job(pool: Pool, profile: ClusterProfile, options: SmokeOptions) -> dict[str, Any]:
    """The smoke-test Job of one GPU pool."""
    resource = accelerator_of(pool)
    image, command = _check(resource, pool, profile, options)
    namespace = options.namespace or profile.default_namespace or "default"
    provisioning = pool.provisioning_seconds
    if provisioning is None:
        provisioning = DEFAULT_PROVISIONING_SECONDS
    labels = {SMOKE_LABEL: "true", POOL_LABEL: _label_value(pool.name)}
    metadata: dict[str, Any] = {
        "name": f"gpulint-smoke-{_dns_name(pool.name)}",
        "namespace": namespace,
        "labels": labels,
    }
    if pool.nodes == 0 and not pool.made_per_pod:
        # A pool made per pod (Karpenter, a compute class's node auto-creation) draws no GPU103.
        metadata["annotations"] = {"gpulint.io/ignore": _COLD_POOL_RULE}
    container = {
        "name": "smoke",
        "image": image,
        "command": list(command),
        "resources": {
            "requests": {"cpu": CPU, "memory": MEMORY, resource: 1},
            "limits": {"cpu": CPU, "memory": MEMORY, resource: 1},
        },
    }
    spec: dict[str, Any] = {"restartPolicy": "Never", "nodeSelector": _selector(pool)}
    tolerations = [_toleration(t) for t in pool.taints if t.effect != "PreferNoSchedule"]
    if tolerations:
        spec["tolerations"] = tolerations
    spec["containers"] = [container]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": 0,
            # GPU202 counts the pool's p95 image pull too, when the profile gives it.
            "activeDeadlineSeconds": provisioning
            + (pool.image_pull_seconds or 0)
            + options.run_seconds,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "template": {"metadata": {"labels": dict(labels)}, "spec": spec},
        },
    }


def accelerator_of(pool: Pool) -> str:
    """The accelerator the pool advertises: a vendor's plain name before MIG or other names."""
    names = pool_gpus(pool)
    known = [name for name in KNOWN_RESOURCES if name in names]
    return known[0] if known else sorted(names)[0]


def _check(
    resource: str, pool: Pool, profile: ClusterProfile, options: SmokeOptions
) -> tuple[str, tuple[str, ...]]:
    vendor: DeviceCheck | None = device_check(resource)
    image = options.image or (vendor.image if vendor else None)
    if not options.image and vendor is not None and vendor.vendor == "NVIDIA":
        image = nvidia_image(pool, profile)
    command = options.command or (vendor.command if vendor else ())
    if image is None or not command:
        raise GpulintError(
            f"pool {pool.name} advertises {resource}, for which gpulint knows no device check: "
            "pass --image and --command"
        )
    return image, command


def nvidia_image(pool: Pool, profile: ClusterProfile) -> str:
    """The CUDA base image for an NVIDIA pool's smoke test: the default unless the pool's known
    driver is older than it needs, then the newest of SMOKE_IMAGES that driver runs as released
    (so that GPU801 has nothing to say of the Job), else the oldest."""
    from gpulint.cuda import parse_version, pool_driver, runs_as_released
    from gpulint.data.cuda import SMOKE_IMAGES

    driver = pool_driver(pool, profile)
    if driver is None:
        return SMOKE_IMAGES[0].image
    for candidate in SMOKE_IMAGES:
        cuda = parse_version(candidate.cuda)
        if cuda is not None and runs_as_released(cuda, driver):
            return candidate.image
    return SMOKE_IMAGES[-1].image


def _selector(pool: Pool) -> dict[str, str]:
    """The pool's naming label when it has one, else every label the pool's nodes share; of
    a pool at zero nodes, only labels the autoscaler's template has, or the Job would never
    make it add a node."""
    missing = pool.template_missing_labels if pool.nodes == 0 else ()
    labels = {k: v for k, v in pool.labels.items() if k not in missing}
    for label in POOL_LABELS:
        if label in labels:
            return {label: labels[label]}
    if not labels:
        raise GpulintError(f"pool {pool.name} has no labels to select its nodes by")
    return labels


def _toleration(taint: Taint) -> dict[str, str]:
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def _dns_name(name: str) -> str:
    return _DNS_LABEL.sub("-", name.lower()).strip("-")[:48] or "pool"


def _label_value(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:63].strip("-_.") or "pool"


# Plain scalars that Kubernetes' YAML 1.1 decoder reads as booleans or null, though the YAML 1.2
# writer leaves them unquoted: a label value `on` (HAMi's `gpu: on`) must stay a string.
_YAML11_WORDS = frozenset({"y", "yes", "n", "no", "on", "off", "true", "false", "null", "~", ""})


def _quoted(value: Any) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if isinstance(value, dict):
        return {key: _quoted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_quoted(item) for item in value]
    if isinstance(value, str) and value.lower() in _YAML11_WORDS:
        return DoubleQuotedScalarString(value)
    return value


def dump_jobs(jobs: Sequence[dict[str, Any]]) -> str:
    """The Jobs as one multi-document YAML text."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.default_flow_style = False
    yaml.explicit_start = True
    stream = io.StringIO()
    yaml.dump_all([_quoted(job) for job in jobs], stream)
    return stream.getvalue()
