"""`gpulint check` on Helm charts and kustomize overlays, with the real helm and kubectl.

Each finding in a rendered object is reported where its text is written: the values file
(line and column of the scalar), the template (its literal text), the kustomize patch or base;
and carries the position in the rendered stream.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main
from tests.binaries import venv_kubectl
from tests.manifests import GPU_QUOTA
from tests.repos import write_files
from tests.sarif_schema import validated_sarif

# helm4_dir, helm3_dir and tool_env: the official binaries, on a PATH of their own.
pytest_plugins = ["tests.binaries"]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PROFILE = "profiles/placement-eks.yaml"


def run(*args: str, input: bytes | None = None) -> Result:
    """`gpulint ARGS` in-process."""
    return CliRunner().invoke(main, list(args), input=input)


def located(result: Result) -> list[tuple[str, str, int, int, tuple[int, int] | None]]:
    """(code, path, line, column, rendered line and column) of each finding of a JSON report."""
    report = json.loads(result.stdout)
    return [
        (
            f["code"],
            f["path"],
            f["line"],
            f["column"],
            (f["rendered"]["line"], f["rendered"]["column"]) if f["rendered"] else None,
        )
        for f in report["findings"]
    ]


@pytest.fixture()
def fixtures(monkeypatch: pytest.MonkeyPatch, tool_env, helm4_dir: Path) -> Path:
    """The fixtures directory as the working directory, helm v4 and kubectl on PATH."""
    kubectl = venv_kubectl() or helm4_dir / "kubectl"
    tool_env(helm=helm4_dir / "helm", kubectl=kubectl)
    monkeypatch.chdir(FIXTURES)
    return FIXTURES


def check(*args: str) -> Result:
    return run("check", "--isolated", "--format", "json", "--profile", PROFILE, *args)


def test_misspelled_gpu_resource_in_a_values_file_is_reported_at_its_line_and_column(
    fixtures: Path,
) -> None:
    result = check("charts/nim-llm", "--values", "charts/nim-llm/values-gpu.yaml")
    assert result.exit_code == 1, result.output
    assert located(result) == [
        ("GPU601", "charts/nim-llm/templates/deployment.yaml", 24, 11, (28, 11)),
        ("GPU001", "charts/nim-llm/values-gpu.yaml", 5, 5, (31, 15)),
        # The second mistake of the same values file, independent of the first: reported with
        # it, not after it is fixed.
        ("GPU103", "charts/nim-llm/values-gpu.yaml", 7, 3, (33, 9)),
    ]


def test_node_group_the_cluster_lacks_is_reported_at_the_values_line(fixtures: Path) -> None:
    args = ("charts/nim-llm", "-f", "charts/nim-llm/values-nodegroup.yaml", "--select", "GPU1")
    result = check(*args)
    assert result.exit_code == 1, result.output
    assert located(result) == [("GPU103", "charts/nim-llm/values-nodegroup.yaml", 2, 3, (32, 9))]


def test_a_resource_name_a_helper_takes_from_values_is_traced_to_the_values_file(
    fixtures: Path,
) -> None:
    # vllm-stack writes `{{ $gpuType }}:` in _helpers.tpl, twice (requests and limits).
    result = check("charts/vllm-stack", "-f", "charts/vllm-stack/values-typo.yaml")
    assert result.exit_code == 1, result.output
    assert located(result) == [
        ("GPU001", "charts/vllm-stack/values-typo.yaml", 12, 23, (34, 15)),
        ("GPU001", "charts/vllm-stack/values-typo.yaml", 12, 23, (36, 15)),
    ]


def test_a_key_toyaml_rewrote_is_traced_by_its_value_with_the_rendered_position(
    fixtures: Path,
) -> None:
    # The finding sits on the `key` of a matchExpressions item that toYaml re-wrote (keys
    # sorted, quotes dropped): renamed, the key sorts elsewhere and the render tells nothing,
    # but its value is traced to line 14, whose entry spells the same key.
    result = check("charts/vllm-stack", "-f", "charts/vllm-stack/values-h100.yaml")
    assert result.exit_code == 1, result.output
    assert located(result) == [("GPU101", "charts/vllm-stack/values-h100.yaml", 14, 15, (46, 19))]
    text = run(
        "check",
        "--isolated",
        "--profile",
        PROFILE,
        "charts/vllm-stack",
        "-f",
        "charts/vllm-stack/values-h100.yaml",
    )
    assert "\n  = rendered: charts/vllm-stack:46:19\n" in text.stdout


def test_charts_with_their_default_values_pass(fixtures: Path) -> None:
    result = check("charts")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # One rendered stream per chart, each with its Deployment; only QoS warnings.
    assert report["summary"]["files"] == 3
    assert report["summary"]["objects"] == 3
    assert {f["code"] for f in report["findings"]} == {"GPU601"}


def test_literal_template_text_is_reported_at_the_template_line(fixtures: Path) -> None:
    # triton writes `resources:` and `nvidia.com/gpu:` in its template.
    result = check("charts/triton", "--set", "image.numGpus=0.5")
    assert result.exit_code == 1, result.output
    codes = located(result)
    assert ("GPU601", "charts/triton/templates/deployment.yaml", 27, 11, (29, 11)) in codes
    # The fraction comes from --set, which no file holds: the template and the render.
    assert ("GPU003", "charts/triton/templates/deployment.yaml", 1, 1, (31, 31)) in codes


def test_overlay_patch_pinning_a_missing_node_group_is_reported_at_the_patch_line(
    fixtures: Path,
) -> None:
    result = check("kustomize")
    assert result.exit_code == 1, result.output
    # The base is used by both overlays: checked through them, never on its own.
    assert json.loads(result.stdout)["summary"] == {
        "files": 2,
        "objects": 2,
        "findings": 1,
        "unchecked": 0,
    }
    assert located(result) == [
        ("GPU103", "kustomize/overlays/a100/node-group.yaml", 10, 9, (29, 9))
    ]


def test_a_file_of_an_overlay_given_by_name_checks_the_overlay(fixtures: Path) -> None:
    result = check("kustomize/overlays/a100/node-group.yaml", "kustomize/base/deployment.yaml")
    assert result.exit_code == 1, result.output
    assert located(result) == [
        ("GPU103", "kustomize/overlays/a100/node-group.yaml", 10, 9, (29, 9))
    ]
    assert json.loads(result.stdout)["summary"]["files"] == 1


# vllm-project/semantic-router at 3d48f8c9 (Apache-2.0): deploy/kserve's kustomization builds
# the router, and the InferenceServices under inference-examples/, which it does not name, are
# applied one by one (`oc apply -f`); so are the vLLM Deployments beside
# deploy/kubernetes/istio's kustomization (vLlama3.yaml, vPhi4.yaml).
EXAMPLE_POD = """apiVersion: v1
kind: Pod
metadata: {name: example}
spec:
  containers:
  - name: main
    image: vllm/vllm-openai:v0.9.1
    resources:
      limits: {nvidia.com/gpus: 1}
