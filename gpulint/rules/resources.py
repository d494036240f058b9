"""Container resource mistakes that need no cluster knowledge: GPU001-GPU004."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from decimal import ROUND_CEILING
from pathlib import PurePath
from typing import TYPE_CHECKING

from gpulint.accelerators import (
    DRA_CLASS_RESOURCE_PREFIX,
    MIG_RESOURCE,
    extender_of,
    former_name,
    gpu_model_resource,
    is_extended_resource,
    is_extender_resource,
    is_known_accelerator,
    is_valid_resource_name,
    looks_like_accelerator,
    near_miss,
    removed_name,
    suggest_resource,
)
from gpulint.fields import shown, spelt_like
from gpulint.gpus import gpu_limit_pos
from gpulint.model import (
    Container,
    ContainerRole,
    Document,
    PodTemplate,
    Quantity,
    Severity,
    drawn,
    of_kind,
)
from gpulint.quantity import format_quantity, is_whole
from gpulint.rules.base import CheckContext, Problem
from gpulint.yamltree import YMap, YSeq

if TYPE_CHECKING:
    from gpulint.constraints import Toleration
    from gpulint.data.accelerators import FormerName, ModelNames
    from gpulint.device_plugins import PluginInstall
    from gpulint.edits import Edit
    from gpulint.profile.model import Pool


def _quantities(container: Container) -> Iterator[tuple[str, Quantity]]:
    """("requests"|"limits", quantity) for every resource the container names."""
    for quantity in container.resources.requests.values():
        yield "requests", quantity
    for quantity in container.resources.limits.values():
        yield "limits", quantity


def _containers(ctx: CheckContext) -> Iterator[tuple[PodTemplate, Container]]:
    for _, template in ctx.pod_templates():
        for container in template.containers:
            yield template, container


def unknown_gpu_resource(ctx: CheckContext) -> Iterator[Problem]:
    """A resource key that reads as an accelerator but is no name anything serves.

    Without a cluster profile only what is surely wrong is an error (a key the API rejects, a
    near miss of a known name); a plausible name gpulint does not know is an info. With a
    profile, "served" means advertised by some pool of that cluster, fitted by a scheduler
    extender it runs, or named by a DRA DeviceClass's `extendedResourceName`.
    """
    served_by_dra = dra_extended_resources(ctx)
    cluster = _advertised_accelerators(ctx)
    for workload, template in ctx.pod_templates():
        # Pods another controller creates on other clusters are judged as without a profile.
        advertised = cluster if ctx.managed_elsewhere(workload) is None else None
        for container in template.containers:
            for section, quantity in _quantities(container):
                name = quantity.resource
                if not looks_like_accelerator(name) or name in served_by_dra:
                    continue
                if name.startswith(DRA_CLASS_RESOURCE_PREFIX):
                    continue  # a name every DeviceClass serves for itself (KEP-5004)
                if quantity.amount == 0 and is_valid_resource_name(name):
                    # Zero asks for nothing: the scheduler's fit skips a zero request, so no node
                    # needs to advertise the name (a chart's `gpus: 0` on a CPU cluster).
                    continue
                # A key the API rejects is that, whatever the cluster advertises.
                if advertised is not None and (name in advertised or is_valid_resource_name(name)):
                    problem = _not_in_cluster(
                        ctx, template, container, section, quantity, advertised
                    )
                else:
                    problem = _unknown_name(template, container, section, quantity)
                if problem is not None:
                    yield problem


def dra_extended_resources(ctx: CheckContext) -> frozenset[str]:
    """The resource names DRA DeviceClasses serve (`spec.extendedResourceName`): those of the
    checked manifests and those of the cluster profile."""
    names = set()
    if ctx.profile is not None:
        names.update(
            c.extended_resource_name for c in ctx.profile.device_classes if c.extended_resource_name
        )
    # Those of the knowledge objects once per run: every file asks.
    names.update(drawn(ctx.knowledge, _extended_resource_names))
    names.update(_extended_resource_names(ctx.documents))
    return frozenset(names)


def _extended_resource_names(documents: Iterable[Document]) -> frozenset[str]:
    """The `spec.extendedResourceName` of the DeviceClasses among `documents`."""
    names = set()
    for document in of_kind(documents, "DeviceClass"):
        spec = document.obj.get("spec")
        value = spec.get("extendedResourceName") if isinstance(spec, YMap) else None
        if isinstance(value, str) and value:
            names.add(value)
    return frozenset(names)


def _unknown_name(
    template: PodTemplate, container: Container, section: str, quantity: Quantity
) -> Problem | None:
    name = quantity.resource
    if is_known_accelerator(name):
        return None
    what = f"container `{container.name}` {section} `{name}`"
    # A MIG name misspelt (`mig-1g5gb`) is a typo; one of another shape (`mig-small`) may be
    # a name the cluster's own plugin advertises, and falls to the checks below.
    wrong_mig = _mig_spelling(name)
    if wrong_mig:
        return _rename(
            template,
            quantity,
            f"{what}, which is not a MIG resource name (`nvidia.com/mig-<g>g.<memory>gb`): no "
            f"node advertises it and the pod can never be scheduled",
            wrong_mig,
        )
    if not is_valid_resource_name(name):
        suggestion = suggest_resource(name)
        reason = (
            "which has no domain prefix: the API rejects it (only cpu, memory, "
            "ephemeral-storage and hugepages-* may be unqualified)"
            if "/" not in name
            else "which is not a valid resource name: the API rejects it"
        )
        return _rename(template, quantity, f"{what}, {reason}", suggestion)
    removed = removed_name(name)
    if removed is not None:
        return _rename(
            template,
            quantity,
            f"{what}, Kubernetes' own resource before {removed.removed}, which removed it: no "
            f"kubelet advertises it since and no device plugin can (the kubelet registers no "
            f"`kubernetes.io/` name), so the pod is never scheduled",
            removed.now,
        )
    model = gpu_model_resource(name)
    if model is not None:
        return _model_named(template, container, section, quantity, model, None)
    former = former_name(name)
    if former is not None:
        # Whether the nodes still advertise the old name depends on the provider's release,
        # which only a profile tells.
        return Problem.at(
            template.document,
            quantity.key_pos,
            f"{what}, {_renamed(former)}: its scheduler still reads it, but the nodes of "
            f"{former.release} or later advertise only `{former.now}`, and the kubelet refuses "
            f"a pod asking for a resource its node lacks; did you mean `{former.now}`?",
            _renamed_fix(former),
            severity=Severity.WARNING,
        )
    typo = near_miss(name)
    if typo is not None:
        case = " (resource names are case-sensitive)" if typo.lower() == name.lower() else ""
        return _rename(
            template,
            quantity,
            f"{what}, which no device plugin advertises{case}: the pod can never be scheduled",
            typo,
        )
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"{what}, a name no accelerator plugin or allocator known to gpulint serves: make "
        f"sure one of the cluster's does (a cluster profile lets gpulint check)",
        "Check the name against the plugin that serves it (docs/accelerators.md lists the "
        "known ones), or give a cluster profile.",
        severity=Severity.INFO,
    )


def _renamed(former: FormerName) -> str:
    """`kubernetes.io/gpu`: what its provider calls it now, and since when."""
    return f"{former.provider}'s name for `{former.now}` before {former.release}"


def _renamed_fix(former: FormerName) -> str:
    return (
        f"Rename the key to `{former.now}`, keeping the amount: {former.provider} "
        f"{former.release} renamed `{former.name}` without changing its unit."
    )


def _model_named(
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
    model: tuple[ModelNames, str],
    pools: Sequence[Pool] | None,
) -> Problem:
    """A GPU model written as a resource name (`nvidia.com/a100`): the vendor's plugin
    advertises one name for every model and puts the model in a node label.

    With the cluster's pools (`pools`), no pool advertising the name makes it an error, and
    the message names the label values of the pools that have the model. Without them it is a
    warning: the vendor's own plugin never advertises such a name, but a site may run one that
    does (the NRP Nautilus cluster advertises `nvidia.com/a100`).
    """
    vendor, name = model
    values = _model_values(vendor, name, pools)
    what = (
        f"container `{container.name}` {section} `{quantity.resource}`, a GPU model as a resource"
    )
    if pools is None:
        message = (
            f"{what}: {vendor.vendor}'s device plugin advertises every model as "
            f"`{vendor.resource}` and puts the model in the node label `{vendor.label}`, so "
            f"unless this cluster's plugin advertises `{quantity.resource}`, the pod can never "
            f"be scheduled"
        )
        severity = Severity.WARNING
    else:
        message = (
            f"{what}, which no pool of this cluster advertises: the pod can never be scheduled"
        )
        severity = Severity.ERROR
    if values:
        hint = f"`{vendor.resource}` with the nodeSelector `{vendor.label}: {values[0]}`"
        fix = (
            f"Request `{vendor.resource}` and select the model with "
            f"`nodeSelector: {{{vendor.label}: {values[0]}}}`"
            f"{' (the value your nodes carry)' if pools is None else ''}."
        )
    elif pools is not None:
        hint = f"`{vendor.resource}` (no pool has `{name}` in `{vendor.label}`)"
        fix = f"Request `{vendor.resource}` on a pool that has the GPU it needs."
    else:
        hint = f"`{vendor.resource}` with a nodeSelector on `{vendor.label}`"
        fix = (
            f"Request `{vendor.resource}` and select the model with a nodeSelector on "
            f"`{vendor.label}`."
        )
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"{message}; did you mean {hint}?",
        fix,
        severity=severity,
    )


def _model_values(vendor: ModelNames, model: str, pools: Sequence[Pool] | None) -> list[str]:
    """The values of the vendor's model label for `model`: those the pools carry, or, without
    pools, the catalogue's most common one."""
    words = re.compile(
        r"(?:\A|[-_ ])" + "[-_ ]?".join(map(re.escape, model)) + r"(?:\Z|[-_ ])", re.I
    )
    if pools is not None:
        carried = {p.labels.get(vendor.label) for p in pools}
        return sorted(v for v in carried if v and words.search(v))
    from gpulint.data.gpu_products import PRODUCT_LABELS

    for family in PRODUCT_LABELS.get(vendor.label, ()):
        if family.model.upper() == model:
            return [family.values[0]]
    return []


