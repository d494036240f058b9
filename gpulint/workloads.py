"""The one place that knows where each workload kind keeps its pod template(s) and replicas.

Kinds are data (`WorkloadShape`), so a custom resource is added by adding a shape (users do so
with `workloads:` in the config). A shape lists its roles: each role is a dotted path from the
object root to the mapping that declares it, where `*` steps over every value of a mapping (the
key names the role, as in `spec.pytorchReplicaSpecs.*`) and `name[]` over every item of a list
(a field of the item names the role, as `groupName` in `spec.workerGroupSpecs[]`). From the
role's mapping, `template` leads to the pod template and `counts` are the fields whose product
is the number of pods the role runs.
"""

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from gpulint.accelerators import looks_like_accelerator
from gpulint.data.accelerators import ANNOTATIONS as ACCELERATOR_ANNOTATIONS
from gpulint.fields import mapping_at, shown, wrong_type
from gpulint.model import (
    Container,
    ContainerRole,
    Document,
    PodTemplate,
    Quantity,
    ReplicaCount,
    Resources,
    RolePart,
    UnreadPart,
    Workload,
)
from gpulint.quantity import parse_quantity
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq, last_line, parse


class Count(NamedTuple):
    """A field that multiplies a role's pod count."""

    path: str  # dotted, from the role's mapping; a leading `/` starts at the object root
    default: int = 1
    less: int = 0  # subtracted from the value (LeaderWorkerSet `size` counts the leader) ...
    less_if: str | None = None  # ... only when this field of the role's mapping is present
    # Fields whose larger value is the peak (an autoscaler's `maxReplicas` beside the
    # `minReplicas` a service starts with), from the same mapping as `path`.
    peaks: tuple[str, ...] = ()
    per: str | None = None  # the value is divided by this field's (data / dataLocal)
    text: bool = False  # written as a string of digits (Knative's scale annotations)


class ContainerField(NamedTuple):
    """Where a pod spec keeps containers of one kind."""

    path: str  # from the pod spec; "" is the spec itself (a TrainJob trainer)
    role: ContainerRole
    single: bool = False  # one container mapping rather than a list (Argo `container:`)
    resources: str = "resources"
    name: str = "main"  # the name of a single container that writes none
    own_fields: tuple[str, ...] = ()  # fields its API has beside a Kubernetes container's


POD_CONTAINERS: tuple[ContainerField, ...] = (
    ContainerField("containers", ContainerRole.APP),
    ContainerField("initContainers", ContainerRole.INIT),
    ContainerField("ephemeralContainers", ContainerRole.EPHEMERAL),
)
# An Argo Workflow template is both the pod's spec and its container's home.
ARGO_CONTAINERS: tuple[ContainerField, ...] = (
    ContainerField("container", ContainerRole.APP, single=True),
    # A script template is a container whose program is its `source`.
    ContainerField("script", ContainerRole.APP, single=True, own_fields=("source",)),
    ContainerField("containerSet.containers", ContainerRole.APP),
    ContainerField("initContainers", ContainerRole.INIT),
    ContainerField("sidecars", ContainerRole.APP),
)


class Role(NamedTuple):
    """One group of identical pods of a workload: its template and how many pods it runs."""

    path: str  # from the object root to the role's mapping ("" is the object itself)
    template: str = "template"  # from the role's mapping to the mapping holding `spec`
    spec: str = "spec"  # from the template to the pod spec ("" : the template is the spec)
    counts: tuple[Count, ...] | None = (Count("replicas"),)  # None: one pod per node; (): one
    name: str | None = None  # a fixed role name (`head`, or `{} worker` around the found
    # one); else the `*` key, or for `[]` the item's `name` (`groupName` for Ray)
    gang_min: str | None = None  # field of the role's mapping: fewest pods a gang needs
    gang_min_if: str | None = None  # object path that must be true for `gang_min` to count
    containers: tuple[ContainerField, ...] = POD_CONTAINERS
    # The pod spec an operator generates from higher-level fields of the role's mapping (a
    # resource profile, an instance type), every value positioned at the field that decided
    # it; None: the pod spec is written in the manifest.
    # (object, role's mapping) -> the pod spec; None: no pod; UnreadPart: one gpulint cannot build
    derive: Callable[[YMap, YMap], YMap | UnreadPart | None] | None = None
    runs: bool = True  # False: a template other objects use (a serving runtime); no pods
    optional: bool = False  # a declared role that an object may leave out
    generated: bool = False  # `derive` builds the pod from fields that are no pod's (KAITO)
    # The operator adds cpu/memory requests the manifest leaves out (or writes the pod itself).
    operator_resources: bool = False


class WorkloadShape(NamedTuple):
    """Where a kind keeps its pod templates and how many pods it runs."""

    kind: str
    api_versions: tuple[str, ...]  # globs over apiVersion: `apps/*`, `v1`
    roles: tuple[Role, ...]
    gang: bool = False  # all pods must run at once before any does useful work
    gang_min: str | None = None  # object path: fewest pods of all roles together
    declared: bool = False  # from the config's `workloads:`: a path that finds nothing is told


def _kubeflow(kind: str, specs: str, *groups: str) -> WorkloadShape:
    return WorkloadShape(
        kind,
        tuple(f"{g}/*" for g in groups or ("kubeflow.org",)),
        (Role(f"spec.{specs}.*"),),
        gang=True,
        gang_min="spec.runPolicy.schedulingPolicy.minAvailable",
    )


def _ray(kind: str, cluster: str, *extra: Role) -> WorkloadShape:
    """A KubeRay kind whose cluster spec sits at `cluster` (`spec` for a RayCluster)."""
    return WorkloadShape(
        kind,
        ("ray.io/*",),
        (
            Role(f"{cluster}.headGroupSpec", counts=(), name="head"),
            Role(
                f"{cluster}.workerGroupSpecs[]",
                counts=(Count("replicas", default=0), Count("numOfHosts")),
                gang_min="minReplicas",
                gang_min_if=f"{cluster}.enableInTreeAutoscaling",
            ),
            *extra,
        ),
        gang=True,
    )


def _argo_workflow(kind: str, spec: str) -> WorkloadShape:
    return WorkloadShape(
        kind,
        ("argoproj.io/*",),
        (
            Role(
                f"{spec}.templates[]",
                template="",
                spec="",
                counts=(),
                containers=ARGO_CONTAINERS,
                derive=functools.partial(argo_pod, spec),
            ),
        ),
    )


# Pod fields an Argo workflow's spec gives every template that sets none of its own, as
# (workflow field, pod field): workflow/controller/workflowpod.go (addSchedulingConstraints,
# and resourceClaims beside it).
_ARGO_DEFAULTS = (
    ("nodeSelector", "nodeSelector"),
    ("affinity", "affinity"),
    ("tolerations", "tolerations"),
    ("schedulerName", "schedulerName"),
    ("podPriorityClassName", "priorityClassName"),
    ("resourceClaims", "resourceClaims"),
)


def argo_pod(spec_path: str, obj: YMap, template: YMap) -> YMap:
    """The pod an Argo template runs: the template as written, with the workflow's own
    `nodeSelector`, `affinity`, `tolerations`, `schedulerName`, `podPriorityClassName` and
    `resourceClaims` where the template sets none (an empty one is none)."""
    workflow = _at(obj, spec_path)
    if type(workflow) is not YMap:
        return template
    defaults = [
        (key, field)
        for key, field in _ARGO_DEFAULTS
        if workflow.get(key) and not template.get(field)
    ]
    if not defaults:
        return template
    pod = YMap(template.pos)
    pod.update(template)
    pod.spans.update(template.spans)
    for key, field in defaults:
        pod[field] = workflow[key]
        pod.spans[field] = workflow.spans[key]
    return pod


