"""The accelerator resource registry: every resource name gpulint knows a plugin or allocator
serves, what one unit of it is, who serves it and the node labels that plugin writes.

Each entry was checked against the upstream source named in its `source` field. The table is
Python rather than YAML so that a run pays no parse for it (every `gpulint check` asks it);
docs/accelerators.md shows it to users and tests keep the two in step.
"""

from gpulint.views import NamedTuple

# What one unit of a resource is; names of the same meaning may be suggested for each other,
# names of different meanings never (a memory amount is not a device count).
DEVICE = "device"  # a whole accelerator
SLICE = "slice"  # a hardware partition of one (MIG instance, AMD compute partition, tile)
SHARE = "share"  # a time-sliced or virtual share of one
MEMORY = "memory"  # an amount of accelerator memory
CORES = "cores"  # a share of an accelerator's compute
PERCENT = "percent"  # a percentage of one accelerator, its compute and memory together
MONITORING = "monitoring"  # access to every device for monitoring, no device of its own
SETTING = "setting"  # a scheduling setting carried as a resource (HAMi's priority)

#: Units that count devices or parts of devices: a rename among these keeps the meaning.
DEVICE_LIKE = frozenset({DEVICE, SLICE, SHARE})

# Who serves a resource.
DEVICE_PLUGIN = "device plugin"  # advertised in node allocatable
NODE_FEATURE = "node feature"  # NFD turns a plugin's node label into an allocatable amount
EXTENDER = "scheduler extender"  # never in node allocatable; the extender decides the fit


class AcceleratorResource(NamedTuple):
    """One resource name (or a family of names) and what serves it."""

    name: str  # the name, or its shape with <placeholders> for a family
    vendor: str
    unit: str  # DEVICE, SLICE, SHARE, MEMORY, CORES, MONITORING or SETTING
    one_unit: str  # what a request of 1 asks for, in words
    served_by: str  # DEVICE_PLUGIN, NODE_FEATURE or EXTENDER
    provider: str  # the project that serves it
    node_labels: tuple[str, ...] = ()  # labels the provider writes on nodes that have it
    pattern: str | None = None  # a regular expression for a family of names
    extender: str | None = None  # the `schedulerExtenders` name of the extender serving it
    source: str = ""  # the upstream file the name was checked against


class AcceleratorAnnotation(NamedTuple):
    """A pod annotation that requests an accelerator (or part of one) instead of a resource."""

    key: str
    vendor: str
    unit: str
    one_unit: str
    provider: str
    source: str = ""


_NVIDIA_GFD_LABELS = (
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.memory",
    "nvidia.com/gpu.family",
    "nvidia.com/gpu.replicas",
    "nvidia.com/gpu.sharing-strategy",
    "nvidia.com/mig.strategy",
)
_NVIDIA_PLUGIN = "NVIDIA/k8s-device-plugin README.md, internal/rm/rm.go, internal/lm/resource.go"
_KUBEVIRT_PLUGIN = (
    "NVIDIA/kubevirt-gpu-device-plugin pkg/device_plugin/device_plugin.go (getDeviceName, "
    "readVgpuIDFromFileFunc); kubevirt/kubevirt docs/devel/host-devices-and-device-plugins.md"
)
_HAMI = "Project-HAMi/HAMi charts/hami/values.yaml, charts/hami/templates/_helpers.tpl"
_VOLCANO = (
    "volcano-sh/volcano docs/user-guide/how_to_use_gpu_sharing.md, how_to_use_volcano_vgpu.md"
)
_KOORDINATOR = "koordinator-sh/koordinator apis/extension/device_share.go, constants.go"
_KOORDINATOR_LABELS = ("node.koordinator.sh/gpu-model", "node.koordinator.sh/gpu-vendor")
_INTEL_GPU = "intel/intel-device-plugins-for-kubernetes cmd/gpu_plugin/gpu_plugin.go, README.md"
_INTEL_NFD = "intel/intel-device-plugins-for-kubernetes cmd/internal/labeler/labeler.go"
_INTEL_LABELS = (
    "gpu.intel.com/family",
    "gpu.intel.com/product",
    "gpu.intel.com/device-id.<class>-<id>.present",
    "intel.feature.node.kubernetes.io/gpu",
)
_AMD_LABELS = (
    "amd.com/gpu.product-name",
    "amd.com/gpu.family",
    "amd.com/gpu.vram",
    "amd.com/gpu.device-id",
    "amd.com/gpu.cu-count",
)
_GPU_MANAGER = "tkestack/gpu-manager pkg/types/types.go, README.md (resource names and units)"
_ASCEND = "Ascend/ascend-device-plugin pkg/common/constants.go, build/ascendplugin-*.yaml"

