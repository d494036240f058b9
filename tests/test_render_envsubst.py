"""Env templates: one GPU008 note per file until its placeholders are given values."""

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


def test_placeholders_where_the_api_needs_a_value_make_one_issue_and_no_object() -> None:
    loaded = load_text("pod.yaml", TEMPLATE)
    assert loaded.documents == ()
    (issue,) = loaded.issues
    assert issue.kind is IssueKind.ENV_TEMPLATE
    assert issue.pos == (17, 27)
    assert "`${GPU_PER_NODE}`, `$MEMORY` where the API needs a value" in issue.message


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
    assert (issue.kind, issue.pos, loaded.documents) == (IssueKind.ENV_TEMPLATE, pos, ())
    assert f"({placeholders} where the API needs a value)" in issue.message
