"""Accelerator resource names: which ones plugins and allocators serve, and what a typo meant.

The facts live in the registry, gpulint.data.accelerators; this module answers questions about
a name from it. Every answer is cached: the same few names repeat across every manifest.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from gpulint.data.accelerators import (
    ANNOTATIONS,
    DEVICE_LIKE,
    EXTENDER,
    FORMER_NAMES,
    MODEL_NAMES,
    NETWORK_DOMAINS,
    NETWORK_PREFIXES,
    NETWORK_WORDS,
    REMOVED_NAMES,
    RESOURCES,
    AcceleratorAnnotation,
    AcceleratorResource,
    FormerName,
    ModelNames,
    RemovedName,
)

#: Names the vendors' device plugins advertise for a whole device, most common first (pattern
#: families such as MIG profiles are known too, see `is_known_accelerator`).
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
#: Every DeviceClass also serves `deviceclass.resource.kubernetes.io/<class name>` (KEP-5004).
DRA_CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"
_BY_NAME: dict[str, AcceleratorResource] = {r.name: r for r in RESOURCES if r.pattern is None}
_BY_ANNOTATION: dict[str, AcceleratorAnnotation] = {a.key: a for a in ANNOTATIONS}
_FORMER: dict[str, FormerName] = {f.name: f for f in FORMER_NAMES}
_REMOVED: dict[str, RemovedName] = {r.name: r for r in REMOVED_NAMES}
# NVIDIA MIG devices under the `mixed` strategy: nvidia.com/mig-<slices>g.<memory>gb[.me]
# (A pattern string, compiled on first use.)
MIG_RESOURCE = r"nvidia\.com/mig-(?:[1-8]c\.)?[1-8]g\.[0-9]+gb(?:\.[a-z]+)*\Z"
# Tokens that make a resource name look like an accelerator request.
_ACCELERATOR_TOKENS = frozenset(
    {"gpu", "gpus", "vgpu", "mig", "neuron", "neurons", "neuroncore", "neuroncores"}
    | {"neurondevice", "tpu", "tpus", "gaudi", "i915", "cuda", "accelerator"}
)
_TOKEN_SPLIT = re.compile(r"[./_\-]+")
_NON_ACCELERATOR = frozenset({"cpu", "memory", "ephemeral-storage", "pods", "storage"})
# Words that give an unknown name its meaning, so that a suggestion never changes it.
_MEMORY_WORDS = ("mem", "memory", "vram", "gib", "mib")
_CORE_WORDS = ("core", "cores", "util", "percentage")
# The vendor a misspelled device name most likely meant, when no close spelling is found.
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
# A resource name as the API accepts it: an optional DNS-subdomain prefix and a name part.
# (Compiled on first use: only a name that is no known resource is checked.)
_QUALIFIED_NAME = (
    r"(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z"
)


@functools.cache
def _patterns() -> dict[str, tuple[tuple[str, AcceleratorResource], ...]]:
    # The families by the domain their pattern is written under (its text up to the first
    # `/`, unescaped): a name is matched only against its own domain's patterns, so a run
    # that asks only exact names and `cpu` or `memory` compiles none.
    by_domain: dict[str, list[tuple[str, AcceleratorResource]]] = {}
    for family in RESOURCES:
        if family.pattern is not None:
            domain = family.pattern.partition("/")[0].replace("\\.", ".")
            by_domain.setdefault(domain, []).append((family.pattern, family))
    return {domain: tuple(found) for domain, found in by_domain.items()}


@functools.lru_cache(maxsize=4096)
def accelerator_info(name: str) -> AcceleratorResource | None:
    """The registry entry serving resource `name` (exact name or family), or None."""
    entry = _BY_NAME.get(name)
    if entry is not None:
        return entry
    for pattern, family in _patterns().get(name.partition("/")[0], ()):
        if re.fullmatch(pattern, name):
            return family
    return None


def is_known_accelerator(name: str) -> bool:
    """True for a name a known device plugin or allocator serves (including MIG profiles)."""
    return accelerator_info(name) is not None


def is_extender_resource(name: str) -> bool:
    """True for a resource a scheduler extender fits, which node allocatable never lists."""
    entry = accelerator_info(name)
    return entry is not None and entry.served_by == EXTENDER


def extender_of(name: str) -> str | None:
    """The `schedulerExtenders` name of the extender serving `name`, if one does."""
    entry = accelerator_info(name)
    return entry.extender if entry is not None else None


def former_name(name: str) -> FormerName | None:
    """The registry's record of `name` when it is a name its provider has since renamed
    (Koordinator's `kubernetes.io/gpu`, now `koordinator.sh/gpu`), else None."""
    return _FORMER.get(name)


def removed_name(name: str) -> RemovedName | None:
    """The registry's record of `name` when Kubernetes served it itself and has removed it
    (`alpha.kubernetes.io/nvidia-gpu`), else None."""
    return _REMOVED.get(name)


def accelerator_annotation(key: str) -> AcceleratorAnnotation | None:
    """The registry entry for a pod annotation that requests an accelerator, or None."""
    return _BY_ANNOTATION.get(key)


@functools.lru_cache(maxsize=4096)
def looks_like_accelerator(name: str) -> bool:
    """True when `name` reads as an attempt to request an accelerator.

    A name counts by what it says, not by its domain: a known name, one with an accelerator
    word (`example.com/gpu`), or a GPU model under its vendor's domain (`nvidia.com/a100`). A
    name that says it is a network device (`nvidia.com/rdma_shared_device_a`) never counts, nor
    does any other name under a GPU vendor's domain (`nvidia.com/hostdev`): vendors' network
    operators advertise NICs and virtual functions there, under names their users choose.
    """
    lower = name.lower()
    if lower in _NON_ACCELERATOR or lower.startswith("hugepages-"):
        return False
    if is_known_accelerator(name):
        return True
    if is_network_device(name):
        return False
    tokens = _TOKEN_SPLIT.split(lower)
    if any(t in _ACCELERATOR_TOKENS or t.startswith("mig") for t in tokens):
        return True
    return gpu_model_resource(name) is not None


def is_network_device(name: str) -> bool:
    """True for a name that says it is a network device (NIC, virtual function, RDMA HCA).

    Network operators and the RDMA and SR-IOV device plugins advertise names their users
    configure (`nvidia.com/hostdev`, `rdma/rdma_shared_device_a`, `openshift.io/mlnxnics`), so
    no list can hold them all; the words they are made of can.
    """
    domain, _, part = name.lower().rpartition("/")
    if domain in NETWORK_DOMAINS:
        return True
    return any(
        t in NETWORK_WORDS or t.startswith(NETWORK_PREFIXES) for t in _TOKEN_SPLIT.split(part)
    )


# A model written as a resource name may carry the vendor's prefix and the board's memory or
# form factor: `tesla-t4`, `nvidia-a100-80gb`, `h100_sxm5`, `instinct-mi300x`.
_MODEL_PREFIX = r"(?:(?:nvidia|tesla|amd)[-_.]?)?(?:instinct[-_.]?)?"
_MODEL_SUFFIX = r"(?:[-_.]?(?:[0-9]+gi?b?|sxm[0-9]?|pcie|nvl|hbm[0-9]e?|oam))*"
# Catalogued models that are also words of other device names (`l2`: a layer-2 NIC).
_AMBIGUOUS_MODELS = frozenset({"l2"})


@functools.cache
def _model_patterns() -> dict[str, tuple[re.Pattern[str], ModelNames]]:
    # Built on first use, only for a name under a GPU vendor's domain that nothing serves.
    from gpulint.data.gpu_products import GFD_FAMILIES

    patterns = {}
    for entry in MODEL_NAMES:
        models = [entry.models]
        if entry.gfd_catalogue:
            models += [
                re.escape(f.model.lower())
                for f in GFD_FAMILIES
                if f.model.lower() not in _AMBIGUOUS_MODELS
            ]
        alternatives = "|".join(sorted(models, key=len, reverse=True))
        pattern = re.compile(f"{_MODEL_PREFIX}(?P<model>{alternatives}){_MODEL_SUFFIX}")
        patterns[entry.domain] = (pattern, entry)
    return patterns


@functools.lru_cache(maxsize=1024)
def gpu_model_resource(name: str) -> tuple[ModelNames, str] | None:
    """(the vendor's entry, the model) when `name` is a GPU model written as a resource name
    under its vendor's domain (`nvidia.com/a100` -> A100, `amd.com/mi300x` -> MI300X)."""
    domain, _, part = name.lower().partition("/")
    found = _model_patterns().get(domain)
    if found is None:
        return None
    pattern, entry = found
    match = pattern.fullmatch(part)
    return (entry, match.group("model").upper()) if match else None


def is_extended_resource(name: str) -> bool:
    """Extended resources: qualified, not `kubernetes.io/`, not `requests.`; never overcommitted."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_valid_resource_name(name: str) -> bool:
    """Whether the API accepts `name` as an extended resource name (qualified, well formed)."""
    return "/" in name and re.match(_QUALIFIED_NAME, name) is not None


def meaning_of(name: str) -> str:
    """What a request of `name` counts: `device` (devices, slices, shares), `memory`, `cores`
    or, for registry entries, their own unit (`percent` for Koordinator's `koordinator.sh/gpu`);
    a renamed name counts what its new name does."""
    former = former_name(name)
    entry = accelerator_info(former.now if former is not None else name)
    if entry is not None:
        return "device" if entry.unit in DEVICE_LIKE else entry.unit
    tokens = _TOKEN_SPLIT.split(name.lower())
    if any(t.endswith(_MEMORY_WORDS) or t.startswith("mem") for t in tokens):
        return "memory"
    if any(t.endswith(_CORE_WORDS) for t in tokens):
        return "cores"
    # A close spelling of a name of its own domain means what that name does: Koordinator's
    # `koordinator.sh/gpus` is a percentage as `koordinator.sh/gpu` is, not a device count.
    return _domain_meaning(name) or "device"


@functools.lru_cache(maxsize=1024)
def _domain_meaning(name: str) -> str | None:
    """The unit of the known name under `name`'s domain closest to it, if one is close."""
    import difflib  # only for a name that is not known: most runs never get here

    domain, _, part = name.lower().rpartition("/")
    best, meaning = 0.8, None
    for known, entry in _BY_NAME.items():
        known_domain, _, known_part = known.lower().rpartition("/")
        if known_domain != domain:
            continue
        ratio = difflib.SequenceMatcher(None, part, known_part).ratio()
        if ratio >= best:
            best, meaning = ratio, ("device" if entry.unit in DEVICE_LIKE else entry.unit)
    return meaning


def suggest_resource(name: str, candidates: Iterable[str] = KNOWN_RESOURCES) -> str | None:
    """The name `name` most likely meant among `candidates`, or None.

    A suggestion always means the same kind of amount as `name`: a memory or core-share
    resource is never renamed to a device count, nor the other way round.
    """
    return _suggest(name, tuple(candidates))


@functools.lru_cache(maxsize=4096)
def _suggest(name: str, candidates: tuple[str, ...]) -> str | None:
    former = former_name(name)
    if former is not None:
        # Its provider's new name, or nothing: another close spelling would count another unit.
        return former.now if former.now in candidates else None
    meaning = meaning_of(name)
    options = [c for c in candidates if meaning_of(c) == meaning]
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
    if meaning != "device" or is_known_accelerator(name):
        # A name a plugin serves is no misspelling of its vendor's default: a GPU a KubeVirt
        # plugin passes to virtual machines (`nvidia.com/TU104GL_Tesla_T4`) is not a
        # container's `nvidia.com/gpu`.
        return None
    for word, default in _VENDOR_DEFAULTS:
        if word in lower and default in options:
            return default
    return None


@functools.lru_cache(maxsize=4096)
def near_miss(name: str) -> str | None:
    """The known name `name` misspells, when it is surely a typo of one, else None.

    A typo keeps the meaning and changes little: the same name but for case
    (`nvidia.com/GPU`), the same domain and a close name (`nvidia.com/gpus`), or the same name
    under a mangled domain (`nvidia/gpu`, `nvidia.co/gpu`). Another domain with a plausible
    name (`example.com/gpu`) is another vendor's resource, not a typo.
    """
    import difflib  # only for a name that is not known: most runs never get here

    meaning = meaning_of(name)
    lower = name.lower()
    domain, _, part = lower.rpartition("/")
    for known in _BY_NAME:
        if meaning_of(known) != meaning:
            continue
        known_lower = known.lower()
        if lower == known_lower:
            return known
        known_domain, _, known_part = known_lower.rpartition("/")
        if domain == known_domain:
            if difflib.SequenceMatcher(None, part, known_part).ratio() >= 0.8:
                return known
        elif part == known_part and _mangled(domain, known_domain):
            return known
    return None


def _mangled(domain: str, known: str) -> bool:
    """`nvidia` or `nvidia.co` for `nvidia.com`: the vendor's domain, written wrong."""
    import difflib

    return domain == known.split(".")[0] or (
        difflib.SequenceMatcher(None, domain, known).ratio() >= 0.85
    )
