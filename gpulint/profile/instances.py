"""Built-in catalogue of accelerator instance types: what one node of a pool advertises.

Used for pools that have no node to read allocatable from (a scale-to-zero node group known
only from an eksctl config, or a ClusterProfile pool that names `instanceType` only). The
numbers are the machine's capacity, as cluster-autoscaler assumes for a zero-node template
(allocatable = capacity); `pods` is the kubelet default, not a provider's per-instance limit.
Counts follow docs/profile.md ("The instance catalogue"); cpu is vCPUs, memory is GiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

NVIDIA = "nvidia.com/gpu"
AMD = "amd.com/gpu"
NEURON = "aws.amazon.com/neuron"
NEURONCORE = "aws.amazon.com/neuroncore"
# The EFA device plugin's resource: one per EFA interface attached to the instance, as many
# as EC2 gives the type when a node group enables EFA (eksctl `efaEnabled`, the EKS module's
# `enable_efa_support`); no node group definition says how many.
EFA = "vpc.amazonaws.com/efa"
KUBELET_DEFAULT_MAX_PODS = 110
_GIB = 2**30


@dataclass(frozen=True)
class InstanceType:
    """One machine type: vCPUs, memory, accelerators per node and the accelerator model."""

    name: str
    provider: str  # eks, gke, aks, doks
    cpu: int
    memory_gib: int
    accelerators: Mapping[str, int]
    model: str


# (name, vCPUs, memory GiB, NVIDIA GPUs, GPU model)
_AWS_NVIDIA: tuple[tuple[str, int, int, int, str], ...] = (
    ("p2.xlarge", 4, 61, 1, "k80"),
    ("p2.8xlarge", 32, 488, 8, "k80"),
    ("p2.16xlarge", 64, 732, 16, "k80"),
    ("p3.2xlarge", 8, 61, 1, "v100"),
    ("p3.8xlarge", 32, 244, 4, "v100"),
    ("p3.16xlarge", 64, 488, 8, "v100"),
    ("p3dn.24xlarge", 96, 768, 8, "v100"),
    ("p4d.24xlarge", 96, 1152, 8, "a100"),
    ("p4de.24xlarge", 96, 1152, 8, "a100"),
    ("p5.4xlarge", 16, 256, 1, "h100"),
    ("p5.48xlarge", 192, 2048, 8, "h100"),
    ("p5e.48xlarge", 192, 2048, 8, "h200"),
    ("p5en.48xlarge", 192, 2048, 8, "h200"),
    ("g4dn.xlarge", 4, 16, 1, "t4"),
    ("g4dn.2xlarge", 8, 32, 1, "t4"),
    ("g4dn.4xlarge", 16, 64, 1, "t4"),
    ("g4dn.8xlarge", 32, 128, 1, "t4"),
    ("g4dn.12xlarge", 48, 192, 4, "t4"),
    ("g4dn.16xlarge", 64, 256, 1, "t4"),
    ("g4dn.metal", 96, 384, 8, "t4"),
    ("g5.xlarge", 4, 16, 1, "a10g"),
    ("g5.2xlarge", 8, 32, 1, "a10g"),
    ("g5.4xlarge", 16, 64, 1, "a10g"),
    ("g5.8xlarge", 32, 128, 1, "a10g"),
    ("g5.12xlarge", 48, 192, 4, "a10g"),
    ("g5.16xlarge", 64, 256, 1, "a10g"),
    ("g5.24xlarge", 96, 384, 4, "a10g"),
    ("g5.48xlarge", 192, 768, 8, "a10g"),
    ("g6.xlarge", 4, 16, 1, "l4"),
    ("g6.2xlarge", 8, 32, 1, "l4"),
    ("g6.4xlarge", 16, 64, 1, "l4"),
    ("g6.8xlarge", 32, 128, 1, "l4"),
    ("g6.12xlarge", 48, 192, 4, "l4"),
    ("g6.16xlarge", 64, 256, 1, "l4"),
    ("g6.24xlarge", 96, 384, 4, "l4"),
    ("g6.48xlarge", 192, 768, 8, "l4"),
    ("g6e.xlarge", 4, 32, 1, "l40s"),
    ("g6e.2xlarge", 8, 64, 1, "l40s"),
    ("g6e.4xlarge", 16, 128, 1, "l40s"),
    ("g6e.8xlarge", 32, 256, 1, "l40s"),
    ("g6e.12xlarge", 48, 384, 4, "l40s"),
    ("g6e.16xlarge", 64, 512, 1, "l40s"),
    ("g6e.24xlarge", 96, 768, 4, "l40s"),
    ("g6e.48xlarge", 192, 1536, 8, "l40s"),
)

# (name, vCPUs, memory GiB, Neuron devices, NeuronCores)
_AWS_NEURON: tuple[tuple[str, int, int, int, int], ...] = (
    ("inf2.xlarge", 4, 16, 1, 2),
    ("inf2.8xlarge", 32, 128, 1, 2),
    ("inf2.24xlarge", 96, 384, 6, 12),
    ("inf2.48xlarge", 192, 768, 12, 24),
    ("trn1.2xlarge", 8, 32, 1, 2),
    ("trn1.32xlarge", 128, 512, 16, 32),
    ("trn1n.32xlarge", 128, 512, 16, 32),
)

# (name, vCPUs, memory GiB, NVIDIA GPUs, `cloud.google.com/gke-accelerator` value)
_GCP: tuple[tuple[str, int, int, int, str], ...] = (
    ("a2-highgpu-1g", 12, 85, 1, "nvidia-tesla-a100"),
    ("a2-highgpu-2g", 24, 170, 2, "nvidia-tesla-a100"),
    ("a2-highgpu-4g", 48, 340, 4, "nvidia-tesla-a100"),
    ("a2-highgpu-8g", 96, 680, 8, "nvidia-tesla-a100"),
    ("a2-megagpu-16g", 96, 1360, 16, "nvidia-tesla-a100"),
    ("a2-ultragpu-1g", 12, 170, 1, "nvidia-a100-80gb"),
    ("a2-ultragpu-2g", 24, 340, 2, "nvidia-a100-80gb"),
    ("a2-ultragpu-4g", 48, 680, 4, "nvidia-a100-80gb"),
    ("a2-ultragpu-8g", 96, 1360, 8, "nvidia-a100-80gb"),
    ("a3-highgpu-1g", 26, 234, 1, "nvidia-h100-80gb"),
    ("a3-highgpu-2g", 52, 468, 2, "nvidia-h100-80gb"),
    ("a3-highgpu-4g", 104, 936, 4, "nvidia-h100-80gb"),
    ("a3-highgpu-8g", 208, 1872, 8, "nvidia-h100-80gb"),
    ("a3-megagpu-8g", 208, 1872, 8, "nvidia-h100-mega-80gb"),
    ("a3-ultragpu-8g", 224, 2952, 8, "nvidia-h200-141gb"),
    ("g2-standard-4", 4, 16, 1, "nvidia-l4"),
    ("g2-standard-8", 8, 32, 1, "nvidia-l4"),
    ("g2-standard-12", 12, 48, 1, "nvidia-l4"),
    ("g2-standard-16", 16, 64, 1, "nvidia-l4"),
    ("g2-standard-24", 24, 96, 2, "nvidia-l4"),
    ("g2-standard-32", 32, 128, 1, "nvidia-l4"),
    ("g2-standard-48", 48, 192, 4, "nvidia-l4"),
    ("g2-standard-96", 96, 384, 8, "nvidia-l4"),
)

# (name, vCPUs, memory GiB, NVIDIA GPUs, GPU model)
_AZURE: tuple[tuple[str, int, int, int, str], ...] = (
    ("Standard_NC24ads_A100_v4", 24, 220, 1, "a100-80gb"),
    ("Standard_NC48ads_A100_v4", 48, 440, 2, "a100-80gb"),
    ("Standard_NC96ads_A100_v4", 96, 880, 4, "a100-80gb"),
    ("Standard_NC6s_v3", 6, 112, 1, "v100"),
    ("Standard_NC12s_v3", 12, 224, 2, "v100"),
    ("Standard_NC24s_v3", 24, 448, 4, "v100"),
    ("Standard_NC4as_T4_v3", 4, 28, 1, "t4"),
    ("Standard_NC8as_T4_v3", 8, 56, 1, "t4"),
    ("Standard_NC16as_T4_v3", 16, 110, 1, "t4"),
    ("Standard_NC64as_T4_v3", 64, 440, 4, "t4"),
    ("Standard_NC40ads_H100_v5", 40, 320, 1, "h100-nvl"),
    ("Standard_NC80adis_H100_v5", 80, 640, 2, "h100-nvl"),
    ("Standard_ND96asr_v4", 96, 900, 8, "a100"),
    ("Standard_ND96amsr_A100_v4", 96, 1900, 8, "a100-80gb"),
    ("Standard_ND96isr_H100_v5", 96, 1900, 8, "h100"),
)

# DigitalOcean GPU Droplet sizes, as DOKS node pools take them (`size`): (slug, vCPUs, memory
# GiB, GPUs, GPU model, resource). DigitalOcean, "Droplet Features" (docs.digitalocean.com/
# products/droplets/details/features/#gpu-droplets, validated 20 Nov 2025): the self-serve
# sizes, and the contract-only ones with the same hardware.
_DIGITALOCEAN: tuple[tuple[str, int, int, int, str, str], ...] = (
    ("gpu-h100x1-80gb", 20, 240, 1, "h100", NVIDIA),
    ("gpu-h100x8-640gb", 160, 1920, 8, "h100", NVIDIA),
    ("gpu-h100x8-640gb-contracted", 160, 1920, 8, "h100", NVIDIA),
    ("gpu-h200x1-141gb", 24, 240, 1, "h200", NVIDIA),
    ("gpu-h200x8-1128gb", 192, 1920, 8, "h200", NVIDIA),
    ("gpu-h200x8-1128gb-contracted", 192, 1920, 8, "h200", NVIDIA),
    ("gpu-h200x8-1128gb-fabric-contracted", 192, 1920, 8, "h200", NVIDIA),
    ("gpu-l40sx1-48gb", 8, 64, 1, "l40s", NVIDIA),
    ("gpu-4000adax1-20gb", 8, 32, 1, "rtx4000ada", NVIDIA),
    ("gpu-6000adax1-48gb", 8, 64, 1, "rtx6000ada", NVIDIA),
    ("gpu-mi300x1-192gb", 20, 240, 1, "mi300x", AMD),
    ("gpu-mi300x8-1536gb", 160, 1920, 8, "mi300x", AMD),
    ("gpu-mi300x1-192gb-contracted", 20, 240, 1, "mi300x", AMD),
    ("gpu-mi300x8-1536gb-contracted", 160, 1920, 8, "mi300x", AMD),
    ("gpu-mi300x8-1536gb-fabric-contracted", 160, 1920, 8, "mi300x", AMD),
    ("gpu-mi325x1-256gb-contracted", 20, 164, 1, "mi325x", AMD),
    ("gpu-mi325x8-2048gb-contracted", 160, 1310, 8, "mi325x", AMD),
    ("gpu-mi325x8-2048gb-fabric-contracted", 160, 1310, 8, "mi325x", AMD),
)

INSTANCE_TYPES: Mapping[str, InstanceType] = {
    **{
        name: InstanceType(name, "eks", cpu, mem, {NVIDIA: gpus}, model)
        for name, cpu, mem, gpus, model in _AWS_NVIDIA
    },
    **{
        name: InstanceType(name, "eks", cpu, mem, {NEURON: devices, NEURONCORE: cores}, "neuron")
        for name, cpu, mem, devices, cores in _AWS_NEURON
    },
    **{
        name: InstanceType(name, "gke", cpu, mem, {NVIDIA: gpus}, accelerator)
        for name, cpu, mem, gpus, accelerator in _GCP
    },
    **{
        name: InstanceType(name, "aks", cpu, mem, {NVIDIA: gpus}, model)
        for name, cpu, mem, gpus, model in _AZURE
    },
    **{
        name: InstanceType(name, "doks", cpu, mem, {resource: gpus}, model)
        for name, cpu, mem, gpus, model, resource in _DIGITALOCEAN
    },
}


def instance_type(name: str | None) -> InstanceType | None:
    """The catalogue entry for `name` (Azure sizes match case-insensitively), or None."""
    if not name:
        return None
    found = INSTANCE_TYPES.get(name)
    if found is None and name.lower().startswith("standard_"):
        found = next((t for n, t in INSTANCE_TYPES.items() if n.lower() == name.lower()), None)
    return found


#: The machine families with accelerators, by each provider's naming: AWS GPU (p, g, gr),
#: Inferentia, Trainium, Gaudi (dl), FPGA (f) and video (vt) families; Google Cloud's A and G
#: series and TPU machines (ct5lp-, ct6e-, tpu7x-); Azure's N series; DigitalOcean's GPU
#: Droplets (`gpu-`). Every other family has none (`m5.2xlarge`, `n2-standard-8`,
#: `Standard_D4s_v5`, `s-4vcpu-8gb`).
_ACCELERATED_FAMILY = (
    r"(?:(?:p|g|gr|inf|trn|dl|f|vt)\d[a-z0-9-]*\."  # AWS: family, then `.size`
    r"|(?:a|g)\d[a-z]?-|ct\d|tpu"  # Google Cloud
    r"|standard_n"  # Azure
    r"|gpu-)"  # DigitalOcean
)


def accelerated_family(name: str) -> bool:
    """Whether instance type `name` is of a family whose machines carry accelerators."""
    import re

    return re.match(_ACCELERATED_FAMILY, name, re.IGNORECASE) is not None


def catalogue_allocatable(name: str | None) -> dict[str, Decimal] | None:
    """Per-node cpu, memory, pods and accelerators of instance type `name`; None if unknown."""
    entry = instance_type(name)
    if entry is None:
        return None
    allocatable = {
        "cpu": Decimal(entry.cpu),
        "memory": Decimal(entry.memory_gib * _GIB),
        "pods": Decimal(KUBELET_DEFAULT_MAX_PODS),
    }
    allocatable.update({resource: Decimal(n) for resource, n in entry.accelerators.items()})
    return allocatable