# KServe components are pod specs with extra fields: a predictor's model-format field
# (`model`, `pytorch`, ...) is one more container, the one the serving runtime's container is
# merged with (https://github.com/kserve/kserve pkg/apis/serving/v1beta1/predictor.go).
KSERVE_FORMATS = (
    "model",
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)
_KSERVE_CONTAINER = "kserve-container"
KSERVE_PREDICTOR_CONTAINERS: tuple[ContainerField, ...] = (
    *POD_CONTAINERS,
    *(ContainerField(f, ContainerRole.APP, True, name=_KSERVE_CONTAINER) for f in KSERVE_FORMATS),
)
KSERVE_EXPLAINER_CONTAINERS: tuple[ContainerField, ...] = (
    *POD_CONTAINERS,
    *(ContainerField(f, ContainerRole.APP, True, name=_KSERVE_CONTAINER) for f in ("art", "alibi")),
)
# A component runs minReplicas pods (1 by default) and up to maxReplicas under autoscaling.
_KSERVE_REPLICAS = (Count("minReplicas", peaks=("maxReplicas",)),)


def _kserve_component(name: str, containers: tuple[ContainerField, ...]) -> Role:
    return Role(
        f"spec.{name}",
        template="",
        spec="",
        counts=_KSERVE_REPLICAS,
        name=name,
        containers=containers,
        operator_resources=True,
        derive=kserve_component,
    )


_GKE_ACCELERATOR = "serving.kserve.io/gke-accelerator"


def kserve_component(obj: YMap, component: YMap) -> YMap:
    """A KServe component's pod spec: as written, plus the node selector KServe's pod webhook
    adds (pkg/webhook/admission/pod/accelerator_injector.go) when the InferenceService is
    annotated `serving.kserve.io/gke-accelerator` and a container limits `nvidia.com/gpu`."""
    for notes in (mapping_at(obj, "metadata", "annotations"), component.get("annotations")):
        if isinstance(notes, YMap) and notes.get(_GKE_ACCELERATOR):
            break
    else:
        return component
    if not any(
        "nvidia.com/gpu" in mapping_at(container, "resources", "limits")
        for container in _component_containers(component)
    ):
        return component
    pos = notes.pos_of_value(_GKE_ACCELERATOR)
    written = component.get("nodeSelector")
    selector = YMap(written.pos if isinstance(written, YMap) else pos)
    if isinstance(written, YMap):
        selector.update(written)
        selector.spans.update(written.spans)
    selector["cloud.google.com/gke-accelerator"] = str(notes[_GKE_ACCELERATOR])
    selector.spans["cloud.google.com/gke-accelerator"] = (*pos, *pos)
    pod = YMap(component.pos)
    pod.update(component)
    pod.spans.update(component.spans)
    pod["nodeSelector"] = selector
    pod.spans.setdefault("nodeSelector", (*pos, *pos))
    return pod


def _component_containers(component: YMap) -> Iterator[YMap]:
    containers = component.get("containers")
    if isinstance(containers, YSeq):
        yield from (c for c in containers if isinstance(c, YMap))
    for name in (*KSERVE_FORMATS, "art", "alibi"):
        if isinstance(component.get(name), YMap):
            yield component[name]


def _kserve_workers(path: str, runs: bool = True) -> Role:
    """A multi-node predictor's workers: `pipelineParallelSize` nodes, the head among them."""
    return Role(
        f"{path}.workerSpec",
        template="",
        spec="",
        counts=(Count("pipelineParallelSize", less=1),),
        name="worker",
        runs=runs,
        operator_resources=True,
    )


def _serving_runtime(kind: str) -> WorkloadShape:
    # A template the InferenceServices that select it run; it runs no pod of its own.
    return WorkloadShape(
        kind,
        ("serving.kserve.io/*",),
        (
            Role("spec", template="", spec="", runs=False, operator_resources=True),
            _kserve_workers("spec", runs=False),
        ),
    )


def _llm_role(path: str, name: str) -> tuple[Role, Role]:
    """An LLMInferenceService workload (`spec` or `spec.prefill`): `template` runs `replicas`
    pods; with a `worker` spec each replica is a LeaderWorkerSet group of `size` pods, size
    being `parallelism.data` / `dataLocal`, or `parallelism.pipeline`."""
    replicas = Count("replicas", peaks=("scaling.minReplicas", "scaling.maxReplicas"))
    size = Count(
        "parallelism.data", per="parallelism.dataLocal", peaks=("parallelism.pipeline",), less=1
    )
    return (
        Role(path, "template", "", (replicas,), name, operator_resources=True),
        Role(path, "worker", "", (replicas, size), f"{name} worker", operator_resources=True),
    )


# Knative scale annotations on the revision template (knative/serving
# pkg/apis/autoscaling/register.go): a revision starts with initial-scale pods (1 by default),
# keeps min-scale and grows to max-scale.
_KNATIVE_SCALE = "template.metadata.annotations"
_KNATIVE_REPLICAS = (
    Count(
        f'{_KNATIVE_SCALE}["autoscaling.knative.dev/initial-scale"]',
        peaks=tuple(
            f'{_KNATIVE_SCALE}["autoscaling.knative.dev/{key}"]'
            for key in ("initialScale", "min-scale", "minScale", "max-scale", "maxScale")
        ),
        text=True,
    ),
)


def _training_runtime(kind: str) -> WorkloadShape:
    # Kubeflow Trainer runtimes hold the JobSet template TrainJobs run; none of their own.
    return WorkloadShape(
        kind,
        ("trainer.kubeflow.org/*",),
        (
            Role(
                "spec.template.spec.replicatedJobs[]",
                template="template.spec.template",
                runs=False,
            ),
        ),
    )


def nim_pod(obj: YMap, spec: YMap) -> YMap:
    """A NIMService spec as the pod the NIM Operator runs: its placement fields as written, and
    one container, `nim`, with the spec's `resources` (not pod-level resources)."""
    pod = YMap(spec.pos)
    for key, value in spec.items():
        if key != "resources":
            pod[key] = value
            pod.spans[key] = spec.spans[key]
    container = YMap(spec.pos)
    container["name"] = "nim"
    container.spans["name"] = (*spec.pos, *spec.pos)
    if "resources" in spec:
        container["resources"] = spec["resources"]
        container.spans["resources"] = spec.spans["resources"]
    containers = YSeq(spec.pos)
    containers.append(container)
    containers.item_pos.append(spec.pos)
    pod["containers"] = containers
    pod.spans["containers"] = (*spec.pos, *spec.pos)
    return pod


def nim_service_pod(obj: YMap, service: YMap) -> YMap | None:
    """The pod of one NIMPipeline service: its `spec` as a NIMService's."""
    spec = service.get("spec")
    return nim_pod(obj, spec) if isinstance(spec, YMap) else None


# NIMService (apps.nvidia.com): the spec is both the pod's placement and its container.
_NIM_REPLICAS = (Count("replicas", peaks=("scale.hpa.minReplicas", "scale.hpa.maxReplicas")),)


def _synthetic(value: Any, pos: Pos) -> Any:
    """A tree of YMap/YSeq holding `value`, every key, item and value positioned at `pos`."""
    if isinstance(value, dict):
        node = YMap(pos)
        for key, item in value.items():
            node[key] = _synthetic(item, pos)
            node.spans[key] = (*pos, *pos)
        return node
    if isinstance(value, (list, tuple)):
        items = YSeq(pos)
        for item in value:
            items.append(_synthetic(item, pos))
            items.item_pos.append(pos)
        return items
    return value


