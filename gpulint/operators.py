"""The pods operators build from fields that are no pod spec: an Argo template with its
workflow's defaults, a KServe component with GKE's accelerator selector, NIM services, KAITO
presets and templates, KubeAI resource profiles, NVIDIA Dynamo services and components,
Kthena ModelBooster workers, Spark drivers and executors.

Each builder takes (the object, the role's mapping) and returns the pod spec the operator runs,
every value positioned at the field that decided it (a shape's `Role.derive`), or an
`UnreadPart` saying why it cannot.
"""

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from gpulint.accelerators import looks_like_accelerator
from gpulint.data.kserve import KSERVE_FORMATS
from gpulint.data.spark import SPARK_CONTAINERS
from gpulint.fields import mapping_at, shown
from gpulint.model import (
    ReplicaCount,
    UnreadPart,
)
from gpulint.views import NamedTuple
from gpulint.yamltree import BuiltMap, Pos, YMap, YSeq

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
    workflow = mapping_at(obj, *spec_path.split("."))
    defaults = [
        (key, field)
        for key, field in _ARGO_DEFAULTS
        if workflow.get(key) and not template.get(field)
    ]
    if not defaults:
        return template
    pod = YMap(template.pos)
    pod.update_from(template)
    for key, field in defaults:
        pod[field] = workflow[key]
        pod.spans[field] = workflow.spans[key]
    return pod


_GKE_ACCELERATOR = "serving.kserve.io/gke-accelerator"
_DEPLOYMENT_MODE = "serving.kserve.io/deploymentMode"


def kserve_component(obj: YMap, component: YMap) -> YMap | UnreadPart | None:
    """A KServe component's pod spec: as written, plus the node selector KServe's pod webhook
    adds (pkg/webhook/admission/pod/accelerator_injector.go) when the InferenceService is
    annotated `serving.kserve.io/gke-accelerator` and a container limits `nvidia.com/gpu`.
    None, or the accelerators it asks for in vain, when ModelMesh serves it."""
    if mapping_at(obj, "metadata", "annotations").get(_DEPLOYMENT_MODE) == "ModelMesh":
        return _served_by_modelmesh(component)
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
        selector.update_from(written)
    selector["cloud.google.com/gke-accelerator"] = str(notes[_GKE_ACCELERATOR])
    selector.spans["cloud.google.com/gke-accelerator"] = (*pos, *pos)
    return component.with_entry("nodeSelector", selector, pos)


def _served_by_modelmesh(component: YMap) -> UnreadPart | None:
    """A component of an InferenceService ModelMesh serves runs no pod: KServe's controller
    leaves it to ModelMesh, which loads the model into the pods of a ServingRuntime and reads
    only its format, runtime and storage (kserve/modelmesh-serving
    pkg/predictor_source/inferenceservice_registry.go). Accelerators it asks for go to no pod."""
    for container in _component_containers(component):
        resources = container.get("resources")
        if not isinstance(resources, YMap):
            continue
        for section in ("limits", "requests"):
            for name, value in mapping_at(resources, section).items():
                if looks_like_accelerator(str(name)) and str(value).strip() not in ("0", ""):
                    return UnreadPart(
                        "ModelMesh serves it (`serving.kserve.io/deploymentMode: ModelMesh`) "
                        f"in the pods of a ServingRuntime: no pod gets the `{shown(name)}` its "
                        "`resources` ask for",
                        container.pos_of_key("resources"),
                        fix="Ask for the accelerator in the ServingRuntime ModelMesh loads the "
                        "model into (its containers' `resources`, with a toleration for the GPU "
                        "nodes' taint) and check that runtime; ModelMesh ignores these.",
                        explains=resources,
                    )
    return None


def _component_containers(component: YMap) -> Iterator[YMap]:
    containers = component.get("containers")
    if isinstance(containers, YSeq):
        yield from (c for c in containers if isinstance(c, YMap))
    for name in (*KSERVE_FORMATS, "art", "alibi"):
        if isinstance(component.get(name), YMap):
            yield component[name]


def nim_pod(obj: YMap, spec: YMap) -> YMap:
    """A NIMService spec as the pod the NIM Operator runs: its placement fields as written, and
    one container, `nim`, with the spec's `resources` (not pod-level resources)."""
    pod = YMap(spec.pos)
    for key, value in spec.items():
        if key != "resources":
            pod[key] = value
            pod.spans[key] = spec.spans[key]
    _one_container(pod, "nim", spec, "resources" in spec)
    return pod


def _one_container(pod: YMap, name: str, spec: YMap, resources: bool) -> None:
    """Give `pod` one container, `name`, positioned at `spec`, with `spec`'s `resources` as
    written when `resources`."""
    container = YMap(spec.pos)
    container["name"] = name
    container.spans["name"] = (*spec.pos, *spec.pos)
    if resources:
        container["resources"] = spec["resources"]
        container.spans["resources"] = spec.spans["resources"]
    containers = YSeq(spec.pos)
    containers.append_at(container, spec.pos)
    pod["containers"] = containers
    pod.spans["containers"] = (*spec.pos, *spec.pos)


def nim_service_pod(obj: YMap, service: YMap) -> YMap | None:
    """The pod of one NIMPipeline service: its `spec` as a NIMService's."""
    spec = service.get("spec")
    return nim_pod(obj, spec) if isinstance(spec, YMap) else None


def _first_key(mapping: YMap) -> tuple[int, int, int, int]:
    """The span of the first key written in `mapping` (its own position when it has none): a
    field the operator adds to a pod written there is placed with the written ones, where an
    edit adding a key goes (in a flow mapping, `pos` is its `{`)."""
    return min(mapping.spans.values(), default=(*mapping.pos, *mapping.pos))


def _with_containers(pod: YMap, containers: YSeq, written: YMap) -> YMap:
    """`pod` with the `containers` an operator builds, placed where `written` lists its own,
    else among its keys (where an edit adds one)."""
    pod["containers"] = containers
    pod.spans["containers"] = written.spans.get("containers", _first_key(written))
    return pod


def _appended(written: Any, added: YSeq) -> YSeq:
    """The list a pod's `written` one (if it is a list) becomes with the operator's `added`
    items after it, each item where it is written (the new list where `added` is)."""
    joined = YSeq(added.pos)
    for source in (written, added):
        if isinstance(source, YSeq):
            joined.extend_from(source)
    return joined


def _main_first(pod: YMap, main: YMap, listed_at: Pos, extra: YMap) -> YMap:
    """`pod` with the operator's `main` container first (listed at `listed_at`) and the
    containers of the written pod fields `extra` after it; the list is placed among `extra`'s
    keys, where an edit adds one."""
    containers = YSeq(main.pos)
    containers.append_at(main, listed_at)
    others = extra.get("containers")
    if isinstance(others, YSeq):
        containers.extend_from(others)
    return _with_containers(pod, containers, extra)


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
            items.append_at(_synthetic(item, pos), pos)
        return items
    return value


def _built_pod(spec: dict[str, Any], pos: Pos) -> BuiltMap:
    """The pod spec `spec` as _synthetic builds it, for a pod the operator writes from other
    fields: a BuiltMap, which no edit adds to (the manifest has no pod spec)."""
    pod = BuiltMap(pos)
    for key, item in spec.items():
        pod[key] = _synthetic(item, pos)
        pod.spans[key] = (*pos, *pos)
    return pod


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
    return _built_pod(spec, pos)


def kaito_template(obj: YMap, inference: YMap) -> YMap | None:
    """A custom `inference.template`'s pod spec as KAITO runs it: with its GPU tolerations
    added (pkg/workspace/inference/template_inference.go), everything else as written."""
    template = inference.get("template")
    spec = template.get("spec") if isinstance(template, YMap) else None
    if not isinstance(spec, YMap):
        return None
    pod = YMap(spec.pos)
    pod.update_from(spec)
    written = spec.get("tolerations")
    tolerations = YSeq(written.pos if isinstance(written, YSeq) else spec.pos)
    if isinstance(written, YSeq):
        tolerations.extend_from(written)
    added = _synthetic(list(_KAITO_TOLERATIONS), template.pos_of_key("spec"))
    tolerations.extend_from(added)
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


