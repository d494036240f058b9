"""The per-file results cache (gpulint.engine.cache): a warm run reports exactly what a run
without a cache reports, re-checks a file whose bytes changed, and trusts only a directory of
the user's own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpulint.api import lint
from gpulint.config import Config
from gpulint.engine.files import FileOutcome
from gpulint.findings import Finding

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "cases"
PROFILES = ROOT / "fixtures" / "profiles"


def _all(findings: object) -> list[tuple[object, ...]]:
    return [
        (f.path, f.line, f.column, f.code, f.severity, f.message, f.fix, f.object, f.edits)
        for f in findings  # type: ignore[attr-defined]
        if isinstance(f, Finding)
    ]


def _entries(cache: Path) -> list[str]:
    folder = cache / "results"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


@pytest.mark.parametrize(
    "profile", [None, "eks.yaml", "placement-in-use.yaml", "kueue-queues.yaml", "dra-nodes.yaml"]
)
def test_warm_runs_report_what_a_run_without_cache_reports(
    tmp_path: Path, profile: str | None
) -> None:
    profiles = (str(PROFILES / profile),) if profile else ()
    options = {"select": ("ALL",), "profile_paths": profiles, "root": str(ROOT)}
    plain = lint(["fixtures/cases"], **options)
    cache = tmp_path / "cache"
    cold = lint(["fixtures/cases"], use_cache=True, cache_dir=str(cache), **options)
    stored = _entries(cache)
    assert len(stored) >= 100  # one per fixture file (charts are rendered, not kept)
    warm = lint(["fixtures/cases"], use_cache=True, cache_dir=str(cache), **options)
    assert _entries(cache) == stored  # nothing new: every file was read from its entry
    assert _all(plain.findings) == _all(cold.findings) == _all(warm.findings)
    assert (plain.files, plain.objects) == (warm.files, warm.objects)


def test_a_changed_file_is_checked_again(tmp_path: Path) -> None:
    tree = tmp_path / "k8s"
    shutil.copytree(CASES / "resources", tree)
    cache = tmp_path / "cache"
    first = lint([str(tree)], use_cache=True, cache_dir=str(cache), select=("ALL",))
    target = sorted(tree.glob("*.yaml"))[0]
    target.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        "  - name: c\n    image: i\n    resources:\n      requests:\n"
        "        nvidia.com/gpu: 1\n",
        encoding="utf-8",
    )
    changed = lint([str(tree)], use_cache=True, cache_dir=str(cache), select=("ALL",))
    plain = lint([str(tree)], select=("ALL",))
    assert _all(changed.findings) == _all(plain.findings)
    assert _all(changed.findings) != _all(first.findings)
    assert [(f.line, f.column, f.code) for f in changed.findings if f.path == str(target)] == [
        (9, 5, "GPU601"),
        (11, 9, "GPU002"),
    ]


def test_context_files_are_read_from_the_cache(tmp_path: Path) -> None:
    config = Config(root=ROOT, context=("fixtures/cases",), select=("ALL",))
    given = ["fixtures/cases/capacity/" + sorted(os.listdir(CASES / "capacity"))[0]]
    options = {
        "config": config,
        "profile_paths": (str(PROFILES / "eks.yaml"),),
        "root": str(ROOT),
    }
    plain = lint(given, **options)
    cache = tmp_path / "cache"
    lint(given, use_cache=True, cache_dir=str(cache), **options)
    assert len(_entries(cache)) >= 20
    warm = lint(given, use_cache=True, cache_dir=str(cache), **options)
    assert _all(plain.findings) == _all(warm.findings)


def test_a_cache_others_may_write_to_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    told: list[str] = []
    lint(["fixtures/cases"], use_cache=True, cache_dir=str(cache), root=str(ROOT), warn=told.append)
    assert _entries(cache) == []
    assert told == [f"cache directory {cache} is writable by other users; running without a cache"]


def test_an_entry_that_is_not_a_gpulint_outcome_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    options = {"select": ("ALL",), "root": str(ROOT), "use_cache": True, "cache_dir": str(cache)}
    expected = _all(lint(["fixtures/cases/resources"], **options).findings)
    import pickle

    marker = tmp_path / "ran"
    planted = pickle.dumps(_Planted(str(marker)))
    for name in _entries(cache):
        (cache / "results" / name).write_bytes(planted)
    assert _all(lint(["fixtures/cases/resources"], **options).findings) == expected
    assert not marker.exists()


class _Planted:
    """An entry that would call a function of the standard library when unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.mkdir, (self.path,))


def test_copies_in_the_context_count_once_cached_or_not(tmp_path: Path) -> None:
    # The capacity fixtures twice: the given file's copy and another's, as context.
    for copy in ("a", "b"):
        shutil.copytree(CASES / "capacity", tmp_path / "k8s" / copy)
    given = ["k8s/a/" + sorted(os.listdir(CASES / "capacity"))[0]]
    config = Config(root=tmp_path, context=("k8s",), select=("ALL",))
    options = {
        "config": config,
        "profile_paths": (str(PROFILES / "eks.yaml"),),
        "root": str(tmp_path),
    }
    once = lint(given, **{**options, "config": Config(root=tmp_path, context=("k8s/a",))})
    plain = lint(given, **options)
    cache = tmp_path / "cache"
    cold = lint(given, use_cache=True, cache_dir=str(cache), **options)
    warm = lint(given, use_cache=True, cache_dir=str(cache), **options)
    assert _all(plain.findings) == _all(cold.findings) == _all(warm.findings)
    # What the given file is judged against is the same with or without the second copy.
    assert [f for f in _all(plain.findings) if f[3] == "GPU201"] == [
        f for f in _all(once.findings) if f[3] == "GPU201"
    ]
    assert any(f[3] == "GPU201" for f in _all(plain.findings))


