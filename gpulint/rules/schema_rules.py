"""GPU010 api-version-not-served, GPU011 deprecated-api-version and GPU012 schema-violation:
what the API server refuses of an object before any scheduling, judged against the Kubernetes
release the run targets (gpulint.validation.target)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpulint.accelerators import is_extended_resource, looks_like_accelerator
from gpulint.fields import spelt_like
from gpulint.model import Document, Severity, drawn
from gpulint.rules.base import CheckContext, Problem
from gpulint.shapes import tool_pod_template
from gpulint.validation.apiversions import lifecycle, shown
from gpulint.validation.target import Target, target_of
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    # Imported where used: a file with no CRD anywhere and only valid objects needs neither.
    from gpulint.validation.crds import CrdKinds, CrdVersion
    from gpulint.validation.problems import FieldProblem


class Serving(NamedTuple):
    """Whether the target serves an object's API version, and what to say when it does not."""

    served: bool
    message: str
    fix: str
    crd: CrdVersion | None = None
    # A warning when the target is only the oldest release the API server can run and a newer
    # one serves the version.
    severity: Severity | None = None


def api_version_not_served(ctx: CheckContext) -> Iterator[Problem]:
    """Objects in an API version the target release (or the kind's CRD) does not serve."""
    target, crds = target_of(ctx), _crds(ctx)
    for document in ctx.documents:
        serving = _serving(document, target, crds)
        if serving is not None and not serving.served:
            pos = document.obj.pos_of_value("apiVersion")
            yield Problem.at(
                document,
                pos,
                serving.message,
                serving.fix,
                severity=serving.severity,
                names_workload=True,
            )


def deprecated_api_version(ctx: CheckContext) -> Iterator[Problem]:
    """Objects in an API version that is still served but deprecated, with its end."""
    target, crds = target_of(ctx), _crds(ctx)
    for document in ctx.documents:
        serving = _serving(document, target, crds)
        if serving is not None and serving.served and serving.message:
            pos = document.obj.pos_of_value("apiVersion")
            yield Problem.at(document, pos, serving.message, serving.fix, names_workload=True)


def _serving(document: Document, target: Target, crds: CrdKinds | None) -> Serving | None:
    """None: served and not deprecated, or a kind gpulint knows nothing of."""
    api_version, kind = document.ref.api_version, document.ref.kind
    if not api_version or not kind:
        return None
    gone = lifecycle(api_version, kind)
    if gone is not None:
        instead = f"use `{gone.replacement}`" if gone.replacement else gone.note
        fix = (
            f"Change `apiVersion:` to `{gone.replacement}` and adapt what that version changed."
            if gone.replacement
            else f"Remove the object: {gone.note}."
        )
        if target.release >= gone.removed:
            return Serving(
                False,
                f"{kind} `{api_version}` is not served by {target.name} (removed in "
                f"{shown(gone.removed)}): the API server refuses the object; {instead}",
                fix,
            )
        if gone.deprecated is None or target.release >= gone.deprecated:
            since = f"deprecated since {shown(gone.deprecated)}, " if gone.deprecated else ""
            return Serving(
                True,
                f"{kind} `{api_version}` is {since}removed in Kubernetes "
                f"{shown(gone.removed)}: the API server refuses it from then on; {instead}",
                fix,
            )
        return None
    group = api_version.rpartition("/")[0]
    defined = crds.kinds.get((group, kind)) if crds is not None else None
    if defined is not None:
        return _crd_serving(api_version, kind, crds, defined)
    return _builtin_serving(api_version, kind, group, target)


