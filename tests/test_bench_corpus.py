"""The benchmark corpus generator plants known mistakes; lint() must report exactly those."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from gpulint.api import lint

GENERATOR = Path(__file__).resolve().parent.parent / "bench" / "generate.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_generate", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    return _generator()


def test_lint_reports_exactly_the_planted_mistakes(generate: ModuleType, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    # Every GPU pod gets a mistake, so 50 documents plant each kind a few times.
    planted = generate.generate(corpus, documents=50, seed=7, mistake_rate=1.0)
    codes = {code for _, _, code in planted.reported}
    assert {"GPU001", "GPU002", "GPU003", "GPU004", "GPU601"} <= codes
    assert planted.suppressed, "some planted mistakes carry a `# gpulint: ignore` comment"

    result = lint([str(corpus)])

    assert result.objects == 50
    reported = {
        (Path(f.path).resolve().relative_to(corpus.resolve()).as_posix(), f.line, f.code)
        for f in result.findings
        if f.code in codes
    }
    assert reported == set(planted.reported)
    # Nothing else the generator writes is a mistake a default rule reports.
    assert Counter(f.code for f in result.findings if f.code not in codes) == Counter()


def test_corpus_is_deterministic_and_counts_its_documents(
    generate: ModuleType, tmp_path: Path
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    generate.generate(first, documents=30, seed=3)
    generate.generate(second, documents=30, seed=3)
    texts = {p.relative_to(first): p.read_bytes() for p in first.rglob("*") if p.is_file()}
    assert texts == {
        p.relative_to(second): p.read_bytes() for p in second.rglob("*") if p.is_file()
    }
    manifest = json.loads((first / generate.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["documents"] == 30
    assert lint([str(first)]).objects == 30
