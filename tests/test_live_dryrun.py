"""`gpulint check --live --server-dry-run`, RBAC coverage and live/static equivalence.

The API server is kmock (see tests/kube_server.py) with the bundled discovery of the built-in
resources; every test asserts what the server received, not only what gpulint printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kmock
import pytest
from click.testing import Result

from gpulint.yamltree import parse
from tests.kube_server import kube_server, status, write_kubeconfig
from tests.live_cluster import (
    MANIFEST,
    check_live,
    error_line,
    findings,
    gpu_pod,
    report,
    requests,
    run,
    serve,
)

DRY_RUN = {"dryRun": "All", "fieldManager": "gpulint", "fieldValidation": "Strict"}
DEPLOYMENTS = "/apis/apps/v1/namespaces/ml/deployments"
NOTEBOOK = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
spec:
  containers:
  - name: jupyter
    image: jupyter:7
    resources:
      requests: {cpu: "2", memory: 8Gi}
      limits: {memory: 8Gi, nvidia.com/gpu: 1}
"""
QUOTA_MESSAGE = (
    'pods "notebook" is forbidden: exceeded quota: gpu-quota, requested: '
    "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8"
)


@pytest.fixture()
def k(k: kmock.KubernetesScaffold) -> kmock.KubernetesScaffold:
    """The session's API server (tests/conftest.py), with built-in API discovery."""
    k.resources.load_bundled()
    return k