# KAITO (kaito.sh) runs a preset model on every GPU of the instance type it provisions
# (kaito-project/kaito pkg/sku: GPUCount per SKU; pkg/workspace/inference/preset_inferences.go:
# requests and limits `nvidia.com/gpu: <GPUCount>`, tolerations below). NVIDIA SKUs only.
KAITO_GPUS: dict[str, int] = {
    "Standard_NV36ads_A10_v5": 1,
    "Standard_NV72ads_A10_v5": 2,
    "Standard_NC24ads_A100_v4": 1,
    "Standard_NC48ads_A100_v4": 2,
    "Standard_NC96ads_A100_v4": 4,
    "Standard_ND96asr_A100_v4": 8,
    "Standard_ND96amsr_A100_v4": 8,
    "Standard_NC40ads_H100_v5": 1,
    "Standard_NC80adis_H100_v5": 2,
    "Standard_ND96isr_H100_v5": 8,
    "Standard_NCC40ads_H100_v5": 1,
    "Standard_ND96isr_H200_v5": 8,
    "p4d.24xlarge": 8,
    "p4de.24xlarge": 8,
    "p5.48xlarge": 8,
    "p5e.48xlarge": 8,
    "p5en.48xlarge": 8,
    **dict.fromkeys(("g6.xlarge", "g6.2xlarge", "g6.4xlarge", "g6.8xlarge", "g6.16xlarge"), 1),
    **{"gr6.4xlarge": 1, "gr6.8xlarge": 1, "g6.12xlarge": 4, "g6.24xlarge": 4, "g6.48xlarge": 8},
    **dict.fromkeys(("g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge", "g5.16xlarge"), 1),
    **{"g5.12xlarge": 4, "g5.24xlarge": 4, "g5.48xlarge": 8},
}
_KAITO_TOLERATIONS = (
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
)


def kaito_pod(obj: YMap, resource: YMap) -> YMap | UnreadPart | None:
    """The pod KAITO runs for a preset: every GPU of `resource.instanceType`.

    None when the workspace has a custom `inference.template` (read as written); UnreadPart for
    an instance type not in KAITO_GPUS, a MIG partition, or nodes brought without one.
    """
    inference = obj.get("inference")
    if isinstance(inference, YMap) and "template" in inference:
        return None
    instance = resource.get("instanceType")
    pos = resource.pos_of_value("instanceType") if instance else resource.pos
    if resource.get("partition") is not None:
        return UnreadPart("its GPUs are partitioned (`resource.partition`)", pos)
    gpus = KAITO_GPUS.get(str(instance))
    if gpus is None:
        what = f"instance type `{shown(instance)}`" if instance else "no `resource.instanceType`"
        return UnreadPart(f"how many GPUs its pods take depends on {what}", pos)
    limits = {"nvidia.com/gpu": gpus}
    container = {"name": "inference", "resources": {"requests": limits, "limits": limits}}
    spec = {"containers": [container], "tolerations": list(_KAITO_TOLERATIONS)}
    return _synthetic(spec, pos)


def kaito_template(obj: YMap, inference: YMap) -> YMap | None:
    """A custom `inference.template`'s pod spec as KAITO runs it: with its GPU tolerations
    added (pkg/workspace/inference/template_inference.go), everything else as written."""
    template = inference.get("template")
    spec = template.get("spec") if isinstance(template, YMap) else None
    if not isinstance(spec, YMap):
        return None
    pod = YMap(spec.pos)
    pod.update(spec)
    pod.spans.update(spec.spans)
    written = spec.get("tolerations")
    tolerations = YSeq(written.pos if isinstance(written, YSeq) else spec.pos)
    if isinstance(written, YSeq):
        tolerations.extend(written)
        tolerations.item_pos.extend(written.item_pos)
    added = _synthetic(list(_KAITO_TOLERATIONS), template.pos_of_key("spec"))
    tolerations.extend(added)
    tolerations.item_pos.extend(added.item_pos)
    pod["tolerations"] = tolerations
    if "tolerations" not in pod.spans:
        pod.spans["tolerations"] = (*spec.pos, *spec.pos)
    return pod


# KubeAI (kubeai.org) resource profiles as its chart ships them (substratusai/kubeai
# charts/kubeai/values.yaml `resourceProfiles`); `name:N` multiplies requests and limits by N
# (internal/modelcontroller/model_controller.go). A cluster's own values may differ.
_PRESENT = "present"
KUBEAI_PROFILES: dict[str, tuple[str | None, dict[str, str]]] = {
    # profile -> (accelerator resource, extra requests of one unit)
    "cpu": (None, {"cpu": "1", "memory": "2Gi"}),
    "nvidia-gpu-t4": ("nvidia.com/gpu", {}),
    "nvidia-gpu-l4": ("nvidia.com/gpu", {"cpu": "6", "memory": "24Gi"}),
    "nvidia-gpu-l40s": ("nvidia.com/gpu", {"cpu": "6", "memory": "24Gi"}),
    "nvidia-gpu-h100": ("nvidia.com/gpu", {}),
    "nvidia-gpu-gh200": ("nvidia.com/gpu", {}),
    "nvidia-gpu-a100-80gb": ("nvidia.com/gpu", {}),
    "nvidia-gpu-a100-40gb": ("nvidia.com/gpu", {}),
    "nvidia-gpu-a16": ("nvidia.com/gpu", {}),
    "nvidia-gpu-rtx4070-8gb": ("nvidia.com/gpu", {}),
    "amd-gpu-mi300x": ("amd.com/gpu", {}),
}
# Profiles whose GPUs are requested too (the others set only limits, which the API copies).
_KUBEAI_REQUESTS = frozenset(
    {"nvidia-gpu-t4", "nvidia-gpu-l4", "nvidia-gpu-l40s", "nvidia-gpu-gh200"}
)
_KUBEAI_UNTOLERATED = frozenset({"nvidia-gpu-t4"})


def kubeai_pod(obj: YMap, spec: YMap) -> YMap | UnreadPart | None:
    """The pod KubeAI runs for `spec.resourceProfile` (`nvidia-gpu-l4:2`); UnreadPart when the
    profile is not one of the chart's."""
    written = spec.get("resourceProfile")
    name, _, multiple = str(written or "").partition(":")
    if name not in KUBEAI_PROFILES or not multiple.isdigit():
        return UnreadPart(
            f"resource profile `{shown(written)}` is not one of KubeAI's defaults",
            spec.pos_of_value("resourceProfile"),
        )
    resource, extra = KUBEAI_PROFILES[name]
    count = int(multiple)
    limits = {resource: str(count)} if resource else {}
    requests = {k: _times(v, count) for k, v in extra.items()}
    if resource and name in _KUBEAI_REQUESTS:
        requests[resource] = str(count)
    pod: dict[str, Any] = {
        "containers": [{"name": "server", "resources": {"requests": requests, "limits": limits}}]
    }
    if resource and name not in _KUBEAI_UNTOLERATED:
        toleration = {"key": resource, "operator": "Equal", "value": _PRESENT}
        pod["tolerations"] = [{**toleration, "effect": "NoSchedule"}]
    if isinstance(spec.get("priorityClassName"), str):
        pod["priorityClassName"] = spec["priorityClassName"]
    return _synthetic(pod, spec.pos_of_value("resourceProfile"))


# NVIDIA Dynamo (nvidia.com) DynamoGraphDeployment v1alpha1: each `spec.services.<name>` runs
# `replicas` × `multinode.nodeCount` pods of `extraPodSpec` (a pod spec) whose `mainContainer`
# is the first container. The service's `resources` override the main container's per key
# (ai-dynamo/dynamo deploy/operator/internal/dynamo/graph.go), written in Dynamo's own shape:
# `gpu` becomes `gpuType`, `nvidia.com/gpu` by default, and `custom` holds any other
# resource (internal/controller_common/resource.go GetResourcesConfig).
_DYNAMO_GPU = "nvidia.com/gpu"


def dynamo_service_pod(obj: YMap, service: YMap) -> YMap:
    """The pod one DynamoGraphDeployment v1alpha1 service runs: `extraPodSpec` with its
    `mainContainer` first, and the service's `resources` in Kubernetes' names."""
    extra = service.get("extraPodSpec")
    extra = extra if isinstance(extra, YMap) else YMap(service.pos)
    pod = YMap(extra.pos)
    for key, value in extra.items():
        if key not in ("mainContainer", "containers"):
            pod[key] = value
            pod.spans[key] = extra.spans[key]
    written = extra.get("mainContainer")
    main = YMap(written.pos if isinstance(written, YMap) else service.pos)
    if isinstance(written, YMap):
        main.update(written)
        main.spans.update(written.spans)
    main.setdefault("name", "main")
    main.spans.setdefault("name", (*main.pos, *main.pos))
    resources = service.get("resources")
    if isinstance(resources, YMap):
        main["resources"] = _dynamo_resources(main.get("resources"), resources)
        main.spans["resources"] = service.spans["resources"]
    containers = YSeq(main.pos)
    containers.append(main)
    containers.item_pos.append(main.pos)
    others = extra.get("containers")
    if isinstance(others, YSeq):
        containers.extend(others)
        containers.item_pos.extend(others.item_pos)
    pod["containers"] = containers
    pod.spans["containers"] = (*main.pos, *main.pos)
    return pod


