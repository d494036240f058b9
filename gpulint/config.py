"""Configuration: `.gpulint.yaml` or `[tool.gpulint]` in pyproject.toml, found upward from the
checked paths (or named with --config), validated by a JSON Schema shipped in the package.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpulint.errors import GpulintError
from gpulint.model import ObjectRef, Severity
from gpulint.shapes import Count, Role, WorkloadShape
from gpulint.views import NamedTuple, frozen_record
from gpulint.yamltree import Pos, YMap, parse, position_at

if TYPE_CHECKING:
    from gpulint.render.options import ChartSettings

CONFIG_FILES = (".gpulint.yaml", ".gpulint.yml")
PYPROJECT = "pyproject.toml"
FAIL_NEVER = "never"


class ObjectPattern(NamedTuple):
    """Globs over kind / namespace / name; `codes` limits which findings are dropped."""

    kind: str = "*"
    namespace: str = "*"
    name: str = "*"
    codes: tuple[str, ...] = ()

    def matches(self, ref: ObjectRef, code: str) -> bool:
        """True when a finding with `code` about `ref` is to be dropped."""
        if self.codes and not any(matches_selector(code, s) for s in self.codes):
            return False
        return (
            fnmatch.fnmatchcase(ref.kind, self.kind)
            and fnmatch.fnmatchcase(ref.namespace or "", self.namespace)
            and fnmatch.fnmatchcase(ref.name, self.name)
        )


@frozen_record
class Config:
    """Settings for one run; the defaults are what a run without a config file uses."""

    path: str | None = None
    # The directory globs (exclude, per-file-ignores, context) are relative to: the config
    # file's; None: the run's root (gpulint.api.LintOptions.root), else paths as given.
    root: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    fail_on: Severity | None = Severity.ERROR  # None: never fail
    exclude: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    ignore_objects: tuple[ObjectPattern, ...] = ()
    report_unused_ignores: bool = False
    workloads: tuple[WorkloadShape, ...] = ()  # custom resources that run pods
    respect_gitignore: bool = True  # skip what .gitignore ignores when walking directories
    # Where the rest of the manifests live (paths and globs, relative to `root`): read for the
    # objects corpus-wide rules judge the given files against (see gpulint.api).
    context: tuple[str, ...] = ()
    file_keys: frozenset[str] = frozenset()  # the keys the config file set (--show-settings)
    # Helm charts to render, by resolved directory, and envsubst variables (gpulint.render).
    charts: Mapping[Path, ChartSettings] = field(default_factory=dict)
    variables: Mapping[str, str] = field(default_factory=dict)
    # Named clusters: profile inputs (resolved paths) by name (gpulint.clusters).
    clusters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # `applied-to:`: paths and globs (an overlay, a folder, a file) by the named clusters they
    # are applied to; what no entry names is applied to every cluster.
    applied_to: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # `kubernetesVersion:`: the release objects are validated against (gpulint.validation),
    # before a cluster profile's version.
    kubernetes_version: str | None = None
    # `platform:` and `admission:`: the kind of cluster and admission facts, applied to the
    # run's cluster profile over what it declares or shows (docs/platforms.md).
    platform: str | None = None
    admission: Mapping[str, bool] = field(default_factory=dict)
    # Directories under the checked paths that a config file of their own governs (absolute
    # paths): a walk of the checked paths leaves them to that config's run (ruff's rule).
    governed_elsewhere: frozenset[str] = frozenset()

    def with_overrides(self, **changes: Any) -> Config:
        """A copy with the given fields replaced (command-line options win over the file)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def is_selected(self, code: str, enabled_by_default: bool) -> bool:
        """Whether rule `code` runs: the most specific matching selector decides."""
        chosen = enabled_by_default if self.select is None else False
        best = -1
        for selectors, verdict in (
            (self.select or (), True),
            (self.extend_select, True),
            (self.ignore, False),
        ):
            for selector in selectors:
                if matches_selector(code, selector) and _specificity(selector) >= best:
                    best, chosen = _specificity(selector), verdict
        return chosen

    def context_paths(self) -> list[str]:
        """The files and directories `context` names, globs expanded (`**` spans directories).

        Raises GpulintError for a path without glob characters that does not exist.
        """
        import glob

        found: list[str] = []
        base = os.curdir if self.root is None else str(self.root)
        top = os.path.realpath(base)
        for index, pattern in enumerate(self.context):

            def refuse(problem: str, index: int = index) -> GpulintError:
                where = _located(self.path, ["context", index]) if self.path else "the config"
                return GpulintError(f"{where}: context: {problem}")

            # The config may come from a pull request: it names files of its own tree only.
            if os.path.isabs(pattern) or os.path.normpath(pattern).split(os.sep)[0] == "..":
                raise refuse(f"`{pattern}` is outside the project root {top}")
            full = pattern if self.root is None else os.path.join(self.root, pattern)
            if glob.has_magic(pattern):
                matches = _glob_in(base, pattern)
            elif os.path.lexists(full):
                matches = [full]
            else:
                raise refuse(f"`{pattern}` does not exist")
            for match in matches:
                real = os.path.realpath(match)
                if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
                    raise refuse(f"`{pattern}` names {match}, a link to {real} outside {top}")
            found.extend(matches)
        return found

    def context_where(self) -> str:
        """`config:line:column` of the `context` setting, for a problem reading what it names."""
        return _located(self.path, ["context"]) if self.path else "the config"

    def gitignore_filter(self) -> Callable[[str, bool], bool] | None:
        """What directory walks skip besides `exclude`: `.gitignore` rules, unless turned off."""
        if not self.respect_gitignore:
            return None
        return _gitignore_on_first_walk()

    def is_excluded(self, path: str | Path) -> bool:
        """True when `path` matches an `exclude` glob (relative to the config's directory)."""
        return bool(self.exclude) and _matches_any(Path(path), self.root, self.exclude)

    def walk_excluded(self, cluster: str | None) -> Callable[[str], bool]:
        """What a walk of the checked paths skips: what `excluded_in(cluster)` skips, and the
        directories another config file governs."""
        excluded = self.excluded_in(cluster)
        if not self.governed_elsewhere:
            return excluded
        elsewhere = self.governed_elsewhere
        return lambda path: os.path.abspath(path) in elsewhere or excluded(path)

    def applied_elsewhere(self, path: str | Path, cluster: str) -> bool:
        """True when `applied-to` binds `path` to named clusters other than `cluster`."""
        path = Path(path)
        return any(
            cluster not in clusters and _matches_any(path, self.root, (pattern,))
            for pattern, clusters in self.applied_to.items()
        )

    def excluded_in(self, cluster: str | None) -> Callable[[str], bool]:
        """What a run against `cluster` skips: `exclude`, and what is applied elsewhere."""
        if cluster is None or not self.applied_to:
            return self.is_excluded
        return lambda path: self.is_excluded(path) or self.applied_elsewhere(path, cluster)

    def ignored_in_file(self, path: str, code: str) -> bool:
        """True when `per-file-ignores` drops `code` in the file reported as `path`."""
        for pattern, selectors in self.per_file_ignores.items():
            if _matches_any(Path(path), self.root, (pattern,)) and any(
                matches_selector(code, s) for s in selectors
            ):
                return True
        return False

    def ignored_object(self, ref: ObjectRef, code: str) -> bool:
        """True when `ignore-objects` drops findings with `code` about `ref`."""
        return any(pattern.matches(ref, code) for pattern in self.ignore_objects)


