"""The plan: which rules run on each file and once over the corpus, and the knowledge objects
(PriorityClasses, ResourceQuotas, LimitRanges, DRA objects) read from every input first."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from gpulint.cachedir import CACHE_MIN_FILES, sha256
from gpulint.config import Config
from gpulint.engine.files import load_input
from gpulint.engine.variants import installed_namespaces
from gpulint.fields import mapping_at
from gpulint.loader import Input, Inputs, LoadResult, load_bytes, read_bytes
from gpulint.model import KNATIVE_FEATURES, NAMESPACE_TOLERATIONS, Knowledge
from gpulint.rules import UNUSED_SUPPRESSION, Rule
from gpulint.rules.base import CheckContext
from gpulint.views import NamedTuple

if TYPE_CHECKING:
    from gpulint.engine.cache import KnowledgeCache
    from gpulint.engine.known import KnownFile
    from gpulint.engine.record import Run
    from gpulint.live.verdict import DryRun, ServerRejection
    from gpulint.model import Document, Workload
    from gpulint.profile.model import ClusterProfile

#: The rule that reports what a server-side dry-run refused.
SERVER_REJECTED = "GPU900"
#: Kinds whose objects decide verdicts on objects in other files, read before the others.
KNOWLEDGE_KINDS = frozenset(
    {"PriorityClass", "ResourceQuota", "LimitRange"}
    # kiosk's AccountQuota: a ResourceQuota spec over an account's namespaces.
    | {"AccountQuota"}
    # DRA objects: claims and classes that pods and claims of other files name.
    | {"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"}
    # NVIDIA's ComputeDomain: its controller creates the channel's ResourceClaimTemplate.
    | {"ComputeDomain"}
    # The schemas of custom resources in other files (gpulint.validation.crds).
    | {"CustomResourceDefinition"}
    # The GPU Operator's objects: the driver of the pools (GPU801, gpulint.cuda).
    | {"ClusterPolicy", "NVIDIADriver"}
    # Kueue's queues and flavors: what a flavor writes into the pods of workloads in other files.
    | {"ResourceFlavor", "ClusterQueue", "LocalQueue"}
    # Seldon Core 2's ServerConfigs: the pods of the Servers (in other files) that name them.
    | {"ServerConfig"}
    # Kubeflow Trainer's runtimes: the pods of the TrainJobs (in other files) that name them.
    | {"TrainingRuntime", "ClusterTrainingRuntime"}
    # What the RuntimeClass admission plugin writes into the pods that name a class.
    | {"RuntimeClass"}
    # What PodTolerationRestriction writes into the pods of a namespace: only a Namespace that
    # carries its annotation is kept (gpulint.model.NAMESPACE_TOLERATIONS).
    | {"Namespace"}
    # Knative Serving's feature flags (GPU026): its `config-features` ConfigMap (no other
    # ConfigMap is kept) and the operator's KnativeServing.
    | {"ConfigMap", "KnativeServing"}
    # Device plugins that pods of other files' nodes will advertise resources through (GPU001,
    # gpulint.device_plugins): operators' resources, and DaemonSets that run a plugin (no other
    # DaemonSet is kept).
    | {"DeviceConfig", "GpuDevicePlugin", "DaemonSet"}
)
#: What the bytes of a file with a device plugin DaemonSet hold (its image's name): other
#: DaemonSets are not parsed for knowledge.
_PLUGIN_BYTES = (b"device-plugin", b"gpu-plugin", b"gpushare-plugin")
#: A file is parsed for knowledge objects only if its bytes name one of their kinds (or, for a
#: Namespace, the annotation that makes it one).
KNOWLEDGE_BYTES = (
    *(k.encode() for k in sorted(KNOWLEDGE_KINDS - {"Namespace", "ConfigMap", "DaemonSet"})),
    NAMESPACE_TOLERATIONS.encode(),
    KNATIVE_FEATURES.encode(),
    *_PLUGIN_BYTES,
)


class FilePlan(NamedTuple):
    """What checking one file needs; sent to each worker process once per batch of files."""

    config: Config
    profile: ClusterProfile | None
    namespace: str | None
    per_document: tuple[Rule, ...]
    corpus_wide: tuple[Rule, ...]
    knowledge: Knowledge
    knowledge_kinds: frozenset[str] = frozenset()
    keep_checked: bool = True
    unused_rule: Rule | None = None  # GPU006, when unused suppressions are reported
    # The namespace each chart render is installed in (gpulint.engine.variants).
    file_namespaces: Mapping[str, str] = MappingProxyType({})
    # GPU006 when selected: malformed suppressions, and names of no rule, are always reported.
    suppression_rule: Rule | None = None
    # A SHA-256 of the names and bytes of the files the knowledge objects were read from:
    # what the results cache (gpulint.engine.cache) knows them by.
    knowledge_digest: str = ""
    # Place the file's GPU pod templates while it is checked, so that the verdicts are kept
    # with what corpus-wide rules keep (a context file read from the results cache brings
    # them along instead of the corpus pass computing them at every run).
    place_kept: bool = False
    # Where the results cache keeps per-file outcomes (gpulint.engine.cache), when this run
    # uses one.
    cache_directory: Path | None = None

    def context(
        self,
        loaded: LoadResult,
        workloads: tuple[Workload, ...] = (),
        **corpus_wide: Any,
    ) -> CheckContext:
        """A context for `loaded` and its `workloads`, with the profile and knowledge objects
        (and, for a corpus-wide check, the other `CheckContext` fields in `corpus_wide`)."""
        return CheckContext(
            loaded,
            workloads,
            self.profile,
            self.namespace,
            knowledge=self.knowledge,
            kubernetes_version=self.config.kubernetes_version,
            file_namespaces=self.file_namespaces,
            **corpus_wide,
        )


def plan(
    run: Run,
    inputs: Inputs,
    context_inputs: Sequence[Input | KnownFile] = (),
    read: FilePlan | None = None,
) -> tuple[FilePlan, list[Rule]]:
    """The plan each file is checked by, and the selected rules left out for want of a
    profile. `read`: the plan of another run of the same inputs and context (another
    cluster's), whose knowledge objects are taken rather than read again."""
    config, profile = run.config, run.profile
    skipped = [r for r in run.rules if r.needs_profile and profile is None]
    active = [r for r in run.rules if r.check is not None and r not in skipped]
    if run.dry_run is None:  # only a server's dry-run gives GPU900 anything to report
        active = [r for r in active if r.code != SERVER_REJECTED]
    cache = directory = None
    if run.results_cache is not None and (context_inputs or inputs.files >= CACHE_MIN_FILES):
        from gpulint.engine.cache import KnowledgeCache, trusted_directory

        directory = trusted_directory(run)
        if directory is not None and read is None:  # (another cluster's run read them)
            cache = KnowledgeCache(directory, run.root or os.path.abspath(os.curdir))
    if read is None:
        digest = sha256()
        knowledge = knowledge_documents(itertools.chain(inputs, context_inputs), digest, cache)
        knowledge_digest = digest.hexdigest()
    else:
        knowledge, knowledge_digest = read.knowledge, read.knowledge_digest
    known_kinds = frozenset(d.ref.kind for d in knowledge)
    profile_kinds = profile.object_kinds if profile is not None else frozenset()
    file_plan = FilePlan(
        config,
        profile,
        run.namespace,
        tuple(r for r in active if not r.corpus_wide),
        # Whether a corpus-wide rule has work is known before any file is checked: it judges
        # workloads against knowledge objects or the profile, never against one file's kinds.
        tuple(r for r in active if r.corpus_wide and r.has_work(known_kinds, profile_kinds)),
        knowledge,
        known_kinds,
        run.keep_checked,
        _unused_rule(run.rules, config),
        # After the knowledge scan: the inputs' charts are rendered by then.
        installed_namespaces([*inputs.renders.values(), *context_inputs]),
        next((r for r in run.rules if r.code == UNUSED_SUPPRESSION), None),
        knowledge_digest,
        cache_directory=directory,
    )
    return file_plan, skipped


def _unused_rule(selected: Sequence[Rule], config: Config) -> Rule | None:
    if not config.report_unused_ignores:
        return None
    return next((r for r in selected if r.code == UNUSED_SUPPRESSION), None)


def knowledge_documents(
    inputs: Iterable[Input | KnownFile], digest: Any = None, cache: KnowledgeCache | None = None
) -> Knowledge:
    """The PriorityClasses, ResourceQuotas and LimitRanges among the inputs, in input order.

    Only files whose bytes name one of those kinds are parsed here (and again when checked);
    `digest` (a hash object) is fed the name and bytes of each; those `cache` holds are
    read from it. They are kept for the whole run: a CRD whose kind an earlier one defines is
    dropped as its file is read (the same chart's CRDs in many files are kept once).
    """
    from gpulint.engine.known import KnownFile, content_digest

    found: list[Document] = []
    crds: set[tuple[str, str]] = set()
    for item in inputs:
        data: bytes | OSError | None
        if isinstance(item, KnownFile):  # a context file known by its stat: read on a miss
            if not item.names_any(KNOWLEDGE_BYTES):
                continue
            name, data, content = item.name, None, item.digest
        else:
            name, data = (item, read_bytes(Path(item))) if isinstance(item, str) else item[:2]
            if isinstance(data, OSError) or not names_any(data, KNOWLEDGE_BYTES):
                continue
            content = content_digest(data) if digest is not None or cache is not None else b""
        if digest is not None:
            digest.update(b"%d:%s\0" % (len(name), name.encode("utf-8", "surrogateescape")))
            digest.update(content)
        key = cache.key_of(name, content) if cache is not None else ""
        kept = cache.documents(key) if cache is not None else None
        if kept is None:
            if data is None:
                data = item.read() if isinstance(item, KnownFile) else None
                if data is None:  # changed since it was looked at: as one not read
                    continue
            loaded = load_bytes(name, data)
            kept = tuple(d for d in loaded.documents if is_knowledge(d))
            if cache is not None:
                cache.store(key, kept)
        if any(d.ref.kind == "CustomResourceDefinition" for d in kept):
            from gpulint.validation.crds import without_shadowed_crds

            kept = tuple(without_shadowed_crds(kept, crds))
        found.extend(kept)
    if cache is not None:
        cache.pack.write()
    return Knowledge(found)


def is_knowledge(document: Document) -> bool:
    """Whether `document` decides verdicts on objects of other files (KNOWLEDGE_KINDS)."""
    kind = document.ref.kind
    if kind == "Namespace":
        return NAMESPACE_TOLERATIONS in mapping_at(document.obj, "metadata", "annotations")
    if kind == "ConfigMap":
        return document.ref.name == KNATIVE_FEATURES
    if kind == "DaemonSet":
        from gpulint.device_plugins import is_plugin_install

        return is_plugin_install(document)
    return kind in KNOWLEDGE_KINDS


def names_any(data: bytes, words: Sequence[bytes]) -> bool:
    """Whether `data` holds any of `words` (a file that holds none need not be parsed)."""
    # Substring searches rather than one compiled alternation: compiling it cost every run
    # more than searching a whole corpus this way.
    return any(word in data for word in words)


def server_rejections(
    inputs: Inputs, file_plan: FilePlan, dry_run: DryRun | None
) -> tuple[ServerRejection, ...]:
    """What the API server refused of the objects, when GPU900 runs."""
    if dry_run is None or not any(r.code == SERVER_REJECTED for r in file_plan.corpus_wide):
        return ()
    # The server judges objects against the namespaces the same manifests create, so it
    # gets every object at once; live mode checks a handful of files.
    everything = LoadResult.merged([load_input(item) for item in inputs])
    return tuple(dry_run(everything.documents, file_plan.context(everything).namespace_of))
