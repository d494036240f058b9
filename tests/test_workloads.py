"""replicas.peak_replicas: the one answer to "how many pods at once" that rules share."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from gpulint.loader import load_text
from gpulint.model import Severity
from gpulint.replicas import (
    autoscalers,
    gang_parts,
    peak_replicas,
    planned_pods,
    under_load_words,
)
from gpulint.workloads import role_at, with_server_configs, workload_of

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  replicas: 4
  template:
    spec:
      containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"""
HPA = """\
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: ml}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: %d
"""


def _peak(text: str):
    loaded = load_text("w.yaml", text)
    workload = workload_of(loaded.documents[0])
    assert workload is not None
    return peak_replicas(workload, tuple(autoscalers(loaded.documents)))


def test_replicas_without_an_hpa_is_the_peak_where_it_is_written() -> None:
    peak = _peak(DEPLOYMENT)
    assert (peak.count, peak.field, peak.pos, peak.autoscaler) == (4, "replicas", (5, 3), None)


def test_an_hpa_with_a_higher_max_sets_the_peak_at_its_max_replicas() -> None:
    peak = _peak(DEPLOYMENT + HPA % 10)
    assert (peak.count, peak.field, peak.pos) == (10, "maxReplicas", (15, 3))
    assert peak.document.ref.kind == "HorizontalPodAutoscaler"


def _scaled(container: str, hpa_spec: str, api_version: str = "autoscaling/v2") -> int:
    """The peak of a Deployment of 2 replicas with `container`, under an HPA of 10."""
    return _peak(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        f"  replicas: 2\n  template:\n    spec:\n      containers: [{container}]\n---\n"
        f"apiVersion: {api_version}\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\n"
        "spec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 10\n"
        f"{hpa_spec}"
    ).count


CPU = "{name: c, resources: {requests: {cpu: 1}}}"
GPU_ONLY = "{name: c, resources: {limits: {nvidia.com/gpu: 1}}}"
CPU_LIMIT = "{name: c, resources: {limits: {cpu: 1, nvidia.com/gpu: 1}}}"
UTILIZATION = (
    "  metrics:\n  - type: Resource\n    resource: {name: %s, target: {type: Utilization}}\n"
)


@pytest.mark.parametrize(
    ("container", "hpa_spec", "api_version", "peak"),
    [
        # No metrics: the API's default, 80% cpu utilization, which needs a cpu request.
        (GPU_ONLY, "", "autoscaling/v2", 2),
        (CPU, "", "autoscaling/v2", 10),
        (CPU_LIMIT, "", "autoscaling/v2", 10),  # the request defaults to the limit
        (GPU_ONLY, "  targetCPUUtilizationPercentage: 50\n", "autoscaling/v1", 2),
        (CPU, "  targetCPUUtilizationPercentage: 50\n", "autoscaling/v1", 10),
        (CPU, UTILIZATION % "memory", "autoscaling/v2", 2),
        (CPU, UTILIZATION % "memory" + UTILIZATION.split("\n", 1)[1] % "cpu", "autoscaling/v2", 10),
        # A value target, a Pods or External metric need no request.
        (
            GPU_ONLY,
            "  metrics:\n  - type: Resource\n"
            "    resource: {name: cpu, target: {type: AverageValue, averageValue: 1}}\n",
            "autoscaling/v2",
            10,
        ),
        (GPU_ONLY, "  metrics:\n  - type: External\n    external: {}\n", "autoscaling/v2", 10),
        # v2beta1 writes the utilization on the source.
        (
            GPU_ONLY,
            "  metrics:\n  - type: Resource\n"
            "    resource: {name: cpu, targetAverageUtilization: 50}\n",
            "autoscaling/v2beta1",
            2,
        ),
        # A container metric reads its container only.
        (
            f"{CPU}, {{name: side, image: x}}",
            "  metrics:\n  - type: ContainerResource\n"
            "    containerResource: {name: cpu, container: c, target: {type: Utilization}}\n",
            "autoscaling/v2",
            10,
        ),
        (f"{CPU}, {{name: side, image: x}}", "", "autoscaling/v2", 2),
    ],
)
def test_an_hpa_that_computes_no_metric_of_its_pods_never_scales_them(
    container: str, hpa_spec: str, api_version: str, peak: int
) -> None:
    # Utilization is usage over request: pods without the request give the HPA no metric
    # ("missing request for cpu"), and it keeps the written count.
    assert _scaled(container, hpa_spec, api_version) == peak


def test_replicas_above_the_hpa_max_still_exist_until_the_hpa_acts() -> None:
    peak = _peak(DEPLOYMENT + HPA % 2)
    assert (peak.count, peak.field, peak.autoscaler) == (4, "replicas", None)


SCALED_OBJECT = """\
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web-scaler, namespace: ml}
spec:
  scaleTargetRef: {name: web}
%s"""
PROMETHEUS = "  triggers:\n  - {type: prometheus, metadata: {query: q, threshold: '1'}}\n"


def _planned(text: str):
    loaded = load_text("w.yaml", text)
    workload = workload_of(loaded.documents[0])
    assert workload is not None
    return planned_pods(workload, workload.templates[0], tuple(autoscalers(loaded.documents)))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # KEDA's defaults: maxReplicaCount 100, minReplicaCount 0 (no pod is sure), the finding
        # at scaleTargetRef, where the default applies.
        (PROMETHEUS, (100, "maxReplicaCount", (14, 3), 0)),
        (
            "  maxReplicaCount: 8\n  minReplicaCount: 2\n" + PROMETHEUS,
            (8, "maxReplicaCount", (15, 3), 2),
        ),
        # idleReplicaCount (below minReplicaCount) is what KEDA scales to when idle.
        (
            "  maxReplicaCount: 8\n  minReplicaCount: 2\n  idleReplicaCount: 0\n" + PROMETHEUS,
            (8, "maxReplicaCount", (15, 3), 0),
        ),
        # A cpu trigger reads the cpu request, which the pods have.
        (
            "  maxReplicaCount: 8\n  triggers:\n  - {type: cpu, metadata: {value: '50'}}\n",
            (8, "maxReplicaCount", (15, 3), 0),
        ),
    ],
)
def test_a_scaled_object_scales_like_an_hpa_between_its_counts(spec: str, expected) -> None:
    planned = _planned(DEPLOYMENT + SCALED_OBJECT % spec)
    assert (planned.count, planned.field, planned.pos, planned.least) == expected
    assert planned.document.ref.kind == "ScaledObject"
    default = "" if "maxReplicaCount" in spec else " (the default)"
    assert planned.source == f"ScaledObject ml/web-scaler maxReplicaCount: {expected[0]}{default}"


