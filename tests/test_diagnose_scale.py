"""`gpulint diagnose` on large dumps and clusters: read once, without positions, in bounded memory.

A dump is read by the C JSON parser or from the YAML parser's events, without the loader's
positions: the diagnosis must be the one the loader's documents give, for every fixture dump,
as YAML and as JSON. Events are indexed by the object they are about, and only those about GPU
pods and controllers are kept; live mode pages through Events in large pages with no limit
that ends the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kmock
import pytest

from gpulint.diagnose import diagnose, parse_time, read_dumps
from gpulint.diagnose.dumpread import Unread, read_objects
from gpulint.diagnose.gather import may_request_accelerator
from gpulint.diagnose.live import PAGE, read_live
from gpulint.files import decode_input, read_input
from gpulint.live.client import ConnectionOptions
from gpulint.loader import load_text
from gpulint.output.diagnose import diagnosis_json
from tests.kube_server import item_list
from tests.live_cluster import dump_items, requests
from tests.test_diagnose import NODES, NOW, STUCK, TAINTS, TODAY
from tests.test_diagnose import run as run_diagnose
from tests.test_live_diagnose_smoke import LISTS

DUMPS = [(STUCK, NODES), (TAINTS, NODES), (TODAY,), (STUCK,)]


def by_loader(paths: tuple[str, ...]) -> str:
    """The JSON report from the loader's positioned documents, as diagnose read dumps before."""
    documents = []
    for path in paths:
        documents += load_text(path, decode_input(path, read_input(path, "dump"))).documents
    _, profile, _ = read_dumps(paths)  # the profile is read from plain values either way
    return diagnosis_json(diagnose(documents, profile, parse_time(NOW)), None)


def as_json(path: str, tmp_path: Path) -> str:
    """The dump written as `kubectl get -o json` writes it (4-space indent)."""
    (document,) = [d for d in _plain(path)]
    out = tmp_path / (Path(path).stem + ".json")
    out.write_text(json.dumps(document, indent=4), encoding="utf-8")
    return str(out)


def _plain(path: str) -> list[Any]:
    from ruamel.yaml import YAML

    return list(YAML(typ="safe").load_all(Path(path).read_text(encoding="utf-8")))


@pytest.mark.parametrize("paths", DUMPS, ids=lambda p: "+".join(Path(x).stem for x in p))
def test_a_dump_read_without_positions_gives_the_loaders_diagnosis(
    paths: tuple[str, ...], tmp_path: Path
) -> None:
    expected = by_loader(paths)
    documents, profile, _ = read_dumps(paths)
    assert diagnosis_json(diagnose(documents, profile, parse_time(NOW)), None) == expected
    json_paths = tuple(as_json(p, tmp_path) for p in paths)
    documents, profile, _ = read_dumps(json_paths)
    assert diagnosis_json(diagnose(documents, profile, parse_time(NOW)), None) == expected
    assert json.loads(expected)["pods"]  # each dump has stuck pods to compare


def test_yaml_the_fast_reader_does_not_take_is_read_by_the_loader(tmp_path: Path) -> None:
    # An anchor and its alias: the loader expands them as Kubernetes' decoder does.
    text = Path(STUCK).read_text(encoding="utf-8")
    anchored = text.replace("kind: List\n", "kind: List\nmetadata: &meta {resourceVersion: ''}\n")
    anchored += "x-copy: *meta\n"
    dump = tmp_path / "anchored.yaml"
    dump.write_text(anchored, encoding="utf-8")
    with pytest.raises(Unread):
        read_objects(anchored, lambda obj: None)
    documents, profile, _ = read_dumps([str(dump), NODES])
    got = diagnosis_json(diagnose(documents, profile, parse_time(NOW)), None)
    assert got == by_loader((STUCK, NODES))


def test_a_broken_json_dump_is_reported_at_its_line(tmp_path: Path) -> None:
    dump = tmp_path / "broken.json"
    dump.write_text('{\n  "apiVersion": "v1",\n  "items": [\n    {"kind": "Pod",,}\n  ]\n}\n')
    result = run_diagnose(str(dump))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"gpulint: error: {dump}:4:")


def test_a_list_item_is_handed_over_as_soon_as_it_is_read() -> None:
    text = (
        "apiVersion: v1\nitems:\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n"
        "- not an object\n"
        "- {apiVersion: v1, kind: List, items: [\n"
        "   {apiVersion: v1, kind: Event, metadata: {name: e}}]}\n"
        "kind: List\n"
    )
    taken: list[Any] = []
    assert read_objects(text, taken.append) == 2
    assert [o["metadata"]["name"] for o in taken] == ["a", "e"]
    # `items` of an object that is not a List: the loader decides what it is.
    with pytest.raises(Unread):
        read_objects(text.replace("kind: List\n", "kind: ConfigMap\n"), taken.append)


