"""How many pods of a workload run at once: replica counts, the autoscalers that raise them
(HPAs, KEDA ScaledObjects), rolling update surge, gangs.

The rules that weigh pods against capacity and quotas share these answers; a run that checks
neither never imports them.
"""

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal

from gpulint.fields import mapping_at
from gpulint.model import Document, DocumentKey, DocumentLike, PodTemplate, ReplicaCount, Workload
from gpulint.quantity import format_quantity
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq


class ScalerWords(NamedTuple):
    """How messages and fixes name an autoscaler kind and its bounds."""

    noun: str  # `HPA`
    plural: str  # `HPAs`
    max_field: str  # `maxReplicas`
    min_field: str  # `minReplicas`


_HPA = "HorizontalPodAutoscaler"
_SCALED_OBJECT = "ScaledObject"
_SCALED_JOB = "ScaledJob"
_DASK_AUTOSCALER = "DaskAutoscaler"
_RUNNER_SET = "AutoscalingRunnerSet"
_RUNNER_AUTOSCALER = "HorizontalRunnerAutoscaler"
_SPARK_APPLICATION = "SparkApplication"
_SCHEDULED_SPARK_APPLICATION = "ScheduledSparkApplication"
_SPARK_WORDS = ScalerWords(
    "Spark dynamic allocation", "Spark dynamic allocations", "maxExecutors", "minExecutors"
)
_WORDS = {
    _HPA: ScalerWords("HPA", "HPAs", "maxReplicas", "minReplicas"),
    _SCALED_OBJECT: ScalerWords(
        "ScaledObject", "ScaledObjects", "maxReplicaCount", "minReplicaCount"
    ),
    _SCALED_JOB: ScalerWords("ScaledJob", "ScaledJobs", "maxReplicaCount", "minReplicaCount"),
    _DASK_AUTOSCALER: ScalerWords("DaskAutoscaler", "DaskAutoscalers", "maximum", "minimum"),
    _RUNNER_SET: ScalerWords(
        "AutoscalingRunnerSet", "AutoscalingRunnerSets", "maxRunners", "minRunners"
    ),
    _RUNNER_AUTOSCALER: ScalerWords(
        "HorizontalRunnerAutoscaler", "HorizontalRunnerAutoscalers", "maxReplicas", "minReplicas"
    ),
    _SPARK_APPLICATION: _SPARK_WORDS,
    _SCHEDULED_SPARK_APPLICATION: _SPARK_WORDS,
}


def scaler_words(kind: str) -> ScalerWords:
    """The words of an autoscaler of `kind` (an HPA's for any other kind)."""
    return _WORDS.get(kind, _WORDS[_HPA])


def min_field_of(max_field: str) -> str | None:
    """The field that keeps an autoscaler's floor, of the field of its maximum
    (`maxReplicas`: `minReplicas`); None for any other field."""
    return next((w.min_field for w in _WORDS.values() if w.max_field == max_field), None)


class Autoscaler(NamedTuple):
    """A HorizontalPodAutoscaler or a KEDA ScaledObject of the checked manifests and the
    workload it scales."""

    document: DocumentKey  # kept for the whole run, so without its tree
    target_kind: str
    target_name: str
    max_replicas: int
    pos: Pos  # where maxReplicas (maxReplicaCount) is written, else where its default applies
    # When every metric is the utilization of a resource (the default, cpu, when it lists
    # none): per metric, the resource and the container it reads ("" for every container).
    # Utilization is usage over request: the HPA computes none for pods that do not request
    # the resource. None: some metric needs no request (a value, a Pods or External metric).
    utilization_of: tuple[tuple[str, str], ...] | None = None
    # The fewest pods there surely are: an HPA's minReplicas; a ScaledObject's minReplicaCount
    # (0 by default), or its idleReplicaCount when set.
    min_replicas: int = 1
    # A ScaledObject that takes over this HPA of its namespace (its name; "" for none).
    adopts: str = ""
    # A ScaledObject's `idleReplicaCount` is set: that, not minReplicaCount, is its floor.
    idle: bool = False
    # Its maximum is not written: KEDA's default (maxReplicaCount 100) applies.
    default_max: bool = False

    @property
    def words(self) -> ScalerWords:
        """How messages name this autoscaler's kind and fields; the field of its floor is
        `idleReplicaCount` when that is what it keeps."""
        words = scaler_words(self.document.ref.kind)
        return words._replace(min_field="idleReplicaCount") if self.idle else words

    def outranks(self, other: "Autoscaler") -> bool:
        """Whether this autoscaler, rather than `other` of the same target, scales it.

        Of two HPAs the first counts. KEDA's admission webhook refuses a ScaledObject whose
        target an HPA it does not own already scales ("the workload ... is already managed by
        the hpa", kedacore/keda apis/keda/v1alpha1/scaledobject_webhook.go verifyHpas), unless
        it carries `scaledobject.keda.sh/transfer-hpa-ownership: "true"` and names that HPA in
        `spec.advanced.horizontalPodAutoscalerConfig.name`: then KEDA takes the HPA over
        (keda-docs content/docs/2.21/reference/scaledobject-spec.md)."""
        mine, theirs = self.document.ref.kind, other.document.ref.kind
        if mine == _HPA and theirs == _SCALED_OBJECT:
            return other.adopts != self.document.ref.name
        if mine == _SCALED_OBJECT and theirs == _HPA:
            return self.adopts == other.document.ref.name
        return False


