"""Karpenter NodePools as profile inputs: one pool per instance type a NodePool may launch."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpulint.errors import GpulintError
from gpulint.profile import Taint, load_profiles
from gpulint.profile.dump import dump_profile
from gpulint.profile.model import LabelRequirement

INFRA = Path(__file__).resolve().parent.parent / "fixtures" / "infra" / "karpenter"
BLUEPRINT = str(INFRA / "gpu-nodepool.yaml")
HEAD = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\n"


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "nodepool.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_blueprint_nodepool_gives_one_pool_per_type_within_its_limits() -> None:
    profile = load_profiles([BLUEPRINT])
    gpu = [p for p in profile.pools if p.name.startswith("gpu/")]
    # g-category NVIDIA types whose one node fits 100 vCPUs, 100Gi and 5 GPUs.
    assert [p.instance_type for p in gpu] == [
        "g4dn.xlarge", "g4dn.2xlarge", "g4dn.4xlarge", "g5.xlarge", "g5.2xlarge", "g5.4xlarge",
        "g6.xlarge", "g6.2xlarge", "g6.4xlarge", "g6e.xlarge", "g6e.2xlarge",
    ]  # fmt: skip
    t4 = gpu[0]
    assert t4.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"),)  # startup taint left out
    assert {k: t4.labels[k] for k in (
        "intent", "karpenter.sh/nodepool", "karpenter.sh/capacity-type",
        "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-family", "karpenter.k8s.aws/instance-category",
        "karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-memory",
    )} == {
        "intent": "gpu", "karpenter.sh/nodepool": "gpu", "karpenter.sh/capacity-type": "on-demand",
        "karpenter.k8s.aws/instance-gpu-name": "t4", "karpenter.k8s.aws/instance-gpu-count": "1",
        "karpenter.k8s.aws/instance-family": "g4dn", "karpenter.k8s.aws/instance-category": "g",
        "karpenter.k8s.aws/instance-generation": "4", "karpenter.k8s.aws/instance-memory": "16384",
    }  # fmt: skip
    # 100Gi over 16 GiB nodes allows 6, 5 GPUs over 1-GPU nodes 5.
    assert (t4.nodes, t4.min_nodes, t4.max_nodes, t4.scale_from_zero) == (0, 0, 5, True)
    assert t4.allocatable["nvidia.com/gpu"] == 1
    assert t4.limit_group == "NodePool gpu"
    assert t4.group_limits == {
        "cpu": Decimal(100), "memory": Decimal(100 * 2**30), "nvidia.com/gpu": Decimal(5)
    }  # fmt: skip
    assert profile.provider == "eks"


def test_weight_orders_nodepools_and_several_capacity_types_split_pools() -> None:
    profile = load_profiles([BLUEPRINT])
    training = [p.name for p in profile.pools if p.name.startswith("training/")]
    assert profile.pools[0].name.startswith("training/")  # weight 10 comes first
    assert training == [
        "training/p4d.24xlarge/on-demand", "training/p4d.24xlarge/spot",
        "training/p5.48xlarge/on-demand", "training/p5.48xlarge/spot",
    ]  # fmt: skip
    spot = profile.pools[1]
    assert spot.labels["karpenter.sh/capacity-type"] == "spot"
    assert spot.max_nodes == 2  # 16 GPUs over 8 per node


@pytest.mark.parametrize(
    ("requirements", "types"),
    [
        ("- {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ['4']}\n"
         "- {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [a100]}\n",
         ["p4d.24xlarge", "p4de.24xlarge"]),
        ("- {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, m5.large]}\n",
         ["g5.xlarge"]),
        ("- {key: karpenter.k8s.aws/instance-accelerator-name, operator: In, values: [trainium]}\n",
         ["trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge"]),
        # An attribute the catalogue does not record does not rule a type out.
        ("- {key: karpenter.k8s.aws/instance-family, operator: In, values: [p5]}\n"
         "- {key: karpenter.k8s.aws/instance-hypervisor, operator: In, values: [nitro]}\n",
         ["p5.4xlarge", "p5.48xlarge"]),
    ],
)  # fmt: skip
def test_requirements_select_catalogue_types(
    tmp_path: Path, requirements: str, types: list[str]
) -> None:
    body = "spec:\n  template:\n    spec:\n      requirements:\n"
    text = HEAD + body + "".join(f"      {line}\n" for line in requirements.splitlines())
    pools = load_profiles([write(tmp_path, text)]).pools
    assert [p.instance_type for p in pools] == types


def test_a_nodepool_of_types_outside_the_catalogue_is_one_pool_of_unknown_size(
    tmp_path: Path,
) -> None:
    text = HEAD + (
        "spec:\n  template:\n    spec:\n      requirements:\n"
        "      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}\n"
    )
    (pool,) = load_profiles([write(tmp_path, text)]).pools
    assert (pool.name, pool.allocatable, pool.scale_from_zero) == ("np", {}, True)


def test_profile_with_nodepool_pools_dumps_and_loads_back_equal(tmp_path: Path) -> None:
    profile = load_profiles([BLUEPRINT])
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert load_profiles([str(path)]) == profile


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("spec:\n  template:\n    spec:\n      requirements:\n      - {key: k, operator: Has}\n",
         "8:9: spec.template.spec.requirements.0: expected a key and an operator among"),
        ("spec:\n  template:\n    spec:\n      taints:\n      - {key: k, effect: NoSchedul}\n",
         "8:9: spec.template.spec.taints.0: expected a key and an effect"),
        ("spec:\n  limits: {nvidia.com/gpu: lots}\n",
         "5:28: spec.limits.nvidia.com/gpu: 'lots' is not a Kubernetes quantity"),
    ],
)  # fmt: skip
def test_a_broken_nodepool_is_one_error_at_its_line(
    tmp_path: Path, body: str, message: str
) -> None:
    path = write(tmp_path, HEAD + body)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value).startswith(f"{path}:{message}")


ZONAL = str(INFRA / "zonal-nodepool.yaml")


def test_requirements_of_several_values_are_labels_each_node_has_one_value_of() -> None:
    pools = load_profiles([ZONAL]).pools
    spot = next(p for p in pools if p.name == "gpu/g6.xlarge/spot")
    assert spot.label_requirements == (
        LabelRequirement("topology.kubernetes.io/zone", "In", ("us-west-2a", "us-west-2b")),
        LabelRequirement("company.com/team", "Exists"),
        LabelRequirement("topology.kubernetes.io/region", "Exists"),
        LabelRequirement("kubernetes.io/hostname", "Exists"),
        # Attribute labels every node carries, with values the catalogue does not record.
        *(
            LabelRequirement(f"karpenter.k8s.aws/{attribute}", "Exists")
            for attribute in (
                "instance-hypervisor",
                "instance-encryption-in-transit-supported",
                "instance-cpu-manufacturer",
                "instance-ebs-bandwidth",
                "instance-network-bandwidth",
                "instance-gpu-memory",
            )
        ),
    )
    # Capacity types and instance families are one pool each, so a fixed label there.
    assert spot.labels["karpenter.sh/capacity-type"] == "spot"
    assert spot.labels["karpenter.k8s.aws/instance-family"] == "g6"
    assert {p.name.split("/")[1][:2] for p in pools} == {"g5", "g6"}


def test_a_single_valued_requirement_is_a_label_and_template_labels_win(tmp_path: Path) -> None:
    text = HEAD + (
        "spec:\n  template:\n    metadata: {labels: {team: ml}}\n    spec:\n      requirements:\n"
        "      - {key: topology.kubernetes.io/zone, operator: In, values: [us-west-2a]}\n"
        "      - {key: team, operator: Exists}\n"
        "      - {key: node.kubernetes.io/instance-type, operator: In, values: [x1.big, x2.big]}\n"
    )
    (pool,) = load_profiles([write(tmp_path, text)]).pools
    assert pool.labels["topology.kubernetes.io/zone"] == "us-west-2a"
    assert pool.labels["team"] == "ml"
    # Types outside the catalogue: one pool whose instance type and capacity type vary too.
    assert pool.label_requirements == (
        LabelRequirement("node.kubernetes.io/instance-type", "In", ("x1.big", "x2.big")),
        LabelRequirement("topology.kubernetes.io/region", "Exists"),
        LabelRequirement("kubernetes.io/os", "Exists"),
        LabelRequirement("kubernetes.io/arch", "Exists"),
        LabelRequirement("kubernetes.io/hostname", "Exists"),
    )
    assert pool.labels["karpenter.sh/capacity-type"] == "on-demand"


def test_label_requirements_dump_and_load_back_equal(tmp_path: Path) -> None:
    profile = load_profiles([ZONAL])
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert "labelRequirements: [{key: topology.kubernetes.io/zone, operator: In" in path.read_text()
    assert load_profiles([str(path)]) == profile


def test_a_label_requirement_with_an_unknown_operator_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(
        "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\nspec:\n  pools:\n"
        "  - name: np\n    labelRequirements: [{key: zone, operator: OneOf, values: [a]}]\n"
    )
    with pytest.raises(GpulintError) as info:
        load_profiles([str(path)])
    assert str(info.value).startswith(f"{path}:6:")
    assert "spec.pools.0.labelRequirements.0.operator" in str(info.value)


NODEPOOL_NAMING_A_CLASS = HEAD + (
    "spec:\n  template:\n    spec:\n"
    "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n"
    "      requirements:\n"
    "      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}\n"
)
NODE_CLASS = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: gpu}\n"


def test_a_nodepool_naming_an_ec2nodeclass_no_input_defines_is_an_assumption(
    tmp_path: Path,
) -> None:
    nodepool = write(tmp_path, NODEPOOL_NAMING_A_CLASS)
    assert load_profiles([nodepool]).assumptions == (
        "NodePool np names EC2NodeClass gpu, which no profile input defines: its AMIs are "
        "taken to carry the drivers its instance types need",
    )
    # The class in another file of the same cluster links to it.
    node_class = tmp_path / "nodeclass.yaml"
    node_class.write_text(NODE_CLASS + "spec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n")
    assert load_profiles([nodepool, str(node_class)]).assumptions == ()
    assert load_profiles([str(node_class), nodepool]).assumptions == ()


def test_custom_amis_under_gpu_types_are_an_assumption(tmp_path: Path) -> None:
    nodepool = write(tmp_path, NODEPOOL_NAMING_A_CLASS)
    node_class = tmp_path / "nodeclass.yaml"
    node_class.write_text(
        NODE_CLASS + "spec:\n  amiFamily: AL2023\n  amiSelectorTerms: [{tags: {team: ml}}]\n"
    )
    assert load_profiles([nodepool, str(node_class)]).assumptions == (
        "EC2NodeClass gpu selects its own AMIs (amiSelectorTerms without an alias), so Karpenter "
        "picks no accelerated variant for the accelerator types of NodePool np: those AMIs are "
        "taken to carry the accelerator driver",
    )


def test_an_ec2nodeclass_alone_is_a_profile_without_pools(tmp_path: Path) -> None:
    node_class = tmp_path / "nodeclass.yaml"
    node_class.write_text(
        NODE_CLASS + "spec:\n  amiSelectorTerms: [{alias: bottlerocket@latest}]\n"
    )
    profile = load_profiles([str(node_class)])
    assert (profile.pools, profile.provider, profile.assumptions) == ((), "eks", ())


def test_an_ec2nodeclass_without_a_name_is_one_error(tmp_path: Path) -> None:
    node_class = tmp_path / "nodeclass.yaml"
    node_class.write_text("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nspec: {}\n")
    with pytest.raises(GpulintError) as info:
        load_profiles([str(node_class)])
    assert str(info.value) == f"{node_class}:1:1: EC2NodeClass: metadata.name is missing"


AUTO_MODE = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: default}
      requirements:
      - {key: eks.amazonaws.com/instance-family, operator: In, values: [g6e]}
"""


