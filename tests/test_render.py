"""gpulint.render on its own: helm and kustomize runs, the render cache, and tracing a rendered
position back to the file that wrote it (exact, or not at all)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.findings import Finding
from gpulint.model import Severity
from gpulint.render.helm import HelmRender, render_chart
from gpulint.render.locate import (
    HelmOrigin,
    _same_but,
    _same_document_lines,
    _unconditional_lines,
    sentinel,
    sorted_sentinel,
)
from gpulint.render.options import ServedApis
from gpulint.render.tokens import tokens
from gpulint.render.tools import RenderError
from gpulint.validation import kube

pytest_plugins = ["tests.binaries"]

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
NIM = FIXTURES / "charts" / "nim-llm"


@pytest.fixture()
def helm(tool_env, helm4_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """helm v4 alone on PATH; the working directory is `tmp_path`."""
    tool_env(helm=helm4_dir / "helm")
    monkeypatch.chdir(tmp_path)
    return helm4_dir / "helm"


def finding_at(line: int, column: int, source: str | None = None) -> Finding:
    return Finding("GPU001", "x", Severity.ERROR, "nim-llm", line, column, "m", None, None, source)


def test_tokens_know_where_each_scalars_characters_are() -> None:
    text = "a: \"nvidia.com/gpu\"\nb: {c: p4d, d: 8}\ne: [one, 'two']  # note\n"
    _, found = tokens(text)
    assert {pos: (t.text, t.offset, t.is_key) for pos, t in found.items()} == {
        (1, 1): ("a", 0, True),
        (1, 4): ("nvidia.com/gpu", 4, False),
        (2, 1): ("b", 20, True),
        (2, 5): ("c", 24, True),
        (2, 8): ("p4d", 27, False),
        (2, 13): ("d", 32, True),
        (2, 16): ("8", 35, False),
        (3, 1): ("e", 38, True),
        (3, 5): ("one", 42, False),
        (3, 10): ("two", 48, False),
    }


def test_sentinel_keeps_length_and_punctuation_and_changes_every_letter_and_digit() -> None:
    assert sentinel("nvidia.com/gpus") == "zzzzzz.zzz/zzzz"
    assert sentinel("p4dn") == "z7zz"
    assert sentinel("z7") == "q3"


def test_a_sorted_sentinel_keeps_the_characters_that_place_it_among_its_siblings() -> None:
    # Between `cpu` and `memory` by its first letter; kept, the rest changes.
    assert sorted_sentinel("gpu.intel.com/xe", ["cpu", "memory"]) == "gzz.zzzzz.zzz/zz"
    # Beside `gpu.intel.com/i915` it keeps up to the first letter that differs.
    assert sorted_sentinel("gpu.intel.com/xe", ["gpu.intel.com/i915"]) == "gpu.intel.com/xz"
    assert sorted_sentinel("ab", ["ac", "ab"]) is None  # nothing left to change
    assert sorted_sentinel("nvidia.com/gpu", []) == sentinel("nvidia.com/gpu")


def test_sentinel_variants_differ_from_each_other_and_from_the_text_everywhere() -> None:
    variants = [sentinel("p4", n) for n in range(25 * 9)]
    assert variants[0] == "z7" and variants[1] == "z3" and variants[9] == "q7"
    assert len(set(variants)) == len(variants)
    assert all(v is not None and v[0] not in "pP" and v[1] != "4" for v in variants)
    assert sentinel("p4", 25 * 9) is None  # two characters have no more
    assert sentinel("a.b", 1) == "z.q"


def test_findings_of_one_render_are_traced_to_their_values_lines_by_one_render_more(
    tool_env, helm4_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # helm behind a script that counts its runs.
    calls = tmp_path / "calls"
    counting = tmp_path / "counting-helm"
    counting.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {helm4_dir / "helm"} "$@"\n')
    counting.chmod(0o755)
    tool_env(helm=counting)
    monkeypatch.chdir(FIXTURES)
    args = ["check", "--isolated", "--no-cache", "--format", "json"]
    args += ["--profile", "profiles/placement-eks.yaml"]
    result = CliRunner().invoke(
        main, [*args, "charts/nim-llm", "-f", "charts/nim-llm/values-gpu.yaml"]
    )
    found = [
        (f["code"], f["path"], f["line"], f["column"])
        for f in json.loads(result.stdout)["findings"]
    ]
    assert found == [
        ("GPU601", "charts/nim-llm/templates/deployment.yaml", 24, 11),
        ("GPU001", "charts/nim-llm/values-gpu.yaml", 5, 5),
        ("GPU103", "charts/nim-llm/values-gpu.yaml", 7, 3),
    ]
    # The render, one render with both values-file scalars changed (GPU001's and GPU103's),
    # and one per candidate of GPU601's `resources`, a top-level key of both values files
    # (which a template reads values by, so changing it would move everything).
    assert len(calls.read_text().splitlines()) == 4


def test_a_chart_renders_and_a_second_render_reads_the_cache(
    tool_env, helm4_dir: Path, tmp_path: Path
) -> None:
    # helm behind a script that counts its runs.
    calls = tmp_path / "calls"
    counting = tmp_path / "counting-helm"
    counting.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {helm4_dir / "helm"} "$@"\n')
    counting.chmod(0o755)
    tool_env(helm=counting)
    request = HelmRender(NIM, "demo", "ml")
    cache = tmp_path / "cache"
    text = render_chart(request, cache)
    assert "# Source: nim-llm/templates/deployment.yaml" in text
    assert "  name: demo\n" in text
    assert render_chart(request, cache) == text
    assert calls.read_text().splitlines() == [f"template --namespace=ml -- demo {NIM}"]
    render_chart(HelmRender(NIM, "other", "ml"), cache)
    assert len(calls.read_text().splitlines()) == 2


def test_a_changed_values_file_is_rendered_again(helm: Path, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("replicaCount: 2\n")
    request = HelmRender(NIM, "demo", None, (values,))
    assert "replicas: 2\n" in render_chart(request, tmp_path / "cache")
    values.write_text("replicaCount: 3\n")
    assert "replicas: 3\n" in render_chart(request, tmp_path / "cache")


def test_a_local_dependency_is_built_in_a_copy(helm: Path, tmp_path: Path) -> None:
    shutil.copytree(NIM, tmp_path / "nim-llm")
    umbrella = tmp_path / "umbrella"
    (umbrella / "templates").mkdir(parents=True)
    (umbrella / "Chart.yaml").write_text(
        "apiVersion: v2\nname: umbrella\nversion: 0.1.0\n"
        "dependencies:\n  - name: nim-llm\n    version: 1.3.0\n"
        "    repository: file://../nim-llm\n"
    )
    (umbrella / "values.yaml").write_text("nim-llm:\n  replicaCount: 4\n")
    text = render_chart(HelmRender(umbrella, "u", None), None)
    assert "# Source: umbrella/charts/nim-llm/templates/deployment.yaml" in text
    assert "replicas: 4\n" in text
    # The user's chart is left as it was.
    assert sorted(os.listdir(umbrella)) == ["Chart.yaml", "templates", "values.yaml"]


def test_a_local_dependency_s_lines_are_placed_in_the_directory_it_is_built_from(
    helm: Path, tmp_path: Path
) -> None:
    # stackhpc/azimuth-llm's wrapper charts name the chart beside them, under an alias here:
    # helm prints its templates as `<wrapper>/charts/<alias>/...`, a directory nobody has.
    _write_chart(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",  # the checked tree: the checkout
            "wrapper/Chart.yaml": (
                "apiVersion: v2\nname: wrapper\nversion: 0.1.0\ndependencies:\n"
                "- name: serve\n  alias: api\n  version: 0.1.0\n  repository: file://../serve/\n"
            ),
            "serve/Chart.yaml": "apiVersion: v2\nname: serve\nversion: 0.1.0\n",
            "serve/templates/deployment.yaml": _TWO_SPECS,
        },
    )
    wrapper = tmp_path / "wrapper"
    request = HelmRender(wrapper, "w", None, ())
    rendered = render_chart(request, None)
    line = [text.rstrip() for text in rendered.splitlines()].index("    spec:") + 1
    source = "wrapper/charts/api/templates/deployment.yaml"
    (found,) = HelmOrigin(request, "w", str(wrapper), None).locate(
        [finding_at(line, 5, source)], rendered
    )
    assert (found.path, found.line, found.column) == (
        f"{tmp_path}/serve/templates/deployment.yaml",
        8,
        5,
    )
    # A dependency outside the checked tree is never read or named, whatever Chart.yaml says
    # by the time the findings are placed.
    (wrapper / "Chart.yaml").write_text(
        "apiVersion: v2\nname: wrapper\nversion: 0.1.0\ndependencies:\n"
        "- name: api\n  version: 0.1.0\n  repository: file://../../outside/\n"
    )
    (found,) = HelmOrigin(request, "w", str(wrapper), None).locate(
        [finding_at(line, 5, source)], rendered
    )
    assert (found.path, found.line, found.column) == (
        f"{wrapper}/charts/api/templates/deployment.yaml",
        1,
        1,
    )


def _write_chart(directory: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)


# An umbrella over services that share a library chart, each through `file://` and none with
# its `charts/` built, as opea-project/GenAIInfra's charts are kept; `tei` is a prefix of
# `teirerank`.
_SHARED_LIBRARY = {
    "umbrella/Chart.yaml": (
        "apiVersion: v2\nname: umbrella\nversion: 0.1.0\ndependencies:\n"
        '- {name: tei, version: 0.1.0, repository: "file://../common/tei"}\n'
        '- {name: teirerank, version: 0.1.0, repository: "file://../common/teirerank"}\n'
    ),
    "common/lib/Chart.yaml": "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
    "common/lib/templates/_helpers.tpl": (
        '{{- define "lib.name" -}}served-{{ .Chart.Name }}{{- end }}\n'
    ),
}
for _service in ("tei", "teirerank"):
    _SHARED_LIBRARY[f"common/{_service}/Chart.yaml"] = (
        f"apiVersion: v2\nname: {_service}\nversion: 0.1.0\ndependencies:\n"
        "- name: lib\n  version: 0.1.0\n  repository: file://../lib\n"
    )
    _SHARED_LIBRARY[f"common/{_service}/templates/cm.yaml"] = (
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ include "lib.name" . }}}\n'
    )


def test_the_local_dependencies_of_a_local_dependency_are_built_too(
    helm: Path, tmp_path: Path
) -> None:
    # helm packages a `file://` dependency as its directory is: the library its own
    # Chart.yaml names must be built into it first, as `helm dependency update` on each
    # service, then on the umbrella, does.
    _write_chart(tmp_path, _SHARED_LIBRARY)
    text = render_chart(HelmRender(tmp_path / "umbrella", "u", None), None)
    assert "{name: served-tei}\n" in text
    assert "{name: served-teirerank}\n" in text
    # No chart of the user's tree is changed.
    assert not (tmp_path / "common" / "tei" / "charts").exists()
    assert sorted(os.listdir(tmp_path / "umbrella")) == ["Chart.yaml"]


def test_local_dependencies_that_name_each_other_are_a_clear_error(
    helm: Path, tmp_path: Path
) -> None:
    _write_chart(tmp_path, _SHARED_LIBRARY)
    (tmp_path / "common" / "lib" / "Chart.yaml").write_text(
        "apiVersion: v2\nname: lib\nversion: 0.1.0\n"
        "dependencies:\n- name: tei\n  version: 0.1.0\n  repository: file://../tei\n"
    )
    with pytest.raises(RenderError) as caught:
        render_chart(HelmRender(tmp_path / "umbrella", "u", None), None)
    assert str(caught.value) == (
        f"{tmp_path / 'umbrella'}: dependency `tei` (file://../tei) depends on the chart that "
        "depends on it, or its dependencies nest too deep; helm cannot build them either"
    )


def test_a_dependency_of_a_local_dependency_from_a_repository_names_both(
    helm: Path, tmp_path: Path
) -> None:
    _write_chart(tmp_path, _SHARED_LIBRARY)
    (tmp_path / "common" / "tei" / "Chart.yaml").write_text(
        "apiVersion: v2\nname: tei\nversion: 0.1.0\ndependencies:\n"
        "- name: milvus\n  version: 4.2.12\n  repository: https://zilliztech.github.io/milvus-helm/\n"
    )
    with pytest.raises(RenderError) as caught:
        render_chart(HelmRender(tmp_path / "umbrella", "u", None), None)
    assert str(caught.value) == (
        f"{tmp_path / 'umbrella'}: dependency `milvus` (https://zilliztech.github.io/milvus-helm/) "
        "of its dependency ../common/tei is not in its `charts/`; run `helm dependency build` "
        "on the chart where the network is reachable, then check again"
    )
    # At the umbrella's entry for the dependency that needs it.
    assert caught.value.pos == (5, 3)


# opea-project/GenAIInfra's chatqna: optional vector databases from repositories, off by
# default, not committed.
_OPTIONAL_REMOTE = {
    "app/Chart.yaml": (
        "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n"
        "  - name: qdrant\n    version: 1.13.1\n"
        "    repository: https://qdrant.github.io/qdrant-helm\n    condition: qdrant.enabled\n"
        "  - name: milvus\n    version: 4.2.12\n"
        '    repository: "https://zilliztech.github.io/milvus-helm/"\n'
        "    condition: milvus.enabled\n"
    ),
    "app/values.yaml": "qdrant:\n  enabled: false\nmilvus:\n  enabled: false\n",
    "app/templates/cm.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
        'data: {host: "{{ .Release.Name }}-milvus"}\n'
    ),
}


def test_a_dependency_from_a_repository_that_is_off_is_rendered_as_helm_leaves_it_out(
    helm: Path, tmp_path: Path
) -> None:
    # helm renders nothing of a dependency its condition turns off: the chart is rendered
    # without fetching it, and the user's tree is left as it was.
    _write_chart(tmp_path, _OPTIONAL_REMOTE)
    chart = tmp_path / "app"
    text = render_chart(HelmRender(chart, "u", None), None)
    assert text.count("# Source: ") == 1 and 'host: "u-milvus"' in text
    assert sorted(os.listdir(chart)) == ["Chart.yaml", "templates", "values.yaml"]
    # Turned on, it is the dependency that is missing, named at its entry.
    with pytest.raises(RenderError) as caught:
        render_chart(HelmRender(chart, "u", None, set_values=("milvus.enabled=true",)), None)
    assert str(caught.value).startswith(f"{chart}: dependency `milvus` (https://zilliztech")
    assert caught.value.pos == (9, 5)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # No condition: always on.
        (("    condition: qdrant.enabled\n", ""), "always rendered"),
        # A template reads its values, which the real chart's defaults fill.
        (('data: {host: "', 'data: {port: "{{ .Values.qdrant.port }}", host: "'), "values read"),
        # A range of versions: no one version to stand in with.
        (("version: 1.13.1", "version: ^1.13.0"), "version range"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_a_dependency_from_a_repository_no_stand_in_can_replace_is_reported(
    helm: Path, tmp_path: Path, change: tuple[str, str], reason: str
) -> None:
    files = {name: text.replace(*change) for name, text in _OPTIONAL_REMOTE.items()}
    _write_chart(tmp_path, files)
    with pytest.raises(RenderError) as caught:
        render_chart(HelmRender(tmp_path / "app", "u", None), None)
    assert "dependency `qdrant` (https://qdrant.github.io/qdrant-helm) is not in its" in str(
        caught.value
    ), reason


def test_a_dependency_from_a_repository_is_a_clear_error(helm: Path, tmp_path: Path) -> None:
    chart = tmp_path / "app"
    chart.mkdir()
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: app\nversion: 0.1.0\n"
        "dependencies:\n  - name: redis\n    version: 18.0.0\n"
        "    repository: https://charts.bitnami.com/bitnami\n"
    )
    with pytest.raises(RenderError) as caught:
        render_chart(HelmRender(chart, "app", None), None)
    assert str(caught.value) == (
        f"{chart}: dependency `redis` (https://charts.bitnami.com/bitnami) is not in its "
        "`charts/`; run `helm dependency build` on the chart where the network is reachable, "
        "then check again"
    )
    assert caught.value.pos == (5, 5)  # its entry under `dependencies:`


# A values schema whose `$id` is a URL (bjw-s's common library, which immich's chart renders
# with): helm resolves the relative `$ref` against it and fetches it, which no render of gpulint
# reaches. The schema the chart holds itself refuses a `replicas` that is not an integer.
_REMOTE_SCHEMA = {
    "Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "values.yaml": "replicas: 1\npod: {}\n",
    "values.schema.json": (
        '{"$schema": "http://json-schema.org/draft-07/schema",'
        ' "$id": "https://schemas.invalid/app/values.schema.json",'
        ' "properties": {"replicas": {"type": "integer"},'
        ' "pod": {"$ref": "schemas/pod.json"}}}'
    ),
    "schemas/pod.json": '{"type": "object"}',
    "templates/deployment.yaml": (
        "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: app}\n"
        "spec: {replicas: {{ .Values.replicas }}}\n"
    ),
}


@pytest.mark.parametrize("version", ["helm4", "helm3"])
def test_a_values_schema_only_the_network_serves_is_left_to_helm_and_the_chart_rendered(
    tool_env, helm4_dir: Path, helm3_dir: Path, tmp_path: Path, version: str
) -> None:
    tool_env(helm=(helm4_dir if version == "helm4" else helm3_dir) / "helm")
    chart = write_chart(tmp_path / "app", _REMOTE_SCHEMA)
    assert "spec: {replicas: 1}" in render_chart(HelmRender(chart, "app", None), None)
    # The schema is checked where it can be: without its URL, values it refuses are refused.
    (chart / "values.schema.json").write_text('{"properties": {"replicas": {"type": "integer"}}}')
    (chart / "values.yaml").write_text("replicas: one\n")
    with pytest.raises(RenderError, match="values don't meet the specifications of the schema"):
        render_chart(HelmRender(chart, "app", None), None)


OPERATOR_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: ingest\nversion: 0.1.0\n",
    # The NIM Operator's objects, written only where the cluster serves their API.
    "templates/nim.yaml": (
        '{{ if .Capabilities.APIVersions.Has "apps.nvidia.com/v1alpha1" -}}\n'
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata: {name: ocr}\n"
        "spec:\n  resources: {limits: {nvidia.com/gpu: 1}}\n{{- end }}\n"
    ),
    # A Kubernetes API helm decides from its own version: not one to assume served.
    "templates/psp.yaml": (
        '{{ if $.Capabilities.APIVersions.Has "policy/v1beta1/PodSecurityPolicy" -}}\n'
        "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: old}\n"
        "{{- end }}\n"
    ),
}


def write_chart(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return directory


def test_a_chart_is_rendered_as_for_a_cluster_serving_the_custom_apis_it_asks_about(
    tool_env, helm4_dir: Path, tmp_path: Path
) -> None:
    calls = tmp_path / "calls"
    counting = tmp_path / "counting-helm"
    counting.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {helm4_dir / "helm"} "$@"\n')
    counting.chmod(0o755)
    tool_env(helm=counting)
    chart = write_chart(tmp_path / "ingest", OPERATOR_CHART)
    text = render_chart(HelmRender(chart, "ingest", None), None)
    assert "kind: NIMService" in text
    assert "PodSecurityPolicy" not in text
    assert calls.read_text().splitlines() == [
        f"template --api-versions=apps.nvidia.com/v1alpha1 -- ingest {chart}"
    ]


def test_a_packaged_subchart_s_api_probes_are_read_from_its_archive(
    helm: Path, tmp_path: Path
) -> None:
    import tarfile

    parent = write_chart(
        tmp_path / "rag",
        {
            "Chart.yaml": (
                "apiVersion: v2\nname: rag\nversion: 0.1.0\ndependencies:\n"
                "  - {name: ingest, version: 0.1.0, repository: https://charts.example}\n"
            )
        },
    )
    source = write_chart(tmp_path / "src" / "ingest", OPERATOR_CHART)
    (parent / "charts").mkdir()
    with tarfile.open(parent / "charts" / "ingest-0.1.0.tgz", "w:gz") as archive:
        archive.add(source, arcname="ingest")
    text = render_chart(HelmRender(parent, "rag", None), None)
    assert "# Source: rag/charts/ingest/templates/nim.yaml" in text
    assert "nvidia.com/gpu: 1" in text


def test_a_packaged_subchart_is_read_no_further_than_helm_unpacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import tarfile

    from gpulint.render import helm as helm_module

    archive = tmp_path / "charts" / "ingest-0.1.0.tgz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as packed:
        for name, data in (
            ("ingest/files/blob", b"0" * 4096),
            ("ingest/templates/nim.yaml", OPERATOR_CHART["templates/nim.yaml"].encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            packed.addfile(info, io.BytesIO(data))
    assert helm_module.probed_apis([tmp_path], [archive]) == ("apps.nvidia.com/v1alpha1",)
    # An archive that unpacks to more than helm accepts is not read to its end.
    monkeypatch.setattr(helm_module, "_ARCHIVE_LIMIT", 2048)
    assert helm_module.probed_apis([tmp_path], [archive]) == ()


def test_api_probes_name_custom_resource_groups_only() -> None:
    from gpulint.render.helm import _is_custom_api

    assert _is_custom_api("apps.nvidia.com/v1alpha1")
    assert _is_custom_api("leaderworkerset.x-k8s.io/v1/LeaderWorkerSet")
    assert not _is_custom_api("policy/v1beta1")
    assert not _is_custom_api("gateway.networking.k8s.io/v1")
    assert not _is_custom_api("--set-file=x=/etc/passwd")
    assert not _is_custom_api("apps.nvidia.com/latest")


def test_a_value_is_traced_to_its_values_file_only_when_changing_it_changes_the_finding(
    helm: Path, tmp_path: Path
) -> None:
    values = tmp_path / "values-prod.yaml"
    values.write_text("resources:\n  limits:\n    nvidia.com/gpus: 1\n")
    request = HelmRender(NIM, "nim-llm", None, (values,))
    rendered = render_chart(request, None)
    origin = HelmOrigin(request, "nim-llm", str(NIM), None)
    source = "nim-llm/templates/deployment.yaml"
    key, count = finding_at(31, 15, source), finding_at(31, 32, source)
    mapped, unmapped = origin.locate([key, count], rendered)
    # Named as the request names it, as the chart's templates are.
    assert (mapped.path, mapped.line, mapped.column) == (values.as_posix(), 3, 5)
    assert mapped.rendered is not None and (mapped.rendered.line, mapped.rendered.column) == (
        31,
        15,
    )
    # `1` is written in both values files; re-rendering with each changed in turn tells which
    # one this count is (the chart's own `1` is the count of nvidia.com/gpu, a line above).
    assert (unmapped.path, unmapped.line, unmapped.column) == (values.as_posix(), 3, 22)


# A template printed before the GPU workload whose text differs in length at every render: a
# certificate of `genCA`, a random token. Offsets in the stream move; in the workload's
# document they do not.
_CHANGING = {
    "Chart.yaml": "apiVersion: v2\nname: hook\nversion: 0.1.0\n",
    "values.yaml": "resources:\n  limits:\n    nvidia.com/gpus: 1\n",
    "templates/a-config.yaml": (
        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: token}\n"
        "data: {token: {{ randAlphaNum (randInt 1 4000 | int) | quote }}}\n"
    ),
    "templates/deployment.yaml": (
        "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: hook}\nspec:\n  template:\n"
        "    spec:\n      containers:\n        - name: hook\n          resources:\n"
        "            {{- toYaml .Values.resources | nindent 12 }}\n"
    ),
}


def test_a_value_is_traced_although_another_document_changes_length_at_every_render(
    helm: Path, tmp_path: Path
) -> None:
    chart = write_chart(tmp_path / "hook", _CHANGING)
    request = HelmRender(chart, "hook", None, ())
    rendered = render_chart(request, None)
    line = rendered.splitlines().index("              nvidia.com/gpus: 1") + 1
    (found,) = HelmOrigin(request, "hook", str(chart), None).locate(
        [finding_at(line, 15, "hook/templates/deployment.yaml")], rendered
    )
    assert (found.path, found.line, found.column) == (f"{chart}/values.yaml", 3, 5)


def test_a_key_the_charts_defaults_also_set_is_traced_by_its_value(
    helm: Path, tmp_path: Path
) -> None:
    # The chart's values.yaml limits `nvidia.com/gpu: 1`; the user's file raises it to 16.
    # Renaming either key brings the other back beside it, so the key alone cannot be traced;
    # its value 16 can, and the entry holding it spells the key as it is rendered.
    values = tmp_path / "values-prod.yaml"
    values.write_text("resources:\n  limits:\n    nvidia.com/gpu: 16\n")
    request = HelmRender(NIM, "nim-llm", None, (values,))
    rendered = render_chart(request, None)
    line = rendered.splitlines().index("              nvidia.com/gpu: 16") + 1
    origin = HelmOrigin(request, "nim-llm", str(NIM), None)
    source = "nim-llm/templates/deployment.yaml"
    key, count = origin.locate(
        [finding_at(line, 15, source), finding_at(line, 31, source)], rendered
    )
    assert (key.path, key.line, key.column) == (values.as_posix(), 3, 5)
    assert (count.path, count.line, count.column) == (values.as_posix(), 3, 21)


def test_a_key_is_not_traced_by_a_value_whose_entry_spells_another_key(
    helm: Path, tmp_path: Path
) -> None:
    # The value of `pool` comes from the values file, under the key `gpuPool` the template
    # reads: the entry does not spell the rendered key, which stays where the template spells it.
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("gpuPool: p4d\n")
    (chart / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\nspec:\n  nodeSelector:\n"
        '    {{ printf "%s" "pool" }}: {{ .Values.gpuPool }}\n'
        "  containers:\n  - name: app\n    image: app:1\n"
    )
    request = HelmRender(chart, "app", None)
    rendered = render_chart(request, None)
    line = rendered.splitlines().index("    pool: p4d") + 1
    origin = HelmOrigin(request, "app", str(chart), None)
    key, value = origin.locate(
        [
            finding_at(line, 5, "app/templates/pod.yaml"),
            finding_at(line, 11, "app/templates/pod.yaml"),
        ],
        rendered,
    )
    assert (key.path, key.line, key.column) == (f"{chart}/templates/pod.yaml", 7, 21)
    assert (value.path, value.line, value.column) == (f"{chart}/values.yaml", 1, 10)


def test_an_equal_text_written_elsewhere_is_not_taken_for_the_origin(
    helm: Path, tmp_path: Path
) -> None:
    # The values file holds the same text as the rendered node selector, under a key the
    # chart never reads: a text match alone would point there; the re-render proves it wrong.
    values = tmp_path / "values-prod.yaml"
    values.write_text("unused: p4dn\n")
    request = HelmRender(NIM, "nim-llm", None, (values,), ("nodeSelector.pool=p4dn",))
    rendered = render_chart(request, None)
    assert "        pool: p4dn\n" in rendered
    line = rendered.splitlines().index("        pool: p4dn") + 1
    origin = HelmOrigin(request, "nim-llm", str(NIM), None)
    (located,) = origin.locate(
        [finding_at(line, 15, "nim-llm/templates/deployment.yaml")], rendered
    )
    assert (located.path, located.line, located.column) == (
        f"{NIM}/templates/deployment.yaml",
        1,
        1,
    )
    assert located.rendered is not None and located.rendered.of == "nim-llm"


OLLAMA = FIXTURES / "real" / "ollama-helm" / "ollama"


def test_a_key_the_template_spells_once_inside_an_action_is_located_there(helm: Path) -> None:
    # `amd.com/gpu` is rendered from `dict "amd.com/gpu" ...`: no literal template line renders
    # the rendered line, and the values file does not hold the key; the one place the template
    # spells it is where an author changes it.
    request = HelmRender(OLLAMA, "ollama", None, (OLLAMA / "values-amd.yaml",))
    rendered = render_chart(request, None)
    line = rendered.splitlines().index("              amd.com/gpu: 1") + 1
    origin = HelmOrigin(request, "ollama", str(OLLAMA), None)
    key, count = origin.locate(
        [
            finding_at(line, 15, "ollama/templates/deployment.yaml"),
            finding_at(line, 28, "ollama/templates/deployment.yaml"),
        ],
        rendered,
    )
    template = (OLLAMA / "templates" / "deployment.yaml").read_text().splitlines()
    spelled = next(n for n, text in enumerate(template, 1) if '"amd.com/gpu"' in text)
    assert (key.path, key.line, key.column) == (
        f"{OLLAMA}/templates/deployment.yaml",
        spelled,
        template[spelled - 1].index("amd.com/gpu") + 1,
    )
    # The count comes from the values file, as re-rendering with it changed proves.
    assert (count.path, count.line, count.column) == (
        (OLLAMA / "values-amd.yaml").as_posix(),
        6,
        13,
    )


_TWO_SPECS = """\
kind: Deployment
apiVersion: apps/v1
metadata: {name: serve}
spec:
  replicas: {{ .Values.replicas }}
  template:
    metadata: {labels: {app: serve}}
    spec:
      containers: [{name: serve, image: "serve:1"}]