def _rename(
    template: PodTemplate, quantity: Quantity, message: str, suggestion: str | None
) -> Problem:
    hint = f"; did you mean `{suggestion}`?" if suggestion else ""
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"{message}{hint}",
        f"Rename the key to `{suggestion}`." if suggestion else None,
        edits=_rename_resource(quantity, suggestion),
    )


_MIG_HEAD = "nvidia.com/mig"
# Compiled on first use: only a name that starts like a MIG resource is matched.
_MIG_LOOSE = r"nvidia\.com/mig[-_.]?(?:([1-8])c[._]?)?([1-8])g[._-]?([0-9]+)g(?:i?b)?\Z"


def _mig_spelling(name: str) -> str | None:
    """For a misspelt MIG name: its right spelling, or "" when none can be told; else None."""
    lower = name.lower()
    if not lower.startswith(_MIG_HEAD) or re.match(MIG_RESOURCE, name):
        return None
    loose = re.match(_MIG_LOOSE, lower)
    if loose is None:
        return ""
    compute, slices, memory = loose.groups()
    head = f"{compute}c." if compute else ""
    return f"nvidia.com/mig-{head}{slices}g.{memory}gb"


def _advertised_accelerators(ctx: CheckContext) -> frozenset[str] | None:
    """The accelerator names the profile's pools advertise; None without pools to ask."""
    if ctx.profile is None or not ctx.profile.pools:
        return None
    return frozenset(n for n in ctx.profile.advertised_resources() if looks_like_accelerator(n))


