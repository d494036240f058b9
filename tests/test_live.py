"""`gpulint check --live` and `gpulint profile snapshot` against a real HTTP Kubernetes API.

kmock serves canned lists on 127.0.0.1; gpulint talks to it with the real `kubernetes` client
through a generated kubeconfig. Tests assert what the server received as well as the output.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import kmock
import pytest

from gpulint.live.client import PAGE_SIZE, ConnectionOptions
from gpulint.live.cluster import pod_owner
from gpulint.live.session import open_live
from tests.kube_server import TOKEN, item_list, kube_server, status, write_kubeconfig
from tests.live_cluster import (
    ACTIVE_PODS,
    DRA,
    DRA_DISCOVERY,
    DRA_LISTS,
    KUEUE,
    KUEUE_DISCOVERY,
    MANIFEST,
    NODES,
    PODS,
    VERSION,
    by_resource,
    check_live,
    cpu_node,
    dump_items,
    error_line,
    findings,
    forbidden,
    gpu_node,
    gpu_pod,
    manifest_dir,
    of_group,
    report,
    requests,
    retried,
    run,
    serve,
    unordered,
)

#: The page size of every list call.
LIMIT = str(PAGE_SIZE)


@pytest.fixture()
def manifests(tmp_path: Path) -> Path:
    """A directory with one GPU Deployment."""
    return manifest_dir(tmp_path / "manifests", "trainer.yaml", MANIFEST)


# --- what is read, and how ------------------------------------------------------------------


def test_live_reads_each_resource_once_with_pagination_params(k, kubeconfig, manifests) -> None:
    serve(k)
    result = check_live(kubeconfig, manifests)
    report(result)
    # The lists are made in parallel: in no order, each once.
    assert unordered(requests(k)) == unordered(
        [
            ("GET", "/api/v1/nodes", {"limit": LIMIT}),
            ("GET", "/api/v1/pods", {"fieldSelector": ACTIVE_PODS, "limit": LIMIT}),
            ("GET", "/api/v1/resourcequotas", {"limit": LIMIT}),
            ("GET", "/api/v1/limitranges", {"limit": LIMIT}),
            ("GET", "/apis/scheduling.k8s.io/v1/priorityclasses", {"limit": LIMIT}),
            ("GET", "/apis/karpenter.sh/v1/nodepools", {"limit": LIMIT}),
            ("GET", "/apis/node.k8s.io/v1/runtimeclasses", {"limit": LIMIT}),
            KUEUE_DISCOVERY,
            DRA_DISCOVERY,
            VERSION,
        ]
    )
    assert {r.headers["Authorization"] for r in k} == {f"Bearer {TOKEN}"}


def test_pagination_follows_continue_tokens(k, kubeconfig) -> None:
    # Two pages of nodes: the second is asked for with the first page's continue token.
    k["get /api/v1/nodes", kmock.params({"continue": "page-2"})] << item_list("Node", [NODES[1]])
    k["get /api/v1/nodes"] << item_list("Node", [NODES[0], NODES[2]], **{"continue": "page-2"})
    serve(k, nodes=[])  # the other resources; this empty node list is never reached
    cluster = open_live(ConnectionOptions(str(kubeconfig)))
    cluster.close()
    node_requests = [q for _, path, q in requests(k) if path == "/api/v1/nodes"]
    assert node_requests == [{"limit": LIMIT}, {"limit": LIMIT, "continue": "page-2"}]
    # The node of the second page is in the profile: pool gpu-a100 has both nodes.
    assert [(p.name, p.nodes) for p in cluster.profile.pools] == [("gpu-a100", 2), ("general", 1)]


def test_the_next_page_is_asked_for_from_the_metadata_before_the_items(k, kubeconfig) -> None:
    from gpulint.live.client import _continue_of

    first = json.dumps(item_list("Node", [NODES[0]], **{"continue": "page-2"})).encode()
    assert _continue_of(first) == "page-2"
    # Not found before the items, or the last page: the page is decoded first.
    items_first = {"items": [NODES[0]], "metadata": {"continue": "page-2"}}
    assert _continue_of(json.dumps(items_first).encode()) is None
    assert _continue_of(json.dumps(item_list("Node", [NODES[0]])).encode()) is None
    assert _continue_of(b'{"metadata": {"continue": "x"}, "kind": ') is None
    assert _continue_of(b'{"metadata": ' + b"[" * 4000 + b'"items"') is None
    # A guess the decoded page contradicts (the last of two `metadata` keys counts) is dropped
    # and the page its token names is read.
    contradicted = first[:-1] + b', "metadata": {"continue": "page-3"}}'
    assert _continue_of(contradicted) == "page-2"
    k["get /api/v1/nodes", kmock.params({"continue": "page-3"})] << item_list("Node", [NODES[1]])
    k["get /api/v1/nodes", kmock.params({"continue": "page-2"})] << item_list("Node", [NODES[2]])
    k["get /api/v1/nodes"] << contradicted
    serve(k, nodes=[])
    cluster = open_live(ConnectionOptions(str(kubeconfig)))
    cluster.close()
    assert [(p.name, p.nodes) for p in cluster.profile.pools] == [("gpu-a100", 2)]
    node_requests = [q.get("continue") for _, path, q in requests(k) if path == "/api/v1/nodes"]
    assert node_requests[0] is None and "page-3" in node_requests


def test_missing_karpenter_crd_is_not_an_error(k, kubeconfig, manifests) -> None:
    serve(k, nodepools=None)
    result = check_live(kubeconfig, manifests)
    assert result.exit_code == 1, result.output
    assert ("GET", "/apis/karpenter.sh/v1/nodepools", {"limit": LIMIT}) in requests(k)
    # The run went on with the other resources: quota, taints and priority classes all count.
    assert [f[:2] for f in findings(result)] == [("GPU301", 7), ("GPU102", 13), ("GPU401", 14)]
    assert report(result)["notes"] == []


def test_karpenter_nodepool_becomes_a_pool_joined_with_its_nodes(k, kubeconfig) -> None:
    nodepool = {
        "metadata": {"name": "gpu-karpenter"},
        "spec": {
            "limits": {"nvidia.com/gpu": "16"},
            "template": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                    "requirements": [
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": ["p4d.24xlarge", "p3.2xlarge"],
                        }
                    ],
                },
            },
        },
    }
    launched = gpu_node("ip-10-0-0-7", "unused")
    launched["metadata"]["labels"] = {
        "karpenter.sh/nodepool": "gpu-karpenter",
        "team": "ml",
        "node.kubernetes.io/instance-type": "p4d.24xlarge",
    }
    serve(k, nodes=[launched, cpu_node("cpu-1")], pods=[], nodepools=[nodepool])
    text = snapshot_of(k, kubeconfig)
    pool = text.split("  - name: gpu-karpenter\n")[1].split("  - name:")[0]
    # Labels of both; what the node reports (allocatable, count, its taint) wins over the
    # NodePool's estimate; the NodePool states min 0, scale from zero, and its limit: 16 GPUs
    # of p4d.24xlarge (8 each, the largest allowed type) allow 2 nodes.
    assert pool == (
        "    labels: {team: ml, karpenter.sh/nodepool: gpu-karpenter, "
        "node.kubernetes.io/instance-type: p4d.24xlarge}\n"
        "    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n"
        "    instanceType: p4d.24xlarge\n"
        "    allocatable: {cpu: 95500m, memory: 1100Gi, pods: 110, nvidia.com/gpu: 8}\n"
        "    nodes: 1\n"
        "    minNodes: 0\n"
        "    maxNodes: 2\n"
        "    scaleFromZero: true\n"
        "    devicePluginNotReady: 0\n"
        "    labelsObserved: true\n"
    )


def test_karpenter_nodepool_without_nodes_is_estimated_from_the_catalogue(k, kubeconfig) -> None:
    nodepool = {
        "metadata": {"name": "gpu-spot"},
        "spec": {
            "limits": {"nvidia.com/gpu": "4"},
            "template": {
                "spec": {
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                    "requirements": [
                        {
                            "key": "karpenter.k8s.aws/instance-family",
                            "operator": "In",
                            "values": ["p4d", "p3"],
                        }
                    ],
                },
            },
        },
    }
    serve(k, nodes=[], pods=[], nodepools=[nodepool])
    text = snapshot_of(k, kubeconfig)
    pool = text.split("  - name: gpu-spot\n")[1].split("  - name:")[0].split("  namespaces:")[0]
    # Families p4d and p3: the 4-GPU limit drops the 8-GPU sizes, as Karpenter does, which
    # leaves p3.8xlarge (4 GPUs) as the largest: one node.
    assert pool == (
        "    labels: {karpenter.sh/nodepool: gpu-spot}\n"
        '    taints: [{key: nvidia.com/gpu, value: "", effect: NoSchedule}]\n'
        "    instanceType: p3.8xlarge\n"
        "    allocatable: {cpu: 32, memory: 244Gi, pods: 110, nvidia.com/gpu: 4}\n"
        "    nodes: 0\n"
        "    minNodes: 0\n"
        "    maxNodes: 1\n"
        "    scaleFromZero: true\n"
        "    devicePluginNotReady: 0\n"
    )


def test_device_plugin_not_ready_is_a_summary_note(k, kubeconfig, manifests) -> None:
    broken = gpu_node("gpu-3", "gpu-a100", gpus="8", allocatable_gpus="0")
    serve(k, nodes=[*NODES, broken])
    result = check_live(kubeconfig, manifests)
    assert report(result)["notes"][0] == "device plugin not ready on 1 node of pool gpu-a100"
    text = run(
        "check", "--isolated", "--live", "--kubeconfig", str(kubeconfig), str(manifests)
    ).stdout  # fmt: skip
    assert "device plugin not ready on 1 node of pool gpu-a100\n" in text


# --- Kueue queues ---------------------------------------------------------------------------

QUEUED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: team-a
spec:
  parallelism: 2
  completions: 2
  suspend: true
  template:
    spec:
      restartPolicy: Never
      tolerations:
      - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
      containers:
      - name: train
        image: trainer:1.4
        resources:
          requests: {cpu: "8", memory: 32Gi}
          limits: {memory: 32Gi, nvidia.com/gpu: 4}
"""
CLUSTER_QUEUE = {
    "metadata": {"name": "team-a"},
    "spec": {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                "flavors": [
                    {
                        "name": "a100",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "96"},
                            {"name": "memory", "nominalQuota": "1Ti"},
                            {"name": "nvidia.com/gpu", "nominalQuota": 4},
                        ],
                    }
                ],
            }
        ],
    },
}
LOCAL_QUEUE = {
    "metadata": {"name": "team-a", "namespace": "research"},
    "spec": {"clusterQueue": "team-a"},
}
QUEUES = {"clusterqueues": [CLUSTER_QUEUE], "localqueues": [LOCAL_QUEUE]}
GPU310_MESSAGE = (
    "ClusterQueue team-a (LocalQueue research/team-a) can give at most 4 `nvidia.com/gpu` "
    "(flavor a100), but Job/research/finetune needs 8 at once: Kueue never admits it"
)