def _dynamo_resources(container: Any, service: YMap) -> YMap:
    """A container's `resources` with a Dynamo service's written over them, key by key."""
    merged = YMap(service.pos)
    for section in ("requests", "limits"):
        below = container.get(section) if isinstance(container, YMap) else None
        items = YMap(below.pos if isinstance(below, YMap) else service.pos)
        if isinstance(below, YMap):
            items.update(below)
            items.spans.update(below.spans)
        written = service.get(section)
        if isinstance(written, YMap):
            for key, value in written.items():
                if key == "gpu":
                    # A finding about the resource's name points at `gpuType` when written.
                    kind = str(written.get("gpuType") or _DYNAMO_GPU)
                    name_pos = written.pos_of_value("gpuType") if "gpuType" in written else None
                    items[kind] = value
                    items.spans[kind] = (
                        *(name_pos or written.pos_of_key(key)),
                        *written.pos_of_value(key),
                    )
                elif key == "custom" and isinstance(value, YMap):
                    items.update(value)
                    items.spans.update(value.spans)
                elif key != "gpuType":
                    items[key] = value
                    items.spans[key] = written.spans[key]
        if items:
            merged[section] = items
            merged.spans[section] = service.spans.get(section, (*service.pos, *service.pos))
    claims = service.get("claims")
    if claims is not None:
        merged["claims"] = claims
        merged.spans["claims"] = service.spans["claims"]
    return merged


def dynamo_component_pod(obj: YMap, component: YMap) -> YMap | None:
    """The pod one DynamoGraphDeployment v1beta1 component runs: `podTemplate.spec`, with its
    `device` (resources on the first container, tolerations, node selector) applied as the
    operator does (internal/dynamo/device.go applyDeviceSpec)."""
    spec = mapping_at(component, "podTemplate", "spec")
    device = component.get("device")
    if not spec or not isinstance(device, YMap):
        return spec or None
    pod = YMap(spec.pos)
    pod.update(spec)
    pod.spans.update(spec.spans)
    tolerations = device.get("tolerations")
    if isinstance(tolerations, YSeq) and tolerations:
        joined = YSeq(tolerations.pos)
        for source in (spec.get("tolerations"), tolerations):
            if isinstance(source, YSeq):
                joined.extend(source)
                joined.item_pos.extend(source.item_pos)
        pod["tolerations"] = joined
        pod.spans["tolerations"] = spec.spans.get("tolerations", device.spans["tolerations"])
    selector = device.get("nodeSelector")
    if isinstance(selector, YMap) and selector:
        both = YMap(selector.pos)
        for source in (selector, spec.get("nodeSelector")):  # the pod's own value wins
            if isinstance(source, YMap):
                both.update(source)
                both.spans.update(source.spans)
        pod["nodeSelector"] = both
        pod.spans["nodeSelector"] = spec.spans.get("nodeSelector", device.spans["nodeSelector"])
    amounts = device.get("resources")
    containers = spec.get("containers")
    if isinstance(amounts, YMap) and amounts and isinstance(containers, YSeq) and containers:
        first = containers[0]
        if isinstance(first, YMap):
            main = YMap(first.pos)
            main.update(first)
            main.spans.update(first.spans)
            resources = YMap(device.pos_of_key("resources"))
            for section in ("requests", "limits"):
                below = mapping_at(first, "resources", section)
                items = YMap(below.pos if below else amounts.pos)
                items.update(below)
                items.spans.update(below.spans)
                items.update(amounts)  # the device's amounts win, requests equal to limits
                items.spans.update(amounts.spans)
                resources[section] = items
                resources.spans[section] = (*amounts.pos, *amounts.pos)
            main["resources"] = resources
            main.spans["resources"] = device.spans["resources"]
            copied = YSeq(containers.pos)
            copied.append(main)
            copied.extend(containers[1:])
            copied.item_pos.extend(containers.item_pos)
            pod["containers"] = copied
    return pod


_DYNAMO_COUNTS = (Count("replicas"), Count("multinode.nodeCount"))


def _times(quantity: str, count: int) -> str:
    number = "".join(c for c in quantity if c.isdigit())
    return f"{int(number) * count}{quantity[len(number) :]}"


_DISAGG_SLICES = Count("/spec.slices")
_KATIB_TRIAL = "spec.trialTemplate.trialSpec"
_KATIB_TRIALS = Count("/spec.parallelTrialCount", default=3)
_SPEC_REPLICAS = (Count("replicas"),)
_PARALLELISM = (Count("parallelism"),)

