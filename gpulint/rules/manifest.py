"""GPU000 invalid-manifest, GPU005 unrendered-helm-template, GPU008
unsubstituted-env-template and GPU014 unfilled-placeholder: what the loader found."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.accelerators import is_extended_resource
from gpulint.model import IssueKind, Severity
from gpulint.rules.base import CheckContext, Problem

_FIXES = {
    IssueKind.SYNTAX: "Fix the YAML syntax at this position; the rest of the file is not checked.",
    IssueKind.NOT_A_MAPPING: "Every document of a manifest file must be a Kubernetes object.",
    IssueKind.DUPLICATE_KEY: "Keep one of the two keys: the API keeps only the last one.",
    IssueKind.MISSING_NAME: "Add metadata.name (or metadata.generateName).",
    IssueKind.NOT_UTF8: "Save the file as UTF-8.",
    IssueKind.UNREADABLE: "Make the file readable, or exclude it from the check.",
    IssueKind.MALFORMED: "Give the field the type the Kubernetes API defines for it.",
}


def invalid_manifest(ctx: CheckContext) -> Iterator[Problem]:
    """What the API server refuses before any scheduling: unreadable or malformed files and
    fields, and quantities of ordinary resources (cpu, memory...) that are not quantities."""
    for issue in ctx.issues:
        if issue.kind in (
            IssueKind.UNRENDERED_TEMPLATE,
            IssueKind.ENV_TEMPLATE,
            IssueKind.FILL_IN,
            IssueKind.NOT_RENDERED,
        ):
            continue  # notes of their own rules (GPU005, GPU008, GPU014, GPU030)
        # A key written twice is not refused by `kubectl apply`, which keeps the later value
        # (kustomize refuses the file): how the file is applied is not known, so a warning.
        severity = Severity.WARNING if issue.kind is IssueKind.DUPLICATE_KEY else None
        yield Problem(
            issue.file, issue.pos, issue.message, _FIXES[issue.kind], issue.document, severity
        )
    yield from _invalid_quantities(ctx)


def _invalid_quantities(ctx: CheckContext) -> Iterator[Problem]:
    # Extended resources (GPUs) have their own rule, GPU003, with the whole-device test.
    for _, template in ctx.pod_templates():
        for container in template.containers:
            resources = container.resources
            for section, quantities in (
                ("requests", resources.requests),
                ("limits", resources.limits),
            ):
                for quantity in quantities.values():
                    if is_extended_resource(quantity.resource):
                        continue
                    if quantity.amount is None:
                        problem = "is not a valid quantity"
                    elif quantity.amount < 0:
                        problem = "is negative"
                    else:
                        continue
                    yield Problem.at(
                        template.document,
                        quantity.value_pos,
                        f"container `{container.name}` {section} `{quantity.resource}`: "
                        f"`{quantity.shown}` {problem}; the API server rejects the object",
                        "Write a quantity such as `500m` or `2` (cpu) or `512Mi` (memory).",
                    )


def unrendered_helm_template(ctx: CheckContext) -> Iterator[Problem]:
    """A file that contains `{{` and does not parse is a Helm template, not a manifest."""
    for issue in ctx.issues:
        if issue.kind is IssueKind.UNRENDERED_TEMPLATE:
            yield Problem(issue.file, issue.pos, issue.message)


def chart_not_rendered(ctx: CheckContext) -> Iterator[Problem]:
    """A chart or overlay helm or kubectl could not render: one note at its own file."""
    for issue in ctx.issues:
        if issue.kind is IssueKind.NOT_RENDERED:
            yield Problem(issue.file, issue.pos, issue.message, issue.fix)


def unsubstituted_env_template(ctx: CheckContext) -> Iterator[Problem]:
    """A file with `$VAR`/`${VAR}` placeholders where the API needs a value: one note."""
    for issue in ctx.issues:
        if issue.kind is IssueKind.ENV_TEMPLATE:
            yield Problem(issue.file, issue.pos, issue.message)


def unfilled_placeholder(ctx: CheckContext) -> Iterator[Problem]:
    """A sample with `<values to fill in>` where the API needs a value: one note."""
    for issue in ctx.issues:
        if issue.kind is IssueKind.FILL_IN:
            yield Problem(issue.file, issue.pos, issue.message)