@pytest.fixture()
def queued(tmp_path: Path) -> Path:
    """A directory with one GPU Job in Kueue LocalQueue research/team-a."""
    return manifest_dir(tmp_path / "queued", "finetune.yaml", QUEUED_JOB)


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_kueue_queues_are_read_at_the_served_version(k, kubeconfig, queued, version) -> None:
    serve(k, kueue=version, **QUEUES)
    result = check_live(kubeconfig, queued)
    assert result.exit_code == 1, result.output
    assert findings(result) == [("GPU310", 7, 32, GPU310_MESSAGE)]
    assert report(result)["notes"] == []
    # Discovery names the version; both queue kinds are then listed at it, cluster-wide.
    assert of_group(requests(k), KUEUE) == [
        KUEUE_DISCOVERY,
        ("GET", f"/apis/{KUEUE}/{version}/clusterqueues", {"limit": LIMIT}),
        ("GET", f"/apis/{KUEUE}/{version}/localqueues", {"limit": LIMIT}),
    ]


def test_snapshot_writes_the_queues_and_checks_alike_offline(k, kubeconfig, queued, tmp_path):
    serve(k, kueue="v1beta2", **QUEUES)
    text = snapshot_of(k, kubeconfig)
    assert text.split("  clusterQueues:\n")[1] == (
        "  - name: team-a\n"
        "    resourceGroups:\n"
        "    - coveredResources: [cpu, memory, nvidia.com/gpu]\n"
        "      flavors:\n"
        "      - name: a100\n"
        "        resources:\n"
        "        - {name: cpu, nominalQuota: 96}\n"
        "        - {name: memory, nominalQuota: 1Ti}\n"
        "        - {name: nvidia.com/gpu, nominalQuota: 4}\n"
        "  localQueues:\n"
        "  - {namespace: research, name: team-a, clusterQueue: team-a}\n"
    )
    snapshot = tmp_path / "profile.yaml"
    snapshot.write_text(text, encoding="utf-8")
    static = run("check", "--isolated", "--format", "json", "--profile", str(snapshot),
                 str(queued))  # fmt: skip
    assert findings(static) == [("GPU310", 7, 32, GPU310_MESSAGE)]


