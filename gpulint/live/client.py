"""The one place that talks to the Kubernetes API: connection, raw requests, paginated lists.

Requests go through the official client's `ApiClient` (kubeconfig, TLS, bearer tokens), but
as raw JSON: the typed API of kubernetes>=37 validates bodies client-side, which would refuse
the very manifests a dry-run is meant to show the server. Every failure of the connection
becomes a one-line GpulintError that says what to do.

Nothing the server does can hold a run: each request, and a kubeconfig's `exec` credential
plugin, has `--request-timeout` seconds of wall-clock time, however slowly the server
answers; a whole run has RUN_TIMEOUT_FACTOR times that; a list stops at MAX_PAGES pages or
at a `continue` token the server already gave. Every request that is not a GET is a dry-run
by construction, and every path segment is escaped.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import urllib3
from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes.client.exceptions import ApiException
from kubernetes.config import kube_config

from gpulint import __version__
from gpulint.errors import GpulintError

#: Items per page of a list call: few round trips on a large cluster (a 5,000-node cluster's
#: nodes take one request, its 50,000 pods ten); the API server's default page is 500.
PAGE_SIZE = 5000
#: Pages of one list call at most: 5,000,000 objects.
MAX_PAGES = 1000
DEFAULT_TIMEOUT = 10.0
#: A whole live run may take this many times --request-timeout (10 minutes by default).
RUN_TIMEOUT_FACTOR = 60
#: The longest server message quoted.
MAX_MESSAGE = 1000
#: What every request that is not a GET carries: nothing is ever written.
DRY_RUN = ("dryRun", "All")
RBAC_DOC = "docs/rbac.yaml"
_IN_CLUSTER = "in-cluster service account"
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class AccessDenied(GpulintError):
    """The API answered 403: the credentials lack a verb on a resource (see RBAC_DOC)."""


@dataclass(frozen=True)
class ConnectionOptions:
    """How to reach the cluster: --kubeconfig, --context, --request-timeout."""

    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Response:
    """An API answer: HTTP status and the decoded JSON body (a Status object on errors)."""

    status: int
    body: Mapping[str, Any]

    @property
    def message(self) -> str:
        """The Status message of an error answer, on one line."""
        text = self.body.get("message") or self.body.get("reason") or f"HTTP {self.status}"
        return _cut(" ".join(str(text).split()), MAX_MESSAGE)

    @property
    def reason(self) -> str:
        """The Status reason (Forbidden, Invalid, AlreadyExists ...), or the HTTP status."""
        return _cut(str(self.body.get("reason") or self.status), 100)


def path_segment(text: str) -> str:
    """`text` as one segment of a URL path: `/`, `?`, `%` and the like escaped.

    Raises GpulintError for `.` and `..`, which would name another path however escaped.
    """
    if text in ("", ".", ".."):
        raise GpulintError(f"`{text}` may not be a name or namespace: it is a URL path segment")
    return quote(text, safe="")


@dataclass(frozen=True)
class KubeClient:
    """A configured connection to one cluster."""

    api: kclient.ApiClient
    server: str
    source: str  # the kubeconfig context, or the in-cluster service account
    timeout: float
    namespace: str | None = None  # the context's namespace, for objects that name none
    # time.monotonic() after which no request starts: the bound of the whole run
    deadline: float = field(default_factory=lambda: time.monotonic() + 10 * 60)
    verified: bool = True  # False: the kubeconfig skips TLS verification

    def request(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        body: Mapping[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Response:
        """One HTTP request; raises GpulintError only when no HTTP answer came back in time.

        A request other than GET always carries `dryRun=All`: the API server never persists it.
        """
        return _decoded(*self._answer(self._send(method, path, query, body, content_type)))

    def _send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        body: Mapping[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> _Exchange:
        """Start one request (see `request`) in a daemon thread; `_answer` waits for it.

        The socket timeout bounds each read, not the answer: a server sending a byte a second
        would never trip it. The thread is abandoned when the bound passes.
        """
        query = list(query)
        if method != "GET" and DRY_RUN not in query:
            query.insert(0, DRY_RUN)
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        prepared = self.api.param_serialize(
            method,
            path,
            query_params=query,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise GpulintError(
                f"live mode stopped: the requests to the Kubernetes API at {self.server} took "
                f"longer than {RUN_TIMEOUT_FACTOR * self.timeout:g} s in total "
                f"({RUN_TIMEOUT_FACTOR} × --request-timeout); raise --request-timeout"
            )
        bound = min(self.timeout, left)
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                raw = self.api.call_api(*prepared, _request_timeout=bound)
                outcome["answer"] = (raw.status, raw.read())
            except BaseException as exc:  # handed to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=call, name="gpulint-request", daemon=True)
        worker.start()
        return _Exchange(method, path, time.monotonic() + bound, bound, worker, outcome)

    def _answer(self, exchange: _Exchange) -> tuple[int, bytes]:
        """Status and body of a request `_send` started, within its bound of wall-clock time."""
        method, path = exchange.method, exchange.path
        exchange.worker.join(max(0.0, exchange.ends - time.monotonic()))
        if exchange.worker.is_alive():
            # The connections are left open: requests made in parallel go on to their own
            # bound. The caller closes the client on this error, which ends a pending read.
            raise self._timeout(method, path, exchange.bound)
        error = exchange.outcome.get("error")
        if isinstance(error, ApiException):  # the REST layer reports TLS failures this way
            raise self._transport_error(method, path, error.reason or str(error)) from None
        if isinstance(error, urllib3.exceptions.HTTPError):
            raise self._transport_error(method, path, error) from None
        if error is not None:
            raise error
        status, data = exchange.outcome.pop("answer")  # the body is the caller's alone
        return int(status), bytes(data)

    def _timeout(self, method: str, path: str, bound: float) -> GpulintError:
        return GpulintError(
            f"the Kubernetes API at {self.server} did not answer {method} {_cut(path, 200)} "
            f"within {bound:g} s; raise --request-timeout or check the network path to the "
            "cluster"
        )

    def list_all(
        self,
        path: str,
        what: str,
        query: Sequence[tuple[str, str]] = (),
        optional: bool = False,
        pick: Callable[[dict[str, Any]], Any] | None = None,
        decode: Callable[[bytes], dict[str, Any] | None] | None = None,
    ) -> list[Any] | None:
        """Every item of a list call, page by page; None when `optional` and not served (404).

        `what` names the resource for error messages (`priorityclasses.scheduling.k8s.io`).
        Items get the `kind` and `apiVersion` the API leaves out of list items; with `pick`,
        what it returns of each item instead (as the list gives it, without them), None
        dropped: each page is then let go once read, whatever its size. `decode` reads a page
        answered 200 in place of `json.loads` (gpulint.live.slim); where it gives None, the
        page is decoded whole.
        """
        items: list[Any] = []
        token = ""
        tokens: set[str] = set()

        def page(token: str) -> _Exchange:
            page_query = [*query, ("limit", str(PAGE_SIZE))]
            if token:
                page_query.append(("continue", token))
            return self._send("GET", path, page_query)

        # The next page is asked for as soon as its continue token can be read, before this
        # page is decoded; a guess the decoded page does not confirm is dropped.
        ahead: tuple[str, _Exchange] | None = None
        while True:
            if len(tokens) >= MAX_PAGES:
                raise GpulintError(
                    f"the list of {what} at {self.server} goes on past {MAX_PAGES} pages of "
                    f"{PAGE_SIZE}; gpulint stops there"
                )
            exchange = ahead[1] if ahead is not None and ahead[0] == token else page(token)
            status, data = self._answer(exchange)
            guess = _continue_of(data) if status == 200 else None
            ahead = None
            if guess and guess not in tokens and guess != token and len(tokens) + 1 < MAX_PAGES:
                ahead = guess, page(guess)
            body = decode(data) if decode is not None and status == 200 else None
            response = Response(status, body) if body is not None else _decoded(status, data)
            del data, body
            if response.status == 404 and optional and not token:
                return None
            if response.status != 200:
                raise self.refused(response, "list", what)
            # An empty list may come as `"items": null`; a body without the key is no list.
            if "items" not in response.body or not isinstance(response.body["items"], list | None):
                raise GpulintError(
                    f"{self.server} answered the list of {what} with something that is not a "
                    f"Kubernetes list; check the server address of {self.source}"
                )
            if pick is None:
                items.extend(_with_kind(response.body))
            else:
                found = (pick(i) for i in response.body["items"] or () if isinstance(i, dict))
                items.extend(f for f in found if f is not None)
            metadata = response.body.get("metadata")
            token = str((metadata if isinstance(metadata, Mapping) else {}).get("continue") or "")
            del response  # the page's objects, before the next is read
            if not token:
                return items
            if token in tokens:
                raise GpulintError(
                    f"{self.server} answered the list of {what} with a continue token it had "
                    "given before: the list would never end; check the server address of "
                    f"{self.source}"
                )
            tokens.add(token)

    def preferred_version(self, group: str) -> str | None:
        """The version of API `group` the server prefers (discovery); None when not served."""
        path = f"/apis/{group}"
        response = self.request("GET", path)
        if response.status == 404:
            return None
        if response.status != 200:
            raise self.refused(response, "get", path)
        preferred = response.body.get("preferredVersion")
        version = preferred.get("version") if isinstance(preferred, Mapping) else None
        return str(version) if version else None

    def refused(self, response: Response, verb: str, what: str) -> GpulintError:
        """The error for a read the API refused: who, what verb and resource, what to do."""
        status = response.status
        if status == 401:
            return GpulintError(
                f"the Kubernetes API at {self.server} rejected the credentials of {self.source} "
                f"(401 Unauthorized); log in again or refresh the kubeconfig's token"
            )
        if status == 403:
            return AccessDenied(
                f"not allowed to {verb} {what} (403 Forbidden): grant the gpulint-live "
                f"ClusterRole of {RBAC_DOC} to {self.source}; the server said: {response.message}"
            )
        if status == 410:
            return GpulintError(
                f"the list of {what} changed while it was paged through (410 Gone); run again"
            )
        return GpulintError(
            f"the Kubernetes API at {self.server} answered {status} {response.reason} "
            f"to {verb} {what}: {response.message}"
        )

    def _transport_error(self, method: str, path: str, error: object) -> GpulintError:
        cause = error.reason if isinstance(error, urllib3.exceptions.MaxRetryError) else error
        where = f"the Kubernetes API at {self.server}"
        text = " ".join(str(cause).split())
        # NewConnectionError subclasses ConnectTimeoutError: test for it first.
        if isinstance(cause, urllib3.exceptions.NewConnectionError):
            return GpulintError(
                f"cannot connect to {where}: {_short(text)}; check the server address of "
                f"{self.source} and that the cluster is reachable from here"
            )
        if isinstance(cause, urllib3.exceptions.TimeoutError):
            return self._timeout(method, path, self.timeout)
        if isinstance(cause, urllib3.exceptions.SSLError) or "SSLError" in text:
            return GpulintError(
                f"TLS with {where} failed: {_short(text)}; check the certificate-authority "
                f"of {self.source} in the kubeconfig"
            )
        return GpulintError(f"request to {where} failed: {_short(text)}")

    def close(self) -> None:
        """Release the connection pool."""
        self.api.close()


def connect(options: ConnectionOptions) -> KubeClient:
    """A client for the cluster the options name: kubeconfig (and context) or in-cluster.

    --kubeconfig, then $KUBECONFIG, then the in-cluster service account when
    KUBERNETES_SERVICE_HOST is set (and no --context is asked for), then ~/.kube/config.
    """
    started = time.monotonic()
    configuration = kclient.Configuration()
    explicit = options.kubeconfig or os.environ.get("KUBECONFIG")
    if not explicit and options.context is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            kconfig.load_incluster_config(client_configuration=configuration)
        except kconfig.ConfigException as exc:
            raise GpulintError(
                f"KUBERNETES_SERVICE_HOST is set but the in-cluster service account cannot be "
                f"used: {_short(str(exc)).rstrip('.')}; pass --kubeconfig, or run in a pod that "
                f"mounts its service account token"
            ) from None
        source, namespace = _IN_CLUSTER, _in_cluster_namespace()
    else:
        source, namespace = _load_kubeconfig(
            explicit or "~/.kube/config", options.context, configuration, options.request_timeout
        )
    # Failures are reported, not retried: each request is bounded by the timeout alone.
    configuration.retries = 0
    api = kclient.ApiClient(configuration)
    api.user_agent = f"gpulint/{__version__}"
    deadline = started + RUN_TIMEOUT_FACTOR * options.request_timeout
    verified = bool(configuration.verify_ssl)
    if not verified:
        # urllib3 would warn at every request; the run says it once, as a note (-q hides it).
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    return KubeClient(
        api, configuration.host, source, options.request_timeout, namespace, deadline, verified
    )


def _in_cluster_namespace() -> str | None:
    try:
        return Path(SERVICE_ACCOUNT_NAMESPACE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _load_kubeconfig(
    paths: str, context: str | None, configuration: Any, timeout: float
) -> tuple[str, str | None]:
    """Load the context into `configuration`; (how to name it in messages, its namespace).

    An `exec` credential plugin runs at most `timeout` seconds.
    """
    files = [Path(p).expanduser() for p in paths.split(os.pathsep) if p]
    existing = [p for p in files if p.is_file()]
    if not existing:
        raise GpulintError(
            f"no kubeconfig found at {paths}: pass --kubeconfig PATH or set KUBECONFIG "
            f"(live mode reads the cluster named by the kubeconfig)"
        )
    joined = os.pathsep.join(str(p) for p in existing)
    try:
        contexts, current = kconfig.list_kube_config_contexts(config_file=joined)
    except (kconfig.ConfigException, ValueError, TypeError, KeyError, OSError) as exc:
        raise GpulintError(f"kubeconfig {paths}: {_short(str(exc))}") from None
    except Exception as exc:  # the YAML loader's own errors: a file that is not a kubeconfig
        raise GpulintError(f"kubeconfig {paths} cannot be read: {_short(str(exc))}") from None
    names = [str(c.get("name")) for c in contexts or () if isinstance(c, Mapping)]
    if context is not None and context not in names:
        known = ", ".join(names) or "none"
        raise GpulintError(
            f"context `{context}` is not in kubeconfig {paths} (contexts: {known}); "
            f"pass one of them to --context"
        )
    if context is None and not current:
        raise GpulintError(f"kubeconfig {paths} sets no current-context; pass --context NAME")
    name = context or str((current or {}).get("name"))
    try:
        # What kconfig.load_kube_config does, with the exec plugin run here, under a bound.
        merged = kube_config.KubeConfigMerger(joined)
        loader = kube_config.KubeConfigLoader(
            config_dict=merged.config, active_context=context, config_base_path=None
        )
        _run_exec_plugin(merged.config, loader.current_context, f"context `{name}`", timeout)
        loader.load_and_set(configuration)
    except GpulintError:
        raise
    except Exception as exc:  # ConfigException, unreadable cert files
        raise GpulintError(f"kubeconfig {paths}: {_short(str(exc))}") from None
    chosen = next((c for c in contexts if isinstance(c, Mapping) and c.get("name") == name), {})
    namespace = (chosen.get("context") or {}).get("namespace")
    return f"context `{name}`", str(namespace) if namespace else None


def _run_exec_plugin(config: Any, context: Any, source: str, timeout: float) -> None:
    """Run the `exec` credential plugin of `context`'s user, if it has one, and put what it
    printed (a token, or a client certificate) in its place, in memory.

    kubectl's contract: the plugin prints an ExecCredential; a failure, an answer without
    credentials, or a plugin still running after `timeout` seconds (killed with its children)
    is one GpulintError.
    """
    chosen = context.get("context") if isinstance(context, Mapping) else None
    user_name = chosen.get("user") if isinstance(chosen, Mapping) else None
    if not user_name or "users" not in config:
        return
    user = config["users"].get_with_name(user_name, safe=True)
    node = user["user"] if user is not None and "user" in user else None
    spec = node.safe_get("exec") if node is not None else None
    if not spec:
        return
    if not isinstance(spec, Mapping):
        raise GpulintError(f"the exec credential plugin of {source} is not a mapping")
    command = spec.get("command")
    if not isinstance(command, str) or not command:
        raise GpulintError(f"the exec credential plugin of {source} names no command")
    args = [str(a) for a in spec.get("args") or ()]
    info = {"apiVersion": spec.get("apiVersion"), "kind": "ExecCredential"}
    environ = {**os.environ, "KUBERNETES_EXEC_INFO": json.dumps({**info, "spec": {}})}
    for item in spec.get("env") or ():
        if isinstance(item, Mapping) and "name" in item:
            environ[str(item["name"])] = str(item.get("value", ""))
    cwd = os.path.dirname(node.path) if getattr(node, "path", None) else None
    output = _plugin_output([command, *args], environ, cwd, timeout, f"`{command}` of {source}")
    try:
        answer = json.loads(output)
        status = answer["status"]
    except (ValueError, TypeError, KeyError):
        raise GpulintError(
            f"the exec credential plugin `{command}` of {source} printed no ExecCredential"
        ) from None
    credentials = status if isinstance(status, Mapping) else {}
    user_config = node.value  # the kubeconfig as loaded, in memory: nothing is written
    if credentials.get("token"):
        user_config["token"] = str(credentials["token"])
    elif credentials.get("clientCertificateData") and credentials.get("clientKeyData"):
        import base64

        for key, field_name in (
            ("clientCertificateData", "client-certificate-data"),
            ("clientKeyData", "client-key-data"),
        ):
            user_config[field_name] = base64.b64encode(str(credentials[key]).encode()).decode()
    else:
        raise GpulintError(
            f"the exec credential plugin `{command}` of {source} printed neither a token nor "
            "a client certificate"
        )
    del user_config["exec"]


def _plugin_output(
    argv: list[str], environ: dict[str, str], cwd: str | None, timeout: float, what: str
) -> str:
    """What the credential plugin printed; GpulintError if it fails or outlasts `timeout`."""
    import signal
    import subprocess

    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=environ,
            start_new_session=True,  # its children are killed with it
        )
    except OSError as exc:
        raise GpulintError(
            f"cannot run the exec credential plugin {what}: {exc.strerror}"
        ) from None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise GpulintError(
            f"the exec credential plugin {what} did not finish within {timeout:g} s; "
            "raise --request-timeout or log in again"
        ) from None
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    if process.returncode != 0:
        said = " ".join(err.decode(errors="replace").split())
        raise GpulintError(
            f"the exec credential plugin {what} failed (exit {process.returncode})"
            + (f": {_short(said)}" if said else "")
        )
    return out.decode(errors="replace")


@dataclass(frozen=True)
class _Exchange:
    """A request under way in its own thread (KubeClient._send)."""

    method: str
    path: str
    ends: float  # time.monotonic() when its bound passes
    bound: float
    worker: threading.Thread
    outcome: dict[str, Any]  # `answer` (status, body) or `error`, once the thread is done


def _decoded(status: int, data: bytes) -> Response:
    """The Response of an answer; a body that is not a JSON object reads as empty."""
    try:
        decoded = json.loads(data) if data else {}
    except (ValueError, RecursionError):  # not JSON, a number of more digits than Python
        decoded = {}  # reads, or arrays nested deeper than it recurses
    if not isinstance(decoded, dict):
        decoded = {}
    return Response(status, decoded)


#: How far into a list's answer its continue token is looked for: the API server writes the
#: list's metadata before its items.
_HEAD = 4096
_ITEMS = b'"items"'


def _continue_of(data: bytes) -> str | None:
    """The continue token of a list answer, read from the metadata before its items without
    decoding them; None when it is not found there."""
    head = data[:_HEAD]
    at = head.find(_ITEMS)
    if at < 0:
        return None
    try:
        prefix = json.loads(head[:at].rstrip().rstrip(b",") + b"}")
    except (ValueError, RecursionError):
        return None
    metadata = prefix.get("metadata") if isinstance(prefix, dict) else None
    token = metadata.get("continue") if isinstance(metadata, dict) else None
    return token if isinstance(token, str) and token else None


def _with_kind(list_body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    kind = str(list_body.get("kind") or "")
    item_kind = kind[: -len("List")] if kind.endswith("List") else kind
    api_version = list_body.get("apiVersion")
    for item in list_body.get("items") or ():
        if isinstance(item, dict):
            yield {"apiVersion": api_version, "kind": item_kind, **item}


# urllib3 prefixes what went wrong with the connection object; the server is named already.
_CONNECTION_REPR = re.compile(
    r"<urllib3\.[\w.]+ object at 0x[0-9a-f]+>: |HTTPS?Connection\(host=[^)]*\): "
)


def _short(text: str) -> str:
    """An error text on one line, without urllib3's connection reprs, cut to a bound."""
    return _cut(_CONNECTION_REPR.sub("", " ".join(text.split())), MAX_MESSAGE)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
