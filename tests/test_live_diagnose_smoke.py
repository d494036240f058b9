"""`gpulint diagnose --live` and `gpulint smoke --live` against a real HTTP Kubernetes API.

kmock (see kube_server.py) serves the objects of the fixture dumps, so the live report must
equal the report of the dumps; the requests made must be lists that docs/rbac.yaml grants.
"""

from __future__ import annotations

import json
from typing import Any

import kmock
import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.live.client import PAGE_SIZE
from tests.kube_server import item_list, status, write_kubeconfig
from tests.live_cluster import (
    DRA,
    DRA_LISTS,
    NOT_FOUND,
    RESOURCES,
    by_resource,
    dump_items,
    forbidden,
    requests,
    serve,
)
from tests.test_diagnose import NODES, NOW, STUCK, TODAY, TODAY_CAUSES
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
    # And Karpenter's list, the discovery of Kueue and of DRA: none of them is installed; and
    # the RuntimeClasses.
    assert len(made) == len(LISTS) + 4
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
    # The cluster-wide reads, made in parallel, are denied; then those of the namespace.
    listed = [(m, p) for m, p, _ in requests(k) if "/namespaces/" in p]
    assert [p for _, p in listed] == [
        "/api/v1/namespaces/ml/pods",
        "/api/v1/namespaces/ml/events",
        "/apis/apps/v1/namespaces/ml/replicasets",
        "/apis/batch/v1/namespaces/ml/jobs",
    ]
    assert all(allowed(rules, method, path) for method, path in listed)
    # Discovery, which every authenticated user may read (system:discovery): this cluster
    # serves neither DRA nor Kueue, so nothing of theirs is listed.
    groups = ("/apis/resource.k8s.io", "/apis/kueue.x-k8s.io")
    paths = {p for _, p, _ in requests(k)}
    assert set(groups) <= paths
    assert not [p for p in paths if p.startswith(tuple(f"{g}/" for g in groups))]


# --- Kueue Workloads and DRA claims -----------------------------------------------------------

KUEUE_GROUP = "kueue.x-k8s.io"
#: Listed per namespace besides serve()'s lists, in the order diagnose asks for them.
NAMESPACED_LISTS = {
    "Pod": "/api/v1/pods",
    "Event": "/api/v1/events",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "Job": "/apis/batch/v1/jobs",
}


def without_kind(items: list[dict[str, Any]], kind: str, namespace: str | None = None):
    """The items of `kind` (in `namespace` when given) as list items: without `kind`."""
    return [
        {key: value for key, value in item.items() if key != "kind"}
        for item in items
        if item["kind"] == kind and namespace in (None, item["metadata"].get("namespace"))
    ]


def serve_today(
    k: kmock.KubernetesScaffold, kueue: str | None = "v1beta2", dra: str | None = "v1"
) -> None:
    """The cluster of the gpu-today dump, with Kueue and DRA served at those versions (None:
    the cluster does not serve that API group)."""
    items = dump_items(TODAY)
    served = [i for i in items if i["kind"] in RESOURCES]
    if dra is None:
        served = [i for i in served if not i["apiVersion"].startswith(f"{DRA}/")]
    groups = by_resource(served)
    serve(k, kueue=kueue, dra=dra, resourcequotas=[], priorityclasses=[], **groups)
    for path, kind in (("/api/v1/events", "Event"), ("/apis/apps/v1/replicasets", "ReplicaSet")):
        k[f"get {path}"] << item_list(kind, without_kind(items, kind))
    k["get /apis/batch/v1/jobs"] << item_list("Job", without_kind(items, "Job"), "batch/v1")
    if kueue is not None:
        k.resources[f"{KUEUE_GROUP}/{kueue}/workloads"] = kmock.ResourceInfo(
            kind="Workload", namespaced=True
        )
        workloads = item_list("Workload", without_kind(items, "Workload"), f"{KUEUE_GROUP}/{kueue}")
        k[f"get /apis/{KUEUE_GROUP}/{kueue}/workloads"] << workloads


