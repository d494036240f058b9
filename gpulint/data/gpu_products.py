"""The GPU model labels nodes carry, per GPU model family.

GPU Feature Discovery writes `nvidia.com/gpu.product` as the NVML device name with spaces
turned into dashes (NVIDIA/k8s-device-plugin `internal/lm/resource.go`: `sanitise`), then
`-MIG-<profile>` under the MIG `single` strategy and `-SHARED` when sharing does not rename the
resource. So an H100 SXM is `NVIDIA-H100-80GB-HBM3`, never `NVIDIA-H100-SXM4-80GB`. GKE labels
nodes `cloud.google.com/gke-accelerator` with the Compute Engine accelerator type.

A family is listed only when its spellings are known well enough to call anything else wrong:
the NVML names in published node label dumps and catalogues (NVIDIA Dynamo's power catalogue
of reviewed GFD labels, the National Research Platform's node labels, GFD's own tests, the
node selectors of NVIDIA DeepOps' GPU examples) and the
accelerator types of the Compute Engine and Vertex AI APIs. A model not listed here is never an
error.
"""

from gpulint.views import NamedTuple

GFD_PRODUCT_LABEL = "nvidia.com/gpu.product"
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


class ProductFamily(NamedTuple):
    """The label values one GPU model family's nodes can carry."""

    model: str  # the model token as it appears in the values: `H100`, `A100`, `T4`
    values: tuple[str, ...]  # every value known for the family, most common first
    pattern: str | None = None  # a regular expression for values not worth listing one by one


