"""bench/run.py builds its table, judges its targets and writes its report (no timing asserted)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.bench_scripts import bench_script


@pytest.fixture(scope="module")
def bench_run() -> ModuleType:
    return bench_script("run")


def _row(bench_run: ModuleType, key: str, seconds: float, rss_mb: float) -> object:
    # Three runs, one slow: the median is `seconds`.
    runs = (seconds, seconds * 3, seconds)
    return bench_run.Row(key, key, tuple(bench_run.Run(s, rss_mb, 1) for s in runs))


def test_targets_are_judged_on_medians(bench_run: ModuleType) -> None:
    rows = [
        _row(bench_run, "floor", 2.0, 60),
        _row(bench_run, "pyyaml", 1.0, 60),
        _row(bench_run, "check-1x", 2.9, 200),
        _row(bench_run, "check-16x", 50.0, 260),
        _row(bench_run, "import-floor", 0.1, 20),
        _row(bench_run, "check-helm", 0.16, 25),
        _row(bench_run, "check-config-profile", 0.14, 25),
        _row(bench_run, "profile-small", 3.0, 210),
        _row(bench_run, "profile-large", 3.5, 230),
        _row(bench_run, "profile-large-json", 3.7, 230),
        _row(bench_run, "check-no-schema", 1.4, 190),
        _row(bench_run, "profile-memory-1x", 4.0, 200),
        _row(bench_run, "profile-memory-16x", 60.0, 320),
        bench_run.Row("checkov", "checkov", note="not installed"),
        # Judged in CPU time: 6x in wall time on a loaded machine, 2.5x in CPU time.
        bench_run.Row("context-alone", "", (bench_run.Run(0.5, 20, 1, 0.2),)),
        bench_run.Row("context-corpus", "", (bench_run.Run(3.0, 90, 1, 0.5),)),
        bench_run.Row("context-plain-alone", "", (bench_run.Run(0.5, 20, 1, 0.2),)),
        bench_run.Row("context-plain", "", (bench_run.Run(0.6, 20, 1, 0.3),)),
        _row(bench_run, "live-floor", 4.0, 550),
        _row(bench_run, "live-check", 5.4, 180),
        # Judged in CPU time: 3.5x in wall time, 2.8x in CPU time.
        bench_run.Row("clusters-1", "", (bench_run.Run(10.0, 200, 1, 10.0),)),
        bench_run.Row("clusters-10", "", (bench_run.Run(35.0, 300, 1, 28.0),)),
    ]

    targets = bench_run.judge(rows, (1, 4, 16), 10_000)

    assert [(t.measured, t.verdict) for t in targets] == [
        ("1.45x", "PASS"),
        ("2.90x", "FAIL"),
        ("-", "not measured"),
        ("1.60x", "FAIL"),
        ("1.40x", "PASS"),
        ("17.2x", "FAIL"),
        ("260 MB", "FAIL"),
        ("1.30x", "FAIL"),
        ("1.60x", "FAIL"),
        ("1.17x", "PASS"),
        ("1.23x", "FAIL"),
        ("2.07x", "FAIL"),
        ("2.50x", "FAIL"),
        ("1.50x", "PASS"),
        ("1.35x", "PASS"),
        ("2.80x", "PASS"),
    ]
    assert bench_run.rss_growth(rows, (1, 4, 16), 10_000) == pytest.approx(60 / 150)


@pytest.mark.slow
def test_a_tiny_run_writes_every_row_and_target(bench_run: ModuleType, tmp_path: Path) -> None:
    results = tmp_path / "results.md"
    argv = ["--files", "3", "--docs-per-file", "2", "--repeat", "1", "--scales", "1,2"]
    argv += ["--no-checkov", "--profile-nodes", "2,6", "--work", str(tmp_path / "work")]

    bench_run.main([*argv, "--results", str(results)])

    text = results.read_text(encoding="utf-8")
    for label in (
        "(a) ruamel.yaml compose_all, C parser",
        "(b) gpulint check CORPUS",
        "(e) gpulint check 2x CORPUS",
        "(m) gpulint check CORPUS --profile 2-node dump",
        "(m) gpulint check 2x CORPUS --profile 2-node dump",
        "(c) gpulint check one 10-document Helm file",
        "(g) ... --profile 6-node JSON dump, cached, no GPU201",
        "(g) ... --profile 6-node YAML dump, --no-cache, no GPU201",
        "(h) gpulint check one file of CORPUS, cached 2-node profile",
        "(h) ... the same file with `context:` CORPUS, cache warm",
        "(h) ... the first file with `context:` CORPUS, --no-cache",
        "(l) gpulint check --live on that cluster, one Deployment",
        "| check --live / plain list calls | <= 1.5x |",
        "| one file with `context:` / without, cache warm, CPU time | <= 2x |",
        "(k) gpulint check CORPUS against 1 cluster (2+ nodes each), --no-cache",
        "(k) gpulint check CORPUS against 10 clusters (2+ nodes each), --no-cache",
        "| 10 clusters / 1 cluster, CPU time | <= 3x |",
        "(f) checkov --framework kubernetes | 0 |",
        "| 6-node YAML dump / 2-node profile | <= 1.2x |",
        "neither jsonschema nor kubernetes",
    ):
        assert label in text
    assert len(bench_run.corpus_files(tmp_path / "work" / "x2")) == 2 * 3
    # The cached rows read entries of the three profiles (2-node YAML, 6-node YAML and JSON).
    assert len(list((tmp_path / "work" / "profile-cache" / "profiles").glob("*.pickle"))) == 3


@pytest.mark.slow
def test_startup_measures_only_the_pre_commit_rows(
    bench_run: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.md"

    status = bench_run.main(["--startup", "--repeat", "1", "--work", str(tmp_path)])

    printed = capsys.readouterr().out
    assert status in (0, 1)
    assert '(c) python -c "import ruamel.yaml, click"' in printed
    assert "(c) gpulint check one 10-document Helm file" in printed
    assert "one 10-document Helm file / import floor:" in printed
    assert "(c) ... the same file with a config and a cached 5-node profile" in printed
    assert "the same with a config and a cached profile / import floor:" in printed
    assert "(b) gpulint check CORPUS" not in printed
    assert not results.exists() and (tmp_path / "helm-10.yaml").exists()


def test_a_recorded_checkov_row_is_reused_and_judged(bench_run: ModuleType, tmp_path: Path) -> None:
    earlier = tmp_path / "earlier.md"
    earlier.write_text(
        "| measurement | runs | median s | range s | peak RSS MB |\n"
        "|---|---:|---:|---:|---:|\n"
        "| (b) gpulint check CORPUS | 3 | 2.313 | 2.28-2.33 | 252 |\n"
        "| (f) checkov --framework kubernetes -d CORPUS | 1 | 285.986 | 285.99-285.99 | 1642 |\n",
        encoding="utf-8",
    )
    row = bench_run.recorded_checkov(earlier)
    assert (row.key, row.seconds, row.rss_mb) == ("checkov", 285.986, 1642.0)
    assert row.label == "(f) checkov --framework kubernetes -d CORPUS, recorded in earlier.md"
    targets = bench_run.judge([row, _row(bench_run, "check-1x", 2.0, 40)], (1,), 10_000)
    checkov = next(t for t in targets if t.name.startswith("Checkov"))
    assert (checkov.measured, checkov.verdict) == ("143x", "PASS")
    # A row that was itself reused keeps one `recorded in`: the latest report's.
    again = tmp_path / "again.md"
    again.write_text(f"| {row.label} | 1 | 285.986 | 285.99-285.99 | 1642 |\n", encoding="utf-8")
    reused = bench_run.recorded_checkov(again)
    assert reused.label == "(f) checkov --framework kubernetes -d CORPUS, recorded in again.md"
    earlier.write_text("no table\n", encoding="utf-8")
    assert bench_run.recorded_checkov(earlier) is None


def test_startup_rows_replace_those_of_a_report(bench_run: ModuleType) -> None:
    report = "\n".join(
        [
            "- machine",
            "- the (c) rows were measured again on 2026-01-01 (...)",
            "",
            "## Targets",
            "",
            "| target | limit | measured | verdict |",
            "|---|---|---:|---|",
            "| 10,000 documents: gpulint / compose floor | <= 1.5x | 0.53x | PASS |",
            "| one 10-document Helm file / import floor | <= 1.5x | 1.90x | FAIL |",
            "| 16x corpus time / 1x | <= 17x | 15.5x | PASS |",
            "",
            "## Measurements",
            "",
            "| measurement | runs | median s | range s | peak RSS MB |",
            "|---|---:|---:|---:|---:|",
            "| (b) gpulint check CORPUS | 3 | 2.262 | 2.25-2.27 | 23 |",
            "| (c) gpulint check one 10-document Helm file | 9 | 0.095 | 0.09-0.10 | 23 |",
            "| (g) ... --profile 5-node YAML dump, cached | 3 | 2.719 | 2.71-2.73 | 28 |",
        ]
    )
    rows = [
        _row(bench_run, "import-floor", 0.05, 23),
        _row(bench_run, "check-helm", 0.07, 23),
        _row(bench_run, "check-config-profile", 0.08, 24),
    ]
    targets = [t for t in bench_run.judge(rows, (1,), 0) if "import floor" in t.name]

    updated = bench_run.with_rows(report, rows, targets, "the (c) rows were measured again", "(c)")

    assert updated.splitlines() == [
        "- machine",
        "- the (c) rows were measured again",
        "",
        "## Targets",
        "",
        "| target | limit | measured | verdict |",
        "|---|---|---:|---|",
        "| 10,000 documents: gpulint / compose floor | <= 1.5x | 0.53x | PASS |",
        "| one 10-document Helm file / import floor | <= 1.5x | 1.40x | PASS |",
        "| the same with a config and a cached profile / import floor | <= 1.5x | 1.60x | FAIL |",
        "| 16x corpus time / 1x | <= 17x | 15.5x | PASS |",
        "",
        "## Measurements",
        "",
        "| measurement | runs | median s | range s | peak RSS MB |",
        "|---|---:|---:|---:|---:|",
        "| (b) gpulint check CORPUS | 3 | 2.262 | 2.25-2.27 | 23 |",
        "| import-floor | 3 | 0.050 | 0.05-0.15 | 23 |",
        "| check-helm | 3 | 0.070 | 0.07-0.21 | 23 |",
        "| check-config-profile | 3 | 0.080 | 0.08-0.24 | 24 |",
        "| (g) ... --profile 5-node YAML dump, cached | 3 | 2.719 | 2.71-2.73 | 28 |",
    ]


def test_cached_profile_rows_run_in_turn_and_are_judged_in_cpu_time_too(
    bench_run: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[str, bool]] = []  # (profile file, cached) of each run, in order
    cpu = {"profile-2.yaml": 2.0, "profile-6.yaml": 2.2, "profile-6.json": 2.5}

    def run_once(command: list[str], cwd: Path) -> object:
        profile = Path(command[command.index("--profile") + 1]).name
        started.append((profile, "--cache-dir" in command))
        return bench_run.Run(1.0, 20.0, 1, cpu[profile])

    monkeypatch.setattr(bench_run, "run_once", run_once)
    plan = bench_run.Plan(tmp_path / "x1", tmp_path, 2, (1,), None, (2, 6))

    rows = bench_run.measure_profile_rows(plan, ["gpulint", "check"])

    small, large, json = "profile-2.yaml", "profile-6.yaml", "profile-6.json"
    assert started == [
        *[(small, False)] * 2,
        (small, True),  # fills the cache
        *[(large, False)] * 2,
        (large, True),
        *[(json, False)] * 2,
        (json, True),
        # The rows the targets compare, round after round.
        *[(small, True), (large, True), (json, True)] * 2,
        (small, True),  # every rule, once
    ]
    assert [row.key for row in rows] == [
        "profile-small-cold",
        "profile-small",
        "profile-large-cold",
        "profile-large",
        "profile-large-json-cold",
        "profile-large-json",
        "profile-all-rules",
    ]
    assert rows[3].label == "(g) ... --profile 6-node YAML dump, cached, no GPU201"
    assert len(rows[3].runs) == 2
    assert bench_run.profile_cpu_note(rows, (2, 6)) == (
        "(g) in CPU time, 6-node dump / 2-node profile: YAML 1.10x, JSON 1.25x"
    )
    assert bench_run.profile_cpu_note(rows[:3], (2, 6)) is None
