"""Importers: kubectl dumps, eksctl configs, and how several inputs merge."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpulint.errors import GpulintError
from gpulint.profile import Pool, Taint, load_profiles
from gpulint.profile.kubectl import profile_from_objects
from gpulint.profile.load import json_dump_facts
from gpulint.profile.model import KUBELET_LABELS, NODE_LABELS, LabelRequirement
from gpulint.profile.nodes import pools_from_nodes
from gpulint.yamltree import parse

PROFILES = Path(__file__).resolve().parent.parent / "fixtures" / "profiles"
DUMP = str(PROFILES / "eks-prod-kubectl.yaml")
EKSCTL = str(PROFILES / "eks-prod-eksctl.yaml")
GIB = 2**30
KIB = 2**10
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def write(tmp_path: Path, text: str, name: str = "in.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def node(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    ready: bool = True,
    capacity: dict[str, str] | None = None,
    allocatable: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {
            "capacity": capacity or {"cpu": "4", "pods": "110"},
            "allocatable": allocatable or capacity or {"cpu": "4", "pods": "110"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True" if ready else "False"},
            ],
        },
    }


# --- kubectl dump ---------------------------------------------------------------------------


def test_dump_groups_nodes_into_pools_by_the_pool_labels() -> None:
    profile = load_profiles([DUMP])
    assert [p.name for p in profile.pools] == ["m5", "g5", "gpu-spot"]
    m5, g5, spot = profile.pools
    # Three m5 nodes, one of them NotReady: two count.
    assert (m5.nodes, m5.min_nodes, m5.max_nodes) == (2, 2, 2)
    assert m5.taints == ()  # the NotReady node's unreachable taints are not the pool's
    assert "kubernetes.io/hostname" not in m5.labels
    assert "topology.kubernetes.io/zone" not in m5.labels  # nodes in two zones
    assert m5.labels["alpha.eksctl.io/nodegroup-name"] == "m5"
    assert m5.labels["workload"] == "general"
    assert m5.instance_type == "m5.2xlarge"
    assert m5.allocatable == {
        "cpu": Decimal("7.91"),
        "ephemeral-storage": Decimal(76224326324),
        "hugepages-1Gi": Decimal(0),
        "hugepages-2Mi": Decimal(0),
        "memory": Decimal(31321564 * KIB),
        "pods": Decimal(58),
    }
    assert g5.taints == (GPU_TAINT,)
    assert g5.labels["eks.amazonaws.com/nodegroup"] == "g5"
    assert spot.labels["karpenter.sh/nodepool"] == "gpu-spot"
    assert spot.allocatable["nvidia.com/gpu"] == 1 and spot.nodes == 1
    assert not any(p.scale_from_zero for p in profile.pools)


def test_dump_reports_a_device_plugin_that_is_not_ready() -> None:
    g5 = load_profiles([DUMP]).pools[1]
    # Both nodes are Ready; one has nvidia.com/gpu 8 in capacity but 0 allocatable.
    assert (g5.nodes, g5.device_plugin_not_ready) == (2, 1)
    # The pool's allocatable is that of a healthy node.
    assert g5.allocatable["nvidia.com/gpu"] == 8
    assert g5.allocatable["cpu"] == Decimal("191.45")


def test_dump_reads_quotas_limit_ranges_priority_classes_and_the_provider() -> None:
    profile = load_profiles([DUMP])
    assert profile.provider == "eks"
    assert profile.provider_source == (f"inferred from node labels eks.amazonaws.com/* in {DUMP}")
    assert profile.extended_resource_toleration_enabled is True
    assert [(q.namespace, q.name) for q in profile.quotas] == [
        ("ml", "gpu-quota"),
        ("ml", "high-priority-gpu"),
    ]
    assert profile.quotas[0].used == {
        "requests.nvidia.com/gpu": Decimal(6),
        "limits.nvidia.com/gpu": Decimal(6),
    }
    assert profile.quotas[1].scope_selector[0].values == ("gpu-high",)
    assert [len(r.items) for r in profile.limit_ranges] == [2]
    assert [pc.name for pc in profile.priority_classes] == [
        "gpu-high",
        "system-cluster-critical",
        "system-node-critical",
    ]


def test_a_json_dump_and_plain_dicts_give_the_same_profile(tmp_path: Path) -> None:
    from_yaml = load_profiles([DUMP])
    data = parse(Path(DUMP).read_text()).documents[0].value
    plain = json.loads(json.dumps(data))
    from_json = load_profiles([write(tmp_path, json.dumps(plain, indent=2), "dump.json")])
    assert from_json == from_yaml
    from_dicts = profile_from_objects([plain], source="live cluster")
    assert from_dicts == from_yaml
    assert from_dicts.sources == ("live cluster",)


def test_only_a_valid_json_dump_takes_the_json_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = parse(Path(DUMP).read_text()).documents[0].value
    text = json.dumps(json.loads(json.dumps(data)), indent=4)
    dump = json_dump_facts("dump.json", text.encode())
    assert dump is not None and [f.pool.name for f in dump.pools] == ["m5", "g5", "gpu-spot"]
    # load_profiles reads such a dump without the YAML reader.
    from_yaml = load_profiles([DUMP])
    monkeypatch.setattr("gpulint.profile.load.parse", None)
    assert load_profiles([write(tmp_path, text, "dump.json")]) == from_yaml
    monkeypatch.undo()
    assert json_dump_facts(DUMP, Path(DUMP).read_bytes()) is None  # YAML
    assert json_dump_facts("bad.json", text.replace('"8"', '"eight"').encode()) is None
    assert json_dump_facts("other.json", b'{"kind": "Config"}') is None


def test_invalid_quantity_in_a_json_dump_points_at_it(tmp_path: Path) -> None:
    dump = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {}}}],
    }
    dump["items"][0]["status"]["allocatable"]["cpu"] = "four"
    path = write(tmp_path, json.dumps(dump, indent=2), "dump.json")
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value) == (
        f"{path}:12:18: items.0.status.allocatable.cpu: 'four' is not a Kubernetes quantity "
        "(write it like 8, 500m or 16Gi)"
    )


def test_nodes_that_state_the_same_amounts_are_parsed_once_and_a_bad_one_still_fails(
    tmp_path: Path,
) -> None:
    from gpulint.profile.kubectl import facts_from_objects
    from gpulint.profile.nodes import NodeView

    def gpu_node(name: str, gpus: Any) -> dict[str, Any]:
        amounts = {"cpu": "8", "nvidia.com/gpu": gpus}
        return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": amounts}}

    views: list[NodeView] = []
    facts_from_objects([gpu_node("a", "1"), gpu_node("b", "1"), gpu_node("c", 2)], None, "x", views)
    assert views[0].allocatable is views[1].allocatable  # one parse for both
    assert [dict(v.allocatable) for v in views] == [
        {"cpu": 8, "nvidia.com/gpu": 1},
        {"cpu": 8, "nvidia.com/gpu": 1},
        {"cpu": 8, "nvidia.com/gpu": 2},
    ]
    # `true == 1`: a value that is not a string is never answered from what was parsed before.
    dump = {"kind": "List", "items": [gpu_node("a", 1), gpu_node("b", True)]}
    path = write(tmp_path, json.dumps(dump, indent=2), "dump.json")
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value).startswith(
        f"{path}:24:29: items.1.status.allocatable.nvidia.com/gpu: true is not a Kubernetes "
    )


def test_pool_label_overrides_the_well_known_labels() -> None:
    profile = load_profiles([DUMP], pool_label="workload")
    # The Karpenter node has no `workload` label: it falls back to its instance type.
    assert [(p.name, p.nodes) for p in profile.pools] == [
        ("general", 2),
        ("gpu", 2),
        ("g6.xlarge", 1),
    ]


def test_nodes_without_pool_labels_group_by_instance_type_then_by_name() -> None:
    nodes = [
        node("a", {"node.kubernetes.io/instance-type": "c5.large"}),
        node("b", {"node.kubernetes.io/instance-type": "c5.large"}),
        node("c"),
    ]
    pools = pools_from_nodes(nodes)
    assert [(p.name, p.nodes, p.instance_type) for p in pools] == [
        ("c5.large", 2, "c5.large"),
        ("c", 1, None),
    ]
    assert pools[1].labels == {}  # the hostname label is per node


@pytest.mark.parametrize(
    ("pool_label", "per_node_label"),
    [
        ("doks.digitalocean.com/node-pool", "doks.digitalocean.com/node-id"),
        # Civo nodes carry no ID label: the pool label names the pool.
        ("kubernetes.civo.com/civo-node-pool", "kubernetes.io/hostname"),
        ("lke.linode.com/pool-id", "node.k8s.linode.com/host-uuid"),
        ("alibabacloud.com/nodepool-id", "kubernetes.io/hostname"),
        ("tke.cloud.tencent.com/nodepool-id", "kubernetes.io/hostname"),
        ("ibm-cloud.kubernetes.io/worker-pool-id", "ibm-cloud.kubernetes.io/worker-id"),
    ],
)
def test_a_managed_platforms_pool_label_keeps_its_nodes_one_pool(
    pool_label: str, per_node_label: str
) -> None:
    # A DOKS, LKE or IKS node also carries an ID of its own (of the node, or of its host), which
    # alone would make every node a pool.
    gpu = {"cpu": "20", "nvidia.com/gpu": "1"}
    taint = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    nodes = [
        node(n, {pool_label: "gpu-worker-pool-1", per_node_label: n}, capacity=gpu, taints=taint)
        for n in ("gpu-a", "gpu-b", "gpu-c")
    ]
    (pool,) = pools_from_nodes(nodes)
    assert (pool.name, pool.nodes, pool.taints) == (
        "gpu-worker-pool-1",
        3,
        (Taint("nvidia.com/gpu", "", "NoSchedule"),),
    )


def test_a_platforms_per_node_id_does_not_split_alike_nodes() -> None:
    # VKE labels each node with its own ID and no source names its pool label: the alike nodes
    # of a pool are still one pool, named by their instance type.
    gpu = {"cpu": "16", "nvidia.com/gpu": "1"}
    nodes = [
        node(
            n,
            {"vke.vultr.com/node-id": f"id-{n}", "node.kubernetes.io/instance-type": "vcg-a16"},
            capacity=gpu,
        )
        for n in ("gpu-a", "gpu-b", "gpu-c")
    ]
    (pool,) = pools_from_nodes(nodes)
    assert (pool.name, pool.nodes, dict(pool.labels)) == (
        "vcg-a16",
        3,
        {"node.kubernetes.io/instance-type": "vcg-a16"},
    )


def test_pool_facts_come_from_ready_nodes_and_cordoned_nodes_do_not_count() -> None:
    label = {"agentpool": "gpu"}
    gpu = {"cpu": "8", "nvidia.com/gpu": "2"}
    pools = pools_from_nodes(
        [
            node(
                "a",
                {**label, "zone": "1"},
                capacity=gpu,
                taints=[{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
            ),
            node(
                "b",
                {**label, "zone": "1"},
                capacity=gpu,
                taints=[{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
                unschedulable=True,
            ),
            node("c", {**label, "zone": "2"}, capacity=gpu, ready=False),
        ]
    )
    assert pools == (
        Pool(
            name="gpu",
            labels={"agentpool": "gpu", "zone": "1"},
            # The nodes given carry no kubernetes.io/os or /arch: open, as every node has them.
            label_requirements=tuple(LabelRequirement(k, "Exists") for k in KUBELET_LABELS),
            taints=(Taint("sku", "gpu", "NoSchedule"),),
            allocatable={"cpu": Decimal(8), "nvidia.com/gpu": Decimal(2)},
            nodes=1,
            min_nodes=1,
            max_nodes=1,
        ),
    )


def test_a_pool_whose_every_node_lost_its_device_plugin() -> None:
    capacity = {"cpu": "8", "amd.com/gpu": "4"}
    broken = {"cpu": "8", "amd.com/gpu": "0"}
    (pool,) = pools_from_nodes(
        [
            node(n, {"karpenter.sh/nodepool": "mi300"}, capacity=capacity, allocatable=broken)
            for n in ("a", "b")
        ]
    )
    assert (pool.nodes, pool.device_plugin_not_ready) == (2, 2)
    assert pool.allocatable["amd.com/gpu"] == 0


@pytest.mark.parametrize(
    ("labels", "provider", "evidence"),
    [
        ({"cloud.google.com/gke-nodepool": "p"}, "gke", "node labels cloud.google.com/gke-*"),
        ({"kubernetes.azure.com/agentpool": "p"}, "aks", "node labels kubernetes.azure.com/*"),
        ({"alpha.eksctl.io/nodegroup-name": "p"}, "eks", "node labels alpha.eksctl.io/*"),
        ({"doks.digitalocean.com/node-pool": "p"}, "doks", "node labels doks.digitalocean.com/*"),
        (
            # A DOKS node that also carries the control-plane label is still DOKS.
            {"node-role.kubernetes.io/control-plane": "", "doks.digitalocean.com/node-pool": "p"},
            "doks",
            "node labels doks.digitalocean.com/*",
        ),
        (
            {"node-role.kubernetes.io/control-plane": ""},
            "kubeadm",
            "node label node-role.kubernetes.io/control-plane and no cloud provider labels",
        ),
    ],
)
def test_provider_is_inferred_from_node_labels(
    labels: dict[str, str], provider: str, evidence: str
) -> None:
    profile = profile_from_objects([{"kind": "List", "items": [node("n", labels)]}], source="d")
    assert profile.provider == provider
    assert profile.provider_source == f"inferred from {evidence} in d"
    assert profile.extended_resource_toleration_enabled is (provider in ("eks", "gke"))


def test_unknown_provider_leaves_extended_resource_toleration_off() -> None:
    profile = profile_from_objects([node("n")])
    assert profile.provider is None and profile.provider_source is None
    assert profile.extended_resource_toleration_enabled is False


def test_invalid_quantity_in_a_dump_points_at_it(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  metadata: {name: n}\n"
        "  status:\n    allocatable: {cpu: four}\n"
    )
    path = write(tmp_path, text)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value) == (
        f"{path}:7:24: items.0.status.allocatable.cpu: 'four' is not a Kubernetes quantity "
        "(write it like 8, 500m or 16Gi)"
    )


def test_loose_objects_in_one_file_are_read_together(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {agentpool: a}\n"
        "status:\n  conditions: [{type: Ready, status: 'True'}]\n---\n"
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\nvalue: 10\n"
    )
    profile = load_profiles([write(tmp_path, text)])
    assert [(p.name, p.nodes) for p in profile.pools] == [("a", 1)]
    assert [(pc.name, pc.value) for pc in profile.priority_classes] == [("hi", 10)]


# --- eksctl ---------------------------------------------------------------------------------


def test_eksctl_config_node_groups() -> None:
    profile = load_profiles([EKSCTL])
    assert (profile.name, profile.kubernetes_version, profile.provider) == (
        "eks-prod",
        "1.31",
        "eks",
    )
    assert profile.provider_source == f"inferred from the eksctl ClusterConfig {EKSCTL}"
    assert [p.name for p in profile.pools] == ["m5", "g4dn", "g5", "p4d"]
    m5, g4dn, g5, p4d = profile.pools
    assert (m5.nodes, m5.min_nodes, m5.max_nodes, m5.scale_from_zero) == (3, 2, 6, True)
    # Self-managed, its label not tagged: at zero, no scale-up for a pod that requires it.
    assert m5.template_missing_labels == ("workload",)
    assert m5.allocatable == {}  # m5 is not an accelerator type: not in the catalogue
    assert m5.labels == {
        "alpha.eksctl.io/nodegroup-name": "m5",
        "node.kubernetes.io/instance-type": "m5.2xlarge",
        "workload": "general",
    }
    # Map form `key: "value:effect"`, and the EKS API spelling NO_SCHEDULE.
    assert g4dn.taints == (GPU_TAINT,) and p4d.taints == (GPU_TAINT,) and g5.taints == (GPU_TAINT,)
    assert (g4dn.nodes, g4dn.max_nodes, g4dn.scale_from_zero) == (0, 3, True)
    assert g4dn.template_missing_labels == ()  # propagateASGTags tags every label
    assert g5.labels["eks.amazonaws.com/nodegroup"] == "g5"
    assert p4d == Pool(
        name="p4d",
        labels={
            "alpha.eksctl.io/nodegroup-name": "p4d",
            "node.kubernetes.io/instance-type": "p4d.24xlarge",
            "eks.amazonaws.com/nodegroup": "p4d",
            "workload": "training",
            "k8s.amazonaws.com/accelerator": "nvidia-a100",
        },
        # Every node has an OS, architecture, zone and region the config does not state.
        label_requirements=tuple(LabelRequirement(key, "Exists") for key in NODE_LABELS),
        taints=(GPU_TAINT,),
        allocatable={
            "cpu": Decimal(96),
            "memory": Decimal(1152 * GIB),
            "pods": Decimal(110),
            "nvidia.com/gpu": Decimal(8),
        },
        nodes=0,
        min_nodes=0,
        max_nodes=4,
        scale_from_zero=True,
        instance_type="p4d.24xlarge",
    )


EKSCTL_HEAD = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\n"


def test_eksctl_defaults_and_taint_forms(tmp_path: Path) -> None:
    text = EKSCTL_HEAD + (
        "nodeGroups:\n"
        "- name: plain\n"
        "- name: tagged\n  instanceType: g6e.xlarge\n  minSize: 0\n  maxSize: 2\n"
        "  labels: {a: b}\n"
        "  taints: {dedicated: 'gpu:NO_EXECUTE', bare: ':PreferNoSchedule'}\n"
        "managedNodeGroups:\n"
        "- name: mixed\n  instanceTypes: [g5.xlarge, g5.2xlarge]\n  minSize: 1\n"
        "  taints: [{key: k, effect: PREFER_NO_SCHEDULE}]\n"
    )
    plain, tagged, mixed = load_profiles([write(tmp_path, text)]).pools
    assert (plain.instance_type, plain.nodes, plain.min_nodes, plain.max_nodes) == (
        "m5.large",
        2,
        2,
        2,
    )
    assert plain.scale_from_zero is True  # no labels or taints: the ASG itself is the template
    assert tagged.taints == (
        Taint("dedicated", "gpu", "NoExecute"),
        Taint("bare", "", "PreferNoSchedule"),
    )
    # Labels and taints without propagateASGTags: the autoscaler still builds a template from
    # the instance type, without the label. desiredCapacity defaults to minSize: no node now.
    assert (tagged.nodes, tagged.min_nodes, tagged.max_nodes, tagged.scale_from_zero) == (
        0,
        0,
        2,
        True,
    )
    assert tagged.template_missing_labels == ("a",)
    assert tagged.allocatable["nvidia.com/gpu"] == 1
    assert tagged.allocatable["memory"] == 32 * GIB
    assert mixed.instance_type == "g5.xlarge"
    assert (mixed.nodes, mixed.min_nodes, mixed.max_nodes) == (1, 1, 1)  # maxSize from minSize
    assert mixed.taints == (Taint("k", "", "PreferNoSchedule"),)


@pytest.mark.parametrize(
    ("sizes", "managed", "expected"),
    [
        ("", False, (2, 2, 2)),  # none written: eksctl's DefaultNodeCount
        ("minSize: 0", False, (0, 0, 0)),
        ("minSize: 0", True, (0, 0, 1)),  # a managed group's maxSize is at least 1
        ("minSize: 0, maxSize: 4", True, (0, 0, 4)),
        ("desiredCapacity: 3", False, (3, 3, 3)),
        ("desiredCapacity: 1, maxSize: 5", False, (1, 1, 5)),
        ("minSize: 1, desiredCapacity: 2", False, (2, 1, 2)),
    ],
)
def test_eksctl_sizes_default_as_eksctl_fills_them(
    tmp_path: Path, sizes: str, managed: bool, expected: tuple[int, int, int]
) -> None:
    key = "managedNodeGroups" if managed else "nodeGroups"
    text = EKSCTL_HEAD + f"{key}:\n- {{name: g, instanceType: g5.xlarge, {sizes}}}\n"
    (pool,) = load_profiles([write(tmp_path, text)]).pools
    assert (pool.nodes, pool.min_nodes, pool.max_nodes) == expected


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "nodeGroups:\n- name: a\n  taints: {k: present}\n",
            "6:15: nodeGroups.0.taints.k: 'present' is not \"value:effect\" "
            '(e.g. "present:NoSchedule")',
        ),
        (
            "managedNodeGroups:\n- name: a\n  taints: [{key: k, effect: NoSchedul}]\n",
            "6:29: managedNodeGroups.0.taints.0.effect: 'NoSchedul' is not one of NoSchedule, "
            "PreferNoSchedule, NoExecute (or NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)",
        ),
        (
            "nodeGroups:\n- name: a\n  maxSize: two\n",
            "6:12: nodeGroups.0.maxSize: 'two' is not a node count (write a whole number, 0 or "
            "more)",
        ),
        (
            "nodeGroups:\n- instanceType: g5.xlarge\n",
            "5:3: nodeGroups.0.name: every node group needs a name",
        ),
        ("nodeGroups: {a: 1}\n", "4:13: nodeGroups: expected a list"),
        (
            # awsome-inference's cluster templates leave the GPU group's type to the user.
            "managedNodeGroups:\n- name: a\n  instanceType: $INSTANCE_TYPE\n",
            "6:17: managedNodeGroups.0.instanceType: '$INSTANCE_TYPE' is a placeholder, not an "
            "instance type: write the type the cluster is created with (substitute the "
            "template's variables first)",
        ),
        (
            "nodeGroups:\n- name: a\n  instanceTypes: [g5.xlarge]\n  instanceType: ${TYPE}\n",
            "7:17: nodeGroups.0.instanceType: '${TYPE}' is a placeholder, not an instance type: "
            "write the type the cluster is created with (substitute the template's variables "
            "first)",
        ),
    ],
)
def test_eksctl_errors_point_at_the_value(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path, EKSCTL_HEAD + body)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value) == f"{path}:{message}"


# --- merging --------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [(DUMP, EKSCTL), (EKSCTL, DUMP)])
def test_dump_and_eksctl_join_pools_by_name(order: tuple[str, str]) -> None:
    profile = load_profiles(list(order))
    assert sorted(p.name for p in profile.pools) == ["g4dn", "g5", "gpu-spot", "m5", "p4d"]
    pools = {p.name: p for p in profile.pools}
    g5, m5 = pools["g5"], pools["m5"]
    # Current state from the dump; sizes, taints and instance type from eksctl.
    assert (g5.nodes, g5.min_nodes, g5.max_nodes, g5.scale_from_zero) == (2, 1, 4, True)
    assert g5.device_plugin_not_ready == 1
    assert g5.allocatable["cpu"] == Decimal("191.45")  # the node's, not the catalogue's 192
    assert g5.labels["eks.amazonaws.com/capacityType"] == "ON_DEMAND"  # only the dump has it
    assert g5.labels["workload"] == "gpu"
    assert g5.taints == (GPU_TAINT,)
    assert (m5.nodes, m5.min_nodes, m5.max_nodes) == (2, 2, 6)  # 2 Ready, not desiredCapacity 3
    assert pools["p4d"].allocatable["nvidia.com/gpu"] == 8  # catalogue: no p4d node exists
    assert pools["gpu-spot"].max_nodes == 1  # only the dump knows it
    assert profile.name == "eks-prod" and profile.kubernetes_version == "1.31"
    assert len(profile.quotas) == 2
    assert profile.sources == order


def test_later_profile_wins_field_by_field(tmp_path: Path) -> None:
    head = "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\n"
    first = write(
        tmp_path,
        head
        + "spec:\n  provider: eks\n  pools:\n"
        + "  - {name: p4d, nodes: 0, maxNodes: 4, scaleFromZero: true,\n"
        + "     instanceType: p4d.24xlarge}\n"
        + "  - {name: cpu, nodes: 3}\n"
        + "  namespaces:\n  - name: ml\n    resourceQuotas:\n"
        + "    - {name: q, hard: {requests.nvidia.com/gpu: 8}}\n"
        + "    - {name: r, hard: {pods: 10}}\n",
        "first.yaml",
    )
    second = write(
        tmp_path,
        head
        + "spec:\n  provider: other\n  admission: {extendedResourceToleration: true}\n"
        + "  pools:\n  - {name: p4d, maxNodes: 8}\n  - {name: new, nodes: 1}\n"
        + "  namespaces:\n  - name: ml\n    resourceQuotas:\n"
        + "    - {name: q, hard: {requests.nvidia.com/gpu: 2}}\n",
        "second.yaml",
    )
    profile = load_profiles([first, second])
    assert [p.name for p in profile.pools] == ["p4d", "cpu", "new"]
    p4d = profile.pools[0]
    assert (p4d.nodes, p4d.max_nodes, p4d.scale_from_zero, p4d.instance_type) == (
        0,
        8,
        True,
        "p4d.24xlarge",
    )
    assert p4d.allocatable["nvidia.com/gpu"] == 8
    assert profile.provider == "other"
    assert profile.provider_source == f"declared in {second}"
    assert profile.extended_resource_toleration_enabled is True
    assert [(q.name, q.hard) for q in profile.quotas] == [
        ("q", {"requests.nvidia.com/gpu": Decimal(2)}),
        ("r", {"pods": Decimal(10)}),
    ]


@pytest.mark.parametrize("dump_first", [True, False])
def test_a_node_group_missing_from_the_dump_has_no_node_now(
    tmp_path: Path, dump_first: bool
) -> None:
    """The dump says what exists, the config what may exist: desiredCapacity is no node."""
    dump = write(tmp_path, json.dumps({"kind": "List", "items": [node("n1", {
        "eks.amazonaws.com/nodegroup": "cpu"})]}), "dump.json")  # fmt: skip
    config = write(
        tmp_path,
        EKSCTL_HEAD
        + "managedNodeGroups:\n"
        + "- {name: cpu, instanceType: m5.large, desiredCapacity: 3, minSize: 1, maxSize: 5}\n"
        + "- {name: gpu, instanceType: g5.xlarge, desiredCapacity: 2, minSize: 0, maxSize: 4}\n",
        "eksctl.yaml",
    )
    order = [dump, config] if dump_first else [config, dump]
    pools = {p.name: p for p in load_profiles(order).pools}
    assert (pools["cpu"].nodes, pools["cpu"].min_nodes, pools["cpu"].max_nodes) == (1, 1, 5)
    assert (pools["gpu"].nodes, pools["gpu"].min_nodes, pools["gpu"].max_nodes) == (0, 0, 4)
    assert pools["gpu"].scale_from_zero is True


def test_a_dump_without_nodes_says_nothing_about_node_counts(tmp_path: Path) -> None:
    quota = {"kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ml"},
             "spec": {"hard": {"pods": "10"}}}  # fmt: skip
    dump = write(tmp_path, json.dumps({"kind": "List", "items": [quota]}), "dump.json")
    config = write(
        tmp_path,
        EKSCTL_HEAD + "managedNodeGroups:\n- {name: gpu, instanceType: g5.xlarge, minSize: 2}\n",
        "eksctl.yaml",
    )
    (pool,) = load_profiles([config, dump]).pools
    assert pool.nodes == 2


def test_written_allocatable_wins_over_a_later_catalogue_estimate(tmp_path: Path) -> None:
    head = "apiVersion: gpulint.io/v1alpha1\nkind: ClusterProfile\n"
    written = write(
        tmp_path,
        head + "spec:\n  pools:\n  - {name: p4d, allocatable: {nvidia.com/gpu: 7}}\n",
        "a.yaml",
    )
    eksctl = write(
        tmp_path,
        EKSCTL_HEAD
        + "managedNodeGroups:\n- {name: p4d, instanceType: p4d.24xlarge, minSize: 0, maxSize: 2}\n",
        "b.yaml",
    )
    (pool,) = load_profiles([written, eksctl]).pools
    assert pool.allocatable == {"nvidia.com/gpu": Decimal(7)}
    assert (pool.max_nodes, pool.instance_type) == (2, "p4d.24xlarge")


def test_eksctl_version_must_be_quoted(tmp_path: Path) -> None:
    text = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata:\n  version: 1.30\n"
    path = write(tmp_path, text)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert (
        str(info.value) == f'{path}:4:12: metadata.version: write the version quoted, like "1.31"'
    )


def test_a_list_without_cluster_objects_is_an_error(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: apps/v1, kind: Deployment}\n"
    path = write(tmp_path, text)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value) == (
        f"{path}:1:1: no Node, ResourceQuota, LimitRange, PriorityClass, Kueue or DRA object in "
        "this list; give the output of `kubectl get nodes,resourcequotas,limitranges,"
        "priorityclasses -A -o yaml`"
    )


def test_a_gpu_labelled_node_without_advertised_gpus_has_its_plugin_not_ready() -> None:
    pool_label = {"cloud.google.com/gke-nodepool": "l4"}
    (pool,) = pools_from_nodes(
        [
            node(
                "ok",
                {**pool_label, "cloud.google.com/gke-accelerator": "nvidia-l4"},
                capacity={"cpu": "24", "nvidia.com/gpu": "2"},
            ),
            node(
                "booting",
                {**pool_label, "cloud.google.com/gke-accelerator": "nvidia-l4"},
                capacity={"cpu": "24"},
            ),
            node("cpu", {**pool_label, "nvidia.com/gpu.present": "false"}, capacity={"cpu": "24"}),
        ]
    )
    assert (pool.nodes, pool.device_plugin_not_ready) == (3, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "kind: List\nitems:\n- {kind: {a: 1}}\n- kind: [Node]\n",
            "1:1: no Node, ResourceQuota, LimitRange, PriorityClass, Kueue or DRA object in this "
            "list",
        ),
        ("kind: [ClusterProfile]\n", "1:1: `['ClusterProfile']` is not a gpulint ClusterProfile"),
        (
            EKSCTL_HEAD + "nodeGroups:\n- name: a\n  taints: [{key: k, effect: [NoSchedule]}]\n",
            "6:29: nodeGroups.0.taints.0.effect: ['NoSchedule'] is not one of NoSchedule",
        ),
    ],
)
def test_values_of_the_wrong_type_are_errors_not_crashes(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(GpulintError) as info:
        load_profiles([path])
    assert str(info.value).startswith(f"{path}:{message}")


def test_eksctl_node_template_tags_say_which_labels_a_zero_node_template_has(
    tmp_path: Path,
) -> None:
    infra = Path(__file__).resolve().parent.parent / "fixtures" / "infra" / "eksctl"
    pools = {p.name: p for p in load_profiles([str(infra / "kubeflow-spot.yaml")]).pools}
    gpu = pools["1-gpu-spot-p3-2xlarge"]
    assert (gpu.nodes, gpu.min_nodes, gpu.max_nodes, gpu.scale_from_zero) == (0, 0, 10, True)
    assert gpu.taints == (Taint("spotInstance", "true", "PreferNoSchedule"),)
    assert gpu.template_missing_labels == ()  # every label tagged with its value
    # ng-1's label node-class is not tagged: the autoscaler's template lacks it.
    assert pools["ng-1"].scale_from_zero is True
    assert pools["ng-1"].template_missing_labels == ("node-class",)
    text = EKSCTL_HEAD + (
        "nodeGroups:\n- name: g\n  instanceType: g5.xlarge\n  minSize: 0\n  maxSize: 2\n"
        "  labels: {gpu: 'yes'}\n  taints: {nvidia.com/gpu: 'present:NoSchedule'}\n"
        "  tags:\n    k8s.io/cluster-autoscaler/node-template/label/gpu: 'yes'\n"
    )
    (pool,) = load_profiles([write(tmp_path, text)]).pools
    # An untagged taint leaves the template without it, not the group without a template.
    assert pool.scale_from_zero is True and pool.template_missing_labels == ()


def test_the_autoscalers_own_template_labels_are_never_missing(tmp_path: Path) -> None:
    text = EKSCTL_HEAD + (
        "nodeGroups:\n- name: g\n  instanceType: g5.xlarge\n  minSize: 0\n  maxSize: 2\n"
        "  labels: {kubernetes.io/arch: amd64, team: ml}\n"
    )
    (pool,) = load_profiles([write(tmp_path, text)]).pools
    # The AWS provider writes the architecture (and OS, instance type, zone) on every template.
    assert pool.template_missing_labels == ("team",)


def test_dumped_template_missing_labels_load_back_equal(tmp_path: Path) -> None:
    from gpulint.profile.dump import dump_profile

    infra = Path(__file__).resolve().parent.parent / "fixtures" / "infra" / "eksctl"
    profile = load_profiles([str(infra / "determined-g4dn.yaml")])
    gpu = next(p for p in profile.pools if p.name == "g4dn-metal-us-west-2b")
    assert gpu.template_missing_labels == ("k8s.amazonaws.com/accelerator",)
    path = tmp_path / "p.yaml"
    path.write_text(dump_profile(profile))
    assert load_profiles([str(path)]) == profile


# --- clusters without pool labels -------------------------------------------------------------


def test_unlabelled_nodes_alike_form_one_pool_named_by_what_they_share() -> None:
    gpu = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    gpu_capacity = {"cpu": "64", "memory": "515000000Ki", "pods": "110", "nvidia.com/gpu": "8"}
    gpu_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    nodes = [
        node("cp-1", {"node-role.kubernetes.io/control-plane": ""}),
        *(
            # Memory differs by a few KiB between identical machines; it does not split a pool.
            node(
                f"gpu-worker-{i}",
                gpu,
                taints=gpu_taint,
                capacity={**gpu_capacity, "memory": f"5150000{i}0Ki"},
            )
            for i in range(1, 13)
        ),
        node("cpu-a", {"node-class": "cpu"}),
        node(
            "cpu-b",
            {"node-class": "cpu"},
            taints=[{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}],
        ),
    ]
    pools = {p.name: p for p in pools_from_nodes(nodes)}
    assert sorted(pools) == ["cp-1", "cpu-*", "gpu-worker-*"]
    workers = pools["gpu-worker-*"]
    assert (workers.nodes, workers.taints) == (12, (GPU_TAINT,))
    assert workers.allocatable["nvidia.com/gpu"] == 8
    assert "kubernetes.io/hostname" not in workers.labels
    assert pools["cpu-*"].nodes == 2  # a state taint does not make a node a pool of its own


def test_unlabelled_pools_with_one_instance_type_are_named_by_it() -> None:
    typed = {"node.kubernetes.io/instance-type": "g5.12xlarge"}
    nodes = [
        node("a", typed),
        node("b", typed),
        node("c", {**typed, "team": "x"}),
        node("d", {"node.kubernetes.io/instance-type": "m5.large"}),
    ]
    names = sorted(p.name for p in pools_from_nodes(nodes))
    # Two shapes of g5.12xlarge: the second is numbered.
    assert names == ["g5.12xlarge", "g5.12xlarge-2", "m5.large"]


def test_an_eksctl_node_group_is_in_its_availability_zones(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\n"
        "metadata: {name: c, region: us-west-2}\n"
        "managedNodeGroups:\n- name: gpu\n  instanceType: g5.xlarge\n"
        "  availabilityZones: [us-west-2a, us-west-2b]\n"
    )
    (pool,) = load_profiles([str(config)]).pools
    assert pool.label_requirements[0] == LabelRequirement(
        "topology.kubernetes.io/zone", "In", ("us-west-2a", "us-west-2b")
    )
    assert "topology.kubernetes.io/zone" not in [r.key for r in pool.label_requirements[1:]]


def test_a_self_managed_neuron_group_needs_a_resources_tag_for_its_template(
    tmp_path: Path,
) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\n"
        "metadata: {name: c, region: us-west-2}\nnodeGroups:\n"
        "- {name: inf, instanceType: inf2.xlarge, minSize: 0, maxSize: 2}\n"
        "- name: inf-tagged\n  instanceType: inf2.xlarge\n  minSize: 0\n  maxSize: 2\n"
        "  tags:\n"
        "    k8s.io/cluster-autoscaler/node-template/resources/aws.amazon.com/neuron: '1'\n"
        "- {name: g5, instanceType: g5.xlarge, minSize: 0, maxSize: 2}\n"
    )
    pools = {p.name: p for p in load_profiles([str(config)]).pools}
    assert pools["inf"].template_missing == ("aws.amazon.com/neuron", "aws.amazon.com/neuroncore")
    assert pools["inf-tagged"].template_missing == ("aws.amazon.com/neuroncore",)
    assert pools["g5"].template_missing == ()  # from the instance type


def test_an_eksctl_group_with_efa_has_interfaces_in_an_amount_not_known(tmp_path: Path) -> None:
    text = EKSCTL_HEAD + (
        "managedNodeGroups:\n"
        "- name: efa\n  instanceType: p4d.24xlarge\n  efaEnabled: true\n"
        "- name: plain\n  instanceType: p4d.24xlarge\n"
    )
    path = tmp_path / "eksctl.yaml"
    path.write_text(text, encoding="utf-8")
    efa, plain = load_profiles([str(path)]).pools
    assert efa.unknown_amounts == {"vpc.amazonaws.com/efa"}
    assert plain.unknown_amounts == frozenset()
    # Written out and read back, the pool still does not judge them.
    from gpulint.profile.dump import dump_profile

    written = tmp_path / "profile.yaml"
    written.write_text(dump_profile(load_profiles([str(path)])), encoding="utf-8")
    assert "unknownAmounts: [vpc.amazonaws.com/efa]" in written.read_text(encoding="utf-8")
    assert load_profiles([str(written)]).pools[0].unknown_amounts == {"vpc.amazonaws.com/efa"}