"""


def test_a_manifest_beside_an_overlay_that_its_build_never_reads_is_checked_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    example = tmp_path / "kustomize" / "overlays" / "a100" / "examples" / "pod.yaml"
    example.parent.mkdir()
    example.write_text(EXAMPLE_POD)
    # One beside the kustomization, which does not name it either.
    (example.parent.parent / "example-pod.yaml").write_text(EXAMPLE_POD)
    shutil.copy(FIXTURES / PROFILE, tmp_path / "profile.yaml")
    monkeypatch.chdir(tmp_path)
    args = ("check", "--isolated", "--format", "json", "--profile", "profile.yaml")
    given = (
        "kustomize/overlays/a100/examples/pod.yaml",
        "kustomize/overlays/a100/example-pod.yaml",
    )
    by_name = run(*args, *given, "--select", "GPU001")
    assert by_name.exit_code == 1, by_name.output
    assert located(by_name) == [
        ("GPU001", "kustomize/overlays/a100/example-pod.yaml", 9, 16, None),
        ("GPU001", "kustomize/overlays/a100/examples/pod.yaml", 9, 16, None),
    ]
    # Walked, the overlay is built and the example is checked as the file it is.
    walked = run(*args, "kustomize/overlays/a100", "--select", "GPU001,GPU103")
    assert located(walked) == [
        ("GPU001", "kustomize/overlays/a100/example-pod.yaml", 9, 16, None),
        ("GPU001", "kustomize/overlays/a100/examples/pod.yaml", 9, 16, None),
        ("GPU103", "kustomize/overlays/a100/node-group.yaml", 10, 9, (29, 9)),
    ]
    # A patch the overlay names in a subdirectory is still its own.
    (tmp_path / "kustomize" / "overlays" / "a100" / "patches").mkdir()
    overlay = tmp_path / "kustomize" / "overlays" / "a100"
    (overlay / "node-group.yaml").rename(overlay / "patches" / "node-group.yaml")
    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace("path: node-group.yaml", "path: patches/node-group.yaml")
    )
    patch = run(*args, "kustomize/overlays/a100/patches/node-group.yaml", "--select", "GPU103")
    assert located(patch) == [
        ("GPU103", "kustomize/overlays/a100/patches/node-group.yaml", 10, 9, (29, 9))
    ]


def test_a_value_from_a_base_is_reported_in_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    shutil.copytree(FIXTURES / "kustomize", tmp_path / "kustomize")
    base = tmp_path / "kustomize" / "base" / "deployment.yaml"
    base.write_text(base.read_text().replace("nvidia.com/gpu: 1", "nvidia.com/gpus: 1"))
    shutil.copy(FIXTURES / PROFILE, tmp_path / "profile.yaml")
    monkeypatch.chdir(tmp_path)
    result = run(
        "check",
        "--isolated",
        "--format",
        "json",
        "--profile",
        "profile.yaml",
        "kustomize/overlays/g5",
        "--select",
        "GPU001",
    )
    assert result.exit_code == 1, result.output
    assert located(result) == [("GPU001", "kustomize/base/deployment.yaml", 27, 15, (24, 13))]


def _runtime(name: str) -> str:
    """A one-GPU Deployment named `name`, its GPU misspelled (GPU001) at line 13, column 15."""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      containers:
        - name: engine
          image: docker.io/lmsysorg/sglang:v0.5.5
          resources:
            limits:
              nvidia.com/gpus: 1
"""


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        # sgl-project/ome config/runtimes (17b77ed): `srt-llama-3-1-8b-instruct` beside
        # `srt-llama-3-1-8b-instruct-grpc` in one kustomization without affixes; each name is
        # built as written, so each finding is certainly in its own file.
        ("", [("srt/llama-grpc-rt.yaml", 13, 15), ("srt/llama-rt.yaml", 13, 15)]),
        # With a namePrefix both written names lie inside `ome-srt-llama-grpc`: which file
        # wrote it is not certain, and the finding stays on the kustomization.
        ("namePrefix: ome-\n", [("kustomization.yaml", 1, 1), ("srt/llama-rt.yaml", 13, 15)]),
    ],
)
def test_an_overlay_resource_is_not_taken_for_one_whose_name_contains_its_name(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fixtures: Path,
    prefix: str,
    expected: list[tuple[str, int, int]],
) -> None:
    resources = "resources:\n  - srt/llama-rt.yaml\n  - srt/llama-grpc-rt.yaml\n"
    write_files(
        tmp_path / "runtimes",
        {
            "kustomization.yaml": prefix + resources,
            "srt/llama-rt.yaml": _runtime("srt-llama"),
            "srt/llama-grpc-rt.yaml": _runtime("srt-llama-grpc"),
        },
    )
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "--format", "json", "--select", "GPU001", "runtimes")
    assert result.exit_code == 1, result.output
    assert [(path, line, column) for _, path, line, column, _ in located(result)] == [
        (f"runtimes/{path}", line, column) for path, line, column in expected
    ]