"""
# A Service after the Deployment in the same template (xorbitsai/xinference-helm-charts writes
# its supervisor so): helm prints the Service first, so its `spec:` is the first rendered one.
_SERVICE_AFTER = (
    _TWO_SPECS
    + """\
---
kind: Service
apiVersion: v1
metadata: {name: serve}
spec:
  ports: [{port: 80}]
"""
)
# The same, its second document started by a `---` line that carries a comment.
_SERVICE_AFTER_COMMENTED = _SERVICE_AFTER.replace(
    "---\nkind: Service", "--- # the Service\nkind: Service"
)
# The pod's `spec:` of the first branch is written six columns in, and rendered four in (the
# `-}}` trims the line break and indentation after it), as the other branch writes its own.
_TRIMMED = """\
kind: Deployment
apiVersion: apps/v1
metadata: {name: serve}
spec:
  replicas: {{ .Values.replicas }}
  template:
    metadata: {labels: {app: serve}}
    {{ if .Values.trim -}}
      spec:
        containers: [{name: serve, image: "serve:1"}]
    {{- else }}
    spec:
      containers: [{name: serve, image: "serve:2"}]
    {{- end }}
"""

# The pod's `spec:` goes on with what the next line's action prints: spaces when it prints
# nothing (opea-project/GenAIInfra's `{{- include "common.runtimeClassName" . | indent 6 }}`).
_CONTINUED = """\
kind: Deployment
apiVersion: apps/v1
metadata: {name: serve}
spec:
  replicas: {{ .Values.replicas }}
  template:
    metadata: {labels: {app: serve}}
    spec:
      {{- .Values.runtimeClass | default "" | indent 6 }}
      containers: [{name: serve, image: "serve:1"}]
