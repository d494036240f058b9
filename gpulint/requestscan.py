"""The scan for accelerator requests outside the pod templates gpulint reads: resources,
DRA claims and GPU-share annotations anywhere in an object (GPU007, and the summary's count of
unchecked objects), going on from what the typed walk already enumerated.
"""

import re
from collections.abc import Iterable
from typing import Any

from gpulint.accelerators import looks_like_accelerator
from gpulint.data.accelerators import ANNOTATIONS as ACCELERATOR_ANNOTATIONS
from gpulint.fields import field_path, shown
from gpulint.model import (
    Document,
    UnreadPart,
    Workload,
)
from gpulint.shapes import POLYAXON_FILE, api_group
from gpulint.views import NamedTuple
from gpulint.yamltree import BuiltMap, Pos, YMap, YSeq, parse

#: What one walk over a document has done at its mappings and lists, by id(): TYPED, the
#: typing read the node as a pod template reads it (the accelerator scan does not enter it); a
#: tuple, the node was enumerated once already and these are its (key or index, value) entries
#: to go on with (all of them, or those holding mappings and lists: the scan reads only those).
Walked = dict[int, tuple[tuple[Any, Any], ...] | bool]
TYPED = False
#: The sections of a container's resource requirements that name amounts.
SECTIONS = ("requests", "limits")


def walk_entries(node: YMap | YSeq, walked: Walked) -> tuple[tuple[Any, Any], ...]:
    """The (key or index, value) entries of `node`, enumerated once per walk: whoever meets
    the node again (another role, the accelerator scan) goes on from `walked`."""
    entries = walked.get(id(node))
    if not isinstance(entries, tuple):  # not met yet (a typed node is never entered)
        entries = walked[id(node)] = tuple(node.items() if type(node) is YMap else enumerate(node))
    return entries


RESOURCE, CLAIM, ANNOTATION = "resource", "claim", "annotation"
OPERATOR_FIELD, EMBEDDED = "operator field", "embedded manifest"
#: The forms of accelerator request the rules check in a pod template they read: resources, and
#: DRA claims (GPU701-GPU705 follow them to their templates, DeviceClasses and ResourceSlices).
#: A scheduler's GPU-share annotation in a read pod is still unchecked until a rule reads it.
CHECKED_FORMS = frozenset({RESOURCE, CLAIM})


class AcceleratorRequest(NamedTuple):
    """Something in an object that asks for an accelerator, and the mapping that holds it."""

    what: str  # `nvidia.com/gpu`, `resource claim gpu`, `annotation gpu-fraction`
    field: str  # where, as an API field path: `spec.predictor.resources.limits`
    pos: Pos
    # id()s of the mappings a pod template must read for the request to be checked: the
    # `resources` block and the mapping holding it (a pod spec's own `resources` is read too)
    holders: tuple[int, ...]
    form: str = RESOURCE  # RESOURCE, CLAIM or ANNOTATION
    # For a request whose pods another object runs: who runs them, as GPU007 says why.
    runs_in: str = ""