def _not_in_cluster(
    ctx: CheckContext,
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
    advertised: frozenset[str],
) -> Problem | None:
    name = quantity.resource
    if name in advertised:
        return None
    if is_extender_resource(name):
        return _extender_not_running(ctx, template, container, section, quantity)
    assert ctx.profile is not None
    undescribed = [p for p in ctx.profile.pools if p.allocatable_unknown]
    if undescribed and not suggest_resource(name, sorted(advertised)):
        return _maybe_advertised(template, container, section, quantity, undescribed)
    model = gpu_model_resource(name)
    if model is not None:
        return _model_named(template, container, section, quantity, model, ctx.profile.pools)
    if is_known_accelerator(name):
        installed = _installed_by_input(ctx, template, container, section, quantity, advertised)
        if installed is not None:
            return installed
    return _not_advertised(template, container, section, quantity, advertised)


def _installed_by_input(
    ctx: CheckContext,
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
    advertised: frozenset[str],
) -> Problem | None:
    """A name no pool advertises yet, which a device plugin the inputs install would advertise
    on a pool it runs on: a profile dumped before the plugin ran. Whether it is installed on
    this cluster, and runs there, is the assumption the verdict rests on: a warning naming it.

    A plugin that runs on no pool that may have its devices (GPU503 says why) changes nothing.
    """
    from gpulint.device_plugins import (
        DAEMONSET_TOLERATIONS,
        VENDOR_DEVICES,
        fake_pool_label,
        may_have_devices,
        nfd_labels,
        nfd_pci_workers,
        reaches,
    )

    assert ctx.profile is not None
    name = quantity.resource
    installs = _plugin_installs(ctx)
    pool_label = fake_pool_label((*ctx.documents, *ctx.knowledge))
    nfd_workers = nfd_pci_workers(ctx.documents)
    for install in installs:
        if not install.advertises(name):
            continue
        held: tuple[Toleration, ...] = ()
        if install.template is not None:
            admitted = ctx.admission(install.template)
            held = (*admitted.tolerations, *admitted.assumed, *DAEMONSET_TOLERATIONS)
        sure, unsure = [], []
        for pool in ctx.profile.pools:
            if not _may_place(ctx, template, pool):
                continue  # what its plugin would advertise there, the pod never gets
            devices = may_have_devices(install, pool)
            added = nfd_labels(nfd_workers, pool, install.vendor)
            if devices is not False and reaches(install, pool, held, pool_label, added):
                (sure if devices else unsure).append(pool.name)
        pools = sure or unsure
        if not pools:
            continue
        hardware = (
            ""
            if sure
            else f" and the nodes there have {VENDOR_DEVICES[install.vendor]} (the profile does "
            f"not say which accelerators they carry)"
        )
        where = _where(install.document, template.document)
        offered = (
            f"pools advertise {', '.join(sorted(advertised))}"
            if advertised
            else "no pool advertises an accelerator"
        )
        return Problem.at(
            template.document,
            quantity.key_pos,
            f"container `{container.name}` {section} `{name}`, which no pool of this cluster "
            f"advertises yet ({offered}); {install.what} {where} would advertise it: unless it is "
            f"installed and runs on pool {_either(pools)}{hardware}, the pod can never be "
            f"scheduled",
            f"Install {install.what} before the pod; a profile of the cluster dumped once it "
            f"runs lets gpulint count the `{name}` its pools advertise.",
            severity=Severity.WARNING,
        )
    return None


