"""Write a synthetic cluster dump for `gpulint diagnose`: nodes, pods and their events.

The dump is what `kubectl get pods,events,nodes -A -o json` (or `-o yaml`) prints for a
cluster of N nodes (the node groups of make_corpus.py's profile: a fifth of them GPU pools),
P pods (one in ten asks for GPUs, and one GPU pod in fifty is Pending: unschedulable, with the
scheduler's and the autoscaler's events) and E events: each pod's life as the kubelet tells it
(Scheduled, Pulling, Pulled, Created, Started, then probes and restarts), round after round
until E are written. Objects are written one by one, so the generator holds none of them.

Usage: python bench/make_cluster.py OUT.json [--nodes 5000 --pods 50000 --events 500000]
       [--scale 0.25]  (a quarter of each count)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import make_corpus  # noqa: E402  (a sibling script, not an installed module)

NODES, PODS, EVENTS = 5_000, 50_000, 500_000
POOLS = 50
START = datetime(2026, 12, 1, 8, 0, 0, tzinfo=timezone.utc)
GPU_EVERY = 10  # one pod in ten asks for GPUs
PENDING_EVERY = 50  # one GPU pod in fifty is Pending
_IMAGES = ("registry.example.com/web/api:1.42.0", "registry.example.com/ml/trainer:2.3.1")


def _time(seconds: int) -> str:
    return (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pools(nodes: int) -> list[tuple[str, Any, str]]:
    """(pool, node group, zone) of each pool, as make_corpus.make_profile spreads them."""
    groups = make_corpus._NODE_GROUPS
    zones = make_corpus._ZONES
    pools = min(POOLS, nodes)
    return [
        (f"{groups[i % len(groups)].prefix}-{i}", groups[i % len(groups)], zones[i % 4])
        for i in range(pools)
    ]


def nodes_of(count: int) -> Iterator[dict[str, Any]]:
    """`count` Node objects."""
    pools = _pools(count)
    for serial in range(count):
        pool, group, zone = pools[serial % len(pools)]
        yield make_corpus._node(group, pool, zone, serial + 1)


class _Pod:
    """What the generator remembers of a pod to write its events: a few strings."""

    __slots__ = ("created", "gpu", "name", "namespace", "node", "pending", "uid")

    def __init__(self, serial: int, gpu_nodes: list[str], cpu_nodes: list[str]) -> None:
        self.namespace = f"team-{serial % 40}"
        self.gpu = serial % GPU_EVERY == 0
        self.pending = self.gpu and (serial // GPU_EVERY) % PENDING_EVERY == 0
        self.name = f"{'train' if self.gpu else 'web'}-{serial // 7:05d}-{serial:06x}"
        self.uid = f"0b8e6f9a-{serial % 65536:04x}-4c1d-8e2f-{serial:012x}"
        nodes = gpu_nodes if self.gpu else cpu_nodes
        self.node = None if self.pending else nodes[serial % len(nodes)]
        self.created = serial % 86_400


def pod_object(pod: _Pod, serial: int) -> dict[str, Any]:
    """One Pod as the API returns it."""
    resources: dict[str, Any] = {"requests": {"cpu": "500m", "memory": "1Gi"}}
    if pod.gpu:
        resources = {
            "limits": {"nvidia.com/gpu": "1", "memory": "32Gi"},
            "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": "1"},
        }
    image = _IMAGES[1 if pod.gpu else 0]
    created = _time(pod.created)
    spec: dict[str, Any] = {
        "containers": [
            {
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "name": "main",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": resources,
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "volumeMounts": [
                    {
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                        "name": "kube-api-access",
                        "readOnly": True,
                    }
                ],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
        ],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420}}],
    }
    if pod.gpu:
        spec["nodeSelector"] = {"node.kubernetes.io/instance-type": "p4d.24xlarge"}
    if pod.node:
        spec["nodeName"] = pod.node
    if pod.pending:
        status: dict[str, Any] = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": created,
                    "message": _UNSCHEDULABLE,
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ],
            "phase": "Pending",
            "qosClass": "Burstable",
        }
    else:
        started = _time(pod.created + 40)
        status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": started,
                    "status": "True",
                    "type": kind,
                }
                for kind in ("Initialized", "Ready", "ContainersReady")
            ]
            + [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": _time(pod.created + 2),
                    "status": "True",
                    "type": "PodScheduled",
                }
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{serial:064x}",
                    "image": image,
                    "imageID": f"{image.split(':')[0]}@sha256:{serial:064x}",
                    "lastState": {},
                    "name": "main",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": started}},
                }
            ],
            "hostIP": "10.0.0.1",
            "phase": "Running",
            "podIP": f"10.1.{serial // 256 % 256}.{serial % 256}",
            "qosClass": "Burstable",
            "startTime": _time(pod.created + 2),
        }
    owner = f"{pod.name.rsplit('-', 1)[0]}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": created,
            "generateName": f"{owner}-",
            "labels": {"app": owner, "pod-template-hash": "5d8c7b9f6d"},
            "name": pod.name,
            "namespace": pod.namespace,
            "resourceVersion": str(50_000_000 + serial),
            "uid": pod.uid,
        },
        "spec": spec,
        "status": status,
    }


_UNSCHEDULABLE = (
    "0/5000 nodes are available: 100 Insufficient nvidia.com/gpu, 4900 node(s) didn't match "
    "Pod's node affinity/selector. preemption: 0/5000 nodes are available: 100 No preemption "
    "victims found for incoming pod, 4900 Preemption is not helpful for scheduling."
)
#: A running pod's events, as the scheduler and the kubelet write them, in turn.
_LIFE = (
    ("Scheduled", "default-scheduler", "Successfully assigned {ns}/{name} to {node}", 2),
    ("Pulling", "kubelet", 'Pulling image "{image}"', 3),
    (
        "Pulled",
        "kubelet",
        'Successfully pulled image "{image}" in 21.481s (21.481s including waiting). '
        "Image size: 5212418315 bytes.",
        25,
    ),
    ("Created", "kubelet", "Created container main", 26),
    ("Started", "kubelet", "Started container main", 27),
    ("Unhealthy", "kubelet", "Readiness probe failed: HTTP probe failed with statuscode: 503", 30),
    ("Killing", "kubelet", "Container main failed liveness probe, will be restarted", 600),
    ("BackOff", "kubelet", "Back-off restarting failed container main in pod {name}", 620),
)
_PENDING = (
    ("FailedScheduling", "default-scheduler", _UNSCHEDULABLE, 1),
    (
        "NotTriggerScaleUp",
        "cluster-autoscaler",
        "pod didn't trigger scale-up: 3 max node group size reached, 47 node(s) didn't match "
        "Pod's node affinity/selector",
        5,
    ),
)


def event_object(pod: _Pod, round_: int, serial: int) -> dict[str, Any]:
    """The `round_`th event about `pod`."""
    life = _PENDING if pod.pending else _LIFE
    reason, component, text, offset = life[round_ % len(life)]
    seconds = pod.created + offset + 3600 * (round_ // len(life))
    image = _IMAGES[1 if pod.gpu else 0]
    message = text.format(ns=pod.namespace, name=pod.name, node=pod.node, image=image)
    source: dict[str, str] = {"component": component}
    if component == "kubelet":
        source["host"] = pod.node or ""
    return {
        "apiVersion": "v1",
        "count": 1 + round_ // len(life),
        "eventTime": None,
        "firstTimestamp": _time(pod.created + offset),
        "involvedObject": {
            "apiVersion": "v1",
            "fieldPath": "spec.containers{main}" if component == "kubelet" else None,
            "kind": "Pod",
            "name": pod.name,
            "namespace": pod.namespace,
            "resourceVersion": str(50_000_000 + serial % 100_000),
            "uid": pod.uid,
        },
        "kind": "Event",
        "lastTimestamp": _time(seconds),
        "message": message,
        "metadata": {
            "creationTimestamp": _time(pod.created + offset),
            "name": f"{pod.name}.{serial:016x}",
            "namespace": pod.namespace,
            "resourceVersion": str(60_000_000 + serial),
            "uid": f"7c3d9e1f-{serial % 65536:04x}-4a2b-9c8d-{serial:012x}",
        },
        "reason": reason,
        "reportingComponent": component,
        "reportingInstance": pod.node or "",
        "source": source,
        "type": "Warning"
        if reason in ("FailedScheduling", "NotTriggerScaleUp", "BackOff", "Unhealthy")
        else "Normal",
    }


def cluster_objects(nodes: int, pods: int, events: int) -> Iterator[dict[str, Any]]:
    """The pods, the events, then the nodes, in the order kubectl prints `pods,events,nodes`."""
    pools = _pools(nodes)
    names = [
        make_corpus._node(group, pool, zone, serial + 1)["metadata"]["name"]
        for serial, (pool, group, zone) in ((s, pools[s % len(pools)]) for s in range(nodes))
    ]
    gpu_nodes = [n for i, n in enumerate(names) if pools[i % len(pools)][1].gpu]
    cpu_nodes = [n for i, n in enumerate(names) if not pools[i % len(pools)][1].gpu]
    kept = [_Pod(serial, gpu_nodes or names, cpu_nodes or names) for serial in range(pods)]
    for serial, pod in enumerate(kept):
        yield pod_object(pod, serial)
    for serial in range(events):
        pod = kept[serial % len(kept)]
        yield event_object(pod, serial // len(kept), serial)
    yield from nodes_of(nodes)


def write_dump(path: Path, nodes: int, pods: int, events: int) -> None:
    """The dump as one `kind: List`: JSON for a `.json` path (as `-o json`), else YAML."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        if path.suffix == ".json":
            out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
            for i, obj in enumerate(cluster_objects(nodes, pods, events)):
                out.write(("" if i == 0 else ",\n") + json.dumps(obj, indent=4))
            out.write('\n    ],\n    "kind": "List",\n    "metadata": {"resourceVersion": ""}\n}\n')
            return
        out.write("apiVersion: v1\nitems:\n")
        for obj in cluster_objects(nodes, pods, events):
            emitter = make_corpus.Emitter()
            emitter._sequence([obj], 0)
            out.write("\n".join(emitter.lines) + "\n")
        out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--nodes", type=int, default=NODES)
    parser.add_argument("--pods", type=int, default=PODS)
    parser.add_argument("--events", type=int, default=EVENTS)
    parser.add_argument("--scale", type=float, default=1.0, help="a share of each count")
    args = parser.parse_args(argv)
    counts = [max(1, round(n * args.scale)) for n in (args.nodes, args.pods, args.events)]
    write_dump(args.out, *counts)
    print(f"wrote {args.out}: {counts[0]:,} nodes, {counts[1]:,} pods, {counts[2]:,} events")


if __name__ == "__main__":
    main()
