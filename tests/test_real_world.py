"""The real-world corpus: reproductions of published GPU manifests, checked as users check them.

Each file under fixtures/real/<project>/ reproduces the GPU-relevant shape of one published
manifest (fixtures/real/SOURCES.md names the repository, path, commit and license) and says in
its header:

- `# cluster: ../profiles/NAME.yaml`: a cluster profile shaped like the cluster the manifest
  was written for;
- `# verdict: correct` or `# verdict: defect`: whether the manifest is right for that cluster.

It is checked twice, as `gpulint check FILE` and as `gpulint check FILE --profile CLUSTER`,
with the rules a user gets by default. Every finding of both runs is asserted:
`# expect: CODE:COL "words"` holds for both runs, `# expect[profile]: ...` only with the
profile, `# expect[bare]: ...` only without it (the syntax of tests/expectations.py, plus the
quoted words the finding's message must contain). A correct manifest may get warnings and
notes, never an error: a false error on a correct published manifest is as serious as a miss.
Every object that requests accelerators is either read by gpulint or reported by GPU007.

Adding a case is adding a file with its header and expectations, and its row in SOURCES.md.

A directory holding `Chart.yaml` is a published Helm chart, rendered by gpulint with the
official helm (tests/binaries.py). Its `corpus.yaml` gives the cluster profile and the cases:
each names its verdict, the values files passed with `--values`, and every finding it expects
(code, path relative to the chart, line, column, words of the message, and `mode: bare` or
`mode: profile` when the finding belongs to one run only). Each case is checked without and
with its profile, with the assertions of the files above.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.loader import load_path
from gpulint.render.helm import is_library_chart
from gpulint.workloads import read_workload
from tests.expectations import Expected, parse_expectations, unmatched

# helm4_dir and tool_env: the official helm binary, on a PATH of its own.
pytest_plugins = ["tests.binaries"]

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "real"
# A chart under another chart's `charts/` is its subchart, rendered with it; a library chart
# is rendered only by the charts that use it.
CHARTS = sorted(
    p.parent
    for p in CORPUS.rglob("Chart.yaml")
    if p.parent.parent.name != "charts" and not is_library_chart(p.parent)
)
LIBRARIES = sorted(p.parent for p in CORPUS.rglob("Chart.yaml") if is_library_chart(p.parent))
FILES = sorted(
    p
    for p in CORPUS.rglob("*.yaml")
    if p.parent.name != "profiles"
    and p.parent != CORPUS
    and not any(chart in p.parents for chart in (*CHARTS, *LIBRARIES))
)
_HEADER = re.compile(r"^#\s*(cluster|verdict):\s*(\S+)", re.M)
_MODE_EXPECT = re.compile(r"#\s*expect\[(profile|bare)\](@\d+)?:")
# An expectation's quoted words: `GPU601:7 "BestEffort"`.
_WORDS = re.compile(r'(GPU\d{3})(?::(\d+))?\s+"([^"]*)"')
_EXPECT_LINE = re.compile(r"#\s*expect(?:\[(profile|bare)\])?(?:@(\d+))?:(.*)$")


def header(path: Path) -> dict[str, str]:
    """The fixture's `# cluster:` and `# verdict:` lines."""
    return dict(_HEADER.findall(path.read_text(encoding="utf-8")))


def expected(path: Path, mode: str) -> list[Expected]:
    """What a run in `mode` ("bare" or "profile") must report: shared and mode expectations."""
    text = _WORDS.sub(
        lambda m: m.group(1) + (f":{m.group(2)}" if m.group(2) else ""),
        path.read_text(encoding="utf-8"),
    )
    shared = parse_expectations(text)
    # Mode lines become plain `# expect:` lines for their mode and vanish for the other.
    mode_text = "\n".join(
        _MODE_EXPECT.sub(r"# expect\2:", line) if f"expect[{mode}]" in line else ""
        for line in text.splitlines()
    )
    return shared + parse_expectations(mode_text)


