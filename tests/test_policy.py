"""Kubernetes policy objects converted to profile dataclasses."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from gpulint.device_plugins import plugin_vendor, pool_vendors
from gpulint.images import parse_image
from gpulint.loader import load_text
from gpulint.model import Document, PodTemplate, Workload
from gpulint.profile.model import (
    ClusterProfile,
    LimitRange,
    LimitRangeItem,
    Pool,
    PriorityClass,
    ResourceQuota,
    ScopeRequirement,
    Taint,
)
from gpulint.profile.policy import (
    global_default_class,
    limit_range_from_object,
    limit_ranges_in_effect,
    priority_class_from_object,
    priority_classes_in_effect,
    quota_from_object,
    quotas_in_effect,
)
from gpulint.replicas import rollout_surge
from gpulint.rules.base import CheckContext
from gpulint.rules.device_plugin import device_plugin_misses_gpu_nodes, unpinned_reason
from gpulint.rules.quota import gpu_quota_exceeded, quota_charges
from gpulint.workloads import workload_of

QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": {"name": "gpu-quota", "namespace": "ml"},
    "spec": {
        "hard": {"requests.nvidia.com/gpu": "8", "requests.memory": "64Gi", "pods": 20},
        "scopes": ["NotBestEffort"],
        "scopeSelector": {
            "matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In", "values": ["high", "mid"]},
                {"scopeName": "CrossNamespacePodAffinity", "operator": "Exists"},
            ]
        },
    },
    "status": {"used": {"requests.nvidia.com/gpu": "6", "pods": 3}},
}


def test_quota_reads_hard_used_and_scopes() -> None:
    quota = quota_from_object(QUOTA)
    assert (quota.namespace, quota.name) == ("ml", "gpu-quota")
    assert quota.hard == {
        "requests.nvidia.com/gpu": Decimal(8),
        "requests.memory": Decimal(64 * 2**30),
        "pods": Decimal(20),
    }
    assert quota.used == {"requests.nvidia.com/gpu": Decimal(6), "pods": Decimal(3)}
    assert quota.scopes == ("NotBestEffort",)
    assert quota.scope_selector == (
        ScopeRequirement("PriorityClass", "In", ("high", "mid")),
        ScopeRequirement("CrossNamespacePodAffinity", "Exists", ()),
    )


def test_quota_skips_invalid_quantities_and_malformed_parts() -> None:
    quota = quota_from_object(
        {
            "metadata": {"name": "q"},
            "spec": {
                "hard": {"requests.nvidia.com/gpu": "eight", "pods": "10", "cpu": None},
                "scopes": "NotBestEffort",
                "scopeSelector": {"matchExpressions": [{"operator": "In"}, "junk"]},
            },
            "status": "unknown",
        }
    )
    assert quota.hard == {"pods": Decimal(10)}
    assert quota.used == {}
    assert quota.scopes == ()
    assert quota.scope_selector == ()


def test_namespace_defaults_and_explicit_namespace_wins() -> None:
    assert quota_from_object({"metadata": {"name": "q"}}).namespace == "default"
    assert quota_from_object(QUOTA, namespace="team-a").namespace == "team-a"
    limit_range = {"metadata": {"name": "lr", "namespace": "ml"}}
    assert limit_range_from_object(limit_range).namespace == "ml"
    assert limit_range_from_object(limit_range, namespace="other").namespace == "other"


def test_limit_range_reads_every_clause() -> None:
    limit_range = limit_range_from_object(
        {
            "kind": "LimitRange",
            "metadata": {"name": "gpu-limits", "namespace": "ml"},
            "spec": {
                "limits": [
                    {
                        "type": "Container",
                        "max": {"nvidia.com/gpu": "2", "cpu": "bogus"},
                        "min": {"nvidia.com/gpu": 1},
                        "default": {"nvidia.com/gpu": 1},
                        "defaultRequest": {"cpu": "500m"},
                        "maxLimitRequestRatio": {"memory": 2},
                    },
                    {"type": "Pod", "max": {"nvidia.com/gpu": 4}},
                    "not a mapping",
                ]
            },
        }
    )
    assert limit_range.name == "gpu-limits"
    assert limit_range.items == (
        LimitRangeItem(
            type="Container",
            max={"nvidia.com/gpu": Decimal(2)},
            min={"nvidia.com/gpu": Decimal(1)},
            default={"nvidia.com/gpu": Decimal(1)},
            default_request={"cpu": Decimal("0.5")},
            max_limit_request_ratio={"memory": Decimal(2)},
        ),
        LimitRangeItem(type="Pod", max={"nvidia.com/gpu": Decimal(4)}),
    )


def test_priority_class_reads_top_level_fields() -> None:
    assert priority_class_from_object(
        {
            "kind": "PriorityClass",
            "metadata": {"name": "gpu-high"},
            "value": 100000,
            "globalDefault": True,
            "preemptionPolicy": "Never",
        }
    ) == PriorityClass("gpu-high", 100000, True, "Never")
    assert priority_class_from_object(
        {"metadata": {"name": "odd"}, "value": "high", "globalDefault": "yes"}
    ) == PriorityClass("odd", 0, False, "PreemptLowerPriority")


def test_objects_parsed_from_a_manifest_convert_like_plain_dicts() -> None:
    text = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: 8, limits.nvidia.com/gpu: "4"}
"""
    documents = load_text("quota.yaml", text).documents
    quota = quota_from_object(documents[0].obj)
    assert quota.hard == {
        "requests.nvidia.com/gpu": Decimal(8),
        "limits.nvidia.com/gpu": Decimal(4),
    }


