"""SARIF 2.1.0, the format GitHub code scanning and other review tools read.

One run, `tool.driver.rules` holding the whole catalogue (so `ruleIndex` is the same in every
report), results at the exact region, and fingerprints that survive unrelated edits.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from gpulint import __version__
from gpulint.catalogue import RuleInfo
from gpulint.findings import Finding, LintResult
from gpulint.model import Severity
from gpulint.output.catalogue import PROJECT_URL, rule_help_uri
from gpulint.output.escape import MAX_NAME, cut
from gpulint.output.options import DEFAULT_OPTIONS, OutputOptions, repository_path

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
#: The uriBaseId every artifact location is relative to: the repository root.
SRCROOT = "SRCROOT"
#: partialFingerprints key; bump the version if the identity below ever changes.
FINGERPRINT_KEY = "gpulint/v1"

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}

# Positions inside messages (GPU000: "written twice (lines 4 and 6)") move with every edit
# above them.
_POSITION = r"\d+(?::\d+)?"
_POSITION_IN_MESSAGE = re.compile(rf"\b(lines?|columns?) {_POSITION}(?:(?:, | and ){_POSITION})*")


def sarif_rule(info: RuleInfo) -> dict[str, Any]:
    """One `tool.driver.rules[]` entry: the catalogue entry, with its help text and address."""
    markdown = (
        f"{info.why}\n\n**Example**\n\n```yaml\n{info.example}\n```\n\n"
        f"**Use instead**\n\n```yaml\n{info.fixed}\n```\n\n**Fix:** {info.fix}"
    )
    return {
        "id": info.code,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.why},
        "help": {"text": f"{info.why}\n\nFix: {info.fix}", "markdown": markdown},
        "helpUri": rule_help_uri(info.code),
        "defaultConfiguration": {"level": LEVELS[info.severity], "enabled": info.enabled},
        "properties": {"tags": ["kubernetes", "gpu"]},
    }


def finding_identity(uri: str, finding: Finding) -> str:
    """What identifies a finding across edits: code, file, object and message, never its line."""
    message = _POSITION_IN_MESSAGE.sub(r"\1", finding.message)
    return "\0".join((finding.code, uri, str(finding.object or ""), message))


def fingerprint(identity: str, occurrence: int) -> str:
    """The stable hash of a finding; `occurrence` (1, 2 ...) tells identical findings apart."""
    return hashlib.sha256(f"{identity}\0{occurrence}".encode()).hexdigest()


def _artifact(uri: str) -> dict[str, str]:
    if uri.startswith("/"):
        return {"uri": "file://" + quote(uri)}
    return {"uri": quote(uri), "uriBaseId": SRCROOT}


def sarif_result(finding: Finding, uri: str, rule_index: int, stable: str) -> dict[str, Any]:
    """One `results[]` entry for `finding` in the file at repository-relative `uri`."""
    # JSON escapes any character; manifest text is only cut to a bounded length.
    message = cut(finding.message) + (f"\nFix: {cut(finding.fix)}" if finding.fix else "")
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": _artifact(uri),
            "region": {"startLine": finding.line, "startColumn": finding.column},
        }
    }
    if finding.object is not None:
        location["logicalLocations"] = [
            {"fullyQualifiedName": cut(str(finding.object), MAX_NAME), "kind": "resource"}
        ]
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVELS[finding.severity],
        "message": {"text": message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: stable},
    }
    related: list[dict[str, Any]] = []
    if finding.source:
        # Helm's `# Source:` path is relative to the chart's parent directory, which the
        # rendered output does not name: a relative reference with no base.
        related.append(
            {
                "id": len(related) + 1,
                "message": {"text": "rendered from this Helm template"},
                "physicalLocation": {
                    "artifactLocation": {"uri": quote(cut(finding.source, MAX_NAME))}
                },
            }
        )
    if finding.rendered is not None:
        # The rendered stream is no file in the repository: the position is told, not linked.
        at = finding.rendered
        related.append(
            {
                "id": len(related) + 1,
                "message": {
                    "text": f"rendered position: line {at.line}, column {at.column} of {at.of}"
                },
                "properties": {"rendered": {"of": at.of, "line": at.line, "column": at.column}},
            }
        )
    if related:
        result["relatedLocations"] = related
    if finding.clusters:  # the named clusters it holds in, when not in all (gpulint.clusters)
        result["properties"] = {"clusters": list(finding.clusters)}
    return result


def format_sarif(
    result: LintResult, rules: Sequence[RuleInfo], options: OutputOptions = DEFAULT_OPTIONS
) -> str:
    """The run as one SARIF log; `rules` is the whole catalogue, in code order."""
    index = {info.code: i for i, info in enumerate(rules)}
    seen: Counter[str] = Counter()
    results = []
    for finding in result.findings:
        uri = repository_path(finding.path, options)
        identity = finding_identity(uri, finding)
        seen[identity] += 1
        stable = fingerprint(identity, seen[identity])
        results.append(sarif_result(finding, uri, index[finding.code], stable))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "gpulint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": PROJECT_URL,
                "rules": [sarif_rule(info) for info in rules],
            }
        },
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "note", "message": {"text": cut(note)}} for note in result.notes
                ],
            }
        ],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if options.root is not None:
        root_uri = options.root.as_uri().rstrip("/") + "/"
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root_uri}}
    log = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(log, indent=2) + "\n"