def diagnose_live(kubeconfig, *args: str) -> dict[str, Any]:
    """The JSON report of `gpulint diagnose --live` at the dumps' time."""
    result = run_diagnose(
        "--live", "--kubeconfig", str(kubeconfig), "--now", NOW, "--format", "json", *args
    )
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def causes(report: dict[str, Any]) -> dict[str, str]:
    """Pod (or job) name -> cause."""
    return {p["name"]: p["cause"] for p in report["pods"]}


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_live_kueue_and_dra_causes_equal_those_of_the_dump(k, kubeconfig, version) -> None:
    serve_today(k, kueue=version)
    live = diagnose_live(kubeconfig)
    assert causes(live) == TODAY_CAUSES
    assert live["notes"] == []
    offline = run_diagnose(TODAY, "--now", NOW, "--format", "json")
    assert live == json.loads(offline.stdout)
    # The Workloads are listed once, cluster-wide, at the version Kueue's discovery names.
    workloads = f"/apis/{KUEUE_GROUP}/{version}/workloads"
    assert [p for _, p, _ in requests(k)].count(workloads) == 1
    assert ("GET", workloads, {"limit": str(PAGE_SIZE)}) in requests(k)
    rules = role_rules("gpulint-live") + role_rules("gpulint-diagnose")
    assert [(m, p) for m, p, _ in requests(k) if not allowed(rules, m, p)] == []


def queued_message(report: dict[str, Any]) -> str:
    """The evidence of the suspended Job train-big."""
    (job,) = [p for p in report["pods"] if p["name"] == "train-big"]
    return job["evidence"][0]["message"]


def without_queued_message(report: dict[str, Any]) -> dict[str, Any]:
    """The report less train-big's evidence message."""
    pods = [
        {**p, "evidence": [{**e, "message": None} for e in p["evidence"]]}
        if p["name"] == "train-big"
        else p
        for p in report["pods"]
    ]
    return {**report, "pods": pods}


def test_live_cluster_without_kueue_or_dra_is_judged_as_a_dump_without_them(
    k, kubeconfig, tmp_path
) -> None:
    serve_today(k, kueue=None, dra=None)
    live = diagnose_live(kubeconfig)
    # The dump of such a cluster: no Workloads, LocalQueues or DRA objects.
    dump = tmp_path / "dump.yaml"
    items = [
        i for i in dump_items(TODAY)
        if not i["apiVersion"].startswith((f"{DRA}/", f"{KUEUE_GROUP}/"))
    ]  # fmt: skip
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    offline = json.loads(run_diagnose(str(dump), "--now", NOW, "--format", "json").stdout)
    # The suspended queued Job: a dump may just lack its Workload; the cluster has no Kueue.
    assert causes(live)["train-big"] == "kueue-inadmissible"
    assert queued_message(offline) == (
        "suspended in LocalQueue team-ml; the dump has no Workload that says why "
        "(add `workloads` to the kubectl get)"
    )
    assert queued_message(live) == (
        "suspended in LocalQueue team-ml; the cluster serves no Kueue API (kueue.x-k8s.io), so "
        "nothing admits it: install Kueue, or remove the `kueue.x-k8s.io/queue-name` label"
    )
    assert without_queued_message(live) == {
        **without_queued_message(offline),
        "notes": offline["notes"][1:],
    }
    # No "no Workloads" note: the job's evidence says the cluster has no Kueue.
    assert [n.split(":")[0] for n in live["notes"]] == [
        "no ResourceClaims or ResourceClaimTemplates",
        "no ResourceSlices",
    ]
    assert offline["notes"][0] == "no Workloads: why Kueue holds a suspended job is not known"
    # Discovery said neither group is served: nothing of theirs was listed.
    asked = [p for _, p, _ in requests(k) if p.startswith((f"/apis/{DRA}", f"/apis/{KUEUE_GROUP}"))]
    assert sorted(asked) == [f"/apis/{KUEUE_GROUP}", f"/apis/{DRA}"]  # read in parallel