def test_the_sources_fingerprint_lists_each_source_file_by_size_and_time(tmp_path: Path) -> None:
    from gpulint.engine.cache import _fingerprint_into

    (tmp_path / "sub" / "__pycache__").mkdir(parents=True)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.json").write_text("{}")
    (tmp_path / "sub" / "__pycache__" / "c.py").write_text("")
    (tmp_path / "notes.bin").write_bytes(b"\0")
    os.utime(tmp_path / "a.py", ns=(1, 2_000))
    os.utime(tmp_path / "sub" / "b.json", ns=(1, 3_000))
    found: list[tuple[str, int, int]] = []
    _fingerprint_into(str(tmp_path), "", found)
    assert found == [("a.py", 6, 2_000), ("sub/b.json", 2, 3_000)]
    # An edit that keeps the size still changes the time: entries of the old code go unread.
    (tmp_path / "a.py").write_text("x = 2\n")
    again: list[tuple[str, int, int]] = []
    _fingerprint_into(str(tmp_path), "", again)
    assert again[0][:2] == ("a.py", 6) and again[0] != found[0]


def test_the_sources_fingerprint_covers_every_module_of_the_package() -> None:
    from gpulint.engine.cache import _sources_fingerprint

    package = ROOT / "gpulint"
    modules = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    listed = {name for name, _, _ in _sources_fingerprint()}
    assert "engine/cache.py" in modules
    assert modules <= listed


def _context_runs(tmp_path: Path) -> tuple[list[str], dict[str, object]]:
    """A tree of the capacity fixtures, one given, the rest as context, and the options."""
    shutil.copytree(CASES / "capacity", tmp_path / "k8s")
    given = ["k8s/" + sorted(os.listdir(CASES / "capacity"))[0]]
    options = {
        "config": Config(root=tmp_path, context=("k8s",), select=("ALL",)),
        "profile_paths": (str(PROFILES / "eks.yaml"),),
        "root": str(tmp_path),
        "use_cache": True,
        "cache_dir": str(tmp_path / "cache"),
    }
    return given, options


def test_context_outcomes_are_read_from_one_pack(tmp_path: Path) -> None:
    given, options = _context_runs(tmp_path)
    expected = _all(lint(given, **{**options, "use_cache": False}).findings)
    lint(given, **options)
    stored = set(_entries(tmp_path / "cache"))
    assert _all(lint(given, **options).findings) == expected
    # The pack gives a run every context outcome it reads: without their own entries, none
    # is read from its file and stored again.
    folder = tmp_path / "cache" / "results"
    packs = [n for n in stored if _is_pack(folder / n)]
    assert len(packs) == 1
    packed = _packed_keys(folder / packs[0])
    own = {n for n in stored if isinstance(_unpickled(folder / n), FileOutcome)}
    assert len(own) > len(packed) >= 10  # each file's outcome, and summaries of some
    assert {name for name, _ in packed} == {str(tmp_path / n) for n in _context_files(tmp_path)}
    for name in own:
        os.remove(folder / name)
    assert _all(lint(given, **options).findings) == expected
    assert set(_entries(tmp_path / "cache")) == stored - own
    # The knowledge objects of the context files too: with the two packs alone, the run reads
    # and stores nothing else.
    knowledge = [n for n in stored - own if _is_knowledge_pack(folder / n)]
    assert len(knowledge) == 1
    for name in stored - own - {*packs, *knowledge}:
        os.remove(folder / name)
    assert _all(lint(given, **options).findings) == expected
    assert set(_entries(tmp_path / "cache")) == {*packs, *knowledge}


def _context_files(tmp_path: Path) -> list[str]:
    """The fixtures under k8s/ that hold what GPU201 keeps, the given one left out."""
    names = sorted(os.listdir(tmp_path / "k8s"))[1:]
    return [f"k8s/{n}" for n in names if b"containers" in (tmp_path / "k8s" / n).read_bytes()]


def _is_knowledge_pack(path: Path) -> bool:
    """Whether the entry at `path` is a pack of the knowledge objects of files."""
    from gpulint.model import Document

    found = _unpickled(path)
    return (
        isinstance(found, dict)
        and bool(found)
        and all(
            isinstance(v, tuple) and all(isinstance(d, Document) for d in v) for v in found.values()
        )
        and any(found.values())
    )


def _unpickled(path: Path) -> object:
    """What the entry at `path` holds, references to the run's objects read as None."""
    import io
    import pickle

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid: object) -> object:
            return None

    return Unpickler(io.BytesIO(path.read_bytes())).load()


def _packed_keys(path: Path) -> set[tuple[str, bytes]]:
    found = _unpickled(path)
    assert isinstance(found, dict)
    return set(found)


def _is_pack(path: Path) -> bool:
    """Whether the entry at `path` is a pack: file outcomes by their entries' keys."""
    from gpulint.engine.files import FileOutcome

    found = _unpickled(path)
    return isinstance(found, dict) and all(isinstance(v, FileOutcome) for v in found.values())


def test_a_pack_that_is_not_one_is_not_read(tmp_path: Path) -> None:
    import pickle

    given, options = _context_runs(tmp_path)
    expected = _all(lint(given, **{**options, "use_cache": False}).findings)
    lint(given, **options)
    folder = tmp_path / "cache" / "results"
    pack = next(n for n in _entries(tmp_path / "cache") if _is_pack(folder / n))
    marker = tmp_path / "ran"
    for planted in (pickle.dumps(_Planted(str(marker))), pickle.dumps({"key": ["no outcome"]})):
        (folder / pack).write_bytes(planted)
        assert _all(lint(given, **options).findings) == expected
        assert not marker.exists()
