"""bench/run.py's diagnose rows: their targets and their section of the report."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.bench_scripts import bench_script


@pytest.fixture(scope="module")
def bench_run() -> ModuleType:
    return bench_script("run")


def _row(bench_run: ModuleType, key: str, seconds: float, rss_mb: float) -> object:
    runs = (seconds, seconds * 3, seconds)  # the median is `seconds`
    return bench_run.Row(key, f"(i) {key}", tuple(bench_run.Run(s * 2, rss_mb, 1, s) for s in runs))


def test_diagnose_is_judged_against_json_load_and_its_quarter(bench_run: ModuleType) -> None:
    rows = [
        _row(bench_run, "diagnose-floor", 10.0, 3000),
        _row(bench_run, "diagnose-quarter", 4.0, 800),
        _row(bench_run, "diagnose-half", 10.5, 1600),
        _row(bench_run, "diagnose-whole", 31.0, 4400),
    ]
    targets = bench_run.judge_diagnose(rows)
    assert [(t.measured, t.verdict) for t in targets] == [
        ("3.10x", "FAIL"),
        ("1.47x", "PASS"),
        ("1.94x", "FAIL"),
        ("1.31x", "FAIL"),
    ]
    assert [t.verdict for t in bench_run.judge_diagnose([])] == ["not measured"] * 4


def test_the_diagnose_section_replaces_that_of_a_report(bench_run: ModuleType) -> None:
    report = "# results\n\n## Targets\n\nx\n\n## Diagnose on a large cluster\n\nold\n"
    rows = [_row(bench_run, "diagnose-floor", 10.0, 3000)]
    section = bench_run.diagnose_section(rows, bench_run.judge_diagnose(rows), "note")
    once = bench_run.with_diagnose_section(report, section)
    assert "old" not in once and once.startswith("# results\n\n## Targets\n\nx\n\n## Diagnose")
    assert "| (i) diagnose-floor | 3 | 20.000 | 20.00-60.00 | 3000 |" in once
    assert "which the targets judge: diagnose-floor 10.00 s.\n" in once
    assert bench_run.with_diagnose_section(once, section) == once
    added = bench_run.with_diagnose_section("# results\n", section)
    assert added.startswith("# results\n\n## Diagnose on a large cluster\n\nnote\n")
