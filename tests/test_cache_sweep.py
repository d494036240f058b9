"""The cache is swept (gpulint.cachedir.sweep): entries no run read or wrote for a month are
removed, once a day at most; a read marks an entry used; nothing but gpulint's own entries
is ever removed, whatever directory `--cache-dir` names."""

from __future__ import annotations

import os
import time
from pathlib import Path

from gpulint.api import lint
from gpulint.cachedir import open_own_directory, read_own_file, sweep

DAY = 86400
ROOT = Path(__file__).resolve().parent.parent
DIGEST = "ab" * 32


def aged(path: Path, days: float) -> Path:
    """`path`, last modified `days` ago."""
    then = time.time() - days * DAY
    os.utime(path, (then, then), follow_symlinks=False)
    return path


def entry(cache: Path, folder: str, name: str, days: float) -> Path:
    (cache / folder).mkdir(parents=True, exist_ok=True)
    path = cache / folder / name
    path.write_bytes(b"entry")
    return aged(path, days)


def test_entries_unused_for_a_month_are_removed_and_nothing_else(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    old = entry(cache, "results", f"{DIGEST}.pickle", 31)
    recent = entry(cache, "results", f"{'cd' * 32}.pickle", 29)
    old_profile = entry(cache, "profiles", f"{DIGEST}.pickle", 40)
    old_config = entry(cache, "configs", DIGEST, 40)
    cut_short = entry(cache, "renders", ".0123456789abcdef.tmp", 2)
    writing = entry(cache, "renders", ".fedcba9876543210.tmp", 0)
    # Not gpulint's entries: another name, a folder sweep does not know, a symlink.
    mine = entry(cache, "results", "notes.txt", 400)
    schema = entry(cache, "schemas", "v1.30-0123.kinds.cpython-311.marshal", 400)
    kept_elsewhere = entry(tmp_path, "elsewhere", f"{DIGEST}.pickle", 400)
    link = cache / "results" / f"{'ef' * 32}.pickle"
    link.symlink_to(kept_elsewhere)
    aged(link, 400)
    sweep(cache)
    assert not old.exists() and not old_profile.exists() and not old_config.exists()
    assert not cut_short.exists()
    assert recent.exists() and writing.exists()
    assert mine.exists() and schema.exists() and kept_elsewhere.exists() and link.is_symlink()


def test_a_cache_is_swept_once_a_day_at_most(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry(cache, "results", f"{'cd' * 32}.pickle", 1)
    sweep(cache)
    old = entry(cache, "results", f"{DIGEST}.pickle", 31)
    sweep(cache)  # swept already today
    assert old.exists()
    sweep(cache, now=time.time() + DAY + 60)
    assert not old.exists()


def test_a_read_marks_an_entry_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    old = entry(cache, "results", f"{DIGEST}.pickle", 20)
    with open_own_directory(cache / "results") as folder:
        assert read_own_file(old.name, folder) == b"entry"
    assert time.time() - old.stat().st_mtime < 60
    # Read again within a day: not written again.
    fresh = time.time() - 3600
    os.utime(old, (fresh, fresh))
    with open_own_directory(cache / "results") as folder:
        read_own_file(old.name, folder)
    assert old.stat().st_mtime == fresh


def test_a_run_sweeps_the_cache_it_uses(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    options = {"select": ("ALL",), "root": str(ROOT), "use_cache": True, "cache_dir": str(cache)}
    lint(["fixtures/cases/resources"], **options)
    stored = sorted(os.listdir(cache / "results"))
    assert len(stored) >= 8
    assert not (cache / ".swept").exists()  # made by the first run, after its sweep
    # An entry of an earlier config or gpulint release, unused for a month.
    unused = entry(cache, "results", f"{DIGEST}.pickle", 31)
    again = lint(["fixtures/cases/resources"], **options)
    plain = lint(["fixtures/cases/resources"], select=("ALL",), root=str(ROOT))
    assert again.findings == plain.findings
    assert not unused.exists()
    assert sorted(os.listdir(cache / "results")) == stored


def test_a_cached_render_is_read_as_the_other_entries_are(tmp_path: Path) -> None:
    from gpulint.render.cache import read_render, write_render

    cache = tmp_path / "cache"
    write_render(cache, DIGEST, "kind: Pod\n")
    stored = aged(cache / "renders" / f"{DIGEST}.yaml", 20)
    assert read_render(cache, DIGEST) == "kind: Pod\n"
    assert time.time() - stored.stat().st_mtime < 60  # marked used: a month of use keeps it
    # An entry that is a symlink is not followed.
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("kind: Secret\n", encoding="utf-8")
    (cache / "renders" / f"{'cd' * 32}.yaml").symlink_to(elsewhere)
    assert read_render(cache, "cd" * 32) is None


def test_the_values_files_of_traced_renders_are_kept_whole_and_swept(tmp_path: Path) -> None:
    import hashlib

    from gpulint.render.locate import _values_file

    cache = tmp_path / "cache"
    text = "gpus: 7385\n"
    with _values_file(text, cache) as path:
        assert path == cache / "values" / f"{hashlib.sha256(text.encode()).hexdigest()}.yaml"
        assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in (cache / "values").iterdir()] == [path.name]  # no temporary left
    aged(path, 31)
    sweep(cache)
    assert not path.exists()
