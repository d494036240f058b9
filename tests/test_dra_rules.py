"""GPU702 and GPU703 messages: what they list and what they suggest.

The fixtures under fixtures/cases/dra hold each rule's positions; these tests hold the words
of the cases a fixture cannot set up alone (a profile that lists the cluster's classes and
also holds the inputs' claims).
"""

from __future__ import annotations

from pathlib import Path

from gpulint.api import lint
from gpulint.dra import claim, device_class
from gpulint.profile.model import ClusterProfile

NVIDIA_CLASSES = (
    device_class(
        {
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {
                "selectors": [
                    {
                        "cel": {
                            "expression": "device.driver == 'gpu.nvidia.com' && "
                            f"device.attributes['gpu.nvidia.com'].type == '{kind}'"
                        }
                    }
                ]
            },
        }
    )
    for name, kind in (("gpu.nvidia.com", "gpu"), ("mig.nvidia.com", "mig"))
)
#: A cluster that runs a release of NVIDIA's DRA driver without `vfio.gpu.nvidia.com`.
CLUSTER = ClusterProfile(device_classes=tuple(NVIDIA_CLASSES))


def claim_template(name: str, device_class_name: str) -> str:
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}, namespace: ml}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {device_class_name}
"""


def found(tmp_path: Path, text: str, profile: ClusterProfile | None, code: str) -> list[str]:
    path = tmp_path / "claims.yaml"
    path.write_text(text, encoding="utf-8")
    result = lint([str(path)], select=(code,), profile=profile)
    return [f"{f.line}:{f.column} {f.message}" for f in result.findings]


def test_a_driver_class_the_cluster_lacks_is_explained_not_suggested(tmp_path: Path) -> None:
    text = claim_template("passthrough", "vfio.gpu.nvidia.com")
    assert found(tmp_path, text, CLUSTER, "GPU703") == [
        "10:28 request `gpu` names DeviceClass `vfio.gpu.nvidia.com`, which the cluster does not "
        "define (it has `gpu.nvidia.com`, `mig.nvidia.com`); the NVIDIA GPU DRA driver installs "
        "it, so that driver is not installed or runs a release without this class: the claim "
        "can never be allocated"
    ]


def test_a_typo_suggests_a_class_of_the_cluster_never_itself(tmp_path: Path) -> None:
    text = claim_template("single", "gpu.nvidia.co")
    assert found(tmp_path, text, CLUSTER, "GPU703") == [
        "10:28 request `gpu` names DeviceClass `gpu.nvidia.co`, which the cluster does not "
        "define (it has `gpu.nvidia.com`, `mig.nvidia.com`) (did you mean `gpu.nvidia.com`?): "
        "the claim can never be allocated"
    ]


def test_a_typo_of_a_driver_class_the_cluster_lacks_suggests_that_class(tmp_path: Path) -> None:
    # A known class of the driver is a better guess than a class of another meaning.
    text = claim_template("passthrough", "vfio.gpu.nvidia.co")
    assert found(tmp_path, text, CLUSTER, "GPU703") == [
        "10:28 request `gpu` names DeviceClass `vfio.gpu.nvidia.co`, which the cluster does not "
        "define (it has `gpu.nvidia.com`, `mig.nvidia.com`) (did you mean "
        "`vfio.gpu.nvidia.com`?): the claim can never be allocated"
    ]


def test_the_cluster_classes_listed_are_at_most_three(tmp_path: Path) -> None:
    many = ClusterProfile(
        device_classes=tuple(
            device_class({"kind": "DeviceClass", "metadata": {"name": f"rdma-{n}.mellanox.com"}})
            for n in range(5)
        )
    )
    assert found(tmp_path, claim_template("x", "fpga.example.org"), many, "GPU703") == [
        "10:28 request `gpu` names DeviceClass `fpga.example.org`, which the cluster does not "
        "define (it has `rdma-0.mellanox.com`, `rdma-1.mellanox.com`, `rdma-2.mellanox.com` and "
        "2 more): the claim can never be allocated"
    ]


def test_without_a_profile_driver_classes_pass_and_their_near_misses_do_not(
    tmp_path: Path,
) -> None:
    text = "---\n".join(
        claim_template(f"c{n}", name)
        for n, name in enumerate(
            (
                "vfio.gpu.nvidia.com",
                "compute-domain-default-channel.nvidia.com",
                "compute-domain-deamon.nvidia.com",
                "fpga.example.org",
                "gpu.example.com",
            )
        )
    )
    assert found(tmp_path, text, None, "GPU703") == [
        "32:28 request `gpu` names DeviceClass `compute-domain-deamon.nvidia.com`, which neither "
        "the inputs nor the DRA drivers gpulint knows define (did you mean "
        "`compute-domain-daemon.nvidia.com`?): the claim can never be allocated"
    ]


POD = """\
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml}
spec:
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: single-gpus}
  containers:
  - name: main
    image: busybox
    resources:
      claims: [{name: gpu}]
"""


def test_templates_of_the_profile_and_the_inputs_are_listed_once_sorted(tmp_path: Path) -> None:
    # The inputs define `single-gpu` and `eight-gpus`, which the cluster has too.
    text = claim_template("single-gpu", "gpu.nvidia.com")
    text += "---\n" + claim_template("eight-gpus", "gpu.nvidia.com") + POD
    listed = ClusterProfile(
        device_classes=CLUSTER.device_classes,
        resource_claims=tuple(
            claim({"kind": "ResourceClaimTemplate", "metadata": {"name": n, "namespace": "ml"}})
            for n in ("single-gpu", "sixteen-gpus", "eight-gpus")
        ),
    )
    assert found(tmp_path, text, listed, "GPU702") == [
        "28:44 resourceClaims entry `gpu` names ResourceClaimTemplate `single-gpus`, which does "
        "not exist in namespace `ml` (there: `eight-gpus`, `single-gpu`, `sixteen-gpus`) (did "
        "you mean `single-gpu`?): no claim is made for the pod and the pod stays Pending"
    ]


def test_a_namespace_of_many_templates_lists_three_and_counts_the_rest(tmp_path: Path) -> None:
    many = ClusterProfile(
        resource_claims=tuple(
            claim({"kind": "ResourceClaimTemplate", "metadata": {"name": n, "namespace": "ml"}})
            for n in ("gpu-1", "gpu-2", "gpu-4", "gpu-8", "single-gpu")
        ),
    )
    assert found(tmp_path, POD.removeprefix("---\n"), many, "GPU702") == [
        "6:44 resourceClaims entry `gpu` names ResourceClaimTemplate `single-gpus`, which does "
        "not exist in namespace `ml` (there: `gpu-1`, `gpu-2`, `gpu-4` and 2 more) (did you mean "
        "`single-gpu`?): no claim is made for the pod and the pod stays Pending"
    ]
