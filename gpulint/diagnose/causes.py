"""The causes `gpulint diagnose` names, and the message patterns that point at each: data.

Each cause has a stable slug (the JSON `cause`), the gpulint rule that catches it before
merge, the command that confirms it and the fix. Templates are filled from the facts of one
stuck pod (`{namespace}`, `{pod}`, `{resource}` ...); see `Facts` in gpulint.diagnose.classify.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """A documented reason a GPU pod stays Pending."""

    slug: str
    title: str
    rule: str | None  # the gpulint rule that reports it before merge
    confirm: str
    fix: str


CAUSES: tuple[Cause, ...] = (
    Cause(
        "resource-not-advertised",
        "the requested resource name is advertised by no node",
        "GPU001",
        "kubectl get nodes -o custom-columns='NAME:.metadata.name,ALLOCATABLE:.status.allocatable'",
        "Request a resource name the nodes advertise{suggestion}; names must match the device "
        "plugin's character for character.",
    ),
    Cause(
        "insufficient-gpu",
        "every node that may run the pod lacks free {resource}",
        "GPU201",
        "kubectl describe nodes | grep -E '^Name:|{resource}'",
        "Wait for running GPU pods to finish, lower replicas or per-pod {resource}, or add "
        "capacity to the pool (raise its size or let the autoscaler scale it).",
    ),
    Cause(
        "pool-at-max-size",
        "the autoscaler will not add a node for the pod",
        "GPU201",
        "kubectl get events -n {namespace} --field-selector "
        "involvedObject.name={pod},reason=NotTriggerScaleUp; "
        "kubectl -n kube-system get configmap cluster-autoscaler-status -o yaml",
        "Raise the maximum size{pools} (the node group's, or the NodePool's limits) and the "
        "cloud account's instance quota, or lower the number of GPU pods running at once.",
    ),
    Cause(
        "node-selector-mismatch",
        "the pod's nodeSelector or required node affinity matches no node that can run it",
        "GPU101",
        "kubectl get pod {pod} -n {namespace} -o jsonpath='{{.spec.nodeSelector}} "
        "{{.spec.affinity.nodeAffinity}}'; kubectl get nodes --show-labels",
        "Select the GPU pool by a label its nodes carry{selector_note}, or make the choice "
        "preferredDuringSchedulingIgnoredDuringExecution; if the pool is scaled to zero, let "
        "the autoscaler scale it from zero.",
    ),
    Cause(
        "untolerated-taint",
        "the GPU nodes carry a taint the pod does not tolerate",
        "GPU102",
        "kubectl get nodes -o custom-columns='NAME:.metadata.name,TAINTS:.spec.taints'",
        "Add the toleration to the pod template (not: remove the taint, which lets every pod "
        "onto the GPU nodes):\n{toleration}",
    ),
    Cause(
        "anti-affinity",
        "pod anti-affinity or spread constraints leave no node with room",
        "GPU106",
        "kubectl get pod {pod} -n {namespace} -o jsonpath='{{.spec.affinity}} "
        "{{.spec.topologySpreadConstraints}}'",
        "Lower replicas to the number of GPU nodes, add nodes to the pool, or make the "
        "anti-affinity preferredDuringSchedulingIgnoredDuringExecution.",
    ),
    Cause(
        "quota-exceeded",
        "the namespace ResourceQuota refuses the pod",
        "GPU301",
        "kubectl describe resourcequota{quota_arg} -n {namespace}",
        "Raise the quota's hard limit, free quota by deleting finished pods, or lower the "
        "workload's requests; pods refused while the quota was full are retried by their "
        "controller, or recreate them.",
    ),
    Cause(
        "limitrange-rejected",
        "the namespace LimitRange refuses the pod",
        "GPU303",
        "kubectl get limitrange -n {namespace} -o yaml",
        "Set the container's {resource} request and limit within the LimitRange's min/max, or "
        "fix the LimitRange (a GPU default must set both default and defaultRequest).",
    ),
    Cause(
        "unknown-priority-class",
        "the pod names a PriorityClass the cluster does not have",
        "GPU401",
        "kubectl get priorityclasses",
        "Create PriorityClass {priority_class} or set priorityClassName to one that exists.",
    ),
    Cause(
        "unknown-runtime-class",
        "the pod names a RuntimeClass the cluster does not have",
        "GPU307",
        "kubectl get runtimeclasses",
        "Create RuntimeClass {runtime_class} or set runtimeClassName to one that exists (the "
        "GPU Operator creates `nvidia`, or the name its operator.runtimeClass value gives).",
    ),
    Cause(
        "device-plugin-not-ready",
        "GPU nodes show the GPUs in capacity but the device plugin is not serving them",
        "GPU503",
        "kubectl get nodes -o custom-columns='NAME:.metadata.name,"
        "CAPACITY:.status.capacity.{resource_path},"
        "ALLOCATABLE:.status.allocatable.{resource_path}'; "
        "kubectl get pods -A -o wide | grep -i device-plugin",
        "Make the device plugin DaemonSet run on the GPU nodes (tolerations, node selector, "
        "driver): read its pod logs and restart it; allocatable returns when it re-registers.",
    ),
    Cause(
        "kueue-inadmissible",
        "Kueue has not admitted the workload, so it stays suspended and creates no pod",
        "GPU310",
        "kubectl get workloads -n {namespace}; kubectl describe clusterqueue {cluster_queue}",
        "Give ClusterQueue {cluster_queue} quota for {resource}{flavor_note} (raise its "
        "nominalQuota, or let it borrow in a cohort), lower the job's GPU request, or label the "
        "job with a queue that has the quota; Kueue unsuspends the job once its Workload is "
        "admitted.",
    ),
    Cause(
        "resource-claim-unallocatable",
        "no node can give the devices the pod's DRA claims request",
        "GPU704",
        "kubectl get resourceclaims -n {namespace}; kubectl get resourceslices -o wide",
        "Ask for at most the devices one node publishes{offer_note}, free devices other claims "
        "hold (kubectl get resourceclaims -A), or add nodes whose DRA driver publishes the "
        "class; check that the driver's kubelet plugin runs on the GPU nodes.",
    ),
    Cause(
        "resource-claim-missing",
        "the ResourceClaim or ResourceClaimTemplate the pod names does not exist",
        "GPU702",
        "kubectl get resourceclaimtemplates,resourceclaims -n {namespace}; kubectl get events "
        "-n {namespace} --field-selector involvedObject.name={pod}",
        "Create {claim_ref} in namespace {namespace}, or name one that exists in the pod "
        "template's resourceClaims; a pod whose claim could not be made from a template is not "
        "retried: delete it so its controller creates it again.",
    ),
    Cause(
        "scheduling-gated",
        "the pod carries schedulingGates, so the scheduler does not try it yet",
        None,
        "kubectl get pod {pod} -n {namespace} -o jsonpath='{{.spec.schedulingGates}}'",
        "The controller that added the gates ({gates}) removes them when it admits the pod, "
        "e.g. Kueue once the queue has quota; check that controller.",
    ),
    Cause(
        "cuda-driver-mismatch",
        "the pod started and failed at its first CUDA call: its image's CUDA and the node's "
        "driver or GPU do not go together",
        "GPU801",
        "kubectl logs {pod} -n {namespace} -c {container} --previous; kubectl get node {node} "
        "-L nvidia.com/cuda.driver-version.full -L nvidia.com/gpu.product",
        "{cuda_fix}",
    ),
    Cause(
        "no-events",
        "no scheduler has reported on the pod",
        None,
        "kubectl get events -n {namespace} --field-selector involvedObject.name={pod}; "
        "kubectl get pod {pod} -n {namespace} -o jsonpath='{{.spec.schedulerName}}'",
        "{no_events_fix}",
    ),
    Cause(
        "unclassified",
        "the events are in a format gpulint does not know",
        None,
        "kubectl describe {describe} -n {namespace}",
        "Read the event text in the evidence; if it is a scheduler message, report its format "
        "to gpulint.",
    ),
)
CAUSE_BY_SLUG: dict[str, Cause] = {cause.slug: cause for cause in CAUSES}

#: The scheduler's per-node reasons (reference section 5.1) -> cause, most specific first.
#: `key`/`value` groups capture the taint when the release prints it; `resource` the resource.
_TAINT = r"\{(?P<key>[^:}]*):? ?(?P<value>[^}]*)\}"
_UNTOLERATED, _MISMATCH = "untolerated-taint", "node-selector-mismatch"
_UNALLOCATABLE = "resource-claim-unallocatable"
#: A claim the scheduler cannot find (PreEnqueue/PreFilter), or the claim controller could not
#: make from a template (`FailedResourceClaimCreation` on the pod).
CLAIM_MISSING = re.compile(
    r"ResourceClaim not created yet|resourceclaim(?:template)?s?(?:\.resource\.k8s\.io)? "
    r"\"[^\"]*\" not found|resource claim template \"[^\"]*\"",
    re.IGNORECASE,
)
SCHEDULER_REASONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), slug)
    for pattern, slug in (
        (r"Insufficient (?P<resource>\S+)", "insufficient-gpu"),
        (r"Too many pods", "insufficient-gpu"),
        # 1.24-1.34: `node(s) had untolerated taint {key: value}`
        (rf"node\(s\) had untolerated taint {_TAINT}", _UNTOLERATED),
        # 1.18-1.23: `node(s) had taint {key: value}, that the pod didn't tolerate`
        (rf"node\(s\) had taint {_TAINT}, that the pod didn't tolerate", _UNTOLERATED),
        # 1.35+ and late 1.34 patches, and <=1.17: the taint is not named
        (r"node\(s\) had untolerated taint\(s\)", _UNTOLERATED),
        (r"node\(s\) had taints that the pod didn't tolerate", _UNTOLERATED),
        (
            r"node\(s\) didn't match (?:Pod's )?node (?:affinity/selector|selector|affinity)",
            _MISMATCH,
        ),
        (r"node\(s\) didn't match scheduler-enforced node affinity", _MISMATCH),
        (r"pod affinity terms conflict", _MISMATCH),
        (r"node\(s\) didn't match pod anti-affinity rules", "anti-affinity"),
        (r"node\(s\) didn't satisfy existing pods anti-affinity rules", "anti-affinity"),
        (r"node\(s\) didn't match pod affinity/anti-affinity", "anti-affinity"),
        (r"node\(s\) didn't match pod affinity rules", "anti-affinity"),
        (r"node\(s\) didn't match pod topology spread constraints", "anti-affinity"),
        # DynamicResources: the nodes passed the other filters but cannot give the devices.
        (r"cannot allocate all claims", _UNALLOCATABLE),
        (r"resourceclaim (?:in use|not available on the node|must be reallocated)", _UNALLOCATABLE),
        (r"unallocated immediate resourceclaim", _UNALLOCATABLE),
    )
)

#: Admission and validation refusals of a pod create (reference section 5.2) -> cause.
REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE if slug == "limitrange-rejected" else 0), slug)
    for pattern, slug in (
        (r"exceeded quota: (?P<quota>[^,]+)", "quota-exceeded"),
        (r"failed quota: (?P<quota>[^:]+): must specify", "quota-exceeded"),
        (r"status unknown for quota: (?P<quota>[^,]+)", "quota-exceeded"),
        (r"insufficient quota to (?:consume|match these scopes)", "quota-exceeded"),
        (r"no PriorityClass with name (?P<priority_class>\S+) was found", "unknown-priority-class"),
        (
            r'pod rejected: RuntimeClass "(?P<runtime_class>[^"]+)" not found',
            "unknown-runtime-class",
        ),
        (r"maximum \S+ usage per (?:Container|Pod) is", "limitrange-rejected"),
        (r"minimum \S+ usage per (?:Container|Pod) is", "limitrange-rejected"),
        (r"max limit to request ratio per (?:Container|Pod)", "limitrange-rejected"),
        # a LimitRange defaultRequest without default: the pod fails validation afterwards
        (r"Limit must be set for non overcommitable resources", "limitrange-rejected"),
    )
)

#: cluster-autoscaler NotTriggerScaleUp reasons and Karpenter messages meaning "no new node".
NO_SCALE_UP = re.compile(
    r"max node group size reached|in backoff after failed scale-up|wouldn't fit if a new node"
    r"|exceed limits for nodepool|node limits have been exhausted|max cluster \S+ limit reached"
)
