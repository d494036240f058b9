"""What every rule receives (CheckContext) and yields (Problem), and how it declares its reach.

The engine reads one file at a time and drops its tree before reading the next. A plain check
(`Check`) is per-document: its verdict on an object depends only on that object's file, the
profile and the knowledge objects (PriorityClasses, ResourceQuotas, LimitRanges of every input,
read before the files are checked), and it runs on each file's context. A corpus-wide check judges
objects against objects of other files (capacity summed over workloads, quotas, HPAs): its
record says `scope: corpus` and names in `keeps:` a function picking the few workloads of each
file it needs; it runs once at the end over a context holding those workloads, every input's
HorizontalPodAutoscalers and KEDA ScaledObjects, and the knowledge objects. A corpus-wide rule
may also name in `summarizes:` a function that sums up what it keeps of a file without the
workloads' trees (`KeptSummary`): a run with `context:` reads the context files' summaries
from the results cache, and their workloads only where the check asks for them.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from gpulint.views import NamedTuple, frozen_view

if TYPE_CHECKING:
    from decimal import Decimal

    from gpulint.admission import Admission
    from gpulint.constraints import Toleration
    from gpulint.edits import Edit
    from gpulint.live.verdict import ServerRejection
    from gpulint.loader import LoadResult
    from gpulint.model import (
        Document,
        DocumentLike,
        LoadIssue,
        ManagedElsewhere,
        PodTemplate,
        Severity,
        SourceFile,
        Workload,
    )
    from gpulint.profile.model import ClusterProfile
    from gpulint.replicas import Autoscaler
    from gpulint.requestscan import Unchecked
    from gpulint.scheduling import Placement
    from gpulint.yamltree import Pos


class Problem(NamedTuple):
    """One violation found by a rule; the engine turns it into a Finding."""

    file: SourceFile
    pos: Pos
    message: str
    fix: str | None = None  # None: the catalogue's fix text
    document: DocumentLike | None = None
    severity: Severity | None = None  # None: the catalogue's severity
    edits: tuple[Edit, ...] = ()  # the text edits that fix it (`gpulint check --fix`)
    # The message names the object it is about (`PyTorchJob/ml/llama-ft ...`): the engine
    # does not prefix it with the object and the role it sits in.
    names_workload: bool = False
    # The objects of other files a corpus-wide finding combines (the workloads summed with
    # this one, the quota it overflows; None: an object of the profile), or the files they are
    # in (`Involved`): a run given only some files reports a finding of another file when one
    # of these is in a given file that has no finding of the rule of its own
    # (`engine.report.reported_with_context`). Read at most once, and only by such a run: a
    # check may give a generator, so a run over a corpus does not list every workload sharing
    # a pool for each of thousands of findings.
    involves: Iterable[DocumentLike | None] | Involved = ()

    @classmethod
    def at(
        cls,
        document: DocumentLike,
        pos: Pos,
        message: str,
        fix: str | None = None,
        *,
        severity: Severity | None = None,
        edits: tuple[Edit, ...] = (),
        names_workload: bool = False,
        involves: Iterable[DocumentLike | None] | Involved = (),
    ) -> Problem:
        """A problem in `document` at `pos`; `severity` overrides the catalogue's default.

        `names_workload`: the message names `document` itself (`Kind/name`), so the engine adds
        no `Kind/name role: ` prefix when `pos` is inside one role of a multi-role workload.
        `involves`: the other objects whose counts or limits the finding combines (None: one
        read from the cluster profile, not a file), iterated at most once, or their files.
        """
        return cls(
            document.file, pos, message, fix, document, severity, edits, names_workload, involves
        )


class Involved:
    """The files of the objects a problem combines (`Problem.involves`), as a few sets: a
    capacity finding on a busy pool combines thousands of workloads, and a run given only some
    files asks of each finding which of those files hold one, which set lookups answer
    without listing the objects."""

    __slots__ = ("files",)

    def __init__(self, files: Iterable[frozenset[str]]) -> None:
        self.files = tuple(files)


class KeptSummary(NamedTuple):
    """What a corpus-wide rule keeps of one context file, summed up by its `summarizes:`
    function without the workloads' trees: the results cache keeps it beside the file's
    whole outcome, and a check reads the workloads themselves (`CheckContext.expand`) only
    where its summary cannot say what the check needs.

    The engine uses it in place of the workloads only when nothing else the run reads changes
    what they count: no other input writes an object it holds, and the autoscaler that sets
    each one's count is the one the file itself gives it."""

    path: str  # the file
    source: str  # the results-cache entry of the file's whole outcome
    objects: tuple[tuple[str, str, str], ...]  # each workload's (namespace, kind, name)
    # Each workload's autoscaler target (namespace as written, kind, name), and the autoscaler
    # its counts were summed with (`scaler_identity`; None: none).
    scaled: tuple[tuple[tuple[str | None, str, str], object], ...]
    data: Any  # the rule's own summary


