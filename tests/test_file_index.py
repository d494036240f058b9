"""The context files' index (gpulint.engine.known): a file whose stat did not change since a
run read it is known by the digest of its bytes without being read; any change to it, one
made in the same clock tick as the read, and an index that is not the user's own or not of
the index's shape, make the file be read again."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpulint.api import lint
from gpulint.config import Config
from gpulint.engine import known
from gpulint.engine.known import FILES, FileIndex, KnownFile, content_digest
from gpulint.filetypes import forget_directories
from gpulint.findings import Finding

WORDS = (b"containers", b"ResourceQuota")
QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: "4"}
"""
JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: NAME, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: train:1.0
        resources:
          limits: {nvidia.com/gpu: GPUS}
"""


@pytest.fixture()
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the test count as settled at once (the window in which a file just
    written is not recorded is two seconds: the test that needs it waits them out)."""
    monkeypatch.setattr(known, "_RACY_NS", 0)


def index(cache: Path, root: Path) -> FileIndex:
    return FileIndex(cache, str(root), WORDS)


@pytest.mark.usefixtures("settled")
def test_a_file_read_once_is_known_by_its_digest_until_it_changes(tmp_path: Path) -> None:
    quota = tmp_path / "quota.yaml"
    quota.write_text(QUOTA, encoding="utf-8")
    first = index(tmp_path / "cache", tmp_path)
    assert first.known(str(quota)) == QUOTA.encode()  # not known yet: read
    first.write()
    found = index(tmp_path / "cache", tmp_path).known(str(quota))
    assert found == KnownFile(str(quota), content_digest(QUOTA.encode()), frozenset(WORDS[1:]))
    assert isinstance(found, KnownFile) and found.read() == QUOTA.encode()
    # The same size, and the modification time put back: the change time still differs.
    stat = quota.stat()
    quota.write_text(QUOTA.replace('"4"', '"8"'), encoding="utf-8")
    os.utime(quota, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert quota.stat().st_size == stat.st_size
    assert (
        index(tmp_path / "cache", tmp_path).known(str(quota))
        == QUOTA.replace('"4"', '"8"').encode()
    )
    # What the index said is not taken for the bytes that are there now.
    assert found.read() is None


def test_a_file_written_in_the_last_two_seconds_is_read_until_it_settles(tmp_path: Path) -> None:
    quota = tmp_path / "quota.yaml"
    quota.write_text(QUOTA, encoding="utf-8")
    first = index(tmp_path / "cache", tmp_path)
    assert first.known(str(quota)) == QUOTA.encode()
    first.write()  # nothing learnt: it may still change within the same clock tick
    assert not (tmp_path / "cache" / FILES).exists()
    time.sleep(2.1)
    second = index(tmp_path / "cache", tmp_path)
    assert second.known(str(quota)) == QUOTA.encode()
    second.write()
    assert isinstance(index(tmp_path / "cache", tmp_path).known(str(quota)), KnownFile)


@pytest.mark.usefixtures("settled")
def test_an_index_of_another_shape_or_not_the_users_own_is_not_read(tmp_path: Path) -> None:
    quota = tmp_path / "quota.yaml"
    quota.write_text(QUOTA, encoding="utf-8")
    cache = tmp_path / "cache"
    first = index(cache, tmp_path)
    first.known(str(quota))
    first.write()
    (stored,) = (cache / FILES).iterdir()
    good = stored.read_bytes()
    # A pickle that builds a class, a truncated one, and values of the wrong shape.
    for data in (
        b"cos\nsystem\n(S'true'\ntR.",
        good[:20],
        b"\x80\x05}\x94(\x8c\x01a\x94K\x01u.",  # {"a": 1}
    ):
        stored.write_bytes(data)
        assert index(cache, tmp_path).known(str(quota)) == QUOTA.encode()
    # A symlink in its place, to an index that would say the file is known.
    elsewhere = tmp_path / "elsewhere.pickle"
    elsewhere.write_bytes(good)
    stored.unlink()
    stored.symlink_to(elsewhere)
    assert index(cache, tmp_path).known(str(quota)) == QUOTA.encode()
    # Each project root has its own index.
    stored.unlink()
    stored.write_bytes(good)
    assert isinstance(index(cache, tmp_path).known(str(quota)), KnownFile)
    assert index(cache, tmp_path / "other").known(str(quota)) == QUOTA.encode()


def _found(findings: object) -> list[tuple[object, ...]]:
    return [
        (f.path, f.line, f.column, f.code, f.message)
        for f in findings  # type: ignore[attr-defined]
        if isinstance(f, Finding)
    ]


@pytest.mark.usefixtures("settled")
def test_a_context_known_by_the_index_gives_what_reading_it_gives(tmp_path: Path) -> None:
    tree = tmp_path / "k8s"
    tree.mkdir()
    (tree / "quota.yaml").write_text(QUOTA, encoding="utf-8")
    (tree / "a.yaml").write_text(JOB.replace("NAME", "a").replace("GPUS", "3"), encoding="utf-8")
    (tree / "b.yaml").write_text(JOB.replace("NAME", "b").replace("GPUS", "1"), encoding="utf-8")
    for n in range(40):  # enough files for the results cache to be used
        (tree / f"cm-{n}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{n}}}\n", encoding="utf-8"
        )
    config = Config(root=tmp_path, context=("k8s",), select=("GPU301",))
    options = {"config": config, "root": str(tmp_path)}
    cached = {**options, "use_cache": True, "cache_dir": str(tmp_path / "cache")}
    assert _found(lint(["k8s/a.yaml"], **options).findings) == []
    lint(["k8s/a.yaml"], **cached)  # learns the context
    assert (tmp_path / "cache" / FILES).is_dir()
    assert _found(lint(["k8s/a.yaml"], **cached).findings) == []
    # b grows past the quota with a, in the same number of bytes: a's finding (which sums b's
    # GPUs) is reported, as a run without the cache reports it.
    (tree / "b.yaml").write_text(JOB.replace("NAME", "b").replace("GPUS", "2"), encoding="utf-8")
    plain = _found(lint(["k8s/a.yaml"], **options).findings)
    assert [(path, code) for path, _, _, code, _ in plain] == [("k8s/a.yaml", "GPU301")]
    assert _found(lint(["k8s/a.yaml"], **cached).findings) == plain
    # A change to the quota, a knowledge object, is seen too.
    (tree / "quota.yaml").write_text(QUOTA.replace('"4"', '"9"'), encoding="utf-8")
    assert _found(lint(["k8s/a.yaml"], **cached).findings) == []


@pytest.mark.usefixtures("settled")
def test_a_symlink_is_read_each_time_not_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether a link may be read (not out of the checked tree) is decided at each read.
    tree = tmp_path / "tree"
    tree.mkdir()
    monkeypatch.chdir(tree)
    quota = tree / "quota.yaml"
    quota.write_text(QUOTA, encoding="utf-8")
    link = tree / "link.yaml"
    link.symlink_to(quota.name)
    first = index(tmp_path / "cache", tree)
    assert first.known(str(link)) == QUOTA.encode()
    first.known(str(quota))
    first.write()
    again = index(tmp_path / "cache", tree)
    assert again.known(str(link)) == QUOTA.encode()
    assert isinstance(again.known(str(quota)), KnownFile)
    # The same file moved out of the tree, the link following it: refused, not known.
    outside = tmp_path / "outside.yaml"
    quota.rename(outside)
    link.unlink()
    link.symlink_to(outside)
    refused = index(tmp_path / "cache", tree).known(str(link))
    assert isinstance(refused, OSError)
    assert "outside the checked tree" in str(refused)


@pytest.mark.usefixtures("settled")
def test_a_file_reached_through_a_directory_linked_out_of_the_tree_is_not_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Moving the directory out keeps each file's stat: the link back must still be refused.
    tree = tmp_path / "tree"
    (tree / "k8s").mkdir(parents=True)
    monkeypatch.chdir(tree)
    quota = tree / "k8s" / "quota.yaml"
    quota.write_text(QUOTA, encoding="utf-8")
    first = index(tmp_path / "cache", tree)
    first.known(str(quota))
    first.write()
    assert isinstance(index(tmp_path / "cache", tree).known(str(quota)), KnownFile)
    (tree / "k8s").rename(tmp_path / "k8s")
    (tree / "k8s").symlink_to(tmp_path / "k8s")
    forget_directories()  # as the next run (lint()) does
    refused = index(tmp_path / "cache", tree).known(str(quota))
    assert isinstance(refused, OSError)
    assert "outside the checked tree" in str(refused)


def test_a_directory_linked_out_between_two_runs_of_a_process_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether a directory is a link is looked up once per directory, and again by each run.
    tree = tmp_path / "tree"
    (tree / "k8s").mkdir(parents=True)
    (tree / "k8s" / "job.yaml").write_text(JOB.replace("NAME", "a").replace("GPUS", "1"))
    monkeypatch.chdir(tree)
    first = lint(["k8s/job.yaml"], root=str(tree), select=("GPU000",))
    assert (first.files, first.objects, first.findings) == (1, 1, ())
    (tree / "k8s").rename(tmp_path / "k8s")
    (tree / "k8s").symlink_to(tmp_path / "k8s")
    again = lint(["k8s/job.yaml"], root=str(tree), select=("GPU000",))
    assert again.objects == 0
    assert [(f.code, f.message) for f in again.findings] == [
        (
            "GPU000",
            f"cannot read file: a symlink to {tmp_path / 'k8s' / 'job.yaml'}, "
            "outside the checked tree",
        )
    ]
