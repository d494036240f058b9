"""The pre-commit hook for real: `pre-commit try-repo` this checkout on a temporary git repo."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.manifests import TERRAFORM_JOB
from tests.repos import NETWORK_TROUBLE, ROOT, make_repo, snapshot_checkout

pytest_plugins = ["tests.binaries"]
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
BAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      containers:
      - name: trainer
        image: trainer:1.0
        resources:
          requests: {cpu: "1", nvidia.com/gpu: 1}
"""
GOOD = BAD.replace(
    'requests: {cpu: "1", nvidia.com/gpu: 1}',
    'requests: {cpu: "1"}\n          limits: {nvidia.com/gpu: 1}',
)
# Helm templates are not YAML: outside a chart, the hook's --changed-files leaves them out.
TEMPLATE = "kind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n"
# Each builds a hook environment with pip: slow, run by the full suite, not `-m "not slow"`.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module, so the hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as a clean clone would have it, for try-repo to install the hooks from."""
    return snapshot_checkout(tmp_path_factory.mktemp("hook-repo"))


def try_repo(
    hook_repo: Path,
    repo: Path,
    home: Path,
    hook: str = "gpulint",
    files: tuple[str, ...] = ("--all-files",),
    path_first: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`pre-commit try-repo <hook_repo> <hook> --all-files` (or `files`) inside `repo`.

    `path_first` is put first on PATH (where a hook finds helm, as on a developer's machine).
    """
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    if path_first is not None:
        env["PATH"] = f"{path_first}{os.pathsep}{env.get('PATH', '')}"
    env.pop("GIT_DIR", None)
    env.pop("GIT_INDEX_FILE", None)
    result = subprocess.run(
        [
            *PRE_COMMIT,
            "try-repo",
            str(hook_repo),
            hook,
            *files,
            "--verbose",
            "--color",
            "never",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    output = result.stdout + result.stderr
    if (
        result.returncode != 0
        and "Installing environment" in output
        and any(marker in output for marker in NETWORK_TROUBLE)
    ):
        pytest.skip(f"pre-commit could not reach the package index: {output[-400:]}")
    return result


def test_hook_manifest_is_valid() -> None:
    result = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hook_fails_on_a_bad_manifest_and_names_the_finding(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(
        tmp_path / "target",
        {
            "k8s/bad.yaml": BAD,
            "k8s/good.yml": GOOD,
            "chart/templates/pod.yaml": TEMPLATE,
            "README.md": "# not yaml\n",
        },
    )
    result = try_repo(hook_repo, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert (
        "k8s/bad.yaml:12:32: GPU002 [error] container `trainer` requests `nvidia.com/gpu`" in output
    )
    assert "chart/templates" not in output
    assert "Found 1 finding (1 error) in 2 files, 2 objects." in output


def test_hook_passes_on_a_clean_repo(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(tmp_path / "clean", {"k8s/good.yml": GOOD, "values.yaml": "replicas: 1\n"})
    result = try_repo(hook_repo, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Passed" in output


PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
spec:
  pools:
  - name: gpu
    nodes: 2
    labels: {pool: gpu}
    allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "4"}
"""


def test_profile_hook_passes_valid_profiles_and_ignores_manifests(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(
        tmp_path / "ok",
        {"cluster/profile.yaml": PROFILE, "k8s/bad.yaml": BAD},
    )
    result = try_repo(hook_repo, repo, pre_commit_home, "gpulint-profile")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Passed" in output


def test_profile_hook_fails_naming_file_line_and_column(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(
        tmp_path / "typo",
        {
            "cluster/profile.yaml": PROFILE.replace("nodes: 2", "nodez: 2"),
            "cluster/staging-profile.yml": PROFILE,
        },
    )
    result = try_repo(hook_repo, repo, pre_commit_home, "gpulint-profile")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # pre-commit's own code for a failed hook
    assert "- exit code: 2" in output
    assert "cluster/profile.yaml:6:5: unknown field `spec.pools.0.nodez`" in output
    assert "staging-profile" not in output


def documented_configs() -> list[str]:
    """The `.pre-commit-config.yaml` examples of docs/pre-commit.md and the README."""
    configs = []
    for doc in (ROOT / "docs" / "pre-commit.md", ROOT / "README.md"):
        blocks = re.findall(r"^```yaml\n(.*?)^```", doc.read_text(), flags=re.M | re.S)
        configs += [b for b in blocks if b.lstrip("# .\n").startswith(("repos:", "pre-commit"))]
    return configs


def test_documented_configs_are_valid_and_name_existing_hooks(tmp_path: Path) -> None:
    configs = documented_configs()
    assert len(configs) == 4
    hooks = set(re.findall(r"^- id: (\S+)", (ROOT / ".pre-commit-hooks.yaml").read_text(), re.M))
    for i, text in enumerate(configs):
        config = tmp_path / f"config{i}.yaml"
        config.write_text(text)
        result = subprocess.run(
            [*PRE_COMMIT, "validate-config", str(config)], capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr
        if "repo: local" not in text:
            assert set(re.findall(r"- id: (\S+)", text)) <= hooks


def test_fix_hook_fixes_the_file_and_fails_as_a_fixing_hook(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    typo = GOOD.replace("        resources:", "        resoures:  # typo")
    repo = make_repo(tmp_path / "fixable", {"k8s/typo.yaml": typo})
    result = try_repo(hook_repo, repo, pre_commit_home, "gpulint-fix")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "files were modified by this hook" in output
    assert (repo / "k8s" / "typo.yaml").read_text() == GOOD.replace(
        "        resources:", "        resources:  # typo"
    )
    again = try_repo(hook_repo, repo, pre_commit_home, "gpulint-fix")
    assert again.returncode == 0, again.stdout + again.stderr


def test_fix_hook_fixes_json_manifests(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    # The `gpulint` hook checks JSON manifests; the fixing hook takes the same files.
    pod = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers":'
    pod += ' [{"name": "c", "resources": {"limits": {"nvidia.com/gpus": 1}}}]}}\n'
    repo = make_repo(tmp_path / "json-fix", {"k8s/pod.json": pod})
    result = try_repo(hook_repo, repo, pre_commit_home, "gpulint-fix")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "files were modified by this hook" in output
    fixed = pod.replace('"nvidia.com/gpus"', '"nvidia.com/gpu"')
    assert (repo / "k8s" / "pod.json").read_text() == fixed


QUOTA = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: "4"}
"""


def deployment(name: str, gpus: int) -> str:
    """A Deployment of one pod with `gpus` GPUs in namespace ml."""
    limits = f"{{memory: 1Gi, nvidia.com/gpu: {gpus}}}" if gpus else "{memory: 1Gi}"
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: ml}}
spec:
  replicas: 1
  strategy: {{type: Recreate}}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: main
        image: {name}:1.0
        resources:
          requests: {{cpu: "1", memory: 1Gi}}
          limits: {limits}
"""


def split_repo(path: Path) -> Path:
    """A quota of 4 GPUs in one file, two Deployments of 3 GPUs in two others (they overflow
    only together), and 24 CPU services: enough files that pre-commit would split them over
    processes if the hook let it."""
    files = {
        ".gpulint.yaml": "context: [k8s]\n",
        "k8s/00-quota.yaml": QUOTA,
        "k8s/10-trainer.yaml": deployment("trainer", 3),
        "k8s/90-tuner.yaml": deployment("tuner", 3),
    }
    files.update({f"k8s/{i:02d}-web.yaml": deployment(f"web{i}", 0) for i in range(20, 44)})
    return make_repo(path, files)


@pytest.mark.slow
def test_hook_reports_a_quota_that_overflows_only_across_files(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = split_repo(tmp_path / "split")
    result = try_repo(hook_repo, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "k8s/10-trainer.yaml:5:3: GPU301 [error] ResourceQuota ml/gpu-quota" in output
    assert "k8s/90-tuner.yaml:5:3: GPU301 [error] ResourceQuota ml/gpu-quota" in output
    # One gpulint process saw all 28 files (.gpulint.yaml is YAML, and skipped).
    assert re.findall(r"Found \d+ findings? .* in (\d+) files", output) == ["28"]


@pytest.mark.slow
def test_hook_given_one_changed_file_judges_it_against_the_context(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    repo = split_repo(tmp_path / "one")
    result = try_repo(hook_repo, repo, pre_commit_home, files=("--files", "k8s/90-tuner.yaml"))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "k8s/90-tuner.yaml:5:3: GPU301 [error] ResourceQuota ml/gpu-quota: used 0 + " in output
    assert "in 1 file, 1 object." in output
    # A CPU service of the same namespace takes no GPU: nothing to report for it.
    web = try_repo(hook_repo, repo, pre_commit_home, files=("--files", "k8s/20-web.yaml"))
    assert web.returncode == 0, web.stdout + web.stderr


@pytest.mark.slow
def test_hook_checks_json_manifests(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer"},
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": 1}}}
            ]
        },
    }
    repo = make_repo(tmp_path / "json", {"k8s/pod.json": json.dumps(pod, indent=2) + "\n"})
    result = try_repo(hook_repo, repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert re.search(r"k8s/pod\.json:\d+:\d+: GPU002 \[error\]", output), output


CHART = {
    "chart/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "chart/values.yaml": "gpus: 1\n",
    "chart/templates/_helpers.tpl": '{{- define "trainer.name" -}}trainer{{- end }}\n',
    "chart/templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "trainer.name" . }}
spec:
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: trainer
        image: trainer:1.0
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits:
            nvidia.com/gpus: {{ .Values.gpus }}
""",
}


@pytest.mark.slow
def test_hook_renders_the_chart_of_a_changed_template_once_and_reports_at_its_line(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path, helm4_dir: Path
) -> None:
    repo = make_repo(tmp_path / "charts", CHART)
    changed = (
        "--files",
        "chart/templates/deployment.yaml",
        "chart/templates/_helpers.tpl",
        "chart/values.yaml",
    )
    result = try_repo(hook_repo, repo, pre_commit_home, "gpulint", changed, helm4_dir)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert (
        "chart/templates/deployment.yaml:18:13: GPU001 [error] container `trainer` limits "
        "`nvidia.com/gpus`, which no device plugin advertises" in output
    )
    # Three changed files of one chart: one render, one report.
    assert re.findall(r"Found \d+ findings? .* in (\d+) files?", output) == ["1"]
    fixed = dict(CHART)
    fixed["chart/templates/deployment.yaml"] = CHART["chart/templates/deployment.yaml"].replace(
        "nvidia.com/gpus", "nvidia.com/gpu"
    )
    clean = make_repo(tmp_path / "fixed", fixed)
    passed = try_repo(hook_repo, clean, pre_commit_home, "gpulint", changed, helm4_dir)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # The hook kept for configurations that name it checks nothing.
    kept = try_repo(hook_repo, repo, pre_commit_home, "gpulint-charts", changed, helm4_dir)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "(no files to check)Skipped" in kept.stdout + kept.stderr


def test_documented_terraform_setup_runs_pinned_to_a_commit_with_the_extra_library(
    tmp_path: Path, hook_repo: Path, pre_commit_home: Path
) -> None:
    """docs/pre-commit.md's Terraform config, as pasted, with `rev` frozen to a commit SHA."""
    (config,) = [c for c in documented_configs() if re.search(r"^ +additional_dep", c, re.M)]
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    config = config.replace("https://github.com/gpulint/gpulint", str(hook_repo))
    config = re.sub(r"rev: main\b", f"rev: {sha}", config)
    files = {"k8s/train.yaml": TERRAFORM_JOB, ".pre-commit-config.yaml": config}
    eks = ROOT / "fixtures" / "infra" / "terraform" / "eks"
    for source in eks.rglob("*"):
        if source.is_file():
            files[f"infra/eks/{source.relative_to(eks)}"] = source.read_text()
    repo = make_repo(tmp_path / "platform", files)
    env = {**os.environ, "PRE_COMMIT_HOME": str(pre_commit_home), "NO_COLOR": "1"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_INDEX_FILE", None)
    result = subprocess.run(
        [*PRE_COMMIT, "run", "--all-files", "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    output = result.stdout + result.stderr
    if result.returncode != 0 and any(marker in output for marker in NETWORK_TROUBLE):
        pytest.skip(f"pre-commit could not reach the package index: {output[-400:]}")
    assert result.returncode == 1, output
    assert (
        "k8s/train.yaml:10:9: GPU103 [error] nodeSelector eks.amazonaws.com/nodegroup="
        "h100-training names a pool this cluster does not have"
    ) in output
    assert "needs the optional tfparse library" not in output


def test_this_repository_pins_the_ruff_its_test_extra_installs() -> None:
    """One ruff: the pre-commit hook of this repository and `pip install -e '.[test]'`."""
    hook_rev = re.search(
        r"ruff-pre-commit\n\s+rev: v(\S+)", (ROOT / ".pre-commit-config.yaml").read_text()
    )
    extra = re.search(r'"ruff==([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert hook_rev is not None and extra is not None
    assert hook_rev.group(1) == extra.group(1)