#: Every accelerator resource gpulint knows, exact names first within each vendor.
RESOURCES: tuple[AcceleratorResource, ...] = (
    # NVIDIA device plugin and GPU Feature Discovery
    AcceleratorResource(
        "nvidia.com/gpu",
        "NVIDIA",
        DEVICE,
        "one GPU (or one MIG slice under the `single` "
        "strategy, or one time-sliced replica when sharing does not rename it)",
        DEVICE_PLUGIN,
        "NVIDIA device plugin",
        _NVIDIA_GFD_LABELS,
        source=_NVIDIA_PLUGIN,
    ),
    AcceleratorResource(
        "nvidia.com/gpu.shared",
        "NVIDIA",
        SHARE,
        "one time-sliced or MPS replica of a GPU (sharing with `renameByDefault: true`)",
        DEVICE_PLUGIN,
        "NVIDIA device plugin",
        _NVIDIA_GFD_LABELS,
        source=_NVIDIA_PLUGIN,
    ),
    AcceleratorResource(
        "nvidia.com/mig-<g>g.<memory>gb",
        "NVIDIA",
        SLICE,
        "one MIG instance of that profile (`mixed` strategy; `+me` profiles end in `.me`)",
        DEVICE_PLUGIN,
        "NVIDIA device plugin",
        ("nvidia.com/mig.strategy", "nvidia.com/mig-<profile>.count"),
        pattern=r"nvidia\.com/mig-(?:[1-8]c\.)?[1-8]g\.[0-9]+gb(?:\.[a-z]+)*",
        source=_NVIDIA_PLUGIN,
    ),
    # NVIDIA's KubeVirt GPU device plugin (the GPU Operator's sandbox device plugin, for
    # `vm-passthrough` and `vm-vgpu` nodes): a whole GPU bound to VFIO is advertised under its
    # pci.ids device name, upper-cased, `/`, `.` and blanks made `_`, anything else dropped
    # (`TU104GL [Tesla T4]` -> `nvidia.com/TU104GL_TESLA_T4`; KubeVirt's docs write the
    # older mixed case, `nvidia.com/TU104GL_Tesla_T4`); its name begins with the chip's code.
    # A KubeVirt virtual machine asks for one by `gpus[].deviceName` or `hostDevices[]`.
    AcceleratorResource(
        "nvidia.com/<chip>_<device name>",
        "NVIDIA",
        DEVICE,
        "one whole GPU passed through to a virtual machine (VFIO)",
        DEVICE_PLUGIN,
        "NVIDIA KubeVirt GPU device plugin",
        pattern=r"nvidia\.com/(?:GK|GM|GP|GV|TU|GA|GH|AD|GB)[0-9]{3}[A-Z0-9]*(?:_[A-Za-z0-9_]+)?",
        source=_KUBEVIRT_PLUGIN,
    ),
    # ... and a vGPU (a mediated device) under its type's name, blanks made `_`
    # (`GRID T4-1Q` -> `nvidia.com/GRID_T4-1Q`, `NVIDIA A10-4Q`, MIG-backed `GRID A100-1-5C`).
    AcceleratorResource(
        "nvidia.com/<GRID or NVIDIA>_<vGPU type>",
        "NVIDIA",
        SHARE,
        "one virtual GPU of that type (a mediated device) for a virtual machine",
        DEVICE_PLUGIN,
        "NVIDIA KubeVirt GPU device plugin",
        pattern=r"nvidia\.com/(?:GRID|NVIDIA)_[A-Za-z0-9_]+(?:-[0-9]+)+[A-Z]+",
        source=_KUBEVIRT_PLUGIN,
    ),
    # nos (nebuly-ai): MPS partitions named by their memory
    AcceleratorResource(
        "nvidia.com/gpu-<N>gb",
        "NVIDIA",
        SLICE,
        "one MPS partition of a GPU with N GB of memory",
        DEVICE_PLUGIN,
        "nos (nebuly-ai)",
        ("nos.nebuly.com/gpu-partitioning",),
        pattern=r"nvidia\.com/gpu-[0-9]+gb",
        source="nebuly-ai/nos docs/en/docs/dynamic-gpu-partitioning/getting-started-mps.md",
    ),
    # HAMi: the scheduler extender fits these; node allocatable never lists them
    AcceleratorResource(
        "nvidia.com/gpumem",
        "NVIDIA",
        MEMORY,
        "1 MiB of GPU memory per requested GPU",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "nvidia.com/gpumem-percentage",
        "NVIDIA",
        MEMORY,
        "1 % of a GPU's memory per requested GPU",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "nvidia.com/gpucores",
        "NVIDIA",
        CORES,
        "1 % of a GPU's compute per requested GPU",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "nvidia.com/priority",
        "NVIDIA",
        SETTING,
        "the task priority HAMi gives the container on a shared GPU (not an amount)",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "hygon.com/dcumem",
        "Hygon",
        MEMORY,
        "1 MiB of DCU memory",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "hygon.com/dcucores",
        "Hygon",
        CORES,
        "1 % of a DCU's compute",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "metax-tech.com/vmemory",
        "MetaX",
        MEMORY,
        "an amount of sGPU memory",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "metax-tech.com/vcore",
        "MetaX",
        CORES,
        "1 % of a GPU's compute",
        EXTENDER,
        "HAMi",
        extender="hami",
        source=_HAMI,
    ),
    # Alibaba Cloud GPU sharing (gpushare device plugin + scheduler extender)
    AcceleratorResource(
        "aliyun.com/gpu-mem",
        "NVIDIA",
        MEMORY,
        "1 GiB of GPU memory (1 MiB when the plugin runs with `--memory-unit=MiB`)",
        DEVICE_PLUGIN,
        "Alibaba gpushare",
        source="AliyunContainerService/gpushare-scheduler-extender pkg/utils/const.go",
    ),
    AcceleratorResource(
        "aliyun.com/gpu-count",
        "NVIDIA",
        DEVICE,
        "one GPU",
        DEVICE_PLUGIN,
        "Alibaba gpushare",
        source="AliyunContainerService/gpushare-scheduler-extender pkg/utils/const.go",
    ),
    # Volcano device plugins (volcano-sh/devices, volcano-vgpu-device-plugin)
    AcceleratorResource(
        "volcano.sh/gpu-number",
        "NVIDIA",
        DEVICE,
        "one whole GPU",
        DEVICE_PLUGIN,
        "Volcano GPU number",
        source=_VOLCANO,
    ),
    AcceleratorResource(
        "volcano.sh/gpu-memory",
        "NVIDIA",
        MEMORY,
        "1 MiB of GPU memory (a share of one GPU)",
        DEVICE_PLUGIN,
        "Volcano GPU sharing",
        source=_VOLCANO,
    ),
    AcceleratorResource(
        "volcano.sh/vgpu-number",
        "NVIDIA",
        SHARE,
        "one virtual GPU",
        DEVICE_PLUGIN,
        "Volcano vGPU",
        source=_VOLCANO,
    ),
    AcceleratorResource(
        "volcano.sh/vgpu-memory",
        "NVIDIA",
        MEMORY,
        "1 MiB of memory per virtual GPU",
        DEVICE_PLUGIN,
        "Volcano vGPU",
        source=_VOLCANO,
    ),
    AcceleratorResource(
        "volcano.sh/vgpu-cores",
        "NVIDIA",
        CORES,
        "1 % of a GPU's compute per virtual GPU",
        DEVICE_PLUGIN,
        "Volcano vGPU",
        source=_VOLCANO,
    ),
    # Tencent gpu-manager (TKEStack): its device plugin advertises each GPU as 100 vcuda cores
    # and its memory in 256 MiB blocks (pkg/types/types.go MemoryBlockSize); gpu-admission, a
    # scheduler extender, picks the GPU
    AcceleratorResource(
        "tencent.com/vcuda-core",
        "NVIDIA",
        CORES,
        "1 % of one GPU's compute (100 is a whole GPU)",
        DEVICE_PLUGIN,
        "Tencent gpu-manager",
        source=_GPU_MANAGER,
    ),
    AcceleratorResource(
        "tencent.com/vcuda-memory",
        "NVIDIA",
        MEMORY,
        "256 MiB of GPU memory",
        DEVICE_PLUGIN,
        "Tencent gpu-manager",
        source=_GPU_MANAGER,
    ),
    # Koordinator: koord-manager writes these into node allocatable from each node's Device
    # object; koord-scheduler's DeviceShare plugin assigns the devices
    # `koordinator.sh/gpu` is a percentage (50 is half a GPU, 200 two whole ones): the node's
    # amount is the sum of its GPUs' `gpu-core` (pkg/slo-controller/noderesource/plugins/
    # gpudeviceresource/plugin.go), and koord-scheduler reads a request as that much
    # `gpu-core` and `gpu-memory-ratio` (pkg/scheduler/plugins/deviceshare/utils.go).
    AcceleratorResource(
        "koordinator.sh/gpu",
        "NVIDIA",
        PERCENT,
        "1 % of one GPU's compute and memory (100 is a whole GPU)",
        DEVICE_PLUGIN,
        "Koordinator",
        _KOORDINATOR_LABELS,
        source=_KOORDINATOR,
    ),
    AcceleratorResource(
        "koordinator.sh/gpu.shared",
        "NVIDIA",
        SHARE,
        "one GPU taken in shared mode (with `gpu-core` and a memory share)",
        DEVICE_PLUGIN,
        "Koordinator",
        _KOORDINATOR_LABELS,
        source=_KOORDINATOR,
    ),
    AcceleratorResource(
        "koordinator.sh/gpu-core",
        "NVIDIA",
        CORES,
        "1 % of a GPU's compute (100 per GPU)",
        DEVICE_PLUGIN,
        "Koordinator",
        _KOORDINATOR_LABELS,
        source=_KOORDINATOR,
    ),
    AcceleratorResource(
        "koordinator.sh/gpu-memory",
        "NVIDIA",
        MEMORY,
        "an amount of GPU memory",
        DEVICE_PLUGIN,
        "Koordinator",
        _KOORDINATOR_LABELS,
        source=_KOORDINATOR,
    ),
    AcceleratorResource(
        "koordinator.sh/gpu-memory-ratio",
        "NVIDIA",
        MEMORY,
        "1 % of a GPU's memory (100 per GPU)",
        DEVICE_PLUGIN,
        "Koordinator",
        _KOORDINATOR_LABELS,
        source=_KOORDINATOR,
    ),
    # AMD
    AcceleratorResource(
        "amd.com/gpu",
        "AMD",
        DEVICE,
        "one GPU (or one partition under the `single` naming strategy)",
        DEVICE_PLUGIN,
        "AMD GPU device plugin",
        _AMD_LABELS,
        source="ROCm/k8s-device-plugin docs/user-guide/configuration.md",
    ),
    AcceleratorResource(
        "amd.com/<compute>_<memory>",
        "AMD",
        SLICE,
        "one GPU partition of that compute and "
        "memory mode (`mixed` naming strategy, e.g. `amd.com/cpx_nps4`)",
        DEVICE_PLUGIN,
        "AMD GPU device plugin",
        _AMD_LABELS,
        pattern=r"amd\.com/(?:spx|dpx|tpx|qpx|cpx)_nps[1-8]",
        source="ROCm/k8s-device-plugin docs/user-guide/configuration.md",
    ),
    # Intel
    AcceleratorResource(
        "gpu.intel.com/i915",
        "Intel",
        DEVICE,
        "one GPU driven by i915 (a share of one when `sharedDevNum` > 1)",
        DEVICE_PLUGIN,
        "Intel GPU device plugin",
        _INTEL_LABELS,
        source=_INTEL_GPU,
    ),
    AcceleratorResource(
        "gpu.intel.com/xe",
        "Intel",
        DEVICE,
        "one GPU driven by xe (a share of one when `sharedDevNum` > 1)",
        DEVICE_PLUGIN,
        "Intel GPU device plugin",
        _INTEL_LABELS,
        source=_INTEL_GPU,
    ),
    AcceleratorResource(
        "gpu.intel.com/dxg",
        "Intel",
        DEVICE,
        "one GPU under WSL (/dev/dxg)",
        DEVICE_PLUGIN,
        "Intel GPU device plugin",
        _INTEL_LABELS,
        source=_INTEL_GPU,
    ),
    AcceleratorResource(
        "gpu.intel.com/monitoring",
        "Intel",
        MONITORING,
        "monitoring access to every GPU of the node",
        DEVICE_PLUGIN,
        "Intel GPU device plugin",
        source=_INTEL_GPU,
    ),
    AcceleratorResource(
        "gpu.intel.com/<driver>_monitoring",
        "Intel",
        MONITORING,
        "monitoring access to every GPU of that driver (deprecated)",
        DEVICE_PLUGIN,
        "Intel GPU device plugin",
        pattern=r"gpu\.intel\.com/(?:i915|xe)_monitoring",
        source=_INTEL_GPU,
    ),
    AcceleratorResource(
        "gpu.intel.com/millicores",
        "Intel",
        CORES,
        "a thousandth of a GPU's compute (1000 per GPU)",
        NODE_FEATURE,
        "Intel GPU plugin labels via NFD",
        source=_INTEL_NFD,
    ),
    AcceleratorResource(
        "gpu.intel.com/memory.max",
        "Intel",
        MEMORY,
        "1 byte of GPU memory",
        NODE_FEATURE,
        "Intel GPU plugin labels via NFD",
        source=_INTEL_NFD,
    ),
    AcceleratorResource(
        "gpu.intel.com/tiles",
        "Intel",
        SLICE,
        "one GPU tile",
        NODE_FEATURE,
        "Intel GPU plugin labels via NFD",
        source=_INTEL_NFD,
    ),
    AcceleratorResource(
        "npu.intel.com/accel",
        "Intel",
        DEVICE,
        "one NPU",
        DEVICE_PLUGIN,
        "Intel NPU device plugin",
        ("intel.feature.node.kubernetes.io/npu",),
        source="intel/intel-device-plugins-for-kubernetes cmd/npu_plugin/README.md",
    ),
    # Habana (Intel Gaudi)
    AcceleratorResource(
        "habana.ai/gaudi",
        "Intel Habana",
        DEVICE,
        "one Gaudi accelerator",
        DEVICE_PLUGIN,
        "Habana device plugin",
        source="HabanaAI/habanalabs-k8s-device-plugin README.md",
    ),
    # Windows GPUs (AKS Windows GPU node pools install this plugin)
    AcceleratorResource(
        "microsoft.com/directx",
        "Microsoft",
        DEVICE,
        "one GPU for Windows containers (DirectX device class)",
        DEVICE_PLUGIN,
        "DirectX device plugin",
        source="aarnaud/k8s-directx-device-plugin cmd/k8s-device-plugin/main.go; "
        "MicrosoftDocs/azure-aks-docs articles/aks/use-windows-gpu.md",
    ),
    # AWS Neuron
    AcceleratorResource(
        "aws.amazon.com/neuron",
        "AWS",
        DEVICE,
        "one Neuron device (Inferentia/Trainium)",
        DEVICE_PLUGIN,
        "Neuron device plugin",
        source="aws-neuron/aws-neuron-sdk k8s docs",
    ),
    AcceleratorResource(
        "aws.amazon.com/neurondevice",
        "AWS",
        DEVICE,
        "one Neuron device",
        DEVICE_PLUGIN,
        "Neuron device plugin",
        source="aws-neuron/aws-neuron-sdk k8s docs",
    ),
    AcceleratorResource(
        "aws.amazon.com/neuroncore",
        "AWS",
        SLICE,
        "one NeuronCore of a Neuron device",
        DEVICE_PLUGIN,
        "Neuron device plugin",
        source="aws-neuron/aws-neuron-sdk k8s docs",
    ),
    # Google TPU (GKE)
    AcceleratorResource(
        "google.com/tpu",
        "Google",
        DEVICE,
        "one TPU chip",
        DEVICE_PLUGIN,
        "GKE TPU device plugin",
        ("cloud.google.com/gke-tpu-accelerator", "cloud.google.com/gke-tpu-topology"),
        source="GKE docs: Deploy TPU workloads",
    ),
    # Huawei Ascend
    AcceleratorResource(
        "huawei.com/Ascend<model>",
        "Huawei",
        DEVICE,
        "one Ascend NPU (e.g. Ascend910, Ascend310P, Ascend910B)",
        DEVICE_PLUGIN,
        "Ascend device plugin",
        ("accelerator",),
        pattern=r"huawei\.com/Ascend(?:910|310)[A-Za-z0-9]*",
        source=_ASCEND,
    ),
    # Huawei Cloud CCE's NPU add-on names the device by its chip: `ascend-310` (Snt3),
    # `ascend-1980` (Snt9, the Ascend 910 family), as ModelArts' resource requirements and
    # Kthena's NPU examples request it.
    AcceleratorResource(
        "huawei.com/ascend-<chip>",
        "Huawei",
        DEVICE,
        "one Ascend NPU on Huawei Cloud CCE (`ascend-310`: Snt3; `ascend-1980`: Snt9)",
        DEVICE_PLUGIN,
        "Huawei Cloud CCE AI Suite (NPU)",
        pattern=r"huawei\.com/ascend-(?:310|1980)",
        source=(
            "huaweicloud/huaweicloud-sdk-java-v3 services/modelarts/.../ResourceRequirementVO.java;"
            " volcano-sh/kthena examples/model-serving/prefill-decode-disaggregation.yaml"
        ),
    ),
    AcceleratorResource(
        "huawei.com/Ascend<model>-<N>c...",
        "Huawei",
        SLICE,
        "one virtual NPU of that template (e.g. Ascend910-4c, Ascend310P-2c.1cpu)",
        DEVICE_PLUGIN,
        "Ascend device plugin",
        ("accelerator",),
        pattern=r"huawei\.com/Ascend(?:910|310)[A-Za-z0-9]*-[0-9]+c(?:\.[A-Za-z0-9]+)*",
        source=_ASCEND,
    ),
    AcceleratorResource(
        "huawei.com/Ascend<model>-memory",
        "Huawei",
        MEMORY,
        "1 MiB of NPU memory",
        EXTENDER,
        "HAMi",
        pattern=r"huawei\.com/Ascend(?:910|310)[A-Za-z0-9]*-memory",
        extender="hami",
        source=_HAMI,
    ),
    AcceleratorResource(
        "huawei.com/Ascend<model>-core",
        "Huawei",
        CORES,
        "an NPU compute share",
        EXTENDER,
        "HAMi",
        pattern=r"huawei\.com/Ascend(?:910|310)[A-Za-z0-9]*-core",
        extender="hami",
        source=_HAMI,
    ),
)

