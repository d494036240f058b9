"""GPU007 unchecked-accelerator-workload: accelerator requests that no pod gpulint reads holds."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.model import Workload
from gpulint.requestscan import (
    ANNOTATION,
    CHECKED_FORMS,
    CLAIM,
    EMBEDDED,
    OPERATOR_FIELD,
    Unchecked,
)
from gpulint.rules.base import CheckContext, Problem
from gpulint.shapes import api_group

_INDEX = r"\[\d+\]"  # compiled on first use: only a config entry to suggest needs it
_FORMS = {
    CLAIM: "DRA resource claim",
    ANNOTATION: "scheduler annotation",
    OPERATOR_FIELD: "GPU field its operator turns into limits",
}


def unchecked_accelerator_workload(ctx: CheckContext) -> Iterator[Problem]:
    """One finding per object whose accelerator requests (or pods) gpulint does not read."""
    for found in ctx.unchecked:
        document = found.document
        ref = document.ref
        if found.requests:
            first = found.requests[0]
            what = f"`{first.what}` at `{first.field}`"
            more = len(found.requests) - 1
            if more:
                what += f" and {more} more"
            fix = _declare(found, first.field)
            # An operator that builds the pods from fields that are no pod spec (runs_in says
            # who) gets any request there: no config entry reads such pods either.
            built = first.form == OPERATOR_FIELD or (first.runs_in and first.form != EMBEDDED)
            # A request that names who builds its pod (a KFP executor's accelerator in a
            # workflow gpulint reads) is in no pod of the workload either.
            read = any(w.document is document for w in ctx.workloads)
            if built and (not read or (first.runs_in and first.form == OPERATOR_FIELD)):
                # The pods exist only once the operator runs: no config entry reads them.
                reason = first.runs_in or (
                    f"gpulint does not read the pods kind {ref.kind} ({ref.api_version}) runs"
                )
                fix = _OPERATOR_FIX
            elif first.form == EMBEDDED:
                reason = first.runs_in or "that is in a manifest the workflow creates at run time"
                # A ConfigMap's text (runs_in says so) may be a bare pod template, no object.
                fix = _HELD_AS_TEXT_FIX if first.runs_in else _EMBEDDED_FIX
            elif first.form not in CHECKED_FORMS:
                reason = f"no rule checks a request made with a {_FORMS[first.form]} yet"
                fix = _UNREAD_FORM_FIX
            elif any(w.document is document for w in ctx.workloads):
                reason = f"that is not in a pod template gpulint reads for kind {ref.kind}"
            else:
                reason = (
                    f"gpulint does not know where kind {ref.kind} ({ref.api_version}) keeps "
                    "its pods"
                )
            yield Problem.at(
                document,
                first.pos,
                f"{ref} requests accelerators ({what}), but {reason}: nothing about them "
                "was checked",
                fix,
                names_workload=True,
            )
        for part in found.unread:
            yield Problem.at(
                document,
                part.pos,
                f"{ref}: gpulint did not read its pods: {part.reason}",
                part.fix or (_UNREAD_FIX if part.accelerators else _PATH_FIX),
                names_workload=True,
            )


def pod_count_unknown(ctx: CheckContext) -> Iterator[Problem]:
    """One note per object of a kind gpulint does not model whose GPU pods it found by shape:
    each pod was checked, but how many the object runs is not known."""
    from gpulint.gpus import gpu_requests  # only files holding such objects need it

    for workload in ctx.workloads:
        # A template other objects run (a ServingRuntime inside a Template) counts no pods.
        counted = [t for t in workload.templates if not t.runs_no_pods]
        if not workload.by_shape or not any(gpu_requests(t) for t in counted):
            continue
        ref = workload.document.ref
        paths = [t.role or "" for t in workload.templates]
        listed = ", ".join(f"`{p}`" for p in paths[:3])
        what = f"its pod templates ({listed}) were" if len(paths) > 1 else f"{listed} was"
        yield Problem.at(
            workload.document,
            workload.document.kind_pos,
            f"{ref}: {what} checked as a pod, but gpulint does not know how many pods kind "
            f"{ref.kind} runs: GPU capacity and quota were not judged",
            _count_fix(workload),
            names_workload=True,
        )


def operator_decision_not_judged(ctx: CheckContext) -> Iterator[Problem]:
    """One note per thing an operator decides about a workload's pods from fields whose
    effect gpulint does not judge (Workload.unjudged), at the field."""
    for workload in ctx.workloads:
        for what, pos, *fix in workload.unjudged:
            yield Problem.at(
                workload.document,
                pos,
                f"{workload.document.ref}: {what}",
                fix[0] if fix else None,
                names_workload=True,
            )


def _count_fix(workload: Workload) -> str:
    """A `workloads:` entry that declares the kind's pods and their count."""
    ref = workload.document.ref
    group = api_group(ref.api_version)
    version = f"{group}/*" if group else ref.api_version
    templates = [
        re.sub(_INDEX, "[]", t.role or "") for t in workload.templates if t.node is not t.spec
    ]
    specs = [re.sub(_INDEX, "[]", t.role or "") for t in workload.templates if t.node is t.spec]
    where = ", ".join(
        f"{key}: [{', '.join(dict.fromkeys(paths))}]"
        for key, paths in (("podTemplates", templates), ("podSpecs", specs))
        if paths
    )
    return (
        f"Declare the kind and its replica field in the config: `workloads: [{{kind: "
        f"{ref.kind}, apiVersion: {version}, {where}, replicas: <path of its count>}}]` "
        "(docs/workloads.md)."
    )


