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
        ("0x10", '"0x10"'),  # YAML 1.1 reads 16
        ("1e3", '"1e3"'),
        ("0o17", '"0o17"'),
        ("null", '"null"'),
        ("~", '"~"'),
        ("Yes", '"Yes"'),
        ("n", '"n"'),
        ("12:30", '"12:30"'),  # YAML 1.1 reads a sexagesimal 750
        (".5", '".5"'),
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
        (  # a `:` inside a flow scalar is text: the list is read, and ends where it ends
            "[{key: docs, value: http://x:80}]",
            "[{key: docs, value: http://x:80}, "
            "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
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


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029", "\r\n"])
def test_lines_end_where_the_parser_ends_them(brk: str) -> None:
    text = f"# a{brk}# b\nspec:\n  containers:\n  - name: c\n"
    spec = parse(text).documents[0].value["spec"]
    assert spec.pos_of_key("containers") == (4, 3)
    fixed, _ = apply_edits(text, add_items(spec, "tolerations", (TOLERATION,), "containers"))
    assert fixed.startswith(f"# a{brk}# b\nspec:\n  tolerations:\n  - key: nvidia.com/gpu\n")


def test_a_rename_onto_a_key_that_exists_is_refused_with_why() -> None:
    text = "limits:\n  nvidia.com/gpu: 1\n  nvidia.com/gpus: 1\n"
    fix = (Rename((3, 3), "nvidia.com/gpus", "nvidia.com/gpu"),)
    assert apply_fixes(text, [fix]) == (
        text,
        (),
        {0: "`nvidia.com/gpu` would be written twice in one mapping"},
        (),
    )


def test_of_two_fixes_the_one_that_breaks_the_text_is_refused_the_other_made() -> None:
    text = "a:\n  x: 1\nb: [\n  1  # one\n]\n"
    b = parse(text).documents[0].value
    good = (Rename((2, 3), "x", "y"),)
    bad = add_items(b, "b", ((("k", "v"),),), "a")  # lands in the comment
    made = apply_fixes(text, [good, bad])
    assert made.refused == {1: made.refused[1]}
    assert made.refused[1].startswith("the fixed text would not parse")
    assert made.applied == (0,)  # the parse error is where the other fix wrote
    assert made.text == "a:\n  y: 1\nb: [\n  1  # one\n]\n"


def test_json_gets_a_json_key_before_the_first_key() -> None:
    text = '{\n  "spec": {\n    "containers": [{"name": "c"}]\n  }\n}\n'
    spec = parse(text).documents[0].value["spec"]
    made = apply_fixes(
        text, [add_items(spec, "tolerations", (TOLERATION,), "containers")], is_json=True
    )
    assert made.text == (
        '{\n  "spec": {\n    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", '
        '"effect": "NoSchedule"}],\n    "containers": [{"name": "c"}]\n  }\n}\n'
    )


def test_of_many_fixes_one_that_breaks_the_text_does_not_hold_back_the_others() -> None:
    document = "spec:\n  tolerations: [\n    {key: a}  # one\n  ]\n  containers: [{name: c}]\n"
    text = "---\n".join([document] * 40)
    fixes = []
    for parsed in parse(text).documents:
        fixes.append(add_items(parsed.value["spec"], "tolerations", (TOLERATION,), "containers"))
    fixes.append((Rename((5, 23), "c", "d"),))  # the first document's container name
    made = apply_fixes(text, fixes)
    assert made.applied == (40,)
    assert set(made.refused) == set(range(40))
    assert made.text == text.replace("{name: c}", "{name: d}", 1)
