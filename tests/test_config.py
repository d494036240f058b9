"""Configuration files: discovery, every setting, CLI overrides, and errors that exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpulint.catalogue import load_catalogue
from gpulint.cli import main
from gpulint.config import Config, ConfigChoice, config_for_paths, find_config, load_config
from gpulint.errors import GpulintError
from gpulint.model import ObjectRef, Severity
from tests.manifests import GPU_QUOTA, REQUEST_ONLY

BEST_EFFORT = """\
apiVersion: v1
kind: Pod
metadata:
  name: besteffort
  namespace: vendor
spec:
  containers:
  - name: c
    resources:
      limits: {nvidia.com/gpu: 0.5}
"""


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory with two manifests, used as the working directory."""
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "trainer.yaml").write_text(REQUEST_ONLY)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "chart.yaml").write_text(BEST_EFFORT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> Result:
    """`gpulint check --format json ARGS`."""
    return CliRunner().invoke(main, ["check", "--format", "json", *args])


def codes(result: Result) -> list[tuple[str, str]]:
    """(path, code) of each finding."""
    return [(f["path"], f["code"]) for f in json.loads(result.stdout)["findings"]]


ALL_FINDINGS = [
    ("k8s/trainer.yaml", "GPU002"),
    ("vendor/chart.yaml", "GPU601"),
    ("vendor/chart.yaml", "GPU003"),
]


def test_without_config_every_default_rule_runs(repo: Path) -> None:
    result = check()
    assert result.exit_code == 1
    assert codes(result) == ALL_FINDINGS


def test_gpulint_yaml_is_found_upward_from_the_working_directory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: [GPU6]\n")
    monkeypatch.chdir(repo / "k8s")
    assert find_config(Path.cwd()) == repo / ".gpulint.yaml"
    result = check("..")
    assert [code for _, code in codes(result)] == ["GPU002", "GPU003"]


def test_config_is_found_upward_from_the_checked_paths(repo: Path) -> None:
    # Run from the repository root, `gpulint check vendor` uses vendor/.gpulint.yaml (ruff's rule).
    (repo / "vendor" / ".gpulint.yaml").write_text("ignore: [GPU6]\n")
    assert codes(check("vendor")) == [("vendor/chart.yaml", "GPU003")]
    assert codes(check("vendor/chart.yaml")) == [("vendor/chart.yaml", "GPU003")]
    assert config_for_paths(["vendor/chart.yaml"], repo) == ConfigChoice(
        repo / "vendor" / ".gpulint.yaml"
    )
    # The nearest config wins over one further up.
    (repo / ".gpulint.yaml").write_text("select: [GPU002]\n")
    assert codes(check("vendor")) == [("vendor/chart.yaml", "GPU003")]
    assert codes(check("k8s")) == [("k8s/trainer.yaml", "GPU002")]


def test_paths_under_different_configs_are_each_checked_with_their_own(repo: Path) -> None:
    # A pre-commit run touching two teams' folders applies both teams' configs (ruff's rule).
    (repo / "vendor" / ".gpulint.yaml").write_text("ignore: [GPU6]\n")
    result = check("k8s/trainer.yaml", "vendor/chart.yaml")
    assert codes(result) == [("k8s/trainer.yaml", "GPU002"), ("vendor/chart.yaml", "GPU003")]
    assert result.stderr == ""
    assert json.loads(result.stdout)["summary"]["files"] == 2
    # Each config's fail-on decides for its own files: k8s has none, so its error fails.
    (repo / "vendor" / ".gpulint.yaml").write_text("fail-on: never\n")
    assert check("k8s", "vendor").exit_code == 1
    (repo / "k8s" / ".gpulint.yaml").write_text("fail-on: never\n")
    assert check("k8s", "vendor").exit_code == 0
    (repo / "k8s" / ".gpulint.yaml").unlink()
    (repo / "vendor" / ".gpulint.yaml").write_text("ignore: [GPU6]\n")
    (repo / ".gpulint.yaml").write_text("select: [GPU002]\n")
    choice = config_for_paths(["k8s/trainer.yaml", "vendor/chart.yaml"], repo)
    assert choice.path == repo / ".gpulint.yaml"
    assert len(choice.notes) == 1
    # Without paths, and for stdin, the working directory is where the search starts.
    assert config_for_paths([], repo / "vendor").path == repo / "vendor" / ".gpulint.yaml"
    result = CliRunner().invoke(
        main,
        ["check", "--format", "json", "-", "--stdin-filename", "vendor/x.yaml"],
        input=BEST_EFFORT,
    )
    assert codes(result) == [("vendor/x.yaml", "GPU003")]


def test_a_directory_walk_checks_each_file_with_its_nearest_config(repo: Path) -> None:
    # `gpulint check .` over a repository whose vendor folder has its own config: the vendor
    # files are judged by it alone (nearest wins, nothing merged), the rest by the outer one.
    (repo / ".gpulint.yaml").write_text("ignore: [GPU002]\n")
    (repo / "vendor" / ".gpulint.yaml").write_text("ignore: [GPU6]\n")
    (repo / "vendor" / "team").mkdir()
    (repo / "vendor" / "team" / "trainer.yaml").write_text(REQUEST_ONLY)
    result = check(".")
    assert codes(result) == [
        ("vendor/chart.yaml", "GPU003"),
        ("vendor/team/trainer.yaml", "GPU002"),
    ]
    assert result.stderr == ""
    assert json.loads(result.stdout)["summary"]["files"] == 3
    assert codes(check()) == codes(result)
    # A config deeper down governs its own folder, and the middle one gives it up.
    (repo / "vendor" / "team" / ".gpulint.yaml").write_text("select: [GPU6]\n")
    assert codes(check(".")) == [("vendor/chart.yaml", "GPU003")]
    listed = CliRunner().invoke(main, ["check", "--show-files", "."])
    assert sorted(listed.stdout.split()) == [
        "k8s/trainer.yaml",
        "vendor/chart.yaml",
        "vendor/team/trainer.yaml",
    ]
    # A folder the outer config excludes is not walked, whatever config it holds.
    (repo / ".gpulint.yaml").write_text("ignore: [GPU002]\nexclude: [vendor/]\n")
    assert codes(check(".")) == []
    # Nor one .gitignore ignores, unless the command line says to walk it.
    (repo / ".gpulint.yaml").write_text("ignore: [GPU002]\n")
    (repo / ".git").mkdir()
    (repo / ".gitignore").write_text("vendor/\n")
    assert codes(check(".")) == []
    assert codes(check(".", "--no-respect-gitignore")) == [("vendor/chart.yaml", "GPU003")]
    # --config and --isolated read one config for every file, as in ruff.
    (repo / ".gitignore").unlink()
    assert codes(check(".", "--config", ".gpulint.yaml")) == [
        ("vendor/chart.yaml", "GPU601"),
        ("vendor/chart.yaml", "GPU003"),
    ]
    assert codes(check(".", "--isolated")) == [
        ("k8s/trainer.yaml", "GPU002"),
        ("vendor/chart.yaml", "GPU601"),
        ("vendor/chart.yaml", "GPU003"),
        ("vendor/team/trainer.yaml", "GPU002"),
    ]


def test_pyproject_tool_table_is_found_upward(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.gpulint]\nselect = ["GPU6"]\n'
    )
    monkeypatch.chdir(repo / "vendor")
    result = check(".")
    assert codes(result) == [("chart.yaml", "GPU601")]
    assert result.exit_code == 0  # only a warning left


