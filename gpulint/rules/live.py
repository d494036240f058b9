"""Rules fed by a live cluster: what the API server itself refused (--server-dry-run)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.rules.base import Check, CheckContext, CorpusCheck, Problem, needs_nothing


def server_rejected(context: CheckContext) -> Iterator[Problem]:
    """GPU900: the API server refused the object's dry-run; report its own words."""
    for rejection in context.rejections:
        document = rejection.document
        yield Problem.at(
            document,
            document.kind_pos,
            f"the API server refused {document.ref} (dry-run {rejection.operation}: "
            f"{rejection.status} {rejection.reason}): {rejection.message}",
        )


CHECKS: dict[str, Check | CorpusCheck] = {"GPU900": CorpusCheck(server_rejected, needs_nothing)}
#: Codes only a live cluster produces: no fixture file can prove them, the kmock-backed tests
#: (tests/test_live_dryrun.py) do.
LIVE_CODES = frozenset(CHECKS)