def _crd_serving(
    api_version: str, kind: str, crds: CrdKinds, defined: tuple[str, ...]
) -> Serving | None:
    version = crds.versions.get((api_version, kind))
    if version is None or not version.served:
        group = api_version.rpartition("/")[0]
        served = [v for v in defined if crds.versions[(f"{group}/{v}", kind)].served]
        crd = version.crd if version else next(iter(_crd_names(crds, group, kind)), "")
        where = ", ".join(f"`{group}/{v}`" for v in served) or "no version"
        return Serving(
            False,
            f"{kind} `{api_version}` is not served by its CustomResourceDefinition `{crd}` "
            f"(it serves {where}): the API server refuses the object",
            f"Write the object in a version the CRD serves ({where}).",
            version,
        )
    if version.deprecated:
        said = version.warning or f"{kind} `{api_version}` is deprecated"
        return Serving(
            True,
            f"{said} (CustomResourceDefinition `{version.crd}`)",
            "Move to a version the CRD does not deprecate.",
            version,
        )
    return Serving(True, "", "", version)


def _crd_names(crds: CrdKinds, group: str, kind: str) -> Iterator[str]:
    for (api_version, defined_kind), version in crds.versions.items():
        if defined_kind == kind and api_version.startswith(f"{group}/"):
            yield version.crd


def _builtin_serving(api_version: str, kind: str, group: str, target: Target) -> Serving | None:
    schemas = _release_schemas(target)
    if schemas is None or group not in schemas.groups:
        return None  # a custom resource whose CRD is not among the inputs: not guessed at
    if schemas.definition(api_version, kind) is not None:
        return None
    if target.upper is not None:
        newer = _release_schemas(Target(target.upper, target.source))
        if newer is not None and newer.definition(api_version, kind) is not None:
            return Serving(
                False,
                f"{kind} `{api_version}` is not served by {target.name}, the oldest release "
                f"the API server can run ({target.source}); {shown(newer.release)} serves it: "
                "the API server refuses the object unless it runs a release that serves it",
                f"State the cluster's version (`kubernetesVersion:`), or write the object in "
                f"a version {target.name} serves.",
                severity=Severity.WARNING,
            )
    served = schemas.served_versions(group, kind)
    if served:
        where = ", ".join(f"`{v}`" for v in served)
        return Serving(
            False,
            f"{kind} `{api_version}` is not served by {target.name}, which has {kind} only in "
            f"{where}: the API server refuses the object",
            f"Change `apiVersion:` to {where.split(', ')[-1]}.",
        )
    from gpulint.validation.problems import closest

    known = sorted({k for v, k in schemas.kinds if v.rpartition("/")[0] == group})
    guess = closest(kind, known)
    hint = f" (did you mean `{guess}`?)" if guess else ""
    api = f"API group `{group}`" if group else "the core API (`v1`)"
    return Serving(
        False,
        f"{target.name} has no kind `{kind}` in {api}{hint}: the API server refuses the object",
        f"Write `kind: {guess}`." if guess else "Use a kind the API group serves.",
    )


def _release_schemas(target: Target) -> Any:
    """The installed schemas of the target release; None without the extra, or for a target
    outside the releases installed (older: none apply; newer: kinds it added are unknown)."""
    from gpulint.validation import kube

    if not kube.available():
        return None
    installed = kube.releases()
    if target.release < installed[0] or target.release > installed[-1]:
        return None
    version = kube.schema_release(target.release)
    return kube.release_schemas(version) if version is not None else None


#: What an unknown field's message says of it in an object a Helm chart renders.
_HELM_REFUSES = (
    ": the API server refuses the object under strict field validation, which `helm install` "
    "asks for from Helm 4 on (and `kubectl apply` of the rendered manifest by default); Helm 3 "
    "drops the field"
)