#: `nvidia.com/gpu.product` values GFD writes, by model (before any -MIG-... or -SHARED).
GFD_FAMILIES: tuple[ProductFamily, ...] = (
    ProductFamily("K80", ("Tesla-K80",)),
    ProductFamily("M60", ("Tesla-M60",)),
    ProductFamily("P4", ("Tesla-P4",)),
    ProductFamily("P40", ("Tesla-P40",)),
    ProductFamily(
        "P100",
        ("Tesla-P100-PCIE-16GB", "Tesla-P100-PCIE-12GB", "Tesla-P100-SXM2-16GB"),
        r"Tesla-P100-(?:PCIE|SXM2)-[0-9]+GB",
    ),
    ProductFamily(
        "V100",
        (
            "Tesla-V100-SXM2-16GB",
            "Tesla-V100-SXM2-32GB",
            "Tesla-V100-PCIE-16GB",
            "Tesla-V100-PCIE-32GB",
            "Tesla-V100-SXM3-32GB",
            "Tesla-V100-FHHL-16GB",
            # DGX Station: NVIDIA/deepops `workloads/examples/k8s/gpu-usage/README.md` selects
            # `Tesla-V100-DGXS-32GB` ("a V100 running in a DGX"); nvidia-smi on DGX Stations
            # names the 16 GB board `Tesla V100-DGXS-16GB`.
            "Tesla-V100-DGXS-32GB",
            "Tesla-V100-DGXS-16GB",
        ),
        r"Tesla-V100-(?:SXM2|SXM3|PCIE|FHHL|DGXS)-[0-9]+GB",
    ),
    ProductFamily("V100S", ("Tesla-V100S-PCIE-32GB",)),
    ProductFamily("T4", ("Tesla-T4",)),
    ProductFamily("A2", ("NVIDIA-A2",)),
    ProductFamily("A10", ("NVIDIA-A10",)),
    ProductFamily("A10G", ("NVIDIA-A10G",)),
    ProductFamily("A16", ("NVIDIA-A16",)),
    ProductFamily("A30", ("NVIDIA-A30",)),
    ProductFamily("A40", ("NVIDIA-A40",)),
    ProductFamily(
        "A100",
        (
            "NVIDIA-A100-SXM4-80GB",
            "NVIDIA-A100-SXM4-40GB",
            "NVIDIA-A100-80GB-PCIe",
            "NVIDIA-A100-PCIE-40GB",
            "A100-SXM4-40GB",  # drivers before the `NVIDIA ` prefix
            "A100-SXM4-80GB",
            "A100-PCIE-40GB",
        ),
        r"(?:NVIDIA-)?A100(?:-SXM4?|-PCIE)-[0-9]+GB|NVIDIA-A100-[0-9]+GB-PCIe(?:-LC)?",
    ),
    ProductFamily(
        "A800",
        ("NVIDIA-A800-SXM4-80GB", "NVIDIA-A800-80GB-PCIe"),
        r"NVIDIA-A800(?:-SXM4|-PCIE)-[0-9]+GB|NVIDIA-A800-[0-9]+GB-PCIe(?:-LC)?",
    ),
    ProductFamily(
        "H100",
        ("NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-PCIe", "NVIDIA-H100-NVL", "NVIDIA-H100"),
        r"NVIDIA-H100(?:-PCIe|-NVL|-[0-9]+GB-HBM[23]e?|-SXM5-[0-9]+GB)?",
    ),
    ProductFamily(
        "H800",
        ("NVIDIA-H800", "NVIDIA-H800-PCIe", "NVIDIA-H800-NVL"),
        r"NVIDIA-H800(?:-PCIe|-NVL|-[0-9]+GB-HBM[23]e?)?",
    ),
    ProductFamily(
        "H200", ("NVIDIA-H200", "NVIDIA-H200-NVL"), r"NVIDIA-H200(?:-NVL|-[0-9]+GB-HBM3e?)?"
    ),
    ProductFamily("H20", ("NVIDIA-H20", "NVIDIA-H20-3e")),
    ProductFamily(
        "GH200",
        ("NVIDIA-GH200-480GB", "NVIDIA-GH200-120GB", "NVIDIA-GH200-144G-HBM3e"),
        r"NVIDIA-GH200-[0-9]+GB?(?:-HBM3e?)?",
    ),
    ProductFamily("L2", ("NVIDIA-L2",)),
    ProductFamily("L4", ("NVIDIA-L4",)),
    ProductFamily("L20", ("NVIDIA-L20",)),
    ProductFamily("L40", ("NVIDIA-L40",)),
    ProductFamily("L40S", ("NVIDIA-L40S",)),
    ProductFamily("L40G", ("NVIDIA-L40G",)),
    ProductFamily("B200", ("NVIDIA-B200",)),
    ProductFamily("GB200", ("NVIDIA-GB200",)),
)

#: `cloud.google.com/gke-accelerator` values (Compute Engine accelerator types), by model.
GKE_FAMILIES: tuple[ProductFamily, ...] = (
    ProductFamily("K80", ("nvidia-tesla-k80",)),
    ProductFamily("P4", ("nvidia-tesla-p4", "nvidia-tesla-p4-vws")),
    ProductFamily("P100", ("nvidia-tesla-p100", "nvidia-tesla-p100-vws")),
    ProductFamily("V100", ("nvidia-tesla-v100",)),
    ProductFamily("T4", ("nvidia-tesla-t4", "nvidia-tesla-t4-vws")),
    ProductFamily("A100", ("nvidia-tesla-a100", "nvidia-a100-80gb")),
    ProductFamily("L4", ("nvidia-l4", "nvidia-l4-vws")),
    ProductFamily("H100", ("nvidia-h100-80gb", "nvidia-h100-mega-80gb")),
    ProductFamily("H200", ("nvidia-h200-141gb",)),
    ProductFamily("B200", ("nvidia-b200",)),
    ProductFamily("GB200", ("nvidia-gb200",)),
)

#: Every label whose values are catalogued, with its families.
PRODUCT_LABELS: dict[str, tuple[ProductFamily, ...]] = {
    GFD_PRODUCT_LABEL: GFD_FAMILIES,
    GKE_ACCELERATOR_LABEL: GKE_FAMILIES,
}
