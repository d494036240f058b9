"""Pod objects as the API returns them (plain dicts): owner, extended requests, typed view.

Shared by live mode and `gpulint diagnose`; imports nothing of the Kubernetes client, so a
diagnosis of dump files runs without it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.accelerators import is_extended_resource
from gpulint.model import Document, ObjectRef, SourceFile
from gpulint.workloads import pod_template
from gpulint.yamltree import YMap, YSeq

_LIVE_FILE = SourceFile("<live cluster>")


def pod_owner(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """(namespace, kind, name) of the workload a pod belongs to, as a manifest would name it.

    A ReplicaSet's pods belong to its Deployment: the ReplicaSet is named
    `<deployment>-<pod-template-hash>`, and the pod carries the hash as a label. A pod with no
    controller is its own workload.
    """
    metadata = _mapping(pod.get("metadata"))
    namespace = str(metadata.get("namespace") or "default")
    references = metadata.get("ownerReferences")
    owners = [o for o in references if isinstance(o, Mapping)] if _is_list(references) else []
    controller = next((o for o in owners if o.get("controller")), None)
    if controller is None:
        return namespace, "Pod", str(metadata.get("name") or "")
    kind, name = str(controller.get("kind") or ""), str(controller.get("name") or "")
    suffix = f"-{_mapping(metadata.get('labels')).get('pod-template-hash') or ''}"
    if kind == "ReplicaSet" and len(suffix) > 1 and name.endswith(suffix):
        return namespace, "Deployment", name[: -len(suffix)]
    return namespace, kind, name


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def pod_extended_requests(
    pod: Mapping[str, Any], memo: dict[str, dict[str, Decimal]] | None = None
) -> dict[str, Decimal]:
    """A pod's effective request of each extended resource, computed as for a manifest.

    Only what the requests are computed from is converted to the typed model (its containers'
    names, restart policies and resources, its overhead), and only when one of those names an
    extended resource: most pods of a cluster ask for none, and a live read meets tens of
    thousands of them. With `memo` (one per read), the pods of a workload, which the API
    writes alike, are converted once: the answer is kept by what it is computed from.
    """
    trimmed = _request_fields(pod)
    if trimmed is None:
        return {}
    key = None
    if memo is not None:
        try:
            key = json.dumps([trimmed["apiVersion"], trimmed["kind"], trimmed["spec"]])
        except (TypeError, ValueError):  # not JSON (a dump's timestamps): not kept
            key = None
        if key in memo:
            return dict(memo[key])
    document = api_document(trimmed)
    template = pod_template(document, document.obj)
    if template is None:
        return {}
    found = {
        name: amount
        for name, amount in template.effective_requests.items()
        if is_extended_resource(name) and amount > 0
    }
    if memo is not None and key is not None:
        memo[key] = dict(found)
    return found


#: The pod spec's container lists, and the fields of a container its requests depend on.
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
_REQUEST_FIELDS = ("name", "restartPolicy", "resources")


def _request_fields(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of `pod` its requests are computed from; None when no extended resource is
    named there (the requests then hold none)."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping) or not _asks_extended(spec):
        return None
    kept: dict[str, Any] = {}
    for key in _CONTAINER_LISTS:
        items = spec.get(key)
        if _is_list(items):
            kept[key] = [
                {k: item[k] for k in _REQUEST_FIELDS if k in item}
                if isinstance(item, Mapping)
                else item
                for item in items
            ]
        elif items is not None:
            kept[key] = items  # the wrong type is judged as it was written
    if "overhead" in spec:
        kept["overhead"] = spec["overhead"]
    metadata = _mapping(pod.get("metadata"))
    return {
        "apiVersion": pod.get("apiVersion"),
        "kind": pod.get("kind"),
        "metadata": {k: metadata[k] for k in ("name", "namespace") if k in metadata},
        "spec": kept,
    }


def _asks_extended(spec: Mapping[str, Any]) -> bool:
    """Whether a container's requests or limits, or the overhead, name an extended resource
    (the one test most pods of a cluster take: written for speed, the JSON types first)."""
    if _names_extended(spec.get("overhead")):
        return True
    for key in _CONTAINER_LISTS:
        items = spec.get(key)
        if items is None or not (type(items) is list or _is_list(items)):
            continue
        for item in items:
            if type(item) is not dict and not isinstance(item, Mapping):
                continue
            resources = item.get("resources")
            if resources is None or not (type(resources) is dict or _is_mapping(resources)):
                continue
            if _names_extended(resources.get("limits")) or _names_extended(
                resources.get("requests")
            ):
                return True
    return False


def _is_mapping(value: Any) -> bool:
    return isinstance(value, Mapping)


def _names_extended(amounts: Any) -> bool:
    if amounts is None or not (type(amounts) is dict or isinstance(amounts, Mapping)):
        return False
    return any("/" in name and is_extended_resource(str(name)) for name in amounts)


def api_document(obj: Mapping[str, Any]) -> Document:
    """An object from the API as the Document the typed model is built from."""
    tree = positioned(obj)
    metadata = tree.get("metadata") if isinstance(tree.get("metadata"), Mapping) else {}
    ref = ObjectRef(
        str(tree.get("apiVersion") or "v1"),
        str(tree.get("kind") or "Pod"),
        metadata.get("namespace"),
        str(metadata.get("name") or ""),
    )
    return Document(_LIVE_FILE, tree, ref)


def positioned(value: Any) -> Any:
    """A plain JSON value as the YMap/YSeq tree the typed model is built from."""
    if isinstance(value, Mapping):
        node = YMap()
        for key, item in value.items():
            node[key] = positioned(item)
        return node
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        seq = YSeq()
        seq.extend(positioned(item) for item in value)
        return seq
    return value
