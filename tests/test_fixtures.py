"""Every fixture file, checked end to end: the exact (code, line, column) set it expects, and
the message and fix text of each finding, against a snapshot.

A fixture runs with the codes it expects, the codes its family (the fixtures of its directory)
expects, and every rule whose default severity is error: a new warning of another family
leaves it alone, while a false error anywhere shows. Snapshots live under tests/snapshots/,
one per fixture; `pytest tests/test_fixtures.py --update-snapshots` rewrites them (and
removes those of fixtures that are gone), to be reviewed in the diff.
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


def snapshot_text(path: Path, select: list[str], findings: list[dict]) -> str:
    """The findings' positions, codes, severities, messages and fix texts, one block each."""
    lines = [f"# gpulint check --select {','.join(select)} {path.relative_to(FIXTURES)}"]
    for f in findings:
        lines.append(f"{f['line']}:{f['column']} {f['code']} [{f['severity']}] {f['message']}")
        lines.extend(f"    {line}" if line else "" for line in f"fix: {f['fix']}".splitlines())
    return "\n".join(lines) + "\n"


def test_selection_keeps_the_fixtures_own_codes_and_every_error() -> None:
    select = selected_codes(FIXTURES / "qos" / "GPU601-besteffort.yaml")
    assert "GPU601" in select and "GPU102" in select  # its own warning, and an error
    assert "GPU501" not in select  # a warning of another family


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path, request: pytest.FixtureRequest) -> None:
    expected = parse_expectations(expectations_text(path))
    extra = fixture_args(path)
    # A fixture that names its config reads it; every other one runs without any.
    isolated = [] if "--config" in extra else ["--isolated"]
    select = selected_codes(path)
    args = ["check", *isolated, "--select", ",".join(select), "--format", "json", *extra]
    result = CliRunner().invoke(main, [*args, str(path)])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    actual = [(f["code"], f["line"], f["column"]) for f in report["findings"]]
    missing, unexpected = unmatched(expected, actual)
    assert not missing and not unexpected, (
        f"missing: {missing}\nunexpected: {unexpected}\nall: {sorted(actual, key=lambda a: a[1])}"
    )

    snapshot = SNAPSHOTS / path.relative_to(FIXTURES).with_suffix(".txt")
    text = snapshot_text(path, select, report["findings"])
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
