"""The positioned YAML tree: values typed like Kubernetes reads them, every position 1-based."""

from __future__ import annotations

import pytest

from gpulint.yamltree import YMap, YSeq, parse, resolve_plain


def test_mapping_keys_values_and_sequence_items_know_their_positions() -> None:
    text = "a: 1\nb:\n  - x\n  - {c: d}\nlong_key:   spaced\n"
    (document,) = parse(text).documents
    root = document.value
    assert isinstance(root, YMap)
    assert root.pos == (1, 1)
    assert (root.pos_of_key("b"), root.pos_of_value("b")) == ((2, 1), (3, 3))
    assert root.pos_of_value("long_key") == (5, 13)
    items = root["b"]
    assert isinstance(items, YSeq)
    assert items.item_pos == [(3, 5), (4, 5)]
    assert items[1].pos_of_key("c") == (4, 6)
    assert items[1].pos_of_value("c") == (4, 9)


def test_missing_key_and_item_fall_back_to_the_container() -> None:
    (document,) = parse("x:\n  y: 1\n").documents
    inner = document.value["x"]
    assert inner.pos_of_key("nope") == (2, 3)
    assert inner.pos_of_value("nope") == (2, 3)
    (seq_doc,) = parse("- a\n").documents
    assert seq_doc.value.pos_of_item(5) == (1, 1)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("-2", -2),
        ("0x1F", 31),
        ("1.5", 1.5),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("500m", "500m"),
        ("16Gi", "16Gi"),
        ("yes", True),
        ("Off", False),
        ("~", None),
        ("null", None),
        ("", None),
        ("nvidia.com/gpu", "nvidia.com/gpu"),
        ("trueish", "trueish"),
    ],
)
def test_plain_scalars_resolve_like_the_kubernetes_decoder(text: str, value: object) -> None:
    assert resolve_plain(text) == value
    assert type(resolve_plain(text)) is type(value)


def test_quoted_and_tagged_scalars_stay_strings() -> None:
    (document,) = parse("a: '1'\nb: \"true\"\nc: !!str 2\nd: 2\n").documents
    assert document.value == {"a": "1", "b": "true", "c": "2", "d": 2}


def test_documents_empty_scalar_and_start_positions() -> None:
    result = parse("a: 1\n---\n---\n  text\n--- [1]\n")
    assert result.error is None
    assert [d.value for d in result.documents] == [{"a": 1}, None, "text", [1]]
    assert [d.pos for d in result.documents] == [(1, 1), (2, 1), (3, 1), (5, 1)]
    # the empty document holds a null scalar, placed by the parser at the next `---`
    assert [d.value_pos for d in result.documents] == [(1, 1), (3, 1), (4, 3), (5, 5)]


def test_syntax_error_position_and_documents_before_it() -> None:
    result = parse("a: 1\n---\nb: [1, 2\nc: 3\n")
    assert [d.value for d in result.documents] == [{"a": 1}]
    assert result.error is not None
    assert (result.error.line, result.error.column) == (4, 2)
    assert str(result.error).startswith("4:2: ")


def test_bad_indentation_error() -> None:
    result = parse("a:\n  b: 1\n   c: 2\n")
    assert result.error is not None
    assert (result.error.line, result.error.column) == (3, 5)


def test_duplicate_keys_are_recorded_with_both_positions() -> None:
    (document,) = parse("a: 1\nb:\n  x: 1\n  x: 2\na: 3\n").documents
    assert [(d.key, d.pos, d.first) for d in document.duplicates] == [
        ("x", (4, 3), (3, 3)),
        ("a", (5, 1), (1, 1)),
    ]
    assert document.value["a"] == 3


def test_merge_keys_and_aliases() -> None:
    text = "base: &b {cpu: 1, memory: 2}\nc:\n  <<: *b\n  cpu: 4\nd: *b\n"
    (document,) = parse(text).documents
    assert document.duplicates == ()
    assert document.value["c"] == {"cpu": 4, "memory": 2}
    assert document.value["c"].pos_of_key("memory") == (1, 19)
    assert document.value["d"] is document.value["base"]


def test_json_is_yaml() -> None:
    (document,) = parse('{"a": [1, {"b": "c"}],\n "d": null}').documents
    assert document.value == {"a": [1, {"b": "c"}], "d": None}
    assert document.value.pos_of_key("d") == (2, 2)
