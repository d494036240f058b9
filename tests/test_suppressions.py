"""Suppressions: inline comments and annotations, and GPU006 for the ones that match nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpulint.api import lint
from gpulint.cli import main
from gpulint.config import Config

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment{kind_comment}
metadata:
  name: trainer
  annotations: {annotations}
spec:
  template:
    metadata:
      annotations: {template_annotations}
    spec:
      containers:
      - name: c
        resources:
          requests:
            nvidia.com/gpu: 1{line_comment}
  selector: {{matchLabels: {{app: c}}}}
"""


def manifest(
    kind_comment: str = "",
    line_comment: str = "",
    annotations: str = "{}",
    template_annotations: str = "{}",
) -> str:
    """A Deployment with GPU002 (line 15) and GPU601 (line 13), plus the given suppressions."""
    return DEPLOYMENT.format(
        kind_comment=kind_comment,
        line_comment=line_comment,
        annotations=annotations,
        template_annotations=template_annotations,
    )


def check(tmp_path: Path, text: str, *args: str) -> Result:
    """`gpulint check --isolated --format json ARGS` on `text` saved as d.yaml."""
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return CliRunner().invoke(main, ["check", "--isolated", "--format", "json", *args, str(path)])


def reported(result: Result) -> list[tuple[str, int, int]]:
    """(code, line, column) of each finding."""
    return [(f["code"], f["line"], f["column"]) for f in json.loads(result.stdout)["findings"]]


def test_unsuppressed_manifest_has_both_findings(tmp_path: Path) -> None:
    assert reported(check(tmp_path, manifest())) == [("GPU601", 13, 9), ("GPU002", 15, 13)]


@pytest.mark.parametrize(
    ("suppression", "left"),
    [
        ({"line_comment": "  # gpulint: ignore[GPU002]"}, [("GPU601", 13, 9)]),
        ({"line_comment": "  # gpulint: ignore"}, [("GPU601", 13, 9)]),
        ({"line_comment": "  # gpulint: ignore[GPU0]"}, [("GPU601", 13, 9)]),
        ({"line_comment": "  # gpulint: ignore[GPU003]"}, [("GPU601", 13, 9), ("GPU002", 15, 13)]),
        ({"kind_comment": "  # gpulint: ignore[GPU002]"}, [("GPU601", 13, 9)]),
        ({"kind_comment": "  # gpulint: ignore"}, []),
        ({"kind_comment": "  # gpulint: ignore[GPU601,GPU002]"}, []),
        ({"annotations": "{gpulint.io/ignore: 'GPU002,GPU601'}"}, []),
        ({"annotations": "{gpulint.io/ignore: GPU601}"}, [("GPU002", 15, 13)]),
        ({"template_annotations": "{gpulint.io/ignore: GPU002 GPU601}"}, []),
        ({"template_annotations": "{gpulint.io/ignore: gpu002}"}, [("GPU601", 13, 9)]),
        # Rule names, and reasons after a colon.
        (
            {"line_comment": "  # gpulint: ignore[gpu-limit-request-mismatch]"},
            [("GPU601", 13, 9)],
        ),
        (
            {"line_comment": "  # gpulint: ignore[GPU002: limit set by the platform webhook]"},
            [("GPU601", 13, 9)],
        ),
        ({"line_comment": "  # gpulint: ignore[GPU002] -- see OPS-12"}, [("GPU601", 13, 9)]),
        (
            {"annotations": "{gpulint.io/ignore: 'GPU601: vendor image, no requests'}"},
            [("GPU002", 15, 13)],
        ),
        (
            {"annotations": "{gpulint.io/ignore: 'gpu-pod-besteffort-cpu-memory'}"},
            [("GPU002", 15, 13)],
        ),
        (
            {"annotations": "{gpulint.io/ignore: 'GPU002 gpu-pod-besteffort-cpu-memory: why'}"},
            [],
        ),
        # Per-rule keys, as kube-linter's, by code or by name, the value being the reason.
        ({"annotations": "{ignore.gpulint.io/GPU601: 'vendor image'}"}, [("GPU002", 15, 13)]),
        (
            {"template_annotations": "{ignore.gpulint.io/gpu-limit-request-mismatch: ''}"},
            [("GPU601", 13, 9)],
        ),
    ],
)
def test_suppression_forms(
    tmp_path: Path, suppression: dict[str, str], left: list[tuple[str, int, int]]
) -> None:
    result = check(tmp_path, manifest(**suppression))
    assert reported(result) == left
    assert result.exit_code == (1 if any(code == "GPU002" for code, _, _ in left) else 0)


def test_a_comment_in_one_object_does_not_cover_another(tmp_path: Path) -> None:
    text = manifest(kind_comment="  # gpulint: ignore") + "---\n" + manifest()
    assert reported(check(tmp_path, text)) == [("GPU601", 30, 9), ("GPU002", 32, 13)]


def test_unused_suppressions_are_silent_without_the_flag(tmp_path: Path) -> None:
    text = manifest(
        line_comment="  # gpulint: ignore[GPU003]", annotations="{gpulint.io/ignore: GPU004}"
    )
    assert [c for c, _, _ in reported(check(tmp_path, text))] == ["GPU601", "GPU002"]


