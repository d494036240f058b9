"""Placement rules that need the cluster profile: GPU101-GPU106.

One defect gives one finding. For a GPU pod that no pool can run, `blocker()` picks the single
rule that explains it: when some pools pass every filter but none has or can get a node,
GPU103 if the required placement chose them (else GPU101); when no pool matches the placement
and it names a pool the cluster lacks, GPU103; when a pool the placement matches advertises the
GPU but no such pool has enough on one node, GPU105; when a pool would take the pod but for its
taints, GPU102; anything else is GPU101, which lists every pool and why. A pod that can run
only on pools at zero nodes because of its required placement gets the GPU103 warning.
"""

from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal

from gpulint.accelerators import is_extended_resource
from gpulint.admission import admitted_tolerations, compute_classes, overhead_text
from gpulint.constraints import PodAffinityTerm, Toleration, toleration_fields, toleration_yaml
from gpulint.data.gpu_products import GKE_ACCELERATOR_LABEL
from gpulint.edits import add_items
from gpulint.fields import shown
from gpulint.gpus import accelerator_names, gpu_limit_pos, gpu_requests, is_gpu_resource
from gpulint.model import Container, ContainerRole, PodTemplate, Severity, Workload
from gpulint.profile.model import POOL_LABELS, ClusterProfile, LabelRequirement, Pool, Taint
from gpulint.profile.platforms import AUTOPILOT_GPU_RULES, COMPUTE_CLASS_LABEL
from gpulint.quantity import format_quantity
from gpulint.replicas import (
    planned_pods,
    runs_on_every_node,
    runs_to_completion,
    under_load_words,
)
from gpulint.rules.base import CheckContext, GpuPlacement, Problem
from gpulint.scheduling import (
    Filter,
    Placement,
    PoolFit,
    allocatable,
    ceiling_assumptions,
    ceiling_note,
    describe_pools,
    describe_requirement,
    extended_resource_tolerations,
    first_pools,
    format_amount,
    has_required_placement,
    is_gpu_pool,
    label_selector_matches,
    label_text,
    node_ceiling,
    place,
    pool_gpus,
    pools_named,
    satisfied_requirements,
    selector_keys,
    selector_mismatch,
    untolerated_taints,
    usable,
)
from gpulint.views import NamedTuple
from gpulint.yamltree import BuiltMap, Pos, YMap, YSeq

_HOSTNAME = "kubernetes.io/hostname"
# How alike a pool's name must be spelt to the one written to be a "did you mean" (difflib).
_SPELLING_CUTOFF = 0.5


class Blocker:
    """The one reason a GPU pod can never be scheduled, and the rule that reports it.

    Names of a plain class rather than an `enum.Enum`, which would cost every run with a
    profile about a million instructions to define.
    """

    MISSING_POOL = "missing pool"  # GPU103
    TOO_MANY_GPUS = "too many GPUs"  # GPU105
    MISSING_TOLERATION = "missing toleration"  # GPU102
    DEAD_POOL = "dead pool"  # GPU103
    NO_POOL = "no pool"  # GPU101


def gpu_placements(ctx: CheckContext) -> tuple[GpuPlacement, ...]:
    """Every GPU pod template whose placement the profile can decide (`CheckContext`'s one
    verdict per template, which the capacity rules read too)."""
    return ctx.gpu_placements


def blocker(item: GpuPlacement, profile: ClusterProfile) -> str | None:
    """Which rule explains why the pod can never run (None: some pool can run it)."""
    placement, template = item.placement, item.template
    if usable(placement.eligible):
        return None
    if placement.eligible:
        return Blocker.DEAD_POOL if has_required_placement(template) else Blocker.NO_POOL
    if not any(f.matches_placement for f in placement.fits):
        return Blocker.MISSING_POOL if missing_pool(template, profile) else Blocker.NO_POOL
    if too_many_gpus(item) is not None:
        return Blocker.TOO_MANY_GPUS
    if toleration_candidates(placement):
        return Blocker.MISSING_TOLERATION
    return Blocker.NO_POOL


def certainty(item: GpuPlacement, profile: ClusterProfile) -> tuple[Severity | None, str] | None:
    """(None, "") when the pod's verdict holds whatever gpulint does not know of admission;
    (WARNING, the assumption it rests on and the line that makes it certain) when it holds
    only for some values of an unknown; None when it holds for none (no finding).

    A verdict is an error only when it holds for every value of the unknowns: when the pod
    would run if the admission's assumptions held (the platform's plugins, the flavor Kueue
    picks), the finding is a warning; when it runs whichever flavor Kueue picks, there is none.
    """
    unknown = undescribed_compute_class(item.template, profile)
    if unknown is not None:
        return Severity.WARNING, (
            f"; assumes compute class `{unknown}` has no nodes beyond the profile's pools, "
            "none of which is of that class (GKE creates them for a ComputeClass with node "
            "auto-creation): give its ComputeClass to --profile to make this certain"
        )
    unlabelled = _unlabelled(item, profile)
    if unlabelled is not None:
        return Severity.WARNING, unlabelled
    undecided = _undecided(item, profile)
    if undecided is not None:
        return Severity.WARNING, undecided
    if item.flavors and all(
        blocker(item._replace(placement=p), profile) is None for p in item.flavors
    ):
        return None
    if any(blocker(item._replace(placement=p), profile) is None for p in item.flavors):
        return Severity.WARNING, f"; {item.admission.assumptions[-1]}"
    if item.assumed is None or blocker(item._replace(placement=item.assumed), profile):
        return None, ""
    admitted, template = item.admission, item.template

    def enough(tolerations: tuple[Toleration, ...]) -> bool:
        alone = place(
            template,
            profile,
            (*admitted.tolerations, *tolerations),
            admitted.node_selector,
            admitted.overhead,
        )
        return blocker(item._replace(placement=alone), profile) is None

    return Severity.WARNING, f"; {admitted.assumptions_for(enough)}"


#: Node labels that a daemon in the cluster sets, when it runs, by key prefix: what it is.
_LABELLERS = (
    (
        "nvidia.com/",
        "GPU Feature Discovery (the GPU Operator, or the NVIDIA device plugin's chart with "
        "gfd.enabled)",
    ),
    ("feature.node.kubernetes.io/", "Node Feature Discovery"),
    ("amd.com/", "the AMD GPU node labeller"),
    ("beta.amd.com/", "the AMD GPU node labeller"),
    ("gpu.intel.com/", "Intel's GPU labelling rules for Node Feature Discovery"),
    # skypilot.co/accelerator: a Job or DaemonSet per GPU node reads nvidia-smi and patches
    # the node (sky/utils/kubernetes/gpu_labeler.py), after the node group is made.
    ("skypilot.co/", "SkyPilot's GPU labeler (`sky gpus label`)"),
)


