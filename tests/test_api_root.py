"""lint() with a root: the working directory changes nothing, and is never read."""

from __future__ import annotations

import json
import os
import shutil
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.api import lint
from gpulint.catalogue import catalogue_codes
from gpulint.cli import main
from gpulint.config import Config, config_for_paths, load_config
from gpulint.findings import LintResult
from gpulint.render.options import ChartSettings, RenderOptions, ValuesSet

pytest_plugins = ["tests.binaries"]

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo"
CHART = DEMO.parent / "charts" / "nim-llm"
PACKAGE = str(Path(__file__).resolve().parent.parent / "gpulint")
CONFIG = """\
exclude: [k8s/vendor]
per-file-ignores:
  "k8s/training.yaml": [GPU601]
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a config, two manifests, an excluded one, and one outside it."""
    root = tmp_path / "repo"
    (root / "k8s" / "vendor").mkdir(parents=True)
    (root / ".gpulint.yaml").write_text(CONFIG)
    shutil.copy(DEMO / "training.yaml", root / "k8s" / "training.yaml")
    shutil.copy(DEMO / "placement.yaml", root / "k8s" / "placement.yaml")
    shutil.copy(DEMO / "training.yaml", root / "k8s" / "vendor" / "training.yaml")
    (tmp_path / "elsewhere").mkdir()
    shutil.copy(DEMO / "training.yaml", tmp_path / "elsewhere" / "outside.yaml")
    return root


def _config(repo: Path) -> Config:
    """The config a run of `k8s` finds, upward from the checked path."""
    choice = config_for_paths(["k8s"], repo)
    assert choice.path == repo / ".gpulint.yaml"
    return load_config(choice.path, catalogue_codes())


def _shown(result: LintResult) -> list[tuple[str, str, int, int, str]]:
    return [(f.path, f.code, f.line, f.column, f.message) for f in result.findings]


def _run(repo: Path) -> LintResult:
    outside = str(repo.parent / "elsewhere" / "outside.yaml")
    return lint(["k8s", outside], root=str(repo), config=_config(repo), keep_checked=True)


