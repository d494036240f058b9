"""Pools of clusters whose nodes carry no pool label, as messages name them."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpulint.cli import main


def _node(name: str, rack: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "rack": rack}},
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "4"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  nodeSelector: {rack: r9}
  containers:
  - name: c
    image: registry.example.com/c:1.0
    resources:
      limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 1}
"""


def test_a_message_names_three_pools_and_how_many_more(tmp_path: Path) -> None:
    # 6 racks of 8 kubeadm GPU nodes each: 6 pools, not 48.
    nodes = [_node(f"rack{r}-gpu-{i}", f"r{r}") for r in range(6) for i in range(8)]
    dump = tmp_path / "nodes.json"
    dump.write_text(json.dumps({"kind": "List", "items": nodes}))
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    args = ["check", "--isolated", "--select", "GPU101", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--profile", str(dump), str(pod)])
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["line"], finding["column"]) == (5, 18)
    assert finding["message"] == (
        "no node pool can run this pod (requests 1 nvidia.com/gpu): rack0-gpu-*: nodeSelector "
        "rack=r9 (pool has r0); rack1-gpu-*: nodeSelector rack=r9 (pool has r1); rack2-gpu-*: "
        "nodeSelector rack=r9 (pool has r2) and 3 more like them"
    )


def _zonal_node(name: str, zone: str) -> dict:
    node = _node(name, "r1")
    node["metadata"]["labels"].update(
        {"eks.amazonaws.com/nodegroup": "gpu", "topology.kubernetes.io/zone": zone}
    )
    return node


def test_a_node_group_across_zones_is_selected_by_each_of_its_zones(tmp_path: Path) -> None:
    nodes = [_zonal_node("gpu-1", "us-west-2a"), _zonal_node("gpu-2", "us-west-2b")]
    dump = tmp_path / "nodes.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    codes = {}
    for zone in ("us-west-2b", "us-east-1a"):
        pod = tmp_path / f"{zone}.yaml"
        pod.write_text(POD.replace("{rack: r9}", f"{{topology.kubernetes.io/zone: {zone}}}"))
        args = ["check", "--isolated", "--format", "json", "--profile", str(dump), str(pod)]
        result = CliRunner().invoke(main, args)
        codes[zone] = [(f["code"], f["message"]) for f in json.loads(result.stdout)["findings"]]
    assert codes["us-west-2b"] == []
    ((code, message),) = codes["us-east-1a"]
    assert code == "GPU101"
    assert message.endswith(
        "gpu: nodeSelector topology.kubernetes.io/zone=us-east-1a (pool has one of us-west-2a, "
        "us-west-2b)"
    )