#: Device plugins' resource names, under a labeller's prefix but no label it sets (GFD writes
#: `nvidia.com/gpu.product`, the AMD labeller `amd.com/gpu.family`): a node carries one only
#: when someone labels it by hand (`kubectl label nodes ... nvidia.com/gpu=present`), which a
#: profile of the pools says as it says any other label.
_RESOURCE_NAMES = frozenset({"nvidia.com/gpu", "amd.com/gpu"})


def _labeller(key: str) -> tuple[str, str] | None:
    """The labeller that sets node label `key` (prefix, what it is), if one does."""
    if key in _RESOURCE_NAMES:
        return None
    tail = key.split("/", 1)[0] + "/"
    for prefix, name in _LABELLERS:
        if key.startswith(prefix) or (prefix.startswith("feature.") and tail.endswith(prefix)):
            return prefix, name
    return None


def _unlabelled(item: GpuPlacement, profile: ClusterProfile) -> str | None:
    """The assumption a pod's verdict rests on when it selects labels of an in-cluster
    labeller that the profile knows nothing of, and it would run if the labeller labelled the
    pools' nodes; None otherwise.

    A profile built from infrastructure code or written by hand says which labels a node
    group is given, not what GPU Feature Discovery or NFD add once the node runs: a pool
    whose labels were not read from its nodes, in a profile where no pool carries any label
    of that labeller, may have them.
    """
    keys = [
        (key, found)
        for key in selector_keys(item.template, item.admission.node_selector)
        if (found := _labeller(key)) is not None
    ]
    if not keys:
        return None
    if all(pool.labels_observed for pool in profile.pools):
        return None
    said = {
        key
        for pool in profile.pools
        for key in (*pool.labels, *(r.key for r in pool.label_requirements))
    }
    unknown = [
        (key, name)
        for key, (prefix, name) in keys
        if not any(_labeller(k) == (prefix, name) for k in said)
    ]
    if not unknown:
        return None
    opened = tuple(
        pool
        if pool.labels_observed
        else replace(
            pool,
            label_requirements=(
                *pool.label_requirements,
                *(LabelRequirement(key, "Exists") for key, _ in unknown),
            ),
        )
        for pool in profile.pools
    )
    assumed = replace(profile, pools=opened)
    admitted = item.admission
    alone = place(
        item.template, assumed, admitted.tolerations, admitted.node_selector, admitted.overhead
    )
    if blocker(item._replace(placement=alone), assumed) is not None:
        return None
    labels = ", ".join(dict.fromkeys(key for key, _ in unknown))
    names = " and ".join(dict.fromkeys(name for _, name in unknown))
    return (
        f"; assumes {names} does not label the pools' nodes with {labels}, which the "
        "profile's pools do not say: a profile read from the nodes (a node dump, --live) "
        "makes this certain"
    )


def _undecided(item: GpuPlacement, profile: ClusterProfile) -> str | None:
    """The assumption a pod's verdict rests on when it selects labels that pools' inputs do
    not decide whether their nodes carry (`Pool.undecided_labels`: DOKS's GPU labels on a pool
    of a Droplet size the files do not decide), and it would run if they carried them, with
    the taint that comes with them (`Pool.undecided_taints`, each tried); None otherwise."""
    keys = frozenset(selector_keys(item.template, item.admission.node_selector))
    opened = {
        pool.name: tuple(k for k in pool.undecided_labels if k in keys)
        for pool in profile.pools
        if not pool.labels_observed
    }
    if not any(opened.values()):
        return None
    alternatives = max(
        (len(p.undecided_taints) for p in profile.pools if opened.get(p.name)), default=0
    )
    for alternative in range(max(alternatives, 1)):
        assumed = replace(
            profile,
            pools=tuple(
                _opened(pool, opened.get(pool.name, ()), alternative) for pool in profile.pools
            ),
        )
        admitted = item.admission
        alone = place(
            item.template, assumed, admitted.tolerations, admitted.node_selector, admitted.overhead
        )
        if blocker(item._replace(placement=alone), assumed) is None:
            break
    else:
        return None
    pools = tuple(p for p in usable(alone.eligible) if opened.get(p.name))
    labels = ", ".join(dict.fromkeys(k for p in pools for k in opened[p.name]))
    their = "its" if len(pools) == 1 else "their"
    return (
        f"; assumes the nodes of {describe_pools(pools)} do not carry {labels}, which {their} "
        "input does not decide: a profile read from the nodes (a node dump, --live), or a "
        "`size` the files decide, makes this certain"
    )


def _opened(pool: Pool, labels: tuple[str, ...], alternative: int) -> Pool:
    """`pool` whose nodes may carry `labels` (any value, or none), with the taint of the
    `alternative` that comes with them."""
    if not labels:
        return pool
    taints = pool.undecided_taints
    taint = (taints[min(alternative, len(taints) - 1)],) if taints else ()
    # A node has one taint per key and effect.
    kept = tuple(
        t for t in pool.taints if all((t.key, t.effect) != (n.key, n.effect) for n in taint)
    )
    return replace(
        pool,
        label_requirements=(
            *pool.label_requirements,
            *(LabelRequirement(k, "NotIn") for k in labels),
        ),
        taints=(*kept, *taint),
    )


def undescribed_compute_class(template: PodTemplate, profile: ClusterProfile) -> str | None:
    """A GKE compute class the pod selects that no pool of a GKE Standard profile belongs to.

    GKE creates the nodes of a custom compute class with node auto-creation when a pod asks
    for them, so a profile that describes no pool of the class (a node dump taken before any
    was made, no ComputeClass input) does not decide where the pod runs.
    """
    if profile.provider != "gke":
        return None
    described = {p.labels.get(COMPUTE_CLASS_LABEL) for p in profile.pools}
    return next((c for c in compute_classes(template) if c not in described), None)


def _compute_class_pos(template: PodTemplate) -> Pos:
    """Where the pod selects its compute class: the nodeSelector entry, else the spec."""
    selector = template.spec.get("nodeSelector")
    if isinstance(selector, YMap) and COMPUTE_CLASS_LABEL in selector:
        return selector.pos_of_key(COMPUTE_CLASS_LABEL)
    return template.spec.pos


# ---------------------------------------------------------------------------------------------
# GPU101


def no_eligible_pool(ctx: CheckContext) -> Iterator[Problem]:
    """No pool passes selector, affinity, taints and resources (and can have a node)."""
    profile = ctx.profile
    if profile is None:
        return
    yield from _roles_never_placed(ctx, profile)
    for item in gpu_placements(ctx):
        if blocker(item, profile) != Blocker.NO_POOL:
            continue
        template = item.template
        closest = _closest(item)
        sure = certainty(item, profile)
        if sure is None:
            continue
        severity, assumed = sure
        unknown = undescribed_compute_class(template, profile)
        yield Problem.at(
            template.document,
            _compute_class_pos(template) if unknown else _obstacle_pos(item, closest),
            f"no node pool can run this pod ({_gpu_text(item)}): {_per_pool(item)}"
            f"{_overhead_note(item, closest)}{assumed}",
            f"Give compute class `{unknown}`'s ComputeClass (or its nodes) to --profile, or "
            "select a pool the cluster has."
            if unknown
            else _no_pool_fix(item, closest),
            severity=severity,
        )