#: Pod annotations that request accelerators without a resource.
ANNOTATIONS: tuple[AcceleratorAnnotation, ...] = (
    AcceleratorAnnotation(
        "gpu-fraction",
        "NVIDIA",
        SHARE,
        "a fraction of one GPU (e.g. `0.5`)",
        "KAI Scheduler",
        "NVIDIA/KAI-Scheduler pkg/common/constants/constants.go",
    ),
    AcceleratorAnnotation(
        "gpu-memory",
        "NVIDIA",
        MEMORY,
        "MiB of one GPU's memory",
        "KAI Scheduler",
        "NVIDIA/KAI-Scheduler docs/gpu-sharing/gpu-memory.yaml",
    ),
    AcceleratorAnnotation(
        "gpu-fraction-num-devices",
        "NVIDIA",
        DEVICE,
        "how many GPUs each get `gpu-fraction`",
        "KAI Scheduler",
        "NVIDIA/KAI-Scheduler pkg/common/constants/constants.go",
    ),
)


# Koordinator's GPU percentages as koord-scheduler's DeviceShare plugin validates a pod's total
# request (pkg/scheduler/plugins/deviceshare/utils.go, ValidateDeviceRequest): above 100,
# `koordinator.sh/gpu` must be whole GPUs (a multiple of 100); with `gpu.shared` n, each
# percentage is split evenly over n GPUs, at most 100 on each. Any other amount is refused
# ("invalid resource unit", "invalid resource device requests") and the pod stays Pending.
KOORDINATOR_GPU = "koordinator.sh/gpu"
KOORDINATOR_SHARED = "koordinator.sh/gpu.shared"
KOORDINATOR_SPLIT = ("koordinator.sh/gpu-core", "koordinator.sh/gpu-memory-ratio")