@pytest.mark.parametrize(
    "triggers",
    [
        "  triggers:\n  - {type: memory, metadata: {value: '50'}}\n",
        # A container's cpu: that container requests none.
        "  triggers:\n  - {type: cpu, metadata: {value: '50', containerName: side}}\n",
    ],
)
def test_a_scaled_object_reading_a_resource_the_pods_do_not_request_never_scales(
    triggers: str,
) -> None:
    text = DEPLOYMENT.replace("[{name: c,", "[{name: side, image: s}, {name: c,")
    peak = _peak(text + SCALED_OBJECT % ("  maxReplicaCount: 8\n" + triggers))
    assert (peak.count, peak.field, peak.autoscaler) == (4, "replicas", None)


@pytest.mark.parametrize(
    "spec", ["  maxReplicaCount: many\n" + PROMETHEUS, "  maxReplicaCount: 8\n  triggers: []\n"]
)
def test_a_scaled_object_the_api_refuses_is_not_read(spec: str) -> None:
    peak = _peak(DEPLOYMENT + SCALED_OBJECT % spec)
    assert (peak.count, peak.field) == (4, "replicas")


def test_a_paused_scaled_object_keeps_the_written_count() -> None:
    # `autoscaling.keda.sh/paused: "true"`: KEDA keeps the current instance count.
    paused = SCALED_OBJECT.replace(
        "namespace: ml}", "namespace: ml, annotations: {autoscaling.keda.sh/paused: 'true'}}"
    )
    peak = _peak(DEPLOYMENT + paused % ("  maxReplicaCount: 8\n" + PROMETHEUS))
    assert (peak.count, peak.field, peak.autoscaler) == (4, "replicas", None)


def test_messages_name_the_floor_each_autoscaler_keeps() -> None:
    text = DEPLOYMENT + HPA % 10
    idle = "  maxReplicaCount: 8\n  minReplicaCount: 2\n  idleReplicaCount: 0\n" + PROMETHEUS
    hpa = _planned(text).autoscaler
    keda = _planned(DEPLOYMENT + SCALED_OBJECT % ("  minReplicaCount: 1\n" + PROMETHEUS))
    idling = _planned(DEPLOYMENT + SCALED_OBJECT % idle).autoscaler
    assert under_load_words([hpa, None]) == ("HPA", "HPAs", "maxReplicas", "minReplicas")
    assert under_load_words([None]) == under_load_words([hpa])
    assert under_load_words([idling, keda.autoscaler, hpa, idling]) == (
        "HPA and ScaledObject",
        "HPAs and ScaledObjects",
        "maxReplicas / maxReplicaCount",
        "minReplicas / idleReplicaCount / minReplicaCount",
    )


ADOPTING = """\
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: web-scaler
  namespace: ml
  annotations: {scaledobject.keda.sh/transfer-hpa-ownership: "%s"}
spec:
  scaleTargetRef: {name: web}
  maxReplicaCount: 20
  advanced: {horizontalPodAutoscalerConfig: {name: web}}
  triggers: [{type: prometheus, metadata: {query: q, threshold: '1'}}]
"""


@pytest.mark.parametrize(
    ("transfer", "field"), [("true", "maxReplicaCount"), ("false", "maxReplicas")]
)
@pytest.mark.parametrize("hpa_first", [True, False])
def test_an_hpa_outranks_a_scaled_object_that_does_not_take_it_over(
    transfer: str, field: str, hpa_first: bool
) -> None:
    # KEDA refuses a ScaledObject whose target an HPA already scales, unless it takes that HPA
    # over; the order the two are written in does not matter.
    scalers = [HPA % 10, ADOPTING % transfer]
    text = DEPLOYMENT + "".join(scalers if hpa_first else scalers[::-1])
    assert _peak(text).field == field