def test_file_of_a_chart_given_by_name_checks_the_chart(fixtures: Path) -> None:
    result = check("charts/nim-llm/values.yaml", "charts/nim-llm/templates/deployment.yaml")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["summary"] == {"files": 1, "objects": 1, "findings": 1, "unchecked": 0}


def test_sarif_carries_the_rendered_position_as_a_related_location(fixtures: Path) -> None:
    result = run(
        "check",
        "--isolated",
        "--format",
        "sarif",
        "--profile",
        PROFILE,
        "charts/nim-llm",
        "-f",
        "charts/nim-llm/values-gpu.yaml",
        "--select",
        "GPU001",
    )
    log = validated_sarif(result.stdout)
    (finding,) = log["runs"][0]["results"]
    region = finding["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "fixtures/charts/nim-llm/values-gpu.yaml"
    assert region["region"] == {"startLine": 5, "startColumn": 5}
    related = finding["relatedLocations"][1]
    assert related["message"]["text"] == "rendered position: line 31, column 15 of charts/nim-llm"


def test_helm_v3_renders_the_same_findings(
    monkeypatch: pytest.MonkeyPatch,
    tool_env,
    helm3_dir: Path,
) -> None:
    tool_env(helm=helm3_dir / "helm")
    monkeypatch.chdir(FIXTURES)
    result = check("charts/nim-llm", "-f", "charts/nim-llm/values-gpu.yaml", "--select", "GPU001")
    assert result.exit_code == 1, result.output
    assert located(result) == [("GPU001", "charts/nim-llm/values-gpu.yaml", 5, 5, (31, 15))]


def test_missing_helm_is_a_warning_at_the_chart_and_the_rest_is_checked(
    monkeypatch: pytest.MonkeyPatch,
    tool_env,
) -> None:
    tool_env()  # nothing on PATH
    monkeypatch.chdir(FIXTURES)
    result = run(
        "check",
        "--isolated",
        "--format",
        "concise",
        "charts/nim-llm",
        "cases/resources/GPU001-unknown-names.yaml",
    )
    # The chart is one warning CI shows; the plain manifest beside it is still checked.
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("cases/resources/GPU001-unknown-names.yaml:")
    assert (
        "charts/nim-llm/Chart.yaml:1:1: GPU030 [warning] not rendered, so not checked: `helm` "
        "is not on PATH: install Helm 3 or 4 (https://helm.sh/docs/intro/install/)"
    ) in lines


def test_missing_kubectl_and_kustomize_is_a_warning_at_the_kustomization(
    monkeypatch: pytest.MonkeyPatch,
    tool_env,
) -> None:
    tool_env()
    monkeypatch.chdir(FIXTURES)
    result = run("check", "--isolated", "--format", "json", "kustomize/overlays/g5")
    assert result.exit_code == 0, result.output
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["code"], finding["path"], finding["line"], finding["severity"]) == (
        "GPU030",
        "kustomize/overlays/g5/kustomization.yaml",
        1,
        "warning",
    )
    assert finding["message"].startswith(
        "not rendered, so not checked: `kustomize` is not on PATH: install kubectl"
    )