def matches_selector(code: str, selector: str) -> bool:
    """`GPU1` selects GPU101..GPU199; `ALL` selects everything."""
    return selector == "ALL" or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


def _matches_any(path: Path, root: Path | None, patterns: Iterable[str]) -> bool:
    relative = path.as_posix()
    if root is not None:
        # abspath also folds `..`, so `../k8s/x.yaml` run from a subdirectory still matches.
        absolute = Path(os.path.abspath(path))
        if absolute.is_relative_to(root):
            relative = absolute.relative_to(root).as_posix()
    candidates = [relative, path.name]
    parts = relative.split("/")
    candidates.extend("/".join(parts[:i]) for i in range(1, len(parts)))
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        bare = pattern[3:] if pattern.startswith("**/") else pattern
        for candidate in candidates:
            if _glob_matches(candidate, pattern) or _glob_matches(candidate, bare):
                return True
    return False


def _glob_matches(name: str, pattern: str) -> bool:
    """fnmatch.fnmatchcase(name, pattern), without compiling a regular expression for a glob
    whose only wildcard is `*` (`examples/*.yaml`): a run with `per-file-ignores` matches its
    files against them, and compiling costs more than the rest of the match."""
    if "?" in pattern or "[" in pattern:
        return fnmatch.fnmatchcase(name, pattern)
    if "*" not in pattern:
        return name == pattern
    first, *middle, last = pattern.split("*")
    end = len(name) - len(last)
    if end < len(first) or not name.startswith(first) or not name.endswith(last):
        return False
    at = len(first)
    for part in middle:  # each piece between stars, leftmost first, as `*` allows
        found = name.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _glob_in(base: str, pattern: str) -> list[str]:
    """The paths under `base` that `pattern` matches (`**` spans directories), as glob.glob
    finds them (hidden names only where the pattern writes a dot), but never through a
    symlinked directory: two links to `..` would make glob's walk exponential."""
    hidden = any(part.startswith(".") for part in pattern.split("/"))
    found = []
    for match in Path(base).glob(pattern):
        parts = match.relative_to(base).parts
        if hidden or not any(part.startswith(".") for part in parts):
            found.append(str(match) if base != os.curdir else os.path.join(*parts))
    return sorted(found)