def test_pyproject_without_tool_table_is_passed_over(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(repo) is None
    assert codes(check()) == ALL_FINDINGS


def test_gpulint_yaml_wins_over_pyproject_in_the_same_directory(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.gpulint]\nselect = ["GPU6"]\n')
    (repo / ".gpulint.yaml").write_text("select: [GPU002]\n")
    assert codes(check()) == [("k8s/trainer.yaml", "GPU002")]


def test_explicit_config_and_isolated(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("select: [GPU002]\n")
    (repo / "other.yaml").write_text("select: [GPU003]\n")
    assert codes(check("--config", "other.yaml")) == [("vendor/chart.yaml", "GPU003")]
    assert codes(check("--isolated")) == ALL_FINDINGS


def test_select_by_prefix_and_most_specific_selector_wins(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "select: [GPU0]\nignore: [GPU00]\nextend-select: [GPU002]\n"
    )
    assert codes(check()) == [("k8s/trainer.yaml", "GPU002")]


def test_select_all_then_ignore_a_code(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("select: [ALL]\nignore: [GPU002]\n")
    assert [code for _, code in codes(check())] == ["GPU601", "GPU003"]


def test_severity_override_changes_output_and_exit_code(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("select: [GPU6]\nseverity:\n  GPU601: error\n")
    result = check()
    assert result.exit_code == 1
    assert [f["severity"] for f in json.loads(result.stdout)["findings"]] == ["error"]


def test_exclude_globs_skip_files_and_directories(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text('exclude: ["vendor/"]\n')
    result = check()
    assert codes(result) == [("k8s/trainer.yaml", "GPU002")]
    assert json.loads(result.stdout)["summary"]["files"] == 1
    (repo / ".gpulint.yaml").write_text('exclude: ["**/trainer.yaml"]\n')
    assert [path for path, _ in codes(check())] == ["vendor/chart.yaml", "vendor/chart.yaml"]


def test_exclude_is_relative_to_the_config_file_from_a_subdirectory(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".gpulint.yaml").write_text(
        'exclude: ["vendor"]\nper-file-ignores:\n  "k8s/*": [GPU0]\n'
    )
    monkeypatch.chdir(repo / "k8s")
    assert codes(check("..")) == []


def test_per_file_ignores(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text('per-file-ignores:\n  "vendor/*.yaml": [GPU003]\n')
    assert codes(check()) == [("k8s/trainer.yaml", "GPU002"), ("vendor/chart.yaml", "GPU601")]


def test_ignore_objects_by_kind_namespace_name_globs(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("ignore-objects:\n  - {kind: Pod, namespace: vend*}\n")
    assert codes(check()) == [("k8s/trainer.yaml", "GPU002")]
    (repo / ".gpulint.yaml").write_text("ignore-objects:\n  - {name: 'train*'}\n")
    assert [path for path, _ in codes(check())] == ["vendor/chart.yaml", "vendor/chart.yaml"]
    (repo / ".gpulint.yaml").write_text("ignore-objects:\n  - {kind: Deployment}\n")
    assert codes(check()) == ALL_FINDINGS


def test_ignore_objects_with_codes_drops_only_those(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "ignore-objects:\n  - namespace: vendor\n    codes: [GPU6]\n"
    )
    assert codes(check()) == [("k8s/trainer.yaml", "GPU002"), ("vendor/chart.yaml", "GPU003")]


def test_fail_on_from_config_and_cli_override(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("fail-on: never\n")
    assert check().exit_code == 0
    assert check("--fail-on", "error").exit_code == 1
    (repo / ".gpulint.yaml").write_text("select: [GPU6]\nfail-on: warning\n")
    assert check().exit_code == 1
    assert check("--fail-on", "error").exit_code == 0


def test_cli_select_and_ignore_override_the_file(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("select: [GPU6]\nignore: [GPU002]\n")
    assert codes(check("--select", "GPU002")) == [("k8s/trainer.yaml", "GPU002")]
    assert codes(check("--ignore", "GPU6")) == []


def test_report_unused_ignores_from_config(repo: Path) -> None:
    (repo / "k8s" / "trainer.yaml").write_text(
        REQUEST_ONLY.replace("  name: trainer\n", "  name: trainer  # gpulint: ignore[GPU003]\n")
    )
    assert ("k8s/trainer.yaml", "GPU006") not in codes(check())
    (repo / ".gpulint.yaml").write_text("report-unused-ignores: true\n")
    result = check()
    finding = next(f for f in json.loads(result.stdout)["findings"] if f["code"] == "GPU006")
    assert (finding["path"], finding["line"], finding["column"]) == ("k8s/trainer.yaml", 4, 18)
    assert finding["message"] == "unused suppression (comment): no GPU003 finding here to suppress"


def test_an_empty_config_file_means_the_defaults(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("# nothing configured yet\n")
    assert codes(check()) == ALL_FINDINGS


def test_load_config_converts_every_setting(tmp_path: Path) -> None:
    path = tmp_path / ".gpulint.yaml"
    path.write_text(
        "select: [GPU0]\n"
        "extend-select: [GPU601]\n"
        "ignore: [GPU005]\n"
        "severity: {GPU601: error}\n"
        "fail-on: warning\n"
        "exclude: [charts/]\n"
        "per-file-ignores: {'legacy/*': [GPU002]}\n"
        "ignore-objects: [{kind: Deployment, name: 'vendor-*', codes: [GPU6]}]\n"
        "report-unused-ignores: true\n"
    )
    config = load_config(path, load_catalogue())
    assert config.select == ("GPU0",)
    assert config.extend_select == ("GPU601",)
    assert config.ignore == ("GPU005",)
    assert config.severity == {"GPU601": Severity.ERROR}
    assert config.fail_on is Severity.WARNING
    assert config.exclude == ("charts/",)
    assert config.per_file_ignores == {"legacy/*": ("GPU002",)}
    assert config.report_unused_ignores is True
    assert config.root == tmp_path.resolve()
    deployment = ObjectRef("apps/v1", "Deployment", "ml", "vendor-trainer")
    assert config.ignored_object(deployment, "GPU601")
    assert not config.ignored_object(deployment, "GPU002")
    assert not config.ignored_object(ObjectRef("v1", "Pod", None, "vendor-x"), "GPU601")
    assert config.is_selected("GPU003", True)
    assert not config.is_selected("GPU005", True)
    assert config.is_selected("GPU601", True)


def test_default_config_selects_enabled_rules_only() -> None:
    config = Config()
    assert config.is_selected("GPU002", True)
    assert not config.is_selected("GPU999", False)
    assert Config(select=("ALL",)).is_selected("GPU999", False)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (".gpulint.yaml", "selct: [GPU0]\n", ".gpulint.yaml:1:1: unknown setting `selct`"),
        (
            ".gpulint.yaml",
            "fail-on: error\nselect: GPU002\n",
            ".gpulint.yaml:2:9: select: 'GPU002' is not of type 'array'",
        ),
        (
            ".gpulint.yaml",
            "severity:\n  GPU002: fatal\n",
            ".gpulint.yaml:2:11: severity.GPU002: 'fatal' is not one of "
            "['error', 'warning', 'info']",
        ),
        (
            ".gpulint.yaml",
            "ignore:\n  - GPU002\n  - GPU099\n",
            ".gpulint.yaml:3:5: `GPU099` selects no rule",
        ),
        (
            ".gpulint.yaml",
            'per-file-ignores:\n  "a/*": [GPU002, GPU099]\n',
            ".gpulint.yaml:2:19: `GPU099` selects no rule",
        ),
        (
            ".gpulint.yaml",
            "ignore-objects:\n  - {kind: Pod, codes: [GPU099]}\n",
            ".gpulint.yaml:2:25: `GPU099` selects no rule",
        ),
        (
            ".gpulint.yaml",
            "exclude: []\nfail-on: sometimes\n",
            ".gpulint.yaml:2:10: fail-on: 'sometimes' is not one of "
            "['error', 'warning', 'info', 'never']",
        ),
        (
            ".gpulint.yaml",
            "select: [gpu002]\n",
            ".gpulint.yaml:1:10: select.0: 'gpu002' does not match '^(ALL|GPU[0-9]{0,3})$'",
        ),
        (
            ".gpulint.yaml",
            "ignore-objects:\n  - kind: Pod\n    nam: x\n",
            ".gpulint.yaml:3:5: unknown setting `ignore-objects.0.nam`",
        ),
        (
            ".gpulint.yaml",
            "workloads:\n  - kind: TrainingRun\n    replicas: spec.workers\n",
            ".gpulint.yaml:2:5: workloads.0: one of `podTemplates`, `podSpecs`, `roles` is "
            "required",
        ),
        (
            ".gpulint.yaml",
            "workloads:\n  - kind: TrainingRun\n    podTemplates: [spec..template]\n",
            ".gpulint.yaml:3:20: workloads.0.podTemplates.0: 'spec..template' does not match "
            r"'^([A-Za-z0-9_-]+(\\[\\])?|\\*)(\\.([A-Za-z0-9_-]+(\\[\\])?|\\*))*$'",
        ),
        (
            ".gpulint.yaml",
            "exclude: [vendor/]\nselect: [GPU0\n",
            ".gpulint.yaml:3:1: invalid YAML: did not find expected ',' or ']' "
            "(while parsing a flow sequence)",
        ),
        (
            "pyproject.toml",
            '[tool.gpulint]\nfail-on = "error"\nselct = ["GPU0"]\n',
            "pyproject.toml:3:1: unknown setting `selct`",
        ),
        (
            "pyproject.toml",
            '[tool.gpulint]\nignore = ["GPU002"]\nfail-on = "sometimes"\n',
            "pyproject.toml:3:1: fail-on: 'sometimes' is not one of "
            "['error', 'warning', 'info', 'never']",
        ),
        (
            "pyproject.toml",
            "[tool.gpulint]\nselect = [\n",
            "pyproject.toml:2:11: invalid TOML: Invalid value",
        ),
        (
            "pyproject.toml",
            '[tool.gpulint]\nselect = ["GPU0"]\nfail-on = never\n',
            "pyproject.toml:3:11: invalid TOML: Invalid value",
        ),
    ],
)
def test_config_errors_exit_2_with_one_line_naming_file_line_column(
    repo: Path, name: str, text: str, message: str
) -> None:
    (repo / name).write_text(text)
    result = check()
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"gpulint: error: {repo / name}:{message.split(':', 1)[1]}\n"
    assert "Traceback" not in result.output


def test_explicit_config_that_does_not_exist_exits_2(repo: Path) -> None:
    result = check("--config", "missing.yaml")
    assert result.exit_code == 2
    assert result.stderr == "gpulint: error: missing.yaml: config file not found\n"


def test_explicit_config_error_names_the_path_as_given(repo: Path) -> None:
    (repo / "ci.yaml").write_text("fail-on: [error]\n")
    result = check("--config", "ci.yaml")
    assert result.exit_code == 2
    assert result.stderr == (
        "gpulint: error: ci.yaml:1:10: fail-on: ['error'] is not one of "
        "['error', 'warning', 'info', 'never']\n"
    )


def test_load_config_raises_gpulint_error(tmp_path: Path) -> None:
    path = tmp_path / ".gpulint.yaml"
    path.write_text("per-file-ignores:\n  'a/*': GPU002\n")
    with pytest.raises(GpulintError, match=r"\.gpulint\.yaml:2:10: per-file-ignores\.a/\*: "):
        load_config(path, load_catalogue())


def test_per_file_ignores_apply_to_the_stdin_filename(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text('per-file-ignores:\n  "rendered/*": [GPU002]\n')
    runner = CliRunner()
    args = ["check", "--format", "json", "-", "--stdin-filename"]
    ignored = runner.invoke(main, [*args, "rendered/all.yaml"], input=REQUEST_ONLY)
    assert (ignored.exit_code, codes(ignored)) == (0, [])
    kept = runner.invoke(main, [*args, "k8s/all.yaml"], input=REQUEST_ONLY)
    assert (kept.exit_code, codes(kept)) == (1, [("k8s/all.yaml", "GPU002")])


def test_exclude_applies_to_files_named_on_the_command_line(repo: Path) -> None:
    # pre-commit passes every staged file by name: exclude must hold for those too
    (repo / ".gpulint.yaml").write_text("exclude: [vendor/]\n")
    result = check("vendor/chart.yaml", "k8s/trainer.yaml")
    assert codes(result) == [("k8s/trainer.yaml", "GPU002")]
    assert json.loads(result.stdout)["summary"]["files"] == 1


def test_a_config_that_validated_before_is_not_validated_again(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # That a run whose config validated before does not even import the validator is pinned
    # in a process of its own by tests/test_startup.py (the pre-commit hook's run).
    import gpulint.schema

    validated: list[str] = []
    validate = gpulint.schema.validate

    def counted(display: str, *args: Any) -> None:
        validated.append(display)
        validate(display, *args)

    monkeypatch.setattr(gpulint.schema, "validate", counted)
    cache = tmp_path_factory.mktemp("cache")
    (repo / ".gpulint.yaml").write_text("ignore: [GPU6]\nseverity: {GPU002: warning}\n")
    args = ("check", "--cache-dir", str(cache), "k8s")
    counts = []
    for extra in ((), (), ("--no-cache",)):
        result = CliRunner().invoke(main, [*args, *extra])
        assert result.exit_code == 0, result.output
        counts.append(len(validated))
    # New to the cache: validated; the same bytes: not again; without the cache: validated.
    assert counts == [1, 1, 2]
    assert set(validated) == {str(repo / ".gpulint.yaml")}
    assert list((cache / "configs").iterdir())
    # Changed bytes are validated, and an invalid config is never remembered.
    (repo / ".gpulint.yaml").write_text("ignore: [GPU6]\nseverity: {GPU002: fatal}\n")
    for _ in range(2):
        result = CliRunner().invoke(main, list(args))
        assert result.exit_code == 2
        where = f"{repo / '.gpulint.yaml'}:2:20: severity.GPU002: 'fatal' is not one of"
        assert result.stderr.startswith(f"gpulint: error: {where}")
    assert len(list((cache / "configs").iterdir())) == 1


# --- context: the rest of the manifests, for a run given a few files ----------------------

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: NAMESPACE}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector:
    matchLabels: {app: NAME}
  template:
    metadata:
      labels: {app: NAME}
    spec:
      priorityClassName: gpu-high
      containers:
      - name: trainer
        image: trainer:1.0
        resources:
          requests: {cpu: "4", memory: 16Gi}
          limits: {memory: 16Gi, nvidia.com/gpu: 3}
"""
PRIORITY_CLASS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: gpu-high}
value: 100000
"""


def deployment(name: str, namespace: str = "ml") -> str:
    return DEPLOYMENT.replace("NAMESPACE", namespace).replace("NAME", name)


@pytest.fixture()
def split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A quota of 4 GPUs that two Deployments of 3 overflow only together, in three files."""
    files = {
        "k8s/quota.yaml": GPU_QUOTA,
        "k8s/a.yaml": deployment("trainer-a"),
        "k8s/b.yaml": deployment("trainer-b"),
        "k8s/other.yaml": deployment("elsewhere", namespace="web"),
        "k8s/web.yaml": deployment("web").replace("nvidia.com/gpu: 3", "cpu: '4'"),
        "k8s/bad-pod.yaml": REQUEST_ONLY.replace("namespace: ml", "namespace: web"),
        "cluster/priority.yaml": PRIORITY_CLASS,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def located(result: Result) -> list[tuple[str, str, int]]:
    """(path, code, line) of each finding."""
    return [(f["path"], f["code"], f["line"]) for f in json.loads(result.stdout)["findings"]]


def test_without_context_a_file_alone_misses_the_quota(split: Path) -> None:
    assert located(check("k8s/a.yaml")) == []
    assert located(check("k8s")) == [
        ("k8s/a.yaml", "GPU301", 5),
        ("k8s/b.yaml", "GPU301", 5),
        ("k8s/bad-pod.yaml", "GPU002", 10),
    ]


def test_context_gives_the_quota_and_the_workloads_sharing_it(split: Path) -> None:
    (split / ".gpulint.yaml").write_text("context: [k8s, 'cluster/*.yaml']\n")
    result = check("k8s/a.yaml")
    assert result.exit_code == 1
    # The given Deployment's finding sums the other's: they share the quota. The other's
    # finding, the same overflow, is not told again.
    assert located(result) == [("k8s/a.yaml", "GPU301", 5)]
    report = json.loads(result.stdout)
    assert "Deployment/ml/trainer-b: 3" in report["findings"][0]["message"]
    assert report["summary"]["files"] == 1  # the context is read, not checked
    # A change to the quota alone is judged against the workloads it limits.
    assert located(check("k8s/quota.yaml")) == [
        ("k8s/a.yaml", "GPU301", 5),
        ("k8s/b.yaml", "GPU301", 5),
    ]
    # A workload of another namespace is not involved; per-file findings of the context (the
    # pod of bad-pod.yaml) are not this run's.
    assert located(check("k8s/other.yaml")) == []
    # A CPU service beside them is not named by their findings: not this commit's problem.
    assert located(check("k8s/web.yaml")) == []
    # The whole tree gives the same findings as before.
    assert [f for f in located(check("k8s")) if f[1] == "GPU301"] == [
        ("k8s/a.yaml", "GPU301", 5),
        ("k8s/b.yaml", "GPU301", 5),
    ]


def test_a_context_finding_naming_a_longer_name_does_not_involve_the_given_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The two trainers overflow the quota together; `Deployment/ml/trainer` is a CPU service
    # whose name begins theirs, in no sum of theirs: its file is not involved in their findings.
    files = {
        ".gpulint.yaml": "context: [k8s]\n",
        "k8s/quota.yaml": GPU_QUOTA,
        "k8s/priority.yaml": PRIORITY_CLASS,
        "k8s/trainer.yaml": deployment("trainer").replace("nvidia.com/gpu: 3", "cpu: '4'"),
        "k8s/trainer-a.yaml": deployment("trainer-a"),
        "k8s/trainer-b.yaml": deployment("trainer-b"),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    assert located(check("k8s/trainer.yaml")) == []
    # Given one of the trainers, its finding: the sum names the other one.
    result = check("k8s/trainer-a.yaml")
    assert located(result) == [("k8s/trainer-a.yaml", "GPU301", 5)]
    assert json.loads(result.stdout)["findings"][0]["message"] == (
        "ResourceQuota ml/gpu-quota: used 0 + requested 6 (Deployment/ml/trainer-a: 3; "
        "Deployment/ml/trainer-b: 3) = 6 > hard 4 `requests.nvidia.com/gpu`, 2 over; "
        "Deployment/ml/trainer-a: 1 replica × 3; pods beyond the quota are refused at creation "
        "(exceeded quota)"
    )
    # Given the quota alone, both trainers' findings: the quota has none of its own.
    assert located(check("k8s/quota.yaml")) == [
        ("k8s/trainer-a.yaml", "GPU301", 5),
        ("k8s/trainer-b.yaml", "GPU301", 5),
    ]


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)


def test_a_limitrange_in_the_context_is_reported_for_the_workload_it_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its finding lists the containers it refuses or hands GPUs to, each by `Kind/name`.
    limits = GPU_QUOTA.replace("ResourceQuota", "LimitRange").replace("gpu-quota", "gpu-limits")
    limits = limits.split("spec:")[0] + "spec:\n  limits:\n  - type: Container\n"
    write_tree(
        tmp_path,
        {
            ".gpulint.yaml": "context: [k8s]\n",
            "k8s/limits.yaml": limits + "    max: {nvidia.com/gpu: '2'}\n",
            "k8s/priority.yaml": PRIORITY_CLASS,
            "k8s/trainer.yaml": deployment("trainer"),
            "k8s/web.yaml": deployment("web").replace("nvidia.com/gpu: 3", "cpu: '4'"),
        },
    )
    monkeypatch.chdir(tmp_path)
    refused = (
        "LimitRange ml/gpu-limits: `max` `nvidia.com/gpu` per Container is 2: a larger limit is"
        " refused (maximum nvidia.com/gpu usage per Container is 2); in the checked manifests:"
        " Deployment/trainer container `trainer` (limit 3)"
    )
    result = check("k8s/trainer.yaml")
    assert located(result) == [("k8s/limits.yaml", "GPU303", 7)]
    assert [f["message"] for f in json.loads(result.stdout)["findings"]] == [refused]
    # The CPU service is the one that would get GPUs by default.
    result = check("k8s/web.yaml")
    assert located(result) == [("k8s/limits.yaml", "GPU303", 7)]
    assert json.loads(result.stdout)["findings"][0]["message"].endswith(
        "in the checked manifests: Deployment/web container `trainer` (would get nvidia.com/gpu: 2)"
    )


def test_a_capacity_sum_counts_every_workload_listed_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One node of 4 GPUs for five trainers of 3, 2, 2, 1 and 2: each message lists the three
    # largest of the others, and every sum counts the rest.
    profile = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
metadata: {name: one-node}
spec:
  kubernetesVersion: "1.31"
  pools:
  - name: gpu
    labels: {nvidia.com/gpu.present: "true"}
    allocatable: {cpu: "47", memory: 180Gi, pods: 110, nvidia.com/gpu: 4}
    nodes: 1
    maxNodes: 1
"""
    gpus = {"a": 3, "b": 2, "c": 2, "d": 1, "e": 2}
    files = {f"k8s/trainer-{n}.yaml": deployment(f"trainer-{n}") for n in gpus}
    files = {
        name: text.replace("nvidia.com/gpu: 3", f"nvidia.com/gpu: {gpus[name[-6]]}")
        for name, text in files.items()
    }
    files |= {".gpulint.yaml": "context: [k8s]\n", "profile.yaml": profile}
    files["k8s/priority.yaml"] = PRIORITY_CLASS
    write_tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    result = check("--profile", "profile.yaml", "k8s/trainer-d.yaml")
    assert located(result) == [("k8s/trainer-d.yaml", "GPU201", 5)]
    assert json.loads(result.stdout)["findings"][0]["message"].startswith(
        "Deployment/ml/trainer-d needs 1 nvidia.com/gpu (replicas: 1 × 1 per pod); with"
        " Deployment/ml/trainer-a (3: replicas: 1 × 3), Deployment/ml/trainer-b (2: replicas:"
        " 1 × 2), Deployment/ml/trainer-c (2: replicas: 1 × 2) and 1 more, which can only run"
        " on the same pools, that is 10, but"
    )
    whole = check("--profile", "profile.yaml", "k8s")
    assert located(whole) == [(f"k8s/trainer-{n}.yaml", "GPU201", 5) for n in gpus]


BIG_POOL = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
metadata: {name: NAME}
spec:
  kubernetesVersion: "1.31"
  pools:
  - name: gpu
    labels: {nvidia.com/gpu.present: "true"}
    allocatable: {cpu: "47", memory: 180Gi, pods: 110, nvidia.com/gpu: 8}
    nodes: 2
    maxNodes: 2
"""


def test_rules_across_files_sum_every_config_judged_against_one_cluster(split: Path) -> None:
    # Two Deployments of 3 GPUs under a quota of 4, one in a folder with a config of its own:
    # the quota counts both, each finding judged by its own file's config.
    (split / ".gpulint.yaml").write_text("ignore: [GPU002]\n")
    (split / "k8s" / "team-b").mkdir()
    (split / "k8s" / "b.yaml").rename(split / "k8s" / "team-b" / "b.yaml")
    (split / "k8s" / "team-b" / ".gpulint.yaml").write_text("severity: {GPU301: warning}\n")
    summed = [("k8s/a.yaml", "GPU301", 5), ("k8s/team-b/b.yaml", "GPU301", 5)]
    result = check(".")
    assert located(result) == summed
    report = json.loads(result.stdout)
    assert [f["severity"] for f in report["findings"]] == ["error", "warning"]
    assert report["findings"][1]["message"].startswith(
        "ResourceQuota ml/gpu-quota: used 0 + requested 6 (Deployment/ml/trainer-a: 3; "
        "Deployment/ml/trainer-b: 3) = 6 > hard 4 `requests.nvidia.com/gpu`, 2 over; "
        "Deployment/ml/trainer-b: 1 replica × 3"
    )
    # Given file by file, as pre-commit gives them, with the quota: the same, each once.
    assert located(check("k8s/quota.yaml", "k8s/a.yaml", "k8s/team-b/b.yaml")) == summed
    # The same profile given to both on the command line: one cluster.
    for name in ("staging", "k8s/team-b/staging", "k8s/team-b/prod"):
        (split / f"{name}.yaml").write_text(BIG_POOL.replace("NAME", Path(name).name))
    assert located(check(".", "--profile", "staging.yaml")) == summed
    # Configs naming different clusters are not summed: each team's files fit its quota.
    (split / ".gpulint.yaml").write_text("ignore: [GPU002]\nclusters: {staging: [staging.yaml]}\n")
    (split / "k8s" / "team-b" / ".gpulint.yaml").write_text("clusters: {prod: [prod.yaml]}\n")
    assert located(check(".")) == []
    # A cluster of the same name is the same cluster, each config reading its own profile.
    (split / "k8s" / "team-b" / ".gpulint.yaml").write_text("clusters: {staging: [staging.yaml]}\n")
    assert located(check(".")) == summed
    # So is one of the same profile inputs under another name.
    (split / ".gpulint.yaml").write_text(
        "ignore: [GPU002]\nclusters: {stage: [k8s/team-b/staging.yaml]}\n"
    )
    assert located(check(".")) == summed
    # A config naming no cluster is not summed with one that names one.
    (split / "k8s" / "team-b" / ".gpulint.yaml").write_text("fail-on: warning\n")
    assert located(check(".")) == []


def test_stdin_named_as_a_context_file_stands_for_that_file(split: Path) -> None:
    # An editor sends its buffer of k8s/b.yaml: the file on disk is not counted again.
    (split / ".gpulint.yaml").write_text("context: [k8s]\n")
    text = (split / "k8s" / "b.yaml").read_text()
    args = ["check", "--format", "json", "-", "--stdin-filename", "k8s/b.yaml"]
    result = CliRunner().invoke(main, args, input=text)
    assert result.exit_code == 1
    assert located(result) == [("k8s/b.yaml", "GPU301", 5)]
    message = json.loads(result.stdout)["findings"][0]["message"]
    assert message.startswith(
        "ResourceQuota ml/gpu-quota: used 0 + requested 6 (Deployment/ml/trainer-a: 3; "
        "Deployment/ml/trainer-b: 3) = 6 > hard 4 `requests.nvidia.com/gpu`, 2 over; "
        "Deployment/ml/trainer-b: 1 replica × 3"
    )
    # Its edited text is what counts: with one GPU, the two fit the quota.
    result = CliRunner().invoke(main, args, input=text.replace("gpu: 3", "gpu: 1"))
    assert (result.exit_code, located(result)) == (0, [])


def test_a_suppression_in_a_context_file_still_applies(split: Path) -> None:
    (split / ".gpulint.yaml").write_text("context: [k8s, cluster]\n")
    text = deployment("trainer-b").replace("replicas: 1", "replicas: 1  # gpulint: ignore[GPU301]")
    (split / "k8s" / "b.yaml").write_text(text)
    assert located(check("k8s/a.yaml")) == [("k8s/a.yaml", "GPU301", 5)]


def test_a_context_path_that_does_not_exist_is_exit_2(split: Path) -> None:
    (split / ".gpulint.yaml").write_text("context:\n  - k8s\n  - manifests\n")
    result = check("k8s/a.yaml")
    assert result.exit_code == 2
    config = split / ".gpulint.yaml"
    assert result.stderr == f"gpulint: error: {config}:3:5: context: `manifests` does not exist\n"


def test_a_missing_context_path_in_pyproject_is_located_at_its_key(split: Path) -> None:
    (split / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.gpulint]\ncontext = ["nope"]\n'
    )
    result = check("k8s/a.yaml")
    assert result.exit_code == 2
    config = split / "pyproject.toml"
    assert result.stderr == f"gpulint: error: {config}:5:1: context: `nope` does not exist\n"
