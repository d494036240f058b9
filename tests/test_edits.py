"""Text edits: each changes only the characters or lines it names, or nothing at all."""

from __future__ import annotations

import pytest

from gpulint.edits import (
    AddKey,
    AppendItem,
    Rename,
    add_items,
    apply_edits,
    apply_fixes,
    yaml_scalar,
)
from gpulint.yamltree import parse

TOLERATION = (("key", "nvidia.com/gpu"), ("operator", "Exists"), ("effect", "NoSchedule"))


def test_rename_keeps_quotes_and_trailing_comment() -> None:
    text = 'limits:\n  "nvidia.com/gpus": 1  # two of them later\n'
    fixed, applied = apply_edits(text, [Rename((2, 3), "nvidia.com/gpus", "nvidia.com/gpu")])
    assert applied == 1
    assert fixed == 'limits:\n  "nvidia.com/gpu": 1  # two of them later\n'


def test_rename_of_a_plain_key_in_a_flow_mapping() -> None:
    text = "limits: {nvidia.com/gpus: 1, cpu: 2}\n"
    fixed, _ = apply_edits(text, [Rename((1, 10), "nvidia.com/gpus", "nvidia.com/gpu")])
    assert fixed == "limits: {nvidia.com/gpu: 1, cpu: 2}\n"


@pytest.mark.parametrize("pos", [(1, 11), (2, 1), (9, 1), (1, 99)])
def test_a_rename_that_no_longer_matches_changes_nothing(pos: tuple[int, int]) -> None:
    text = "limits: {nvidia.com/gpus: 1}\n"
    assert apply_edits(text, [Rename(pos, "nvidia.com/gpus", "nvidia.com/gpu")]) == (text, 0)


def test_append_item_follows_the_indented_dash_style_and_keeps_comments() -> None:
    text = (
        "spec:\n"
        "  tolerations:\n"
        "    - key: dedicated   # team pool\n"
        "      operator: Exists\n"
        "    # end of list\n"
        "  containers: []\n"
    )
    fixed, applied = apply_edits(text, [AppendItem((3, 7), (3, 7), 4, (TOLERATION,))])
    assert applied == 1
    assert fixed == (
        "spec:\n"
        "  tolerations:\n"
        "    - key: dedicated   # team pool\n"
        "      operator: Exists\n"
        "    - key: nvidia.com/gpu\n"
        "      operator: Exists\n"
        "      effect: NoSchedule\n"
        "    # end of list\n"
        "  containers: []\n"
    )


def test_append_item_after_a_multi_line_value_and_at_the_end_of_a_file_without_newline() -> None:
    text = "tolerations:\n- key: a\n  value: >-\n    folded\n    text"
    fixed, _ = apply_edits(text, [AppendItem((2, 3), (2, 3), 3, (TOLERATION,))])
    assert fixed == (
        "tolerations:\n- key: a\n  value: >-\n    folded\n    text\n"
        "- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule\n"
    )


def test_append_item_to_a_flow_sequence_is_not_attempted() -> None:
    text = "tolerations: [{key: a, operator: Exists}]\n"
    assert apply_edits(text, [AppendItem((1, 15), (1, 15), 1, (TOLERATION,))]) == (text, 0)


def test_add_key_uses_the_sibling_sequence_style() -> None:
    text = "spec:\n  containers:\n    - name: c\n      image: i\n"
    fixed, _ = apply_edits(text, [AddKey((2, 3), "tolerations", (TOLERATION,), (3, 7))])
    assert fixed == (
        "spec:\n"
        "  tolerations:\n"
        "    - key: nvidia.com/gpu\n"
        "      operator: Exists\n"
        "      effect: NoSchedule\n"
        "  containers:\n    - name: c\n      image: i\n"
    )


def test_add_key_keeps_crlf_line_breaks() -> None:
    text = "spec:\r\n  containers:\r\n  - name: c\r\n"
    fixed, _ = apply_edits(text, [AddKey((2, 3), "tolerations", (TOLERATION,), (3, 5))])
    assert fixed == (
        "spec:\r\n"
        "  tolerations:\r\n"
        "  - key: nvidia.com/gpu\r\n"
        "    operator: Exists\r\n"
        "    effect: NoSchedule\r\n"
        "  containers:\r\n"
        "  - name: c\r\n"
    )