def scaler_identity(scaler: Autoscaler | None) -> object:
    """What tells one autoscaler from another across runs: where it is written."""
    if scaler is None:
        return None
    return (scaler.document.file.path, scaler.document.ref, scaler.pos)


class GpuPlacement(NamedTuple):
    """A GPU pod template, its workload, where it can run as admitted, and where it could run
    if the admission's assumptions held (None: nothing assumed)."""

    workload: Workload
    template: PodTemplate
    placement: Placement
    gpus: dict[str, Decimal]
    admission: Admission
    assumed: Placement | None = None
    # The verdicts under each flavor Kueue may admit the workload to (empty: one or none).
    flavors: tuple[Placement, ...] = ()


@frozen_view
class CheckContext:
    """The checked manifests (typed views) plus the cluster profile, when there is one."""

    loaded: LoadResult
    workloads: tuple[Workload, ...]
    profile: ClusterProfile | None = None
    namespace: str | None = None  # --namespace: for objects that do not name one
    rejections: tuple[ServerRejection, ...] = ()  # --server-dry-run: what the server refused
    # The config's `kubernetesVersion` (gpulint.validation.target reads it before the profile's).
    kubernetes_version: str | None = None
    # The PriorityClasses, ResourceQuotas and LimitRanges among every input, not only this file.
    knowledge: tuple[Document, ...] = ()
    # Every input's autoscalers, HPAs and ScaledObjects (for a corpus-wide check); None: those
    # among this context's documents.
    all_autoscalers: tuple[Autoscaler, ...] | None = None
    # Verdicts by id() of their template: the per-file checks of one file share them, and the
    # corpus-wide checks share those of the templates the files kept (alive for the whole run,
    # so their ids stay theirs).
    placements: dict[int, Placement] = field(default_factory=dict, repr=False)
    # The admission of each template, by id() likewise (`admission`).
    admissions: dict[int, Admission] = field(default_factory=dict, repr=False)
    # The namespace a chart is installed in (`charts[].namespace`, helm's -n), by the name of
    # its render: that of its objects that name none.
    file_namespaces: Mapping[str, str] = field(default_factory=dict, repr=False)
    # The files a run with `context:` reports on (None: every file): a corpus-wide check may
    # leave out what cannot involve them (`Problem.involves`), still summing everything.
    given: frozenset[str] | None = None
    # What the rule's `summarizes:` function summed up of context files, each after the
    # number of `workloads` that come before it in the run's order (`KeptSummary`).
    summaries: tuple[tuple[int, KeptSummary], ...] = ()
    # The context of a summarized file alone, its kept workloads read in full, as its summary
    # was made from (None: nothing is summarized).
    expand: Callable[[KeptSummary], CheckContext] | None = field(default=None, repr=False)

    def placement(self, template: PodTemplate) -> Placement:
        """Every pool's verdict on `template` as admitted (needs a profile), computed once per
        run: on the tolerations the pod surely carries after admission (`admission`).

        Most placement and capacity rules ask for the same templates' verdicts.
        """
        from gpulint.scheduling import place  # only runs with a profile need the scheduler

        assert self.profile is not None, "placement needs a cluster profile"
        verdict = self.placements.get(id(template))
        if verdict is None:
            admitted = self.admission(template)
            verdict = self.placements[id(template)] = place(
                template,
                self.profile,
                admitted.tolerations,
                admitted.node_selector,
                admitted.overhead,
            )
        return verdict

    def admission(self, template: PodTemplate) -> Admission:
        """The pod template after the cluster's admission chain (needs a profile), once per
        template: what it surely carries and what only an assumption adds."""
        from gpulint.admission import admit

        assert self.profile is not None, "admission needs a cluster profile"
        found = self.admissions.get(id(template))
        if found is None:
            workload = self._workload_of.get(id(template))
            namespace = self.namespace_of(workload.document) if workload else "default"
            defaults = self._namespace_tolerations.get(namespace, ())
            found = self.admissions[id(template)] = admit(
                template, self._admission_profile, workload, namespace, defaults
            )
        return found

    @cached_property
    def _namespace_tolerations(self) -> dict[str, tuple[Toleration, ...]]:
        """The default tolerations of each Namespace among the inputs that annotates some
        (PodTolerationRestriction gives them to its pods)."""
        from gpulint.admission import namespace_tolerations
        from gpulint.model import of_kind

        return {
            document.ref.name: found
            for document in of_kind(self.knowledge, "Namespace")
            if (found := namespace_tolerations(document.obj))
        }

    @cached_property
    def _admission_profile(self) -> ClusterProfile:
        """The profile with the Kueue queues and flavors and the RuntimeClasses of every input:
        admission reads them (a LocalQueue's flavor tolerates the pods it admits, a
        RuntimeClass those that name it); the queue rules read only the profile's, so a queue
        defined outside the inputs is not called missing."""
        from gpulint.admission import with_manifest_queues, with_manifest_runtime_classes

        assert self.profile is not None
        queued = with_manifest_queues(self.profile, self.knowledge, self.namespace_of)
        return with_manifest_runtime_classes(queued, self.knowledge)

    def assumed_placement(self, template: PodTemplate) -> Placement | None:
        """The verdict if every assumption of the admission held (None: nothing assumed).

        A finding the plain verdict gives but this one does not depends on the assumption: a
        warning that names it, not an error.
        """
        from gpulint.scheduling import place

        admitted = self.admission(template)
        if admitted.certain:
            return None
        assert self.profile is not None
        return place(
            template,
            self.profile,
            (*admitted.tolerations, *admitted.assumed),
            admitted.node_selector,
            admitted.overhead,
        )

    @cached_property
    def gpu_placements(self) -> tuple[GpuPlacement, ...]:
        """Every GPU pod template whose placement the profile can decide, with its verdict.

        Templates that request an accelerator no pool advertises are left to GPU001, and those
        pinned to node names (matchFields) cannot be judged from pools. Computed once: every
        placement and capacity rule reads the same tuple.
        """
        return tuple(self._judge_gpu_templates())

    def _judge_gpu_templates(self) -> Iterator[GpuPlacement]:
        from gpulint.gpus import gpu_requests

        profile = self.profile
        if profile is None or not profile.pools or profile.provider == "gke-autopilot":
            # Autopilot creates a GPU node for each GPU pod it admits: the nodes a profile
            # lists now say nothing of where the pod will run (GPU305 judges what it admits).
            return
        advertised = profile.advertised_resources()
        for workload, template in self.pod_templates(here=True):
            gpus = gpu_requests(template)
            if not gpus or any(name not in advertised for name in gpus):
                continue
            placement = self.placement(template)
            if placement.decidable:
                yield GpuPlacement(
                    workload,
                    template,
                    placement,
                    gpus,
                    self.admission(template),
                    self.assumed_placement(template),
                    self._flavor_placements(template),
                )

    def _flavor_placements(self, template: PodTemplate) -> tuple[Placement, ...]:
        from gpulint.scheduling import place

        admitted = self.admission(template)
        assert self.profile is not None
        return tuple(
            place(
                template,
                self.profile,
                (*admitted.tolerations, *choice),
                labels,
                admitted.overhead,
            )
            for choice, labels in admitted.choices
        )

    @cached_property
    def _workload_of(self) -> dict[int, Workload]:
        return {id(t): w for w in self.workloads for t in w.templates}

    def placements_of(
        self, workloads: Iterable[Workload]
    ) -> tuple[tuple[PodTemplate, Placement, Admission | None], ...]:
        """The verdicts already computed on the templates of `workloads`, with the
        admissions they were judged on."""
        return tuple(
            (template, verdict, self.admissions.get(id(template)))
            for workload in workloads
            for template in workload.templates
            if (verdict := self.placements.get(id(template))) is not None
        )

    def namespace_of(self, document: DocumentLike) -> str:
        """metadata.namespace, else the namespace its chart is installed in, else
        --namespace, else the profile's default, else `default`."""
        return (
            document.ref.namespace
            or (self.file_namespaces.get(document.file.path) if self.file_namespaces else None)
            or self.namespace
            or (self.profile.default_namespace if self.profile else None)
            or "default"
        )

    @cached_property
    def autoscalers(self) -> tuple[Autoscaler, ...]:
        """Every HorizontalPodAutoscaler and KEDA ScaledObject among the checked manifests."""
        if self.all_autoscalers is not None:
            return self.all_autoscalers
        from gpulint.replicas import autoscalers  # only the rules that count pods ask

        return tuple(autoscalers(self.loaded.documents))

    def autoscalers_of(self, workload: Workload) -> tuple[Autoscaler, ...]:
        """The autoscalers (HPAs, ScaledObjects) whose target has the workload's namespace,
        kind and name, in input order."""
        ref = workload.document.ref
        return self._autoscaler_index.get((ref.namespace, ref.kind, ref.name), ())

    @cached_property
    def _autoscaler_index(self) -> dict[tuple[str | None, str, str], tuple[Autoscaler, ...]]:
        # A lookup per workload instead of a scan of every HPA.
        index: dict[tuple[str | None, str, str], list[Autoscaler]] = {}
        for scaler in self.autoscalers:
            key = (scaler.document.ref.namespace, scaler.target_kind, scaler.target_name)
            index.setdefault(key, []).append(scaler)
        return {key: tuple(found) for key, found in index.items()}

    @property
    def documents(self) -> tuple[Document, ...]:
        """Every Kubernetes object read."""
        return self.loaded.documents

    @property
    def issues(self) -> tuple[LoadIssue, ...]:
        """What the loader found wrong with the files themselves."""
        return self.loaded.issues

    @property
    def unchecked(self) -> tuple[Unchecked, ...]:
        """The objects with accelerator requests (or pods) that no pod template read holds:
        found by the loader's walk, not by walking the documents again."""
        return self.loaded.unchecked

    def pod_templates(self, here: bool = False) -> Iterator[tuple[Workload, PodTemplate]]:
        """Every pod template of every workload, with its workload; with `here`, only those
        of workloads whose pods this cluster creates (not `managed_elsewhere`): the checks that
        judge pods against the cluster's nodes and admission chain read those."""
        for workload in self.workloads:
            if here and self.managed_elsewhere(workload) is not None:
                continue
            for template in workload.templates:
                yield workload, template

    def managed_elsewhere(self, workload: Workload) -> ManagedElsewhere | None:
        """The controller a workload's `managedBy` hands it to, when the target release
        honours the field (a Job's from 1.32, when the API server keeps it and the Job
        controller leaves the Job alone by default): that controller creates its pods where
        it decides, and this cluster's controller none."""
        found = workload.managed_elsewhere
        if found is None or found.honoured_from is None:
            return found
        return found if self._newest_release >= found.honoured_from else None

    @cached_property
    def _newest_release(self) -> tuple[int, int]:
        """The newest Kubernetes release the cluster may run (when only the oldest its nodes
        allow is known, a newer one may honour what that one does not)."""
        from gpulint.validation.target import target_of

        target = target_of(self)
        return target.upper or target.release


