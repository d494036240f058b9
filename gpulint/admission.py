"""The pod the scheduler sees: a pod template after the cluster's admission chain.

The scheduler never sees a pod as written. The API server's mutating admission runs first
(LimitRanger's defaults, the RuntimeClass plugin's scheduling and overhead, then the platform's
plugins and webhooks), and a workload admitted through a Kueue LocalQueue carries its
ResourceFlavor's tolerations. `admit()` works this out once per pod template, in that order,
and keeps apart what is certain from what holds only if something gpulint does not know is so
(the platform's plugins, a RuntimeClass the profile does not define, the flavor Kueue picks):
a verdict that holds only for some values of an unknown is a warning naming the assumption.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING

from gpulint.accelerators import is_extended_resource
from gpulint.constraints import Toleration
from gpulint.errors import GpulintError
from gpulint.fields import mapping_at
from gpulint.model import (
    NAMESPACE_TOLERATIONS,
    Container,
    ContainerRole,
    Document,
    PodTemplate,
    Workload,
    add_amounts,
    of_kind,
)
from gpulint.profile.model import ClusterProfile
from gpulint.profile.platforms import (
    ARCH_LABEL,
    ARM_TOLERATION,
    COMPUTE_CLASS_LABEL,
    COMPUTE_CLASS_TOLERATION,
    DECLARE_PLATFORM,
    EXTENDED_RESOURCE_TOLERATION,
    POD_TOLERATION_RESTRICTION,
)
from gpulint.quantity import format_quantity
from gpulint.scheduling import extended_resource_tolerations, format_amount
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap

if TYPE_CHECKING:
    # Only GPU304 reads LimitRanges; a placement run does not import the policy model.
    from gpulint.profile.admission_policies import RequiredResources
    from gpulint.profile.objects import (
        ClusterQueue,
        FlavorToleration,
        LimitRangeItem,
        LocalQueue,
        ResourceFlavor,
    )
    from gpulint.profile.policy import LimitRangeInEffect, RuntimeClassInEffect


class Admission(NamedTuple):
    """A pod template as admitted: the tolerations it surely carries, and those it carries
    only if an assumption holds."""

    template: PodTemplate
    tolerations: tuple[Toleration, ...]  # its own, plus what admission surely adds
    assumed: tuple[Toleration, ...] = ()  # added only if the assumptions hold
    assumptions: tuple[str, ...] = ()  # each unknown, and the line that makes it certain
    stages: tuple[str, ...] = ()  # what admission surely did, for messages
    # What each ResourceFlavor Kueue may pick would add (tolerations, nodeSelector entries),
    # when it may pick several.
    choices: tuple[tuple[tuple[Toleration, ...], Mapping[str, str]], ...] = ()
    # The tolerations each assumption would add, in the order of `assumptions`.
    assumed_by: tuple[tuple[Toleration, ...], ...] = ()
    # The nodeSelector entries admission surely adds: the RuntimeClass's scheduling.nodeSelector
    # and the one Kueue flavor's nodeLabels.
    node_selector: Mapping[str, str] = {}
    # The pod overhead admission sets (the RuntimeClass's overhead.podFixed), which the
    # scheduler and ResourceQuota add to the pod's requests; empty when the pod writes its own.
    overhead: Mapping[str, Decimal] = {}
    # The RuntimeClass admission applied (None: the pod names none the profile defines).
    runtime_class: str | None = None

    def assumptions_for(self, enough: Callable[[tuple[Toleration, ...]], bool]) -> str:
        """The assumptions a verdict rests on: those whose tolerations alone are `enough` to
        change it, else all of them, joined for a message."""
        alone = [a for a, t in zip(self.assumptions, self.assumed_by, strict=True) if enough(t)]
        return "; ".join(alone or self.assumptions)

    @property
    def certain(self) -> bool:
        """Whether nothing gpulint does not know changes the admitted pod."""
        return not self.assumed

    @property
    def assumption_text(self) -> str:
        """The assumptions, joined for a message."""
        return "; ".join(self.assumptions)


# What makes a verdict on a pod certain when an input it is completed from is missing.
_CHECK_IT_TOO = "check the file that defines it too to make it certain"


def admit(
    template: PodTemplate,
    profile: ClusterProfile,
    workload: Workload | None = None,
    namespace: str = "default",
    namespace_defaults: Sequence[Toleration] = (),
) -> Admission:
    """The pod template after the platform's admission plugins and Kueue's flavor.

    RuntimeClass (on by default): a pod naming a class the profile defines gets its
    scheduling.tolerations and nodeSelector, and its overhead.podFixed as the pod's overhead
    (k8s plugin/pkg/admission/runtimeclass/admission.go); a class the profile does not define,
    where it does not know every class, may add any toleration. Platform mutations:
    ExtendedResourceToleration (a toleration per requested extended resource) and GKE's
    compute-class toleration (`cloud.google.com/compute-class=<class>:NoSchedule` for a pod
    that selects the class) and Arm toleration (`kubernetes.io/arch=arm64:NoSchedule` for a
    pod that selects arm64). Kueue: a workload naming a LocalQueue gets the tolerations and
    nodeLabels of the ResourceFlavor its ClusterQueue admits it to; with several flavors the
    one Kueue picks is not known. PodTolerationRestriction (on OpenShift, off on EKS, unknown
    elsewhere): the pod gets `namespace_defaults`, the tolerations its Namespace's
    `scheduler.alpha.kubernetes.io/defaultTolerations` annotation lists.
    """
    certain: list[Toleration] = list(template.tolerations)
    assumed: list[Toleration] = []
    assumptions: list[str] = []
    assumed_by: list[tuple[Toleration, ...]] = []
    stages: list[str] = []

    def mutate(added: Sequence[Toleration], happens: bool | None, stage: str, unsure: str) -> None:
        """Tolerations a stage adds: certain when it `happens`, assumed away when that is not
        known (`unsure` says so in messages), nothing when it is known not to."""
        if happens is True:
            certain.extend(added)
            stages.append(stage)
        elif happens is None:
            assumed.extend(added)
            assumed_by.append(tuple(added))
            assumptions.append(unsure)

    ert = extended_resource_tolerations(template)
    if ert:
        mutate(
            ert,
            profile.admission_fact(EXTENDED_RESOURCE_TOLERATION).state,
            f"{EXTENDED_RESOURCE_TOLERATION} adds {_keys(ert)}",
            f"this assumes the API server does not run {EXTENDED_RESOURCE_TOLERATION}, "
            f"which would tolerate {_keys(ert)}, and {_why_unknown(profile)}: write "
            f"`{DECLARE_PLATFORM}` (or spec.admission.extendedResourceToleration) in the "
            f"profile to make it certain",
        )

    if namespace_defaults:
        mutate(
            namespace_defaults,
            profile.admission_fact(POD_TOLERATION_RESTRICTION).state,
            f"{POD_TOLERATION_RESTRICTION} adds Namespace {namespace}'s default tolerations "
            f"{_keys(namespace_defaults)}",
            f"this assumes the API server does not run {POD_TOLERATION_RESTRICTION}, which "
            f"would add Namespace {namespace}'s default tolerations "
            f"({_keys(namespace_defaults)}, `{NAMESPACE_TOLERATIONS}`), and "
            f"{_why_unknown(profile)}: write "
            + (f"`{DECLARE_PLATFORM}` or " if profile.provider is None else "")
            + "`spec.admission.podTolerationRestriction: true|false` in the profile to make it "
            "certain",
        )

    if template.completed_by is not None:
        # Every toleration the missing object could add: a key-less Exists tolerates all.
        what, _, *making_sure = template.completed_by
        sure = making_sure[0] if making_sure else _CHECK_IT_TOO
        mutate(
            [Toleration("", "Exists", "", "", None, template.spec.pos)],
            None,
            "",
            f"this assumes {what}, which is not among the inputs, adds no toleration for it: "
            f"{sure}",
        )

    classes = compute_classes(template)
    if classes:
        tolerations = [
            Toleration(COMPUTE_CLASS_LABEL, "Equal", c, "NoSchedule", None, template.spec.pos)
            for c in classes
        ]
        named = ", ".join(classes)
        mutate(
            tolerations,
            profile.admission_fact(COMPUTE_CLASS_TOLERATION).state,
            f"GKE tolerates the taint of compute class {named}",
            f"this assumes the cluster is not GKE, which tolerates the taint of the compute "
            f"class {named} the pod selects; declare `{DECLARE_PLATFORM}` in the "
            f"profile to make it certain",
        )

    arm = selects_arm64(template)
    if arm is not None:
        fact = profile.admission_fact(ARM_TOLERATION).state
        mutate(
            [Toleration(ARCH_LABEL, "Equal", "arm64", "NoSchedule", None, template.spec.pos)],
            # A pod that also allows other architectures may be left to tolerate it itself.
            fact if arm or fact is not True else None,
            "GKE tolerates the taint of its Arm nodes",
            (
                "this assumes the cluster is not GKE, which tolerates the taint of its Arm "
                f"nodes for a pod that selects arm64; declare `{DECLARE_PLATFORM}` in the "
                "profile to make it certain"
                if arm
                else "this assumes GKE does not give a pod that allows arm64 among other "
                "architectures the toleration of its Arm nodes' taint; tolerate "
                "`kubernetes.io/arch=arm64:NoSchedule` to make it certain"
            ),
        )

    runtime_selector: Mapping[str, str] = {}
    overhead: Mapping[str, Decimal] = {}
    name = template.runtime_class_name
    applied = None
    if name is not None:
        found = next((c for c in profile.runtime_classes if c.name == name), None)
        if found is not None:
            applied = name
            added = admitted_tolerations(found.tolerations, template.runtime_class_pos)
            if added:
                mutate(added, True, f"RuntimeClass {name} adds {_keys(added)}", "")
            # An entry the pod selects otherwise refuses the pod (GPU307): the pod's stays.
            runtime_selector = {
                k: v for k, v in found.node_selector.items() if k not in template.node_selector
            }
            if "overhead" not in template.spec:
                overhead = found.overhead
        elif not profile.runtime_classes_known:
            # Its scheduling may tolerate any taint: a verdict on taints rests on it adding none.
            anything = Toleration("", "Exists", "", "", None, template.runtime_class_pos)
            mutate(
                [anything],
                None,
                "",
                f"this assumes RuntimeClass `{name}`, which the profile does not define, adds no "
                f"tolerations (its scheduling.tolerations are added to every pod that names "
                f"it): list the cluster's RuntimeClasses in the profile (`runtimeClasses:`, or "
                f"a dump of `kubectl get runtimeclasses -o yaml`) to make it certain",
            )

    assignments = (
        kueue_flavors(profile, workload, namespace, template) if workload is not None else ()
    )
    choices: tuple[tuple[tuple[Toleration, ...], Mapping[str, str]], ...] = ()
    node_selector: Mapping[str, str] = runtime_selector
    if len(assignments) == 1:
        (flavors,) = assignments
        added = [t for f in flavors for t in _flavor_tolerations(f, template)]
        node_selector = _flavor_selector(runtime_selector, flavors)
        if added:
            named = ", ".join(f.name for f in flavors)
            kind = "ResourceFlavors" if len(flavors) > 1 else "ResourceFlavor"
            mutate(added, True, f"Kueue's {kind} {named} adds {_keys(added)}", "")
    elif assignments:
        choices = tuple(
            (
                tuple(t for f in flavors for t in _flavor_tolerations(f, template)),
                _flavor_selector(runtime_selector, flavors),
            )
            for flavors in assignments
        )
        # Last of the assumptions: the placement rules name it by that place.
        mutate(
            [t for choice, _ in choices for t in choice],
            None,
            "",
            f"this assumes Kueue admits the workload to a flavor whose tolerations and node "
            f"labels keep it out (its ClusterQueue has the flavors "
            f"{_alternatives(assignments)}, and which one Kueue picks depends on free quota)",
        )
    return Admission(
        template,
        tuple(certain),
        tuple(assumed),
        tuple(assumptions),
        tuple(stages),
        choices,
        tuple(assumed_by),
        node_selector,
        overhead,
        applied,
    )


def compute_classes(template: PodTemplate) -> tuple[str, ...]:
    """The GKE compute classes a pod selects: by nodeSelector, or by a required node affinity
    `In` expression (GKE mutates both, kubernetes-engine-samples
    autoscaling/custom-compute-classes/vap/restrict-ccc-toleration.yaml)."""
    found = dict.fromkeys(
        [template.node_selector[COMPUTE_CLASS_LABEL]]
        if COMPUTE_CLASS_LABEL in template.node_selector
        else []
    )
    if "affinity" in template.spec:
        for term in template.required_node_affinity or ():
            for requirement in term.match_expressions:
                if requirement.key == COMPUTE_CLASS_LABEL and requirement.operator == "In":
                    found.update(dict.fromkeys(requirement.values))
    return tuple(found)


def selects_arm64(template: PodTemplate) -> bool | None:
    """Whether a pod selects Arm nodes, as GKE reads it to add their taint's toleration: True
    for `nodeSelector: {kubernetes.io/arch: arm64}` or a required node affinity
    `kubernetes.io/arch In [arm64]` (cloud.google.com/kubernetes-engine/docs/how-to/
    prepare-arm-workloads-for-deployment), False when that `In` allows other architectures
    too (the page says nothing of those), None when it does not select arm64."""
    if template.node_selector.get(ARCH_LABEL) == "arm64":
        return True
    found: bool | None = None
    if "affinity" in template.spec:
        for term in template.required_node_affinity or ():
            for requirement in term.match_expressions:
                if (
                    requirement.key == ARCH_LABEL
                    and requirement.operator == "In"
                    and "arm64" in requirement.values
                ):
                    found = found or set(requirement.values) == {"arm64"}
    return found


def kueue_flavors(
    profile: ClusterProfile, workload: Workload, namespace: str, template: PodTemplate
) -> tuple[tuple[ResourceFlavor, ...], ...]:
    """The flavor assignments the workload's ClusterQueue may give `template`: one flavor of
    each resource group that covers a resource the pod requests (Kueue assigns a flavor per
    resource the pod set requests, the same within a group, and the pod gets the tolerations
    and nodeLabels of each), among the ResourceFlavors the profile defines. None: no
    LocalQueue, or no flavor object known for what the pod requests."""
    if not profile.local_queues or not profile.resource_flavors:
        return ()
    from gpulint.kueue import queue_label  # only workloads of a Kueue profile ask

    found = queue_label(workload)
    if found is None:
        return ()
    local = next(
        (q for q in profile.local_queues if (q.namespace, q.name) == (namespace, found[0])),
        None,
    )
    queue = next(
        (q for q in profile.cluster_queues if local is not None and q.name == local.cluster_queue),
        None,
    )
    if queue is None:
        return ()
    from gpulint.profile.objects import ResourceFlavor

    # Kueue counts the pods of a pod set as the resource `pods`, which a group may cover.
    requested = {r for r, amount in template.effective_requests.items() if amount} | {"pods"}
    groups: dict[frozenset[str], list[str]] = {}
    for flavor in queue.flavors:
        groups.setdefault(flavor.covers or queue.covered, []).append(flavor.name)
    by_name = {f.name: f for f in profile.resource_flavors}
    options: list[tuple[ResourceFlavor, ...]] = []
    for covers, names in groups.items():
        if not covers & requested:
            continue
        names = list(dict.fromkeys(names))
        # A flavor the profile does not define is one whose tolerations are unknown: no
        # flavor of its group is then sure, so every known one is only possible.
        known = tuple(by_name[n] for n in names if n in by_name)
        if known and len(known) < len(names):
            known = (*known, ResourceFlavor("(undefined)"))
        if known:
            options.append(known)
    if not options:
        return ()
    return tuple(itertools.product(*options))


def _flavor_selector(
    runtime_selector: Mapping[str, str], flavors: Iterable[ResourceFlavor]
) -> Mapping[str, str]:
    """The nodeSelector entries admission adds: the RuntimeClass's, then every flavor's
    nodeLabels."""
    selector = dict(runtime_selector)
    for flavor in flavors:
        selector.update(flavor.node_labels)
    return selector


def _alternatives(assignments: Iterable[tuple[ResourceFlavor, ...]]) -> str:
    """`a, b` (one group), or `a + gpu, b + gpu` (several): the assignments a message names."""
    return ", ".join(" + ".join(f.name for f in flavors) for flavors in assignments)


#: Kueue's kinds that decide what it writes into the pods it admits.
KUEUE_KINDS = frozenset({"ResourceFlavor", "ClusterQueue", "LocalQueue"})
_KUEUE_GROUP = "kueue.x-k8s.io/"


def with_manifest_queues(
    profile: ClusterProfile,
    documents: Iterable[Document],
    namespace_of: Callable[[Document], str],
) -> ClusterProfile:
    """`profile` with the Kueue ResourceFlavors, ClusterQueues and LocalQueues among the
    manifests (`documents`), for admission only: those objects are applied with the workloads
    that name them, so a flavor's tolerations and nodeLabels reach the pods. A manifest object
    replaces the profile's of the same name (it is what will be applied)."""
    queued = [
        d for d in of_kind(documents, *KUEUE_KINDS) if d.ref.api_version.startswith(_KUEUE_GROUP)
    ]
    if not queued:
        return profile
    # Only a run whose inputs hold Kueue objects reads them.
    from gpulint.profile.kueue import (
        cluster_queue_from_object,
        local_queue_from_object,
        resource_flavor_from_object,
    )

    flavors: dict[str, ResourceFlavor] = {}
    queues: dict[str, ClusterQueue] = {}
    locals_: dict[tuple[str, str], LocalQueue] = {}
    for document in queued:
        ref = document.ref
        if ref.kind == "ResourceFlavor":
            flavors[ref.name] = resource_flavor_from_object(document.obj)
        elif ref.kind == "LocalQueue":
            local = local_queue_from_object(document.obj)._replace(namespace=namespace_of(document))
            locals_[(local.namespace, local.name)] = local
        else:
            try:
                queues[ref.name] = cluster_queue_from_object(document.obj, str(ref), [])
            except GpulintError:
                continue  # a quota that is no quantity: the schema rules report it
    if not (flavors or queues or locals_):
        return profile
    return replace(
        profile,
        resource_flavors=(
            *(f for f in profile.resource_flavors if f.name not in flavors),
            *flavors.values(),
        ),
        cluster_queues=(
            *(q for q in profile.cluster_queues if q.name not in queues),
            *queues.values(),
        ),
        local_queues=(
            *(q for q in profile.local_queues if (q.namespace, q.name) not in locals_),
            *locals_.values(),
        ),
    )