def under_load_words(scalers: Iterable[Autoscaler | None]) -> ScalerWords:
    """The words of `scalers` (those that set the counts a finding sums; None for a count no
    autoscaler sets), each field joined when they differ: `HPAs and ScaledObjects`,
    `maxReplicas / maxReplicaCount`, `minReplicaCount / idleReplicaCount`."""
    found = sorted({scaler.words for scaler in scalers if scaler is not None})  # HPAs first
    if not found:
        return _WORDS[_HPA]

    def joined(values: Iterable[str], sep: str) -> str:
        return sep.join(dict.fromkeys(values))

    return ScalerWords(
        joined((w.noun for w in found), " and "),
        joined((w.plural for w in found), " and "),
        joined((w.max_field for w in found), " / "),
        joined((w.min_field for w in found), " / "),
    )


def autoscalers(documents: Iterable[Document]) -> Iterator[Autoscaler]:
    """Every HorizontalPodAutoscaler with a scaleTargetRef and a maxReplicas, every KEDA
    ScaledObject (`keda.sh/*`) with a scaleTargetRef, every Dask operator DaskAutoscaler
    with a cluster and a maximum, every SparkApplication's bounded dynamic allocation and every
    AutoscalingRunnerSet with a `maxRunners`."""
    for document in documents:
        found = _READERS.get(document.ref.kind)
        if found is None:
            continue
        groups, read = found
        if groups and not document.ref.api_version.startswith(groups):
            continue
        scaler = read(document)
        if scaler is not None:
            yield scaler


def _hpa(document: Document) -> Autoscaler | None:
    """A HorizontalPodAutoscaler with a scaleTargetRef and a maxReplicas."""
    spec = document.obj.get("spec")
    if not isinstance(spec, YMap):
        return None
    target = spec.get("scaleTargetRef")
    maximum = spec.get("maxReplicas")
    if not isinstance(target, YMap) or not isinstance(maximum, int):
        return None
    return Autoscaler(
        DocumentKey.of(document),
        str(target.get("kind", "")),
        str(target.get("name", "")),
        maximum,
        spec.pos_of_key("maxReplicas"),
        _utilization_metrics(document.ref.api_version, spec),
        minimum if isinstance(minimum := spec.get("minReplicas", 1), int) else 1,
    )


def _dask_autoscaler(document: Document) -> Autoscaler | None:
    """A DaskAutoscaler as the Dask operator applies it (dask/dask-kubernetes
    operator/controller/controller.py daskautoscaler_adapt): every few seconds it sets the
    replicas of the DaskCluster `spec.cluster`'s default worker group, its `worker.replicas`,
    to what the scheduler asks, within `minimum` and `maximum`. It reads no pod metric, so it
    scales whatever the pods request."""
    spec = document.obj.get("spec")
    if not isinstance(spec, YMap):
        return None
    cluster = spec.get("cluster")
    maximum = spec.get("maximum")
    if not isinstance(cluster, str) or not isinstance(maximum, int) or isinstance(maximum, bool):
        return None
    minimum = spec.get("minimum", 0)
    return Autoscaler(
        DocumentKey.of(document),
        "DaskCluster",
        cluster,
        maximum,
        spec.pos_of_key("maximum"),
        None,
        minimum if isinstance(minimum, int) and not isinstance(minimum, bool) else 0,
    )


def _spark_dynamic_allocation(document: Document) -> Autoscaler | None:
    """A SparkApplication's (or a ScheduledSparkApplication's template's) dynamic allocation,
    as an autoscaler of its own executors: Spark
    starts the executors it computes (gpulint.operators spark_executors) and scales them with
    the pending tasks between `minExecutors` (0 by default) and `maxExecutors` (core
    ExecutorAllocationManager). It reads no pod metric. None without dynamic allocation, or
    without a `maxExecutors` (then the count is not known: gpulint.operators)."""
    from gpulint.operators import spark_executors  # only runs with SparkApplications

    found = spark_executors(document.obj)
    if found.dynamic is None or found.maximum is None:
        return None
    maximum, pos = found.maximum
    ref = document.ref
    return Autoscaler(
        DocumentKey.of(document), ref.kind, ref.name, maximum, pos, None, found.minimum
    )


