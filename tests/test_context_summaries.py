"""A run with `context:` and a warm results cache judges the context files' GPU demands from
their summaries (gpulint.engine.summaries): it reads a context file's whole outcome only for a
finding of its own or when the summary could count it wrong, and reports exactly what a run
over every file reports for the given file."""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.api import lint
from gpulint.cachedir import CACHE_MIN_FILES
from gpulint.config import Config
from gpulint.engine.context import summary_key
from gpulint.findings import Finding
from tests.manifests import GPU_DEPLOYMENT as WORKLOAD

ROOT = Path(__file__).resolve().parent.parent
PROFILE = str(ROOT / "fixtures" / "profiles" / "eks.yaml")


HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}, namespace: ml}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  maxReplicas: {most}
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: AverageValue, averageValue: 500m}}}}
"""

#: Only g5 (without it: g5 or p4d).
ON_G5 = "\n      nodeSelector: {node.kubernetes.io/instance-type: g5.12xlarge}"

PAD = """apiVersion: v1
kind: ConfigMap
metadata: {{name: pad-{n}, namespace: web}}
data: {{containers: none}}
"""


def _tree(root: Path, written: dict[str, str]) -> None:
    """`written` under k8s/, with enough other files for the results cache to be used."""
    (root / "k8s").mkdir()
    files = {**written, **{f"pad-{n}": PAD.format(n=n) for n in range(CACHE_MIN_FILES)}}
    for name, text in files.items():
        (root / "k8s" / f"{name}.yaml").write_text(text, encoding="utf-8")


def _all(findings: object) -> list[tuple[object, ...]]:
    return [
        (f.path, f.line, f.column, f.code, f.severity, f.message, f.fix)
        for f in findings  # type: ignore[attr-defined]
        if isinstance(f, Finding)
    ]


def _entries(cache: Path) -> tuple[list[str], list[str]]:
    """The whole outcomes that have a summary, and their summaries, in the cache."""
    names = {name.removesuffix(".pickle") for name in os.listdir(cache / "results")}
    summed = {key: summary_key(key) for key in names if summary_key(key) in names}
    return sorted(summed), sorted(summed.values())


def _runs(root: Path, given: str, cache: Path) -> tuple[list[object], list[object]]:
    """What a run over every file reports for `given`, and what a run given it with the rest
    as context reports, with the cache warm."""
    options = {"profile_paths": (PROFILE,), "root": str(root)}
    every = lint(["k8s"], config=Config(root=root, select=("GPU201",)), **options)
    config = Config(root=root, context=("k8s",), select=("GPU201",))
    cached = {"use_cache": True, "cache_dir": str(cache)}
    lint([given], config=config, **cached, **options)  # fills the cache
    warm = lint([given], config=config, **cached, **options)
    expected = [f for f in _all(every.findings) if f[0] == given]
    return expected, _all(warm.findings)


def test_the_sums_come_from_the_summaries_alone(tmp_path: Path) -> None:
    # Eleven Deployments of 4 GPUs each on g5 (2 nodes × 4 at most): the given one overflows
    # the pool with the others, and its finding sums them all.
    written = {
        f"serve-{n}": WORKLOAD.format(name=f"serve-{n}", replicas=1, selector=ON_G5)
        for n in range(11)
    }
    _tree(tmp_path, written)
    cache = tmp_path / "cache"
    expected, warm = _runs(tmp_path, "k8s/serve-0.yaml", cache)
    assert [f[3] for f in expected] == ["GPU201"]
    assert "and 7 more" in str(expected[0][5])
    assert warm == expected
    whole, summaries = _entries(cache)
    assert len(summaries) == 10  # one per context file that keeps a GPU workload
    # Without the whole outcomes, the run sums the same from the summaries and reads none of
    # the summarized files again (it would store its whole outcome anew).
    for name in whole:
        os.remove(cache / "results" / f"{name}.pickle")
    config = Config(root=tmp_path, context=("k8s",), select=("GPU201",))
    again = lint(
        ["k8s/serve-0.yaml"],
        config=config,
        profile_paths=(PROFILE,),
        root=str(tmp_path),
        use_cache=True,
        cache_dir=str(cache),
    )
    assert _all(again.findings) == expected
    left = {name.removesuffix(".pickle") for name in os.listdir(cache / "results")}
    assert set(summaries) <= left
    assert left.isdisjoint(whole)


def test_a_context_workload_s_own_finding_reads_it_whole(tmp_path: Path) -> None:
    # `wide` overflows g5 alone; the given `small` has no finding of its own, so wide's
    # finding, which counts it, is reported, read from wide's whole outcome, or from the file
    # when that entry is gone.
    written = {
        "small": WORKLOAD.format(name="small", replicas=1, selector=ON_G5),
        "wide": WORKLOAD.format(name="wide", replicas=1, selector=""),
        "scale": HPA.format(name="wide", most=40),
    }
    _tree(tmp_path, written)
    cache = tmp_path / "cache"
    options = {"profile_paths": (PROFILE,), "root": str(tmp_path)}
    every = _all(
        lint(["k8s"], config=Config(root=tmp_path, select=("GPU201",)), **options).findings
    )
    expected, warm = _runs(tmp_path, "k8s/small.yaml", cache)
    assert expected == []
    reported = [f for f in every if f[0] == "k8s/scale.yaml"]
    assert [(f[1], f[3]) for f in reported] == [(6, "GPU201")]
    assert warm == reported
    whole, _ = _entries(cache)
    assert whole
    for name in whole:
        os.remove(cache / "results" / f"{name}.pickle")
    config = Config(root=tmp_path, context=("k8s",), select=("GPU201",))
    cached = {"use_cache": True, "cache_dir": str(cache)}
    again = lint(["k8s/small.yaml"], config=config, **cached, **options)
    assert _all(again.findings) == reported


def test_a_variant_in_the_given_file_reads_the_context_copy_whole(tmp_path: Path) -> None:
    # The given file and a context file write the same Deployment, with 1 and 3 replicas:
    # counted once, as the variant asking for more GPUs, whose file is then read whole.
    written = {
        "mine": WORKLOAD.format(name="shared", replicas=1, selector=ON_G5),
        "theirs": WORKLOAD.format(name="shared", replicas=3, selector=ON_G5),
        "other": WORKLOAD.format(name="other", replicas=4, selector=ON_G5),
    }
    _tree(tmp_path, written)
    expected, warm = _runs(tmp_path, "k8s/other.yaml", tmp_path / "cache")
    assert [f[3] for f in expected] == ["GPU201"]
    assert "Deployment/ml/shared (12: replicas: 3 × 4)" in str(expected[0][5])
    assert warm == expected


def test_an_autoscaler_of_another_file_reads_its_target_whole(tmp_path: Path) -> None:
    # wide's own file gives it no HPA (1 pod); the HPA in another file makes it 10 pods of 4
    # GPUs on g5 (24 at most), and small's 4 no longer fit beside them.
    written = {
        "small": WORKLOAD.format(name="small", replicas=1, selector=ON_G5),
        "wide": WORKLOAD.format(name="wide", replicas=1, selector=ON_G5),
        "scale": HPA.format(name="wide", most=10),
    }
    _tree(tmp_path, written)
    expected, warm = _runs(tmp_path, "k8s/small.yaml", tmp_path / "cache")
    assert [f[3] for f in expected] == ["GPU201"]
    assert "Deployment/ml/wide (40: HPA ml/wide maxReplicas: 10 × 4)" in str(expected[0][5])
    assert warm == expected


GANG = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  minAvailable: 13
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: 13
    template:
      spec:
        tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
        containers:
        - name: worker
          image: trainer:1.0
          resources:
            limits: {nvidia.com/gpu: 4}
"""


