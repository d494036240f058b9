"""The text formatter: one finding's lines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpulint.findings import Finding
from gpulint.model import Severity
from gpulint.output.text import SNIPPET_WIDTH, SourceLines, format_finding, snippet


def test_multi_line_fix_stays_an_indented_block_under_its_heading() -> None:
    finding = Finding(
        code="GPU102",
        name="missing-gpu-toleration",
        severity=Severity.ERROR,
        path="pod.yaml",
        line=14,
        column=5,
        message="pod fits pool g5 except for its taint",
        fix="Add to the pod spec:\ntolerations:\n- key: nvidia.com/gpu\n  operator: Exists",
    )
    assert format_finding(finding).splitlines() == [
        "pod.yaml:14:5: GPU102 [error] pod fits pool g5 except for its taint",
        "  = fix: Add to the pod spec:",
        "    tolerations:",
        "    - key: nvidia.com/gpu",
        "      operator: Exists",
    ]


def finding_at(path: str, line: int, column: int) -> Finding:
    return Finding(
        code="GPU002",
        name="gpu-limit-request-mismatch",
        severity=Severity.ERROR,
        path=path,
        line=line,
        column=column,
        message="m",
        fix=None,
    )


def test_the_source_line_is_shown_with_a_caret_under_the_column() -> None:
    text = format_finding(finding_at("p.yaml", 9, 5), source_line="    resources: {}")
    assert text.splitlines() == [
        "p.yaml:9:5: GPU002 [error] m",
        "  |",
        "9 |     resources: {}",
        "  |     ^",
    ]


def test_a_long_line_is_cut_around_the_column() -> None:
    line = "x" * 500 + "HERE" + "y" * 500
    _, shown, caret = snippet(3, 501, line)
    assert len(shown) == len("3 | ") + SNIPPET_WIDTH + 2  # an ellipsis either side
    assert shown.startswith("3 | …x") and shown.endswith("y…")
    assert shown[caret.index("^")] == "H"


def test_tabs_are_shown_as_one_space_so_the_caret_stays_under_the_column() -> None:
    _, shown, caret = snippet(1, 3, "\t\tkey: 1")
    assert shown == "1 |   key: 1"
    assert shown[caret.index("^")] == "k"


def test_the_caret_counts_wide_characters_as_two_columns() -> None:
    # A terminal shows each CJK character two columns wide, a combining accent zero wide.
    _, shown, caret = snippet(6, 19, '  - {name: "日本語", image: x}')
    assert shown == '6 |   - {name: "日本語", image: x}'
    assert caret == "  | " + " " * 21 + "^"
    _, shown, caret = snippet(2, 11, "  name: e\u0301t\u00e9: 1")
    assert caret == "  | " + " " * 9 + "^"


def test_source_lines_reads_files_as_the_loader_counts_lines(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    path.write_bytes(b"\xef\xbb\xbfa: 1\r\nb: 2\rc: \xff\n")
    sources = SourceLines()
    assert [sources.line(str(path), n) for n in (1, 2, 3, 4, 5)] == [
        "a: 1",
        "b: 2",
        "c: \ufffd",
        "",
        None,
    ]
    assert sources.line(str(tmp_path / "missing.yaml"), 1) is None
    assert sources.line(str(tmp_path), 1) is None  # a directory


def test_stdin_lines_come_from_the_bytes_read_not_from_the_file_of_that_name(
    tmp_path: Path,
) -> None:
    named = tmp_path / "pod.yaml"
    named.write_text("on disk\n")
    sources = SourceLines((str(named), b"from stdin\n"))
    assert sources.line(str(named), 1) == "from stdin"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_not_read_again(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    # Opening a pipe without a writer would block: a line that cannot be shown is None.
    assert SourceLines().line(str(fifo), 1) is None


def test_a_name_no_file_system_takes_shows_no_line() -> None:
    # A finding's path is what the input was called (`--stdin-filename`, a file of a List);
    # one with a NUL names no file: the finding is shown without its line.
    assert SourceLines().line("bad\x00name.yaml", 1) is None


def test_no_line_of_a_secret_document_is_shown(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "kind: ConfigMap\ndata: {a: b}\n---\napiVersion: v1\nkind: Secret  # creds\n"
        "data: {token: c2VjcmV0}\n--- # next\nkind: Pod\n"
    )
    sources = SourceLines()
    assert [sources.line(str(path), n) for n in range(1, 9)] == [
        "kind: ConfigMap",
        "data: {a: b}",
        None,
        None,
        None,
        None,
        "--- # next",
        "kind: Pod",
    ]
    listed = tmp_path / "list.json"
    listed.write_text('{"kind": "List", "items": [\n{"kind": "Secret", "data": {}}\n]}\n')
    assert SourceLines().line(str(listed), 1) is None
    # A `---` right after another starts a document too; `---x` does not; no final newline.
    adjacent = tmp_path / "adjacent.yaml"
    adjacent.write_text("---\n---\nkind: Secret\n---x: 1\ndata: {}\n---\nkind: Pod")
    sources = SourceLines()
    shown = [sources.line(str(adjacent), n) for n in range(1, 8)]
    assert shown == ["---", None, None, None, None, "---", "kind: Pod"]