def test_add_key_where_the_key_shares_its_line_is_not_attempted() -> None:
    text = "- spec: 1\n  containers: []\n"
    assert apply_edits(text, [AddKey((1, 3), "tolerations", (TOLERATION,))]) == (text, 0)


def test_the_same_edit_of_two_findings_is_made_once_and_fixes_both() -> None:
    text = "a: {nvidia.com/gpus: 1}\n"
    edits = [Rename((1, 5), "nvidia.com/gpus", "nvidia.com/gpu")] * 2
    assert apply_edits(text, edits) == ("a: {nvidia.com/gpu: 1}\n", 2)


def test_an_edit_overlapping_another_waits_for_the_next_pass() -> None:
    text = "a: {nvidia.com/gpus: 1}\n"
    fixes = [
        (Rename((1, 5), "nvidia.com/gpus", "nvidia.com/gpu"),),
        (Rename((1, 5), "nvidia.com/gpus", "nvidia.com/gpux"),),
    ]
    assert apply_fixes(text, fixes) == ("a: {nvidia.com/gpu: 1}\n", (0,), {}, (1,))


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("nvidia.com/gpu", "nvidia.com/gpu"),
        ("Exists", "Exists"),
        ("true", '"true"'),
        ("8", '"8"'),
        ("", '""'),
        ("a: b", '"a: b"'),
        ('say "hi"', '"say \\"hi\\""'),
    ],
)
def test_scalars_read_back_as_the_same_string(value: str, written: str) -> None:
    assert yaml_scalar(value) == written
    assert parse(f"k: {written}\n").documents[0].value["k"] == value


def test_inserted_toleration_parses_as_the_intended_tree() -> None:
    text = "spec:\n  containers:\n  - name: c\n"
    fixed, _ = apply_edits(text, [AddKey((2, 3), "tolerations", (TOLERATION,), (3, 5))])
    spec = parse(fixed).documents[0].value["spec"]
    assert spec["tolerations"] == [dict(TOLERATION)]
    assert spec["containers"] == [{"name": "c"}]


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        (
            "spec:\n  containers:\n    - name: c\n",
            "spec:\n  tolerations:\n    - key: nvidia.com/gpu\n      operator: Exists\n"
            "      effect: NoSchedule\n  containers:\n    - name: c\n",
        ),
        (
            "spec:\n  containers:\n  - name: c\n  tolerations:\n  - key: a\n"
            "    operator: Exists\n  nodeSelector: {}\n",
            "spec:\n  containers:\n  - name: c\n  tolerations:\n  - key: a\n"
            "    operator: Exists\n  - key: nvidia.com/gpu\n    operator: Exists\n"
            "    effect: NoSchedule\n  nodeSelector: {}\n",
        ),
    ],
)
def test_add_items_from_the_tree(text: str, fixed: str) -> None:
    spec = parse(text).documents[0].value["spec"]
    edits = add_items(spec, "tolerations", (TOLERATION,), "containers")
    assert apply_edits(text, edits) == (fixed, 1)


@pytest.mark.parametrize(
    ("tolerations", "fixed"),
    [
        ("[{key: a}]", "[{key: a}, {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"),
        (
            "[{key: a}, ]",
            "[{key: a}, {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule} ]",
        ),
        ("[]", "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"),
        (
            "[\n    {key: a},\n  ]",
            "[\n    {key: a},\n"
            "    {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule},\n  ]",
        ),
        (
            "[\n    {key: a}\n  ]",
            "[\n    {key: a},\n"
            "    {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  ]",
        ),
        (  # a `]` in a quoted value is not the end of the list
            "['a]', {key: 'b]'}]  # the list ends here ]",
            "['a]', {key: 'b]'}, {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"
            "  # the list ends here ]",
        ),
    ],
)
def test_add_items_to_a_flow_sequence_is_a_flow_edit(tolerations: str, fixed: str) -> None:
    text = f"spec:\n  containers: []\n  tolerations: {tolerations}\n"
    spec = parse(text).documents[0].value["spec"]
    edits = add_items(spec, "tolerations", (TOLERATION,), "containers")
    assert apply_edits(text, edits) == (f"spec:\n  containers: []\n  tolerations: {fixed}\n", 1)