# ---------------------------------------------------------------------------------------------
# Which objects are in effect: the profile's, replaced by the checked manifests'

CHART = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpu-quota}
spec:
  hard: {requests.nvidia.com/gpu: 16}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: chart-only, namespace: research}
spec:
  hard: {requests.nvidia.com/gpu: 2}
status:
  used: {requests.nvidia.com/gpu: 1}
---
apiVersion: v1
kind: LimitRange
metadata: {name: gpu-limits, namespace: ml}
spec:
  limits:
  - type: Container
    max: {nvidia.com/gpu: 2}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: gpu-high}
value: 5000
---
apiVersion: example.com/v1
kind: ResourceQuota
metadata: {name: not-core, namespace: ml}
spec:
  hard: {requests.nvidia.com/gpu: 1}
"""

PROFILE = ClusterProfile(
    quotas=(
        ResourceQuota(
            "ml",
            "gpu-quota",
            {"requests.nvidia.com/gpu": Decimal(8)},
            {"requests.nvidia.com/gpu": Decimal(6)},
        ),
        ResourceQuota("ml", "other", {"pods": Decimal(10)}),
    ),
    limit_ranges=(
        LimitRange("ml", "gpu-limits", (LimitRangeItem("Container", max={"nvidia.com/gpu": 1}),)),
        LimitRange("ml", "kept", ()),
    ),
    priority_classes=(
        PriorityClass("gpu-high", 100),
        PriorityClass("standard", 1000, global_default=True),
        PriorityClass("low-default", 10, global_default=True),
    ),
)


def _chart() -> tuple[Document, ...]:
    return load_text("chart.yaml", CHART).documents


def _in_ml(document: Document) -> str:
    return document.ref.namespace or "ml"


def test_manifest_quota_replaces_the_profiles_and_keeps_its_usage() -> None:
    quotas = {
        (q.quota.namespace, q.quota.name): q for q in quotas_in_effect(_chart(), PROFILE, _in_ml)
    }
    assert set(quotas) == {("ml", "gpu-quota"), ("ml", "other"), ("research", "chart-only")}
    replaced = quotas[("ml", "gpu-quota")]
    assert replaced.quota.hard == {"requests.nvidia.com/gpu": Decimal(16)}
    assert replaced.quota.used == {"requests.nvidia.com/gpu": Decimal(6)}
    assert replaced.document is not None
    assert replaced.hard_pos("requests.nvidia.com/gpu") == (5, 10)
    assert replaced.label == "ResourceQuota ml/gpu-quota"
    assert quotas[("ml", "other")].document is None
    assert quotas[("ml", "other")].hard_pos("pods") is None
    assert quotas[("ml", "other")].label == "ResourceQuota ml/other (cluster profile)"
    assert quotas[("research", "chart-only")].quota.used == {"requests.nvidia.com/gpu": 1}


def test_manifest_limit_range_replaces_the_profiles_and_knows_its_keys() -> None:
    ranges = {lr.limit_range.name: lr for lr in limit_ranges_in_effect(_chart(), PROFILE, _in_ml)}
    assert set(ranges) == {"gpu-limits", "kept"}
    chart = ranges["gpu-limits"]
    assert chart.limit_range.items[0].max == {"nvidia.com/gpu": Decimal(2)}
    assert chart.clause_pos(0, "max", "nvidia.com/gpu") == (21, 11)
    assert chart.clause_pos(1, "max", "nvidia.com/gpu") is None
    assert ranges["kept"].clause_pos(0, "max", "nvidia.com/gpu") is None


def test_priority_classes_merge_and_the_lowest_global_default_wins() -> None:
    classes = priority_classes_in_effect(_chart(), PROFILE)
    assert classes["gpu-high"].priority_class.value == 5000
    assert classes["gpu-high"].document is not None
    assert classes["standard"].document is None
    default = global_default_class(classes)
    assert default is not None and default.name == "low-default"
    assert global_default_class(priority_classes_in_effect((), None)) is None


# ---------------------------------------------------------------------------------------------
# Quota scopes and rollout surge, on real templates


def _template(text: str) -> tuple[Workload, PodTemplate]:
    document = load_text("w.yaml", text).documents[0]
    workload = workload_of(document)
    assert workload is not None
    return workload, workload.templates[0]


def _deployment(spec_extra: str = "", pod_extra: str = "", resources: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d, namespace: ml}}
spec:
  replicas: 4
{spec_extra}  template:
    spec:
{pod_extra}      containers:
      - name: c
        resources: {{limits: {{nvidia.com/gpu: 1{resources}}}}}
"""


