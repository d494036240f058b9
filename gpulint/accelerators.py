"""Accelerator resource names: which ones device plugins advertise, and what a typo meant."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Names the vendors' device plugins advertise (see the reference, section 2.1).
KNOWN_RESOURCES: tuple[str, ...] = (
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
    "gpu.intel.com/millicores",
    "gpu.intel.com/memory.max",
    "gpu.intel.com/tiles",
    "habana.ai/gaudi",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "google.com/tpu",
)
_KNOWN = frozenset(KNOWN_RESOURCES)
# NVIDIA MIG devices under the `mixed` strategy: nvidia.com/mig-<slices>g.<memory>gb[.me]
MIG_RESOURCE = re.compile(r"nvidia\.com/mig-[1-7]g\.[0-9]+gb(?:\.me)?\Z")
# Tokens that make a resource name look like an accelerator request.
_ACCELERATOR_TOKENS = frozenset(
    {"gpu", "gpus", "vgpu", "mig", "neuron", "neurons", "neuroncore", "neuroncores"}
    | {"neurondevice", "tpu", "tpus", "gaudi", "i915", "cuda", "accelerator"}
)
_TOKEN_SPLIT = re.compile(r"[./_\-]+")
_NON_ACCELERATOR = frozenset({"cpu", "memory", "ephemeral-storage", "pods", "storage"})
# The vendor a misspelled name most likely meant, when no close spelling is found.
_VENDOR_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("amd", "amd.com/gpu"),
    ("intel", "gpu.intel.com/i915"),
    ("habana", "habana.ai/gaudi"),
    ("gaudi", "habana.ai/gaudi"),
    ("neuron", "aws.amazon.com/neuron"),
    ("tpu", "google.com/tpu"),
    ("gpu", "nvidia.com/gpu"),
    ("nvidia", "nvidia.com/gpu"),
    ("cuda", "nvidia.com/gpu"),
)


def is_known_accelerator(name: str) -> bool:
    """True for a name a vendor device plugin advertises (including any MIG profile)."""
    return name in _KNOWN or MIG_RESOURCE.match(name) is not None


def looks_like_accelerator(name: str) -> bool:
    """True when `name` reads as an attempt to request an accelerator."""
    lower = name.lower()
    if lower in _NON_ACCELERATOR or lower.startswith("hugepages-"):
        return False
    if is_known_accelerator(name):
        return True
    tokens = _TOKEN_SPLIT.split(lower)
    return any(t in _ACCELERATOR_TOKENS or t.startswith("mig") for t in tokens)


def is_extended_resource(name: str) -> bool:
    """Extended resources: qualified, not `kubernetes.io/`, not `requests.`; never overcommitted."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def suggest_resource(name: str, candidates: Iterable[str] = KNOWN_RESOURCES) -> str | None:
    """The name `name` most likely meant among `candidates`, or None."""
    options = list(candidates)
    if not options:
        return None
    lower = name.lower()
    by_lower = {option.lower(): option for option in options}
    if lower in by_lower:
        return by_lower[lower]
    import difflib  # only for a name that is not known: most runs never get here

    close = difflib.get_close_matches(lower, list(by_lower), n=1, cutoff=0.6)
    if close:
        return by_lower[close[0]]
    for word, default in _VENDOR_DEFAULTS:
        if word in lower and default in options:
            return default
    return None