def _may_place(ctx: CheckContext, template: PodTemplate, pool: Pool) -> bool:
    """Whether the pod, as admitted, may go to the pool's nodes: its node selection does not
    surely exclude them, and it tolerates their taints (or would, if admission's assumptions
    hold)."""
    from gpulint.scheduling import selector_mismatch, untolerated_taints

    admitted = ctx.admission(template)
    mismatch = selector_mismatch(
        template, pool.labels, pool.label_requirements, admitted.node_selector
    )
    if mismatch is not None and mismatch.decidable:
        return False
    return not untolerated_taints((*admitted.tolerations, *admitted.assumed), pool.taints)


def _either(names: Sequence[str]) -> str:
    """`a`, `b` or `c`: at most three names, then how many more."""
    quoted = [f"`{name}`" for name in names[:3]]
    if len(names) > 3:
        return f"{', '.join(quoted)} or {len(names) - 3} more"
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _plugin_installs(ctx: CheckContext) -> list[PluginInstall]:
    """The device plugins this file and the knowledge objects of the run install, each once."""
    from gpulint.device_plugins import plugin_installs

    found = list(plugin_installs(ctx.documents))
    seen = {(i.document.file.path, i.document.kind_pos) for i in found}
    for install in drawn(ctx.knowledge, plugin_installs):
        if (install.document.file.path, install.document.kind_pos) not in seen:
            found.append(install)
    return found


def _where(document: Document, checked: Document) -> str:
    """Where an object is written, as a message names it: its line in the checked file, or
    the template or file it comes from."""
    if document.file.path == checked.file.path:
        return f"(line {document.kind_pos[0]})"
    if document.source:
        return f"(in {document.source})"
    return f"(in {PurePath(document.file.path).name})"


def _maybe_advertised(
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
    undescribed: Sequence[Pool],
) -> Problem:
    """A name no described pool advertises, while some pool's nodes are of an instance type
    nothing describes: whether they advertise it is the assumption a verdict would rest on."""
    first = undescribed[0]
    more = f" and {len(undescribed) - 1} more" if len(undescribed) > 1 else ""
    if first.instance_type is None:
        unknown = "has an instance type its files do not decide"
        check = "Check that the pool's nodes have this accelerator"
    else:
        kind = shown(first.instance_type)  # written in a profile: any text, of any length
        unknown = f"is of instance type `{kind}`, which gpulint's catalogue does not list"
        check = f"Check that instance type `{kind}` has this accelerator"
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"container `{container.name}` {section} `{quantity.resource}`, which no pool of this "
        f"cluster is known to advertise: pool {first.described}{more} {unknown}, so what "
        f"its nodes advertise is not known; unless they advertise `{quantity.resource}`, the "
        f"pod can never be scheduled",
        f"{check}; give the pool's `allocatable` in a cluster profile (docs/profile.md) to "
        "have it judged.",
        severity=Severity.WARNING,
    )


