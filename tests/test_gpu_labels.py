"""GPU107: selectors on GPU model label values no node carries; verdicts, messages, fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulint.api import lint
from gpulint.data.gpu_products import GFD_FAMILIES, GKE_FAMILIES
from gpulint.model import Severity
from gpulint.rules.gpu_labels import judge

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "fixtures" / "cases" / "placement" / "GPU107-gpu-product-labels.yaml"
GFD = "nvidia.com/gpu.product"
GKE = "cloud.google.com/gke-accelerator"


@pytest.mark.parametrize(
    ("label", "value", "severity", "suggestion"),
    [
        (GFD, "NVIDIA-H100-SXM4-80GB", Severity.ERROR, "NVIDIA-H100-80GB-HBM3"),
        (GFD, "TESLA-T4", Severity.ERROR, "Tesla-T4"),
        (GFD, "NVIDIA-T4", Severity.ERROR, "Tesla-T4"),
        (GFD, "NVIDIA-V100-SXM2-32GB", Severity.ERROR, "Tesla-V100-SXM2-32GB"),
        (GFD, "nvidia-a100-sxm4-80gb", Severity.ERROR, "NVIDIA-A100-SXM4-80GB"),
        (GFD, "NVIDIA-H100-SXM4-80GB-SHARED", Severity.ERROR, "NVIDIA-H100-80GB-HBM3-SHARED"),
        (GFD, "A100", Severity.INFO, "NVIDIA-A100-SXM4-80GB"),
        (GKE, "nvidia-tesla-a100-80gb", Severity.ERROR, "nvidia-a100-80gb"),
        (GKE, "nvidia-h100", Severity.ERROR, "nvidia-h100-80gb"),
        (GKE, "nvidia-tesla-l4", Severity.ERROR, "nvidia-l4"),
    ],
)
def test_values_no_node_carries(
    label: str, value: str, severity: Severity, suggestion: str
) -> None:
    verdict = judge(label, value)
    assert verdict is not None
    assert (verdict.severity, verdict.suggestion) == (severity, suggestion)


@pytest.mark.parametrize(
    ("label", "value"),
    [
        (GFD, "NVIDIA-H100-80GB-HBM3"),
        (GFD, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
        (GFD, "A100-SXM4-40GB-MIG-1g.5gb-SHARED"),
        (GFD, "Tesla-T4-SHARED"),
        (GFD, "NVIDIA-GH200-480GB"),
        (GFD, "NVIDIA-B300-SXM6-AC"),  # a model the catalogue does not list: never reported
        (GFD, "NVIDIA-RTX-A6000"),
        (GFD, "NVIDIA-GeForce-RTX-4090"),
        (GKE, "nvidia-h100-mega-80gb"),
        (GKE, "nvidia-rtx-pro-6000"),
    ],
)
def test_values_nodes_carry_or_models_not_catalogued(label: str, value: str) -> None:
    assert judge(label, value) is None


def test_every_catalogued_value_is_carried() -> None:
    for label, families in ((GFD, GFD_FAMILIES), (GKE, GKE_FAMILIES)):
        for family in families:
            assert family.values
            for value in family.values:
                assert judge(label, value) is None, value


def test_messages_and_fixes() -> None:
    found = [
        (f.line, f.column, f.severity, f.message, f.fix)
        for f in lint([str(CASE)]).findings
        if f.code == "GPU107"
    ]
    h100 = "`NVIDIA-H100-80GB-HBM3`, `NVIDIA-H100-PCIe`, `NVIDIA-H100-NVL`, `NVIDIA-H100`"
    assert found[0] == (
        13,
        33,
        Severity.ERROR,
        "nodeSelector `nvidia.com/gpu.product: NVIDIA-H100-SXM4-80GB`: GPU Feature Discovery "
        f"labels no node with this value (no H100 GPU carries it; it writes {h100}), so the "
        "pod can never be scheduled; did you mean `NVIDIA-H100-80GB-HBM3`?",
        "Select `nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3`, or the value `kubectl get "
        "nodes -L nvidia.com/gpu.product` shows on the GPU nodes.",
    )
    assert [(line, column, severity) for line, column, severity, _, _ in found] == [
        (13, 33, Severity.ERROR),
        (25, 29, Severity.ERROR),
        (37, 39, Severity.ERROR),
        (53, 13, Severity.ERROR),
        (67, 29, Severity.INFO),
    ]
    assert found[4][3] == (
        "nodeSelector `nvidia.com/gpu.product: A100`: not how GPU Feature Discovery spells any "
        "GPU model (A100 nodes carry `NVIDIA-A100-SXM4-80GB`, `NVIDIA-A100-SXM4-40GB`, "
        "`NVIDIA-A100-80GB-PCIe`, `NVIDIA-A100-PCIE-40GB`); unless the nodes are labelled by "
        "hand, no node matches; did you mean `NVIDIA-A100-SXM4-80GB`?"
    )


def test_with_a_profile_the_pools_decide(tmp_path: Path) -> None:
    from gpulint.profile import load_profiles

    profile = load_profiles([str(ROOT / "fixtures" / "profiles" / "placement-eks.yaml")])
    result = lint([str(CASE)], profile=profile)
    assert not [f for f in result.findings if f.code == "GPU107"]


def test_docs_list_every_catalogued_value() -> None:
    doc = (ROOT / "docs" / "accelerators.md").read_text()
    values = [v for families in (GFD_FAMILIES, GKE_FAMILIES) for f in families for v in f.values]
    assert [v for v in values if f"`{v}`" not in doc] == []