# KEDA's defaults (kedacore/keda apis/keda/v1alpha1/scaledobject_types.go
# defaultHPAMaxReplicas; keda-docs content/docs/2.21/reference/scaledobject-spec.md:
# `minReplicaCount` "Default: 0", `maxReplicaCount` "Default: 100", scaleTargetRef `kind`
# "Default: Deployment").
_KEDA_MAX_REPLICAS = 100
_KEDA_MIN_REPLICAS = 0
_KEDA_TARGET_KIND = "Deployment"
_KEDA_TRANSFER = "scaledobject.keda.sh/transfer-hpa-ownership"
_KEDA_PAUSED = "autoscaling.keda.sh/paused"
_KEDA_PAUSED_REPLICAS = "autoscaling.keda.sh/paused-replicas"


def _scaled_object(document: Document) -> Autoscaler | None:
    """A ScaledObject as the HPA KEDA makes of it, with the floor KEDA itself keeps.

    KEDA creates an HPA with `maxReplicaCount` (default 100) as its maxReplicas and
    `minReplicaCount` as its minReplicas, at least 1 (scaledobject_types.go
    GetHPAMinReplicas); below that KEDA scales the target itself, to `minReplicaCount` (default
    0: to zero) when no trigger is active, or to `idleReplicaCount` when set (it must be less
    than minReplicaCount; "the only supported value ... is 0"). So the pods surely there are
    minReplicaCount's, or idleReplicaCount's when set: of the default, none. A count written
    with a value the API would refuse (not an integer), or no trigger, leaves the object
    unread, as does the annotation `autoscaling.keda.sh/paused: "true"` alone: KEDA then keeps
    "the current instance count" (keda-docs content/docs/2.21/concepts/scaling-deployments.md,
    Pausing autoscaling), taken to be the written one.
    """
    spec = document.obj.get("spec")
    if not isinstance(spec, YMap):
        return None
    target = spec.get("scaleTargetRef")
    if not isinstance(target, YMap) or not isinstance(target.get("name"), str):
        return None
    triggers = spec.get("triggers")
    if not isinstance(triggers, YSeq) or not triggers:
        return None  # the CRD requires one trigger at least (MinItems=1)
    maximum = spec.get("maxReplicaCount", _KEDA_MAX_REPLICAS)
    minimum = spec.get("minReplicaCount", _KEDA_MIN_REPLICAS)
    idle = spec.get("idleReplicaCount")
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (maximum, minimum)):
        return None
    idles = isinstance(idle, int) and not isinstance(idle, bool) and idle < minimum
    if idles:
        minimum = idle
    pos = spec.pos_of_key("maxReplicaCount" if "maxReplicaCount" in spec else "scaleTargetRef")
    annotations = mapping_at(document.obj, "metadata", "annotations")
    if annotations.get(_KEDA_PAUSED) == "true" and _KEDA_PAUSED_REPLICAS not in annotations:
        return None
    adopted = mapping_at(spec, "advanced", "horizontalPodAutoscalerConfig").get("name")
    adopts = (
        adopted if annotations.get(_KEDA_TRANSFER) == "true" and isinstance(adopted, str) else ""
    )
    return Autoscaler(
        DocumentKey.of(document),
        str(target.get("kind", _KEDA_TARGET_KIND)),
        target["name"],
        maximum,
        pos,
        _trigger_utilization(triggers),
        minimum,
        adopts,
        idles,
        "maxReplicaCount" not in spec,
    )


def _scaled_job(document: Document) -> Autoscaler | None:
    """A ScaledJob as an autoscaler of its own Jobs: KEDA creates Jobs of its `jobTargetRef`
    as its triggers ask, keeping at most `maxReplicaCount` (default 100) running and at least
    `minReplicaCount` (default 0) (keda-docs content/docs/2.21/reference/scaledjob-spec.md).
    It reads no pod metric. A count of the wrong type, or no trigger, leaves it unread; so does
    `autoscaling.keda.sh/paused: "true"`, with which KEDA creates no Job."""
    spec = document.obj.get("spec")
    if not isinstance(spec, YMap) or not isinstance(spec.get("jobTargetRef"), YMap):
        return None
    triggers = spec.get("triggers")
    if not isinstance(triggers, YSeq) or not triggers:
        return None
    maximum = spec.get("maxReplicaCount", _KEDA_MAX_REPLICAS)
    minimum = spec.get("minReplicaCount", _KEDA_MIN_REPLICAS)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (maximum, minimum)):
        return None
    if mapping_at(document.obj, "metadata", "annotations").get(_KEDA_PAUSED) == "true":
        return None
    ref = document.ref
    pos = spec.pos_of_key("maxReplicaCount" if "maxReplicaCount" in spec else "jobTargetRef")
    return Autoscaler(
        DocumentKey.of(document),
        ref.kind,
        ref.name,
        maximum,
        pos,
        None,
        min(minimum, maximum),
        default_max="maxReplicaCount" not in spec,
    )