def _roles_never_placed(ctx: CheckContext, profile: ClusterProfile) -> Iterator[Problem]:
    """A role of a GPU workload that requests no GPU (a Ray head, an MPI launcher, a Spark
    driver) whose required placement matches no pool, only pools whose taints it does not
    tolerate (a selector for the GPU pool that both of Airflow's Spark roles get), or only
    pools that can never have a node: it stays Pending, and the workload cannot run without
    it."""
    gpu_workloads = {id(item.workload): item.workload for item in gpu_placements(ctx)}
    for workload in gpu_workloads.values():
        for template in workload.templates:
            if gpu_requests(template) or not has_required_placement(template):
                continue
            if template.replicas is not None and template.replicas.value == 0:
                continue
            placement = ctx.placement(template)
            if not placement.decidable:
                continue
            fits = tuple(f for f in placement.fits if f.matches_placement)
            if usable(tuple(f.pool for f in fits if f.tolerated)):
                continue
            matched = tuple(f.pool for f in fits)
            # Pools that could have a node, were their taints tolerated.
            tainted = tuple(f for f in fits if usable((f.pool,)))
            fix = (
                "Select a label the pools that run this role's pods carry (or remove the "
                "selector): every role of the workload must be placed for any of it to work."
            )
            if tainted:
                pos = template.tolerations_pos
                taints = first_pools(
                    [f"{f.pool.name}: {', '.join(map(str, f.untolerated))}" for f in tainted]
                )
                why = f"its required placement matches no pool whose taints it tolerates ({taints})"
                fix = (
                    "Give this role the tolerations of those pools' taints, or a placement of "
                    "its own on pools it tolerates: every role of the workload must be placed "
                    "for any of it to work."
                )
            elif matched:
                pos = _placement_pos(template)
                why = (
                    f"its required placement only matches {describe_pools(matched)}, which can "
                    f"never have a node ({first_pools([_cannot_grow(p) for p in matched])})"
                )
            else:
                first = min(
                    (f.mismatch for f in placement.fits if f.mismatch is not None),
                    key=lambda m: m.pos,
                )
                pos = first.pos
                pools = first_pools(
                    [f"{f.pool.name}: {f.mismatch.detail}" for f in placement.fits if f.mismatch]
                )
                why = f"no node pool matches its required placement ({pools})"
            ref = workload.document.ref
            certain = ctx.admission(template).certain
            yield Problem.at(
                template.document,
                pos,
                f"this pod requests no GPU, but {why}: it stays Pending, and {ref.kind}/{ref.name} "
                "cannot run without it, so its GPU pods hold their GPUs for nothing or never start",
                fix,
                severity=Severity.ERROR if certain else Severity.WARNING,
            )


def _closest(item: GpuPlacement) -> PoolFit:
    """The pool nearest to taking the pod: a GPU pool failing the fewest filters."""
    return min(item.placement.fits, key=lambda f: _distance(item, f))


def _distance(item: GpuPlacement, fit: PoolFit) -> tuple[object, ...]:
    """How far a pool is from taking the pod, for picking and ordering pools in messages."""
    return (
        not is_gpu_pool(fit.pool),
        len(fit.failed),
        -satisfied_requirements(item.template, fit.pool.labels, fit.pool.label_requirements),
        len(fit.shortfalls),
        not fit.pool.can_grow,
    )


def _obstacle_pos(item: GpuPlacement, fit: PoolFit) -> Pos:
    template = item.template
    if not fit.failed:
        return resource_pos(template, next(iter(item.gpus)))
    first = fit.failed[0]
    if first == Filter.NODE_AFFINITY and fit.mismatch is not None:
        return fit.mismatch.pos
    if first == Filter.TAINTS:
        return template.tolerations_pos
    return resource_pos(template, fit.shortfalls[0].resource)


def _no_pool_fix(item: GpuPlacement, closest: PoolFit) -> str:
    pool = closest.pool
    if not closest.failed:
        return (
            f"Pool {pool.name} matches but has no node and cannot get one: raise its maxNodes "
            f"and let it scale from zero, or target a pool that has nodes."
        )
    # Every filter the nearest pool fails: fixing only the first leaves the pod Pending. The
    # toleration fix ends in YAML, so it comes last.
    fixes = [_filter_fix(item, closest, f) for f in closest.failed if f != Filter.TAINTS]
    if Filter.TAINTS in closest.failed:
        fixes.append(_tolerations_fix(item.template, closest.untolerated))
    return " ".join([fixes[0], *(f"Also: {fix[0].lower()}{fix[1:]}" for fix in fixes[1:])])


def _filter_fix(item: GpuPlacement, closest: PoolFit, first: str) -> str:
    """What makes the nearest pool pass the filter `first` (node affinity or resources)."""
    pool = closest.pool
    if first == Filter.NODE_AFFINITY and closest.mismatch is not None and closest.mismatch.key:
        key = closest.mismatch.key
        if pool.nodes == 0 and key in pool.template_missing_labels and key in pool.labels:
            if pool.template_labels_by == "capacity-annotation":
                return (
                    f"Add `{key}={pool.labels[key]}` to the "
                    f"`capacity.cluster-autoscaler.kubernetes.io/labels` annotation of Cluster "
                    f"API node group {pool.name} so that cluster-autoscaler knows its nodes carry "
                    f"the label (kubelet's `--node-labels` are not in its zero-node template), "
                    f"or drop the `{key}` requirement."
                )
            return (
                f"Tag pool {pool.name}'s Auto Scaling group with "
                f"`k8s.io/cluster-autoscaler/node-template/label/{key}: {pool.labels[key]}` "
                f"(eksctl: `propagateASGTags: true`) so that cluster-autoscaler knows its nodes "
                f"carry the label, or drop the `{key}` requirement."
            )
        by_value: dict[str, list[str]] = {}
        for f in item.placement.fits:
            if is_gpu_pool(f.pool):
                value = label_text(f.pool.labels, key, f.pool.label_requirements)
                by_value.setdefault(value, []).append(f.pool.name)
        if list(by_value) == ["(not set)"]:
            values = f"no GPU pool has the label {key}"
        elif len(by_value) == 1:
            values = f"on every GPU pool {key} is {next(iter(by_value))}"
        else:
            values = f"on the GPU pools {key} is " + "; ".join(
                f"{value} ({first_pools(names, ', ')})" for value, names in by_value.items()
            )
        return f"Change or drop the `{key}` requirement: {values}."
    if first == Filter.NODE_AFFINITY:
        return "Give the required node affinity a term that a GPU pool's labels satisfy."
    overhead = item.admission.overhead
    return (
        "Request only what one node of a GPU pool has: "
        + "; ".join(
            f"{s.resource} at most "
            f"{format_amount(s.resource, s.allocatable - overhead.get(s.resource, Decimal(0)))}"
            for s in closest.shortfalls
        )
        + f" on {pool.name}"
        + (
            " (the RuntimeClass's overhead takes the rest)."
            if _overhead_note(item, closest)
            else "."
        )
    )