def find_config(
    start: Path, memo: dict[Path, Path | None] | None = None, skipped: set[str] | None = None
) -> Path | None:
    """The nearest `.gpulint.yaml` or pyproject.toml with `[tool.gpulint]`, upward from start.

    `memo` keeps the answer for each directory looked at, for several starts in one tree. A
    config file another user could have written (see cachedir.untrusted_place) is passed
    over, as git's safe.directory passes over a repository, and why is added to `skipped`.
    """
    memo = {} if memo is None else memo
    walked: list[Path] = []
    found = None
    for directory in (start, *start.parents):
        if directory in memo:
            found = memo[directory]
            break
        walked.append(directory)
        found = _config_in(directory, skipped)
        if found is not None:
            break
    for directory in walked:
        memo[directory] = found
    return found


def _config_in(directory: Path, skipped: set[str] | None = None) -> Path | None:
    candidates = [directory / name for name in CONFIG_FILES]
    candidates.append(directory / PYPROJECT)
    for path in candidates:
        if not path.is_file() or (path.name == PYPROJECT and not _has_tool_table(path)):
            continue
        from gpulint.cachedir import untrusted_place

        problem = untrusted_place(path)
        if problem is None:
            return path
        if skipped is not None:
            skipped.add(f"{problem}: config ignored (pass --config to use it)")
    return None


class ConfigChoice(NamedTuple):
    """The config file a run uses (None: the defaults), and why other candidates were not."""

    path: Path | None
    notes: tuple[str, ...] = ()


def config_for_paths(paths: Iterable[str], cwd: Path) -> ConfigChoice:
    """The config of the checked `paths`: the nearest one upward from each (ruff's rule).

    Relative paths are taken from `cwd` (the command line's working directory, or the
    root a library caller checks from); notes name configs relative to it. A directory is
    searched from itself, a file from its directory, so `gpulint check
    manifests` run from the repository root uses `manifests/.gpulint.yaml`. When the paths
    lie under different configs, one run cannot apply each to its own files: the config
    of their common directory is used, and a note names those that were not.
    """
    memo: dict[Path, Path | None] = {}
    skipped: set[str] = set()
    starts = set()
    for raw in paths:
        absolute = Path(os.path.abspath(cwd / raw))
        starts.add(absolute if absolute.is_dir() else absolute.parent)
    found = {find_config(start, memo, skipped) for start in starts}
    if len(found) <= 1:
        chosen = next(iter(found), None) if starts else find_config(cwd, memo, skipped)
        return ConfigChoice(chosen, tuple(sorted(skipped)))
    common = Path(os.path.commonpath([str(start) for start in starts]))
    chosen = find_config(common, memo, skipped)
    unused = sorted(os.path.relpath(f, cwd) for f in found if f is not None and f != chosen)
    used = os.path.relpath(chosen, cwd) if chosen is not None else "no config file"
    return ConfigChoice(
        chosen,
        (
            *sorted(skipped),
            *(
                f"{name} applies to some of the checked paths only, so this run uses {used}: "
                "check its directory in a run of its own, or pass --config"
                for name in unused
            ),
        ),
    )


