"""The platform of a cluster: declared or recognised, its admission facts with their sources,
and the verdicts that depend on them (warnings while unknown, errors once known)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.profile import load_profiles
from gpulint.profile.dump import dump_profile
from gpulint.profile.show import show_profile

NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-1
    labels: {{{labels}}}
  spec:
    providerID: {provider_id}
    taints: [{{key: nvidia.com/gpu, value: present, effect: NoSchedule}}]
  status:
    capacity: {{cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "1"}}
    allocatable: {{cpu: "15", memory: 60Gi, pods: "110", nvidia.com/gpu: "1"}}
    conditions: [{{type: Ready, status: "True"}}]
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: ml}
spec:
  containers:
  - name: server
    image: vllm/vllm-openai:v0.8.5
    resources:
      limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
"""


def _nodes(tmp_path: Path, labels: str = "", provider_id: str = '""') -> Path:
    path = tmp_path / "nodes.yaml"
    path.write_text(NODES.format(labels=labels, provider_id=provider_id))
    return path


def _check(tmp_path: Path, *profiles: Path) -> list[tuple[str, str]]:
    (tmp_path / "pod.yaml").write_text(POD)
    args = ["check", "--isolated", "--format", "json", str(tmp_path / "pod.yaml")]
    for profile in profiles:
        args += ["--profile", str(profile)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return [(f["code"], f["severity"]) for f in json.loads(result.stdout)["findings"]]


@pytest.mark.parametrize(
    ("labels", "provider_id", "platform", "evidence"),
    [
        ("", "ocid1.instance.oc1.iad.anuwcl", "oke", "node spec.providerID ocid1.instance.*"),
        ("oci.oraclecloud.com/fault-domain: FAULT-DOMAIN-1", '""', "oke", "oci.oraclecloud.com/*"),
        ("node.openshift.io/os_id: rhcos", '""', "openshift", "node.openshift.io/*"),
        ("karpenter.k8s.aws/instance-gpu-name: l4", '""', "eks", "karpenter.k8s.aws/*"),
    ],
)
def test_the_platform_is_recognised_from_nodes(
    tmp_path: Path, labels: str, provider_id: str, platform: str, evidence: str
) -> None:
    profile = load_profiles([str(_nodes(tmp_path, labels, provider_id))])
    assert profile.provider == platform
    assert profile.provider_source is not None and evidence in profile.provider_source


def test_oke_tolerates_the_gpu_taint_for_gpu_pods_and_says_why(tmp_path: Path) -> None:
    # OKE runs ExtendedResourceToleration: no GPU102 on a pod that writes no toleration.
    nodes = _nodes(tmp_path, provider_id="ocid1.instance.oc1.iad.anuwcl")
    assert _check(tmp_path, nodes) == []
    shown = show_profile(load_profiles([str(nodes)]))
    assert "platform oke, inferred from node spec.providerID ocid1.instance.* in" in shown
    assert (
        "ExtendedResourceToleration: on (OKE 'Supported Admission Controllers' (docs.oracle.com/"
        "en-us/iaas/Content/ContEng/Reference/contengadmissioncontrollers.htm): on in every "
        "listed version; set spec.admission.extendedResourceToleration to override)"
    ) in shown.splitlines()
    assert "Autopilot GPU rules: off (GKE Warden's Autopilot constraints run only on Autopilot " \
        "clusters)" in shown.splitlines()  # fmt: skip


def test_an_unknown_platform_makes_the_gpu_taint_a_warning_and_a_declared_one_an_error(
    tmp_path: Path,
) -> None:
    # Nothing in these nodes names the platform: whether requesting nvidia.com/gpu tolerates the
    # taint is unknown, so GPU102 is a warning; declared kubeadm (no plugin), an error.
    nodes = _nodes(tmp_path)
    assert _check(tmp_path, nodes) == [("GPU102", "warning")]
    declared = tmp_path / "declared.yaml"
    declared.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nspec: {platform: kubeadm}\n"
    )
    assert _check(tmp_path, nodes, declared) == [("GPU102", "error")]


def test_platform_and_provider_that_disagree_are_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\n"
        "spec: {platform: oke, provider: eks}\n"
    )
    result = CliRunner().invoke(main, ["profile", "show", "--profile", str(path)])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"gpulint: error: {path}: spec.platform (oke) and spec.provider (eks) disagree; write "
        "only spec.platform"
    ]


def test_a_terraform_autopilot_cluster_is_gke_autopilot(tmp_path: Path) -> None:
    pytest.importorskip("tfparse")
    (tmp_path / "main.tf").write_text(
        'resource "google_container_cluster" "ml" {\n  name = "ml"\n'
        '  location = "us-central1"\n  enable_autopilot = true\n}\n'
    )
    profile = load_profiles([str(tmp_path)])
    assert profile.provider == "gke-autopilot"
    assert profile.admission_fact("Autopilot GPU rules").state is True
    assert profile.admission_fact("Autopilot resource mutator").state is True


