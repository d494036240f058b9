"""A run given one file with `context:` reports for that file exactly what a run over every
file reports for it: the corpus-wide rules (GPU201's shared pools, GPU301's quotas, GPU303's
LimitRanges) sum the context files' objects with the given file's, whichever of them the
corpus pass judges, with the results cache cold or warm and with one or two jobs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpulint.api import lint
from gpulint.cachedir import CACHE_MIN_FILES
from gpulint.config import Config
from gpulint.findings import Finding
from tests.manifests import GPU_DEPLOYMENT as WORKLOAD

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "fixtures" / "cases"
PROFILE = str(ROOT / "fixtures" / "profiles" / "eks.yaml")
#: Fixtures whose corpus-wide findings combine objects: split one document per file, each
#: finding combines objects of several files.
SPLIT = ("capacity/GPU201-*.yaml", "admission/GPU301-*.yaml", "admission/GPU303-*.yaml")

PAD = """apiVersion: v1
kind: Pod
metadata: {{name: web-{n}, namespace: web}}
spec:
  containers:
  - {{name: web, image: web:1.0}}
"""


def _split(tree: Path) -> dict[str, list[str]]:
    """Each document of the SPLIT fixtures as a file of its own under `tree/<fixture>/`: the
    files of each fixture, by the fixture's directory (fixtures reuse names and namespaces,
    so each is a corpus of its own)."""
    found: dict[str, list[str]] = {}
    for pattern in SPLIT:
        for fixture in sorted(CASES.glob(pattern)):
            text = fixture.read_text(encoding="utf-8")
            documents = [d for d in text.split("\n---\n") if "kind:" in d]
            for n, document in enumerate(documents):
                name = f"{fixture.stem}/{n}.yaml"
                (tree / name).parent.mkdir(parents=True, exist_ok=True)
                (tree / name).write_text(document.strip("-\n") + "\n", encoding="utf-8")
                found.setdefault(fixture.stem, []).append(name)
            # Enough context files for the results cache to be used (CACHE_MIN_FILES): pods
            # without GPUs in a namespace of their own, which no GPU rule counts.
            for n in range(CACHE_MIN_FILES):
                pad = tree / fixture.stem / f"web-{n}.yaml"
                pad.write_text(PAD.format(n=n), encoding="utf-8")
    return found


def _at(findings: object, path: str) -> list[tuple[object, ...]]:
    return [
        (f.line, f.column, f.code, f.severity, f.message, f.fix)
        for f in findings  # type: ignore[attr-defined]
        if isinstance(f, Finding) and f.path == path
    ]


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_given_file_gets_what_a_run_over_every_file_gives_it(tmp_path: Path, jobs: int) -> None:
    tree = tmp_path / "tree"
    cache = str(tmp_path / "cache")
    codes: set[str] = set()
    for directory, names in _split(tree).items():
        options = {"profile_paths": (PROFILE,), "root": str(tree), "jobs": jobs}
        every = lint([directory], config=Config(root=tree, select=("ALL",)), **options).findings
        combined = {
            f.path for f in every if f.code in ("GPU201", "GPU301", "GPU303") and f.path in names
        }
        codes |= {f.code for f in every if f.path in combined and f.code.startswith("GPU3")}
        codes |= {f.code for f in every if f.path in combined and f.code == "GPU201"}
        # Each file with a combined finding, and one without (judged against the others).
        quiet = [name for name in names if name not in combined][:1]
        config = Config(root=tree, context=(directory,), select=("ALL",))
        for given in [*sorted(combined), *quiet]:
            plain = lint([given], config=config, **options)
            cold = lint([given], config=config, use_cache=True, cache_dir=cache, **options)
            warm = lint([given], config=config, use_cache=True, cache_dir=cache, **options)
            expected = _at(every, given)
            assert _at(plain.findings, given) == expected, given
            assert _at(cold.findings, given) == expected, given
            assert _at(warm.findings, given) == expected, given
    assert os.listdir(Path(cache) / "results")  # the context was read from the cache
    assert {"GPU201", "GPU301", "GPU303"} <= codes


HPA = """apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: wide, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: wide}
  maxReplicas: 200
  minReplicas: 100
  # A value target: the pods request no cpu, which a utilization target would need.
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}
"""


def test_a_finding_elsewhere_that_counts_the_given_file_is_reported(tmp_path: Path) -> None:
    # `small` can only use g5; `wide` can use g5 or p4d and overflows both, counting `small`:
    # given only small's file, wide's finding (in another file) combines it and is reported.
    on = "\n      nodeSelector: {{node.kubernetes.io/instance-type: {}}}".format
    written = {
        "small": WORKLOAD.format(name="small", replicas=1, selector=on("g5.12xlarge")),
        "wide": WORKLOAD.format(name="wide", replicas=100, selector=""),
        "big": WORKLOAD.format(name="big", replicas=10, selector=on("p4d.24xlarge")),
    }
    written["scale"] = HPA
    written["settings"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
    for name, text in written.items():
        (tmp_path / "k8s").mkdir(exist_ok=True)
        (tmp_path / "k8s" / f"{name}.yaml").write_text(text, encoding="utf-8")
    options = {"profile_paths": (PROFILE,), "root": str(tmp_path)}
    every = lint(["k8s"], config=Config(root=tmp_path, select=("GPU201",)), **options).findings
    config = Config(root=tmp_path, context=("k8s",), select=("GPU201",))
    found = lint(["k8s/small.yaml"], config=config, **options).findings
    # wide's finding is written at the maxReplicas of the HPA that sets its count.
    wide = _at(every, "k8s/scale.yaml")
    assert [(line, code) for line, _, code, *_ in wide] == [(6, "GPU201")]
    assert _at(found, "k8s/scale.yaml") == wide
    assert _at(found, "k8s/small.yaml") == _at(every, "k8s/small.yaml")
    # big overflows p4d, where small cannot run: its finding does not count small.
    assert [code for _, _, code, *_ in _at(every, "k8s/big.yaml")] == ["GPU201"]
    assert _at(found, "k8s/big.yaml") == []
    # Given only the HPA, the same finding.
    scaled = lint(["k8s/scale.yaml"], config=config, **options).findings
    assert [(f.path, f.line, f.code) for f in scaled] == [("k8s/scale.yaml", 6, "GPU201")]
    assert _at(scaled, "k8s/scale.yaml") == wide
    # Given a file no finding combines, nothing is reported.
    assert list(lint(["k8s/settings.yaml"], config=config, **options).findings) == []


SCALED_OBJECT = """apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: wide, namespace: ml}
spec:
  scaleTargetRef: {name: wide}
  minReplicaCount: 100
  maxReplicaCount: 200
  triggers:
  - {type: prometheus, metadata: {query: q, threshold: '1'}}