@pytest.mark.parametrize(
    ("kind", "api_version", "expected"),
    [("Pod", "v1", (1, "", None)), ("DaemonSet", "apps/v1", None)],
)
def test_pods_count_once_and_daemonsets_have_no_count(kind, api_version, expected) -> None:
    template = (
        "spec: {containers: [{name: c}]}"
        if kind == "Pod"
        else "spec: {template: {spec: {containers: [{name: c}]}}}"
    )
    peak = _peak(f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n{template}\n")
    assert (None if peak is None else (peak.count, peak.field, peak.pos)) == expected


def _workload(text: str):
    (document,) = load_text("w.yaml", text).documents
    workload = workload_of(document)
    assert workload is not None
    return workload


RAY = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  enableInTreeAutoscaling: %s
  headGroupSpec:
    template:
      spec:
        containers: [{name: head}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 3
    minReplicas: 1
    template:
      spec:
        containers: [{name: worker}]
"""


@pytest.mark.parametrize(("autoscaling", "gang_min"), [("true", 1), ("false", None)])
def test_ray_roles_counts_and_the_autoscaling_minimum(autoscaling: str, gang_min) -> None:
    workload = _workload(RAY % autoscaling)
    head, worker = workload.templates
    assert (head.role, head.replicas.value, worker.role, worker.replicas.value) == (
        "head", 1, "gpu", 3
    )  # fmt: skip
    assert (worker.gang_min.value if worker.gang_min else None) == gang_min
    assert workload.gang
    parts = gang_parts(workload, lambda t: Decimal(1))
    assert [p.pods for p in parts] == [1, gang_min or 3]


LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
%s    workerTemplate:
      spec:
        containers: [{name: worker}]
"""
LEADER = "    leaderTemplate:\n      spec:\n        containers: [{name: leader}]\n"


def test_lws_workers_exclude_the_leader_only_when_it_has_its_own_template() -> None:
    leader, worker = _workload(LWS % LEADER).templates
    assert (leader.replicas.value, worker.replicas.value) == (2, 6)
    # The size written, less the leader: not a `size: 3` the manifest does not say.
    assert worker.replicas.describe() == "replicas: 2 × (size: 4 - 1)"
    (alone,) = _workload(LWS % "").templates
    assert (alone.role, alone.replicas.value) == ("worker", 8)
    assert alone.replicas.describe() == "replicas: 2 × size: 4"


MODEL_SERVING = """\
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelServing
metadata: {name: ms}
spec:
  replicas: 2
  template:
%s    roles:
    - name: prefill
      replicas: 3
      entryTemplate:
        spec:
          containers: [{name: entry}]
      workerReplicas: 2
      workerTemplate:
        spec:
          containers: [{name: worker}]
    - name: decode
      entryTemplate:
        spec:
          containers: [{name: entry}]
"""
MIN_ROLE = "    gangPolicy:\n      minRoleReplicas: {prefill: 1}\n"


@pytest.mark.parametrize(("policy", "group"), [("", [3, 1, 6]), (MIN_ROLE, [1, 1, 2])])
def test_a_model_serving_group_is_a_gang_of_every_role_s_entry_and_worker_pods(
    policy: str, group: list[int]
) -> None:
    workload = _workload(MODEL_SERVING % policy)
    prefill, decode, prefill_worker = workload.templates
    assert [t.role for t in workload.templates] == [
        "prefill entry",
        "decode entry",
        "prefill worker",
    ]
    # ServingGroups × role copies (× workers per copy); decode writes no replicas: 1.
    assert [t.replicas.value for t in workload.templates] == [6, 2, 12]
    assert prefill_worker.replicas.describe() == "replicas: 2 × replicas: 3 × workerReplicas: 2"
    assert workload.gang and workload.group_gang
    # One ServingGroup at once; `minRoleReplicas` caps the copies of its role the gang needs.
    parts = gang_parts(workload, lambda t: Decimal(1))
    assert [p.pods for p in parts] == group
    assert (prefill.gang_min is not None) == bool(policy)
    assert decode.gang_min is None


MODEL_BOOSTER = """\
apiVersion: workload.serving.volcano.sh/v1alpha1
kind: ModelBooster
metadata: {name: mb}
spec:
  backend:
    name: Llama
    type: %s
    runtimeClassName: nvidia
    replicas: 2
    workers:
    - type: decode
      replicas: 5
    - image: vllm/vllm-openai:v0.8.5
      replicas: 3
      pods: 4
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      resources: {limits: {nvidia.com/gpu: 8}}
"""


def test_a_model_booster_runs_the_model_serving_its_controller_writes() -> None:
    workload = _workload(MODEL_BOOSTER % "vLLM")
    # A vLLM backend runs its `server` (the type a worker that writes none has), not `decode`.
    entry, worker = workload.templates
    assert (entry.role, worker.role) == ("server entry", "server worker")
    assert (entry.replicas.value, worker.replicas.value) == (6, 18)
    assert worker.replicas.describe() == "replicas: 2 × replicas: 3 × (pods: 4 - 1)"
    assert [c.name for c in entry.containers] == ["engine"]
    assert [c.name for c in worker.containers] == ["llama-vllm-worker"]
    assert entry.spec["runtimeClassName"] == "nvidia"
    assert entry.spec["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert workload.group_gang
    assert [p.pods for p in gang_parts(workload, lambda t: Decimal(1))] == [3, 9]
    # A disaggregated backend runs `prefill` and `decode` only: here, decode's entry pod.
    (decode,) = _workload(MODEL_BOOSTER % "vLLMDisaggregated").templates
    assert (decode.role, decode.replicas.value, decode.containers[0].name) == (
        "decode entry", 10, "vllm"
    )  # fmt: skip
    unknown = _workload(MODEL_BOOSTER % "SGLang")
    assert unknown.templates == ()
    assert "backend type `SGLang`" in unknown.unread[0].reason


def test_jobset_counts_replicas_times_parallelism_and_names_roles_by_position() -> None:
    text = (
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\nspec:\n"
        "  replicatedJobs:\n  - name: workers\n    replicas: 2\n    template:\n      spec:\n"
        "        parallelism: 4\n        template:\n          spec:\n"
        "            containers: [{name: c}]\n"
    )
    workload = _workload(text)
    (template,) = workload.templates
    assert (template.role, template.replicas.value, template.replicas.pos) == ("workers", 8, (7, 5))
    assert role_at(workload, (13, 13)) == "workers"
    assert role_at(workload, (1, 1)) is None


def test_findings_inside_a_role_name_the_workload_and_the_role() -> None:
    from pathlib import Path

    from gpulint.api import lint
    from gpulint.profile import load_profiles

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    profile = load_profiles([str(fixtures / "profiles" / "placement-eks.yaml")])
    case = fixtures / "cases" / "workloads" / "GPU103-raycluster-scale-to-zero-workers.yaml"
    (finding,) = lint([str(case)], profile=profile).findings
    assert finding.code == "GPU103"
    assert finding.message.startswith("RayCluster/raycluster-autoscaler gpu-group: required ")


# Roles whose pod template is of the wrong type, beside a readable one (RayJob's submitter
# holds the others; a LeaderWorkerSet's two templates share one mapping), and a kind the
# config declares: what is wrong in a role names that role, readable or not.
UNREADABLE_ROLES = {
    "rayjob": (
        """\
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: rj, namespace: ml}
spec:
  rayClusterSpec:
    headGroupSpec:
      template:
        spec: head
    workerGroupSpecs:
    - groupName: gpu
      replicas: "2"
      template:
        spec: worker
  submitterPodTemplate:
    spec:
      containers: [{name: submit, image: "ray:2"}]
""",
        None,
        [
            (
                8,
                15,
                "RayJob/rj head: `spec.rayClusterSpec.headGroupSpec.template.spec`",
                "a mapping",
            ),
            (
                11,
                17,
                "RayJob/rj gpu: `spec.rayClusterSpec.workerGroupSpecs[0].replicas`",
                "an integer",
            ),
            (
                13,
                15,
                "RayJob/rj gpu: `spec.rayClusterSpec.workerGroupSpecs[0].template.spec`",
                "a mapping",
            ),
        ],
    ),
    "leaderworkerset": (
        """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  leaderWorkerTemplate:
    size: "4"
    leaderTemplate:
      spec:
        containers: [{name: leader, image: "vllm:1"}]
    workerTemplate:
      spec: worker
""",
        None,
        [
            (6, 11, "`spec.leaderWorkerTemplate.size`", "an integer"),  # counts both roles' pods
            (
                11,
                13,
                "LeaderWorkerSet/lws worker: `spec.leaderWorkerTemplate.workerTemplate.spec`",
                "a mapping",
            ),
        ],
    ),
    "declared": (
        """\
apiVersion: train.example.com/v1
kind: TrainingRun
metadata: {name: run}
spec:
  roles:
    trainer:
      template:
        spec:
          containers: trainer
    evaluator:
      template:
        spec: evaluator
""",
        "workloads:\n- kind: TrainingRun\n  podTemplates: [spec.roles.*.template]\n",
        [
            (
                9,
                23,
                "TrainingRun/run trainer: `spec.roles.trainer.template.spec.containers`",
                "a list",
            ),
            (
                12,
                15,
                "TrainingRun/run evaluator: `spec.roles.evaluator.template.spec`",
                "a mapping",
            ),
        ],
    ),
}


@pytest.mark.parametrize("case", UNREADABLE_ROLES)
def test_what_is_wrong_in_a_role_names_the_role_whether_its_pod_spec_reads_or_not(
    tmp_path, case: str
) -> None:
    from gpulint.api import lint
    from gpulint.catalogue import catalogue_codes
    from gpulint.config import Config, load_config

    text, declared, expected = UNREADABLE_ROLES[case]
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(text, encoding="utf-8")
    config = Config()
    if declared is not None:
        (tmp_path / ".gpulint.yaml").write_text(declared, encoding="utf-8")
        config = load_config(tmp_path / ".gpulint.yaml", catalogue_codes())
    found = lint([str(manifest)], config=config, select=("GPU000",)).findings
    rejected = "is a string, not {}; the API server rejects the object"
    assert [(f.code, f.line, f.column, f.message) for f in found] == [
        ("GPU000", line, column, f"{field} {rejected.format(wanted)}")
        for line, column, field, wanted in expected
    ]


def _templates(text: str) -> list[tuple]:
    """(role, pods, count field, {container: GPUs}) for each pod template of the one object."""
    workload = _workload(text)
    return [
        (
            t.role,
            t.replicas.value if t.replicas else None,
            t.replicas.field if t.replicas else None,
            {
                c.name: str(c.resources.effective_requests().get("nvidia.com/gpu", 0))
                for c in t.containers
            },
        )
        for t in workload.templates
    ]


SERVING_KINDS = {
    "slurm-nodeset": (
        """\
apiVersion: slinky.slurm.net/v1beta1
kind: NodeSet
metadata: {name: gpu-nodes}
spec:
  replicas: 3
  slurmd:
    image: ghcr.io/slinkyproject/slurmd:25.05
    resources: {limits: {nvidia.com/gpu: 8}}
  logfile: {image: "alpine:3"}
  template:
    spec:
      containers: [{name: exporter, image: x}]
""",
        [(None, 3, "replicas", {"slurmd": "8", "logfile": "0", "exporter": "0"})],
    ),
    "kserve-model-predictor": (
        """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm}
spec:
  predictor:
    minReplicas: 2
    maxReplicas: 5
    model:
      modelFormat: {name: huggingface}
      resources: {limits: {nvidia.com/gpu: "1"}}
  transformer:
    containers: [{name: t, image: x}]
""",
        [
            ("predictor", 5, "maxReplicas", {"kserve-container": "1"}),
            ("transformer", 1, "minReplicas", {"t": "0"}),
        ],
    ),
    "kserve-multinode-workers": (
        """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm}
spec:
  predictor:
    model: {modelFormat: {name: huggingface}, resources: {limits: {nvidia.com/gpu: "2"}}}
    workerSpec:
      pipelineParallelSize: 3
      containers: [{name: worker, resources: {limits: {nvidia.com/gpu: "2"}}}]
""",
        [
            ("predictor", 1, "minReplicas", {"kserve-container": "2"}),
            ("worker", 2, "pipelineParallelSize", {"worker": "2"}),
        ],
    ),
    "serving-runtime-runs-no-pod": (
        """\
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: vllm}
spec:
  containers: [{name: kserve-container, resources: {limits: {nvidia.com/gpu: "1"}}}]
""",
        [(None, 0, "", {"kserve-container": "1"})],
    ),
    "knative-scale-annotations": (
        """\
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: kn}
spec:
  template:
    metadata:
      annotations: {autoscaling.knative.dev/min-scale: "2", autoscaling.knative.dev/max-scale: "6"}
    spec:
      containers: [{image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
""",
        [(None, 6, "autoscaling.knative.dev/max-scale", {"#0": "1"})],
    ),
    "llm-inference-service-data-parallel": (
        """\
apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: ds}
spec:
  replicas: 2
  parallelism: {data: 16, dataLocal: 8}
  template:
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "8"}}}]
  worker:
    containers: [{name: main, resources: {limits: {nvidia.com/gpu: "8"}}}]
""",
        [
            ("main", 2, "replicas", {"main": "8"}),
            ("main worker", 2, "replicas", {"main": "8"}),
        ],
    ),
    "training-runtime-runs-no-pod": (
        """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, resources: {limits: {nvidia.com/gpu: 1}}}]
""",
        [("node", 0, "", {"node": "1"})],
    ),
    "nim-service-scale": (
        """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: llama}
spec:
  replicas: 1
  scale: {enabled: true, hpa: {minReplicas: 1, maxReplicas: 4}}
  resources: {limits: {nvidia.com/gpu: 1}}
""",
        [(None, 4, "maxReplicas", {"nim": "1"})],
    ),
    "kubeai-profile-multiple": (
        """\
apiVersion: kubeai.org/v1
kind: Model
metadata: {name: m}
spec:
  resourceProfile: nvidia-gpu-l4:2
  minReplicas: 1
  maxReplicas: 3
""",
        [(None, 3, "maxReplicas", {"server": "2"})],
    ),
    "kaito-instance-type": (
        """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {name: ws}
resource:
  count: 2
  instanceType: Standard_NC96ads_A100_v4
inference: {preset: {name: phi-4}}
""",
        [("preset", 2, "count", {"inference": "4"})],
    ),
    "dynamo-v1alpha1-services": (
        """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: disagg}
spec:
  services:
    Frontend:
      replicas: 1
      extraPodSpec: {mainContainer: {image: x}}
    decode:
      replicas: 2
      multinode: {nodeCount: 2}
      resources: {requests: {cpu: "8"}, limits: {gpu: "4"}}
      extraPodSpec:
        mainContainer: {image: x, resources: {limits: {nvidia.com/gpu: "9", memory: 1Gi}}}
        containers: [{name: sidecar, image: y}]
    prefill:
      resources: {limits: {gpu: "1", gpuType: nvidia.com/mig-3g.40gb, custom: {rdma/ib: "1"}}}
""",
        [
            ("Frontend", 1, "replicas", {"main": "0"}),
            ("decode", 4, "replicas", {"main": "4", "sidecar": "0"}),
            ("prefill", 1, "replicas", {"main": "0"}),
        ],
    ),
    "dynamo-v1beta1-components": (
        """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: disagg}
spec:
  components:
  - name: decode
    replicas: 1
    multinode: {nodeCount: 2}
    podTemplate:
      spec:
        containers: [{name: main, resources: {limits: {nvidia.com/gpu: "4"}}}]
  - name: prefill
    device: {resources: {nvidia.com/gpu: "2"}, tolerations: [{key: gpu, operator: Exists}]}
    podTemplate:
      spec:
        containers: [{name: main, resources: {limits: {nvidia.com/gpu: "1"}}}]
""",
        [("decode", 2, "replicas", {"main": "4"}), ("prefill", 1, "replicas", {"main": "2"})],
    ),
    "katib-trials": (
        """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: hpo}
spec:
  trialTemplate:
    trialSpec:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      spec:
        pytorchReplicaSpecs:
          Worker:
            replicas: 2
            template:
              spec:
                containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 1}}}]
""",
        [("Worker", 6, "replicas", {"pytorch": "1"})],
    ),
    "lws-disaggregated-set": (
        """\
apiVersion: disaggregatedset.x-k8s.io/v1
kind: DisaggregatedSet
metadata: {name: vllm-disagg}
spec:
  slices: 2
  roles:
  - name: prefill
    spec:
      leaderWorkerTemplate:
        size: 1
        workerTemplate:
          spec:
            containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: "1"}}}]
  - name: decode
    spec:
      replicas: 2
      leaderWorkerTemplate:
        size: 3
        leaderTemplate:
          spec:
            containers: [{name: l, resources: {limits: {nvidia.com/gpu: "1"}}}]
        workerTemplate:
          spec:
            containers: [{name: vllm, resources: {limits: {nvidia.com/gpu: "2"}}}]
""",
        [
            ("decode leader", 4, "slices", {"l": "1"}),
            ("prefill worker", 2, "slices", {"vllm": "1"}),
            ("decode worker", 8, "slices", {"vllm": "2"}),
        ],
    ),
}


def test_a_dynamo_service_in_dynamo_terms_becomes_the_pod_the_operator_runs() -> None:
    """`gpu` is `nvidia.com/gpu` (or `gpuType`), `custom` names its own resources, the service's
    resources override the main container's key by key, and names point at what was written."""
    decode, prefill = _workload(SERVING_KINDS["dynamo-v1alpha1-services"][0]).templates[1:]
    main = decode.containers[0].resources
    assert sorted(main.limits) == ["memory", "nvidia.com/gpu"]
    assert main.limits["nvidia.com/gpu"].key_pos == (12, 50)
    assert main.limits["nvidia.com/gpu"].value_pos == (12, 55)
    assert main.requests["cpu"].value_pos == (12, 35)
    limits = prefill.containers[0].resources.limits
    assert sorted(limits) == ["nvidia.com/mig-3g.40gb", "rdma/ib"]
    assert limits["nvidia.com/mig-3g.40gb"].key_pos == (17, 47)
    beta = _workload(SERVING_KINDS["dynamo-v1beta1-components"][0]).templates[1]
    assert beta.tolerations[0].key == "gpu"
    assert str(beta.containers[0].resources.requests["nvidia.com/gpu"].raw) == "2"


@pytest.mark.parametrize("name", SERVING_KINDS)
def test_serving_and_platform_kinds_read_their_pods(name: str) -> None:
    text, expected = SERVING_KINDS[name]
    assert _templates(text) == expected


def test_an_operator_generated_pod_points_at_the_field_that_decided_it() -> None:
    (template,) = _workload(SERVING_KINDS["kubeai-profile-multiple"][0]).templates
    (container,) = template.containers
    assert container.resources.limits["nvidia.com/gpu"].value_pos == (5, 20)
    assert template.tolerations[0].key == "nvidia.com/gpu"
    assert not template.best_effort  # the operator writes the pod's resources


@pytest.mark.parametrize(
    "resource",
    ["instanceType: Standard_NV4as_v4", "instanceType: Standard_NC24ads_A100_v4\n  partition: {}"],
)
def test_a_kaito_pod_gpulint_cannot_know_is_not_made_up(resource: str) -> None:
    head = "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: w}\n"
    text = f"{head}resource:\n  {resource}\n"
    assert _workload(text).templates == ()


UNCHECKED = """\
apiVersion: train.example.com/v1
kind: TrainingRun
metadata: {name: llama}
spec:
  workers:
    template:
      spec:
        containers:
        - name: trainer
          resources: {limits: {nvidia.com/gpu: 8}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain}
data: {a: b}
"""


def test_the_summary_never_says_all_passed_while_an_accelerator_request_went_unchecked(
    tmp_path,
) -> None:
    from click.testing import CliRunner

    from gpulint.cli import main

    (tmp_path / "run.yaml").write_text(UNCHECKED)
    path = str(tmp_path / "run.yaml")
    # Even with the rule ignored, the count stays: not reporting is not checking.
    text = CliRunner().invoke(main, ["check", "--isolated", "--ignore", "GPU007", path])
    assert text.exit_code == 0
    assert text.stdout.splitlines()[-1] == (
        "No findings; 1 object requests accelerators but was not checked (1 file, 2 objects)."
    )
    report = CliRunner().invoke(main, ["check", "--isolated", "--format", "json", path])
    assert json.loads(report.stdout)["summary"] == {
        "files": 1,
        "objects": 2,
        "findings": 1,
        "unchecked": 1,
    }
    shown = CliRunner().invoke(main, ["check", "--isolated", path]).stdout.splitlines()[-1]
    assert shown == (
        "Found 1 finding (1 warning) in 1 file, 2 objects. "
        "1 object requests accelerators but was not checked."
    )


def test_accelerator_requests_are_found_at_any_depth_but_not_in_status() -> None:
    from gpulint.requestscan import accelerator_requests

    (document,) = load_text(
        "x.yaml",
        """\
apiVersion: example.com/v1
kind: Thing
metadata: {name: t, annotations: {gpu-fraction: "0.5"}}
spec:
  deep: {list: [{resources: {amd.com/gpu: 1, cpu: 2}}]}
  claims: {resourceClaims: [{name: tpu}]}
  other: {resources: {requests: {memory: 1Gi}}}
status:
  resources: {limits: {nvidia.com/gpu: 8}}
""",
    ).documents
    found = [(r.what, r.field, r.pos, r.form) for r in accelerator_requests(document.obj)]
    assert found == [
        ("annotation gpu-fraction", "metadata.annotations", (3, 35), "annotation"),
        ("amd.com/gpu", "spec.deep.list[0].resources", (5, 30), "resource"),
        ("resource claim tpu", "spec.claims.resourceClaims", (6, 12), "claim"),
    ]


def test_an_operator_gpu_field_is_a_request_only_with_an_accelerator_and_a_positive_quantity() -> (
    None
):
    from gpulint.requestscan import accelerator_requests

    (document,) = load_text(
        "x.yaml",
        """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s}
spec:
  driver: {gpu: {name: nvidia.com/gpu, quantity: 0}}
  executor: {gpu: {name: amd.com/gpu, quantity: 2}}
  other: {gpu: {name: example.com/fpga-not-a-gpu}}
  more: {gpu: {name: cpu, quantity: 1}}
""",
    ).documents
    found = [(r.what, r.field, r.pos, r.form) for r in accelerator_requests(document.obj)]
    assert found == [("amd.com/gpu", "spec.executor.gpu", (6, 20), "operator field")]


def test_kubevirt_device_lists_are_requests_of_the_pod_kubevirt_builds() -> None:
    from gpulint.requestscan import unchecked

    (document,) = load_text(
        "x.yaml",
        """\
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: v}
spec:
  domain:
    devices:
      gpus:
      - {name: a, deviceName: nvidia.com/TU104GL_Tesla_T4}
      - {name: b, claimName: c, requestName: r}
      - {name: d, deviceName: example.com/any-name}
      hostDevices:
      - {name: e, deviceName: kubevirt.io/storage}
      - {name: f, deviceName: nvidia.com/GA102GL_A10}
""",
    ).documents
    found = unchecked(document, None)
    assert found is not None
    assert {r.form for r in found.requests} == {"operator field"}
    assert [(r.what, r.field, r.pos) for r in found.requests] == [
        ("nvidia.com/TU104GL_Tesla_T4", "spec.domain.devices.gpus[0]", (8, 19)),
        ("example.com/any-name", "spec.domain.devices.gpus[2]", (10, 19)),
        ("nvidia.com/GA102GL_A10", "spec.domain.devices.hostDevices[1]", (13, 19)),
    ]
    assert {r.runs_in for r in found.requests} == {
        "KubeVirt gives them to the virt-launcher pod it runs for each virtual machine "
        "instance, which gpulint does not build"
    }


def test_kubevirt_machines_and_instancetypes_name_the_pods_kubevirt_builds() -> None:
    from gpulint.requestscan import unchecked

    documents = load_text(
        "x.yaml",
        """\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm}
spec:
  template:
    spec:
      domain:
        devices:
          gpus: [{name: a, deviceName: nvidia.com/GA102GL_A10}]
        resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: gpu-large}
spec:
  gpus: [{name: a, deviceName: nvidia.com/GRID_A10-4Q}]
""",
    ).documents
    found = [unchecked(document, None) for document in documents]
    assert [[(r.what, r.field) for r in f.requests] for f in found if f is not None] == [
        [
            ("nvidia.com/GA102GL_A10", "spec.template.spec.domain.devices.gpus[0]"),
            ("nvidia.com/gpu", "spec.template.spec.domain.resources.limits"),
        ],
        [("nvidia.com/GRID_A10-4Q", "spec.gpus[0]")],
    ]
    assert [f.requests[-1].runs_in for f in found if f is not None] == [
        "KubeVirt gives them to the virt-launcher pod it runs for each virtual machine "
        "instance, which gpulint does not build",
        "KubeVirt gives them to the virt-launcher pod it runs for each virtual machine "
        "instance of a machine that names this instancetype, which gpulint does not build",
    ]


def test_a_read_workload_reports_only_the_requests_its_pod_templates_do_not_read() -> None:
    from gpulint.requestscan import unchecked

    (document,) = load_text(
        "x.yaml",
        """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    metadata: {annotations: {gpu-fraction: "0.5"}}
    spec:
      containers:
      - {name: a, resources: {limits: {nvidia.com/gpu: 1}}}
      initContainers:
      - {name: b, resources: {limits: {amd.com/gpu: 1}}}
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      volumes:
      - name: scratch
        ephemeral:
          volumeClaimTemplate:
            spec: {resources: {requests: {nvidia.com/gpu: 1}}}
""",
    ).documents
    found = unchecked(document, workload_of(document))
    assert found is not None
    # The containers' own requests are read (GPU001-GPU004 judge them); an annotation and a
    # request outside every container are not.
    assert [(r.what, r.field, r.pos) for r in found.requests] == [
        ("annotation gpu-fraction", "spec.template.metadata.annotations", (6, 30)),
        (
            "nvidia.com/gpu",
            "spec.template.spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests",
            (17, 43),
        ),
    ]


@pytest.mark.parametrize(
    ("limits", "selector"),
    [
        ("{nvidia.com/gpu: 1}", {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}),
        ("{cpu: 1}", {}),  # KServe adds the selector only to pods that limit GPUs
    ],
)
def test_kserve_gke_accelerator_annotation_selects_the_node_pool(limits, selector) -> None:
    (template,) = _workload(
        f"""\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: tf
  annotations: {{serving.kserve.io/gke-accelerator: nvidia-tesla-t4}}
spec:
  predictor:
    tensorflow:
      resources: {{limits: {limits}}}
"""
    ).templates
    assert dict(template.node_selector) == selector
    if selector:
        selector_node = template.spec["nodeSelector"]
        assert selector_node.pos_of_key("cloud.google.com/gke-accelerator") == (5, 52)


SELDON_PAIR = """\
apiVersion: mlops.seldon.io/v1alpha1
kind: ServerConfig
metadata: {name: llm, namespace: seldon-mesh}
spec:
  podSpec:
    nodeSelector: {pool: infer-srv, disk: ssd}
    tolerations: [{key: seldon-gpu-srv, operator: Exists, effect: NoSchedule}]
    containers:
    - {name: agent, image: "agent:2", resources: {requests: {cpu: 500m, memory: 500M}}}
    - name: mlserver
      image: mlserver:1
      resources: {requests: {cpu: "4", memory: 16Gi}, limits: {memory: 16Gi}}
---
apiVersion: mlops.seldon.io/v1alpha1
kind: Server
metadata: {name: llm-gpu, namespace: seldon-mesh}
spec:
  serverConfig: llm
  replicas: 2
  podSpec:
    nodeSelector: {disk: nvme}
    tolerations: [{key: dedicated, operator: Exists}]
    containers:
    - name: mlserver
      resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1, memory: 32Gi}}
    - {name: sidecar, image: "proxy:1"}
"""


def _seldon(text: str) -> list:
    loaded = load_text("s.yaml", text)
    return list(with_server_configs(loaded.workloads, loaded.documents))


def test_a_seldon_server_runs_its_server_config_with_its_own_pod_spec_merged_in() -> None:
    """As the operator's MergePodSpecs: the Server's containers merged by name (its own first),
    resources key by key, lists appended, a mapping's keys overridden; what comes from the
    ServerConfig points where the Server names it, what the Server writes where it writes it."""
    config, server = _seldon(SELDON_PAIR)
    assert config.templates[0].runs_no_pods
    (template,) = server.templates
    assert server.replicas.value == 2
    assert [c.name for c in template.containers] == ["mlserver", "sidecar", "agent"]
    mlserver = template.containers[0].resources
    assert {k: str(q.raw) for k, q in mlserver.requests.items()} == {
        "cpu": "4",
        "memory": "16Gi",
        "nvidia.com/gpu": "1",
    }
    assert {k: str(q.raw) for k, q in mlserver.limits.items()} == {
        "memory": "32Gi",
        "nvidia.com/gpu": "1",
    }
    assert template.node_selector == {"pool": "infer-srv", "disk": "nvme"}
    assert [t.key for t in template.tolerations] == ["seldon-gpu-srv", "dedicated"]
    anchor = (18, 17)  # `serverConfig: llm`
    assert mlserver.requests["cpu"].key_pos == anchor
    assert template.tolerations[0].pos == anchor
    assert mlserver.requests["nvidia.com/gpu"].key_pos == (25, 30)
    assert mlserver.limits["memory"].value_pos == (25, 86)
    assert template.completed_by is None


def test_a_seldon_server_without_its_server_config_is_read_from_its_own_pod_spec() -> None:
    """Another ServerConfig (or none) among the inputs: the Server's pod is its `podSpec`,
    marked as completed by the ServerConfig it names (admission assumes what that may add)."""
    other = SELDON_PAIR.replace("name: llm,", "name: other,")
    _, server = _seldon(other)
    (template,) = server.templates
    assert [c.name for c in template.containers] == ["mlserver", "sidecar"]
    assert [t.key for t in template.tolerations] == ["dedicated"]
    assert template.completed_by == ("ServerConfig `llm`", (18, 17))


def test_a_seldon_server_config_in_another_file_is_part_of_the_servers_pods(tmp_path) -> None:
    """The ServerConfig is a knowledge object: its toleration of the GPU pool's taint reaches
    the Server of another file, which no longer gets a false GPU102. Without it, the missing
    toleration is a warning naming what it assumes; the ServerConfig, whose selector matches
    only the GPU pool, is no pod requesting no GPU (GPU104): its Servers add the GPU."""
    from gpulint.api import lint

    profile = "fixtures/real/profiles/seldon-dedicated-gpu-node.yaml"
    config, server = SELDON_PAIR.split("---\n")
    config = config.replace("pool: infer-srv, disk: ssd", "pool: infer-srv")
    (tmp_path / "config.yaml").write_text(config, encoding="utf-8")
    (tmp_path / "server.yaml").write_text(
        server.replace("    nodeSelector: {disk: nvme}\n", ""), encoding="utf-8"
    )
    both = lint([str(tmp_path)], profile_paths=(profile,))
    assert [(f.code, f.line) for f in both.findings] == []
    alone = lint([str(tmp_path / "server.yaml")], profile_paths=(profile,))
    assert [(f.code, f.severity, f.line, f.column) for f in alone.findings] == [
        ("GPU102", Severity.WARNING, 8, 5)
    ]
    assert "this assumes ServerConfig `llm`, which is not among the inputs" in (
        alone.findings[0].message
    )


SELDON_V1 = """\
apiVersion: machinelearning.seldon.io/v1
kind: SeldonDeployment
metadata: {name: sd}
spec:
  annotations: {}
  replicas: 4
  predictors:
  - name: a
    graph: {name: model, implementation: TRITON_SERVER, children: [{name: other}]}
    replicas: 3
    componentSpecs:
    - spec:
        containers: [{name: model, resources: {limits: {nvidia.com/gpu: 1}}}]
    - replicas: 2
      spec:
        containers: [{name: other, resources: {limits: {nvidia.com/gpu: 1}}}]
  - name: b
    annotations: {seldon.io/no-engine: "true"}
    componentSpecs:
    - spec:
        containers: [{name: model, resources: {limits: {nvidia.com/gpu: 1}}}]
  - name: c
    replicas: 3
    svcOrchSpec:
      resources: {requests: {cpu: "1", memory: 1Gi}}
    componentSpecs:
    - hpaSpec: {maxReplicas: 2}
      spec:
        containers: [{name: model, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def _seldon_v1(text: str) -> list[tuple[list[str], dict[str, str], bool]]:
    (workload,) = load_text("sd.yaml", text).workloads
    return [
        (
            [c.name for c in t.containers],
            {k: str(v) for k, v in t.effective_requests.items() if k != "nvidia.com/gpu"},
            t.best_effort,
        )
        for t in workload.templates
    ]


def test_seldon_core_1_adds_its_engine_to_the_first_component_of_each_predictor() -> None:
    """The service orchestrator, with its default or `svcOrchSpec` resources, joins the first
    componentSpec's pod of a predictor that does not run without it: that pod is not
    BestEffort; the others, and all of them when the engine runs in a pod of its own, are."""
    engine = "seldon-container-engine"
    assert _seldon_v1(SELDON_V1) == [
        (["model", engine], {"cpu": "0.500", "memory": "536870912"}, False),
        (["other"], {}, True),
        (["model"], {}, True),
        (["model", engine], {"cpu": "1", "memory": "1073741824"}, False),
    ]
    separate = SELDON_V1.replace(
        "annotations: {}", 'annotations: {"seldon.io/engine-separate-pod": "true"}'
    )
    assert all(names == ["model"] or names == ["other"] for names, _, _ in _seldon_v1(separate))


def test_seldon_core_1_counts_a_component_s_replicas_else_its_predictor_s_else_the_spec_s() -> None:
    """The operator's order; with an hpaSpec the HPA sets the count, up to its maxReplicas."""
    (workload,) = load_text("sd.yaml", SELDON_V1).workloads
    counts = [(t.replicas.value, t.replicas.pos) for t in workload.templates]
    assert counts == [(3, (10, 5)), (2, (14, 7)), (4, (6, 3)), (2, (27, 17))]


def _spark(text: str) -> tuple[dict[str, dict[str, object]], dict[str, int]]:
    """The Spark container's resources of each role of a SparkApplication, and its counts."""
    (document,) = load_text("spark.yaml", text).documents
    workload = workload_of(document)
    assert workload is not None
    resources = {}
    counts = {}
    for template in workload.templates:
        main = template.containers[0]
        assert main.name == f"spark-kubernetes-{template.role}"
        resources[str(template.role)] = {
            section: {k: str(q.raw) for k, q in getattr(main.resources, section).items()}
            for section in ("requests", "limits")
        }
        assert template.replicas is not None
        counts[str(template.role)] = template.replicas.value
    return resources, counts


def test_spark_pods_get_the_resources_spark_and_the_operator_webhook_give_them() -> None:
    resources, counts = _spark(
        """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s}
spec:
  type: Python
  mainApplicationFile: local:///opt/app/job.py
  sparkConf:
    spark.driver.cores: "2"
    spark.executor.instances: "5"
    spark.executor.memory: 2g
    spark.executor.resource.gpu.amount: "2"
    spark.executor.resource.gpu.vendor: nvidia.com
  driver: {coreLimit: 1500m, memoryOverhead: 100m}
  executor:
    cores: 4
    memory: 10g
    memoryLimit: 16g
    gpu: {name: amd.com/gpu, quantity: 1}
"""
    )
    # The driver: sparkConf's cores; 1g (the operator's default) plus the written overhead.
    assert resources["driver"] == {
        "requests": {"cpu": "2", "memory": "1124Mi"},
        "limits": {"memory": "1124Mi", "cpu": "1500m"},
    }
    # The executor: its own memory wins over sparkConf's (the operator's --conf comes after),
    # with a Python application's 0.4 overhead; the webhook's memoryLimit and gpu; Spark's
    # <vendor>/<name> limit.
    assert resources["executor"] == {
        "requests": {"cpu": "4", "memory": "14336Mi"},
        "limits": {"memory": "16Gi", "nvidia.com/gpu": "2", "amd.com/gpu": "1"},
    }
    assert counts == {"driver": 1, "executor": 5}


@pytest.mark.parametrize(
    ("spec", "executors", "unknown"),
    [
        ("{}", 1, False),  # the operator's defaulter: one instance
        ("{dynamicAllocation: {enabled: true, maxExecutors: 9}}", 0, False),
        (
            "{dynamicAllocation: {enabled: true, initialExecutors: 3, maxExecutors: 9}, "
            "executor: {instances: 2}}",
            3,
            False,
        ),
        ("{sparkConf: {spark.dynamicAllocation.enabled: 'true'}}", 1, True),
    ],
)
def test_spark_executors_start_as_spark_counts_them(
    spec: str, executors: int, unknown: bool
) -> None:
    (document,) = load_text(
        "spark.yaml",
        f"apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\n"
        f"metadata: {{name: s}}\nspec: {spec}\n",
    ).documents
    workload = workload_of(document)
    assert workload is not None
    if "executor:" not in spec:
        assert workload.templates == ()  # no role mapping, no pod: the CRD requires both
        from gpulint.operators import spark_executor_count

        count = spark_executor_count(document.obj, document.obj)
    else:
        (count,) = [t.replicas for t in workload.templates if t.role == "executor"]
    assert count is not None
    assert (count.value, count.unknown is not None) == (executors, unknown)


def test_a_finding_in_spark_conf_names_the_role_whose_pod_holds_it() -> None:
    (document,) = load_text(
        "spark.yaml",
        """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s}
spec:
  sparkConf:
    spark.executor.resource.gpu.amount: "1"
    spark.executor.resource.gpu.vendor: nvidia
  driver: {cores: 1}
  executor: {instances: 1}
""",
    ).documents
    workload = workload_of(document)
    assert workload is not None
    assert role_at(workload, (7, 41)) == "executor"  # the vendor, which made the name
    assert role_at(workload, (6, 5)) is None  # the amount's key: in no pod