CONSTRAINT = """\
apiVersion: v1
kind: List
items:
- apiVersion: constraints.gatekeeper.sh/v1beta1
  kind: K8sContainerLimits
  metadata: {name: container-must-have-limits}
  spec:
    enforcementAction: %s
    parameters: {cpu: "16", memory: 64Gi}
"""


def test_an_enforced_gatekeeper_constraint_of_the_profile_refuses_a_gpu_only_pod(
    tmp_path: Path,
) -> None:
    enforced = tmp_path / "enforced.yaml"
    enforced.write_text(CONSTRAINT % "deny")
    (policy,) = load_profiles([str(enforced)]).resource_policies
    assert (policy.label, policy.limits) == (
        "Gatekeeper K8sContainerLimits/container-must-have-limits",
        ("cpu", "memory"),
    )
    (tmp_path / "pod.yaml").write_text(POD.replace('cpu: "4", memory: 16Gi, ', ""))
    args = [
        "check",
        "--isolated",
        "--select",
        "GPU3",
        "--format",
        "json",
        str(tmp_path / "pod.yaml"),
    ]
    result = CliRunner().invoke(main, [*args, "--profile", str(enforced)])
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("GPU306", 8, 5)
    assert finding["message"] == (
        "after admission: the Gatekeeper K8sContainerLimits/container-must-have-limits policy "
        "refuses the pod: containers[0] (server) sets no cpu limit and no memory limit, and no "
        "LimitRange of the namespace gives it one"
    )
    dry_run = tmp_path / "dryrun.yaml"
    dry_run.write_text(CONSTRAINT % "dryrun")
    result = CliRunner().invoke(main, [*args, "--profile", str(dry_run)])
    assert json.loads(result.stdout)["findings"] == []


def _check_with_config(tmp_path: Path, config: str, *profiles: Path) -> list[dict[str, object]]:
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / ".gpulint.yaml").write_text(config)
    args = ["check", "--config", str(tmp_path / ".gpulint.yaml"), "--format", "json"]
    for profile in profiles:
        args += ["--profile", str(profile)]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "pod.yaml")])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # Declared in the config as in the profile: kubeadm runs no ExtendedResourceToleration.
        ("platform: kubeadm\n", [("GPU102", "error")]),
        # OKE runs it: the pod that requests nvidia.com/gpu tolerates the GPU taint.
        ("platform: oke\n", []),
        # The per-fact override, whatever the platform.
        ("admission: {extendedResourceToleration: false}\n", [("GPU102", "error")]),
        ("admission: {extendedResourceToleration: true}\n", []),
        # A config without either leaves the fact unknown: a warning.
        ("fail-on: error\n", [("GPU102", "warning")]),
    ],
)
def test_the_config_declares_the_platform_and_admission_facts(
    tmp_path: Path, config: str, expected: list[tuple[str, str]]
) -> None:
    found = _check_with_config(tmp_path, config, _nodes(tmp_path))
    assert [(f["code"], f["severity"]) for f in found] == expected


def test_the_config_platform_replaces_the_profile_s(tmp_path: Path) -> None:
    # The profile says OKE (which tolerates the taint); the repository's config says kubeadm.
    nodes = _nodes(tmp_path, provider_id="ocid1.instance.oc1.iad.anuwcl")
    found = _check_with_config(tmp_path, "platform: kubeadm\n", nodes)
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in found] == [
        ("GPU102", "error", 4, 1)
    ]
    assert found[0]["message"].endswith(
        "(this cluster does not run the ExtendedResourceToleration admission plugin, so "
        "requesting `nvidia.com/gpu` adds no toleration for it)"
    )


def test_a_bad_config_platform_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / ".gpulint.yaml").write_text("platform: openstack\n")
    result = CliRunner().invoke(
        main, ["check", "--config", str(tmp_path / ".gpulint.yaml"), str(tmp_path / "pod.yaml")]
    )
    assert result.exit_code == 2
    assert len(result.output.splitlines()) == 1
    assert "platform" in result.output and "openstack" in result.output


SPOT_PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
spec:
  platform: kubeadm
  pools:
  - name: spot-gpu
    labels: {instance-type: spot}
    taints: [{key: spot-taint, value: "true", effect: NoSchedule}]
    allocatable: {cpu: "31", memory: 120Gi, pods: 110, nvidia.com/gpu: 4}
    nodes: 2
"""
KUEUE_SETUP = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {instance-type: spot}
  tolerations: [{key: spot-taint, operator: Exists, effect: NoSchedule}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: spot
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: ml, name: user-queue}
spec: {clusterQueue: cluster-queue}
"""
QUEUED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
        resources:
          limits: {cpu: "2", memory: 8Gi, nvidia.com/gpu: 1}