@pytest.fixture()
def kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig whose context defaults to namespace `team-a`."""
    return write_kubeconfig(tmp_path / "kubeconfig", kube_server().url, namespace="team-a")


@pytest.fixture()
def manifests(tmp_path: Path) -> Path:
    """trainer.yaml (a Deployment in `ml`) and notebook.yaml (a Pod naming no namespace)."""
    root = tmp_path / "manifests"
    root.mkdir()
    (root / "trainer.yaml").write_text(MANIFEST, encoding="utf-8")
    (root / "notebook.yaml").write_text(NOTEBOOK, encoding="utf-8")
    return root


def dry_run(kubeconfig: Path, manifests: Path, *extra: str) -> Result:
    return run(
        "check", "--isolated", "--format", "json", "--live", "--server-dry-run",
        "--kubeconfig", str(kubeconfig), *extra, str(manifests),
    )  # fmt: skip


def as_sent(text: str) -> dict[str, Any]:
    """A manifest as the server should receive it: the document, as JSON."""
    return json.loads(json.dumps(parse(text).documents[0].value))


def echo(request: Any) -> Any:
    return request.data


def gpu900(result: Result) -> list[tuple[str, int, int, str]]:
    return [f for f in findings(result) if f[0] == "GPU900"]


def test_quota_refusal_is_a_finding_at_the_kind_line(k, kubeconfig, manifests) -> None:
    serve(k)
    k[f"post {DEPLOYMENTS}"] << 201 << echo
    pods = "post /api/v1/namespaces/team-a/pods"
    k[pods] << 403 << status(403, "Forbidden", QUOTA_MESSAGE, name="notebook", kind="pods")
    result = dry_run(kubeconfig, manifests)
    assert result.exit_code == 1, result.output
    assert gpu900(result) == [
        (
            "GPU900",
            2,
            7,
            "the API server refused Pod/notebook (dry-run create: 403 Forbidden): " + QUOTA_MESSAGE,
        )
    ]
    entry = next(f for f in report(result)["findings"] if f["code"] == "GPU900")
    assert entry["path"].endswith("notebook.yaml")
    # What the server received: each object once, as written, with dryRun=All.
    posts = [(m, p, q) for m, p, q in requests(k) if m == "POST"]
    assert posts == [
        ("POST", "/api/v1/namespaces/team-a/pods", DRY_RUN),
        ("POST", DEPLOYMENTS, DRY_RUN),
    ]
    assert k[f"post {DEPLOYMENTS}"][0].data == as_sent(MANIFEST)
    assert k[pods][0].data == as_sent(NOTEBOOK)
    assert k[pods][0].headers["Content-Type"] == "application/json"
    # Discovery: one request per apiVersion.
    assert [p for m, p, _ in requests(k) if p in ("/api/v1", "/apis/apps/v1")] == [
        "/apis/apps/v1",
        "/api/v1",
    ]


@pytest.mark.parametrize(
    ("code", "reason", "message"),
    [
        (
            403,
            "Forbidden",
            'pods "notebook" is forbidden: maximum nvidia.com/gpu usage per Container is 0, '
            "but limit is 1",
        ),
        (
            403,
            "Forbidden",
            'pods "notebook" is forbidden: no PriorityClass with name gpu-urgent was found',
        ),
        (
            422,
            "Invalid",
            'Pod "notebook" is invalid: spec.containers[0].resources.requests: Invalid value: '
            '"1": must be equal to nvidia.com/gpu limit of 2',
        ),
        (
            400,
            "BadRequest",
            'admission webhook "validate.kyverno.svc-fail" denied the request: policy '
            "Pod/team-a/notebook for resource violation: require-gpu-node-selector",
        ),
    ],
    ids=["limitrange", "priorityclass", "validation", "webhook"],
)
def test_every_kind_of_refusal_is_reported_in_the_servers_words(
    k, kubeconfig, manifests, code: int, reason: str, message: str
) -> None:
    serve(k)
    k[f"post {DEPLOYMENTS}"] << 201 << echo
    k["post /api/v1/namespaces/team-a/pods"] << code << status(code, reason, message)
    assert gpu900(dry_run(kubeconfig, manifests)) == [
        (
            "GPU900",
            2,
            7,
            f"the API server refused Pod/notebook (dry-run create: {code} {reason}): {message}",
        )
    ]


def test_accepted_objects_report_nothing(k, kubeconfig, manifests) -> None:
    serve(k)
    k[f"post {DEPLOYMENTS}"] << 201 << echo
    k["post /api/v1/namespaces/team-a/pods"] << 201 << echo
    result = dry_run(kubeconfig, manifests)
    assert gpu900(result) == []
    assert len([r for r in requests(k) if r[0] == "POST"]) == 2


def test_existing_object_is_dry_run_applied(k, kubeconfig, manifests) -> None:
    serve(k)
    exists = status(409, "AlreadyExists", 'deployments.apps "trainer" already exists')
    k[f"post {DEPLOYMENTS}"] << 409 << exists
    invalid = (
        'Deployment.apps "trainer" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"trainer"}}: field is immutable'
    )
    k[f"patch {DEPLOYMENTS}/trainer"] << 422 << status(422, "Invalid", invalid)
    k["post /api/v1/namespaces/team-a/pods"] << 201 << echo
    result = dry_run(kubeconfig, manifests)
    assert gpu900(result) == [
        (
            "GPU900",
            2,
            7,
            "the API server refused Deployment/ml/trainer (dry-run update: 422 Invalid): "
            + invalid,
        )
    ]
    patch = k[f"patch {DEPLOYMENTS}/trainer"][0]
    assert dict(patch.params) == {**DRY_RUN, "force": "true"}
    assert patch.headers["Content-Type"] == "application/apply-patch+yaml"
    assert json.loads(patch.body) == as_sent(MANIFEST)


def test_kind_the_cluster_does_not_serve(k, kubeconfig, tmp_path: Path) -> None:
    serve(k)
    root = tmp_path / "crd"
    root.mkdir()
    (root / "job.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: bert, namespace: ml}\n",
        encoding="utf-8",
    )
    result = dry_run(kubeconfig, root)
    assert gpu900(result) == [
        (
            "GPU900",
            2,
            7,
            "the API server refused PyTorchJob/ml/bert (dry-run create: 404 NotFound): the "
            "cluster does not serve apiVersion kubeflow.org/v1 (is the CustomResourceDefinition "
            "for PyTorchJob installed?)",
        )
    ]
    assert [r for r in requests(k) if r[0] != "GET"] == []


def test_namespace_created_by_the_same_manifests(k, kubeconfig, tmp_path: Path) -> None:
    serve(k)
    root = tmp_path / "ns"
    root.mkdir()
    (root / "all.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n" + MANIFEST,
        encoding="utf-8",
    )
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    kube_server().raw[("POST", "/api/v1/namespaces")] = (201, namespace)
    missing = status(404, "NotFound", 'namespaces "ml" not found', name="ml", kind="namespaces")
    k[f"post {DEPLOYMENTS}"] << 404 << missing
    result = dry_run(kubeconfig, root)
    assert gpu900(result) == []
    # The Namespace went first, then the Deployment whose 404 is about that namespace.
    assert kube_server().seen == [("POST", "/api/v1/namespaces", DRY_RUN, namespace)]
    assert [p for m, p, _ in requests(k) if m == "POST"] == [DEPLOYMENTS]


def test_missing_namespace_the_manifests_do_not_create_is_reported(k, kubeconfig, manifests):
    serve(k)
    missing = status(404, "NotFound", 'namespaces "ml" not found', name="ml", kind="namespaces")
    k[f"post {DEPLOYMENTS}"] << 404 << missing
    k["post /api/v1/namespaces/team-a/pods"] << 201 << echo
    assert gpu900(dry_run(kubeconfig, manifests)) == [
        (
            "GPU900",
            2,
            7,
            "the API server refused Deployment/ml/trainer (dry-run create: 404 NotFound): "
            'namespaces "ml" not found',
        )
    ]


def test_rbac_denial_of_the_dry_run_stops_with_the_role_to_grant(k, kubeconfig, manifests):
    serve(k)
    denied = (
        'pods is forbidden: User "system:serviceaccount:ci:gpulint" cannot create resource '
        '"pods" in API group "" in the namespace "team-a"'
    )
    k["post /api/v1/namespaces/team-a/pods"] << 403 << status(403, "Forbidden", denied)
    k[f"post {DEPLOYMENTS}"] << 201 << echo
    assert error_line(dry_run(kubeconfig, manifests)) == (
        "gpulint: error: not allowed to create pods (403 Forbidden), which --server-dry-run "
        "needs: grant the gpulint-server-dry-run ClusterRole of docs/rbac.yaml to context "
        f"`kmock`; the server said: {denied}"
    )


def test_dry_run_is_skipped_when_gpu900_is_not_selected(k, kubeconfig, manifests) -> None:
    serve(k)
    result = dry_run(kubeconfig, manifests, "--ignore", "GPU900")
    report(result)
    # Only the reads of the profile (and Kueue's discovery, and the server's version): no
    # dry-run discovery, no dry-run.
    assert [m for m, _, _ in requests(k)] == ["GET"] * 10
    assert "/apis/apps/v1" not in [p for _, p, _ in requests(k)]


# --- RBAC: live mode asks for nothing docs/rbac.yaml does not grant --------------------------

RBAC = Path(__file__).resolve().parent.parent / "docs" / "rbac.yaml"
VERBS = {"GET": "list", "POST": "create", "PATCH": "patch"}


def role_rules(name: str) -> list[dict[str, Any]]:
    """The rules of ClusterRole `name` in docs/rbac.yaml."""
    for document in parse(RBAC.read_text(encoding="utf-8")).documents:
        role = document.value
        if role["kind"] == "ClusterRole" and role["metadata"]["name"] == name:
            return role["rules"]
    raise AssertionError(f"no ClusterRole {name} in {RBAC}")


def allowed(rules: list[dict[str, Any]], method: str, path: str) -> bool:
    """Whether one of `rules` grants the request, as the RBAC authorizer decides."""
    parts = path.strip("/").split("/")
    if parts[0] not in ("api", "apis"):  # /version, /healthz ...: no API resource
        return any(
            method == "GET" and any(_url_matches(u, path) for u in r.get("nonResourceURLs", ()))
            for r in rules
        )
    core = parts[0] == "api"
    group = "" if core else parts[1]
    rest = parts[2:] if core else parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    resource = rest[0] if rest else None
    if resource is None or (method == "GET" and len(parts) <= (2 if core else 3)):
        return any(
            method == "GET" and any(_url_matches(u, path) for u in r.get("nonResourceURLs", ()))
            for r in rules
        )
    verb = VERBS[method]
    return any(
        (group in r.get("apiGroups", ()) or "*" in r.get("apiGroups", ()))
        and (resource in r.get("resources", ()) or "*" in r.get("resources", ()))
        and (verb in r.get("verbs", ()) or "*" in r.get("verbs", ()))
        for r in rules
    )


def _url_matches(pattern: str, path: str) -> bool:
    return path == pattern or (pattern.endswith("*") and path.startswith(pattern[:-1]))


def test_read_only_live_mode_stays_inside_the_gpulint_live_role(k, kubeconfig, manifests):
    serve(k, nodepools=[], kueue="v1beta2", dra="v1")
    report(run("check", "--live", "--format", "json", "--kubeconfig", str(kubeconfig),
               str(manifests)))  # fmt: skip
    sent = requests(k)
    assert len(sent) == 16
    rules = role_rules("gpulint-live")
    assert [(m, p) for m, p, _ in sent if not allowed(rules, m, p)] == []
    # And the role is minimal: every rule it grants was used; resources are only listed.
    resource_rules = [rule for rule in rules if "resources" in rule]
    used = {p.rsplit("/", 1)[1] for _, p, _ in sent if p.count("/") > 2}
    assert used == {r for rule in resource_rules for r in rule["resources"]}
    assert {v for rule in resource_rules for v in rule["verbs"]} == {"list"}
    urls = {p for _, p, _ in sent if p.count("/") == 2 or not p.startswith("/api")}
    assert urls == {u for rule in rules for u in rule.get("nonResourceURLs", ())}


def test_dry_run_stays_inside_both_roles(k, kubeconfig, manifests) -> None:
    serve(k)
    exists = status(409, "AlreadyExists", 'deployments.apps "trainer" already exists')
    k[f"post {DEPLOYMENTS}"] << 409 << exists
    k[f"patch {DEPLOYMENTS}/trainer"] << 200 << echo
    k["post /api/v1/namespaces/team-a/pods"] << 201 << echo
    report(dry_run(kubeconfig, manifests))
    sent = requests(k)
    assert {m for m, _, _ in sent} == {"GET", "POST", "PATCH"}
    rules = role_rules("gpulint-live") + role_rules("gpulint-server-dry-run")
    assert [(m, p) for m, p, _ in sent if not allowed(rules, m, p)] == []
    assert not allowed(role_rules("gpulint-live"), "POST", DEPLOYMENTS)


# --- equivalence: live == static with the snapshot -----------------------------------------


def test_live_findings_equal_static_findings_with_the_snapshot(
    k, kubeconfig, manifests, tmp_path: Path
) -> None:
    serve(k)
    snapshot = tmp_path / "profile.yaml"
    written = run("profile", "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))
    assert written.exit_code == 0, written.output
    live = run("check", "--isolated", "--format", "json", "--live", "--kubeconfig",
               str(kubeconfig), str(manifests))  # fmt: skip
    static = run("check", "--isolated", "--format", "json", "--profile", str(snapshot),
                 str(manifests))  # fmt: skip
    live_findings, static_findings = report(live)["findings"], report(static)["findings"]
    assert live_findings == static_findings
    # The cluster matters: untolerated GPU taints, quota headroom (status.used 6 of 8), an
    # unknown PriorityClass.
    assert [(f["code"], Path(f["path"]).name, f["line"]) for f in live_findings] == [
        ("GPU102", "notebook.yaml", 5),
        ("GPU301", "trainer.yaml", 7),
        ("GPU102", "trainer.yaml", 13),
        ("GPU401", "trainer.yaml", 14),
    ]
    assert "used 6 + requested 6" in live_findings[1]["message"]


SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: server
  namespace: serving
spec:
  replicas: 3
  selector:
    matchLabels: {app: server}
  template:
    metadata:
      labels: {app: server}
    spec:
      tolerations:
      - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}
      containers:
      - name: server
        image: server:1.0
        resources:
          requests: {cpu: "8", memory: 32Gi}
          limits: {memory: 32Gi, nvidia.com/gpu: 4}
"""