def mpijob_v1alpha1_worker(obj: YMap, spec: YMap) -> YMap | UnreadPart | None:
    """The worker pod of a v1alpha1 MPIJob: its `template` as written when `replicas` sets
    the workers. With `gpus` or `processingUnits` (which win over `replicas`), the operator
    picks how many workers run and gives each its share of the units, up to its
    `--gpus-per-node` (or the job's `gpusPerNode`), over the template's own limit
    (allocateProcessingUnits, newWorker): UnreadPart."""
    for field in ("gpus", "processingUnits"):
        if spec.get(field) is not None:
            cpu = field == "processingUnits" and spec.get("processingResourceType") == "cpu"
            return UnreadPart(
                f"the operator divides `spec.{field}` among workers by its units per node, "
                "which no manifest says",
                spec.pos_of_value(field),
                accelerators=not cpu,
            )
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, YMap) else None
    return pod if isinstance(pod, YMap) else None


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
    return _built_pod(pod, spec.pos_of_value("resourceProfile"))


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
    own = isinstance(extra, YMap) and bool(extra.spans)
    extra = extra if isinstance(extra, YMap) else YMap(service.pos)
    # The pod's fields are written in `extraPodSpec`, where an edit adds a toleration; a
    # service that writes none has no pod mapping to add to.
    pod = YMap(extra.pos) if own else BuiltMap(service.pos)
    for key, value in extra.items():
        if key not in ("mainContainer", "containers"):
            pod[key] = value
            pod.spans[key] = extra.spans[key]
    written = extra.get("mainContainer")
    main = YMap(written.pos if isinstance(written, YMap) else service.pos)
    if isinstance(written, YMap):
        main.update_from(written)
    main.setdefault("name", "main")
    main.spans.setdefault("name", (*main.pos, *main.pos))
    resources = service.get("resources")
    if isinstance(resources, YMap):
        main["resources"] = _dynamo_resources(main.get("resources"), resources)
        main.spans["resources"] = service.spans["resources"]
    # Among `extraPodSpec`'s keys (an edit writes above the first), not inside `mainContainer`.
    return _main_first(pod, main, main.pos, extra)


def _dynamo_resources(container: Any, service: YMap) -> YMap:
    """A container's `resources` with a Dynamo service's written over them, key by key."""
    merged = YMap(service.pos)
    for section in ("requests", "limits"):
        below = container.get(section) if isinstance(container, YMap) else None
        items = YMap(below.pos if isinstance(below, YMap) else service.pos)
        if isinstance(below, YMap):
            items.update_from(below)
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
                    items.update_from(value)
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


# yatai-deployment (bentoml/yatai-deployment, serving.yatai.ai v2alpha1): a BentoDeployment
# runs one Deployment for its API server (`spec`) and one per `spec.runners[]` item, each pod
# built by generatePodTemplateSpec (controllers/bentodeployment_controller.go): the role's own
# `extraPodSpec` gives the pod's placement fields below and extra containers (a runner never
# takes the API server's), and the `main` container gets the role's `resources` through
# getResourcesConfig. That starts from requests of 300m cpu and 500Mi memory and limits of
# 500m and 1Gi, then writes each key given: `limits.gpu` as `nvidia.com/gpu`, every
# `custom` entry under its own name; `requests.gpu` is never read.
_BENTO_POD_FIELDS = (
    "schedulerName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "topologySpreadConstraints",
    "serviceAccountName",
)
_BENTO_GPU = "nvidia.com/gpu"


def bento_pod(obj: YMap, role: YMap) -> YMap:
    """The pod yatai-deployment runs for a BentoDeployment's API server or one of its runners:
    `extraPodSpec`'s placement fields and containers after `main`, which has the role's
    `resources` in Kubernetes' names."""
    extra = role.get("extraPodSpec")
    # The pod's own fields are `extraPodSpec`'s, where an edit adds a toleration; without one
    # written (with entries), the pod is written nowhere.
    written = isinstance(extra, YMap) and bool(extra.spans)
    extra = extra if isinstance(extra, YMap) else YMap(role.pos)
    pod = YMap(extra.pos) if written else BuiltMap(role.pos)
    for key in _BENTO_POD_FIELDS:
        if key in extra:
            pod[key] = extra[key]
            pod.spans[key] = extra.spans[key]
    main = YMap(role.pos)
    main["name"] = "main"
    main.spans["name"] = (*role.pos, *role.pos)
    resources = role.get("resources")
    if isinstance(resources, YMap):
        main["resources"] = _bento_resources(resources)
        main.spans["resources"] = role.spans["resources"]
    # Where `main` is listed: an edit's new list copies the dash of the first item, and `main`
    # has none in `extraPodSpec`.
    return _main_first(pod, main, extra.pos if written else role.pos, extra)


def _bento_resources(written: YMap) -> YMap:
    """A BentoDeployment role's `resources` (cpu, memory, gpu, custom per section) as the
    main container's resource requirements; the operator's defaults are left out (the role
    is marked `operator_resources`: its pods are never BestEffort)."""
    resources = YMap(written.pos)
    for section in ("requests", "limits"):
        item = written.get(section)
        if not isinstance(item, YMap):
            continue
        amounts = YMap(item.pos)
        for key, value in item.items():
            if key in ("cpu", "memory"):
                amounts[key] = value
                amounts.spans[key] = item.spans[key]
            elif key == "gpu" and section == "limits" and value not in (None, ""):
                amounts[_BENTO_GPU] = value
                amounts.spans[_BENTO_GPU] = item.spans[key]
            elif key == "custom" and isinstance(value, YMap):
                amounts.update_from(value)
        if amounts:
            resources[section] = amounts
            resources.spans[section] = written.spans[section]
    return resources


def dynamo_component_pod(obj: YMap, component: YMap) -> YMap | None:
    """The pod one DynamoGraphDeployment v1beta1 component runs: `podTemplate.spec`, with its
    `device` (resources on the first container, tolerations, node selector) applied as the
    operator does (internal/dynamo/device.go applyDeviceSpec)."""
    spec = mapping_at(component, "podTemplate", "spec")
    device = component.get("device")
    if not spec or not isinstance(device, YMap):
        return spec or None
    pod = YMap(spec.pos)
    pod.update_from(spec)
    tolerations = device.get("tolerations")
    if isinstance(tolerations, YSeq) and tolerations:
        pod["tolerations"] = _appended(spec.get("tolerations"), tolerations)
        pod.spans["tolerations"] = spec.spans.get("tolerations", device.spans["tolerations"])
    selector = device.get("nodeSelector")
    if isinstance(selector, YMap) and selector:
        both = YMap(selector.pos)
        for source in (selector, spec.get("nodeSelector")):  # the pod's own value wins
            if isinstance(source, YMap):
                both.update_from(source)
        pod["nodeSelector"] = both
        pod.spans["nodeSelector"] = spec.spans.get("nodeSelector", device.spans["nodeSelector"])
    amounts = device.get("resources")
    containers = spec.get("containers")
    if isinstance(amounts, YMap) and amounts and isinstance(containers, YSeq) and containers:
        first = containers[0]
        if isinstance(first, YMap):
            main = YMap(first.pos)
            main.update_from(first)
            resources = YMap(device.pos_of_key("resources"))
            for section in ("requests", "limits"):
                below = mapping_at(first, "resources", section)
                items = YMap(below.pos if below else amounts.pos)
                items.update_from(below)
                items.update_from(amounts)  # the device's amounts win, requests equal limits
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


def _times(quantity: str, count: int) -> str:
    number = "".join(c for c in quantity if c.isdigit())
    return f"{int(number) * count}{quantity[len(number) :]}"


# AIBrix KVCache (orchestration.aibrix.ai, vllm-project/aibrix pkg/controller/kvcache at
# e3e10f9e): the backend annotation picks the controller (kvcache_controller.go
# getKVCacheBackendFromAnnotations: vineyard when absent), and each builds its own pods
# (backends/vineyard.go, distributed.go for hpkv and infinistore, common.go).
KVCACHE_BACKEND = "kvcache.orchestration.aibrix.ai/backend"
KVCACHE_POD_AFFINITY = "kvcache.orchestration.aibrix.ai/pod-affinity-workload"
_KVCACHE_VINEYARD = "vineyard"
_KVCACHE_BACKENDS = (_KVCACHE_VINEYARD, "hpkv", "infinistore")
_KVCACHE_GPU_TYPE = "kvcache.orchestration.aibrix.ai/node-affinity-gpu-type"
_KVCACHE_NODE_KEY = "kvcache.orchestration.aibrix.ai/node-affinity-key"
# The node label vineyard.go matches the GPU type against unless the annotation above names one.
_KVCACHE_DEFAULT_NODE_KEY = "machine.cluster.vke.volcengine.com/gpu-name"
_KVCACHE_ANTI_AFFINITY = "kvcache.orchestration.aibrix.ai/pod-anti-affinity"
# What the vineyard cache Deployment tolerates (vineyard.go buildVineyardDeployment).
_VINEYARD_TOLERATIONS = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)


def kvcache_backend(obj: YMap) -> tuple[str, Pos]:
    """The KVCache's backend and where it is written (the object's `kind` when it is not)."""
    notes = mapping_at(obj, "metadata", "annotations")
    written = notes.get(KVCACHE_BACKEND)
    if isinstance(written, str) and written:
        return written, notes.pos_of_value(KVCACHE_BACKEND)
    return _KVCACHE_VINEYARD, obj.pos_of_key("kind")


def _runtime_pod(
    name: str, runtime: YMap, extra: dict[str, Any] | None = None, resources: bool = True
) -> YMap:
    """A pod of one container, `name`, with the `resources` a KVCache RuntimeSpec writes
    (positioned as written; none unless `resources`) and `extra` pod fields (positioned at the
    runtime's mapping)."""
    pod = BuiltMap(runtime.pos)
    pod.update(_synthetic(extra or {}, runtime.pos))
    _one_container(pod, name, runtime, resources and isinstance(runtime.get("resources"), YMap))
    return pod