BUILTIN_SHAPES: tuple[WorkloadShape, ...] = (
    WorkloadShape("Pod", ("v1",), (Role("", template="", counts=()),)),
    WorkloadShape("Deployment", ("apps/*", "extensions/*"), (Role("spec"),)),
    WorkloadShape("ReplicaSet", ("apps/*", "extensions/*"), (Role("spec"),)),
    WorkloadShape("StatefulSet", ("apps/*",), (Role("spec"),)),
    WorkloadShape("DaemonSet", ("apps/*", "extensions/*"), (Role("spec", counts=None),)),
    WorkloadShape("ReplicationController", ("v1",), (Role("spec"),)),
    WorkloadShape("Job", ("batch/*",), (Role("spec", counts=_PARALLELISM),)),
    WorkloadShape("CronJob", ("batch/*",), (Role("spec.jobTemplate.spec", counts=_PARALLELISM),)),
    # Kubeflow training operator (v1) and mpi-operator (v2beta1): one template per role key.
    _kubeflow("PyTorchJob", "pytorchReplicaSpecs"),
    _kubeflow("TFJob", "tfReplicaSpecs"),
    _kubeflow("MPIJob", "mpiReplicaSpecs"),
    _kubeflow("XGBoostJob", "xgbReplicaSpecs"),
    _kubeflow("PaddleJob", "paddleReplicaSpecs"),
    _kubeflow("JAXJob", "jaxReplicaSpecs"),
    # Kubeflow Trainer v2: the runtime holds the pod template; the TrainJob sets the nodes and
    # the resources of each.
    WorkloadShape(
        "TrainJob",
        ("trainer.kubeflow.org/*",),
        (
            Role(
                "spec.trainer",
                template="",
                spec="",
                counts=(Count("numNodes"),),
                name="node",
                # Trainer merges `resourcesPerNode` into the runtime's container named `node`
                # (pkg/constants Node).
                containers=(
                    ContainerField("", ContainerRole.APP, True, "resourcesPerNode", name="node"),
                ),
            ),
        ),
        gang=True,
    ),
    _ray("RayCluster", "spec"),
    _ray(
        "RayJob",
        "spec.rayClusterSpec",
        Role("spec", template="submitterPodTemplate", counts=(), name="submitter"),
    ),
    _ray("RayService", "spec.rayClusterConfig"),
    WorkloadShape(
        "JobSet",
        ("jobset.x-k8s.io/*",),
        (
            Role(
                "spec.replicatedJobs[]",
                template="template.spec.template",
                counts=(Count("replicas"), Count("template.spec.parallelism")),
            ),
        ),
        gang=True,
    ),
    WorkloadShape(
        "LeaderWorkerSet",
        ("leaderworkerset.x-k8s.io/*",),
        (
            Role(
                "spec.leaderWorkerTemplate",
                template="leaderTemplate",
                counts=(Count("/spec.replicas"),),
                name="leader",
            ),
            Role(
                "spec.leaderWorkerTemplate",
                template="workerTemplate",
                counts=(Count("/spec.replicas"), Count("size", less=1, less_if="leaderTemplate")),
                name="worker",
            ),
        ),
        gang=True,
    ),
    # LWS DisaggregatedSet: each `spec.roles[]` (prefill, decode) is a LeaderWorkerSet spec,
    # the whole set fanned out `spec.slices` times.
    WorkloadShape(
        "DisaggregatedSet",
        ("disaggregatedset.x-k8s.io/*",),
        (
            Role(
                "spec.roles[].spec",
                template="leaderWorkerTemplate.leaderTemplate",
                counts=(_DISAGG_SLICES, Count("replicas")),
                name="{} leader",
            ),
            Role(
                "spec.roles[].spec",
                template="leaderWorkerTemplate.workerTemplate",
                counts=(
                    _DISAGG_SLICES,
                    Count("replicas"),
                    Count(
                        "leaderWorkerTemplate.size",
                        less=1,
                        less_if="leaderWorkerTemplate.leaderTemplate",
                    ),
                ),
                name="{} worker",
            ),
        ),
        gang=True,
    ),
    WorkloadShape("Rollout", ("argoproj.io/*",), (Role("spec"),)),
    _argo_workflow("Workflow", "spec"),
    _argo_workflow("WorkflowTemplate", "spec"),
    _argo_workflow("ClusterWorkflowTemplate", "spec"),
    _argo_workflow("CronWorkflow", "spec.workflowSpec"),
    # Serving and platform kinds: each component is a pod spec with extra fields.
    WorkloadShape(
        "InferenceService",
        ("serving.kserve.io/*",),
        (
            _kserve_component("predictor", KSERVE_PREDICTOR_CONTAINERS),
            _kserve_workers("spec.predictor"),
            _kserve_component("transformer", POD_CONTAINERS),
            _kserve_component("explainer", KSERVE_EXPLAINER_CONTAINERS),
        ),
    ),
    _serving_runtime("ServingRuntime"),
    _serving_runtime("ClusterServingRuntime"),
    WorkloadShape(
        "LLMInferenceService",
        ("serving.kserve.io/*",),
        (*_llm_role("spec", "main"), *_llm_role("spec.prefill", "prefill")),
    ),
    WorkloadShape(
        "Service",
        ("serving.knative.dev/*",),
        (Role("spec", counts=_KNATIVE_REPLICAS, operator_resources=True),),
    ),
    WorkloadShape(
        "Configuration",
        ("serving.knative.dev/*",),
        (Role("spec", counts=_KNATIVE_REPLICAS, operator_resources=True),),
    ),
    _training_runtime("TrainingRuntime"),
    _training_runtime("ClusterTrainingRuntime"),
    WorkloadShape("Notebook", ("kubeflow.org/*",), (Role("spec", counts=()),)),
    WorkloadShape(
        "NIMService",
        ("apps.nvidia.com/*",),
        (Role("spec", derive=nim_pod, counts=_NIM_REPLICAS),),
    ),
    WorkloadShape(
        "NIMPipeline",
        ("apps.nvidia.com/*",),
        (
            Role(
                "spec.services[]",
                counts=(
                    Count(
                        "spec.replicas",
                        peaks=("spec.scale.hpa.minReplicas", "spec.scale.hpa.maxReplicas"),
                    ),
                ),
                derive=nim_service_pod,
            ),
        ),
    ),
    WorkloadShape(
        "Workspace",
        ("kaito.sh/*",),
        (
            Role(
                "resource",
                derive=kaito_pod,
                generated=True,
                counts=(Count("count"),),
                name="preset",
                operator_resources=True,
            ),
            Role(
                "inference",
                derive=kaito_template,
                counts=(Count("/resource.count"),),
                name="inference",
            ),
        ),
    ),
    WorkloadShape(
        "Model",
        ("kubeai.org/*",),
        (
            Role(
                "spec",
                derive=kubeai_pod,
                generated=True,
                operator_resources=True,
                counts=(Count("replicas", peaks=("minReplicas", "maxReplicas")),),
            ),
        ),
    ),
    WorkloadShape(
        "DynamoGraphDeployment",
        ("nvidia.com/v1alpha1",),
        (
            Role(
                "spec.services.*",
                template="",
                spec="",
                derive=dynamo_service_pod,
                counts=_DYNAMO_COUNTS,
            ),
        ),
    ),
    WorkloadShape(
        "DynamoGraphDeployment",
        ("nvidia.com/*",),
        (
            Role(
                "spec.components[]",
                template="podTemplate",
                derive=dynamo_component_pod,
                counts=_DYNAMO_COUNTS,
            ),
        ),
    ),
    # Katib: each trial runs `trialTemplate.trialSpec` (a Job or a Kubeflow training job),
    # `parallelTrialCount` trials at once (3 by default: pkg/apis/controller/experiments/
    # v1beta1/constants.go DefaultTrialParallelCount).
    WorkloadShape(
        "Experiment",
        ("kubeflow.org/*",),
        (
            Role(
                f"{_KATIB_TRIAL}.spec",
                counts=(_KATIB_TRIALS, Count("parallelism")),
                name="trial",
            ),
            *(
                Role(f"{_KATIB_TRIAL}.spec.{specs}.*", counts=(_KATIB_TRIALS, Count("replicas")))
                for specs in ("pytorchReplicaSpecs", "tfReplicaSpecs", "mpiReplicaSpecs")
            ),
        ),
    ),
    WorkloadShape(
        "SeldonDeployment",
        ("machinelearning.seldon.io/*",),
        (Role("spec.predictors[].componentSpecs[]", template=""),),
    ),
    WorkloadShape(
        "Workload",
        ("kueue.x-k8s.io/*",),
        (Role("spec.podSets[]", counts=(Count("count"),)),),
    ),
    WorkloadShape(
        "Job",
        ("batch.volcano.sh/*",),
        (Role("spec.tasks[]", gang_min="minAvailable"),),
        gang=True,
        gang_min="spec.minAvailable",
    ),
)


def shape_index(shapes: Iterable[WorkloadShape]) -> dict[str, tuple[WorkloadShape, ...]]:
    """Shapes by kind, in the order given (the first whose apiVersion matches wins)."""
    index: dict[str, list[WorkloadShape]] = {}
    for shape in shapes:
        index.setdefault(shape.kind, []).append(shape)
    return {kind: tuple(found) for kind, found in index.items()}


_BUILTIN_INDEX = shape_index(BUILTIN_SHAPES)


# A step: `["a.b/c"]` (a key with dots, such as an annotation), a plain key, or `[]`.
# Compiled on first use: a path of plain keys (most built-in roles) is split without it.
_STEP = r'\["([^"]*)"\]|([^.\[\]]+)|(\[\])'


@functools.lru_cache(maxsize=1024)
def _split(path: str) -> tuple[str, ...]:
    """`spec.workerGroupSpecs[].template` -> (`spec`, `workerGroupSpecs`, `[]`, `template`);
    `metadata.annotations["a.b/c"]` -> (`metadata`, `annotations`, `a.b/c`)."""
    if "[" not in path and "]" not in path:
        return tuple(step for step in path.split(".") if step)
    steps: list[str] = []
    for quoted, plain, listed in re.findall(_STEP, path):
        steps.append(quoted or plain or listed)
    return tuple(steps)


def api_group(api_version: str) -> str:
    """`apps/v1` -> `apps`; `v1` -> `` (the core group)."""
    return api_version.rpartition("/")[0]


@functools.lru_cache(maxsize=256)
def _version_matches(api_version: str, patterns: tuple[str, ...]) -> bool:
    return any(_glob_matches(api_version, p) for p in patterns)


def _glob_matches(text: str, pattern: str) -> bool:
    """fnmatch.fnmatchcase, without compiling a pattern that is a literal (`v1`) or a literal
    and a final `*` (`apps/*`, as the built-in shapes write theirs)."""
    literal = pattern.removesuffix("*")
    if "*" in literal or "?" in literal or "[" in literal:
        return fnmatch.fnmatchcase(text, pattern)
    return text.startswith(literal) if literal != pattern else text == pattern