def test_unused_suppressions_are_gpu006_with_the_flag(tmp_path: Path) -> None:
    text = manifest(
        kind_comment="  # gpulint: ignore[GPU601, GPU004]",
        line_comment="  # gpulint: ignore",
        annotations="{gpulint.io/ignore: GPU003}",
    )
    result = check(tmp_path, text, "--report-unused-ignores")
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["line"], f["column"], f["message"]) for f in findings] == [
        (
            "GPU006",
            2,
            19,
            "unused suppression (comment): no GPU004 finding here to suppress",
        ),
        (
            "GPU006",
            5,
            36,
            "unused suppression (annotation): no GPU003 finding here to suppress",
        ),
    ]
    assert findings[0]["severity"] == "warning"
    assert findings[0]["name"] == "unused-suppression"
    assert result.exit_code == 0


def test_bare_unused_comment_says_nothing_to_suppress(tmp_path: Path) -> None:
    text = manifest(line_comment="  # gpulint: ignore[GPU002]").replace(
        "  name: trainer\n", "  name: trainer  # gpulint: ignore\n"
    )
    result = check(tmp_path, text, "--report-unused-ignores", "--fail-on", "warning")
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert [(f["line"], f["column"], f["message"]) for f in findings if f["code"] == "GPU006"] == [
        (4, 18, "unused suppression (comment): nothing here to suppress")
    ]


def test_suppression_of_a_rule_that_did_not_run_is_not_judged(tmp_path: Path) -> None:
    text = manifest(line_comment="  # gpulint: ignore[GPU002]")
    result = check(tmp_path, text, "--report-unused-ignores", "--select", "GPU6,GPU006")
    assert reported(result) == [("GPU601", 13, 9)]


def test_unused_suppression_report_honours_ignore(tmp_path: Path) -> None:
    text = manifest(line_comment="  # gpulint: ignore[GPU003]")
    result = check(tmp_path, text, "--report-unused-ignores", "--ignore", "GPU006")
    assert [c for c, _, _ in reported(result)] == ["GPU601", "GPU002"]


def test_library_entry_point_applies_suppressions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.yaml").write_text(manifest(line_comment="  # gpulint: ignore[GPU002]"))
    result = lint(["d.yaml"], config=Config(report_unused_ignores=True))
    assert [(f.code, f.path, f.line) for f in result.findings] == [("GPU601", "d.yaml", 13)]


def gpu006(result: Result) -> list[tuple[int, int, str]]:
    """(line, column, message) of each GPU006 finding."""
    findings = json.loads(result.stdout)["findings"]
    return [(f["line"], f["column"], f["message"]) for f in findings if f["code"] == "GPU006"]


def test_malformed_and_unknown_suppressions_are_gpu006_without_the_flag(tmp_path: Path) -> None:
    text = manifest(
        kind_comment="  # gpulint: ignroe[GPU601]",
        line_comment="  # gpulint: ignore GPU002",
        annotations="{gpulint.io/ignore: 'GPU999, gpu-limt-request-mismatch: why'}",
        template_annotations="{ignore.gpulint.io/besteffort: 'vendor image'}",
    )
    result = check(tmp_path, text)
    # None of them suppresses anything: both findings stay.
    assert [c for c, _, _ in reported(result) if c != "GPU006"] == ["GPU601", "GPU002"]
    assert gpu006(result) == [
        (
            2,
            19,
            'malformed suppression (comment): expected "ignore" after "gpulint:", found '
            '"ignroe[GPU601]"; it suppresses nothing',
        ),
        (
            5,
            36,
            'unknown suppression (annotation): "GPU999" is no rule\'s code or name; '
            "it suppresses nothing",
        ),
        (
            5,
            36,
            'unknown suppression (annotation): "gpu-limt-request-mismatch" is no rule\'s code '
            'or name (did you mean "gpu-limit-request-mismatch"?); it suppresses nothing',
        ),
        (
            9,
            21,
            'unknown suppression (annotation): "besteffort" is no rule\'s code or name; '
            "it suppresses nothing",
        ),
        (
            15,
            32,
            'malformed suppression (comment): "ignore GPU002": put the codes or names in '
            'brackets, "ignore[GPU002]", and a reason after a colon; it suppresses nothing',
        ),
    ]
    assert result.exit_code == 1


def test_a_known_name_beside_an_unknown_one_still_suppresses(tmp_path: Path) -> None:
    text = manifest(line_comment="  # gpulint: ignore[gpu-limit-request-mismatch, GPU0999]")
    result = check(tmp_path, text)
    assert reported(result) == [("GPU601", 13, 9), ("GPU006", 15, 32)]
    assert gpu006(result) == [
        (
            15,
            32,
            'unknown suppression (comment): "GPU0999" is no rule\'s code or name; '
            "it suppresses nothing",
        )
    ]


def test_an_empty_annotation_is_malformed_not_a_blanket(tmp_path: Path) -> None:
    result = check(tmp_path, manifest(annotations="{gpulint.io/ignore: ''}"))
    assert reported(result) == [("GPU006", 5, 36), ("GPU601", 13, 9), ("GPU002", 15, 13)]
    assert gpu006(result) == [
        (
            5,
            36,
            "malformed suppression (annotation): names no rule: list the codes or rule names; "
            "it suppresses nothing",
        )
    ]


def test_malformed_suppressions_honour_ignore(tmp_path: Path) -> None:
    result = check(tmp_path, manifest(line_comment="  # gpulint: ignroe"), "--ignore", "GPU006")
    assert reported(result) == [("GPU601", 13, 9), ("GPU002", 15, 13)]


def test_a_used_suppression_by_name_is_not_unused(tmp_path: Path) -> None:
    text = manifest(annotations="{ignore.gpulint.io/gpu-pod-besteffort-cpu-memory: why}")
    result = check(tmp_path, text, "--report-unused-ignores")
    assert reported(result) == [("GPU002", 15, 13)]