def _extender_not_running(
    ctx: CheckContext,
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
) -> Problem | None:
    """An extender resource is served unless the profile lists extenders without its own."""
    assert ctx.profile is not None
    running = ctx.profile.scheduler_extenders
    extender = extender_of(quantity.resource)
    if running is None or extender is None or extender in running:
        return None
    listed = ", ".join(sorted(running)) or "none"
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"container `{container.name}` {section} `{quantity.resource}`, which only the "
        f"`{extender}` scheduler extender serves, and the profile's schedulerExtenders "
        f"({listed}) does not list it: the pod can never be scheduled",
        f"Install {extender} and add it to the profile's schedulerExtenders, or remove "
        f"`{quantity.resource}` from the container.",
    )


def _not_advertised(
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
    advertised: frozenset[str],
) -> Problem:
    name = quantity.resource
    suggestion = suggest_resource(name, sorted(advertised))
    former = former_name(name)
    if former is not None:
        # koord-scheduler places the pod by the new name; the kubelet then refuses it.
        hint = f"; did you mean `{suggestion}`?" if suggestion else ""
        return Problem.at(
            template.document,
            quantity.key_pos,
            f"container `{container.name}` {section} `{name}`, {_renamed(former)}, which no "
            f"pool of this cluster advertises (pools advertise "
            f"{', '.join(sorted(advertised)) or 'no accelerator'}): no node runs the pod (a "
            f"scheduler that reads the old name places it, and the kubelet refuses it){hint}",
            _renamed_fix(former) if suggestion else None,
        )
    if re.match(MIG_RESOURCE, name):
        what = "a MIG profile no pool of this cluster exposes"
    elif is_known_accelerator(name):
        what = "which no pool of this cluster advertises"
    else:
        what = "which no device plugin advertises"
    offered = (
        f"pools advertise {', '.join(sorted(advertised))}"
        if advertised
        else "no pool advertises an accelerator"
    )
    hint = f"; did you mean `{suggestion}`?" if suggestion else ""
    if suggestion:
        fix: str | None = f"Rename the key to `{suggestion}`."
    elif is_known_accelerator(name):
        # The name is right; the cluster has no node of that kind to give it.
        fix = (
            f"Add a node pool whose nodes advertise `{name}` (accelerator nodes running its "
            f"device plugin), or run the pod on a cluster that has one."
        )
    else:
        fix = None
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"container `{container.name}` {section} `{name}`, {what} ({offered}): the pod can "
        f"never be scheduled{hint}",
        fix,
        edits=_rename_resource(quantity, suggestion),
    )


def gpu_limit_request_mismatch(ctx: CheckContext) -> Iterator[Problem]:
    """Extended resources cannot be overcommitted: a request needs an equal limit."""
    for template, container in _containers(ctx):
        if container.role is ContainerRole.EPHEMERAL:
            continue
        limits = container.resources.limits
        for name, request in container.resources.requests.items():
            if not is_extended_resource(name):
                continue
            limit = limits.get(name)
            rewritten = _rewritten_by_webhook(template, container, name)
            if rewritten is not None:
                if rewritten and (limit is None or limit.amount != request.amount):
                    yield _left_to_webhook(template, container, name, request, limit)
                continue
            if limit is None:
                assumed = _limit_left_to_platform(ctx)
                yield Problem.at(
                    template.document,
                    request.key_pos,
                    f"container `{container.name}` requests `{name}` without a limit; the API "
                    f"rejects it (Limit must be set for non overcommitable resources)"
                    + (f"; this {assumed}" if assumed else ""),
                    f"Add `limits: {{{name}: {request.shown}}}` or replace the request with "
                    f"that limit (the request defaults to the limit).",
                    severity=Severity.WARNING if assumed else None,
                )
            elif (
                request.amount is not None
                and limit.amount is not None
                and request.amount != limit.amount
            ):
                yield Problem.at(
                    template.document,
                    request.key_pos,
                    f"container `{container.name}` requests {format_quantity(request.amount)} "
                    f"`{name}` but limits it to {format_quantity(limit.amount)}; the API "
                    f"rejects requests that differ from the limit of an extended resource",
                    "Make the request equal to the limit, or drop it: the request of an "
                    "extended resource defaults to its limit.",
                    edits=_set_to(request, _written(limit)),
                )


