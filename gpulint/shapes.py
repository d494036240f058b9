"""The table of workload shapes: where each kind keeps its pod template(s) and replica counts.

Kinds are data (`WorkloadShape`), so a custom resource is added by adding a shape (users do so
with `workloads:` in the config). A shape lists its roles: each role is a dotted path from the
object root to the mapping that declares it, where `*` steps over every value of a mapping (the
key names the role, as in `spec.pytorchReplicaSpecs.*`) and `name[]` over every item of a list
(a field of the item names the role, as `groupName` in `spec.workerGroupSpecs[]`). From the
role's mapping, `template` leads to the pod template and `counts` are the fields whose product
is the number of pods the role runs. A role whose pod an operator builds from other fields
names the builder (`derive`, gpulint.operators). The typed walk (gpulint.workloads) reads
documents by these shapes.
"""

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gpulint.data.kserve import KSERVE_FORMATS
from gpulint.data.spark import SPARK_CONTAINERS
from gpulint.model import (
    ContainerRole,
    Document,
    ReplicaCount,
    UnreadPart,
)
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq


@functools.cache
def _built_by(name: str) -> Callable[..., Any]:
    """gpulint.operators' function `name` (a role's `derive`, a shape's `unjudged`), imported
    when it is first called: a run that meets no object an operator builds pods from (most
    do not) never imports that module."""

    def build(*args: Any) -> Any:
        from gpulint import operators

        return getattr(operators, name)(*args)

    build.__name__ = build.__qualname__ = name
    return build


#: The Spark operator's API group.
SPARK_GROUP = "sparkoperator.k8s.io"
#: The kind gpulint gives a job of an Armada job file (gpulint.loader), which writes none.
ARMADA_JOB = "ArmadaJob"
#: The kind gpulint gives a Kubeflow Pipelines IR document (a compiled `pipeline.yaml`, which
#: writes none): no Kubernetes object, its executors' pods are built by the KFP driver.
KFP_PIPELINE = "PipelineSpec"
#: The kind gpulint gives a Polyaxonfile (a component, an operation or a preset, which write no
#: apiVersion): no Kubernetes object, the Polyaxon agent builds its run's pods at submission.
POLYAXON_FILE = "Polyaxonfile"
# The Armada server completes each job's pod from its submission configuration before the pod
# exists: `defaultJobLimits` for containers that set no cpu or memory, and the tolerations of
# `defaultJobTolerations`, `...ByPriorityClass` and `...ByResourceRequest`
# (internal/server/submit/conversion/post_process.go, config/server/config.yaml).
_ARMADA_SERVER = (
    "the Armada server's submission configuration (defaultJobTolerations, "
    "defaultJobTolerationsByResourceRequest)",
    "compare the tolerations it lists with the pools' taints, or write the toleration in the "
    "job's pod spec, to make it certain",
)


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
    # Fields read in order where `path` is not written, as `path` is read: `/x` from the object
    # root, `../x` from the mapping whose list holds the role's (a SeldonDeployment predictor).
    fallbacks: tuple[str, ...] = ()
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
    # The field of the role's mapping that names it instead, and the name when it writes none
    # (a Kthena ModelBooster worker's `type`, `server` by default).
    name_field: tuple[str, str] | None = None
    # Field of the role's mapping: fewest pods a gang needs; a leading `/` starts at the object
    # root, where `{}` stands for the role's `name` (Kthena's `minRoleReplicas.<role>`). Of a
    # group gang, the fewest copies of the role in one group.
    gang_min: str | None = None
    gang_min_if: str | None = None  # object path that must be true for `gang_min` to count
    containers: tuple[ContainerField, ...] = POD_CONTAINERS
    # The pod spec an operator generates from higher-level fields of the role's mapping (a
    # resource profile, an instance type), every value positioned at the field that decided
    # it; None: the pod spec is written in the manifest.
    # (object, role's mapping) -> the pod spec; None: no pod; UnreadPart: one gpulint cannot build
    derive: Callable[[YMap, YMap], YMap | UnreadPart | None] | None = None
    # The pod count an operator computes from several fields, conditions among them (a Spark
    # application's executors): (object, role's mapping) -> the count, instead of the product
    # of `counts` (whose fields are still type-checked).
    count_by: Callable[[YMap, YMap], ReplicaCount] | None = None
    # Other int32 fields of the role's mapping that the pod is built from (a Spark role's
    # `cores`): type-checked as counts are.
    integers: tuple[str, ...] = ()
    runs: bool = True  # False: a template other objects use (a serving runtime); no pods
    optional: bool = False  # a declared role that an object may leave out
    generated: bool = False  # `derive` builds the pod from fields that are no pod's (KAITO)
    # The operator adds cpu/memory requests the manifest leaves out (or writes the pod itself).
    operator_resources: bool = False
    # The operator adds an init container that requests cpu and memory to the role's pods
    # (PodTemplate.operator_init_container); a callable decides it from the object and the
    # role's name.
    init_container: bool | Callable[[YMap, str | None], bool] = False
    # What completes the pod that gpulint never reads (a server's configuration), as messages
    # name it, and what makes a verdict on it certain: the tolerations it adds are unknown
    # (PodTemplate.completed_by).
    completed_by: tuple[str, str] | None = None


class ManagedBy(NamedTuple):
    """A kind's `managedBy` field: a value other than its own controller's hands the object to
    another controller, which creates its pods where it decides (MultiKueue dispatches them to
    a worker cluster); this cluster's controller creates none."""

    path: str  # from the object root
    own: tuple[str, ...]  # the values that name the kind's own controller
    # The Kubernetes release from which the API server keeps the field and the built-in
    # controller honours it by default; None: the kind's operator honours it.
    honoured_from: tuple[int, int] | None = None