def test_empty_stdin_exits_2_with_one_line(tool_env) -> None:
    tool_env()
    result = run("check", "--isolated", "-", input=b"")
    assert result.exit_code == 2
    assert result.stderr == (
        "gpulint: error: no Kubernetes objects in <stdin> (pass --allow-empty to accept that)\n"
    )
    assert run("check", "--isolated", "--allow-empty", "-", input=b"").exit_code == 0


def test_a_failing_helm_is_a_warning_quoting_its_own_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    chart = tmp_path / "broken"
    shutil.copytree(FIXTURES / "charts" / "nim-llm", chart)
    (chart / "templates" / "deployment.yaml").write_text("{{ .Values.nope.deeper }}\n")
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "--format", "json", "broken")
    assert result.exit_code == 0, result.output
    [finding] = json.loads(result.stdout)["findings"]
    # At the template and the action helm names (`:1:10`, a column counted from 0: `.nope`).
    assert (finding["code"], finding["path"], finding["line"], finding["column"]) == (
        "GPU030",
        "broken/templates/deployment.yaml",
        1,
        11,
    )
    assert finding["message"].startswith(
        "not rendered, so not checked: helm template failed: Error: "
    )
    assert "nil pointer evaluating interface {}.deeper" in finding["message"]


def test_a_chart_rendering_nothing_exits_2_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    chart = tmp_path / "empty"
    shutil.copytree(FIXTURES / "charts" / "nim-llm", chart)
    shutil.rmtree(chart / "templates")
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "empty")
    assert result.exit_code == 2
    assert result.stderr == (
        "gpulint: error: no Kubernetes objects in empty (pass --allow-empty to accept that)\n"
    )
    assert run("check", "--isolated", "--allow-empty", "empty").exit_code == 0


