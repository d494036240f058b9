"""Capacity rules that need the cluster profile: GPU201 (GPUs for all replicas), GPU202 (deadlines).

Both look only at pods some pool can run; a pod no pool can run is reported by the placement
rules instead.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from functools import cache

from gpulint.gpus import gpu_limit_pos, gpu_requests
from gpulint.model import DocumentLike, PodTemplate, Severity, Workload
from gpulint.profile.model import ClusterProfile, Pool
from gpulint.quantity import format_quantity
from gpulint.replicas import (
    Autoscaler,
    GangPart,
    PlannedPods,
    describe_gang,
    gang_parts,
    groups_of,
    min_field_of,
    planned_pods,
    runs_on_every_node,
    runs_to_completion,
    under_load_words,
)
from gpulint.rules.base import CheckContext, Involved, KeptSummary, Problem
from gpulint.scheduling import (
    allocatable,
    ceiling_assumptions,
    ceiling_note,
    describe_pools,
    first_pools,
    node_ceiling,
    usable,
)
from gpulint.views import NamedTuple

# Other workloads a message names before `and N more`.
_MAX_LISTED = 3


class GpuDemand(NamedTuple):
    """A workload whose pods can only run on `pools`, and how many GPUs they hold at once."""

    workload: Workload
    template: PodTemplate
    planned: PlannedPods
    gpus: dict[str, Decimal]  # per pod
    pools: frozenset[str]
    # The admission assumption its pools rest on ("": none; docs/platforms.md).
    assumption: str = ""
    # Its pods run to completion (restartPolicy Never or OnFailure, no gang): they free their
    # GPUs when done, so pods waiting for them run in turn rather than never.
    finite: bool = False

    def total(self, resource: str) -> Decimal:
        """GPUs of `resource` all planned pods hold together."""
        return self.planned.count * self.gpus.get(resource, Decimal(0))

    def surely(self, resource: str) -> Decimal:
        """GPUs of `resource` the pods that surely exist hold, of pods that do not run to
        completion (an HPA's keep at least its minReplicas; they reach maxReplicas only
        under load)."""
        if self.finite:
            return Decimal(0)
        return self.planned.least * self.gpus.get(resource, Decimal(0))

    @property
    def paths(self) -> tuple[str, str]:
        """The files of its workload and of what sets its count (an HPA's)."""
        return self.workload.document.file.path, self.planned.document.file.path

    @property
    def gang(self) -> bool:
        """Whether its workload's pods are a gang."""
        return self.workload.gang

    @property
    def owner(self) -> object:
        """Its workload, as the demands of one workload share it."""
        return id(self.workload)

    @property
    def named(self) -> str:
        """The workload, with the role when its pods are counted role by role (a group gang's
        leader and workers, a DaskCluster's scheduler and workers): `LeaderWorkerSet/x worker`."""
        ref = str(self.workload.document.ref)
        role = self.template.role
        workload = self.workload
        by_role = workload.group_gang or len(workload.templates) > 1
        return f"{ref} {role}" if by_role and role else ref


class DemandSummary(NamedTuple):
    """A GpuDemand of a context file without its workload's tree (`capacity_summary`): what
    the sums and the messages that list the others read. The demand itself is read again
    (`_Demands.full`) only for a finding of its own."""

    gpus: dict[str, Decimal]
    pools: frozenset[str]
    planned: PlannedPods  # without its document (`paths` names its file)
    assumption: str
    finite: bool
    paths: tuple[str, str]
    named: str
    gang: bool
    owner: tuple[str, int]  # its workload's file and place among what the file keeps
    index: int  # its place among the demands of its file (gpu_demands' order)

    total = GpuDemand.total
    surely = GpuDemand.surely


def capacity_summary(ctx: CheckContext) -> tuple[DemandSummary, ...]:
    """The demands of one file's kept workloads (`Rule.summarizes`)."""
    places = {id(w): n for n, w in enumerate(ctx.workloads)}
    found = []
    for index, demand in enumerate(gpu_demands(ctx)):
        found.append(
            DemandSummary(
                demand.gpus,
                demand.pools,
                demand.planned._replace(document=None),
                demand.assumption,
                demand.finite,
                demand.paths,
                demand.named,
                demand.gang,
                (demand.paths[0], places[id(demand.workload)]),
                index,
            )
        )
    return tuple(found)


class _Demands:
    """The run's demands in its order, the summarized ones among them, and each of those
    read in full when a finding is its own."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        full = list(gpu_demands(ctx))
        self._origin: dict[int, KeptSummary] = {}
        if not ctx.summaries:
            self.all: list[GpuDemand | DemandSummary] = list(full)
            return
        by_workload: dict[int, list[GpuDemand]] = {}
        for demand in full:
            by_workload.setdefault(id(demand.workload), []).append(demand)
        summaries = iter(ctx.summaries)
        pending = next(summaries, None)
        found: list[GpuDemand | DemandSummary] = []
        for place, workload in enumerate((*ctx.workloads, None)):
            while pending is not None and pending[0] == place:
                for summed in pending[1].data:
                    self._origin[id(summed)] = pending[1]
                    found.append(summed)
                pending = next(summaries, None)
            if workload is not None:
                found.extend(by_workload.get(id(workload), ()))
        self.all = found
        self._expanded: dict[str, list[GpuDemand]] = {}

    def objects(self) -> Iterator[tuple[str, str, str]]:
        """The (namespace, kind, name) of every workload kept, summarized ones too."""
        ctx = self.ctx
        for workload in ctx.workloads:
            yield ctx.namespace_of(workload.document), workload.kind, workload.document.ref.name
        for _, summary in ctx.summaries:
            yield from summary.objects

    def full(self, demand: GpuDemand | DemandSummary) -> GpuDemand:
        """`demand` with its workload and template: a summarized one read from its file."""
        if isinstance(demand, GpuDemand):
            return demand
        summary = self._origin[id(demand)]
        read = self._expanded.get(summary.source)
        if read is None:
            assert self.ctx.expand is not None, "a summary comes with what expands it"
            read = self._expanded[summary.source] = list(gpu_demands(self.ctx.expand(summary)))
        return read[demand.index]


def gpu_demands(ctx: CheckContext) -> Iterator[GpuDemand]:
    """Every GPU workload with a replica count whose pods some pool can run."""
    for item in ctx.gpu_placements:
        pools = usable(item.placement.eligible)
        # A count an envsubst placeholder holds, of pods or of GPUs per pod, is not judged
        # (gpulint.placeholders).
        unknown = item.workload.unknown_count or item.template.unknown_amounts
        if runs_on_every_node(item.workload) or not pools or unknown:
            continue
        # A template other objects run (a serving runtime) holds no GPU until one does: each
        # InferenceService that selects it is a workload of its own.
        if item.template.runs_no_pods:
            continue
        # A pool whose nodes have an amount nothing says (an instance type the catalogue does
        # not list) holds an unknown share of the demand: what is left for the rest is unknown.
        # Unless the pool's limit group caps the resource whatever the type (a Karpenter
        # NodePool's `limits`).
        if any(_uncounted(p, r) and not _capped(p, r) for p in pools for r in item.gpus):
            continue
        # Uncertain when an assumption of the admission (the platform's plugins, the flavor
        # Kueue picks) would change the pools the pod can run on.
        certain_pools = {p.name for p in item.placement.eligible}
        uncertain = any(
            {p.name for p in verdict.eligible} != certain_pools
            for verdict in (*((item.assumed,) if item.assumed else ()), *item.flavors)
        )
        yield GpuDemand(
            item.workload,
            item.template,
            planned_pods(item.workload, item.template, ctx.autoscalers_of(item.workload)),
            item.gpus,
            frozenset(p.name for p in pools),
            item.admission.assumption_text if uncertain else "",
            runs_to_completion(item.workload, item.template),
        )


def replicas_exceed_capacity(ctx: CheckContext) -> Iterator[Problem]:
    """All pods that can only land on some pools need more GPUs than those pools can have."""
    if ctx.profile is None or not _names_given(ctx):
        return
    found = _Demands(ctx)
    checked = frozenset(found.objects())
    # A checked workload that already runs holds some of the GPUs in use; counting them as in
    # use and again as its demand would report an unchanged manifest as not fitting.
    profile = replace(
        ctx.profile,
        pools=tuple(replace(p, gpus_in_use=held_by_others(p, checked)) for p in ctx.profile.pools),
    )
    demands = found.all
    groups = pool_groups(demands, profile)
    judged = _Involvement(groups, ctx.given)
    priorities = {}
    if any(d.gang for d in demands):  # a Volcano Job's tasks are ordered by their
        from gpulint.profile.policy import priority_values  # priority classes' values

        priorities = priority_values(ctx.knowledge, ctx.profile)
    # What the pools of a set can give, and how a message says it: the same for each of the
    # thousands of workloads a busy set may hold.
    rooms: dict[tuple[frozenset[str], str], tuple[tuple[Pool, ...], Decimal]] = {}
    can_have: dict[tuple[frozenset[str], str], str] = {}  # said only of sets that overflow

    @cache
    def queued_profile() -> ClusterProfile:
        # The queues of the inputs too: a ClusterQueue and LocalQueue applied beside the jobs
        # they admit queue those jobs as the profile's would.
        from gpulint.admission import with_manifest_queues

        return with_manifest_queues(profile, ctx.knowledge, ctx.namespace_of)

    def problems(batch: list[GpuDemand | DemandSummary]) -> Iterator[Problem]:
        gangs: dict[object, list[GpuDemand | DemandSummary]] = {}
        for demand in batch:
            if demand.gang:
                gangs.setdefault(demand.owner, []).append(demand)
        for members in gangs.values():
            if judged(members):
                full = [found.full(m) for m in members]
                yield from _gang_problems(full, members, groups, profile, priorities)
        for demand in batch:
            if demand.gang or not judged((demand,)):
                continue  # a gang is reported once as a whole
            for resource, per_pod in demand.gpus.items():
                # Everything confined to a subset of these pools competes for the same nodes.
                sharing = Sharing.of(groups.get(resource, ()), demand.pools, (demand,), resource)
                need = demand.total(resource) + sharing.confined
                room = rooms.get((demand.pools, resource))
                if room is None:
                    pools = tuple(p for p in profile.pools if p.name in demand.pools)
                    room = rooms[demand.pools, resource] = (pools, _room(pools, resource))
                pools, have = room
                if need <= have:
                    continue
                queue = None
                queues = queued_profile() if sharing.count else None
                if queues is not None and (queues.cluster_queues or queues.local_queues):
                    # Only then: a run whose profile has no queue does not import Kueue's model.
                    from gpulint.kueue import admitting_queue

                    workload = found.full(demand).workload
                    queue = admitting_queue(queues, workload, ctx.namespace_of(workload.document))
                if queue is not None and demand.total(resource) <= have:
                    yield _queued_problem(found.full(demand), resource, sharing, have, pools, queue)
                    continue
                # Pods that run to completion free their GPUs: when what never ends (the others
                # that do not, and this workload's pods, or one of them if they end too) fits,
                # every pod runs in its turn.
                lasting = sharing.lasting + (per_pod if demand.finite else demand.total(resource))
                in_turn = lasting <= have
                # Pods an HPA adds only under load: when what surely exists fits, the rest stay
                # Pending only if the autoscalers scale up that far.
                surely = sharing.surely + (per_pod if demand.finite else demand.surely(resource))
                under_load = not in_turn and surely <= have
                # Pods counted where they surely run: where an admission assumption could move
                # some of them, the verdict is a warning naming it.
                # (Each group's are gathered once: a group may hold thousands of workloads.)
                assumptions = dict.fromkeys(
                    assumption
                    for assumption in (demand.assumption, *_assumptions_of(sharing.groups))
                    if assumption
                )
                said = can_have.get((demand.pools, resource))
                if said is None:
                    said = can_have[demand.pools, resource] = _can_have(pools, resource, have)
                yield _capacity_problem(
                    found.full(demand),
                    resource,
                    per_pod,
                    sharing,
                    need,
                    have,
                    pools,
                    said,
                    tuple(assumptions),
                    in_turn,
                    under_load,
                    ceiling_assumptions(pools),
                )

    for batch in judged.batches(demands):
        for problem in problems(batch):
            judged.flag(problem)
            yield problem


def capacity_needs(ctx: CheckContext) -> Iterator[Workload]:
    """GPU workloads, which may share pools, and those the profile says hold GPUs now."""
    profile = ctx.profile
    if profile is None:
        return
    holders = {(u.namespace, u.kind, u.name) for p in profile.pools for u in p.gpus_in_use_by}
    for workload in ctx.workloads:
        if ctx.managed_elsewhere(workload) is not None:
            continue  # another controller creates its pods, on other clusters
        identity = (ctx.namespace_of(workload.document), workload.kind, workload.document.ref.name)
        if identity in holders or (
            not runs_on_every_node(workload) and any(gpu_requests(t) for t in workload.templates)
        ):
            yield workload


def _names_given(ctx: CheckContext) -> bool:
    """Whether a workload or an HPA of `ctx` is in the files a run with `context:` was given
    (or every file was): a finding combines (`Problem.involves`) only workloads and the HPAs
    that set their counts, so with none of them given there is nothing to judge."""
    given = ctx.given
    if given is None:
        return True
    documents = itertools.chain(
        (w.document for w in ctx.workloads), (s.document for s in ctx.autoscalers)
    )
    return any(d.file.path in given for d in documents)


class _Involvement:
    """Which demands a run judges. Every demand in a run over every file; in a run given only
    some files (`context:`), those whose finding the run reports
    (`gpulint.engine.report.reported_with_context`): the demands of the given files, judged
    first, then those of other files whose finding would involve a given file that got no
    finding of its own: where a group of demands confined to a subset of their pools holds
    an object of such a file, as every such group is counted in the finding
    (`Sharing.involved`). The groups still sum every demand: what is judged stays the same."""

    def __init__(self, groups: Mapping[str, Iterable[PoolGroup]], given: frozenset[str] | None):
        self.groups = groups
        self.given = given
        self.flagged: set[str] = set()  # given files with a finding
        self._touched: set[frozenset[str]] | None = None

    def _own(self, demand: GpuDemand | DemandSummary) -> bool:
        given = self.given
        return given is None or not given.isdisjoint(demand.paths)

    def batches(
        self, demands: list[GpuDemand | DemandSummary]
    ) -> Iterator[list[GpuDemand | DemandSummary]]:
        """`demands`, those of the given files first (a gang's members stay together)."""
        if self.given is None:
            yield demands
            return
        own = {d.owner for d in demands if self._own(d)}
        yield [d for d in demands if d.owner in own]
        yield [d for d in demands if d.owner not in own]

    def flag(self, problem: Problem) -> None:
        """Note a finding: a given file it is in needs no other file's to fail."""
        if self.given is not None and problem.file.path in self.given:
            self.flagged.add(problem.file.path)

    def __call__(self, demands: Iterable[GpuDemand | DemandSummary]) -> bool:
        """Whether the finding on `demands` (a workload's, or a gang's) may be reported."""
        if self.given is None:
            return True
        pools: frozenset[str] = frozenset()
        for demand in demands:
            if self._own(demand):
                return True
            pools |= demand.pools
        if self._touched is None:  # once the given files' demands are judged
            quiet = self.given - self.flagged
            self._touched = {
                g.pools
                for found in self.groups.values()
                for g in found
                if not g.files.isdisjoint(quiet)
            }
        return any(names <= pools for names in self._touched)


class PoolGroup(NamedTuple):
    """The demands on one resource confined to exactly the same pools, largest first."""

    pools: frozenset[str]
    members: tuple[GpuDemand | DemandSummary, ...]
    total: Decimal  # GPUs all members hold at once
    room: Decimal  # the most the pools can give them
    files: frozenset[str] = frozenset()  # where the members and their HPAs are written
    # The admission assumptions the members' pools rest on, each once, in the members' order.
    assumptions: tuple[str, ...] = ()
    lasting: Decimal = Decimal(0)  # GPUs of the members whose pods do not run to completion
    surely: Decimal = Decimal(0)  # what of `lasting` their pods that surely exist hold


def _assumptions_of(groups: Iterable[PoolGroup]) -> Iterator[str]:
    """The assumptions of `groups`, group after group."""
    for group in groups:
        yield from group.assumptions


def _group(
    names: frozenset[str], found: list[GpuDemand], resource: str, profile: ClusterProfile
) -> PoolGroup:
    """The group of the demands `found` on `resource`, all confined to the pools `names`."""
    totals = [d.total(resource) for d in found]  # (a group may hold thousands)
    order = sorted(range(len(found)), key=totals.__getitem__, reverse=True)
    members = tuple(found[n] for n in order)
    return PoolGroup(
        names,
        members,
        sum(totals, Decimal(0)),
        _room((p for p in profile.pools if p.name in names), resource),
        frozenset(itertools.chain.from_iterable(d.paths for d in found)),
        tuple(dict.fromkeys(d.assumption for d in members if d.assumption)),
        sum((t for d, t in zip(found, totals, strict=True) if not d.finite), Decimal(0)),
        sum((d.surely(resource) for d in found), Decimal(0)),
    )


def pool_groups(
    demands: Iterable[GpuDemand], profile: ClusterProfile
) -> dict[str, tuple[PoolGroup, ...]]:
    """Demands grouped by resource, then by the pools they are confined to; sums made once.

    Every demand is compared with everything confined to a subset of its pools; there are far
    fewer distinct pool sets than workloads, so the comparison goes by group.
    """
    members: dict[str, dict[frozenset[str], list[GpuDemand]]] = {}
    for demand in demands:
        for resource in demand.gpus:
            by_pools = members.get(resource)
            if by_pools is None:
                by_pools = members[resource] = {}
            found = by_pools.get(demand.pools)
            if found is None:
                by_pools[demand.pools] = [demand]
            else:
                found.append(demand)
    groups: dict[str, tuple[PoolGroup, ...]] = {}
    for resource, by_pools in members.items():
        groups[resource] = tuple(
            _group(names, found, resource, profile) for names, found in by_pools.items()
        )
    return groups


class Sharing(NamedTuple):
    """What the demands confined to a subset of some pools take, leaving some demands out."""

    confined: Decimal  # GPUs they take, each group capped at what its pools hold
    largest: tuple[GpuDemand | DemandSummary, ...]  # the biggest of them, for the message
    count: int  # how many there are
    groups: tuple[PoolGroup, ...] = ()  # theirs (with the demands left out)
    lasting: Decimal = Decimal(0)  # what of `confined` pods that do not run to completion hold
    surely: Decimal = Decimal(0)  # what of `lasting` the pods that surely exist hold

    @classmethod
    def of(
        cls,
        groups: Iterable[PoolGroup],
        pools: frozenset[str],
        left_out: Collection[GpuDemand | DemandSummary],
        resource: str,
    ) -> Sharing:
        """The groups within `pools`, without the demands of `left_out` (the one judged).

        A group can take no more than its pools hold; what overflows a smaller set of pools is
        reported on those workloads, not again on every larger set that contains them.
        """
        zero = Decimal(0)
        minus: dict[frozenset[str], tuple[int, Decimal, Decimal, Decimal]] = {}
        for demand in left_out:
            if resource in demand.gpus:
                count, total, lasting, surely = minus.get(demand.pools, (0, zero, zero, zero))
                own = demand.total(resource)
                minus[demand.pools] = (
                    count + 1,
                    total + own,
                    lasting + (zero if demand.finite else own),
                    surely + demand.surely(resource),
                )
        skip = {id(d) for d in left_out}
        confined, lasting, surely, count, largest, within = zero, zero, zero, 0, [], []
        for group in groups:
            if not group.pools <= pools:
                continue
            within.append(group)
            skipped, *less = minus.get(group.pools, (0, zero, zero, zero))
            others = group.total - less[0]
            others_lasting = group.lasting - less[1]
            others_surely = group.surely - less[2]
            # Capped only on a smaller set of pools: on the judged one's own pools, every
            # workload's message adds up to the same total, and the overflow is that total
            # less the room.
            own_pools = group.pools == pools
            confined += others if own_pools else min(others, group.room)
            lasting += others_lasting if own_pools else min(others_lasting, group.room)
            surely += others_surely if own_pools else min(others_surely, group.room)
            count += len(group.members) - skipped
            kept = (d for d in group.members if id(d) not in skip)
            largest.extend(itertools.islice(kept, _MAX_LISTED))
        largest.sort(key=lambda d: d.total(resource), reverse=True)
        return cls(confined, tuple(largest[:_MAX_LISTED]), count, tuple(within), lasting, surely)

    def involved(self, *own: DocumentLike) -> Involved:
        """The files of `own` and of every workload counted, with the HPAs that set their
        counts: what a finding about them combines (`Problem.involves`)."""
        return Involved([frozenset(d.file.path for d in own), *(g.files for g in self.groups)])

    def autoscalers(self) -> Iterator[Autoscaler | None]:
        """The autoscalers that set the counts of every workload counted (None: no
        autoscaler sets that count)."""
        for group in self.groups:
            for demand in group.members:
                yield demand.planned.autoscaler

    def describe(self, resource: str) -> str:
        """`Deployment/a (16: replicas: 2 × 8), ... and 40 more`, the largest first."""
        listed = ", ".join(
            f"{d.named} ({format_quantity(d.total(resource))}: "
            f"{d.planned.source} × {format_quantity(d.gpus[resource])})"
            for d in self.largest
        )
        more = self.count - len(self.largest)
        return f"{listed} and {more:,} more" if more > 0 else listed


class GangDemand(NamedTuple):
    """The GPUs of one resource a gang needs at once, role by role, and the pools it can use."""

    workload: Workload
    resource: str
    parts: tuple[tuple[GangPart, Decimal], ...]  # each role's pods, with its GPUs per pod
    pools: frozenset[str]

    @property
    def total(self) -> Decimal:
        """GPUs the whole gang holds at once."""
        return sum((part.pods * per_pod for part, per_pod in self.parts), Decimal(0))

    def describe(self) -> str:
        """`Master: replicas: 1 × 8 per pod; Worker: replicas: 3 × 8 per pod`."""
        return describe_gang(self.parts)

    def largest(self) -> tuple[GangPart, Decimal]:
        """The role that holds the most GPUs: shrinking it helps most."""
        return max(self.parts, key=lambda item: item[0].pods * item[1])


def gang_demand(
    members: Iterable[GpuDemand], resource: str, priorities: Mapping[str, int] | None = None
) -> GangDemand | None:
    """What a gang needs of `resource`, from its templates that some pool can run
    (`priorities`: the known priority classes' values, which order a Volcano Job's tasks)."""
    members = [m for m in members if resource in m.gpus]
    if not members:
        return None
    workload = members[0].workload
    per_pod = {id(m.template): m.gpus[resource] for m in members}
    parts = gang_parts(workload, lambda t: per_pod.get(id(t), Decimal(0)), priorities)
    return GangDemand(
        workload,
        resource,
        tuple((p, per_pod[id(p.template)]) for p in parts if id(p.template) in per_pod and p.pods),
        frozenset().union(*(m.pools for m in members)),
    )


def _gang_problems(
    members: list[GpuDemand],
    as_grouped: Collection[GpuDemand | DemandSummary],
    groups: dict[str, tuple[PoolGroup, ...]],
    profile: ClusterProfile,
    priorities: Mapping[str, int],
) -> Iterator[Problem]:
    """A gang that can never start on its pools, or cannot start beside the other workloads
    (`as_grouped`: its members as the groups hold them, `members` read in full)."""
    workload = members[0].workload
    resources = dict.fromkeys(name for m in members for name in m.gpus)
    for resource in resources:
        gang = gang_demand(members, resource, priorities)
        if gang is None or not gang.parts:
            continue
        pools = tuple(p for p in profile.pools if p.name in gang.pools)
        need = gang.total
        most = sum((node_ceiling(p) * allocatable(p, resource) for p in pools), Decimal(0))
        room = "; ".join(_pool_room(p, resource) for p in pools)
        part = gang.largest()[0]
        pos = part.count.pos
        if pos is None:
            found = gpu_limit_pos(part.template, resource)
            pos = found[1] if found else part.template.spec.pos
        grow = _grow(pools, resource, need - most if need > most else Decimal(0))
        ref = workload.document.ref
        # As for GPU201: where an admission assumption could add pools to a role's, the gang
        # is counted where it surely runs, and the verdict is a warning naming it.
        assumptions = dict.fromkeys(
            m.assumption for m in members if m.assumption and resource in m.gpus
        )
        counted = (
            "; counted where the pods surely run: " + "; ".join(assumptions) if assumptions else ""
        )
        ceilings = ceiling_assumptions(pools)
        counted += ceiling_note(ceilings)
        gang_is = "each of its groups is a gang that" if workload.group_gang else "its gang"
        if need > most:
            yield Problem.at(
                workload.document,
                pos,
                f"{ref} can never start: {gang_is} needs {format_quantity(need)} {resource} at "
                f"once ({gang.describe()}), but {describe_pools(pools)} can have at most "
                f"{format_quantity(most)} ({room}){counted}",
                f"Shrink the gang to at most {format_quantity(most)} {resource} (lower "
                f"{part.count.field or 'the pod count'} of {part.template.role or 'the pods'}), "
                f"or {grow}.",
                severity=Severity.WARNING if assumptions or ceilings else None,
                names_workload=True,
            )
            continue
        sharing = Sharing.of(groups.get(resource, ()), gang.pools, as_grouped, resource)
        have = _room(pools, resource)
        if workload.group_gang:
            # Its groups start one by one: those that fit run, the others wait.
            found = _groups_problem(members, gang, sharing, have, pools, counted)
            if found is not None:
                yield found
            continue
        others = sharing.confined
        if need + others <= have:
            continue
        in_use = sum((_in_use(p, resource) for p in pools), Decimal(0))
        beside = [sharing.describe(resource)] if sharing.count else []
        if in_use:
            beside.append(f"{format_quantity(in_use)} {resource} already in use")
        yield Problem.at(
            workload.document,
            pos,
            f"{ref} fits alone but not alongside the others: its gang needs "
            f"{format_quantity(need)} {resource} at once ({gang.describe()}) and "
            f"{describe_pools(pools)} can have at most {format_quantity(most)} ({room}), but "
            f"{'; '.join(beside)} leave only {format_quantity(max(have - others, Decimal(0)))}: "
            f"the gang waits until enough of them finish{counted}",
            "Admit the gangs one at a time (a queue such as Kueue holds whole jobs back), "
            f"move the others to another pool, or {_grow(pools, resource, need + others - have)}.",
            severity=Severity.WARNING,
            names_workload=True,
            involves=sharing.involved(),
        )


def _groups_problem(
    members: list[GpuDemand],
    gang: GangDemand,
    sharing: Sharing,
    have: Decimal,
    pools: tuple[Pool, ...],
    counted: str,
) -> Problem | None:
    """The groups of a group gang (a LeaderWorkerSet) at their peak, with what else can only
    run on their pools, need more than the pools can have: the groups beyond stay Pending."""
    resource = gang.resource
    own = [m for m in members if resource in m.gpus]
    total = sum((m.total(resource) for m in own), Decimal(0))
    need = total + sharing.confined
    if need <= have:
        return None
    # Groups an HPA adds above its minReplicas exist only under load.
    under_load = sum((m.surely(resource) for m in own), sharing.surely) <= have
    planned = own[0].planned
    groups, source = _groups(own[0])
    # A group holds all its pods once they run, though its gang may start with fewer
    # (Kthena's `minRoleReplicas`): the groups are counted whole.
    per_group = total / groups if groups else gang.total
    at_once = f", {format_quantity(gang.total)} at once" if gang.total < per_group else ""
    text = (
        f"{gang.workload.document.ref} needs {format_quantity(total)} {resource}: {groups} "
        f"groups ({source}) of {format_quantity(per_group)} each{at_once} ({gang.describe()})"
    )
    text += _shared_with(sharing, resource, need)
    excess = format_quantity(need - have)
    text += f", but {_can_have(pools, resource, have)}: "
    scaled = itertools.chain((m.planned.autoscaler for m in own), sharing.autoscalers())
    text += f"{_stay_pending(excess, resource, under_load, scaled)}{counted}"
    fits = math.floor((have - sharing.confined) / per_group) if have > sharing.confined else 0
    least = planned.least * groups // planned.count if planned.count else 0  # in groups
    field = _count_field(planned, fits, least)
    fix = _lower_or_grow(field, fits, _grow(pools, resource, need - have))
    return Problem.at(
        planned.document,
        planned.pos,
        text,
        fix,
        names_workload=True,
        severity=Severity.WARNING if counted or under_load else None,
        involves=sharing.involved(gang.workload.document),
    )


def _groups(member: GpuDemand) -> tuple[int, str]:
    """How many groups of a group gang run at their peak, and how a message names that count:
    the first factor of the member's count (a LeaderWorkerSet's `replicas`, a ModelServing's
    `spec.replicas`), or the HPA's maxReplicas that scales it."""
    planned = member.planned
    count = member.template.replicas
    groups = groups_of(member.template, planned.count)
    if count is None or not count.factors or planned.document is not member.workload.document:
        return groups, planned.source  # an HPA's maxReplicas counts the groups
    return groups, count.factors[0].describe()


def _stay_pending(
    excess: str, resource: str, under_load: bool, scaled: Iterable[Autoscaler | None] = ()
) -> str:
    """`4 nvidia.com/gpu worth of pods stay Pending`, and when that is so only once the
    autoscalers among `scaled` add pods above their minimum (`under_load`), says so."""
    if under_load:
        words = under_load_words(scaled)
        return (
            f"if the {words.plural} scale up to {words.max_field}, {excess} {resource} worth of "
            f"pods stay Pending (at {words.min_field} all fit)"
        )
    return f"{excess} {resource} worth of pods stay Pending"


def _count_field(planned: PlannedPods, fits: int, least: int) -> str:
    """The count a fix lowers to `fits`: `planned.field`, with an autoscaler's minimum when it
    keeps more (`least`) than that: the API refuses a maxReplicas below the minReplicas (KEDA a
    maxReplicaCount below the minReplicaCount)."""
    floor = min_field_of(planned.field)
    if floor is not None and least > fits:
        return f"{floor} and {planned.field}"
    return planned.field


def _shared_with(sharing: Sharing, resource: str, need: Decimal) -> str:
    """`; with Job/b (24: ...), which can only run on the same pools, that is 48`: what the
    workloads confined to the same pools add, when there are any."""
    if not sharing.count:
        return ""
    return (
        f"; with {sharing.describe(resource)}, which can only run on the same pools, "
        f"that is {format_quantity(need)}"
    )


def _lower_or_grow(field: str, fits: int, grow: str) -> str:
    """The fix of an overflow: lower the count `field` to the `fits` that fit, where it is
    written and some do, else grow the pools (`grow`) or move the others."""
    if fits >= 1 and field:
        return f"Lower {field} to {fits}, or {grow}."
    return f"{grow[0].upper()}{grow[1:]}, or move the other workloads to another pool."


def _grow(pools: tuple[Pool, ...], resource: str, short: Decimal) -> str:
    """`raise maxNodes of p4d to 6`: enough nodes of the largest pool for `short` more."""
    biggest = max(pools, key=lambda p: allocatable(p, resource))
    limits = biggest.group_limits
    if biggest.limit_group and resource in limits:
        return f"raise `limits.{resource}` of {biggest.limit_group} to {limits[resource] + short}"
    per_node = allocatable(biggest, resource)
    extra = math.ceil(short / per_node) if per_node > 0 else 0
    return f"raise maxNodes of {biggest.name} to {biggest.ceiling + extra}"


def held_by_others(pool: Pool, checked: Collection[tuple[str, str, str]]) -> dict[str, Decimal]:
    """The pool's GPUs in use less those held by the (namespace, kind, name) workloads given."""
    held = dict(pool.gpus_in_use)
    for user in pool.gpus_in_use_by:
        if (user.namespace, user.kind, user.name) in checked:
            for name, amount in user.resources.items():
                held[name] = max(Decimal(0), held.get(name, Decimal(0)) - amount)
    return {name: amount for name, amount in held.items() if amount > 0}


def _room(pools: Iterable[Pool], resource: str) -> Decimal:
    """The most of `resource` the pools can still give the checked workloads.

    Pools of one limit group (the instance types of a Karpenter NodePool) share its limits:
    together they give no more than the group's limit on `resource`, or than its `nodes`
    limit times the largest node.
    """
    total, grouped = Decimal(0), dict[str, list[Pool]]()
    for pool in pools:
        if pool.limit_group is None:
            total += _free(pool, resource)
        else:
            grouped.setdefault(pool.limit_group, []).append(pool)
    for members in grouped.values():
        ceiling = group_ceiling(members, resource)
        if any(_uncounted(p, resource) for p in members):
            # Nodes of an amount nothing says can fill the group up to its limit.
            total += ceiling
            continue
        total += min(sum((_free(p, resource) for p in members), Decimal(0)), ceiling)
    return total


def _uncounted(pool: Pool, resource: str) -> bool:
    """Whether a node of `pool` may have `resource` in an amount nothing says."""
    return pool.may_have(resource) and resource not in pool.allocatable


def _capped(pool: Pool, resource: str) -> bool:
    """Whether the pool's limit group bounds `resource` over all its nodes (a NodePool's
    `limits.nvidia.com/gpu`), whatever their type."""
    return pool.limit_group is not None and resource in pool.group_limits


def group_ceiling(members: Sequence[Pool], resource: str) -> Decimal:
    """The most of `resource` pools of one limit group can have together, by its limits."""
    limits = members[0].group_limits
    bounds = []
    if resource in limits:
        bounds.append(limits[resource])
    most = sum((node_ceiling(p) * allocatable(p, resource) for p in members), Decimal(0))
    if any(_uncounted(p, resource) for p in members):
        # Neither the members' sum nor a `nodes` limit times the largest node bounds them.
        return min(bounds) if bounds else most
    if "nodes" in limits:
        bounds.append(limits["nodes"] * max(allocatable(p, resource) for p in members))
    return min([most, *bounds])


def _limits_note(pools: Sequence[Pool], resource: str) -> str:
    """`; NodePool gpu limits nvidia.com/gpu to 5` for each group whose limits bind."""
    notes = []
    for group in dict.fromkeys(p.limit_group for p in pools if p.limit_group):
        members = [p for p in pools if p.limit_group == group]
        limits = members[0].group_limits
        most = sum((node_ceiling(p) * allocatable(p, resource) for p in members), Decimal(0))
        if group_ceiling(members, resource) < most or any(
            _uncounted(p, resource) and _capped(p, resource) for p in members
        ):
            said = [f"{format_quantity(limits[k])} {k}" for k in (resource, "nodes") if k in limits]
            notes.append(f"{group} limits its nodes to {' and '.join(said)} in all")
    return "".join(f"; {note}" for note in notes)


def _free(pool: Pool, resource: str) -> Decimal:
    """Max nodes × per-node allocatable, less what pods already hold on the pool's nodes."""
    total = node_ceiling(pool) * allocatable(pool, resource)
    return max(Decimal(0), total - _in_use(pool, resource))


def _in_use(pool: Pool, resource: str) -> Decimal:
    return pool.gpus_in_use.get(resource, Decimal(0))


def _capacity_problem(
    demand: GpuDemand,
    resource: str,
    per_pod: Decimal,
    sharing: Sharing,
    need: Decimal,
    have: Decimal,
    pools: tuple[Pool, ...],
    can_have: str,
    assumptions: tuple[str, ...] = (),
    in_turn: bool = False,
    under_load: bool = False,
    ceilings: tuple[str, ...] = (),
) -> Problem:
    """Pods that the pools cannot hold at once: stuck (an error), or, where the surplus is
    pods that run to completion and what never ends fits (`in_turn`), waiting their turn, or,
    where it is pods HPAs add above their minReplicas (`under_load`), stuck once they do."""
    own = demand.total(resource)
    text = (
        f"{demand.named} needs {format_quantity(own)} {resource} "
        f"({demand.planned.source} × {format_quantity(per_pod)} per pod)"
    )
    text += _shared_with(sharing, resource, need)
    excess = format_quantity(need - have)
    if in_turn:
        text += (
            f", but {can_have}: {excess} {resource} worth of pods wait until pods that run to "
            f"completion (Jobs) free their GPUs, then run"
        )
    else:
        scaled = itertools.chain((demand.planned.autoscaler,), sharing.autoscalers())
        text += f", but {can_have}: {_stay_pending(excess, resource, under_load, scaled)}"
    if assumptions:
        text += "; counted where the pods surely run: " + "; ".join(assumptions)
    text += ceiling_note(ceilings)
    others_need = need - own
    # In units of the count a fix lowers: `replicas: 3 × size: 2` fits by pairs of pods.
    per_unit = per_pod * demand.planned.per
    fits = max(0, math.floor((have - others_need) / per_unit)) if have > others_need else 0
    grow = _grow(pools, resource, need - have)
    if in_turn:
        fix = f"None needed if the wait is acceptable; to run them all at once, {grow}."
    else:
        fix = _lower_or_grow(_count_field(demand.planned, fits, demand.planned.least), fits, grow)
    return Problem.at(
        demand.planned.document,
        demand.planned.pos,
        text,
        fix,
        names_workload=True,
        severity=Severity.WARNING if assumptions or ceilings or in_turn or under_load else None,
        involves=sharing.involved(demand.workload.document),
    )


def _can_have(pools: tuple[Pool, ...], resource: str, have: Decimal) -> str:
    """`pool p4d can have at most 8 nvidia.com/gpu (p4d: 1 node × 8)`, with what is in use
    and the limits of the pools' groups that bind."""
    room = first_pools([_pool_room(p, resource) for p in pools])
    room += _limits_note(pools, resource)
    free = " free" if any(_in_use(p, resource) for p in pools) else ""
    return (
        f"{describe_pools(pools)} can have at most {format_quantity(have)} {resource}{free} "
        f"({room})"
    )


def _queued_problem(
    demand: GpuDemand,
    resource: str,
    sharing: Sharing,
    have: Decimal,
    pools: tuple[Pool, ...],
    queue: str,
) -> Problem:
    """A Kueue workload that fits the pools alone: it waits for the others, it is not stuck."""
    own = demand.total(resource)
    return Problem.at(
        demand.planned.document,
        demand.planned.pos,
        f"{demand.named} needs {format_quantity(own)} {resource} ({demand.planned.source} × "
        f"{format_quantity(demand.gpus[resource])} per pod), which {describe_pools(pools)} can "
        f"give ({format_quantity(have)} at most), but not beside {sharing.describe(resource)}: "
        f"ClusterQueue {queue} admits it when enough of them finish, so it is queued behind "
        f"the others",
        f"None needed if the wait is acceptable; to run them at once, "
        f"{_grow(pools, resource, own + sharing.confined - have)} and give ClusterQueue "
        f"{queue} the quota for all of them.",
        severity=Severity.WARNING,
        names_workload=True,
        involves=sharing.involved(demand.workload.document),
    )


def _pool_room(pool: Pool, resource: str) -> str:
    """`p4d: 4 nodes × 8`, plus `, 6 already in use` when pods hold some."""
    nodes = node_ceiling(pool)
    per_node = format_quantity(allocatable(pool, resource))
    text = f"{pool.described}: {nodes} node{'' if nodes == 1 else 's'} × {per_node}"
    in_use = _in_use(pool, resource)
    return f"{text}, {format_quantity(in_use)} already in use" if in_use else text


def deadline_shorter_than_provisioning(ctx: CheckContext) -> Iterator[Problem]:
    """A Job deadline that runs out while its pods wait for a node to be provisioned."""
    profile = ctx.profile
    if profile is None or not profile.pools:
        return
    for workload, template in ctx.pod_templates(here=True):
        deadline = workload.active_deadline
        if deadline is None or deadline.pos is None or not gpu_requests(template):
            continue
        pools = _cold_pools(ctx, template)
        if not pools:
            continue
        # The profile's p95 image pull (imagePullSeconds) comes on top of provisioning.
        fastest = min(pools, key=_start_seconds)
        seconds = _start_seconds(fastest)
        if deadline.value >= seconds:
            continue
        pull = fastest.image_pull_seconds
        took = f"about {fastest.provisioning_seconds} s to provision one"
        if pull:
            took += (
                f" plus {pull} s to pull the images (the pool's p95 pull, imagePullSeconds in "
                f"the profile), {seconds} s in all"
            )
        yield Problem.at(
            workload.document,
            deadline.pos,
            f"activeDeadlineSeconds: {deadline.value} counts the time pods wait Pending, but "
            f"they can only run on {describe_pools(pools)}, with 0 nodes now and "
            f"{took}{_each(pools)}: the Job can fail with DeadlineExceeded before a pod starts",
            f"Raise activeDeadlineSeconds above {seconds} s plus the run time, or keep a warm "
            f"node in {fastest.name} (minNodes: 1).",
        )


def _start_seconds(pool: Pool) -> int:
    """Provisioning plus the p95 image pull, when the profile gives them."""
    return (pool.provisioning_seconds or 0) + (pool.image_pull_seconds or 0)


def _cold_pools(ctx: CheckContext, template: PodTemplate) -> tuple[Pool, ...]:
    """The pools the pod can run on, when all are at zero nodes with known provisioning time."""
    placement = ctx.placement(template)
    pools = usable(placement.eligible)
    if not placement.decidable or not pools:
        return ()
    if any(p.nodes > 0 or p.provisioning_seconds is None for p in pools):
        return ()
    return pools


def _each(pools: tuple[Pool, ...]) -> str:
    if len(pools) < 2:
        return ""
    return " (" + ", ".join(f"{p.name}: {_start_seconds(p)} s" for p in pools) + ")"