def test_live_diagnose_of_a_namespace_reads_its_workloads_and_claims(k, kubeconfig) -> None:
    # A namespaced Role in `ml`: the cluster-wide lists and the cluster-scoped DRA objects are
    # forbidden; the namespace's pods, events, Jobs, Workloads and claims are served.
    items = dump_items(TODAY)
    k["get /api/v1/nodes"] << 403 << status(403, "Forbidden", "nodes is forbidden")
    for kind, path in NAMESPACED_LISTS.items():
        head, _, resource = path.rpartition("/")
        listed = item_list(
            kind, without_kind(items, kind, "ml"), "batch/v1" if kind == "Job" else "v1"
        )
        k[f"get {head}/namespaces/ml/{resource}"] << listed
    for resource, (kind, namespaced) in DRA_LISTS.items():
        k.resources[f"{DRA}/v1/{resource}"] = kmock.ResourceInfo(kind=kind, namespaced=namespaced)
        if namespaced:
            found = item_list(kind, without_kind(items, kind, "ml"), f"{DRA}/v1")
            k[f"get /apis/{DRA}/v1/namespaces/ml/{resource}"] << found
        else:
            k[f"get /apis/{DRA}/v1/{resource}"] << 403 << forbidden(resource, DRA)
    k.resources[f"{KUEUE_GROUP}/v1beta2/workloads"] = kmock.ResourceInfo(
        kind="Workload", namespaced=True
    )
    workloads = item_list("Workload", without_kind(items, "Workload", "ml"), KUEUE_GROUP)
    k[f"get /apis/{KUEUE_GROUP}/v1beta2/namespaces/ml/workloads"] << workloads
    report = diagnose_live(kubeconfig, "-n", "ml")
    assert causes(report) == {
        "train-big": "kueue-inadmissible",
        "dra-train-0": "resource-claim-unallocatable",
    }
    denied = [n for n in report["notes"] if n.startswith("DRA")]
    assert denied == [
        "DRA DeviceClasses not read (only the known accelerator classes make a claim a GPU "
        f"claim): not allowed to list deviceclasses.{DRA} (403 Forbidden): grant the gpulint-live "
        "ClusterRole of docs/rbac.yaml to context `kmock`; the server said: "
        + forbidden("deviceclasses", DRA)["message"],
        "DRA ResourceSlices not read (what the nodes offer for DRA claims is not known): not "
        f"allowed to list resourceslices.{DRA} (403 Forbidden): grant the gpulint-live "
        "ClusterRole of docs/rbac.yaml to context `kmock`; the server said: "
        + forbidden("resourceslices", DRA)["message"],
    ]
    rules = role_rules("gpulint-diagnose-namespace")
    namespaced = [(m, p) for m, p, _ in requests(k) if "/namespaces/ml/" in p]
    assert [p for _, p in namespaced] == [
        "/api/v1/namespaces/ml/pods",
        "/api/v1/namespaces/ml/events",
        "/apis/apps/v1/namespaces/ml/replicasets",
        "/apis/batch/v1/namespaces/ml/jobs",
        f"/apis/{DRA}/v1/namespaces/ml/resourceclaims",
        f"/apis/{DRA}/v1/namespaces/ml/resourceclaimtemplates",
        f"/apis/{KUEUE_GROUP}/v1beta2/namespaces/ml/workloads",
    ]
    assert all(allowed(rules, method, path) for method, path in namespaced)


def test_denied_workloads_are_a_note_and_the_suspended_job_still_counts(k, kubeconfig) -> None:
    k[f"get /apis/{KUEUE_GROUP}/v1beta2/workloads"] << 403 << forbidden("workloads", KUEUE_GROUP)
    serve_today(k)
    report = diagnose_live(kubeconfig)
    assert causes(report) == TODAY_CAUSES
    # Not "add `workloads` to the kubectl get": there is no kubectl get, RBAC refused the list.
    assert queued_message(report) == (
        "suspended in LocalQueue team-ml; its Workload, which says why, could not be read: "
        "gpulint may not list workloads.kueue.x-k8s.io (see the note)"
    )
    # One note for the denied list, not a second "no Workloads" one.
    assert report["notes"] == [
        "Kueue Workloads not read (why Kueue holds a suspended job is not known): not allowed "
        f"to list workloads.{KUEUE_GROUP} (403 Forbidden): grant the gpulint-live ClusterRole of "
        "docs/rbac.yaml to context `kmock`; the server said: "
        + forbidden("workloads", KUEUE_GROUP)["message"]
    ]
