"""docs/rules.md is the catalogue rendered, and every SARIF helpUri lands on a heading in it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from gpulint.catalogue import load_catalogue
from gpulint.cli import main
from gpulint.output.catalogue import RULES_DOC_COMMAND, RULES_DOC_URL
from tests.sarif_schema import validated_sarif

ROOT = Path(__file__).resolve().parent.parent
RULES_DOC = ROOT / "docs" / "rules.md"


def github_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file (outside code blocks)."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    anchors: set[str] = set()
    seen: Counter[str] = Counter()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", prose, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return anchors


def test_committed_rules_doc_is_the_generated_one() -> None:
    generated = CliRunner().invoke(main, ["rules", "--format", "docs"]).stdout
    assert RULES_DOC.read_text(encoding="utf-8") == generated, (
        f"docs/rules.md is stale: run `{RULES_DOC_COMMAND}`"
    )


def test_every_rule_has_a_full_section() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    assert [s.split("\n", 1)[0] for s in sections] == list(load_catalogue())
    for section, info in zip(sections, load_catalogue().values(), strict=True):
        for part in (info.name, info.summary, info.why, info.example, info.fixed, info.fix):
            assert part in section, (info.code, part)


def test_every_sarif_help_uri_points_at_an_anchor_of_the_rules_doc(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    sarif = CliRunner().invoke(main, ["check", "--isolated", "--format", "sarif", str(empty)])
    rules = validated_sarif(sarif.stdout)["runs"][0]["tool"]["driver"]["rules"]
    anchors = github_anchors(RULES_DOC.read_text(encoding="utf-8"))
    assert len(rules) == len(load_catalogue())
    for rule in rules:
        page, anchor = rule["helpUri"].split("#")
        assert page == RULES_DOC_URL
        assert anchor in anchors, rule["id"]


def test_the_doc_index_links_resolve_too() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    links = re.findall(r"\]\(#([^)]+)\)", text)
    assert len(links) == len(load_catalogue())
    assert set(links) <= github_anchors(text)
