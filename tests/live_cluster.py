"""A small GPU cluster served by kmock, and how tests run gpulint against it.

`serve(k)` registers the lists live mode reads (two 8-GPU A100 nodes tainted dedicated=gpu,
one CPU node, a GPU quota in `ml`, a PriorityClass); the `k` and `kubeconfig` fixtures of
tests/conftest.py give the server and a kubeconfig pointing at it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kmock
from click.testing import CliRunner, Result

from gpulint.cli import main
from gpulint.yamltree import parse
from tests.kube_server import item_list, status

ACTIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
LIST_PATHS = {
    "nodes": "/api/v1/nodes",
    "pods": "/api/v1/pods",
    "resourcequotas": "/api/v1/resourcequotas",
    "limitranges": "/api/v1/limitranges",
    "priorityclasses": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "nodepools": "/apis/karpenter.sh/v1/nodepools",
    "runtimeclasses": "/apis/node.k8s.io/v1/runtimeclasses",
}
NOT_FOUND = status(404, "NotFound", "the server could not find the requested resource")
KUEUE = "kueue.x-k8s.io"
#: The discovery request for the Kueue API group: 404 when Kueue is not installed.
KUEUE_DISCOVERY = ("GET", f"/apis/{KUEUE}", {})
DRA = "resource.k8s.io"
#: The discovery request for the DRA API group: 404 where the cluster does not serve it.
DRA_DISCOVERY = ("GET", f"/apis/{DRA}", {})
#: The release the served cluster runs: it serves resource.k8s.io/v1 (DRA) and its betas.
SERVER_VERSION = "v1.35.0"
#: The API server's own version, read last (the release objects are validated against).
VERSION = ("GET", "/version", {})
#: The DRA lists live mode makes, in order, with the kind of their items.
DRA_LISTS = {
    "deviceclasses": ("DeviceClass", False),
    "resourceslices": ("ResourceSlice", False),
    "resourceclaims": ("ResourceClaim", True),
    "resourceclaimtemplates": ("ResourceClaimTemplate", True),
}


def gpu_node(name: str, pool: str, gpus: str = "8", allocatable_gpus: str | None = None):
    """A Ready EKS node of `pool` with `gpus` NVIDIA GPUs (allocatable may differ)."""
    return {
        "metadata": {
            "name": name,
            "labels": {
                "eks.amazonaws.com/nodegroup": pool,
                "node.kubernetes.io/instance-type": "p4d.24xlarge",
                "kubernetes.io/hostname": name,
            },
        },
        "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"cpu": "96", "memory": "1152Gi", "pods": "110", "nvidia.com/gpu": gpus},
            "allocatable": {
                "cpu": "95500m",
                "memory": "1100Gi",
                "pods": "110",
                "nvidia.com/gpu": allocatable_gpus if allocatable_gpus is not None else gpus,
            },
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def cpu_node(name: str) -> dict[str, Any]:
    """A Ready CPU node of pool `general`."""
    return {
        "metadata": {
            "name": name,
            "labels": {
                "eks.amazonaws.com/nodegroup": "general",
                "node.kubernetes.io/instance-type": "m5.2xlarge",
            },
        },
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "58"},
            "allocatable": {"cpu": "7910m", "memory": "30Gi", "pods": "58"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def gpu_pod(name: str, node: str, gpus: int) -> dict[str, Any]:
    """A running pod on `node` holding `gpus` GPUs."""
    limits = {"nvidia.com/gpu": str(gpus)}
    return {
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"limits": limits}}]},
        "status": {"phase": "Running"},
    }


QUOTA = {
    "metadata": {"name": "gpu-quota", "namespace": "ml"},
    "spec": {"hard": {"requests.nvidia.com/gpu": "8"}},
    "status": {"hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "6"}},
}
PRIORITY = {"metadata": {"name": "gpu-high"}, "value": 100000, "preemptionPolicy": "Never"}
NODES = [gpu_node("gpu-1", "gpu-a100"), gpu_node("gpu-2", "gpu-a100"), cpu_node("cpu-1")]
PODS = [gpu_pod("busy-1", "gpu-1", 4), gpu_pod("busy-2", "gpu-2", 2)]

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: ml
spec:
  replicas: 2
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      priorityClassName: gpu-urgent
      containers:
      - name: trainer
        image: trainer:1.4
        resources:
          requests: {cpu: "8", memory: 32Gi}
          limits: {memory: 32Gi, nvidia.com/gpu: 2}
"""


def manifest_dir(root: Path, name: str, text: str) -> Path:
    """Directory `root`, created, holding one manifest file `name`."""
    root.mkdir()
    (root / name).write_text(text, encoding="utf-8")
    return root


def forbidden(resource: str, group: str) -> dict[str, Any]:
    """The Status of an RBAC denial to list `resource` of `group`."""
    message = (
        f'{resource}.{group} is forbidden: User "system:serviceaccount:ci:gpulint" cannot list '
        f'resource "{resource}" in API group "{group}" at the cluster scope'
    )
    return status(403, "Forbidden", message)