def test_missing_kueue_crds_are_not_an_error(k, kubeconfig, queued) -> None:
    serve(k, **QUEUES)  # Kueue is not installed: its API group is not in discovery
    result = check_live(kubeconfig, queued)
    assert result.exit_code == 0, result.output
    assert report(result)["notes"] == []
    assert of_group(requests(k), KUEUE) == [KUEUE_DISCOVERY]
    assert not [path for _, path, _ in requests(k) if path.endswith("queues")]


DISCOVERY_DENIED = status(
    403,
    "Forbidden",
    'forbidden: User "system:serviceaccount:ci:gpulint" cannot get path "/apis/kueue.x-k8s.io"',
)


@pytest.mark.parametrize(
    ("path", "denial", "body"),
    [
        (f"/apis/{KUEUE}/v1beta2/clusterqueues", f"list clusterqueues.{KUEUE}",
         forbidden("clusterqueues", KUEUE)),
        (f"/apis/{KUEUE}/v1beta2/localqueues", f"list localqueues.{KUEUE}",
         forbidden("localqueues", KUEUE)),
        # Clusters that removed the system:discovery binding deny the discovery document.
        (f"/apis/{KUEUE}", f"get /apis/{KUEUE}", DISCOVERY_DENIED),
    ],
)  # fmt: skip
def test_kueue_queues_rbac_denies_are_one_note(k, kubeconfig, queued, path, denial, body) -> None:
    k[f"get {path}"] << 403 << body
    serve(k, kueue="v1beta2", **QUEUES)
    result = check_live(kubeconfig, queued)
    # No queue is known, so none is reported: the run is as clean as without Kueue.
    assert result.exit_code == 0, result.output
    assert findings(result) == []
    assert report(result)["notes"] == [
        f"Kueue ClusterQueues and LocalQueues not read (GPU310 checks no queue): not allowed to "
        f"{denial} (403 Forbidden): grant the gpulint-live ClusterRole of docs/rbac.yaml to "
        f"context `kmock`; the server said: {body['message']}"
    ]
    text = run("check", "--isolated", "--live", "--kubeconfig", str(kubeconfig), str(queued))
    assert text.exit_code == 0, text.output
    assert text.stdout.count("Kueue ClusterQueues and LocalQueues not read") == 1


def test_snapshot_without_kueue_permission_notes_it_and_writes_no_queues(k, kubeconfig):
    k[f"get /apis/{KUEUE}/v1beta2/clusterqueues"] << 403 << forbidden("clusterqueues", KUEUE)
    serve(k, kueue="v1beta2", **QUEUES)
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 0, result.output
    assert "Queues:" not in result.stdout
    assert result.stderr.startswith(
        "gpulint: note: Kueue ClusterQueues and LocalQueues not read (GPU310 checks no queue): "
        f"not allowed to list clusterqueues.{KUEUE} (403 Forbidden)"
    )
    assert result.stderr.count("\n") == 1


def test_karpenter_nodepools_rbac_denies_are_a_note_too(k, kubeconfig, manifests) -> None:
    path = "/apis/karpenter.sh/v1/nodepools"
    k[f"get {path}"] << 403 << forbidden("nodepools", "karpenter.sh")
    serve(k)
    result = check_live(kubeconfig, manifests)
    assert result.exit_code == 1, result.output
    assert [f[:2] for f in findings(result)] == [("GPU301", 7), ("GPU102", 13), ("GPU401", 14)]
    assert report(result)["notes"] == [
        "Karpenter NodePools not read (pools with no nodes are unknown): not allowed to list "
        "nodepools.karpenter.sh (403 Forbidden): grant the gpulint-live ClusterRole of "
        "docs/rbac.yaml to context `kmock`; the server said: "
        + forbidden("nodepools", "karpenter.sh")["message"]
    ]


