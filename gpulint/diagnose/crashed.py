"""GPU pods that were scheduled, started, and failed at their first CUDA call.

Such a pod is not Pending: it binds, its container starts and exits (CrashLoopBackOff), or the
legacy NVIDIA runtime refuses to create it. What it says is in its container statuses and its
events: `CUDA driver version is insufficient for CUDA runtime version`, `no kernel image is
available for execution on the device`, errors 803 and 804 of the forward-compatibility
libraries, `unsatisfied condition: cuda>=X.Y`. With the node's labels in the dump (GPU Feature
Discovery's driver version) the diagnosis puts the node's driver beside the image's CUDA.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from gpulint.diagnose.events import Event
from gpulint.model import Document
from gpulint.profile.values import mapping, sequence, text
from gpulint.views import NamedTuple

CAUSE = "cuda-driver-mismatch"
#: What a container, its runtime or its events say when the driver and the image disagree.
SIGNATURES = (
    r"CUDA driver version is insufficient for CUDA runtime version",
    r"cudaErrorInsufficientDriver",
    r"no kernel image is available for execution on the device",
    r"forward compatibility was attempted on non supported HW",  # error 804
    r"system has unsupported display driver / cuda driver combination",  # error 803
    r"unsatisfied condition: cuda>=\s*[0-9.]+",  # the legacy runtime's NVIDIA_REQUIRE_CUDA check
    r"The NVIDIA driver on your system is too old",  # PyTorch
)
_SIGNATURE = "|".join(f"(?:{s})" for s in SIGNATURES)
_RUNTIME_REASONS = frozenset({"Failed", "BackOff"})


class CrashedPod(NamedTuple):
    """A scheduled GPU pod whose container failed this way, and what shows it."""

    namespace: str
    name: str
    owner: str | None
    explanation: str
    evidence: tuple[tuple[str, str, str | None], ...]  # (source, message, reason)
    facts: Mapping[str, str]


def crashed_gpu_pods(
    pods: Sequence[Document],
    events_about: Callable[[str, str, str, str], Sequence[Event]],
    node_objects: Sequence[Mapping[str, Any]],
    pool_label: str | None = None,
) -> Iterator[CrashedPod]:
    """Every bound NVIDIA GPU pod of `pods` whose container status or events carry a CUDA
    signature, or that crash-loops on a node whose driver cannot run its image's CUDA.

    `events_about(kind, namespace, name, uid)` gives an object's events; `node_objects` are
    the dump's Nodes."""
    from gpulint.pods import pod_owner
    from gpulint.workloads import pod_template

    nodes: dict[str, tuple[str, Mapping[str, str]]] | None = None
    for document in pods:
        obj = document.obj
        if document.ref.kind != "Pod" or not document.ref.name:
            continue
        node_name = text(mapping(obj.get("spec")).get("nodeName"))
        statuses = sequence(mapping(obj.get("status")).get("containerStatuses"))
        if not node_name or not statuses:
            continue
        template = pod_template(document, obj)
        if template is None:
            continue
        from gpulint.cuda_containers import uses_nvidia_gpus

        gpu_containers = {c.name: c for c in template.containers if uses_nvidia_gpus(c)}
        if not gpu_containers:
            continue
        namespace, name = document.ref.namespace or "default", document.ref.name
        uid = text(mapping(obj.get("metadata")).get("uid"))
        mine = [
            e for e in events_about("Pod", namespace, name, uid) if e.reason in _RUNTIME_REASONS
        ]
        found = _signs(statuses, gpu_containers, mine)
        if found is None:
            continue
        if nodes is None:
            nodes = _nodes(node_objects, pool_label)
        container_name, evidence, said = found
        container = gpu_containers[container_name]
        pool, labels = nodes.get(node_name, (None, {}))
        side, fix, certain = _side_by_side(container, node_name, pool, labels, said)
        short = "; ".join(side.split("; ")[:2]) if "needs CUDA" in side else ""
        if said is None and not certain:
            continue  # a crash loop that nothing ties to CUDA
        _, kind, owner_name = pod_owner(obj)
        what = f"failed with '{said}'" if said else "crash-loops (CrashLoopBackOff)"
        # The image's CUDA beside the node's driver, for JSON readers too.
        evidence += (("profile", side, None),)
        yield CrashedPod(
            namespace,
            name,
            None if kind == "Pod" else f"{kind}/{owner_name}",
            f"container {container_name} on node {node_name} {what}"
            + (f": {short}" if short else ""),
            evidence,
            {"container": container_name, "node": node_name, "cuda_fix": fix},
        )


