"""Read a live cluster into the ClusterProfile the static path uses.

One paginated list per resource. Nodes, ResourceQuotas, LimitRanges, PriorityClasses, Kueue's
ClusterQueues and LocalQueues and the DRA objects (DeviceClasses, ResourceSlices,
ResourceClaims, ResourceClaimTemplates) go through the same conversion as a `kubectl get ...
-o yaml` dump (gpulint.profile.kubectl); what only a live cluster tells, the GPUs already
requested on each pool's nodes and by which workload, and the Karpenter NodePools, is joined
on top. Add-ons (Karpenter, Kueue) and DRA are optional: an API group the server does not
serve means none of their objects, and a role that may not read them costs a note, not the
run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import partial
from typing import Any

from gpulint.live.client import AccessDenied, KubeClient, path_segment
from gpulint.live.karpenter import facts_from_nodepools
from gpulint.pods import pod_extended_requests, pod_owner
from gpulint.profile.kubectl import facts_from_objects
from gpulint.profile.merge import merge
from gpulint.profile.model import ClusterProfile, GpuUser, Pool
from gpulint.profile.nodes import NodeView, pool_names
from gpulint.validation.apiversions import release
from gpulint.views import NamedTuple

# Pods that hold node resources: bound ones that have not finished. Pending pods already bound
# to a node count too; unbound ones hold nothing yet and are skipped client-side.
ACTIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass(frozen=True)
class ListCall:
    """One resource live mode lists, cluster-wide: where, and how RBAC names it."""

    group: str
    resource: str
    path: str
    query: tuple[tuple[str, str], ...] = ()
    optional: bool = False  # a CRD that may not be installed: 404 means "none"

    @property
    def what(self) -> str:
        """`priorityclasses.scheduling.k8s.io`, as RBAC and kubectl name it."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


NODES = ListCall("", "nodes", "/api/v1/nodes")
PODS = ListCall("", "pods", "/api/v1/pods", (("fieldSelector", ACTIVE_PODS),))
QUOTAS = ListCall("", "resourcequotas", "/api/v1/resourcequotas")
LIMIT_RANGES = ListCall("", "limitranges", "/api/v1/limitranges")
PRIORITY_CLASSES = ListCall(
    "scheduling.k8s.io", "priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses"
)
#: Every RuntimeClass: read on its own, as a denial or an old server costs only GPU307.
RUNTIME_CLASSES = ListCall(
    "node.k8s.io", "runtimeclasses", "/apis/node.k8s.io/v1/runtimeclasses", optional=True
)
#: What live mode reads of every cluster, in order; then the ADD_ONS.
READS: tuple[ListCall, ...] = (NODES, PODS, QUOTAS, LIMIT_RANGES, PRIORITY_CLASSES)


@dataclass(frozen=True)
class AddOn:
    """The custom resources of an add-on a cluster may run: read all together, or none."""

    title: str  # names them in the note when RBAC denies them
    unread: str  # what is not checked without them
    group: str
    resources: tuple[str, ...]
    version: str | None = None  # None: the version the server prefers (one discovery request)

    def calls(self, version: str) -> tuple[ListCall, ...]:
        """The list of each resource, at `version` of the group."""
        return tuple(
            ListCall(self.group, name, f"/apis/{self.group}/{version}/{name}", optional=True)
            for name in self.resources
        )


KARPENTER = AddOn(
    "Karpenter NodePools", "pools with no nodes are unknown", "karpenter.sh", ("nodepools",), "v1"
)
# Kueue serves v1beta2 from 0.15 on and v1beta1 only before 0.20, so the version a cluster
# has depends on its release (Karpenter's NodePool has been v1 since 1.0); both versions
# carry the fields gpulint reads.
KUEUE = AddOn(
    "Kueue ClusterQueues and LocalQueues",
    "GPU310 checks no queue",
    "kueue.x-k8s.io",
    ("clusterqueues", "localqueues"),
)
#: The add-ons live mode reads after READS, in order; docs/rbac.yaml grants all of these.
ADD_ONS: tuple[AddOn, ...] = (KARPENTER, KUEUE)


@dataclass(frozen=True)
class DraResource:
    """One DRA resource live mode lists, and what is not checked when RBAC denies it."""

    resource: str
    title: str
    unread: str


