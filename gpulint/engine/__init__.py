"""The engine: one resolved run (`gpulint.engine.record.Run`, made by `gpulint.api`) in, one
`LintResult` out (`gpulint.engine.run.run`).

Files are checked one at a time, so memory does not grow with the number of files:

1. **discover** (`run`): the inputs in report order, charts and overlays rendered.
2. **plan** (`plan`): the rules that run per file and once over the corpus, the rules left out
   for want of a profile, and the knowledge objects (PriorityClass, ResourceQuota, LimitRange,
   DRA objects): a byte scan picks the files that may hold them; they are few and small,
   decide verdicts on objects in other files, and are read first and kept for the whole run.
3. **per file** (`files`, in worker processes of `pool` for large inputs): each file is
   loaded, its workloads typed, and every per-document rule run on it; suppressions are
   applied, its findings kept, and of its objects only what corpus-wide rules asked for (a
   few workloads, its HPAs without their trees) outlives the file (`gather`).
4. **context** (`context`): with `context:` in the config (a pre-commit hook is given only
   the changed files), what corpus-wide rules keep of the other files is read too, with no
   per-file rule run on them (from the results cache as summaries without trees, where a rule
   summarizes what it keeps: `summaries`). A finding in a context file is reported only when
   it is a corpus-wide one that involves a given file without such a finding of its own
   (`Problem.involves`, `report.reported_with_context`).
5. **corpus** (`gather`): the corpus-wide rules once over what was kept; then unused
   suppressions are reported.
6. **report** (`report`): problems become findings (config ignores and suppressions applied,
   roles named, files named for display in one place, `Run.display`), in report order.

HorizontalPodAutoscalers (and KEDA ScaledObjects, kept alike) are many (one per scaled
Deployment) and may sit in any file, so they
are not read first: the rules that need peak replica counts (GPU106, GPU201, GPU301) are
corpus-wide instead. Reading every HPA-bearing file twice would cost a third more parsing on
a typical chart repository.

The engine never imports `gpulint.api`: options are the library's business, resolved before.
"""
