"""Pods that reach NVIDIA GPUs the scheduler does not give them.

GPU025 gpu-test-without-gpu-request: a pod that runs a GPU test but requests no GPU.
GPU017 nvidia-visible-devices-set-by-hand: a container that names the GPUs it sees in
`NVIDIA_VISIBLE_DEVICES` itself, in a pod that requests none or beside the device plugin's.
GPU027 cuda-visible-devices-out-of-range: a container that picks, in `CUDA_VISIBLE_DEVICES`,
a GPU index beyond the GPUs the device plugin gives it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

from gpulint.accelerators import accelerator_annotation
from gpulint.cuda_containers import container_env, image_repository
from gpulint.fields import shown
from gpulint.gpus import accelerator_names
from gpulint.model import Container, PodTemplate
from gpulint.rules.base import CheckContext, Problem
from gpulint.yamltree import Pos, YMap, YSeq

# `nvidia-smi` run as a program: a command word, or a word of a shell line (`sh -c "nvidia-smi
# && sleep 5"`), by its path or its name. Compiled on first use: only text naming it is searched.
_NVIDIA_SMI = r"(?:^|[\s;&|(`])(?:\S*/)?nvidia-smi(?=$|[\s;&|)`])"
# Images that exist only to run a CUDA kernel on a GPU: the CUDA samples' vector addition
# (Kubernetes' `cuda-vector-add`, NVIDIA's `k8s/cuda-sample`), by the repository's last part
# or whole.
_SAMPLE_NAMES = frozenset({"cuda-vector-add"})
_SAMPLE_REPOSITORIES = frozenset({"nvcr.io/nvidia/k8s/cuda-sample"})
# Set in a container's env, it picks the node's GPUs by hand (a monitoring or validation pod
# that means to see them all): the choice is deliberate, not a lost request.
_CHOSEN_DEVICES = "NVIDIA_VISIBLE_DEVICES"
# Values of it that give the container no GPU: NVIDIA's runtime mounts none for `none`, and
# does nothing for `void` or an empty value (NVIDIA/nvidia-container-toolkit, "Specialized
# Configurations with Docker", GPU Enumeration).
_NO_DEVICES = frozenset({"", "none", "void"})
# CUDA's own choice among the GPUs the container sees, numbered from 0 inside it.
_CUDA_DEVICES = "CUDA_VISIBLE_DEVICES"
# What NVIDIA's device plugin hands out one device per unit: whole GPUs, time-sliced replicas
# (`renameByDefault` names them `.shared`), MIG instances under the mixed strategy.
_DEVICE_RESOURCES = frozenset({"nvidia.com/gpu", "nvidia.com/gpu.shared"})
_MIG_PREFIX = "nvidia.com/mig-"


def gpu_test_without_request(ctx: CheckContext) -> Iterator[Problem]:
    """A pod whose container runs `nvidia-smi` or a CUDA sample, with no accelerator request,
    claim or share annotation anywhere in the pod."""
    for workload, template in ctx.pod_templates():
        found = next(
            (
                (container, test)
                for container in template.containers
                if (test := _gpu_test(container)) is not None
            ),
            None,
        )
        # A template other objects run may get its request from them (a KServe ServingRuntime).
        if found is None or template.runs_no_pods or _asks_for_accelerators(template):
            continue
        if any(_CHOSEN_DEVICES in container_env(c) for c in template.containers):
            continue
        from gpulint.replicas import runs_on_every_node  # only for a pod that runs a GPU test

        # DaemonSets are how validators and exporters see every GPU of each node.
        if runs_on_every_node(workload):
            continue
        container, (what, pos) = found
        yield Problem.at(
            template.document,
            pos,
            f"container `{shown(container.name)}` runs {what} but the pod requests no GPU: "
            "the device plugin gives it none, so it may start on a node without GPUs, and "
            "where NVIDIA's runtime is the node's default it sees every GPU of the node, "
            "which the scheduler does not count",
            f"Add `nvidia.com/gpu: 1` to the `resources.limits` of container "
            f"`{shown(container.name)}`.",
        )


def visible_devices_set_by_hand(ctx: CheckContext) -> Iterator[Problem]:
    """A container that sets `NVIDIA_VISIBLE_DEVICES` to GPUs (`all`, indexes, UUIDs) itself:
    in a pod that asks for no accelerator, claim or share, or beside its own request for an
    NVIDIA device plugin's resource, whose choice the value replaces. Node agents (DaemonSets)
    mean to see every GPU of their node, and a privileged container sees them whatever the
    variable says."""
    # GKE's device plugin (GoogleCloudPlatform/container-engine-accelerators) passes a GPU as
    # its device nodes and sets no such variable, and GKE's nodes run no NVIDIA runtime.
    on_gke = ctx.profile is not None and ctx.profile.provider in ("gke", "gke-autopilot")
    for workload, template in ctx.pod_templates():
        if template.runs_no_pods:
            continue
        chosen = [
            (container, value, pos)
            for container in template.containers
            if (found := container_env(container).get(_CHOSEN_DEVICES)) is not None
            for value, pos in (found,)
            if value.strip().lower() not in _NO_DEVICES and not _privileged(container)
        ]
        if not chosen:
            continue
        from gpulint.replicas import runs_on_every_node  # only for a pod that names GPUs

        if runs_on_every_node(workload):
            continue
        pod_asks = _asks_for_accelerators(template)
        for container, value, pos in chosen:
            name = shown(container.name)
            setting = f"container `{name}` sets `{_CHOSEN_DEVICES}={shown(value)}`"
            plugin = sorted(
                resource
                for resource, amount in container.resources.effective_requests().items()
                if amount > 0
                and resource.startswith("nvidia.com/")
                and accelerator_names([resource])
            )
            if not pod_asks:
                unseen = (
                    "on GKE it gets none anywhere: GKE's device plugin mounts GPUs only into "
                    "containers that request them, and its nodes run no runtime that reads "
                    "the variable"
                    if on_gke
                    else "where NVIDIA's runtime is the node's default, it sees those GPUs "
                    "although the device plugin may have given them to other pods"
                )
                yield Problem.at(
                    template.document,
                    pos,
                    f"{setting} but the pod requests no GPU: the scheduler places it like a "
                    "CPU pod and counts no GPU for it, so it may start on a node without GPUs; "
                    f"{unseen}",
                    f"Add `nvidia.com/gpu: 1` to the `resources.limits` of container `{name}` "
                    f"and remove its `{_CHOSEN_DEVICES}`: the device plugin gives it the GPU "
                    "it allocates.",
                )
            elif plugin and not on_gke:
                yield Problem.at(
                    template.document,
                    pos,
                    f"{setting} beside its request for `{plugin[0]}`: where the device plugin "
                    f"hands out GPUs through `{_CHOSEN_DEVICES}` (its default `envvar` "
                    "strategy), the container's own value replaces the plugin's, so it sees "
                    "the GPUs it names, not the ones allocated to it",
                    f"Remove `{_CHOSEN_DEVICES}` from container `{name}`: the device plugin "
                    "sets it to the GPUs it allocates.",
                )


def cuda_visible_devices_out_of_range(ctx: CheckContext) -> Iterator[Problem]:
    """A container given N devices by NVIDIA's device plugin (GPUs, shared replicas, MIG
    instances) that sets `CUDA_VISIBLE_DEVICES` to an index N or higher: CUDA numbers the
    container's devices from 0 and stops at the first index it cannot find."""
    for _workload, template in ctx.pod_templates():
        if template.runs_no_pods:
            continue
        for container in template.containers:
            env = container_env(container)
            found = env.get(_CUDA_DEVICES)
            # A container naming its NVIDIA devices itself, or privileged, sees the GPUs of
            # the node, numbered as on the node.
            if found is None or _CHOSEN_DEVICES in env or _privileged(container):
                continue
            devices = _nvidia_devices(container)
            if not devices or any(amount != int(amount) for amount in devices.values()):
                continue
            count = sum(devices.values())
            value, pos = found
            indexes = [word.strip() for word in value.split(",")]
            first_out = next(
                (
                    place
                    for place, word in enumerate(indexes)
                    if word.isdigit() and int(word) >= count
                ),
                None,
            )
            if first_out is None:
                continue
            gpus = int(count)
            numbered = "GPU 0" if gpus == 1 else f"GPUs 0 to {gpus - 1}"
            asked = " and ".join(f"{int(n)} {r}" for r, n in sorted(devices.items()))
            seen = (
                "so CUDA sees no GPU at all"
                if first_out == 0
                else f"so CUDA sees only those listed before it ({','.join(indexes[:first_out])})"
            )
            name = shown(container.name)
            yield Problem.at(
                template.document,
                pos,
                f"container `{name}` sets `{_CUDA_DEVICES}={shown(value)}` but requests "
                f"{asked}: the device plugin gives it only its own, numbered "
                f"{numbered} inside it, and index {indexes[first_out]} is none of them, "
                f"{seen}",
                f"Remove `{_CUDA_DEVICES}` from container `{name}`: the device plugin already "
                "gives it only its own GPUs.",
            )


