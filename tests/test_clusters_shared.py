"""A run against several clusters shares what does not depend on the profile: each file is
loaded once, and each per-file rule runs once for the clusters whose profiles agree on the
fields it reads (`profile_fields` of its record). Its report is byte for byte what one run per
cluster, merged, gave: fixtures/clusters/expected.txt and expected.json were written by that.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.api import KNOWLEDGE_KINDS, lint
from gpulint.cli import main
from gpulint.clusters import merge_results
from gpulint.config import Config, load_config
from gpulint.engine import files, pool
from gpulint.engine.files import lanes_of
from gpulint.engine.plan import FilePlan
from gpulint.loader import LoadResult, input_name, load
from gpulint.profile.model import ClusterProfile
from gpulint.rules import registry, rule_codes
from gpulint.rules.base import CheckContext, Problem
from gpulint.workloads import workload_of
from tests.expectations import fixture_args
from tests.repos import write_files

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "clusters"
CASES = sorted(
    p for p in (ROOT / "fixtures" / "cases").rglob("*") if p.suffix in (".yaml", ".yml", ".json")
)
PROFILES = ROOT / "fixtures" / "profiles"

pytest_plugins = ["tests.binaries"]


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of fixtures/clusters as the working directory (caches are written beside it)."""
    copy = tmp_path / "repo"
    shutil.copytree(FIXTURE, copy)
    monkeypatch.chdir(copy)
    return copy


def check(*args: str) -> Result:
    """`gpulint check k8s ARGS` in-process, in the fixture's copy."""
    from gpulint.cli import main

    return CliRunner().invoke(main, ["check", "k8s", *args])


def _expected(fmt: str) -> str:
    return (FIXTURE / ("expected.json" if fmt == "json" else "expected.txt")).read_text()


def _entries(cache: Path) -> int:
    results = cache / "results"
    return len(os.listdir(results)) if results.is_dir() else 0


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_several_clusters_report_what_one_run_per_cluster_did(
    repo: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, jobs: int
) -> None:
    # Worker processes even for these few small files.
    monkeypatch.setattr(pool, "PARALLEL_MIN_BYTES", 0)
    common = ["--format", fmt, "--jobs", str(jobs)]
    result = check(*common, "--no-cache")
    assert result.exit_code == 1
    assert result.stdout == _expected(fmt)

    cache = repo / "cache"
    cold = check(*common, "--cache-dir", str(cache))
    assert (cold.exit_code, cold.stdout) == (1, _expected(fmt))
    # An entry per file and cluster (11 files for staging, 10 for the others; the renders of
    # none), the knowledge of the quota's file and of the device plugin's, and both together
    # (the knowledge pack the next run reads).
    assert _entries(cache) == 11 + 3 * 10 + 2 + 1
    warm = check(*common, "--cache-dir", str(cache))
    assert (warm.exit_code, warm.stdout) == (1, _expected(fmt))
    assert _entries(cache) == 11 + 3 * 10 + 2 + 1


def test_clusters_whose_entries_are_cached_are_read_and_the_others_checked(repo: Path) -> None:
    cache = repo / "cache"
    # Named as the config names them (an entry's key holds the profile's sources).
    profiles = repo / "profiles"
    some = [f"prod={profiles / 'prod.yaml'}", f"prod={profiles / 'prod-h100.yaml'}"]
    some = [
        arg
        for named in [*some, f"legacy={profiles / 'legacy.yaml'}"]
        for arg in ("--profile", named)
    ]
    first = check(*some, "--cache-dir", str(cache), "--jobs", "1")
    assert first.exit_code == 1
    assert _entries(cache) == 2 * 10 + 2 + 1
    # prod's and legacy's entries are read; staging's and h100's are written now.
    result = check("--cache-dir", str(cache), "--jobs", "1")
    assert (result.exit_code, result.stdout) == (1, _expected("text"))
    assert _entries(cache) == 11 + 3 * 10 + 2 + 1


