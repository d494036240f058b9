"""Kueue queues in the cluster profile: ClusterProfile, kubectl dump, dump round trip, show."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from gpulint.errors import GpulintError
from gpulint.profile import load_profiles
from gpulint.profile.dump import dump_profile
from gpulint.profile.kubectl import profile_from_objects
from gpulint.profile.model import ClusterQueue, FlavorQuota, LocalQueue
from gpulint.profile.show import show_profile

PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"

CLUSTER_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ClusterQueue",
    "metadata": {"name": "team-a"},
    "spec": {
        "cohort": "shared",
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "a100",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "96"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 4},
                        ],
                    }
                ],
            }
        ],
    },
}
LOCAL_QUEUE = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "LocalQueue",
    "metadata": {"name": "team-a", "namespace": "ml"},
    "spec": {"clusterQueue": "team-a"},
}


def test_kubectl_dump_reads_cluster_and_local_queues() -> None:
    profile = profile_from_objects([{"kind": "List", "items": [CLUSTER_QUEUE, LOCAL_QUEUE]}])
    assert profile.cluster_queues == (
        ClusterQueue(
            "team-a",
            frozenset({"cpu", "nvidia.com/gpu"}),
            (
                FlavorQuota(
                    "a100",
                    {"cpu": Decimal(96), "nvidia.com/gpu": Decimal(8)},
                    {"nvidia.com/gpu": Decimal(4)},
                ),
            ),
            "shared",
        ),
    )
    assert profile.local_queues == (LocalQueue("ml", "team-a", "team-a"),)


def test_a_quota_that_is_not_a_quantity_is_one_error_naming_its_path() -> None:
    bad = {**CLUSTER_QUEUE, "spec": {"resourceGroups": [{"flavors": [{"name": "x", "resources": [
        {"name": "nvidia.com/gpu", "nominalQuota": "eight"}]}]}]}}  # fmt: skip
    where = re.escape("resourceGroups.0.flavors.0.resources.0.nominalQuota")
    with pytest.raises(GpulintError, match=where):
        profile_from_objects([bad])


def test_profile_queues_dump_and_load_back_equal(tmp_path: Path) -> None:
    profile = load_profiles([str(PROFILES / "kueue-queues.yaml")])
    assert [q.name for q in profile.cluster_queues] == ["team-a", "team-b", "research"]
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert load_profiles([str(path)]) == profile


def test_show_lists_queues_with_their_nominal_quotas() -> None:
    text = show_profile(load_profiles([str(PROFILES / "kueue-queues.yaml")]))
    assert "ClusterQueue research: nominal a100: nvidia.com/gpu 8, cohort shared\n" in text
    assert "LocalQueue ml/orphan -> retired\n" in text
