"""Env templates: a placeholder makes only its field unknown; one GPU008 note per file lists
what was not judged until the values are given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.loader import load_text, substitute
from gpulint.model import IssueKind

TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  annotations:
    note: "built by ${CI_PIPELINE}"
spec:
  containers:
    - name: c
      image: trainer:1
      command: ["sh", "-c", "echo $HOME ${HOSTNAME}"]
      env:
        - name: WORLD
          value: "${WORLD_SIZE}"
      resources:
        limits:
          nvidia.com/gpu: ${GPU_PER_NODE}
          memory: $MEMORY
"""


def test_substitute_replaces_only_the_given_names_in_both_spellings() -> None:
    text = "a: ${GPU}\nb: $GPU\nc: ${OTHER}\nd: $GPUS\n"
    assert substitute(text, {"GPU": "8"}) == "a: 8\nb: 8\nc: ${OTHER}\nd: $GPUS\n"


def test_placeholders_where_the_api_needs_a_value_make_one_issue_listing_them() -> None:
    loaded = load_text("pod.yaml", TEMPLATE)
    assert [d.ref.name for d in loaded.documents] == ["trainer"]
    (issue,) = loaded.issues
    assert issue.kind is IssueKind.ENV_TEMPLATE
    assert issue.pos == (17, 27)
    assert (
        "not judged: `spec.containers[0].resources.limits.nvidia.com/gpu` is `${GPU_PER_NODE}`, "
        "`spec.containers[0].resources.limits.memory` is `$MEMORY` (the rest is checked)"
    ) in issue.message
    # What the scheduler reads of them is left to the values: the whole `resources` block.
    assert [(u.start, u.end[0]) for u in loaded.unknown] == [((15, 7), 18), ((15, 7), 18)]


def test_values_to_fill_in_make_a_note_of_their_own_beside_the_envsubst_one() -> None:
    text = TEMPLATE.replace("memory: $MEMORY", "memory: <memory>").replace(
        "image: trainer:1", "image: <image>"
    )
    loaded = load_text("pod.yaml", text)
    env, fill = loaded.issues
    assert (env.kind, env.pos) == (IssueKind.ENV_TEMPLATE, (17, 27))
    assert "`${GPU_PER_NODE}` (the rest is checked)" in env.message
    assert (fill.kind, fill.pos) == (IssueKind.FILL_IN, (18, 19))
    assert fill.message == (
        "this file is a sample with values to fill in; not judged: "
        "`spec.containers[0].resources.limits.memory` is `<memory>` (the rest is checked); the "
        "API server refuses them as written: check the copy you apply, with its values"
    )


def test_placeholders_only_in_text_expanded_at_run_time_are_left_alone() -> None:
    text = TEMPLATE.replace("${GPU_PER_NODE}", "1").replace("$MEMORY", "1Gi")
    loaded = load_text("pod.yaml", text)
    assert [d.ref.name for d in loaded.documents] == ["trainer"]
    assert loaded.issues == ()