def test_gpus_in_use_tip_capacity_alike_live_and_from_the_snapshot(
    k, kubeconfig, tmp_path: Path
) -> None:
    # Two 8-GPU nodes with 6 GPUs held by running pods: 3 × 4 fit the 16 GPUs, not the 10 free.
    serve(k)
    root = tmp_path / "serving"
    root.mkdir()
    (root / "server.yaml").write_text(SERVER, encoding="utf-8")
    snapshot = tmp_path / "profile.yaml"
    written = run("profile", "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))
    assert written.exit_code == 0, written.output
    assert "    gpusInUse: {nvidia.com/gpu: 6}\n" in snapshot.read_text(encoding="utf-8")
    live = run("check", "--isolated", "--format", "json", "--live", "--kubeconfig",
               str(kubeconfig), str(root))  # fmt: skip
    static = run("check", "--isolated", "--format", "json", "--profile", str(snapshot),
                 str(root))  # fmt: skip
    assert findings(live) == findings(static)
    capacity = [f for f in findings(live) if f[0] == "GPU201"]
    assert capacity == [
        (
            "GPU201",
            7,
            3,
            "Deployment/serving/server needs 12 nvidia.com/gpu (replicas: 3 × 4 per pod), but "
            "pool gpu-a100 can have at most 10 nvidia.com/gpu free (gpu-a100: 2 nodes × 8, 6 "
            "already in use): 2 nvidia.com/gpu worth of pods stay Pending",
        )
    ]


def owned_pod(
    name: str, node: str, gpus: int, owner: tuple[str, str] | None, template_hash: str = ""
) -> dict[str, Any]:
    """A running pod in `serving` holding `gpus` GPUs, controlled by (kind, name) `owner`."""
    pod = gpu_pod(name, node, gpus)
    pod["metadata"]["namespace"] = "serving"
    if owner is not None:
        kind, owner_name = owner
        ref = {"apiVersion": "apps/v1", "kind": kind, "name": owner_name, "controller": True}
        pod["metadata"]["ownerReferences"] = [ref]
    if template_hash:
        pod["metadata"]["labels"] = {"pod-template-hash": template_hash}
    return pod


def test_gpus_held_by_the_checked_deployment_itself_are_not_taken_live_or_from_the_snapshot(
    k, kubeconfig, tmp_path: Path
) -> None:
    # Both 8-GPU nodes hold 12 GPUs: 8 by server's own two pods (ReplicaSet server-<hash>), 4 by
    # others. Re-checking server's 3 × 4 leaves 16 − 4 = 12 for it: no GPU201, where counting its
    # pods as in use too would leave 4.
    pods = [
        owned_pod("server-7d4b9c8f5-abcde", "gpu-1", 4, ("ReplicaSet", "server-7d4b9c8f5"),
                  "7d4b9c8f5"),
        owned_pod("server-7d4b9c8f5-fghij", "gpu-1", 4, ("ReplicaSet", "server-7d4b9c8f5"),
                  "7d4b9c8f5"),
        owned_pod("cache-0", "gpu-2", 2, ("StatefulSet", "cache")),
        owned_pod("debug", "gpu-2", 1, None),
        owned_pod("server-x1", "gpu-2", 1, ("ReplicaSet", "server-x1")),
    ]  # fmt: skip
    serve(k, pods=pods)
    root = tmp_path / "serving"
    root.mkdir()
    (root / "server.yaml").write_text(SERVER, encoding="utf-8")
    snapshot = tmp_path / "profile.yaml"
    written = run("profile", "snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))
    assert written.exit_code == 0, written.output
    text = snapshot.read_text(encoding="utf-8")
    # A ReplicaSet whose name does not end in the pod's template hash is left as a ReplicaSet.
    assert text[text.index("    gpusInUse:") : text.index("  - name: general")] == (
        "    gpusInUse: {nvidia.com/gpu: 12}\n"
        "    gpusInUseBy:\n"
        "    - {namespace: serving, kind: Deployment, name: server, "
        "resources: {nvidia.com/gpu: 8}}\n"
        "    - {namespace: serving, kind: StatefulSet, name: cache, "
        "resources: {nvidia.com/gpu: 2}}\n"
        "    - {namespace: serving, kind: Pod, name: debug, resources: {nvidia.com/gpu: 1}}\n"
        "    - {namespace: serving, kind: ReplicaSet, name: server-x1, "
        "resources: {nvidia.com/gpu: 1}}\n"
    )
    live = run("check", "--isolated", "--format", "json", "--live", "--kubeconfig",
               str(kubeconfig), str(root))  # fmt: skip
    static = run("check", "--isolated", "--format", "json", "--profile", str(snapshot),
                 str(root))  # fmt: skip
    assert findings(live) == findings(static)
    assert [f for f in findings(live) if f[0] == "GPU201"] == []
    # One more replica needs 16 of the 12 left: the others' 4 GPUs are still taken.
    (root / "server.yaml").write_text(SERVER.replace("replicas: 3", "replicas: 4"), "utf-8")
    capacity = [f for f in findings(check_live(kubeconfig, root)) if f[0] == "GPU201"]
    assert [message for *_, message in capacity] == [
        "Deployment/serving/server needs 16 nvidia.com/gpu (replicas: 4 × 4 per pod), but "
        "pool gpu-a100 can have at most 12 nvidia.com/gpu free (gpu-a100: 2 nodes × 8, 4 "
        "already in use): 4 nvidia.com/gpu worth of pods stay Pending"
    ]