def _overhead_note(item: GpuPlacement, closest: PoolFit) -> str:
    """`; the requests include RuntimeClass `kata`'s overhead (cpu 250m)`, when the pool falls
    short of a resource the overhead adds to."""
    overhead = item.admission.overhead
    short = {s.resource for s in closest.shortfalls} & set(overhead)
    if not short:
        return ""
    added = overhead_text({r: a for r, a in overhead.items() if r in short})
    return (
        f"; the requests include the overhead RuntimeClass `{item.admission.runtime_class}` "
        f"sets ({added})"
    )


# ---------------------------------------------------------------------------------------------
# GPU102


def toleration_candidates(placement: Placement) -> tuple[PoolFit, ...]:
    """Pools the pod selects and fits, that can have a node, rejected only by their taints."""
    candidates = [
        f
        for f in placement.fits
        if f.matches_placement and f.has_room and not f.tolerated and f.pool.can_grow
    ]
    return tuple(sorted(candidates, key=lambda f: (f.pool.nodes == 0, len(f.untolerated))))


def missing_gpu_toleration(ctx: CheckContext) -> Iterator[Problem]:
    """A GPU pod that would fit a GPU pool but for the pool's taints."""
    profile = ctx.profile
    if profile is None:
        return
    for item in gpu_placements(ctx):
        # A template other objects run (a KServe ServingRuntime, a Seldon ServerConfig): the
        # InferenceService or Server that runs it writes tolerations into the pod too (KServe
        # merges its predictor's pod spec over the runtime's), and is judged as a workload of
        # its own.
        if item.template.runs_no_pods:
            continue
        if blocker(item, profile) != Blocker.MISSING_TOLERATION:
            continue
        template = item.template
        best, *others = toleration_candidates(item.placement)
        taints = ", ".join(str(t) for t in best.untolerated)
        also = ""
        if others:
            also = "; it would also fit " + first_pools(
                [
                    f"{f.pool.name} (taints {', '.join(str(t) for t in f.untolerated)})"
                    for f in others
                ],
                ", ",
            )
        # Only pools the pod could have used: those its own placement chose and that have room
        # for it. A pool it excluded (another pool's selector) is no alternative to list.
        rest = [
            f
            for f in item.placement.fits
            if f.matches_placement and f.has_room and f not in (best, *others)
        ]
        rest.sort(key=lambda f: _distance(item, f))
        rest_text = f"; other pools: {_per_pool_of(rest)}" if rest else ""
        sure = certainty(item, profile)
        if sure is None:
            continue
        severity, assumed = sure
        yield Problem.at(
            template.document,
            template.tolerations_pos,
            f"pod ({_gpu_text(item)}) fits pool {best.pool.described} except for its "
            f"taint{'s' if len(best.untolerated) > 1 else ''} {taints}, which no toleration "
            f"of the pod matches{_admission_note(item, best.untolerated, profile)}{also}"
            f"{rest_text}{assumed}",
            _tolerations_fix(template, best.untolerated)
            + _runtime_class_instead(template, best.pool, best.untolerated, profile),
            severity=severity,
            edits=add_items(
                template.spec,
                "tolerations",
                tuple(toleration_fields(t) for t in best.untolerated),
                "containers",
            ),
        )


def _admission_note(item: GpuPlacement, taints: tuple[Taint, ...], profile: ClusterProfile) -> str:
    requested = [t.key for t in extended_resource_tolerations(item.template)]
    if profile.extended_resource_toleration_enabled:
        keys = ", ".join(f"`{k}`" for k in requested)
        return (
            f" (the cluster's ExtendedResourceToleration admission plugin tolerates only "
            f"NoSchedule taints keyed {keys}, the resources the pod requests)"
        )
    covered = [t.key for t in taints if t.key in requested]
    known_off = profile.admission_fact("ExtendedResourceToleration").state is False
    if covered and known_off:
        return (
            f" (this cluster does not run the ExtendedResourceToleration admission plugin, "
            f"so requesting `{covered[0]}` adds no toleration for it)"
        )
    return ""


def _tolerations_fix(template: PodTemplate, taints: tuple[Taint, ...]) -> str:
    entries = "\n".join(toleration_yaml(t) for t in taints)
    if isinstance(template.spec, BuiltMap):
        # An operator writes the pod from other fields: there is no pod spec to add to, but
        # the role's own `tolerations` (a Spark executor's, a Kthena worker's) go to the pod.
        role = template.role_node
        if isinstance(role, YMap) and isinstance(role.get("tolerations"), YSeq):
            return (
                "Add to the `tolerations:` the operator gives the pod (keep the taint on the "
                f"pool):\n{entries}"
            )
        return (
            "The operator builds this pod and gives it no such toleration (keep the taint on "
            "the pool): give it through the operator's own setting for tolerations, if it has "
            "one, or run the ExtendedResourceToleration admission plugin, which tolerates "
            f"taints keyed by the extended resources a pod requests:\n{entries}"
        )
    if "tolerations" in template.spec:
        return f"Add to the pod's `tolerations:` (keep the taint on the pool):\n{entries}"
    return f"Add to the pod spec (keep the taint on the pool):\ntolerations:\n{entries}"


def _runtime_class_instead(
    template: PodTemplate, pool: Pool, taints: tuple[Taint, ...], profile: ClusterProfile
) -> str:
    """The RuntimeClass a pod naming none could name instead of writing tolerations: one of
    the cluster's whose scheduling tolerates every taint and selects the pool (kOps's
    `nvidia`, which its docs tell GPU pods to name), with no selector entry the pod contradicts
    (the RuntimeClass admission plugin would refuse it)."""
    if template.runtime_class_name is not None or isinstance(template.spec, BuiltMap):
        return ""
    pos = template.tolerations_pos
    for runtime_class in profile.runtime_classes:
        selector = runtime_class.node_selector
        if any(pool.labels.get(key) != value for key, value in selector.items()):
            continue
        if any(template.node_selector.get(key, value) != value for key, value in selector.items()):
            continue
        added = admitted_tolerations(runtime_class.tolerations, pos)
        if added and not untolerated_taints(added, taints):
            name = runtime_class.name
            return (
                f"\nOr name RuntimeClass `{name}` (`runtimeClassName: {name}`), whose scheduling "
                f"tolerates {'them' if len(taints) > 1 else 'it'} and selects pool {pool.name}."
            )
    return ""