def test_config_values_sets_are_each_rendered_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    shutil.copytree(FIXTURES / "charts" / "nim-llm", tmp_path / "nim-llm")
    shutil.copy(FIXTURES / PROFILE, tmp_path / ".profile.yaml")  # hidden: not walked
    (tmp_path / ".gpulint.yaml").write_text(
        "charts:\n"
        "  - path: nim-llm\n"
        "    release: nim\n"
        "    namespace: ml\n"
        "    values-sets:\n"
        "      default: {}\n"
        "      typo: {values: [nim-llm/values-gpu.yaml]}\n"
        "      pinned: {set: ['nodeSelector.eks\\.amazonaws\\.com/nodegroup=p4dn']}\n"
    )
    monkeypatch.chdir(tmp_path)
    result = run(
        "check", "--format", "json", "--profile", ".profile.yaml", "--select", "GPU001,GPU1"
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    found = [(f["code"], f["path"], f["line"], f["rendered"]["of"]) for f in report["findings"]]
    assert found == [
        # From --set: no file holds it; the template at line 1, and the set named.
        ("GPU103", "nim-llm/templates/deployment.yaml", 1, "nim-llm[pinned]"),
        ("GPU001", "nim-llm/values-gpu.yaml", 5, "nim-llm[typo]"),
        ("GPU103", "nim-llm/values-gpu.yaml", 7, "nim-llm[typo]"),
    ]
    assert report["summary"]["files"] == 3


def rendered_stdin(*args: str) -> bytes:
    """`helm template` output of the nim-llm chart with `args`, as a user pipes it."""
    import subprocess

    done = subprocess.run(
        ["helm", "template", "nim-llm", "charts/nim-llm", *args],
        capture_output=True,
        check=True,
    )
    return done.stdout


def test_stdin_filename_naming_the_chart_never_takes_stream_lines_for_its_own(
    fixtures: Path,
) -> None:
    data = rendered_stdin("-f", "charts/nim-llm/values-gpu.yaml")
    args = ("-", "--stdin-filename", "charts/nim-llm")
    result = run("check", "--isolated", "--format", "json", "--profile", PROFILE, *args, input=data)
    assert result.exit_code == 1, result.output
    assert located(result) == [
        # Which values file wrote it is unknown here: the template, and the stdin position.
        ("GPU001", "charts/nim-llm/templates/deployment.yaml", 1, 1, (31, 15)),
        ("GPU103", "charts/nim-llm/templates/deployment.yaml", 1, 1, (33, 9)),
        # `resources:` is written in the template.
        ("GPU601", "charts/nim-llm/templates/deployment.yaml", 24, 11, (28, 11)),
    ]
    assert all(f["rendered"]["of"] == "<stdin>" for f in json.loads(result.stdout)["findings"])


def test_stdin_filename_of_a_file_holding_other_text_is_named_at_line_1(fixtures: Path) -> None:
    data = rendered_stdin("-f", "charts/nim-llm/values-gpu.yaml")
    args = ("-", "--stdin-filename", "deploy/nim.yaml", "--select", "GPU001")
    result = run("check", "--isolated", "--format", "json", "--profile", PROFILE, *args, input=data)
    assert located(result) == [("GPU001", "deploy/nim.yaml", 1, 1, (31, 15))]


def test_stdin_filename_of_a_file_holding_those_bytes_keeps_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    data = rendered_stdin("-f", "charts/nim-llm/values-gpu.yaml")
    (tmp_path / "rendered.yaml").write_bytes(data)
    shutil.copy(FIXTURES / PROFILE, tmp_path / "profile.yaml")
    monkeypatch.chdir(tmp_path)
    args = ("-", "--stdin-filename", "rendered.yaml", "--select", "GPU001")
    result = run(
        "check", "--isolated", "--format", "json", "--profile", "profile.yaml", *args, input=data
    )
    assert located(result) == [("GPU001", "rendered.yaml", 31, 15, None)]


CONTEXT_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: tuner, namespace: ml}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: tuner}}
  template:
    metadata: {labels: {app: tuner}}
    spec:
      containers:
      - name: main
        image: tuner:1.0
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {nvidia.com/gpu: 3}
"""
CONTEXT_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
  - name: main
    image: trainer:1.0
    resources:
      requests: {cpu: "1", memory: 1Gi}
      limits: {nvidia.com/gpu: {{ .Values.gpus }}}
"""


