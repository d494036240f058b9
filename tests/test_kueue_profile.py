"""Kueue queues in the cluster profile: ClusterProfile, kubectl dump, dump round trip, show."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
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
                    frozenset({"cpu", "nvidia.com/gpu"}),
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


def test_a_quota_above_what_an_int64_holds_loads_as_the_api_stores_it() -> None:
    # GKE's Dynamic Workload Scheduler guide (cloud.google.com/kubernetes-engine/docs/how-to/
    # provisioningrequest) has users apply `nominalQuota: 1000000000Ti`: the API server caps it
    # at 2^63-1 and stores it, so loading it is no error.
    dws = {**CLUSTER_QUEUE, "spec": {"resourceGroups": [{
        "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
        "flavors": [{"name": "default-flavor", "resources": [
            {"name": "cpu", "nominalQuota": 1000000000},
            {"name": "memory", "nominalQuota": "1000000000Ti"},
            {"name": "nvidia.com/gpu", "nominalQuota": 1000000000},
        ]}]}]}}  # fmt: skip
    (queue,) = profile_from_objects([dws]).cluster_queues
    assert queue.flavors[0].nominal == {
        "cpu": Decimal(1000000000),
        "memory": Decimal(2**63 - 1),
        "nvidia.com/gpu": Decimal(1000000000),
    }


def test_profile_queues_dump_and_load_back_equal(tmp_path: Path) -> None:
    profile = load_profiles([str(PROFILES / "kueue-queues.yaml")])
    assert [q.name for q in profile.cluster_queues] == ["team-a", "team-b", "research"]
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert load_profiles([str(path)]) == profile


def test_resource_groups_are_kept_and_dumped_apart(tmp_path: Path) -> None:
    # Kueue assigns one flavor per resource group: which group a flavor is in decides which
    # flavors a pod gets together, so a dump keeps the groups apart.
    def group(covers: list[str], flavor: str, quota: str) -> dict:
        resources = [{"name": covers[0], "nominalQuota": quota}]
        return {"coveredResources": covers, "flavors": [{"name": flavor, "resources": resources}]}

    two = {
        **CLUSTER_QUEUE,
        "spec": {
            "resourceGroups": [
                group(["cpu", "memory"], "default", "8"),
                group(["nvidia.com/gpu"], "gpu", "4"),
            ]
        },
    }
    profile = profile_from_objects([two])
    (queue,) = profile.cluster_queues
    assert [(f.name, f.covers) for f in queue.flavors] == [
        ("default", frozenset({"cpu", "memory"})),
        ("gpu", frozenset({"nvidia.com/gpu"})),
    ]
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert "  - coveredResources: [nvidia.com/gpu]\n" in path.read_text()
    assert load_profiles([str(path)]).cluster_queues == profile.cluster_queues


def test_show_lists_queues_with_their_nominal_quotas() -> None:
    text = show_profile(load_profiles([str(PROFILES / "kueue-queues.yaml")]))
    assert "ClusterQueue research: nominal a100: nvidia.com/gpu 8, cohort shared\n" in text
    assert "LocalQueue ml/orphan -> retired\n" in text


RESOURCE_FLAVOR = {
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ResourceFlavor",
    "metadata": {"name": "a100"},
    "spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}},
}


@pytest.mark.parametrize(
    "objects",
    [[RESOURCE_FLAVOR], [CLUSTER_QUEUE], [LOCAL_QUEUE], [RESOURCE_FLAVOR, CLUSTER_QUEUE]],
    ids=["flavor", "cluster-queue", "local-queue", "flavor-and-queue"],
)
def test_kueue_files_alone_are_accepted_as_profiles(tmp_path: Path, objects: list) -> None:
    path = tmp_path / "kueue.yaml"
    path.write_text("\n---\n".join(json.dumps(o) for o in objects))
    profile = load_profiles([str(path)])
    assert profile.pools == ()
    assert [q.name for q in profile.cluster_queues] == (
        ["team-a"] if CLUSTER_QUEUE in objects else []
    )


def test_queued_jobs_that_fit_alone_wait_their_turn() -> None:
    """Two Kueue Jobs that each fit: a warning that the second waits, not `stay Pending`."""
    cases = PROFILES.parent / "cases" / "capacity"
    args = ["check", "--isolated", "--select", "GPU201", "--format", "json"]
    args += ["--profile", str(PROFILES / "placement-eks.yaml")]
    args += ["--profile", str(PROFILES / "kueue-queues.yaml")]
    result = CliRunner().invoke(main, [*args, str(cases / "GPU201-kueue-queued.yaml")])
    findings = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["line"], f["severity"]) for f in findings] == [
        ("GPU201", 13, "warning"),
        ("GPU201", 35, "warning"),
    ]
    assert findings[0]["message"] == (
        "Job/ml/finetune-a needs 8 nvidia.com/gpu (parallelism: 2 × 4 per pod), which pool g5 "
        "can give (12 at most), but not beside Job/ml/finetune-b (8: parallelism: 2 × 4): "
        "ClusterQueue team-a admits it when enough of them finish, so it is queued behind the "
        "others"
    )
    # Without the queues, the scheduler takes their pods in turn as others finish: a warning.
    plain = CliRunner().invoke(main, [*args[:-2], str(cases / "GPU201-kueue-queued.yaml")])
    found = json.loads(plain.stdout)["findings"]
    assert {f["severity"] for f in found} == {"warning"}
    assert found[0]["message"].endswith(
        "4 nvidia.com/gpu worth of pods wait until pods that run to completion (Jobs) free "
        "their GPUs, then run"
    )
    # Indexed, their pods may wait for each other while holding GPUs: an error.
    indexed = (
        (cases / "GPU201-kueue-queued.yaml")
        .read_text()
        .replace("  parallelism: 2", "  completionMode: Indexed\n  parallelism: 2")
    )
    plain = CliRunner().invoke(main, [*args[:-2], "-"], input=indexed)
    assert {f["severity"] for f in json.loads(plain.stdout)["findings"]} == {"error"}