def _nvidia_devices(container: Container) -> dict[str, Decimal]:
    """The container's requests of NVIDIA's device plugin for devices it sees one by one:
    whole GPUs, time-sliced replicas under their shared name, MIG instances."""
    return {
        resource: amount
        for resource, amount in container.resources.effective_requests().items()
        if amount > 0 and (resource in _DEVICE_RESOURCES or resource.startswith(_MIG_PREFIX))
    }


def _privileged(container: Container) -> bool:
    """Whether the container runs privileged: it sees every device of the node, whatever
    `NVIDIA_VISIBLE_DEVICES` says."""
    context = container.node.get("securityContext")
    return isinstance(context, YMap) and context.get("privileged") is True


def _asks_for_accelerators(template: PodTemplate) -> bool:
    """Whether the pod asks for any accelerator: a resource (even zero, or a name nodes do not
    count), a DRA claim, or an annotation asking a scheduler for a share."""
    if accelerator_names(template.effective_requests):
        return True
    from gpulint.dra import container_claim_names, has_claims  # only for a pod running a test

    if has_claims(template.spec) or any(container_claim_names(c.node) for c in template.containers):
        return True
    return any(accelerator_annotation(key) is not None for key in template.annotations)


def _gpu_test(container: Container) -> tuple[str, Pos] | None:
    """What GPU test the container runs, in words, and where it is written; None for none."""
    node = container.node
    for key in ("command", "args"):
        words = node.get(key)
        if type(words) is not YSeq:
            continue
        for index, word in enumerate(words):
            if type(word) is str and "nvidia-smi" in word and re.search(_NVIDIA_SMI, word):
                return "`nvidia-smi`", words.pos_of_item(index)
    image = node.get("image")
    if type(image) is str:
        repository = image_repository(image)
        if repository in _SAMPLE_REPOSITORIES or repository.rpartition("/")[2] in _SAMPLE_NAMES:
            return f"the CUDA sample `{shown(image)}`", node.pos_of_value("image")
    return None