def test_the_values_given_are_substituted_before_checking() -> None:
    loaded = load_text("pod.yaml", TEMPLATE, {"GPU_PER_NODE": "2", "MEMORY": "8Gi"})
    (document,) = loaded.documents
    limits = document.obj["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 2, "memory": "8Gi"}


def test_var_and_config_variables_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pod.yaml").write_text(TEMPLATE)

    def codes(*args: str) -> list[tuple[str, int, int]]:
        result = CliRunner().invoke(main, ["check", "--format", "json", *args, "pod.yaml"])
        assert result.exit_code in (0, 1), result.output
        return [(f["code"], f["line"], f["column"]) for f in json.loads(result.stdout)["findings"]]

    assert codes("--isolated") == [("GPU008", 17, 27)]
    # A fractional GPU once substituted: the file is checked like any other.
    half = codes("--isolated", "--var", "GPU_PER_NODE=0.5", "--var", "MEMORY=8Gi")
    assert ("GPU003", 17, 27) in half
    (tmp_path / ".gpulint.yaml").write_text("variables:\n  GPU_PER_NODE: 1\n  MEMORY: 8Gi\n")
    assert "GPU008" not in {code for code, _, _ in codes()}
    assert codes("--var", "MEMORY=$LATER") == [("GPU008", 18, 19)]


POD_HEAD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"


@pytest.mark.parametrize(
    ("text", "placeholders", "pos"),
    [
        # Aliased out of runtime text into labels: a placeholder where the labels are.
        (
            POD_HEAD + "  annotations: &notes\n    team: ${TEAM}\n  labels: *notes\n",
            "`${TEAM}`",
            (6, 11),
        ),
        # Merged out of runtime text into a node selector.
        (
            POD_HEAD + "  annotations: &notes {zone: $ZONE}\nspec:\n  nodeSelector: {<<: *notes}\n",
            "`$ZONE`",
            (5, 30),
        ),
        # An alias of a placeholder, where it is: the alias's position.
        (
            POD_HEAD + "  annotations: {team: &team $TEAM}\n  labels: {team: *team}\n",
            "`$TEAM`",
            (6, 18),
        ),
        # A key.
        (POD_HEAD + "  labels:\n    ${KEY}: x\n", "`${KEY}`", (6, 5)),
        # A List's items are the objects, its own fields are not.
        (
            'apiVersion: v1\nkind: List\nmetadata: {resourceVersion: "$RV"}\nitems:\n'
            '- {apiVersion: v1, kind: ConfigMap, metadata: {name: "${NAME}"}}\n',
            "`${NAME}`",
            (5, 54),
        ),
        # Replaced by the same key written again, or by a merge written after it.
        (POD_HEAD + "  labels:\n    tier: ${TIER}\n    tier: web\n", None, None),
        (
            POD_HEAD + "  annotations: &notes {tier: web}\n  labels: {tier: $TIER, <<: *notes}\n",
            None,
            None,
        ),
    ],
    ids=["alias", "merge", "aliased-scalar", "key", "list", "duplicate", "merged-over"],
)
def test_placeholders_count_where_the_object_holds_them(
    text: str, placeholders: str | None, pos: tuple[int, int] | None
) -> None:
    loaded = load_text("pod.yaml", text)
    found = [i for i in loaded.issues if i.kind is IssueKind.ENV_TEMPLATE]
    if placeholders is None:
        assert (found, len(loaded.documents)) == ([], 1)
        return
    (issue,) = loaded.issues
    assert (issue.kind, issue.pos, len(loaded.documents)) == (IssueKind.ENV_TEMPLATE, pos, 1)
    assert f" is {placeholders} (the rest is checked)" in issue.message


# A GKE sample's shape: the service account and a Cloud Storage FUSE bucket come from the
# environment; neither changes what the scheduler decides. Beside them: a GPU request the
# `resource:` typo drops, a selector for a node group the cluster lacks, and more 8-GPU pods
# than the p4d pool can ever hold.
GKE_SAMPLE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 5
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      serviceAccountName: $K8S_SA_NAME
      containers:
      - name: trainer
        image: trainer:1.0
        resources:
          requests: {cpu: "32", memory: 256Gi}
          limits: {memory: 256Gi, nvidia.com/gpu: 8}
      volumes:
      - name: data
        csi:
          driver: gcsfuse.csi.storage.gke.io
          volumeAttributes:
            bucketName: $GSBUCKET
---
apiVersion: v1
kind: Pod
metadata: {name: serve, namespace: ml}
spec:
  serviceAccountName: ${K8S_SA_NAME}
  nodeSelector:
    eks.amazonaws.com/nodegroup: a100-pool
  containers:
  - name: serve
    image: serve:1.0
    resources:
      limits: {nvidia.com/gpu: 1}
  - name: sidecar
    image: sidecar:1.0
    resource:
      limits: {nvidia.com/gpu: 1}
"""
PROFILE = Path(__file__).parent.parent / "fixtures" / "profiles" / "placement-eks.yaml"


def _findings(tmp_path: Path, text: str, *args: str) -> list[tuple[str, int, int, str]]:
    (tmp_path / "sample.yaml").write_text(text)
    result = CliRunner().invoke(
        main,
        ["check", "--isolated", "--format", "json", "--profile", str(PROFILE), *args],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    found = json.loads(result.stdout)["findings"]
    return [(f["code"], f["line"], f["column"], f["message"]) for f in found]


def test_placeholders_the_scheduler_never_reads_leave_every_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    templated = _findings(tmp_path, GKE_SAMPLE, "sample.yaml")
    substituted = _findings(
        tmp_path,
        GKE_SAMPLE.replace("${K8S_SA_NAME}", "sa")
        .replace("$K8S_SA_NAME", "sa")
        .replace("$GSBUCKET", "bucket"),
        "sample.yaml",
    )
    assert {code for code, *_ in substituted} >= {"GPU004", "GPU103", "GPU201"}
    note = [f for f in templated if f[0] == "GPU008"]
    assert [f for f in templated if f[0] != "GPU008"] == substituted
    assert note == [
        (
            "GPU008",
            12,
            27,
            "this file is an envsubst template; not judged: `serviceAccountName` is "
            "`$K8S_SA_NAME`, `volumes[0].csi.volumeAttributes.bucketName` is `$GSBUCKET`, "
            "`spec.serviceAccountName` is `${K8S_SA_NAME}` (the rest is checked); give the "
            "values (--var NAME=VALUE, or `variables:` in the config) to check them too",
        )
    ]
    # Given their values, the file is checked in full and no note is left.
    given = _findings(
        tmp_path, GKE_SAMPLE, "--var", "K8S_SA_NAME=sa", "--var", "GSBUCKET=b", "sample.yaml"
    )
    assert given == substituted


def test_a_replica_count_placeholder_leaves_out_only_what_counts_pods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    known = _findings(tmp_path, GKE_SAMPLE, "sample.yaml")
    unknown = _findings(tmp_path, GKE_SAMPLE.replace("replicas: 5", "replicas: $N"), "sample.yaml")
    assert ("GPU201", 5, 3) in [f[:3] for f in known]
    assert [f for f in unknown if f[0] != "GPU008"] == [
        f for f in known if f[0] not in ("GPU008", "GPU201")
    ]
    (note,) = (f for f in unknown if f[0] == "GPU008")
    assert note[1:3] == (5, 13)
    assert "not judged: `spec.replicas` is `$N`, `serviceAccountName` is" in note[3]


# A pod asking `${GPUS}` GPUs with a selector for a node group the cluster lacks, and one whose
# GPU count a placeholder holds while its placement fits.
GPU_AMOUNT = """\
apiVersion: v1
kind: Pod
metadata: {name: serve, namespace: ml}
spec:
  nodeSelector:
    eks.amazonaws.com/nodegroup: a100-pool
  containers:
  - name: serve
    image: serve:1.0
    resources:
      limits: {nvidia.com/gpu: "${GPUS}"}
---
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: train
    image: train:1.0
    resources:
      limits: {nvidia.com/gpu: $GPUS}
"""


def test_a_gpu_amount_placeholder_still_makes_a_gpu_pod(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = _findings(tmp_path, GPU_AMOUNT, "sample.yaml")
    # The pod asks for GPUs, how many is not known: its selector is judged against the GPU
    # pools as with any count (before, the pod was taken for one asking nothing).
    assert found == [
        (
            "GPU103",
            6,
            5,
            "nodeSelector eks.amazonaws.com/nodegroup=a100-pool names a pool this cluster does "
            "not have (pools by eks.amazonaws.com/nodegroup: g5, g6-inference, p4d, "
            "p5-reserved, system): the pod stays Pending",
        ),
        (
            "GPU008",
            11,
            32,
            "this file is an envsubst template; not judged: "
            "`spec.containers[0].resources.limits.nvidia.com/gpu` is `${GPUS}`, "
            "`spec.containers[0].resources.limits.nvidia.com/gpu` is `$GPUS` (the rest is "
            "checked); give the values (--var NAME=VALUE, or `variables:` in the config) to "
            "check them too",
        ),
    ]
    # With a count given, the same selector finding stands, the note goes, and what the
    # placeholder's `resources` block decides (QoS) is judged too.
    given = _findings(tmp_path, GPU_AMOUNT, "--var", "GPUS=1", "sample.yaml")
    assert [f[:3] for f in given] == [("GPU103", 6, 5), ("GPU601", 10, 5), ("GPU601", 21, 5)]
    assert given[0] == found[0]


COUNTED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: many, namespace: ml}
spec:
  replicas: 500
  selector:
    matchLabels: {app: many}
  template:
    metadata:
      labels: {app: many}
    spec:
      containers:
      - name: c
        image: c:1.0
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {memory: 1Gi, nvidia.com/gpu: $GPUS}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: "0"}
"""


def test_a_gpu_amount_placeholder_leaves_the_gpu_arithmetic_not_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # Capacity and quota multiply the GPUs per pod: with the amount unknown they are listed
    # as not judged, not computed with a count nobody wrote.
    templated = _findings(tmp_path, COUNTED, "sample.yaml")
    assert [f[:3] for f in templated] == [("GPU008", 17, 49)]
    assert (
        "not judged: `containers[0].resources.limits.nvidia.com/gpu` is `$GPUS`"
        in (templated[0][3])
    )
    given = _findings(tmp_path, COUNTED, "--var", "GPUS=2", "sample.yaml")
    assert [f[:3] for f in given] == [("GPU201", 5, 3), ("GPU301", 5, 3)]
    assert "needs 1000 nvidia.com/gpu (replicas: 500 × 2 per pod)" in given[0][3]