def _runner_set(document: Document) -> Autoscaler | None:
    """An AutoscalingRunnerSet as the autoscaler of its own runners: its listener asks for
    min(minRunners + the jobs GitHub assigns to the scale set, maxRunners) runners
    (actions/actions-runner-controller cmd/ghalistener/scaler/scaler.go
    setDesiredWorkerState), `minRunners` 0 by default. It reads no pod metric. Without
    `maxRunners` its runners have no bound (Workload.unknown_count): no autoscaler is read."""
    spec = document.obj.get("spec")
    if not isinstance(spec, YMap):
        return None
    maximum = spec.get("maxRunners")
    minimum = spec.get("minRunners", 0)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (maximum, minimum)):
        return None
    ref = document.ref
    return Autoscaler(
        DocumentKey.of(document),
        ref.kind,
        ref.name,
        maximum,
        spec.pos_of_key("maxRunners"),
        None,
        min(minimum, maximum),
    )


def _runner_autoscaler(document: Document) -> Autoscaler | None:
    """A legacy actions-runner-controller HorizontalRunnerAutoscaler: it sets the replicas of
    its `scaleTargetRef` (a RunnerDeployment when `kind` is empty, or a RunnerSet) to what its
    metrics suggest plus its capacity reservations, raised to `minReplicas` (1 by default,
    replaced by an active `scheduledOverrides` item's) and only then lowered to `maxReplicas`
    (horizontalrunnerautoscaler_controller.go computeReplicasWithCache, getMinReplicas). So
    the most runners are `maxReplicas` (a larger floor, which wins, is not counted), the fewest
    the smallest floor. It reads no pod metric. Without `maxReplicas` its runners have no
    bound: it is not read."""
    spec = document.obj.get("spec")
    if not isinstance(spec, YMap):
        return None
    target = spec.get("scaleTargetRef")
    maximum = spec.get("maxReplicas")
    if not isinstance(target, YMap) or not isinstance(target.get("name"), str):
        return None
    floors = [spec.get("minReplicas", 1)]
    overrides = spec.get("scheduledOverrides")
    for override in overrides if isinstance(overrides, YSeq) else ():
        if isinstance(override, YMap) and "minReplicas" in override:
            floors.append(override["minReplicas"])
    if not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (maximum, *floors)
    ):
        return None
    return Autoscaler(
        DocumentKey.of(document),
        str(target.get("kind") or "RunnerDeployment"),
        target["name"],
        maximum,
        spec.pos_of_key("maxReplicas"),
        None,
        min(*floors, maximum),
    )


def _trigger_utilization(triggers: YSeq) -> tuple[tuple[str, str], ...] | None:
    """Autoscaler.utilization_of of a ScaledObject: its `cpu` and `memory` triggers are the
    HPA's Resource metrics (a ContainerResource one with `metadata.containerName`) and need the
    pods' requests (keda-docs content/docs/2.21/scalers/cpu.md: without one "the error `missing
    request for {cpu/memory}` occurs"; KEDA's admission webhook refuses such a ScaledObject,
    scaledobject_webhook.go verifyCPUMemoryScalers). Every other trigger is an External metric
    KEDA serves, which needs none: a ScaledObject with one is taken to scale, as an HPA with
    such a metric is, though that webhook, when installed, also refuses it if a cpu or memory
    trigger beside it reads a container without the request (then its maximum is counted
    where the written count would stay: more pods, never fewer)."""
    found = []
    for trigger in triggers:
        kind = trigger.get("type") if isinstance(trigger, YMap) else None
        if kind not in ("cpu", "memory"):
            return None
        container = mapping_at(trigger, "metadata").get("containerName", "")
        found.append((str(kind), str(container)))
    return tuple(found)


#: How each kind of autoscaler is read: the API groups it is read in ("" for any), and its
#: reader.
_READERS: dict[str, tuple[str, Callable[[Document], Autoscaler | None]]] = {
    _HPA: ("", _hpa),
    _SCALED_OBJECT: ("keda.sh/", _scaled_object),
    _SCALED_JOB: ("keda.sh/", _scaled_job),
    _DASK_AUTOSCALER: ("kubernetes.dask.org/", _dask_autoscaler),
    _RUNNER_SET: ("actions.github.com/", _runner_set),
    _RUNNER_AUTOSCALER: ("actions.summerwind.dev/", _runner_autoscaler),
    _SPARK_APPLICATION: ("sparkoperator.k8s.io/", _spark_dynamic_allocation),
    _SCHEDULED_SPARK_APPLICATION: ("sparkoperator.k8s.io/", _spark_dynamic_allocation),
}


