"""Property-based: mutated fixture files never crash gpulint and never produce a lie about where.

Each example takes a fixture file, applies a few mutations (delete, duplicate or retag a line,
flip a value's type, insert hostile bytes, truncate) and runs `gpulint check --format json`
on it with a cluster profile, so every rule runs.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from gpulint.api import lint
from gpulint.cli import main
from gpulint.yamltree import normalize_line_breaks

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(
    p for p in (ROOT / "fixtures" / "cases").rglob("*") if p.suffix in (".yaml", ".yml", ".json")
)
PROFILE = ROOT / "fixtures" / "profiles" / "placement-eks.yaml"

# What a mutation may put in place of a value or insert into a line.
VALUES = [
    *("true", "null", "~", "[]", "{}", '""', "-1", "1e3", "2Ki", "0.5", ".nan", "'one'", "*a"),
    *("&a x", "!!python/object/apply:os.system [id]", "!custom", "<<: *a", "? [k]", "|\n  x"),
]
BYTES = [b"\t", b"\x00", b"\xff", b"\xef\xbb\xbf", b"\r", b"{{ .Values.x }}", b"[", b"- ", b"---"]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A fixture file's bytes after one to six random mutations."""
    data = draw(st.sampled_from(CORPUS)).read_bytes()
    for _ in range(draw(st.integers(1, 6))):
        lines = data.split(b"\n")
        index = draw(st.integers(0, max(len(lines) - 1, 0)))
        line = lines[index]
        action = draw(
            st.sampled_from(["delete", "duplicate", "retag", "flip", "insert", "truncate"])
        )
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, line)
        elif action in ("retag", "flip") and b":" in line:
            key, _, value = line.partition(b":")
            new = draw(st.sampled_from(VALUES)).encode()
            lines[index] = key + b": " + (new + b" " + value.strip() if action == "retag" else new)
        elif action == "insert":
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + draw(st.sampled_from(BYTES)) + line[at:]
        else:
            data = data[: draw(st.integers(0, len(data)))]
            continue
        data = b"\n".join(lines)
    return data


_WORKDIR = Path(tempfile.mkdtemp(prefix="gpulint-fuzz-"))


@pytest.mark.slow
@given(mutated())
def test_mutated_fixtures_never_crash_and_findings_point_into_the_file(data: bytes) -> None:
    path = _WORKDIR / "mutated.yaml"
    path.write_bytes(data)
    args = ["check", "--isolated", "--select", "ALL", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--profile", str(PROFILE), str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    # Lines as an editor counts them, which is how the parser counts them too (a lone CR is one).
    lines = normalize_line_breaks(data.decode("utf-8", "replace")).count("\n") + 1
    for finding in report["findings"]:
        assert finding["path"] == str(path)
        assert 1 <= finding["line"] <= lines, finding
        assert finding["column"] >= 1, finding


@pytest.mark.slow
@given(mutated())
def test_no_exception_escapes_lint(data: bytes) -> None:
    result = lint(["-"], stdin=("<stdin>", data))
    assert all(f.path == "<stdin>" for f in result.findings)
