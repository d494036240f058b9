"""Terraform root modules as profile inputs (needs the optional tfparse)."""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.errors import GpulintError
from gpulint.profile import Taint, load_profiles
from gpulint.profile.model import LabelRequirement
from gpulint.profile.show import show_profile
from gpulint.profile.terraform import GKE_GPU_TAINT

pytest.importorskip("tfparse")

INFRA = Path(__file__).resolve().parent.parent / "fixtures" / "infra" / "terraform"
EKS, GKE, AKS, ASG = (str(INFRA / name) for name in ("eks", "gke", "aks", "asg"))


def shown(*parts: str) -> str:
    """A Terraform file as messages name it: relative to the working directory when inside."""
    path = os.path.join(*parts)
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def test_root_module_with_a_local_module_for_each_over_a_yaml_file() -> None:
    profile = load_profiles([EKS])
    pools = {p.name: p for p in profile.pools}
    assert sorted(pools) == ["a100-training", "l40s-inference", "nvidia-gpu", "system"]
    a100 = pools["a100-training"]
    assert (a100.nodes, a100.min_nodes, a100.max_nodes, a100.scale_from_zero) == (0, 0, 2, True)
    assert a100.taints == (Taint("workload", "training", "NoSchedule"),)  # NO_SCHEDULE
    assert a100.labels["eks.amazonaws.com/nodegroup"] == "a100-training"
    assert a100.labels["workload"] == "training"
    assert a100.allocatable["nvidia.com/gpu"] == 8
    assert a100.defined_at == f"{shown(EKS, 'modules', 'gpu-node-group', 'main.tf')}:12"
    l40s = pools["l40s-inference"]
    assert (l40s.instance_type, l40s.nodes, l40s.max_nodes) == ("g6e.12xlarge", 1, 3)
    # The terraform-aws-eks module's own node group map.
    gpu = pools["nvidia-gpu"]
    assert (gpu.instance_type, gpu.min_nodes, gpu.max_nodes) == ("g6.4xlarge", 0, 2)
    assert gpu.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert gpu.defined_at == f"{shown(EKS, 'main.tf')}:14"
    assert profile.provider == "eks"


def test_gke_pool_bounds_are_per_zone_and_gke_adds_its_gpu_taint() -> None:
    profile = load_profiles([GKE])
    pools = {p.name: p for p in profile.pools}
    l4, default = pools["l4-pool"], pools["default-pool"]
    assert (l4.name, l4.nodes, l4.min_nodes, l4.max_nodes) == ("l4-pool", 0, 0, 4)
    assert l4.allocatable["nvidia.com/gpu"] == Decimal(2)
    assert l4.labels["cloud.google.com/gke-accelerator"] == "nvidia-l4"
    assert l4.labels["cloud.google.com/gke-nodepool"] == "l4-pool"
    assert l4.label_requirements[0] == LabelRequirement(
        "topology.kubernetes.io/zone", "In", ("us-central1-a", "us-central1-b")
    )
    assert l4.taints == (
        Taint("dedicated", "ml", "NoSchedule"),
        Taint("nvidia.com/gpu", "present", "NoSchedule"),
    )
    assert (default.nodes, default.max_nodes, default.scale_from_zero) == (3, 3, False)
    assert profile.provider == "gke" and profile.extended_resource_toleration_enabled


def test_aks_spot_pool_gets_the_spot_taint_and_label() -> None:
    (pool,) = load_profiles([AKS]).pools
    assert (pool.name, pool.min_nodes, pool.max_nodes, pool.scale_from_zero) == ("gpu", 0, 3, True)
    assert pool.taints == (
        Taint("sku", "gpu", "NoSchedule"),
        Taint("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule"),
    )
    assert pool.labels["agentpool"] == "gpu"
    assert pool.allocatable["nvidia.com/gpu"] == 1
    # AKS labels the nodes of an NVIDIA VM size; Microsoft's device plugin DaemonSet selects it.
    assert pool.labels["kubernetes.azure.com/accelerator"] == "nvidia"


