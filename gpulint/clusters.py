"""Many clusters in one run: `--profile NAME=FILE` and the config's `clusters:` map.

Every rule runs against each cluster's profile (once for the clusters that agree on what it
reads of them, `gpulint.engine.run.run_clusters`); the runs' findings are then merged. A
finding found in every cluster is reported once with no cluster names (it holds everywhere,
as in a run against one cluster); one found in some clusters only names them
(`Finding.clusters`), so "prod only" stands out from "everywhere".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from gpulint.errors import GpulintError
from gpulint.findings import Finding, LintResult

#: A cluster name: what `NAME=` may be before a profile file.
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def split_profile_argument(argument: str) -> tuple[str | None, str]:
    """`prod=eks.yaml` as ("prod", "eks.yaml"); a plain path as (None, path).

    A file whose name holds `=` keeps working: the argument is split only when the part
    before `=` is a simple name and neither it nor the whole argument is an existing path.
    """
    name, equals, path = argument.partition("=")
    if not equals or not _NAME.fullmatch(name) or Path(argument).exists() or Path(name).exists():
        return None, argument
    if not path:
        raise GpulintError(f"--profile {argument}: no profile file after `{name}=`")
    return name, path


def group_profiles(arguments: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The `--profile` arguments by cluster name, in order of first mention; {} when none
    names a cluster (all the files are then one cluster, as without clusters)."""
    named: dict[str, list[str]] = {}
    plain: list[str] = []
    for argument in arguments:
        name, path = split_profile_argument(argument)
        if name is None:
            plain.append(path)
        else:
            named.setdefault(name, []).append(path)
    if named and plain:
        raise GpulintError(
            f"--profile {plain[0]} names no cluster while others do: "
            f"give every --profile as NAME=FILE, or none"
        )
    return {name: tuple(paths) for name, paths in named.items()}


def config_clusters(data: Mapping[str, Sequence[str]], root: Path) -> dict[str, tuple[str, ...]]:
    """The config's `clusters:` map with each profile file resolved against `root` (the config
    file's directory)."""
    return {str(name): tuple(str(root / str(p)) for p in paths) for name, paths in data.items()}


def merge_results(results: Mapping[str, LintResult]) -> LintResult:
    """One result of per-cluster `results`: findings identical in all but their clusters are
    reported once, naming the clusters they hold in (each once), or none when they hold in all.

    A finding a cluster's run reports n times (two values sets of a chart rendered to the same
    template line) is reported n times, as that run reports it, not once per cluster.
    """
    names = tuple(results)
    holds_in: dict[Finding, Counter[str]] = {}
    for name, result in results.items():
        for finding in result.findings:
            holds_in.setdefault(replace(finding, clusters=()), Counter())[name] += 1
    findings = sorted(
        (
            finding if len(where) == len(names) else replace(finding, clusters=tuple(where))
            for finding, where in holds_in.items()
            for _ in range(max(where.values()))
        ),
        key=lambda f: (*f.sort_key, f.clusters),
    )
    # What a run looked at: a file the config applies to some clusters only is read in their
    # runs, so the run that read the most tells.
    first = max(results.values(), key=lambda result: (result.files, result.objects))
    notes = dict.fromkeys(
        note if _same_note(note, results) else f"[{name}] {note}"
        for name, result in results.items()
        for note in result.notes
    )
    return replace(first, findings=tuple(findings), notes=tuple(notes))


def _same_note(note: str, results: Mapping[str, LintResult]) -> bool:
    return all(note in result.notes for result in results.values())


def show_clusters(
    clusters: Mapping[str, Sequence[str]], pool_label: str | None = None, root: str | None = None
) -> str:
    """`gpulint profile show` of named clusters: each one's profile under its name (its files
    named relative to `root` when inside it)."""
    from gpulint.profile import load_profiles
    from gpulint.profile.show import show_profile

    parts = []
    for name, files in clusters.items():
        try:
            text = show_profile(load_profiles(files, pool_label), root)
        except GpulintError as exc:
            raise GpulintError(f"cluster {name}: {exc}") from exc
        parts.append(f"=== {name} ===\n{text}")
    return "\n".join(parts)