def test_only_pods_that_may_ask_for_an_accelerator_are_kept(tmp_path: Path) -> None:
    assert may_request_accelerator(
        {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    )
    assert may_request_accelerator({"resourceClaims": [{"name": "gpu"}]})
    assert not may_request_accelerator(
        {"containers": [{"resources": {"requests": {"cpu": 1, "hugepages-2Mi": "1Gi"}}}]}
    )
    # Events come before their pods here: those about the CPU pod are dropped once it is read.
    items = [
        _event("web-0", "Scheduled"),
        _event(
            "train-0", "FailedScheduling", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
        ),
        _pod("web-0", {"cpu": "1"}),
        _pod("train-0", {"nvidia.com/gpu": "1"}),
        _event("web-0", "Pulled"),
    ]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    gathered, _, _ = read_dumps([str(dump)])
    assert [d.ref.name for d in gathered.pods] == ["train-0"]
    assert list(gathered.events) == [("Pod", "ml", "train-0")]
    (pod,) = diagnose(gathered, None, parse_time(NOW)).pods
    assert (pod.name, pod.cause.slug) == ("train-0", "insufficient-gpu")


def _pod(name: str, limits: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "creationTimestamp": "2024-05-01T11:00:00Z"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
        "status": {"phase": "Pending"},
    }


def _event(pod: str, reason: str, message: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.{reason}", "namespace": "ml"},
        "involvedObject": {"kind": "Pod", "name": pod, "namespace": "ml"},
        "reason": reason,
        "message": message,
        "lastTimestamp": "2024-05-01T11:30:00Z",
        "source": {"component": "default-scheduler"},
    }


# --- live -----------------------------------------------------------------------------------


def serve_paged(k: kmock.KubernetesScaffold, padding: int) -> None:
    """The fixture dump's objects, and `padding` more Events about pods that do not exist,
    the Events paged by the `limit` and `continue` the client asks for."""
    items = dump_items(STUCK, NODES)
    for path, kind in LISTS.items():
        found = [{k_: v for k_, v in i.items() if k_ != "kind"} for i in items if i["kind"] == kind]
        api_version = next((i["apiVersion"] for i in items if i["kind"] == kind), "v1")
        if kind != "Event":
            k[f"get {path}"] << item_list(kind, found, api_version)
            continue
        gone = ({**_event(f"gone-{i}", "Scheduled"), "kind": None} for i in range(padding))
        events = [*found, *({k_: v for k_, v in e.items() if v is not None} for e in gone)]

        def page(request: Any, events: list[dict[str, Any]] = events) -> dict[str, Any]:
            start = int(request.params.get("continue") or 0)
            limit = int(request.params["limit"])
            rest = {"continue": str(start + limit)} if start + limit < len(events) else {}
            return item_list("Event", events[start : start + limit], **rest)

        k[f"get {path}"] << page
    k["get /apis/karpenter.sh/v1/nodepools"] << 404 << {"kind": "Status", "code": 404}


def test_live_events_are_read_in_large_pages_without_a_limit_that_ends_the_run(
    k: kmock.KubernetesScaffold, kubeconfig: Path
) -> None:
    serve_paged(k, 2 * PAGE)
    live = run_diagnose("--live", "--kubeconfig", str(kubeconfig), "--now", NOW, "--format", "json")
    assert live.exit_code == 1, live.output
    offline = run_diagnose(STUCK, NODES, "--now", NOW, "--format", "json")
    assert json.loads(live.stdout) == json.loads(offline.stdout)
    pages = [q for _, p, q in requests(k) if p == "/api/v1/events"]
    assert pages == [
        {"limit": str(PAGE)},
        {"limit": str(PAGE), "continue": str(PAGE)},
        {"limit": str(PAGE), "continue": str(2 * PAGE)},
    ]


def test_past_the_list_limit_the_diagnosis_goes_on_with_what_was_read_and_says_so(
    k: kmock.KubernetesScaffold, kubeconfig: Path
) -> None:
    serve_paged(k, 2 * PAGE)
    objects = read_live(ConnectionOptions(kubeconfig=str(kubeconfig)), max_listed=PAGE + 10)
    assert objects.notes[-1] == (
        f"the list of events goes on past {PAGE + 10:,} objects: the diagnosis reads the first "
        f"{PAGE + 10:,} (what the others say is not known)"
    )
    found = diagnose(objects.documents, objects.profile, parse_time(NOW)).pods
    assert {p.name for p in found} >= {"eval-0", "typo-0"}


@pytest.mark.parametrize(
    ("max_listed", "read", "noted", "asked"),
    [
        (10, 10, False, 2),  # ends where the list does: nothing left unread
        (7, 7, True, 2),
        (5, 5, True, 2),  # the next page, asked for while this one was read, says more come
        (100, 10, False, 2),
    ],
)
def test_a_list_read_page_by_page_stops_at_the_limit_and_says_so_only_when_more_come(
    k: kmock.KubernetesScaffold,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    max_listed: int,
    read: int,
    noted: bool,
    asked: int,
) -> None:
    from gpulint.diagnose.live import pages
    from gpulint.live.client import connect

    events = [{"metadata": {"name": f"e{i}"}} for i in range(10)]

    def page(request: Any) -> dict[str, Any]:
        start = int(request.params.get("continue") or 0)
        limit = int(request.params["limit"])
        rest = {"continue": str(start + limit)} if start + limit < len(events) else {}
        return item_list("Event", events[start : start + limit], **rest)

    k["get /api/v1/events"] << page
    monkeypatch.setattr("gpulint.diagnose.live.PAGE", 5)
    client = connect(ConnectionOptions(kubeconfig=str(kubeconfig)))
    notes: list[str] = []
    try:
        found = list(pages(client, "/api/v1/events", "events", (), max_listed, notes))
    finally:
        client.close()
    assert [e["metadata"]["name"] for e in found] == [f"e{i}" for i in range(read)]
    assert {e["kind"] for e in found} == {"Event"}
    assert bool(notes) == noted
    assert len(requests(k)) == asked
