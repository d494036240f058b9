"""Dynamic Resource Allocation (`resource.k8s.io/v1`): claims, templates, classes, slices.

A pod asks for DRA devices with `spec.resourceClaims[]` (each naming a ResourceClaim, or a
ResourceClaimTemplate the control plane makes a claim from) and gives them to containers with
`resources.claims[].name`. A claim's requests name a DeviceClass, whose CEL selectors pick
devices that nodes publish as ResourceSlices. A DeviceClass with `spec.extendedResourceName`
also serves a plain `limits: {<name>: N}` request (KEP-5004). This module reads those objects
from manifests, dumps or the API (plain mappings all) into frozen views; it imports neither
the profile nor the rules, so any layer can use it. The views are NamedTuples: the profile
model defines its fields with them, and a NamedTuple costs a twentieth of a frozen dataclass to
define.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.model import Document
    from gpulint.profile.model import ClusterProfile

#: The API group of DRA objects; `resource.k8s.io/v1` is GA since Kubernetes 1.34.
DRA_GROUP = "resource.k8s.io"
DRA_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"})
#: DeviceClasses that accelerator DRA drivers' charts install (NVIDIA k8s-dra-driver-gpu
#: `templates/deviceclass-*.yaml`, AMD k8s-gpu-dra-driver, Intel intel-resource-drivers, and the
#: kubernetes-sigs dra-example-driver's simulated GPUs).
ACCELERATOR_CLASSES = frozenset(
    {
        "gpu.nvidia.com",
        "mig.nvidia.com",
        "vfio.gpu.nvidia.com",
        "gpu.amd.com",
        "vfio.gpu.amd.com",
        "gpu.intel.com",
        "gaudi.intel.com",
        "gpu.example.com",
    }
)
#: Every DeviceClass a DRA driver's chart installs, with the driver that installs it: a claim
#: may name one before the driver runs, and a near-miss of one is a typo. NVIDIA's
#: (dra-driver-nvidia-gpu `templates/deviceclass-*.yaml`) also installs the ComputeDomain
#: classes, which hand out IMEX channels rather than accelerators, and `vfio.gpu.nvidia.com`
#: (GPU passthrough) from release 25.12.0; AMD's installs `gpu.amd.com-spx` with AutoPartition.
DRIVER_CLASSES: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "gpu.nvidia.com",
            "mig.nvidia.com",
            "vfio.gpu.nvidia.com",
            "compute-domain-daemon.nvidia.com",
            "compute-domain-default-channel.nvidia.com",
        ),
        "the NVIDIA GPU DRA driver",
    ),
    **dict.fromkeys(
        ("gpu.amd.com", "gpu.amd.com-spx", "vfio.gpu.amd.com"), "the AMD GPU DRA driver"
    ),
    "gpu.intel.com": "the Intel GPU DRA driver",
    "gaudi.intel.com": "the Intel Gaudi DRA driver",
    # kubernetes-sigs/dra-example-driver: the class is named after the driver
    # (`<deviceProfile>.example.com`, `gpu` by default; templates/deviceclass.yaml).
    "gpu.example.com": "the kubernetes-sigs DRA example driver",
}
#: Driver classes no other name is taken for a misspelling of: docs and tests invent names in
#: the example domains (`fpga.example.org`), which read close to the example driver's.
NOT_TYPO_TARGETS = frozenset({"gpu.example.com"})
#: DRA driver names whose devices are accelerators (`device.driver == '<name>'` in a class).
#: `gpu.example.com` is the kubernetes-sigs dra-example-driver, which simulates GPUs.
ACCELERATOR_DRIVERS = frozenset(
    {"gpu.nvidia.com", "gpu.amd.com", "gpu.intel.com", "gaudi.intel.com", "gpu.example.com"}
)
ALLOCATION_ALL = "All"
#: Every DeviceClass also serves `deviceclass.resource.kubernetes.io/<class name>` as an
#: extended resource (KEP-5004), besides its explicit `extendedResourceName`.
IMPLICIT_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"

# The CEL clauses gpulint understands in a DeviceClass selector; anything else makes the
# class's device set an upper bound (every device of its driver).
# Patterns, compiled on first use: most profiles and manifests have no DeviceClass.
_DRIVER_CLAUSE = r"""device\.driver\s*==\s*(['"])(?P<driver>[^'"]+)\1"""
_ATTRIBUTE_CLAUSE = (
    r"""\A\(?\s*device\.attributes\[(['"])(?P<domain>[^'"]+)\1\]\.(?P<name>\w+)\s*==\s*"""
    r"""(['"])(?P<value>[^'"]*)\4\s*\)?\Z"""
)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any, default: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def is_dra_object(obj: Mapping[str, Any]) -> bool:
    """True for an object of the `resource.k8s.io` group (any version)."""
    api_version = _text(obj.get("apiVersion"))
    return api_version.split("/", 1)[0] == DRA_GROUP and _text(obj.get("kind")) in DRA_KINDS


# ---------------------------------------------------------------------------------------------
# DeviceClass


class DeviceClass(NamedTuple):
    """A DeviceClass: its name, the drivers its selectors name, its extended resource."""

    name: str
    drivers: frozenset[str]  # from `device.driver == '...'` clauses; empty when none is named
    # `device.attributes['<domain>'].<name> == '<value>'` clauses ANDed with the driver, as
    # (domain, name, value); None when a selector holds anything else (then every device of
    # the drivers may match).
    attributes: tuple[tuple[str, str, str], ...] | None
    extended_resource_name: str | None = None

    @property
    def is_accelerator(self) -> bool:
        """A class of GPUs or other accelerators: a known class, or one of a known driver."""
        return self.name in ACCELERATOR_CLASSES or not self.drivers.isdisjoint(ACCELERATOR_DRIVERS)


def device_class(obj: Mapping[str, Any]) -> DeviceClass:
    """A DeviceClass object as a view."""
    spec = _mapping(obj.get("spec"))
    drivers: set[str] = set()
    attributes: list[tuple[str, str, str]] | None = []
    for selector in _sequence(spec.get("selectors")):
        expression = _text(_mapping(_mapping(selector).get("cel")).get("expression"))
        for clause in (c.strip() for c in expression.split("&&")):
            driver = re.fullmatch(_DRIVER_CLAUSE, clause.strip("() "))
            attribute = re.match(_ATTRIBUTE_CLAUSE, clause)
            if driver is not None:
                drivers.add(driver["driver"])
            elif attribute is not None and attributes is not None:
                attributes.append((attribute["domain"], attribute["name"], attribute["value"]))
            elif clause:
                attributes = None
    extended = _text(spec.get("extendedResourceName")) or None
    return DeviceClass(
        name=_text(_mapping(obj.get("metadata")).get("name")),
        drivers=frozenset(drivers),
        attributes=tuple(attributes) if attributes is not None else None,
        extended_resource_name=extended,
    )


def device_classes(objects: Iterable[Mapping[str, Any]]) -> tuple[DeviceClass, ...]:
    """Every DeviceClass among `objects` (Lists are opened), in order."""
    return tuple(device_class(o) for o in flatten(objects) if _text(o.get("kind")) == "DeviceClass")


def extended_resource_names(objects: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The resource names DeviceClasses among `objects` serve through `extendedResourceName`.

    A plain `limits: {nvidia.com/gpu: 1}` is served by DRA when one of these names it, so the
    name need not be in any node's allocatable.
    """
    return frozenset(
        c.extended_resource_name for c in device_classes(objects) if c.extended_resource_name
    )


def served_resource_names(objects: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Every extended resource name DeviceClasses among `objects` serve: the explicit
    `extendedResourceName`s and each class's implicit `deviceclass.resource.kubernetes.io/<name>`.
    """
    classes = device_classes(objects)
    implicit = {IMPLICIT_RESOURCE_PREFIX + c.name for c in classes if c.name}
    return frozenset(implicit) | extended_resource_names(objects)


def is_accelerator_class(name: str, classes: Iterable[DeviceClass] = ()) -> bool:
    """Whether DeviceClass `name` hands out accelerators: a known class, or a given class whose
    selectors name an accelerator driver."""
    if name in ACCELERATOR_CLASSES:
        return True
    return any(c.name == name and c.is_accelerator for c in classes)


# ---------------------------------------------------------------------------------------------
# ResourceClaim and ResourceClaimTemplate


class DeviceRequest(NamedTuple):
    """One entry of `spec.devices.requests[]`: a DeviceClass and how many devices of it.

    A `firstAvailable` request is read as its first alternative (the one preferred).
    """

    name: str
    device_class: str
    count: int  # 1 by default; for allocationMode All, 0 (every matching device)
    allocation_mode: str  # ExactCount or All
    alternatives: tuple[str, ...] = ()  # the other firstAvailable classes, in order
    # `adminAccess: true`: access to devices other pods may be using (monitoring), no device
    # of the pod's own.
    admin_access: bool = False

    def describe(self) -> str:
        """`gpu: 2 × gpu.nvidia.com`, `all: every gpu.nvidia.com device`."""
        if self.allocation_mode == ALLOCATION_ALL:
            return f"{self.name}: every {self.device_class} device"
        return f"{self.name}: {self.count} × {self.device_class}"


class Claim(NamedTuple):
    """A ResourceClaim, or the claim a ResourceClaimTemplate makes."""

    kind: str  # ResourceClaim or ResourceClaimTemplate
    namespace: str
    name: str
    requests: tuple[DeviceRequest, ...]
    allocated: bool = False  # a ResourceClaim whose status has an allocation

    def describe(self) -> str:
        """`ResourceClaimTemplate ml/single-gpu (gpu: 1 × gpu.nvidia.com)`."""
        requests = "; ".join(r.describe() for r in self.requests) or "no device requests"
        return f"{self.kind} {self.namespace}/{self.name} ({requests})"


def device_requests(claim_spec: Mapping[str, Any]) -> tuple[DeviceRequest, ...]:
    """The requests of a ResourceClaim spec (`spec`, or a template's `spec.spec`)."""
    found = []
    for raw in _sequence(_mapping(claim_spec.get("devices")).get("requests")):
        request = _mapping(raw)
        name = _text(request.get("name"))
        exactly = _mapping(request.get("exactly"))
        alternatives = [_mapping(a) for a in _sequence(request.get("firstAvailable"))]
        if not exactly and alternatives:
            exactly = alternatives[0]
        # v1beta1 wrote the class and count on the request itself.
        source = exactly or request
        mode = _text(source.get("allocationMode")) or "ExactCount"
        count = 0 if mode == ALLOCATION_ALL else _count(source.get("count"))
        found.append(
            DeviceRequest(
                name,
                _text(source.get("deviceClassName")),
                count,
                mode,
                tuple(_text(a.get("deviceClassName")) for a in alternatives[1:]),
                admin_access=source.get("adminAccess") is True,
            )
        )
    return tuple(found)


def claim(obj: Mapping[str, Any], default_namespace: str = "default") -> Claim:
    """A ResourceClaim or ResourceClaimTemplate object as a view."""
    kind = _text(obj.get("kind"))
    metadata = _mapping(obj.get("metadata"))
    spec = _mapping(obj.get("spec"))
    if kind == "ResourceClaimTemplate":
        spec = _mapping(spec.get("spec"))
    allocation = _mapping(obj.get("status")).get("allocation")
    return Claim(
        kind,
        _text(metadata.get("namespace")) or default_namespace,
        _text(metadata.get("name")),
        device_requests(spec),
        allocated=bool(allocation),
    )


def accelerator_classes(claim: Claim, classes: Iterable[DeviceClass] = ()) -> tuple[str, ...]:
    """The DeviceClasses through which `claim` surely gets accelerators, in order: those of its
    requests whose class, and every `firstAvailable` alternative, hands out accelerators
    (`is_accelerator_class`). A request that may be served by a class gpulint cannot tell is
    an accelerator's, or that asks `adminAccess` to devices in use, gives none."""
    classes = tuple(classes)
    return tuple(
        dict.fromkeys(
            r.device_class
            for r in claim.requests
            if not r.admin_access
            and all(is_accelerator_class(c, classes) for c in (r.device_class, *r.alternatives))
        )
    )


#: The API group of the NVIDIA GPU DRA driver's ComputeDomain.
COMPUTE_DOMAIN_GROUP = "resource.nvidia.com"


def compute_domain_channel_template(
    obj: Mapping[str, Any], default_namespace: str = "default"
) -> Claim | None:
    """The ResourceClaimTemplate a ComputeDomain's controller creates for its IMEX channel.

    The NVIDIA GPU DRA driver creates `spec.channel.resourceClaimTemplate.name` in the
    ComputeDomain's namespace, and pods name it in `resourceClaimTemplateName` (its template
    `compute-domain-channel.tmpl.yaml`); the manifests ship the ComputeDomain, never the
    template. None for any other object.
    """
    if _text(obj.get("kind")) != "ComputeDomain":
        return None
    if _text(obj.get("apiVersion")).partition("/")[0] != COMPUTE_DOMAIN_GROUP:
        return None
    channel = _mapping(_mapping(obj.get("spec")).get("channel"))
    name = _text(_mapping(channel.get("resourceClaimTemplate")).get("name"))
    if not name:
        return None
    namespace = _text(_mapping(obj.get("metadata")).get("namespace")) or default_namespace
    # One channel of the domain's default channel class: what the driver's template asks for.
    request = DeviceRequest("channel", "compute-domain-default-channel.nvidia.com", 1, "ExactCount")
    return Claim("ResourceClaimTemplate", namespace, name, (request,))


def claims(objects: Iterable[Mapping[str, Any]]) -> tuple[Claim, ...]:
    """Every ResourceClaim and ResourceClaimTemplate among `objects`, in order."""
    return tuple(
        claim(o)
        for o in flatten(objects)
        if _text(o.get("kind")) in ("ResourceClaim", "ResourceClaimTemplate")
    )


# ---------------------------------------------------------------------------------------------
# A pod's claims


class PodClaim(NamedTuple):
    """One `spec.resourceClaims[]` entry of a pod (template)."""

    name: str
    resource_claim_name: str | None
    template_name: str | None
    index: int  # position in spec.resourceClaims

    @property
    def kind(self) -> str:
        """The kind of object the entry names."""
        return "ResourceClaimTemplate" if self.template_name else "ResourceClaim"

    @property
    def target(self) -> str | None:
        """The name of the ResourceClaim or ResourceClaimTemplate it names."""
        return self.template_name or self.resource_claim_name


_CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
#: The kinds a run's DRA objects are read from (a ComputeDomain brings a template).
_KNOWN_KINDS = (*_CLAIM_KINDS, "DeviceClass", "ResourceSlice", "ComputeDomain")


class DraObjects(NamedTuple):
    """The DRA objects gpulint knows for one run: the inputs' and the profile's."""

    profile_classes: tuple[DeviceClass, ...]
    input_classes: tuple[tuple[DeviceClass, Document], ...]
    classes: dict[str, DeviceClass]  # by name; an input's class over the profile's
    claims: tuple[Claim, ...]  # the profile's, then the inputs'
    profiled_claim_kinds: frozenset[str]  # the kinds of claim the profile lists
    # Templates a controller makes from an input (a ComputeDomain's channel): they exist, but
    # say nothing of whether the inputs hold the namespace's other templates.
    created: tuple[Claim, ...] = ()

    def claims_known(self, kind: str, namespace: str) -> bool:
        """Whether a missing `kind` in `namespace` is a defect: the profile lists that kind,
        or the inputs hold one of it in the namespace."""
        if kind in self.profiled_claim_kinds:
            return True
        return any(c.kind == kind and c.namespace == namespace for c in self.claims)


def dra_objects(
    knowledge: Iterable[Document],
    documents: Iterable[Document],
    profile: ClusterProfile | None,
    namespace_of: Callable[[Document], str],
) -> DraObjects:
    """The DRA objects of a run: those of the knowledge objects and of the file's own
    `documents` (each once), over the profile's `device_classes` and `resource_claims`."""
    from gpulint.model import of_kind

    known = of_kind(knowledge, *_KNOWN_KINDS)
    seen = {id(d.obj) for d in known}
    inputs = [
        *known,
        *(d for d in documents if d.ref.kind in _KNOWN_KINDS and id(d.obj) not in seen),
    ]
    profile_classes = profile.device_classes if profile is not None else ()
    input_classes = tuple((device_class(d.obj), d) for d in inputs if d.ref.kind == "DeviceClass")
    classes = {c.name: c for c in profile_classes}
    classes.update((c.name, c) for c, _ in input_classes)
    profiled = profile.resource_claims if profile is not None else ()
    from_inputs = tuple(claim(d.obj, namespace_of(d)) for d in inputs if d.ref.kind in _CLAIM_KINDS)
    # A ComputeDomain of the inputs brings the template its controller creates.
    made = (
        compute_domain_channel_template(d.obj, namespace_of(d))
        for d in inputs
        if d.ref.kind == "ComputeDomain"
    )
    return DraObjects(
        profile_classes,
        input_classes,
        classes,
        (*profiled, *from_inputs),
        frozenset(c.kind for c in profiled),
        tuple(c for c in made if c is not None),
    )


def pod_claims(pod_spec: Mapping[str, Any]) -> tuple[PodClaim, ...]:
    """A pod spec's `resourceClaims[]` entries."""
    found = []
    for index, raw in enumerate(_sequence(pod_spec.get("resourceClaims"))):
        entry = _mapping(raw)
        found.append(
            PodClaim(
                _text(entry.get("name")),
                _text(entry.get("resourceClaimName")) or None,
                _text(entry.get("resourceClaimTemplateName")) or None,
                index,
            )
        )
    return tuple(found)


def container_claim_names(container: Mapping[str, Any]) -> tuple[str, ...]:
    """The `resources.claims[].name` values of one container."""
    return tuple(
        _text(_mapping(c).get("name"))
        for c in _sequence(_mapping(container.get("resources")).get("claims"))
    )


def has_claims(pod_spec: Mapping[str, Any]) -> bool:
    """True when the pod spec asks for DRA devices (any `resourceClaims` entry)."""
    return bool(_sequence(pod_spec.get("resourceClaims")))


def claim_of(pod_claim: PodClaim, namespace: str, known: Iterable[Claim]) -> Claim | None:
    """The ResourceClaim or ResourceClaimTemplate a pod entry names, among `known`."""
    return next(
        (
            c
            for c in known
            if c.kind == pod_claim.kind and c.namespace == namespace and c.name == pod_claim.target
        ),
        None,
    )


def generated_claim_names(pod: Mapping[str, Any]) -> dict[str, str]:
    """`status.resourceClaimStatuses`: pod entry name -> the ResourceClaim made for it."""
    return {
        _text(_mapping(s).get("name")): _text(_mapping(s).get("resourceClaimName"))
        for s in _sequence(_mapping(pod.get("status")).get("resourceClaimStatuses"))
        if _text(_mapping(s).get("resourceClaimName"))
    }


# ---------------------------------------------------------------------------------------------
# ResourceSlice


class Device(NamedTuple):
    """One device a ResourceSlice publishes, with its string attributes."""

    name: str
    attributes: Mapping[str, str]  # qualified name -> value (strings, versions, ints, bools)


class ResourceSlice(NamedTuple):
    """A ResourceSlice: the devices one driver publishes for one node (or for all nodes)."""

    driver: str
    node: str | None  # None: available on every node (allNodes) or a node selector
    devices: tuple[Device, ...]


def resource_slice(obj: Mapping[str, Any]) -> ResourceSlice:
    """A ResourceSlice object as a view."""
    spec = _mapping(obj.get("spec"))
    driver = _text(spec.get("driver"))
    devices = []
    for raw in _sequence(spec.get("devices")):
        device = _mapping(raw)
        # v1beta1 nested the attributes under `basic`.
        attributes = _mapping(
            device.get("attributes") or _mapping(device.get("basic")).get("attributes")
        )
        values = {}
        for key, value in attributes.items():
            scalar = next(
                (v for v in _mapping(value).values() if isinstance(v, str | int | bool)), None
            )
            if scalar is not None:
                qualified = str(key) if "/" in str(key) or not driver else f"{driver}/{key}"
                values[qualified] = str(scalar).lower() if isinstance(scalar, bool) else str(scalar)
        devices.append(Device(_text(device.get("name")), values))
    return ResourceSlice(driver, _text(spec.get("nodeName")) or None, tuple(devices))


def resource_slices(objects: Iterable[Mapping[str, Any]]) -> tuple[ResourceSlice, ...]:
    """Every ResourceSlice among `objects`, in order."""
    return tuple(
        resource_slice(o) for o in flatten(objects) if _text(o.get("kind")) == "ResourceSlice"
    )


def matches(device_class: DeviceClass, driver: str, device: Device) -> bool:
    """Whether `device` of `driver` may match the class (exactly, for the selectors gpulint
    reads; otherwise every device of the class's drivers counts)."""
    if device_class.drivers and driver not in device_class.drivers:
        return False
    return all(
        device.attributes.get(f"{domain}/{name}") == value
        for domain, name, value in device_class.attributes or ()
    )


def devices_per_node(device_class: DeviceClass, slices: Iterable[ResourceSlice]) -> dict[str, int]:
    """How many devices of the class each node offers (slices for all nodes count on each)."""
    per_node: dict[str, int] = {}
    shared = 0
    for item in slices:
        found = sum(1 for d in item.devices if matches(device_class, item.driver, d))
        if item.node is None:
            shared += found
        elif found:
            per_node[item.node] = per_node.get(item.node, 0) + found
    if shared:
        per_node = {node: count + shared for node, count in per_node.items()} or {"*": shared}
    return per_node


def dra_nodes(
    slices: Iterable[ResourceSlice], classes: Iterable[DeviceClass] = ()
) -> frozenset[str]:
    """Nodes that publish accelerator devices through DRA."""
    accelerator_drivers = ACCELERATOR_DRIVERS | {
        d for c in classes if c.is_accelerator for d in c.drivers
    }
    return frozenset(
        s.node for s in slices if s.node and s.devices and s.driver in accelerator_drivers
    )


# ---------------------------------------------------------------------------------------------


def flatten(objects: Iterable[Any]) -> Iterator[Mapping[str, Any]]:
    """The objects, with the items of any `kind: List` (or `<Kind>List`) in their place."""
    for obj in objects:
        if not isinstance(obj, Mapping):
            continue
        kind = _text(obj.get("kind"))
        if kind == "List" or (kind.endswith("List") and "items" in obj):
            yield from flatten(_sequence(obj.get("items")))
        else:
            yield obj