# batch/v1 Job `managedBy` (KEP-4368): alpha in 1.30 (dropped unless the JobManagedBy gate is
# on), beta and on by default in 1.32, GA in 1.35; `kubernetes.io/job-controller` is the
# built-in controller's reserved name.
_JOB_MANAGED_BY = ("kubernetes.io/job-controller",)
# Kubeflow training-operator v1 and mpi-operator v2beta1 `runPolicy.managedBy`
# (pkg/apis/kubeflow.org/v1 common_types.go KubeflowJobsController; mpi-operator
# v2beta1 types.go KubeflowJobController).
_KUBEFLOW_MANAGED_BY = ManagedBy(
    "spec.runPolicy.managedBy", ("kubeflow.org/training-operator", "kubeflow.org/mpi-operator")
)


class WorkloadShape(NamedTuple):
    """Where a kind keeps its pod templates and how many pods it runs."""

    kind: str
    api_versions: tuple[str, ...]  # globs over apiVersion: `apps/*`, `v1`
    roles: tuple[Role, ...]
    gang: bool = False  # all pods must run at once before any does useful work
    gang_min: str | None = None  # object path: fewest pods of all roles together
    declared: bool = False  # from the config's `workloads:`: a path that finds nothing is told
    # The operator meets `gang_min` with the first pods in role order (Volcano), not with the
    # cheapest.
    gang_min_in_order: bool = False
    # The gang is one group of `/spec.replicas` (Workload.group_gang), not all the pods.
    group_gang: bool = False
    # Object path: the priority class the operator gives pods whose template names none.
    priority_class: str | None = None
    # What the operator decides from the object's fields that gpulint does not judge: the
    # object -> (what, where) for Workload.unjudged.
    unjudged: Callable[[YMap], tuple[tuple[str, Pos] | tuple[str, Pos, str], ...]] | None = None
    # Its `managedBy` field, when the kind has one.
    managed_by: ManagedBy | None = None
    # Whether an object of the kind has this shape (None: every one): a Pod that is a tool's
    # pod template file is read apart from other Pods.
    matches: Callable[[YMap], bool] | None = None
    # Why how many pods it runs is not known, whatever its fields say (Workload.unknown_count).
    unknown_count: Callable[[YMap], str | None] | None = None


def _kubeflow(
    kind: str,
    specs: str,
    *groups: str,
    init_container: Callable[[YMap, str | None], bool] | None = None,
    gang_min: str = "spec.runPolicy.schedulingPolicy.minAvailable",
) -> WorkloadShape:
    return WorkloadShape(
        kind,
        tuple(f"{g}/*" for g in groups or ("kubeflow.org",)),
        (Role(f"spec.{specs}.*", init_container=init_container or False),),
        gang=True,
        gang_min=gang_min,
        # KubeDL's kinds (`groups`) have no `runPolicy.managedBy`.
        managed_by=None if groups else _KUBEFLOW_MANAGED_BY,
    )


def _pytorch_worker_waits(obj: YMap, role: str | None) -> bool:
    """Whether the training operator gives the role's pods its `init-pytorch` init container,
    which requests cpu and memory: a Worker's, when the job has a Master (kubeflow/
    training-operator pkg/controller.v1/pytorch/initcontainer.go setInitContainer, called for
    every pod by SetClusterSpec). The operator's defaulting camel-cases the role keys, so
    `worker` and `master` count as well (looked up, not walked: the walk enumerates each
    mapping once)."""
    if role is None or role.lower() != "worker":
        return False
    spec = obj.get("spec")
    specs = spec.get("pytorchReplicaSpecs") if isinstance(spec, YMap) else None
    return isinstance(specs, YMap) and ("Master" in specs or "master" in specs)


def _ray(
    kind: str, cluster: str, *extra: Role, managed_by: ManagedBy | None = None
) -> WorkloadShape:
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
        managed_by=managed_by,
    )


_DASK = "kubernetes.dask.org/*"


def _dask_cluster(kind: str, cluster: str, *extra: Role) -> WorkloadShape:
    """A Dask operator kind whose DaskCluster spec sits at `cluster` (`spec` for a DaskCluster):
    the scheduler's one pod and the default worker group's `replicas` pods."""
    return WorkloadShape(
        kind,
        (_DASK,),
        (
            *extra,
            Role(f"{cluster}.scheduler", template="", counts=(), name="scheduler"),
            Role(f"{cluster}.worker", template="", name="worker"),
        ),
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
                derive=functools.partial(_built_by("argo_pod"), spec),
            ),
        ),
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
        derive=_built_by("kserve_component"),
    )


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


