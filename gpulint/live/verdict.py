"""What a server-side dry-run said about one checked object (no `kubernetes` import here).

The engine asks for these before rules run and hands them to the rules in the CheckContext;
rule GPU900 (gpulint.rules.live) reports each one at the object's `kind:` line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpulint.model import Document


@dataclass(frozen=True)
class ServerRejection:
    """The API server refused a dry-run create (or update) of `document`."""

    document: Document
    operation: str  # "create", or "update" when the object already exists
    status: int  # HTTP status: 403 quota/admission, 422 validation, 404 unknown kind ...
    reason: str  # the Status reason: Forbidden, Invalid, NotFound ...
    message: str  # the API's message, on one line


#: Sends every document as a dry-run; the second argument resolves an object's namespace.
DryRun = Callable[[Sequence[Document], Callable[[Document], str]], Sequence[ServerRejection]]