def configs_for_paths(
    paths: Sequence[str], cwd: Path
) -> tuple[list[tuple[Path | None, list[int]]], tuple[str, ...]]:
    """The checked `paths` grouped by their nearest config, as ruff applies each file's own:
    (config, indexes into `paths`) in order of first mention; and notes on configs passed
    over. Relative paths are taken from `cwd`."""
    memo: dict[Path, Path | None] = {}
    skipped: set[str] = set()
    groups: dict[Path | None, list[int]] = {}
    for index, raw in enumerate(paths):
        absolute = Path(os.path.abspath(cwd / raw))
        start = absolute if absolute.is_dir() else absolute.parent
        groups.setdefault(find_config(start, memo, skipped), []).append(index)
    return list(groups.items()), tuple(sorted(skipped))


def configs_under(
    directory: str,
    governing: Config,
    load: Callable[[Path], Config],
    respect_gitignore: bool | None = None,
    skipped: set[str] | None = None,
) -> Iterator[tuple[str, Path, Config]]:
    """The directories under `directory` that hold a config file of their own, as (directory,
    config file, config), parents first: the nearest config governs each file (ruff's rule),
    and there is no merging, so such a directory is checked with its own config alone.

    The walk enters what a walk of the checked files enters (not hidden or symlinked
    directories, not what the governing config excludes or `.gitignore` ignores, not a chart's
    or overlay's own files); `load` reads a config file found; `respect_gitignore` overrides the
    configs' setting (the command line's). A config another user could have written is passed
    over, and why added to `skipped`.
    """
    from gpulint.loader import render_kind_of

    def gitignored(config: Config) -> Callable[[str, bool], bool] | None:
        use = config.respect_gitignore if respect_gitignore is None else respect_gitignore
        return config.gitignore_filter() if use else None

    if render_kind_of(directory) is not None:
        return  # a chart or overlay is rendered whole, under the config that governs it
    stack = [(directory, governing, gitignored(governing))]
    while stack:
        current, config, ignored = stack.pop()
        prefix = "" if current == os.curdir else f"{current.rstrip('/')}/"
        try:
            with os.scandir(current) as scan:
                names = sorted(e.name for e in scan if _enterable(e))
        except OSError:
            continue  # the walk of the checked files reports it
        found = []
        for name in names:
            path = prefix + name
            if config.is_excluded(path) or (ignored is not None and ignored(path, True)):
                continue
            if render_kind_of(path) is not None:
                own = _config_in(Path(path), skipped)
                if own is not None:  # a chart or overlay with a config of its own
                    yield path, own, load(own)
                continue
            own = _config_in(Path(path), skipped)
            if own is None:
                found.append((path, config, ignored))
                continue
            nested = load(own)
            yield path, own, nested
            found.append((path, nested, gitignored(nested)))
        stack.extend(reversed(found))


def _enterable(entry: os.DirEntry[str]) -> bool:
    """Whether a directory walk enters `entry`: a directory, not hidden, not a symlink."""
    try:
        return not entry.name.startswith(".") and entry.is_dir() and not entry.is_symlink()
    except OSError:
        return False