def _utilization_metrics(api_version: str, spec: YMap) -> tuple[tuple[str, str], ...] | None:
    """Autoscaler.utilization_of of an HPA's spec, as the API defaults it: autoscaling/v1 has
    only `targetCPUUtilizationPercentage`; v2 (and its betas) default an empty `metrics` to
    80% cpu utilization (SetDefaults_HorizontalPodAutoscaler)."""
    if api_version == "autoscaling/v1":
        return (("cpu", ""),)
    metrics = spec.get("metrics")
    if metrics is None or (isinstance(metrics, YSeq) and not metrics):
        return (("cpu", ""),)
    if not isinstance(metrics, YSeq):
        return None
    found = []
    for metric in metrics:
        kind = metric.get("type") if isinstance(metric, YMap) else None
        key = {"Resource": "resource", "ContainerResource": "containerResource"}.get(str(kind))
        source = metric.get(key) if key is not None and isinstance(metric, YMap) else None
        if not isinstance(source, YMap) or not isinstance(source.get("name"), str):
            return None
        target = source.get("target")
        by_utilization = (
            isinstance(target, YMap) and target.get("type") == "Utilization"
        ) or "targetAverageUtilization" in source  # v2beta1
        if not by_utilization:
            return None
        container = source.get("container", "") if key == "containerResource" else ""
        found.append((source["name"], str(container)))
    return tuple(found)


def can_scale(scaler: Autoscaler, template: PodTemplate) -> bool:
    """Whether the HPA can compute a replica count for pods of `template`: some metric needs no
    request, or the pods request what one utilization metric reads, in every container it
    reads (app containers and sidecars; replica_calculator.go calculatePodRequests: "missing
    request for cpu"). When no metric can be computed the HPA keeps the count in its range and
    never scales on load (computeReplicasForMetrics). A request the namespace's LimitRange
    would default is not seen here: the HPA is then taken to scale by less than it may."""
    if scaler.utilization_of is None or template.operator_resources:
        return True
    pod_level = mapping_at(template.spec, "resources", "requests")
    for resource, container in scaler.utilization_of:
        if not container and resource in pod_level:
            return True  # pod-level resources: the HPA reads the pod's request
        read = [c for c in template.app_containers if not container or c.name == container]
        if read and all(resource in c.resources.effective_requests() for c in read):
            return True
    return False


def autoscaler_for(workload: Workload, scalers: Iterable[Autoscaler]) -> Autoscaler | None:
    """The autoscaler (same namespace, matching kind and name) that scales `workload`, if any:
    the first, unless a later one outranks it (an HPA a ScaledObject's target already has)."""
    ref = workload.document.ref
    kind, name, namespace = ref.kind, ref.name, ref.namespace
    found = None
    # Every workload scans every autoscaler: compare the most selective field first.
    for scaler in scalers:
        if (
            scaler.target_name == name
            and scaler.target_kind == kind
            and scaler.document.ref.namespace == namespace
            and (found is None or scaler.outranks(found))
        ):
            found = scaler
    return found


class PeakReplicas(NamedTuple):
    """The most pods of each template a workload runs at once, and where that is written."""

    count: int
    # What to change: "replicas", "parallelism", "maxReplicas", "maxReplicaCount"; "" for a
    # bare Pod.
    field: str
    document: DocumentLike  # the workload, or the autoscaler that scales it
    pos: Pos | None  # None: the kind's default, or a bare Pod
    autoscaler: Autoscaler | None = None  # set when the autoscaler's maximum is the peak
    replicas: ReplicaCount | None = None  # the count as the workload writes it

    def describe(self) -> str:
        """How a message names the count: `replicas: 3`, `replicas: 2 × parallelism: 4`."""
        if self.autoscaler is not None:
            ref = self.document.ref
            where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
            words = self.autoscaler.words
            default = " (the default)" if self.autoscaler.default_max else ""
            most = self.autoscaler.max_replicas
            if ref.kind == _SCALED_JOB and self.replicas is not None and self.replicas.value != 1:
                # Its Jobs' pods: `maxReplicaCount: 10 × parallelism: 2`.
                return (
                    f"{words.noun} {where} {words.max_field}: {most}{default} × "
                    f"{self.replicas.describe()}"
                )
            return f"{words.noun} {where} {words.max_field}: {self.count}{default}"
        if self.replicas is None or not self.field:
            return "1 pod"
        return self.replicas.describe()


