"""`gpulint diagnose`: message parsing, one cause per stuck pod, JSON shape, CLI exit codes.

The dumps in fixtures/diagnose are `kubectl get ... -A -o yaml` Lists of one cluster captured
at 2024-05-01T12:00:00Z: stuck-gpu-pods.yaml holds one pod or controller per cause,
taint-formats.yaml the untolerated-taint reason of four releases, nodes.yaml the nodes and
quota of the cluster (the profile).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpulint.cli import main
from gpulint.diagnose import CAUSES, diagnose, parse_time, read_dumps
from gpulint.diagnose.classify import StuckPod
from gpulint.diagnose.extra import WorkloadSource
from gpulint.diagnose.messages import NodeCount, parse_histogram, parse_refusal, parse_scale_up
from gpulint.yamltree import parse

ROOT = Path(__file__).resolve().parent.parent
DUMPS = ROOT / "fixtures" / "diagnose"
STUCK, TAINTS, NODES = (
    str(DUMPS / n) for n in ("stuck-gpu-pods.yaml", "taint-formats.yaml", "nodes.yaml")
)
NOW = "2024-05-01T12:00:00Z"
PREEMPTION = "0/6 nodes are available: 6 Preemption is not helpful for scheduling"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["diagnose", *args])


def stuck(*paths: str) -> dict[str, StuckPod]:
    documents, profile, typed = read_dumps(paths)
    return {p.name: p for p in diagnose(documents, profile, parse_time(NOW), typed=typed).pods}


# --- message formats -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "nodes", "reasons", "preemption"),
    [
        (  # 1.24+: sorted as strings, preemption text after the histogram
            "0/6 nodes are available: 2 Insufficient nvidia.com/gpu, 4 node(s) didn't match "
            f"Pod's node affinity/selector. preemption: {PREEMPTION}.",
            6,
            [
                (2, "Insufficient nvidia.com/gpu"),
                (4, "node(s) didn't match Pod's node affinity/selector"),
            ],
            PREEMPTION,
        ),
        (  # 1.18-1.23: the taint reason holds ", " itself
            "0/5 nodes are available: 10 node(s) had taint {sku: gpu}, that the pod didn't "
            "tolerate, 3 Insufficient cpu.",
            5,
            [
                (10, "node(s) had taint {sku: gpu}, that the pod didn't tolerate"),
                (3, "Insufficient cpu"),
            ],
            None,
        ),
        (  # 1.35: DRA note before the preemption text, kubectl describe's trailing `..`
            "0/4 nodes are available: 4 node(s) had untolerated taint(s). no new claims to "
            "deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for "
            "scheduling..",
            4,
            [(4, "node(s) had untolerated taint(s)")],
            "0/4 nodes are available: 4 Preemption is not helpful for scheduling",
        ),
        (  # a PreFilter rejection replaces the per-node entries
            "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            3,
            [],
            None,
        ),
    ],
)
def test_node_histogram_formats(message, nodes, reasons, preemption) -> None:
    parsed = parse_histogram(message)
    assert parsed is not None
    assert parsed.nodes == nodes
    assert [(r.count, r.reason) for r in parsed.reasons] == reasons
    assert parsed.preemption == preemption
    assert (parsed.prefilter is not None) == (not reasons)


def test_unknown_scheduler_text_is_no_histogram() -> None:
    assert parse_histogram('running PreBind plugin "VolumeBinding": timed out') is None


def test_autoscaler_and_admission_messages() -> None:
    assert parse_scale_up(
        "pod didn't trigger scale-up: 1 max node group size reached, 2 in backoff after failed "
        "scale-up"
    ) == (
        NodeCount(1, "max node group size reached"),
        NodeCount(2, "in backoff after failed scale-up"),
    )
    assert parse_scale_up(
        "pod didn't trigger scale-up (it wouldn't fit if a new node is added)"
    ) == (NodeCount(0, "it wouldn't fit if a new node is added"),)
    refusal = parse_refusal(
        'Error creating: pods "web-6b8f9c7d5-" is forbidden: failed quota: cpu-quota: must '
        "specify cpu for: main"
    )
    assert refusal is not None
    assert (refusal.pod_name, refusal.verdict) == ("web-6b8f9c7d5-", "forbidden")
    assert refusal.detail == "failed quota: cpu-quota: must specify cpu for: main"


# --- one cause per stuck pod -----------------------------------------------------------------

# name -> (cause, rule, owner, pendingSeconds, evidence reason, node reasons of the first evidence)
EXPECTED: dict[str, tuple[Any, ...]] = {
    "typo-0": ("resource-not-advertised", "GPU001", None, 3600, "FailedScheduling",
               {"Insufficient nvidia.com/gpus": 6}),
    "trainer-7d9c5b6f4-abcde": ("insufficient-gpu", "GPU201", "Deployment/trainer", 1800,
                                "FailedScheduling", {"Insufficient nvidia.com/gpu": 2,
                                "node(s) didn't match Pod's node affinity/selector": 4}),
    "nightly-28571520-x7k2p": ("pool-at-max-size", "GPU201", "Job/nightly-28571520", 7200,
                               "FailedScheduling", {"Insufficient nvidia.com/gpu": 2,
                               "node(s) didn't match Pod's node affinity/selector": 4}),
    "eval-0": ("node-selector-mismatch", "GPU101", "StatefulSet/eval", 600, "FailedScheduling",
               {"node(s) didn't match Pod's node affinity/selector": 6}),
    "notebook-0": ("untolerated-taint", "GPU102", "StatefulSet/notebook", 900,
                   "FailedScheduling", {"node(s) had untolerated taint {dedicated: gpu}": 2,
                   "Insufficient nvidia.com/gpu": 4}),
    "serve-5c8d7b6f9-q2w3e": ("anti-affinity", "GPU106", "Deployment/serve", 1200,
                              "FailedScheduling",
                              {"node(s) didn't match pod anti-affinity rules": 2,
                               "node(s) didn't match Pod's node affinity/selector": 4}),
    "bench-0": ("device-plugin-not-ready", "GPU503", None, 2400, "FailedScheduling",
                {"Insufficient nvidia.com/gpu": 1,
                 "node(s) didn't match Pod's node affinity/selector": 5}),
    "sweep-a-0": ("scheduling-gated", None, None, 3000, None, {}),
    "gang-0": ("no-events", None, None, 1500, None, {}),
    "odd-0": ("unclassified", None, None, 300, "FailedScheduling", {}),
    "web-6b8f9c7d5-": ("quota-exceeded", "GPU301", "ReplicaSet/web-6b8f9c7d5", 2100,
                       "FailedCreate", {}),
    "finetune-": ("unknown-priority-class", "GPU401", "Job/finetune", 720, "FailedCreate", {}),
    "infer-7f6d5c4b3-": ("limitrange-rejected", "GPU303", "ReplicaSet/infer-7f6d5c4b3", 480,
                         "FailedCreate", {}),
}  # fmt: skip


TODAY = str(DUMPS / "gpu-today.yaml")
TODAY_CAUSES = {
    "train-big": "kueue-inadmissible",
    "dra-train-0": "resource-claim-unallocatable",
    "dra-typo-0": "resource-claim-missing",
    "notebook-0": "untolerated-taint",
    "embed-": "unknown-runtime-class",
}


NEW_CAUSES = {
    "kueue-inadmissible",
    "resource-claim-unallocatable",
    "resource-claim-missing",
    "unknown-runtime-class",
}
# Pods that were scheduled and failed at their first CUDA call: tests/test_cuda_diagnose.py.
CRASHED_CAUSES = {"cuda-driver-mismatch"}


def test_every_documented_cause_has_a_fixture_pod() -> None:
    slugs = {expected[0] for expected in EXPECTED.values()} | set(TODAY_CAUSES.values())
    assert slugs | CRASHED_CAUSES == {c.slug for c in CAUSES}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_cause_rule_and_evidence(name: str) -> None:
    cause, rule, owner, pending, reason, node_reasons = EXPECTED[name]
    pod = stuck(STUCK, NODES)[name]
    assert (pod.cause.slug, pod.cause.rule, pod.owner, pod.pending_seconds) == (
        cause,
        rule,
        owner,
        pending,
    )
    first = pod.evidence[0]
    assert first.reason == reason
    assert {c.reason: c.count for c in first.node_reasons} == node_reasons
    assert pod.confirm.startswith("kubectl ")
    assert pod.fix


def test_only_stuck_gpu_pods_are_reported() -> None:
    # etl-0 is a CPU pod, train-running-0 runs, train-pulling-0 is bound, and the quota
    # refusals of ReplicaSet api-6d5c4b3a2 stopped with a SuccessfulCreate.
    assert list(stuck(STUCK, NODES)) == list(EXPECTED)


def test_without_the_nodes_dump_the_events_alone_decide() -> None:
    pods = stuck(STUCK)
    # Capacity without allocatable is visible only in the nodes: the events say "full".
    assert pods["bench-0"].cause.slug == "insufficient-gpu"
    # The misspelt name is no vendor's name, with or without the nodes.
    assert pods["typo-0"].cause.slug == "resource-not-advertised"
    assert "`nvidia.com/gpu`?" in pods["typo-0"].fix
    others = {n: p.cause.slug for n, p in pods.items() if n != "bench-0"}
    assert others == {n: e[0] for n, e in EXPECTED.items() if n != "bench-0"}


def test_details_reach_the_fix_and_confirm_command() -> None:
    pods = stuck(STUCK, NODES)
    assert pods["web-6b8f9c7d5-"].confirm == "kubectl describe resourcequota gpu-quota -n ml"
    assert "Create PriorityClass gpu-urgent" in pods["finetune-"].fix
    assert pods["infer-7f6d5c4b3-"].confirm == "kubectl get limitrange -n research -o yaml"
    assert "schedulerName volcano" in pods["gang-0"].explanation
    assert "kueue.x-k8s.io/admission" in pods["sweep-a-0"].fix
    assert pods["odd-0"].evidence[0].message.startswith('running PreBind plugin "VolumeBinding"')
    nightly = pods["nightly-28571520-x7k2p"]
    assert [e.reason for e in nightly.evidence] == ["FailedScheduling", "NotTriggerScaleUp"]
    assert nightly.evidence[1].node_reasons[0] == NodeCount(1, "max node group size reached")
    assert pods["bench-0"].evidence[1].message == "pool p4d: device plugin not ready on 1 node(s)"


# --- the untolerated-taint reason across releases ---------------------------------------------

TOLERATION = '- key: dedicated\n  operator: Equal\n  value: "gpu"\n  effect: NoSchedule'


@pytest.mark.parametrize("release", ["117", "123", "134", "135"])
def test_untolerated_taint_in_every_release_format(release: str) -> None:
    with_nodes = stuck(TAINTS, NODES)[f"taint-{release}-0"]
    assert (with_nodes.cause.slug, with_nodes.cause.rule) == ("untolerated-taint", "GPU102")
    # Releases that print no taint: the nodes dump names it.
    assert TOLERATION in with_nodes.fix
    assert "dedicated=gpu:NoSchedule" in with_nodes.explanation
    alone = stuck(TAINTS)[f"taint-{release}-0"]
    assert alone.cause.slug == "untolerated-taint"
    assert (TOLERATION in alone.fix) == (release in ("123", "134"))


# --- report ----------------------------------------------------------------------------------


def test_json_report_shape() -> None:
    result = run(STUCK, NODES, "--now", NOW, "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"version", "pods", "summary", "notes"}
    assert report["notes"] == []
    assert report["version"] == 1
    keys = {
        "namespace",
        "name",
        "owner",
        "cause",
        "rule",
        "pendingSeconds",
        "evidence",
        "confirm",
        "fix",
    }
    assert all(set(pod) == keys for pod in report["pods"])
    quota = next(p for p in report["pods"] if p["cause"] == "quota-exceeded")
    assert quota["evidence"] == [
        {
            "source": "event",
            "reason": "FailedCreate",
            "message": 'Error creating: pods "web-6b8f9c7d5-" is forbidden: exceeded quota: '
            "gpu-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=8, "
            "limited: requests.nvidia.com/gpu=8",
            "count": 18,
            "lastSeen": "2024-05-01T11:58:00Z",
            "nodes": None,
            "nodeReasons": {},
        }
    ]
    assert report["summary"] == {
        "stuck": 13,
        "byCause": {c.slug: 1 for c in CAUSES if c.slug not in NEW_CAUSES | CRASHED_CAUSES},
        "pendingSeconds": {"p50": 1500, "p95": 7200},
        # No pod of this dump records when it was scheduled.
        "timeToSchedule": {"count": 0, "p50": None, "p95": None},
        "timeToScheduleByPool": {},
        "now": NOW,
        "nowSource": "--now",
    }


def test_text_report_groups_by_cause_with_percentiles() -> None:
    result = run(STUCK, NODES, "--now", NOW)
    assert result.exit_code == 1, result.output
    assert "ml/notebook-0 (StatefulSet/notebook): untolerated-taint, pending 15m\n" in result.stdout
    assert "  caught before merge by GPU102 (gpulint check)\n" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("13 stuck GPU pods: resource-not-advertised 1")
    assert lines[0].endswith("; pending p50 25m, p95 2h")
    # The moment the pending times are measured to, and where it came from.
    assert lines[1] == f"as of {NOW} (--now)"
    assert lines[2] == ""
    assert lines[3] == "== resource-not-advertised: 1 pod =="


def test_pending_time_defaults_to_the_current_time_not_the_dumps_newest_timestamp() -> None:
    from datetime import datetime, timezone

    documents, profile, _ = read_dumps([STUCK])
    before = datetime.now(timezone.utc)
    diagnosis = diagnose(documents, profile)
    # The newest time in the dump (the NotTriggerScaleUp seen at 11:59:30) is the last thing
    # that happened, not when the dump was read: measured from it, a pod stuck since before
    # its last event would read "pending 0s".
    assert before <= diagnosis.now <= datetime.now(timezone.utc)
    assert diagnosis.now_source == "the current time"
    eval_0 = next(p for p in diagnosis.pods if p.name == "eval-0")
    assert eval_0.pending_seconds == int(
        (diagnosis.now - parse_time("2024-05-01T11:50:00Z")).total_seconds()
    )


def test_the_report_says_as_of_when_it_is(tmp_path: Path) -> None:
    text = run(STUCK, NODES).stdout.splitlines()
    assert re.fullmatch(r"as of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(the current time\)", text[1])
    summary = json.loads(run(STUCK, NODES, "--format", "json").stdout)["summary"]
    assert summary["nowSource"] == "the current time"
    assert summary["now"] > "2024-05-01T11:59:30Z"  # not the dump's newest timestamp
    assert run(STUCK, NODES, "--now", NOW).stdout.splitlines()[1] == f"as of {NOW} (--now)"
    # A dump that records when it was taken (`# collected:` first) is judged as of then.
    dump = tmp_path / "dump.yaml"
    dump.write_text("# collected: 2024-05-01T12:30:00Z\n" + Path(STUCK).read_text("utf-8"), "utf-8")
    text = run(str(dump), NODES).stdout
    assert text.splitlines()[1] == "as of 2024-05-01T12:30:00Z (the dump's collection time)"
    assert "ml/notebook-0 (StatefulSet/notebook): untolerated-taint, pending 45m\n" in text
    assert run(str(dump), NODES, "--now", NOW).stdout.splitlines()[1] == f"as of {NOW} (--now)"


def test_no_stuck_gpu_pod_exits_0(tmp_path: Path) -> None:
    dump = tmp_path / "calm.yaml"
    dump.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: "
        "{name: etl-0, namespace: ml}\n  spec: {containers: [{name: c, resources: {limits: "
        "{nvidia.com/gpu: 1}}}]}\n  status: {phase: Running}\n",
        encoding="utf-8",
    )
    result = run(str(dump), "-o", str(tmp_path / "report.txt"), "--now", NOW)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"gpulint: wrote the text report to {tmp_path / 'report.txt'}\n"
    assert (tmp_path / "report.txt").read_text(encoding="utf-8") == (
        "No Pending GPU pods.\nas of 2024-05-01T12:00:00Z (--now)\n\n"
        "not judged: no Events: causes come from the pods' PodScheduled conditions only, and "
        "pod creations refused by admission (quota, LimitRange, PriorityClass) are not seen\n"
        "not judged: no Nodes: a taint that 1.35+ does not print cannot be named, a device "
        "plugin that stopped serving is not seen, and time to schedule has no pools\n"
    )


@pytest.mark.parametrize(
    ("args", "content", "error"),
    [
        (["missing.yaml"], None, "missing.yaml: dump file not found"),
        (["dump.yaml"], "items: [\n", "dump.yaml:2:1: "),
        (["dump.yaml"], "just: a mapping\n", "dump.yaml: no Kubernetes objects in this file"),
        (
            ["dump.yaml"],
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
            "dump.yaml: no Pod, Event, Job or Workload objects; give the output of `kubectl get "
            "pods,events,replicasets,jobs,nodes,",
        ),
        (["dump.yaml", "--now", "yesterday"], "", "`yesterday` is not an RFC 3339 time"),
        ([], None, "give dump files (kubectl get pods,events,replicasets,jobs,nodes,"),
        (["dump.yaml", "--slow-threshold", "soon"], "", "`soon` is not a duration"),
        (["dump.yaml", "--context", "prod"], None, "--context needs --live"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch, args, content, error) -> None:
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / "dump.yaml").write_text(content, encoding="utf-8")
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and error in lines[0], result.stderr
    assert "Traceback" not in result.output


def test_docs_list_every_cause_with_its_rule() -> None:
    docs = (ROOT / "docs" / "diagnose.md").read_text(encoding="utf-8")
    table = docs[docs.index("| `cause` |") :].split("\n\n")[0].splitlines()[2:]
    rows = {cells[1].strip(" `"): cells[4].strip() for cells in (r.split("|") for r in table)}
    assert rows == {c.slug: c.rule or "—" for c in CAUSES}


def test_diagnosing_dumps_does_not_import_the_kubernetes_client() -> None:
    code = (
        "import sys\nfrom gpulint.cli import main\n"
        f"try:\n    main(['diagnose', {STUCK!r}])\nexcept SystemExit as exit:\n"
        "    assert exit.code == 1, exit.code\n"
        "print('kubernetes' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"


@pytest.mark.parametrize(
    "metadata",
    ["[oops]", "just-a-string", "{name: x, namespace: ml, ownerReferences: 5, labels: [a]}"],
)
def test_pending_pod_with_malformed_metadata_is_diagnosed(tmp_path: Path, metadata: str) -> None:
    dump = tmp_path / "hostile.yaml"
    dump.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n"
        f"  metadata: {metadata}\n  spec: {{containers: [{{name: c, resources: {{limits: "
        "{nvidia.com/gpu: 1}}}]}\n  status: {phase: Pending}\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata: {name: ok-0, namespace: ml}\n"
        "  spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"
        "  status: {phase: Pending}\n",
        encoding="utf-8",
    )
    result = run(str(dump), "--format", "json")
    assert result.exit_code == 1, result.output
    names = [(p["namespace"], p["name"], p["owner"]) for p in json.loads(result.stdout)["pods"]]
    # A pod without a name is no API object: only the named ones are diagnosed.
    expected = [("ml", "ok-0", None)]
    if "name: x" in metadata:
        expected.insert(0, ("ml", "x", None))
    assert names == expected


# --- Kueue, DRA, time to schedule, focus ----------------------------------------------------


def today(*args: str) -> dict[str, Any]:
    result = run(TODAY, "--now", NOW, "--format", "json", *args)
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def test_kueue_dra_and_taint_causes_of_todays_clusters() -> None:
    report = today()
    assert {p["name"]: p["cause"] for p in report["pods"]} == TODAY_CAUSES
    pods = {p["name"]: p for p in report["pods"]}
    kueue = pods["train-big"]
    assert (kueue["owner"], kueue["rule"], kueue["pendingSeconds"]) == (
        "Job/train-big",
        "GPU310",
        7199,  # since the Workload was created
    )
    assert kueue["evidence"][0]["message"].startswith(
        "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in "
        "flavor h100"
    )
    assert kueue["confirm"] == "kubectl get workloads -n ml; kubectl describe clusterqueue ml-gpus"
    assert "quota for nvidia.com/gpu in flavor h100" in kueue["fix"]
    dra = pods["dra-train-0"]
    assert dra["rule"] == "GPU704"
    assert [e["message"] for e in dra["evidence"][1:]] == [
        "claims: ResourceClaimTemplate ml/eight-gpus (gpus: 8 × gpu.nvidia.com)",
        "ResourceSlices offer per node: gpu.nvidia.com: h100-a 4",
    ]
    assert dra["evidence"][0]["nodeReasons"] == {
        "cannot allocate all claims": 1,
        "node(s) didn't match Pod's node affinity/selector": 1,
    }
    missing = pods["dra-typo-0"]
    assert "Create ResourceClaimTemplate one-gpu in namespace research" in missing["fix"]
    assert '- key: dedicated\n  operator: Equal\n  value: "gpu"' in pods["notebook-0"]["fix"]
    assert report["summary"]["timeToSchedule"] == {"count": 3, "p50": 120, "p95": 1200}
    assert report["summary"]["timeToScheduleByPool"] == {
        "a100": {"count": 3, "p50": 120, "p95": 1200}
    }


#: A second suspended GPU Job of the gpu-today cluster's queue, which no Workload owns.
OTHER_QUEUED_JOB = """\
apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: train-other
    namespace: ml
    creationTimestamp: '2024-05-01T11:00:00Z'
    labels: {kueue.x-k8s.io/queue-name: team-ml}
  spec:
    suspend: true
    template:
      spec:
        restartPolicy: Never
        containers:
        - {name: main, image: "train:1.0", resources: {limits: {nvidia.com/gpu: 8}}}