_UNREAD_FIX = (
    "Check the pods the operator creates (`kubectl get pods -o yaml | gpulint check -`), or "
    "declare them in the config (`workloads:`, see docs/workloads.md)."
)
_OPERATOR_FIX = (
    "Check the pods the operator creates (`kubectl get pods -o yaml | gpulint check -`)."
)
_EMBEDDED_FIX = (
    "Check the embedded manifest on its own: write it to a file and run `gpulint check` on it."
)
_HELD_AS_TEXT_FIX = (
    "Check the pods the program creates from it (`kubectl get pods -o yaml | gpulint check -`), "
    "or write the text to a file as a Pod (`apiVersion: v1`, `kind: Pod`) and check that."
)
_UNREAD_FORM_FIX = (
    "Nothing to change in the manifest for gpulint: check that the cluster can allocate the "
    "request (`gpulint diagnose` on a pod that stays Pending)."
)
_PATH_FIX = "Correct the path in the config's `workloads:` entry, or mark the role `optional`."


def _declare(found: Unchecked, field: str) -> str:
    """A `workloads:` entry that would read the request's pod, when its path tells."""
    ref = found.document.ref
    group = api_group(ref.api_version)
    version = f"{group}/*" if group else ref.api_version
    path = re.sub(_INDEX, "[]", field)
    head, containers, _ = path.partition(".containers[]")
    if containers and head:
        template, dot_spec, rest = head.rpartition(".spec")
        if dot_spec and template and not rest:
            where = f"podTemplates: [{template}]"
        else:
            where = f"podSpecs: [{head}]"
        entry = f"{{kind: {ref.kind}, apiVersion: {version}, {where}}}"
        return f"Declare the kind in the config: `workloads: [{entry}]` (docs/workloads.md)."
    return (
        f"Declare where kind {ref.kind} keeps its pod templates or pod specs in the config "
        "(`workloads:` with `podTemplates:` or `podSpecs:`, see docs/workloads.md)."
    )


def managed_by_another_controller(ctx: CheckContext) -> Iterator[Problem]:
    """One note per GPU workload whose `managedBy` hands it to another controller: its pods
    were left out of the checks that judge pods against this cluster (CheckContext.
    managed_elsewhere)."""
    from gpulint.gpus import gpu_requests  # only files holding such workloads need it

    for workload in ctx.workloads:
        found = ctx.managed_elsewhere(workload)
        if found is None or not any(gpu_requests(t) for t in workload.templates):
            continue
        ref = workload.document.ref
        yield Problem.at(
            workload.document,
            found.pos,
            f"{ref} is handed to `{found.controller}` by `{found.field}`: that controller, not "
            f"this cluster's {ref.kind} controller, creates its pods where it decides (MultiKueue "
            "on a worker cluster), so they were not judged against this cluster's nodes, "
            "quotas and admission",
            names_workload=True,
        )