# ---------------------------------------------------------------------------------------------
# GPU103


class MissingPool(NamedTuple):
    """A selector entry naming a pool (by a pool label) that no pool of the cluster has."""

    label: str
    values: tuple[str, ...]
    pos: Pos
    written: str  # how the selector reads in a message


def missing_pool(template: PodTemplate, profile: ClusterProfile) -> MissingPool | None:
    """The nodeSelector entry or affinity expression that names a pool the cluster lacks."""
    selector = template.spec.get("nodeSelector")
    for key, value in template.node_selector.items():
        if key in POOL_LABELS and not pools_named(profile, key, value):
            pos = selector.pos_of_key(key) if isinstance(selector, YMap) else template.spec.pos
            return MissingPool(key, (value,), pos, f"nodeSelector {key}={value}")
    terms = template.required_node_affinity or ()
    found = []
    for term in terms:
        hit = next(
            (
                r
                for r in term.match_expressions
                if r.key in POOL_LABELS
                and r.operator == "In"
                and not any(pools_named(profile, r.key, v) for v in r.values)
            ),
            None,
        )
        if hit is None:
            return None
        found.append(hit)
    if not found:
        return None
    first = found[0]
    return MissingPool(
        first.key, first.values, first.pos, f"required affinity {describe_requirement(first)}"
    )


def scale_to_zero_affinity(ctx: CheckContext) -> Iterator[Problem]:
    """Required placement that only matches pools with no node: slow, or never."""
    profile = ctx.profile
    if profile is None:
        return
    yield from _missing_pools_beside_gpu001(ctx, profile)
    for item in gpu_placements(ctx):
        template, placement = item.template, item.placement
        verdict = blocker(item, profile)
        if verdict == Blocker.MISSING_POOL:
            missing = missing_pool(template, profile)
            if missing is not None:
                yield _missing_pool_problem(item, profile, missing)
        elif verdict == Blocker.DEAD_POOL:
            pools = placement.eligible
            sure = certainty(item, profile)
            if sure is None:
                continue
            severity, assumed = sure
            yield Problem.at(
                template.document,
                _placement_pos(template),
                f"required placement only matches {describe_pools(pools)}, which "
                f"{'has' if len(pools) == 1 else 'have'} no node and can never get one "
                f"({first_pools([f'{p.name}: {_cannot_grow(p)}' for p in pools])}): the pod "
                f"stays Pending{assumed}",
                _cold_fix(placement, pools, dead=True),
                severity=severity or Severity.ERROR,
            )
        elif verdict is None and has_required_placement(template):
            pools = usable(placement.eligible)
            if any(p.nodes > 0 for p in pools) or not placement_keeps_pod_cold(placement):
                continue
            if all(p.made_per_pod for p in pools):
                continue  # a Karpenter NodePool keeps no warm node whatever the placement
            if any(all(name in p.template_missing for p in pools) for name in item.gpus):
                continue  # no scale-up ever comes: GPU108 says why
            yield Problem.at(
                template.document,
                _placement_pos(template),
                f"required placement only matches {describe_pools(pools)}, which "
                f"{'has' if len(pools) == 1 else 'have'} 0 nodes now: every pod waits for "
                f"a scale-up from zero ({first_pools([_provisioning(p) for p in pools])})",
                _cold_fix(placement, pools, dead=False),
                severity=Severity.WARNING,
            )


def _missing_pools_beside_gpu001(ctx: CheckContext, profile: ClusterProfile) -> Iterator[Problem]:
    """A pod left to GPU001 (it requests an accelerator no pool advertises) that also names a
    pool the cluster lacks: a second defect, not a consequence of the first. Renaming the
    resource leaves the pod Pending all the same, so both are told at once."""
    if not profile.pools or profile.provider == "gke-autopilot":
        return
    advertised = profile.advertised_resources()
    for workload, template in ctx.pod_templates(here=True):
        gpus = gpu_requests(template)
        if not gpus or all(name in advertised for name in gpus):
            continue  # judged with its placement (gpu_placements)
        missing = missing_pool(template, profile)
        if missing is not None:
            # No pool fits a resource none advertises, so no pool is suggested for it.
            item = GpuPlacement(
                workload, template, ctx.placement(template), gpus, ctx.admission(template)
            )
            yield _missing_pool_problem(item, profile, missing)


def placement_keeps_pod_cold(placement: Placement) -> bool:
    """Whether the required placement, not the pod's size or taints, rules out warm nodes.

    True when every pool the placement matches has no node, or when a pool with nodes would
    take the pod but for the placement.
    """
    placed = [f.pool for f in placement.fits if f.matches_placement]
    if all(p.nodes == 0 for p in placed):
        return True
    return any(
        f.pool.nodes > 0 and f.tolerated and f.has_room and not f.matches_placement
        for f in placement.fits
    )


def _missing_pool_problem(
    item: GpuPlacement, profile: ClusterProfile, missing: MissingPool
) -> Problem:
    template = item.template
    existing = sorted({p.labels[missing.label] for p in profile.pools if missing.label in p.labels})
    known = (
        f"pools by {missing.label}: {', '.join(existing)}"
        if existing
        else f"no pool has the label {missing.label}"
    )
    suggested = suggested_pool(item, missing)
    hint = f"; did you mean `{suggested}`?" if suggested else ""
    fix = (
        f"Use a pool the cluster has ({known}), or create the pool first."
        if existing
        else f"No pool carries {missing.label}; select the pool by a label its nodes have."
    )
    return Problem.at(
        template.document,
        missing.pos,
        f"{missing.written} names a pool this cluster does not have ({known}): the pod "
        f"stays Pending{hint}",
        fix,
        severity=Severity.ERROR,
    )


def suggested_pool(item: GpuPlacement, missing: MissingPool) -> str | None:
    """The pool name `missing` most likely meant, among pools the pod would fit.

    A pool qualifies when, named instead, it would take the pod: its nodes have room for the
    pod's GPUs (model and count) and the rest of its requests, the pod tolerates its taints,
    the pod's other selector entries and affinity match it, and it can have a node.
    Candidates spelt like the name written are ranked by fit (fewest GPUs left idle on a
    node), then by spelling; when the best two tie, none is suggested: a guess between
    equals would mislead.
    """
    import difflib  # only for a near miss: most runs never get here

    wanted = missing.values[0]
    best: dict[str, tuple[Decimal, float]] = {}
    for fit in item.placement.fits:
        value = fit.pool.labels.get(missing.label)
        if value is None or not (fit.tolerated and fit.has_room and fit.pool.can_grow):
            continue
        # The pod's placement with this pool named where the missing one was.
        labels = {**fit.pool.labels, missing.label: wanted}
        if selector_mismatch(item.template, labels, fit.pool.label_requirements) is not None:
            continue
        spelling = difflib.SequenceMatcher(None, wanted, value).ratio()
        if spelling < _SPELLING_CUTOFF:
            continue
        idle = sum(
            (allocatable(fit.pool, name) - count for name, count in item.gpus.items()),
            Decimal(0),
        )
        key = (idle, -spelling)
        if value not in best or key < best[value]:
            best[value] = key
    ranked = sorted(best.items(), key=lambda entry: entry[1])
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _cannot_grow(pool: Pool) -> str:
    if pool.max_nodes <= 0:
        return "maxNodes 0"
    return f"maxNodes {pool.max_nodes} but it cannot scale from zero (no node template)"