def kvcache_cache_pod(obj: YMap, cache: YMap) -> YMap | UnreadPart | None:
    """The cache pod of a KVCache, as its backend builds it.

    vineyard (the default): container `kvcache` with `spec.cache.resources`, tolerating
    `nvidia.com/gpu:NoSchedule`, with the node affinity, pod affinity and anti-affinity its
    annotations ask for (`spec.cache.template` is not used). hpkv and infinistore: the
    `spec.cache.template` as written when there is one, else container `kvcache-server` with
    `spec.cache.resources` and `hostIPC` (no toleration, no affinity). Another backend is
    refused by the controller: no pod.
    """
    backend, pos = kvcache_backend(obj)
    if backend not in _KVCACHE_BACKENDS:
        return UnreadPart(
            f"its backend `{shown(backend)}` is not one AIBrix's KVCache controller runs "
            f"({', '.join(_KVCACHE_BACKENDS)}): it creates no pods",
            pos,
            accelerators=False,
            fix=f"Set the `{KVCACHE_BACKEND}` annotation to one of "
            f"{', '.join(_KVCACHE_BACKENDS)}, or remove it (vineyard).",
        )
    if backend != _KVCACHE_VINEYARD:
        template = cache.get("template")
        if isinstance(template, YMap):
            spec = template.get("spec")
            return spec if isinstance(spec, YMap) else None
        return _runtime_pod("kvcache-server", cache, {"hostIPC": True})
    pod = _runtime_pod("kvcache", cache, {"tolerations": list(_VINEYARD_TOLERATIONS)})
    notes = mapping_at(obj, "metadata", "annotations")
    affinity: dict[str, Any] = {}
    gpu_type = notes.get(_KVCACHE_GPU_TYPE)
    if isinstance(gpu_type, str):
        key = notes.get(_KVCACHE_NODE_KEY)
        requirement = {
            "key": str(key) if isinstance(key, str) else _KVCACHE_DEFAULT_NODE_KEY,
            "operator": "In",
            "values": [gpu_type],
        }
        terms = {"nodeSelectorTerms": [{"matchExpressions": [requirement]}]}
        affinity["nodeAffinity"] = _synthetic(
            {"requiredDuringSchedulingIgnoredDuringExecution": terms},
            notes.pos_of_value(_KVCACHE_GPU_TYPE),
        )
    model = notes.get(KVCACHE_POD_AFFINITY)
    if isinstance(model, str):
        requirement = {"key": "model.aibrix.ai/name", "operator": "In", "values": [model]}
        selector = {"matchExpressions": [requirement]}
        term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
        affinity["podAffinity"] = _synthetic(
            {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
            notes.pos_of_value(KVCACHE_POD_AFFINITY),
        )
    if _KVCACHE_ANTI_AFFINITY in notes:
        name = str(mapping_at(obj, "metadata").get("name") or "")
        labels = {"kvcache.orchestration.aibrix.ai/name": name}
        labels["kvcache.orchestration.aibrix.ai/role"] = "cache"
        term = {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}
        affinity["podAntiAffinity"] = _synthetic(
            {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
            notes.pos_of_value(_KVCACHE_ANTI_AFFINITY),
        )
    if affinity:
        written = YMap(pos)
        for key, value in affinity.items():
            written[key] = value
            written.spans[key] = (*value.pos, *value.pos)
        pod["affinity"] = written
        pod.spans["affinity"] = (*pos, *pos)
    return pod


def kvcache_unjudged(obj: YMap) -> tuple[tuple[str, Pos], ...]:
    """What a KVCache's controller decides that gpulint does not judge: where a vineyard
    cache pod pinned beside a model's pods (`pod-affinity-workload`) can run."""
    notes = mapping_at(obj, "metadata", "annotations")
    model = notes.get(KVCACHE_POD_AFFINITY)
    if kvcache_backend(obj)[0] != _KVCACHE_VINEYARD or not isinstance(model, str):
        return ()
    return (
        (
            f"its cache pods must run on a node beside a pod of model `{shown(model)}` (the "
            "vineyard backend adds a required pod affinity on `model.aibrix.ai/name`); where "
            "those pods run is not judged, so neither is where the cache pods can: they "
            "tolerate only `nvidia.com/gpu:NoSchedule`, and a node of the model's with another "
            "taint, or without room for them, leaves them Pending",
            notes.pos_of_value(KVCACHE_POD_AFFINITY),
        ),
    )


#: The annotations naming the HardwareProfile whose resources and scheduling OpenShift AI's
#: webhook gives a Notebook's or an InferenceService's pods.
ODH_HARDWARE_PROFILE = "opendatahub.io/hardware-profile-name"
_ODH_HARDWARE_PROFILE_NAMESPACE = "opendatahub.io/hardware-profile-namespace"


def hardware_profile_unjudged(obj: YMap) -> tuple[tuple[str, Pos, str], ...]:
    """What OpenShift AI's hardware-profile webhook gives the pods of a Notebook or an
    InferenceService that names a HardwareProfile, another object gpulint does not read
    (opendatahub-io/opendatahub-operator internal/webhook/hardwareprofile/mutating.go: each
    identifier's default count as a request of every container that lacks one, the profile's
    node selector and tolerations in place of the pod's, its Kueue queue as a label)."""
    notes = mapping_at(obj, "metadata", "annotations")
    name = notes.get(ODH_HARDWARE_PROFILE)
    if not isinstance(name, str) or not name.strip():
        return ()
    namespace = notes.get(_ODH_HARDWARE_PROFILE_NAMESPACE)
    profile = f"`{shown(name)}`"
    if isinstance(namespace, str) and namespace:
        profile += f" of namespace `{shown(namespace)}`"
    return (
        (
            f"OpenShift AI gives its pods the requests of HardwareProfile {profile} "
            "(its identifiers, accelerators among them) that a container lacks, and the "
            "profile's node selector and tolerations in place of the pod's; the profile is "
            "another object, so the pods were judged as written",
            notes.pos_of_value(ODH_HARDWARE_PROFILE),
            "Write the profile's accelerator request, node selector and tolerations in the "
            "manifest too, or check the pods the operator creates (`kubectl get pods -o yaml "
            "| gpulint check -`).",
        ),
    )


def kvcache_etcd_pod(obj: YMap, etcd: YMap) -> YMap | None:
    """An etcd pod of a vineyard KVCache's `spec.metadata.etcd` (vineyard.go buildEtcdPod: no
    resources, no toleration); none for another backend, which does not run etcd."""
    runtime = etcd.get("runtime")
    if kvcache_backend(obj)[0] != _KVCACHE_VINEYARD or not isinstance(runtime, YMap):
        return None
    return _runtime_pod("etcd", runtime, resources=False)  # buildEtcdPod sets no resources


def kvcache_redis_pod(obj: YMap, redis: YMap) -> YMap | None:
    """The Redis pod of an hpkv or infinistore KVCache's `spec.metadata.redis.runtime`
    (common.go buildRedisPod, one replica whatever `replicas` says); none with an
    `externalConnection` address, or for vineyard, which does not run it."""
    runtime = redis.get("runtime")
    external = mapping_at(redis, "externalConnection").get("address")
    if kvcache_backend(obj)[0] == _KVCACHE_VINEYARD or external or not isinstance(runtime, YMap):
        return None
    return _runtime_pod("redis", runtime)


def kvcache_watcher_pod(obj: YMap, watcher: YMap) -> YMap | None:
    """The watcher pod of an hpkv or infinistore KVCache's `spec.watcher` (its `resources`);
    none for vineyard, which runs no watcher."""
    if kvcache_backend(obj)[0] == _KVCACHE_VINEYARD:
        return None
    return _runtime_pod("kvcache-watcher", watcher)


# Slinky's slurm-operator (slinky.slurm.net, api/v1beta1 nodeset_types.go): a NodeSet's pods
# run its `slurmd` container and `logfile` sidecar, written beside the pod template rather than
# in it, before the template's own containers (internal/builder/nodeset_app.go).
_LLMAZ_RUNNER = "model-runner"


def llmaz_playground_pod(obj: YMap, spec: YMap) -> YMap:
    """The pod llmaz runs for each replica of a Playground (playground_controller.go
    buildTemplate): one container, `model-runner`, whose resources are
    `backendRuntimeConfig.resources` as written over those of its BackendRuntime's recommended
    config (another object, which gives cpu and memory); no node selector, affinity or
    toleration."""
    config = mapping_at(spec, "backendRuntimeConfig")
    pod = BuiltMap(spec.pos)  # a Playground has no pod field an edit could add to
    _one_container(pod, _LLMAZ_RUNNER, config, isinstance(config.get("resources"), YMap))
    return pod


def llmaz_playground_unjudged(obj: YMap) -> tuple[tuple[str, Pos, str], ...]:
    """The flavor of the model a Playground claims, which gpulint does not judge."""
    spec = mapping_at(obj, "spec")
    claim = next((k for k in ("modelClaim", "modelClaims") if isinstance(spec.get(k), YMap)), "")
    if not claim:
        return ()
    resources = "`backendRuntimeConfig.resources`"
    return _llmaz_flavor_note(spec, claim, resources, resources)


def llmaz_service_unjudged(obj: YMap) -> tuple[tuple[str, Pos, str], ...]:
    """The flavor of the model an inference Service claims, which gpulint does not judge,
    when a template has the `model-runner` container it is given to."""
    spec = mapping_at(obj, "spec")
    if not isinstance(spec.get("modelClaims"), YMap):
        return ()
    templates = mapping_at(spec, "workloadTemplate")
    if not any(
        container.get("name") == _LLMAZ_RUNNER
        for role in ("leaderTemplate", "workerTemplate")
        for container in _containers(mapping_at(templates, role, "spec"))
    ):
        return ()
    runners = f"the `{_LLMAZ_RUNNER}` containers"
    return _llmaz_flavor_note(spec, "modelClaims", "what its templates write", runners)


def _llmaz_flavor_note(
    spec: YMap, claim: str, written: str, fix_in: str
) -> tuple[tuple[str, Pos, str], ...]:
    """llmaz's Service controller gives the `model-runner` container the limits of the claimed
    model's flavor, as requests and limits over what it has (service_controller.go
    injectModelFlavor); the model is another object. `written` names what they replace,
    `fix_in` where to write them."""
    return (
        (
            "when the OpenModel it claims has flavors, the first (or the first of "
            f"`inferenceFlavors`) sets the `{_LLMAZ_RUNNER}` container's requests and limits "
            f"of each resource it names, over {written}; the pods were judged without it",
            spec.pos_of_key(claim),
            f"Write the flavor's accelerators in {fix_in} too, or check the pods the operator "
            "creates (`kubectl get pods -o yaml | gpulint check -`).",
        ),
    )


def _containers(spec: YMap) -> Iterator[YMap]:
    containers = spec.get("containers")
    if isinstance(containers, YSeq):
        yield from (c for c in containers if isinstance(c, YMap))


_SLURM_CONTAINERS = ("slurmd", "logfile")


def slurm_nodeset_pod(obj: YMap, spec: YMap) -> YMap | None:
    """The pod a Slinky NodeSet runs: `template.spec` with the `slurmd` and `logfile`
    containers the operator builds from the fields of those names (named after them)."""
    written = mapping_at(spec, "template", "spec")
    # The pod's fields are written in `template.spec`, where an edit adds a toleration; a
    # NodeSet that writes none has no pod mapping to add to (its `spec` is no pod's).
    pod = YMap(written.pos) if written else BuiltMap(spec.pos)
    pod.update_from(written)
    containers = YSeq(spec.pos)
    for field in _SLURM_CONTAINERS:
        container = spec.get(field)
        if not isinstance(container, YMap):
            continue
        named = YMap(container.pos)
        named.update_from(container)
        if not named.get("name"):
            named["name"] = field
            named.spans["name"] = spec.spans[field]
        containers.append_at(named, container.pos)
    own = written.get("containers")
    if isinstance(own, YSeq):
        containers.extend_from(own)
    if not containers:
        return None
    pod["containers"] = containers
    pod.spans.setdefault("containers", _first_key(written) if written else (*pod.pos, *pod.pos))
    return pod


# Seldon Core 2 (mlops.seldon.io): the operator runs a Server's pods from its ServerConfig's
# `podSpec` with the Server's own `podSpec` merged in (operator/controllers/reconcilers/common/
# patch_utils.go MergePodSpecs: mergo with override and appended slices; containers merged by
# name, the Server's first, then the ServerConfig's others).


def seldon_server_pod(override: Any, config_spec: YMap, anchor: Pos) -> BuiltMap:
    """The pod spec a Seldon Server runs: `config_spec` (its ServerConfig's `podSpec`) with the
    Server's `podSpec` (`override`, None when it writes none) merged in as the operator merges
    them. What comes from the ServerConfig is positioned at `anchor` (where the Server names
    it): the Server's findings are reported in the Server's file, whatever file holds the
    ServerConfig. A built map: a fix never adds to it, its fields being written in two objects.
    """
    base = _synthetic(config_spec, anchor)
    pod = BuiltMap(override.pos if isinstance(override, YMap) else anchor)
    pod.update_from(base)
    if isinstance(override, YMap):
        _merge_into(pod, override, by_name="containers")
    return pod


# Kubeflow Trainer v2 (kubeflow/trainer pkg/apis/trainer/v1alpha1): a TrainJob's `trainer`
# overrides the `node` container of the runtime's replicated job labelled as the trainer
# step (its image, command, env and `resourcesPerNode`); the pod around it is the runtime's.
TRAINER_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def trainer_pod_spec(runtime: YMap) -> YMap | None:
    """The pod spec of a training runtime's trainer step: the replicated job whose Job
    template is labelled `trainjob-ancestor-step: trainer`, else the one named `node`."""
    spec = runtime.get("spec")
    template = spec.get("template") if isinstance(spec, YMap) else None
    jobs = template.get("spec") if isinstance(template, YMap) else None
    jobs = jobs.get("replicatedJobs") if isinstance(jobs, YMap) else None
    if not isinstance(jobs, YSeq):
        return None
    candidates = [job for job in jobs if isinstance(job, YMap)]

    def labelled(job: YMap) -> bool:
        labels = job.get("template")
        for step in ("metadata", "labels"):
            labels = labels.get(step) if isinstance(labels, YMap) else None
        return isinstance(labels, YMap) and labels.get(TRAINER_ANCESTOR_LABEL) == "trainer"

    found = next((j for j in candidates if labelled(j)), None) or next(
        (j for j in candidates if j.get("name") == "node"), None
    )
    pod: Any = found
    for step in ("template", "spec", "template", "spec"):
        pod = pod.get(step) if isinstance(pod, YMap) else None
    return pod if isinstance(pod, YMap) else None


def trainjob_pod(trainer: YMap, runtime_pod: YMap | None, anchor: Pos) -> BuiltMap:
    """The pod a TrainJob's trainer runs: the runtime's pod-level fields (its tolerations,
    nodeSelector, affinity...), positioned at `anchor` (where the TrainJob names the runtime),
    with the `trainer`'s own fields as written (`resourcesPerNode` the `node` container's
    resources). None of the runtime: the trainer alone. A built map where the trainer is: no
    edit adds to it, a TrainJob's `trainer` having no pod fields."""
    pod = BuiltMap(trainer.pos)
    if runtime_pod is not None:
        fields = {k: v for k, v in runtime_pod.items() if k not in _CONTAINER_LISTS}
        pod.update_from(_synthetic(fields, anchor))
    pod.update_from(trainer)
    return pod


def _empty(value: Any) -> bool:
    """Whether mergo leaves the destination alone for `value`: the zero value of its Go field
    (counts and quantities are pointers or structs in the API's types, never zero there)."""
    return value is None or value is False or value in ("", {}, [])


def _merge_into(target: YMap, override: YMap, by_name: str | None = None) -> None:
    """mergo.Merge(target, override, WithOverride, WithAppendSlice), on trees: a written value
    replaces the target's, mappings merge key by key, lists are appended to; the list at
    `by_name` merges its items by their `name` instead (MergeContainers)."""
    for key, value in override.items():
        if _empty(value):
            continue
        current = target.get(key)
        if key == by_name and isinstance(current, YSeq) and isinstance(value, YSeq):
            value = _merged_by_name(current, value)
        elif isinstance(current, YMap) and isinstance(value, YMap):
            merged = YMap(value.pos)
            merged.update_from(current)
            _merge_into(merged, value)
            value = merged
        elif isinstance(current, YSeq) and isinstance(value, YSeq):
            appended = YSeq(value.pos)
            for items in (current, value):
                appended.extend_from(items)
            value = appended
        target[key] = value
        target.spans[key] = override.spans[key]


def _merged_by_name(existing: YSeq, overrides: YSeq) -> YSeq:
    """The containers of MergeContainers: each override merged into the existing container of
    its name (or added), then the existing ones no override names."""
    merged = YSeq(overrides.pos)
    named = {c.get("name") for c in overrides if isinstance(c, YMap)}
    for item, pos in zip(overrides, overrides.item_pos, strict=False):
        name = item.get("name") if isinstance(item, YMap) else None
        match = next((c for c in existing if isinstance(c, YMap) and c.get("name") == name), None)
        if match is not None and name is not None:
            container = YMap(item.pos)
            container.update_from(match)
            _merge_into(container, item)
            item = container
        merged.append_at(item, pos)
    for item, pos in zip(existing, existing.item_pos, strict=False):
        if not (isinstance(item, YMap) and item.get("name") in named):
            merged.append_at(item, pos)
    return merged


# Seldon Core 1 (machinelearning.seldon.io): the operator adds its service orchestrator, the
# `seldon-container-engine` container, to the pod of a predictor's first componentSpec
# (apis/machinelearning.seldon.io/v1/defaults.go: compSpecIdx 0 gets the engine), unless the
# deployment runs it in a pod of its own (`seldon.io/engine-separate-pod: "true"`) or the
# predictor runs without it (`seldon.io/no-engine`); its resources are the predictor's
# `svcOrchSpec.resources`, else the operator's defaults (constants.go DefaultExecutor*: 0.5
# cpu and 512Mi, requested and limited).
_SELDON_ENGINE = "seldon-container-engine"
_SELDON_ENGINE_DEFAULTS = {"cpu": "500m", "memory": "512Mi"}


def seldon_component_pod(obj: YMap, component: YMap) -> YMap | None:
    """The pod of one componentSpec of a SeldonDeployment: its `spec` as written, plus the
    service orchestrator container when this is its predictor's first componentSpec."""
    spec = component.get("spec")
    if not isinstance(spec, YMap):
        return None
    annotations = mapping_at(obj, "spec", "annotations")
    if str(annotations.get("seldon.io/engine-separate-pod", "")).lower() == "true":
        return spec
    for predictor in mapping_at(obj, "spec").get("predictors") or ():
        if not isinstance(predictor, YMap):
            continue
        components = predictor.get("componentSpecs")
        if not isinstance(components, YSeq) or not components or components[0] is not component:
            continue
        if "seldon.io/no-engine" in mapping_at(predictor, "annotations"):
            return spec
        return _with_engine(spec, predictor, predictor.pos_of_key("componentSpecs"))
    return spec


def _with_engine(spec: YMap, predictor: YMap, pos: Pos) -> YMap:
    """`spec` with the engine container appended, positioned at `pos` unless the predictor
    writes its resources (`svcOrchSpec.resources`)."""
    written = mapping_at(predictor, "svcOrchSpec").get("resources")
    engine = YMap(pos)
    engine["name"] = _SELDON_ENGINE
    engine.spans["name"] = (*pos, *pos)
    if isinstance(written, YMap):
        engine["resources"] = written
        engine.spans["resources"] = mapping_at(predictor, "svcOrchSpec").spans["resources"]
    else:
        defaults = dict(_SELDON_ENGINE_DEFAULTS)
        engine["resources"] = _synthetic({"requests": defaults, "limits": defaults}, pos)
        engine.spans["resources"] = (*pos, *pos)
    containers = YSeq(pos)
    own = spec.get("containers")
    if isinstance(own, YSeq):
        containers.extend_from(own)
    containers.append_at(engine, pos)
    return spec.with_entry("containers", containers, pos)


# Kthena (volcano-sh/kthena): a ModelBooster's controller writes a ModelServing from
# `spec.backend` (pkg/model-booster-controller/convert/model_serving.go BuildModelServing, the
# templates/vllm.yaml and vllm-pd.yaml it fills). It uses the last worker of each type its
# backend type runs: a vLLM backend's `server` (default type), a vLLMDisaggregated backend's
# `prefill` and `decode`. Every pod takes the worker's `affinity` and `tolerations` and the
# backend's `runtimeClassName`; the engine container (`engine`, `vllm` for prefill/decode, the
# `<backend>-vllm-worker` of a server's worker pods) the worker's `image` and `resources`. The
# runtime sidecar and the model downloader (images from the controller's configuration)
# request nothing.
_KTHENA_WORKERS = {"vLLM": ("server",), "vLLMDisaggregated": ("prefill", "decode")}
_KTHENA_SERVER = "server"


def kthena_entry_pod(obj: YMap, worker: YMap) -> YMap | UnreadPart | None:
    """The entry pod of one copy of a ModelBooster worker; None for a worker its backend
    does not use; UnreadPart for a backend type Kthena builds nothing for."""
    backend = mapping_at(obj, "spec", "backend")
    kind = backend.get("type")
    if kind not in _KTHENA_WORKERS:
        where = backend.pos_of_value("type") if "type" in backend else backend.pos
        return UnreadPart(
            f"Kthena builds no ModelServing for backend type `{shown(kind)}` "
            "(only vLLM and vLLMDisaggregated)",
            where,
        )
    used = _kthena_used(backend, worker, _KTHENA_WORKERS[str(kind)])
    if used is None:
        return None
    engine = "engine" if used == _KTHENA_SERVER else "vllm"
    return _kthena_pod(backend, worker, engine)


def kthena_worker_pod(obj: YMap, worker: YMap) -> YMap | None:
    """The worker pod of a vLLM backend's `server` that spans several pods (`pods` > 1)."""
    backend = mapping_at(obj, "spec", "backend")
    pods = worker.get("pods")
    if not isinstance(pods, int) or isinstance(pods, bool) or pods <= 1:
        return None  # `workerReplicas: 0`: the entry pod alone
    if backend.get("type") != "vLLM" or _kthena_used(backend, worker, (_KTHENA_SERVER,)) is None:
        return None
    name = backend.get("name")
    return _kthena_pod(backend, worker, f"{str(name).lower()}-vllm-worker")


def _kthena_used(backend: YMap, worker: YMap, types: tuple[str, ...]) -> str | None:
    """The worker's type when the backend uses it: one of `types`, and the last worker of
    that type (mapWorkers keeps the last)."""
    kind = worker.get("type") or _KTHENA_SERVER
    if kind not in types:
        return None
    workers = backend.get("workers")
    same = [w for w in workers if isinstance(w, YMap) and (w.get("type") or _KTHENA_SERVER) == kind]
    return str(kind) if same and same[-1] is worker else None


def _kthena_pod(backend: YMap, worker: YMap, container_name: str) -> BuiltMap:
    """A pod with the worker's placement and one container, `container_name`, with its image
    and resources as written."""
    pod = BuiltMap(worker.pos)
    for source, key in (
        (backend, "runtimeClassName"),
        (worker, "affinity"),
        (worker, "tolerations"),
    ):
        if source.get(key) is not None:
            pod[key] = source[key]
            pod.spans[key] = source.spans[key]
    container = YMap(worker.pos)
    container["name"] = container_name
    container.spans["name"] = (*worker.pos, *worker.pos)
    for key in ("image", "resources"):
        if key in worker:
            container[key] = worker[key]
            container.spans[key] = worker.spans[key]
    containers = YSeq(worker.pos)
    containers.append_at(container, worker.pos)
    pod["containers"] = containers
    pod.spans["containers"] = (*worker.pos, *worker.pos)
    return pod


# RBG (sgl-project/rbg): the patches its controller merges into a leader-worker role's
# template for the leader and the workers (applyStrategicMergePatch), by API version.
_RBG_PATCHES = {
    "leaderWorkerPattern": ("leaderTemplatePatch", "workerTemplatePatch"),
    "leaderWorkerSet": ("patchLeaderTemplate", "patchWorkerTemplate"),
}


# What a patch may change in a container without changing any verdict of gpulint's: how the
# program starts and talks (its image, resources, probes and security do matter).
_RBG_INERT_CONTAINER = frozenset(
    {
        "name",
        "env",
        "envFrom",
        "command",
        "args",
        "ports",
        "workingDir",
        "volumeMounts",
        "readinessProbe",
        "startupProbe",
    }
)


def _inert_patch(patch: Any) -> bool:
    """Whether a pod template patch changes nothing gpulint judges: the pods' labels, and
    their containers' environment, command and ports."""
    if not isinstance(patch, YMap):
        return not patch
    metadata, spec = patch.get("metadata"), patch.get("spec")
    if not set(patch) <= {"metadata", "spec"}:
        return False
    if isinstance(metadata, YMap) and not set(metadata) <= {"labels"}:
        return False
    if not isinstance(spec, YMap):
        return spec is None
    for key, containers in spec.items():
        if key not in ("containers", "initContainers") or not isinstance(containers, YSeq):
            return False
        for container in containers:
            if not isinstance(container, YMap) or not set(container) <= _RBG_INERT_CONTAINER:
                return False
    return True


def rbg_unjudged(obj: YMap) -> tuple[tuple[str, Pos, str], ...]:
    """The leader and worker patches of a RoleBasedGroup's roles that change what gpulint
    judges: the controller merges them into the role's template, gpulint reads the template
    alone."""
    roles = mapping_at(obj, "spec").get("roles")
    notes: list[tuple[str, Pos, str]] = []
    for role in roles if isinstance(roles, YSeq) else ():
        for pattern, patches in _RBG_PATCHES.items():
            holder = role.get(pattern) if isinstance(role, YMap) else None
            if not isinstance(holder, YMap):
                continue
            for key in patches:
                if key in holder and not _inert_patch(holder.get(key)):
                    notes.append(
                        (
                            f"role `{shown(role.get('name'))}`: `{pattern}.{key}` is merged into "
                            "its template for those pods (a strategic merge patch); the pods "
                            "were judged as the template writes them",
                            holder.pos_of_key(key),
                            "Check the pods the controller creates "
                            "(`kubectl get pods -o yaml | gpulint check -`).",
                        )
                    )
    return tuple(notes)


# The Spark operator (kubeflow/spark-operator, sparkoperator.k8s.io/v1beta2, at 38082f3). The
# controller runs spark-submit with the application's `sparkConf` first and the options it
# makes of the driver's and executor's fields after them, which win (internal/controller/
# sparkapplication/submission.go buildSparkSubmitArgs, driverConfOption, executorConfOption,
# nodeSelectorOption, dynamicAllocationOption). Spark builds each pod from its pod template (the
# role's `template`, which the operator writes to the template file, else one container) and
# that configuration (apache/spark resource-managers/kubernetes/core/src/main/scala/org/apache/
# spark/deploy/k8s/features/BasicDriverFeatureStep.scala and BasicExecutorFeatureStep.scala,
# configurePod). The operator's pod webhook then adds what Spark has no setting for
# (internal/webhook/sparkpod_defaulter.go mutateSparkPod): that webhook is needed, and enabled by
# the chart's default (`webhook.enable: true`).
# The Spark container's name is Spark's own, as the operator names it in the template file it
# writes (pkg/common/spark.go SparkDriverContainerName, Spark3DefaultExecutorContainerName).
# A main resource that is no JVM one (spark-submit reads a `.py`, `.R` or `.r` main file as a
# Python or R application: SparkSubmit isPython, isR): its memory overhead factor is 0.4
# (BasicDriverFeatureStep defaultOverheadFactor, Constants NON_JVM_MEMORY_OVERHEAD_FACTOR).
_SPARK_NON_JVM = (".py", ".R", ".r")
_SPARK_OVERHEAD_FACTOR = (Decimal("0.1"), Decimal("0.4"))  # JVM, non-JVM
_SPARK_OVERHEAD_MIN_MIB = 384  # ResourceProfile.MEMORY_OVERHEAD_MIN_MIB
_SPARK_FACTOR_MAX = 100
# What the operator's SparkApplication webhook writes where the application sets nothing
# (api/v1beta2/defaults.go setDriverSpecDefaults, setExecutorSpecDefaults): one core and 1g.
_SPARK_DEFAULT_CORES = 1
_SPARK_DEFAULT_MEMORY = "1g"
# JavaUtils.byteStringAs: a whole number and an optional unit, case-insensitive.
_JAVA_BYTES = r"([0-9]{1,30})([a-z]*)"
_JAVA_UNITS = {"b": 0, "k": 1, "kb": 1, "m": 2, "mb": 2, "g": 3, "gb": 3, "t": 4, "tb": 4}
_JAVA_UNITS |= {"p": 5, "pb": 5}
# pkg/util/util.go ConvertJavaMemoryStringToK8sMemoryString, for a role's `memoryLimit`.
# (Its suffixes do not end one another, so which it tries first does not matter.)
_K8S_UNITS = {f"{u}{b}": f"{u.upper()}i" for u in "kmgtp" for b in ("b", "")}


def spark_application(obj: YMap) -> YMap:
    """The SparkApplicationSpec of a SparkApplication (`spec`) or of a
    ScheduledSparkApplication (`spec.template`, which its controller creates a SparkApplication
    of at each run: internal/controller/scheduledsparkapplication/controller.go)."""
    if obj.get("kind") == "ScheduledSparkApplication":
        return mapping_at(obj, "spec", "template")
    return mapping_at(obj, "spec")


def _spark_path(obj: YMap) -> str:
    """Where `spark_application` is, as messages name it."""
    return "spec.template" if obj.get("kind") == "ScheduledSparkApplication" else "spec"


def _spark_setting(role: YMap, field: str, conf: YMap, key: str) -> tuple[Any, YMap, str] | None:
    """What Spark gets for `key`: the role's `field` when written (the operator's `--conf`
    follows the application's `sparkConf` and wins), else the `sparkConf` entry; with the
    mapping and key that hold it. None when neither is written."""
    if field and role.get(field) is not None:
        return role[field], role, field
    if key and conf.get(key) is not None:
        return conf[key], conf, key
    return None


def _java_mib(value: Any) -> int | None:
    """A JVM memory setting in MiB, as Spark reads one whose unit is MiB by default
    (`512m`, `2g`, `1024`); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    found = re.fullmatch(_JAVA_BYTES, str(value).strip().lower())
    if found is None:
        return None
    unit = _JAVA_UNITS.get(found[2]) if found[2] else 2
    return None if unit is None else int(found[1]) * 1024**unit // 1024**2


def _whole(value: Any) -> int | None:
    """A positive whole number, written as one or as a string of digits (a `sparkConf`
    value); None for anything else."""
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _spark_factor(obj: YMap, conf: YMap, role: str) -> Decimal:
    """The memory overhead factor of a role's pod: `spark.<role>.memoryOverheadFactor`, else
    the application's `memoryOverheadFactor` (the operator's `spark.kubernetes.
    memoryOverheadFactor`), else that key in `sparkConf`, else 0.1, or 0.4 for a Python or R
    main file (BasicDriverFeatureStep memoryOverheadFactor, which the executors inherit)."""
    spec = spark_application(obj)
    for holder, key in (
        (conf, f"spark.{role}.memoryOverheadFactor"),
        (spec, "memoryOverheadFactor"),
        (conf, "spark.kubernetes.memoryOverheadFactor"),
    ):
        written = holder.get(key)
        if isinstance(written, (str, int, float)) and not isinstance(written, bool):
            try:
                factor = Decimal(str(written).strip())
            except ArithmeticError:
                continue
            # Spark takes a share of the memory (spark.kubernetes.memoryOverheadFactor must be
            # below 1); a bound keeps an attacker's `1e99999999` from costing the run.
            if factor.is_finite() and 0 <= factor <= _SPARK_FACTOR_MAX:
                return factor
    main = spec.get("mainApplicationFile")
    return _SPARK_OVERHEAD_FACTOR[isinstance(main, str) and main.endswith(_SPARK_NON_JVM)]


def _spark_memory(obj: YMap, conf: YMap, role: str, spec: YMap) -> tuple[int, YMap, str] | None:
    """The memory Spark requests and limits for a role's pod, in MiB: its memory and its
    overhead, the overhead written (`memoryOverhead`) or the larger of the factor's share and
    the minimum (`spark.<role>.minMemoryOverhead`, 384 MiB by default); with where the memory is
    written. What Spark adds beyond (off-heap memory, a Python executor's `pyspark.memory`) is
    left out: the pod asks for at least this much. None when the memory is not readable."""
    setting = _spark_setting(spec, "memory", conf, f"spark.{role}.memory")
    value, holder, key = setting or (_SPARK_DEFAULT_MEMORY, spec, "")
    memory = _java_mib(value)
    if memory is None:
        return None
    overhead_setting = _spark_setting(spec, "memoryOverhead", conf, f"spark.{role}.memoryOverhead")
    overhead = _java_mib(overhead_setting[0]) if overhead_setting else None
    if overhead is None:
        least = _java_mib(conf.get(f"spark.{role}.minMemoryOverhead"))
        share = int(_spark_factor(obj, conf, role) * memory)
        overhead = max(share, _SPARK_OVERHEAD_MIN_MIB if least is None else least)
    return memory + overhead, holder, key


def _put(target: YMap, name: str, value: Any, holder: YMap, key: str, fallback: Pos) -> None:
    """Set `target[name]`, positioned where `holder` writes `key` (at `fallback` when it is a
    default no field writes)."""
    target[name] = value
    if key and key in holder.spans:
        target.spans[name] = holder.spans[key]
    else:
        target.spans[name] = (*fallback, *fallback)


def spark_gpus(conf: YMap, role: str) -> list[tuple[str, Any, Pos, Pos]]:
    """The accelerators Spark limits a role's pod to: `<vendor>/<name>` for each
    `spark.<role>.resource.<name>.amount` whose `.vendor` is set (KubernetesUtils
    buildResourcesQuantities, BasicExecutorFeatureStep buildExecutorResourcesQuantities), as
    (resource, amount, where the vendor is written, where the amount is)."""
    found = []
    for key in conf:
        if not isinstance(key, str) or not key.endswith(".amount"):
            continue
        parts = key.split(".")
        if len(parts) != 5 or parts[:3] != ["spark", role, "resource"]:
            continue
        prefix = key[: -len("amount")]
        vendor = conf.get(prefix + "vendor")
        amount = conf[key]
        if not isinstance(vendor, str) or not vendor or amount in (0, "0", None):
            continue
        vendor_pos = conf.pos_of_value(prefix + "vendor")
        found.append((f"{vendor}/{parts[3]}", amount, vendor_pos, conf.pos_of_value(key)))
    return found


def _spark_resources(
    obj: YMap, conf: YMap, role: str, spec: YMap, below: Any, pos: Pos
) -> YMap | None:
    """The resources of a role's Spark container: those its template writes (`below`), with
    Spark's cpu request, memory request and limit, cpu limit and accelerator limits written
    over them, then the webhook's memory limit and `gpu` (addMemoryLimit, addGPU)."""
    resources = YMap(pos)
    sections = {}
    for section in ("requests", "limits"):
        written = below.get(section) if isinstance(below, YMap) else None
        items = YMap(written.pos if isinstance(written, YMap) else pos)
        if isinstance(written, YMap):
            items.update_from(written)
        sections[section] = items
    requests, limits = sections["requests"], sections["limits"]
    # cpu: `coreRequest` (spark.kubernetes.<role>.request.cores), else the cores.
    cores = _spark_setting(spec, "cores", conf, f"spark.{role}.cores")
    request = _spark_setting(spec, "coreRequest", conf, f"spark.kubernetes.{role}.request.cores")
    if request is not None and isinstance(request[0], (str, int)):
        _put(requests, "cpu", request[0], request[1], request[2], pos)
    elif cores is None:
        _put(requests, "cpu", str(_SPARK_DEFAULT_CORES), spec, "", pos)
    elif _whole(cores[0]) is not None:
        _put(requests, "cpu", str(_whole(cores[0])), cores[1], cores[2], pos)
    memory = _spark_memory(obj, conf, role, spec)
    if memory is not None:
        total, holder, key = memory
        _put(requests, "memory", f"{total}Mi", holder, key, pos)
        _put(limits, "memory", f"{total}Mi", holder, key, pos)
    limit = _spark_setting(spec, "coreLimit", conf, f"spark.kubernetes.{role}.limit.cores")
    if limit is not None and isinstance(limit[0], (str, int)):
        _put(limits, "cpu", limit[0], limit[1], limit[2], pos)
    for name, amount, vendor_pos, amount_pos in spark_gpus(conf, role):
        limits[name] = amount
        limits.spans[name] = (*vendor_pos, *amount_pos)
    written = spec.get("memoryLimit")
    if isinstance(written, str) and written.strip():
        text = written.strip().lower()
        unit = next((u for u in _K8S_UNITS if text.endswith(u)), None)
        value = text[: -len(unit)] + _K8S_UNITS[unit] if unit else written.strip()
        _put(limits, "memory", value, spec, "memoryLimit", pos)
    gpu = spec.get("gpu")
    if isinstance(gpu, YMap):
        name, quantity = gpu.get("name"), gpu.get("quantity")
        if isinstance(name, str) and name and _whole(quantity) is not None:
            limits[name] = quantity
            limits.spans[name] = (*gpu.pos_of_value("name"), *gpu.pos_of_value("quantity"))
    for section, items in sections.items():
        if items:
            resources[section] = items
            resources.spans[section] = (*items.pos, *items.pos)
    return resources


def _spark_selector(obj: YMap, conf: YMap, role: str, spec: YMap, below: Any) -> YMap | None:
    """The node selector of a role's pod: its template's, with Spark's
    `spark.kubernetes.node.selector.*` (the application's `nodeSelector` among them, after
    `sparkConf`) and `spark.kubernetes.<role>.node.selector.*` added (BasicDriverFeatureStep,
    BasicExecutorFeatureStep addToNodeSelector), then the role's `nodeSelector`, which the
    webhook adds last (addNodeSelectors)."""
    selector = YMap(below.pos if isinstance(below, YMap) else spec.pos)
    if isinstance(below, YMap):
        selector.update_from(below)
    sources: list[tuple[YMap, str]] = [
        (conf, "spark.kubernetes.node.selector."),
        (mapping_at(spark_application(obj), "nodeSelector"), ""),
        (conf, f"spark.kubernetes.{role}.node.selector."),
        (mapping_at(spec, "nodeSelector"), ""),
    ]
    for holder, prefix in sources:
        for key, value in holder.items():
            if isinstance(key, str) and key.startswith(prefix) and len(key) > len(prefix):
                selector[key[len(prefix) :]] = value
                selector.spans[key[len(prefix) :]] = holder.spans[key]
    return selector or None


def _spark_containers(
    obj: YMap, role: str, spec: YMap, pod: YMap, template_spec: YMap
) -> list[int]:
    """Give `pod` its containers: the template's, its Spark container (the one named
    `spark-kubernetes-<role>`, else the first: KubernetesUtils.selectSparkContainer; a new one
    without a template) with the resources Spark and the webhook give it, and the role's
    `sidecars` and `initContainers` the webhook adds (addSidecarContainers, addInitContainers).
    Gives the id()s of the template's mappings the new container replaces."""
    conf = mapping_at(spark_application(obj), "sparkConf")
    written = template_spec.get("containers")
    others = [c for c in written if isinstance(c, YMap)] if isinstance(written, YSeq) else []
    name = SPARK_CONTAINERS[role]
    base = next((c for c in others if c.get("name") == name), others[0] if others else None)
    main = YMap(base.pos if base is not None else spec.pos)
    if base is not None:
        main.update_from(base)
    else:
        _put(main, "name", name, spec, "", spec.pos)
    image = _spark_setting(spec, "image", spark_application(obj), "image")
    if image is not None and isinstance(image[0], str) and image[0]:
        _put(main, "image", image[0], image[1], image[2], spec.pos)
    resources = _spark_resources(obj, conf, role, spec, main.get("resources"), spec.pos)
    main["resources"] = resources
    main.spans["resources"] = (*resources.pos, *resources.pos)
    containers = YSeq(written.pos if isinstance(written, YSeq) else spec.pos)
    for index, item in enumerate(written if isinstance(written, YSeq) else ()):
        containers.append_at(main if item is base else item, written.pos_of_item(index))
    if base is None:
        containers.append_at(main, spec.pos)
    init = YSeq(spec.pos)
    for source in (template_spec.get("initContainers"), spec.get("initContainers")):
        if isinstance(source, YSeq):
            init.extend_from(source)
    sidecars = spec.get("sidecars")
    if isinstance(sidecars, YSeq):
        containers.extend_from(sidecars)
    pod["containers"] = containers
    pod.spans["containers"] = (*containers.pos, *containers.pos)
    if init:
        pod["initContainers"] = init
        pod.spans["initContainers"] = (*init.pos, *init.pos)
    return [] if base is None else [id(base), id(base.get("resources"))]


def _spark_pod(obj: YMap, spec: YMap, role: str) -> YMap | None:
    """The pod one role of a SparkApplication runs (see above): its `template` (the pod
    fields it writes), the Spark container, the node selector Spark and the webhook give it,
    and the webhook's tolerations (appended), affinity and priority class (which replace the
    template's: addTolerations, addAffinity, addPriorityClassName)."""
    template = spec.get("template")
    template_spec = mapping_at(template, "spec")
    read = [id(spec), id(spec.get("gpu")), *(id(v) for v in (template, template_spec) if v)]
    pod = BuiltMap(spec.pos)
    for key, value in template_spec.items():
        if key not in ("containers", "initContainers", "nodeSelector"):
            pod[key] = value
            pod.spans[key] = template_spec.spans[key]
    read += _spark_containers(obj, role, spec, pod, template_spec)
    conf = mapping_at(spark_application(obj), "sparkConf")
    selector = _spark_selector(obj, conf, role, spec, template_spec.get("nodeSelector"))
    if selector is not None:
        pod["nodeSelector"] = selector
        pod.spans["nodeSelector"] = spec.spans.get("nodeSelector", (*selector.pos, *selector.pos))
    tolerations = spec.get("tolerations")
    # Even an empty list: a finding about what the pod does not tolerate points at it.
    if isinstance(tolerations, YSeq):
        pod["tolerations"] = _appended(template_spec.get("tolerations"), tolerations)
        pod.spans["tolerations"] = spec.spans["tolerations"]
    for field in ("affinity", "priorityClassName"):
        if spec.get(field):
            pod[field] = spec[field]
            pod.spans[field] = spec.spans[field]
    pod.read_from = tuple(read)
    return pod


def spark_driver_pod(obj: YMap, driver: YMap) -> YMap | None:
    """The driver pod of a SparkApplication; none unless it runs in `cluster` mode (in client
    mode the driver is the spark-submit process of the operator, or a pod the user runs)."""
    mode = spark_application(obj).get("mode", "cluster")
    return _spark_pod(obj, driver, "driver") if mode in ("cluster", None) else None


def spark_executor_pod(obj: YMap, executor: YMap) -> YMap | None:
    """The pod of each executor of a SparkApplication."""
    return _spark_pod(obj, executor, "executor")


class SparkExecutors(NamedTuple):
    """How many executors a SparkApplication runs (SchedulerBackendUtils
    getInitialTargetExecutorNumber; Utils.getDynamicAllocationInitialExecutors)."""

    start: ReplicaCount  # the executors Spark asks for as it starts
    # With dynamic allocation: the most it scales to, and where that is written; None when
    # nothing bounds it (Spark's default maxExecutors is Int.MaxValue).
    maximum: tuple[int, Pos] | None = None
    minimum: int = 0  # with dynamic allocation: the fewest it keeps (minExecutors, 0)
    dynamic: Pos | None = None  # where dynamic allocation is turned on, when it is


_GO_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})


