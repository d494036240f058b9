"""Container resource mistakes that need no cluster knowledge: GPU001-GPU004."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator
from decimal import ROUND_CEILING

from gpulint.accelerators import (
    MIG_RESOURCE,
    is_extended_resource,
    is_known_accelerator,
    looks_like_accelerator,
    suggest_resource,
)
from gpulint.edits import Edit, Rename
from gpulint.model import Container, ContainerRole, PodTemplate, Quantity
from gpulint.quantity import format_quantity, is_whole
from gpulint.rules.base import CheckContext, Problem
from gpulint.yamltree import YMap, YSeq


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
    """A resource key that reads as an accelerator but is no name a device plugin advertises.

    With a cluster profile, "advertised" means by some pool of that cluster.
    """
    advertised = _advertised_accelerators(ctx)
    for template, container in _containers(ctx):
        for section, quantity in _quantities(container):
            name = quantity.resource
            if not looks_like_accelerator(name):
                continue
            if advertised is not None:
                if name not in advertised:
                    yield _not_advertised(template, container, section, quantity, advertised)
                continue
            if is_known_accelerator(name):
                continue
            suggestion = suggest_resource(name)
            hint = f"; did you mean `{suggestion}`?" if suggestion else ""
            yield Problem.at(
                template.document,
                quantity.key_pos,
                f"container `{container.name}` {section} `{name}`, which no device plugin "
                f"advertises: the pod can never be scheduled{hint}",
                f"Rename the key to `{suggestion}`." if suggestion else None,
                edits=_rename_resource(quantity, suggestion),
            )


def _advertised_accelerators(ctx: CheckContext) -> frozenset[str] | None:
    """The accelerator names the profile's pools advertise; None without pools to ask."""
    if ctx.profile is None or not ctx.profile.pools:
        return None
    return frozenset(n for n in ctx.profile.advertised_resources() if looks_like_accelerator(n))


def _not_advertised(
    template: PodTemplate,
    container: Container,
    section: str,
    quantity: Quantity,
    advertised: frozenset[str],
) -> Problem:
    name = quantity.resource
    suggestion = suggest_resource(name, sorted(advertised))
    if MIG_RESOURCE.match(name):
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
    return Problem.at(
        template.document,
        quantity.key_pos,
        f"container `{container.name}` {section} `{name}`, {what} ({offered}): the pod can "
        f"never be scheduled{hint}",
        f"Rename the key to `{suggestion}`." if suggestion else None,
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
            if limit is None:
                yield Problem.at(
                    template.document,
                    request.key_pos,
                    f"container `{container.name}` requests `{name}` without a limit; the API "
                    f"rejects it (Limit must be set for non overcommitable resources)",
                    f"Add `limits: {{{name}: {request.shown}}}` or replace the request with "
                    f"that limit (the request defaults to the limit).",
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
        elif key_text != _RESOURCES_KEY and _close_to(key_text, (_RESOURCES_KEY,)):
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
        elif key_text in ("limit", "request") or _close_to(key_text, _SECTIONS):
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
    return (Rename(quantity.key_pos, quantity.resource, suggestion),)


def _near_miss(name: str, suggestion: str) -> bool:
    domain, _, rest = name.lower().partition("/")
    wanted_domain, _, wanted_rest = suggestion.partition("/")
    if domain != wanted_domain or not rest:
        return False
    return difflib.SequenceMatcher(None, rest, wanted_rest).ratio() >= 0.75


def _rename_key(node: YMap, key: str, wanted: str) -> tuple[Edit, ...]:
    """Rename `key` of `node` to `wanted`, unless `wanted` is there already (no safe choice)."""
    if wanted in node:
        return ()
    return (Rename(node.pos_of_key(key), key, wanted),)


def _set_to(quantity: Quantity, written: str | None) -> tuple[Edit, ...]:
    """Write `written` where `quantity`'s value is written."""
    old = _written(quantity)
    if old is None or written is None:
        return ()
    return (Rename(quantity.value_pos, old, written),)


def _written(quantity: Quantity) -> str | None:
    """The scalar text of a quantity's value (None for a mapping, a list, a bool or null)."""
    raw = quantity.raw
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return None
    return str(raw)


# Asked for every key of every container; the same few keys repeat across all manifests.
@functools.lru_cache(maxsize=4096)
def _close_to(word: str, targets: tuple[str, ...]) -> bool:
    lower = word.lower()
    return lower in targets or bool(difflib.get_close_matches(lower, targets, n=1, cutoff=0.8))