def _provisioning(pool: Pool) -> str:
    if pool.provisioning_seconds is None:
        return f"{pool.name}: provisioning time unknown"
    return f"{pool.name}: about {pool.provisioning_seconds} s until a node advertises GPUs"


def _cold_fix(placement: Placement, pools: tuple[Pool, ...], *, dead: bool) -> str:
    warm = [
        f.pool
        for f in placement.fits
        if f.pool.nodes > 0 and f.tolerated and f.has_room and not f.matches_placement
    ]
    names = ", ".join(p.name for p in pools)
    options = [
        "make the pool choice preferredDuringSchedulingIgnoredDuringExecution instead of required"
    ]
    if warm:
        options.append(
            "target a pool with warm capacity ("
            + ", ".join(f"{p.name}: {p.nodes} nodes" for p in warm)
            + ")"
        )
    if dead:
        options.append(f"raise maxNodes and enable scale-from-zero on {names}")
    else:
        options.append(f"keep a warm node in {names} (minNodes: 1)")
    text = "; or ".join(options)
    return text[0].upper() + text[1:] + "."


def _placement_pos(template: PodTemplate) -> Pos:
    """The pod's first nodeSelector key, else its first required affinity expression."""
    selector = template.spec.get("nodeSelector")
    if isinstance(selector, YMap) and selector:
        return selector.pos_of_key(next(iter(selector)))
    for term in template.required_node_affinity or ():
        if term.match_expressions:
            return term.match_expressions[0].pos
        return term.pos
    return template.spec.pos_of_key("affinity")


# ---------------------------------------------------------------------------------------------
# GPU104


def gpu_selector_without_request(ctx: CheckContext) -> Iterator[Problem]:
    """A pod that requests no accelerator but whose placement only matches GPU pools."""
    profile = ctx.profile
    if profile is None or not profile.pools:
        return
    for workload, template in ctx.pod_templates(here=True):
        # A DaemonSet on GPU nodes without GPUs is how device plugins and exporters run.
        if runs_on_every_node(workload) or not has_required_placement(template):
            continue
        # A template other objects run (a Seldon ServerConfig, a KServe ServingRuntime): what
        # runs it may add the GPU request (a Server's podSpec, an InferenceService's resources).
        if template.runs_no_pods:
            continue
        if accelerator_names(template.effective_requests):
            continue  # it writes one (maybe zero, or a name nodes do not count): not "no GPU"
        placement = ctx.placement(template)
        if not placement.decidable:
            continue
        placed = [f.pool for f in placement.fits if f.matches_placement]
        if not placed or not all(is_gpu_pool(p) for p in placed):
            continue
        others = [f for f in placement.fits if not is_gpu_pool(f.pool)]
        pos = next(
            (f.mismatch.pos for f in others if f.mismatch is not None), _placement_pos(template)
        )
        resources = sorted({name for p in placed for name in pool_gpus(p)})
        untolerated = [f for f in placement.fits if f.matches_placement and not f.tolerated]
        taint_note = ""
        if untolerated:
            taint_note = (
                "; it does not tolerate their taints either ("
                + "; ".join(
                    f"{f.pool.name}: {', '.join(str(t) for t in f.untolerated)}"
                    for f in untolerated
                )
                + "), so it stays Pending"
            )
        cpu_pools = ", ".join(f.pool.name for f in others)
        yield Problem.at(
            template.document,
            pos,
            f"pod requests no GPU, but its required placement only matches GPU "
            f"{describe_pools(tuple(placed))}: it takes a GPU node's cpu and memory without a "
            f"GPU, and the device plugin gives its containers no device{taint_note}",
            f"Add `{resources[0]}: 1` to the `resources.limits` of the container that needs "
            f"the GPU, or drop the selector"
            + (f" so the pod runs on a CPU pool ({cpu_pools})." if cpu_pools else "."),
        )


# ---------------------------------------------------------------------------------------------
# GPU105


class TooManyGpus(NamedTuple):
    """A GPU resource the pod wants more of than one node of any pool it selects has."""

    resource: str
    requested: Decimal
    pools: tuple[Pool, ...]  # the pools the placement matches


def too_many_gpus(item: GpuPlacement) -> TooManyGpus | None:
    """The GPU resource no node of any placement-matching pool has enough of, if any."""
    placed = tuple(f.pool for f in item.placement.fits if f.matches_placement)
    for name, amount in item.gpus.items():
        per_node = [allocatable(p, name) for p in placed]
        if per_node and max(per_node) < amount and max(per_node) > 0:
            return TooManyGpus(name, amount, placed)
    return None


def gpu_exceeds_node(ctx: CheckContext) -> Iterator[Problem]:
    """The pod's effective GPU request is more than one node of any pool it selects has."""
    profile = ctx.profile
    if profile is None:
        return
    if profile.scheduler_extenders and _HAMI in profile.scheduler_extenders:
        yield from _hami_vgpus_exceed_gpus(ctx)
    yield from _gpushare_memory_exceeds_gpu(ctx)
    for item in gpu_placements(ctx):
        if blocker(item, profile) != Blocker.TOO_MANY_GPUS:
            continue
        excess = too_many_gpus(item)
        if excess is None:
            continue
        name, template = excess.resource, item.template
        largest = max(excess.pools, key=lambda p: allocatable(p, name))
        per_pool = first_pools(
            [f"{p.described}: {format_quantity(allocatable(p, name))}" for p in excess.pools]
        )
        asking = [
            (c, amount)
            for c in template.app_containers
            if (amount := c.resources.effective_requests().get(name, Decimal(0))) > 0
        ]
        summed = sum((amount for _, amount in asking), Decimal(0))
        how = ""
        if summed != excess.requested:
            how = " (the effective request: init containers count by the largest)"
        elif len(asking) > 1:
            # Several containers each asking is often one device meant for the pod.
            how = f" ({_shares(asking)})"
        most = f"Request at most {format_quantity(allocatable(largest, name))} {name} per pod"
        if summed == excess.requested and len(asking) > 1:
            fix = f"{most} (a node of {largest.name}): give it to fewer of its containers, "
        else:
            fix = f"{most} (a node of {largest.name}) and "
        yield Problem.at(
            template.document,
            resource_pos(template, name),
            f"pod requests {format_quantity(excess.requested)} {name}{how}, more than one node "
            f"of any pool it can run on has ({per_pool} per node); a pod never spans nodes",
            fix + "split the work across pods, or target a pool with larger nodes.",
        )


