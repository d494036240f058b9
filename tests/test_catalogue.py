"""The rule catalogue: complete entries, a check and a fixture per rule, docs commands, wheel."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint import catalogue
from gpulint.catalogue import (
    CATALOGUE_FIELDS,
    NEEDS_PROFILE,
    OFF_BY_DEFAULT,
    catalogue_dir,
    catalogue_entry,
    load_catalogue,
)
from gpulint.cli import main
from gpulint.rules import CORPUS_CODES, ENGINE_CODES, MODULE_CODES, all_checks, build_registry
from gpulint.rules.base import CorpusCheck
from gpulint.rules.live import LIVE_CODES
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


@pytest.mark.parametrize("code", CODES)
def test_entry_has_every_field_filled_in(code: str) -> None:
    info = CATALOGUE[code]
    assert info.code == code
    for field in CATALOGUE_FIELDS:
        value = getattr(info, field)
        assert str(getattr(value, "label", value)).strip(), f"{code}: empty `{field}`"
    assert info.severity.label in ("error", "warning", "info")
    assert info.example != info.fixed, f"{code}: the fixed example equals the failing one"


def test_catalogue_file_name_matches_its_code() -> None:
    for path in catalogue_dir().glob("GPU*.yaml"):
        assert CATALOGUE[path.stem].code == path.stem


def test_the_flags_name_rules_of_the_catalogue() -> None:
    assert set(CODES) >= NEEDS_PROFILE | OFF_BY_DEFAULT
    assert [c for c in CODES if not CATALOGUE[c].enabled] == sorted(OFF_BY_DEFAULT)
    assert [c for c in CODES if CATALOGUE[c].needs_profile] == sorted(NEEDS_PROFILE)


def test_an_entry_with_a_key_besides_the_catalogue_fields_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether a rule is off by default or needs a profile is gpulint.catalogue's to say: an
    # entry that still says it would be silently ignored.
    text = (catalogue_dir() / "GPU101.yaml").read_text(encoding="utf-8")
    (tmp_path / "GPU101.yaml").write_text(text + "needs_profile: true\n", encoding="utf-8")
    monkeypatch.setattr(catalogue, "catalogue_dir", lambda: tmp_path)
    catalogue_entry.cache_clear()
    try:
        with pytest.raises(
            ValueError, match=r"GPU101\.yaml: a catalogue entry has exactly the keys"
        ):
            catalogue_entry("GPU101")
    finally:
        catalogue_entry.cache_clear()


def test_names_are_unique_kebab_case() -> None:
    names = [info.name for info in CATALOGUE.values()]
    assert len(names) == len(set(names))
    bad = [name for name in names if not KEBAB.match(name)]
    assert not bad


def test_every_check_has_an_entry_and_every_entry_a_check() -> None:
    registry = build_registry()
    assert [rule.info.code for rule in registry] == CODES
    assert set(all_checks()) | ENGINE_CODES == set(CODES)
    for rule in registry:
        assert (rule.check is None) == (rule.info.code in ENGINE_CODES)


def test_the_registry_names_exactly_the_corpus_wide_checks() -> None:
    # The engine splits rules by CORPUS_CODES before importing them: it must agree with the
    # checks the modules define.
    corpus_wide = {code for code, check in all_checks().items() if isinstance(check, CorpusCheck)}
    assert corpus_wide == CORPUS_CODES


@pytest.mark.parametrize("module", sorted(MODULE_CODES))
def test_each_rule_module_implements_the_codes_the_registry_names(module: str) -> None:
    implemented = importlib.import_module(f"gpulint.rules.{module}").CHECKS
    assert sorted(implemented) == sorted(MODULE_CODES[module])


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
    missing = sorted(set(CODES) - ENGINE_CODES - LIVE_CODES - _fixture_codes())
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
