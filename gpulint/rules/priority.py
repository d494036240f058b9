"""Pod priority: unknown PriorityClass names (GPU401) and GPU pods without one (GPU402)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.gpus import gpu_requests
from gpulint.profile.policy import global_default_class, priority_classes_in_effect
from gpulint.rules.base import CheckContext, Problem

#: Classes every API server creates itself.
BUILTIN_PRIORITY_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})


def unknown_priority_class(ctx: CheckContext) -> Iterator[Problem]:
    """`priorityClassName` that no PriorityClass defines: pod creation is Forbidden.

    Without any source of PriorityClasses (a profile that lists some, or a PriorityClass among
    the checked manifests) the cluster's classes are unknown and nothing is reported.
    """
    classes = priority_classes_in_effect(ctx.knowledge, ctx.profile)
    if not classes:
        return
    known = sorted(BUILTIN_PRIORITY_CLASSES | set(classes))
    where = "the cluster profile or the checked manifests"
    for _, template in ctx.pod_templates(here=True):
        name = template.priority_class_name
        if name is None or name in known:
            continue
        import difflib  # only for a near miss: most runs never get here

        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        yield Problem.at(
            template.document,
            template.priority_class_pos,
            f"priorityClassName `{name}` is not defined in {where} (known: {', '.join(known)}): "
            f"pod creation fails with `no PriorityClass with name {name} was found`{hint}",
            f"Use `{close[0]}`, the closest class that exists." if close else None,
        )


def gpu_workload_without_priority_class(ctx: CheckContext) -> Iterator[Problem]:
    """A GPU pod with no priority class gets priority 0 and cannot preempt anything.

    Reported only when the cluster profile or the manifests define a class to choose from and
    none of them is the global default: then naming one is a choice the author has not made.
    """
    classes = priority_classes_in_effect(ctx.knowledge, ctx.profile)
    if global_default_class(classes) is not None:
        # Pods that name no class get the global default's priority, which the cluster chose.
        return
    choices = sorted(name for name in classes if name not in BUILTIN_PRIORITY_CLASSES)
    if not choices:
        return
    for _, template in ctx.pod_templates(here=True):
        gpus = gpu_requests(template)
        if not gpus or template.priority_class_name is not None:
            continue
        yield Problem.at(
            template.document,
            template.node.pos_of_key("spec"),
            f"pod requests {', '.join(sorted(gpus))} but sets no priorityClassName: it runs at "
            f"priority 0, so when the GPU pool is full it waits behind everything and can "
            f"preempt nothing (classes defined: {', '.join(choices)})",
        )