"""


@pytest.mark.parametrize("same_file", [True, False])
def test_kueue_objects_among_the_checked_manifests_give_the_pods_their_flavor(
    tmp_path: Path, same_file: bool
) -> None:
    # The flavor's toleration and nodeLabels reach the Job's pods whether the queue objects
    # sit in the Job's file or another input of the run.
    profile = tmp_path / "profile.yaml"
    profile.write_text(SPOT_PROFILE)
    inputs = tmp_path / "k8s"
    inputs.mkdir()
    if same_file:
        (inputs / "job.yaml").write_text(f"{KUEUE_SETUP}---\n{QUEUED_JOB}")
    else:
        (inputs / "kueue.yaml").write_text(KUEUE_SETUP)
        (inputs / "job.yaml").write_text(QUEUED_JOB)
    args = ["check", "--isolated", "--format", "json", "--profile", str(profile), str(inputs)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["findings"] == []


def test_without_the_flavor_the_queued_pod_does_not_tolerate_the_spot_taint(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(SPOT_PROFILE)
    (tmp_path / "job.yaml").write_text(QUEUED_JOB)
    args = ["check", "--isolated", "--format", "json", "--profile", str(profile)]
    result = CliRunner().invoke(main, [*args, str(tmp_path / "job.yaml")])
    assert result.exit_code == 1, result.output
    found = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["severity"], f["line"], f["column"]) for f in found] == [
        ("GPU102", "error", 9, 5)
    ]
    assert "spot-taint=true:NoSchedule" in found[0]["message"]


NAMESPACED = """\
apiVersion: v1
kind: Namespace
metadata:
  name: ml
  annotations:
    scheduler.alpha.kubernetes.io/defaultTolerations: '[{"key": "dedicated", "operator": "Exists"}]'
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
"""
DEDICATED_PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
spec:
  platform: kubeadm
{admission}  pools:
  - name: a100
    taints: [{{key: dedicated, value: training, effect: NoSchedule}}]
    allocatable: {{cpu: "95", memory: 680Gi, pods: 110, nvidia.com/gpu: 8}}
    nodes: 1
"""


@pytest.mark.parametrize(
    ("profile_admission", "config", "expected"),
    [
        # kubeadm leaves PodTolerationRestriction off by default but may turn it on: unknown.
        ("", "fail-on: error\n", [("GPU102", "warning")]),
        # Declared in the profile, or in the repository's config (which wins).
        ("  admission: {podTolerationRestriction: true}\n", "fail-on: error\n", []),
        (
            "  admission: {podTolerationRestriction: false}\n",
            "fail-on: error\n",
            [("GPU102", "error")],
        ),
        (
            "  admission: {podTolerationRestriction: true}\n",
            "admission: {podTolerationRestriction: false}\n",
            [("GPU102", "error")],
        ),
    ],
)
def test_a_namespace_s_default_tolerations_count_where_the_plugin_runs(
    tmp_path: Path, profile_admission: str, config: str, expected: list[tuple[str, str]]
) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(DEDICATED_PROFILE.format(admission=profile_admission))
    (tmp_path / "pod.yaml").write_text(NAMESPACED)
    (tmp_path / ".gpulint.yaml").write_text(config)
    args = ["check", "--config", str(tmp_path / ".gpulint.yaml"), "--format", "json"]
    result = CliRunner().invoke(
        main, [*args, "--profile", str(profile), str(tmp_path / "pod.yaml")]
    )
    assert result.exit_code in (0, 1), result.output
    found = json.loads(result.stdout)["findings"]
    assert [(f["code"], f["severity"]) for f in found] == expected
    if expected == [("GPU102", "warning")]:
        assert found[0]["message"].endswith(
            "this assumes the API server does not run PodTolerationRestriction, which would add "
            "Namespace ml's default tolerations (`dedicated`, "
            "`scheduler.alpha.kubernetes.io/defaultTolerations`), and whether kubeadm runs it "
            "is unknown: write `spec.admission.podTolerationRestriction: true|false` in the "
            "profile to make it certain"
        )


def test_a_declared_pod_toleration_restriction_is_shown_and_dumped(tmp_path: Path) -> None:
    profile_path = tmp_path / "profile.yaml"
    admission = "  admission: {podTolerationRestriction: true}\n"
    profile_path.write_text(DEDICATED_PROFILE.format(admission=admission))
    profile = load_profiles([str(profile_path)])
    assert profile is not None
    shown = (
        "PodTolerationRestriction: on (declared in the profile (spec.admission."
        "podTolerationRestriction))"
    )
    assert shown in show_profile(profile).splitlines()
    dumped = dump_profile(profile)
    assert "    podTolerationRestriction: true" in dumped.splitlines()
    again = tmp_path / "again.yaml"
    again.write_text(dumped)
    reread = load_profiles([str(again)])
    assert reread is not None and reread.pod_toleration_restriction is True
