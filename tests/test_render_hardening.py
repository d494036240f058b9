"""Charts and overlays from a pull request, rendered with the official helm and kubectl: no
command of the repository runs, no connection is attempted (a listener on 127.0.0.1 counts
them), no file outside the chart or overlay is read into output, no environment variable
appears, and every refusal or failure is one line with exit 2 within the time budget.

Every hostile input is built here, in `tmp_path`.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.api import lint
from gpulint.cli import main
from gpulint.findings import Finding
from gpulint.model import Severity
from gpulint.render.helm import HelmRender, render_chart
from gpulint.render.kustomize import build_overlay
from gpulint.render.locate import HelmOrigin
from gpulint.render.options import ChartSettings, RenderOptions, ValuesSet
from gpulint.render.tools import RenderError, RenderRun, RenderTimeout, run_tool
from tests.repos import write_files

pytest_plugins = ["tests.binaries"]

SECRET = "s3cr3t-token-value"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers:
        - name: a
          image: a
"""
CHART_FILE = "apiVersion: v2\nname: app\nversion: 0.1.0\n"


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections made to it."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(8)
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.socket.close()


@pytest.fixture()
def listener() -> Iterator[Listener]:
    """A local listener; the test asserts nothing connected to it."""
    server = Listener()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout (it has `.git`) as the working directory: the checked tree."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


@pytest.fixture()
def helm(tool_env, helm4_dir: Path) -> Path:
    """helm v4 and kubectl alone on PATH, outside the checked tree."""
    tool_env(helm=helm4_dir / "helm", kubectl=helm4_dir / "kubectl")
    return helm4_dir / "helm"


def chart(root: Path, files: dict[str, str], name: str = "app") -> Path:
    """A chart `name` under `root` with a Deployment and `files` (path -> text)."""
    write_files(
        root / name,
        {"Chart.yaml": CHART_FILE, "templates/deployment.yaml": DEPLOYMENT, **files},
    )
    return root / name


def run(*args: str) -> Result:
    """`gpulint check --isolated ARGS` in-process."""
    return CliRunner().invoke(main, ["check", "--isolated", "--no-cache", *args])


def one_line_error(result: Result) -> str:
    """The `gpulint: error:` line of a run that exited 2, checked to be its only output."""
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("gpulint: error: ")
    return result.stderr.removeprefix("gpulint: error: ").rstrip("\n")


def not_rendered(result: Result, at: tuple[str, int, int] = ("Chart.yaml", 1, 1)) -> str:
    """Why the chart `app` was not rendered: the one finding (GPU030, a warning at `at`, a
    file of the chart, line and column: its Chart.yaml unless helm named a template) of a
    JSON run that checked the rest."""
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)["findings"]
    file, line, column = at
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in findings] == [
        ("GPU030", "warning", line, column)
    ]
    assert findings[0]["path"].endswith(f"app/{file}")
    return findings[0]["message"].removeprefix("not rendered, so not checked: ")


# Code execution: tools come only from absolute PATH entries outside the checked tree.


def planted_helm(repo: Path) -> Path:
    """A `bin/helm` of the repository that leaves a mark when it runs."""
    fake = repo / "bin" / "helm"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch {repo / 'PWNED'}\n")
    fake.chmod(0o755)
    return fake