DRA_GROUP = "resource.k8s.io"
# Read at the version the server prefers: `v1` from Kubernetes 1.34, a beta before (whose
# shapes gpulint.dra reads too). Unlike an add-on's, each resource counts on its own: the
# DeviceClasses alone already say which extended resources DRA serves.
DRA_RESOURCES: tuple[DraResource, ...] = (
    DraResource(
        "deviceclasses",
        "DRA DeviceClasses",
        "extended resources DRA serves are unknown and GPU703 checks no class",
    ),
    DraResource("resourceslices", "DRA ResourceSlices", "GPU704 checks no device count"),
    DraResource(
        "resourceclaims", "DRA ResourceClaims", "GPU702 checks only the claims of the inputs"
    ),
    DraResource(
        "resourceclaimtemplates",
        "DRA ResourceClaimTemplates",
        "GPU702 checks only the templates of the inputs",
    ),
)


@dataclass(frozen=True)
class DraReads:
    """The DRA resources a command reads, and what goes unchecked when discovery is denied."""

    resources: tuple[DraResource, ...]
    unread: str


CHECK_DRA = DraReads(DRA_RESOURCES, "GPU702-GPU705 check the inputs only")
#: Claims and templates are namespaced: with namespaced RBAC they are listed per namespace.
DRA_NAMESPACED = frozenset({"resourceclaims", "resourceclaimtemplates"})


class PodUse(NamedTuple):
    """What live mode reads of a pod: the node it is bound to, its workload (namespace, kind,
    name, as `pod_owner` names it) and its extended requests."""

    node: str
    owner: tuple[str, str, str]
    requests: dict[str, Decimal]


def pod_use(
    pod: Mapping[str, Any], memo: dict[str, dict[str, Decimal]] | None = None
) -> PodUse | None:
    """The PodUse of a pod from the API; None when it requests no extended resource.

    `memo` (one per read) keeps the requests of each pod spec already converted."""
    requests = pod_extended_requests(pod, memo)
    if not requests:
        return None
    spec = pod.get("spec")
    node = str((spec if isinstance(spec, Mapping) else {}).get("nodeName") or "")
    return PodUse(node, pod_owner(pod), requests)


@dataclass(frozen=True)
class ClusterObjects:
    """What the API returned, as plain dicts; `nodepools` is None when Karpenter is absent."""

    nodes: tuple[dict[str, Any], ...]
    pods: tuple[dict[str, Any], ...]  # whole, when asked for (diagnose); else empty
    policies: tuple[dict[str, Any], ...]  # ResourceQuotas, LimitRanges, PriorityClasses
    nodepools: tuple[dict[str, Any], ...] | None
    queues: tuple[dict[str, Any], ...] = ()  # Kueue ClusterQueues and LocalQueues
    notes: tuple[str, ...] = ()  # add-ons RBAC kept from being read
    dra: tuple[dict[str, Any], ...] = ()  # DeviceClasses, ResourceSlices, claims, templates
    # API group -> the version read, for the groups discovery was asked about and serves
    versions: Mapping[str, str] = field(default_factory=dict)
    server_version: str | None = None  # the API server's own (`GET /version`), when it says
    uses: tuple[PodUse, ...] = ()  # of the active pods that request extended resources
    # Every RuntimeClass; None when they could not be read (the set is then unknown).
    runtime_classes: tuple[dict[str, Any], ...] | None = None


#: List calls made at once: each waits mostly on the server, which pages the others meanwhile.
LIST_THREADS = 8