def test_an_aks_pool_of_a_cpu_vm_size_has_no_accelerator_label(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "azurerm_kubernetes_cluster_node_pool" "cpu" {\n'
        '  name    = "cpu"\n'
        '  vm_size = "Standard_D8s_v5"\n'
        "}\n"
    )
    (pool,) = load_profiles([str(tmp_path)]).pools
    assert "kubernetes.azure.com/accelerator" not in pool.labels


def test_a_gke_flex_start_pool_is_labelled_and_made_per_pod(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "google_container_node_pool" "h200" {\n'
        '  name    = "h200"\n'
        "  autoscaling {\n"
        "    total_min_node_count = 0\n"
        "    total_max_node_count = 4\n"
        "  }\n"
        "  node_config {\n"
        '    machine_type = "a3-ultragpu-8g"\n'
        "    flex_start   = true\n"
        "    guest_accelerator {\n"
        '      type  = "nvidia-h200-141gb"\n'
        "      count = 8\n"
        "    }\n"
        "  }\n"
        "}\n"
        'resource "google_container_node_pool" "l4" {\n'
        '  name = "l4"\n'
        "  node_config {\n"
        '    machine_type = "g2-standard-24"\n'
        "  }\n"
        "}\n"
    )
    pools = {p.name: p for p in load_profiles([str(tmp_path)]).pools}
    assert pools["h200"].labels["cloud.google.com/gke-flex-start"] == "true"
    assert pools["h200"].made_per_pod
    assert "cloud.google.com/gke-flex-start" not in pools["l4"].labels
    assert not pools["l4"].made_per_pod


GPU_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n"
    "  nodeSelector: {{{selector}}}\n"
    "  containers:\n  - name: c\n    image: c:1.0\n    resources:\n"
    "      limits: {{cpu: '1', memory: 1Gi, nvidia.com/gpu: 1}}\n"
)


def placement_findings(tmp_path: Path, selector: str) -> list[tuple[str, str]]:
    """(code, message) of the placement findings on a one-GPU pod selecting `selector`,
    against the module in `tmp_path`."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(GPU_POD.format(selector=selector))
    args = ["check", "--isolated", "--select", "GPU1", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--profile", str(tmp_path), str(pod)])
    return [(f["code"], f["message"]) for f in json.loads(result.stdout)["findings"]]


def test_a_label_whose_value_the_files_do_not_decide_takes_any_value(tmp_path: Path) -> None:
    # nvidia-terraform-modules gke/main.tf labels its pools `env = var.project_id`, a variable
    # without a default: the nodes carry `env`, with a value no file says (was `env=""`, and a
    # pod selecting its project's `env` had a false GPU101 "pool has ").
    (tmp_path / "main.tf").write_text(
        'variable "project_id" {}\n'
        'resource "google_container_node_pool" "gpu" {\n'
        '  name       = "gpu"\n  location   = "us-west1-b"\n  node_count = 1\n'
        "  node_config {\n"
        '    machine_type = "g2-standard-8"\n'
        '    labels = {\n      env = var.project_id\n      managed_by = "terraform"\n    }\n'
        '    guest_accelerator {\n      type  = "nvidia-l4"\n      count = 1\n    }\n'
        "  }\n}\n"
    )
    profile = load_profiles([str(tmp_path)])
    (pool,) = profile.pools
    assert "env" not in pool.labels and pool.labels["managed_by"] == "terraform"
    assert LabelRequirement("env", "Exists") in pool.label_requirements
    assert (
        f"{shown(str(tmp_path), 'main.tf')}:2 google_container_node_pool.gpu: the value of "
        "label `env` is not known from the files; taken as any value"
    ) in profile.assumptions
    assert placement_findings(tmp_path, "env: my-project") == []
    # A label the files decide still rules a pool out.
    (code, message), *_ = placement_findings(tmp_path, "managed_by: helm")
    assert code == "GPU101" and "nodeSelector managed_by=helm (pool has terraform)" in message


def test_gke_labels_its_spot_and_preemptible_nodes(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        "".join(
            f'resource "google_container_node_pool" "{name}" {{\n'
            f'  name = "{name}"\n  node_count = 1\n'
            f'  node_config {{\n    machine_type = "g2-standard-8"\n{line}  }}\n}}\n'
            for name, line in (
                ("spot", "    spot = true\n"),
                ("preemptible", "    preemptible = true\n"),
                ("standard", ""),
            )
        )
    )
    pools = {p.name: p for p in load_profiles([str(tmp_path)]).pools}
    assert pools["spot"].labels["cloud.google.com/gke-spot"] == "true"
    assert pools["preemptible"].labels["cloud.google.com/gke-preemptible"] == "true"
    assert not {"cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible"} & set(
        pools["standard"].labels
    )
    # GKE taints neither: a pod selecting Spot nodes fits (was GPU101 "lacks the label").
    assert placement_findings(tmp_path, 'cloud.google.com/gke-spot: "true"') == []


def test_a_gke_cluster_defines_its_inline_pools_and_its_default_pool(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "google_container_cluster" "zonal" {\n'
        '  name = "zonal"\n  location = "us-central1-a"\n  initial_node_count = 2\n'
        '  node_config {\n    machine_type = "g2-standard-8"\n  }\n}\n'
        'resource "google_container_cluster" "inline" {\n'
        '  name = "inline"\n  location = "us-central1"\n'
        '  node_locations = ["us-central1-a", "us-central1-c"]\n'
        '  node_pool {\n    name = "cpu"\n    node_count = 1\n'
        '    node_config {\n      machine_type = "e2-standard-8"\n    }\n  }\n}\n'
        'resource "google_container_cluster" "removed" {\n'
        '  name = "removed"\n  location = "us-central1"\n'
        "  remove_default_node_pool = true\n  initial_node_count = 1\n}\n"
        'resource "google_container_cluster" "autopilot" {\n'
        '  name = "autopilot"\n  location = "us-central1"\n  enable_autopilot = true\n}\n'
        'data "google_container_cluster" "read" {\n  name = "read"\n}\n'
    )
    profile = load_profiles([str(tmp_path)])
    pools = {p.name: p for p in profile.pools}
    assert sorted(pools) == ["cpu", "default-pool"]
    default, cpu = pools["default-pool"], pools["cpu"]
    # A zonal cluster's pool is in its one zone: no assumption about zones.
    assert (default.nodes, default.min_nodes, default.max_nodes) == (2, 2, 2)
    assert default.allocatable["nvidia.com/gpu"] == 1
    assert default.defined_at == f"{shown(str(tmp_path), 'main.tf')}:1"
    assert LabelRequirement("topology.kubernetes.io/zone", "In", ("us-central1-a",)) in (
        default.label_requirements
    )
    # The cluster's node_locations; a fixed pool's node_count is per zone.
    assert (cpu.nodes, cpu.min_nodes, cpu.max_nodes) == (2, 2, 2)
    assert cpu.defined_at == f"{shown(str(tmp_path), 'main.tf')}:13"
    assert profile.assumptions == ()


def test_an_aks_cluster_has_its_default_system_pool_and_user_pools(tmp_path: Path) -> None:
    # nvidia-terraform-modules aks/main.tf: the CPU pool is the cluster's default_node_pool.
    (tmp_path / "main.tf").write_text(
        'resource "azurerm_kubernetes_cluster" "aks" {\n  name = "aks"\n'
        '  default_node_pool {\n    name = "akscpu"\n    node_count = 2\n'
        '    vm_size = "Standard_D16_v5"\n    only_critical_addons_enabled = true\n  }\n}\n'
        'resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = "aksgpu1"\n'
        '  vm_size = "Standard_NC4as_T4_v3"\n  node_count = 1\n}\n'
        'resource "azurerm_kubernetes_cluster_node_pool" "sys" {\n  name = "sys2"\n'
        '  vm_size = "Standard_D4s_v5"\n  mode = "System"\n}\n'
        'data "azurerm_kubernetes_cluster" "read" {\n  name = "aks"\n}\n'
    )
    profile = load_profiles([str(tmp_path)])
    assert profile.provider == "aks"
    pools = {p.name: p for p in profile.pools}
    assert sorted(pools) == ["akscpu", "aksgpu1", "sys2"]
    cpu = pools["akscpu"]
    assert (cpu.nodes, cpu.instance_type) == (2, "Standard_D16_v5")
    assert cpu.defined_at == f"{shown(str(tmp_path), 'main.tf')}:3"
    assert cpu.labels["kubernetes.azure.com/mode"] == "system"
    assert cpu.taints == (Taint("CriticalAddonsOnly", "true", "NoSchedule"),)
    assert pools["aksgpu1"].labels["kubernetes.azure.com/mode"] == "user"
    assert pools["sys2"].labels["kubernetes.azure.com/mode"] == "system"
    # AKS labels every node with its pool's mode (was GPU101 "lacks the label").
    assert placement_findings(tmp_path, "kubernetes.azure.com/mode: user") == []


REGIONAL_L4 = (
    'resource "google_container_node_pool" "gpu" {{\n'
    '  name = "gpu"\n  location = "{location}"\n'
    "  autoscaling {{\n    min_node_count = 0\n    max_node_count = 2\n  }}\n"
    '  node_config {{\n    machine_type = "g2-standard-8"\n'
    '    guest_accelerator {{\n      type = "nvidia-l4"\n      count = 1\n    }}\n  }}\n}}\n'
)
FOUR_GPU_PODS = (
    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  replicas: 4\n"
    "  serviceName: s\n  selector: {matchLabels: {a: b}}\n  template:\n"
    "    metadata: {labels: {a: b}}\n    spec:\n      containers:\n      - name: c\n"
    "        image: c:1.0\n"
    "        resources: {limits: {cpu: '1', memory: 1Gi, nvidia.com/gpu: 1}}\n"
)


def capacity_findings(tmp_path: Path, *profiles: str) -> list[tuple[str, str, str]]:
    """(code, severity, message) of GPU201 on four one-GPU pods against `profiles`."""
    pods = tmp_path / "pods.yaml"
    pods.write_text(FOUR_GPU_PODS)
    args = ["check", "--isolated", "--select", "GPU201", "--format", "json"]
    args += [arg for profile in profiles for arg in ("--profile", profile)]
    result = CliRunner().invoke(main, [*args, str(pods)])
    return [(f["code"], f["severity"], f["message"]) for f in json.loads(result.stdout)["findings"]]


def test_a_pool_too_small_by_an_assumed_maximum_is_a_warning_naming_it(tmp_path: Path) -> None:
    # A regional pool without node_locations runs in the cluster's zones, which the files do
    # not say: its per-zone maximum of 2 is taken for one zone (was a GPU201 error).
    (tmp_path / "regional").mkdir()
    (tmp_path / "regional" / "main.tf").write_text(REGIONAL_L4.format(location="us-central1"))
    (pool,) = load_profiles([str(tmp_path / "regional")]).pools
    assumed = (
        f"{shown(str(tmp_path), 'regional', 'main.tf')}:1 google_container_node_pool.gpu: "
        "autoscaling bounds are per zone and node_locations is not set; taken as one zone"
    )
    assert (pool.max_nodes, pool.ceiling_assumed) == (2, assumed)
    ((code, severity, message),) = capacity_findings(tmp_path, str(tmp_path / "regional"))
    assert (code, severity) == ("GPU201", "warning")
    assert message.endswith(
        "2 nvidia.com/gpu worth of pods stay Pending; the pools' maximum is assumed: " + assumed
    )
    # A zonal pool's zone is known: the same shortfall is an error.
    (tmp_path / "zonal").mkdir()
    (tmp_path / "zonal" / "main.tf").write_text(REGIONAL_L4.format(location="us-central1-a"))
    (pool,) = load_profiles([str(tmp_path / "zonal")]).pools
    assert (pool.max_nodes, pool.ceiling_assumed) == (2, None)
    ((code, severity, _),) = capacity_findings(tmp_path, str(tmp_path / "zonal"))
    assert (code, severity) == ("GPU201", "error")
    # A profile that states the pool's maximum wins, and with it nothing is assumed.
    stated = tmp_path / "stated.yaml"
    stated.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nmetadata: {name: c}\n"
        "spec:\n  pools:\n  - name: gpu\n    maxNodes: 3\n"
    )
    (pool,) = load_profiles([str(tmp_path / "regional"), str(stated)]).pools
    assert (pool.max_nodes, pool.ceiling_assumed) == (3, None)
    ((code, severity, _),) = capacity_findings(tmp_path, str(tmp_path / "regional"), str(stated))
    assert (code, severity) == ("GPU201", "error")


def test_one_pod_per_node_on_an_assumed_maximum_is_a_warning_naming_it(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(REGIONAL_L4.format(location="us-central1"))
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        FOUR_GPU_PODS.replace(
            "      containers:\n",
            "      affinity:\n        podAntiAffinity:\n"
            "          requiredDuringSchedulingIgnoredDuringExecution:\n"
            "          - labelSelector: {matchLabels: {a: b}}\n"
            "            topologyKey: kubernetes.io/hostname\n"
            "      containers:\n",
        )
    )
    args = ["check", "--isolated", "--select", "GPU106", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--profile", str(tmp_path), str(pods)])
    ((code, severity, message),) = [
        (f["code"], f["severity"], f["message"]) for f in json.loads(result.stdout)["findings"]
    ]
    assert (code, severity) == ("GPU106", "warning")
    assert "2 stay Pending; the pools' maximum is assumed: " in message
    assert message.endswith("node_locations is not set; taken as one zone")


def test_an_eks_group_maximum_from_a_variable_without_a_default_is_assumed(
    tmp_path: Path,
) -> None:
    (tmp_path / "main.tf").write_text(
        'variable "max" {}\n'
        'resource "aws_eks_node_group" "gpu" {\n  node_group_name = "gpu"\n'
        '  instance_types = ["g5.xlarge"]\n'
        "  scaling_config {\n    min_size = 1\n    max_size = var.max\n    desired_size = 1\n"
        "  }\n}\n"
    )
    (pool,) = load_profiles([str(tmp_path)]).pools
    assert pool.ceiling_assumed == (
        f"{shown(str(tmp_path), 'main.tf')}:2 aws_eks_node_group.gpu: `max_size` is not known "
        "from the files; taken as 3"
    )
    ((code, severity, _),) = capacity_findings(tmp_path, str(tmp_path))
    assert (code, severity) == ("GPU201", "warning")


def test_auto_scaling_groups_are_pools_as_cluster_autoscaler_sees_them_at_zero() -> None:
    profile = load_profiles([ASG])
    pools = {p.name: p for p in profile.pools}
    assert sorted(pools) == ["gpu-a10g", "inferentia", "trainium"]
    # Through the module's dynamic "tag" blocks and its one launch template.
    a10g = pools["gpu-a10g"]
    assert (a10g.instance_type, a10g.min_nodes, a10g.max_nodes) == ("g5.xlarge", 0, 4)
    assert a10g.scale_from_zero and a10g.allocatable["nvidia.com/gpu"] == 1
    assert a10g.labels == {"node.kubernetes.io/instance-type": "g5.xlarge", "workload": "gpu"}
    assert a10g.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert a10g.template_missing == ()  # NVIDIA GPUs come from the instance type
    assert a10g.defined_at == f"{shown(ASG, 'modules', 'self-managed-node-group', 'main.tf')}:39"
    # Neuron devices only from resources tags.
    assert pools["inferentia"].template_missing == (
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
    )
    # Literal tag blocks and a launch template named by reference.
    trainium = pools["trainium"]
    assert (trainium.instance_type, trainium.template_missing) == ("trn1.32xlarge", ())
    assert trainium.labels["workload"] == "training"
    assert profile.provider is None  # no aws_eks_cluster in the module
    assert (
        f"{shown(ASG, 'main.tf')}:50 aws_autoscaling_group.trainium: the nodes' labels and "
        "taints are taken from its cluster-autoscaler node-template tags (kubelet flags in user "
        "data are not read)"
    ) in profile.assumptions


def test_an_asg_tags_list_and_a_zero_gpu_tag(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "aws_launch_configuration" "gpu" {\n  instance_type = "p4d.24xlarge"\n}\n'
        'resource "aws_autoscaling_group" "gpu" {\n'
        "  min_size = 0\n  max_size = 2\n"
        "  launch_configuration = aws_launch_configuration.gpu.name\n"
        "  tags = [\n"
        '    { key = "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu",'
        ' value = "0", propagate_at_launch = false },\n'
        '    { key = "k8s.io/cluster-autoscaler/node-template/taint/dedicated",'
        ' value = "ml:NoSchedule", propagate_at_launch = false },\n'
        "  ]\n}\n"
    )
    (pool,) = load_profiles([str(tmp_path)]).pools
    assert (pool.name, pool.instance_type) == ("gpu", "p4d.24xlarge")
    assert pool.taints == (Taint("dedicated", "ml", "NoSchedule"),)
    assert pool.template_missing == ("nvidia.com/gpu",)  # the tag overrides the instance type


def test_an_asg_without_a_known_instance_type_is_an_assumption(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'variable "template_id" {}\n'
        'resource "aws_autoscaling_group" "gpu" {\n  min_size = 0\n  max_size = 2\n'
        "  launch_template {\n    id = var.template_id\n  }\n}\n"
    )
    profile = load_profiles([str(tmp_path)])
    (pool,) = profile.pools
    assert (pool.instance_type, pool.allocatable) == (None, {})
    # What its nodes have is unknown, not nothing: its GPUs are not judged.
    assert pool.allocatable_unknown and pool.may_have("nvidia.com/gpu")
    assert (
        f"{shown(str(tmp_path), 'main.tf')}:2 aws_autoscaling_group.gpu: its instance type is "
        "not known from the files (no launch template or launch configuration of these files "
        "names one); its nodes' size is unknown"
    ) in profile.assumptions


def test_a_value_the_files_cannot_decide_is_shown_as_an_assumption(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'variable "max" {}\n'
        'resource "aws_eks_node_group" "gpu" {\n'
        '  node_group_name = "gpu"\n'
        '  instance_types  = ["g5.xlarge"]\n'
        "  scaling_config {\n    min_size = 0\n    max_size = var.max\n    desired_size = 0\n  }\n"
        "}\n"
    )
    profile = load_profiles([str(tmp_path)])
    (pool,) = profile.pools
    assert pool.max_nodes == 3
    text = show_profile(profile)
    assert (
        f"Assumed: {shown(str(tmp_path), 'main.tf')}:2 aws_eks_node_group.gpu: `max_size` is "
        "not known from the files; taken as 3\n"
    ) in text


def test_a_self_managed_group_scales_from_zero_without_its_untagged_labels(
    tmp_path: Path,
) -> None:
    (tmp_path / "main.tf").write_text(
        'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n'
        "  self_managed_node_groups = {\n    gpu = {\n"
        '      instance_type = "g5.xlarge"\n      min_size = 0\n      max_size = 2\n'
        '      labels = { gpu = "yes", team = "ml" }\n'
        "      autoscaling_group_tags = {\n"
        '        "k8s.io/cluster-autoscaler/node-template/label/gpu" = "yes"\n'
        "      }\n    }\n  }\n}\n"
    )
    (pool,) = load_profiles([str(tmp_path / "main.tf")]).pools
    # cluster-autoscaler sizes the zero-node template by the instance type; the tags tell it
    # `gpu` only, so a pod that requires `team` triggers no scale-up while the group is empty.
    assert (pool.nodes, pool.max_nodes, pool.scale_from_zero) == (0, 2, True)
    assert pool.template_missing_labels == ("team",)


def test_a_bad_effect_is_one_error_naming_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "aws_eks_node_group" "gpu" {\n  node_group_name = "gpu"\n'
        '  taint {\n    key = "k"\n    effect = "NOSCHEDULE"\n  }\n}\n'
    )
    with pytest.raises(GpulintError) as info:
        load_profiles([str(tmp_path / "main.tf")])
    assert str(info.value) == (
        f"{shown(str(tmp_path), 'main.tf')}:1: taint effect 'NOSCHEDULE' is not one of "
        "NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE (or NoSchedule, PreferNoSchedule, NoExecute)"
    )


def test_a_finding_on_a_terraform_pool_names_its_file_and_line(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"
        "  nodeSelector: {eks.amazonaws.com/nodegroup: a100-training}\n"
        "  containers:\n  - name: c\n    image: c:1.0\n    resources:\n"
        "      limits: {cpu: '1', memory: 1Gi, nvidia.com/gpu: 1}\n"
    )
    args = ["check", "--isolated", "--select", "GPU102", "--format", "json", "--profile", EKS]
    result = CliRunner().invoke(main, [*args, str(pod)])
    (finding,) = json.loads(result.stdout)["findings"]
    where = shown(EKS, "modules", "gpu-node-group", "main.tf")
    assert finding["message"].startswith(
        f"pod (requests 1 nvidia.com/gpu) fits pool a100-training ({where}:12) except for its "
        "taint workload=training:NoSchedule"
    )


def test_without_tfparse_a_terraform_profile_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "main.tf").write_text('resource "aws_eks_node_group" "g" {}\n')
    # Importing tfparse fails, as on an install without the extra.
    monkeypatch.setitem(sys.modules, "tfparse", None)
    result = CliRunner().invoke(main, ["profile", "show", "--profile", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"gpulint: error: {tmp_path}: reading Terraform needs the optional tfparse library: "
        "pip install 'gpulint[terraform]'\n"
    )


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('resource "aws_eks_cluster" "main" {\n  name = "ml-prod"\n}\n', "ml-prod"),
        (
            'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n  name = "ml-prod"\n}\n',
            "ml-prod",
        ),
        (
            'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n'
            '  version = "~> 20.0"\n  cluster_name = "ml-old"\n}\n',
            "ml-old",
        ),
        ('resource "google_container_cluster" "c" {\n  name = "gke-ml"\n}\n', "gke-ml"),
        ('resource "azurerm_kubernetes_cluster" "c" {\n  name = "aks-ml"\n}\n', "aks-ml"),
        # Only node pools: the cluster they join (GKE's may be a full resource path).
        (
            'resource "google_container_node_pool" "p" {\n  name = "l4"\n'
            '  cluster = "projects/p/locations/us-central1/clusters/gke-ml"\n}\n',
            "gke-ml",
        ),
        # Two clusters of different names, or a name the files cannot decide: none.
        (
            'resource "aws_eks_cluster" "a" {\n  name = "a"\n}\n'
            'resource "aws_eks_cluster" "b" {\n  name = "b"\n}\n',
            None,
        ),
        (
            'variable "name" {}\nresource "aws_eks_cluster" "a" {\n  name = var.name\n}\n',
            None,
        ),
    ],
)
def test_the_cluster_is_named_from_its_terraform(
    tmp_path: Path, text: str, name: str | None
) -> None:
    (tmp_path / "main.tf").write_text(text)
    profile = load_profiles([str(tmp_path)])
    assert profile.name == name
    assert show_profile(profile).splitlines()[0].startswith(f"Cluster {name or '(unnamed)'}:")


def test_the_fixture_modules_name_their_clusters() -> None:
    assert [load_profiles([path]).name for path in (EKS, GKE, AKS, ASG)] == [
        "ml-prod",
        "ml-prod",
        None,
        None,
    ]


def test_a_config_cluster_terraform_error_names_its_path_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra" / "main.tf").write_text('resource "aws_eks_node_group" "g" {}\n')
    (tmp_path / ".gpulint.yaml").write_text("clusters:\n  staging: [infra]\n")
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "tfparse", None)
    for args in (["check", "pod.yaml"], ["profile", "show"]):
        result = CliRunner().invoke(main, args)
        assert (result.exit_code, result.stderr) == (
            2,
            "gpulint: error: cluster staging: infra: reading Terraform needs the optional "
            "tfparse library: pip install 'gpulint[terraform]'\n",
        )


# --- the profile cache ------------------------------------------------------------------------


def _unevaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, evaluating a module fails the test: what follows reads the cache."""

    def evaluate(*args: object, **kwargs: object) -> None:
        raise AssertionError("the module was evaluated again")

    monkeypatch.setattr("gpulint.profile.terraform_tree.evaluate", evaluate)


def test_a_terraform_profile_is_read_from_the_cache_until_a_file_it_reads_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from gpulint.profile.cache import ProfileCache

    module = tmp_path / "eks"
    shutil.copytree(EKS, module)
    cache = ProfileCache(tmp_path / "cache")
    first = load_profiles([str(module)], cache=cache)
    entries = list((tmp_path / "cache" / "profiles").iterdir())
    assert len(entries) == 1
    with monkeypatch.context() as patched:
        _unevaluated(patched)
        assert load_profiles([str(module)], cache=cache) == first
    # The YAML file the root module yamldecode()s is part of the key, as the .tf files are.
    groups = module / "gpu-node-groups.yaml"
    groups.write_text(groups.read_text().replace("max_size: 2", "max_size: 6"))
    changed = {p.name: p.max_nodes for p in load_profiles([str(module)], cache=cache).pools}
    assert changed["a100-training"] == 6
    assert {p.name: p.max_nodes for p in first.pools}["a100-training"] == 2
    local = module / "modules" / "gpu-node-group" / "main.tf"
    local.write_text(local.read_text() + "\n# a comment\n")
    load_profiles([str(module)], cache=cache)
    assert len(list((tmp_path / "cache" / "profiles").iterdir())) == 3


def test_a_terraform_profile_is_cached_under_the_names_it_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from gpulint.profile.cache import ProfileCache

    for name in ("a", "b"):
        shutil.copytree(EKS, tmp_path / name)
    cache = ProfileCache(tmp_path / "cache")
    a = load_profiles(["a"], cache=cache, root=str(tmp_path))
    b = load_profiles(["b"], cache=cache, root=str(tmp_path))
    # The same bytes in another directory: an entry of its own, whose pools name its files.
    assert {p.defined_at.split("/")[0] for p in b.pools} == {"b"}
    assert a.sources == ("a",) and b.sources == ("b",)
    with monkeypatch.context() as patched:
        _unevaluated(patched)
        assert load_profiles(["a"], cache=cache, root=str(tmp_path)) == a


def test_a_module_that_reads_a_path_computed_from_variables_is_not_cached(
    tmp_path: Path,
) -> None:
    from gpulint.profile.cache import ProfileCache
    from gpulint.profile.sandbox import read_only_to

    if read_only_to([str(tmp_path)]) is None:
        pytest.skip("the kernel cannot bound the reads: such a module is refused")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "pools.yaml").write_text("size: 2\n")
    (tmp_path / "m" / "main.tf").write_text(
        'variable "pools" {\n  default = "pools.yaml"\n}\n'
        "locals {\n  pools = yamldecode(file(var.pools))\n}\n"
        'resource "aws_eks_node_group" "gpu" {\n  node_group_name = "gpu"\n'
        '  instance_types = ["g6.4xlarge"]\n  scaling_config {\n'
        "    min_size = 0\n    max_size = local.pools.size\n    desired_size = 0\n  }\n}\n"
    )
    cache = ProfileCache(tmp_path / "cache")
    profile = load_profiles(["m"], cache=cache, root=str(tmp_path))
    assert [p.max_nodes for p in profile.pools] == [2]
    assert not (tmp_path / "cache" / "profiles").exists()