"""


@pytest.mark.parametrize(
    ("template", "where"),
    [
        # Two lines read `spec:`, both printed by every render: the second is the pod's.
        (_TWO_SPECS, (8, 5)),
        # The same, the second rendered with the spaces `indent` adds after it.
        (_CONTINUED, (8, 5)),
        # A `-}}` moves a line to where another branch writes one: order cannot tell them
        # apart, a render with both lines marked can (the first branch's, two columns in).
        (_TRIMMED, (9, 7)),
        # Order is read within the pod's document, not across the documents helm sorts.
        (_SERVICE_AFTER, (8, 5)),
        (_SERVICE_AFTER_COMMENTED, (8, 5)),
    ],
    ids=[
        "both-printed",
        "continued-line",
        "trimmed-line-breaks",
        "service-printed-first",
        "separator-with-comment",
    ],
)
def test_a_pod_spec_beside_the_deployment_s_is_placed_and_a_moved_line_is_told_by_marks(
    helm: Path, tmp_path: Path, template: str, where: tuple[int, int]
) -> None:
    chart = tmp_path / "serve"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serve\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("replicas: 1\ntrim: true\n")
    (chart / "templates" / "deployment.yaml").write_text(template)
    request = HelmRender(chart, "serve", None, ())
    rendered = render_chart(request, None)
    line = [text.rstrip() for text in rendered.splitlines()].index("    spec:") + 1
    origin = HelmOrigin(request, "serve", str(chart), None)
    (located,) = origin.locate([finding_at(line, 5, "serve/templates/deployment.yaml")], rendered)
    assert (located.path, (located.line, located.column)) == (
        f"{chart}/templates/deployment.yaml",
        where,
    )


# Two Deployments in one template, each behind its own `if` (h2oai/h2ogpt's chart writes its
# backends so): both write `resources:` at the same indentation, neither is printed by every
# render, so order tells nothing.
_TWO_BACKENDS = """\
{{- if .Values.web.enabled }}
kind: Deployment
apiVersion: apps/v1
metadata: {name: web}
spec:
  template:
    spec:
      containers:
        - name: web
          image: web:1
          resources:
            {{- toYaml .Values.web.resources | nindent 12 }}
{{- end }}
{{- if .Values.tgi.enabled }}
---
kind: Deployment
apiVersion: apps/v1
metadata: {name: tgi}
spec:
  template:
    spec:
      containers:
        - name: tgi
          image: tgi:1
          resources:
            {{- toYaml .Values.tgi.resources | nindent 12 }}
{{- end }}
"""
_BACKEND_VALUES = """\
web: {enabled: true, resources: {limits: {nvidia.com/gpu: 1}}}
tgi: {enabled: true, resources: {limits: {nvidia.com/gpu: 4}}}
"""


# Beside the deployments' template, a template whose text differs at every render or with
# the marks: a ConfigMap holding the deployments' template's checksum, a Secret of random text
# (weaviate/weaviate-helm's cluster API credentials are `randAlphaNum 32`).
_BESIDE = {
    "checksum": 'sum: {{ include (print $.Template.BasePath "/deployment.yaml") . | sha256sum }}',
    "random": "password: {{ randAlphaNum 32 | b64enc | quote }}",
}


def _two_backends(tmp_path: Path, template: str, beside: str | None = None) -> Path:
    chart = tmp_path / "h2o"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: h2o\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(_BACKEND_VALUES)
    (chart / "templates" / "deployment.yaml").write_text(template)
    if beside is not None:
        (chart / "templates" / "configmap.yaml").write_text(
            "kind: ConfigMap\napiVersion: v1\nmetadata: {name: beside}\ndata:\n"
            f"  {_BESIDE[beside]}\n"
        )
    return chart


@pytest.mark.parametrize("beside", [None, "checksum", "random"])
def test_lines_written_in_several_conditional_documents_are_told_apart_by_a_marked_render(
    helm: Path, tmp_path: Path, beside: str | None
) -> None:
    # Another template's text that the marks change, or that no two renders share, moves no
    # line of the marked template: its marks still tell.
    chart = _two_backends(tmp_path, _TWO_BACKENDS, beside)
    expected = [(11, 11), (25, 11)]
    request = HelmRender(chart, "h2o", None, ())
    rendered = render_chart(request, None)
    printed = rendered.splitlines()
    lines = [n for n, text in enumerate(printed, 1) if text == "          resources:"]
    findings = [finding_at(n, 11, "h2o/templates/deployment.yaml") for n in lines]
    located = HelmOrigin(request, "h2o", str(chart), None).locate(findings, rendered)
    assert [(f.line, f.column) for f in located] == expected
    assert {f.path for f in located} == {f"{chart}/templates/deployment.yaml"}
    # The chart itself is never written: the marks go into a copy.
    assert (chart / "templates" / "deployment.yaml").read_text() == _TWO_BACKENDS


def test_a_marked_render_never_writes_through_a_linked_template(helm: Path, tmp_path: Path) -> None:
    chart = _two_backends(tmp_path, "")
    (chart / "templates" / "deployment.yaml").unlink()
    real = chart / "templates" / "_backends.tpl"
    real.write_text(_TWO_BACKENDS)
    (chart / "templates" / "deployment.yaml").symlink_to("_backends.tpl")
    request = HelmRender(chart, "h2o", None, ())
    rendered = render_chart(request, None)
    line = rendered.splitlines().index("          resources:") + 1
    (found,) = HelmOrigin(request, "h2o", str(chart), None).locate(
        [finding_at(line, 11, "h2o/templates/deployment.yaml")], rendered
    )
    # The link is not replaced in the copy (it may lead out of it): the line stays unknown.
    assert (found.line, found.column) == (1, 1)
    assert real.read_text() == _TWO_BACKENDS


# A template that prints something new at every render (kubeflow/arena's serving charts
# annotate their objects with `"helm.sh/created": {{ now | unixEpoch | quote }}`; a random
# token changes at every render, where a second changes only between seconds).
_NONCE = (
    "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: nonce\n"
    "  annotations: {created: {{ randAlphaNum 10 | quote }}}\n"
)


def _counting_helm(tool_env, helm4_dir: Path, tmp_path: Path) -> Path:
    """helm behind a script that writes a line per run to the file it returns."""
    calls = tmp_path / "calls"
    counting = tmp_path / "counting-helm"
    counting.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {helm4_dir / "helm"} "$@"\n')
    counting.chmod(0o755)
    tool_env(helm=counting)
    return calls


def test_a_line_the_marked_template_prints_anew_at_every_render_does_not_stop_its_marks(
    tool_env, helm4_dir: Path, tmp_path: Path
) -> None:
    # The deployments themselves carry random text (arena stamps the time in the document
    # whose lines are marked): their documents differ from the first render's beyond the
    # marks. One render more, unmarked, shows that line differs at every render; no other line
    # differs, so the marks still tell the two `resources:` apart.
    calls = _counting_helm(tool_env, helm4_dir, tmp_path)
    template = _TWO_BACKENDS.replace(
        "metadata: {name: tgi}", "metadata: {name: tgi, annotations: {r: {{ randAlphaNum 8 }}}}"
    )
    chart = _two_backends(tmp_path, template)
    request = HelmRender(chart, "h2o", None, ())
    rendered = render_chart(request, None)
    lines = [n for n, text in enumerate(rendered.splitlines(), 1) if text == "          resources:"]
    findings = [finding_at(n, 11, "h2o/templates/deployment.yaml") for n in lines]
    located = HelmOrigin(request, "h2o", str(chart), None).locate(findings, rendered)
    assert [(f.line, f.column) for f in located] == [(11, 11), (25, 11)]
    # The render, the values file's `resources` changed (which moves everything: no origin
    # there), the marked render and the render that shows which line changes on its own.
    assert len(calls.read_text().splitlines()) == 4


def test_only_lines_that_change_at_every_render_may_differ_from_the_first_render() -> None:
    rendered = "---\n# Source: h2o/templates/a.yaml\nkind: A\nat: 1\nb: x\n"
    # A line of the marked template's document that differs, as a mark would change it: the
    # marks tell nothing, unless a plain render changes that line too (`changing`).
    again = rendered.replace("at: 1", "at: 2")
    assert not _same_document_lines(rendered, again, "h2o/templates/a.yaml")
    assert _same_document_lines(rendered, again, "h2o/templates/a.yaml", frozenset({4}))
    assert not _same_document_lines(rendered, again, "h2o/templates/a.yaml", frozenset({5}))
    # A line more is never a line that changes on its own.
    assert not _same_document_lines(rendered, again + "c: y\n", "h2o/templates/a.yaml")
    # Offsets matter to the values trace: a changing line keeps its length.
    assert _same_but(again, rendered, frozenset({4}))
    assert not _same_but(rendered.replace("at: 1", "at: 10"), rendered, frozenset({4}))


def test_values_traced_by_one_render_despite_a_line_that_changes_at_every_render(
    tool_env, helm4_dir: Path, tmp_path: Path
) -> None:
    calls = _counting_helm(tool_env, helm4_dir, tmp_path)
    chart = _two_backends(tmp_path, _TWO_BACKENDS)
    (chart / "templates" / "nonce.yaml").write_text(_NONCE)
    request = HelmRender(chart, "h2o", None, ())
    rendered = render_chart(request, None)
    printed = rendered.splitlines()
    web = printed.index("              nvidia.com/gpu: 1") + 1
    tgi = printed.index("              nvidia.com/gpu: 4") + 1
    findings = [finding_at(web, 31, None), finding_at(tgi, 31, None)]
    located = HelmOrigin(request, "h2o", str(chart), None).locate(findings, rendered)
    values = (chart / "values.yaml").as_posix()
    assert [(f.path, f.line, f.column) for f in located] == [(values, 1, 59), (values, 2, 59)]
    # The render, the one render with both values changed, and the render that shows which
    # line changes on its own: no render per value.
    assert len(calls.read_text().splitlines()) == 3


LOCAL_AI = FIXTURES / "real" / "go-skynet-helm" / "local-ai"


def test_a_line_the_template_writes_several_times_is_placed_by_the_one_every_render_prints(
    helm: Path, tmp_path: Path
) -> None:
    # `resources:` is written for extra init containers, sidecars (each inside a `range` and an
    # `if`) and the main container (at the top level): with no sidecar or init container, the
    # one rendered line is the main container's.
    template = LOCAL_AI / "templates" / "deployment.yaml"
    lines = template.read_text().splitlines()
    main = [n for n, text in enumerate(lines, 1) if text.strip() == "resources:"][-1]
    source = "local-ai/templates/deployment.yaml"

    def located(*values: Path) -> tuple[int, int]:
        request = HelmRender(LOCAL_AI, "local-ai", None, (LOCAL_AI / "values-gpu.yaml", *values))
        rendered = render_chart(request, None)
        printed = rendered.splitlines()
        line = len(printed) - printed[::-1].index("          resources:")
        (found,) = HelmOrigin(request, "local-ai", str(LOCAL_AI), None, trace_values=False).locate(
            [finding_at(line, 11, source)], rendered
        )
        assert found.path == str(template)
        return found.line, found.column

    assert located() == (main, 11)
    # A sidecar with resources prints a second `resources:` from inside its `range`: which
    # line printed which is no longer sure, and the finding stays at the template's line 1.
    sidecar = tmp_path / "sidecar.yaml"
    sidecar.write_text(
        "sidecarContainers:\n- name: proxy\n  image: proxy:1\n  resources: {limits: {cpu: 1}}\n"
    )
    assert located(sidecar) == (1, 1)


def test_the_lines_every_render_prints_once_are_outside_control_and_actions() -> None:
    template = "\n".join(
        [
            "spec:",  # 1: printed once
            "  {{- if .Values.a }}",  # 2: control
            "  a: 1",  # 3: inside `if`
            "  {{- else }}",  # 4: control
            "  a: 2",  # 5: inside `if`
            "  {{- end }}",  # 6: control
            "  b: {{ .Values.b }}",  # 7: printed once, the next line's text after it
            '  {{- include "x" (dict',  # 8: an action (over lines 8-9) prints any text
            '    "k" 1) }}',  # 9
            "  c: 3",  # 10: printed once
            "  d: {{ .Values.d -}}",  # 11: trims the line break after it
            "  e: 4",  # 12: joined to line 11
            "{{- range .Values.items }}",  # 13
            "  - {{ . }}",  # 14: once per item
            "{{- end }}",  # 15
            "resources:",  # 16: printed once, what follows starts on a line of its own
            "  {{- toYaml .Values.resources | nindent 2 }}",  # 17
            "f: 5",  # 18: printed once
        ]
    )
    assert _unconditional_lines(template) == {1, 7, 10, 16, 18}


def test_a_chart_is_rendered_for_the_release_given_and_keeps_a_render_per_release(
    helm: Path, tmp_path: Path
) -> None:
    chart = tmp_path / "app"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        'apiVersion: v2\nname: app\nversion: 0.1.0\nkubeVersion: "< 1.33.0-0"\n'
    )
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
        "data: {release: {{ .Capabilities.KubeVersion.Version | quote }}}\n"
    )
    cache = tmp_path / "cache"
    assert 'release: "v1.31.0"' in render_chart(HelmRender(chart, "a", kube_version="1.31"), cache)
    # The cache keeps each release's render apart.
    assert 'release: "v1.32.0"' in render_chart(HelmRender(chart, "a", kube_version="1.32"), cache)
    with pytest.raises(RenderError) as caught:
        render_chart(HelmRender(chart, "a"), cache)  # helm's default release, newer
    assert "chart requires kubeVersion: < 1.33.0-0" in str(caught.value)
    assert caught.value.pos == (4, 1)


# ROCm/gpu-operator (helm-charts-k8s/templates/_operator-helpers.tpl and
# dra-driver-deviceclass.yaml at 6df13c17, Apache-2.0): the DeviceClass is written in the
# newest `resource.k8s.io` version the cluster serves.
DRA_VERSION_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: amd\nversion: 0.1.0\n",
    "templates/_helpers.tpl": (
        '{{- define "amd.draApi" -}}\n'
        '{{- if .Capabilities.APIVersions.Has "resource.k8s.io/v1" -}}\nresource.k8s.io/v1\n'
        '{{- else if $.Capabilities.APIVersions.Has "resource.k8s.io/v1beta2" -}}\n'
        "resource.k8s.io/v1beta2\n"
        '{{- else if .Capabilities.APIVersions.Has "resource.k8s.io/v1beta1" -}}\n'
        "resource.k8s.io/v1beta1\n{{- end -}}\n{{- end }}\n"
    ),
    "templates/deviceclass.yaml": (
        '{{- $api := include "amd.draApi" . -}}\n{{- if $api }}\napiVersion: {{ $api }}\n'
        "kind: DeviceClass\nmetadata: {name: gpu.amd.com}\n{{- end }}\n"
    ),
}


def served(release: tuple[int, int]) -> ServedApis:
    """What `release` serves, as a run against a profile of that release renders for."""
    known = kube.served_apis(release)
    assert known is not None
    return ServedApis(*known)


def test_a_charts_probes_of_kubernetes_apis_are_answered_for_the_clusters_release(
    helm: Path, tmp_path: Path
) -> None:
    chart = write_chart(tmp_path / "amd", DRA_VERSION_CHART)
    before = {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()}
    # helm alone answers from the release it was built with, whatever --kube-version says.
    assert "apiVersion: resource.k8s.io/v1\n" in render_chart(
        HelmRender(chart, "a", kube_version="1.32"), None
    )
    cache = tmp_path / "cache"
    for release, api in (((1, 32), "v1beta1"), ((1, 33), "v1beta2"), ((1, 34), "v1")):
        request = HelmRender(
            chart, "a", kube_version=f"1.{release[1]}", served_apis=served(release)
        )
        assert f"apiVersion: resource.k8s.io/{api}\n" in render_chart(request, cache)
    # The rewritten probes live in a copy: the user's chart is as it was.
    assert {p: p.read_bytes() for p in chart.rglob("*") if p.is_file()} == before


def test_a_release_that_serves_none_of_the_probed_versions_renders_none(
    helm: Path, tmp_path: Path
) -> None:
    chart = write_chart(tmp_path / "amd", DRA_VERSION_CHART)
    request = HelmRender(chart, "a", kube_version="1.25", served_apis=served((1, 25)))
    assert "DeviceClass" not in render_chart(request, None)


def test_only_a_release_number_becomes_helms_kube_version() -> None:
    # The profile and the config come with the pull request: what is not `MAJOR.MINOR` is
    # never passed to helm.
    assert "--kube-version=1.31.0" in HelmRender(NIM, "a", kube_version="1.31").arguments(NIM)
    for written in ("1.31 --set=x=1", "v1.31", "1", "1.31.2"):
        arguments = HelmRender(NIM, "a", kube_version=written).arguments(NIM)
        assert not any(a.startswith("--kube-version") for a in arguments)


# llm-d-incubation/llm-d-modelservice (templates/_helpers.tpl at 3051935e): the accelerator's
# resource name is a value of the chart's `accelerator.resources` map, written as a key beside
# the user's cpu and memory, which toYaml sorts.
_ACCELERATOR_TEMPLATE = """\
{{- $limits := deepCopy .Values.resources.limits -}}
{{- $name := index .Values.accelerator.resources .Values.accelerator.type -}}
{{- $limits = mergeOverwrite $limits (dict $name "1") }}
kind: Pod
apiVersion: v1
metadata: {name: vllm}
spec:
  containers:
    - name: vllm
      image: vllm:1
      resources:
        limits:
          {{- toYaml $limits | nindent 10 }}