def test_a_gang_in_the_context_is_read_whole_for_its_own_finding(tmp_path: Path) -> None:
    # The gang needs 52 GPUs at once on g5 or p4d (56 at most): it fits alone, not beside the
    # given file's 8 on g5. The given file has no finding of its own (g5 holds its 8), so the
    # gang's finding, which counts it, is reported, from the gang read whole.
    written = {"small": WORKLOAD.format(name="small", replicas=2, selector=ON_G5), "gang": GANG}
    _tree(tmp_path, written)
    options = {"profile_paths": (PROFILE,), "root": str(tmp_path)}
    config = Config(root=tmp_path, select=("GPU201",))
    every = _all(lint(["k8s"], config=config, **options).findings)
    reported = [f for f in every if f[0] == "k8s/gang.yaml"]
    assert [(f[1], f[3]) for f in reported] == [(5, "GPU201")]
    assert "fits alone but not alongside the others" in str(reported[0][5])
    expected, warm = _runs(tmp_path, "k8s/small.yaml", tmp_path / "cache")
    assert expected == []
    assert warm == reported


def test_a_summarized_workload_is_read_whole_for_its_own_finding(tmp_path: Path) -> None:
    # wide (15 pods of 4 GPUs on g5 or p4d: 60 against 56) overflows with the given small in
    # it; small fits on g5 alone. Nothing else writes or scales wide, so the run sums it from
    # its summary, and reads it whole for the finding at its replicas.
    written = {
        "small": WORKLOAD.format(name="small", replicas=1, selector=ON_G5),
        "wide": WORKLOAD.format(name="wide", replicas=15, selector=""),
    }
    _tree(tmp_path, written)
    options = {"profile_paths": (PROFILE,), "root": str(tmp_path)}
    config = Config(root=tmp_path, select=("GPU201",))
    every = _all(lint(["k8s"], config=config, **options).findings)
    reported = [f for f in every if f[0] == "k8s/wide.yaml"]
    assert [(f[1], f[2], f[3]) for f in reported] == [(5, 3, "GPU201")]
    assert "Deployment/ml/small (4: replicas: 1 × 4)" in str(reported[0][5])
    expected, warm = _runs(tmp_path, "k8s/small.yaml", tmp_path / "cache")
    assert expected == []
    assert warm == reported


def test_a_suppression_in_a_summarized_file_still_applies(tmp_path: Path) -> None:
    # As above, with wide's finding suppressed where it is written: a context file that holds
    # a marker keeps it in its summary, and nothing is reported, as over every file.
    wide = WORKLOAD.format(name="wide", replicas=15, selector="")
    written = {
        "small": WORKLOAD.format(name="small", replicas=1, selector=ON_G5),
        "wide": wide.replace("replicas: 15\n", "replicas: 15  # gpulint: ignore[GPU201]\n"),
    }
    _tree(tmp_path, written)
    options = {"profile_paths": (PROFILE,), "root": str(tmp_path)}
    every = lint(["k8s"], config=Config(root=tmp_path, select=("GPU201",)), **options)
    assert _all(every.findings) == []
    expected, warm = _runs(tmp_path, "k8s/small.yaml", tmp_path / "cache")
    assert expected == warm == []