def test_an_eks_module_group_with_efa_has_interfaces_in_an_amount_not_known(
    tmp_path: Path,
) -> None:
    (tmp_path / "main.tf").write_text(
        'module "eks" {\n'
        '  source = "terraform-aws-modules/eks/aws"\n'
        "  eks_managed_node_groups = {\n"
        '    efa   = { instance_types = ["p5.48xlarge"], enable_efa_support = true }\n'
        '    plain = { instance_types = ["p5.48xlarge"] }\n'
        "  }\n"
        "}\n"
    )
    efa, plain = load_profiles([str(tmp_path)]).pools
    assert (efa.name, efa.unknown_amounts) == ("efa", {"vpc.amazonaws.com/efa"})
    assert (plain.name, plain.unknown_amounts) == ("plain", frozenset())


def test_gke_taints_gpu_pools_only_beside_pools_without_gpus(tmp_path: Path) -> None:
    # GKE taints a GPU pool's nodes when the cluster runs pools without GPUs: a cluster whose
    # module shows only GPU pools has no taint; one beside a CPU pool, or whose other pools the
    # module does not show (no cluster in it), keeps it.
    gpu_only = tmp_path / "gpu-only"
    gpu_only.mkdir()
    (gpu_only / "main.tf").write_text(
        'resource "google_container_cluster" "ml" {\n  name = "ml"\n  location = "us-central1-a"\n'
        "  remove_default_node_pool = true\n  initial_node_count = 1\n}\n"
        'resource "google_container_node_pool" "l4" {\n  name = "l4"\n  cluster = "ml"\n'
        '  node_config {\n    machine_type = "g2-standard-24"\n  }\n}\n'
        'resource "google_container_node_pool" "t4" {\n  name = "t4"\n  cluster = "ml"\n'
        '  node_config {\n    machine_type = "n1-standard-8"\n'
        '    guest_accelerator {\n      type = "nvidia-tesla-t4"\n    }\n  }\n}\n'
    )
    pools = {p.name: p for p in load_profiles([str(gpu_only)]).pools}
    assert sorted(pools) == ["l4", "t4"]
    assert all(pool.taints == () for pool in pools.values())
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "main.tf").write_text(
        (gpu_only / "main.tf").read_text().replace("  remove_default_node_pool = true\n", "")
    )
    pools = {p.name: p for p in load_profiles([str(mixed)]).pools}
    assert pools["default-pool"].taints == ()
    assert pools["l4"].taints == pools["t4"].taints == (GKE_GPU_TAINT,)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "main.tf").write_text(
        'resource "google_container_node_pool" "l4" {\n  name = "l4"\n'
        '  node_config {\n    machine_type = "g2-standard-24"\n  }\n}\n'
    )
    (pool,) = load_profiles([str(alone)]).pools
    assert pool.taints == (GKE_GPU_TAINT,)


