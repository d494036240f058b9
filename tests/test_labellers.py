"""A pod that selects the labels of an in-cluster labeller (GPU Feature Discovery, NFD): an
error when the profile knows whether the labeller labels the pools' nodes, a warning naming
the assumption when it cannot (a profile built from infrastructure code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: trainer}}
spec:
  nodeSelector:
    {label}: "true"
  tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:25.01-py3
    resources:
      limits: {{cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}}
"""

EKSCTL = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: ml, region: us-east-1}
managedNodeGroups:
- name: g5
  instanceType: g5.2xlarge
  desiredCapacity: 1
"""

PROFILE = """\
apiVersion: gpulint.io/v1alpha1
kind: ClusterProfile
metadata: {{name: ml}}
spec:
  pools:
  - name: g5
    labels: {{node.kubernetes.io/instance-type: g5.2xlarge}}
    allocatable: {{cpu: "7", memory: 28Gi, nvidia.com/gpu: 1}}
    nodes: 1
{more}"""

NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-10-0-1-5
    labels: {node.kubernetes.io/instance-type: g5.2xlarge, kubernetes.io/os: linux}
  status:
    allocatable: {cpu: "7", memory: 28Gi, pods: "58", nvidia.com/gpu: "1"}
    conditions: [{type: Ready, status: "True"}]
"""

GFD = "nvidia.com/gpu.present"


def check(tmp_path: Path, label: str, profile: str) -> list[tuple[str, str, int, int, str]]:
    (tmp_path / "pod.yaml").write_text(POD.format(label=label), encoding="utf-8")
    (tmp_path / "profile.yaml").write_text(profile, encoding="utf-8")
    args = ["check", "--isolated", "--format", "json", "--select", "GPU1"]
    args += ["--profile", str(tmp_path / "profile.yaml"), str(tmp_path / "pod.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return [
        (f["code"], f["severity"], f["line"], f["column"], f["message"])
        for f in json.loads(result.stdout)["findings"]
    ]


def test_an_eksctl_group_may_carry_gpu_feature_discovery_labels(tmp_path: Path) -> None:
    [(code, severity, line, column, message)] = check(tmp_path, GFD, EKSCTL)
    assert (code, severity, line, column) == ("GPU101", "warning", 6, 5)
    assert message == (
        "no node pool can run this pod (requests 1 nvidia.com/gpu): g5: nodeSelector "
        "nvidia.com/gpu.present=true (pool lacks the label); assumes GPU Feature Discovery "
        "(the GPU Operator, or the NVIDIA device plugin's chart with gfd.enabled) does not "
        "label the pools' nodes with nvidia.com/gpu.present, which the profile's pools do "
        "not say: a profile read from the nodes (a node dump, --live) makes this certain"
    )


def test_node_feature_discovery_is_named_for_its_labels(tmp_path: Path) -> None:
    [(code, severity, *_, message)] = check(
        tmp_path, "feature.node.kubernetes.io/pci-10de.present", EKSCTL
    )
    assert (code, severity) == ("GPU101", "warning")
    assert "; assumes Node Feature Discovery does not label the pools' nodes" in message


def test_skypilots_gpu_labeler_is_named_for_its_label(tmp_path: Path) -> None:
    # SkyPilot's docs have EKS GPU nodes labelled `skypilot.co/accelerator: <gpu>` by its
    # labeler once they run; the eksctl config that makes the group cannot say so.
    [(code, severity, *_, message)] = check(tmp_path, "skypilot.co/accelerator", EKSCTL)
    assert (code, severity) == ("GPU101", "warning")
    assert message.endswith(
        "; assumes SkyPilot's GPU labeler (`sky gpus label`) does not label the pools' nodes "
        "with skypilot.co/accelerator, which the profile's pools do not say: a profile read "
        "from the nodes (a node dump, --live) makes this certain"
    )


@pytest.mark.parametrize(
    "profile",
    [
        # Another pool carries the labeller's labels: the profile knows where it runs.
        PROFILE.format(
            more="  - name: a100\n"
            "    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
            '    allocatable: {cpu: "95", memory: 1100Gi, nvidia.com/gpu: 8}\n'
            "    nodes: 0\n"
        ),
        # The labels were read from the nodes.
        PROFILE.format(more="    labelsObserved: true\n"),
        NODES,
    ],
    ids=["labeller-known", "labels-observed", "node-dump"],
)
def test_a_profile_that_knows_the_labels_makes_it_an_error(tmp_path: Path, profile: str) -> None:
    [(code, severity, line, column, message)] = check(tmp_path, GFD, profile)
    assert (code, severity, line, column) == ("GPU101", "error", 6, 5)
    assert message.startswith("no node pool can run this pod (requests 1 nvidia.com/gpu): ")
    assert "nodeSelector nvidia.com/gpu.present=true (pool lacks the label)" in message
    assert "assumes" not in message


def test_a_label_no_labeller_sets_stays_an_error(tmp_path: Path) -> None:
    [(code, severity, *_)] = check(tmp_path, "team.example.com/gpu", EKSCTL)
    assert (code, severity) == ("GPU101", "error")


@pytest.mark.parametrize("label", ["nvidia.com/gpu", "amd.com/gpu"])
def test_a_device_plugin_resource_name_is_no_labellers_label(tmp_path: Path, label: str) -> None:
    # GFD and the AMD labeller write `nvidia.com/gpu.product`, `amd.com/gpu.family`, never the
    # resource name itself: a node has it only if someone labelled it, which the group says.
    [(code, severity, line, column, message)] = check(tmp_path, label, EKSCTL)
    assert (code, severity, line, column) == ("GPU101", "error", 6, 5)
    assert f"nodeSelector {label}=true (pool lacks the label)" in message
    assert "assumes" not in message


def test_a_hand_set_gpu_label_does_not_say_where_gpu_feature_discovery_runs(
    tmp_path: Path,
) -> None:
    # awsome-inference's setup labels its p5 nodes `nvidia.com/gpu=present` by hand and runs
    # GFD: a group given that label still says nothing of GFD's `nvidia.com/gpu.present`.
    labelled = EKSCTL + "  labels: {nvidia.com/gpu: present}\n"
    [(code, severity, line, column, message)] = check(tmp_path, GFD, labelled)
    assert (code, severity, line, column) == ("GPU101", "warning", 6, 5)
    assert message.endswith(
        "; assumes GPU Feature Discovery (the GPU Operator, or the NVIDIA device plugin's "
        "chart with gfd.enabled) does not label the pools' nodes with nvidia.com/gpu.present, "
        "which the profile's pools do not say: a profile read from the nodes (a node dump, "
        "--live) makes this certain"
    )