# Keys of a container's resource requirements; `resourcesPerNode` is a TrainJob's,
# `computeResources` a Tekton step's, sidecar's or TaskRun's (tekton.dev/v1).
_RESOURCE_KEYS = frozenset({"resources", "resourcesPerNode", "computeResources"})
# A resource item of yatai-deployment's BentoDeployment (apis/serving/common ResourceItem) and
# of NVIDIA Dynamo's services, which grew from it: under `requests` and `limits`, `gpu` is an
# amount of `nvidia.com/gpu` and `custom` maps any other resource name to its amount, both
# written into the main container's resources by the operator (yatai-deployment
# controllers/bentodeployment_controller.go getResourcesConfig). Neither key is a Kubernetes
# resource name, so a pod never holds them: they are found only where no shape reads them.
_ITEM_GPU, _ITEM_CUSTOM = "gpu", "custom"
_ITEM = (
    "its operator writes a resource item's `gpu` and `custom` amounts into the pods it builds, "
    "which gpulint does not build for this kind"
)
# KubeVirt's device lists (a VirtualMachineInstance's `spec.domain.devices.gpus` and
# `hostDevices`, an instancetype's `spec.gpus` and `spec.hostDevices`), by whether an item's
# `deviceName` counts only when it reads as an accelerator: every `gpus` item is a GPU, a host
# device may be a USB disk (`kubevirt.io/storage`) or a crypto card (`intel.com/qat`).
_DEVICE_LISTS = {"gpus": False, "hostDevices": True}
# Every key under which _scan looks for a request (a list item's key is None).
_REQUEST_KEYS = (
    _RESOURCE_KEYS
    | _DEVICE_LISTS.keys()
    | {"annotations", "gpu", "sparkConf", "flinkConfiguration", "resource", "resourceClaims"}
    | {"parameters"}
)
#: Who runs the pods of Flink's external resources: Flink itself, as it creates them.
FLINK_TASK_MANAGERS = (
    "Flink adds it to the requests and limits of the TaskManager pods it creates, which "
    "gpulint does not build"
)
#: Who runs the pod of a Kubeflow Pipelines executor: its `resources.accelerator` is no pod
#: field, the KFP driver writes it into the executor pod's limits at run time.
KFP_DRIVER = (
    "the Kubeflow Pipelines driver writes it into the executor's pod at run time (a "
    "pod-spec-patch), which gpulint does not build"
)
# Pod annotations that request an accelerator share (KAI Scheduler): the registry's.
_ACCELERATOR_ANNOTATIONS = frozenset(annotation.key for annotation in ACCELERATOR_ANNOTATIONS)
_NODES = (YMap, YSeq)


def accelerator_requests(obj: YMap, walked: Walked | None = None) -> list[AcceleratorRequest]:
    """Every accelerator request anywhere in an object, whatever its kind, in document order.

    A request is an accelerator-looking resource in any `resources` block (directly, or under
    `requests`/`limits`), a DRA claim (`resourceClaims`, `resources.claims`), or an annotation
    that asks a scheduler for a GPU share. `status` is what the cluster reports, not a request.
    What `walked` marks typed (read by a pod template) is not entered; what it gives the
    entries of is not enumerated again.
    """
    found: list[AcceleratorRequest] = []
    path: list[Any] = []
    walked = {} if walked is None else walked
    for key, value in walk_entries(obj, walked):
        if key != "status" and type(value) in _NODES:
            path.append(key)
            _scan(key, value, obj, path, found, walked, walked.get(id(value)))
            path.pop()
    return found


def _scan(
    key: Any,
    node: Any,
    parent: YMap,
    path: list[Any],
    found: list[AcceleratorRequest],
    walked: Walked,
    entries: Iterable[tuple[Any, Any]] | None,
) -> None:
    """Add the requests at and below `node` (the value of `key` in `parent`) to `found`.

    `entries` are the node's (key or index, value) entries when the walk has enumerated them
    already (see walk_entries). Every object of every input passes here: field paths are only
    built for a request.
    """
    in_mapping = type(node) is YMap
    if key not in _REQUEST_KEYS:  # most nodes: one set lookup
        pass
    elif in_mapping and key in _RESOURCE_KEYS:
        entries = _resource_requests(node, entries, parent, path, found, walked)
    elif in_mapping and key == "annotations":
        entries = _annotation_requests(node, entries, path, found)
    elif in_mapping and key == "gpu":
        _gpu_field_request(node, parent, path, found)
    elif in_mapping and key == "sparkConf":
        _spark_conf_requests(node, parent, path, found)
    elif in_mapping and key == "flinkConfiguration":
        _flink_conf_requests(node, path, found)
    elif in_mapping and key == "resource" and type(node.get("manifest")) is str:
        _embedded_requests(node, path, found)
    elif key == "parameters" and not in_mapping:
        _parameter_requests(node, path, found)
    elif key in _DEVICE_LISTS and not in_mapping:
        _device_name_requests(key, node, path, found)
    elif key == "resourceClaims" and not in_mapping and node:
        found.append(
            AcceleratorRequest(
                f"resource claim {_claim_name(node[0])}",
                field_path(path),
                parent.pos_of_key(key),
                (id(parent), id(node)),  # or the list itself, which a built pod may hold
                CLAIM,
            )
        )
    if entries is None:
        entries = node.items() if in_mapping else enumerate(node)
    for child_key, child in entries:
        if type(child) not in _NODES:
            continue
        ident = id(child)
        # Most nodes are not in `walked`: a membership test costs less than a lookup.
        seen = walked[ident] if ident in walked else None  # noqa: SIM401
        if seen is not TYPED:
            path.append(child_key)
            if in_mapping:
                _scan(child_key, child, node, path, found, walked, seen)
            else:  # an item is held by the mapping that holds its list
                _scan(None, child, parent, path, found, walked, seen)
            path.pop()


