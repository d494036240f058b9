"""Every fixture file, checked end to end: the exact set of (code, line, column) it expects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from tests.expectations import expectations_text, fixture_args, parse_expectations, unmatched

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
CASES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def test_fixture_corpus_is_not_empty() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path) -> None:
    expected = parse_expectations(expectations_text(path))
    extra = fixture_args(path)
    # A fixture that names its config reads it; every other one runs without any.
    isolated = [] if "--config" in extra else ["--isolated"]
    args = ["check", *isolated, "--select", "ALL", "--format", "json", *extra, str(path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    actual = [(f["code"], f["line"], f["column"]) for f in report["findings"]]
    missing, unexpected = unmatched(expected, actual)
    assert not missing and not unexpected, (
        f"missing: {missing}\nunexpected: {unexpected}\nall: {sorted(actual, key=lambda a: a[1])}"
    )