def _leader_worker(path: str) -> tuple[Role, Role]:
    """A LeaderWorkerTemplate at `path`: `/spec.replicas` groups, each a leader of
    `leaderTemplate` and `size - 1` workers (all `size` pods of `workerTemplate` without one)."""
    return (
        Role(path, template="leaderTemplate", counts=(Count("/spec.replicas"),), name="leader"),
        Role(
            path,
            template="workerTemplate",
            counts=(Count("/spec.replicas"), Count("size", less=1, less_if="leaderTemplate")),
            name="worker",
        ),
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


def _modelmesh_runtime(kind: str) -> WorkloadShape:
    # A runtime ModelMesh serves (`multiModel: true`, not `disabled`) runs pods of its own:
    # kserve/modelmesh-serving controllers/servingruntime_controller.go runs a Deployment of
    # its containers beside ModelMesh's own (which set cpu and memory), with its nodeSelector,
    # tolerations and affinity (modelmesh/runtime.go), `replicas` pods, else the controller
    # config's `podsPerRuntime` (2 by default); a ClusterServingRuntime's in each namespace
    # ModelMesh serves. Its models share those pods: no InferenceService runs one of its own.
    return WorkloadShape(
        kind,
        ("serving.kserve.io/*",),
        (
            Role(
                "spec",
                template="",
                spec="",
                counts=(Count("replicas", default=2),),
                operator_resources=True,
            ),
            _kserve_workers("spec", runs=False),
        ),
        matches=_served_by_modelmesh,
        unknown_count=_pods_per_runtime,
    )


def _served_by_modelmesh(obj: YMap) -> bool:
    """Whether ModelMesh runs the serving runtime's pods itself (`multiModel: true`)."""
    spec = obj.get("spec")
    return (
        isinstance(spec, YMap)
        and spec.get("multiModel") is True
        and spec.get("disabled") is not True
    )


def _pods_per_runtime(obj: YMap) -> str | None:
    """Workload.unknown_count of a ModelMesh runtime that writes no `replicas`."""
    spec = obj.get("spec")
    if isinstance(spec, YMap) and "replicas" in spec:
        return None
    return (
        "how many pods ModelMesh runs of a runtime without `replicas` is set by its "
        "`podsPerRuntime`"
    )


# OME (sgl-project/ome, ome.io pkg/apis/ome/v1beta1 servingruntime_types.go,
# inference_service.go): a runtime's `engineConfig`, `decoderConfig` and `routerConfig` are each
# a pod spec written inline with its main container at `runner` (named `ome-container` when it
# writes no name, pkg/constants MainContainerName); a multi-node engine or decoder keeps its
# LeaderWorkerSet's leader and worker pods at `leader` and `worker`, written the same way.
_OME_CONTAINERS: tuple[ContainerField, ...] = (
    ContainerField("runner", ContainerRole.APP, single=True, name="ome-container"),
    *POD_CONTAINERS,
)


def _ome_runtime(kind: str) -> WorkloadShape:
    # A template the InferenceServices that select it run (merged under their own engine,
    # decoder and router specs); it runs no pod of its own.
    component = functools.partial(
        Role, template="", spec="", runs=False, optional=True, containers=_OME_CONTAINERS
    )
    return WorkloadShape(
        kind,
        ("ome.io/*",),
        (
            Role("spec", template="", spec="", runs=False, optional=True),
            *(
                component(f"spec.{config}{part}", name=f"{name}{part.replace('.', ' ')}")
                for config, name in (("engineConfig", "engine"), ("decoderConfig", "decoder"))
                for part in ("", ".leader", ".worker")
            ),
            component("spec.routerConfig", name="router"),
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


# NIMService (apps.nvidia.com): the spec is both the pod's placement and its container.
_NIM_REPLICAS = (Count("replicas", peaks=("scale.hpa.minReplicas", "scale.hpa.maxReplicas")),)


def _spark(kind: str, app: str) -> WorkloadShape:
    """A Spark operator kind whose SparkApplicationSpec is at `app`: one driver pod (in
    `cluster` mode) and its executors, each built by spark-submit and Spark from the role's
    fields, `sparkConf` and `template`, completed by the operator's pod webhook
    (gpulint.operators); how many executors run is Spark's count (dynamic allocation is read
    as an autoscaler, gpulint.replicas). Spark waits for no gang."""
    return WorkloadShape(
        kind,
        (f"{SPARK_GROUP}/*",),
        (
            Role(
                f"{app}.driver",
                template="",
                spec="",
                counts=(),
                integers=("cores",),
                name="driver",
                derive=_built_by("spark_driver_pod"),
                operator_resources=True,
            ),
            Role(
                f"{app}.executor",
                template="",
                spec="",
                counts=(Count("instances"),),
                count_by=_built_by("spark_executor_count"),
                integers=("cores",),
                name="executor",
                derive=_built_by("spark_executor_pod"),
                operator_resources=True,
            ),
        ),
        unjudged=_built_by("spark_unjudged"),
    )


_DYNAMO_COUNTS = (Count("replicas"), Count("multinode.nodeCount"))
_BENTO_REPLICAS = (Count("autoscaling.minReplicas", peaks=("autoscaling.maxReplicas",)),)


_DISAGG_SLICES = Count("/spec.slices")
# A ModelServing role's gang minimum, keyed by the role's `name` (`{}`), from the object root.
_KTHENA_MIN_ROLE = "/spec.template.gangPolicy.minRoleReplicas.{}"
_KTHENA_GROUPS = Count("/spec.backend.replicas", default=0)
_KTHENA_WORKER_TYPE = ("type", "server")
_KATIB_TRIAL = "spec.trialTemplate.trialSpec"
_KATIB_TRIALS = Count("/spec.parallelTrialCount", default=3)
_SPEC_REPLICAS = (Count("replicas"),)
_PARALLELISM = (Count("parallelism"),)

# Tools that build pods from a pod template file, a `kind: Pod` that is no pod to apply: each
# names the pods it makes of it, sets its main container's image and that container's cpu and
# memory, keeps the rest (other resources, placement fields, other containers), and runs as
# many pods as its own configuration says. By the name the tool gives its main container, the
# tool and what sets how many pods it runs:
# - Apache Spark (`spark.kubernetes.{driver,executor}.podTemplateFile`): apache/spark
#   resource-managers/kubernetes/core Constants.scala (DEFAULT_DRIVER_CONTAINER_NAME,
#   DEFAULT_EXECUTOR_CONTAINER_NAME), features/BasicDriverFeatureStep.scala and
#   BasicExecutorFeatureStep.scala (`addToRequests("cpu" ...)`, `("memory" ...)` on the
#   template's container), docs/running-on-kubernetes.md "Pod Template Properties". Amazon
#   EMR on EKS documents the same files, written without any `metadata`.
# - Apache Flink (`kubernetes.pod-template-file.*`): "The main container should be defined
#   with name `flink-main-container`", whose memory and cpu Flink's options overwrite
#   (docs/deployment/resource-providers/native_kubernetes.md, "Pod Template").
_TOOL_CONTAINERS: dict[str, str] = {
    SPARK_CONTAINERS["driver"]: "the Spark applications that use it for their driver",
    SPARK_CONTAINERS["executor"]: "`spark.executor.instances` (or dynamic allocation) of the "
    "Spark applications that use it",
    "flink-main-container": "the Flink configuration that uses it",
}
# Spark takes the first container when none has its name (`spark.kubernetes.executor.
# podTemplateContainerName` unset), and the GPU executor templates Spark RAPIDS' and Charmed
# Spark's docs give name it `executor`, with neither a pod name nor an image: the API server
# would refuse such a Pod twice, so a tool fills it in.
_ANY_TOOL = "the tool that builds pods from it (Spark, Flink, ...)"


def tool_pod_template(obj: YMap) -> str | None:
    """When `obj` is a tool's pod template file, what sets how many pods are made of it (to
    complete "how many pods ... is set by"); None for any other object.

    A pod template file is a Pod one of whose containers has the name a tool gives its main
    container, or a Pod with neither a name nor a generateName one of whose containers has
    no image."""
    spec = obj.get("spec")
    containers = spec.get("containers") if isinstance(spec, YMap) else None
    if obj.get("kind") != "Pod" or not isinstance(containers, YSeq):
        return None
    items = [c for c in containers if isinstance(c, YMap)]
    for container in items:
        name = container.get("name")
        if isinstance(name, str) and name in _TOOL_CONTAINERS:
            return _TOOL_CONTAINERS[name]
    metadata = obj.get("metadata")
    named = isinstance(metadata, YMap) and (metadata.get("name") or metadata.get("generateName"))
    if not named and any(not c.get("image") for c in items):
        return _ANY_TOOL
    return None


_ARC = "actions.github.com/*"
_ARC_LEGACY = "actions.summerwind.dev/*"


def _arc_runners(replicas: bool) -> Role:
    """The runners of a legacy actions-runner-controller kind: one pod per Runner, built from
    its runner spec (`template.spec`, or a Runner's `spec`), `spec.replicas` of them."""
    return Role(
        "spec.template.spec" if replicas else "spec",
        template="",
        spec="",
        counts=(Count("/spec.replicas"),) if replicas else (),
        name="runner",
        derive=_built_by("arc_runner_pod"),
    )


def _runners_unbounded(obj: YMap) -> str | None:
    """Workload.unknown_count of an AutoscalingRunnerSet that writes no `maxRunners`."""
    spec = obj.get("spec")
    if isinstance(spec, YMap) and "maxRunners" in spec:
        return None
    return (
        "how many runners a scale set without `maxRunners` runs is set by the jobs GitHub "
        "assigns to it, without bound"
    )


def _pods_of_template(obj: YMap) -> str | None:
    """Workload.unknown_count of a tool's pod template file."""
    counted_by = tool_pod_template(obj)
    return f"how many pods are made of this pod template file is set by {counted_by}"


BUILTIN_SHAPES: tuple[WorkloadShape, ...] = (
    WorkloadShape(
        "Pod",
        ("v1",),
        (Role("", template="", counts=(), operator_resources=True),),
        matches=lambda obj: tool_pod_template(obj) is not None,
        unknown_count=_pods_of_template,
    ),
    WorkloadShape("Pod", ("v1",), (Role("", template="", counts=()),)),
    WorkloadShape("Deployment", ("apps/*", "extensions/*"), (Role("spec"),)),
    WorkloadShape("ReplicaSet", ("apps/*", "extensions/*"), (Role("spec"),)),
    WorkloadShape("StatefulSet", ("apps/*",), (Role("spec"),)),
    WorkloadShape("DaemonSet", ("apps/*", "extensions/*"), (Role("spec", counts=None),)),
    WorkloadShape("ReplicationController", ("v1",), (Role("spec"),)),
    WorkloadShape(
        "Job",
        ("batch/*",),
        (Role("spec", counts=_PARALLELISM),),
        managed_by=ManagedBy("spec.managedBy", _JOB_MANAGED_BY, (1, 32)),
    ),
    # The Jobs a CronJob creates carry its jobTemplate's spec, `managedBy` with it.
    WorkloadShape(
        "CronJob",
        ("batch/*",),
        (Role("spec.jobTemplate.spec", counts=_PARALLELISM),),
        managed_by=ManagedBy("spec.jobTemplate.spec.managedBy", _JOB_MANAGED_BY, (1, 32)),
    ),
    # A KEDA ScaledJob creates Jobs of its `jobTargetRef` (a JobSpec) as its triggers ask, up
    # to `maxReplicaCount` at once (kedacore/keda apis/keda/v1alpha1/scaledjob_types.go): each
    # Job's pods are counted here, the Jobs by its own maximum (gpulint.replicas).
    WorkloadShape("ScaledJob", ("keda.sh/*",), (Role("spec.jobTargetRef", counts=_PARALLELISM),)),
    # GitHub's actions-runner-controller (apis/actions.github.com/v1alpha1): an
    # AutoscalingRunnerSet runs one runner pod of `template` per EphemeralRunner, `minRunners`
    # of them (0 by default) while no job waits, up to `maxRunners` as jobs are assigned (read
    # as its own autoscaler, gpulint.replicas); an EphemeralRunnerSet runs `replicas` of them
    # and an EphemeralRunner one, its pod template written inline in the spec.
    WorkloadShape(
        "AutoscalingRunnerSet",
        (_ARC,),
        (Role("spec", counts=(Count("minRunners", default=0),)),),
        unknown_count=_runners_unbounded,
    ),
    WorkloadShape(
        "EphemeralRunnerSet",
        (_ARC,),
        (Role("spec", template="ephemeralRunnerSpec", counts=(Count("replicas", default=0),)),),
    ),
    WorkloadShape("EphemeralRunner", (_ARC,), (Role("spec", template="", counts=()),)),
    # The legacy controller's RunnerSet (actions.summerwind.dev) inlines a StatefulSetSpec:
    # `replicas` runner pods of `template`. A RunnerDeployment (through a RunnerReplicaSet)
    # runs `replicas` Runners of `template.spec` (1 by default: runnerdeployment_controller.go
    # defaultReplicas), a Runner one pod; the controller builds each pod from the runner spec
    # (gpulint.operators arc_runner_pod). A HorizontalRunnerAutoscaler scales a RunnerDeployment
    # or a RunnerSet (gpulint.replicas).
    WorkloadShape("RunnerSet", (_ARC_LEGACY,), (Role("spec"),)),
    *(
        WorkloadShape(kind, (_ARC_LEGACY,), (_arc_runners(True),))
        for kind in ("RunnerDeployment", "RunnerReplicaSet")
    ),
    WorkloadShape("Runner", (_ARC_LEGACY,), (_arc_runners(False),)),
    # Kubeflow training operator (v1) and mpi-operator (v2beta1): one template per role key.
    _kubeflow("PyTorchJob", "pytorchReplicaSpecs", init_container=_pytorch_worker_waits),
    _kubeflow("TFJob", "tfReplicaSpecs"),
    # mpi-operator's v1alpha1 (kubeflow/mpi-operator pkg/controllers/v1alpha1/
    # mpi_job_controller.go, removed upstream in 2021; kubeflow/arena's mpijob chart still
    # writes it for the operator arena installs): `replicas` workers of `template`, a
    # StatefulSet, whose first container keeps its GPU limit (newWorker), and a launcher Job
    # of the same template with its resources taken away (newLauncher). Before the v2beta1
    # shape, whose apiVersion glob would take it and find no `mpiReplicaSpecs`.
    WorkloadShape(
        "MPIJob",
        ("kubeflow.org/v1alpha1",),
        (Role("spec", name="Worker", derive=_built_by("mpijob_v1alpha1_worker")),),
        gang=True,
    ),
    _kubeflow("MPIJob", "mpiReplicaSpecs"),
    _kubeflow("XGBoostJob", "xgbReplicaSpecs"),
    _kubeflow("PaddleJob", "paddleReplicaSpecs"),
    _kubeflow("JAXJob", "jaxReplicaSpecs"),
    # KubeDL (kubedl-io/kubedl apis/training/v1alpha1): the Kubeflow kinds' replica specs under
    # training.kubedl.io, their run policy written inline in the spec (TFJobSpec,
    # PyTorchJobSpec, XGBoostJobSpec), but for the MPIJob's `runPolicy`. Its PyTorchJob
    # workers get no init container (controllers/pytorch SetClusterSpec).
    *(
        _kubeflow(kind, specs, "training.kubedl.io", gang_min="spec.schedulingPolicy.minAvailable")
        for kind, specs in (
            ("TFJob", "tfReplicaSpecs"),
            ("PyTorchJob", "pytorchReplicaSpecs"),
            ("XGBoostJob", "xgbReplicaSpecs"),
        )
    ),
    _kubeflow("MPIJob", "mpiReplicaSpecs", "training.kubedl.io"),
    # Alibaba's et-operator (AliyunContainerService/et-operator api/v1alpha1/
    # trainingjob_types.go, pkg/controllers/launcher.go and worker.go), which kubeflow/arena's
    # etjob chart renders: `etReplicaSpecs.worker.replicas` workers of their template, and one
    # launcher pod of its own, made once those workers run. ScaleIn and ScaleOut objects move
    # the workers between `minReplicas` and `maxReplicas` later, on request.
    WorkloadShape(
        "TrainingJob",
        ("kai.alibabacloud.com/*",),
        (
            Role("spec.etReplicaSpecs.launcher", counts=(), name="launcher"),
            Role("spec.etReplicaSpecs.worker", name="worker"),
        ),
        gang=True,
    ),
    # PaddleFlow's paddle-operator (batch.paddlepaddle.org, api/v1/paddlejob_types.go): the
    # `ps`, `worker` and `heter` roles, each `replicas` pods of its `template`. The operator
    # adds to every pod its `coord-paddle` init container, which requests cpu and memory
    # (controllers/paddlejob_controller.go createPod, genCoordinateInitContainer): on by
    # default (main.go `--initImage` alpine:3.10, which neither deploy/ nor the chart
    # changes), so no pod of a PaddleJob is BestEffort.
    WorkloadShape(
        "PaddleJob",
        ("batch.paddlepaddle.org/*",),
        tuple(
            Role(f"spec.{role}", name=role, init_container=True)
            for role in ("ps", "worker", "heter")
        ),
        gang=True,
        gang_min="spec.schedulingPolicy.minAvailable",
    ),
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
        # pkg/apis/trainer/v1alpha1 trainjob_types.go: defaulted to the TrainJob controller.
        managed_by=ManagedBy("spec.managedBy", ("trainer.kubeflow.org/trainjob-controller",)),
    ),
    # ray-operator/apis/ray/v1 raycluster_types.go and rayjob_types.go; utils
    # KubeRayController.
    _ray(
        "RayCluster", "spec", managed_by=ManagedBy("spec.managedBy", ("ray.io/kuberay-operator",))
    ),
    _ray(
        "RayJob",
        "spec.rayClusterSpec",
        Role("spec", template="submitterPodTemplate", counts=(), name="submitter"),
        managed_by=ManagedBy("spec.managedBy", ("ray.io/kuberay-operator",)),
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
        # api/jobset/v1alpha2 jobset_types.go JobSetControllerName.
        managed_by=ManagedBy("spec.managedBy", ("jobset.sigs.k8s.io/jobset-controller",)),
    ),
    WorkloadShape(
        "LeaderWorkerSet",
        ("leaderworkerset.x-k8s.io/*",),
        _leader_worker("spec.leaderWorkerTemplate"),
        gang=True,
        group_gang=True,
    ),
    # llmaz's inference Service is run as a LeaderWorkerSet of its `workloadTemplate`
    # (pkg/controller/inference/service_controller.go buildWorkloadApplyConfiguration); the
    # flavor of the model it claims replaces its model-runner's accelerators.
    WorkloadShape(
        "Service",
        ("inference.llmaz.io/*",),
        _leader_worker("spec.workloadTemplate"),
        gang=True,
        group_gang=True,
        unjudged=_built_by("llmaz_service_unjudged"),
    ),
    # A Playground runs an inference Service of one pod per replica, built from its backend
    # (playground_controller.go), scaled by an HPA between `elasticConfig`'s bounds.
    WorkloadShape(
        "Playground",
        ("inference.llmaz.io/*",),
        (
            Role(
                "spec",
                derive=_built_by("llmaz_playground_pod"),
                operator_resources=True,
                counts=(
                    Count(
                        "replicas",
                        peaks=("elasticConfig.minReplicas", "elasticConfig.maxReplicas"),
                    ),
                ),
            ),
        ),
        unjudged=_built_by("llmaz_playground_unjudged"),
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
        # KFServing's v1beta1 (serving.kubeflow.org) is the layout KServe kept.
        ("serving.kserve.io/*", "serving.kubeflow.org/v1beta1"),
        (
            _kserve_component("predictor", KSERVE_PREDICTOR_CONTAINERS),
            _kserve_workers("spec.predictor"),
            _kserve_component("transformer", POD_CONTAINERS),
            _kserve_component("explainer", KSERVE_EXPLAINER_CONTAINERS),
        ),
        unjudged=_built_by("hardware_profile_unjudged"),
    ),
    _modelmesh_runtime("ServingRuntime"),
    _modelmesh_runtime("ClusterServingRuntime"),
    _serving_runtime("ServingRuntime"),
    _serving_runtime("ClusterServingRuntime"),
    _ome_runtime("ServingRuntime"),
    _ome_runtime("ClusterServingRuntime"),
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
    # OpenShift AI's webhook gives a Notebook or an InferenceService that names a
    # HardwareProfile that profile's requests and scheduling (operators.hardware_profile_unjudged).
    WorkloadShape(
        "Notebook",
        ("kubeflow.org/*",),
        (Role("spec", counts=()),),
        unjudged=_built_by("hardware_profile_unjudged"),
    ),
    # KubeDL's Notebook runs one pod of its template (apis/notebook/v1alpha1); its Inference
    # runs a Deployment of `replicas` pods per predictor (controllers/serving/predictor.go).
    WorkloadShape("Notebook", ("notebook.kubedl.io/*",), (Role("spec", counts=()),)),
    WorkloadShape("Inference", ("serving.kubedl.io/*",), (Role("spec.predictors[]"),)),
    WorkloadShape(
        "NIMService",
        ("apps.nvidia.com/*",),
        (Role("spec", derive=_built_by("nim_pod"), counts=_NIM_REPLICAS),),
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
                derive=_built_by("nim_service_pod"),
            ),
        ),
    ),
    WorkloadShape(
        "Workspace",
        ("kaito.sh/*",),
        (
            Role(
                "resource",
                derive=_built_by("kaito_pod"),
                generated=True,
                counts=(Count("count"),),
                name="preset",
                operator_resources=True,
            ),
            Role(
                "inference",
                derive=_built_by("kaito_template"),
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
                derive=_built_by("kubeai_pod"),
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
                derive=_built_by("dynamo_service_pod"),
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
                derive=_built_by("dynamo_component_pod"),
                counts=_DYNAMO_COUNTS,
            ),
        ),
    ),
    # yatai-deployment (gpulint.operators): the API server and each runner are a Deployment
    # scaled by an HPA from `autoscaling.minReplicas` to `maxReplicas` (1 and 1 without one:
    # generateHPA). The older versions (`bento_tag`, snake_case fields) are not read.
    WorkloadShape(
        "BentoDeployment",
        ("serving.yatai.ai/v2alpha1",),
        (
            Role(
                "spec",
                template="",
                spec="",
                counts=_BENTO_REPLICAS,
                name="api-server",
                derive=_built_by("bento_pod"),
                operator_resources=True,
            ),
            Role(
                "spec.runners[]",
                template="",
                spec="",
                counts=_BENTO_REPLICAS,
                name="runner {}",
                derive=_built_by("bento_pod"),
                operator_resources=True,
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
    # Seldon Core 2 (mlops.seldon.io, operator/apis/mlops/v1alpha1 server_types.go): a Server
    # runs `replicas` pods (1 by default, up to `maxReplicas`) of its ServerConfig's pod spec
    # with its own `podSpec` merged in (containers by name); a ServerConfig runs none itself.
    WorkloadShape(
        "Server",
        ("mlops.seldon.io/*",),
        (
            Role(
                "spec",
                template="",
                spec="podSpec",
                counts=(Count("replicas", peaks=("minReplicas", "maxReplicas")),),
                operator_resources=True,
            ),
        ),
    ),
    WorkloadShape(
        "ServerConfig",
        ("mlops.seldon.io/*",),
        (Role("spec", template="", spec="podSpec", runs=False, operator_resources=True),),
    ),
    # AIBrix (orchestration.aibrix.ai, api/orchestration/v1alpha1): a StormService runs
    # `replicas` RoleSets (1 by default), each `roles[].replicas` pods of the role's template;
    # a RayClusterFleet runs `replicas` RayClusters of `template.spec`.
    WorkloadShape(
        "StormService",
        ("orchestration.aibrix.ai/*",),
        (Role("spec.template.spec.roles[]", counts=(Count("/spec.replicas"), Count("replicas"))),),
    ),
    # Kthena (volcano-sh/kthena, pkg/apis/workload/v1alpha1): a ModelServing runs `replicas`
    # ServingGroups (1 by default); in each, every `roles[]` runs `replicas` (1 by default)
    # copies of one entry pod and `workerReplicas` worker pods, the pod specs written as they
    # are (utils.GenerateEntryPod / GenerateWorkerPod set only schedulerName and env). Each
    # ServingGroup is one Volcano PodGroup (podgroupmanager.calculateRequirements) whose
    # minimum takes at most `gangPolicy.minRoleReplicas.<role>` copies of each role.
    WorkloadShape(
        "ModelServing",
        ("workload.serving.volcano.sh/*",),
        (
            Role(
                "spec.template.roles[]",
                template="entryTemplate",
                counts=(Count("/spec.replicas"), Count("replicas")),
                name="{} entry",
                gang_min=_KTHENA_MIN_ROLE,
            ),
            Role(
                "spec.template.roles[]",
                template="workerTemplate",
                counts=(
                    Count("/spec.replicas"),
                    Count("replicas"),
                    Count("workerReplicas", default=0),
                ),
                name="{} worker",
                gang_min=_KTHENA_MIN_ROLE,
            ),
        ),
        gang=True,
        group_gang=True,
    ),
    # Kthena ModelBooster (gpulint.operators): the controller writes a ModelServing from
    # `spec.backend`, one role per worker it uses, so `spec.backend.replicas` groups, each of
    # the worker's `replicas` copies of an entry pod and `pods - 1` worker pods, and a
    # `minRoleReplicas` of every copy: each group is a whole gang.
    WorkloadShape(
        "ModelBooster",
        ("workload.serving.volcano.sh/*",),
        (
            Role(
                "spec.backend.workers[]",
                derive=_built_by("kthena_entry_pod"),
                counts=(_KTHENA_GROUPS, Count("replicas", default=0)),
                name="{} entry",
                name_field=_KTHENA_WORKER_TYPE,
                generated=True,
            ),
            Role(
                "spec.backend.workers[]",
                derive=_built_by("kthena_worker_pod"),
                counts=(
                    _KTHENA_GROUPS,
                    Count("replicas", default=0),
                    Count("pods", default=0, less=1),
                ),
                name="{} worker",
                name_field=_KTHENA_WORKER_TYPE,
                generated=True,
            ),
        ),
        gang=True,
        group_gang=True,
    ),
    # AIBrix KVCache (gpulint.operators: the pods each backend's controller builds): the
    # cache Deployment or StatefulSet of `spec.cache.replicas` pods (1 by default, the CRD's),
    # vineyard's etcd pods, the hpkv and infinistore Redis pod and watcher pod.
    WorkloadShape(
        "KVCache",
        ("orchestration.aibrix.ai/*",),
        (
            Role(
                "spec.cache",
                derive=_built_by("kvcache_cache_pod"),
                counts=(Count("replicas"),),
                name="cache",
            ),
            Role(
                "spec.metadata.etcd",
                derive=_built_by("kvcache_etcd_pod"),
                counts=(Count("runtime.replicas"),),
                name="etcd",
                optional=True,
            ),
            Role(
                "spec.metadata.redis",
                derive=_built_by("kvcache_redis_pod"),
                counts=(),
                name="redis",
                optional=True,
            ),
            Role(
                "spec.watcher",
                derive=_built_by("kvcache_watcher_pod"),
                counts=(),
                name="watcher",
                optional=True,
            ),
        ),
        unjudged=_built_by("kvcache_unjudged"),
    ),
    WorkloadShape(
        "RayClusterFleet",
        ("orchestration.aibrix.ai/*",),
        (
            Role(
                "spec.template.spec.headGroupSpec",
                counts=(Count("/spec.replicas"),),
                name="head",
            ),
            Role(
                "spec.template.spec.workerGroupSpecs[]",
                counts=(
                    Count("/spec.replicas"),
                    Count("replicas", default=0),
                    Count("numOfHosts"),
                ),
            ),
        ),
        gang=True,
    ),
    # Slinky's slurm-operator (slinky.slurm.net): a NodeSet runs `replicas` slurmd pods (1 by
    # default) of its template, the slurmd container written at `spec.slurmd`.
    WorkloadShape(
        "NodeSet",
        ("slinky.slurm.net/*",),
        (Role("spec", derive=_built_by("slurm_nodeset_pod")),),
    ),
    # The Dask operator (dask/dask-kubernetes, operator/controller/controller.py): a
    # DaskCluster runs its scheduler as a Deployment of one pod of `scheduler.spec`, and its
    # default DaskWorkerGroup `worker.replicas` workers (1 by default, the CRD's default), each
    # a Deployment of one pod of `worker.spec`; `metadata` labels and annotations go on the
    # pods, and the operator adds only env. A DaskJob runs one pod of `job.spec` beside the
    # cluster of `cluster.spec`. Workers join the scheduler as they start: no gang.
    _dask_cluster("DaskCluster", "spec"),
    WorkloadShape(
        "DaskWorkerGroup",
        (_DASK,),
        (Role("spec.worker", template="", name="worker"),),
    ),
    _dask_cluster(
        "DaskJob", "spec.cluster.spec", Role("spec.job", template="", counts=(), name="job")
    ),
    # The Spark operator (gpulint.operators): a SparkApplication runs one driver pod (in
    # `cluster` mode) and its executors, each built by spark-submit and Spark from the role's
    # fields, `sparkConf` and `template`, completed by the operator's pod webhook; how many
    # executors run is Spark's count (dynamic allocation is read as an autoscaler,
    # gpulint.replicas). Spark waits for no gang.
    _spark("SparkApplication", "spec"),
    # A ScheduledSparkApplication creates a SparkApplication of its `template` at each run
    # (internal/controller/scheduledsparkapplication/controller.go): the pods of one run.
    _spark("ScheduledSparkApplication", "spec.template"),
    # Seldon Core 1: each componentSpec is a Deployment of pods; the operator adds its service
    # orchestrator container to the first one's (gpulint.operators).
    WorkloadShape(
        "SeldonDeployment",
        ("machinelearning.seldon.io/*",),
        (
            Role(
                "spec.predictors[].componentSpecs[]",
                template="",
                # controllers/seldondeployment_controller.go: the componentSpec's replicas,
                # else the predictor's, else the deployment's; an hpaSpec sets the range.
                counts=(
                    Count(
                        "replicas",
                        fallbacks=("../replicas", "/spec.replicas"),
                        peaks=("hpaSpec.maxReplicas",),
                    ),
                ),
                derive=_built_by("seldon_component_pod"),
            ),
        ),
    ),
    # Armada (armadaproject/armada): a job of a file `armadactl submit` reads is no Kubernetes
    # object; the loader reads each as one of kind ARMADA_JOB without an apiVersion. Its pod is
    # its `podSpec`, or the one item of `podSpecs` (the server refuses jobs of several pods:
    # internal/server/submit/validation/submit_request.go).
    WorkloadShape(
        ARMADA_JOB,
        ("",),
        (
            Role(
                "",
                template="",
                spec="podSpec",
                counts=(),
                optional=True,
                operator_resources=True,
                completed_by=_ARMADA_SERVER,
            ),
            Role(
                "podSpecs[]",
                template="",
                spec="",
                counts=(),
                optional=True,
                operator_resources=True,
                completed_by=_ARMADA_SERVER,
            ),
        ),
    ),
    # RBG (sgl-project/rbg, api/workloads/v1alpha2): each `spec.roles[]` runs `replicas`
    # instances (1 by default) of one pattern. A standalone instance is one pod of
    # `standalonePattern.template`; a leader-worker instance is `size` pods of
    # `leaderWorkerPattern.template` (1 by default: the leader, and size - 1 workers,
    # pkg/reconciler/roleinstanceset_reconciler.go). The leader's and workers' patches, a
    # `templateRef` with its patch and `customComponentsPattern` are not read (Workload.unjudged
    # names the patches; an accelerator in what is not read is GPU007).
    WorkloadShape(
        "RoleBasedGroup",
        ("workloads.x-k8s.io/v1alpha2",),
        (
            Role("spec.roles[]", template="standalonePattern.template", optional=True),
            Role(
                "spec.roles[]",
                template="leaderWorkerPattern.template",
                counts=(Count("replicas"), Count("leaderWorkerPattern.size")),
                optional=True,
            ),
        ),
        unjudged=_built_by("rbg_unjudged"),
    ),
    # v1alpha1, which the controller converts (rolebasedgroup_conversion.go): a role's
    # `template` is its standalone pod, or with `leaderWorkerSet` the pod of each of its `size`
    # (patchLeaderTemplate, patchWorkerTemplate: not read, as above).
    WorkloadShape(
        "RoleBasedGroup",
        ("workloads.x-k8s.io/v1alpha1",),
        (
            Role(
                "spec.roles[]",
                counts=(Count("replicas"), Count("leaderWorkerSet.size")),
                optional=True,
            ),
        ),
        unjudged=_built_by("rbg_unjudged"),
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
        # volcano-sh/volcano pkg/controllers/job/job_controller_actions.go calcPGMinResources:
        # the PodGroup's minimum is the first minAvailable pods of the tasks sorted by their
        # priority class (task order among equals).
        gang_min_in_order=True,
        # job_controller_util.go createJobPod: a task template without priorityClassName gets
        # the Job's.
        priority_class="spec.priorityClassName",
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
def path_steps(path: str) -> tuple[str, ...]:
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
        if _version_matches(api_version, shape.api_versions) and (
            shape.matches is None or shape.matches(document.obj)
        ):
            return shape
    return None


def runs_no_pods_of_its_own(kind: str, api_version: str, obj: YMap) -> bool:
    """Whether a built-in kind is a template other objects run, with no pod of its own (a
    KServe ServingRuntime, a Seldon ServerConfig): every role of the shape `obj` has is
    `runs=False` (a ServingRuntime ModelMesh serves runs its own)."""
    for shape in _BUILTIN_INDEX.get(kind, ()):
        if _version_matches(api_version, shape.api_versions) and (
            shape.matches is None or shape.matches(obj)
        ):
            return all(not role.runs for role in shape.roles)
    return False
