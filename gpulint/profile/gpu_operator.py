"""The driver the NVIDIA GPU Operator installs, from its ClusterPolicy or NVIDIADriver objects
in a profile input (`kubectl get clusterpolicies,nvidiadrivers -o yaml`, or with the nodes)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpulint.profile.model import OperatorDriver
from gpulint.profile.values import mapping, text

#: The GPU Operator's kinds that say which driver it installs.
KINDS = frozenset({"ClusterPolicy", "NVIDIADriver"})
# A driver version, not a branch alone: a precompiled driver named `570` says only its branch,
# and comparing that with a floor inside the branch would guess.
_VERSION = re.compile(r"[0-9]+\.[0-9]+(?:\.[0-9]+)?\Z")


def operator_driver(obj: Mapping[str, Any], source: str) -> OperatorDriver | None:
    """The driver a ClusterPolicy (every GPU node) or an NVIDIADriver (the nodes its
    nodeSelector picks) installs; None when it installs none or does not say which."""
    kind, spec = obj.get("kind"), mapping(obj.get("spec"))
    name = text(mapping(obj.get("metadata")).get("name")) or "?"
    if kind == "ClusterPolicy":
        driver = mapping(spec.get("driver"))
        # Disabled: the node image brings its own driver (EKS and GKE images). With the
        # NVIDIADriver CRD in use, those objects say which driver each node gets.
        if driver.get("enabled") is False or driver.get("useNvidiaDriverCRD") is True:
            return None
        version, selector = text(driver.get("version")), {}
    elif kind == "NVIDIADriver":
        version = text(spec.get("version"))
        selector = {str(k): text(v) for k, v in mapping(spec.get("nodeSelector")).items()}
    else:
        return None
    if not _VERSION.match(version):
        return None
    return OperatorDriver(version, f"{kind} {name} driver version in {source}", selector)