def _annotation_requests(
    annotations: YMap,
    entries: Iterable[tuple[Any, Any]] | None,
    path: list[Any],
    found: list[AcceleratorRequest],
) -> list[tuple[Any, Any]]:
    """Add the scheduler annotations that ask for an accelerator share to `found`; give the
    mapping and list entries to go on with (none in a valid object: annotations are text)."""
    branches = []
    for name, value in annotations.items() if entries is None else entries:
        if name in _ACCELERATOR_ANNOTATIONS:
            where = field_path(path)
            pos = annotations.pos_of_key(name)
            found.append(
                AcceleratorRequest(f"annotation {name}", where, pos, (id(annotations),), ANNOTATION)
            )
        if type(value) in _NODES:
            branches.append((name, value))
    return branches


def _resource_requests(
    resources: YMap,
    entries: Iterable[tuple[Any, Any]] | None,
    parent: YMap,
    path: list[Any],
    found: list[AcceleratorRequest],
    walked: Walked,
) -> list[tuple[Any, Any]]:
    """Add the accelerator requests of a `resources` block to `found`, those written directly
    before those under `requests` and `limits`; give the mapping and list entries to go on
    with. Each section is enumerated once: what the scan goes on with in it joins `walked`."""
    holders = (id(resources), id(parent))
    branches = []
    for name, value in resources.items() if entries is None else entries:
        # A mapping under `accelerator` is a KFP executor's (read below), no amount.
        if name == "accelerator" and type(value) is YMap:
            continue
        if isinstance(name, str) and looks_like_accelerator(name) and not _zero(value):
            pos = resources.pos_of_key(name)
            found.append(AcceleratorRequest(name, field_path(path), pos, holders))
        if type(value) in _NODES:
            branches.append((name, value))
    for section in SECTIONS:
        values = resources.get(section)
        if type(values) is not YMap:
            continue
        nested = []
        where = f"{field_path(path)}.{section}"
        for name, value in values.items():
            if name == _ITEM_GPU:  # no resource name: a resource item's amount, or nothing
                if type(value) not in _NODES and value not in (None, "") and not _zero(value):
                    pos = values.pos_of_key(name)
                    found.append(AcceleratorRequest(name, where, pos, holders, RESOURCE, _ITEM))
            elif isinstance(name, str) and looks_like_accelerator(name) and not _zero(value):
                found.append(AcceleratorRequest(name, where, values.pos_of_key(name), holders))
            elif name == _ITEM_CUSTOM and type(value) is YMap:
                _custom_requests(value, f"{where}.custom", holders, found)
            if type(value) in _NODES:
                nested.append((name, value))
        walked[id(values)] = tuple(nested)
    accelerator = resources.get("accelerator")
    if type(accelerator) is YMap:
        _kfp_accelerator_request(accelerator, resources, path, found)
    claims = resources.get("claims")
    # A claim is named by a DNS label; `name: nvidia.com/gpu` is a resource name written in
    # the wrong place (GPU004), not a DRA claim.
    if type(claims) is YSeq and any(_is_claim(item) for _, item in walk_entries(claims, walked)):
        found.append(
            AcceleratorRequest(
                f"resource claim {_claim_name(claims[0])}",
                f"{field_path(path)}.claims",
                resources.pos_of_key("claims"),
                holders,
                CLAIM,
            )
        )
    return branches


