"""The text formatter: one finding's lines."""

from __future__ import annotations

from gpulint.findings import Finding
from gpulint.model import Severity
from gpulint.output.text import format_finding


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
