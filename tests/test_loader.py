"""The loader: discovery, documents and their origins, Lists, and what is not a manifest."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpulint.catalogue import catalogue_codes
from gpulint.config import load_config
from gpulint.errors import GpulintError
from gpulint.loader import discover, display_path, load, load_bytes, load_text
from gpulint.model import IssueKind
from gpulint.shapes import WorkloadShape

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec: {{}}\n"


def test_multi_document_file_gives_one_document_each() -> None:
    text = POD.format(name="a") + "---\n" + POD.format(name="b") + "...\n---\n"
    result = load_text("m.yaml", text)
    assert [d.ref.name for d in result.documents] == ["a", "b"]
    assert [d.kind_pos for d in result.documents] == [(2, 7), (8, 7)]
    assert result.issues == ()


def test_helm_source_comment_applies_to_the_documents_after_it_only() -> None:
    text = (
        "---\n# Source: chart/templates/a.yaml\n"
        + POD.format(name="a")
        + "---\n"
        + POD.format(name="no-source")
        + "---\n# Source: chart/templates/c.yaml\n"
        + POD.format(name="c")
    )
    documents = load_text("r.yaml", text).documents
    assert [(d.ref.name, d.source) for d in documents] == [
        ("a", "chart/templates/a.yaml"),
        ("no-source", None),
        ("c", "chart/templates/c.yaml"),
    ]


def test_source_comment_of_a_non_object_document_is_not_inherited() -> None:
    text = "# Source: chart/templates/NOTES.yaml\n# nothing rendered\n---\n" + POD.format(name="a")
    (document,) = load_text("r.yaml", text).documents
    assert document.source is None


def test_list_items_are_documents_with_their_own_positions() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: a, namespace: ml}\n"
        "- apiVersion: apps/v1\n  kind: DeploymentList\n  items:\n"
        "  - apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: b}\n"
        "- not an object\n"
    )
    documents = load_text("l.yaml", text).documents
    assert [str(d.ref) for d in documents] == ["Pod/ml/a", "Deployment/b"]
    assert [d.kind_pos for d in documents] == [(5, 9), (11, 11)]
    assert documents[1].ref.api_version == "apps/v1"


def test_json_file_with_positions() -> None:
    text = '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "metadata": {"name": "j"}\n}\n'
    (document,) = load_text("p.json", text).documents
    assert document.ref.name == "j"
    assert document.kind_pos == (3, 11)
    assert document.obj["metadata"].pos_of_key("name") == (4, 16)


@pytest.mark.parametrize(
    "text",
    [
        "replicaCount: 1\nresources:\n  limits: {nvidia.com/gpus: 1}\n",  # values.yaml
        "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",  # Chart.yaml
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n",
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n",  # a GitHub workflow
        "- id: gpulint\n  entry: gpulint check\n",  # .pre-commit-hooks.yaml
        # a list of jobs that names no Armada queue or job set: some other tool's
        "jobs:\n- podSpec: {containers: [{name: a, image: b}]}\n",
        # a `deploymentSpec` that is no Kubeflow Pipelines IR (no pipelineInfo, no root)
        "deploymentSpec:\n  executors: {a: {container: {image: b}}}\n",
        "apiVersion: v1\nkind: Config\nclusters: []\n",  # kubeconfig
        "",
        "# only a comment\n",
    ],
)
def test_files_that_are_not_manifests_are_skipped_silently(text: str) -> None:
    result = load_text("x.yaml", text)
    assert result.documents == ()
    assert result.issues == ()
    assert [f.path for f in result.files] == ["x.yaml"]


def test_an_armada_job_file_is_one_object_per_job() -> None:
    # `armadactl submit` reads `queue`, `jobSetId` and `jobs`; each job runs one pod, from its
    # `podSpec` or its one `podSpecs` item, in its own namespace.
    text = (
        "queue: q\njobSetId: set1\njobs:\n"
        "- namespace: ml\n  podSpec:\n    containers:\n"
        "    - {name: a, image: cuda, resources: {limits: {nvidia.com/gpu: 2}}}\n"
        "- podSpecs:\n  - containers:\n    - {name: b, image: cuda}\n"
        "- priority: 1\n"
    )
    result = load_text("jobs.yaml", text)
    assert [str(d.ref) for d in result.documents] == ["ArmadaJob/ml/set1[0]", "ArmadaJob/set1[1]"]
    assert result.issues == ()
    first, second = result.workloads
    assert [t.containers[0].resources.limits["nvidia.com/gpu"].amount for t in first.templates] == [
        2
    ]
    assert [t.role for t in second.templates] == ["podSpecs[0]"]
    # The server completes the pod: default cpu and memory limits, tolerations of its own.
    assert not first.templates[0].best_effort and first.templates[0].completed_by is not None


def test_a_kubeflow_pipelines_ir_is_one_object_whose_accelerator_is_unchecked() -> None:
    # `kfp.compiler` output: no Kubernetes object, the KFP driver builds each executor's pod
    # and writes its `resources.accelerator` into the pod's limits; its platform spec (the
    # second document) is no object either.
    text = (
        "deploymentSpec:\n  executors:\n    exec-a:\n      container:\n        image: cuda\n"
        "        resources:\n          accelerator: {resourceType: nvidia.com/gpu, "
        "resourceCount: '2'}\n"
        "pipelineInfo: {name: train}\nroot: {dag: {tasks: {}}}\n"
        "---\nplatforms: {kubernetes: {deploymentSpec: {executors: {}}}}\n"
    )
    result = load_text("pipeline.yaml", text)
    assert [str(d.ref) for d in result.documents] == ["PipelineSpec/train"]
    assert result.issues == () and result.workloads == ()
    (found,) = result.unchecked
    (request,) = found.requests
    assert (request.what, request.pos) == ("nvidia.com/gpu", (7, 11))
    assert request.field == "deploymentSpec.executors.exec-a.container.resources.accelerator"
    assert "Kubeflow Pipelines driver" in request.runs_in


def test_a_polyaxonfile_is_one_object_whose_run_is_unchecked() -> None:
    # A component, an operation patching its component's run and a preset: no Kubernetes
    # objects, the Polyaxon agent builds the pods when `polyaxon run` submits them. A
    # component that runs nothing and another tool's `kind: component` are no Polyaxonfiles.
    text = (
        "version: 1.1\nkind: component\nname: train\nrun:\n  kind: job\n  container:\n"
        "    image: cuda\n    resources:\n      limits: {nvidia.com/gpu: '{{ gpus }}'}\n"
        "---\nversion: 1.1\nkind: operation\nhubRef: notebook\n"
        "runPatch: {container: {resources: {limits: {nvidia.com/gpu: 1}}}}\n"
        "---\nrunPatch: {container: {resources: {limits: {cpu: 2}}}}\n"
        "---\nversion: 1.1\nkind: component\nname: empty\n"
        "---\nkind: component\nname: widget\nrun: {}\n"
    )
    result = load_text("polyaxonfile.yaml", text)
    refs = [str(d.ref) for d in result.documents]
    assert refs == ["Polyaxonfile/train", "Polyaxonfile/operation", "Polyaxonfile/preset"]
    assert result.issues == () and result.workloads == ()
    first, second = result.unchecked
    assert [(r.what, r.pos, r.field) for r in (*first.requests, *second.requests)] == [
        ("nvidia.com/gpu", (9, 16), "run.container.resources.limits"),
        ("nvidia.com/gpu", (14, 45), "runPatch.container.resources.limits"),
    ]
    assert "Polyaxon agent" in first.requests[0].runs_in


def test_non_mapping_documents_in_a_manifest_file_are_issues() -> None:
    text = POD.format(name="a") + "---\n- 1\n---\nplain words\n"
    result = load_text("m.yaml", text)
    assert [(i.kind, i.pos, i.message) for i in result.issues] == [
        (
            IssueKind.NOT_A_MAPPING,
            (7, 1),
            "document is a list, not a Kubernetes object (a mapping)",
        ),
        (
            IssueKind.NOT_A_MAPPING,
            (9, 1),
            "document is a string, not a Kubernetes object (a mapping)",
        ),
    ]


def test_syntax_error_keeps_the_documents_before_it() -> None:
    text = POD.format(name="a") + "---\nkind: Pod\nmetadata: {name: [b}\n"
    result = load_text("m.yaml", text)
    assert [d.ref.name for d in result.documents] == ["a"]
    ((kind, pos),) = [(i.kind, i.pos) for i in result.issues]
    assert kind is IssueKind.SYNTAX
    assert pos == (8, 20)


def test_duplicate_key_names_the_first_occurrence() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec: {}\nspec: {x: 1}\n"
    (issue,) = load_text("d.yaml", text).issues
    assert (issue.kind, issue.pos) == (IssueKind.DUPLICATE_KEY, (6, 1))
    assert issue.message == (
        "key `spec` is written twice in one mapping (lines 5 and 6): `kubectl apply` keeps the "
        "later value without a word (the first never reaches the API server), kustomize "
        "refuses the file"
    )


def test_object_without_name_points_at_metadata_or_kind() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {}\n---\napiVersion: v1\nkind: Pod\n"
    issues = load_text("n.yaml", text).issues
    assert [(i.kind, i.pos) for i in issues] == [
        (IssueKind.MISSING_NAME, (3, 1)),
        (IssueKind.MISSING_NAME, (7, 7)),
    ]
    assert issues[0].message == "Pod has neither metadata.name nor metadata.generateName"


def test_generate_name_is_a_name() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: run-\n"
    result = load_text("g.yaml", text)
    assert result.issues == ()
    assert result.documents[0].ref.name == "run-"


def test_not_utf8_is_an_issue_at_the_first_bad_byte() -> None:
    result = load_bytes("l.yaml", b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: caf\xe9\n")
    (issue,) = result.issues
    assert (issue.kind, issue.pos) == (IssueKind.NOT_UTF8, (4, 9))
    assert result.documents == ()


def test_utf8_bom_is_accepted() -> None:
    result = load_bytes("b.yaml", "\ufeff".encode() + POD.format(name="a").encode())
    assert [d.ref.name for d in result.documents] == ["a"]


def test_unrendered_template_is_one_issue_and_nothing_else() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n  {{- end }}\n"
    result = load_text("templates/pod.yaml", text)
    assert result.documents == ()
    ((kind, pos),) = [(i.kind, i.pos) for i in result.issues]
    assert (kind, pos) == (IssueKind.UNRENDERED_TEMPLATE, (4, 9))


def test_braces_in_a_file_that_parses_are_plain_yaml() -> None:
    text = POD.format(name="a").replace("spec: {}", 'spec:\n  hostname: "{{ not-a-template }}"')
    result = load_text("q.yaml", text)
    assert result.issues == ()
    assert [d.ref.name for d in result.documents] == ["a"]


def test_inline_suppressions_are_read_with_their_selectors_reasons_and_columns() -> None:
    text = (
        "kind: Pod  # gpulint: ignore[gpu002, GPU601]\n"
        "a: 1 # gpulint: ignore\n"
        "b: '# gpulint: ignored'\n"
        "c: 2  #gpulint:ignore[GPU003]\n"
        "d: 3  # gpulint: ignore[unknown-gpu-resource: vendor image, no requests]\n"
        "e: 4  # gpulint: ignore[GPU601] -- tracked in OPS-12  # expect: GPU006:7\n"
        "f: 5  # gpulint: ignore: every rule, for now\n"
    )
    suppressions = load_text("s.yaml", text).files[0].suppressions
    assert {
        line: (s.column, s.selectors, s.reason, s.problem) for line, s in suppressions.items()
    } == {
        1: (12, ("gpu002", "GPU601"), "", None),
        2: (6, (), "", None),
        4: (7, ("GPU003",), "", None),
        5: (7, ("unknown-gpu-resource",), "vendor image, no requests", None),
        6: (7, ("GPU601",), "tracked in OPS-12", None),
        7: (7, (), "every rule, for now", None),
    }


@pytest.mark.parametrize(
    ("comment", "problem"),
    [
        ("# gpulint: ignroe[GPU601]", 'expected "ignore" after "gpulint:", found "ignroe[GPU601]"'),
        ("# gpulint: disable", 'expected "ignore" after "gpulint:", found "disable"'),
        ("# gpulint: ignore[GPU601", '"ignore[GPU601": the "[" is never closed'),
        (
            "# gpulint: ignore[: why]",
            '"ignore[: why]" names no rule: write "ignore" to suppress every rule',
        ),
        (
            "# gpulint: ignore GPU601 vendor image",
            '"ignore GPU601 vendor image": put the codes or names in brackets, '
            '"ignore[GPU601]", and a reason after a colon',
        ),
    ],
)
def test_a_malformed_suppression_is_read_with_its_problem(comment: str, problem: str) -> None:
    suppression = load_text("s.yaml", f"a: 1  {comment}\n").files[0].suppressions[1]
    assert (suppression.column, suppression.selectors, suppression.problem) == (7, (), problem)


@pytest.fixture()
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with manifests at several depths, hidden dirs and other files."""
    for name in (
        "a.yaml",
        "b/c.yml",
        "b/d/e.json",
        "b/notes.md",
        ".git/config.yaml",
        ".github/workflows/ci.yaml",
        "b/.cache/x.yaml",
        "b/.hidden.yaml",
        "vendor/v.yaml",
    ):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_discover_is_recursive_sorted_and_skips_hidden(tree: Path) -> None:
    assert list(discover(["."])) == [
        "a.yaml",
        "b/c.yml",
        "b/d/e.json",
        "vendor/v.yaml",
    ]