def _custom_requests(
    custom: YMap, where: str, holders: tuple[int, ...], found: list[AcceleratorRequest]
) -> None:
    """Add the accelerators of a resource item's `custom` mapping to `found` (see _ITEM)."""
    for name, value in custom.items():
        if isinstance(name, str) and looks_like_accelerator(name) and not _zero(value):
            found.append(
                AcceleratorRequest(name, where, custom.pos_of_key(name), holders, RESOURCE, _ITEM)
            )


def _zero(value: Any) -> bool:
    """Whether a resource amount is written as zero: it asks for nothing."""
    return (type(value) is int and value == 0) or value == "0"


def _gpu_field_request(
    gpu: YMap, parent: YMap, path: list[Any], found: list[AcceleratorRequest]
) -> None:
    """Add the request of an operator's `gpu: {name, quantity}` field to `found`: the Spark
    operator's `driver.gpu` and `executor.gpu`, which its pod webhook writes into the Spark
    container's limits when the quantity is positive (internal/webhook/sparkpod_defaulter.go
    addGPU)."""
    name = gpu.get("name")
    quantity = gpu.get("quantity")
    if not isinstance(name, str) or not looks_like_accelerator(name) or quantity is None:
        return
    if isinstance(quantity, int) and quantity <= 0:
        return
    holders = (id(gpu), id(parent))
    found.append(
        AcceleratorRequest(name, field_path(path), gpu.pos_of_key("name"), holders, OPERATOR_FIELD)
    )


def _device_name_requests(
    key: str, devices: YSeq, path: list[Any], found: list[AcceleratorRequest]
) -> None:
    """Add the device plugin resources a KubeVirt device list names to `found`: virt-controller
    gives the virt-launcher pod's compute container a request and a limit of 1 of each item's
    `deviceName` (pkg/virt-controller/services/renderresources.go WithGPUsDevicePlugins,
    WithHostDevicesDevicePlugins). An item with a `claimName` is a DRA claim instead, found
    with the object's `resourceClaims`."""
    for index, item in enumerate(devices):
        if type(item) is not YMap or item.get("claimName") is not None:
            continue
        name = item.get("deviceName")
        if not isinstance(name, str) or not name:
            continue
        if _DEVICE_LISTS[key] and not looks_like_accelerator(name):
            continue
        found.append(
            AcceleratorRequest(
                name,
                field_path([*path, index]),
                item.pos_of_key("deviceName"),
                (id(item), id(devices)),
                OPERATOR_FIELD,
            )
        )


def _spark_conf_requests(
    conf: YMap, parent: YMap, path: list[Any], found: list[AcceleratorRequest]
) -> None:
    """Add the requests of a Spark configuration to `found`: on Kubernetes, Spark gives its
    driver or executor pod the limit `<vendor>/<name>` for each
    `spark.{driver,executor}.resource.<name>.amount` whose `.vendor` is set (the Spark docs,
    "Resource Allocation and Configuration Overview", running-on-kubernetes). Each is held
    by the configuration and by the role beside it (a SparkApplication's `spec.driver` or
    `spec.executor`), whose pod gpulint builds with it (gpulint.operators)."""
    for key in conf:
        if not isinstance(key, str) or not key.endswith(".amount"):
            continue
        prefix = key[: -len("amount")]
        parts = prefix.split(".")
        if len(parts) != 5 or parts[0] != "spark" or parts[1] not in ("driver", "executor"):
            continue
        vendor = conf.get(prefix + "vendor")
        if not isinstance(vendor, str) or not vendor or _zero(conf[key]):
            continue
        name = f"{vendor}/{parts[3]}"
        if looks_like_accelerator(name):
            holders = (id(conf), id(parent.get(parts[1])))
            found.append(
                AcceleratorRequest(
                    name, field_path(path), conf.pos_of_key(key), holders, OPERATOR_FIELD
                )
            )