def test_a_chart_in_the_context_is_reported_at_its_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    # The chart's pod and the Deployment overflow the quota together: given the quota, the
    # chart's finding is reported where the chart's own are.
    files = {
        ".gpulint.yaml": "context: [.]\n",
        "k8s/quota.yaml": GPU_QUOTA,
        "k8s/tuner.yaml": CONTEXT_DEPLOYMENT,
        "charts/trainer/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
        "charts/trainer/values.yaml": "gpus: 2\n",
        "charts/trainer/templates/pod.yaml": CONTEXT_POD,
    }
    write_files(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    result = run("check", "--format", "json", "--select", "GPU301", "k8s/quota.yaml")
    assert result.exit_code == 1, result.output
    assert located(result) == [
        ("GPU301", "charts/trainer/templates/pod.yaml", 12, 16, (14, 16)),
        ("GPU301", "k8s/tuner.yaml", 5, 3, None),
    ]
    # Given the Deployment, its own finding (which sums the chart's pod) is the commit's.
    result = run("check", "--format", "json", "--select", "GPU301", "k8s/tuner.yaml")
    assert located(result) == [("GPU301", "k8s/tuner.yaml", 5, 3, None)]


def test_a_chart_in_the_context_without_helm_is_a_note_and_the_given_files_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool_env
) -> None:
    tool_env()  # nothing on PATH: no helm
    files = {
        ".gpulint.yaml": "select: [GPU]\ncontext: [k8s, charts]\n",
        "k8s/tuner.yaml": CONTEXT_DEPLOYMENT,
        "charts/trainer/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
        "charts/trainer/templates/pod.yaml": CONTEXT_POD,
    }
    write_files(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    result = run("check", "k8s/tuner.yaml")
    assert result.exit_code == 0, result.output
    assert (
        "context: charts/trainer/Chart.yaml: `helm` is not on PATH: install Helm 3 or 4 "
        "(https://helm.sh/docs/intro/install/); its objects are not counted"
    ) in result.output


def test_charts_rendered_in_parallel_give_what_rendering_them_in_turn_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    for name in ("nim-llm", "triton", "vllm-stack"):
        shutil.copytree(FIXTURES / "charts" / name, tmp_path / name)
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURES / "charts" / "nim-llm", broken)
    (broken / "templates" / "deployment.yaml").write_text("{{ .Values.nope.deeper }}\n")
    shutil.copy(FIXTURES / PROFILE, tmp_path / "profile.yaml")
    monkeypatch.chdir(tmp_path)
    args = ["check", "--isolated", "--no-cache", "--allow-empty", "--format", "json"]
    args += ["--profile", "profile.yaml"]
    charts = ["broken", "nim-llm", "triton", "vllm-stack"]
    in_turn = run(*args, "--jobs", "1", *charts)
    at_once = run(*args, "--jobs", "4", *charts)
    assert at_once.exit_code == in_turn.exit_code == 0, at_once.output  # warnings only
    assert at_once.stdout == in_turn.stdout
    assert {f["path"].split("/")[0] for f in json.loads(at_once.stdout)["findings"]} >= {
        "broken",
        "nim-llm",
    }


def test_of_charts_rendered_in_parallel_the_first_refused_in_order_is_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    for name in ("a-empty", "b-empty", "c-fine"):
        shutil.copytree(FIXTURES / "charts" / "nim-llm", tmp_path / name)
    for name in ("a-empty", "b-empty"):
        shutil.rmtree(tmp_path / name / "templates")
    monkeypatch.chdir(tmp_path)
    # In the order given, as in the report: b-empty comes first, whichever helm ends first.
    for jobs in ("1", "3"):
        result = run(
            "check", "--isolated", "--no-cache", "--jobs", jobs, "c-fine", "b-empty", "a-empty"
        )
        assert result.exit_code == 2
        assert result.stderr == (
            "gpulint: error: no Kubernetes objects in b-empty (pass --allow-empty to accept that)\n"
        )