def test_auto_mode_nodes_carry_the_eks_attribute_labels_not_karpenters(tmp_path: Path) -> None:
    pools = load_profiles([write(tmp_path, AUTO_MODE)]).pools
    l40s = next(p for p in pools if p.name == "gpu/g6e.2xlarge")
    assert {k: l40s.labels[k] for k in (
        "eks.amazonaws.com/compute-type", "eks.amazonaws.com/instance-gpu-name",
        "eks.amazonaws.com/instance-gpu-count", "eks.amazonaws.com/instance-family",
    )} == {
        "eks.amazonaws.com/compute-type": "auto",
        "eks.amazonaws.com/instance-gpu-name": "l40s",
        "eks.amazonaws.com/instance-gpu-count": "1",
        "eks.amazonaws.com/instance-family": "g6e",
    }  # fmt: skip
    assert not [k for k in l40s.labels if k.startswith("karpenter.k8s.aws/")]
    # GPU memory is a label of every GPU node, with a value the catalogue does not record.
    assert LabelRequirement("eks.amazonaws.com/instance-gpu-memory", "Exists") in (
        l40s.label_requirements
    )


def test_self_managed_karpenter_nodes_are_not_auto_mode_nodes() -> None:
    pools = load_profiles([BLUEPRINT]).pools
    t4 = next(p for p in pools if p.name.startswith("gpu/g4dn"))
    assert "eks.amazonaws.com/compute-type" not in t4.labels
    assert not [k for k in t4.labels if k.startswith("eks.amazonaws.com/")]