def _has_tool_table(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return False
    # Most pyproject.toml files have no such table: the pattern runs only on those that might.
    return "[tool.gpulint]" in text and re.search(r"(?m)^\[tool\.gpulint\]", text) is not None


def load_config(path: Path, known_codes: Iterable[str], cache: Path | None = None) -> Config:
    """Read, validate and convert a config file; raises GpulintError naming file:line.

    With a `cache` directory, a file whose bytes validated before (against the same schema, by
    the same gpulint) is not validated again: the schema validator is most of what reading a
    config costs, and a pre-commit hook reads the same config at every commit.
    """
    from gpulint.filetypes import open_input

    display = path.as_posix()
    try:
        # Never a FIFO (which blocks), a device, or a symlink out of the tree.
        with open(open_input(str(path)), "rb") as stream:
            raw = stream.read()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise GpulintError(f"{display}: cannot read config: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise GpulintError(f"{display}: cannot read config: {exc}") from exc
    if path.name == PYPROJECT:
        data, locate = _read_pyproject(display, text)
    else:
        data, locate = _read_yaml(display, text)
    marker = _validated_marker(cache, path.name, raw) if cache is not None else None
    if marker is None or not marker.is_file():
        # Only a run with a config file that is new to the cache imports the validator.
        from gpulint.schema import validate

        validate(display, data, "config", locate)
        if marker is not None:
            _remember(marker)
    _check_selectors(display, data, locate, set(known_codes))
    _check_cluster_names(display, data, locate)
    return _to_config(data, str(path), path.resolve().parent)


_SCHEMA_FILE = Path(__file__).with_name("schemas") / "config.schema.json"


def _validated_marker(cache: Path, name: str, raw: bytes) -> Path | None:
    """Where the note that these config bytes validated lives; None without a schema file."""
    from gpulint import __version__
    from gpulint.cachedir import CONFIGS, cache_problem, sha256

    # A marker another user could plant would let a config skip validation.
    if cache_problem(cache) is not None:
        return None
    try:
        schema = _SCHEMA_FILE.read_bytes()
    except OSError:  # the package is not on a file system: validate every time
        return None
    digest = sha256()
    for part in (__version__.encode(), schema, name.encode(), raw):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return cache / CONFIGS / digest.hexdigest()


def _remember(marker: Path) -> None:
    """Leave the marker; a cache that cannot be written only means validating next time."""
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass


def _gitignore_on_first_walk() -> Callable[[str, bool], bool]:
    """A GitIgnore made when a walk first asks: a run given only files never walks, and
    never reads a `.gitignore`."""
    matcher: Callable[[str, bool], bool] | None = None

    def ignored(path: str, is_dir: bool) -> bool:
        nonlocal matcher
        if matcher is None:
            from gpulint.gitignore import GitIgnore

            matcher = GitIgnore()
        return matcher(path, is_dir)

    return ignored


def _read_yaml(display: str, text: str) -> tuple[Any, Any]:
    result = parse(text)
    if result.error is not None:
        err = result.error
        raise GpulintError(f"{display}:{err.line}:{err.column}: invalid YAML: {err.problem}")
    data = result.documents[0].value if result.documents else None
    written = result.documents[0].duplicates if result.documents else ()
    duplicates = [dup for dup in written if not dup.by_merge]
    if duplicates:
        # YAML keeps the later value silently; a setting written twice is a mistake to show.
        from gpulint.fields import shown

        dup = duplicates[0]
        raise GpulintError(
            f"{display}:{dup.pos[0]}:{dup.pos[1]}: `{shown(dup.key)}` is set twice "
            f"(lines {dup.first[0]} and {dup.pos[0]}); keep one"
        )
    if data is None:
        data = YMap()
    return data, lambda path_: position_at(data, path_)


def _located(config: str, path: list[Any]) -> str:
    """`config:line:column` of the setting at `path` in the config file, read again (only a
    run that reports a setting's problem pays for it); `config` alone if it cannot be read."""
    try:
        text = Path(config).read_text(encoding="utf-8")
        if Path(config).name == PYPROJECT:
            _, locate = _read_pyproject(config, text)
        else:
            _, locate = _read_yaml(config, text)
        line, column = locate(path)
    except (OSError, UnicodeDecodeError, GpulintError):
        return config
    return f"{config}:{line}:{column}"


def _read_pyproject(display: str, text: str) -> tuple[Any, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, column, problem = _toml_error_position(text, str(exc))
        raise GpulintError(f"{display}:{line}:{column}: invalid TOML: {problem}") from exc
    data = document.get("tool", {}).get("gpulint", {})
    return data, lambda path_: _toml_position(text, path_)


def _toml_error_position(text: str, message: str) -> tuple[int, int, str]:
    """(line, column, problem) of a TOMLDecodeError, whose message ends `(at line L, column C)`."""
    match = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if match:
        return int(match.group(1)), int(match.group(2)), message[: match.start()]
    match = re.search(r"\s*\(at end of document\)\s*$", message)
    if match:
        lines = text.splitlines() or [""]
        return len(lines), len(lines[-1]) + 1, message[: match.start()]
    return 1, 1, message


def _toml_position(text: str, path: list[Any]) -> Pos:
    """Line of the `[tool.gpulint]` key an error is about (TOML parsers keep no positions)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "[tool.gpulint]"), 0)
    key = next((str(step) for step in path if isinstance(step, str)), None)
    if key is not None:
        pattern = re.compile(rf"^\s*(\"{re.escape(key)}\"|{re.escape(key)})\s*=")
        for i in range(start + 1, len(lines)):
            if lines[i].startswith("["):
                break
            if pattern.match(lines[i]):
                return i + 1, len(lines[i]) - len(lines[i].lstrip()) + 1
    return start + 1, 1


def _check_cluster_names(display: str, data: Any, locate: Any) -> None:
    """A values set or `applied-to` path bound to a cluster `clusters:` does not name would be
    checked against no cluster: a typo, refused at its line."""
    named = data.get("clusters")
    if not named:
        return  # the clusters come from the command line (`--profile NAME=FILE`)
    bindings = [
        (cluster, ["applied-to", pattern, i])
        for pattern, clusters in (data.get("applied-to") or {}).items()
        for i, cluster in enumerate(clusters or ())
    ]
    for n, chart in enumerate(data.get("charts") or ()):
        for name, spec in (chart.get("values-sets") or {}).items():
            for i, cluster in enumerate((spec or {}).get("clusters") or ()):
                bindings.append((cluster, ["charts", n, "values-sets", name, "clusters", i]))
    for cluster, path in bindings:
        if cluster not in named:
            line, column = locate(path)
            known = ", ".join(str(c) for c in named)
            raise GpulintError(
                f"{display}:{line}:{column}: cluster `{cluster}` is not among `clusters:` ({known})"
            )


def _check_selectors(display: str, data: Any, locate: Any, known: set[str]) -> None:
    def check(selector: Any, path: list[Any]) -> None:
        if selector != "ALL" and not any(code.startswith(str(selector)) for code in known):
            line, column = locate(path)
            raise GpulintError(f"{display}:{line}:{column}: `{selector}` selects no rule")

    for key in ("select", "extend-select", "ignore"):
        for i, selector in enumerate(data.get(key) or ()):
            check(selector, [key, i])
    for code in data.get("severity") or {}:
        check(code, ["severity", code])
    for pattern, selectors in (data.get("per-file-ignores") or {}).items():
        for i, selector in enumerate(selectors):
            check(selector, ["per-file-ignores", pattern, i])
    for n, item in enumerate(data.get("ignore-objects") or ()):
        for i, selector in enumerate(item.get("codes") or ()):
            check(selector, ["ignore-objects", n, "codes", i])


def _to_config(data: Mapping[str, Any], path: str, root: Path) -> Config:
    def selectors(key: str) -> tuple[str, ...]:
        return tuple(str(s) for s in data.get(key) or ())

    fail_on = data.get("fail-on", "error")
    return Config(
        path=path,
        root=root,
        select=selectors("select") if "select" in data else None,
        extend_select=selectors("extend-select"),
        ignore=selectors("ignore"),
        severity={str(k): Severity.parse(str(v)) for k, v in (data.get("severity") or {}).items()},
        fail_on=None if fail_on == FAIL_NEVER else Severity.parse(fail_on),
        exclude=tuple(str(g) for g in data.get("exclude") or ()),
        per_file_ignores={
            str(k): tuple(str(s) for s in v)
            for k, v in (data.get("per-file-ignores") or {}).items()
        },
        ignore_objects=tuple(
            ObjectPattern(
                kind=str(item.get("kind", "*")),
                namespace=str(item.get("namespace", "*")),
                name=str(item.get("name", "*")),
                codes=tuple(str(c) for c in item.get("codes") or ()),
            )
            for item in data.get("ignore-objects") or ()
        ),
        report_unused_ignores=bool(data.get("report-unused-ignores", False)),
        workloads=tuple(_workload_shape(item) for item in data.get("workloads") or ()),
        respect_gitignore=bool(data.get("respect-gitignore", True)),
        context=tuple(str(p) for p in data.get("context") or ()),
        file_keys=frozenset(str(key) for key in data),
        charts=dict(_chart_settings(item, root) for item in data.get("charts") or ()),
        variables={str(k): str(v) for k, v in (data.get("variables") or {}).items()},
        clusters=_clusters(data.get("clusters") or {}, root, path),
        applied_to={
            str(k): tuple(str(c) for c in v) for k, v in (data.get("applied-to") or {}).items()
        },
        kubernetes_version=data.get("kubernetesVersion"),
        platform=data.get("platform"),
        admission={str(k): bool(v) for k, v in (data.get("admission") or {}).items()},
    )


def _clusters(data: Mapping[str, Any], root: Path, config: str) -> dict[str, tuple[str, ...]]:
    if not data:  # a run without clusters does not import their module
        return {}
    # The config may come from a pull request: it names profiles of its own tree only.
    for name, paths in data.items():
        for index, written in enumerate(paths or ()):
            climbs = os.path.normpath(str(written)).split(os.sep)[0] == os.pardir
            if os.path.isabs(str(written)) or climbs:
                where = _located(config, ["clusters", name, index])
                top = os.path.realpath(root)
                raise GpulintError(
                    f"{where}: clusters: `{written}` is outside the project root {top}"
                )
    from gpulint.clusters import config_clusters

    return config_clusters(data, root)


def _chart_settings(item: Mapping[str, Any], root: Path) -> tuple[Path, ChartSettings]:
    # Imported here: a config without `charts:` never needs the render options.
    from gpulint.render.options import ChartSettings, ValuesSet

    """A `charts:` entry: the chart directory and its release, namespace and values sets."""
    sets = tuple(
        ValuesSet(
            str(name),
            tuple(str(root / v) for v in spec.get("values") or ()),
            tuple(str(s) for s in spec.get("set") or ()),
            tuple(str(c) for c in spec.get("clusters") or ()),
        )
        for name, spec in (item.get("values-sets") or {}).items()
    )
    settings = ChartSettings(item.get("release"), item.get("namespace"), sets or (ValuesSet(),))
    return (root / str(item["path"])).resolve(), settings


def _workload_shape(item: Mapping[str, Any]) -> WorkloadShape:
    """A `workloads:` entry: where the kind keeps its pods and how many each role runs.

    `podTemplates` and `podSpecs` are paths from the object root (with `*` and `name[]`
    steps) to PodTemplateSpecs and PodSpecs; `roles` describe one role each, with its own
    replica count; `replicas` (from the object root) counts the pods of every other role.
    """
    replicas = item.get("replicas")
    counts = (Count(f"/{replicas}"),) if replicas else ()
    roles = [Role(str(path), template="", counts=counts) for path in item.get("podTemplates") or ()]
    roles.extend(
        Role(str(path), template="", spec="", counts=counts) for path in item.get("podSpecs") or ()
    )
    for role in item.get("roles") or ():
        own = role.get("replicas")
        roles.append(
            Role(
                str(role["path"]),
                template=str(role.get("at", "")),
                spec="" if role.get("podSpec") else "spec",
                counts=(Count(str(own)),) if own else counts,
                name=str(role["name"]) if role.get("name") else None,
                optional=bool(role.get("optional", False)),
            )
        )
    return WorkloadShape(
        str(item["kind"]),
        (str(item.get("apiVersion", "*")),),
        tuple(roles),
        gang=bool(item.get("gang", False)),
        declared=True,
    )


def settings_lines(config: Config, from_command_line: frozenset[str] = frozenset()) -> list[str]:
    """`--show-settings`: the config file, then each setting, its value and where it came from
    (the config file, the command line or the default)."""
    import json

    lines = [
        f"config file: {config.path or 'none (defaults)'}",
        f"root (globs are relative to it): {config.root}",
    ]
    for item in fields(config):
        if item.name in ("path", "root", "file_keys"):
            continue
        key = item.name.replace("_", "-")
        if key in from_command_line:
            origin = "command line"
        elif key in config.file_keys:
            origin = str(config.path)
        else:
            origin = "default"
        value = getattr(config, item.name)
        if key == "fail-on" and value is None:
            value = FAIL_NEVER
        value = json.dumps(_plain(value))
        lines.append(f"{key} = {value}  # {origin}")
    return lines


def _plain(value: Any) -> Any:
    """`value` as JSON data: severities by label, workload shapes by kind and apiVersions."""
    if isinstance(value, Severity):
        return value.label
    if isinstance(value, WorkloadShape):
        return {"kind": value.kind, "apiVersion": list(value.api_versions)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Path):
        return value.as_posix()
    return value