def peak_replicas(
    workload: Workload, scalers: Iterable[Autoscaler], template: PodTemplate | None = None
) -> PeakReplicas | None:
    """The peak pod count of `template` (else the workload's first); None for kinds that run
    one pod per node (DaemonSet).

    With an HPA the peak is the larger of its maxReplicas and the written replica count: the
    HPA moves the count into its range, but a count above maxReplicas exists until it does.
    An HPA that can compute no metric of the pods (`can_scale`) leaves the written count.
    """
    count = template.replicas if template is not None else workload.replicas
    if count is None:
        return None
    peak = PeakReplicas(count.value, count.field, workload.document, count.pos, None, count)
    if workload.group_gang and count.factors:
        # The HPA scales the groups (`spec.replicas`), each of `count / groups` such pods.
        groups = count.factors[0].value
        scaler = autoscaler_for(workload, scalers)
        if scaler is not None and groups and scaler.max_replicas >= groups:
            per_group = count.value // groups
            return PeakReplicas(
                scaler.max_replicas * per_group,
                scaler.words.max_field,
                scaler.document,
                scaler.pos,
                scaler,
                count,
            )
        return peak
    if count.factors or not count.field:
        return peak  # an HPA scales a single replica count
    scaler = autoscaler_for(workload, scalers)
    if scaler is not None and scaler.document.ref.kind == _SCALED_JOB:
        # Up to maxReplicaCount Jobs at once, each of `parallelism` pods.
        return PeakReplicas(
            scaler.max_replicas * count.value,
            scaler.words.max_field,
            scaler.document,
            scaler.pos,
            scaler,
            count,
        )
    first = template if template is not None else next(iter(workload.templates), None)
    if (
        scaler is not None
        and first is not None
        and scaler.min_replicas <= count.value
        and not can_scale(scaler, first)
    ):
        return peak  # the HPA keeps the written count: it never scales on load
    if scaler is not None and scaler.max_replicas >= count.value:
        return PeakReplicas(
            scaler.max_replicas, scaler.words.max_field, scaler.document, scaler.pos, scaler, count
        )
    return peak


def groups_of(template: PodTemplate, pods: int) -> int:
    """How many groups of a group gang `pods` pods of `template` are: its count's first factor
    (a LeaderWorkerSet's `replicas`, a ModelServing's `spec.replicas`) at that many pods. A
    group's size is not its gang's need: a gang may start with fewer (`minRoleReplicas`)."""
    count = template.replicas
    if count is None or not count.factors or not count.value:
        return pods
    return pods * count.factors[0].value // count.value


class GangPart(NamedTuple):
    """One role's share of a gang: the pods it needs at once and where that is written."""

    template: PodTemplate
    pods: int
    count: ReplicaCount  # the field to change to shrink this part


def gang_parts(
    workload: Workload,
    amount: Callable[[PodTemplate], Decimal],
    priorities: Mapping[str, int] | None = None,
) -> tuple[GangPart, ...]:
    """The pods each role of a gang needs at once, to hold the least of `amount` in total.

    A role's share is its pod count, or its own gang minimum (Ray worker `minReplicas` under
    autoscaling, Volcano task `minAvailable`); of a workload whose groups are gangs of their
    own (a LeaderWorkerSet), its pods in one group. A workload-wide minimum (`minAvailable`) is met
    with the pods that hold the least `amount`: less can never start the job; Volcano meets it
    with the first pods of its tasks sorted by priority class (`gang_min_in_order`, see
    `volcano_task_order`), when the value of every class they name is in `priorities`.
    """
    parts = []
    for template in workload.templates:
        count = template.gang_min or template.replicas
        if count is None:
            continue
        pods = count.value
        if template.gang_min is not None and template.replicas and template.replicas.factors:
            # minReplicas counts groups; a group of a multi-host Ray worker has numOfHosts pods.
            pods *= template.replicas.value // max(template.replicas.factors[0].value, 1)
        if workload.group_gang:
            # One group: the count's factors after the groups' (a LeaderWorkerSet's `size - 1`
            # workers; a ModelServing role's `replicas` × `workerReplicas`), the first of them
            # capped by the role's own gang minimum (Kthena's `minRoleReplicas`).
            rest = template.replicas.factors[1:] if template.replicas else ()
            if template.gang_min is not None and rest and template.gang_min.value < rest[0].value:
                rest = (template.gang_min, *rest[1:])
            group = ReplicaCount.product(rest)
            pods = group.value
        else:
            group = count
        parts.append(GangPart(template, pods, group))
    minimum = workload.gang_min
    if minimum is None or minimum.pos is None or any(t.gang_min for t in workload.templates):
        return tuple(parts)
    left = minimum.value
    chosen = []
    ordered = volcano_task_order(parts, priorities) if workload.gang_min_in_order else None
    for part in ordered or sorted(parts, key=lambda p: amount(p.template)):
        take = min(left, part.pods)
        if take:
            chosen.append(GangPart(part.template, take, minimum))
        left -= take
    return tuple(chosen)


