"""Every fixture file, checked end to end: the exact (code, line, column) set it expects, and
the message and fix text of each finding, against a snapshot.

A fixture runs with the codes it expects, the codes its family (the fixtures of its directory)
expects, and every rule whose default severity is error: a new warning of another family
leaves it alone, while a false error anywhere shows. Snapshots live under tests/snapshots/,
one per fixture; `pytest tests/test_fixtures.py --update-snapshots` rewrites them (and
removes those of fixtures that are gone), to be reviewed in the diff. A snapshot names its
fixture, not the codes selected: a new rule changes only the snapshots of the fixtures where
it reports.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.model import Severity
from gpulint.rules import registry
from tests.expectations import expectations_text, fixture_args, parse_expectations, unmatched

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
CASES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
UPDATE_COMMAND = "pytest tests/test_fixtures.py --update-snapshots"
#: What a snapshot's header says the fixture runs with (see selected_codes).
SELECTION = "checked with the codes its directory expects and every error rule"


def test_fixture_corpus_is_not_empty() -> None:
    assert len(CASES) >= 10


@functools.cache
def _expected_codes(path: Path) -> frozenset[str]:
    return frozenset(e.code for e in parse_expectations(expectations_text(path)))


def selected_codes(path: Path) -> list[str]:
    """What the fixture runs: its codes, its family's, and every error-severity rule."""
    family = {
        code for case in CASES if case.parent == path.parent for code in _expected_codes(case)
    }
    errors = {r.code for r in registry() if r.severity is Severity.ERROR}
    return sorted(family | errors)


def snapshot_text(path: Path, findings: list[dict]) -> str:
    """The findings' positions, codes, severities, messages and fix texts, one block each,
    under a header naming the fixture (and not the rules selected, which every new rule of
    severity error would change)."""
    lines = [f"# {path.relative_to(FIXTURES).as_posix()}: {SELECTION}"]
    for f in findings:
        lines.append(f"{f['line']}:{f['column']} {f['code']} [{f['severity']}] {f['message']}")
        lines.extend(f"    {line}" if line else "" for line in f"fix: {f['fix']}".splitlines())
    return "\n".join(lines) + "\n"


def test_selection_keeps_the_fixtures_own_codes_and_every_error() -> None:
    select = selected_codes(FIXTURES / "qos" / "GPU601-besteffort.yaml")
    assert "GPU601" in select and "GPU102" in select  # its own warning, and an error
    assert "GPU501" not in select  # a warning of another family


def fixture_findings(path: Path) -> list[dict]:
    """The findings `gpulint check --format json` reports on the fixture, run as it asks."""
    extra = fixture_args(path)
    # A fixture that names its config reads it; every other one runs without any.
    isolated = [] if "--config" in extra else ["--isolated"]
    select = selected_codes(path)
    args = ["check", *isolated, "--select", ",".join(select), "--format", "json", *extra]
    result = CliRunner().invoke(main, [*args, str(path)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path, request: pytest.FixtureRequest) -> None:
    expected = parse_expectations(expectations_text(path))
    findings = fixture_findings(path)
    actual = [(f["code"], f["line"], f["column"]) for f in findings]
    missing, unexpected = unmatched(expected, actual)
    assert not missing and not unexpected, (
        f"missing: {missing}\nunexpected: {unexpected}\nall: {sorted(actual, key=lambda a: a[1])}"
    )

    snapshot = SNAPSHOTS / path.relative_to(FIXTURES).with_suffix(".txt")
    text = snapshot_text(path, findings)
    if request.config.getoption("--update-snapshots"):
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(text, encoding="utf-8")
    assert snapshot.is_file(), f"no snapshot {snapshot}: run `{UPDATE_COMMAND}`"
    assert snapshot.read_text(encoding="utf-8") == text, (
        f"{snapshot} differs: run `{UPDATE_COMMAND}` and review the diff"
    )


def test_every_snapshot_has_its_fixture(request: pytest.FixtureRequest) -> None:
    # A fixture renamed or removed leaves its snapshot behind; the update command removes it.
    wanted = {SNAPSHOTS / p.relative_to(FIXTURES).with_suffix(".txt") for p in CASES}
    orphans = sorted(p for p in SNAPSHOTS.rglob("*.txt") if p not in wanted)
    if request.config.getoption("--update-snapshots"):
        for orphan in orphans:
            orphan.unlink()
        orphans = []
    assert orphans == [], f"snapshots without a fixture: run `{UPDATE_COMMAND}`"


#: A rule of severity error, which every fixture runs, reporting each DaemonSet: a stand-in
#: for the next rule someone adds.
THROWAWAY_RECORD = """\
code: GPU899
name: throwaway-daemonset
severity: error
enabled: true
needs_profile: false
scope: file
judges: [DaemonSet]
check: throwaway_checks:every_daemonset
summary: Reports every DaemonSet.
why: A rule added by a test.
example: "kind: DaemonSet"
fixed: "kind: Deployment"
fix: Nothing to fix.
"""
THROWAWAY_CHECKS = """\
from gpulint.rules.base import Problem


def every_daemonset(ctx):
    for workload in ctx.workloads:
        if workload.kind == "DaemonSet":
            yield Problem.at(workload.document, workload.document.kind_pos, "a DaemonSet")
"""


def test_a_new_rule_changes_only_the_snapshots_of_fixtures_where_it_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpulint._registry
    from gpulint.catalogue import read_record

    (tmp_path / "GPU899.yaml").write_text(THROWAWAY_RECORD, encoding="utf-8")
    (tmp_path / "throwaway_checks.py").write_text(THROWAWAY_CHECKS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    rule = read_record(tmp_path / "GPU899.yaml").rule
    assert rule.code not in {r.code for r in registry()}
    monkeypatch.setattr(gpulint._registry, "RULES", (*gpulint._registry.RULES, rule))

    reported, changed = set(), set()
    for path in CASES:
        assert "GPU899" in selected_codes(path)
        findings = fixture_findings(path)
        if any(f["code"] == "GPU899" for f in findings):
            reported.add(path)
        snapshot = SNAPSHOTS / path.relative_to(FIXTURES).with_suffix(".txt")
        if snapshot.read_text(encoding="utf-8") != snapshot_text(path, findings):
            changed.add(path)
        # Without the new rule's findings, every snapshot is what it was.
        others = [f for f in findings if f["code"] != "GPU899"]
        assert snapshot.read_text(encoding="utf-8") == snapshot_text(path, others), path
    assert reported and len(reported) < len(CASES) / 4
    assert changed == reported
