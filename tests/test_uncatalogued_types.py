"""Pools of an instance type the catalogue does not list: a family with accelerators has GPUs
gpulint cannot count (no error rests on them), a family without has none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpulint.cli import main
from gpulint.profile.instances import INSTANCE_TYPES, accelerated_family

EKSCTL = """apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {{name: c, region: us-west-2}}
managedNodeGroups:
  - name: new
    instanceType: {instance}
    minSize: 1
    maxSize: 2
{more}"""

G5 = """  - name: g5
    instanceType: g5.12xlarge
    minSize: 0
    maxSize: 1
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ml}
spec:
  replicas: 4
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
      - name: c
        image: registry.example.com/c:1.0
        resources:
          limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: 8}
"""


def _findings(tmp_path: Path, instance: str, more: str = "") -> list[dict]:
    profile = tmp_path / "eksctl.yaml"
    profile.write_text(EKSCTL.format(instance=instance, more=more))
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text(DEPLOYMENT)
    args = ["check", "--isolated", "--format", "json", "--profile", str(profile), str(manifest)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def test_a_gpu_family_the_catalogue_lacks_makes_gpu001_a_warning_naming_it(
    tmp_path: Path,
) -> None:
    (finding,) = _findings(tmp_path, "g7e.12xlarge")
    assert (finding["code"], finding["severity"]) == ("GPU001", "warning")
    assert (finding["line"], finding["column"]) == (14, 43)
    assert finding["message"] == (
        "container `c` limits `nvidia.com/gpu`, which no pool of this cluster is known to "
        "advertise: pool new is of instance type `g7e.12xlarge`, which gpulint's catalogue "
        "does not list, so what its nodes advertise is not known; unless they advertise "
        "`nvidia.com/gpu`, the pod can never be scheduled"
    )


def test_a_cpu_family_has_no_gpus_and_gpu001_stays_an_error(tmp_path: Path) -> None:
    (finding,) = _findings(tmp_path, "m5.2xlarge")
    assert (finding["code"], finding["severity"]) == ("GPU001", "error")
    assert "no pool advertises an accelerator" in finding["message"]


def test_no_capacity_verdict_rests_on_a_pool_of_unknown_gpus(tmp_path: Path) -> None:
    # 32 GPUs: the g5 pool (4 a node) cannot take an 8-GPU pod; the new pool may. How many
    # its two nodes have is unknown, so no GPU201 says "can have at most 0".
    assert _findings(tmp_path, "g7e.48xlarge", G5) == []
    # The same pool of a known type is judged: 2 nodes x 8 < 32.
    (finding,) = _findings(tmp_path, "p4d.24xlarge", G5)
    assert finding["code"] == "GPU201"
    assert "pool new can have at most 16 nvidia.com/gpu" in finding["message"]


@pytest.mark.parametrize(
    ("name", "accelerated"),
    [
        ("p6-b200.48xlarge", True),
        ("g6f.xlarge", True),
        ("gr6.4xlarge", True),
        ("trn2.48xlarge", True),
        ("a4-highgpu-8g", True),
        ("ct6e-standard-4t", True),
        ("Standard_ND96isr_H200_v5", True),
        ("m5.2xlarge", False),
        ("t4g.micro", False),
        ("c7gn.large", False),
        ("n2-standard-8", False),
        ("n1-standard-8", False),  # GPUs only attached per pool (guest_accelerator)
        ("Standard_HB120rs_v3", False),
    ],
)
def test_families_with_accelerators(name: str, accelerated: bool) -> None:
    assert accelerated_family(name) is accelerated


def test_every_catalogued_type_is_of_a_family_with_accelerators() -> None:
    assert [name for name in INSTANCE_TYPES if not accelerated_family(name)] == []


NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
      - {{key: {key}, operator: In, values: [{value}]}}
"""


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("node.kubernetes.io/instance-type", "g7e.12xlarge", "g7e.12xlarge"),
        ("karpenter.k8s.aws/instance-family", "g7e", "g7e.*"),
    ],
)
def test_a_nodepool_of_gpu_types_the_catalogue_lacks_is_not_judged_for_them(
    tmp_path: Path, key: str, value: str, named: str
) -> None:
    profile = tmp_path / "nodepool.yaml"
    profile.write_text(NODEPOOL.format(key=key, value=value))
    manifest = tmp_path / "deployment.yaml"
    manifest.write_text(DEPLOYMENT)
    args = ["check", "--isolated", "--format", "json", "--profile", str(profile), str(manifest)]
    (finding,) = json.loads(CliRunner().invoke(main, args).stdout)["findings"]
    assert (finding["code"], finding["severity"]) == ("GPU001", "warning")
    assert f"pool gpu is of instance type `{named}`, which gpulint's" in finding["message"]