# --- DRA (resource.k8s.io) -------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
#: A cluster whose GPUs the NVIDIA DRA driver serves: its nodes advertise no nvidia.com/gpu,
#: DeviceClass gpu.nvidia.com serves `extendedResourceName: nvidia.com/gpu`, and the nodes'
#: ResourceSlices publish 8 GPUs (h100-a), 4 GPUs and 3 MIG slices (h100-b).
DRA_PROFILE = ROOT / "fixtures" / "profiles" / "dra-nodes.yaml"
#: Claims for more devices than any node publishes (GPU704), a missing class (GPU703) and a
#: missing template (GPU702).
DRA_CASE = ROOT / "fixtures" / "cases" / "dra" / "GPU704-count-exceeds-nodes.yaml"
#: (code, line, column) of its findings against that cluster.
DRA_CASE_FINDINGS = [("GPU704", 13, 18), ("GPU704", 17, 18), ("GPU703", 37, 28), ("GPU702", 58, 36)]
#: ... and without the cluster's DRA objects: both entries name templates the inputs lack.
INPUTS_ONLY_FINDINGS = [("GPU702", 58, 36), ("GPU702", 60, 36)]
#: What a cluster of those nodes says when its ResourceSlices are unknown.
PLUGIN_NOTE = "device plugin not ready on 2 nodes of pool h100-dra"
GPU704_MESSAGE = (
    "request `gpus` wants 16 device(s) of class `gpu.nvidia.com`, but the cluster's "
    "ResourceSlices publish at most 8 on one node (node h100-a): the claim can never be allocated"
)
#: A Deployment asking for `nvidia.com/gpu`, which only the DeviceClass serves on that cluster.
EXTENDED_RESOURCE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: ml}
spec:
  selector:
    matchLabels: {app: infer}
  template:
    metadata:
      labels: {app: infer}
    spec:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.0
        resources:
          requests: {cpu: "4", memory: 16Gi}
          limits: {memory: 16Gi, nvidia.com/gpu: 1}
