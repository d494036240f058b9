"""What each platform's API server and built-in webhooks do to a GPU pod, each fact sourced.

A platform is the kind of cluster (`eks`, `gke`, `gke-autopilot`, `aks`, `oke`, `openshift`,
`doks`, `iks`, `kubeadm`, `other`), declared in the profile (`spec.platform`) or recognised from its
nodes and infrastructure code. A fact is on, off or unknown: a fact gpulint cannot source is
*unknown*, never *off*, and a verdict that depends on an unknown fact is a warning naming the
assumption.
docs/platforms.md gives every source in full; the table below names each in short.
"""

from gpulint.views import NamedTuple

#: Every platform a profile may declare.
PLATFORMS = (
    "eks",
    "gke",
    "gke-autopilot",
    "aks",
    "oke",
    "openshift",
    "doks",
    "iks",
    "kubeadm",
    "other",
)

#: The admission facts gpulint models, in the order `profile show` prints them.
EXTENDED_RESOURCE_TOLERATION = "ExtendedResourceToleration"
COMPUTE_CLASS_TOLERATION = "compute-class toleration"
ARM_TOLERATION = "Arm toleration"
AUTOPILOT_GPU_RULES = "Autopilot GPU rules"
AUTOPILOT_RESOURCE_MUTATOR = "Autopilot resource mutator"
POD_TOLERATION_RESTRICTION = "PodTolerationRestriction"
FACTS = (
    EXTENDED_RESOURCE_TOLERATION,
    COMPUTE_CLASS_TOLERATION,
    ARM_TOLERATION,
    AUTOPILOT_GPU_RULES,
    AUTOPILOT_RESOURCE_MUTATOR,
    POD_TOLERATION_RESTRICTION,
)

#: The platforms whose nodes a cloud's node controller labels with their zone and region
#: (topology.kubernetes.io/zone and /region: kubernetes.io/docs/reference/labels-annotations-
#: taints, "the kubelet or the external cloud-controller-manager populates the label"): a pool
#: of a profile that does not state them has them, with values it does not know.
ZONED = frozenset({"eks", "gke", "gke-autopilot", "aks", "oke"})

#: The node label of a GKE compute class, and the taint key of its nodes.
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
#: The well-known architecture label, and the key of the taint GKE gives its Arm nodes.
ARCH_LABEL = "kubernetes.io/arch"

# Sources, in short; docs/platforms.md quotes each.
_EKS_PV = "EKS platform versions (docs.aws.amazon.com/eks/latest/userguide/platform-versions.html)"
_GKE_GPU = (
    "GKE 'Run GPUs in GKE Standard node pools' (cloud.google.com/kubernetes-engine/docs/how-to/"
    "gpus): GKE runs ExtendedResourceToleration for its nvidia.com/gpu taint"
)
_GKE_CCC = (
    "GKE mutates a pod that selects a compute class by nodeSelector or node affinity with the "
    "toleration of its taint (kubernetes-engine-samples autoscaling/custom-compute-classes/vap)"
)
_GKE_ARM = (
    "GKE 'Prepare an Arm workload for deployment' (cloud.google.com/kubernetes-engine/docs/"
    "how-to/prepare-arm-workloads-for-deployment): a pod that selects kubernetes.io/arch=arm64 "
    "by nodeSelector or node affinity is given the toleration of the Arm nodes' taint"
)
_AUTOPILOT = (
    "GKE Warden's autogke-gpu-limitation and autogke-node-affinity-selector-limitation "
    "(quoted in GoogleCloudPlatform/ai-on-gke#983; cloud.google.com/kubernetes-engine/docs/"
    "how-to/autopilot-gpus)"
)
_AUTOPILOT_MUTATOR = (
    "GKE Autopilot's autopilot-default-resources-mutator rewrites a workload's resources "
    "before the API validates it ('Autopilot updated Deployment ...: adjusted resources', "
    "substratusai/helm#8; cloud.google.com/kubernetes-engine/docs/concepts/autopilot-resource-"
    "requests); no GKE page says whether it sets a missing nvidia.com/gpu limit"
)
_OKE = (
    "OKE 'Supported Admission Controllers' (docs.oracle.com/en-us/iaas/Content/ContEng/"
    "Reference/contengadmissioncontrollers.htm): on in every listed version"
)
_DOKS = (
    "DOKS taints NVIDIA GPU nodes nvidia.com/gpu:NoSchedule (docs.digitalocean.com/products/"
    "kubernetes/details/managed) and GPU pods without its toleration stay Pending with "
    "`untolerated taint {nvidia.com/gpu: }` (llm-d/llm-d docs/infra-providers/digitalocean/"
    "TROUBLESHOOTING.md, on DOKS 1.33): the API server does not add it"
)
_IKS = (
    "IBM Cloud Kubernetes Service 'Default service settings for Kubernetes components' "
    "(cloud.ibm.com/docs/containers?topic=containers-service-settings): the kube-apiserver's "
    "admission controllers are listed, and ExtendedResourceToleration is not among them"
)
_IKS_PTR = (
    "IBM Cloud Kubernetes Service 'Default service settings for Kubernetes components' "
    "(cloud.ibm.com/docs/containers?topic=containers-service-settings): the kube-apiserver's "
    "admission controllers are listed, and PodTolerationRestriction is not among them"
)
_UPSTREAM = (
    "kube-apiserver's default plugins leave ExtendedResourceToleration off (kubernetes.io/docs/"
    "reference/access-authn-authz/admission-controllers), and kubeadm adds only NodeRestriction"
)
_AKS_UNKNOWN = (
    "no AKS page lists its admission plugins; Azure/AKS#1449 (the request for it) was closed "
    "as shipped without saying for which versions"
)
_OPENSHIFT_UNKNOWN = "no OpenShift page found that lists ExtendedResourceToleration"
_EKS_LISTED = (
    "EKS platform versions (docs.aws.amazon.com/eks/latest/userguide/platform-versions.html): "
    "not among the admission controllers every platform version enables, and no cluster can "
    "enable others (aws/containers-roadmap#739 asks for a way)"
)
_OPENSHIFT_PTR = (
    "OpenShift 'Controlling pod placement using node taints' (docs.openshift.com/container-"
    "platform/latest/nodes/scheduling/nodes-scheduler-taints-tolerations.html): a project's "
    "`scheduler.alpha.kubernetes.io/defaultTolerations` annotation gives its pods tolerations"
)
_UPSTREAM_OPTIONAL = (
    "kube-apiserver leaves PodTolerationRestriction off by default (kubernetes.io/docs/"
    "reference/access-authn-authz/admission-controllers), and a kubeadm cluster may turn it on "
    "(--enable-admission-plugins)"
)
_PTR_UNLISTED = "no page of the platform found that says whether it runs PodTolerationRestriction"
_GKE_ONLY = "a GKE webhook: no other platform runs it"
_AUTOPILOT_ONLY = "GKE Warden's Autopilot constraints run only on Autopilot clusters"
_STANDARD = "GKE Standard has no Autopilot constraints"
_AUTOPILOT_WEBHOOK = "an Autopilot webhook: it runs only on Autopilot clusters"