def with_manifest_runtime_classes(
    profile: ClusterProfile, documents: Iterable[Document]
) -> ClusterProfile:
    """`profile` with the RuntimeClasses among the manifests (`documents`), each replacing the
    profile's of its name: they are applied with the pods that name them. Whether the profile
    knows every class of the cluster is left as it is."""
    if not of_kind(documents, "RuntimeClass"):
        return profile
    from gpulint.profile.policy import runtime_classes_in_effect

    found = runtime_classes_in_effect(documents, profile)
    return replace(profile, runtime_classes=tuple(c.runtime_class for c in found.values()))


def runtime_class_refusal(
    template: PodTemplate, classes: Mapping[str, RuntimeClassInEffect], known: bool
) -> Refusal | None:
    """Why the RuntimeClass admission plugin refuses the pod, when it surely does: the class it
    names does not exist (`known`: `classes` are all the cluster has), its nodeSelector
    contradicts the pod's, or the pod writes an overhead other than the class's."""
    name = template.runtime_class_name
    if name is None:
        return None
    pos = template.runtime_class_pos
    found = classes.get(name)
    if found is None:
        if not known:
            return None
        have = ", ".join(f"`{n}`" for n in sorted(classes)) or "none"
        instead = (
            f"Name a RuntimeClass the cluster has ({have})"
            if classes
            else "Remove runtimeClassName (the cluster has no RuntimeClass)"
        )
        return Refusal(
            "RuntimeClass",
            f"runtimeClassName `{name}` names a RuntimeClass the cluster does not have (it has "
            f"{have}): the API server refuses every such pod (`pod rejected: RuntimeClass "
            f'"{name}" not found`), and its workload never gets one',
            pos,
            fix=f"{instead}, or create RuntimeClass `{name}` before the workload (its handler "
            f"one the nodes' container runtime configures: the GPU Operator's container "
            f"toolkit and k3s configure `nvidia`); if the profile is out of date, refresh it "
            f"(`gpulint profile snapshot`, or its `runtimeClasses:`).",
        )
    runtime_class = found.runtime_class
    for key, wanted in runtime_class.node_selector.items():
        have_value = template.node_selector.get(key)
        if have_value is not None and have_value != wanted:
            selector = template.spec.get("nodeSelector")
            where = selector.pos_of_value(key) if isinstance(selector, YMap) else pos
            return Refusal(
                f"RuntimeClass {name}",
                f"RuntimeClass `{name}` requires nodeSelector `{key}: {wanted}`, and the pod "
                f"selects `{key}: {have_value}`: the API server refuses the pod (`conflict: "
                f"runtimeClass.scheduling.nodeSelector[{key}] = {wanted}; "
                f"pod.spec.nodeSelector[{key}] = {have_value}`)",
                where,
                found.document,
                f"Remove `{key}` from the pod's nodeSelector: RuntimeClass `{name}` sets it to "
                f"`{wanted}` (or name a RuntimeClass for the nodes the pod selects).",
            )
    written = template.spec.get("overhead")
    if runtime_class.overhead and isinstance(written, YMap):
        from gpulint.quantity import parse_quantity

        amounts = {str(k): parse_quantity(v) for k, v in written.items()}
        if None not in amounts.values() and amounts != dict(runtime_class.overhead):
            return Refusal(
                f"RuntimeClass {name}",
                f"the pod writes an overhead, and RuntimeClass `{name}` sets another "
                f"({overhead_text(runtime_class.overhead)}): the API server refuses the pod "
                f"(`pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                f"Overhead`)",
                template.spec.pos_of_key("overhead"),
                found.document,
                f"Remove `overhead` from the pod spec: the RuntimeClass admission plugin sets "
                f"it from RuntimeClass `{name}`.",
            )
    return None


def overhead_text(amounts: Mapping[str, Decimal]) -> str:
    """`cpu 250m, memory 120Mi`: a pod overhead for messages."""
    return ", ".join(f"{r} {_amount(r, a)}" for r, a in amounts.items())


def _flavor_tolerations(flavor: ResourceFlavor, template: PodTemplate) -> list[Toleration]:
    return admitted_tolerations(flavor.tolerations, template.spec.pos)


def admitted_tolerations(stated: Iterable[FlavorToleration], pos: Pos) -> list[Toleration]:
    """The tolerations a RuntimeClass's scheduling or a ResourceFlavor states, as the pods
    admission gives them to carry them (placed at `pos`, where a message points)."""
    return [Toleration(t.key, t.operator, t.value, t.effect, None, pos) for t in stated]


def namespace_tolerations(namespace: YMap) -> tuple[Toleration, ...]:
    """The default tolerations a Namespace object's annotation gives its pods, placed at the
    annotation's value; none when it holds no JSON list of tolerations (Go's JSON decoding,
    which the plugin uses, matches field names whatever their case: `Key` is `key`)."""
    import json

    annotations = mapping_at(namespace, "metadata", "annotations")
    written = annotations.get(NAMESPACE_TOLERATIONS)
    try:
        items = json.loads(written) if isinstance(written, str) else None
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    pos = annotations.pos_of_value(NAMESPACE_TOLERATIONS)
    found = []
    for item in items:
        if not isinstance(item, dict):
            return ()
        fields = {str(k).lower(): v for k, v in item.items()}
        seconds = fields.get("tolerationseconds")
        found.append(
            Toleration(
                str(fields.get("key") or ""),
                str(fields.get("operator") or "Equal"),
                str(fields.get("value") or ""),
                str(fields.get("effect") or ""),
                seconds if isinstance(seconds, int) and not isinstance(seconds, bool) else None,
                pos,
            )
        )
    return tuple(found)


def _why_unknown(profile: ClusterProfile) -> str:
    if profile.provider is None:
        return "nothing recognised the platform"
    return f"whether {profile.provider} runs it is unknown"


def _keys(tolerations: Iterable[Toleration]) -> str:
    keys = dict.fromkeys(f"`{t.key}`" for t in tolerations)
    return ", ".join(keys)


# ---------------------------------------------------------------------------------------------
# Validation after admission: LimitRanger's defaults and limits, for every resource


class Refusal(NamedTuple):
    """Why the API server refuses the admitted pod, and where the manifest causes it."""

    stage: str  # the object that refuses: `LimitRange ml/defaults`
    message: str
    pos: Pos
    involves: Document | None = None  # the manifest object that refuses (None: the profile's)
    fix: str | None = None  # what to do, where the refusal says more than the rule's fix


def limit_range_refusals(
    template: PodTemplate, limit_ranges: Iterable[LimitRangeInEffect]
) -> Iterator[Refusal]:
    """What the namespace's LimitRanges refuse in the pod, for every resource but extended
    ones (GPU303 judges those): LimitRanger first fills in each container's default limit and
    request (a `max` with no `default` is the default limit; a `default` with no
    `defaultRequest` the default request, else `min`), then the API refuses a request above
    its limit, and LimitRanger a value under `min`, over `max`, or a limit over
    `maxLimitRequestRatio` times the request.
    """
    limit_ranges = tuple(limit_ranges)
    for source in limit_ranges:
        limit_range = source.limit_range
        name = f"`{limit_range.namespace}/{limit_range.name}`"
        for item in limit_range.items:
            if item.type == "Pod":
                found_pod = _pod_refusal(template, item, limit_ranges)
                if found_pod is not None:
                    message, pos = found_pod
                    yield Refusal(
                        f"LimitRange {limit_range.namespace}/{limit_range.name}",
                        f"after admission: the LimitRange {name} {message}",
                        pos,
                        source.document,
                    )
            if item.type != "Container":
                continue
            default = {**item.max, **item.default}
            default_request = {**item.min, **default, **item.default_request}
            resources = dict.fromkeys(
                [*default, *default_request, *item.max, *item.min, *item.max_limit_request_ratio]
            )
            for container in template.containers:
                if container.role is ContainerRole.EPHEMERAL:
                    continue
                for resource in resources:
                    if is_extended_resource(resource):
                        continue
                    found = _container_refusal(container, resource, item, default, default_request)
                    if found is not None:
                        message, pos = found
                        yield Refusal(
                            f"LimitRange {limit_range.namespace}/{limit_range.name}",
                            f"after admission: the LimitRange {name} {message}",
                            pos,
                            source.document,
                        )


def _container_refusal(
    container: Container,
    resource: str,
    item: LimitRangeItem,
    default: Mapping[str, Decimal],
    default_request: Mapping[str, Decimal],
) -> tuple[str, Pos] | None:
    written_limit = container.resources.limits.get(resource)
    written_request = container.resources.requests.get(resource)
    limit = written_limit.amount if written_limit is not None else default.get(resource)
    request: Decimal | None
    if written_request is not None:
        request = written_request.amount
    elif written_limit is not None:
        request = written_limit.amount  # API defaulting copies the limit before admission
    else:
        request = default_request.get(resource)
    where = _quantity_pos(container, resource)
    what = _RESOURCE_WORDS.get(resource, resource)
    who = f"{container.field_path} ({container.name})"
    of = f"of {who}"
    if written_limit is None and limit is not None and request is not None and request > limit:
        return (
            f"sets the {what} limit {of} to {_amount(resource, limit)}, below the request of "
            f"{_amount(resource, request)}: the API server refuses the pod (`must be less than or "
            f"equal to {resource} limit of {_amount(resource, limit)}`)",
            where,
        )
    if resource in item.min:
        least = item.min[resource]
        if request is None:
            return (
                f"requires a {what} request of at least {_amount(resource, least)}, and {who} "
                f"has none",
                where,
            )
        if request < least:
            return (
                f"requires a {what} request of at least {_amount(resource, least)}, and {who} "
                f"requests {_amount(resource, request)}",
                where,
            )
    if resource in item.max and limit is not None and limit > item.max[resource]:
        return (
            f"allows {what} limits of at most {_amount(resource, item.max[resource])}, and "
            f"{who} sets {_amount(resource, limit)}",
            where,
        )
    ratio = item.max_limit_request_ratio.get(resource)
    if ratio is not None and limit is not None and request and limit / request > ratio:
        return (
            f"allows {what} limits of at most {format_quantity(ratio)} times the request, and "
            f"{who} has limit {_amount(resource, limit)} for a request of "
            f"{_amount(resource, request)}",
            where,
        )
    return None