def _quota(scopes: tuple[str, ...] = (), *selector: ScopeRequirement) -> ResourceQuota:
    return ResourceQuota("ml", "q", {"requests.nvidia.com/gpu": Decimal(1)}, {}, scopes, selector)


def test_a_gpu_only_pod_is_best_effort_and_outside_not_best_effort_quotas() -> None:
    _, gpu_only = _template(_deployment())
    _, burstable = _template(_deployment(resources=", memory: 1Gi"))
    assert gpu_only.best_effort and not burstable.best_effort
    assert not quota_charges(_quota(("NotBestEffort",)), gpu_only, "")
    assert quota_charges(_quota(("NotBestEffort",)), burstable, "")
    assert quota_charges(_quota(("BestEffort",)), gpu_only, "")


def test_terminating_scope_follows_active_deadline_seconds() -> None:
    _, plain = _template(_deployment())
    _, deadline = _template(_deployment(pod_extra="      activeDeadlineSeconds: 600\n"))
    assert quota_charges(_quota(("Terminating",)), deadline, "")
    assert not quota_charges(_quota(("Terminating",)), plain, "")
    assert quota_charges(_quota(("NotTerminating",)), plain, "")


def test_priority_class_scope_selector() -> None:
    _, template = _template(_deployment())
    high = ScopeRequirement("PriorityClass", "In", ("high",))
    not_high = ScopeRequirement("PriorityClass", "NotIn", ("high",))
    exists = ScopeRequirement("PriorityClass", "Exists")
    assert quota_charges(_quota((), high), template, "high")
    assert not quota_charges(_quota((), high), template, "low")
    assert quota_charges(_quota((), not_high), template, "")
    assert not quota_charges(_quota((), not_high), template, "high")
    assert quota_charges(_quota((), exists), template, "low")
    assert not quota_charges(_quota((), exists), template, "")
    assert not quota_charges(
        _quota((), ScopeRequirement("PriorityClass", "DoesNotExist")), template, ""
    )


@pytest.mark.parametrize(
    ("strategy", "surge"),
    [
        ("", 1),  # 25% of 4, rounded up
        ("  strategy: {type: Recreate}\n", 0),
        ("  strategy: {rollingUpdate: {maxSurge: 3}}\n", 3),
        ("  strategy: {rollingUpdate: {maxSurge: 30%}}\n", 2),
        ("  strategy: {rollingUpdate: {maxSurge: 0}}\n", 0),
    ],
)
def test_rollout_surge(strategy: str, surge: int) -> None:
    workload, _ = _template(_deployment(spec_extra=strategy))
    assert rollout_surge(workload, 4) == surge


# ---------------------------------------------------------------------------------------------
# Device plugin images and GPU pools


@pytest.mark.parametrize(
    ("image", "repository", "tag", "reason"),
    [
        (
            "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
            "nvcr.io/nvidia/k8s-device-plugin",
            "v0.17.0",
            None,
        ),
        ("nvidia/k8s-device-plugin", "nvidia/k8s-device-plugin", None, "has no tag"),
        (
            "localhost:5000/k8s-device-plugin",
            "localhost:5000/k8s-device-plugin",
            None,
            "has no tag",
        ),
        ("k8s-device-plugin:latest", "k8s-device-plugin", "latest", "uses `latest`"),
        ("rocm/k8s-device-plugin:1.25", "rocm/k8s-device-plugin", "1.25", "floating tag `1.25`"),
        (
            "x/neuron-device-plugin:2.22.4.0-ubuntu",
            "x/neuron-device-plugin",
            "2.22.4.0-ubuntu",
            None,
        ),
        ("x/k8s-device-plugin@sha256:abc", "x/k8s-device-plugin", None, None),
    ],
)
def test_image_pinning(image: str, repository: str, tag: str | None, reason: str | None) -> None:
    ref = parse_image(image)
    assert (ref.repository, ref.tag) == (repository, tag)
    found = unpinned_reason(ref)
    assert (found is None) if reason is None else (found is not None and reason in found)