def read_cluster(
    client: KubeClient,
    dra: DraReads = CHECK_DRA,
    whole: bool = False,
    with_version: bool = False,
) -> ClusterObjects:
    """List every resource of READS, ADD_ONS and `dra` once (paginated), the lists in
    parallel; with `with_version`, the server's release too.

    Unless `whole` (a diagnosis reads nodes and pods as a dump's objects), only the fields
    the profile reads of the nodes and pods are decoded (gpulint.live.slim), and of the pods
    only their PodUse is kept, page by page. A failure is the one of the first read in that
    order that failed, however the threads ran.
    """
    from concurrent.futures import ThreadPoolExecutor

    memo: dict[str, dict[str, Decimal]] = {}  # used by the one thread that lists the pods
    decoders = {} if whole else _slim_decoders()

    def list_of(call: ListCall) -> tuple[Any, ...]:
        pick = partial(pod_use, memo=memo) if call is PODS and not whole else None
        decode = decoders.get(call.resource)
        items = client.list_all(call.path, call.what, call.query, pick=pick, decode=decode)
        return tuple(items or ())

    with ThreadPoolExecutor(LIST_THREADS, thread_name_prefix="gpulint-list") as pool:
        lists = [pool.submit(list_of, call) for call in READS]
        # Each read records the version discovery named in a dict of its own, merged in order.
        found_versions: list[dict[str, str]] = [{} for _ in range(len(ADD_ONS) + 1)]
        add_on_reads = [
            pool.submit(read_add_on, client, add_on, seen)
            for add_on, seen in zip(ADD_ONS, found_versions, strict=False)
        ]
        dra_read = pool.submit(read_dra, client, dra, found_versions[-1])
        runtime_read = pool.submit(read_runtime_classes, client)
        version = pool.submit(server_version, client) if with_version else None
        found = dict(zip(READS, (f.result() for f in lists), strict=True))
        add_ons = {add_on: f.result() for add_on, f in zip(ADD_ONS, add_on_reads, strict=True)}
        dra_objects, dra_notes = dra_read.result()
        runtime_classes, runtime_note = runtime_read.result()
        said_version = version.result() if version is not None else None
    versions = {k: v for seen in found_versions for k, v in seen.items()}
    pods = found[PODS]
    return ClusterObjects(
        nodes=found[NODES],
        pods=pods if whole else (),
        policies=(*found[QUOTAS], *found[LIMIT_RANGES], *found[PRIORITY_CLASSES]),
        nodepools=add_ons[KARPENTER][0],
        queues=add_ons[KUEUE][0] or (),
        notes=(
            *(note for _, note in add_ons.values() if note),
            *dra_notes,
            *((runtime_note,) if runtime_note else ()),
        ),
        dra=dra_objects,
        runtime_classes=runtime_classes,
        versions=versions,
        server_version=said_version,
        uses=tuple(u for p in pods if (u := pod_use(p, memo))) if whole else pods,
    )


def _slim_decoders() -> dict[str, Callable[[bytes], dict[str, Any] | None]]:
    """The decoders of gpulint.live.slim by resource; none without msgspec (pages are then
    decoded whole)."""
    try:
        from gpulint.live.slim import page_decoder
    except ImportError as exc:
        if exc.name != "msgspec":
            raise
        return {}
    return {NODES.resource: page_decoder("Node"), PODS.resource: page_decoder("Pod")}


def server_version(client: KubeClient) -> str | None:
    """The API server's release (`v1.31.4-eks-0a21954`, its gitVersion, else major.minor);
    None when `/version` is refused or says none."""
    response = client.request("GET", "/version")
    if response.status != 200:
        return None
    body = response.body
    git = body.get("gitVersion")
    if isinstance(git, str) and release(git) is not None:
        return git
    major, minor = body.get("major"), body.get("minor")
    said = f"{major}.{minor}" if isinstance(major, str) and isinstance(minor, str) else ""
    return said if release(said) is not None else None


def read_add_on(
    client: KubeClient, add_on: AddOn, versions: dict[str, str] | None = None
) -> tuple[tuple[dict[str, Any], ...] | None, str | None]:
    """The add-on's objects, None when it is not installed; and a note when RBAC denies them.

    Only all of its resources together mean something (a LocalQueue without its ClusterQueue
    would look like a missing queue), so a denial of any of them drops them all. The version
    discovery names is recorded in `versions`.
    """
    try:
        version = add_on.version or client.preferred_version(add_on.group)
        if version is None:
            return None, None
        if versions is not None and add_on.version is None:
            versions[add_on.group] = version
        objects: list[dict[str, Any]] = []
        for call in add_on.calls(version):
            items = client.list_all(call.path, call.what, call.query, call.optional)
            if items is None:
                return None, None
            objects += items
    except AccessDenied as denied:
        return None, f"{add_on.title} not read ({add_on.unread}): {denied}"
    return tuple(objects), None


def read_runtime_classes(
    client: KubeClient,
) -> tuple[tuple[dict[str, Any], ...] | None, str | None]:
    """Every RuntimeClass (None: the server serves no node.k8s.io/v1, before Kubernetes 1.20),
    and a note when RBAC denies them."""
    call = RUNTIME_CLASSES
    try:
        items = client.list_all(call.path, call.what, call.query, call.optional)
    except AccessDenied as denied:
        return None, f"RuntimeClasses not read (GPU307 checks no runtimeClassName): {denied}"
    return (None if items is None else tuple(items)), None