#: A rule's check: what it finds in a context (one file's, or for `scope: corpus` rules the
#: context of everything the files kept).
Check = Callable[[CheckContext], Iterable[Problem]]
#: A corpus-wide rule's `keeps:` function: from one file's context, the workloads the check
#: must see at the end (as few as it can: each is kept, tree and all, for the whole run).
Keeps = Callable[[CheckContext], Iterable["Workload"]]


class Rule(NamedTuple):
    """What the engine knows of a rule: its record without the documentation."""

    code: str
    name: str
    severity: Severity
    fix: str
    enabled: bool = True  # selected when the configuration does not say otherwise
    needs_profile: bool = False  # only runs when a cluster profile is given
    scope: str = "file"  # "file": judged per file; "corpus": once, over what each file kept
    # Only objects of these kinds among the checked manifests are judged (empty: any workload).
    judges: frozenset[str] = frozenset()
    # The cluster objects it judges pods against, which the profile or the manifests define.
    reads: frozenset[str] = frozenset()
    check: str | None = None  # "package.module:function"; None: the engine reports it
    keeps: str | None = None  # corpus scope: "module:function" naming what each file keeps
    # corpus scope: "module:function" summing up what a context file keeps (KeptSummary.data)
    summarizes: str | None = None
    # How sure the text edits its findings carry are: "safe" (--fix), "unsafe" (also needs
    # --unsafe-fixes); None: its findings carry no edits.
    autofix: str | None = None
    # The fields of the cluster profile its findings depend on (`ClusterProfile` field names;
    # empty: the same findings against any profile or none); None: the whole profile. A run
    # against several clusters checks each file once for all the clusters that agree on them.
    profile_fields: tuple[str, ...] | None = None

    @property
    def corpus_wide(self) -> bool:
        """Whether the rule judges objects against objects of other files."""
        return self.scope == "corpus"

    @property
    def module(self) -> str | None:
        """The module of the check function (None: an engine code)."""
        return self.check.partition(":")[0] if self.check else None

    def check_function(self) -> Check:
        """The check function; asking for it imports the rule's module."""
        assert self.check is not None, f"{self.code} is reported by the engine"
        return load_function(self.check)

    def keeps_function(self) -> Keeps | None:
        """What a corpus-wide rule keeps of each file (None: only knowledge objects)."""
        return load_function(self.keeps) if self.keeps else None

    def summary_function(self) -> Callable[[CheckContext], Any] | None:
        """What sums up what the rule keeps of a file without its trees (None: nothing)."""
        return load_function(self.summarizes) if self.summarizes else None

    def has_work(self, kinds: Collection[str], profile_kinds: Collection[str] = ()) -> bool:
        """False when the rule cannot find anything in manifests of `kinds` checked against a
        profile that lists objects of `profile_kinds` (ClusterProfile.object_kinds).

        Such a rule is not run, so a run that has nothing for it never imports its module.
        """
        if self.judges:
            return not self.judges.isdisjoint(kinds)
        if self.reads:
            return not (self.reads.isdisjoint(kinds) and self.reads.isdisjoint(profile_kinds))
        return True


@functools.cache
def load_function(target: str) -> Any:
    """The object named by `package.module:attribute`, its module imported now."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
