"""Live mode against a hostile or broken API server: bounded, escaped, one line and exit 2."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kmock
import pytest

from gpulint.live.client import PAGE_SIZE
from tests.kube_server import TOKEN, item_list, kube_server, status, write_kubeconfig
from tests.live_cluster import findings, gpu_node, run, serve

# --- numbers the API cannot hold ------------------------------------------------------------


# An amount above 2^63-1 is one the API server caps and stores (`parse_stored_quantity`); a
# server that sends a malformed one of any length is still one line.
@pytest.mark.parametrize("gpus", ["9" * 4400 + "x", "-8"])
def test_snapshot_of_a_malformed_or_negative_capacity_is_one_line_and_exit_2(
    k: kmock.KubernetesScaffold, kubeconfig: Path, gpus: str
) -> None:
    serve(k, nodes=[gpu_node("gpu-1", "gpu-a100", gpus=gpus)], pods=[])
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    written = (
        f"'{'9' * 39}…' is not a Kubernetes quantity" if gpus[0] == "9" else "'-8' is negative"
    )
    assert line.startswith("gpulint: error: ") and written in line, line
    assert len(line) < 400


# --- time and size bounds -------------------------------------------------------------------


@contextmanager
def dripping_server(interval: float = 0.3) -> Iterator[str]:
    """An HTTP server that answers every request with a body sent one byte per `interval`
    seconds, for a minute; yields its URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve_forever() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
                connection.sendall(b"Content-Length: 200\r\n\r\n")
                for _ in range(200):
                    if stop.wait(interval):
                        break
                    try:
                        connection.sendall(b" ")
                    except OSError:
                        break

    thread = threading.Thread(target=serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def gpulint_process(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """`python -m gpulint ARGS` in a process of its own; TimeoutExpired if it hangs."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")
    }
    command = [sys.executable, "-m", "gpulint", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def test_request_timeout_bounds_the_whole_answer_not_each_read(tmp_path: Path) -> None:
    # Each byte comes well within the timeout; the answer as a whole would take a minute.
    with dripping_server() as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
        done = gpulint_process(
            "profile", "snapshot", "--kubeconfig", str(kubeconfig), "--request-timeout", "1"
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"gpulint: error: the Kubernetes API at {url} did not answer GET /api/v1/nodes within "
        "1 s; raise --request-timeout or check the network path to the cluster"
    ]


def test_a_repeated_continue_token_stops_the_list(k: kmock.KubernetesScaffold, kubeconfig: Path):
    k["get /api/v1/nodes"] << item_list("Node", [gpu_node("gpu-1", "a")], **{"continue": "same"})
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2, result.output
    assert result.output.splitlines() == [
        f"gpulint: error: {kube_server().url} answered the list of nodes with a continue token "
        "it had given before: the list would never end; check the server address of context "
        "`kmock`"
    ]
    assert [dict(r.params) for r in k if r.url.path == "/api/v1/nodes"] == [
        {"limit": str(PAGE_SIZE)},
        {"limit": str(PAGE_SIZE), "continue": "same"},
    ]


def test_a_list_stops_after_max_pages(
    k: kmock.KubernetesScaffold, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = iter(range(10**6))

    def next_page() -> dict[str, Any]:
        return item_list("Node", [], **{"continue": f"page-{next(pages)}"})

    k["get /api/v1/nodes"] << next_page
    monkeypatch.setattr("gpulint.live.client.MAX_PAGES", 5)
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"gpulint: error: the list of nodes at {kube_server().url} goes on past 5 pages of "
        f"{PAGE_SIZE}; gpulint stops there\n"
    )
    assert len([r for r in k if r.url.path == "/api/v1/nodes"]) == 5


# --- exec credential plugins ----------------------------------------------------------------

EXEC_CREDENTIAL = {
    "apiVersion": "client.authentication.k8s.io/v1",
    "kind": "ExecCredential",
    "status": {"token": TOKEN},
}
CREDENTIAL = f"import json; print(json.dumps({EXEC_CREDENTIAL!r}))"


def exec_kubeconfig(path: Path, server: str, script: str) -> Path:
    """A kubeconfig whose user gets its token from `python -c script`."""
    write_kubeconfig(path, server)
    config = json.loads(path.read_text())
    config["users"][0]["user"] = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": ["-c", script],
            "interactiveMode": "Never",
        }
    }
    path.write_text(json.dumps(config))
    return path


def test_an_exec_plugin_token_authenticates_the_requests(k, tmp_path: Path) -> None:
    serve(k, pods=[])
    kubeconfig = exec_kubeconfig(tmp_path / "kubeconfig", kube_server().url, CREDENTIAL)
    result = run("profile", "snapshot", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 0, result.output
    assert {r.headers["Authorization"] for r in k} == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        (
            "import sys; sys.stderr.write('token expired\\nrun login\\n'); sys.exit(3)",
            "failed (exit 3): token expired run login",
        ),
        ("print('not json')", "printed no ExecCredential"),
        (
            'print(\'{"apiVersion": "client.authentication.k8s.io/v1", "status": {}}\')',
            "printed neither a token nor a client certificate",
        ),
    ],
)
def test_a_failing_exec_plugin_is_one_line_and_exit_2(
    tmp_path: Path, script: str, problem: str
) -> None:
    kubeconfig = exec_kubeconfig(tmp_path / "kubeconfig", kube_server().url, script)
    done = run("profile", "snapshot", "--kubeconfig", str(kubeconfig), "--request-timeout", "1")
    assert done.exit_code == 2, done.output
    assert done.stderr.splitlines() == [
        f"gpulint: error: the exec credential plugin `{sys.executable}` of context `kmock` "
        + problem
    ]


def test_a_hanging_exec_plugin_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # In a process of its own: were the deadline lost, the run would hang, not the suite.
    script = (
        "import subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "time.sleep(60)"
    )
    kubeconfig = exec_kubeconfig(tmp_path / "kubeconfig", kube_server().url, script)
    done = gpulint_process(
        "profile", "snapshot", "--kubeconfig", str(kubeconfig), "--request-timeout", "1"
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"gpulint: error: the exec credential plugin `{sys.executable}` of context `kmock` "
        "did not finish within 1 s; raise --request-timeout or log in again"
    ]


# --- writes ---------------------------------------------------------------------------------

HOSTILE_NAMES = [
    ("default/pods/victim/eviction?x=", "trainer"),
    ("ml", "trainer?dryRun=&x="),
    ("ml", "a/../../../api/v1/namespaces/kube-system/pods/victim"),
    ("..", "trainer"),
    ("ml%2Fpods", "trainer#"),
]


@pytest.mark.parametrize(("namespace", "name"), HOSTILE_NAMES)
def test_every_write_is_a_dry_run_whatever_the_names(
    k: kmock.KubernetesScaffold, kubeconfig: Path, tmp_path: Path, namespace: str, name: str
) -> None:
    k.resources.load_bundled()
    serve(k)
    exists = status(409, "AlreadyExists", "already exists")
    k["post"] << 409 << exists  # every create meets an existing object: the PATCH is sent too
    k["patch"] << 200 << {}
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "job.yaml").write_text(
        f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {json.dumps(name)}\n"
        f"  namespace: {json.dumps(namespace)}\nspec:\n  template:\n    spec:\n"
        "      containers: [{name: c, image: i}]\n      restartPolicy: Never\n"
    )
    result = run(
        "check", "--isolated", "--format", "json", "--live", "--server-dry-run",
        "--kubeconfig", str(kubeconfig), str(manifests),
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    writes = [r for r in k if str(r.method.value) != "GET"]
    for request in writes:
        assert request.url.query.getall("dryRun") == ["All"], request.url
        assert request.url.raw_path.startswith("/apis/batch/v1/namespaces/")
        assert request.url.raw_path.count("/") in (6, 7), request.url.raw_path
    if namespace == "..":
        assert writes == []
        assert findings(result)[-1][3] == (
            "the API server refused Job/../trainer (dry-run create: 422 Invalid): `..` may not "
            "be a name or namespace: it is a URL path segment (the object was not sent)"
        )
    else:
        assert [str(r.method.value) for r in writes] == ["POST", "PATCH"]


def test_secrets_are_not_sent_and_server_messages_are_cut(
    k: kmock.KubernetesScaffold, kubeconfig: Path, tmp_path: Path
) -> None:
    k.resources.load_bundled()
    serve(k)
    k["post /api/v1/namespaces/ml/pods"] << 422 << status(422, "Invalid", "x" * 1_000_000)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "secret.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: ml}\n"
        "stringData: {password: hunter2}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
        "spec: {containers: [{name: c, image: i}]}\n"
    )
    result = run(
        "check", "--isolated", "--format", "json", "--live", "--server-dry-run",
        "--kubeconfig", str(kubeconfig), str(manifests),
    )  # fmt: skip
    assert [(str(r.method.value), r.url.path) for r in k if str(r.method.value) != "GET"] == [
        ("POST", "/api/v1/namespaces/ml/pods")
    ]
    (message,) = [f[3] for f in findings(result) if f[0] == "GPU900"]
    assert len(message) < 1500 and message.endswith("x…")


# --- TLS ------------------------------------------------------------------------------------


@contextmanager
def https_server(tmp_path: Path) -> Iterator[str]:
    """An HTTPS server with a self-signed certificate answering every GET with an empty list."""
    import http.server
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        # An EC key: made in milliseconds, where an RSA one takes a tenth of a second.
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip

    class EmptyLists(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(item_list("Node", [])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EmptyLists)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_unverified_tls_is_one_note_that_quiet_hides(tmp_path: Path) -> None:
    with https_server(tmp_path) as url:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", url)
        config = json.loads(kubeconfig.read_text())
        config["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
        kubeconfig.write_text(json.dumps(config))
        (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
        args = ("check", "--isolated", "--live", "--kubeconfig", str(kubeconfig))
        # In a process of its own, as a user sees it: nothing at all, no warning of the client.
        quiet = gpulint_process(*args, "-q", str(tmp_path / "pod.yaml"))
        full = run(*args, str(tmp_path / "pod.yaml"))
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    assert full.exit_code == 0 and full.stderr == ""
    assert full.stdout.splitlines()[0] == (
        f"the TLS certificate of the Kubernetes API at {url} is not verified "
        "(insecure-skip-tls-verify in context `kmock`)"
    )
