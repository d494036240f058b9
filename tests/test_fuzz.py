"""Property-based: mutated fixture files never crash gpulint and never produce a lie about where.

Each example takes a fixture file, applies a few mutations (delete, duplicate or retag a line,
flip a value's type, insert hostile bytes, truncate) and runs `gpulint check --format json`
on it with a cluster profile, so every rule runs.
"""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
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


# --- hostile names and huge numbers, in every output format --------------------------------

HUGE_QUANTITIES = [
    *("1e26", '"1e999999"', "12345678901234567890123456789", "1e308", "-1e26", "8Ei"),
    *('"9223372036854775808"', "9" * 400, '"' + "9" * 5000 + '"', "1e-99999999", "0.0001"),
]
HOSTILE_TEXT = st.one_of(
    st.sampled_from(
        [
            "c\n::error file=README.md,line=1::INJECTED",
            "  ::warning title=x::y",
            "\x1b]0;pwned\x07\x1b[2J",
            "<img src=x onerror=alert(1)>",
            "a|b`c`d`",
            "\u202eevil\u2028next\x85",
            "k" * 5000,
        ]
    ),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
)
HOSTILE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  containers:
  - name: {container}
    image: {image}
    resources:
      requests: {{cpu: {cpu}, memory: 1Gi}}
      limits: {{memory: 1Gi, nvidia.com/gpu: {gpus}}}
  {key}: 1
  {key}: 2
"""
_FORMATS = ("text", "concise", "json", "sarif", "github", "junit")


@st.composite
def hostile_pods(draw: st.DrawFn) -> tuple[str, bytes]:
    """(file name, bytes) of a Pod whose names, key and quantities are drawn to hurt."""
    texts = {
        field: json.dumps(draw(HOSTILE_TEXT))  # a YAML double-quoted string of any text
        for field in ("name", "namespace", "container", "image", "key")
    }
    quantities = st.sampled_from(HUGE_QUANTITIES)
    text = HOSTILE_POD.format(**texts, cpu=draw(quantities), gpus=draw(quantities))
    return draw(HOSTILE_TEXT) or "pod.yaml", text.encode()


def _workflow_commands(text: str) -> list[str]:
    """Lines a GitHub runner would run as workflow commands (it trims leading spaces)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


@functools.cache
def _empty_report_size(output: str) -> int:
    """The length of a report in the format `output` of a run that found nothing."""
    from gpulint.output import FORMATTERS
    from gpulint.output.options import OutputOptions

    clean = lint(
        ["-"], stdin=("pod.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    )
    assert not list(clean.findings)
    return len("".join(FORMATTERS[output](clean, OutputOptions())))


@pytest.mark.slow
@settings(max_examples=100)  # six formats an example
@given(hostile_pods())
def test_hostile_names_and_huge_quantities_are_escaped_and_bounded_in_every_format(
    drawn: tuple[str, bytes],
) -> None:
    from xml.etree import ElementTree

    from gpulint.output import FORMATTERS
    from gpulint.output.github import step_summary
    from gpulint.output.options import OutputOptions
    from gpulint.profile import load_profiles

    name, data = drawn
    result = lint(["-"], profile=load_profiles([str(PROFILE)]), stdin=(name, data))
    findings = list(result.findings)
    assert findings, "the duplicate key at least is reported"
    options = OutputOptions()
    for output in _FORMATS:
        report = "".join(FORMATTERS[output](result, options))
        # What a report of no finding holds (SARIF: the whole rule catalogue), then each
        # finding's share, whatever the names in it.
        assert len(report) < _empty_report_size(output) + 40_000 * len(findings), output
        if output in ("text", "concise"):
            assert _workflow_commands(report) == []
            assert not any(char in report for char in "\x1b\x07\x85\u202e\u2028")
        elif output == "github":
            annotations = _workflow_commands(report)
            assert len(annotations) == len(findings)
            assert all(
                line.startswith(("::error ", "::warning ", "::notice ")) for line in annotations
            )
        elif output == "junit":
            ElementTree.fromstring(report)
        else:
            json.loads(report)
    # Outside code spans (whose text Markdown shows as written), no HTML: escaped backslashes
    # and backticks are text, the other backticks open and close spans.
    summary = step_summary(result, options).replace("\\\\", "").replace("\\`", "")
    summary = re.sub(r"(`+)(.+?)\1", "", summary)
    assert "<" not in summary.replace("<br>", "")
