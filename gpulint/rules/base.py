"""What every rule receives (CheckContext) and yields (Problem)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.live.verdict import ServerRejection
    from gpulint.loader import LoadResult
    from gpulint.model import Document, LoadIssue, PodTemplate, Severity, SourceFile, Workload
    from gpulint.profile.model import ClusterProfile
    from gpulint.replicas import Autoscaler
    from gpulint.scheduling import Placement
    from gpulint.yamltree import Pos


@dataclass(frozen=True)
class Problem:
    """One violation found by a rule; the engine turns it into a Finding."""

    file: SourceFile
    pos: Pos
    message: str
    fix: str | None = None  # None: the catalogue's fix text
    document: Document | None = None
    severity: Severity | None = None  # None: the catalogue's severity

    @classmethod
    def at(
        cls,
        document: Document,
        pos: Pos,
        message: str,
        fix: str | None = None,
        *,
        severity: Severity | None = None,
    ) -> Problem:
        """A problem in `document` at `pos`; `severity` overrides the catalogue's default."""
        return cls(document.file, pos, message, fix, document, severity)


@dataclass(frozen=True, eq=False)
class CheckContext:
    """The checked manifests (typed views) plus the cluster profile, when there is one."""

    loaded: LoadResult
    workloads: tuple[Workload, ...]
    profile: ClusterProfile | None = None
    namespace: str | None = None  # --namespace: for objects that do not name one
    rejections: tuple[ServerRejection, ...] = ()  # --server-dry-run: what the server refused
    _placements: dict[int, Placement] = field(default_factory=dict, init=False, repr=False)

    def placement(self, template: PodTemplate) -> Placement:
        """Every pool's verdict on `template` (needs a profile), computed once per run.

        Most placement and capacity rules ask for the same templates' verdicts.
        """
        from gpulint.scheduling import place  # only runs with a profile need the scheduler

        assert self.profile is not None, "placement needs a cluster profile"
        verdict = self._placements.get(id(template))
        if verdict is None:
            verdict = self._placements[id(template)] = place(template, self.profile)
        return verdict

    def namespace_of(self, document: Document) -> str:
        """metadata.namespace, else --namespace, else the profile's default, else `default`."""
        return (
            document.ref.namespace
            or self.namespace
            or (self.profile.default_namespace if self.profile else None)
            or "default"
        )

    @cached_property
    def autoscalers(self) -> tuple[Autoscaler, ...]:
        """Every HorizontalPodAutoscaler among the checked manifests."""
        from gpulint.replicas import autoscalers  # only the rules that count pods ask

        return tuple(autoscalers(self.loaded.documents))

    @property
    def documents(self) -> tuple[Document, ...]:
        """Every Kubernetes object read."""
        return self.loaded.documents

    @property
    def issues(self) -> tuple[LoadIssue, ...]:
        """What the loader found wrong with the files themselves."""
        return self.loaded.issues

    def pod_templates(self) -> Iterator[tuple[Workload, PodTemplate]]:
        """Every pod template of every workload, with its workload."""
        for workload in self.workloads:
            for template in workload.templates:
                yield workload, template


Check = Callable[[CheckContext], Iterable[Problem]]