@pytest.mark.parametrize("entry", ["bin", "./bin", "", "."])
def test_a_relative_path_entry_never_supplies_helm(
    repo: Path, helm: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    planted_helm(repo)
    if entry == ".":
        monkeypatch.chdir(repo / "bin")
    chart(repo, {})
    real = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{entry}{os.pathsep}{real}")
    assert run("--format", "json", str(repo / "app")).exit_code == 0
    monkeypatch.setenv("PATH", entry)
    assert not_rendered(run("--format", "json", str(repo / "app"))).startswith(
        "`helm` is not on PATH: "
    )
    assert not (repo / "PWNED").exists()


def test_a_helm_inside_the_checked_tree_is_never_run(
    repo: Path, tool_env, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool_env()
    fake = planted_helm(repo)
    chart(repo, {})
    monkeypatch.setenv("PATH", str(fake.parent))
    assert one_line_error(run("app")) == (
        f"`helm` is found only inside the checked tree ({fake}), which gpulint never runs: "
        "install Helm 3 or 4 (https://helm.sh/docs/intro/install/)"
    )
    assert not (repo / "PWNED").exists()


# Flags: every text of the chart and the config stays a value.


def test_a_chart_named_like_a_flag_is_never_a_flag(
    repo: Path, helm: Path, listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--validate` as the release would make helm ask the cluster of $KUBECONFIG.
    write_files(repo, {"kubeconfig": kubeconfig(listener.port)})
    monkeypatch.setenv("KUBECONFIG", str(repo / "kubeconfig"))
    app = chart(repo, {"Chart.yaml": CHART_FILE.replace("name: app", "name: --validate")})
    result = run("--format", "json", "app")
    assert result.exit_code == 0, result.output
    rendered = render_chart(HelmRender(app, "release-name"), None)
    assert "  name: release-name\n" in rendered
    assert listener.connections == 0


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        (
            "release",
            "--set-file=x=/proc/self/environ",
            "app: release `--set-file=x=/proc/self/environ` is not a release name (lower-case "
            "letters, digits, `-` and `.`, at most 53 characters)",
        ),
        (
            "release",
            "--output-dir=/tmp",
            "app: release `--output-dir=/tmp` is not a release name (lower-case letters, "
            "digits, `-` and `.`, at most 53 characters)",
        ),
        (
            "namespace",
            "--kubeconfig=/tmp/k",
            "app: namespace `--kubeconfig=/tmp/k` is not a namespace name (lower-case letters, "
            "digits and `-`, at most 63 characters)",
        ),
    ],
)
def test_a_config_release_or_namespace_is_a_name_and_nothing_else(
    repo: Path, helm: Path, setting: str, value: str, message: str
) -> None:
    chart(repo, {})
    (repo / ".gpulint.yaml").write_text(f"charts:\n  - path: app\n    {setting}: '{value}'\n")
    result = CliRunner().invoke(main, ["check", "--no-cache", "app"])
    assert one_line_error(result) == message


# Network and cluster: nothing connects, whatever the chart or the environment says.


def kubeconfig(port: int) -> str:
    """A kubeconfig of a cluster served by the listener, with a token."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
            "users": [{"name": "u", "user": {"token": SECRET}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        }
    )


@pytest.mark.parametrize("version", ["helm3", "helm4"])
def test_lookup_finds_nothing_and_no_cluster_is_asked(
    repo: Path,
    tool_env,
    listener: Listener,
    monkeypatch: pytest.MonkeyPatch,
    version: str,
    request: pytest.FixtureRequest,
) -> None:
    tool_env(helm=request.getfixturevalue(f"{version}_dir") / "helm")
    write_files(repo, {"kubeconfig": kubeconfig(listener.port)})
    monkeypatch.setenv("KUBECONFIG", str(repo / "kubeconfig"))
    # In-cluster configuration, as a CI pod has it.
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(listener.port))
    template = (
        '{{- $found := lookup "v1" "Secret" "" "" }}\n'
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
        "data:\n  found: {{ $found | toJson | quote }}\n"
        '  dns: {{ getHostByName (printf "127.0.0.1:%d" 1) | quote }}\n'
    )
    app = chart(repo, {"templates/lookup.yaml": template})
    rendered = render_chart(HelmRender(app, "app"), None)
    assert '  found: "{}"\n' in rendered
    assert listener.connections == 0


REMOTE = [
    ("resources", "https://127.0.0.1:{port}/deployment.yaml"),
    ("resources", "http://127.0.0.1:{port}/org/repo.git?ref=main"),
    ("resources", "ssh://git@127.0.0.1:{port}/org/repo.git?ref=--upload-pack=touch%20PWNED"),
    ("resources", "git@127.0.0.1:org/repo.git"),
    ("resources", "github.com/org/repo/deploy?ref=v1"),
    ("bases", "gh:org/repo"),
    ("components", "git::https://127.0.0.1:{port}/org/repo"),
    ("resources", "base//subdir"),
    ("resources", "example.com/_git/repo"),
    ("patchesStrategicMerge", "http://127.0.0.1:{port}/patch.yaml"),
]


@pytest.mark.parametrize(("field", "entry"), REMOTE)
def test_a_remote_kustomize_entry_is_refused_before_kubectl_runs(
    repo: Path, helm: Path, listener: Listener, field: str, entry: str
) -> None:
    entry = entry.format(port=listener.port)
    write_files(
        repo / "overlay",
        {"kustomization.yaml": f"{field}:\n  - {entry}\n", "deployment.yaml": "kind: x\n"},
    )
    assert one_line_error(run("overlay")) == (
        f"overlay: `{field}` entry `{entry}` is remote; gpulint never fetches "
        "kustomize resources (vendor them into the repository)"
    )
    assert listener.connections == 0
    assert not (repo / "PWNED").exists()


@pytest.mark.parametrize(
    "kustomization",
    [
        "patches:\n  - path: https://127.0.0.1:{port}/p.yaml\n",
        "configMapGenerator:\n  - name: c\n    files:\n      - k=http://127.0.0.1:{port}/f\n",
        'secretGenerator:\n  - name: s\n    envs: ["https://127.0.0.1:{port}/env"]\n',
        "patchesJson6902:\n  - path: http://127.0.0.1:{port}/p.json\n",
    ],
)
def test_remote_patches_and_generator_files_are_refused(
    repo: Path, helm: Path, listener: Listener, kustomization: str
) -> None:
    write_files(repo / "overlay", {"kustomization.yaml": kustomization.format(port=listener.port)})
    assert " is remote; gpulint never fetches kustomize resources" in one_line_error(run("overlay"))
    assert listener.connections == 0


def test_kubectl_runs_without_git_even_when_a_remote_entry_reaches_it(
    repo: Path, helm: Path, helm4_dir: Path, listener: Listener
) -> None:
    # Defence in depth: the run itself, without gpulint's check of the kustomization.
    hostile = f"ssh://git@127.0.0.1:{listener.port}/o/r.git?ref=--upload-pack=touch%20{repo}/PWNED"
    write_files(repo / "overlay", {"kustomization.yaml": f"resources:\n  - {hostile}\n"})
    command = [str(helm4_dir / "kubectl"), "kustomize", "--", str(repo / "overlay")]
    with pytest.raises(RenderError, match=r"^overlay: error: accumulating resources: "):
        run_tool(command, "overlay", RenderRun.start())
    assert listener.connections == 0
    assert not (repo / "PWNED").exists()


def test_an_overlay_base_outside_the_checked_tree_is_refused(
    repo: Path, helm: Path, tmp_path: Path
) -> None:
    write_files(tmp_path / "outside", {"kustomization.yaml": "resources: []\n"})
    write_files(repo / "overlay", {"kustomization.yaml": "resources:\n  - ../../outside\n"})
    assert one_line_error(run("overlay")) == (
        "overlay: `resources` entry `../../outside` is outside the checked tree "
        f"{repo}; gpulint reads only files inside it"
    )


def test_an_overlay_naming_a_missing_file_is_not_built_and_the_rest_is_checked(
    repo: Path, helm: Path
) -> None:
    # kustomize tries a name it cannot find as a remote: never built. The overlay is broken
    # input, a finding at its kustomization; the manifest beside it is still checked.
    write_files(
        repo,
        {
            "overlay/kustomization.yaml": "resources:\n  - deployment.yaml\n  - renamed.yaml\n",
            "overlay/deployment.yaml": DEPLOYMENT,
            "pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
            "spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n",
        },
    )
    result = run("--format", "json", "overlay", "pod.yaml")
    assert result.exit_code == 0, result.output  # warnings only
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["path"], f["line"], f["column"]) for f in findings] == [
        ("GPU030", "overlay/kustomization.yaml", 3, 5),  # at the entry
        ("GPU601", "pod.yaml", 4, 41),
    ]
    assert findings[0]["message"] == (
        "not rendered, so not checked: `resources` entry `renamed.yaml`: no such file or directory"
    )
    assert findings[0]["fix"] == (
        "Create `renamed.yaml` (relative to the kustomization), or remove the entry: kustomize "
        "refuses an overlay that names a file it cannot find."
    )
    # An entry of a base it builds on is not in the overlay's file: reported at its top.
    write_files(
        repo,
        {
            "overlay/kustomization.yaml": "resources:\n  - ../base\n",
            "base/kustomization.yaml": "resources:\n  - renamed.yaml\n",
        },
    )
    # No longer named by the overlay, it would be checked on its own.
    (repo / "overlay" / "deployment.yaml").unlink()
    (finding, _) = json.loads(run("--format", "json", "overlay", "pod.yaml").stdout)["findings"]
    assert (finding["line"], finding["column"]) == (1, 1)
    assert "`resources` entry `renamed.yaml` of ../base: no such file" in finding["message"]


# Files: only regular files inside the chart or overlay are read.


def test_a_chart_file_linked_out_of_the_chart_is_refused_and_named(
    repo: Path, helm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI_SECRET", SECRET)
    app = chart(repo, {"templates/leak.yaml": '{{ fail (.Files.Get "files/env") }}\n'})
    (app / "files").mkdir()
    (app / "files" / "env").symlink_to("/proc/self/environ")
    message = one_line_error(run("app"))
    assert message == (
        "app: `files/env` is a symlink out of the chart; gpulint reads only files inside the chart"
    )


def test_a_symlink_inside_the_chart_is_read(repo: Path, helm: Path) -> None:
    app = chart(repo, {"files/shared.txt": "gpu\n"})
    (app / "files" / "link.txt").symlink_to("shared.txt")
    assert run("--format", "json", "app").exit_code == 0


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_a_chart_file_that_is_not_regular_is_refused_without_reading_it(
    repo: Path, helm: Path, kind: str
) -> None:
    app = chart(repo, {})
    special = app / "templates" / "special.yaml"
    if kind == "fifo":
        os.mkfifo(special)
        expected = "app: `templates/special.yaml` is a FIFO, not a regular file; "
    elif kind == "socket":
        holder = socket.socket(socket.AF_UNIX)
        holder.bind(str(special))
        expected = "app: `templates/special.yaml` is a socket, not a regular file; "
    else:
        special = app / "templates" / "zero.yaml"
        special.symlink_to("/dev/zero")
        expected = "app: `templates/zero.yaml` is a symlink out of the chart; "
    started = time.monotonic()
    assert one_line_error(run("app")).startswith(expected)
    assert time.monotonic() - started < 10


def test_an_overlay_resource_that_is_a_device_or_fifo_is_refused(repo: Path, helm: Path) -> None:
    write_files(repo / "overlay", {"kustomization.yaml": "resources:\n  - pipe.yaml\n"})
    os.mkfifo(repo / "overlay" / "pipe.yaml")
    assert one_line_error(run("overlay")) == (
        "overlay: `pipe.yaml` is a FIFO, not a regular file; gpulint does not read it"
    )
    write_files(repo / "other", {"kustomization.yaml": "resources:\n  - /dev\n"})
    assert one_line_error(run("other")) == (
        f"other: `resources` entry `/dev` is outside the checked tree {repo}; "
        "gpulint reads only files inside it"
    )


def test_a_chart_holding_git_metadata_is_refused_unless_helm_ignores_it(
    repo: Path, helm: Path
) -> None:
    # helm loads `.git/` into .Files: a checkout keeps its token in .git/config.
    app = chart(repo, {".git/config": f"[http]\n  extraheader = AUTHORIZATION: {SECRET}\n"})
    assert one_line_error(run("app")) == (
        "app: `.git` is in the chart, and helm would load it into the chart; add `.git/` to "
        "chart's .helmignore"
    )
    (app / ".helmignore").write_text(".git/\n")
    assert run("--format", "json", "app").exit_code == 0


def test_a_values_file_of_the_config_outside_the_tree_is_refused(
    repo: Path, helm: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere.yaml").write_text("replicaCount: 1\n")
    chart(repo, {})
    (repo / ".gpulint.yaml").write_text(
        "charts:\n  - path: app\n    values-sets:\n      prod:\n"
        "        values: [../elsewhere.yaml]\n"
    )
    result = CliRunner().invoke(main, ["check", "--no-cache", "app"])
    assert one_line_error(result) == (
        f"app: values file `{repo}/../elsewhere.yaml` of the config is outside the checked "
        f"tree {repo}; gpulint reads only files inside it"
    )


def test_a_values_file_that_is_a_fifo_is_refused(repo: Path, helm: Path) -> None:
    chart(repo, {})
    os.mkfifo(repo / "values.yaml")
    assert one_line_error(run("app", "--values", "values.yaml")) == (
        f"app: values file `{repo}/values.yaml` is a FIFO, not a regular file"
    )


# Output: no environment variable, no file contents in an error.


@pytest.mark.parametrize("version", ["helm3", "helm4"])
def test_a_fail_message_is_not_shown_only_where_it_is(
    repo: Path, tool_env, version: str, request: pytest.FixtureRequest
) -> None:
    tool_env(helm=request.getfixturevalue(f"{version}_dir") / "helm")
    chart(
        repo,
        {
            "secret.txt": SECRET,
            "templates/leak.yaml": '{{ fail (.Files.Get "secret.txt") }}\n',
        },
    )
    # At the `fail` helm names (its column counts from 0, gpulint's from 1).
    at = ("templates/leak.yaml", 1, 4)
    assert not_rendered(run("--format", "json", "app"), at) == (
        "helm template failed: Error: execution error at (app/templates/leak.yaml:1:3): "
        "the template's message is not shown (it may hold file contents)"
    )


def test_a_value_a_template_requires_is_named_from_the_template_s_own_text(
    repo: Path, helm: Path
) -> None:
    # intel/ai-containers' charts stop their render until a token or model name is given:
    # the literal message on the line helm names is the chart's own text, and says what to
    # give; a message computed from a file is never read.
    required = '{{- $t := .Values.secret.token | required ".Values.secret.token is required." -}}\n'
    files = {"values.yaml": 'secret: {token: ""}\n', "templates/secret.yaml": required}
    chart(repo, {"secret.txt": SECRET, **files})
    result = run("--format", "json", "app")
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["fix"] == (
        'The chart stopped its own render (its template says ".Values.secret.token is '
        'required."): give it the values it asks for with `--set` or `--values` (or the '
        "config's `charts:`), then check again."
    )
    given = run("--format", "json", "app", "--set", "secret.token=x")
    assert "GPU030" not in {f["code"] for f in json.loads(given.stdout)["findings"]}
    (repo / "app" / "templates" / "secret.yaml").write_text(
        '{{ fail (.Files.Get "secret.txt") }}\n'
    )
    result = run("--format", "json", "app")
    assert SECRET not in result.output
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["fix"].startswith("The chart stopped its own render (a `required` or `fail`):")


def test_a_function_error_quoting_file_contents_is_cut(repo: Path, helm: Path) -> None:
    leak = '{{ include (.Files.Get "secret.txt") . }}\n'
    chart(repo, {"secret.txt": SECRET, "templates/leak.yaml": leak})
    result = run("--format", "json", "app")
    assert SECRET not in result.output
    message = not_rendered(result, ("templates/leak.yaml", 1, 4))
    assert message.endswith(
        "error calling include: its message is not shown (it may hold file contents)"
    )


def test_the_tools_see_none_of_the_environment(
    repo: Path, tool_env, helm4_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # helm behind a script that records the environment it is given.
    seen = tmp_path / "environment"
    recording = tmp_path / "recording-helm"
    recording.write_text(f'#!/bin/sh\nexport -p > {seen}\nexec {helm4_dir / "helm"} "$@"\n')
    recording.chmod(0o755)
    tool_env(helm=recording)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    chart(repo, {})
    assert run("--format", "json", "app").exit_code == 0
    exported = seen.read_text()
    assert SECRET not in exported
    assert str(tmp_path / ".tools") not in exported  # not the HOME or PATH of the test
    assert "KUBECONFIG=" in exported and "GIT_ALLOW_PROTOCOL=''" in exported


def test_helm_output_that_is_not_utf8_is_one_line(repo: Path, tool_env, tmp_path: Path) -> None:
    # helm itself refuses such a template; a helm that prints it anyway (outside the tree).
    printing = tmp_path / "printing-helm"
    printing.write_text("#!/bin/sh\nprintf 'kind: ConfigMap\\nname: \\377\\n'\n")
    printing.chmod(0o755)
    tool_env(helm=printing)
    chart(repo, {})
    assert one_line_error(run("app")) == (
        "app: helm template failed: the output is not UTF-8 (byte 22); Kubernetes reads only UTF-8"
    )


def test_a_file_name_that_is_not_utf8_renders(repo: Path, helm: Path) -> None:
    app = chart(repo, {})
    files = os.fsencode(app / "files")
    os.mkdir(files)
    os.close(os.open(files + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY))
    assert run("--format", "json", "app").exit_code == 0
    (app / "files" / "link").symlink_to("/etc/hostname")
    assert one_line_error(run("app")) == (
        "app: `files/link` is a symlink out of the chart; gpulint reads only files inside the chart"
    )


# Time: one budget for every render of a run.

LOOP = (
    "{{- range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}"
    "{{ end }}{{ end }}{{ end }}\n"
)


def test_a_looping_template_costs_the_budget_once_for_the_whole_run(repo: Path, helm: Path) -> None:
    for name in ("one", "two", "three"):
        chart(repo, {"templates/loop.yaml": LOOP}, name)
    render = RenderOptions(
        default=ChartSettings(sets=(ValuesSet(),)), run=RenderRun.start(str(repo), budget=3)
    )
    started = time.monotonic()
    with pytest.raises(RenderTimeout) as caught:
        lint(["one", "two", "three"], root=str(repo), render=render)
    assert time.monotonic() - started < 8
    assert str(caught.value) == (
        "one: helm template failed: the renders of this run took more than 3 s in all, which "
        "gpulint allows (a template that loops?)"
    )
    # Spent: the next render of the same run does not start.
    started = time.monotonic()
    with pytest.raises(RenderTimeout):
        render_chart(HelmRender(repo / "two", "two"), None, run=render.run)
    assert time.monotonic() - started < 1


def test_build_overlay_never_reads_a_fifo_for_the_cache_key(
    repo: Path, helm: Path, tmp_path: Path
) -> None:
    write_files(repo / "overlay", {"kustomization.yaml": "resources: []\n"})
    os.mkfifo(repo / "overlay" / "notes.txt")
    with pytest.raises(RenderError, match=r"`notes\.txt` is a FIFO"):
        build_overlay(repo / "overlay", tmp_path / "cache")


def test_a_kustomization_gpulint_cannot_read_whole_is_not_built(
    repo: Path, helm: Path, listener: Listener
) -> None:
    # An entry gpulint cannot read (a tab where kustomize's reader stops too) is not skipped
    # while the rest is built: the overlay is refused rather than built unchecked.
    url = f"https://127.0.0.1:{listener.port}/env"
    kustomization = f"resources:\n\t- {url}\n"
    write_files(repo / "overlay", {"kustomization.yaml": kustomization})
    assert one_line_error(run("overlay")) == (
        "overlay: kustomization.yaml:2:1: found character that cannot start any token (while "
        "scanning for the next token); YAML does not allow tabs for indentation, use spaces; "
        "gpulint builds only kustomizations it can read whole"
    )
    assert listener.connections == 0


def test_an_unquoted_url_in_a_flow_list_is_read_as_kustomize_reads_it(
    repo: Path, helm: Path, listener: Listener
) -> None:
    # YAML 1.2 (kustomize's reader, go-yaml) allows a `:` not followed by a space in a flow
    # collection: the URL is an entry, refused as remote, never fetched.
    url = f"https://127.0.0.1:{listener.port}/env"
    kustomization = f"secretGenerator:\n  - name: s\n    envs: [{url}]\n"
    write_files(repo / "overlay", {"kustomization.yaml": kustomization})
    assert one_line_error(run("overlay")) == (
        f"overlay: `secretGenerator` entry `{url}` is remote; gpulint never fetches kustomize "
        "resources (vendor them into the repository)"
    )
    assert listener.connections == 0


def test_a_source_comment_naming_a_file_out_of_the_chart_is_not_followed(repo: Path) -> None:
    # The chart prints its own `# Source:` line; the file it names has the rendered line, so
    # following it would report (and show) a line of a file outside the chart.
    (repo / "secret.yaml").write_text("  name: leak\n")
    app = chart(repo, {})
    rendered = "# Source: app/../secret.yaml\nkind: ConfigMap\nmetadata:\n  name: leak\n"
    finding = Finding(
        "GPU001", "x", Severity.ERROR, "app", 4, 9, "m", None, None, "app/../secret.yaml"
    )
    origin = HelmOrigin(HelmRender(app, "app"), "app", str(app), trace_values=False)
    (located,) = origin.locate([finding], rendered)
    assert (located.path, located.line, located.column) == ("app", 1, 1)
    inside = Finding("GPU001", "x", Severity.ERROR, "app", 4, 9, "m", None, None, "app/x.yaml")
    (app / "x.yaml").write_text("  name: leak\n")
    (located,) = origin.locate([inside], rendered)
    assert (located.path, located.line, located.column) == (f"{app}/x.yaml", 1, 9)


def test_a_trace_render_that_loops_stops_the_run_instead_of_being_taken_for_a_refusal(
    repo: Path, helm: Path
) -> None:
    # The template loops only for the text tracing writes into values.yaml (`z7zz` for
    # `p4dn`): each finding's re-renders would wait a full timeout, one after another.
    template = (
        '{{- if eq .Values.pool "z7zz" }}' + LOOP + "{{- end }}\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n"
        "  pool: {{ .Values.pool }}\n"
    )
    app = chart(repo, {"values.yaml": "pool: p4dn\n", "templates/pool.yaml": template})
    run = RenderRun.start(str(repo), budget=3)
    request = HelmRender(app, "app")
    rendered = render_chart(request, None, run=run)
    line = rendered.splitlines().index("  pool: p4dn") + 1
    finding = Finding("GPU101", "x", Severity.ERROR, "app", line, 9, "m", None, None, None)
    started = time.monotonic()
    with pytest.raises(RenderTimeout):
        HelmOrigin(request, "app", str(app), run=run).locate([finding], rendered)
    assert time.monotonic() - started < 8


def test_a_helm_of_the_home_directory_runs_for_a_chart_outside_any_repository(
    tmp_path: Path, tool_env, helm4_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool_env()
    home = tmp_path / "home"
    wrapper = home / ".local" / "bin" / "helm"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text(f'#!/bin/sh\nexec {helm4_dir / "helm"} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(wrapper.parent))
    monkeypatch.chdir(home)
    chart(home / "scratch", {})
    assert run("--format", "json", "scratch/app").exit_code == 0
    # The same helm inside the chart's own directory is refused.
    (home / "scratch" / "app" / "bin").mkdir()
    inside = home / "scratch" / "app" / "bin" / "helm"
    inside.write_text(wrapper.read_text())
    inside.chmod(0o755)
    monkeypatch.setenv("PATH", str(inside.parent))
    assert one_line_error(run("scratch/app")).startswith(
        f"`helm` is found only inside the checked tree ({inside})"
    )