#: Go's sort.Sort keeps the order of equal elements in a slice of at most this many (its
#: insertion sort); a longer one it may reorder.
_GO_STABLE_SORT = 12


def volcano_task_order(
    parts: Sequence[GangPart], priorities: Mapping[str, int] | None
) -> list[GangPart] | None:
    """`parts` in the order Volcano meets a Job's `minAvailable` with; None when it is unknown.

    volcano-sh/volcano pkg/controllers/job/job_controller_actions.go calcPGMinResources sorts
    the tasks by the value of their template's own priorityClassName (not the Job's, which
    only their pods get), highest first, a task naming none at 0, with Go's sort.Sort: task
    order among equals, for at most 12 tasks. A class whose value `priorities` does not hold
    (the cluster's classes are not known) leaves the order unknown.
    """
    names = [part.template.own_priority_class_name for part in parts]
    if len(set(names)) <= 1:
        return list(parts)
    if len(parts) > _GO_STABLE_SORT:
        return None
    values = []
    for name in names:
        if name is not None and (priorities is None or name not in priorities):
            return None
        values.append(0 if name is None else priorities[name])  # type: ignore[index]
    ranked = sorted(range(len(parts)), key=lambda index: -values[index])  # stable
    return [parts[index] for index in ranked]


def describe_gang(parts: Iterable[tuple[GangPart, Decimal]]) -> str:
    """`Master: replicas: 1 × 8 per pod; Worker: 2 of minAvailable: 5 × 8 per pod`."""
    return "; ".join(
        f"{part.template.role or 'pod'}: {_part_count(part)} × {format_quantity(amount)} per pod"
        for part, amount in parts
    )


def _part_count(part: GangPart) -> str:
    if not part.count.field:
        return str(part.pods)  # one pod of a group (a LeaderWorkerSet's leader)
    described = part.count.describe()
    return described if part.count.value == part.pods else f"{part.pods} of {described}"


class PlannedPods(NamedTuple):
    """How many pods of a workload may run at once, and where that number is written."""

    count: int
    document: DocumentLike  # the workload, or the autoscaler that scales it
    pos: Pos
    # What to change: `replicas`, `maxReplicas`, `maxReplicaCount`, `parallelism`; "" for a Pod.
    field: str
    # How a message names it: `replicas: 3`, `HPA ml/web maxReplicas: 6`,
    # `ScaledObject ml/web maxReplicaCount: 6`.
    source: str
    # The fewest pods there surely are: `count`, or what an autoscaler keeps at least (its
    # Autoscaler.min_replicas) when `count` is its maximum, which it reaches only under load.
    least: int
    # Pods per unit of `field`: the other factors of a product (`replicas: 3 × size: 2` has 2
    # pods per replica), so a fix lowers `field` by whole units.
    per: int = 1
    autoscaler: Autoscaler | None = None  # the one whose maximum `count` is


def runs_on_every_node(workload: Workload) -> bool:
    """A DaemonSet: one pod per matching node, so no replica count to check."""
    return workload.kind == "DaemonSet"


def planned_pods(
    workload: Workload, template: PodTemplate, scalers: Iterable[Autoscaler]
) -> PlannedPods:
    """The most pods of `template` run at once (replicas.peak_replicas), worded for messages;
    none for a template other objects run (a ServingRuntime, a ServerConfig)."""
    peak = peak_replicas(workload, scalers, template)
    spec_pos = workload.document.obj.pos_of_key("spec")
    if template.runs_no_pods:
        return PlannedPods(0, workload.document, spec_pos, "", "no pod of its own", 0)
    if peak is None or not peak.field:
        # One pod of one role among several (a Ray head, a Dask scheduler): point at the role.
        role = template.role_node
        where = role.pos if role is not None and len(workload.templates) > 1 else spec_pos
        return PlannedPods(1, workload.document, where, "", "1 pod", 1)
    least = peak.count
    scaler = peak.autoscaler
    per = 1
    if scaler is not None and scaler.max_replicas:
        # The HPA scales replica counts (of a LeaderWorkerSet: groups of `per` pods each).
        per = peak.count // scaler.max_replicas
        least = min(peak.count, scaler.min_replicas * per)
    else:
        # A product is lowered at its first written factor (ReplicaCount.field).
        factors = peak.replicas.factors if peak.replicas is not None else ()
        lead = next((f for f in factors if f.pos == peak.pos and f.field == peak.field), None)
        per = peak.count // lead.value if lead is not None and lead.value else 1
    where = peak.pos or spec_pos
    return PlannedPods(
        peak.count, peak.document, where, peak.field, peak.describe(), least, max(per, 1), scaler
    )


