"""--server-dry-run: send every checked object to the API server with `dryRun=All`.

Each object goes as written (raw JSON, not through the typed client, which would validate it
client-side first): a create, and when it already exists (409) a server-side apply, both with
strict field validation as `kubectl apply` uses. Whatever the server refuses (quota,
LimitRange, PriorityClass, validation, webhooks) becomes a ServerRejection. Discovery is one
request per apiVersion, so the work is one or two requests per object.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpulint.errors import GpulintError
from gpulint.live.client import RBAC_DOC, KubeClient, Response, path_segment
from gpulint.live.verdict import DryRun, ServerRejection
from gpulint.model import Document

FIELD_MANAGER = "gpulint"
_DRY_RUN = (("dryRun", "All"), ("fieldManager", FIELD_MANAGER), ("fieldValidation", "Strict"))
_APPLY = "application/apply-patch+yaml"
# How RBAC words a denial, as opposed to an admission plugin refusing the object itself.
_RBAC_DENIAL = re.compile(r'\bcannot (\w+) resource "([^"]*)"')
# Inputs of gpulint itself, never sent to a cluster.
_OWN_GROUP = re.compile(r"(^|\.)gpulint\.io/")


@dataclass(frozen=True)
class ServedKind:
    """Where the API serves a kind: its plural resource name and whether it is namespaced."""

    group_version: str
    plural: str
    namespaced: bool

    def collection(self, namespace: str) -> str:
        """The URL path objects of this kind are created at; every segment escaped."""
        base = "/api/v1" if self.group_version == "v1" else _group_path(self.group_version)
        if self.namespaced:
            return f"{base}/namespaces/{path_segment(namespace)}/{path_segment(self.plural)}"
        return f"{base}/{path_segment(self.plural)}"

    @property
    def what(self) -> str:
        """`deployments.apps`, as RBAC names the resource."""
        group = self.group_version.rpartition("/")[0]
        return f"{self.plural}.{group}" if group else self.plural


def _group_path(group_version: str) -> str:
    """`/apis/GROUP/VERSION`, both escaped."""
    group, _, version = group_version.partition("/")
    return f"/apis/{path_segment(group)}/{path_segment(version)}"


def dry_runner(client: KubeClient) -> DryRun:
    """The DryRun hook `gpulint.api.lint` calls, bound to `client`."""
    return functools.partial(dry_run, client)


def dry_run(
    client: KubeClient, documents: Sequence[Document], namespace_of: Callable[[Document], str]
) -> list[ServerRejection]:
    """Dry-run every document; the refusals, in document order.

    Secrets are not sent: they decide nothing about where a GPU pod runs, and their data has
    no business leaving the machine.
    """
    sendable = [
        d
        for d in documents
        if not _OWN_GROUP.search(d.ref.api_version + "/")
        and not (d.ref.kind == "Secret" and d.ref.api_version == "v1")
    ]
    served = discover(client, {d.ref.api_version for d in sendable})
    # Namespaces first: objects in a namespace the same manifests create are judged with it.
    ordered = sorted(sendable, key=lambda d: d.ref.kind != "Namespace")
    new_namespaces: set[str] = set()
    verdicts: dict[int, ServerRejection] = {}
    for document in ordered:
        kind = served.get(document.ref.api_version, {}).get(document.ref.kind)
        if kind is None:
            verdicts[id(document)] = _not_served(document, document.ref.api_version in served)
            continue
        namespace = namespace_of(document)
        try:
            response, operation = _send(client, document, kind, namespace)
        except UnsendableName as exc:
            verdicts[id(document)] = ServerRejection(document, "create", 422, "Invalid", str(exc))
            continue
        if 200 <= response.status < 300:
            if document.ref.kind == "Namespace":
                new_namespaces.add(document.ref.name)
            continue
        if _missing_namespace(response, new_namespaces):
            continue
        _raise_for_access(client, response, operation, kind)
        verdicts[id(document)] = ServerRejection(
            document, operation, response.status, response.reason, response.message
        )
    return [verdicts[id(d)] for d in sendable if id(d) in verdicts]


def discover(client: KubeClient, api_versions: Iterable[str]) -> dict[str, dict[str, ServedKind]]:
    """Per apiVersion the server serves, its kinds; apiVersions it does not serve are absent."""
    served: dict[str, dict[str, ServedKind]] = {}
    for api_version in sorted(set(api_versions)):
        parts = api_version.split("/")
        if api_version == "v1":
            path = "/api/v1"
        elif len(parts) == 2 and not any(part in ("", ".", "..") for part in parts):
            path = _group_path(api_version)
        else:
            continue  # a core-group version other than v1, or no GROUP/VERSION at all
        response = client.request("GET", path)
        if response.status == 404:
            continue
        if response.status != 200:
            raise client.refused(response, "get", path)
        kinds: dict[str, ServedKind] = {}
        for resource in response.body.get("resources") or ():
            if not isinstance(resource, Mapping) or "/" in str(resource.get("name")):
                continue  # subresources (deployments/scale) share their parent's kind
            kinds.setdefault(
                str(resource.get("kind")),
                ServedKind(
                    api_version, str(resource.get("name")), bool(resource.get("namespaced"))
                ),
            )
        served[api_version] = kinds
    return served


class UnsendableName(GpulintError):
    """A namespace or name that cannot be part of an API path (`..`)."""


def _send(
    client: KubeClient, document: Document, kind: ServedKind, namespace: str
) -> tuple[Response, str]:
    try:
        collection = kind.collection(namespace)
        item = path_segment(document.ref.name) if document.ref.name else ""
    except GpulintError as exc:
        raise UnsendableName(f"{exc} (the object was not sent)") from None
    response = client.request("POST", collection, _DRY_RUN, document.obj)
    if response.status != 409 or not item or response.reason != "AlreadyExists":
        return response, "create"
    patched = client.request(
        "PATCH",
        f"{collection}/{item}",
        (*_DRY_RUN, ("force", "true")),
        document.obj,
        content_type=_APPLY,
    )
    return patched, "update"


def _not_served(document: Document, version_served: bool) -> ServerRejection:
    ref = document.ref
    if version_served:
        message = f"the cluster serves {ref.api_version} but no kind {ref.kind} in it"
    else:
        message = (
            f"the cluster does not serve apiVersion {ref.api_version} "
            f"(is the CustomResourceDefinition for {ref.kind} installed?)"
        )
    return ServerRejection(document, "create", 404, "NotFound", message)


def _missing_namespace(response: Response, new_namespaces: set[str]) -> bool:
    """True for "namespace not found" about a namespace the checked manifests create."""
    details = response.body.get("details")
    return (
        response.status == 404
        and isinstance(details, Mapping)
        and details.get("kind") == "namespaces"
        and details.get("name") in new_namespaces
    )


def _raise_for_access(
    client: KubeClient, response: Response, operation: str, kind: ServedKind
) -> None:
    """Credentials or RBAC, not the object, are the problem: stop with what to grant."""
    if response.status == 401:
        raise client.refused(response, operation, kind.what)
    denial = _RBAC_DENIAL.search(response.message) if response.status == 403 else None
    if denial is not None:
        raise GpulintError(
            f"not allowed to {denial.group(1)} {kind.what} (403 Forbidden), which "
            f"--server-dry-run needs: grant the gpulint-server-dry-run ClusterRole of "
            f"{RBAC_DOC} to {client.source}; the server said: {response.message}"
        )
