"""`gpulint diagnose --timeline/--prices/--compare/--format html`: where GPU time and money go.

fixtures/diagnose/gpu-time.yaml is `kubectl get pods,events,nodes,jobs -A -o yaml` of a cluster
at fixed times, with the kubelet's event texts: a ResNet Job in a GPU and a CPU variant, an
eval Job pulled by an older kubelet, a vLLM replica whose image was cached and one still
pulling. Each figure below is computed by hand from those times and the three-row price file.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import kmock
import pytest

from gpulint.diagnose.timeline import go_duration, image_pull
from tests.kube_server import item_list
from tests.live_cluster import dump_items
from tests.test_diagnose import DUMPS
from tests.test_diagnose import run as run_diagnose

pytest_plugins = ["tests.binaries"]

GPU_TIME = str(DUMPS / "gpu-time.yaml")
SKYPILOT = str(DUMPS / "prices-skypilot.csv")
NOW = "2024-06-03T11:10:00Z"
OPENCOST = (
    "EndTimestamp,InstanceID,Region,AssetClass,InstanceIDField,InstanceType,MarketPriceHourly,"
    "Version\n"
    ",g5.xlarge,us-east-1,node,metadata.labels.node.kubernetes.io/instance-type,g5.xlarge,1.006,\n"
    ",aws:///us-east-1a/i-0a1b2c3d4e5f60004,us-east-1,node,spec.providerID,c6i.8xlarge,1.36,\n"
    ",nvidia-a10g,,gpulabel,gpu.nvidia.com/class,,0.95,\n"
)


def report(*args: str) -> dict[str, Any]:
    result = run_diagnose(GPU_TIME, "--now", NOW, "--format", "json", *args)
    assert result.exit_code == 0, result.output  # no Pending GPU pod
    return json.loads(result.stdout)["gpuTime"]


# --- the kubelet's Pulled event, in each format ------------------------------------------


@pytest.mark.parametrize(
    ("message", "image", "pull", "waiting", "size", "hit"),
    [
        (  # 1.30+: pull, pull with waiting, size
            'Successfully pulled image "vllm/vllm-openai:latest" in 1m21.284s (2m3.5s including '
            "waiting). Image size: 12640000000 bytes.",
            "vllm/vllm-openai:latest", 81.284, 42.216, 12_640_000_000, False,
        ),
        (  # 1.25-1.29: waiting, no size
            'Successfully pulled image "busybox:1.36" in 796ms (1.594s including waiting)',
            "busybox:1.36", 0.796, 0.798, None, False,
        ),
        (  # older: the pull time alone, waiting not known
            'Successfully pulled image "nginx:1.25" in 45.2s',
            "nginx:1.25", 45.2, None, None, False,
        ),
        ('Successfully pulled image "nginx:1.25"', "nginx:1.25", None, None, None, False),
        (
            'Container image "vllm/vllm-openai:v0.6.3" already present on machine',
            "vllm/vllm-openai:v0.6.3", 0.0, 0.0, None, True,
        ),
    ],
)  # fmt: skip
def test_each_pulled_format_gives_pull_time_waiting_size_and_cache_hit(
    message: str, image: str, pull: float | None, waiting: float | None, size: int | None, hit: bool
) -> None:
    found = image_pull(message)
    assert found is not None
    assert (found.image, found.size_bytes, found.cache_hit) == (image, size, hit)
    assert found.pull_seconds == (pytest.approx(pull) if pull is not None else None)
    assert found.waiting_seconds == (pytest.approx(waiting) if waiting is not None else None)


def test_go_durations() -> None:
    assert go_duration("1h2m3.5s") == pytest.approx(3723.5)
    assert go_duration("796ms") == pytest.approx(0.796)
    assert go_duration("12µs") == pytest.approx(12e-6)
    assert go_duration("3 minutes") is None
    assert image_pull('Pulling image "x"') is None


# --- phases and GPU time before the first start ---------------------------------------------


def test_phases_of_each_gpu_pod_to_the_second() -> None:
    pods = {p["name"]: p for p in report("--timeline")["pods"]}
    assert set(pods) == {
        "resnet-gpu-7xk2p",
        "eval-5kq9z",
        "vllm-6d9f8c7b5-abcde",
        "vllm-6d9f8c7b5-fghij",
    }
    resnet = pods["resnet-gpu-7xk2p"]
    assert resnet["phases"] == {
        "schedule": 5.0,  # 10:00:00 -> 10:00:05
        "pull": 220.2,  # 3m40.2s including waiting
        "pullWait": 27.7,  # 3m40.2s - 3m12.5s
        "beforeStart": 225.0,  # 10:00:05 -> 10:03:50
        "ready": None,  # a completed pod's Ready is False: not known
        "run": 1810.0,  # 10:03:50 -> 10:34:00
    }
    assert resnet["pulls"] == [
        {
            "image": "nvcr.io/nvidia/pytorch:24.05-py3",
            "cacheHit": False,
            "pullSeconds": 192.5,
            "waitingSeconds": 27.7,
            "totalSeconds": 220.2,
            "sizeBytes": 20115612345,
        }
    ]
    assert (resnet["pool"], resnet["workload"], resnet["gpuSecondsBeforeStart"]) == (
        "gpu-a10g", "Job/resnet-gpu", 225.0,
    )  # fmt: skip
    # The older kubelet says how long the pull took, not how long it waited.
    assert pods["eval-5kq9z"]["phases"]["pull"] == 45.2
    assert pods["eval-5kq9z"]["phases"]["pullWait"] is None
    cached = pods["vllm-6d9f8c7b5-abcde"]
    assert (cached["phases"]["pull"], cached["phases"]["ready"]) == (0.0, 30.0)
    assert cached["pulls"][0]["cacheHit"] is True
    # Still pulling at 11:10:00: its GPU is held from 10:20:03 on, 49 min 57 s so far.
    starting = pods["vllm-6d9f8c7b5-fghij"]
    assert (starting["starting"], starting["gpuSecondsBeforeStart"]) == (True, 2997.0)
    assert starting["phases"]["beforeStart"] is None and starting["pulls"] == []


def test_gpu_time_before_the_first_start_by_image_and_pool_and_phase_percentiles() -> None:
    gpu = report("--timeline")
    assert gpu["beforeStart"] == {
        "gpuSeconds": 3271.0,  # 225 + 47 + 2 + 2997
        "byImage": {
            "nvcr.io/nvidia/pytorch:24.05-py3": 225.0,
            "registry.example.com/ml/eval:0.9": 47.0,
            "vllm/vllm-openai:v0.6.3": 2999.0,
        },
        "byPool": {"gpu-a10g": 225.0, "gpu-a10g-spot": 3046.0},
    }
    spot = gpu["byPool"]["gpu-a10g-spot"]
    assert spot["schedule"] == {"count": 3, "p50": 2.0, "p95": 3.0}
    assert spot["beforeStart"] == {"count": 2, "p50": 2.0, "p95": 47.0}
    assert gpu["byWorkload"]["serve/Deployment/vllm"]["ready"] == {
        "count": 1,
        "p50": 30.0,
        "p95": 30.0,
    }
    # Without a price file, runs say GPU time, not dollars.
    runs = {r["job"]: r for r in gpu["runs"]}
    assert set(runs) == {"eval", "resnet-gpu"}  # the CPU variant only when compared
    assert (runs["resnet-gpu"]["gpuSeconds"], runs["resnet-gpu"]["cost"]) == (2035.0, None)


# --- cost per run and break-even --------------------------------------------------------------


def test_cost_per_run_and_break_even_with_a_skypilot_price_file() -> None:
    gpu = report("--prices", SKYPILOT, "--compare", "resnet-cpu", "ml/resnet-gpu")
    runs = {r["job"]: r for r in gpu["runs"]}
    # held 10:00:05 -> 10:34:00 = 2035 s on a whole g5.xlarge at $1.006/h: $0.5687
    assert runs["resnet-gpu"]["cost"] == 0.57
    assert runs["resnet-gpu"]["costBeforeStart"] == 0.06  # 225 s at $1.006/h: $0.0629
    assert runs["resnet-gpu"]["durationSeconds"] == 2042.0  # the Job's start to completion
    # 16 of 32 CPUs and 32 of 64 GiB of a c6i.8xlarge ($1.36/h) for 7228 s: $1.3653
    assert (runs["resnet-cpu"]["hourly"], runs["resnet-cpu"]["cost"]) == (0.68, 1.37)
    # A spot node at the spot price: 1247 s at $0.4281/h = $0.1483
    assert (runs["eval"]["cost"], runs["eval"]["prices"][0]["market"]) == (0.15, "spot")
    assert gpu["comparison"] == {
        "baseline": "ml/resnet-cpu",
        "candidate": "ml/resnet-gpu",
        "speedup": 3.5416,  # 7232 s / 2042 s
        "breakEven": 1.4794,  # $1.006/h / $0.68/h
        "candidateCheaper": True,
        "verdict": "ml/resnet-gpu against ml/resnet-cpu: speedup 3.54x, break-even 1.48x: "
        "resnet-gpu is cheaper per run ($0.57 against $1.37)",
    }


def test_an_opencost_price_file_prices_nodes_by_field(tmp_path: Path) -> None:
    prices = tmp_path / "opencost.csv"
    prices.write_text(OPENCOST, encoding="utf-8")
    gpu = report("--prices", str(prices), "--compare", "resnet-gpu", "resnet-cpu")
    runs = {r["job"]: r for r in gpu["runs"]}
    # No spot column: the spot node at its one price, 1247 s at $1.006/h = $0.3485.
    assert (runs["eval"]["cost"], runs["resnet-gpu"]["cost"], runs["resnet-cpu"]["cost"]) == (
        0.35, 0.57, 1.37,
    )  # fmt: skip
    assert runs["resnet-cpu"]["prices"][0]["row"] == f"{prices}:3"  # matched by spec.providerID
    assert gpu["comparison"]["baseline"] == "ml/resnet-cpu"  # the CPU variant, named second


def test_a_node_without_a_price_leaves_its_runs_unpriced(tmp_path: Path) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text("\n".join(Path(SKYPILOT).read_text().splitlines()[:2]) + "\n")
    gpu = report("--prices", str(prices), "--compare", "resnet-cpu", "resnet-gpu")
    runs = {r["job"]: r for r in gpu["runs"]}
    assert (runs["resnet-cpu"]["cost"], runs["resnet-gpu"]["cost"]) == (None, 0.57)
    assert gpu["notes"] == [
        f"no price in {prices} for c6i.8xlarge: the runs on them are not priced"
    ]
    assert gpu["comparison"]["breakEven"] is None


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("name,price\nx,1\n", "not a price file"),
        ("InstanceType,Price\ng5.xlarge,one\n", ":2: `one` is not an hourly price in dollars"),
    ],
)
def test_a_bad_price_file_is_one_line_and_exit_2(tmp_path: Path, text: str, error: str) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text(text, encoding="utf-8")
    result = run_diagnose(GPU_TIME, "--prices", str(prices))
    assert result.exit_code == 2
    assert error in result.stderr and result.stderr.count("\n") == 1


def test_compare_names_a_job_that_is_not_there() -> None:
    result = run_diagnose(GPU_TIME, "--compare", "resnet-cpu", "resnet-tpu")
    assert result.exit_code == 2
    assert "--compare: no Job `resnet-tpu`" in result.stderr


def test_the_text_report_shows_the_same_figures() -> None:
    result = run_diagnose(
        GPU_TIME, "--now", NOW, "--prices", SKYPILOT, "--compare", "resnet-cpu", "resnet-gpu"
    )
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert (
        "GPU time: 4 GPU pods bound to nodes; 54m31s GPU time held before the first container "
        "start\n" in text
    )
    assert (
        "  ml/resnet-gpu: 1 pod, 1 GPU, 34m2s, $0.57 per run, $0.06 of it before the first "
        "start (1.0060 $/h)\n" in text
    )
    assert (
        "Break-even: ml/resnet-gpu against ml/resnet-cpu: speedup 3.54x, break-even 1.48x: "
        "resnet-gpu is cheaper per run ($0.57 against $1.37)\n"
    ) in text
    assert (
        "serve/vllm-6d9f8c7b5-fghij (Deployment/vllm, pool gpu-a10g-spot, 1 GPU): created "
        "2024-06-03T10:20:00Z, scheduled +3s, initialized +3s, not started after 49m57s; no "
        "Pulled event" in text
    )


# --- live ------------------------------------------------------------------------------------

LIVE_LISTS = {
    "/api/v1/nodes": "Node",
    "/api/v1/pods": "Pod",
    "/api/v1/resourcequotas": "ResourceQuota",
    "/api/v1/limitranges": "LimitRange",
    "/apis/scheduling.k8s.io/v1/priorityclasses": "PriorityClass",
    "/api/v1/events": "Event",
    "/apis/apps/v1/replicasets": "ReplicaSet",
    "/apis/batch/v1/jobs": "Job",
}


def test_live_gives_the_numbers_of_the_dump(k: kmock.KubernetesScaffold, kubeconfig: Path) -> None:
    items = dump_items(GPU_TIME)
    for path, kind in LIVE_LISTS.items():
        found = [{k_: v for k_, v in i.items() if k_ != "kind"} for i in items if i["kind"] == kind]
        api_version = next((i["apiVersion"] for i in items if i["kind"] == kind), "v1")
        k[f"get {path}"] << item_list(kind, found, api_version)
    k["get /apis/karpenter.sh/v1/nodepools"] << 404 << {"kind": "Status", "code": 404}
    args = (
        "--now",
        NOW,
        "--format",
        "json",
        "--prices",
        SKYPILOT,
        "--compare",
        "resnet-cpu",
        "resnet-gpu",
    )
    live = run_diagnose("--live", "--kubeconfig", str(kubeconfig), *args)
    assert live.exit_code == 0, live.output
    offline = run_diagnose(GPU_TIME, *args)
    assert json.loads(live.stdout)["gpuTime"] == json.loads(offline.stdout)["gpuTime"]


# --- HTML ------------------------------------------------------------------------------------


def html_report(tmp_path: Path, dump: str = GPU_TIME) -> Path:
    out = tmp_path / "report.html"
    result = run_diagnose(
        dump,
        "--now",
        NOW,
        "--format",
        "html",
        "--prices",
        SKYPILOT,
        "--compare",
        "resnet-cpu",
        "resnet-gpu",
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    return out


def test_the_html_report_is_one_self_contained_escaped_file(tmp_path: Path) -> None:
    dump = tmp_path / "dump.yaml"
    hostile = 'registry.example.com/x:1"><script>alert(1)</script>'
    dump.write_text(
        Path(GPU_TIME)
        .read_text(encoding="utf-8")
        .replace("registry.example.com/ml/eval:0.9", hostile),
        encoding="utf-8",
    )
    page = html_report(tmp_path, str(dump)).read_text(encoding="utf-8")
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # No external asset: no src or href, no stylesheet link, no URL but the SVG namespace.
    assert " src=" not in page and " href=" not in page and "<link" not in page
    assert page.count("http") == page.count('xmlns="http://www.w3.org/2000/svg"') == 2
    assert '<td class=n data-figure="cost-resnet-gpu">0.57</td>' in page
    assert '<b data-figure="gpu-seconds-before-start">3271.0</b>' in page


@pytest.mark.slow
def test_the_html_report_renders_in_headless_chromium_with_the_json_figures(
    tmp_path: Path, chromium: str
) -> None:
    page = html_report(tmp_path)
    figures = report("--prices", SKYPILOT, "--compare", "resnet-cpu", "resnet-gpu")
    base = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [*base, "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    runs = {r["job"]: r for r in figures["runs"]}
    # The browser parsed the page: what it serialises back holds the JSON report's figures.
    assert f'data-figure="cost-resnet-gpu">{runs["resnet-gpu"]["cost"]}</td>' in dom
    assert f'data-figure="cost-resnet-cpu">{runs["resnet-cpu"]["cost"]}</td>' in dom
    assert f'data-figure="break-even">{figures["comparison"]["breakEven"]}</td>' in dom
    assert (
        f'data-figure="gpu-seconds-before-start">{figures["beforeStart"]["gpuSeconds"]}</b>' in dom
    )
    # Each pod's bar: created to scheduled, then to its start (one still starting), and the
    # two finished Jobs' runs (the Deployment's serving pod has not finished).
    assert dom.count('class="phase-') == 10
    assert dom.count('class="phase-starting"') == 1
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*base, f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # drawn, not a blank page