def test_discover_gives_files_in_the_order_of_their_whole_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A directory's files sort by the directory's name and a `/`: `a.yaml` < `a/...` < `a0.yaml`.
    names = ("a/z.yaml", "a/b/x.yaml", "a.yaml", "a-b/y.yaml", "a0.yaml", "A.yaml")
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    expected = ["A.yaml", "a-b/y.yaml", "a.yaml", "a/b/x.yaml", "a/z.yaml", "a0.yaml"]
    assert list(discover(["."])) == expected == sorted(names)
    assert list(discover(["a", "a0.yaml", "A.yaml", "a.yaml"])) == [
        "A.yaml",
        "a.yaml",
        "a/b/x.yaml",
        "a/z.yaml",
        "a0.yaml",
    ]


def test_listed_inputs_walk_the_tree_once(tree: Path) -> None:
    listed = discover(["."], listed=True)
    walked = discover(["."])
    (tree / "b" / "late.yaml").write_text(POD.format(name="late"))
    # A listed run keeps what its one walk found; a plain one walks again on each iteration.
    assert list(listed) == list(listed) == ["a.yaml", "b/c.yml", "b/d/e.json", "vendor/v.yaml"]
    assert list(walked) == ["a.yaml", "b/c.yml", "b/d/e.json", "b/late.yaml", "vendor/v.yaml"]
    assert len(listed) == 4


