"""The one place that talks to the Kubernetes API: connection, raw requests, paginated lists.

Requests go through the official client's `ApiClient` (kubeconfig, exec credentials, TLS,
bearer tokens), but as raw JSON: the typed API of kubernetes>=37 validates bodies client-side,
which would refuse the very manifests a dry-run is meant to show the server. Every failure of
the connection becomes a one-line GpulintError that says what to do.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client as kclient
from kubernetes import config as kconfig
from kubernetes.client.exceptions import ApiException

from gpulint import __version__
from gpulint.errors import GpulintError

#: Items per page of a list call: a 5,000-node cluster's nodes take 10 requests.
PAGE_SIZE = 500
DEFAULT_TIMEOUT = 10.0
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
        return " ".join(str(text).split())

    @property
    def reason(self) -> str:
        """The Status reason (Forbidden, Invalid, AlreadyExists ...), or the HTTP status."""
        return str(self.body.get("reason") or self.status)


@dataclass(frozen=True)
class KubeClient:
    """A configured connection to one cluster."""

    api: kclient.ApiClient
    server: str
    source: str  # the kubeconfig context, or the in-cluster service account
    timeout: float
    namespace: str | None = None  # the context's namespace, for objects that name none

    def request(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, str]] = (),
        body: Mapping[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Response:
        """One HTTP request; raises GpulintError only when no HTTP answer came back."""
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        prepared = self.api.param_serialize(
            method,
            path,
            query_params=list(query),
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        try:
            raw = self.api.call_api(*prepared, _request_timeout=self.timeout)
            data = raw.read()
        except ApiException as exc:  # the REST layer reports TLS failures this way
            raise self._transport_error(method, path, exc.reason or str(exc)) from None
        except urllib3.exceptions.HTTPError as exc:
            raise self._transport_error(method, path, exc) from None
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {}
        if not isinstance(decoded, dict):
            decoded = {}
        return Response(raw.status, decoded)

    def list_all(
        self, path: str, what: str, query: Sequence[tuple[str, str]] = (), optional: bool = False
    ) -> list[dict[str, Any]] | None:
        """Every item of a list call, page by page; None when `optional` and not served (404).

        `what` names the resource for error messages (`priorityclasses.scheduling.k8s.io`).
        Items get the `kind` and `apiVersion` the API leaves out of list items.
        """
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            page_query = [*query, ("limit", str(PAGE_SIZE))]
            if token:
                page_query.append(("continue", token))
            response = self.request("GET", path, page_query)
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
            items.extend(_with_kind(response.body))
            token = str((response.body.get("metadata") or {}).get("continue") or "")
            if not token:
                return items

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
            return GpulintError(
                f"{where} did not answer {method} {path} within {self.timeout:g} s; "
                f"raise --request-timeout or check the network path to the cluster"
            )
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
            explicit or "~/.kube/config", options.context, configuration
        )
    # Failures are reported, not retried: each request is bounded by the timeout alone.
    configuration.retries = 0
    api = kclient.ApiClient(configuration)
    api.user_agent = f"gpulint/{__version__}"
    return KubeClient(api, configuration.host, source, options.request_timeout, namespace)


def _in_cluster_namespace() -> str | None:
    try:
        return Path(SERVICE_ACCOUNT_NAMESPACE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _load_kubeconfig(paths: str, context: str | None, configuration: Any) -> tuple[str, str | None]:
    """Load the context into `configuration`; (how to name it in messages, its namespace)."""
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
    try:
        kconfig.load_kube_config(
            config_file=joined,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except Exception as exc:  # ConfigException, exec-plugin failures, unreadable cert files
        raise GpulintError(f"kubeconfig {paths}: {_short(str(exc))}") from None
    name = context or str((current or {}).get("name"))
    chosen = next((c for c in contexts if isinstance(c, Mapping) and c.get("name") == name), {})
    namespace = (chosen.get("context") or {}).get("namespace")
    return f"context `{name}`", str(namespace) if namespace else None


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
    """An error text on one line, without urllib3's connection reprs."""
    return _CONNECTION_REPR.sub("", " ".join(text.split()))
