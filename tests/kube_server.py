"""A real Kubernetes API endpoint for tests: kmock on 127.0.0.1, on a background-thread loop.

The sync `kubernetes` client must not run on kmock's event loop, so the loop runs in a daemon
thread. One HTTP server serves the whole session; each test gets a fresh, stateless
`kmock.KubernetesScaffold` (discovery, Status errors, its own reactions and request log)
that the server hands every request to, so tests neither share reactions nor restart servers.

kmock 0.8 cannot parse the collection path of namespaces (`POST /api/v1/namespaces` fails
inside kmock with a 500); `KubeServer.raw` answers such paths before kmock sees them.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import json
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp.test_utils
import aiohttp.web
import kmock

TOKEN = "s3cr3t"


class KubeServer:
    """kmock behind one aiohttp server; `scaffold()` swaps in a fresh handler per test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.handler: kmock.KubernetesScaffold | None = None
        # (method, path) -> (status, JSON body), answered before kmock; requests logged in `seen`
        self.raw: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
        self.seen: list[tuple[str, str, dict[str, str], Any]] = []
        self.server = aiohttp.test_utils.RawTestServer(self._dispatch, host="127.0.0.1")

    def _run(self, coro: Coroutine[Any, Any, Any], timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _dispatch(self, request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        handler = self.handler
        if handler is None:
            return aiohttp.web.Response(status=503, text="no test is running")
        canned = self.raw.get((request.method, request.path))
        if canned is not None:
            body = await request.read()
            query = dict(request.query)
            self.seen.append((request.method, request.path, query, json.loads(body or b"null")))
            return aiohttp.web.json_response(canned[1], status=canned[0])
        return await handler(request)

    def start(self) -> KubeServer:
        """Start the loop thread and the HTTP server."""
        self.thread.start()
        self._run(self.server.start_server())
        return self

    def stop(self) -> None:
        """Stop the server and the loop."""
        try:
            self._run(self.server.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)

    @property
    def url(self) -> str:
        """http://127.0.0.1:<port>"""
        return str(self.server.make_url("")).rstrip("/")

    @contextmanager
    def scaffold(self) -> Iterator[kmock.KubernetesScaffold]:
        """A fresh handler for one test: unregistered paths answer a 404 Status."""
        handler = kmock.KubernetesScaffold()
        self._run(handler.__aenter__())
        self.handler = handler
        try:
            yield handler
        finally:
            self.handler = None
            self.raw.clear()
            self.seen.clear()
            self._run(handler.__aexit__(None, None, None))


@functools.cache
def kube_server() -> KubeServer:
    """The session's server, started on first use."""
    server = KubeServer().start()
    atexit.register(server.stop)
    return server


def write_kubeconfig(
    path: Path,
    server: str,
    context: str = "kmock",
    namespace: str | None = None,
) -> Path:
    """A kubeconfig with one context pointing at `server`, authenticating with TOKEN."""
    context_body: dict[str, Any] = {"cluster": "kmock", "user": "tester"}
    if namespace:
        context_body["namespace"] = namespace
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": context,
                "clusters": [{"name": "kmock", "cluster": {"server": server}}],
                "users": [{"name": "tester", "user": {"token": TOKEN}}],
                "contexts": [{"name": context, "context": context_body}],
            }
        ),
        encoding="utf-8",
    )
    return path


def status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    """A Kubernetes Status body."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def item_list(kind: str, items: list[dict[str, Any]], api_version: str = "v1", **meta: str):
    """A `<Kind>List` body; `meta` goes to its metadata (e.g. continue=...)."""
    return {"kind": f"{kind}List", "apiVersion": api_version, "metadata": meta, "items": items}