def _limit_left_to_platform(ctx: CheckContext) -> str | None:
    """The assumption a missing extended-resource limit is refused on, when the platform's
    admission may rewrite the container's resources before the API validates them: GKE
    Autopilot's resource mutator adjusts a workload's resources, and no GKE page says whether
    it sets a missing GPU limit. None where the profile's platform runs no such mutator, and
    without a profile (the API's own validation)."""
    profile = ctx.profile
    if profile is None:
        return None
    from gpulint.profile.platforms import AUTOPILOT_RESOURCE_MUTATOR, DECLARE_PLATFORM

    fact = profile.admission_fact(AUTOPILOT_RESOURCE_MUTATOR)
    if fact.state is False:
        return None
    if fact.state is True:
        return (
            "assumes GKE Autopilot's autopilot-default-resources-mutator, which adjusts a "
            "workload's resources before the API validates them, does not set the limit: no "
            "GKE page says whether it does"
        )
    return (
        "assumes the cluster is not GKE Autopilot, whose autopilot-default-resources-mutator "
        "adjusts a workload's resources before the API validates them and may set the limit; "
        f"declare `{DECLARE_PLATFORM}` in the profile to make it certain"
    )


def _rewritten_by_webhook(template: PodTemplate, container: Container, name: str) -> bool | None:
    """Whether a webhook on a pod's creation rewrites resource `name` of a bare Pod's
    container before the API validates it: True for the name it replaces, False for one it
    overwrites as a consequence, None when it leaves the name as written.

    koord-manager turns `koordinator.sh/gpu` into `gpu-core` and `gpu-memory-ratio` of the same
    amount, limits included (pkg/webhook/pod/mutating/device_resource_spec.go). A workload's
    pod template is validated as written, when the workload is created.
    """
    from gpulint.data.accelerators import KOORDINATOR_GPU, KOORDINATOR_SPLIT

    ref = template.document.ref
    if (ref.api_version, ref.kind) != ("v1", "Pod"):
        return None
    if name == KOORDINATOR_GPU:
        return True
    # A limit alone is a request too: the API copies it before any webhook runs.
    resources = container.resources
    if name in KOORDINATOR_SPLIT and (
        KOORDINATOR_GPU in resources.requests or KOORDINATOR_GPU in resources.limits
    ):
        return False
    return None


def _left_to_webhook(
    template: PodTemplate,
    container: Container,
    name: str,
    request: Quantity,
    limit: Quantity | None,
) -> Problem:
    written = "without a limit" if limit is None else "with a limit that differs"
    return Problem.at(
        template.document,
        request.key_pos,
        f"container `{container.name}` requests `{name}` {written}: the API accepts the pod "
        f"only if koord-manager's pod webhook (on unless its DisableDeviceResourceSpec gate "
        f"is set) first replaces `{name}` with `koordinator.sh/gpu-core` and "
        f"`koordinator.sh/gpu-memory-ratio`, limits included; elsewhere it is rejected",
        f"Write `limits: {{{name}: {request.shown}}}` and drop the request (it defaults to "
        f"the limit): the pod then needs no webhook to be valid.",
        severity=Severity.WARNING,
    )


def fractional_gpu_quantity(ctx: CheckContext) -> Iterator[Problem]:
    """Extended resources are counted in whole devices."""
    for template, container in _containers(ctx):
        for section, quantity in _quantities(container):
            if not is_extended_resource(quantity.resource):
                continue
            amount = quantity.amount
            what = f"container `{container.name}` {section} `{quantity.resource}`"
            edits: tuple[Edit, ...] = ()
            if amount is None:
                message = f"{what}: `{quantity.shown}` is not a valid quantity"
            elif amount < 0:
                message = f"{what}: `{quantity.shown}` is negative"
            elif not is_whole(amount):
                message = (
                    f"{what}: `{quantity.shown}` is not a whole number; the API rejects it "
                    f"(must be an integer): extended resources are whole devices"
                )
                # Rounding up keeps the pod's needs met; whether it should share a device
                # instead is the author's choice, so this fix is an unsafe one.
                whole = amount.to_integral_value(rounding=ROUND_CEILING)
                edits = _set_to(quantity, format_quantity(whole))
            else:
                continue
            yield Problem.at(template.document, quantity.value_pos, message, edits=edits)
    for _, template in ctx.pod_templates():
        yield from _koordinator_percentages(template)