"""
_ACCELERATOR_VALUES = """\
accelerator:
  type: intel-xe
  resources:
    nvidia: nvidia.com/gpu
    intel-xe: gpu.intel.com/xe
resources:
  limits: {cpu: "8", memory: 24Gi}
"""


def test_a_values_text_rendered_as_a_key_toyaml_sorts_is_traced_to_the_values_file(
    helm: Path, tmp_path: Path
) -> None:
    chart = tmp_path / "modelservice"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: modelservice\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(_ACCELERATOR_VALUES)
    (chart / "templates" / "pod.yaml").write_text(_ACCELERATOR_TEMPLATE)
    request = HelmRender(chart, "ms", None, ())
    rendered = render_chart(request, None)
    printed = rendered.splitlines()
    line = next(n for n, text in enumerate(printed, 1) if "gpu.intel.com/xe" in text)
    assert [text.strip() for text in printed[line - 2 : line + 1]] == [
        'cpu: "8"',
        'gpu.intel.com/xe: "1"',
        "memory: 24Gi",
    ]
    origin = HelmOrigin(request, "ms", str(chart), None)
    (located,) = origin.locate([finding_at(line, 11, "modelservice/templates/pod.yaml")], rendered)
    # `zzz.zzzzz.zzz/zz` would sort after `memory` and move the line: the proof keeps `g`.
    assert (located.path, located.line, located.column) == (f"{chart}/values.yaml", 5, 15)
