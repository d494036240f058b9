"""Machine-readable output: `{"version": 1, "findings": [...], "summary": {...}}`."""

from __future__ import annotations

import json
import textwrap

from gpulint.findings import Finding, LintResult

JSON_VERSION = 1


def finding_to_dict(finding: Finding) -> dict[str, object]:
    """One finding as the JSON object the format documents."""
    ref = finding.object
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "message": finding.message,
        "fix": finding.fix,
        "object": None
        if ref is None
        else {
            "apiVersion": ref.api_version,
            "kind": ref.kind,
            "namespace": ref.namespace,
            "name": ref.name,
        },
        "source": finding.source,
    }


def format_json(result: LintResult) -> str:
    """The whole run as one JSON document."""
    document = {
        "version": JSON_VERSION,
        "findings": [],
        "summary": {
            "files": result.files,
            "objects": result.objects,
            "findings": len(result.findings),
        },
        "notes": list(result.notes),
    }
    text = json.dumps(document, indent=2) + "\n"
    if not result.findings:
        return text
    # Encoded one finding at a time: json.dumps with indent builds the whole document from
    # small pieces, several times the size of the text for a run with thousands of findings.
    findings = ",\n".join(
        textwrap.indent(json.dumps(finding_to_dict(f), indent=2), _FINDING_INDENT)
        for f in result.findings
    )
    return text.replace('"findings": [],', f'"findings": [\n{findings}\n  ],', 1)


_FINDING_INDENT = " " * 4