def test_a_listed_walk_keeps_the_stat_of_each_file_it_met_by_its_own_name(tree: Path) -> None:
    (tree / "b" / "link.yaml").symlink_to(tree / "a.yaml")
    listed = discover(["."], listed=True)
    assert sorted(listed.stats) == ["a.yaml", "b/c.yml", "b/d/e.json", "vendor/v.yaml"]
    for name, info in listed.stats.items():
        assert (info.st_ino, info.st_size) == (os.lstat(name).st_ino, os.lstat(name).st_size)
    assert "b/link.yaml" not in listed.stats  # a symlink is stat'ed by whoever reads it
    assert discover(["."]).stats == {}


def test_discover_applies_the_exclude_predicate_to_dirs_and_files(tree: Path) -> None:
    found = list(discover(["."], lambda p: os.path.basename(p) in ("vendor", "c.yml")))
    assert found == ["a.yaml", "b/d/e.json"]


def test_discover_keeps_explicit_files_once_in_report_order(tree: Path) -> None:
    found = list(discover(["b/c.yml", "a.yaml", "b/c.yml", "b/notes.md"]))
    assert found == ["a.yaml", "b/c.yml", "b/notes.md"]


def test_discover_orders_by_display_path_whatever_the_given_spelling(tree: Path) -> None:
    given = [str(tree / "b"), "./vendor//", str(tree / "a.yaml")]
    found = list(discover(given, base=str(tree)))
    # Read by the paths given, normalised; reported, and ordered, relative to the base.
    assert found == [
        f"{tree}/a.yaml",
        f"{tree}/b/c.yml",
        f"{tree}/b/d/e.json",
        "vendor/v.yaml",
    ]
    shown = [display_path(f, str(tree)) for f in found]
    assert shown == ["a.yaml", "b/c.yml", "b/d/e.json", "vendor/v.yaml"]