def schema_violation(ctx: CheckContext) -> Iterator[Problem]:
    """Fields of an object that its kind's schema (built-in or from a CRD among the inputs)
    does not define, values of the wrong type or not among those allowed, required fields
    missing: one finding each."""
    from gpulint.validation import kube

    if not kube.available():
        return  # the run's notes say so once
    target, crds = target_of(ctx), _crds(ctx)
    version = kube.schema_release(target.release)
    schemas = kube.release_schemas(version) if version is not None else None
    newer = schemas is not None and target.release > schemas.release
    reported = {issue.pos for issue in ctx.issues}  # GPU000 says what is malformed
    for document in ctx.documents:
        serving = _serving(document, target, crds)
        if serving is not None and not serving.served:
            continue  # GPU010
        if _surely_valid(document, serving, schemas):
            continue
        checked = _validator(document, serving, schemas)
        if checked is None:
            continue
        validator, schema, definitions = checked
        from gpulint.validation.problems import REFUSED_OR_DROPPED, field_problems

        asked, agreed, upper = False, None, None
        for problem in field_problems(validator, document.obj, schema, definitions):
            if problem.pos in reported or _said_by_others(problem, document):
                continue
            if not asked:
                # For a lower bound, what the newest release the server may run finds is an
                # error only when that release finds it too. Asked only of an object with a
                # problem: most have none, and that release's schemas are then not read.
                upper = _upper_schemas(target, schemas)
                asked, agreed = True, _upper_problems(document, serving, upper)
            severity = None
            message = problem.message
            if agreed is not None and (problem.pos, problem.what) not in agreed:
                assert upper is not None
                severity = Severity.WARNING
                message += (
                    f" ({target.name}: the oldest release the API server can run, by "
                    f"{target.source}; {shown(upper.release)} accepts it)"
                )
            if problem.what == "unknown" and tool_pod_template(document.obj) is not None:
                # The tool creates its pods through a client that asks for no strict field
                # validation (Spark's and Flink's fabric8 client): the server drops the field.
                severity = Severity.WARNING
                message = problem.message.removesuffix(REFUSED_OR_DROPPED) + (
                    ": this is a pod template file, whose pods a tool creates without strict "
                    "field validation: the API server drops the field, which then does nothing"
                )
            elif problem.what == "unknown":
                if document.source is not None:
                    # Rendered by Helm: how the chart is installed decides, not `kubectl apply`.
                    message = message.replace(REFUSED_OR_DROPPED, _HELM_REFUSES, 1)
                if newer and serving is None:
                    assert schemas is not None
                    severity = Severity.WARNING
                    message += (
                        f" (checked against the schemas of {shown(schemas.release)}, the newest "
                        f"installed; {target.name} may define it)"
                    )
            yield Problem.at(document, problem.pos, message, problem.fix, severity=severity)


def _upper_schemas(target: Target, schemas: Any) -> Any:
    """The schemas of the newest release a lower-bound target allows, when they differ from
    `schemas`; else None."""
    if target.upper is None or schemas is None:
        return None
    from gpulint.validation import kube

    version = kube.schema_release(target.upper)
    if version is None or version == schemas.release:
        return None
    return kube.release_schemas(version)


def _upper_problems(
    document: Document, serving: Serving | None, upper: Any
) -> set[tuple[Any, str]] | None:
    """(position, what) of each problem the newer release `upper` finds in a built-in object;
    None when there is no such release or it does not serve the object (what the target finds
    stands)."""
    if upper is None or (serving is not None and serving.crd is not None):
        return None
    checked = _validator(document, None, upper)
    if checked is None:
        return None
    validator, schema, definitions = checked
    from gpulint.validation.problems import field_problems

    return {(p.pos, p.what) for p in field_problems(validator, document.obj, schema, definitions)}


def _surely_valid(document: Document, serving: Serving | None, schemas: Any) -> bool:
    """A built-in object that surely has nothing to report: no validator is built for it."""
    if schemas is None or (serving is not None and serving.crd is not None):
        return False
    definition = schemas.definition(document.ref.api_version, document.ref.kind)
    if definition is None:
        return False
    from gpulint.validation.kube import surely_valid

    return surely_valid(document.obj, definition, schemas.reached(definition), _unknown_said)


def _validator(document: Document, serving: Serving | None, schemas: Any) -> Any:
    """(validator, its schema, the definitions it refers to) for the object, or None."""
    if serving is not None and serving.crd is not None:
        crd = serving.crd
        if crd.schema is None:
            return None
        validator = _crd_validator(crd.key, crd.schema)
        return (validator[0], validator[1], None) if validator is not None else None
    if schemas is None:
        return None
    definition = schemas.definition(document.ref.api_version, document.ref.kind)
    if definition is None:
        return None
    from gpulint.validation.kube import DEFINITIONS_URI

    reference = {"$ref": f"{DEFINITIONS_URI}#/$defs/{definition}"}
    return schemas.validator(definition), reference, schemas.definitions(definition)


