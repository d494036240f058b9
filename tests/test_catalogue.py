"""The rule catalogue: complete records, a check and a fixture per rule, docs commands, wheel."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.api import lint
from gpulint.catalogue import (
    CATALOGUE_FIELDS,
    CatalogueError,
    catalogue_dir,
    load_catalogue,
    read_records,
    registry_source,
)
from gpulint.cli import main
from gpulint.rules import Rule, registry
from tests.expectations import expectations_text, parse_expectations

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "cases"
CATALOGUE = load_catalogue()
CODES = sorted(CATALOGUE)
KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")


def test_catalogue_is_read_from_the_rules_directory_of_this_checkout() -> None:
    files = sorted(p.stem for p in catalogue_dir().glob("GPU*.yaml"))
    assert files == CODES
    assert {"GPU000", "GPU001", "GPU002", "GPU003", "GPU004", "GPU005", "GPU006", "GPU601"} <= set(
        CODES
    )


def test_the_generated_registry_is_the_records() -> None:
    # The engine reads gpulint/_registry.py, not the records: it must say what they say.
    generated = (ROOT / "gpulint" / "_registry.py").read_text(encoding="utf-8")
    assert generated == registry_source(read_records(catalogue_dir())), (
        "gpulint/_registry.py is stale: run `python -m gpulint.catalogue`"
    )
    assert registry() == read_records(catalogue_dir())


@pytest.mark.parametrize("code", CODES)
def test_entry_has_every_field_filled_in(code: str) -> None:
    info = CATALOGUE[code]
    for field in CATALOGUE_FIELDS:
        value = getattr(info, field)
        assert str(getattr(value, "label", value)).strip(), f"{code}: empty `{field}`"
    assert info.severity.label in ("error", "warning", "info")
    assert info.example != info.fixed, f"{code}: the fixed example equals the failing one"


def test_a_record_whose_code_is_not_its_file_name_is_refused(tmp_path: Path) -> None:
    path = _write_record(tmp_path, "GPU799")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("code: GPU799\n", "code: GPU798\n"), encoding="utf-8")
    with pytest.raises(CatalogueError) as refused:
        read_records(tmp_path)
    assert str(refused.value).startswith(f"{path}: ")
    assert "and `code: GPU799`; missing [], unknown []" in str(refused.value)


def test_the_records_flags_are_read_from_the_files() -> None:
    # Spot checks of what the records say, one rule per kind of fact.
    rules = {rule.code: rule for rule in registry()}
    assert not rules["GPU402"].enabled and rules["GPU401"].enabled
    assert rules["GPU102"].needs_profile and not rules["GPU001"].needs_profile
    assert rules["GPU301"].corpus_wide and not rules["GPU302"].needs_profile
    assert rules["GPU501"].judges == {"DaemonSet"}
    assert rules["GPU303"].reads == {"LimitRange"}
    assert rules["GPU006"].check is None


@pytest.mark.parametrize("rule", registry(), ids=lambda r: r.code)
def test_each_record_names_a_check_of_its_scope(rule: Rule) -> None:
    if rule.check is None:  # reported by the engine itself
        assert rule.code == "GPU006"
        return
    assert callable(rule.check_function())
    assert rule.check_function().__module__ == rule.module
    keeps = rule.keeps_function()
    assert keeps is None or rule.corpus_wide
    if keeps is not None:
        assert callable(keeps)
    summary = rule.summary_function()
    assert summary is None or keeps is not None
    if summary is not None:
        assert callable(summary)


def _write_record(directory: Path, code: str, **facts: str) -> Path:
    """A record of the shape CONTRIBUTING.md shows, with `facts` replacing its defaults."""
    fields = {
        "code": code,
        "name": "throwaway-rule",
        "severity": "warning",
        "enabled": "true",
        "needs_profile": "false",
        "scope": "file",
        "check": "throwaway_rule:gpu_pod_named_trial",
        "summary": "A GPU pod named `trial`.",
        "why": "To prove a rule is one record and one function.",
        "example": "'metadata: {name: trial}'",
        "fixed": "'metadata: {name: trainer}'",
        "fix": "Rename the pod.",
        **facts,
    }
    path = directory / f"{code}.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in fields.items()), encoding="utf-8")
    return path


THROWAWAY_CHECK = """
from gpulint.rules.base import Problem