def test_each_file_is_loaded_once_for_the_clusters_that_read_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[object] = []
    real = files.load_input

    def counted(item: object, *args: object) -> LoadResult:
        loads.append(item)
        return real(item, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(files, "load_input", counted)
    result = check("--no-cache", "--jobs", "1")
    assert (result.exit_code, result.stdout) == (1, _expected("text"))
    # prod, legacy and h100 read the same 10 files, and staging those and
    # k8s/staging/debug.yaml: each of the 11 is loaded once (and debug.yaml for staging only).
    names = [os.path.relpath(input_name(item), repo) for item in loads]  # type: ignore[arg-type]
    assert sorted(names) == sorted(
        f"k8s/{name}"
        for name in (
            "big.yaml", "broken.yaml", "cronjob.yaml", "device-plugin.yaml", "hpa.yaml",
            "misplaced.yaml", "ml/quota.yaml", "quantities.yaml", "staging/debug.yaml",
            "suppressed.yaml", "trainer.yaml",
        )
    )  # fmt: skip


def test_the_library_merges_the_same_findings_as_one_run_per_cluster() -> None:
    config = load_config(FIXTURE / ".gpulint.yaml", rule_codes())
    clusters = config.clusters
    assert list(clusters) == ["prod", "staging", "legacy", "h100"]
    joint = lint(["k8s"], config=config, root=str(FIXTURE))
    # One run per cluster, each on its own, merged: what a run against several clusters was.
    each = {name: _one_cluster(config, name, paths) for name, paths in clusters.items()}
    assert joint == merge_results(each)


def _one_cluster(config: Config, name: str, paths: tuple[str, ...]) -> object:
    """The run of cluster `name` alone, as a run against several clusters made it before."""
    from gpulint.api import LintOptions, _read_profile, _record
    from gpulint.engine.run import run
    from gpulint.render.options import RenderOptions

    options = LintOptions(config=config, root=str(FIXTURE))
    profile = _read_profile(options, paths)
    render = RenderOptions()._replace(cluster=name)
    bound = replace(options, profile=profile, render=render)
    return run(replace(_record(["k8s"], bound, config), cluster=name))


def _plan(profile: ClusterProfile | None) -> FilePlan:
    rules = tuple(r for r in registry() if not r.corpus_wide and r.check is not None)
    return FilePlan(Config(), profile, None, rules, (), ())


def test_a_rule_runs_once_for_the_clusters_that_agree_on_what_it_reads() -> None:
    from gpulint.profile import load_profiles

    prod = load_profiles([str(FIXTURE / "profiles" / "prod.yaml")])
    staging = load_profiles([str(FIXTURE / "profiles" / "staging.yaml")])
    legacy = load_profiles([str(FIXTURE / "profiles" / "legacy.yaml")])
    lanes = lanes_of([_plan(prod), _plan(staging), _plan(legacy)])
    groups = {rule.code: shared for rule, shared in lanes.shared}
    assert groups["GPU601"] == ((0, 1, 2),)  # reads nothing of the profile
    assert groups["GPU010"] == ((0, 1), (2,))  # 1.31 twice, then 1.24
    assert groups["GPU102"] == ((0,), (1,), (2,))  # the whole profile
    # One plan: every rule runs once, for it.
    alone = lanes_of([_plan(prod)])
    assert all(shared == ((0,),) for _, shared in alone.shared)


# --- what a record's profile_fields promises, on every fixture --------------------------------

#: Profiles of different versions, platforms, pools and policy objects.
OTHERS = ("clusters-prod.yaml", "gke-autopilot.yaml", "dra-nodes.yaml", "hami.yaml", "eks.yaml")
DECLARED = sorted(
    r.code for r in registry() if r.profile_fields is not None and r.check is not None
)


@functools.cache
def _loaded(path: Path) -> tuple[LoadResult, tuple]:
    loaded = load([path])
    shapes = Config().workloads
    workloads = tuple(w for d in loaded.documents if (w := workload_of(d, shapes)) is not None)
    return loaded, workloads


@functools.cache
def _profile(paths: tuple[str, ...]) -> ClusterProfile:
    from gpulint.profile import load_profiles

    return load_profiles(paths)


def _found(code: str, path: Path, profile: ClusterProfile | None) -> list[tuple]:
    loaded, workloads = _loaded(path)
    knowledge = tuple(d for d in loaded.documents if d.ref.kind in KNOWLEDGE_KINDS)
    context = CheckContext(loaded, workloads, profile, knowledge=knowledge)
    check = next(r for r in registry() if r.code == code).check_function()
    return [_seen(problem) for problem in check(context)]


def _seen(problem: Problem) -> tuple:
    return (problem.pos, problem.message, problem.fix, problem.severity, problem.edits)


@pytest.mark.parametrize("code", DECLARED)
def test_a_rule_finds_the_same_against_profiles_that_agree_on_the_fields_it_reads(
    code: str,
) -> None:
    # A run against several clusters runs such a rule once for the clusters agreeing on its
    # fields: sound only if, on every fixture, its findings against a profile are those against
    # any other profile given the same values of those fields (none: any profile, or none).
    fields = next(r for r in registry() if r.code == code).profile_fields
    assert fields is not None
    others = [_profile((str(PROFILES / name),)) for name in OTHERS]
    for path in CASES:
        args = fixture_args(path)
        own = tuple(args[i + 1] for i, arg in enumerate(args) if arg == "--profile")
        profiles = [*others, *([_profile(own)] if own else [])]
        for profile in profiles:
            expected = _found(code, path, profile)
            for other in [None, *profiles]:
                if other is None:
                    if fields:
                        continue
                    assert _found(code, path, None) == expected, (path, profile.name)
                    continue
                same = replace(other, **{name: getattr(profile, name) for name in fields})
                assert _found(code, path, same) == expected, (path, profile.name, other.name)


CHART_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inference
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: inference}}
  template:
    metadata:
      labels: {app: inference}
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.5.0
          resources:
            limits: {nvidia.com/gpu: {{ .Values.gpus }}}