def read_dra(
    client: KubeClient,
    dra: DraReads = CHECK_DRA,
    versions: dict[str, str] | None = None,
    namespaces: Sequence[str] = (),
) -> tuple[tuple[dict[str, Any], ...], tuple[str, ...]]:
    """The DRA objects of `dra`, and a note per resource RBAC denies.

    Cluster-wide, or with `namespaces` the namespaced resources in those only. A cluster that
    does not serve `resource.k8s.io` (before Kubernetes 1.34 unless a beta is enabled) has no
    DRA objects: nothing is read and nothing is said.
    """
    try:
        version = client.preferred_version(DRA_GROUP)
    except AccessDenied as denied:
        return (), (f"DRA objects not read ({dra.unread}): {denied}",)
    if version is None:
        return (), ()
    if versions is not None:
        versions[DRA_GROUP] = version
    objects: list[dict[str, Any]] = []
    notes: list[str] = []
    for resource in dra.resources:
        scopes = namespaces if namespaces and resource.resource in DRA_NAMESPACED else (None,)
        try:
            for namespace in scopes:
                call = dra_call(resource.resource, version, namespace)
                objects += client.list_all(call.path, call.what, call.query, call.optional) or ()
        except AccessDenied as denied:
            notes.append(f"{resource.title} not read ({resource.unread}): {denied}")
    return tuple(objects), tuple(notes)


def dra_call(resource: str, version: str, namespace: str | None = None) -> ListCall:
    """The list of DRA `resource` at `version`, cluster-wide or in `namespace`."""
    where = f"namespaces/{path_segment(namespace)}/" if namespace else ""
    path = f"/apis/{DRA_GROUP}/{version}/{where}{resource}"
    return ListCall(DRA_GROUP, resource, path, optional=True)


def profile_from_cluster(
    objects: ClusterObjects,
    pool_label: str | None = None,
    source: str = "live cluster",
    default_namespace: str | None = None,
) -> ClusterProfile:
    """The ClusterProfile of what the API returned (see the module docstring)."""
    dump_like = [*objects.nodes, *objects.policies, *objects.queues, *objects.dra]
    if objects.runtime_classes is not None:
        # As a List of their kind: the profile then knows them all, even when there are none.
        dump_like.append({"kind": "RuntimeClassList", "items": list(objects.runtime_classes)})
    views: list[NodeView] = []
    facts = [facts_from_objects(dump_like, pool_label, source, views)]
    if objects.nodepools:
        # NodePools first: the nodes they launched state the current facts and win.
        facts.insert(0, facts_from_nodepools(objects.nodepools, source))
    profile = merge(facts)
    in_use, users = pool_usage(views, objects.uses, pool_label)
    pools = tuple(
        replace(p, gpus_in_use=in_use.get(p.name, {}), gpus_in_use_by=users.get(p.name, ()))
        for p in profile.pools
    )
    return replace(
        profile,
        pools=pools,
        default_namespace=profile.default_namespace or default_namespace,
        kubernetes_version=objects.server_version or profile.kubernetes_version,
    )


def pool_usage(
    nodes: Iterable[NodeView],
    uses: Iterable[PodUse],
    pool_label: str | None = None,
) -> tuple[dict[str, dict[str, Decimal]], dict[str, tuple[GpuUser, ...]]]:
    """Per pool (of the views of the cluster's `nodes`), the extended resources requested by
    the pods bound to its nodes, and which workloads they belong to."""
    pool_of_node = pool_names(nodes, pool_label)
    in_use: dict[str, dict[str, Decimal]] = {}
    found: dict[str, dict[tuple[str, str, str], dict[str, Decimal]]] = {}
    for use in uses:
        pool = pool_of_node.get(use.node)
        if pool is None:
            continue
        _add(in_use.setdefault(pool, {}), use.requests)
        _add(found.setdefault(pool, {}).setdefault(use.owner, {}), use.requests)
    users = {
        pool: tuple(
            GpuUser(namespace, kind, name, resources)
            for (namespace, kind, name), resources in by_owner.items()
        )
        for pool, by_owner in found.items()
    }
    return in_use, users


def _add(totals: dict[str, Decimal], amounts: Mapping[str, Decimal]) -> None:
    for name, amount in amounts.items():
        totals[name] = totals.get(name, Decimal(0)) + amount


def device_plugin_notes(pools: Iterable[Pool]) -> tuple[str, ...]:
    """One summary note per pool with nodes whose device plugin is not serving GPUs."""
    return tuple(
        f"device plugin not ready on {pool.device_plugin_not_ready} "
        f"node{'' if pool.device_plugin_not_ready == 1 else 's'} of pool {pool.name}"
        for pool in pools
        if pool.device_plugin_not_ready
    )
