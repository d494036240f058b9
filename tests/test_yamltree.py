"""The positioned YAML tree: values typed like Kubernetes reads them, every position 1-based."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpulint.yamltree import Pos, YMap, YSeq, parse, resolve_plain, watched_below


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


def test_a_colon_inside_a_flow_scalar_is_text_as_the_kubernetes_decoder_reads_it() -> None:
    # `{value: http://svc:8080}`: YAML 1.2 and go-yaml allow a `:` not followed by a space in
    # a flow collection; the libyaml of the C parser refuses it, the text is read again.
    text = "env: [{name: URL, value: http://svc:8080}]\n---\nb: {u: https://x/y, n: 2}\n"
    first, second = parse(text, watch="svc").documents
    item = first.value["env"][0]
    assert item == {"name": "URL", "value": "http://svc:8080"}
    assert item.pos_of_value("value") == (1, 26)
    assert second.value == {"b": {"u": "https://x/y", "n": 2}}
    assert second.value["b"].pos_of_value("n") == (3, 24)
    assert first.watched  # what `watch` notes is noted on the text read again
    # Broken elsewhere: the error is where the text is broken, not at the flow `:`.
    result = parse("a: {u: http://x}\nb: [1\n")
    assert [d.value for d in result.documents] == []
    assert result.error is not None
    assert (result.error.line, result.error.column) == (3, 1)
    # A `: ` ends the key in a flow collection as anywhere else.
    (document,) = parse("a: [x: y:z]\n").documents
    assert document.value == {"a": [{"x": "y:z"}]}


def test_a_text_too_long_for_the_python_parser_keeps_the_c_parsers_error() -> None:
    from gpulint.yamltree import PURE_PARSE_MAX_CHARS

    # A file of flow collections crafted to be refused would take the Python parser minutes:
    # past the bound, the C parser's error at the flow `:` stands.
    filler = "# " + "x" * 78 + "\n"
    text = "a: {u: http://x}\n" + filler * (PURE_PARSE_MAX_CHARS // len(filler) + 1)
    result = parse(text)
    assert result.error is not None
    assert (result.error.line, result.error.column) == (1, 12)


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


def test_merge_applies_where_it_is_written_as_go_yaml_v2_does() -> None:
    text = (
        "b: &b {cpu: 1, gpu: 2}\nc: &c {cpu: 9, mem: 3}\nd:\n  cpu: 4\n  <<: [*b, *c]\n  mem: 5\n"
    )
    (document,) = parse(text).documents
    # keys above `<<` lose to it, keys below win, and of a merged list the first mapping wins
    assert document.value["d"] == {"cpu": 1, "gpu": 2, "mem": 5}
    assert [(d.key, d.pos, d.first, d.by_merge) for d in document.duplicates] == [
        ("cpu", (5, 3), (4, 3), True)
    ]


@pytest.mark.parametrize(
    ("text", "line", "column", "problem"),
    [
        ("a: *nope\n", 1, 4, "unknown anchor 'nope' referenced"),
        ("a: &a [1, *a]\n", 1, 11, "anchor 'a' value contains itself"),
        ("a: &a {b: {c: *a}}\n", 1, 15, "anchor 'a' value contains itself"),
        ("a:\n  <<: 1\n", 2, 7, "map merge requires map or sequence of maps as the value"),
        ("s: &s x\na:\n  <<: [*s]\n", 3, 7, "map merge requires map or sequence of maps"),
        ("? [a, b]\n: 1\n", 1, 3, "invalid map key: a mapping or sequence cannot be a key"),
        ("a:\n\tb: 1\n", 2, 1, "YAML does not allow tabs for indentation, use spaces"),
    ],
)
def test_what_the_kubernetes_decoder_refuses_is_an_error_at_its_position(
    text: str, line: int, column: int, problem: str
) -> None:
    result = parse("ok: 1\n---\n" + text)
    assert [d.value for d in result.documents] == [{"ok": 1}]
    assert result.error is not None
    assert (result.error.line, result.error.column) == (line + 2, column)
    assert problem in result.error.problem


@pytest.mark.parametrize(
    ("text", "line", "column", "problem"),
    [
        ("a: b\nc: \x07\n", 2, 4, "character U+0007 is not allowed"),
        ("a: é\x00\n", 1, 5, "character U+0000 is not allowed"),
    ],
)
def test_forbidden_character_is_an_error_at_its_character_position(
    text: str, line: int, column: int, problem: str
) -> None:
    # The C reader checks its whole buffer before the first event: no document survives.
    result = parse(text)
    assert result.error is not None
    assert (result.error.line, result.error.column) == (line, column)
    assert problem in result.error.problem


def billion_laughs(levels: int) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_without_expanding_it() -> None:
    result = parse(billion_laughs(30))  # 10**30 nodes if expanded
    assert result.error is not None
    assert result.error.problem == "document contains excessive aliasing"
    assert (result.error.line, result.error.column) == (5, 15)


def test_moderate_aliasing_is_allowed() -> None:
    text = "base: &b {cpu: 1, memory: 2}\n" + "".join(f"x{i}: *b\n" for i in range(50))
    result = parse(text)
    assert result.error is None
    (document,) = result.documents
    assert document.value["x49"] is document.value["base"]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000 + "]" * 10_000,
        "".join(f"{' ' * i}k:\n" for i in range(10_000)),
        "".join(f"{' ' * (2 * i)}- \n" for i in range(10_000)),
        "{a: " * 10_000 + "}" * 10_000,
    ],
    ids=["flow-sequences", "block-mappings", "block-sequences", "flow-mappings"],
)
def test_deep_nesting_stops_at_the_limit(text: str) -> None:
    result = parse(text)
    assert result.error is not None
    assert result.error.problem == "nesting deeper than 500 levels; not read further"
    assert result.error.line in (1, 501)


def test_nesting_up_to_the_limit_is_read() -> None:
    (document,) = parse("[" * 500 + "]" * 500).documents
    depth, node = 0, document.value
    while isinstance(node, YSeq) and node:
        depth, node = depth + 1, node[0]
    assert depth == 499  # the innermost list is empty


def test_tags_are_never_constructed() -> None:
    text = (
        "a: !!python/object/apply:os.system [touch /tmp/gpulint-pwned]\n"
        "b: !!python/name:os.system\n"
        "c: !custom {x: 1}\n"
        "d: !!binary aGVsbG8=\n"
    )
    (document,) = parse(text).documents
    assert document.value == {
        "a": ["touch /tmp/gpulint-pwned"],
        "b": None,
        "c": {"x": 1},
        "d": "aGVsbG8=",
    }
    assert not Path("/tmp/gpulint-pwned").exists()


def test_bom_and_crlf() -> None:
    (document,) = parse("\ufeffa: 1\r\nb:\r\n  c: x\r\n").documents
    assert document.value == {"a": 1, "b": {"c": "x"}}
    assert document.value["b"].pos_of_key("c") == (3, 3)


def test_every_line_break_the_parser_knows_counts_as_one_line() -> None:
    result = parse("a: 1\rb: 2\r\nc: 3\x85d: 4\u2028e: [\n")
    assert result.documents == ()
    assert result.error is not None
    assert (result.error.line, result.error.column) == (6, 1)  # the end of the text
    (document,) = parse("a: 1\rb: 2\r\nc: 3\x85d: 4\u2028e: 5\u2029f: 6\n").documents
    assert [document.value.pos_of_key(k)[0] for k in "abcdef"] == [1, 2, 3, 4, 5, 6]


def test_watch_notes_where_the_finished_tree_holds_the_text() -> None:
    text = "a: &x {k: $A}\nb: *x\nc: {<<: *x, k: B}\nf: {<<: *x}\nd: [$D]\n$E: 1\ne: $F\ne: G\n"
    (document,) = parse(text, watch="$").documents
    root = document.value

    def below(node: Any, skip: frozenset[str] = frozenset()) -> list[tuple[str, Pos, bool]]:
        return sorted(tuple(w) for w in watched_below(document.watched, node, skip))

    a, d, e = ("$A", (1, 11), False), ("$D", (5, 5), False), ("$E", (6, 1), True)
    # Once per path: an alias (b) and a merge (f) are one more each; `c` writes its own `k`
    # over the merged one, and the second `e` replaces `$F`.
    assert below(root) == [a, a, a, d, e]
    assert below(root, frozenset({"a", "b", "$E"})) == [a, d]
    assert (below(root["c"]), below(root["f"]), below(root["d"])) == ([], [a], [d])
    assert parse(text).documents[0].watched == {}


def test_watch_several_texts_notes_each_and_only_what_the_text_holds() -> None:
    text = "a: $A\nb: <b>\nc: plain\n"
    (document,) = parse(text, watch=("$", "<", "absent")).documents
    found = sorted(tuple(w) for w in watched_below(document.watched, document.value))
    assert found == [("$A", (1, 4), False), ("<b>", (2, 4), False)]
    (only,) = parse(text, watch=("<",)).documents
    assert [w.text for w in watched_below(only.watched, only.value)] == ["<b>"]
