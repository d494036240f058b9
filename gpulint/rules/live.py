"""Rules fed by a live cluster: what the API server itself refused (--server-dry-run)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.rules.base import CheckContext, Problem


def server_rejected(context: CheckContext) -> Iterator[Problem]:
    """GPU900: the API server refused the object's dry-run; report its own words."""
    for rejection in context.rejections:
        document = rejection.document
        yield Problem.at(
            document,
            document.kind_pos,
            f"the API server refused {document.ref} (dry-run {rejection.operation}: "
            f"{rejection.status} {rejection.reason}): {rejection.message}",
            names_workload=True,
        )