def _koordinator_percentages(template: PodTemplate) -> Iterator[Problem]:
    """Koordinator's GPU percentages that koord-scheduler refuses for the pod's total request:
    a `koordinator.sh/gpu` past one GPU that is no whole number of GPUs, or a `gpu-core` or
    `gpu-memory-ratio` that `gpu.shared` GPUs cannot split evenly, at most 100 each."""
    from gpulint.data.accelerators import KOORDINATOR_GPU, KOORDINATOR_SHARED, KOORDINATOR_SPLIT

    requests = template.effective_requests
    gpu = requests.get(KOORDINATOR_GPU)
    if gpu is not None and gpu > 100 and gpu % 100:
        yield _refused_percentage(
            template,
            KOORDINATOR_GPU,
            f"{format_quantity(gpu)} `{KOORDINATOR_GPU}` is more than one GPU (100) but no "
            f"whole number of GPUs",
            f"Ask for at most 100 (one GPU, or part of one) or a multiple of 100 (whole GPUs): "
            f"{format_quantity(gpu - gpu % 100)} or {format_quantity(gpu - gpu % 100 + 100)}.",
        )
    shared = requests.get(KOORDINATOR_SHARED)
    if shared is None or shared <= 0 or not is_whole(shared):
        return
    for name in KOORDINATOR_SPLIT:
        amount = requests.get(name)
        if amount is None or amount <= 0 or (amount % shared == 0 and amount <= 100 * shared):
            continue
        count = format_quantity(shared)
        yield _refused_percentage(
            template,
            name,
            f"{format_quantity(amount)} `{name}` over {count} shared GPU"
            f"{'s' if shared != 1 else ''} (`{KOORDINATOR_SHARED}`) is "
            + ("more than 100 on each" if amount % shared == 0 else "no equal share of each"),
            f"Ask for a multiple of {count} `{name}`, at most {format_quantity(100 * shared)} "
            f"(100 on each of the {count} GPUs), or change `{KOORDINATOR_SHARED}`.",
        )


def _refused_percentage(template: PodTemplate, name: str, what: str, fix: str) -> Problem:
    found = gpu_limit_pos(template, name)
    pos = found[1] if found is not None else template.document.kind_pos
    return Problem.at(
        template.document,
        pos,
        f"the pod's {what}: koord-scheduler refuses the request and the pod stays Pending",
        fix,
    )


_RESOURCES_KEY = "resources"
_SECTIONS = ("limits", "requests")
_MISPLACED_SECTIONS = {"limits", "requests", "limit", "request"}
_POD_LEVEL_ALLOWED = ("cpu", "memory")


def misplaced_resources_key(ctx: CheckContext) -> Iterator[Problem]:
    """Resource blocks written where the API ignores them: the GPU request disappears."""
    for _, template in ctx.pod_templates():
        yield from _pod_level_resources(template)
        for container in template.containers:
            yield from _misplaced_in_container(template, container)


def _misplaced_in_container(template: PodTemplate, container: Container) -> Iterator[Problem]:
    node, document = container.node, template.document
    for key in node:
        key_text = str(key)
        if key_text in _MISPLACED_SECTIONS:
            section = key_text if key_text.endswith("s") else f"{key_text}s"
            yield Problem.at(
                document,
                node.pos_of_key(key),
                f"container `{container.name}` has `{key_text}:` at container level, where "
                f"the API ignores it; it belongs under `resources.{section}`",
                f"Move it to `resources:` as `{section}:`.",
            )
        elif (
            key_text != _RESOURCES_KEY
            and key_text not in container.own_fields
            and spelt_like(key_text, (_RESOURCES_KEY,))
        ):
            yield Problem.at(
                document,
                node.pos_of_key(key),
                f"container `{container.name}` has `{key_text}:`, which the API ignores; "
                f"did you mean `resources:`?",
                "Rename the key to `resources:`.",
                edits=_rename_key(node, key_text, _RESOURCES_KEY),
            )
    resources = container.resources.node
    if resources is None:
        return
    if container.role is ContainerRole.EPHEMERAL:
        yield Problem.at(
            document,
            container.resources.pos,
            f"ephemeral container `{container.name}` sets `resources:`, which ephemeral "
            f"containers may not have; the API rejects it",
            "Remove `resources:` from the ephemeral container.",
        )
    for key, value in resources.items():
        key_text = str(key)
        if key_text in _SECTIONS:
            continue
        if key_text == "claims":
            yield from _gpu_in_claims(template, container, value, resources)
        elif key_text in ("limit", "request") or spelt_like(key_text, _SECTIONS):
            import difflib  # only for a near miss: most runs never get here

            wanted = difflib.get_close_matches(key_text, _SECTIONS, n=1, cutoff=0.0)[0]
            yield Problem.at(
                document,
                resources.pos_of_key(key),
                f"container `{container.name}` has `resources.{key_text}`, which the API "
                f"ignores; did you mean `resources.{wanted}`?",
                f"Rename the key to `{wanted}:`.",
                edits=_rename_key(resources, key_text, wanted),
            )
        elif looks_like_accelerator(key_text) or is_extended_resource(key_text):
            yield Problem.at(
                document,
                resources.pos_of_key(key),
                f"container `{container.name}` has `{key_text}` directly under `resources:`, "
                f"where the API ignores it; it belongs under `resources.limits`",
                f"Move it to `resources.limits.{key_text}`.",
            )