def test_lint_from_another_directory_reports_what_it_reports_from_the_root(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    at_root = _run(repo)
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    monkeypatch.chdir(unrelated)
    elsewhere = _run(repo)
    assert _shown(elsewhere) == _shown(at_root)
    assert elsewhere.checked == at_root.checked
    outside = str(tmp_path / "elsewhere" / "outside.yaml")
    # Inside the root relative to it, outside it by the absolute path; the excluded directory
    # and the code ignored in training.yaml (globs relative to the config's directory) left out.
    checked = {c.path for c in elsewhere.checked}
    assert checked == {"k8s/placement.yaml", "k8s/training.yaml", outside}
    assert {(f.path, f.code) for f in elsewhere.findings} == {
        ("k8s/training.yaml", "GPU001"),
        ("k8s/training.yaml", "GPU002"),
        ("k8s/training.yaml", "GPU003"),
        (outside, "GPU001"),
        (outside, "GPU601"),
        (outside, "GPU002"),
        (outside, "GPU003"),
    }


def test_lint_with_the_root_reports_what_gpulint_check_reports(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = str(repo.parent / "elsewhere" / "outside.yaml")
    monkeypatch.chdir(repo)
    # Checked with a path outside the repository, a run uses no config unless named.
    command = ["check", "--config", ".gpulint.yaml", "--format", "json", "k8s", outside]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    reported = [
        (f["path"], f["code"], f["line"], f["column"], f["message"])
        for f in json.loads(result.stdout)["findings"]
    ]
    monkeypatch.chdir(repo.parent)
    assert _shown(_run(repo)) == reported


def _record_cwd_readers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, where gpulint's code asks for the working directory."""
    readers: list[str] = []
    real_getcwd = os.getcwd

    def getcwd() -> str:
        # Path.cwd, abspath and realpath of a relative path all ask os.getcwd. The import
        # machinery does too (for a '' entry of sys.path) when a rule module is imported.
        for frame in reversed(traceback.extract_stack()[:-1]):
            if frame.filename.startswith("<frozen importlib"):
                break
            if frame.filename.startswith(PACKAGE):
                readers.append(f"{frame.filename}:{frame.lineno}")
                break
        return real_getcwd()

    monkeypatch.setattr(os, "getcwd", getcwd)
    return readers


def test_lint_with_a_root_never_reads_the_working_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    expected = _shown(_run(repo))
    readers = _record_cwd_readers(monkeypatch)
    assert _shown(_run(repo)) == expected
    assert readers == []


def test_without_a_root_paths_are_reported_as_given(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    absolute = lint([str(repo / "k8s" / "training.yaml")], config=Config(select=("GPU601",)))
    relative = lint(["k8s/training.yaml"], config=Config(select=("GPU601",)))
    assert {f.path for f in absolute.findings} == {str(repo / "k8s" / "training.yaml")}
    assert {f.path for f in relative.findings} == {"k8s/training.yaml"}
    assert [f[1:] for f in _shown(absolute)] == [f[1:] for f in _shown(relative)]


def test_a_missing_path_is_named_as_given(repo: Path, tmp_path: Path) -> None:
    from gpulint.errors import GpulintError

    with pytest.raises(GpulintError, match=r"^k8s/missing\.yaml: no such file or directory$"):
        lint(["k8s/missing.yaml"], root=str(repo))


def test_a_chart_is_reported_relative_to_the_root_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_env, helm4_dir: Path
) -> None:
    tool_env(helm=helm4_dir / "helm")
    root = tmp_path / "repo"
    chart = root / "charts" / "nim-llm"
    shutil.copytree(CHART, chart)
    values = "charts/nim-llm/values-gpu.yaml"  # the GPU resource misspelled
    monkeypatch.chdir(root)
    command = ["check", "--isolated", "--no-cache", "--format", "json", "charts/nim-llm"]
    command += ["--values", values]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1, result.output
    reported = [
        (f["path"], f["code"], f["line"], f["column"], f["message"])
        for f in json.loads(result.stdout)["findings"]
    ]
    assert (values, "GPU001", 5, 5) in [r[:4] for r in reported]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    readers = _record_cwd_readers(monkeypatch)
    render = RenderOptions(default=ChartSettings(sets=(ValuesSet(values=(values,)),)))
    # The render cache named relative to the root too.
    found = lint(["charts/nim-llm"], root=str(root), render=render._replace(cache_dir=".cache"))
    assert _shown(found) == reported
    assert {f.rendered.of for f in found.findings if f.rendered} == {"charts/nim-llm"}
    assert readers == []
    assert (root / ".cache").is_dir() and not (elsewhere / ".cache").exists()


def test_stdin_is_named_and_matched_relative_to_the_root(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (DEMO / "training.yaml").read_bytes()
    monkeypatch.chdir(tmp_path / "elsewhere")
    readers = _record_cwd_readers(monkeypatch)
    # per-file-ignores drops GPU601 in k8s/training.yaml, which stdin is reported as.
    found = lint(["-"], root=str(repo), config=_config(repo), stdin=("k8s/training.yaml", data))
    assert {(f.path, f.code) for f in found.findings} == {
        ("k8s/training.yaml", "GPU001"),
        ("k8s/training.yaml", "GPU002"),
        ("k8s/training.yaml", "GPU003"),
    }
    unnamed = lint(["-"], root=str(repo), stdin=("<stdin>", data))
    assert {f.path for f in unnamed.findings} == {"<stdin>"}
    assert readers == []


@pytest.mark.parametrize("name", ["./k8s/training.yaml", "ABSOLUTE"])
def test_stdin_is_reported_under_its_name_as_given(repo: Path, name: str) -> None:
    # `gpulint check --fix -` finds stdin's findings by the name it gave.
    name = str(repo / "k8s" / "training.yaml") if name == "ABSOLUTE" else name
    data = (DEMO / "training.yaml").read_bytes()
    found = lint(["-"], root=str(repo), config=_config(repo), stdin=(name, data))
    assert {f.path for f in found.findings} == {name}
    assert "GPU601" not in {f.code for f in found.findings}  # per-file-ignores still match


FIXTURES = DEMO.parent
PINNED_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  nodeSelector: {eks.amazonaws.com/nodegroup: a100-training}
  containers:
  - name: c
    image: c:1.0
    resources:
      limits: {cpu: '1', memory: 1Gi, nvidia.com/gpu: 1}
"""


@pytest.fixture
def profiled_repo(tmp_path: Path) -> Path:
    """A repository with a pod pinned to a100-training, a ClusterProfile without that pool and
    the Terraform root module that defines it."""
    root = tmp_path / "repo"
    (root / "profiles").mkdir(parents=True)
    (root / "pod.yaml").write_text(PINNED_POD)
    shutil.copy(FIXTURES / "profiles" / "eks.yaml", root / "profiles" / "eks.yaml")
    shutil.copytree(FIXTURES / "infra" / "terraform" / "eks", root / "infra" / "eks")
    (tmp_path / "elsewhere").mkdir()
    return root


def _from_elsewhere(root: Path, monkeypatch: pytest.MonkeyPatch, **changes: object) -> LintResult:
    """lint() of pod.yaml from `root`, run in another directory that holds nothing of it."""
    monkeypatch.chdir(root.parent / "elsewhere")
    readers = _record_cwd_readers(monkeypatch)
    found = lint(["pod.yaml"], root=str(root), config=Config(select=("GPU1",)), **changes)
    assert readers == []
    return found


def test_a_profile_file_is_read_from_the_root(
    profiled_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _from_elsewhere(
        profiled_repo,
        monkeypatch,
        profile_paths=("profiles/eks.yaml",),
        use_cache=True,
        cache_dir=".cache",
    )
    assert _shown(found) == [
        (
            "pod.yaml",
            "GPU103",
            5,
            18,
            "nodeSelector eks.amazonaws.com/nodegroup=a100-training names a pool this cluster "
            "does not have (pools by eks.amazonaws.com/nodegroup: g5, m5, p4d): the pod stays "
            "Pending",
        )
    ]
    # The cache named relative to the root is there, not in the working directory.
    assert (profiled_repo / ".cache").is_dir()
    assert not (profiled_repo.parent / "elsewhere" / ".cache").exists()


def test_a_terraform_profile_is_read_from_the_root_and_its_files_named_from_it(
    profiled_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("tfparse")
    found = _from_elsewhere(profiled_repo, monkeypatch, profile_paths=("infra/eks",))
    assert _shown(found) == [
        (
            "pod.yaml",
            "GPU102",
            4,
            1,
            "pod (requests 1 nvidia.com/gpu) fits pool a100-training "
            "(infra/eks/modules/gpu-node-group/main.tf:12) except for its taint "
            "workload=training:NoSchedule, which no toleration of the pod matches (the "
            "cluster's ExtendedResourceToleration admission plugin tolerates only NoSchedule "
            "taints keyed `nvidia.com/gpu`, the resources the pod requests)",
        )
    ]
    # `gpulint check` in the root reports the same.
    monkeypatch.chdir(profiled_repo)
    command = ["check", "--isolated", "--no-cache", "--select", "GPU1", "--format", "json"]
    result = CliRunner().invoke(main, [*command, "--profile", "infra/eks", "pod.yaml"])
    assert result.exit_code == 1, result.output
    reported = [
        (f["path"], f["code"], f["line"], f["column"], f["message"])
        for f in json.loads(result.stdout)["findings"]
    ]
    assert reported == _shown(found)


def test_named_clusters_read_their_profiles_from_the_root(
    profiled_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _from_elsewhere(profiled_repo, monkeypatch, clusters={"prod": ("profiles/eks.yaml",)})
    assert [(f.path, f.code, f.line, f.column) for f in found.findings] == [
        ("pod.yaml", "GPU103", 5, 18)
    ]


def test_a_missing_profile_is_named_as_given(profiled_repo: Path) -> None:
    from gpulint.errors import GpulintError

    with pytest.raises(GpulintError, match=r"^profiles/gke\.yaml: profile file not found$"):
        lint(["pod.yaml"], root=str(profiled_repo), profile_paths=("profiles/gke.yaml",))
