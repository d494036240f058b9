"""Pod objects as the API returns them (plain dicts): owner, extended requests, typed view.

Shared by live mode and `gpulint diagnose`; imports nothing of the Kubernetes client, so a
diagnosis of dump files runs without it.
"""

from __future__ import annotations

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


def pod_extended_requests(pod: Mapping[str, Any]) -> dict[str, Decimal]:
    """A pod's effective request of each extended resource, computed as for a manifest."""
    document = api_document(pod)
    template = pod_template(document, document.obj)
    if template is None:
        return {}
    return {
        name: amount
        for name, amount in template.effective_requests.items()
        if is_extended_resource(name) and amount > 0
    }


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