LIBRARY_CHARTS = {
    "charts/common/Chart.yaml": "apiVersion: v2\nname: common\nversion: 0.1.0\ntype: library\n",
    "charts/common/templates/_server.tpl": (
        '{{- define "common.server" -}}\n'
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata: {name: {{ .Release.Name }}}\n"
        "spec:\n"
        "  selector: {matchLabels: {app: server}}\n"
        "  template:\n"
        "    metadata: {labels: {app: server}}\n"
        "    spec:\n"
        "      containers:\n"
        "      - name: server\n"
        "        image: vllm/vllm-openai:v0.8.5\n"
        "        resources:\n"
        "          limits: {nvidia.com/gpu: 1}\n"
        "{{- end -}}\n"
    ),
    "charts/app/Chart.yaml": (
        "apiVersion: v2\nname: app\nversion: 0.1.0\n"
        "dependencies:\n- name: common\n  version: 0.1.0\n  repository: file://../common\n"
    ),
    "charts/app/templates/server.yaml": '{{ include "common.server" . }}\n',
}


def test_a_library_chart_is_checked_through_the_chart_that_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    # helm refuses to render a library chart on its own ("library charts are not
    # installable"): walking into one is no GPU030, and its templates are checked where the
    # chart depending on it renders them (reported at the `include`).
    write_files(tmp_path, LIBRARY_CHARTS)
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "--format", "json", "charts")
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [
        ("GPU601", "charts/app/templates/server.yaml", 1)
    ]


def test_a_library_chart_given_alone_exits_2_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    write_files(tmp_path, LIBRARY_CHARTS)
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "charts/common")
    assert result.exit_code == 2
    assert result.stderr == (
        "gpulint: error: charts/common is a library chart, which helm renders only as a "
        "dependency of another chart: check a chart that depends on it (pass --allow-empty to "
        "accept that)\n"
    )
    assert run("check", "--isolated", "--allow-empty", "charts/common").exit_code == 0


def test_a_chart_whose_dependency_only_a_repository_has_is_a_warning_and_the_rest_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    # Nothing is fetched: the chart is not rendered, which is one finding, as a failing helm
    # would be, and the pod beside it is still checked.
    write_files(
        tmp_path,
        {
            "chart/Chart.yaml": (
                "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lws\n"
                "  version: 0.6.2\n  repository: oci://registry.k8s.io/lws/charts\n"
                "  condition: lws.enabled\n"
            ),
            "chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            "pod.yaml": (
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                "  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n"
            ),
        },
    )
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "--format", "json", ".")
    assert result.exit_code == 0, result.output  # warnings only
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [
        ("GPU030", "chart/Chart.yaml", 5),  # the dependency's entry
        ("GPU601", "pod.yaml", 6),
    ]
    assert findings[0]["message"] == (
        "not rendered, so not checked: dependency `lws` (oci://registry.k8s.io/lws/charts) is "
        "not in its `charts/`; run `helm dependency build` on the chart where the network is "
        "reachable, then check again"
    )


# A chart that supports the releases up to 1.32 only, as many published charts say: helm
# refuses it for its own default release (newer), and renders it for the cluster's.
KUBE_VERSION_CHART = {
    "chart/Chart.yaml": (
        'apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: ">= 1.21.0-0 < 1.33.0-0"\n'
    ),
    "chart/values.yaml": "gpus: 1\n",
    "chart/templates/pod.yaml": (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        "    rendered-for: {{ .Capabilities.KubeVersion.Version | quote }}\nspec:\n"
        "  containers:\n  - name: c\n    image: x\n"
        "    resources: {limits: {nvidia.com/gpu: {{ .Values.gpus }}}}\n"
    ),
}


def test_a_chart_is_rendered_for_the_release_of_the_cluster_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    write_files(tmp_path, KUBE_VERSION_CHART)
    shutil.copy(FIXTURES / PROFILE, tmp_path / ".profile.yaml")  # kubernetesVersion "1.31"
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "--format", "json", "--profile", ".profile.yaml", "chart")
    assert result.exit_code == 0, result.output  # a warning only
    findings = json.loads(result.stdout)["findings"]
    # Rendered, so checked: a pod that asks only for a GPU is BestEffort.
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [
        ("GPU601", "chart/templates/pod.yaml", 11),
    ]


def test_the_configs_kubernetes_version_is_the_release_a_chart_is_rendered_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    write_files(tmp_path, {**KUBE_VERSION_CHART, ".gpulint.yaml": 'kubernetesVersion: "1.32"\n'})
    monkeypatch.chdir(tmp_path)
    result = run("check", "--format", "json", "chart")
    assert result.exit_code == 0, result.output
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["path"], f["line"]) for f in findings] == [
        ("GPU601", "chart/templates/pod.yaml", 11),
    ]