"""


def serve_dra_cluster(k: kmock.KubernetesScaffold, dra: str | None = "v1") -> None:
    """The DRA_PROFILE cluster, with `resource.k8s.io` served at version `dra` (None: not)."""
    objects = by_resource(dump_items(DRA_PROFILE))
    if dra is None:
        objects = {r: items for r, items in objects.items() if r not in DRA_LISTS}
    serve(k, dra=dra, **{"pods": [], "resourcequotas": [], **objects})


def dra_lists(version: str) -> list[tuple[str, str, dict[str, str]]]:
    """The requests live mode makes to read DRA at `version`."""
    paths = [f"/apis/{DRA}/{version}/{resource}" for resource in DRA_LISTS]
    return [DRA_DISCOVERY, *(("GET", path, {"limit": LIMIT}) for path in paths)]


@pytest.mark.parametrize("version", ["v1", "v1beta2"])
def test_dra_objects_are_read_at_the_served_version(k, kubeconfig, version) -> None:
    serve_dra_cluster(k, version)
    result = check_live(kubeconfig, DRA_CASE)
    assert result.exit_code == 1, result.output
    assert [f[:3] for f in findings(result)] == DRA_CASE_FINDINGS
    # The claim of 16 GPUs meets the 8 that node h100-a publishes: GPU704 at its count.
    assert findings(result)[0][3] == GPU704_MESSAGE
    assert report(result)["notes"] == []
    # Discovery names the version; each DRA resource is then listed at it, cluster-wide.
    assert of_group(requests(k), DRA) == dra_lists(version)


def test_live_dra_findings_equal_those_of_the_kubectl_dump(k, kubeconfig) -> None:
    serve_dra_cluster(k)
    static = run("check", "--isolated", "--format", "json", "--profile", str(DRA_PROFILE),
                 str(DRA_CASE))  # fmt: skip
    live = findings(check_live(kubeconfig, DRA_CASE))
    assert live == findings(static)
    assert [f[:3] for f in live] == DRA_CASE_FINDINGS


def test_a_snapshot_of_a_dra_cluster_gives_the_findings_of_live_mode(k, kubeconfig, tmp_path):
    serve_dra_cluster(k)
    snapshot = tmp_path / "snapshot.yaml"
    written = run("profile", "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))
    assert written.exit_code == 0, written.output
    manifests = manifest_dir(tmp_path / "m", "infer.yaml", EXTENDED_RESOURCE_DEPLOYMENT)
    offline = {
        inputs: findings(
            run("check", "--isolated", "--format", "json", "--profile", str(snapshot), str(inputs))
        )
        for inputs in (DRA_CASE, manifests)
    }
    assert offline == {inputs: findings(check_live(kubeconfig, inputs)) for inputs in offline}
    # GPU702, GPU703 and GPU704 hold on the snapshot's claims, classes and slices; and the
    # DeviceClass's extendedResourceName serves nvidia.com/gpu (no GPU001 on the Deployment).
    assert [f[:3] for f in offline[DRA_CASE]] == DRA_CASE_FINDINGS
    assert offline[DRA_CASE][0][3] == GPU704_MESSAGE
    assert offline[manifests] == []


def test_extended_resource_served_by_a_device_class_is_no_gpu001(k, kubeconfig, tmp_path) -> None:
    manifests = manifest_dir(tmp_path / "m", "infer.yaml", EXTENDED_RESOURCE_DEPLOYMENT)
    serve_dra_cluster(k)
    result = check_live(kubeconfig, manifests)
    assert result.exit_code == 0, result.output
    assert findings(result) == []
    assert report(result)["notes"] == []


def test_snapshot_shows_the_dra_nodes_as_such(k, kubeconfig) -> None:
    serve_dra_cluster(k)
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # no "device plugin not ready": the GPUs are DRA's
    pool = result.stdout.split("  - name: h100-dra\n")[1].split("  - name:")[0]
    assert pool.endswith("    devicePluginNotReady: 0\n    labelsObserved: true\n    draNodes: 2\n")


def test_a_cluster_without_the_dra_api_reads_no_dra_and_says_nothing(k, kubeconfig, tmp_path):
    # The same nodes, but `resource.k8s.io` is not served (before 1.34, or DRA turned off):
    # nothing serves nvidia.com/gpu, and the claims are checked against the inputs only.
    manifests = manifest_dir(tmp_path / "m", "infer.yaml", EXTENDED_RESOURCE_DEPLOYMENT)
    serve_dra_cluster(k, dra=None)
    result = check_live(kubeconfig, manifests)
    assert result.exit_code == 1, result.output
    assert [f[:3] for f in findings(result)] == [("GPU001", 18, 34)]
    # Without ResourceSlices, GPU nodes advertising no GPU look like a device plugin down.
    assert report(result)["notes"] == [PLUGIN_NOTE]
    assert of_group(requests(k), DRA) == [DRA_DISCOVERY]
    assert not [path for _, path, _ in requests(k) if path.startswith(f"/apis/{DRA}/")]
    # The inputs define templates in `ml`: the missing one is still known (GPU702); what the
    # cluster's classes and slices would say is not.
    claims = check_live(kubeconfig, DRA_CASE)
    assert [f[:3] for f in findings(claims)] == INPUTS_ONLY_FINDINGS


def test_claims_on_a_cluster_without_dra_are_checked_as_without_a_cluster(
    k, kubeconfig, manifests
) -> None:
    serve(k)  # the default cluster: device plugin GPUs, no `resource.k8s.io`
    live = check_live(kubeconfig, DRA_CASE)
    offline = run("check", "--isolated", "--format", "json", str(DRA_CASE))
    assert findings(live) == findings(offline)
    assert report(live)["notes"] == []


def test_a_denied_dra_list_is_one_note_and_the_others_are_read(k, kubeconfig) -> None:
    k[f"get /apis/{DRA}/v1/resourceslices"] << 403 << forbidden("resourceslices", DRA)
    serve_dra_cluster(k)
    result = check_live(kubeconfig, DRA_CASE)
    assert result.exit_code == 1, result.output
    # Without the slices no device count is judged; the classes and templates still are.
    assert [f[:3] for f in findings(result)] == DRA_CASE_FINDINGS[2:]
    assert report(result)["notes"] == [
        "DRA ResourceSlices not read (GPU704 checks no device count): not allowed to list "
        f"resourceslices.{DRA} (403 Forbidden): grant the gpulint-live ClusterRole of "
        "docs/rbac.yaml to context `kmock`; the server said: "
        + forbidden("resourceslices", DRA)["message"],
        PLUGIN_NOTE,
    ]
    text = run("check", "--isolated", "--live", "--kubeconfig", str(kubeconfig), str(DRA_CASE))
    assert text.stdout.count("DRA ResourceSlices not read") == 1


def test_a_denied_dra_discovery_is_one_note(k, kubeconfig) -> None:
    denied = status(403, "Forbidden", f'forbidden: User "ci" cannot get path "/apis/{DRA}"')
    k[f"get /apis/{DRA}"] << 403 << denied
    serve_dra_cluster(k)
    result = check_live(kubeconfig, DRA_CASE)
    assert result.exit_code == 1, result.output
    assert [f[:3] for f in findings(result)] == INPUTS_ONLY_FINDINGS
    assert report(result)["notes"] == [
        "DRA objects not read (GPU702-GPU705 check the inputs only): not allowed to get "
        f"/apis/{DRA} (403 Forbidden): grant the gpulint-live ClusterRole of docs/rbac.yaml to "
        f"context `kmock`; the server said: {denied['message']}",
        PLUGIN_NOTE,
    ]


def owned(kind: str, name: str, controller: bool = True) -> dict[str, Any]:
    """An ownerReference to `kind` `name`."""
    return {"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": controller}


@pytest.mark.parametrize(
    ("owners", "labels", "expected"),
    [
        ([owned("ReplicaSet", "web-5d8f7c9b6")], {"pod-template-hash": "5d8f7c9b6"},
         ("ml", "Deployment", "web")),
        # A ReplicaSet created by hand: no template hash to strip.
        ([owned("ReplicaSet", "web-5d8f7c9b6")], {}, ("ml", "ReplicaSet", "web-5d8f7c9b6")),
        ([owned("ReplicaSet", "web")], {"pod-template-hash": "5d8f7c9b6"},
         ("ml", "ReplicaSet", "web")),
        ([owned("StatefulSet", "db")], {}, ("ml", "StatefulSet", "db")),
        ([owned("DaemonSet", "agent")], {}, ("ml", "DaemonSet", "agent")),
        ([owned("Job", "train-28899")], {}, ("ml", "Job", "train-28899")),
        ([owned("ReplicationController", "old")], {}, ("ml", "ReplicationController", "old")),
        ([owned("LeaderWorkerSet", "llm")], {}, ("ml", "LeaderWorkerSet", "llm")),
        # Only the controller owns the pod; other owners do not.
        ([owned("Workflow", "wf", controller=False), owned("Job", "step")], {},
         ("ml", "Job", "step")),
        ([owned("Workflow", "wf", controller=False)], {}, ("ml", "Pod", "p")),
        ([], {}, ("ml", "Pod", "p")),
    ],
)  # fmt: skip
def test_pods_belong_to_the_workload_of_their_controller(
    owners: list[dict[str, Any]], labels: dict[str, str], expected: tuple[str, str, str]
) -> None:
    metadata = {"name": "p", "namespace": "ml", "labels": labels, "ownerReferences": owners}
    assert pod_owner({"metadata": metadata}) == expected


def test_gpus_in_use_come_from_active_pods_on_each_pool(k, kubeconfig) -> None:
    pending_unbound = {"metadata": {"name": "p", "namespace": "ml"}, "spec": {"containers": []}}
    serve(k, pods=[*PODS, pending_unbound, gpu_pod("busy-3", "gpu-1", 1)])
    cluster = open_live(ConnectionOptions(str(kubeconfig)))
    cluster.close()
    pools = {p.name: p for p in cluster.profile.pools}
    assert dict(pools["gpu-a100"].gpus_in_use) == {"nvidia.com/gpu": 7}
    assert dict(pools["general"].gpus_in_use) == {}
    assert pools["gpu-a100"].nodes == 2


def test_each_bound_pod_is_read_once(k, kubeconfig, monkeypatch) -> None:
    import gpulint.live.cluster as live_cluster

    read: Counter[str] = Counter()
    convert = live_cluster.pod_extended_requests

    def counted(pod: dict[str, Any], memo: Any = None) -> Any:
        read[pod["metadata"]["name"]] += 1
        return convert(pod, memo)

    monkeypatch.setattr(live_cluster, "pod_extended_requests", counted)
    serve(k, pods=[*PODS, gpu_pod("busy-3", "gpu-1", 1)])
    cluster = open_live(ConnectionOptions(str(kubeconfig)))
    cluster.close()
    pools = {p.name: p for p in cluster.profile.pools}
    assert read["busy-3"] == 1 and set(read.values()) == {1}
    # Both what is in use and who uses it come from that one read.
    assert dict(pools["gpu-a100"].gpus_in_use) == {"nvidia.com/gpu": 7}
    users = {(u.kind, u.name): dict(u.resources) for u in pools["gpu-a100"].gpus_in_use_by}
    assert sum(sum(r.values()) for r in users.values()) == 7


def test_the_pods_of_a_workload_are_converted_once(k, kubeconfig, monkeypatch) -> None:
    import gpulint.pods

    converted: list[str] = []
    convert = gpulint.pods.pod_template

    def counted(document: Any, obj: Any) -> Any:
        converted.append(document.ref.name)
        return convert(document, obj)

    monkeypatch.setattr(gpulint.pods, "pod_template", counted)
    alike = [gpu_pod(f"busy-{i}", f"gpu-{i % 2 + 1}", 2) for i in range(3)]
    serve(k, pods=[*alike, gpu_pod("busy-3", "gpu-1", 1)])
    cluster = open_live(ConnectionOptions(str(kubeconfig)))
    cluster.close()
    # The three pods written alike once, the pod that asks for another count once.
    assert converted == ["busy-0", "busy-3"]
    pools = {p.name: p for p in cluster.profile.pools}
    assert dict(pools["gpu-a100"].gpus_in_use) == {"nvidia.com/gpu": 7}


def _container(name: str, **resources: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "image": "img", "resources": resources}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"containers": [_container("c", limits={"nvidia.com/gpu": "2"})]}, {"nvidia.com/gpu": 2}),
        # The largest init container counts when it asks for more than the app containers.
        ({"containers": [_container("c", requests={"nvidia.com/gpu": "1"})],
          "initContainers": [_container("i", limits={"nvidia.com/gpu": "4"})]},
         {"nvidia.com/gpu": 4}),
        # A sidecar (an init container that restarts Always) adds to every later container.
        ({"containers": [_container("c", requests={"nvidia.com/gpu": "1"})],
          "initContainers": [{**_container("s", limits={"example.com/fpga": "1"}),
                              "restartPolicy": "Always"}]},
         {"nvidia.com/gpu": 1, "example.com/fpga": 1}),
        ({"containers": [_container("c", requests={"cpu": "1"})],
          "overhead": {"example.com/vf": "1", "cpu": "250m"}}, {"example.com/vf": 1}),
        # No extended resource: nothing, whatever else the pod asks for.
        ({"containers": [_container("c", requests={"cpu": "1", "memory": "1Gi"})]}, {}),
        ({"containers": [_container("c", requests={"nvidia.com/gpu": "0"})]}, {}),
        ({"containers": "not a list"}, {}),
        ({"containers": [["not", "a", "container"], _container("c", limits={"a.io/x": "1"})]},
         {"a.io/x": 1}),
    ],
)  # fmt: skip
def test_extended_requests_of_a_pod_equal_those_of_its_whole_typed_model(
    spec: dict[str, Any], expected: dict[str, int]
) -> None:
    from gpulint.pods import api_document, pod_extended_requests
    from gpulint.workloads import pod_template

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "labels": {"app": "x"}},
        "spec": {"nodeName": "gpu-1", "tolerations": [], **spec},
    }
    document = api_document(pod)
    template = pod_template(document, document.obj)
    assert template is not None
    whole = {n: a for n, a in template.effective_requests.items() if "/" in n and a > 0}
    assert pod_extended_requests(pod) == whole == expected
    # Kept by what they are computed from, they are the same when asked for again.
    memo: dict[str, Any] = {}
    assert pod_extended_requests(pod, memo) == pod_extended_requests(pod, memo) == expected


# --- connection failures: one line, exit 2 --------------------------------------------------


def test_403_on_priorityclasses_names_verb_and_resource(k, kubeconfig, manifests) -> None:
    denied = (
        'priorityclasses.scheduling.k8s.io is forbidden: User "system:serviceaccount:ci:gpulint" '
        'cannot list resource "priorityclasses" in API group "scheduling.k8s.io" at the cluster '
        "scope"
    )
    k["get /apis/scheduling.k8s.io/v1/priorityclasses"] << 403 << status(403, "Forbidden", denied)
    serve(k)
    line = error_line(check_live(kubeconfig, manifests))
    assert line == (
        "gpulint: error: not allowed to list priorityclasses.scheduling.k8s.io (403 Forbidden): "
        "grant the gpulint-live ClusterRole of docs/rbac.yaml to context `kmock`; "
        f"the server said: {denied}"
    )


def test_401_says_to_refresh_credentials(k, kubeconfig, manifests) -> None:
    k["get /api/v1/nodes"] << 401 << status(401, "Unauthorized", "Unauthorized")
    line = error_line(check_live(kubeconfig, manifests))
    assert line == (
        f"gpulint: error: the Kubernetes API at {kube_server().url} rejected the credentials "
        "of context `kmock` (401 Unauthorized); log in again or refresh the kubeconfig's token"
    )
    assert not retried(k)


@pytest.mark.parametrize(
    "body",
    [b"<html>login</html>", b'{"kind": "NodeList", "items": ' + b"[" * 100_000 + b"]" * 100_000],
    ids=["html", "nested-deeper-than-python-recurses"],
)
def test_a_server_that_is_not_kubernetes(k, kubeconfig, manifests, body: bytes) -> None:
    k["get /api/v1/nodes"] << 200 << body
    assert error_line(check_live(kubeconfig, manifests)) == (
        f"gpulint: error: {kube_server().url} answered the list of nodes with something that "
        "is not a Kubernetes list; check the server address of context `kmock`"
    )


def test_connection_refused(tmp_path: Path, manifests: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    line = error_line(check_live(kubeconfig, manifests))
    assert time.monotonic() - started < 2
    assert line.startswith(
        f"gpulint: error: cannot connect to the Kubernetes API at http://127.0.0.1:{port}: "
    )
    assert "Connection refused" in line
    assert line.endswith(
        "check the server address of context `kmock` and that the cluster is reachable from here"
    )


def test_slow_server_hits_the_request_timeout(k, kubeconfig, manifests) -> None:
    async def slow() -> dict[str, Any]:
        await asyncio.sleep(1.5)
        return item_list("Node", [])

    k["get /api/v1/nodes"] << slow
    started = time.monotonic()
    line = error_line(check_live(kubeconfig, manifests, "--request-timeout", "0.2"))
    elapsed = time.monotonic() - started
    assert line == (
        f"gpulint: error: the Kubernetes API at {kube_server().url} did not answer "
        "GET /api/v1/nodes within 0.2 s; raise --request-timeout or check the network path "
        "to the cluster"
    )
    assert elapsed < 1.2  # one attempt, no retries
    assert not retried(k)


def test_tls_failure(k, tmp_path: Path, manifests: Path) -> None:
    # The server speaks plain HTTP; an https:// kubeconfig fails the TLS handshake.
    url = kube_server().url.replace("http://", "https://")
    kubeconfig = write_kubeconfig(tmp_path / "kc", url)
    line = error_line(check_live(kubeconfig, manifests))
    assert line.startswith(f"gpulint: error: TLS with the Kubernetes API at {url} failed: ")
    assert line.endswith("check the certificate-authority of context `kmock` in the kubeconfig")


def test_no_kubeconfig(tmp_path: Path, manifests: Path) -> None:
    missing = tmp_path / "nowhere"
    result = run("check", "--live", str(manifests), env={"KUBECONFIG": str(missing)})
    assert error_line(result) == (
        f"gpulint: error: no kubeconfig found at {missing}: pass --kubeconfig PATH or set "
        "KUBECONFIG (live mode reads the cluster named by the kubeconfig)"
    )


def test_in_cluster_config_is_used_when_kubernetes_service_host_is_set(manifests) -> None:
    # No kubeconfig anywhere; inside a pod the service account would be read. Here its token
    # file is missing, which is reported as such (no kubeconfig lookup happens).
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    result = run("check", "--live", str(manifests), env=env)
    assert error_line(result) == (
        "gpulint: error: KUBERNETES_SERVICE_HOST is set but the in-cluster service account "
        "cannot be used: Service token file does not exist; pass --kubeconfig, or run in a pod "
        "that mounts its service account token"
    )


def test_context_picks_a_cluster_other_than_the_current_one(k, tmp_path, manifests) -> None:
    config = json.loads(write_kubeconfig(tmp_path / "kc", kube_server().url).read_text())
    config["clusters"].append({"name": "prod", "cluster": {"server": "http://127.0.0.1:1"}})
    config["contexts"].append({"name": "prod", "context": {"cluster": "prod", "user": "tester"}})
    config["current-context"] = "prod"
    (tmp_path / "kc").write_text(json.dumps(config), encoding="utf-8")
    serve(k)
    result = run("check", "--isolated", "--live", "--context", "kmock", str(manifests),
                 env={"KUBECONFIG": str(tmp_path / "kc")})  # fmt: skip
    assert result.exit_code == 1, result.output
    assert len(requests(k)) == 10


def test_unknown_context(kubeconfig: Path, manifests: Path) -> None:
    result = check_live(kubeconfig, manifests, "--context", "prod")
    assert error_line(result) == (
        f"gpulint: error: context `prod` is not in kubeconfig {kubeconfig} (contexts: kmock); "
        "pass one of them to --context"
    )


def test_live_flags_need_live(manifests: Path) -> None:
    result = run("check", "--server-dry-run", str(manifests))
    assert error_line(result) == "gpulint: error: --server-dry-run needs --live"
    result = run("check", "--live", "--profile", "p.yaml", str(manifests))
    assert error_line(result) == (
        "gpulint: error: --live reads the profile from the cluster: drop --profile"
    )


# --- bounded work ---------------------------------------------------------------------------


@pytest.mark.slow
def test_five_thousand_nodes_take_one_request(k, kubeconfig, manifests) -> None:
    nodes = [gpu_node(f"gpu-{i}", f"pool-{i % 5}") for i in range(5000)]
    pods = [gpu_pod(f"busy-{i}", f"gpu-{i}", 1) for i in range(5000)]

    def pages(items: list[dict[str, Any]], kind: str):
        def page(request: Any) -> dict[str, Any]:
            start = int(request.params.get("continue") or 0)
            limit = int(request.params["limit"])
            rest = {"continue": str(start + limit)} if start + limit < len(items) else {}
            return item_list(kind, items[start : start + limit], **rest)

        return page

    k["get /api/v1/nodes"] << pages(nodes, "Node")
    k["get /api/v1/pods"] << pages(pods, "Pod")
    serve(k, nodes=[], pods=[])
    result = check_live(kubeconfig, manifests)
    report(result)
    paths = [path for _, path, _ in requests(k)]
    assert paths.count("/api/v1/nodes") == 1
    assert paths.count("/api/v1/pods") == 1
    assert len(paths) == 10


# --- import isolation -----------------------------------------------------------------------


def test_plain_check_does_not_import_the_kubernetes_client(manifests: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from gpulint.cli import main\n"
        f"CliRunner().invoke(main, ['check', '--isolated', {str(manifests)!r}])\n"
        "live = ('kubernetes', 'urllib3', 'msgspec')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in live))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


# --- snapshot -------------------------------------------------------------------------------


def snapshot_of(k: kmock.KubernetesScaffold, kubeconfig: Path) -> str:
    """`gpulint profile snapshot` to stdout."""
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_live_mode_without_server_dry_run_only_reads(k, kubeconfig, manifests) -> None:
    serve(k)
    hostile = Path(__file__).resolve().parent.parent / "fixtures" / "cases" / "manifest"
    result = run(
        "check", "--isolated", "--format", "json", "--live", "--kubeconfig", str(kubeconfig),
        str(manifests), str(hostile),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert requests(k) and {method for method, _, _ in requests(k)} == {"GET"}


# --- the server's release --------------------------------------------------------------------

HPA_V2BETA2 = """\
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata: {name: trainer, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: trainer}
  maxReplicas: 4