"""


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            WorkloadSource.DUMP,
            "suspended in LocalQueue team-ml; no Workload of the dump belongs to it: Kueue has "
            "made none (is its controller running, with the integration for Job enabled?)",
        ),
        (
            WorkloadSource.LIVE,
            "suspended in LocalQueue team-ml; the cluster has no Workload for it: Kueue has made "
            "none (is its controller running, with the integration for Job enabled?)",
        ),
        (
            WorkloadSource.LIVE_DENIED,
            "suspended in LocalQueue team-ml; its Workload, which says why, could not be read: "
            "gpulint may not list workloads.kueue.x-k8s.io (see the note)",
        ),
    ],
)
def test_a_queued_job_no_workload_explains_is_said_to_lack_one_where_it_was_looked_for(
    tmp_path: Path, source: WorkloadSource, message: str
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(OTHER_QUEUED_JOB, encoding="utf-8")
    documents, profile, _ = read_dumps([TODAY, str(other)])
    found = diagnose(documents, profile, parse_time(NOW), workloads=source).pods
    (job,) = [p for p in found if p.name == "train-other"]
    assert (job.cause.slug, job.evidence[0].message) == ("kueue-inadmissible", message)
    # The Job whose Workload was read keeps that Workload's condition.
    (big,) = [p for p in found if p.name == "train-big"]
    assert big.evidence[0].message.startswith("couldn't assign flavors to pod set main")


def test_focus_on_a_namespace_and_a_name() -> None:
    ml = today("--namespace", "ml")
    assert {p["namespace"] for p in ml["pods"]} == {"ml"}
    assert [p["name"] for p in ml["pods"]] == ["dra-train-0", "train-big"]
    assert ml["summary"]["timeToSchedule"] == {"count": 2, "p50": 5, "p95": 120}
    named = today("-n", "ml", "-n", "research", "train*")
    assert [p["name"] for p in named["pods"]] == ["train-big"]
    assert today("notebook")["summary"]["byCause"] == {"untolerated-taint": 1}


def test_slow_pods_are_listed_above_the_threshold() -> None:
    report = today("--slow-threshold", "1m")
    assert report["slowToSchedule"] == {
        "thresholdSeconds": 60,
        "pods": [
            {"namespace": "research", "name": "eval-0", "pool": "a100", "seconds": 1200},
            {"namespace": "ml", "name": "serve-1", "pool": "a100", "seconds": 120},
        ],
    }
    text = run(TODAY, "--now", NOW, "--slow-threshold", "5m").stdout
    assert "Scheduled after more than 5m: 1\n  research/eval-0 (pool a100): 20m\n" in text
    assert text.splitlines()[0].startswith("5 stuck GPU pods: ")


# Kueue reads the queue-name annotation where the label is absent.
@pytest.mark.parametrize("field", ["labels", "annotations"])
def test_a_dump_without_events_or_nodes_says_what_it_could_not_judge(
    tmp_path: Path, field: str
) -> None:
    jobs_only = tmp_path / "jobs.yaml"
    jobs_only.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ml\n"
        f"  {field}: {{kueue.x-k8s.io/queue-name: q}}\nspec:\n  suspend: true\n  template:\n"
        "    spec:\n      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n",
        encoding="utf-8",
    )
    result = run(str(jobs_only), "--format", "json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert [(p["name"], p["cause"]) for p in report["pods"]] == [("j", "kueue-inadmissible")]
    assert [n.split(":")[0] for n in report["notes"]] == ["no Events", "no Nodes", "no Workloads"]


def test_the_dra_objects_of_an_imported_profile_count_as_those_of_the_dump(tmp_path: Path) -> None:
    # The dump less its DRA objects, and a ClusterProfile that `profile import` wrote of them:
    # the same report as the whole dump.
    items = json.loads(json.dumps(parse(Path(TODAY).read_text("utf-8")).documents[0].value))
    items = items["items"]
    dra = [i for i in items if i["apiVersion"].startswith("resource.k8s.io/")]
    assert {i["kind"] for i in dra} == {"ResourceClaimTemplate", "ResourceSlice"}
    others = [i for i in items if i not in dra]
    rest, objects = tmp_path / "rest.json", tmp_path / "dra.json"
    rest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": others}))
    objects.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": dra}))
    profile = tmp_path / "profile.yaml"
    written = CliRunner().invoke(main, ["profile", "import", str(objects), "-o", str(profile)])
    assert written.exit_code == 0, written.output
    assert "  resourceSlices:\n" in profile.read_text("utf-8")
    split = run(str(rest), "--profile", str(profile), "--now", NOW, "--format", "json")
    assert json.loads(split.stdout) == today()


# --- a dump read with an IaC description of the same cluster --------------------------------

TAINTED_DUMP = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-node-1
    labels: {eks.amazonaws.com/nodegroup: gpu, node.kubernetes.io/instance-type: g5.12xlarge}
  spec:
    taints: [{key: TAINT_KEY, value: TAINT_VALUE, effect: NoSchedule}]
  status:
    allocatable: {cpu: "47", memory: 180Gi, pods: "110", nvidia.com/gpu: "4"}
- apiVersion: v1
  kind: Pod
  metadata: {name: trainer-0, namespace: ml, creationTimestamp: '2024-05-01T11:30:00Z'}
  spec:
    containers:
    - {name: main, image: 'trainer:1.0', resources: {limits: {nvidia.com/gpu: '1'}}}
  status: {phase: Pending}
- apiVersion: v1
  kind: Event
  metadata: {name: trainer-0.1, namespace: ml}
  involvedObject: {apiVersion: v1, kind: Pod, name: trainer-0, namespace: ml}
  reason: FailedScheduling
  message: "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 \\
    nodes are available: 1 Preemption is not helpful for scheduling."
  type: Warning
  firstTimestamp: '2024-05-01T11:30:00Z'
  lastTimestamp: '2024-05-01T11:59:00Z'
"""

