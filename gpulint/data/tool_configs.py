"""Files that have `apiVersion` and `kind` but are read by a local tool, never by an API server.

Each entry is an API group (the part of `apiVersion` before `/`) with the tool that reads it
and the kinds it is known to use; any kind of a listed group is skipped, since tools add kinds
over time, except in a group that also serves API objects, where only the listed kinds are.
docs/robustness.md lists the same table for users.
"""

from gpulint.views import NamedTuple


class ToolConfig(NamedTuple):
    """One API group that only a local tool reads."""

    group: str  # `apiVersion` before the `/`, or the whole `apiVersion` when it has none
    tool: str
    kinds: tuple[str, ...]  # the kinds the tool documents, for the docs
    # False: the group also holds API objects (CRDs), and only `kinds` are the tool's.
    whole_group: bool = True


TOOL_CONFIGS: tuple[ToolConfig, ...] = (
    ToolConfig("kind.x-k8s.io", "kind", ("Cluster",)),
    ToolConfig("k3d.io", "k3d", ("Simple", "Cluster")),
    ToolConfig("ctlptl.dev", "ctlptl", ("Cluster", "Registry")),
    ToolConfig("eksctl.io", "eksctl", ("ClusterConfig",)),
    ToolConfig("kustomize.config.k8s.io", "kustomize", ("Kustomization", "Component")),
    ToolConfig("builtin", "kustomize built-in plugins", ("PatchTransformer", "LabelTransformer")),
    ToolConfig("config.kubernetes.io", "kustomize and kpt functions", ("ResourceList",)),
    ToolConfig("kpt.dev", "kpt", ("Kptfile",)),
    ToolConfig("fn.kpt.dev", "kpt functions", ("SetNamespace", "ApplyReplacements")),
    ToolConfig("skaffold", "skaffold", ("Config",)),
    ToolConfig("garden.io", "Garden", ("Project", "Deploy", "Build")),
    ToolConfig("kuttl.dev", "KUTTL", ("TestSuite", "TestStep", "TestAssert")),
    ToolConfig("chainsaw.kyverno.io", "Chainsaw", ("Test", "Configuration")),
    ToolConfig("cli.kyverno.io", "Kyverno CLI", ("Test", "Values")),
    ToolConfig("clusterctl.cluster.x-k8s.io", "clusterctl", ("Metadata", "Provider")),
    ToolConfig("k0sctl.k0sproject.io", "k0sctl", ("Cluster",)),
    ToolConfig("config.kwok.x-k8s.io", "kwokctl", ("KwokctlConfiguration", "KwokConfiguration")),
    ToolConfig("krew.googlecontainertools.github.com", "krew plugin index", ("Plugin",)),
    # Armada's queues and retry policies, which armadactl sends to Armada's own API
    # (armadaproject/armada pkg/client/resource.go); its operator's CRDs are in
    # `install.armadaproject.io`.
    ToolConfig("armadaproject.io", "armadactl", ("Queue", "RetryPolicy")),
    ToolConfig("kubeadm.k8s.io", "kubeadm", ("InitConfiguration", "ClusterConfiguration")),
    ToolConfig("audit.k8s.io", "kube-apiserver audit policy file", ("Policy",)),
    ToolConfig(
        "clientauthentication.k8s.io", "kubectl exec credential plugins", ("ExecCredential",)
    ),
    # Types with no ObjectMeta, read from a file or flag (apix/config/v1alpha1), in the group
    # of the InferenceObjective CRD.
    ToolConfig(
        "inference.networking.x-k8s.io",
        "the inference gateway's endpoint picker",
        ("EndpointPickerConfig",),
        whole_group=False,
    ),
    # The report a conformance run writes (conformance/apis/v1), in the group of Gateway.
    ToolConfig(
        "gateway.networking.k8s.io",
        "Gateway API conformance reports",
        ("ConformanceReport",),
        whole_group=False,
    ),
)
_GROUPS = frozenset(entry.group for entry in TOOL_CONFIGS if entry.whole_group)
_KINDS = frozenset(
    (entry.group, kind) for entry in TOOL_CONFIGS if not entry.whole_group for kind in entry.kinds
)
# Component configuration read from a file by kubelet, kube-proxy, kube-scheduler, the API server
# (`kubelet.config.k8s.io`, `apiserver.config.k8s.io`, ...) share this group suffix.
_COMPONENT_CONFIG_SUFFIX = ".config.k8s.io"


def is_tool_config(api_version: str, kind: str) -> bool:
    """True when `apiVersion`/`kind` name a tool's local configuration, not an API object."""
    group = api_version.partition("/")[0] if "/" in api_version else api_version
    if group in _GROUPS or group.endswith(_COMPONENT_CONFIG_SUFFIX) or (group, kind) in _KINDS:
        return True
    # A kubeconfig file: `apiVersion: v1`, `kind: Config` (the core group has no such kind).
    return api_version == "v1" and kind == "Config"
