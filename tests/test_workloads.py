"""workloads.peak_replicas: the one answer to "how many pods at once" that rules share."""

from __future__ import annotations

import pytest

from gpulint.loader import load_text
from gpulint.workloads import autoscalers, peak_replicas, workload_of

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ml}
spec:
  replicas: 4
  template:
    spec:
      containers: [{name: c}]
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


def test_replicas_above_the_hpa_max_still_exist_until_the_hpa_acts() -> None:
    peak = _peak(DEPLOYMENT + HPA % 2)
    assert (peak.count, peak.field, peak.autoscaler) == (4, "replicas", None)


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