DOKS_MODULE = (
    'resource "digitalocean_kubernetes_cluster" "ml" {\n'
    '  name    = "ml"\n  region  = "nyc2"\n  version = "1.33.1-do.3"\n'
    "  node_pool {\n"
    '    name       = "system"\n    size       = "s-4vcpu-8gb"\n'
    "    auto_scale = true\n    min_nodes  = 1\n    max_nodes  = 3\n"
    "  }\n}\n"
    'resource "digitalocean_kubernetes_node_pool" "h100" {\n'
    "  cluster_id = digitalocean_kubernetes_cluster.ml.id\n"
    '  name       = "h100x8"\n  size       = "gpu-h100x8-640gb"\n'
    "  auto_scale = true\n  min_nodes  = 0\n  max_nodes  = 2\n"
    '  labels     = {\n    team = "research"\n  }\n'
    "}\n"
    'resource "digitalocean_kubernetes_node_pool" "mi300x" {\n'
    "  cluster_id = digitalocean_kubernetes_cluster.ml.id\n"
    '  name       = "mi300x"\n  size       = "gpu-mi300x1-192gb"\n  node_count = 1\n'
    "}\n"
    'resource "digitalocean_kubernetes_node_pool" "l40s" {\n'
    "  cluster_id = digitalocean_kubernetes_cluster.ml.id\n"
    '  name       = "l40s"\n  size       = "gpu-l40sx1-48gb"\n  node_count = 2\n'
    "  taint {\n"
    '    key    = "nvidia.com/gpu"\n    value  = "present"\n    effect = "NoSchedule"\n'
    "  }\n}\n"
)


