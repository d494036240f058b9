"""Where GPU030 points when helm or kubectl refuses a chart or overlay: at the template or
resource file the tool names, and the line and column it gives, when that file is one of the
chart or overlay and the position is the file's own; else at the chart's Chart.yaml or the
overlay's kustomization, as before. The messages are those of the official helm 3 and 4 and
kubectl builds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.render.helm import HelmRender, _template_named, render_chart
from gpulint.render.options import ServedApis
from gpulint.render.tools import ToolFailed
from gpulint.validation import kube
from tests.repos import write_files

pytest_plugins = ["tests.binaries"]

CHART_FILE = "apiVersion: v2\nname: mychart\nversion: 0.1.0\n"
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
PREFIX = "not rendered, so not checked: "


@pytest.fixture(params=["helm3", "helm4"])
def version(request: pytest.FixtureRequest, tool_env) -> str:
    """helm 3 or 4 (and kubectl) alone on PATH; the repository is the working directory."""
    tools = request.getfixturevalue(f"{request.param}_dir")
    tool_env(helm=tools / "helm", kubectl=tools / "kubectl")
    return request.param


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def gpu030(target: str) -> tuple[str, int, int, str]:
    """(path, line, column, message) of the one finding of `gpulint check TARGET`, GPU030."""
    result = CliRunner().invoke(
        main, ["check", "--isolated", "--no-cache", "--format", "json", target]
    )
    assert result.exit_code == 0, result.output
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["code"], finding["severity"]) == ("GPU030", "warning")
    message = finding["message"]
    assert message.startswith(PREFIX)
    return finding["path"], finding["line"], finding["column"], message.removeprefix(PREFIX)


def test_a_failing_action_is_reported_at_its_template_line_and_column(
    repo: Path, version: str
) -> None:
    # Line 6; helm's column counts bytes from 0 (18: `.resources`, after a two-byte `é`),
    # gpulint's characters from 1 (also 18 here).
    write_files(
        repo,
        {
            "chart/Chart.yaml": CHART_FILE,
            "chart/templates/deployment.yaml": (
                f'{CONFIG_MAP}data:\n  a: "é{{{{ .Values.resources.limits.cpu }}}}"\n'
            ),
        },
    )
    action = (
        'executing "mychart/templates/deployment.yaml" at <.Values.resources.limits.cpu>: '
        "nil pointer evaluating interface {}.limits"
    )
    where = {
        "helm3": "template: mychart/templates/deployment.yaml:6:18:",
        "helm4": "mychart/templates/deployment.yaml:6:18",
    }[version]
    assert gpu030("chart") == (
        "chart/templates/deployment.yaml",
        6,
        18,
        f"helm template failed: Error: {where} {action}",
    )


def test_a_template_that_does_not_parse_is_reported_at_its_line(repo: Path, version: str) -> None:
    write_files(
        repo,
        {
            "chart/Chart.yaml": CHART_FILE,
            "chart/templates/cm.yaml": CONFIG_MAP,
            "chart/templates/_helpers.tpl": '{{- define "x" }}\n{{ .Values.a }\n{{- end }}\n',
        },
    )
    assert gpu030("chart") == (
        "chart/templates/_helpers.tpl",
        2,
        1,
        "helm template failed: Error: parse error at (mychart/templates/_helpers.tpl:2): "
        'unexpected "}" in operand',
    )


def test_a_required_value_of_a_subchart_is_reported_where_it_is_required(
    repo: Path, version: str
) -> None:
    # helm names the subchart by its Chart.yaml (`subby`), not by its directory (`sub`).
    write_files(
        repo,
        {
            "chart/Chart.yaml": CHART_FILE,
            "chart/templates/cm.yaml": CONFIG_MAP,
            "chart/charts/sub/Chart.yaml": "apiVersion: v2\nname: subby\nversion: 0.1.0\n",
            "chart/charts/sub/templates/x.yaml": (
                f'{CONFIG_MAP}data:\n  b: {{{{ required "give b" .Values.b }}}}\n'
            ),
        },
    )
    assert gpu030("chart") == (
        "chart/charts/sub/templates/x.yaml",
        6,
        9,
        "helm template failed: Error: execution error at (mychart/charts/subby/templates/x.yaml"
        ":6:8): the template's message is not shown (it may hold file contents)",
    )


YAML_ERROR = (
    "helm template failed: Error: YAML parse error on mychart/templates/x.yaml: error "
    "converting YAML to JSON: yaml: line {}: {}"
)


def test_a_template_printing_itself_that_is_not_yaml_is_reported_at_the_line(
    repo: Path, version: str
) -> None:
    # helm trims the blank lines before the document it parses: its line 5 is the file's 7.
    text = f"\n\n{CONFIG_MAP}  a: b: c\n"
    write_files(repo, {"chart/Chart.yaml": CHART_FILE, "chart/templates/x.yaml": text})
    assert gpu030("chart") == (
        "chart/templates/x.yaml",
        7,
        1,
        YAML_ERROR.format(5, "mapping values are not allowed in this context"),
    )


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        # A line of what an action printed, which is not the template's.
        (
            f"{CONFIG_MAP}  a: {{{{ .Values.a | default 1 }}}}\n  b: b: c\n",
            6,
            "mapping values are not allowed in this context",
        ),
        # A line of the second document: helm counts from its start.
        (
            f"{CONFIG_MAP}---\n{CONFIG_MAP}  a: b: c\n",
            5,
            "mapping values are not allowed in this context",
        ),
        # go-yaml names the line before this problem's (the key `c` is on line 6).
        (f"{CONFIG_MAP}  b: 1\n c: 2\n", 5, "did not find expected key"),
    ],
)
def test_a_yaml_line_not_of_the_template_is_reported_at_its_first_line(
    repo: Path, version: str, text: str, line: int, problem: str
) -> None:
    write_files(repo, {"chart/Chart.yaml": CHART_FILE, "chart/templates/x.yaml": text})
    assert gpu030("chart") == ("chart/templates/x.yaml", 1, 1, YAML_ERROR.format(line, problem))


def test_a_refusal_naming_no_template_stays_at_chart_yaml(repo: Path, version: str) -> None:
    write_files(repo, {"chart/Chart.yaml": "apiVersion: v2\nname: mychart\n"})
    assert gpu030("chart") == (
        "chart/Chart.yaml",
        1,
        1,
        "helm template failed: Error: validation: chart.metadata.version is required",
    )


@pytest.mark.parametrize(
    "name",
    [
        "mychart/../outside/templates/x.yaml",
        "mychart/templates/../../outside/templates/x.yaml",
        "/outside/templates/x.yaml",
        "mychart//templates/x.yaml",
        "other/templates/x.yaml",  # not the chart's name
        "mychart/charts/packaged/templates/x.yaml",  # no such subchart directory
        "mychart/templates/link.yaml",  # a link out of the chart
        "mychart/templates/missing.yaml",
    ],
)
def test_a_message_naming_a_file_outside_the_chart_names_no_position(
    tmp_path: Path, name: str
) -> None:
    write_files(
        tmp_path,
        {
            "chart/Chart.yaml": CHART_FILE,
            "chart/templates/x.yaml": "a: 1\n",
            "outside/templates/x.yaml": "a: 1\n",
        },
    )
    (tmp_path / "chart" / "templates" / "link.yaml").symlink_to(
        tmp_path / "outside" / "templates" / "x.yaml"
    )
    chart = tmp_path / "chart"
    assert _template_named(f'Error: template: {name}:1:0: executing "x" at <.a>: x', chart) is None
    assert _template_named(f"Error: parse error at ({name}:1): x", chart) is None
    # The chart's own file, named the same way, is a position.
    named = _template_named('Error: template: mychart/templates/x.yaml:1:0: executing "x"', chart)
    assert named == ("templates/x.yaml", (1, 1))


def test_a_column_on_a_line_whose_probe_is_answered_is_not_given(repo: Path, version: str) -> None:
    # For a cluster's release, a probe of a Kubernetes API is rewritten `false` in the copy
    # helm renders: helm's column on that line is the copy's, so only the line is kept.
    line = (
        '{{ if or (.Capabilities.APIVersions.Has "resource.k8s.io/v1") true }}'
        "{{ .Values.a.b }}{{ end }}\n"
    )
    chart = repo / "chart"
    write_files(chart, {"Chart.yaml": CHART_FILE, "templates/x.yaml": f"{CONFIG_MAP}{line}"})
    with pytest.raises(ToolFailed) as plain:
        render_chart(HelmRender(chart, "a"), None)
    assert (plain.value.file, plain.value.pos) == ("templates/x.yaml", (5, 80))
    known = kube.served_apis((1, 32))
    assert known is not None
    with pytest.raises(ToolFailed) as answered:
        render_chart(HelmRender(chart, "a", served_apis=ServedApis(*known)), None)
    assert "mychart/templates/x.yaml:5:34" in str(answered.value)
    assert (answered.value.file, answered.value.pos) == ("templates/x.yaml", (5, 1))


# kubectl kustomize: a resource of the overlay that is not YAML.

KUSTOMIZE_ERROR = (
    "kustomize build failed: error: accumulating resources: accumulating resources from "
    "'{file}': MalformedYAMLError: yaml: line {line}: {problem} in File: {file}"
)


def test_a_resource_of_the_overlay_that_is_not_yaml_is_reported_at_its_line(
    repo: Path, version: str
) -> None:
    write_files(
        repo,
        {
            "overlay/kustomization.yaml": "resources:\n- sub/r.yaml\n",
            "overlay/sub/r.yaml": f"\n\n{CONFIG_MAP}  a: b: c\n",
        },
    )
    assert gpu030("overlay") == (
        "overlay/sub/r.yaml",
        7,
        1,
        KUSTOMIZE_ERROR.format(
            file="sub/r.yaml", line=7, problem="mapping values are not allowed in this context"
        ),
    )


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        # kyaml counts the lines of the second document from its start.
        (
            f"{CONFIG_MAP}---\n\n{CONFIG_MAP}  a: b: c\n",
            6,
            "mapping values are not allowed in this context",
        ),
        # go-yaml names the line before this problem's (the tab is on line 6).
        (f"{CONFIG_MAP}  b: 1\n\tc: 2\n", 5, "found a tab character that violates indentation"),
    ],
)
def test_a_yaml_line_not_of_the_resource_is_reported_at_its_first_line(
    repo: Path, version: str, text: str, line: int, problem: str
) -> None:
    write_files(
        repo, {"overlay/kustomization.yaml": "resources:\n- r.yaml\n", "overlay/r.yaml": text}
    )
    assert gpu030("overlay") == (
        "overlay/r.yaml",
        1,
        1,
        KUSTOMIZE_ERROR.format(file="r.yaml", line=line, problem=problem),
    )


def test_a_resource_of_a_base_stays_at_the_overlays_kustomization(repo: Path, version: str) -> None:
    # kubectl names the base's file relative to the base: not a file of the overlay.
    write_files(
        repo,
        {
            "base/kustomization.yaml": "resources:\n- r.yaml\n",
            "base/r.yaml": f"{CONFIG_MAP}  a: b: c\n",
            "overlay/kustomization.yaml": "resources:\n- ../base\n",
        },
    )
    path, line, column, message = gpu030("overlay")
    assert (path, line, column) == ("overlay/kustomization.yaml", 1, 1)
    assert message.startswith(
        "kustomize build failed: error: accumulating resources: accumulation err='accumulating "
        f"resources from '../base': '{repo / 'base'}' must resolve to a file': recursed "
        f"accumulation of path '{repo / 'base'}': accum"
    )