class FormerName(NamedTuple):
    """A resource name a provider once served and has since renamed."""

    name: str  # the name as older manifests and documents write it
    now: str  # the name the provider's current releases serve, of the same unit
    provider: str
    release: str  # the provider's first release that serves `now` instead
    source: str = ""


_KOORDINATOR_RENAME = (
    "koordinator-sh/koordinator apis/extension/deprecated.go (#1025, v1.2.0); "
    "pkg/util/transformer/pod_transformer.go"
)
#: Renamed resources: koord-scheduler still reads Koordinator's `kubernetes.io/` names in a
#: pod as their `koordinator.sh/` names, but since v1.2 koord-manager writes only the new
#: names into node allocatable, and the kubelet admits a pod only for resources its node has.
FORMER_NAMES: tuple[FormerName, ...] = tuple(
    FormerName(
        f"kubernetes.io/{part}",
        f"koordinator.sh/{part}",
        "Koordinator",
        "v1.2",
        _KOORDINATOR_RENAME,
    )
    for part in ("gpu", "gpu-core", "gpu-memory", "gpu-memory-ratio")
)


class ModelNames(NamedTuple):
    """GPU models of one vendor, as users write them in a resource name (`nvidia.com/a100`).

    The vendor's device plugin advertises one resource for every model and writes the model in
    a node label, so a resource named after a model is a request for `resource` on nodes whose
    `label` names that model.
    """

    vendor: str
    domain: str  # the vendor's resource domain
    resource: str  # what the vendor's plugin advertises for a whole device
    label: str  # the node label that names the model
    models: str  # a regular expression for models, lowercased
    gfd_catalogue: bool = False  # also every family of GFD's product catalogue
    source: str = ""