def _flink_conf_requests(conf: YMap, path: list[Any], found: list[AcceleratorRequest]) -> None:
    """Add the external resources of a Flink configuration (a FlinkDeployment's
    `flinkConfiguration`) to `found`: for each name listed in `external-resources` (separated
    by `;`) with an `external-resource.<name>.amount` and an
    `external-resource.<name>.kubernetes.config-key`, Flink adds the key to the requests and
    limits of its TaskManagers' main container (the Flink docs, "External Resource
    Framework"; flink-kubernetes KubernetesUtils.getResourceRequirements)."""
    listed = conf.get("external-resources")
    names = listed.split(";") if isinstance(listed, str) else listed
    if not isinstance(names, (list, YSeq)):
        return
    for name in names:
        name = name.strip() if isinstance(name, str) else ""
        key = f"external-resource.{name}.kubernetes.config-key"
        resource = conf.get(key)
        amount = conf.get(f"external-resource.{name}.amount")
        if not name or not isinstance(resource, str) or amount in (None, "") or _zero(amount):
            continue
        if looks_like_accelerator(resource.strip()):
            found.append(
                AcceleratorRequest(
                    resource.strip(),
                    field_path(path),
                    conf.pos_of_value(key),
                    (id(conf),),
                    OPERATOR_FIELD,
                    FLINK_TASK_MANAGERS,
                )
            )


def _embedded_requests(resource: YMap, path: list[Any], found: list[AcceleratorRequest]) -> None:
    """Add the requests of the object an Argo resource template creates at run time (its
    `manifest`, YAML text) to `found`, at the `manifest` key. Argo fills in its `{{...}}`
    parameters first; a manifest that does not parse is left to Argo."""
    text = re.sub(r"\{\{[^{}]*\}\}", "x", resource["manifest"])
    where = f"{field_path(path)}.manifest"
    pos = resource.pos_of_key("manifest")
    for document in parse(text).documents:
        if type(document.value) is YMap:
            found.extend(
                AcceleratorRequest(r.what, f"{where}: {r.field}", pos, (id(resource),), EMBEDDED)
                for r in accelerator_requests(document.value)
            )


def _kfp_accelerator_request(
    accelerator: YMap, resources: YMap, path: list[Any], found: list[AcceleratorRequest]
) -> None:
    """Add a Kubeflow Pipelines executor's accelerator to `found`: the pipeline IR's
    `container.resources.accelerator` (`resourceType` and `resourceCount`, or the older
    `type` and `count`), which the KFP driver turns into the limit `<type>: <count>` of the
    executor's pod (backend/src/v2/driver initPodSpecPatch)."""
    name = accelerator.get("resourceType", accelerator.get("type"))
    count = accelerator.get("resourceCount", accelerator.get("count"))
    if not isinstance(name, str) or not looks_like_accelerator(name) or _zero(count):
        return
    found.append(
        AcceleratorRequest(
            name,
            f"{field_path(path)}.accelerator",
            resources.pos_of_key("accelerator"),
            (id(accelerator), id(resources)),
            OPERATOR_FIELD,
            KFP_DRIVER,
        )
    )