AZURE = str(Path(__file__).resolve().parent.parent / "fixtures" / "real" / "profiles")
AKS_GPU = str(Path(AZURE) / "aks-karpenter-gpu.yaml")
AKS_NODEPOOL = (
    HEAD
    + "spec:\n  template:\n    spec:\n"
    + "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: gpu}\n"
    + "      requirements:\n"
)


def test_azure_nodepool_launches_azure_vm_sizes_with_the_providers_labels() -> None:
    profile = load_profiles([AKS_GPU])
    sizes = [p.instance_type for p in profile.pools]
    # Within 25 vCPUs and one GPU; every other N-series size is one pool of unknown GPUs.
    assert sizes == [
        "Standard_NC24ads_A100_v4", "Standard_NC6s_v3", "Standard_NC4as_T4_v3",
        "Standard_NC8as_T4_v3", "Standard_NC16as_T4_v3",
        "Standard_N* (sizes outside gpulint's catalogue)",
    ]  # fmt: skip
    a100, v100 = profile.pools[0], profile.pools[1]
    assert {k: v for k, v in a100.labels.items() if "azure.com/" in k} == {
        "kubernetes.azure.com/ebpf-dataplane": "cilium",
        "kubernetes.azure.com/sku-cpu": "24",
        "kubernetes.azure.com/sku-memory": str(220 * 1024),
        "karpenter.azure.com/sku-name": "Standard_NC24ads_A100_v4",
        "karpenter.azure.com/sku-cpu": "24",
        "karpenter.azure.com/sku-memory": str(220 * 1024),
        "karpenter.azure.com/sku-family": "N",
        "karpenter.azure.com/sku-series": "NCads_v4",
        "karpenter.azure.com/sku-version": "4",
        "karpenter.azure.com/sku-gpu-name": "A100",
        "karpenter.azure.com/sku-gpu-manufacturer": "nvidia",
        "karpenter.azure.com/sku-gpu-count": "1",
    }
    # The accelerator is not in a V100 size's name: the provider sets no sku-gpu-name.
    assert "karpenter.azure.com/sku-gpu-name" not in v100.labels
    assert v100.labels["karpenter.azure.com/sku-series"] == "NCs_v3"
    assert not any(k.startswith("karpenter.k8s.aws/") for p in profile.pools for k in p.labels)
    other = profile.pools[-1]
    assert other.allocatable_unknown and other.name == "default/other N-series sizes"
    assert LabelRequirement("karpenter.azure.com/sku-family", "In", ("N",)) in (
        other.label_requirements
    )
    assert (profile.provider, profile.assumptions) == ("aks", ())


