"""GPU000 invalid-manifest and GPU005 unrendered-helm-template: what the loader found."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.model import IssueKind
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
    """Syntax errors, non-object documents, duplicate keys, unnamed objects, non-UTF-8 files."""
    for issue in ctx.issues:
        if issue.kind is IssueKind.UNRENDERED_TEMPLATE:
            continue
        yield Problem(issue.file, issue.pos, issue.message, _FIXES[issue.kind], issue.document)


def unrendered_helm_template(ctx: CheckContext) -> Iterator[Problem]:
    """A file that contains `{{` and does not parse is a Helm template, not a manifest."""
    for issue in ctx.issues:
        if issue.kind is IssueKind.UNRENDERED_TEMPLATE:
            yield Problem(issue.file, issue.pos, issue.message)


CHECKS = {"GPU000": invalid_manifest, "GPU005": unrendered_helm_template}
