"""The benchmark corpus generator plants known mistakes; lint() must report exactly those."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from gpulint.api import lint
from gpulint.profile.load import load_profiles
from tests.bench_scripts import BENCH, bench_script

GENERATOR = BENCH / "make_corpus.py"
SMALL_CORPUS = ("--files", "9", "--docs-per-file", "4", "--seed", "3", "--profile-nodes", "12")


@pytest.fixture(scope="module")
def make_corpus() -> ModuleType:
    return bench_script("make_corpus")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_lint_reports_exactly_the_planted_mistakes(make_corpus: ModuleType, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    # Every GPU pod gets a mistake, so 60 documents plant each kind a few times.
    planted = make_corpus.generate(corpus, files=12, docs_per_file=5, seed=7, mistake_rate=1.0)
    codes = {code for _, _, code in planted.reported}
    assert {"GPU001", "GPU002", "GPU003", "GPU004", "GPU601"} <= codes
    assert planted.suppressed, "some planted mistakes carry a `# gpulint: ignore` comment"

    result = lint([str(corpus)])

    assert result.objects == 60
    reported = {
        (Path(f.path).resolve().relative_to(corpus.resolve()).as_posix(), f.line, f.code)
        for f in result.findings
        if f.code in codes
    }
    assert reported == set(planted.reported)
    # Nothing else the generator writes is a mistake a default rule reports.
    assert Counter(f.code for f in result.findings if f.code not in codes) == Counter()


@pytest.mark.slow
def test_command_line_is_deterministic_and_mixes_files(tmp_path: Path) -> None:
    def run(out: Path) -> None:
        subprocess.run(
            [sys.executable, str(GENERATOR), "--out", str(out / "corpus"), *SMALL_CORPUS],
            check=True,
            capture_output=True,
        )

    run(tmp_path / "a")
    run(tmp_path / "b")
    first = _tree(tmp_path / "a")
    assert first == _tree(tmp_path / "b")

    manifest = json.loads(first["corpus/.planted.json"])
    assert (manifest["files"], manifest["docs_per_file"], manifest["documents"]) == (9, 4, 36)
    helm = [name for name in first if name.startswith("corpus/rendered/")]
    assert len(helm) == 3  # every third file
    assert all(first[name].count(b"\n# Source: ") == 4 for name in helm)
    exports = [name for name in first if name.startswith("corpus/exports/")]
    assert len(exports) == 1 and json.loads(first[exports[0]])["kind"] == "List"
    assert lint([str(tmp_path / "a" / "corpus")]).objects == 36


def test_profile_dump_groups_nodes_into_pools_the_corpus_selects(
    make_corpus: ModuleType, tmp_path: Path
) -> None:
    dump = tmp_path / "profile.yaml"
    make_corpus.make_profile(dump, nodes=10, pools=4)

    profile = load_profiles([str(dump)])

    assert [(p.name, p.nodes) for p in profile.pools] == [
        ("system-0", 3),
        ("a100-1", 3),
        ("mi300x-2", 2),
        ("h100-3", 2),
    ]
    assert profile.provider == "eks"
    a100 = profile.pools[1]
    assert a100.labels["node.kubernetes.io/instance-type"] == "p4d.24xlarge"
    assert [str(t) for t in a100.taints] == [
        "nvidia.com/gpu=true:NoSchedule",
        "dedicated=gpu:NoSchedule",
    ]