def _signs(
    statuses: Iterable[Any], gpu_containers: Mapping[str, Any], events: Sequence[Event]
) -> tuple[str, tuple[tuple[str, str, str | None], ...], str | None] | None:
    """The GPU container that failed, the evidence, and the signature it printed (None: it
    only crash-loops)."""
    looping = None
    for status in map(mapping, statuses):
        name = text(status.get("name"))
        if name not in gpu_containers:
            continue
        for key in ("state", "lastState"):
            for phase, detail in mapping(status.get(key)).items():
                detail = mapping(detail)
                reason, message = (
                    text(detail.get("reason")),
                    " ".join(text(detail.get("message")).split()),
                )
                match = re.search(_SIGNATURE, message, re.I)
                if match:
                    return name, (("pod", message, reason or phase),), match.group(0)
                if reason == "CrashLoopBackOff" and looping is None:
                    looping = (
                        name,
                        (("pod", message or "back-off restarting failed container", reason),),
                    )
    for event in events:
        match = re.search(_SIGNATURE, event.message, re.I)
        if match:
            name = looping[0] if looping else next(iter(gpu_containers))
            return name, (("event", event.message, event.reason),), match.group(0)
    if looping is not None:
        return looping[0], looping[1], None
    return None


def _nodes(
    node_objects: Sequence[Mapping[str, Any]], pool_label: str | None
) -> dict[str, tuple[str, Mapping[str, str]]]:
    """Node name -> (its pool, its labels), from the Nodes of the dump."""
    from gpulint.profile.nodes import node_view, pool_names

    views = [v for v in map(node_view, node_objects) if v.name]
    pools = pool_names(views, pool_label) if views else {}
    return {v.name: (pools.get(v.name, v.name), v.labels) for v in views}


def _side_by_side(
    container: Any, node: str, pool: str | None, labels: Mapping[str, str], said: str | None
) -> tuple[str, str, bool]:
    """The image's CUDA beside the node's driver, the fix, and whether the pair cannot work."""
    from gpulint.cuda import (
        container_cuda,
        highest_cuda,
        judge_architecture,
        judge_driver,
        pool_driver,
        pool_gpu,
    )
    from gpulint.profile.model import Pool

    need = container_cuda(container) or _required(container, said)
    view = Pool(name=pool or node, labels=dict(labels))
    driver = pool_driver(view)
    gpu = pool_gpu(view)
    where = f"node {node}" + (f" (pool {pool})" if pool and pool != node else "")
    image = text(container.node.get("image")) or "its image"
    has = (
        f"{where} has driver {driver.text} ({driver.origin})"
        if driver
        else f"{where}'s driver is not known (no nvidia.com/cuda.driver-version labels)"
    )
    if need is None:
        side = f"image `{image}`'s CUDA is not known to gpulint; {has}"
        return side, _generic_fix(node), False
    side = f"image `{image}` needs CUDA {need.cuda} (from {need.origin}); {has}"
    if driver is not None:
        verdict = judge_driver(need, driver, gpu)
        if verdict is not None:
            runs = highest_cuda(driver.version) if driver.ceiling is None else None
            older = f", or use an image built for CUDA {runs} or earlier" if runs else ""
            side += f"; CUDA {need.cuda} needs {verdict.floor.driver} or later: {verdict.reason}"
            fix = (
                f"Run the pod on nodes with driver {verdict.floor.driver} or later (upgrade the "
                f"driver of {where}){older}. `gpulint check --profile` reports this before "
                "deploy (GPU801) when the pools' drivers are known."
            )
            return side, fix, verdict.certain
    if gpu is not None:
        arch = judge_architecture(need, gpu)
        if arch is not None:
            side += f"; the image has no GPU code for it: {arch.reason}"
            return side, f"Use {arch.needs}, or run the pod on another GPU (GPU802).", arch.certain
    return side, _generic_fix(node), False


def _required(container: Any, said: str | None) -> Any:
    """What the legacy runtime's `unsatisfied condition: cuda>=X.Y` says the image needs."""
    from gpulint.cuda import CudaNeed, parse_version

    match = re.search(r"cuda>=\s*([0-9.]+)", said or "")
    version = parse_version(match.group(1).rstrip(".")) if match else None
    if match is None or version is None:
        return None
    image = text(container.node.get("image"))
    return CudaNeed(
        image, match.group(1).rstrip("."), version, "its NVIDIA_REQUIRE_CUDA, as the runtime "
        "refused it", container.pos, None, None, False,
    )  # fmt: skip


def _generic_fix(node: str) -> str:
    return (
        f"Compare the image's CUDA with the driver of node {node} (`nvidia-smi` on the node, or "
        "its nvidia.com/cuda.driver-version.full label): run the pod where the driver meets the "
        "image's CUDA, or use an image built for the CUDA that driver runs."
    )