def _shares(asking: list[tuple[Container, Decimal]]) -> str:
    """How the containers of a pod share its request, in words: `1 in each of containers
    `a`, `b``, or `2 in `a`, 1 in `b``."""
    names = [f"`{shown(c.name)}`" for c, _ in asking]
    shown_names = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    amounts = {amount for _, amount in asking}
    if len(amounts) == 1:
        return f"{format_quantity(amounts.pop())} in each of containers {shown_names}"
    parts = [f"{format_quantity(a)} in `{shown(c.name)}`" for c, a in asking[:6]]
    return ", ".join(parts) + (f" and {len(asking) - 6} more" if len(asking) > 6 else "")


# HAMi (Project-HAMi/HAMi README "Running GPU Jobs"): a container's `nvidia.com/gpu: N` asks
# for N vGPUs, each on a different physical GPU of one node, while the node's allocatable counts
# every GPU `deviceSplitCount` times (10 by default): a container asking more vGPUs than the node
# has GPUs stays Pending though allocatable would hold it. GPU Feature Discovery's count label
# says how many GPUs a node has.
_HAMI = "hami"
_HAMI_RESOURCE = "nvidia.com/gpu"
_GPU_COUNT_LABEL = "nvidia.com/gpu.count"


def _hami_vgpus_exceed_gpus(ctx: CheckContext) -> Iterator[Problem]:
    """A container asking HAMi for more vGPUs than any node it can run on has GPUs."""
    for item in gpu_placements(ctx):
        pools = usable(item.placement.eligible)
        counts = [_gpu_count(p) for p in pools]
        if not pools or None in counts:
            continue  # where it may run, or how many GPUs a node has, is not known
        most = max(c for c in counts if c is not None)
        for container in item.template.app_containers:
            limit = container.resources.limits.get(_HAMI_RESOURCE)
            if limit is None or limit.amount is None or limit.amount <= most:
                continue
            yield Problem.at(
                item.template.document,
                limit.key_pos,
                f"container `{container.name}` asks HAMi for {format_quantity(limit.amount)} "
                f"vGPUs, each on a different physical GPU of one node, but the nodes it can run "
                f"on have at most {most} GPUs ({describe_pools(pools)}, `{_GPU_COUNT_LABEL}`); "
                f"allocatable counts each GPU once per share: the pod stays Pending",
                f"Ask for at most {most} vGPUs per container (`nvidia.com/gpumem` and "
                "`nvidia.com/gpucores` size each one), or split the work across containers or "
                "pods.",
            )


def _gpu_count(pool: Pool) -> int | None:
    text = pool.labels.get(_GPU_COUNT_LABEL, "")
    return int(text) if text.isdigit() and text.isascii() and len(text) < 6 else None


# Alibaba gpushare (AliyunContainerService/gpushare-scheduler-extender pkg/cache/nodeinfo.go,
# pkg/utils/pod.go): the extender places a pod's whole `aliyun.com/gpu-mem` (the sum of its
# containers' limits) on ONE GPU, each GPU holding the node's gpu-mem divided by its
# `aliyun.com/gpu-count`. A pod that fits the node's total but no single GPU passes the
# scheduler's own fit and is filtered out by the extender on every node: it stays Pending
# (the project's README, "Demo 2").
_GPUSHARE_MEMORY = "aliyun.com/gpu-mem"
_GPUSHARE_COUNT = "aliyun.com/gpu-count"


def _gpushare_memory_exceeds_gpu(ctx: CheckContext) -> Iterator[Problem]:
    """A pod asking gpushare for more GPU memory than one GPU of any node it can run on has."""
    for item in gpu_placements(ctx):
        template = item.template
        limits = [
            q
            for c in template.containers
            if c.role is ContainerRole.APP
            and (q := c.resources.limits.get(_GPUSHARE_MEMORY)) is not None
            and q.amount is not None
        ]
        asked = sum((q.amount for q in limits if q.amount is not None), Decimal(0))
        pools = usable(item.placement.eligible)
        per_gpu = [_gpushare_per_gpu(p) for p in pools]
        if asked <= 0 or not pools or None in per_gpu:
            continue  # where it may run, or how many GPUs share a node's memory, is not known
        most = max(m for m in per_gpu if m is not None)
        if asked <= most:
            continue
        largest = max(limits, key=lambda q: q.amount or Decimal(0))
        summed = " (the sum of its containers' limits)" if len(limits) > 1 else ""
        yield Problem.at(
            template.document,
            largest.key_pos,
            f"pod asks gpushare for {format_quantity(asked)} {_GPUSHARE_MEMORY}{summed}, which "
            f"the scheduler extender must place on one GPU, but one GPU of the nodes it can run "
            f"on has at most {format_quantity(most)} ({describe_pools(pools)}: "
            f"`{_GPUSHARE_MEMORY}` / `{_GPUSHARE_COUNT}`); it fits the node, not a GPU, so "
            f"the extender filters out every node and the pod stays Pending",
            f"Ask for at most {format_quantity(most)} {_GPUSHARE_MEMORY} per pod, or split "
            f"the work across pods.",
        )


