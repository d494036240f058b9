"""What live mode reads of the Nodes and Pods it lists, decoded without the rest.

A page of 5,000 pods is 12 MB of JSON of which gpulint reads a few fields per pod (its node,
owner and containers' resources), and the Node objects of a large cluster carry their images,
addresses and managedFields. `json.loads` builds every object of a page; msgspec decodes it
into types that name the fields read and skips the others (about five times faster). The
types below are those fields, as gpulint.profile.nodes (node_view) and gpulint.pods
(pod_use) read them: a field either reads that is not here is missing from live mode
(tests/test_live.py compares both decodings on the fixtures).

A page that does not fit these types (a value of another type than the API writes, JSON
msgspec refuses, a number too large for it) is None: the caller decodes it whole, as
without this module. Fields are UNSET when absent, so a body keeps the keys it was written
with (`"items": null` stays).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET, Struct, UnsetType


class _NodeMetadata(Struct):
    name: Any = UNSET
    labels: Any = UNSET


class _NodeStatus(Struct):
    capacity: Any = UNSET
    allocatable: Any = UNSET
    conditions: Any = UNSET
    nodeInfo: Any = UNSET


class _Node(Struct):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: _NodeMetadata | UnsetType = UNSET
    spec: Any = UNSET  # taints, unschedulable, providerID: small
    status: _NodeStatus | UnsetType = UNSET


class _PodMetadata(Struct):
    name: Any = UNSET
    namespace: Any = UNSET
    labels: Any = UNSET
    ownerReferences: Any = UNSET


class _Container(Struct):
    name: Any = UNSET
    restartPolicy: Any = UNSET
    resources: Any = UNSET


class _PodSpec(Struct):
    nodeName: Any = UNSET
    containers: list[_Container] | UnsetType | None = UNSET
    initContainers: list[_Container] | UnsetType | None = UNSET
    ephemeralContainers: list[_Container] | UnsetType | None = UNSET
    overhead: Any = UNSET


class _Pod(Struct):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: _PodMetadata | UnsetType = UNSET
    spec: _PodSpec | UnsetType = UNSET


class _NodeList(Struct):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: Any = UNSET
    items: list[_Node] | UnsetType | None = UNSET


class _PodList(Struct):
    apiVersion: Any = UNSET
    kind: Any = UNSET
    metadata: Any = UNSET
    items: list[_Pod] | UnsetType | None = UNSET


_DECODERS = {"Node": msgspec.json.Decoder(_NodeList), "Pod": msgspec.json.Decoder(_PodList)}


def page_decoder(kind: str) -> Callable[[bytes], dict[str, Any] | None]:
    """Decode a list page of `kind` (`Node` or `Pod`) to the fields live mode reads, as plain
    dicts and lists; None for a page that does not fit them (decode it whole)."""
    decoder = _DECODERS[kind]

    def decode(data: bytes) -> dict[str, Any] | None:
        try:
            body = msgspec.to_builtins(decoder.decode(data))
        except (ValueError, RecursionError):  # msgspec's errors are ValueErrors
            return None
        return body if isinstance(body, dict) else None

    return decode
