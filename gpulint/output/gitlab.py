"""GitLab Code Quality: the JSON array GitLab reads from `artifacts: reports: codequality`.

GitLab reads a subset of the Code Climate issue format (docs.gitlab.com/ci/testing/code_quality,
"Code Quality report format"): `description`, `check_name`, `fingerprint`, `severity` and
`location.path` with `location.lines.begin`. The fingerprint is SARIF's (no line in it), so a
finding that moves with an edit above it is the same issue in the merge request widget.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

from gpulint.findings import LintResult
from gpulint.output.escape import cut
from gpulint.output.options import OutputOptions, repository_path
from gpulint.output.sarif import finding_identity, fingerprint

#: gpulint's severities on GitLab's scale (info, minor, major, critical, blocker): an error
#: leaves the pod Pending, which GitLab ranks above a warning but below a security blocker.
SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


def format_gitlab(result: LintResult, options: OutputOptions) -> Iterator[str]:
    """The findings as a Code Quality report, one issue a finding, written as they come."""
    seen: Counter[str] = Counter()
    yield "["
    separator = "\n  "
    for finding in result.findings:
        path = repository_path(finding.path, options)
        identity = finding_identity(path, finding)
        seen[identity] += 1
        description = f"{finding.code} {finding.name}: {cut(finding.message)}"
        issue = {
            "type": "issue",
            "description": description,
            "check_name": finding.code,
            "fingerprint": fingerprint(identity, seen[identity]),
            "severity": SEVERITIES[finding.severity.label],
            "location": {
                "path": path,
                "lines": {"begin": finding.line},
                "positions": {"begin": {"line": finding.line, "column": finding.column}},
            },
        }
        if finding.fix:
            issue["content"] = {"body": cut(finding.fix)}
        yield separator + json.dumps(issue)
        separator = ",\n  "
    yield "]\n" if separator == "\n  " else "\n]\n"