def _go_bool(value: Any) -> bool:
    """strconv.ParseBool's true (the operator's defaulter reads `sparkConf` with it)."""
    return value is True or (isinstance(value, str) and value in _GO_TRUE)


def spark_executors(obj: YMap) -> SparkExecutors:
    """The executor count of a SparkApplication as Spark computes it from the options the
    operator gives it, after the operator's defaulter (api/v1beta2/defaults.go
    setExecutorSpecDefaults: one instance when neither `instances` nor
    `spark.executor.instances` is written and it does not see dynamic allocation on)."""
    spec = spark_application(obj)
    conf = mapping_at(spec, "sparkConf")
    executor = mapping_at(spec, "executor")
    allocation = spec.get("dynamicAllocation")
    enabled = isinstance(allocation, YMap) and allocation.get("enabled") is True
    written = conf.get("spark.dynamicAllocation.enabled")
    dynamic = enabled or (isinstance(written, str) and written.strip().lower() == "true")
    if isinstance(allocation, YMap):
        operator_dynamic = enabled
    else:
        operator_dynamic = _go_bool(conf.get("spark.dynamicallocation.enabled"))
    found = _spark_setting(executor, "instances", conf, "spark.executor.instances")
    instances = _whole(found[0]) if found else None
    if instances is not None and found is not None:
        start = ReplicaCount(instances, found[2], found[1].pos_of_key(found[2]))
    elif not operator_dynamic:
        start = ReplicaCount(1, "instances", None)
    else:
        # Spark's own default, two, when it is not dynamic after all.
        start = ReplicaCount(0 if dynamic else 2, "instances", None)
    if not dynamic:
        return SparkExecutors(start)

    def setting(field: str) -> tuple[int, Pos] | None:
        # The operator writes the spec's bounds after `sparkConf`, when it turns them on.
        holder = allocation if enabled and isinstance(allocation, YMap) else None
        if holder is not None and _whole(holder.get(field)) is not None:
            return _whole(holder[field]) or 0, holder.pos_of_key(field)
        key = f"spark.dynamicAllocation.{field}"
        if _whole(conf.get(key)) is not None or conf.get(key) in ("0", 0):
            return _whole(conf[key]) or 0, conf.pos_of_key(key)
        return None

    least = setting("minExecutors")
    initial = setting("initialExecutors")
    where = (
        allocation.pos_of_key("enabled")
        if enabled
        else conf.pos_of_key("spark.dynamicAllocation.enabled")
    )
    for field, bound in (("minExecutors", least), ("initialExecutors", initial)):
        if bound is not None and bound[0] > start.value:
            start = ReplicaCount(bound[0], field, bound[1])
    if start.pos is None and start.value == 0:
        start = ReplicaCount(start.value, "initialExecutors", None)
    return SparkExecutors(start, setting("maxExecutors"), least[0] if least else 0, where)


