"""`gpulint diagnose` on GPU pods that were scheduled and failed at their first CUDA call.

fixtures/diagnose/cuda-crash.yaml is a dump of pods, events and nodes: each pod's verdict,
evidence and fix are asserted, and so are the pods that must not be diagnosed this way.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpulint.cli import main
from gpulint.diagnose import StuckPod, diagnose, parse_time, read_dumps

DUMP = str(Path(__file__).resolve().parent.parent / "fixtures" / "diagnose" / "cuda-crash.yaml")
NOW = "2025-09-01T12:00:00Z"
TRITON = "nvcr.io/nvidia/tritonserver:25.08-py3"
SIDE = (
    f"image `{TRITON}` needs CUDA 13.0.0 (from its tag: NGC Triton Inference Server 25.08); "
    "node gpu-a100-1 (pool a100-8x) has driver 570.124.06 (node label "
    "nvidia.com/cuda.driver-version.full)"
)
REASON = (
    "CUDA 13.0.0 needs 580.65.06 or later: below CUDA 13's family floor 580.65.06, and forward "
    "compatibility cannot help: the image's cuda-compat covers R470, R525, R535, R545, not R570"
)
FIX = (
    "Run the pod on nodes with driver 580.65.06 or later (upgrade the driver of node gpu-a100-1 "
    "(pool a100-8x)), or use an image built for CUDA 12.8.1 or earlier. `gpulint check "
    "--profile` reports this before deploy (GPU801) when the pools' drivers are known."
)


def pods() -> dict[str, StuckPod]:
    documents, profile, typed = read_dumps([DUMP])
    found = diagnose(documents, profile, parse_time(NOW), typed=typed).pods
    return {p.name: p for p in found}


def test_only_the_pods_that_failed_this_way_are_diagnosed() -> None:
    # Not: the vLLM pod (CUDA 13.0.2 may run on R570 through forward compatibility), the pod
    # killed for memory, and the Triton pod running on the 580 node.
    assert {name: p.cause.slug for name, p in pods().items()} == {
        "triton-7c9d8f6b5-x2k4p": "cuda-driver-mismatch",
        "triton-7c9d8f6b5-q8w2z": "cuda-driver-mismatch",
        "cuda-check": "cuda-driver-mismatch",
    }


def test_the_container_message_with_the_driver_and_the_cuda_side_by_side() -> None:
    pod = pods()["triton-7c9d8f6b5-x2k4p"]
    said = (
        "UNAVAILABLE: Internal: unable to get number of CUDA devices: CUDA driver version is "
        "insufficient for CUDA runtime version"
    )
    assert pod.owner == "ReplicaSet/triton-7c9d8f6b5"
    assert pod.cause.rule == "GPU801"
    assert pod.pending_seconds is None
    assert pod.explanation == (
        "container triton on node gpu-a100-1 failed with 'CUDA driver version is insufficient "
        f"for CUDA runtime version': {SIDE}"
    )
    assert [(e.source, e.reason, e.message) for e in pod.evidence] == [
        ("pod", "Error", said),
        ("profile", None, f"{SIDE}; {REASON}"),
    ]
    assert pod.fix == FIX
    assert pod.confirm == (
        "kubectl logs triton-7c9d8f6b5-x2k4p -n serving -c triton --previous; kubectl get node "
        "gpu-a100-1 -L nvidia.com/cuda.driver-version.full -L nvidia.com/gpu.product"
    )


def test_a_crash_loop_without_a_message_on_a_driver_that_cannot_run_it() -> None:
    pod = pods()["triton-7c9d8f6b5-q8w2z"]
    assert pod.explanation == (
        f"container triton on node gpu-a100-1 crash-loops (CrashLoopBackOff): {SIDE}"
    )
    assert pod.evidence[0].reason == "CrashLoopBackOff"


def test_the_runtime_refusal_names_the_cuda_it_wanted() -> None:
    pod = pods()["cuda-check"]
    assert pod.explanation == (
        "container cuda on node gpu-a100-1 failed with 'unsatisfied condition: cuda>=13.0': "
        "image `example.com/ml/cuda-check:3` needs CUDA 13.0 (from its NVIDIA_REQUIRE_CUDA, as "
        "the runtime refused it); node gpu-a100-1 (pool a100-8x) has driver 570.124.06 (node "
        "label nvidia.com/cuda.driver-version.full)"
    )
    assert pod.evidence[0].source == "event" and pod.evidence[0].reason == "Failed"


def test_the_cli_reports_the_cause_in_text_and_json() -> None:
    runner = CliRunner()
    text = runner.invoke(main, ["diagnose", DUMP, "--now", NOW])
    assert text.exit_code == 1, text.output
    assert text.stdout.splitlines()[0] == "3 stuck GPU pods: cuda-driver-mismatch 3"
    assert (
        "serving/triton-7c9d8f6b5-x2k4p (ReplicaSet/triton-7c9d8f6b5): cuda-driver-mismatch\n"
        in text.stdout
    )
    report = json.loads(
        runner.invoke(main, ["diagnose", DUMP, "--now", NOW, "--format", "json"]).stdout
    )
    first = next(p for p in report["pods"] if p["name"] == "triton-7c9d8f6b5-x2k4p")
    assert (first["cause"], first["rule"], first["pendingSeconds"]) == (
        "cuda-driver-mismatch",
        "GPU801",
        None,
    )
    assert first["evidence"][1]["message"] == f"{SIDE}; {REASON}"