def serve(
    k: kmock.KubernetesScaffold,
    kueue: str | None = None,
    dra: str | None = None,
    version: str = SERVER_VERSION,
    **items: list[dict[str, Any]] | None,
) -> None:
    """Register the list endpoints live mode reads; `None` answers 404 (not installed).

    `/version` says `version` (kmock's own is a release older than the APIs served here).

    Kueue is installed at version `kueue` when given: its API group is in discovery and
    `clusterqueues`/`localqueues` (empty unless given) are served at that version. Likewise
    `resource.k8s.io` at version `dra`, with the DRA_LISTS.
    """
    k["get /version"] << {"major": "1", "minor": version.split(".")[1], "gitVersion": version}
    if dra is not None:
        for resource, (kind, namespaced) in DRA_LISTS.items():
            info = kmock.ResourceInfo(kind=kind, namespaced=namespaced)
            k.resources[f"{DRA}/{dra}/{resource}"] = info
            listed = item_list(kind, items.pop(resource, []) or [], f"{DRA}/{dra}")
            k[f"get /apis/{DRA}/{dra}/{resource}"] << listed
    if kueue is not None:
        for resource, kind in (("clusterqueues", "ClusterQueue"), ("localqueues", "LocalQueue")):
            info = kmock.ResourceInfo(kind=kind, namespaced=resource == "localqueues")
            k.resources[f"{KUEUE}/{kueue}/{resource}"] = info
            listed = item_list(kind, items.pop(resource, []) or [], f"{KUEUE}/{kueue}")
            k[f"get /apis/{KUEUE}/{kueue}/{resource}"] << listed
    kinds = {
        "nodes": ("Node", "v1"),
        "pods": ("Pod", "v1"),
        "resourcequotas": ("ResourceQuota", "v1"),
        "limitranges": ("LimitRange", "v1"),
        "priorityclasses": ("PriorityClass", "scheduling.k8s.io/v1"),
        "nodepools": ("NodePool", "karpenter.sh/v1"),
        "runtimeclasses": ("RuntimeClass", "node.k8s.io/v1"),
    }
    defaults = {"nodes": NODES, "pods": PODS, "resourcequotas": [QUOTA]}
    defaults |= {"priorityclasses": [PRIORITY], "limitranges": [], "nodepools": None}
    defaults |= {"runtimeclasses": None}
    for resource, (kind, api_version) in kinds.items():
        found = items.get(resource, defaults[resource])
        path = f"get {LIST_PATHS[resource]}"
        if found is None:
            k[path] << 404 << NOT_FOUND
        else:
            k[path] << item_list(kind, found, api_version)


#: The plural under which serve() takes the objects of each kind.
RESOURCES = {
    "Node": "nodes",
    "Pod": "pods",
    "ResourceQuota": "resourcequotas",
    "LimitRange": "limitranges",
    "PriorityClass": "priorityclasses",
    "RuntimeClass": "runtimeclasses",
    "ClusterQueue": "clusterqueues",
    "LocalQueue": "localqueues",
    **{kind: resource for resource, (kind, _) in DRA_LISTS.items()},
}


def dump_items(*paths: str | Path) -> list[dict[str, Any]]:
    """The items of `kubectl get -o yaml` dumps, as the plain JSON the API sends."""
    items = []
    for path in paths:
        value = parse(Path(path).read_text(encoding="utf-8")).documents[0].value
        items.extend(json.loads(json.dumps(value["items"])))
    return items


def by_resource(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """`items` grouped for serve(): plural -> the objects of that kind, without `kind` (the
    API leaves it out of list items)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        without_kind = {key: value for key, value in item.items() if key != "kind"}
        grouped.setdefault(RESOURCES[item["kind"]], []).append(without_kind)
    return grouped


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    """`gpulint ARGS` in-process, with no kubeconfig or in-cluster settings leaking in."""
    base: dict[str, str | None] = {"KUBECONFIG": None, "KUBERNETES_SERVICE_HOST": None}
    return CliRunner().invoke(main, list(args), env={**base, **(env or {})})


def report(result: Result) -> dict[str, Any]:
    """The JSON report of a run that finished (exit 0 or 1)."""
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def findings(result: Result) -> list[tuple[str, int, int, str]]:
    """(code, line, column, message) of every finding."""
    return [(f["code"], f["line"], f["column"], f["message"]) for f in report(result)["findings"]]


def requests(k: kmock.KubernetesScaffold) -> list[tuple[str, str, dict[str, str]]]:
    """(method, path, query) of every request the server received, in order."""
    return [(str(r.method.value), r.url.path, dict(r.params)) for r in k]


def unordered(found: list[tuple[str, str, dict[str, str]]]) -> list[str]:
    """Requests in no order: live mode makes its list calls in parallel."""
    return sorted(repr(r) for r in found)


def of_group(found: list[tuple[str, str, dict[str, str]]], group: str):
    """The requests to API group `group`, discovery first, in the order they were made."""
    return [r for r in found if r[1] == f"/apis/{group}" or r[1].startswith(f"/apis/{group}/")]


def retried(k: kmock.KubernetesScaffold) -> list[tuple[str, str, dict[str, str]]]:
    """The requests made more than once."""
    found = requests(k)
    return [r for i, r in enumerate(found) if r in found[:i]]


def check_live(kubeconfig: Path, manifests: Path, *extra: str) -> Result:
    return run(
        "check", "--isolated", "--format", "json", "--live", "--kubeconfig", str(kubeconfig),
        *extra, str(manifests),
    )  # fmt: skip


def error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]
