"""GPU025 gpu-test-without-gpu-request: a pod that runs a GPU test but requests no GPU."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.accelerators import accelerator_annotation
from gpulint.cuda_containers import container_env, image_repository
from gpulint.fields import shown
from gpulint.gpus import accelerator_names
from gpulint.model import Container, PodTemplate
from gpulint.rules.base import CheckContext, Problem
from gpulint.yamltree import Pos, YSeq

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
