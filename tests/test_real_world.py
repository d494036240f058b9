"""The real-world corpus: reproductions of published GPU manifests, checked as users check them.

Each file under fixtures/real/<project>/ reproduces the GPU-relevant shape of one published
manifest (fixtures/real/SOURCES.md names the repository, path, commit and license) and says in
its header:

- `# cluster: ../profiles/NAME.yaml`: a cluster profile shaped like the cluster the manifest
  was written for;
- `# verdict: correct` or `# verdict: defect`: whether the manifest is right for that cluster.

It is checked twice, as `gpulint check FILE` and as `gpulint check FILE --profile CLUSTER`,
with the rules a user gets by default. Every finding of both runs is asserted:
`# expect: CODE:COL` holds for both runs, `# expect[profile]: CODE:COL` only with the profile,
`# expect[bare]: CODE:COL` only without it (same syntax as tests/expectations.py). A correct
manifest may get warnings and notes, never an error: a false error on a correct published
manifest is as serious as a miss.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from tests.expectations import Expected, parse_expectations, unmatched

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "real"
FILES = sorted(
    p for p in CORPUS.rglob("*.yaml") if p.parent.name != "profiles" and p.parent != CORPUS
)
_HEADER = re.compile(r"^#\s*(cluster|verdict):\s*(\S+)", re.M)
_MODE_EXPECT = re.compile(r"#\s*expect\[(profile|bare)\]:")


def header(path: Path) -> dict[str, str]:
    """The fixture's `# cluster:` and `# verdict:` lines."""
    return dict(_HEADER.findall(path.read_text(encoding="utf-8")))


def expected(path: Path, mode: str) -> list[Expected]:
    """What a run in `mode` ("bare" or "profile") must report: shared and mode expectations."""
    text = path.read_text(encoding="utf-8")
    shared = parse_expectations(text)
    # Mode lines become plain `# expect:` lines for their mode and vanish for the other.
    mode_text = "\n".join(
        _MODE_EXPECT.sub("# expect:", line) if f"expect[{mode}]" in line else ""
        for line in text.splitlines()
    )
    return shared + parse_expectations(mode_text)


def check(path: Path, *extra: str) -> list[dict]:
    """The findings of `gpulint check --isolated --format json PATH EXTRA`."""
    result = CliRunner().invoke(
        main, ["check", "--isolated", "--format", "json", str(path), *extra]
    )
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def test_corpus_spans_projects_and_says_where_each_file_comes_from() -> None:
    projects = {p.parent.name for p in FILES}
    assert len(FILES) >= 10 and len(projects) >= 4
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
    missing, unexpected = unmatched(expected(path, mode), actual)
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {unexpected}"
    if facts["verdict"] == "correct":
        errors = [f"{f['code']} {f['message']}" for f in findings if f["severity"] == "error"]
        assert not errors, f"a false error on a correct published manifest: {errors}"