def test_a_chart_refused_for_helms_default_release_names_the_release_to_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixtures: Path
) -> None:
    # Without a stated release helm renders for its own, which the chart excludes: the chart
    # is not broken, the run lacks the cluster's release. The warning is at `kubeVersion:`.
    write_files(tmp_path, KUBE_VERSION_CHART)
    monkeypatch.chdir(tmp_path)
    result = run("check", "--isolated", "--format", "json", "chart")
    assert result.exit_code == 0, result.output
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["code"], finding["path"], finding["line"], finding["column"]) == (
        "GPU030",
        "chart/Chart.yaml",
        4,
        1,
    )
    assert "chart requires kubeVersion: >= 1.21.0-0 < 1.33.0-0" in finding["message"]
    assert finding["fix"] == (
        "State the cluster's release, `kubernetesVersion:` in the config or a cluster profile "
        "that gives it (`--profile`): the chart is then rendered for that release."
    )
    # A stated release the chart excludes: the fix says so.
    (tmp_path / ".gpulint.yaml").write_text('kubernetesVersion: "1.34"\n')
    result = run("check", "--format", "json", "chart")
    (finding,) = json.loads(result.stdout)["findings"]
    assert "incompatible with Kubernetes v1.34.0" in finding["message"]
    assert finding["fix"].startswith("The chart does not support Kubernetes 1.34, the release")


def test_a_key_a_template_writes_twice_names_the_lines_of_the_render(
    fixtures: Path, tmp_path: Path
) -> None:
    # A file's load findings are placed at the chart; the lines the message quotes are the
    # render's, and it says so.
    write_files(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: env\nversion: 0.1.0\n",
            "chart/templates/configmap.yaml": (
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: env\ndata:\n"
                "  HF_HOME: /data\n  HF_HOME: /cache\n"
            ),
        },
    )
    result = run("check", "--isolated", "--format", "json", str(tmp_path / "chart"))
    (finding,) = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "GPU000"]
    assert (finding["path"], finding["line"], finding["column"]) == (str(tmp_path / "chart"), 1, 1)
    assert (finding["rendered"]["line"], finding["rendered"]["column"]) == (9, 3)
    assert finding["message"].startswith(
        "key `HF_HOME` is written twice in one mapping (lines 8 and 9 of the rendered output): "
    ), finding["message"]


def test_a_key_before_a_trimming_nindent_is_placed_at_its_branch_of_the_template(
    fixtures: Path, tmp_path: Path
) -> None:
    # bitnami's charts write `resources: {{- toYaml .Values.resources | nindent 12 }}` in one
    # branch and the preset's `resources:` in the other: the `{{-` trims the space the template
    # line has after the key (was line 1: no template line matched `resources:`), and the
    # marked render, its mark before that action, tells the branches apart.
    branch = (
        "          {{- if .Values.resources }}\n"
        "          resources: {{- toYaml .Values.resources | nindent 12 }}\n"
        "          {{- else }}\n"
        '          resources: {{- include "preset" . | nindent 12 }}\n'
        "          {{- end }}\n"
    )
    write_files(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: torch\nversion: 5.0.0\n",
            "chart/values.yaml": "resources: {}\n",
            "chart/templates/_helpers.tpl": (
                '{{- define "preset" -}}\nrequests: {cpu: 500m, memory: 512Mi}\n{{- end -}}\n'
            ),
            "chart/templates/deployment.yaml": (
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: torch\nspec:\n"
                "  selector:\n    matchLabels: {app: torch}\n  template:\n"
                "    metadata:\n      labels: {app: torch}\n    spec:\n      containers:\n"
                "        - name: master\n          image: bitnami/pytorch:2.8.0\n" + branch
            ),
            "gpu.yaml": "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
        },
    )
    result = run(
        "check", "--isolated", "--format", "json", "--select", "GPU601",
        str(tmp_path / "chart"), "--values", str(tmp_path / "gpu.yaml"),
    )  # fmt: skip
    assert located(result) == [
        ("GPU601", str(tmp_path / "chart/templates/deployment.yaml"), 16, 11, (17, 11))
    ]