# Kubernetes' default for `maxSurge` of a RollingUpdate Deployment.
_DEFAULT_SURGE_PERCENT = 25
# How a replica count field reads in a message: (one, several).
_COUNT_WORDS = {
    "replicas": ("replica", "replicas"),
    "parallelism": ("parallel pod", "parallel pods"),
}


class PodDemand(NamedTuple):
    """The most pods of one template that exist at once, and where that number is written."""

    workload: Workload
    template: PodTemplate
    base: int  # replicas, an autoscaler's maximum, Job parallelism, 1 for a bare Pod
    base_label: str  # "replicas", "maxReplicas of HPA ml/x", "maxReplicaCount of ScaledObject ml/x"
    surge: int  # extra pods during a Deployment rolling update
    document: DocumentLike  # where `pos` is written (the workload, or its autoscaler)
    pos: Pos | None  # None: the count is a default, point at the GPU limit instead
    # The fewest pods charged surely, surge included: `pods`, or, when `base` is an
    # autoscaler's maximum (reached only under load), those of its floor (min_replicas).
    least: int
    autoscaler: Autoscaler | None = None  # the one whose maximum `base` is

    @property
    def pods(self) -> int:
        """Pods charged at the peak: the base count plus the rollout surge."""
        return self.base + self.surge

    def describe(self, per_pod: Decimal | None = None) -> str:
        """`2 replicas × 2`, `(4 replicas + 1 rolling-update surge) × 1`, `3 replicas`."""
        count = f"{self.base} {self.base_label}"
        if self.surge:
            count = f"{count} + {self.surge} rolling-update surge"
            if per_pod is not None:
                count = f"({count})"
        return count if per_pod is None else f"{count} × {format_quantity(per_pod)}"


def rollout_surge(workload: Workload, replicas: int) -> int:
    """Extra pods a Deployment's RollingUpdate creates: `maxSurge` (default 25%, rounded up)."""
    if workload.kind != "Deployment":
        return 0
    strategy = mapping_at(workload.document.obj, "spec", "strategy")
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    surge = mapping_at(strategy, "rollingUpdate").get("maxSurge", f"{_DEFAULT_SURGE_PERCENT}%")
    if isinstance(surge, int) and not isinstance(surge, bool):
        return max(surge, 0)
    # `25%`: ASCII digits and a percent sign (checked without a regular expression, which
    # every run with a profile would compile at its start).
    digits, sign = str(surge)[:-1], str(surge)[-1:]
    if sign != "%" or not (digits.isascii() and digits.isdigit()):
        return 0
    return math.ceil(replicas * int(digits) / 100)


def pod_demand(
    workload: Workload, template: PodTemplate, scalers: Iterable[Autoscaler]
) -> PodDemand | None:
    """The peak pod count of a template, surge included; None for kinds that run one pod per
    node. `scalers` are the autoscalers whose target is the workload."""
    peak = peak_replicas(workload, scalers, template)
    if peak is None:
        return None
    if peak.autoscaler is not None:
        ref = peak.document.ref
        words = peak.autoscaler.words
        label = f"{words.max_field} of {words.noun} {ref.namespace or ''}/{ref.name}"
    else:
        singular, plural = _COUNT_WORDS.get(peak.field, ("pod", "pods"))
        label = singular if peak.count == 1 else plural
    surge = rollout_surge(workload, peak.count)
    least = peak.count + surge
    if peak.autoscaler is not None:
        fewest = min(peak.autoscaler.min_replicas, peak.count)
        least = fewest + rollout_surge(workload, fewest)
    return PodDemand(
        workload,
        template,
        peak.count,
        label,
        surge,
        peak.document,
        peak.pos,
        least,
        peak.autoscaler,
    )


#: The restart policies of pods that run to completion (a Job's must be one of them).
_FINITE = ("Never", "OnFailure")


def runs_to_completion(workload: Workload, template: PodTemplate) -> bool:
    """Whether the pods are independent and end: a bare Pod or a Job's (a CronJob's) whose
    restartPolicy is Never or OnFailure. An Indexed Job's pods are often one distributed
    program whose pods wait for each other, holding their GPUs, and an operator's may be
    started together: neither frees GPUs surely, so neither counts."""
    if workload.gang or template.spec.get("restartPolicy") not in _FINITE:
        return False
    obj = workload.document.obj
    kind, version = workload.kind, str(obj.get("apiVersion", ""))
    if kind == "Pod":
        return version == "v1"
    if kind not in ("Job", "CronJob") or not version.startswith("batch/"):
        return False
    spec = obj.get("spec")
    if kind == "CronJob":
        job = spec.get("jobTemplate") if isinstance(spec, YMap) else None
        spec = job.get("spec") if isinstance(job, YMap) else None
    return not (isinstance(spec, YMap) and spec.get("completionMode") == "Indexed")