def spark_executor_count(obj: YMap, executor: YMap) -> ReplicaCount:
    """The executors a SparkApplication starts with; not known when dynamic allocation scales
    them with no `maxExecutors` (gpulint.replicas reads a bounded one as an autoscaler)."""
    found = spark_executors(obj)
    if found.dynamic is not None and found.maximum is None:
        return found.start._replace(unknown="not bounded: no maxExecutors")
    return found.start


def spark_unjudged(obj: YMap) -> tuple[tuple[str, Pos, str], ...]:
    """What a SparkApplication's pods depend on that gpulint does not read: executors that
    dynamic allocation scales without bound, and a pod template file `sparkConf` names for a
    role without a `template` (the operator's releases pass it on to Spark: submission.go
    driverPodTemplateOption writes a file of its own only from the role's `template`)."""
    notes: list[tuple[str, Pos, str]] = []
    found = spark_executors(obj)
    if found.dynamic is not None and found.maximum is None:
        notes.append(
            (
                "dynamic allocation scales its executors with no `maxExecutors` (Spark's "
                "default has no bound): how many run, and so GPU capacity and quota, were "
                "not judged",
                found.dynamic,
                f"Set `{_spark_path(obj)}.dynamicAllocation.maxExecutors` to the most "
                "executors the cluster should run at once.",
            )
        )
    conf = mapping_at(spark_application(obj), "sparkConf")
    for role in ("driver", "executor"):
        key = f"spark.kubernetes.{role}.podTemplateFile"
        if conf.get(key) and "template" not in mapping_at(spark_application(obj), role):
            notes.append(
                (
                    f"`{key}` names a pod template file, on which Spark builds the {role} "
                    f"pods (the operator writes its own only from `{role}.template`); gpulint "
                    f"does not join a file of the operator's image to the application: the "
                    f"{role} pods were judged without it",
                    conf.pos_of_key(key),
                    f"Write the pod template in `{_spark_path(obj)}.{role}.template` instead "
                    "(or check the file on its own: docs/workloads.md, Pod template files).",
                )
            )
    return tuple(notes)


