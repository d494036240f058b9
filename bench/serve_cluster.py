"""Serve a make_cluster.py dump from the test Kubernetes API server (kmock), for live mode.

The dump's Nodes and Pods (and its Events, for `diagnose --live`) are answered by kmock
(tests/kube_server.py) as a real API server pages them: `limit` and `continue` honoured, the
list's kind and apiVersion, the item kind left out. What else live mode reads answers as a
cluster without it would: no quotas, LimitRanges or PriorityClasses, no Karpenter, Kueue or
DRA. Each page is encoded once, before the first request, so that the server's own JSON
encoding is not what a benchmark of its clients measures.

Usage: python bench/serve_cluster.py DUMP.json KUBECONFIG  (prints `ready` once it serves;
runs until stdin closes or it is killed)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The list calls served from the dump, by the kind of their items.
LISTS = {"Node": "/api/v1/nodes", "Pod": "/api/v1/pods", "Event": "/api/v1/events"}
#: Lists served empty (what live mode reads of every cluster besides nodes and pods).
EMPTY = {
    "ResourceQuota": ("/api/v1/resourcequotas", "v1"),
    "LimitRange": ("/api/v1/limitranges", "v1"),
    "ReplicaSet": ("/apis/apps/v1/replicasets", "apps/v1"),
    "Job": ("/apis/batch/v1/jobs", "batch/v1"),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1"),
}
#: Discovery of the API groups of the add-ons and DRA: not served.
UNSERVED = (
    "/apis/karpenter.sh/v1/nodepools",
    "/apis/kueue.x-k8s.io",
    "/apis/resource.k8s.io",
)
SERVER_VERSION = {"major": "1", "minor": "33", "gitVersion": "v1.33.1"}


def by_kind(dump: Path) -> dict[str, list[dict[str, Any]]]:
    """The dump's items per kind, without the `kind` and `apiVersion` a list leaves out."""
    with dump.open(encoding="utf-8") as handle:
        items = json.load(handle)["items"]
    found: dict[str, list[dict[str, Any]]] = {kind: [] for kind in LISTS}
    for item in items:
        kind = item.pop("kind", None)
        item.pop("apiVersion", None)
        if kind in found:
            found[kind].append(item)
    return found


def paged(kind: str, items: list[dict[str, Any]]) -> Callable[[Any], Any]:
    """A kmock reaction answering the page `limit` and `continue` ask for, encoded once."""
    encoded: dict[tuple[int, int], bytes] = {}

    def page(request: Any) -> bytes:
        start = int(request.params.get("continue") or 0)
        limit = int(request.params.get("limit") or len(items) or 1)
        key = (start, limit)
        if key not in encoded:
            end = start + limit
            meta = {"resourceVersion": "1", **({"continue": str(end)} if end < len(items) else {})}
            body = {"kind": f"{kind}List", "apiVersion": "v1", "metadata": meta}
            encoded[key] = json.dumps({**body, "items": items[start:end]}).encode()
        return encoded[key]  # kmock sends bytes as they are

    return page


def serve(dump: Path, kubeconfig: Path) -> None:
    """Serve `dump` until stdin closes; write a kubeconfig pointing at the server."""
    from tests.kube_server import KubeServer, item_list, status, write_kubeconfig

    found = by_kind(dump)
    server = KubeServer().start()
    with server.scaffold() as k:
        for kind, path in LISTS.items():
            k[f"get {path}"] << paged(kind, found[kind])
        for kind, (path, api_version) in EMPTY.items():
            k[f"get {path}"] << item_list(kind, [], api_version)
        for path in UNSERVED:
            k[f"get {path}"] << 404 << status(404, "NotFound", "the server could not find it")
        k["get /version"] << SERVER_VERSION
        write_kubeconfig(kubeconfig, server.url)
        print("ready", flush=True)
        sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    serve(Path(sys.argv[1]), Path(sys.argv[2]))
