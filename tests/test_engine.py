"""The file-at-a-time engine: verdicts across files, suppressions after a file is gone, --jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulint.api import lint
from gpulint.config import Config
from gpulint.engine import pool
from gpulint.engine.record import Run
from gpulint.findings import Finding
from gpulint.loader import discover
from gpulint.model import Severity, Workload
from gpulint.spool import FindingSpool

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 1
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: main
        image: trainer:1.0
        resources:
          limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 2}%s
"""
HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: trainer, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: trainer}
  maxReplicas: 3
"""
QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: "4"}
"""


def _write(tmp_path: Path, suppression: str = "") -> list[str]:
    files = {"a.yaml": DEPLOYMENT % suppression, "b.yaml": HPA, "c.yaml": QUOTA}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return [str(tmp_path / name) for name in files]


def _seen(paths: list[str], **options: object) -> list[tuple[str, str, int, int]]:
    config = Config().with_overrides(select=("GPU301", "GPU006"), report_unused_ignores=True)
    result = lint(paths, config=config, **options)
    return [(Path(f.path).name, f.code, f.line, f.column) for f in result.findings]


def test_a_quota_and_an_hpa_in_later_files_judge_a_workload_read_before_them(
    tmp_path: Path,
) -> None:
    paths = _write(tmp_path)
    # 3 replicas (the HPA's maxReplicas) × 2 GPUs exceed the quota's 4, in any input order.
    expected = [("b.yaml", "GPU301", 6, 3)]
    assert _seen(paths) == expected
    assert _seen(list(reversed(paths))) == expected


def test_a_suppression_comment_covers_a_corpus_wide_finding_in_an_earlier_file(
    tmp_path: Path,
) -> None:
    paths = _write(tmp_path)[::2]  # the Deployment and the quota, no HPA
    workload = (DEPLOYMENT % "").replace(
        "replicas: 1\n", "replicas: 3  # gpulint: ignore[GPU301]\n"
    )
    (tmp_path / "a.yaml").write_text(workload)
    assert _seen(paths) == []
    # Once nothing exceeds the quota the same comment is reported as unused.
    (tmp_path / "c.yaml").write_text(QUOTA.replace('"4"', '"8"'))
    assert _seen(paths) == [("a.yaml", "GPU006", 5, 16)]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [2, 3])
def test_worker_processes_give_the_single_process_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    monkeypatch.setattr(pool, "PARALLEL_MIN_BYTES", 0)
    corpus = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
    config = Config()
    single = lint([str(corpus)], config=config, jobs=1)
    parallel = lint([str(corpus)], config=config, jobs=jobs)
    assert len(single.findings) > 100
    assert parallel == single


def test_the_run_names_files_relative_to_its_root_and_stdin_as_given() -> None:
    run = Run(
        paths=(), config=Config(), rules=(), root="/repo", shown={"/repo/./a.yaml": "./a.yaml"}
    )
    assert run.display("/repo/k8s/a.yaml") == "k8s/a.yaml"
    assert run.display("/elsewhere/b.yaml") == "/elsewhere/b.yaml"
    assert run.display("/repo/./a.yaml") == "./a.yaml"  # stdin's name, exactly as given
    assert Run(paths=(), config=Config(), rules=()).display("k8s/../a.yaml") == "k8s/../a.yaml"


def test_few_or_small_files_are_checked_without_worker_processes(tmp_path: Path) -> None:
    _write(tmp_path)
    assert not pool.worth_processes(discover([str(tmp_path)]), 2)  # 3 files
    for i in range(40):
        (tmp_path / f"more-{i:02}.yaml").write_text(HPA)
    # 43 small files: less than PARALLEL_MIN_BYTES
    assert not pool.worth_processes(discover([str(tmp_path)]), 2)
    (tmp_path / "big.yaml").write_bytes(b"#" * pool.PARALLEL_MIN_BYTES)
    assert pool.worth_processes(discover([str(tmp_path)]), 2)


