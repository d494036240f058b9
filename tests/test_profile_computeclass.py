"""GKE ComputeClasses as profile inputs: the node pools GKE creates for a class on demand."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpulint.errors import GpulintError
from gpulint.profile import Taint, load_profiles
from gpulint.profile.dump import dump_profile
from gpulint.profile.model import LabelRequirement

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "profiles"
L4_X8 = str(REAL / "gke-compute-class-l4.yaml")
HEAD = "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: {name: cc}\n"


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "computeclass.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_gpu_class_with_node_auto_creation_is_a_pool_per_machine_and_spot() -> None:
    profile = load_profiles([L4_X8])
    assert profile.provider == "gke"
    on_demand, spot = profile.pools
    assert (on_demand.name, spot.name) == (
        "gpu-l4-24gb-x8/g2-standard-96",
        "gpu-l4-24gb-x8/g2-standard-96/spot",
    )
    assert on_demand.labels == {
        "cloud.google.com/compute-class": "gpu-l4-24gb-x8",
        "node.kubernetes.io/instance-type": "g2-standard-96",
        "cloud.google.com/gke-accelerator": "nvidia-l4",
        "cloud.google.com/gke-gpu-driver-version": "latest",
    }
    assert spot.labels["cloud.google.com/gke-spot"] == "true"
    assert on_demand.taints == (
        Taint("cloud.google.com/compute-class", "gpu-l4-24gb-x8", "NoSchedule"),
        Taint("nvidia.com/gpu", "present", "NoSchedule"),
    )
    assert on_demand.allocatable["nvidia.com/gpu"] == Decimal(8)
    assert (on_demand.nodes, on_demand.scale_from_zero, on_demand.made_per_pod) == (0, True, True)
    # GKE names the pools it creates: each node has a gke-nodepool label no input states.
    assert LabelRequirement("cloud.google.com/gke-nodepool", "Exists") in (
        on_demand.label_requirements
    )


def test_a_rule_of_a_gpu_type_alone_allows_each_machine_of_that_type_and_count(
    tmp_path: Path,
) -> None:
    body = (
        "spec:\n  nodePoolAutoCreation: {enabled: true}\n  priorities:\n"
        "  - gpu: {type: nvidia-l4, count: 2}\n"
        "  - nodepools: [existing-pool]\n"
    )
    pools = load_profiles([write(tmp_path, HEAD + body)]).pools
    assert [p.instance_type for p in pools] == ["g2-standard-24"]


def test_a_class_without_node_auto_creation_adds_no_pool(tmp_path: Path) -> None:
    body = "spec:\n  priorities:\n  - machineType: g2-standard-8\n"
    path = write(tmp_path, HEAD + body)
    # Its nodes are those of the node pools its rules name, which other inputs describe.
    assert load_profiles([path]).pools == ()
    assert load_profiles([path, L4_X8]).pools == load_profiles([L4_X8]).pools


def test_class_pools_dump_and_load_back_equal(tmp_path: Path) -> None:
    profile = load_profiles([L4_X8])
    dumped = tmp_path / "profile.yaml"
    dumped.write_text(dump_profile(profile), encoding="utf-8")
    assert load_profiles([str(dumped)]).pools == profile.pools


def test_a_class_without_a_name_is_one_error(tmp_path: Path) -> None:
    text = "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: {}\nspec: {}\n"
    path = write(tmp_path, text)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert "ComputeClass: metadata.name is missing" in str(info.value)
