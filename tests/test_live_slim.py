"""Live mode decodes only the fields it reads of Nodes and Pods (gpulint.live.slim): what it
finds must be what the whole objects give, on every fixture that holds such objects."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import kmock
import pytest
import yaml

from gpulint.live.client import _with_kind
from gpulint.live.cluster import pod_use
from gpulint.live.session import open_live
from gpulint.live.slim import page_decoder
from gpulint.profile.kubectl import profile_from_objects
from tests.kube_server import item_list
from tests.live_cluster import NODES, gpu_pod, requests, serve

ROOT = Path(__file__).resolve().parent.parent
#: Every fixture that holds Node or Pod objects: kubectl dumps, real profiles, diagnoses.
FIXTURES = sorted(
    path
    for folder in ("fixtures/profiles", "fixtures/real/profiles", "fixtures/diagnose")
    for path in (ROOT / folder).glob("*.yaml")
    if re.search(r"kind: (Node|Pod)$", path.read_text(encoding="utf-8"), re.MULTILINE)
)


def objects_of(path: Path, kind: str) -> list[dict[str, Any]]:
    """The objects of `kind` in a fixture, as the API sends them (JSON values)."""
    found: list[dict[str, Any]] = []
    for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if not isinstance(document, dict):
            continue
        items = document.get("items") if document.get("kind") == "List" else [document]
        found += [i for i in items or () if isinstance(i, dict) and i.get("kind") == kind]
    # Through JSON, as the API writes them: timestamps are strings.
    return json.loads(json.dumps(found, default=str))


def page(kind: str, objects: list[dict[str, Any]]) -> bytes:
    """A list page of the objects, without the kind and apiVersion a list leaves out."""
    items = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in objects]
    return json.dumps(item_list(kind, items)).encode()


def both_ways(kind: str, objects: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """The page's items decoded whole, and as live mode decodes them."""
    data = page(kind, objects)
    slim = page_decoder(kind)(data)
    assert slim is not None
    return list(_with_kind(json.loads(data))), list(_with_kind(slim))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_fields_decoded_give_what_the_whole_objects_give(path: Path) -> None:
    nodes, pods = objects_of(path, "Node"), objects_of(path, "Pod")
    assert nodes or pods
    whole, slim = both_ways("Node", nodes)
    assert profile_from_objects(slim, source="x") == profile_from_objects(whole, source="x")
    whole, slim = both_ways("Pod", pods)
    uses = [pod_use(p) for p in whole]
    assert [pod_use(p) for p in slim] == uses
    if path.name == "stuck-gpu-pods.yaml":  # the comparison is of pods that use GPUs
        assert sum(1 for u in uses if u) >= 10


def test_what_is_not_read_is_not_decoded() -> None:
    node = {**NODES[0], "status": {**NODES[0]["status"], "images": [{"names": ["a"]}]}}
    node["metadata"] = {**node["metadata"], "managedFields": [{"manager": "kubelet"}]}
    (slim,) = page_decoder("Node")(page("Node", [{"kind": "Node", **node}]))["items"]
    assert "images" not in slim["status"] and "managedFields" not in slim["metadata"]
    pod = {**gpu_pod("p", "gpu-1", 1), "status": {"phase": "Running"}}
    pod["spec"]["containers"][0]["env"] = [{"name": "A", "value": "b"}]
    (slim,) = page_decoder("Pod")(page("Pod", [pod]))["items"]
    assert slim == {
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {
            "nodeName": "gpu-1",
            "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        },
    }


@pytest.mark.parametrize(
    "data",
    [
        # Values of other types than the API writes, which the whole decoding judges as written.
        b'{"items": [{"spec": {"containers": [["not", "a", "container"]]}}]}',
        b'{"items": [{"metadata": "not a mapping"}]}',
        b'{"items": "not a list"}',
        b'{"items": [], "metadata": {"resourceVersion": 1' + b"0" * 5000 + b"}}",  # too long
        b'{"items": [], "metadata": NaN}',  # Python's json reads it
        b"not JSON",
    ],
)
def test_a_page_that_does_not_fit_the_fields_is_none(data: bytes) -> None:
    assert page_decoder("Pod")(data) is None


def test_a_page_that_does_not_fit_is_decoded_whole(k: kmock.KubernetesScaffold, kubeconfig):
    odd = gpu_pod("odd", "gpu-1", 2)
    odd["spec"]["containers"].insert(0, ["not", "a", "container"])
    serve(k, pods=[gpu_pod("busy", "gpu-2", 1), odd])
    cluster = open_live(kmock_options(kubeconfig))
    cluster.close()
    pools = {p.name: p for p in cluster.profile.pools}
    assert dict(pools["gpu-a100"].gpus_in_use) == {"nvidia.com/gpu": 3}


def test_without_msgspec_pages_are_decoded_whole(
    k: kmock.KubernetesScaffold, kubeconfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "msgspec", None)  # what an import of a missing one does
    monkeypatch.delitem(sys.modules, "gpulint.live.slim")
    serve(k, pods=[gpu_pod("busy", "gpu-2", 1)])
    cluster = open_live(kmock_options(kubeconfig))
    cluster.close()
    assert "gpulint.live.slim" not in sys.modules
    pools = {p.name: p for p in cluster.profile.pools}
    assert dict(pools["gpu-a100"].gpus_in_use) == {"nvidia.com/gpu": 1}
    assert ("GET", "/api/v1/nodes") in {(m, path) for m, path, _ in requests(k)}


def kmock_options(kubeconfig: Path) -> Any:
    from gpulint.live.client import ConnectionOptions

    return ConnectionOptions(str(kubeconfig))
