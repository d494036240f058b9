"""`gpulint diagnose --timeline`: pools whose GPU pods' start-up is dominated by image pulls,
with the speed-ups the dump shows or their absence.

fixtures/diagnose/pull-findings.yaml is a GKE dump at fixed times (see its header): pool
gpu-l4 pulls a 20 GB image in 5m50s (1m20s of it waiting) of a 6m10s start-up with no speed-up;
pool gpu-l4-stream pulls 9.1 GB in 1m10s of 1m40s with image streaming and a Spegel DaemonSet;
pool gpu-t4 pulls for 20 s of 3m20s (below both thresholds).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_diagnose import DUMPS
from tests.test_diagnose import run as run_diagnose

PULLS = str(DUMPS / "pull-findings.yaml")
GPU_TIME = str(DUMPS / "gpu-time.yaml")
NOW = "2024-06-03T11:00:00Z"
HEADER = (
    "Image pulls dominate start-up (pulls, waiting included, >= 50% of created to first start "
    "and >= 1m):\n"
)


def test_each_pull_dominated_pool_is_named_with_its_speed_ups_or_their_absence() -> None:
    result = run_diagnose(PULLS, "--timeline", "--now", NOW)
    assert result.exit_code == 0, result.output
    section = result.stdout[result.stdout.index(HEADER) :]
    assert section == (
        HEADER
        + "  pool gpu-l4: 1 of 2 started GPU pods; pulls p95 5m50s (1m20s of it waiting behind "
        "other pulls), 95% of created to first start; nvcr.io/nvidia/pytorch:24.05-py3 20.1 GB; "
        "speed-ups: no node labelled cloud.google.com/gke-image-streaming=true (GKE image "
        "streaming); no pre-pull DaemonSet or peer-to-peer image cache (Spegel, Dragonfly, "
        "Kraken, kube-fledged) on its nodes\n"
        "    fix: stream images lazily (GKE image streaming, SOCI, AKS artifact streaming); "
        "pre-pull the image on the pool's nodes (a DaemonSet, a node image) or run a "
        "peer-to-peer cache (Spegel, Dragonfly)\n"
        "  pool gpu-l4-stream: 1 of 1 started GPU pod; pulls p95 1m10s, 70% of created to first "
        "start; vllm/vllm-openai:v0.6.3 9.1 GB; speed-ups: image streaming on 1 of 1 node; "
        "Spegel (DaemonSet kube-system/spegel)\n"
        "    fix: slim the image (a smaller, layered build) or keep a warm node\n"
    )


def test_the_json_report_carries_the_same_figures() -> None:
    result = run_diagnose(PULLS, "--timeline", "--now", NOW, "--format", "json")
    slow = json.loads(result.stdout)["gpuTime"]["slowPulls"]
    assert [f["pool"] for f in slow] == ["gpu-l4", "gpu-l4-stream"]  # gpu-t4: 20 s of 3m20s
    first = slow[0]
    assert first["pods"] == ["ml/train-a-x1"]
    assert first["startedPods"] == 2
    assert (first["pullSecondsP95"], first["waitingSecondsP95"], first["shareP95"]) == (
        350.0,
        80.0,
        0.946,
    )
    assert first["images"] == [
        {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "sizeBytes": 20115612345}
    ]
    assert (first["streamingNodes"], first["nodes"], first["caches"]) == (0, 1, [])
    assert slow[1]["caches"] == ["Spegel (DaemonSet kube-system/spegel)"]
    assert slow[1]["streamingNodes"] == 1


def test_a_pre_pull_daemonset_of_the_image_counts_and_its_selector_is_read(tmp_path: Path) -> None:
    text = Path(PULLS).read_text() + (
        "- apiVersion: apps/v1\n"
        "  kind: DaemonSet\n"
        "  metadata: {name: prepull-pytorch, namespace: ml}\n"
        "  spec:\n"
        "    template:\n"
        "      spec:\n"
        "        nodeSelector: {cloud.google.com/gke-nodepool: gpu-l4}\n"
        "        initContainers:\n"
        "        - {name: pull, image: 'nvcr.io/nvidia/pytorch:24.05-py3', command: ['true']}\n"
        "        containers:\n"
        "        - {name: pause, image: 'registry.k8s.io/pause:3.9'}\n"
        "- apiVersion: apps/v1\n"
        "  kind: DaemonSet\n"
        "  metadata: {name: dragonfly-dfdaemon, namespace: d7y}\n"
        "  spec:\n"
        "    template:\n"
        "      spec:\n"
        "        nodeSelector: {cloud.google.com/gke-nodepool: gpu-t4}\n"
        "        containers:\n"
        "        - {name: dfdaemon, image: 'dragonflyoss/client:v0.1.0'}\n"
    )
    dump = tmp_path / "dump.yaml"
    dump.write_text(text)
    result = run_diagnose(str(dump), "--timeline", "--now", NOW, "--format", "json")
    slow = json.loads(result.stdout)["gpuTime"]["slowPulls"]
    # Dragonfly selects gpu-t4 only: not a speed-up of gpu-l4.
    assert slow[0]["caches"] == [
        "pre-pull DaemonSet ml/prepull-pytorch (nvcr.io/nvidia/pytorch:24.05-py3)"
    ]
    assert slow[0]["fix"] == (
        "stream images lazily (GKE image streaming, SOCI, AKS artifact streaming)"
    )


def test_without_daemonsets_in_the_dump_caches_are_not_known() -> None:
    result = run_diagnose(GPU_TIME, "--timeline", "--now", "2024-06-03T11:10:00Z")
    section = result.stdout[result.stdout.index(HEADER) :]
    assert section.splitlines()[1] == (
        "  pool gpu-a10g: 1 of 1 started GPU pod; pulls p95 3m40s (27.7s of it waiting behind "
        "other pulls), 96% of created to first start; nvcr.io/nvidia/pytorch:24.05-py3 20.1 GB; "
        "speed-ups: no node labelled cloud.google.com/gke-image-streaming=true (GKE image "
        "streaming); pre-pull and peer-to-peer image caches not known (no DaemonSets among the "
        "objects read; --live does not list them, a dump can: kubectl get ...,daemonsets)"
    )


def test_no_section_when_no_pull_dominates(tmp_path: Path) -> None:
    text = (
        Path(PULLS)
        .read_text()
        .replace("in 4m30s (5m50s including waiting)", "in 20s (30s including waiting)")
    )
    text = text.replace("in 1m10s (1m10s including waiting)", "in 59s (59s including waiting)")
    dump = tmp_path / "dump.yaml"
    dump.write_text(text)
    result = run_diagnose(str(dump), "--timeline", "--now", NOW)
    assert "GPU time: 4 GPU pods" in result.stdout
    assert "Image pulls dominate" not in result.stdout