def _gpu_in_claims(
    template: PodTemplate, container: Container, claims: object, resources: YMap
) -> Iterator[Problem]:
    entries: list[YMap] = [claims] if isinstance(claims, YMap) else []
    if isinstance(claims, YSeq):
        entries = [item for item in claims if isinstance(item, YMap)]
    for entry in entries:
        for key, value in entry.items():
            # `- name: nvidia.com/gpu`: a claim name is a DNS label, so a `/` means a resource
            # name was meant (a claim named plain `gpu` is legitimate DRA)
            if key == "name" and "/" in str(value) and looks_like_accelerator(str(value)):
                resource, pos = str(value), entry.pos_of_value(key)
            elif looks_like_accelerator(str(key)):
                resource, pos = str(key), entry.pos_of_key(key)
            else:
                continue
            yield Problem.at(
                template.document,
                pos,
                f"container `{container.name}` lists `{resource}` under `resources.claims`, "
                f"which names DRA ResourceClaims, not devices: no GPU is requested",
                f"Move `{resource}` to `resources.limits`.",
            )


def _pod_level_resources(template: PodTemplate) -> Iterator[Problem]:
    node = template.spec.get(_RESOURCES_KEY)
    if not isinstance(node, YMap):
        return
    for section in _SECTIONS:
        amounts = node.get(section)
        if not isinstance(amounts, YMap):
            continue
        for key in amounts:
            if looks_like_accelerator(str(key)) or is_extended_resource(str(key)):
                yield Problem.at(
                    template.document,
                    amounts.pos_of_key(key),
                    f"`{key}` in pod-level `spec.resources.{section}`: pod-level resources "
                    f"accept only cpu, memory and hugepages, so no GPU is requested",
                    f"Move `{key}` to the `resources.limits` of the container that uses it.",
                )


def _rename_resource(quantity: Quantity, suggestion: str | None) -> tuple[Edit, ...]:
    """The rename of a near-miss: the same vendor's name, misspelled (`nvidia.com/gpus`).

    A suggestion that only names a vendor's default device is a guess, never applied.
    """
    if suggestion is None or not _near_miss(quantity.resource, suggestion):
        return ()
    from gpulint.edits import Rename  # only a finding with a fix writes one

    return (Rename(quantity.key_pos, quantity.resource, suggestion),)


def _near_miss(name: str, suggestion: str) -> bool:
    domain, _, rest = name.lower().partition("/")
    wanted_domain, _, wanted_rest = suggestion.partition("/")
    if domain != wanted_domain or not rest:
        return False
    import difflib  # only for a near miss: most runs never get here

    return difflib.SequenceMatcher(None, rest, wanted_rest).ratio() >= 0.75


def _rename_key(node: YMap, key: str, wanted: str) -> tuple[Edit, ...]:
    """Rename `key` of `node` to `wanted`, unless `wanted` is there already (no safe choice)."""
    if wanted in node:
        return ()
    from gpulint.edits import Rename

    return (Rename(node.pos_of_key(key), key, wanted),)


def _set_to(quantity: Quantity, written: str | None) -> tuple[Edit, ...]:
    """Write `written` where `quantity`'s value is written."""
    old = _written(quantity)
    if old is None or written is None:
        return ()
    from gpulint.edits import Rename

    return (Rename(quantity.value_pos, old, written),)


def _written(quantity: Quantity) -> str | None:
    """The scalar text of a quantity's value (None for a mapping, a list, a bool or null)."""
    raw = quantity.raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return None
    return str(raw)