def test_discover_missing_path_is_an_error(tree: Path) -> None:
    with pytest.raises(GpulintError, match=r"^missing\.yaml: no such file or directory$"):
        list(discover(["a.yaml", "missing.yaml"]))


def test_discover_refuses_a_url(tree: Path) -> None:
    with pytest.raises(GpulintError, match=r"^https://x/a\.yaml: not a local path; gpulint"):
        list(discover(["a.yaml", "https://x/a.yaml"]))


def test_display_path_is_relative_to_the_base_when_inside_it() -> None:
    assert display_path(Path("/repo/b/c.yml"), "/repo") == "b/c.yml"
    assert display_path("/repo/../up.yaml", "/repo/") == "../up.yaml"
    assert display_path(Path("/repository/x.yaml"), "/repo") == "/repository/x.yaml"
    assert display_path(Path("/somewhere/else.yaml"), "/repo") == "/somewhere/else.yaml"
    assert display_path("./b//c.yml", "/repo") == "b/c.yml"
    # Without a base, a path is shown as given, normalised: the working directory is not read.
    assert display_path(Path("/repo/b/c.yml")) == "/repo/b/c.yml"


def test_load_reads_files_then_stdin(tree: Path) -> None:
    result = load([Path("a.yaml")], ("<stdin>", POD.format(name="s").encode()))
    assert [f.path for f in result.files] == ["a.yaml", "<stdin>"]
    assert [(d.file.path, d.ref.name) for d in result.documents] == [
        ("a.yaml", "x"),
        ("<stdin>", "s"),
    ]