# actions-runner-controller's legacy API (actions.summerwind.dev, apis/actions.summerwind.net/
# v1alpha1 runner_types.go RunnerSpec): a Runner's pod is built by newPod (controllers/
# actions.summerwind.net/runner_controller.go). Without `containers` it runs a `runner`
# container with the spec's `resources` and, unless docker is off (`dockerEnabled: false`), in
# the runner (`dockerdWithinRunnerContainer`) or dropped (`containerMode: kubernetes`), a
# `docker` one with `dockerdContainerResources`. With `containers`, those run (a `docker` one
# dropped in `containerMode: kubernetes`), the `runner` and `docker` ones taking those fields'
# requests and limits where they write none; a `runner` or `docker` one they lack is added
# without resources (newRunnerPodWithContainerMode), `resources` then going to none. The
# `sidecarContainers` follow; these pod fields are copied as written.
_ARC_RUNNER = "runner"
_ARC_DOCKER = "docker"
_ARC_POD_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "priorityClassName",
    "topologySpreadConstraints",
    "runtimeClassName",
    "initContainers",
    "ephemeralContainers",
    "serviceAccountName",
)


def arc_runner_pod(obj: YMap, spec: YMap) -> YMap:
    """The pod actions-runner-controller runs for a Runner of this RunnerSpec (a Runner's
    `spec`, a RunnerDeployment's or RunnerReplicaSet's `template.spec`)."""
    pod = YMap(spec.pos)  # the runner spec holds the pod's fields: an edit adds them there
    for key in _ARC_POD_FIELDS:
        if key in spec:
            pod[key] = spec[key]
            pod.spans[key] = spec.spans[key]
    fields = {_ARC_RUNNER: "resources", _ARC_DOCKER: "dockerdContainerResources"}
    kubernetes = spec.get("containerMode") == "kubernetes"
    docker = (
        spec.get("dockerEnabled") is not False
        and spec.get("dockerdWithinRunnerContainer") is not True
        and not kubernetes
    )
    written = spec.get("containers")
    containers = YSeq(written.pos if isinstance(written, YSeq) else spec.pos)
    if isinstance(written, YSeq) and written:
        names = {c.get("name") for c in written if isinstance(c, YMap)}
        if _ARC_RUNNER not in names:  # added first, bare (newRunnerPodWithContainerMode)
            containers.append_at(_arc_container(_ARC_RUNNER, written, None), written.pos)
        for item, pos in zip(written, written.item_pos, strict=True):
            name = item.get("name") if isinstance(item, YMap) else None
            if kubernetes and name == _ARC_DOCKER:
                continue
            field = fields.get(name) if isinstance(name, str) else None
            containers.append_at(item if field is None else _arc_defaulted(item, spec, field), pos)
        if docker and _ARC_DOCKER not in names:  # added last, bare
            containers.append_at(_arc_container(_ARC_DOCKER, written, None), written.pos)
    else:
        for name, field in fields.items():
            if name == _ARC_RUNNER or docker:
                containers.append_at(_arc_container(name, spec, field), spec.pos)
    sidecars = spec.get("sidecarContainers")
    if isinstance(sidecars, YSeq):
        containers.extend_from(sidecars)
    return _with_containers(pod, containers, spec)


def _arc_container(name: str, spec: YMap | YSeq, field: str | None) -> YMap:
    """A container the controller adds, `name`, with the spec's `field` as its resources."""
    container = YMap(spec.pos)
    container["name"] = name
    container.spans["name"] = (*spec.pos, *spec.pos)
    if field is not None and isinstance(spec, YMap) and isinstance(spec.get(field), YMap):
        container["resources"] = spec[field]
        container.spans["resources"] = spec.spans[field]
    return container


def _arc_defaulted(container: YMap, spec: YMap, field: str) -> YMap:
    """A written `runner` or `docker` container with the spec's `field` requests and limits
    where it writes none (an empty section is none)."""
    given = spec.get(field)
    if not isinstance(given, YMap):
        return container
    own = container.get("resources")
    own = own if isinstance(own, YMap) else YMap(given.pos)
    resources = YMap(own.pos)
    resources.update_from(own)
    for section in ("requests", "limits"):
        if not own.get(section) and isinstance(given.get(section), YMap):
            resources[section] = given[section]
            resources.spans[section] = given.spans[section]
    if resources == own:
        return container
    return container.with_entry("resources", resources, given.pos)
