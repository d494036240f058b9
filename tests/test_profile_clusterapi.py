"""Cluster API node groups as profile inputs, and what cluster-autoscaler can scale from zero."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.errors import GpulintError
from gpulint.profile import Taint, load_profiles
from gpulint.profile.dump import dump_profile

INFRA = Path(__file__).resolve().parent.parent / "fixtures" / "infra" / "clusterapi"
GROUPS = str(INFRA / "gpu-machinedeployments.yaml")
GIB = 2**30


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "capi.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_machinedeployments_with_autoscaler_annotations() -> None:
    gpu, a10g = load_profiles([GROUPS]).pools
    assert (gpu.name, gpu.nodes, gpu.min_nodes, gpu.max_nodes) == ("my-cluster-gpu", 1, 0, 2)
    assert gpu.scale_from_zero is True
    # The capacity annotations are the template: cpu, memory and the GPU.
    assert gpu.allocatable == {
        "cpu": Decimal(20), "memory": Decimal(60 * GIB), "nvidia.com/gpu": Decimal(1)
    }  # fmt: skip
    assert gpu.labels == {"purpose": "gpu"}
    # The kubeadm taint and the annotation's are the same taint, kept once.
    assert gpu.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert gpu.template_missing == ()
    # The machine template's instance type gives the node; the annotations lack its GPUs.
    assert (a10g.instance_type, a10g.allocatable["nvidia.com/gpu"]) == ("g5.12xlarge", 4)
    assert a10g.labels == {"purpose": "a10g", "node.kubernetes.io/instance-type": "g5.12xlarge"}
    assert a10g.template_missing == ("nvidia.com/gpu",)
    # Its label comes from kubelet's --node-labels alone, which the zero-node template lacks;
    # my-cluster-gpu's annotation repeats its own.
    assert (gpu.template_missing_labels, a10g.template_missing_labels) == ((), ("purpose",))


def test_a_label_only_kubelet_sets_keeps_a_group_at_zero_from_scaling_up(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {purpose: a10g}\n  containers:\n  - name: c\n    image: c:1\n"
        "    resources: {limits: {cpu: '1', memory: 1Gi, nvidia.com/gpu: 1}}\n"
    )
    args = ["check", "--isolated", "--format", "json", "--select", "GPU101", "--profile", GROUPS]
    (finding,) = json.loads(CliRunner().invoke(main, [*args, str(pod)]).stdout)["findings"]
    assert (finding["line"], finding["column"]) == (5, 18)
    assert finding["message"] == (
        "no node pool can run this pod (requests 1 nvidia.com/gpu): a10g-md: nodeSelector "
        "purpose=a10g (the pool has no node, and cluster-autoscaler's zero-node template lacks "
        "the label); my-cluster-gpu: untolerated taint nvidia.com/gpu=present:NoSchedule"
    )
    assert finding["fix"] == (
        "Add `purpose=a10g` to the `capacity.cluster-autoscaler.kubernetes.io/labels` annotation "
        "of Cluster API node group a10g-md so that cluster-autoscaler knows its nodes carry the "
        "label (kubelet's `--node-labels` are not in its zero-node template), or drop the "
        "`purpose` requirement."
    )


def test_a_group_without_autoscaler_annotations_keeps_its_replicas(tmp_path: Path) -> None:
    text = (
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: MachinePool\nmetadata: {name: mp}\n"
        "spec:\n  replicas: 3\n  template:\n    metadata:\n      labels:\n"
        "        node.cluster.x-k8s.io/gpu: 'true'\n        app: x\n"
        "    spec:\n      bootstrap: {configRef: {kind: KubeadmConfigTemplate, name: mp}}\n"
        "---\napiVersion: bootstrap.cluster.x-k8s.io/v1beta2\nkind: KubeadmConfigTemplate\n"
        "metadata: {name: mp}\nspec:\n  template:\n    spec:\n      joinConfiguration:\n"
        "        nodeRegistration:\n          kubeletExtraArgs:\n"
        "          - {name: node-labels, value: 'tier=gpu,zone=a'}\n"
    )
    (pool,) = load_profiles([write(tmp_path, text)]).pools
    assert (pool.nodes, pool.min_nodes, pool.max_nodes, pool.scale_from_zero) == (3, 3, 3, False)
    # Only node.cluster.x-k8s.io/ machine labels reach the node; v1beta2 lists kubelet args.
    assert pool.labels == {"tier": "gpu", "zone": "a", "node.cluster.x-k8s.io/gpu": "true"}


def test_dumped_template_missing_loads_back_equal(tmp_path: Path) -> None:
    profile = load_profiles([GROUPS])
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert load_profiles([str(path)]) == profile


HEAD = (
    "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachineDeployment\nmetadata:\n  name: md\n"
    "  annotations:\n"
)


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ("    cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: many\n",
         "6:66: cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size: 'many' is not a "
         "node count"),
        ("    capacity.cluster-autoscaler.kubernetes.io/memory: lots\n",
         "6:55: capacity.cluster-autoscaler.kubernetes.io/memory: 'lots' is not a Kubernetes "
         "quantity"),
        ("    capacity.cluster-autoscaler.kubernetes.io/taints: gpu=yes:Never\n",
         "6:55: capacity.cluster-autoscaler.kubernetes.io/taints: 'gpu=yes:Never' is not "
         "`key=value:Effect`"),
    ],
)  # fmt: skip
def test_a_bad_annotation_is_one_error_at_its_value(
    tmp_path: Path, annotations: str, message: str
) -> None:
    path = write(tmp_path, HEAD + annotations)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value).startswith(f"{path}:{message}")


CAPA_EKS = str(INFRA / "capa-eks-managedmachinepool-gpu.yaml")


def test_a_generated_cluster_template_is_read_past_its_cluster_and_resource_sets() -> None:
    # Cluster, AWSManagedCluster, AWSManagedControlPlane, NodeadmConfig, ClusterResourceSet
    # and the ConfigMap it applies make no pool; the managed machine pool names its type.
    profile = load_profiles([CAPA_EKS])
    (pool,) = profile.pools
    assert (pool.name, pool.instance_type, pool.nodes) == ("gpu-pool-0", "g4dn.xlarge", 1)
    # An AWSManagedControlPlane is EKS's API server.
    assert profile.provider == "eks"
    assert pool.allocatable["nvidia.com/gpu"] == 1
    assert pool.labels["node.kubernetes.io/instance-type"] == "g4dn.xlarge"


def test_a_configmap_without_cluster_api_objects_is_still_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(GpulintError, match=r"capi.yaml:1:1: `v1/ConfigMap` is not a gpulint"):
        load_profiles([path])


MANAGED_POOL = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata: {name: gpu}
spec:
  replicas: 2
  template:
    spec:
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
        kind: AWSManagedMachinePool
        name: gpu
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSManagedMachinePool
metadata: {name: gpu}
spec:
  instanceType: g5.xlarge
  labels: {workload: gpu}
  taints:
  - {key: nvidia.com/gpu, value: "true", effect: no-schedule}
"""


def test_eks_managed_machine_pool_labels_and_taints_are_its_nodes(tmp_path: Path) -> None:
    profile = load_profiles([write(tmp_path, MANAGED_POOL)])
    (pool,) = profile.pools
    assert profile.provider is None  # no control plane says which platform
    assert pool.labels["workload"] == "gpu"
    assert pool.taints == (Taint("nvidia.com/gpu", "true", "NoSchedule"),)
    assert pool.instance_type == "g5.xlarge"


def test_eks_managed_machine_pool_bad_taint_effect_is_one_error(tmp_path: Path) -> None:
    path = write(tmp_path, MANAGED_POOL.replace("no-schedule", "NoSchedul"))
    with pytest.raises(GpulintError, match=r"spec.taints.0: expected a key and an effect"):
        load_profiles([path])
