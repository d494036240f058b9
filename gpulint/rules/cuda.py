"""GPU801-GPU803: a GPU pod that is scheduled and still never does work, because its image's
CUDA needs a newer driver than its pools have, or has no GPU code for their GPU."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from gpulint.cuda_containers import container_env, may_know_cuda, uses_nvidia_gpus
from gpulint.model import Severity, drawn
from gpulint.rules.base import CheckContext, Problem

if TYPE_CHECKING:
    from gpulint.cuda import CudaNeed
    from gpulint.model import Container, Document, PodTemplate
    from gpulint.profile.model import Pool

#: Pools named in one message; the rest are counted.
_NAMED = 3
#: The GPU Operator's kinds that say which driver it installs (gpulint.cuda's _OPERATOR_KINDS).
_OPERATOR_KINDS = frozenset({"ClusterPolicy", "NVIDIADriver"})
#: What every GPU Feature Discovery label of a driver or CUDA version starts with
#: (gpulint.data.cuda's GFD_DRIVER_* and GFD_RUNTIME_*).
_GFD_CUDA_PREFIX = "nvidia.com/cuda."


def _gpu_containers(template: PodTemplate) -> Iterator[tuple[Container, CudaNeed]]:
    """The containers that ask for NVIDIA GPUs and whose CUDA is known."""
    for container in template.containers:
        # The CUDA tables are read only for a container whose CUDA they may know.
        if uses_nvidia_gpus(container) and may_know_cuda(container):
            from gpulint.cuda import container_cuda

            need = container_cuda(container)
            if need is not None:
                yield container, need


def _names(pools: Sequence[Pool]) -> str:
    shown = ", ".join(p.described for p in pools[:_NAMED])
    more = len(pools) - _NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _alike(judged: Iterable[tuple[Pool, str]]) -> list[tuple[str, list[Pool]]]:
    """The judged pools grouped by what a message says of them (`judged`: each pool with that
    text), in the order each text first comes: only pools of one text share a clause."""
    groups: dict[str, list[Pool]] = {}
    for pool, said in judged:
        groups.setdefault(said, []).append(pool)
    return list(groups.items())


def _clauses(groups: Sequence[tuple[str, list[Pool]]], lead: str) -> str:
    """`lead A (also B) SAID; C SAID2`: a clause per group, the first `_NAMED` groups named."""
    parts = []
    for said, pools in groups[:_NAMED]:
        also = f" (also {_names(pools[1:])})" if len(pools) > 1 else ""
        parts.append(f"{pools[0].described}{also}{said}")
    more = sum(len(pools) for _, pools in groups[_NAMED:])
    if more:
        parts.append(f"and {more} more pool{'s' if more > 1 else ''}")
    return lead + "; ".join(parts)


def _has_operator_objects(documents: Iterable[Document]) -> bool:
    """Whether `documents` hold a GPU Operator object that may say which driver it installs."""
    return any(d.ref.kind in _OPERATOR_KINDS for d in documents)


def _drivers_may_be_known(ctx: CheckContext) -> bool:
    """False when gpulint.cuda.pool_driver knows the driver of no pool: no pool of the profile
    declares one or has GPU Feature Discovery's CUDA labels, and no GPU Operator states one.

    Such a run (most profiles of pools) then reads no CUDA table: gpulint.cuda and its data
    are not imported.
    """
    profile = ctx.profile
    assert profile is not None
    if profile.gpu_operator_drivers or drawn(ctx.knowledge, _has_operator_objects):
        return True
    return any(
        pool.driver_version or any(key.startswith(_GFD_CUDA_PREFIX) for key in pool.labels)
        for pool in profile.pools
    )


def cuda_driver_too_old(ctx: CheckContext) -> Iterator[Problem]:
    """GPU801: the image's CUDA needs a newer driver than the pools it can run on have.

    An error when every pool the pod can run on has a known driver that cannot run it; a
    warning when it runs there only through minor-version or forward compatibility, or when
    some of its pools can run it and others cannot (the scheduler does not look at drivers).
    """
    if not _drivers_may_be_known(ctx):
        return
    from gpulint.cuda import (
        highest_cuda,
        judge_driver,
        manifest_operator_drivers,
        pool_driver,
        pool_gpu,
    )

    assert ctx.profile is not None
    # The GPU Operator's objects among every input (knowledge kinds), not only this file.
    operators = drawn(ctx.knowledge, manifest_operator_drivers)
    for _, template in ctx.pod_templates(here=True):
        containers = list(_gpu_containers(template))
        if not containers:
            continue
        eligible = ctx.placement(template).eligible
        drivers = {id(pool): pool_driver(pool, ctx.profile, operators) for pool in eligible}
        if not any(drivers.values()):
            continue
        for _container, need in containers:
            failing, risky, fine = [], [], []
            for pool in eligible:
                driver = drivers[id(pool)]
                if driver is None:
                    continue
                verdict = judge_driver(need, driver, pool_gpu(pool))
                if verdict is None:
                    fine.append(pool)
                elif verdict.certain:
                    failing.append((pool, driver, verdict))
                else:
                    risky.append((pool, driver, verdict))
            if not failing and not risky:
                continue
            certain = bool(failing) and len(failing) == len(eligible)
            # Pools of different drivers are judged apart: each clause says its own driver and
            # why it cannot run the image, never another pool's.
            groups = _alike(
                (pool, f" has {driver.text} ({driver.origin}): {verdict.reason}")
                for pool, driver, verdict in (*failing, *risky)
            )
            floor = (failing or risky)[0][2].floor
            lead = "every pool it can run on has an older driver: " if certain else "pool "
            message = (
                f"image `{need.image}` needs CUDA {need.cuda} (from {need.origin}), which needs "
                f"NVIDIA driver {floor.driver} or later; {_clauses(groups, lead)}"
            )
            if not certain and fine:
                message += (
                    f"; it can also land on {_names(fine)}, whose driver runs it, and the "
                    "scheduler does not look at drivers"
                )
            if need.disable_require is not None:
                message += (
                    "; NVIDIA_DISABLE_REQUIRE is set, which only hides the runtime's own check"
                )
            # An older image must run on the oldest of these drivers to run on them all.
            driver = min((d for _, d, _ in (*failing, *risky)), key=lambda d: d.version)
            runs = highest_cuda(driver.version) if driver.ceiling is None else None
            image_fix = (
                f"an image built for CUDA {runs} or earlier (the newest {driver.text} runs)"
                if runs
                else "an image built for an older CUDA"
            )
            fix = (
                f"Run the pod on nodes with driver {floor.driver} or later (upgrade the "
                f"pool's driver: node image, GKE driver channel, GPU Operator driver.version, or "
                f"select a pool that has it), or use {image_fix}."
            )
            yield Problem.at(
                template.document,
                need.pos,
                message,
                fix,
                severity=Severity.ERROR if certain else Severity.WARNING,
            )


def image_lacks_gpu_architecture(ctx: CheckContext) -> Iterator[Problem]:
    """GPU802: the image has no GPU code for the GPU of the pools the pod can run on."""
    assert ctx.profile is not None
    for _, template in ctx.pod_templates(here=True):
        containers = list(_gpu_containers(template))
        if not containers:
            continue
        from gpulint.cuda import judge_architecture, pool_gpu

        eligible = ctx.placement(template).eligible
        gpus = {id(pool): pool_gpu(pool) for pool in eligible}
        if not any(gpus.values()):
            continue
        for _container, need in containers:
            failing, fine = [], []
            for pool in eligible:
                gpu = gpus[id(pool)]
                if gpu is None:
                    continue
                verdict = judge_architecture(need, gpu)
                if verdict is None:
                    fine.append(pool)
                else:
                    failing.append((pool, verdict))
            if not failing:
                continue
            every = len(failing) == len(eligible)
            certain = every and all(v.certain for _, v in failing)
            # Pools of different GPUs are judged apart: each clause names its own GPU.
            groups = _alike((pool, f": {verdict.reason}") for pool, verdict in failing)
            lead = "every pool it can run on, " if every else "pool "
            message = (
                f"image `{need.image}` (CUDA {need.cuda}, from {need.origin}) has no GPU code for "
                f"the GPU of {_clauses(groups, lead)}; its first kernel launch fails with 'no "
                "kernel image is available for execution on the device'"
            )
            if fine:
                message += f"; it can also land on {_names(fine)}, which it runs on"
            # Each GPU may need another image: one fix per need, naming its pools.
            needs = _alike((pool, verdict.needs) for pool, verdict in failing)
            use = (
                needs[0][0]
                if len(needs) == 1
                else ", ".join(f"{need} for {_names(pools)}" for need, pools in needs)
            )
            fix = (
                f"Use {use}, or select pools whose GPU the image is built for (a nodeSelector "
                "on nvidia.com/gpu.product or the node group)."
            )
            yield Problem.at(
                template.document,
                need.pos,
                message,
                fix,
                severity=Severity.ERROR if certain else Severity.WARNING,
            )


def nvidia_disable_require(ctx: CheckContext) -> Iterator[Problem]:
    """GPU803: NVIDIA_DISABLE_REQUIRE in a GPU container's env turns off the runtime's check."""
    for _, template in ctx.pod_templates():
        for container in template.containers:
            if not uses_nvidia_gpus(container):
                continue
            value = container_env(container).get("NVIDIA_DISABLE_REQUIRE")
            if value is None or value[0].strip().lower() not in ("1", "true", "yes", "on"):
                continue
            yield Problem.at(
                template.document,
                value[1],
                f"container {container.name} sets NVIDIA_DISABLE_REQUIRE={value[0]}: the NVIDIA "
                "runtime no longer refuses to start it on a driver older than its image's CUDA "
                "needs; the container then starts and fails at its first CUDA call instead",
            )