#: GPU models written as resource names under their vendor's domain. The NVIDIA models are the
#: families of GPU Feature Discovery's product catalogue (gpulint.data.gpu_products) and the
#: RTX boards; the AMD models are the Instinct MI series.
MODEL_NAMES: tuple[ModelNames, ...] = (
    ModelNames(
        "NVIDIA",
        "nvidia.com",
        "nvidia.com/gpu",
        "nvidia.com/gpu.product",
        r"(?:quadro|geforce|titan)?[-_.]?rtx[-_.]?a?[0-9]{4}(?:[-_.]?(?:ada|ti|super))*",
        gfd_catalogue=True,
        source="NVIDIA/k8s-device-plugin api/config/v1/config.go (DisableResourceNamingInConfig)",
    ),
    ModelNames(
        "AMD",
        "amd.com",
        "amd.com/gpu",
        "amd.com/gpu.product-name",
        r"mi[0-9]{2,3}[a-z]?",
        source="ROCm/k8s-device-plugin docs/user-guide/configuration.md, labeller docs",
    ),
)

#: Words that make a resource name a network device (NIC, virtual function, RDMA HCA) whatever
#: its domain: the names the NVIDIA and AMD network operators, the RDMA shared device plugin
#: and the SR-IOV network device plugin advertise are chosen by users, under `nvidia.com/`,
#: `amd.com/`, `rdma/` or `openshift.io/` alike (`nvidia.com/rdma_shared_device_a`,
#: `nvidia.com/hostdev`, `nvidia.com/sriov-legacy`, `openshift.io/mlnxnics`, `amd.com/vnic`).
NETWORK_WORDS = frozenset(
    {"nic", "nics", "vnic", "vf", "vfs", "pf", "ib", "efa", "sf", "qsfp", "netdevice"}
)
NETWORK_PREFIXES = ("rdma", "roce", "sriov", "hostdev", "hca", "mlnx", "mellanox", "ipoib")
#: The resource domain of the RDMA shared device plugin's default `resourcePrefix`.
NETWORK_DOMAINS = frozenset({"rdma"})

#: Scheduler extenders a cluster profile may list in `schedulerExtenders`.
EXTENDERS: dict[str, str] = {
    "hami": "HAMi (hami-scheduler with its scheduler extender)",
}