def test_plugin_vendor_is_read_from_the_image() -> None:
    assert plugin_vendor(parse_image("nvcr.io/nvidia/k8s-device-plugin:v0.17.0")) == "nvidia"
    assert plugin_vendor(parse_image("docker.io/rocm/k8s-device-plugin:1.25.2.8")) == "amd"
    assert plugin_vendor(parse_image("intel/intel-gpu-plugin:0.30.0")) == "intel"
    assert plugin_vendor(parse_image("fluent/fluent-bit:3.0.0")) is None


def test_gpu_pools_are_recognised_by_allocatable_labels_or_instance_type() -> None:
    assert pool_vendors(Pool("a", allocatable={"nvidia.com/gpu": Decimal(4)})) == {"nvidia"}
    assert pool_vendors(Pool("b", labels={"cloud.google.com/gke-accelerator": "nvidia-l4"})) == {
        "nvidia"
    }
    assert pool_vendors(
        Pool("c", labels={"karpenter.k8s.aws/instance-gpu-manufacturer": "amd"})
    ) == {"amd"}
    assert pool_vendors(Pool("d", instance_type="p4d.24xlarge")) == {"nvidia"}
    assert pool_vendors(Pool("e", labels={"nvidia.com/gpu.present": "false"})) == frozenset()
    assert pool_vendors(Pool("f", allocatable={"cpu": Decimal(8)})) == frozenset()


# ---------------------------------------------------------------------------------------------
# Rules against a constructed profile


def _context(text: str, profile: ClusterProfile | None) -> CheckContext:
    loaded = load_text("manifest.yaml", text)
    workloads = tuple(w for d in loaded.documents if (w := workload_of(d)) is not None)
    return CheckContext(loaded, workloads, profile)


PLUGINS = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: amd-plugin, namespace: kube-system}
spec:
  template:
    spec:
      containers:
      - {name: plugin, image: "rocm/k8s-device-plugin:1.25.2.8"}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-plugin, namespace: kube-system}
spec:
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      containers:
      - {name: plugin, image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}
"""


def test_each_device_plugin_is_checked_against_the_pools_of_its_vendor() -> None:
    gpu_taint = (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    profile = ClusterProfile(
        pools=(
            Pool("nvidia", taints=gpu_taint, allocatable={"nvidia.com/gpu": Decimal(8)}),
            Pool(
                "amd",
                taints=(Taint("amd.com/gpu", "", "NoSchedule"),),
                allocatable={"amd.com/gpu": Decimal(8)},
            ),
            Pool("cpu", taints=(Taint("dedicated", "infra", "NoSchedule"),)),
        )
    )
    problems = list(device_plugin_misses_gpu_nodes(_context(PLUGINS, profile)))
    assert [(p.pos, "`amd`" in p.message, "amd.com/gpu" in p.message) for p in problems] == [
        ((6, 5), True, True)
    ]
    assert list(device_plugin_misses_gpu_nodes(_context(PLUGINS, None))) == []


TERMINATING = """\
apiVersion: batch/v1
kind: Job
metadata: {name: sweep, namespace: ml}
spec:
  parallelism: 3
  template:
    spec:
      activeDeadlineSeconds: 3600
      containers:
      - name: sweep
        resources:
          requests: {cpu: "1"}
          limits: {nvidia.com/gpu: 2}
---
apiVersion: batch/v1
kind: Job
metadata: {name: service, namespace: ml}
spec:
  parallelism: 3
  template:
    spec:
      containers:
      - name: sweep
        resources:
          requests: {cpu: "1"}
          limits: {nvidia.com/gpu: 2}
"""


def test_a_terminating_scoped_quota_counts_only_pods_with_a_deadline() -> None:
    profile = ClusterProfile(
        quotas=(
            ResourceQuota(
                "ml",
                "short-jobs",
                {"requests.nvidia.com/gpu": Decimal(4)},
                {"requests.nvidia.com/gpu": Decimal(1)},
                ("Terminating",),
            ),
        )
    )
    problems = list(gpu_quota_exceeded(_context(TERMINATING, profile)))
    assert len(problems) == 1
    assert problems[0].pos == (5, 3)
    assert "used 1 + requested 6 (3 parallel pods × 2) = 7 > hard 4" in problems[0].message
    roomy = profile.quotas[0]._replace(hard={"requests.nvidia.com/gpu": Decimal(7)})
    assert list(gpu_quota_exceeded(_context(TERMINATING, replace(profile, quotas=(roomy,))))) == []