def shape_for(document: Document, extra: Sequence[WorkloadShape] = ()) -> WorkloadShape | None:
    """The shape of the document's kind, if it is a workload kind gpulint knows.

    `extra` shapes (from the config) are tried before the built-in ones.
    """
    kind, api_version = document.ref.kind, document.ref.api_version
    for shape in (*(s for s in extra if s.kind == kind), *_BUILTIN_INDEX.get(kind, ())):
        if _version_matches(api_version, shape.api_versions):
            return shape
    return None


#: What one walk over a document has done at its mappings and lists, by id(): _TYPED, the
#: typing read the node as a pod template reads it (the accelerator scan does not enter it); a
#: tuple, the node was enumerated once already and these are its (key or index, value) entries
#: to go on with (all of them, or those holding mappings and lists: the scan reads only those).
Walked = dict[int, tuple[tuple[Any, Any], ...] | bool]
_TYPED = False


def _entries(node: YMap | YSeq, walked: Walked) -> tuple[tuple[Any, Any], ...]:
    """The (key or index, value) entries of `node`, enumerated once per walk: whoever meets
    the node again (another role, the accelerator scan) goes on from `walked`."""
    entries = walked.get(id(node))
    if not isinstance(entries, tuple):  # not met yet (a typed node is never entered)
        entries = walked[id(node)] = tuple(node.items() if type(node) is YMap else enumerate(node))
    return entries


def _typed(
    document: Document, shape: WorkloadShape, walked: Walked
) -> tuple[Workload, tuple[tuple[Pos, str], ...]]:
    """The workload view of a document of `shape`, and its wrong-typed fields in document
    order; what the walk enumerates joins `walked`."""
    obj = document.obj
    problems: list[tuple[Pos, str]] = []
    templates: list[PodTemplate] = []
    unread: list[UnreadPart] = []
    unread_roles: list[RolePart] = []
    for role in shape.roles:
        before = len(templates)
        for where, name, role_node in _descend([("", None, obj)], role.path, problems, walked):
            # An operator checks the fields it builds pods from; only the path to them is ours.
            below = [] if role.generated else problems
            role_name = _role_name(role, name)
            found = _role_template(document, role, where, role_node, role_name, below, walked)
            if isinstance(found, PodTemplate):
                templates.append(found)
            elif isinstance(found, UnreadPart):
                unread.append(found)
            elif role_name and role_node is not obj:
                written = _written(role, role_node)
                if written is not None:
                    template = written if type(written) is YMap else None
                    unread_roles.append(RolePart(role_name, role_node, template))
            for count in role.counts or ():
                base, base_where = (obj, "") if count.path.startswith("/") else (role_node, where)
                if not count.text:  # a count kept in a string is no field of the API's
                    _malformed_count(base_where, base, count.path.lstrip("/"), below)
        if shape.declared and len(templates) == before and not role.optional:
            where = ".".join(p for p in (role.path, role.template) if p)
            unread.append(
                UnreadPart(
                    f"the config's `workloads:` path `{where}` for kind {shape.kind} is not "
                    "in this object",
                    document.kind_pos,
                    accelerators=False,
                )
            )
    first = templates[0].replicas if templates else _count(obj, obj, shape.roles[0])
    gang_min = _field_count(obj, shape.gang_min) if shape.gang_min else None
    workload = Workload(
        document,
        tuple(templates),
        first,
        shape.gang,
        gang_min,
        tuple(unread),
        tuple(unread_roles),
    )
    return workload, tuple(sorted(problems, key=_position))


def _written(role: Role, role_node: YMap) -> Any:
    """The pod template the role's mapping holds, readable or not (the value written, or the
    mapping itself when that is the template); None when it holds none.

    An operator's role built from other fields holds none, nor does a role the kind leaves
    out (a LeaderWorkerSet without `leaderTemplate`) or an Argo template that runs no pod.
    """
    if role.derive is not None:
        return None
    if role.template:
        return _at(role_node, role.template)
    if role.spec:
        return role_node  # the role's mapping is the template
    written = any(_at(role_node, f.path) is not None for f in role.containers if f.path)
    return role_node if written else None


def _role_name(role: Role, found: str | None) -> str | None:
    """The role's fixed name, with `{}` standing for the name found on the way (`prefill`)."""
    if role.name is None:
        return found
    return role.name.format(found) if "{}" in role.name and found else role.name


def _position(problem: tuple[Pos, str]) -> Pos:
    return problem[0]


def workload_of(document: Document, extra: Sequence[WorkloadShape] = ()) -> Workload | None:
    """The typed workload view of a document, or None when it runs no pods."""
    shape = shape_for(document, extra)
    return None if shape is None else _typed(document, shape, {})[0]


def _role_template(
    document: Document,
    role: Role,
    where: str,
    role_node: YMap,
    name: str | None,
    problems: list[tuple[Pos, str]],
    walked: Walked,
) -> PodTemplate | UnreadPart | None:
    """The pod template of one role's mapping; the written one's wrong types join `problems`.

    A role whose operator builds the pod (`derive`) gives the pod it builds, or the UnreadPart
    it cannot build.
    """
    node = spec = None
    containers: tuple[Container, ...] = ()
    # A path without `*` or `[]` steps: at most one template, and one spec in it.
    for found in _descend([(where, None, role_node)], role.template, problems, walked):
        for spec_where, _, spec in _descend([found], role.spec, problems, walked):
            node = found[2]
            containers = _containers(spec_where, spec, role.containers, problems, walked)
    obj = document.obj
    if role.derive is not None:
        derived = role.derive(obj, role_node)
        if not isinstance(derived, YMap):
            return derived
        if derived is not spec:
            # Built by gpulint from the role's fields: only what is written is type-checked.
            containers = _containers("", derived, role.containers, [], walked)
        node = spec = derived
    if node is None or spec is None:
        return None
    if not role.spec and not containers:
        return None  # an Argo steps/DAG template runs no pod of its own
    gang_min = None
    if role.gang_min and (role.gang_min_if is None or _at(obj, role.gang_min_if) is True):
        written = _field_count(role_node, role.gang_min)
        gang_min = written if written.pos is not None else None
    return PodTemplate(
        document,
        node,
        spec,
        containers,
        name,
        _count(obj, role_node, role),
        gang_min,
        role_node if role_node is not obj else None,
        role.operator_resources,
    )


def _descend(
    found: list[tuple[str, str | None, YMap]],
    path: str,
    problems: list[tuple[Pos, str]],
    walked: Walked,
) -> list[tuple[str, str | None, YMap]]:
    """The mappings at `path` below each (field path, role name, mapping) of `found`.

    A `*` step names the role by its key, a `[]` step by the item's name (see _item_name);
    a plain step keeps the name. Values of the wrong type on the way are added to `problems`,
    except the object's own top-level fields (field path ""). What a `*` or `[]` step
    enumerates joins `walked`, with its (key or index, value) entries.
    """
    steps = _split(path)
    index = 0
    while index < len(steps):
        step = steps[index]
        listed = index + 1 < len(steps) and steps[index + 1] == "[]"
        index += 2 if listed else 1
        below: list[tuple[str, str | None, YMap]] = []
        for where, name, node in found:
            if step == "*":
                entries = _entries(node, walked)
            else:
                entries = ((step, node[step]),) if step in node else ()
            for key, value in entries:
                field = f"{where}.{key}" if where else str(key)
                if not listed:
                    if type(value) is YMap:
                        below.append((field, str(key) if step == "*" else name, value))
                    elif where and (message := wrong_type(field, value, YMap)):
                        problems.append((node.pos_of_value(key), message))
                    continue
                if type(value) is not YSeq:
                    if message := wrong_type(field, value, YSeq):
                        problems.append((node.pos_of_value(key), message))
                    continue
                for position, item in _entries(value, walked):
                    if type(item) is YMap:
                        item_name = _item_name(item, step, position)
                        below.append((f"{field}[{position}]", item_name, item))
                    elif message := wrong_type(f"{field}[{position}]", item, YMap):
                        problems.append((value.pos_of_item(position), message))
        found = below
    return found


_NAME_FIELDS = ("name", "groupName")


def _item_name(item: Any, list_name: str, index: int) -> str:
    if isinstance(item, YMap):
        for field in _NAME_FIELDS:
            if item.get(field):
                return str(item[field])
    return f"{list_name}[{index}]"