def _gpushare_per_gpu(pool: Pool) -> Decimal | None:
    """One GPU's share of a node's gpu-mem, as the extender divides it (None: not known)."""
    memory, count = allocatable(pool, _GPUSHARE_MEMORY), allocatable(pool, _GPUSHARE_COUNT)
    if memory <= 0 or count <= 0:
        return None
    return Decimal(int(memory) // int(count))


def resource_pos(template: PodTemplate, resource: str) -> Pos:
    """Where the container that asks for most of `resource` writes the amount the scheduler
    counts: an extended resource's limit (its request must equal it), else the request, which
    the limit stands in for only when none is written."""
    best = None
    for container in template.containers:
        amount = container.resources.effective_requests().get(resource)
        if amount is not None and (best is None or amount > best[0]):
            best = (amount, container)
    if best is None:
        return template.node.pos_of_key("spec")
    resources = best[1].resources
    first, then = (
        (resources.limits, resources.requests)
        if is_extended_resource(resource)
        else (resources.requests, resources.limits)
    )
    quantity = first.get(resource) or then[resource]
    return quantity.key_pos


# ---------------------------------------------------------------------------------------------
# GPU106


def anti_affinity_exceeds_nodes(ctx: CheckContext) -> Iterator[Problem]:
    """One pod per node (required hostname anti-affinity) with more pods than nodes."""
    profile = ctx.profile
    if profile is None or not profile.pools:
        return
    for workload, template in ctx.pod_templates(here=True):
        if runs_on_every_node(workload):
            continue
        namespace = ctx.namespace_of(workload.document)
        term = next(
            (
                t
                for t in _one_per_node_terms(template)
                if label_selector_matches(t, template.labels)
                and (not t.namespaces or namespace in t.namespaces)
            ),
            None,
        )
        if term is None:
            continue
        placement = ctx.placement(template)
        pools = usable(placement.eligible)
        if not placement.decidable or not pools or workload.unknown_count:
            continue
        demand = planned_pods(workload, template, ctx.autoscalers_of(workload))
        nodes = sum(node_ceiling(p) for p in pools)
        if demand.count <= nodes:
            continue
        # A finished pod no longer keeps others off its node: pods that run to completion
        # take the nodes in turn.
        in_turn = runs_to_completion(workload, template)
        # An autoscaler adds pods above its minimum only under load.
        under_load = not in_turn and demand.least <= nodes
        surplus = demand.count - nodes
        if in_turn:
            outcome = (
                f"{surplus} {'waits' if surplus == 1 else 'wait'} until earlier ones finish "
                "(the pods run to completion)"
            )
        elif under_load:
            words = under_load_words((demand.autoscaler,))
            outcome = (
                f"if the {words.noun} scales up to {words.max_field}, {surplus} stay Pending "
                f"(at {words.min_field} all fit)"
            )
        else:
            outcome = f"{surplus} stay Pending"
        ceilings = ceiling_assumptions(pools)
        yield Problem.at(
            template.document,
            term.pos,
            f"required pod anti-affinity on {_HOSTNAME} allows one of these pods per node, but "
            f"{demand.source} asks for {demand.count} and the pools the pod can run on have at "
            f"most {nodes} node{'s' if nodes != 1 else ''} "
            f"({', '.join(f'{p.name}: {node_ceiling(p)}' for p in pools)}): {outcome}"
            + ceiling_note(ceilings),
            f"Lower {demand.field} to {nodes}, raise maxNodes of the pools, or make the "
            f"anti-affinity preferredDuringSchedulingIgnoredDuringExecution.",
            severity=Severity.WARNING if in_turn or under_load or ceilings else None,
            involves=(demand.document,),  # the autoscaler that sets the count
        )


def _one_per_node_terms(template: PodTemplate) -> Iterator[PodAffinityTerm]:
    return (t for t in template.required_pod_anti_affinity if t.topology_key == _HOSTNAME)


def anti_affinity_needs(ctx: CheckContext) -> Iterator[Workload]:
    """Workloads with a pod template that allows one pod per node (HPAs may scale them)."""
    if ctx.profile is None:
        return
    for workload in ctx.workloads:
        if ctx.managed_elsewhere(workload) is not None:
            continue  # another controller creates its pods, on other clusters
        if any(next(_one_per_node_terms(t), None) for t in workload.templates):
            yield workload


# ---------------------------------------------------------------------------------------------
# Message helpers


def _gpu_text(item: GpuPlacement) -> str:
    unknown = item.template.unknown_amounts
    return "requests " + ", ".join(
        f"`{shown(unknown[k])}` {k}" if k in unknown else f"{format_quantity(v)} {k}"
        for k, v in item.gpus.items()
    )


def _per_pool(item: GpuPlacement) -> str:
    """Why each pool rejects the pod, the nearest first, with every filter it fails (the fix
    is about that pool)."""
    return _per_pool_of(sorted(item.placement.fits, key=lambda f: _distance(item, f)), True)


def _per_pool_of(fits: list[PoolFit], nearest_in_full: bool = False) -> str:
    return first_pools(
        [f"{f.pool.name}: {_why_not(f, nearest_in_full and i == 0)}" for i, f in enumerate(fits)]
    )


def _why_not(fit: PoolFit, every: bool = False) -> str:
    """Why the pool rejects the pod: its first failed filter, or with `every` all of them."""
    if fit.eligible:
        return f"0 nodes and {_cannot_grow(fit.pool)}"
    if every and is_gpu_pool(fit.pool):
        return " and ".join(fit.explanations)
    return fit.explanation or ""


# ---------------------------------------------------------------------------------------------
# GPU305

_GKE_NODEPOOL = "cloud.google.com/gke-nodepool"


def autopilot_refuses_gpu_pod(ctx: CheckContext) -> Iterator[Problem]:
    """On GKE Autopilot, a GPU pod Warden refuses: no accelerator selector, a node pool
    selector, or GPUs in an init container."""
    profile = ctx.profile
    if profile is None or profile.admission_fact(AUTOPILOT_GPU_RULES).state is not True:
        return
    stage = "after admission: GKE Autopilot's admission webhook (GKE Warden) refuses the pod"
    for _, template in ctx.pod_templates(here=True):
        gpus = gpu_requests(template)
        if "nvidia.com/gpu" not in gpus:
            continue
        selector = template.spec.get("nodeSelector")
        chosen = template.node_selector
        if GKE_ACCELERATOR_LABEL not in chosen and COMPUTE_CLASS_LABEL not in chosen:
            found = gpu_limit_pos(template, "nvidia.com/gpu")
            yield Problem.at(
                template.document,
                found[1] if found else template.spec.pos,
                f"{stage}: it requests nvidia.com/gpu without a `{GKE_ACCELERATOR_LABEL}` "
                f"nodeSelector (nor a `{COMPUTE_CLASS_LABEL}` with a GPU rule), so Autopilot "
                f"cannot tell which GPU to create a node with (autogke-gpu-limitation)",
                f"Add to the pod spec:\nnodeSelector:\n  {GKE_ACCELERATOR_LABEL}: nvidia-l4  "
                f"# the GPU type you need",
            )
        if _GKE_NODEPOOL in chosen and isinstance(selector, YMap):
            yield Problem.at(
                template.document,
                selector.pos_of_key(_GKE_NODEPOOL),
                f"{stage}: Autopilot manages its node pools and allows no `{_GKE_NODEPOOL}` "
                f"nodeSelector (autogke-node-affinity-selector-limitation)",
                f"Drop the `{_GKE_NODEPOOL}` selector; select the GPU by "
                f"`{GKE_ACCELERATOR_LABEL}`.",
            )
        for container in template.containers:
            if container.role is not ContainerRole.INIT:
                continue
            asked = [q for n, q in container.resources.limits.items() if is_gpu_resource(n)]
            asked += [q for n, q in container.resources.requests.items() if is_gpu_resource(n)]
            if asked:
                yield Problem.at(
                    template.document,
                    asked[0].key_pos,
                    f"{stage}: the init container {container.name} requests "
                    f"{asked[0].resource}, and Autopilot runs no init container with GPUs",
                    "Move the GPU work into an app container, or run it as a separate Job.",
                )