#: What Terraform (or eksctl) describes of the same pool: an older taint, and its maxima.
DESCRIBED_POOL = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
metadata: {name: prod}
spec:
  provider: eks
  pools:
  - name: gpu
    labels: {eks.amazonaws.com/nodegroup: gpu}
    taints: [{key: dedicated, value: ml, effect: NoSchedule}]
    instanceType: g5.12xlarge
    minNodes: 1
    maxNodes: 4
"""


def why_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    return next(line for line in result.stdout.splitlines() if line.startswith("  why:"))


def test_the_dumps_node_taints_win_over_an_iac_description(tmp_path: Path) -> None:
    # 1.35+ names no taint: the diagnosis names the one the dump's Node carries, not the one
    # the description says the pool was created with.
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        TAINTED_DUMP.replace("TAINT_KEY", "workload").replace("TAINT_VALUE", "training")
    )
    (tmp_path / "iac.yaml").write_text(DESCRIBED_POOL)
    result = run(str(dump), "--profile", str(tmp_path / "iac.yaml"), "--now", NOW)
    assert why_line(result) == (
        "  why:     the GPU nodes carry workload=training:NoSchedule, which the pod does not "
        "tolerate: 1 node(s) had untolerated taint(s)"
    )
    # What only the description knows still counts: the pool can grow to 4 nodes.
    _, profile, _ = read_dumps([str(dump)], [str(tmp_path / "iac.yaml")])
    assert profile is not None
    [pool] = profile.pools
    assert (pool.max_nodes, [str(t) for t in pool.taints]) == (4, ["workload=training:NoSchedule"])


def test_an_unnamed_taint_the_platform_tolerates_is_told_without_a_name(tmp_path: Path) -> None:
    # EKS adds the nvidia.com/gpu toleration, so the node's GPU taint is not the one counted;
    # the 1.35+ message names none: the verdict says a taint, and names none.
    dump = tmp_path / "dump.yaml"
    dump.write_text(
        TAINTED_DUMP.replace("TAINT_KEY", "nvidia.com/gpu").replace("TAINT_VALUE", "present")
    )
    assert why_line(run(str(dump), "--now", NOW)) == (
        "  why:     nodes carry a taint the pod does not tolerate: 1 node(s) had untolerated "
        "taint(s)"
    )


# --- a pool at its maximum size --------------------------------------------------------------

AT_MAX = str(DUMPS / "pool-at-max.yaml")
AT_MAX_WHY = (
    "the nodes that may run the pod have no free nvidia.com/gpu: 2 Insufficient "
    "nvidia.com/gpu, and the autoscaler will not add a node: pod didn't trigger scale-up: 1 "
    "max node group size reached, 1 node(s) didn't match Pod's node affinity/selector; pool "
    "gpu-h100 is at its maximum size: 2/2 nodes, 16/16 nvidia.com/gpu in use, held by "
    "PyTorchJob/research/pretrain-70b 16 (2 pods)"
)


def test_a_pool_at_max_size_is_named_with_its_use_and_who_holds_it() -> None:
    documents, profile, _ = read_dumps([AT_MAX])
    pods = diagnose(documents, profile, parse_time(NOW)).pods
    assert [(p.name, p.cause.slug, p.explanation) for p in pods] == [
        ("finetune-13b-master-0", "pool-at-max-size", AT_MAX_WHY),
        ("finetune-13b-worker-0", "pool-at-max-size", AT_MAX_WHY),
        ("finetune-13b-worker-1", "pool-at-max-size", AT_MAX_WHY),
    ]
    assert pods[0].fix == (
        "Raise the maximum size of gpu-h100 (the node group's, or the NodePool's limits) and "
        "the cloud account's instance quota, or lower the number of GPU pods running at once."
    )


def test_the_members_of_a_gang_stuck_alike_are_one_block() -> None:
    result = run(AT_MAX, "--now", NOW)
    assert result.exit_code == 1, result.output
    assert result.stdout.split("\n\n")[1:3] == [
        "== pool-at-max-size: 3 pods ==",
        "research/finetune-13b-master-0, finetune-13b-worker-0, finetune-13b-worker-1 "
        "(PyTorchJob/finetune-13b, 3 pods): pool-at-max-size, pending 2h\n"
        f"  why:     {AT_MAX_WHY}\n"
        "  seen:    FailedScheduling x24, last 2024-05-01T11:58:00Z: 0/3 nodes are available: 1 "
        "node(s) didn't match Pod's node affinity/selector, 2 Insufficient nvidia.com/gpu. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
        "preemption victims found for incoming pod.\n"
        "  seen:    NotTriggerScaleUp x72, last 2024-05-01T11:59:00Z: pod didn't trigger "
        "scale-up: 1 max node group size reached, 1 node(s) didn't match Pod's node "
        "affinity/selector\n"
        "  confirm: kubectl get events -n research --field-selector "
        "involvedObject.name=finetune-13b-master-0,reason=NotTriggerScaleUp; kubectl -n "
        "kube-system get configmap cluster-autoscaler-status -o yaml\n"
        "  fix:     Raise the maximum size of gpu-h100 (the node group's, or the NodePool's "
        "limits) and the cloud account's instance quota, or lower the number of GPU pods "
        "running at once.\n"
        "  caught before merge by GPU201 (gpulint check)\n",
    ]
    # The JSON report still lists every pod.
    report = json.loads(run(AT_MAX, "--format", "json").stdout)
    assert [p["name"] for p in report["pods"]] == [
        "finetune-13b-master-0",
        "finetune-13b-worker-0",
        "finetune-13b-worker-1",
    ]


def test_a_pod_of_a_gang_stuck_otherwise_keeps_its_own_block(tmp_path: Path) -> None:
    import yaml

    dump = yaml.safe_load(Path(AT_MAX).read_text(encoding="utf-8"))
    # The autoscaler did scale up for worker-1: it waits for that node, not for a bigger pool.
    (event,) = [
        item
        for item in dump["items"]
        if item["metadata"]["name"] == "finetune-13b-worker-1.17c0000000000022"
    ]
    event.update(reason="TriggeredScaleUp", message="pod triggered scale-up: [{gpu-h100 2->3}]")
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump), encoding="utf-8")
    heads = [
        line
        for line in run(str(path), "--now", NOW).stdout.splitlines()
        if line.startswith("research/")
    ]
    assert heads == [
        "research/finetune-13b-master-0, finetune-13b-worker-0 (PyTorchJob/finetune-13b, 2 "
        "pods): pool-at-max-size, pending 2h",
        "research/finetune-13b-worker-1 (PyTorchJob/finetune-13b): insufficient-gpu, pending 2h",
    ]