def test_doks_pools_get_the_gpus_labels_and_taint_of_their_droplet_size(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(DOKS_MODULE)
    profile = load_profiles([str(tmp_path)])
    assert (profile.provider, profile.name, profile.kubernetes_version) == (
        "doks",
        "ml",
        "1.33.1-do.3",
    )
    pools = {p.name: p for p in profile.pools}
    assert sorted(pools) == ["h100x8", "l40s", "mi300x", "system"]
    system = pools["system"]
    assert (system.nodes, system.min_nodes, system.max_nodes) == (1, 1, 3)
    assert system.taints == () and system.allocatable == {}
    assert system.labels == {
        "doks.digitalocean.com/node-pool": "system",
        "node.kubernetes.io/instance-type": "s-4vcpu-8gb",
    }
    h100 = pools["h100x8"]
    assert (h100.nodes, h100.min_nodes, h100.max_nodes, h100.scale_from_zero) == (0, 0, 2, True)
    assert h100.allocatable["nvidia.com/gpu"] == 8
    assert (h100.allocatable["cpu"], h100.allocatable["memory"]) == (160, 1920 * 2**30)
    assert h100.labels == {
        "doks.digitalocean.com/node-pool": "h100x8",
        "node.kubernetes.io/instance-type": "gpu-h100x8-640gb",
        "doks.digitalocean.com/gpu-brand": "nvidia",
        "doks.digitalocean.com/gpu-model": "h100",
        "team": "research",
    }
    assert h100.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"),)
    mi300x = pools["mi300x"]
    assert (mi300x.nodes, mi300x.max_nodes, mi300x.scale_from_zero) == (1, 1, False)
    assert mi300x.allocatable["amd.com/gpu"] == 1 and "nvidia.com/gpu" not in mi300x.allocatable
    assert mi300x.labels["doks.digitalocean.com/gpu-brand"] == "amd"
    assert mi300x.labels["doks.digitalocean.com/gpu-model"] == "mi300x"
    assert mi300x.taints == (Taint("amd.com/gpu", "", "NoSchedule"),)
    # DigitalOcean gives no gpu-model value for L40S nodes: they carry the label, any value.
    l40s = pools["l40s"]
    assert "doks.digitalocean.com/gpu-model" not in l40s.labels
    assert LabelRequirement("doks.digitalocean.com/gpu-model", "Exists") in l40s.label_requirements
    assert (
        f"{shown(str(tmp_path), 'main.tf')}:30 digitalocean_kubernetes_node_pool.l40s: DOKS "
        "labels the nodes of `gpu-l40sx1-48gb` doks.digitalocean.com/gpu-model with a value no "
        "DigitalOcean page gives; taken as any value"
    ) in profile.assumptions
    # A taint of the same key and effect written in the files is the node's one.
    assert l40s.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    # Selecting a model does not rule the pool out (no GPU101): only its taint stops the pod.
    found = placement_findings(tmp_path, "doks.digitalocean.com/gpu-model: l40s")
    assert [code for code, _ in found] == ["GPU102"]
    assert "fits pool l40s" in found[0][1]


def test_a_doks_gpu_pod_without_the_toleration_is_an_error_with_its_fix(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(DOKS_MODULE)
    pod = tmp_path / "pod.yaml"
    pod.write_text(GPU_POD.format(selector="doks.digitalocean.com/node-pool: h100x8"))
    args = ["check", "--isolated", "--select", "GPU102", "--format", "json", "--profile"]
    result = CliRunner().invoke(main, [*args, str(tmp_path), str(pod)])
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["code"], finding["severity"], finding["line"], finding["column"]) == (
        "GPU102",
        "error",
        4,
        1,
    )
    assert finding["message"] == (
        f"pod (requests 1 nvidia.com/gpu) fits pool h100x8 ({shown(str(tmp_path), 'main.tf')}"
        ":13) except for its taint nvidia.com/gpu:NoSchedule, which no toleration of the pod "
        "matches (this cluster does not run the ExtendedResourceToleration admission plugin, so "
        "requesting `nvidia.com/gpu` adds no toleration for it)"
    )
    assert finding["fix"] == (
        "Add to the pod spec (keep the taint on the pool):\ntolerations:\n"
        "- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule"
    )


def test_a_doks_pool_whose_size_is_not_known_is_not_judged_on_gpus(tmp_path: Path) -> None:
    # A size from a variable without a default (or a data source): what a node has is unknown,
    # so a GPU pod is a warning naming the pool, never "no pool advertises" (an error).
    (tmp_path / "main.tf").write_text(
        'variable "gpu_size" {}\nvariable "prefix" {}\n'
        'resource "digitalocean_kubernetes_cluster" "ml" {\n  name = "ml"\n'
        '  node_pool {\n    name = "${var.prefix}-gpu"\n    size = var.gpu_size\n'
        "    node_count = 1\n  }\n}\n"
    )
    profile = load_profiles([str(tmp_path)])
    (pool,) = profile.pools
    where = f"{shown(str(tmp_path), 'main.tf')}:5 digitalocean_kubernetes_cluster.ml.node_pool"
    assert profile.assumptions == (
        f"{where}: `name` is not known from the files; taken as 'default'",
        f"{where}: `size` is not known from the files; what its nodes have (GPUs included), "
        "and whether DOKS gives them its GPU labels and taint, is unknown",
    )
    assert (pool.name, pool.instance_type, pool.allocatable_unknown) == ("default", None, True)
    # Its nodes carry their pool's name and size, which the files do not say.
    assert {r.key for r in pool.label_requirements if r.operator == "Exists"} >= {
        "doks.digitalocean.com/node-pool",
        "node.kubernetes.io/instance-type",
    }
    pod = tmp_path / "pod.yaml"
    pod.write_text(GPU_POD.format(selector="doks.digitalocean.com/node-pool: ml-gpu"))
    args = ["check", "--isolated", "--select", "GPU001", "--format", "json", "--profile"]
    result = CliRunner().invoke(main, [*args, str(tmp_path), str(pod)])
    (finding,) = json.loads(result.stdout)["findings"]
    assert (finding["code"], finding["severity"], finding["line"], finding["column"]) == (
        "GPU001",
        "warning",
        10,
        39,
    )
    assert finding["message"] == (
        "container `c` limits `nvidia.com/gpu`, which no pool of this cluster is known to "
        f"advertise: pool default ({shown(str(tmp_path), 'main.tf')}:5) has an instance type "
        "its files do not decide, so what its nodes advertise is not known; unless they "
        "advertise `nvidia.com/gpu`, the pod can never be scheduled"
    )


def test_a_gpu_droplet_size_the_catalogue_does_not_list_is_of_unknown_gpus(
    tmp_path: Path,
) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "digitalocean_kubernetes_node_pool" "b300" {\n'
        '  cluster_id = "c"\n  name = "b300"\n  size = "gpu-b300x8-2304gb-spot"\n'
        "  node_count = 1\n}\n"
    )
    profile = load_profiles([str(tmp_path)])
    (pool,) = profile.pools
    assert (pool.instance_type, pool.allocatable, pool.allocatable_unknown) == (
        "gpu-b300x8-2304gb-spot",
        {},
        True,
    )
    # Whether its nodes carry DOKS's GPU labels and taint is open, as are its GPUs.
    assert pool.taints == () and "doks.digitalocean.com/gpu-brand" not in pool.labels
    assert pool.undecided_labels == (
        "doks.digitalocean.com/gpu-brand",
        "doks.digitalocean.com/gpu-model",
    )
    assert profile.assumptions == (
        f"{shown(str(tmp_path), 'main.tf')}:1 digitalocean_kubernetes_node_pool.b300: `size` "
        "`gpu-b300x8-2304gb-spot` is a GPU Droplet size gpulint does not list; its GPUs, and the "
        "GPU labels and taint DOKS gives its nodes, are unknown",
    )


DOKS_FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "infra" / "terraform" / "doks"


def test_doks_gpu_labels_of_an_undecided_size_are_open_and_a_pod_on_them_a_warning() -> None:
    profile = load_profiles([str(DOKS_FIXTURE)])
    pools = {p.name: p for p in profile.pools}
    research, batch = pools["research"], pools["batch"]
    # The size is a variable without a default: whether its nodes carry DOKS's GPU labels and
    # taint is not decided. Neither is added; the labels are named as undecided.
    assert research.taints == () and "doks.digitalocean.com/gpu-brand" not in research.labels
    assert research.undecided_labels == (
        "doks.digitalocean.com/gpu-brand",
        "doks.digitalocean.com/gpu-model",
    )
    # Nodes that carry them are GPU Droplets, which DOKS taints by their brand.
    assert [str(t) for t in research.undecided_taints] == [
        "nvidia.com/gpu:NoSchedule",
        "amd.com/gpu:NoSchedule",
    ]
    # A CPU size: DOKS gives its nodes none, and that is known.
    assert batch.undecided_labels == () and "doks.digitalocean.com/gpu-brand" not in batch.labels
    case = DOKS_FIXTURE.parents[2] / "cases" / "infra" / "terraform-doks-undecided-size.yaml"
    args = ["check", "--isolated", "--select", "GPU1", "--format", "json", "--profile"]
    result = CliRunner().invoke(main, [*args, str(DOKS_FIXTURE), str(case)])
    found = [
        (f["code"], f["severity"], f["line"], f["column"], f["message"])
        for f in json.loads(result.stdout)["findings"]
    ]
    where = shown(str(DOKS_FIXTURE), "main.tf")
    assert found == [
        (
            "GPU101",
            "warning",
            12,
            5,
            "no node pool can run this pod (requests 1 nvidia.com/gpu): l40s: nodeSelector "
            "team=research (pool lacks the label); research: nodeSelector "
            "doks.digitalocean.com/gpu-brand=nvidia (pool lacks the label); batch: nodeSelector "
            "doks.digitalocean.com/gpu-brand=nvidia (pool lacks the label); assumes the nodes of "
            f"pool research ({where}:19) do not carry doks.digitalocean.com/gpu-brand, which its "
            "input does not decide: a profile read from the nodes (a node dump, --live), or a "
            "`size` the files decide, makes this certain",
        ),
        (
            "GPU101",
            "error",
            27,
            5,
            "no node pool can run this pod (requests 1 nvidia.com/gpu): l40s: nodeSelector "
            "team=batch (pool lacks the label); research: nodeSelector "
            "doks.digitalocean.com/gpu-brand=nvidia (pool lacks the label); batch: nodeSelector "
            "doks.digitalocean.com/gpu-brand=nvidia (pool lacks the label)",
        ),
        # Without the toleration: were research's nodes GPU Droplets, DOKS would taint them.
        (
            "GPU101",
            "error",
            56,
            1,
            "no node pool can run this pod (requests 1 nvidia.com/gpu): l40s: untolerated taint "
            "nvidia.com/gpu:NoSchedule and nodeSelector team=research (pool lacks the label); "
            "research: nodeSelector doks.digitalocean.com/gpu-brand=nvidia (pool lacks the "
            "label); batch: nodeSelector doks.digitalocean.com/gpu-brand=nvidia (pool lacks the "
            "label)",
        ),
    ]


def test_a_pool_of_unknown_size_is_not_judged_as_a_known_pool_that_lists_nothing(
    tmp_path: Path,
) -> None:
    # research (a size the files do not decide) and batch (a CPU size) both list no
    # allocatable: research was judged as batch, "Insufficient nvidia.com/gpu (a node has 0)".
    (tmp_path / "main.tf").write_text((DOKS_FIXTURE / "main.tf").read_text())
    assert placement_findings(tmp_path, "team: research") == []
    ((code, message),) = placement_findings(tmp_path, "team: batch")
    assert code == "GPU101"
    assert "batch: Insufficient nvidia.com/gpu (pod requests 1, a node has 0)" in message


def test_terraform_reads_the_variable_files_terraform_reads(tmp_path: Path) -> None:
    # Terraform reads terraform.tfvars, then *.auto.tfvars by name, each over the one before;
    # tfparse reads none unless given them (a pool of a `node_count` default was taken).
    (tmp_path / "main.tf").write_text(
        'variable "prefix" {}\nvariable "nodes" {\n  default = 0\n}\n'
        'resource "digitalocean_kubernetes_node_pool" "gpu" {\n  cluster_id = "c"\n'
        '  name = "${var.prefix}-gpu"\n  size = "gpu-h100x1-80gb"\n  node_count = var.nodes\n}\n'
    )
    (tmp_path / "terraform.tfvars").write_text('prefix = "my"\nnodes = 2\n')
    (tmp_path / "b.auto.tfvars").write_text("nodes = 4\n")
    (tmp_path / "a.auto.tfvars").write_text("nodes = 3\n")
    (pool,) = load_profiles([str(tmp_path)]).pools
    assert (pool.name, pool.nodes) == ("my-gpu", 4)
    assert pool.labels["doks.digitalocean.com/node-pool"] == "my-gpu"
