"""The pod the scheduler sees: a pod template after the cluster's admission chain.

The scheduler never sees a pod as written. The API server's mutating admission runs first
(LimitRanger's defaults, then the platform's plugins and webhooks), and a workload admitted
through a Kueue LocalQueue carries its ResourceFlavor's tolerations. `admit()` works this out
once per pod template, in that order, and keeps apart what is certain from what holds only if
something gpulint does not know is so (the platform's plugins, the flavor Kueue picks): a
verdict that holds only for some values of an unknown is a warning naming the assumption.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpulint.constraints import Toleration
from gpulint.model import PodTemplate, Workload
from gpulint.profile.model import ClusterProfile, ResourceFlavor
from gpulint.profile.platforms import (
    COMPUTE_CLASS_LABEL,
    COMPUTE_CLASS_TOLERATION,
    DECLARE_PLATFORM,
    EXTENDED_RESOURCE_TOLERATION,
)
from gpulint.scheduling import extended_resource_tolerations
from gpulint.views import NamedTuple


class Admission(NamedTuple):
    """A pod template as admitted: the tolerations it surely carries, and those it carries
    only if an assumption holds."""

    template: PodTemplate
    tolerations: tuple[Toleration, ...]  # its own, plus what admission surely adds
    assumed: tuple[Toleration, ...] = ()  # added only if the assumptions hold
    assumptions: tuple[str, ...] = ()  # each unknown, and the line that makes it certain
    stages: tuple[str, ...] = ()  # what admission surely did, for messages

    @property
    def certain(self) -> bool:
        """Whether nothing gpulint does not know changes the admitted pod."""
        return not self.assumed

    @property
    def assumption_text(self) -> str:
        """The assumptions, joined for a message."""
        return "; ".join(self.assumptions)


def admit(
    template: PodTemplate,
    profile: ClusterProfile,
    workload: Workload | None = None,
    namespace: str = "default",
) -> Admission:
    """The pod template after the platform's admission plugins and Kueue's flavor.

    Platform mutations: ExtendedResourceToleration (a toleration per requested extended
    resource) and GKE's compute-class toleration (`cloud.google.com/compute-class=<class>:
    NoSchedule` for a pod that selects the class). Kueue: a workload naming a LocalQueue gets
    the tolerations of the ResourceFlavor its ClusterQueue admits it to; with several flavors
    the one Kueue picks is not known.
    """
    certain: list[Toleration] = list(template.tolerations)
    assumed: list[Toleration] = []
    assumptions: list[str] = []
    stages: list[str] = []

    ert = extended_resource_tolerations(template)
    if ert:
        fact = profile.admission_fact(EXTENDED_RESOURCE_TOLERATION)
        if fact.state is True:
            certain += ert
            stages.append(f"{EXTENDED_RESOURCE_TOLERATION} adds {_keys(ert)}")
        elif fact.state is None:
            assumed += ert
            assumptions.append(
                f"this assumes the API server does not run {EXTENDED_RESOURCE_TOLERATION}, "
                f"which would tolerate {_keys(ert)}, and {_why_unknown(profile)}: write "
                f"`{DECLARE_PLATFORM}` (or spec.admission.extendedResourceToleration) in the "
                f"profile to make it certain"
            )

    compute_class = template.node_selector.get(COMPUTE_CLASS_LABEL)
    if compute_class:
        toleration = Toleration(
            COMPUTE_CLASS_LABEL, "Equal", compute_class, "NoSchedule", None, template.spec.pos
        )
        fact = profile.admission_fact(COMPUTE_CLASS_TOLERATION)
        if fact.state is True:
            certain.append(toleration)
            stages.append(f"GKE tolerates the taint of compute class {compute_class}")
        elif fact.state is None:
            assumed.append(toleration)
            assumptions.append(
                f"this assumes the cluster is not GKE, which tolerates the taint of the compute "
                f"class {compute_class} the pod selects; declare `{DECLARE_PLATFORM}` in the "
                f"profile to make it certain"
            )

    flavors = kueue_flavors(profile, workload, namespace) if workload is not None else ()
    if len(flavors) == 1:
        (flavor,) = flavors
        added = _flavor_tolerations(flavor, template)
        certain += added
        if added:
            stages.append(f"Kueue's ResourceFlavor {flavor.name} adds {_keys(added)}")
    elif flavors:
        added = [t for flavor in flavors for t in _flavor_tolerations(flavor, template)]
        if added:
            assumed += added
            names = ", ".join(f.name for f in flavors)
            assumptions.append(
                f"this assumes Kueue admits the workload to no flavor whose tolerations would "
                f"let it in (its ClusterQueue has the flavors {names}, and which one Kueue "
                f"picks depends on free quota)"
            )
    return Admission(template, tuple(certain), tuple(assumed), tuple(assumptions), tuple(stages))


def kueue_flavors(
    profile: ClusterProfile, workload: Workload, namespace: str
) -> tuple[ResourceFlavor, ...]:
    """The ResourceFlavors the profile defines among those the workload's ClusterQueue may
    admit it to (none: no LocalQueue, or no flavor object known)."""
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
    by_name = {f.name: f for f in profile.resource_flavors}
    names = dict.fromkeys(f.name for f in queue.flavors)
    # A flavor the profile does not define is one whose tolerations are unknown: no flavor is
    # then sure, so every known one is only possible.
    known = tuple(by_name[n] for n in names if n in by_name)
    if len(known) == 1 and len(names) > 1:
        return (*known, ResourceFlavor("(undefined)"))
    return known


def _flavor_tolerations(flavor: ResourceFlavor, template: PodTemplate) -> list[Toleration]:
    return [
        Toleration(t.key, t.operator, t.value, t.effect, None, template.spec.pos)
        for t in flavor.tolerations
    ]


def _why_unknown(profile: ClusterProfile) -> str:
    if profile.provider is None:
        return "nothing recognised the platform"
    return f"whether {profile.provider} runs it is unknown"


def _keys(tolerations: Iterable[Toleration]) -> str:
    keys = dict.fromkeys(f"`{t.key}`" for t in tolerations)
    return ", ".join(keys)
