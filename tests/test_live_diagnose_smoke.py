"""`gpulint diagnose --live` and `gpulint smoke --live` against a real HTTP Kubernetes API.

kmock (see kube_server.py) serves the objects of the fixture dumps, so the live report must
equal the report of the dumps; the requests made must be lists that docs/rbac.yaml grants.
"""

from __future__ import annotations

import json

import kmock
from click.testing import CliRunner

from gpulint.cli import main
from tests.kube_server import item_list, status, write_kubeconfig
from tests.live_cluster import NOT_FOUND, dump_items, requests, serve
from tests.test_diagnose import NODES, NOW, STUCK
from tests.test_diagnose import run as run_diagnose
from tests.test_live_dryrun import allowed, role_rules

LISTS = {
    "/api/v1/nodes": "Node",
    "/api/v1/pods": "Pod",
    "/api/v1/resourcequotas": "ResourceQuota",
    "/api/v1/limitranges": "LimitRange",
    "/apis/scheduling.k8s.io/v1/priorityclasses": "PriorityClass",
    "/api/v1/events": "Event",
    "/apis/apps/v1/replicasets": "ReplicaSet",
    "/apis/batch/v1/jobs": "Job",
}


def serve_dumps(k: kmock.KubernetesScaffold, forbidden: str | None = None) -> None:
    """Serve every list diagnose reads with the fixture dumps' objects; no Karpenter.

    The list at path `forbidden` answers 403 instead.
    """
    items = dump_items(STUCK, NODES)
    for path, kind in LISTS.items():
        if path == forbidden:
            body = status(403, "Forbidden", f'{path} is forbidden: User "ci" cannot list')
            k[f"get {path}"] << 403 << body
            continue
        found = [{k_: v for k_, v in i.items() if k_ != "kind"} for i in items if i["kind"] == kind]
        api_version = next((i["apiVersion"] for i in items if i["kind"] == kind), "v1")
        k[f"get {path}"] << item_list(kind, found, api_version)
    k["get /apis/karpenter.sh/v1/nodepools"] << 404 << NOT_FOUND


def test_live_report_equals_the_report_of_the_dumps(k, kubeconfig) -> None:
    serve_dumps(k)
    live = run_diagnose("--live", "--kubeconfig", str(kubeconfig), "--now", NOW, "--format", "json")
    assert live.exit_code == 1, live.output
    offline = run_diagnose(STUCK, NODES, "--now", NOW, "--format", "json")
    assert json.loads(live.stdout) == json.loads(offline.stdout)
    paths = [path for _, path, _ in requests(k)]
    assert paths[-3:] == ["/api/v1/events", "/apis/apps/v1/replicasets", "/apis/batch/v1/jobs"]


def test_live_diagnose_asks_only_for_what_the_rbac_roles_grant(k, kubeconfig) -> None:
    serve_dumps(k)
    run_diagnose("--live", "--kubeconfig", str(kubeconfig), "--now", NOW)
    rules = role_rules("gpulint-live") + role_rules("gpulint-diagnose")
    made = requests(k)
    # And Karpenter's list, the discovery of Kueue and of DRA: none of them is installed.
    assert len(made) == len(LISTS) + 3
    assert all(allowed(rules, method, path) for method, path, _ in made)


def test_forbidden_events_stop_with_one_line_naming_the_resource(k, kubeconfig) -> None:
    serve_dumps(k, forbidden="/api/v1/events")
    result = run_diagnose("--live", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert "not allowed to list events (403 Forbidden)" in result.stderr


def test_unreachable_cluster_is_one_line(tmp_path) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", "http://127.0.0.1:9")
    result = run_diagnose("--live", "--kubeconfig", str(config), "--request-timeout", "2")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("gpulint: error: cannot connect to the Kubernetes API")
    assert result.stderr.count("\n") == 1


def test_live_smoke_writes_a_job_for_the_gpu_pool_of_the_cluster(k, kubeconfig) -> None:
    serve(k)  # pools gpu-a100 (2 nodes, tainted dedicated=gpu) and general
    result = CliRunner().invoke(main, ["smoke", "--live", "--kubeconfig", str(kubeconfig)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("kind: Job") == 1
    assert "name: gpulint-smoke-gpu-a100\n" in result.stdout
    assert "      nodeSelector:\n        eks.amazonaws.com/nodegroup: gpu-a100\n" in result.stdout
    assert "      - key: dedicated\n        operator: Equal\n        value: gpu\n" in result.stdout


def test_live_diagnose_of_one_namespace_needs_only_a_namespaced_role(k, kubeconfig) -> None:
    # The cluster-wide lists are forbidden; the namespace's pods, events, ReplicaSets and Jobs
    # are served, as a RoleBinding of gpulint-diagnose-namespace in `ml` allows.
    items = dump_items(STUCK)
    denied = status(403, "Forbidden", 'nodes is forbidden: User "ci" cannot list')
    k["get /api/v1/nodes"] << 403 << denied
    for path, kind in LISTS.items():
        if kind in ("Pod", "Event", "ReplicaSet", "Job"):
            head, _, resource = path.rpartition("/")
            found = [
                {k_: v for k_, v in i.items() if k_ != "kind"}
                for i in items
                if i["kind"] == kind and i["metadata"].get("namespace") == "ml"
            ]
            api_version = next((i["apiVersion"] for i in items if i["kind"] == kind), "v1")
            k[f"get {head}/namespaces/ml/{resource}"] << item_list(kind, found, api_version)
    live = run_diagnose(
        "--live", "--kubeconfig", str(kubeconfig), "--now", NOW, "--format", "json", "-n", "ml"
    )
    assert live.exit_code == 1, live.output
    report = json.loads(live.stdout)
    assert report["pods"] and {p["namespace"] for p in report["pods"]} == {"ml"}
    assert report["notes"][0].startswith("no Nodes")
    rules = role_rules("gpulint-diagnose-namespace")
    listed = [(m, p) for m, p, _ in requests(k) if p != "/api/v1/nodes"]
    assert [p for _, p in listed] == [
        "/api/v1/namespaces/ml/pods",
        "/api/v1/namespaces/ml/events",
        "/apis/apps/v1/namespaces/ml/replicasets",
        "/apis/batch/v1/namespaces/ml/jobs",
    ]
    assert all(allowed(rules, method, path) for method, path in listed)