def _pod_refusal(
    template: PodTemplate, item: LimitRangeItem, limit_ranges: Iterable[LimitRangeInEffect]
) -> tuple[str, Pos] | None:
    """What a `type: Pod` item refuses: LimitRanger sums each resource over the containers
    (after the Container items' defaults; an init container counts when it alone asks more)
    and refuses a sum under `min`, over `max`, or a limit over `maxLimitRequestRatio` times
    the request; a resource `min` names that no container requests, or `max` names that no
    container limits, is refused too (`PodValidateLimitFunc`)."""
    default_limits: dict[str, Decimal] = {}
    default_requests: dict[str, Decimal] = {}
    for source in limit_ranges:
        for other in source.limit_range.items:
            if other.type == "Container":
                default_limits.update({**other.max, **other.default})
                default_requests.update(
                    {**other.min, **other.max, **other.default, **other.default_request}
                )
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    init_requests: dict[str, Decimal] = {}
    init_limits: dict[str, Decimal] = {}
    # A resource some container writes as no quantity (a placeholder) has no known sum.
    unknown: set[str] = set()
    for container in template.containers:
        if container.role is ContainerRole.EPHEMERAL:
            continue
        written = container.resources
        for values in (written.limits, written.requests):
            unknown.update(r for r, q in values.items() if q.amount is None)
        limit = {r: q.amount for r, q in written.limits.items() if q.amount is not None}
        limit = {**{r: v for r, v in default_limits.items() if r not in limit}, **limit}
        request = {r: q.amount for r, q in written.requests.items() if q.amount is not None}
        # API defaulting copies a written limit into a missing request before admission.
        request = {**{r: v for r, v in limit.items() if r in written.limits}, **request}
        request = {**{r: v for r, v in default_requests.items() if r not in request}, **request}
        # Sidecars run beside the app containers: their amounts add up with them.
        if container.role in (ContainerRole.APP, ContainerRole.SIDECAR):
            add_amounts(requests, request)
            add_amounts(limits, limit)
        else:
            for target, values in ((init_requests, request), (init_limits, limit)):
                for r, v in values.items():
                    target[r] = max(target.get(r, Decimal(0)), v)
    for target, init in ((requests, init_requests), (limits, init_limits)):
        for r, v in init.items():
            target[r] = max(target.get(r, Decimal(0)), v)
    where = template.spec.pos
    for resource, least in item.min.items():
        if is_extended_resource(resource) or resource in unknown:
            continue
        what = _RESOURCE_WORDS.get(resource, resource)
        if resource not in requests:
            return (
                f"requires the pod's {what} requests (summed over its containers) to be at "
                f"least {_amount(resource, least)}, and no container requests {what}",
                where,
            )
        if requests[resource] < least:
            return (
                f"requires the pod's {what} requests (summed over its containers) to be at "
                f"least {_amount(resource, least)}, and they come to "
                f"{_amount(resource, requests[resource])}",
                where,
            )
    for resource, most in item.max.items():
        if is_extended_resource(resource) or resource in unknown:
            continue
        what = _RESOURCE_WORDS.get(resource, resource)
        if resource not in limits:
            return (
                f"allows the pod's {what} limits (summed over its containers) at most "
                f"{_amount(resource, most)}, and no container sets a {what} limit",
                where,
            )
        if limits[resource] > most:
            return (
                f"allows the pod's {what} limits (summed over its containers) at most "
                f"{_amount(resource, most)}, and they come to "
                f"{_amount(resource, limits[resource])}",
                where,
            )
    for resource, ratio in item.max_limit_request_ratio.items():
        if is_extended_resource(resource) or resource in unknown:
            continue
        limit_sum, request_sum = limits.get(resource), requests.get(resource)
        if limit_sum is not None and request_sum and limit_sum / request_sum > ratio:
            what = _RESOURCE_WORDS.get(resource, resource)
            return (
                f"allows the pod's {what} limits at most {format_quantity(ratio)} times its "
                f"requests (summed over its containers), and they come to "
                f"{_amount(resource, limit_sum)} for {_amount(resource, request_sum)}",
                where,
            )
    return None