def test_unreadable_file_is_an_issue_and_the_other_files_are_read(tree: Path) -> None:
    result = load([Path("b"), Path("a.yaml")])
    assert [f.path for f in result.files] == ["b", "a.yaml"]
    ((kind, path, pos, message),) = [(i.kind, i.file.path, i.pos, i.message) for i in result.issues]
    assert (kind, path, pos) == (IssueKind.UNREADABLE, "b", (1, 1))
    assert message == "cannot read file: Is a directory"
    assert [d.ref.name for d in result.documents] == ["x"]


def test_symlink_loop_in_a_tree_is_an_unreadable_file(tree: Path) -> None:
    (tree / "b" / "loop.yaml").symlink_to("loop.yaml")
    found = list(discover(["b"]))
    assert found == ["b/c.yml", "b/d/e.json", "b/loop.yaml"]
    issue = next(i for i in load(map(Path, found)).issues)
    assert (issue.kind, issue.file.path, issue.message) == (
        IssueKind.UNREADABLE,
        "b/loop.yaml",
        "cannot read file: Too many levels of symbolic links",
    )


def test_symlinked_directories_are_not_followed(tree: Path) -> None:
    (tree / "b" / "up").symlink_to("..", target_is_directory=True)
    assert "b/up/a.yaml" not in list(discover(["b"]))


def test_directory_named_like_a_manifest_is_walked(tree: Path) -> None:
    (tree / "chart.yaml" / "t").mkdir(parents=True)
    (tree / "chart.yaml" / "t" / "pod.yaml").write_text(POD.format(name="p"))
    assert list(discover(["chart.yaml"])) == ["chart.yaml/t/pod.yaml"]
    assert "chart.yaml/t/pod.yaml" in list(discover(["."]))


def test_a_pipe_given_by_name_is_read_once_and_checked() -> None:
    # `<(...)` is a pipe: a run reads its inputs more than once, a pipe can be read only once.
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "cases" / "admission"
    manifest = shlex.quote(str(fixture / "GPU301-besteffort-scope.yaml"))
    gpulint = f"{shlex.quote(sys.executable)} -m gpulint check --format json"
    done = subprocess.run(
        ["bash", "-c", f"{gpulint} <(cat {manifest})"],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stdout)
    assert report["summary"]["objects"] == 2
    assert [(f["code"], f["line"], f["column"]) for f in report["findings"]] == [("GPU601", 19, 9)]


def test_fifo_in_a_tree_is_not_read(tree: Path) -> None:
    os.mkfifo(tree / "b" / "pipe.yaml")  # reading it would block forever
    assert "b/pipe.yaml" not in list(discover(["."]))


def test_a_file_reached_twice_is_read_once_under_its_first_path(tree: Path) -> None:
    (tree / "link.yaml").symlink_to("a.yaml")
    given = ["a.yaml", str(tree / "a.yaml"), "./a.yaml", ".", "link.yaml"]
    found = list(discover(given, base=str(tree)))
    assert found == ["a.yaml", "b/c.yml", "b/d/e.json", "vendor/v.yaml"]