def wording(path: Path, mode: str) -> list[tuple[str, int, int | None, str]]:
    """(code, line, column, words) of every expectation of `mode` that quotes its message."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT_LINE.search(line)
        if match is None or match.group(1) not in (None, mode):
            continue
        target = int(match.group(2)) if match.group(2) else number
        for code, column, words in _WORDS.findall(match.group(3)):
            found.append((code, target, int(column) if column else None, words))
    return found


def check(path: Path, *extra: str) -> list[dict]:
    """The findings of `gpulint check --isolated --format json PATH EXTRA`."""
    result = CliRunner().invoke(
        main, ["check", "--isolated", "--format", "json", str(path), *extra]
    )
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def test_corpus_spans_projects_and_says_where_each_file_comes_from() -> None:
    projects = {p.parent.name for p in FILES}
    assert len(FILES) >= 40 and len(projects) >= 12
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    for path in FILES:
        assert f"`{path.relative_to(CORPUS)}`" in sources, f"{path} has no row in SOURCES.md"
        facts = header(path)
        assert facts.get("verdict") in ("correct", "defect"), path
        assert (path.parent / facts["cluster"]).is_file(), path


@pytest.mark.parametrize("mode", ["bare", "profile"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_published_manifest(path: Path, mode: str) -> None:
    facts = header(path)
    extra = ("--profile", str(path.parent / facts["cluster"])) if mode == "profile" else ()
    findings = check(path, *extra)
    actual = [(f["code"], f["line"], f["column"]) for f in findings]
    wanted = expected(path, mode)
    missing, unexpected = unmatched(wanted, actual)
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {unexpected}"
    # Every finding's message is asserted by the words its expectation quotes.
    worded = wording(path, mode)
    assert len(worded) == len(wanted), "every expectation quotes words of its message"
    for code, line, column, words in worded:
        messages = [
            f["message"]
            for f in findings
            if (f["code"], f["line"]) == (code, line) and column in (None, f["column"])
        ]
        assert any(words in m for m in messages), f"{code}:{line} says none of {words!r}"
    if facts["verdict"] == "correct":
        errors = [f"{f['code']} {f['message']}" for f in findings if f["severity"] == "error"]
        assert not errors, f"a false error on a correct published manifest: {errors}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_accelerator_request_is_read_or_reported(path: Path) -> None:
    """An object that asks for accelerators is either read or named by GPU007: never silent."""
    loaded = load_path(path)
    unread = set()
    for document in loaded.documents:
        # As the loader reads it: an unmodelled kind's pods found by their shape count too.
        found = read_workload(document).unchecked
        if found is not None and found.requests_accelerators:
            unread.add(str(document.ref))
    reported = {
        f"{o['kind']}/{o['namespace'] + '/' if o['namespace'] else ''}{o['name']}"
        for f in check(path)
        if f["code"] == "GPU007" and (o := f["object"]) is not None
    }
    assert unread <= reported, f"accelerator requests nobody checked: {unread - reported}"


@dataclass(frozen=True)
class ChartFinding:
    """A finding a chart case expects: `path` is relative to the chart."""

    code: str
    path: str
    line: int
    column: int
    words: str
    mode: str | None  # "bare", "profile", or None for both runs


@dataclass(frozen=True)
class ChartCase:
    """One rendering of a corpus chart: its values files, cluster, verdict and findings."""

    chart: Path
    name: str
    cluster: Path
    verdict: str
    values: tuple[str, ...]
    expect: tuple[ChartFinding, ...]


def chart_cases(chart: Path) -> list[ChartCase]:
    """The cases `chart/corpus.yaml` lists."""
    sidecar = yaml.safe_load((chart / "corpus.yaml").read_text(encoding="utf-8"))
    return [
        ChartCase(
            chart=chart,
            name=case["name"],
            cluster=chart / case.get("cluster", sidecar["cluster"]),
            verdict=case["verdict"],
            values=tuple(case["values"]),
            expect=tuple(
                ChartFinding(
                    e["code"], e["path"], e["line"], e["column"], e["words"], e.get("mode")
                )
                for e in case["expect"]
            ),
        )
        for case in sidecar["cases"]
    ]


CHART_CASES = [case for chart in CHARTS for case in chart_cases(chart)]


@pytest.fixture(scope="module")
def chart_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for every chart case: a chart rendered with the same values for the run
    without a profile is read from it by the run with one."""
    return tmp_path_factory.mktemp("chart-cache")


@pytest.fixture()
def helm_on_path(
    tool_env, helm4_dir: Path, chart_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The official helm v4 alone on PATH, the corpus as the working directory."""
    tool_env(helm=helm4_dir / "helm")
    monkeypatch.setenv("GPULINT_CACHE_DIR", str(chart_cache))
    monkeypatch.chdir(CORPUS)


def test_every_chart_says_where_it_comes_from_and_what_it_checks() -> None:
    assert len(CHARTS) >= 3
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    for chart in CHARTS:
        assert f"`{chart.relative_to(CORPUS)}/`" in sources, f"{chart} has no row in SOURCES.md"
    for case in CHART_CASES:
        assert case.verdict in ("correct", "defect"), case
        assert case.cluster.is_file(), case
        assert all((case.chart / name).is_file() for name in case.values), case
        assert all(e.mode in (None, "bare", "profile") for e in case.expect), case
    # Every chart has a case with its own default values, right for its cluster.
    assert {c.chart for c in CHART_CASES if not c.values and c.verdict == "correct"} == set(CHARTS)


@pytest.mark.parametrize("mode", ["bare", "profile"])
@pytest.mark.parametrize(
    "case", CHART_CASES, ids=lambda c: f"{c.chart.relative_to(CORPUS)}:{c.name}"
)
def test_published_chart(case: ChartCase, mode: str, helm_on_path: None) -> None:
    chart = case.chart.relative_to(CORPUS)
    extra = [arg for name in case.values for arg in ("--values", str(chart / name))]
    if mode == "profile":
        extra += ["--profile", str(case.cluster.relative_to(CORPUS))]
    findings = check(chart, *extra)
    # Every finding points at a file of the chart (a values file or a template), or of a
    # `file://` dependency it builds (`../common/templates/x.yaml`).
    actual = sorted(
        (f["code"], Path(os.path.relpath(f["path"], chart)).as_posix(), f["line"], f["column"])
        for f in findings
    )
    wanted = [e for e in case.expect if e.mode in (None, mode)]
    assert actual == sorted((e.code, e.path, e.line, e.column) for e in wanted)
    for e in wanted:
        messages = [
            f["message"]
            for f in findings
            if (f["code"], f["line"], f["column"]) == (e.code, e.line, e.column)
            and os.path.normpath(f["path"]) == os.path.normpath(chart / e.path)
        ]
        assert any(e.words in m for m in messages), (
            f"{e.code} {e.path}:{e.line} says none of {e.words!r}"
        )
    if case.verdict == "correct":
        errors = [f"{f['code']} {f['message']}" for f in findings if f["severity"] == "error"]
        assert not errors, f"a false error on a correct published chart: {errors}"
