"""A profile's size is its node groups, not its nodes: what a kubectl dump leaves per pool, the
cache entry and so what each pod template is placed against are the same whether a group has
20 nodes or 200 (only the node counts differ), and a run that reads the entry does not hold
the dump it was made from."""

from __future__ import annotations

import json
import pickle
import tracemalloc
from dataclasses import replace
from pathlib import Path

from gpulint.profile.cache import ProfileCache, _without_path
from gpulint.profile.load import load_profiles, profile_facts
from gpulint.profile.merge import ProfileFacts

ZONES = ("us-west-2a", "us-west-2b", "us-west-2c")
#: (node group, instance type, GPUs per node)
GROUPS = (("system", "m6i.4xlarge", 0), ("a100", "p4d.24xlarge", 8), ("l4", "g6.2xlarge", 1))


def _node(group: str, instance_type: str, gpus: int, serial: int, zone: str) -> dict:
    """A node of `group` with what differs from node to node in a real dump: its name, IP,
    provider ID, uid, zone (every group spans three), and a label of its own."""
    name = f"ip-10-0-{serial // 256}-{serial % 256}.us-west-2.compute.internal"
    labels = {
        "eks.amazonaws.com/nodegroup": group,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/zone": zone,
        "topology.k8s.aws/network-node-layer-3": f"nn-{serial:08x}",
    }
    allocatable = {"cpu": "15890m", "memory": f"{57_691_948 - serial % 7}Ki", "pods": "110"}
    spec: dict = {"providerID": f"aws:///{zone}/i-{serial:017x}"}
    if gpus:
        labels["nvidia.com/gpu.present"] = "true"
        allocatable["nvidia.com/gpu"] = str(gpus)
        spec["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    address = {"type": "InternalIP", "address": f"10.0.{serial // 256}.{serial % 256}"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{serial}", "labels": labels},
        "spec": spec,
        "status": {
            "addresses": [address],
            "allocatable": allocatable,
            "capacity": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _facts(tmp_path: Path, per_group: int) -> ProfileFacts:
    items = [
        _node(group, instance_type, gpus, len(GROUPS) * n + i, ZONES[n % len(ZONES)])
        for n in range(per_group)
        for i, (group, instance_type, gpus) in enumerate(GROUPS)
    ]
    path = tmp_path / f"nodes-{per_group}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    (facts,) = profile_facts(str(path), path.read_bytes())
    return facts


def _without_counts(facts: ProfileFacts) -> list[object]:
    return [
        view._replace(pool=replace(view.pool, nodes=0, min_nodes=0, max_nodes=0))
        for view in facts.pools
    ]


def test_a_pool_keeps_the_same_facts_for_20_nodes_as_for_200(tmp_path: Path) -> None:
    few, many = _facts(tmp_path, 20), _facts(tmp_path, 200)

    assert [view.pool.nodes for view in few.pools] == [20, 20, 20]
    assert [view.pool.nodes for view in many.pools] == [200, 200, 200]
    assert _without_counts(few) == _without_counts(many)
    # The zones every group spans are one requirement; the label of each node's own is none.
    (zone,) = [r for r in many.pools[1].pool.label_requirements if r.operator == "In"]
    assert (zone.key, zone.values) == ("topology.kubernetes.io/zone", ZONES)
    assert "topology.k8s.aws/network-node-layer-3" not in many.pools[1].pool.labels
    # What the cache keeps (and so every run reads) is the same size: nothing kept per node.
    stored = [_without_path(facts, facts.profile.sources[0]) for facts in (few, many)]
    assert len(pickle.dumps(stored[0])) == len(pickle.dumps(stored[1]))


def test_a_run_that_finds_the_entry_never_holds_the_whole_dump(tmp_path: Path) -> None:
    # 4,500 nodes in three groups.
    items = [
        _node(group, instance_type, gpus, len(GROUPS) * n + i, ZONES[n % len(ZONES)])
        for n in range(1500)
        for i, (group, instance_type, gpus) in enumerate(GROUPS)
    ]
    dump = tmp_path / "nodes.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4))
    size = dump.stat().st_size
    cache = ProfileCache(tmp_path / "cache")
    parsed = load_profiles([str(dump)], cache=cache)  # writes the entry

    tracemalloc.start()
    try:
        found = load_profiles([str(dump)], cache=cache)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert found == parsed and len(list(cache.directory.glob("profiles/*.pickle"))) == 1
    # 7.9 MB of JSON, read a megabyte at a time.
    assert size > 7_000_000 and peak < 2_000_000