def test_a_symlinked_file_in_one_tree_is_read_once_under_its_first_path(tree: Path) -> None:
    (tree / "0-link.yaml").symlink_to("a.yaml")  # reached before its target
    (tree / "b" / "z-link.yml").symlink_to("c.yml")  # reached after it
    assert list(discover(["."])) == ["0-link.yaml", "b/c.yml", "b/d/e.json", "vendor/v.yaml"]


# A team's training operator, declared in the config: one pod template per role under
# spec.roles, each role running spec.workers pods.
TRAINING_RUN_CONFIG = (
    "workloads:\n"
    "- kind: TrainingRun\n"
    "  apiVersion: train.example.com/*\n"
    "  podTemplates: [spec.roles.*.template]\n"
    "  replicas: spec.workers\n"
)
TRAINING_RUN = """\
apiVersion: train.example.com/v1
kind: TrainingRun
metadata:
  name: run
spec:
  workers: "three"
  roles:
    trainer:
      template:
        spec:
          containers:
          - name: trainer
            resources: [cpu]
          - not a container
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: run
spec:
  replicas: "three"
  template:
    spec:
      containers:
      - name: trainer
        resources: [cpu]
      - not a container
"""


def _declared_shapes(tmp_path: Path) -> tuple[WorkloadShape, ...]:
    config = tmp_path / ".gpulint.yaml"
    config.write_text(TRAINING_RUN_CONFIG)
    return load_config(config, catalogue_codes()).workloads


def test_a_declared_kind_gets_the_type_checks_of_a_built_in_kind(tmp_path: Path) -> None:
    declared = load_text("run.yaml", TRAINING_RUN, shapes=_declared_shapes(tmp_path))
    built_in = load_text("deployment.yaml", DEPLOYMENT)
    assert [(i.kind, i.pos, i.message) for i in declared.issues] == [
        (
            IssueKind.MALFORMED,
            (6, 12),
            "`spec.workers` is a string, not an integer; the API server rejects the object",
        ),
        (
            IssueKind.MALFORMED,
            (13, 24),
            "`spec.roles.trainer.template.spec.containers[0].resources` is a list, "
            "not a mapping; the API server rejects the object",
        ),
        (
            IssueKind.MALFORMED,
            (14, 13),
            "`spec.roles.trainer.template.spec.containers[1]` is a string, not a mapping; "
            "the API server rejects the object",
        ),
    ]
    # The same values in a Deployment: the same messages, but for the field paths.
    assert [i.message.split("`")[2] for i in declared.issues] == [
        i.message.split("`")[2] for i in built_in.issues
    ]
    assert [i.pos[1] for i in built_in.issues] == [13, 20, 9]


def test_a_declared_kind_is_not_typed_without_the_config() -> None:
    result = load_text("run.yaml", TRAINING_RUN)
    assert (result.issues, result.workloads) == ((), ())


def test_the_loader_gives_the_typed_workloads_of_its_documents(tmp_path: Path) -> None:
    text = POD.format(name="config") + "---\n" + TRAINING_RUN.replace('"three"', "3")
    text = text.replace("apiVersion: v1\nkind: Pod", "apiVersion: v1\nkind: ConfigMap", 1)
    text += "---\n" + DEPLOYMENT.replace('"three"', "2")
    result = load_text("m.yaml", text, shapes=_declared_shapes(tmp_path))
    assert [(w.document.ref.kind, w.replicas.value) for w in result.workloads] == [
        ("TrainingRun", 3),
        ("Deployment", 2),
    ]
    assert [w.document for w in result.workloads] == list(result.documents[1:])
    ((template,),) = [w.templates for w in result.workloads[:1]]
    assert (template.role, [c.name for c in template.containers]) == ("trainer", ["trainer"])


# One object of each way a kind keeps its pods (a plain path, `*` over a mapping, `[]` over a
# list, two roles over one list) and a kind gpulint does not read, each with accelerator
# requests its pod templates do not hold.
WALKED_ONCE = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: d, annotations: {gpu-fraction: "0.5"}}
spec:
  template:
    metadata: {annotations: {gpu-memory: "2000"}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      initContainers: [{name: b, resources: {limits: {amd.com/gpu: 1}}}]
      containers:
      - {name: a, resources: {limits: {nvidia.com/gpu: 1}}, env: [{name: A, value: b}]}
  volumeClaimTemplates:
  - spec: {resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        metadata: {annotations: {gpu-fraction: "0.5"}}
        spec: {containers: [{name: m, resources: {limits: {nvidia.com/gpu: 1}}}]}
    Worker: {replicas: 2, template: {spec: {containers: [{name: w}]}}}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec: {template: {spec: {containers: [{name: head}]}}}
  workerGroupSpecs:
  - groupName: gpu
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
        resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
---
apiVersion: disaggregatedset.x-k8s.io/v1alpha1
kind: DisaggregatedSet
metadata: {name: s}
spec:
  roles:
  - name: prefill
    spec:
      leaderWorkerTemplate:
        size: 2
        workerTemplate: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]}}