"""


def test_a_scaled_object_in_a_context_file_counts_like_an_hpa(tmp_path: Path) -> None:
    # A KEDA ScaledObject sets wide's count as the HPA above does: given only small's file or
    # only the ScaledObject's, the finding at its maxReplicaCount is reported, as by a run
    # over every file, with the results cache cold and warm.
    on = "\n      nodeSelector: {{node.kubernetes.io/instance-type: {}}}".format
    written = {
        "small": WORKLOAD.format(name="small", replicas=1, selector=on("g5.12xlarge")),
        "wide": WORKLOAD.format(name="wide", replicas=1, selector=""),
        "scale": SCALED_OBJECT,
    }
    written.update({f"pad-{n}": PAD.format(n=n) for n in range(CACHE_MIN_FILES)})
    (tmp_path / "k8s").mkdir()
    for name, text in written.items():
        (tmp_path / "k8s" / f"{name}.yaml").write_text(text, encoding="utf-8")
    options = {"profile_paths": (PROFILE,), "root": str(tmp_path)}
    every = lint(["k8s"], config=Config(root=tmp_path, select=("GPU201",)), **options).findings
    wide = _at(every, "k8s/scale.yaml")
    assert [(line, column, code) for line, column, code, *_ in wide] == [(7, 3, "GPU201")]
    assert "ScaledObject ml/wide maxReplicaCount: 200" in str(wide[0][4])
    config = Config(root=tmp_path, context=("k8s",), select=("GPU201",))
    cache = str(tmp_path / "cache")
    for given in ("k8s/small.yaml", "k8s/scale.yaml"):
        for cached in (False, True, True):
            found = lint([given], config=config, use_cache=cached, cache_dir=cache, **options)
            assert _at(found.findings, "k8s/scale.yaml") == wide, given