def _crd_validator(key: tuple[str, int, int, str], openapi: Any) -> tuple[Any, Any] | None:
    return _crd_validators().get(key) or _build_crd_validator(key, openapi)


@functools.cache
def _crd_validators() -> dict[tuple[str, int, int, str], tuple[Any, Any] | None]:
    # A CRD's validator is built once per run: its objects may be in every file.
    return {}


def _build_crd_validator(key: tuple[str, int, int, str], openapi: Any) -> tuple[Any, Any] | None:
    from gpulint.validation.crds import json_schema
    from gpulint.validation.kube import import_jsonschema_rs

    jsonschema_rs = import_jsonschema_rs()
    schema = json_schema(openapi)
    try:
        built: tuple[Any, Any] | None = (jsonschema_rs.validator_for(schema), schema)
    except Exception:  # a pattern or keyword the validator cannot compile: not guessed at
        built = None
    _crd_validators()[key] = built
    return built


def _crds(ctx: CheckContext) -> CrdKinds | None:
    """The CRDs of this file and of every input and context file (knowledge objects), and the
    cluster profile's for the kinds none of those define; None when there is none."""
    profile = ctx.profile
    if (profile is None or not profile.custom_resource_definitions) and not (
        _any_crd(ctx.knowledge) or _any_crd(ctx.documents)
    ):
        return None
    from gpulint.validation.crds import (
        CrdKinds,
        cluster_crds,
        crd_kinds,
        with_cluster_crds,
    )

    known = drawn(ctx.knowledge, crd_kinds)
    if any(d.ref.kind == "CustomResourceDefinition" for d in ctx.documents):
        own = crd_kinds(ctx.documents)
        known = CrdKinds({**known.versions, **own.versions}, {**known.kinds, **own.kinds})
    if profile is None or not profile.custom_resource_definitions:
        return known
    return with_cluster_crds(known, cluster_crds(profile.custom_resource_definitions))


def _any_crd(documents: tuple[Document, ...]) -> bool:
    return any(d.ref.kind == "CustomResourceDefinition" for d in documents)


# GPU004 (misplaced-resources-key) reports these unknown keys with GPU-specific words.
_SECTIONS = ("limits", "requests")
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_CONTAINERS = ("io.k8s.api.core.v1.Container", "io.k8s.api.core.v1.EphemeralContainer")


def _said_by_others(problem: FieldProblem, document: Document) -> bool:
    """GPU000 reports a container's quantities that are not quantities; GPU004 the keys of a
    container and its resources that hide a GPU request (and a claim entry holding one)."""
    what, parent, key = problem.what, problem.parent, problem.key
    if parent == _QUANTITY:
        return problem.path[-2:-1] in (("limits",), ("requests",)) and "resources" in problem.path
    if what == "required" and parent == "io.k8s.api.core.v1.ResourceClaim":
        entry = _node_at(document.obj, problem.path)
        return isinstance(entry, dict) and any(looks_like_accelerator(str(k)) for k in entry)
    return what == "unknown" and _unknown_said(parent, key)


def _unknown_said(parent: str, key: str) -> bool:
    """GPU004 reports the unknown field `key` of the definition `parent`."""
    if parent in _CONTAINERS:
        return key in ("limits", "requests", "limit", "request") or spelt_like(key, ("resources",))
    if parent == "io.k8s.api.core.v1.ResourceRequirements":
        return (
            key in ("limit", "request")
            or spelt_like(key, _SECTIONS)
            or looks_like_accelerator(key)
            or is_extended_resource(key)
        )
    if parent == "io.k8s.api.core.v1.ResourceClaim":
        return looks_like_accelerator(key)
    return False


def _node_at(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        in_list = isinstance(node, list) and isinstance(step, int) and step < len(node)
        if in_list or (isinstance(node, dict) and step in node):
            node = node[step]
        else:
            return None
    return node
