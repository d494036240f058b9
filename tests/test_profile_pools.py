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