---
apiVersion: example.com/v1
kind: Trainer
metadata: {name: t}
spec:
  nodes:
  - resources: {limits: {nvidia.com/gpu: 8}, claims: [{name: ib}]}
    extra: [[{resources: {amd.com/gpu: 1}}]]
"""


def _count_walks(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[Any, dict[int, int]]:
    """Load `text` and ask for its unchecked requests, counting every enumeration of a
    mapping's keys or a list's items (lookups by key are not walks)."""
    from gpulint.rules.base import CheckContext
    from gpulint.yamltree import YMap, YSeq

    walks: dict[int, int] = {}

    def counted(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def enumerate_node(node: Any) -> Any:
            walks[id(node)] = walks.get(id(node), 0) + 1
            return method(node)

        return enumerate_node

    for kind, base, names in (
        (YMap, dict, ("items", "keys", "values", "__iter__")),
        (YSeq, list, ("__iter__",)),
    ):
        for name in names:
            monkeypatch.setattr(kind, name, counted(getattr(base, name)), raising=False)
    loaded = load_text("walked.yaml", text)
    context = CheckContext(loaded, loaded.workloads)
    found = [
        (unread.document.ref.kind, request.what, request.field)
        for unread in context.unchecked
        for request in unread.requests
    ]
    monkeypatch.undo()
    return (loaded, found), walks


@pytest.mark.parametrize(
    "text",
    [
        WALKED_ONCE,
        # `$` in text expanded at run time: the parser notes it while building the tree.
        WALKED_ONCE.replace("value: b}", "value: $(B)}, command: [sh, -c, 'echo ${HOSTNAME}']"),
    ],
    ids=["plain", "dollars"],
)
def test_each_mapping_and_list_of_a_document_is_walked_once(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    (loaded, found), walks = _count_walks(monkeypatch, text)

    assert [w.document.ref.kind for w in loaded.workloads] == [
        "StatefulSet",
        "PyTorchJob",
        "RayCluster",
        "DisaggregatedSet",
    ]
    assert found == [
        ("StatefulSet", "annotation gpu-fraction", "metadata.annotations"),
        ("StatefulSet", "annotation gpu-memory", "spec.template.metadata.annotations"),
        ("StatefulSet", "nvidia.com/gpu", "spec.volumeClaimTemplates[0].spec.resources.requests"),
        ("StatefulSet", "nvidia.com/gpu", "spec.volumeClaimTemplates[0].spec.resources.limits"),
        (
            "PyTorchJob",
            "annotation gpu-fraction",
            "spec.pytorchReplicaSpecs.Master.template.metadata.annotations",
        ),
        ("Trainer", "nvidia.com/gpu", "spec.nodes[0].resources.limits"),
        ("Trainer", "resource claim ib", "spec.nodes[0].resources.claims"),
        ("Trainer", "amd.com/gpu", "spec.nodes[0].extra[0][0].resources"),
    ]
    assert walks, "the walk enumerates mappings and lists"
    assert max(walks.values()) == 1


def test_an_env_template_is_walked_once_too(monkeypatch: pytest.MonkeyPatch) -> None:
    text = WALKED_ONCE.replace("replicas: 2", "replicas: $WORKERS")
    (loaded, found), walks = _count_walks(monkeypatch, text)

    assert [(issue.kind, issue.pos) for issue in loaded.issues] == [
        (IssueKind.ENV_TEMPLATE, (25, 24))
    ]
    # The placeholder leaves the rest of the file checked: the same objects, the same scan.
    assert len(loaded.documents) == 5
    assert [kind for kind, *_ in found][:2] == ["StatefulSet", "StatefulSet"]
    assert walks, "the walk enumerates mappings and lists"
    assert max(walks.values()) == 1
