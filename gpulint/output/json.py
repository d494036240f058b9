"""Machine-readable output: `{"version": 1, "findings": [...], "summary": {...}}`."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator

from gpulint.findings import Finding, LintResult
from gpulint.output.escape import MAX_NAME, cut

JSON_VERSION = 1


def finding_to_dict(finding: Finding) -> dict[str, object]:
    """One finding as the JSON object the format documents; manifest text cut to a bound."""
    ref = finding.object
    found: dict[str, object] = {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "message": cut(finding.message),
        "fix": None if finding.fix is None else cut(finding.fix),
        "autofix": finding.applicability,  # "safe" or "unsafe": what --fix may apply
        "object": None
        if ref is None
        else {
            "apiVersion": cut(ref.api_version, MAX_NAME),
            "kind": cut(ref.kind, MAX_NAME),
            "namespace": None if ref.namespace is None else cut(ref.namespace, MAX_NAME),
            "name": cut(ref.name, MAX_NAME),
        },
        "source": None if finding.source is None else cut(finding.source, MAX_NAME),
        "rendered": None
        if finding.rendered is None
        else {
            "of": finding.rendered.of,
            "line": finding.rendered.line,
            "column": finding.rendered.column,
        },
    }
    if finding.clusters:  # only in a run against named clusters (gpulint.clusters)
        found["clusters"] = list(finding.clusters)
    return found


def format_json(result: LintResult) -> Iterator[str]:
    """The whole run as one JSON document, in pieces of one finding each."""
    # Encoded one finding at a time and never joined: a run with thousands of findings is
    # written out in memory for one.
    yield f'{{\n  "version": {JSON_VERSION},\n  "findings": ['
    separator = "\n"
    for finding in result.findings:
        yield separator + textwrap.indent(json.dumps(finding_to_dict(finding), indent=2), "    ")
        separator = ",\n"
    tail = {
        "summary": {
            "files": result.files,
            "objects": result.objects,
            "findings": len(result.findings),
            "unchecked": result.unchecked,
        },
        "notes": [cut(note) for note in result.notes],
    }
    closing = "\n  ]" if separator == ",\n" else "]"
    # The rest of the document is json.dumps' own text of the tail, indented one level.
    rest = json.dumps(tail, indent=2)[1:]
    yield f"{closing},{rest}\n"