def test_azure_nodepool_requirements_pick_azure_sizes(tmp_path: Path) -> None:
    text = AKS_NODEPOOL + (
        "      - {key: karpenter.azure.com/sku-gpu-name, operator: In, values: [T4]}\n"
        "      - {key: karpenter.azure.com/sku-cpu, operator: Lt, values: ['16']}\n"
    )
    profile = load_profiles([write(tmp_path, text)])
    assert [p.name for p in profile.pools] == [
        "np/Standard_NC4as_T4_v3", "np/Standard_NC8as_T4_v3", "np/other N-series sizes",
    ]  # fmt: skip
    assert profile.assumptions == (
        "NodePool np names AKSNodeClass gpu, which no profile input defines: AKS is taken to "
        "install the GPU driver its GPU sizes need (gpu.mode Driver, the default)",
    )


def test_azure_nodepool_of_d_sizes_has_no_gpu_and_named_sizes_outside_the_catalogue(
    tmp_path: Path,
) -> None:
    d_family = (
        AKS_NODEPOOL + "      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}\n"
    )
    (pool,) = load_profiles([write(tmp_path, d_family)]).pools
    assert (pool.name, pool.instance_type, pool.allocatable_unknown) == ("np", None, False)
    named = AKS_NODEPOOL + (
        "      - {key: node.kubernetes.io/instance-type, operator: In,"
        " values: [Standard_NV36ads_A10_v5]}\n"
    )
    (pool,) = load_profiles([write(tmp_path, named)]).pools
    assert (pool.instance_type, pool.allocatable_unknown) == ("Standard_NV36ads_A10_v5", True)


def test_aks_node_class_without_gpu_driver_is_an_assumption(tmp_path: Path) -> None:
    node_class = tmp_path / "aksnodeclass.yaml"
    node_class.write_text(
        "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: gpu}\n"
        "spec:\n  imageFamily: Ubuntu2204\n  gpu: {mode: None}\n",
        encoding="utf-8",
    )
    nodepool = write(
        tmp_path, AKS_NODEPOOL + "      - {key: karpenter.azure.com/sku-family, operator: Exists}\n"
    )
    assert load_profiles([nodepool, str(node_class)]).assumptions == (
        "AKSNodeClass gpu sets gpu.mode None, so AKS installs no GPU driver on the GPU sizes of "
        "NodePool np: a GPU Operator or other installer is taken to bring the driver and device "
        "plugin",
    )