def _parameter_requests(parameters: YSeq, path: list[Any], found: list[AcceleratorRequest]) -> None:
    """Add the requests in JSON text an Argo parameter holds to `found`, at its `value`: a
    workflow compiled by Kubeflow Pipelines v2 keeps each executor's container spec, its
    `resources.accelerator` included, as a JSON workflow parameter that its driver step reads
    at run time. Only text naming an `accelerator` is parsed (a substring test)."""
    for index, item in enumerate(parameters):
        if type(item) is not YMap:
            continue
        for key in ("value", "default"):
            text = item.get(key)
            if type(text) is not str or not text.startswith("{") or "accelerator" not in text:
                continue
            where = f"{field_path([*path, index])}.{key}"
            for document in parse(text).documents:
                if type(document.value) is YMap:
                    found.extend(
                        r._replace(field=f"{where}: {r.field}", pos=item.pos_of_key(key))
                        for r in accelerator_requests(document.value)
                        if r.runs_in == KFP_DRIVER
                    )


def _is_config_map(document: Document) -> bool:
    ref = document.ref
    return ref.kind == "ConfigMap" and api_group(ref.api_version) == ""


def _config_map_requests(obj: YMap) -> list[AcceleratorRequest]:
    """The accelerator requests of manifests a ConfigMap holds as text (`data` values): a pod
    template a controller reads at run time (the ClearML k8s glue's `template.yaml`), at the
    data key. Only a value naming `resources` and `limits` or `requests` is parsed (a substring
    test, linear in any text); a value that does not parse as YAML (a script, an INI file)
    holds none."""
    data = obj.get("data")
    if type(data) is not YMap:
        return []
    found: list[AcceleratorRequest] = []
    for key, text in data.items():
        if type(text) is not str or "resources" not in text:
            continue
        if "limits" not in text and "requests" not in text:
            continue
        pos = data.pos_of_key(key)
        where = f"data.{key}" if re.fullmatch(r"[A-Za-z_][\w.-]*", str(key)) else "data"
        runs_in = (
            f"that is in text the ConfigMap holds (`{shown(key)}`), which only the program "
            "reading it turns into pods"
        )
        for document in parse(text).documents:
            if type(document.value) is YMap:
                found.extend(
                    AcceleratorRequest(
                        r.what, f"{where}: {r.field}", pos, (id(data),), EMBEDDED, runs_in
                    )
                    for r in accelerator_requests(document.value)
                )
    return found


def _is_claim(item: Any) -> bool:
    return isinstance(item, YMap) and isinstance(item.get("name"), str) and "/" not in item["name"]


def _claim_name(item: Any) -> str:
    return shown(item.get("name")) if isinstance(item, YMap) else "?"


class CopiedLimits(NamedTuple):
    """A ResourceList an operator copies into the pods of other objects, kept under a key
    that is no `resources` (which the scan reads anywhere)."""

    path: tuple[str, ...]  # mapping keys from the object root; `[]` steps over a list's items
    runs_in: str  # who runs the pods that get it, as GPU007 says why it was not checked


# By (API group, kind). llmaz: an OpenModel's flavor `limits` become the requests and limits of
# the `model-runner` container of each Playground or Service claiming the model
# (api/core/v1alpha1/model_types.go Flavor; service_controller.go injectModelFlavor).
_COPIED_LIMITS = {
    ("llmaz.io", "OpenModel"): CopiedLimits(
        ("spec", "inferenceConfig", "flavors", "[]", "limits"),
        "llmaz gives them to the `model-runner` container of each Playground or Service that "
        "claims the model, and gpulint does not join a model to those pods",
    ),
}


def _copied_limits(obj: YMap, copied: CopiedLimits) -> list[AcceleratorRequest]:
    """The accelerator requests of the ResourceLists at `copied.path` in `obj`."""
    found: list[AcceleratorRequest] = []
    # (node, its holder, the field path to it) for each node reached so far
    level: list[tuple[Any, Any, list[Any]]] = [(obj, obj, [])]
    for step in copied.path:
        reached = []
        for node, _, path in level:
            if step == "[]" and type(node) is YSeq:
                reached.extend((item, node, [*path, i]) for i, item in enumerate(node))
            elif type(node) is YMap and step in node:
                reached.append((node[step], node, [*path, step]))
        level = reached
    for limits, holder, path in level:
        if type(limits) is not YMap:
            continue
        for name, value in limits.items():
            if isinstance(name, str) and looks_like_accelerator(name) and not _zero(value):
                found.append(
                    AcceleratorRequest(
                        name,
                        field_path(path),
                        limits.pos_of_key(name),
                        (id(limits), id(holder)),
                        OPERATOR_FIELD,
                        copied.runs_in,
                    )
                )
    return found