"""


def test_objects_are_validated_against_the_release_the_server_runs(k, kubeconfig, tmp_path):
    # autoscaling/v2beta2 is deprecated in 1.23 and removed in 1.26.
    hpa = manifest_dir(tmp_path / "m", "hpa.yaml", HPA_V2BETA2)
    serve(k, version="v1.25.16-eks-3025e55")
    result = check_live(kubeconfig, hpa, "--select", "GPU010,GPU011")
    assert [f[:3] for f in findings(result)] == [("GPU011", 1, 13)]
    assert requests(k).count(VERSION) == 1
    assert 'kubernetesVersion: "v1.25.16-eks-3025e55"\n' in snapshot_of(k, kubeconfig)


def test_a_refused_version_is_no_error_and_leaves_the_default_release(k, kubeconfig, tmp_path):
    hpa = manifest_dir(tmp_path / "m", "hpa.yaml", HPA_V2BETA2)
    k["get /version"] << 403 << status(403, "Forbidden", "forbidden: /version")
    serve(k)  # its /version answer comes after the refusal, which kmock gives first
    result = check_live(kubeconfig, hpa, "--select", "GPU010,GPU011")
    # Without the server's word the target is the newest release: v2beta2 is gone there.
    assert [f[:3] for f in findings(result)] == [("GPU010", 1, 13)]
    assert "kubernetesVersion" not in snapshot_of(k, kubeconfig)


# --- RuntimeClasses ---------------------------------------------------------------------------

#: MANIFEST with a runtimeClassName: the pod names the class `nvidia` (line 15, column 25).
NAMES_NVIDIA = MANIFEST.replace(
    "      priorityClassName: gpu-urgent\n",
    "      priorityClassName: gpu-urgent\n      runtimeClassName: nvidia\n",
)
NVIDIA_CDI = {"metadata": {"name": "nvidia-cdi"}, "handler": "nvidia-cdi"}
GPU307_MESSAGE = (
    "runtimeClassName `nvidia` names a RuntimeClass the cluster does not have (it has "
    "`nvidia-cdi`): the API server refuses every such pod (`pod rejected: RuntimeClass "
    '"nvidia" not found`), and its workload never gets one'
)


def test_runtime_classes_are_read_and_a_missing_one_is_gpu307(k, kubeconfig, tmp_path) -> None:
    serve(k, runtimeclasses=[NVIDIA_CDI])
    named = manifest_dir(tmp_path / "named", "trainer.yaml", NAMES_NVIDIA)
    result = check_live(kubeconfig, named)
    assert ("GPU307", 15, 25, GPU307_MESSAGE) in findings(result)
    assert report(result)["notes"] == []
    assert ("GET", "/apis/node.k8s.io/v1/runtimeclasses", {"limit": LIMIT}) in requests(k)


def test_a_cluster_without_runtime_classes_knows_it_has_none(k, kubeconfig) -> None:
    serve(k, runtimeclasses=[])
    assert "  runtimeClasses: []\n" in snapshot_of(k, kubeconfig)


def test_a_snapshot_of_runtime_classes_checks_alike_offline(k, kubeconfig, tmp_path) -> None:
    serve(k, runtimeclasses=[NVIDIA_CDI])
    text = snapshot_of(k, kubeconfig)
    assert "  runtimeClasses:\n  - name: nvidia-cdi\n    handler: nvidia-cdi\n" in text
    snapshot = tmp_path / "profile.yaml"
    snapshot.write_text(text, encoding="utf-8")
    named = manifest_dir(tmp_path / "named", "trainer.yaml", NAMES_NVIDIA)
    static = run("check", "--isolated", "--format", "json", "--profile", str(snapshot),
                 str(named))  # fmt: skip
    assert ("GPU307", 15, 25, GPU307_MESSAGE) in findings(static)


def test_runtime_classes_rbac_denies_are_a_note_and_no_gpu307(k, kubeconfig, tmp_path) -> None:
    path = "/apis/node.k8s.io/v1/runtimeclasses"
    k[f"get {path}"] << 403 << forbidden("runtimeclasses", "node.k8s.io")
    serve(k)
    named = manifest_dir(tmp_path / "named", "trainer.yaml", NAMES_NVIDIA)
    result = check_live(kubeconfig, named)
    assert [f for f in findings(result) if f[0] == "GPU307"] == []
    assert report(result)["notes"] == [
        "RuntimeClasses not read (GPU307 checks no runtimeClassName): not allowed to list "
        "runtimeclasses.node.k8s.io (403 Forbidden): grant the gpulint-live ClusterRole of "
        "docs/rbac.yaml to context `kmock`; the server said: "
        + forbidden("runtimeclasses", "node.k8s.io")["message"]
    ]