class AdmissionFact(NamedTuple):
    """One thing the API server may do to a pod: on (True), off (False) or unknown (None)."""

    name: str
    state: bool | None
    source: str  # where the fact comes from, or why it is unknown

    @property
    def shown(self) -> str:
        """`on`, `off` or `unknown`."""
        return {True: "on", False: "off", None: "unknown"}[self.state]


_TABLE: dict[str, dict[str, tuple[bool | None, str]]] = {
    "eks": {
        EXTENDED_RESOURCE_TOLERATION: (True, _EKS_PV),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (False, _EKS_LISTED),
    },
    "gke": {
        EXTENDED_RESOURCE_TOLERATION: (True, _GKE_GPU),
        COMPUTE_CLASS_TOLERATION: (True, _GKE_CCC),
        ARM_TOLERATION: (True, _GKE_ARM),
        AUTOPILOT_GPU_RULES: (False, _STANDARD),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (None, _PTR_UNLISTED),
    },
    "gke-autopilot": {
        EXTENDED_RESOURCE_TOLERATION: (True, _GKE_GPU),
        COMPUTE_CLASS_TOLERATION: (True, _GKE_CCC),
        ARM_TOLERATION: (True, _GKE_ARM),
        AUTOPILOT_GPU_RULES: (True, _AUTOPILOT),
        AUTOPILOT_RESOURCE_MUTATOR: (True, _AUTOPILOT_MUTATOR),
        POD_TOLERATION_RESTRICTION: (None, _PTR_UNLISTED),
    },
    "aks": {
        EXTENDED_RESOURCE_TOLERATION: (None, _AKS_UNKNOWN),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (None, _PTR_UNLISTED),
    },
    "oke": {
        EXTENDED_RESOURCE_TOLERATION: (True, _OKE),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (None, _PTR_UNLISTED),
    },
    "openshift": {
        EXTENDED_RESOURCE_TOLERATION: (None, _OPENSHIFT_UNKNOWN),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (True, _OPENSHIFT_PTR),
    },
    "doks": {
        EXTENDED_RESOURCE_TOLERATION: (False, _DOKS),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (None, _PTR_UNLISTED),
    },
    "iks": {
        EXTENDED_RESOURCE_TOLERATION: (False, _IKS),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (False, _IKS_PTR),
    },
    "kubeadm": {
        EXTENDED_RESOURCE_TOLERATION: (False, _UPSTREAM),
        COMPUTE_CLASS_TOLERATION: (False, _GKE_ONLY),
        ARM_TOLERATION: (False, _GKE_ONLY),
        AUTOPILOT_GPU_RULES: (False, _AUTOPILOT_ONLY),
        AUTOPILOT_RESOURCE_MUTATOR: (False, _AUTOPILOT_WEBHOOK),
        POD_TOLERATION_RESTRICTION: (None, _UPSTREAM_OPTIONAL),
    },
}
_UNKNOWN_PLATFORM = "nothing recognised the platform; declare spec.platform in the profile"
_OTHER_PLATFORM = "platform `other`: gpulint knows nothing of its admission plugins"

#: The profile line that makes a fact certain.
DECLARE_PLATFORM = "spec.platform: <eks|gke|gke-autopilot|aks|oke|openshift|doks|iks|kubeadm>"


def platform_fact(platform: str | None, name: str, declared: bool | None = None) -> AdmissionFact:
    """The fact `name` on `platform` (None: unknown); `declared` overrides the table."""
    if declared is not None:
        return AdmissionFact(name, declared, "declared in the profile (spec.admission)")
    if platform is None:
        return AdmissionFact(name, None, _UNKNOWN_PLATFORM)
    state, source = _TABLE.get(platform, {}).get(name, (None, _OTHER_PLATFORM))
    return AdmissionFact(name, state, source)


def is_gke(platform: str | None) -> bool:
    """Whether the platform is GKE, Standard or Autopilot."""
    return platform in ("gke", "gke-autopilot")