class Unchecked(NamedTuple):
    """An object with accelerator requests, or pods, that no pod template gpulint reads."""

    document: Document
    requests: tuple[AcceleratorRequest, ...]  # the unread requests, in document order
    unread: tuple[UnreadPart, ...] = ()  # the workload's parts gpulint could not read

    @property
    def requests_accelerators(self) -> bool:
        """Whether what is not checked asks for accelerators (as far as gpulint can tell)."""
        return bool(self.requests) or any(part.accelerators for part in self.unread)


# Kinds that run no pods and hold no resource requests: not walked (a
# CustomResourceDefinition's schema is the largest object of many charts).
_NO_REQUESTS = {
    "": frozenset({"ConfigMap", "Secret", "Service", "ServiceAccount", "Namespace", "Endpoints"}),
    "apiextensions.k8s.io": frozenset({"CustomResourceDefinition"}),
    "rbac.authorization.k8s.io": frozenset(
        {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    ),
    "networking.k8s.io": frozenset({"Ingress", "NetworkPolicy", "IngressClass"}),
    "autoscaling": frozenset({"HorizontalPodAutoscaler"}),
    "policy": frozenset({"PodDisruptionBudget"}),
    # KAI Scheduler's queue: `spec.resources.gpu` is its GPU quota, no pod's request.
    "scheduling.run.ai": frozenset({"Queue"}),
    # Koordinator's Device: koordlet's inventory of a node's devices, each with the
    # `resources` it has (apis/scheduling/v1alpha1/device_types.go), no pod's request.
    "scheduling.koordinator.sh": frozenset({"Device"}),
}


def holds_no_requests(document: Document) -> bool:
    """Whether the document is of a kind that runs no pods and holds no resource requests."""
    ref = document.ref
    return ref.kind in _NO_REQUESTS.get(api_group(ref.api_version), ())


# API groups whose objects run pods their operator builds from fields that are no pod spec, by
# who runs them (as GPU007 says why a request was not checked): every request in such an object
# goes to pods gpulint does not build, and no `workloads:` entry could point at them. KubeVirt
# renders one virt-launcher pod per VirtualMachineInstance: its `domain.resources`, its device
# lists' device plugin resources and its `resourceClaims` become the compute container's
# (pkg/virt-controller/services/template.go, renderresources.go). A VirtualMachine, a
# VirtualMachineInstanceReplicaSet or a VirtualMachinePool makes such instances from its
# template; an instancetype's devices join those of each machine that names it.
_LAUNCHER = "the virt-launcher pod it runs for each virtual machine instance"
_BUILT_PODS = {
    "kubevirt.io": f"KubeVirt gives them to {_LAUNCHER}, which gpulint does not build",
    "pool.kubevirt.io": f"KubeVirt gives them to {_LAUNCHER}, which gpulint does not build",
    "instancetype.kubevirt.io": (
        f"KubeVirt gives them to {_LAUNCHER} of a machine that names this instancetype, which "
        "gpulint does not build"
    ),
    # Tekton (tektoncd/pipeline pkg/pod/pod.go): a TaskRun's pod has one container per step
    # and sidecar of its Task, with the TaskRun's `computeResources`, `stepSpecs` and
    # `podTemplate` applied; a Task or Pipeline runs none itself.
    "tekton.dev": (
        "Tekton builds a pod of the Task's steps and sidecars for each TaskRun, which gpulint "
        "does not build"
    ),
    # The Azure Machine Learning extension's InstanceType: the resources and node selector it
    # gives the pods of the training jobs and online deployments that select it.
    "amlarc.azureml.com": (
        "the Azure Machine Learning extension gives them to the pods of the jobs and "
        "deployments that select this instance type, which gpulint does not build"
    ),
}


# Objects of files that are no Kubernetes manifests (gpulint.loader), by the kind gpulint gives
# them, whose pods a program builds from fields that are no pod spec.
_BUILT_BY_KIND = {
    POLYAXON_FILE: (
        "the Polyaxon agent builds the run's pods when `polyaxon run` submits it, which "
        "gpulint does not build"
    ),
}


# Pod spec fields the placement rules read whose API schema holds no resources, claims or
# annotations: in a pod template gpulint reads, they are not walked for requests.
_PLACEMENT_FIELDS = ("affinity", "tolerations")


def unchecked(
    document: Document, workload: Workload | None, walked: Walked | None = None
) -> Unchecked | None:
    """What of the object no pod template of `workload` reads, or None when it is all read.

    `walked` is what the typing walk did (read_workload): the scan goes on from there instead
    of enumerating those mappings and lists again.
    """
    if workload is None and holds_no_requests(document):
        if _is_config_map(document):
            embedded = _config_map_requests(document.obj)
            return Unchecked(document, tuple(embedded)) if embedded else None
        return None
    walked = {} if walked is None else walked
    read: set[int] = set()
    # What the pods gpulint built hold in another shape (a Spark role's `gpu` field): the
    # operator's fields they were built from are read too.
    built: set[int] = set()
    for template in workload.templates if workload is not None else ():
        if isinstance(template.spec, BuiltMap):
            built.update(template.spec.read_from)
        read.add(id(template.spec))
        read.add(id(template.role_node))  # a pod spec an operator completes (KServe)
        # Claims a built pod takes from elsewhere in the object (an Argo workflow's own).
        read.add(id(template.spec.get("resourceClaims")))
        read.add(id(template.annotations))
        # A typed container's requests are its `resources`, which the pod template reads: the
        # scan skips its mapping (the bulk of a workload: env, probes, mounts).
        for container in template.containers:
            read.add(id(container.resources.node))
            walked[id(container.node)] = TYPED
        for field in _PLACEMENT_FIELDS:
            walked[id(template.spec.get(field))] = TYPED
    unread = workload.unread if workload is not None else ()
    read.update(id(part.explains) for part in unread if part.explains is not None)
    found = accelerator_requests(document.obj, walked)
    copied = _COPIED_LIMITS.get((api_group(document.ref.api_version), document.ref.kind))
    if copied is not None:
        found = sorted([*found, *_copied_limits(document.obj, copied)], key=lambda r: r.pos)
    read |= built
    requests = tuple(
        r
        for r in found
        if (r.form not in CHECKED_FORMS or read.isdisjoint(r.holders))
        and (r.form != OPERATOR_FIELD or built.isdisjoint(r.holders))
    )
    builds = None
    if workload is None:
        ref = document.ref
        builds = _BUILT_PODS.get(api_group(ref.api_version)) or (
            None if ref.api_version else _BUILT_BY_KIND.get(ref.kind)
        )
    if builds is not None:
        requests = tuple(r if r.runs_in else r._replace(runs_in=builds) for r in requests)
    elif workload is not None:
        # An operator's field in a workload gpulint reads, in none of the pods it builds (a
        # Spark driver's `gpu` in client mode, where spark-submit runs the driver itself).
        held = f"no pod gpulint builds for kind {document.ref.kind} holds it"
        requests = tuple(
            r._replace(runs_in=held) if r.form == OPERATOR_FIELD and not r.runs_in else r
            for r in requests
        )
    if not requests and not unread:
        return None
    return Unchecked(document, requests, unread)