@pytest.mark.slow
def test_spooled_findings_read_back_as_the_in_memory_ones(tmp_path: Path) -> None:
    corpus = Path(__file__).resolve().parent.parent / "fixtures" / "cases"
    in_memory = lint([str(corpus)], config=Config()).findings
    spooled = lint([str(corpus)], config=Config(), spool_findings=True).findings
    assert isinstance(spooled, FindingSpool)
    assert len(in_memory) > 100 and len(spooled) == len(in_memory)
    assert list(spooled) == list(in_memory)
    assert list(spooled) == list(in_memory)  # read again from the start


def test_a_spool_merges_late_findings_into_batches_in_report_order() -> None:
    def finding(path: str, line: int) -> Finding:
        return Finding("GPU001", "n", Severity.ERROR, path, line, 1, "m", None)

    spool = FindingSpool()
    in_order = [finding(f"f{i:04}.yaml", 1) for i in range(2 * FindingSpool._BATCH + 7)]
    spool.extend(in_order[: FindingSpool._BATCH + 3])  # one batch written, 3 pending
    spool.extend(in_order[FindingSpool._BATCH + 3 :])
    late = [finding("f0001.yaml", 0), finding("zzz.yaml", 5), finding("a.yaml", 9)]
    spool.add_late(late)
    assert len(spool) == len(in_order) + 3
    assert list(spool) == sorted([*in_order, *late], key=lambda f: f.sort_key)
    spool.close()


def test_files_are_checked_in_report_order_whatever_order_they_are_given(
    tmp_path: Path,
) -> None:
    paths = _write(tmp_path)
    config = Config().with_overrides(select=("GPU301", "GPU006"), report_unused_ignores=True)
    given = lint(paths, config=config, spool_findings=True).findings
    reversed_ = lint(paths[::-1], config=config, spool_findings=True).findings
    assert list(given) == list(reversed_) and len(given) > 0


@pytest.mark.parametrize("jobs", [1, 2])
def test_identical_copies_of_a_workload_count_once_and_the_first_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    monkeypatch.setattr(pool, "PARALLEL_MIN_BYTES", 0)
    (tmp_path / "quota.yaml").write_text(QUOTA)
    for copy in ("copy0", "copy1", "copy2"):
        (tmp_path / copy).mkdir()
        (tmp_path / copy / "a.yaml").write_text(DEPLOYMENT % "")
        (tmp_path / copy / "b.yaml").write_text(HPA)
    paths = [str(tmp_path)]
    # (3 replicas + 1 surge) × 2 GPUs once, not three times, exceed the quota's 4: at the
    # first copy's HPA.
    assert _seen(paths, jobs=jobs, root=str(tmp_path)) == [("b.yaml", "GPU301", 6, 3)]
    result = lint(paths, config=Config().with_overrides(select=("GPU301",)), root=str(tmp_path))
    assert [f.path for f in result.findings] == ["copy0/b.yaml"]
    assert "requested 8 ((3 maxReplicas of HPA ml/trainer + 1 rolling-update surge) × 2) = 8 >" in (
        result.findings[0].message
    )


def test_a_copy_is_dropped_only_when_its_tree_is_the_same_value_for_value() -> None:
    from gpulint.engine.variants import Variants, same_tree
    from gpulint.loader import load_text
    from gpulint.workloads import workload_of

    def workload(name: str, text: str) -> Workload:
        (document,) = load_text(name, text).documents
        found = workload_of(document)
        assert found is not None
        return found

    first = workload("a.yaml", DEPLOYMENT % "")
    moved = workload("b.yaml", "\n\n" + DEPLOYMENT % "")  # elsewhere in another file
    other = workload("c.yaml", (DEPLOYMENT % "").replace("replicas: 1", "replicas: 2"))
    variants = Variants(lambda document: "ml", renders={"rendered.yaml"})
    assert not variants.repeats("GPU301", first)
    assert variants.repeats("GPU301", moved)
    assert not variants.repeats("GPU201", moved)  # each rule keeps its own
    assert not variants.repeats("GPU301", other)
    assert not variants.repeats("GPU301", workload("rendered.yaml", DEPLOYMENT % ""))
    assert same_tree({"a": [1, "x"]}, {"a": [1, "x"]})
    assert not same_tree({"a": 1}, {"a": True})  # equal to ==, not to the API
    assert not same_tree({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same_tree({"a": [1]}, {"a": [1, 1]})