_RESOURCE_WORDS = {"cpu": "CPU", "memory": "memory", "ephemeral-storage": "ephemeral-storage"}


def _amount(resource: str, amount: Decimal) -> str:
    if resource == "cpu" and amount < 1:
        return f"{format_quantity(amount * 1000)}m"
    return format_amount(resource, amount)


def _quantity_pos(container: Container, resource: str) -> Pos:
    """The request of `resource` (else its limit, else `resources:`, else the container)."""
    for written in (container.resources.requests, container.resources.limits):
        if resource in written:
            return written[resource].key_pos
    return container.resources.pos if container.resources.node is not None else container.pos


def policy_refusals(
    template: PodTemplate,
    policies: Iterable[RequiredResources],
    limit_ranges: Iterable[LimitRangeInEffect] = (),
) -> Iterator[Refusal]:
    """What an enforced Gatekeeper or Kyverno "require requests/limits" policy refuses in the
    pod, after LimitRanger has filled in the namespace's defaults (a validating webhook sees
    the pod as mutated)."""
    default_limits: dict[str, Decimal] = {}
    default_requests: dict[str, Decimal] = {}
    for source in limit_ranges:
        for item in source.limit_range.items:
            if item.type == "Container":
                default_limits.update({**item.max, **item.default})
                default_requests.update(
                    {**item.min, **item.max, **item.default, **item.default_request}
                )
    for policy in policies:
        for container in template.containers:
            if container.role is ContainerRole.EPHEMERAL or (
                container.role is not ContainerRole.APP and not policy.init_containers
            ):
                continue
            written = container.resources
            missing = [
                f"a {r} limit"
                for r in policy.limits
                if r not in written.limits and r not in default_limits
            ] + [
                f"a {r} request"
                for r in policy.requests
                if r not in written.requests
                and r not in written.limits
                and r not in default_requests
            ]
            if missing:
                yield Refusal(
                    policy.label,
                    f"after admission: the {policy.label} policy refuses the pod: "
                    f"{container.field_path} ({container.name}) sets no "
                    f"{' and no '.join(m.removeprefix('a ') for m in missing)}, and no "
                    f"LimitRange of the namespace gives it one",
                    written.pos if written.node is not None else container.pos,
                )