def gpu_pod_named_trial(ctx):
    for workload, template in ctx.pod_templates():
        if workload.document.ref.name == "trial":
            yield Problem.at(workload.document, workload.document.kind_pos, "a pod named trial")
"""


def test_a_rule_is_one_record_and_one_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = tmp_path / "rules"
    records.mkdir()
    _write_record(records, "GPU799")
    (tmp_path / "throwaway_rule.py").write_text(THROWAWAY_CHECK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    manifest = tmp_path / "pods.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: trial}\nspec:\n  containers:\n"
        '  - {name: main, image: "trainer:1"}\n---\n'
        "apiVersion: v1\nkind: Pod\nmetadata: {name: other}\nspec:\n  containers:\n"
        '  - {name: main, image: "trainer:1"}\n',
        encoding="utf-8",
    )
    rules = read_records(records)
    result = lint([str(manifest)], rules=rules)
    found = [
        (f.code, f.name, f.severity.label, f.line, f.column, f.message, f.fix)
        for f in result.findings
    ]
    assert found == [
        ("GPU799", "throwaway-rule", "warning", 2, 7, "a pod named trial", "Rename the pod.")
    ]
    # The generated registry module lists the same rule.
    namespace: dict[str, object] = {}
    exec(registry_source(rules), namespace)
    assert namespace["RULES"] == rules


@pytest.mark.parametrize(
    ("facts", "complaint"),
    [
        ({"scope": "everywhere"}, "`scope` is one of file, corpus"),
        ({"check": "throwaway_rule"}, "`check` is `package.module:function`"),
        ({"enabled": "yes please"}, "`enabled` is true or false"),
        ({"keeps": "throwaway_rule:kept"}, "only a rule of `scope: corpus` keeps workloads"),
        ({"summarizes": "throwaway_rule:summed"}, "only a rule that keeps workloads summarizes"),
        ({"summarizes": "throwaway_rule"}, "`summarizes` is `package.module:function`"),
        ({"judges": "DaemonSet"}, "`judges` is a list of kinds"),
        ({"severity": "fatal"}, "`severity` is error, warning or info"),
        ({"needs_cluster": "true"}, "unknown ['needs_cluster']"),
    ],
)
def test_a_malformed_record_is_refused_with_its_file(
    tmp_path: Path, facts: dict[str, str], complaint: str
) -> None:
    path = _write_record(tmp_path, "GPU799", **facts)
    with pytest.raises(CatalogueError) as refused:
        read_records(tmp_path)
    assert str(refused.value).startswith(f"{path}: ")
    assert complaint in str(refused.value)


def test_a_record_without_a_required_key_is_refused(tmp_path: Path) -> None:
    path = _write_record(tmp_path, "GPU799")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("needs_profile: false\n", ""), encoding="utf-8")
    with pytest.raises(CatalogueError, match=r"GPU799\.yaml: .*missing \['needs_profile'\]"):
        read_records(tmp_path)


def test_names_are_unique_kebab_case() -> None:
    names = [info.name for info in CATALOGUE.values()]
    assert len(names) == len(set(names))
    bad = [name for name in names if not KEBAB.match(name)]
    assert not bad


def _fixture_codes() -> set[str]:
    found: set[str] = set()
    for path in FIXTURES.rglob("*"):
        if path.suffix in (".yaml", ".yml", ".json"):
            found.update(e.code for e in parse_expectations(expectations_text(path)))
    return found


def test_every_rule_is_proven_by_a_fixture() -> None:
    # Codes come from the catalogue, so a rule added later needs a fixture too. Engine codes
    # (GPU006) are exempt: fixtures run without --report-unused-ignores unless they ask for it.
    # Live codes need an API server: tests/test_live_dryrun.py proves them against one.
    # GPU030 needs a helm that is missing or fails: tests/test_charts.py proves it with one.
    exempt = {r.code for r in registry() if r.check is None or r.module == "gpulint.rules.live"}
    exempt.add("GPU030")
    missing = sorted(set(CODES) - exempt - _fixture_codes())
    assert not missing, f"rules without an `# expect:` in fixtures/cases: {missing}"


def test_unused_suppression_has_a_fixture_as_well() -> None:
    assert "GPU006" in _fixture_codes()


def test_fixtures_expect_only_codes_of_the_catalogue() -> None:
    assert not sorted(_fixture_codes() - set(CODES))


def test_rules_table_lists_every_code_name_and_severity() -> None:
    result = CliRunner().invoke(main, ["rules"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "SEVERITY", "SUMMARY"]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[1:]}
    assert rows == {c: [CATALOGUE[c].name, CATALOGUE[c].severity.label] for c in CODES}


def test_rules_json_is_the_whole_catalogue() -> None:
    result = CliRunner().invoke(main, ["rules", "--format", "json"])
    assert result.exit_code == 0
    entries = json.loads(result.stdout)
    assert [e["code"] for e in entries] == CODES
    gpu002 = next(e for e in entries if e["code"] == "GPU002")
    assert gpu002["name"] == "gpu-limit-request-mismatch"
    assert gpu002["severity"] == "error"
    assert gpu002["fix"] == CATALOGUE["GPU002"].fix
    assert set(gpu002) >= set(CATALOGUE_FIELDS)


def test_rules_markdown_has_one_row_per_rule() -> None:
    result = CliRunner().invoke(main, ["rules", "--format", "markdown"])
    lines = result.stdout.splitlines()
    assert lines[:2] == ["| code | name | severity | what it catches |", "|---|---|---|---|"]
    assert [line.split(" | ")[0].lstrip("| ") for line in lines[2:]] == CODES
    assert "| GPU601 | gpu-pod-besteffort-cpu-memory | warning | " in result.stdout


def test_explain_prints_the_entry() -> None:
    result = CliRunner().invoke(main, ["explain", "GPU002"])
    assert result.exit_code == 0
    text = result.stdout
    assert text.startswith("GPU002 gpu-limit-request-mismatch [error]\n")
    for heading in ("What it does", "Why it matters", "Example", "Use instead", "Fix"):
        assert f"\n{heading}\n" in text
    info = CATALOGUE["GPU002"]
    assert f"\nWhy it matters\n    {info.why.splitlines()[0]}\n" in text
    assert f"\nFix\n    {info.fix}\n" in text
    assert "      nvidia.com/gpu: 1" in text


def test_explain_accepts_lower_case_code_and_rule_name() -> None:
    by_code = CliRunner().invoke(main, ["explain", "gpu002"]).stdout
    by_name = CliRunner().invoke(main, ["explain", "gpu-limit-request-mismatch"]).stdout
    assert by_code == by_name == CliRunner().invoke(main, ["explain", "GPU002"]).stdout


def test_explain_json() -> None:
    result = CliRunner().invoke(main, ["explain", "GPU601", "--format", "json"])
    entry = json.loads(result.stdout)
    assert (entry["code"], entry["name"], entry["severity"]) == (
        "GPU601",
        "gpu-pod-besteffort-cpu-memory",
        "warning",
    )


def test_explain_unknown_code_exits_2() -> None:
    result = CliRunner().invoke(main, ["explain", "GPU999"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "gpulint: error: no rule `GPU999` (see `gpulint rules`)\n"


def _index_unreachable(output: str) -> bool:
    markers = (
        "Could not find a version that satisfies",
        "No matching distribution found",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Network is unreachable",
    )
    return any(marker in output for marker in markers)


@pytest.mark.slow
def test_wheel_ships_the_catalogue_and_the_config_schema(tmp_path: Path) -> None:
    """Builds the wheel the way pip does (hatchling fetched into an isolated build env)."""
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = build.stdout + build.stderr
    if build.returncode != 0 and _index_unreachable(output):
        pytest.skip(f"package index unreachable, cannot fetch the build backend: {output[-300:]}")
    assert build.returncode == 0, output
    (wheel,) = tmp_path.glob("gpulint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "gpulint/schemas/config.schema.json" in names
    assert {f"gpulint/catalogue/{code}.yaml" for code in CODES} <= names
    assert not any(name.startswith(("tests/", "fixtures/")) for name in names)
