"""gpulint.dra: DRA objects read from manifests, dumps and the API into views.

Object shapes follow the NVIDIA DRA driver's quickstart (`demo/specs/quickstart/v1/`) and its
chart's DeviceClasses (`deviceclass-gpu.yaml`, `deviceclass-mig.yaml`), Intel's
intel-resource-drivers-for-kubernetes `device-class.yaml`, and `resource.k8s.io/v1` types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpulint.dra import (
    Device,
    DeviceClass,
    ResourceSlice,
    accelerator_classes,
    claim,
    claim_of,
    container_claim_names,
    device_class,
    device_classes,
    devices_per_node,
    dra_nodes,
    extended_resource_names,
    generated_claim_names,
    has_claims,
    is_accelerator_class,
    is_dra_object,
    pod_claims,
    resource_slice,
    served_resource_names,
)
from gpulint.profile import ClusterProfile, load_profiles
from gpulint.profile.cache import ProfileCache
from gpulint.profile.dump import dump_profile
from gpulint.profile.merge import ProfileFacts, merge
from gpulint.profile.show import show_profile

NVIDIA_GPU_CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.nvidia.com"},
    "spec": {
        "selectors": [
            {
                "cel": {
                    "expression": "device.driver == 'gpu.nvidia.com' && "
                    "device.attributes['gpu.nvidia.com'].type == 'gpu'"
                }
            }
        ],
        "extendedResourceName": "nvidia.com/gpu",
    },
}
NVIDIA_MIG_CLASS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "mig.nvidia.com"},
    "spec": {
        "selectors": [
            {
                "cel": {
                    "expression": "device.driver == 'gpu.nvidia.com' && "
                    "device.attributes['gpu.nvidia.com'].type == 'mig'"
                }
            }
        ]
    },
}


def custom_class(name: str, expression: str, extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_nvidia_gpu_class_is_read_with_driver_type_and_extended_resource() -> None:
    view = device_class(NVIDIA_GPU_CLASS)
    assert view == DeviceClass(
        "gpu.nvidia.com",
        frozenset({"gpu.nvidia.com"}),
        (("gpu.nvidia.com", "type", "gpu"),),
        "nvidia.com/gpu",
    )
    assert view.is_accelerator


def test_a_class_of_an_accelerator_driver_is_an_accelerator_class() -> None:
    intel = device_class(custom_class("team-gpus", 'device.driver == "gpu.intel.com"'))
    nic = device_class(custom_class("rdma", "device.driver == 'dra.net'"))
    assert intel.drivers == frozenset({"gpu.intel.com"}) and intel.attributes == ()
    assert intel.is_accelerator and not nic.is_accelerator
    assert is_accelerator_class("mig.nvidia.com")
    assert is_accelerator_class("team-gpus", [intel, nic])
    assert not is_accelerator_class("rdma", [intel, nic])
    assert not is_accelerator_class("unknown-class")


def test_a_selector_gpulint_cannot_read_leaves_the_attributes_open() -> None:
    view = device_class(
        custom_class("big", "device.driver == 'gpu.nvidia.com' && device.capacity['x'].memory > 40")
    )
    assert view.drivers == frozenset({"gpu.nvidia.com"}) and view.attributes is None


def test_extended_resource_names_of_every_class_in_lists() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [NVIDIA_GPU_CLASS, NVIDIA_MIG_CLASS]}
    intel = custom_class("gpu.intel.com", 'device.driver == "gpu.intel.com"', "gpu.intel.com/xe")
    assert extended_resource_names([listed, intel, "not an object"]) == frozenset(
        {"nvidia.com/gpu", "gpu.intel.com/xe"}
    )
    assert [c.name for c in device_classes([listed])] == ["gpu.nvidia.com", "mig.nvidia.com"]
    assert served_resource_names([listed]) == {
        "nvidia.com/gpu",
        "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
        "deviceclass.resource.kubernetes.io/mig.nvidia.com",
    }


def test_claim_templates_claims_and_first_available_requests() -> None:
    template = claim(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"namespace": "gpu-test1", "name": "single-gpu"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}
                        ]
                    }
                }
            },
        }
    )
    assert template.describe() == (
        "ResourceClaimTemplate gpu-test1/single-gpu (gpu: 1 × gpu.nvidia.com)"
    )
    shared = claim(
        {
            "kind": "ResourceClaim",
            "metadata": {"name": "all-gpus"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "firstAvailable": [
                                {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 4},
                                {"name": "small", "deviceClassName": "mig.nvidia.com"},
                            ],
                        },
                        {
                            "name": "all",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "All",
                            },
                        },
                    ]
                }
            },
            "status": {"allocation": {"devices": {"results": []}}},
        }
    )
    assert (shared.namespace, shared.allocated) == ("default", True)
    assert [(r.device_class, r.count, r.alternatives) for r in shared.requests] == [
        ("gpu.nvidia.com", 4, ("mig.nvidia.com",)),
        ("gpu.nvidia.com", 0, ()),
    ]
    assert shared.describe().endswith(
        "(gpus: 4 × gpu.nvidia.com; all: every gpu.nvidia.com device)"
    )


def test_the_classes_a_claim_surely_gets_accelerators_from() -> None:
    def requests(*items: dict[str, Any]) -> Any:
        return claim({"kind": "ResourceClaim", "spec": {"devices": {"requests": list(items)}}})

    h100 = device_class(
        {
            "metadata": {"name": "h100"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
        }
    )
    several = requests(
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
        {"name": "mine", "exactly": {"deviceClassName": "h100"}},
        {"name": "again", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}},
        {"name": "nic", "exactly": {"deviceClassName": "mrdma.google.com"}},
    )
    assert accelerator_classes(several, [h100]) == ("gpu.nvidia.com", "h100")
    # Unknown without its class: a name is no proof of what a selector picks.
    assert accelerator_classes(several) == ("gpu.nvidia.com",)
    either = requests(
        {
            "name": "accel",
            "firstAvailable": [
                {"name": "gpu", "deviceClassName": "gpu.nvidia.com"},
                {"name": "fpga", "deviceClassName": "fpga.acme.io"},
            ],
        }
    )
    assert accelerator_classes(either) == ()
    # Admin access (v1 `exactly`, v1beta1 on the request) shares devices other pods hold.
    monitor = requests(
        {"name": "v1", "exactly": {"deviceClassName": "gpu.nvidia.com", "adminAccess": True}},
        {"name": "v1beta1", "deviceClassName": "mig.nvidia.com", "adminAccess": True},
    )
    assert [r.admin_access for r in monitor.requests] == [True, True]
    assert accelerator_classes(monitor) == ()


def test_pod_claims_and_container_claims() -> None:
    spec = {
        "resourceClaims": [
            {"name": "gpu", "resourceClaimTemplateName": "single-gpu"},
            {"name": "shared", "resourceClaimName": "all-gpus"},
            "junk",
        ],
        "containers": [{"name": "ctr", "resources": {"claims": [{"name": "gpu"}, {"x": 1}]}}],
    }
    entries = pod_claims(spec)
    assert [(e.name, e.kind, e.target, e.index) for e in entries] == [
        ("gpu", "ResourceClaimTemplate", "single-gpu", 0),
        ("shared", "ResourceClaim", "all-gpus", 1),
        ("", "ResourceClaim", None, 2),
    ]
    assert container_claim_names(spec["containers"][0]) == ("gpu", "")
    assert has_claims(spec) and not has_claims({"resourceClaims": "gpu"})
    template = claim(
        {"kind": "ResourceClaimTemplate", "metadata": {"namespace": "ml", "name": "single-gpu"}}
    )
    assert claim_of(entries[0], "ml", [template]) is template
    assert claim_of(entries[0], "other", [template]) is None
    assert claim_of(entries[1], "ml", [template]) is None
    pod = {"status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]}}
    assert generated_claim_names(pod) == {"gpu": "p-gpu-x"}


def nvidia_slice(node: str | None, types: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": "gpu.nvidia.com",
        "pool": {"name": node or "shared", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {"name": f"dev-{i}", "attributes": {"type": {"string": kind}, "index": {"int": i}}}
            for i, kind in enumerate(types)
        ],
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["allNodes"] = True
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "spec": spec}


def test_resource_slices_and_devices_per_node() -> None:
    slices = [
        resource_slice(nvidia_slice("node-a", ["gpu", "gpu", "mig"])),
        resource_slice(nvidia_slice("node-b", ["gpu"] * 8)),
    ]
    assert slices[0].devices[2] == Device(
        "dev-2", {"gpu.nvidia.com/type": "mig", "gpu.nvidia.com/index": "2"}
    )
    gpu, mig = device_class(NVIDIA_GPU_CLASS), device_class(NVIDIA_MIG_CLASS)
    assert devices_per_node(gpu, slices) == {"node-a": 2, "node-b": 8}
    assert devices_per_node(mig, slices) == {"node-a": 1}
    # A class whose selector gpulint cannot read counts every device of its driver.
    loose = device_class(
        custom_class("loose", "device.driver == 'gpu.nvidia.com' && device.capacity['x'] > 1")
    )
    assert devices_per_node(loose, slices) == {"node-a": 3, "node-b": 8}
    assert dra_nodes(slices) == frozenset({"node-a", "node-b"})
    assert dra_nodes([ResourceSlice("dra.net", "node-c", (Device("eth1", {}),))]) == frozenset()


def test_v1beta1_slices_nest_attributes_under_basic() -> None:
    view = resource_slice(
        {
            "kind": "ResourceSlice",
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": "n",
                "devices": [
                    {"name": "gpu-0", "basic": {"attributes": {"type": {"string": "gpu"}}}}
                ],
            },
        }
    )
    assert view.devices[0].attributes == {"gpu.nvidia.com/type": "gpu"}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (NVIDIA_GPU_CLASS, True),
        ({"apiVersion": "resource.k8s.io/v1beta2", "kind": "ResourceSlice"}, True),
        ({"apiVersion": "v1", "kind": "DeviceClass"}, False),
        ({"apiVersion": "resource.k8s.io/v1", "kind": "Widget"}, False),
        ({"apiVersion": 3, "kind": None}, False),
    ],
)
def test_is_dra_object(obj: dict[str, Any], expected: bool) -> None:
    assert is_dra_object(obj) is expected


@pytest.mark.parametrize(
    "garbage",
    [
        {"kind": "DeviceClass", "metadata": [], "spec": {"selectors": "x"}},
        {
            "kind": "DeviceClass",
            "spec": {"selectors": [{"cel": "x"}, 5, {"cel": {"expression": 7}}]},
        },
        {
            "kind": "ResourceClaimTemplate",
            "spec": {"spec": {"devices": {"requests": [5, {"exactly": []}]}}},
        },
        {
            "kind": "ResourceSlice",
            "spec": {"devices": [{"attributes": {"a": "b", "c": {"int": 1}}}]},
        },
    ],
)
def test_malformed_objects_are_read_without_error(garbage: dict[str, Any]) -> None:
    device_classes([garbage])
    if garbage["kind"] == "ResourceClaimTemplate":
        assert [r.count for r in claim(garbage).requests] == [1, 1]
    if garbage["kind"] == "ResourceSlice":
        assert resource_slice(garbage).devices[0].attributes == {"c": "1"}


# --- the profile: a kubectl dump that lists DRA objects ------------------------------------

PROFILE = str(Path(__file__).resolve().parent.parent / "fixtures" / "profiles" / "dra-nodes.yaml")


def test_a_dump_with_resource_slices_shows_dra_nodes_not_a_broken_plugin(tmp_path: Path) -> None:
    profile = load_profiles([PROFILE], cache=ProfileCache(tmp_path))
    pool = next(p for p in profile.pools if p.name == "h100-dra")
    # Labelled as GPU nodes with no nvidia.com/gpu allocatable: served by DRA.
    assert (pool.dra_nodes, pool.device_plugin_not_ready) == (2, 0)
    assert [c.name for c in profile.device_classes] == ["gpu.nvidia.com", "mig.nvidia.com"]
    assert [(s.node, len(s.devices)) for s in profile.resource_slices] == [
        ("h100-a", 8),
        ("h100-b", 7),
    ]
    assert [c.describe() for c in profile.resource_claims] == [
        "ResourceClaimTemplate ml/single-gpu (gpu: 1 × gpu.nvidia.com)"
    ]
    # Read again from the cache: the same facts.
    assert load_profiles([PROFILE], cache=ProfileCache(tmp_path)) == profile
    # A profile written out and read back keeps the count.
    dumped = tmp_path / "profile.yaml"
    dumped.write_text(dump_profile(profile), encoding="utf-8")
    again = next(p for p in load_profiles([str(dumped)]).pools if p.name == "h100-dra")
    assert (again.dra_nodes, again.device_plugin_not_ready) == (2, 0)


def test_without_slices_a_labelled_node_without_gpus_is_a_plugin_not_serving(
    tmp_path: Path,
) -> None:
    text = Path(PROFILE).read_text(encoding="utf-8")
    nodes_only = text[: text.index("- apiVersion: resource.k8s.io/v1")]
    path = tmp_path / "nodes.yaml"
    path.write_text(nodes_only, encoding="utf-8")
    pool = next(p for p in load_profiles([str(path)]).pools if p.name == "h100-dra")
    assert (pool.dra_nodes, pool.device_plugin_not_ready) == (0, 2)


def test_later_inputs_win_for_classes_and_slices() -> None:
    first = ClusterProfile(
        device_classes=(device_class(NVIDIA_GPU_CLASS),),
        resource_slices=(resource_slice(nvidia_slice("a", ["gpu"])),),
    )
    later = ClusterProfile(
        device_classes=(device_class(custom_class("gpu.nvidia.com", "device.driver == 'x'")),),
    )
    merged = merge([ProfileFacts(first), ProfileFacts(later)])
    assert [c.drivers for c in merged.device_classes] == [frozenset({"x"})]
    assert merged.resource_slices == first.resource_slices


def test_a_profile_written_out_keeps_the_dra_objects(tmp_path: Path) -> None:
    profile = load_profiles([PROFILE])
    text = dump_profile(profile)
    assert (
        "  deviceClasses:\n"
        "  - {name: gpu.nvidia.com, drivers: [gpu.nvidia.com], attributes: "
        "{gpu.nvidia.com/type: gpu}, extendedResourceName: nvidia.com/gpu}\n"
        "  - {name: mig.nvidia.com, drivers: [gpu.nvidia.com], attributes: "
        "{gpu.nvidia.com/type: mig}}\n"
    ) in text
    assert (
        "  - name: ml\n"
        "    resourceClaimTemplates:\n"
        "    - name: single-gpu\n"
        "      requests:\n"
        "      - {name: gpu, deviceClassName: gpu.nvidia.com, count: 1}\n"
    ) in text
    assert (
        "  - driver: gpu.nvidia.com\n"
        "    node: h100-b\n"
        "    devices:\n"
        "    - {name: gpu-0, attributes: {gpu.nvidia.com/type: gpu}}\n"
    ) in text
    dumped = tmp_path / "profile.yaml"
    dumped.write_text(text, encoding="utf-8")
    again = load_profiles([str(dumped)])
    assert again.device_classes == profile.device_classes
    assert again.resource_slices == profile.resource_slices
    assert again.resource_claims == profile.resource_claims
    assert again == profile


def test_every_shape_of_dra_object_survives_a_written_profile(tmp_path: Path) -> None:
    # A class whose selector gpulint cannot read, one of a driver only, a slice for every node,
    # an allocated claim, `All`, firstAvailable and admin access requests.
    objects = [
        custom_class("any.example.com", "device.capacity['x'].memory > 1"),
        custom_class("amd", "device.driver == 'gpu.amd.com'", "amd.com/gpu"),
        {**nvidia_slice(None, ["gpu"]), "kind": "ResourceSlice"},
        {
            "kind": "ResourceClaim",
            "metadata": {"name": "shared", "namespace": "a b"},
            "spec": {
                "devices": {
                    "requests": [
                        {"name": "all", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                    "allocationMode": "All"}},
                        {"name": "pick", "firstAvailable": [
                            {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 2},
                            {"name": "small", "deviceClassName": "mig.nvidia.com"},
                        ]},
                        {"name": "watch", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                      "adminAccess": True}},
                    ]
                }
            },
            "status": {"allocation": {"devices": {}}},
        },
    ]  # fmt: skip
    profile = ClusterProfile(
        device_classes=tuple(device_class(o) for o in objects[:2]),
        resource_slices=(resource_slice(objects[2]),),
        resource_claims=(claim(objects[3]),),
        scheduler_extenders=frozenset({"hami"}),
    )
    text = dump_profile(profile)
    assert "  - {name: any.example.com}\n" in text  # no attributes: every device counts
    assert "  - {name: amd, drivers: [gpu.amd.com], attributes: {}, " in text
    assert "  schedulerExtenders: [hami]\n" in text
    assert (
        '  - name: "a b"\n'
        "    resourceClaims:\n"
        "    - name: shared\n"
        "      allocated: true\n"
        "      requests:\n"
        "      - {name: all, deviceClassName: gpu.nvidia.com, allocationMode: All}\n"
        "      - {name: pick, deviceClassName: gpu.nvidia.com, count: 2, "
        "alternatives: [mig.nvidia.com]}\n"
        "      - {name: watch, deviceClassName: gpu.nvidia.com, count: 1, adminAccess: true}\n"
    ) in text
    path = tmp_path / "profile.yaml"
    path.write_text(text, encoding="utf-8")
    again = load_profiles([str(path)])
    assert again.resource_slices[0].node is None
    assert (again.device_classes, again.resource_slices, again.resource_claims) == (
        profile.device_classes,
        profile.resource_slices,
        profile.resource_claims,
    )
    assert again.scheduler_extenders == frozenset({"hami"})


def test_profile_show_lists_what_each_class_selects_serves_and_finds() -> None:
    profile = load_profiles([PROFILE])
    assert show_profile(profile).splitlines()[-3:] == [
        "DeviceClass gpu.nvidia.com: driver gpu.nvidia.com, gpu.nvidia.com/type=gpu; serves "
        "nvidia.com/gpu; 12 devices on 2 nodes, at most 8 on one",
        "DeviceClass mig.nvidia.com: driver gpu.nvidia.com, gpu.nvidia.com/type=mig; 3 devices "
        "on 1 node, at most 3 on one",
        "ResourceClaimTemplate ml/single-gpu: gpu: 1 × gpu.nvidia.com",
    ]


def test_profile_show_of_classes_without_slices_and_of_claims() -> None:
    allocated = {"status": {"allocation": {"devices": {}}}}
    profile = ClusterProfile(
        device_classes=(
            device_class(custom_class("any.example.com", "device.capacity['x'].memory > 1")),
        ),
        resource_claims=tuple(
            claim({"kind": "ResourceClaim", "metadata": {"name": n, "namespace": ns}, **extra})
            for n, ns, extra in (("a", "ml", allocated), ("b", "ml", {}), ("c", "research", {}))
        ),
    )
    assert show_profile(profile).splitlines()[-3:] == [
        "DeviceClass any.example.com: selectors not read (every device counts)",
        "ResourceSlices: none listed (GPU704 counts no devices)",
        "ResourceClaims: 3 in 2 namespaces, 1 allocated",
    ]
    shared = ClusterProfile(
        device_classes=(device_class(NVIDIA_GPU_CLASS),),
        resource_slices=(resource_slice(nvidia_slice(None, ["gpu", "gpu", "mig"])),),
    )
    assert show_profile(shared).splitlines()[-1] == (
        "DeviceClass gpu.nvidia.com: driver gpu.nvidia.com, gpu.nvidia.com/type=gpu; serves "
        "nvidia.com/gpu; 2 devices on every node"
    )


def test_a_dump_of_dra_objects_alone_is_a_profile(tmp_path: Path) -> None:
    # `kubectl get deviceclasses,resourceslices -A -o yaml`, given next to a nodes dump.
    path = tmp_path / "dra.yaml"
    objects = [NVIDIA_GPU_CLASS, {**nvidia_slice("a", ["gpu"]), "kind": "ResourceSlice"}]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    profile = load_profiles([str(path)])
    assert [c.name for c in profile.device_classes] == ["gpu.nvidia.com"]
    assert [(s.node, len(s.devices)) for s in profile.resource_slices] == [("a", 1)]
