"""RuntimeClass admission: GPU pods the RuntimeClass admission plugin refuses (GPU307).

A GPU pod is one that requests accelerators, or one placed only on GPU nodes (a GPU node
agent such as GPUStack's worker, which uses the GPUs through `runtimeClassName: nvidia`
without requesting any): admission refuses both alike.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.rules.base import CheckContext, Problem


def runtime_class_refuses_pod(ctx: CheckContext) -> Iterator[Problem]:
    """A GPU pod or GPU node agent whose runtimeClassName the RuntimeClass admission plugin
    refuses: a class the cluster does not have (only when the profile knows every class), a
    scheduling nodeSelector the pod contradicts, or an overhead other than the class's."""
    from gpulint.admission import runtime_class_refusal
    from gpulint.gpus import gpu_requests, selects_gpu_nodes
    from gpulint.profile.policy import runtime_classes_in_effect

    profile = ctx.profile
    known = profile is not None and profile.runtime_classes_known
    classes = runtime_classes_in_effect(ctx.knowledge, profile)
    for _, template in ctx.pod_templates(here=True):
        if template.runtime_class_name is None:
            continue
        if not gpu_requests(template) and not selects_gpu_nodes(template):
            continue
        refusal = runtime_class_refusal(template, classes, known)
        if refusal is None:
            continue
        yield Problem.at(template.document, refusal.pos, refusal.message, refusal.fix)