def _at(node: Any, path: str) -> Any:
    """The value at a dotted path without `*`/`[]` steps, or None."""
    for step in _split(path):
        if not isinstance(node, YMap):
            return None
        node = node.get(step)
    return node


def _count(obj: YMap, role_node: YMap, role: Role) -> ReplicaCount | None:
    """The role's pod count: the product of its count fields."""
    if role.counts is None:
        return None
    if not role.runs:
        return ReplicaCount(0, "", None)
    factors = []
    for count in role.counts:
        base = obj if count.path.startswith("/") else role_node
        factor = _factor(base, count)
        if count.less and (count.less_if is None or _at(role_node, count.less_if) is not None):
            factor = ReplicaCount(max(0, factor.value - count.less), factor.field, factor.pos)
        factors.append(factor)
    if not factors:
        return ReplicaCount(1, "", None)
    if len(factors) == 1:
        return factors[0]
    value = 1
    for factor in factors:
        value *= factor.value
    # The field to change is the first one written, else the first one.
    lead = next((f for f in factors if f.pos is not None), factors[0])
    return ReplicaCount(value, lead.field, lead.pos, tuple(factors))


def _factor(base: YMap, count: Count) -> ReplicaCount:
    """One count field's value, divided by its `per` field and raised to its peaks."""
    path = count.path.lstrip("/")
    factor = _field_count(base, path, count.default, count.text)
    if count.per is not None and factor.pos is not None:
        divisor = _field_count(base, count.per, 1, count.text).value
        factor = factor._replace(value=max(1, factor.value // max(divisor, 1)))
    for peak in count.peaks:
        other = _field_count(base, peak, 0, count.text)
        if other.pos is not None and other.value > factor.value:
            factor = other
    return factor


def _field_count(base: YMap, path: str, default: int = 1, text: bool = False) -> ReplicaCount:
    """The non-negative integer at `path` below `base`, or `default` where it is not written.

    With `text`, a string of digits counts too (annotations are strings).
    """
    *parents, leaf = _split(path)
    node: Any = base
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if isinstance(node, YMap) and leaf in node:
        value = _integer(node[leaf], text)
        if value is not None and 0 <= value <= INT32_MAX:
            return ReplicaCount(value, leaf, node.pos_of_key(leaf))
    return ReplicaCount(default, leaf, None)


def pod_template(document: Document, node: YMap, role: str | None = None) -> PodTemplate | None:
    """The typed view of a mapping holding a pod `spec`, or None when it has no spec."""
    spec = node.get("spec")
    if not isinstance(spec, YMap):
        return None
    containers = _containers("spec", spec, POD_CONTAINERS, [], {})
    return PodTemplate(document, node, spec, containers, role)


def _containers(
    where: str,
    spec: YMap,
    fields: Sequence[ContainerField],
    problems: list[tuple[Pos, str]],
    walked: Walked,
) -> tuple[Container, ...]:
    """The containers of the pod spec at field path `where`; wrong-typed ones join `problems`,
    the lists enumerated join `walked`."""
    found: list[Container] = []
    for field in fields:
        if not field.path:
            if field.single:  # the spec is the container (a TrainJob's trainer)
                found.append(_container(where, spec, field, 0, spec.pos, problems))
            continue
        parent, _, key = field.path.rpartition(".")
        for holder_where, _, holder in _descend([(where, None, spec)], parent, problems, walked):
            value = holder.get(key)
            if value is None:
                continue
            path = f"{holder_where}.{key}" if holder_where else key
            if field.single:
                if type(value) is YMap:
                    pos = holder.pos_of_key(key)
                    found.append(_container(path, value, field, 0, pos, problems))
                elif holder_where and (message := wrong_type(path, value, YMap)):
                    problems.append((holder.pos_of_value(key), message))
            elif type(value) is not YSeq:
                if message := wrong_type(path, value, YSeq):
                    problems.append((holder.pos_of_value(key), message))
            else:
                for index, item in _entries(value, walked):
                    item_pos = value.pos_of_item(index)
                    if type(item) is YMap:
                        item_where = f"{path}[{index}]"
                        found.append(_container(item_where, item, field, index, item_pos, problems))
                    elif message := wrong_type(f"{path}[{index}]", item, YMap):
                        problems.append((item_pos, message))
    return tuple(found)


def _container(
    where: str,
    item: YMap,
    field: ContainerField,
    index: int,
    pos: Pos,
    problems: list[tuple[Pos, str]],
) -> Container:
    role = field.role
    if role is ContainerRole.INIT and item.get("restartPolicy") == "Always":
        role = ContainerRole.SIDECAR
    return Container(
        name=str(item.get("name") or (field.name if field.single else f"#{index}")),
        role=role,
        index=index,
        node=item,
        pos=pos,
        resources=_resources(where, item, field.resources, problems),
        own_fields=field.own_fields,
    )


def _resources(where: str, container: YMap, key: str, problems: list[tuple[Pos, str]]) -> Resources:
    node = container.get(key)
    if type(node) is not YMap:
        if node is not None and (message := wrong_type(f"{where}.{key}", node, YMap)):
            problems.append((container.pos_of_value(key), message))
        return Resources({}, {}, None, container.pos_of_key(key))
    for section in _SECTIONS:
        value = node.get(section)
        if value is not None and type(value) is not YMap:
            message = wrong_type(f"{where}.{key}.{section}", value, YMap) or ""
            problems.append((node.pos_of_value(section), message))
    return Resources(
        requests=_quantities(node.get("requests")),
        limits=_quantities(node.get("limits")),
        node=node,
        pos=container.pos_of_key(key),
    )


def _quantities(node: Any) -> dict[str, Quantity]:
    if not isinstance(node, YMap):
        return {}
    return {
        str(name): Quantity(
            resource=str(name),
            raw=value,
            amount=_amount(value),
            key_pos=node.pos_of_key(name),
            value_pos=node.pos_of_value(name),
        )
        for name, value in node.items()
    }


def _amount(value: Any) -> Decimal | None:
    if value is None:
        return Decimal(0)  # Quantity.UnmarshalJSON reads `null` as zero
    return _text_amount(value) if type(value) is str else parse_quantity(value)


# The same few quantities ("1", "500m", "16Gi") are written in every manifest; Decimals are
# immutable, so one parse of each text serves them all.
@functools.lru_cache(maxsize=4096)
def _text_amount(text: str) -> Decimal | None:
    return parse_quantity(text)


def _malformed_count(where: str, base: YMap, path: str, problems: list[tuple[Pos, str]]) -> None:
    *parents, leaf = _split(path)
    node: Any = base
    for step in parents:
        node = node.get(step) if isinstance(node, YMap) else None
    if not isinstance(node, YMap) or node.get(leaf) is None:
        return
    field = f"{where}.{path}" if where else path
    count = _integer(node[leaf])
    if count is None:
        problems.append((node.pos_of_value(leaf), wrong_type(field, node[leaf], int) or ""))
    elif count < 0:
        problems.append(
            (node.pos_of_value(leaf), f"`{field}` is negative; the API server rejects the object")
        )
    elif count > INT32_MAX:
        problems.append(
            (
                node.pos_of_value(leaf),
                f"`{field}` is larger than {INT32_MAX}, the most the API's int32 field holds; "
                "the API server rejects the object",
            )
        )


#: Replica counts, parallelism and gang sizes are int32 fields in every API that has them.
INT32_MAX = 2**31 - 1


def _integer(value: Any, text: bool = False) -> int | None:
    """An integer field as the API reads it: `3.0` (YAML float, JSON 3) is 3, `"3"` is no int
    (unless the field is `text`, a count kept in a string)."""
    if isinstance(value, bool):
        return None
    if text and isinstance(value, str):
        digits = value.strip()
        # isdigit() also holds for `²`, which int() refuses, and for 5000 digits, which it
        # refuses too: neither is a count.
        usable = digits.isdigit() and digits.isascii() and len(digits) <= 19
        return int(digits) if usable else None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


_SECTIONS = ("requests", "limits")


def role_at(workload: Workload, pos: Pos) -> str | None:
    """The role whose part of the manifest holds `pos`, for workloads with named roles.

    A role's part is the mapping that declares it (its count and template), or only its
    template when that mapping also holds other roles (LeaderWorkerSet, RayJob's submitter).
    A role whose template is of the wrong type has its part too, so that what is wrong in it
    is told as in any role (unless its mapping holds other roles: then it has none).
    """
    parts = [RolePart(t.role, t.role_node or t.node, t.node) for t in workload.templates if t.role]
    parts += workload.unread_roles
    for index, (role, node, template) in enumerate(parts):
        extent = _extent(node)
        if any(i != index and _inside(_start(o), extent) for i, o in enumerate(parts)):
            if template is None:
                continue  # which part of the shared mapping is this role's is not known
            extent = _extent(template)
        if _inside(pos, extent):
            return role
    return None


def _start(part: RolePart) -> Pos:
    """Where a role's template starts, or its mapping when its template is no mapping."""
    return (part.node if part.template is None else part.template).pos


def _extent(node: YMap) -> tuple[Pos, Pos]:
    return node.pos, (last_line(node), 10**9)


def _inside(pos: Pos, extent: tuple[Pos, Pos]) -> bool:
    return extent[0] <= pos <= extent[1]


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


# Keys of a container's resource requirements; `resourcesPerNode` is a TrainJob's.
_RESOURCE_KEYS = frozenset({"resources", "resourcesPerNode"})
# Every key under which _scan looks for a request (a list item's key is None).
_REQUEST_KEYS = _RESOURCE_KEYS | {"annotations", "gpu", "sparkConf", "resource", "resourceClaims"}
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
    for key, value in obj.items():
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
    already (see _entries). Every object of every input passes here: field paths are only
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
        _spark_conf_requests(node, path, found)
    elif in_mapping and key == "resource" and type(node.get("manifest")) is str:
        _embedded_requests(node, path, found)
    elif key == "resourceClaims" and not in_mapping and node:
        found.append(
            AcceleratorRequest(
                f"resource claim {_claim_name(node[0])}",
                _field(path),
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
        if seen is not _TYPED:
            path.append(child_key)
            if in_mapping:
                _scan(child_key, child, node, path, found, walked, seen)
            else:  # an item is held by the mapping that holds its list
                _scan(None, child, parent, path, found, walked, seen)
            path.pop()


def _field(path: list[Any]) -> str:
    """`["spec", "containers", 0, "resources"]` -> `spec.containers[0].resources`."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


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
            where = _field(path)
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
        if isinstance(name, str) and looks_like_accelerator(name) and not _zero(value):
            pos = resources.pos_of_key(name)
            found.append(AcceleratorRequest(name, _field(path), pos, holders))
        if type(value) in _NODES:
            branches.append((name, value))
    for section in _SECTIONS:
        values = resources.get(section)
        if type(values) is not YMap:
            continue
        nested = []
        for name, value in values.items():
            if isinstance(name, str) and looks_like_accelerator(name) and not _zero(value):
                where = f"{_field(path)}.{section}"
                found.append(AcceleratorRequest(name, where, values.pos_of_key(name), holders))
            if type(value) in _NODES:
                nested.append((name, value))
        walked[id(values)] = tuple(nested)
    claims = resources.get("claims")
    # A claim is named by a DNS label; `name: nvidia.com/gpu` is a resource name written in
    # the wrong place (GPU004), not a DRA claim.
    if type(claims) is YSeq and any(_is_claim(item) for _, item in _entries(claims, walked)):
        found.append(
            AcceleratorRequest(
                f"resource claim {_claim_name(claims[0])}",
                f"{_field(path)}.claims",
                resources.pos_of_key("claims"),
                holders,
                CLAIM,
            )
        )
    return branches


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
        AcceleratorRequest(name, _field(path), gpu.pos_of_key("name"), holders, OPERATOR_FIELD)
    )


def _spark_conf_requests(conf: YMap, path: list[Any], found: list[AcceleratorRequest]) -> None:
    """Add the requests of a Spark configuration to `found`: on Kubernetes, Spark gives its
    driver or executor pod the limit `<vendor>/<name>` for each
    `spark.{driver,executor}.resource.<name>.amount` whose `.vendor` is set (the Spark docs,
    "Resource Allocation and Configuration Overview", running-on-kubernetes)."""
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
            holders = (id(conf),)
            found.append(
                AcceleratorRequest(
                    name, _field(path), conf.pos_of_key(key), holders, OPERATOR_FIELD
                )
            )


def _embedded_requests(resource: YMap, path: list[Any], found: list[AcceleratorRequest]) -> None:
    """Add the requests of the object an Argo resource template creates at run time (its
    `manifest`, YAML text) to `found`, at the `manifest` key. Argo fills in its `{{...}}`
    parameters first; a manifest that does not parse is left to Argo."""
    text = re.sub(r"\{\{[^{}]*\}\}", "x", resource["manifest"])
    where = f"{_field(path)}.manifest"
    pos = resource.pos_of_key("manifest")
    for document in parse(text).documents:
        if type(document.value) is YMap:
            found.extend(
                AcceleratorRequest(r.what, f"{where}: {r.field}", pos, (id(resource),), EMBEDDED)
                for r in accelerator_requests(document.value)
            )


def _is_claim(item: Any) -> bool:
    return isinstance(item, YMap) and isinstance(item.get("name"), str) and "/" not in item["name"]


def _claim_name(item: Any) -> str:
    return shown(item.get("name")) if isinstance(item, YMap) else "?"


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
    ref = document.ref
    if workload is None and ref.kind in _NO_REQUESTS.get(api_group(ref.api_version), ()):
        return None
    walked = {} if walked is None else walked
    read: set[int] = set()
    for template in workload.templates if workload is not None else ():
        read.add(id(template.spec))
        read.add(id(template.role_node))  # a pod spec an operator completes (KServe)
        # Claims a built pod takes from elsewhere in the object (an Argo workflow's own).
        read.add(id(template.spec.get("resourceClaims")))
        read.add(id(template.annotations))
        # A typed container's requests are its `resources`, which the pod template reads: the
        # scan skips its mapping (the bulk of a workload: env, probes, mounts).
        for container in template.containers:
            read.add(id(container.resources.node))
            walked[id(container.node)] = _TYPED
        for field in _PLACEMENT_FIELDS:
            walked[id(template.spec.get(field))] = _TYPED
    requests = tuple(
        r
        for r in accelerator_requests(document.obj, walked)
        if r.form not in CHECKED_FORMS or read.isdisjoint(r.holders)
    )
    unread = workload.unread if workload is not None else ()
    if not requests and not unread:
        return None
    return Unchecked(document, requests, unread)


class WorkloadReading(NamedTuple):
    """What the loader's one walk over a document finds."""

    workload: Workload | None  # None: the document runs no pods (not a workload kind)
    # Fields on the way to its pods that hold the wrong type, as (position, message), in
    # document order.
    malformed: tuple[tuple[Pos, str], ...] = ()
    # The accelerator requests (and parts of the workload) that no pod template read holds.
    unchecked: Unchecked | None = None


def read_workload(document: Document, extra: Sequence[WorkloadShape] = ()) -> WorkloadReading:
    """The document's typed workload view, its wrong-typed fields and its unread accelerator
    requests, in one walk.

    `extra` shapes (the config's `workloads:`) are tried before the built-in ones, and their
    fields are type-checked the same way. The typed view skips what it cannot read (a string
    `replicas` counts as the default, a container that is not a mapping is no container);
    `malformed` names each such value. The object's own top-level fields are the loader's to
    check. The accelerator scan then walks only what typing did not: it skips what the pod
    templates read and goes on from the children of what typing enumerated, so each mapping
    and list of the document is walked once.
    """
    shape = shape_for(document, extra)
    walked: Walked = {}
    if shape is None:
        return WorkloadReading(None, (), unchecked(document, None, walked))
    workload, malformed = _typed(document, shape, walked)
    return WorkloadReading(workload, malformed, unchecked(document, workload, walked))