"""


def test_a_chart_rendered_alike_for_every_cluster_is_checked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_env, helm4_dir: Path
) -> None:
    tool_env(helm=helm4_dir / "helm")
    work = tmp_path / "repo"
    shutil.copytree(FIXTURE / "profiles", work / "profiles")
    write_files(
        work,
        {
            ".gpulint.yaml": (
                "clusters:\n  prod: [profiles/prod.yaml]\n  staging: [profiles/staging.yaml]\n"
            ),
            "charts/inference/Chart.yaml": "apiVersion: v2\nname: inference\nversion: 0.1.0\n",
            "charts/inference/values.yaml": "replicas: 3\ngpus: 2\n",
            "charts/inference/templates/deployment.yaml": CHART_TEMPLATE,
            "k8s/trainer.yaml": (FIXTURE / "k8s" / "trainer.yaml").read_text(),
        },
    )
    monkeypatch.chdir(work)
    loads: list[object] = []
    real = files.load_input

    def counted(item: object, *args: object) -> LoadResult:
        loads.append(item)
        return real(item, *args)  # type: ignore[arg-type]

    args = ["check", "--no-cache", "--format", "json", "charts", "k8s"]
    result = CliRunner().invoke(main, args)
    monkeypatch.setattr(files, "load_input", counted)
    again = CliRunner().invoke(main, args)
    assert result.exit_code == again.exit_code == 1
    assert again.stdout == result.stdout
    # The chart's render and the pod: each once for both clusters (each render has a budget
    # of time of its own, which does not make it another input).
    loaded = sorted(os.path.relpath(input_name(item), work) for item in loads)
    assert loaded == ["charts/inference", "k8s/trainer.yaml"]
    tagged = {
        (f["code"], tuple(f.get("clusters") or ())) for f in json.loads(again.stdout)["findings"]
    }
    assert ("GPU102", ("prod",)) in tagged
