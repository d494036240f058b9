"""Kustomize overlays: built with `kubectl kustomize` (or `kustomize build`), traced to patches.

A finding in the built stream is moved to the file that writes its text: the same object (by
kind and name, allowing a name prefix or suffix), the same field path (list items of the same
`name`, as strategic merge matches them) and the same characters, in exactly one patch file of
the overlay, else in exactly one resource file. Without a kustomization that renames objects
(`namePrefix`, `nameSuffix`, `transformers`) the name must be written as built: a resource
`srt-a` is no candidate for the object `srt-a-grpc` of the file beside it. Kustomize only
copies such text, so an equal value at an equal path in a single file is where it was written;
when two files could have written it, or a transformer changed it, the finding stays on the
kustomization, line 1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gpulint.errors import GpulintError
from gpulint.findings import Finding, RenderedAt
from gpulint.render.cache import read_render, render_key, write_render
from gpulint.render.confine import checked_files, is_inside, read_text, regular_file
from gpulint.render.named import (
    KUSTOMIZE_YAML_PROBLEMS,
    Named,
    inside_file,
    kustomize_document_line,
    yaml_problem_named,
)
from gpulint.render.tokens import Token, tokens
from gpulint.render.tools import (
    RenderError,
    RenderRun,
    ToolFailed,
    ToolInTree,
    Unbuildable,
    find_tool,
    run_tool,
    tool_identity,
)
from gpulint.views import NamedTuple
from gpulint.yamltree import Pos, YMap, YSeq, parse

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KUSTOMIZE_INSTALL = (
    "install kubectl (https://kubernetes.io/docs/tasks/tools/) or kustomize "
    "(https://kubectl.docs.kubernetes.io/installation/kustomize/)"
)
# Fields of a kustomization that name other directories or files it reads.
_RESOURCE_FIELDS = ("resources", "bases", "components")
_PATCH_FIELDS = ("patchesStrategicMerge",)
# Fields of a kustomization that can give an object another name than its resource writes:
# the affixes, and transformer configs (a PrefixSuffixTransformer among them).
_RENAMING = ("namePrefix", "nameSuffix", "transformers")


def kustomization_file(directory: Path) -> Path | None:
    """The kustomization file of `directory`, if it is a kustomization."""
    for name in KUSTOMIZATION_FILES:
        path = directory / name
        if path.is_file():
            return path
    return None


def kustomization(directory: Path) -> YMap:
    """The kustomization of `directory` as a mapping (empty if it does not parse)."""
    path = kustomization_file(directory)
    if path is None:
        return YMap()
    text = read_text(path)
    if text is None:
        return YMap()
    documents = parse(text).documents
    value = documents[0].value if documents else None
    return value if isinstance(value, YMap) else YMap()


def referenced_directories(directory: Path) -> list[Path]:
    """Local directories the kustomization in `directory` builds on (bases, components)."""
    found = []
    for entry in _entries(kustomization(directory), _RESOURCE_FIELDS):
        target = _joined(directory, entry)
        if not is_remote(entry) and target.is_dir():
            found.append(target)
    return found


def _entries(data: YMap, keys: Sequence[str]) -> Iterator[str]:
    return (entry for entry, _ in _entries_at(data, keys))


def _entries_at(data: YMap, keys: Sequence[str]) -> Iterator[tuple[str, Pos]]:
    """The text entries of the lists `keys` of `data`, each with where it is written."""
    for key in keys:
        items = data.get(key)
        if isinstance(items, YSeq):
            for index, item in enumerate(items):
                if isinstance(item, str):
                    yield item, items.pos_of_item(index)


class OverlayFiles(NamedTuple):
    """The files an overlay reads: its patches and its resources, nearest overlay first."""

    patches: list[Path]
    resources: list[Path]
    directories: list[Path]
    # The kustomizations that may change objects' names (gpulint.render.kustomize._RENAMING).
    renaming: list[Path]


def overlay_files(directory: Path) -> OverlayFiles:
    """Every local patch and resource file of the overlay in `directory` and of its bases."""
    files = OverlayFiles([], [], [], [])
    seen: set[Path] = set()
    _collect(directory, files, seen)
    return files


def _collect(directory: Path, files: OverlayFiles, seen: set[Path]) -> None:
    real = directory.resolve()
    if real in seen:
        return
    seen.add(real)
    files.directories.append(directory)
    data = kustomization(directory)
    if any(key in data for key in _RENAMING):
        files.renaming.append(directory)
    for entry in _entries(data, _PATCH_FIELDS):
        files.patches.append(_joined(directory, entry))
    patches = data.get("patches")
    for item in patches if isinstance(patches, YSeq) else ():
        if isinstance(item, YMap) and isinstance(item.get("path"), str):
            files.patches.append(_joined(directory, item["path"]))
    for entry in _entries(data, _RESOURCE_FIELDS):
        target = _joined(directory, entry)
        if is_remote(entry):
            continue
        if target.is_dir():
            _collect(target, files, seen)
        elif target.is_file():
            files.resources.append(target)


def _joined(directory: Path, entry: str) -> Path:
    """`directory/entry` without `..` steps, as reports name it."""
    return Path(os.path.normpath(directory / entry))


#: Fields with which a kustomization inflates Helm charts, from a directory (`charts/` by
#: default) that no other field names.
_HELM_FIELDS = ("helmCharts", "helmChartInflationGenerator", "helmGlobals")


def overlay_paths(directory: Path) -> frozenset[Path] | None:
    """The local paths the overlay in `directory` is built from: the directories of it and of
    its bases, their resources and patches, and every path any of their kustomizations names
    (a generator's files, `key=path` too; a component; a replacement's source). None when that
    cannot be told: a kustomization that does not parse, or one that inflates Helm charts.

    A path is as `directory` is written, joined without `..` steps; a text that names no file
    adds a path nothing lies under.
    """
    files = overlay_files(directory)
    found: set[Path] = {*files.directories, *files.resources, *files.patches}
    for base in files.directories:
        data = kustomization(base)
        if not data or any(key in data for key in _HELM_FIELDS):
            return None
        for text in _texts(data):
            named = text.rpartition("=")[2].strip()
            if named and not is_remote(named):
                found.add(_joined(base, named))
    return frozenset(found)


def reads_file(directory: Path, path: Path) -> bool:
    """Whether building the overlay in `directory` may read the file `path`: its
    kustomization, or a file its kustomizations (its own and its bases') name. A manifest
    beside them that none of them names (an example applied on its own with
    `kubectl apply -f`) is no part of the build."""
    path = Path(os.path.normpath(path))
    if path.name in KUSTOMIZATION_FILES and path.parent == Path(os.path.normpath(directory)):
        return True
    paths = overlay_paths(directory)
    return paths is None or path in paths


def reads_under(directory: Path, subdirectory: Path) -> bool:
    """Whether building the overlay in `directory` may read anything under `subdirectory`."""
    paths = overlay_paths(directory)
    if paths is None:
        return True
    subdirectory = Path(os.path.normpath(subdirectory))
    return any(p == subdirectory or subdirectory in p.parents for p in paths)


def _texts(value: Any) -> Iterator[str]:
    """Every text value in a kustomization, at any depth (keys left out)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, YMap):
            stack.extend(item.values())
        elif isinstance(item, YSeq):
            stack.extend(item)


def build_overlay(directory: Path, cache_dir: Path | None, run: RenderRun | None = None) -> str:
    """The stream `kubectl kustomize DIR` (or `kustomize build DIR`) prints for `directory`.

    Raises GpulintError when neither tool is installed, RenderError with the tool's own
    message when the build fails, and before any tool runs when the overlay names a remote
    or missing resource, or a file that is not regular (`check_overlay`).
    """
    run = run or RenderRun.start()
    files = check_overlay(directory, str(directory), run)
    try:
        command = [find_tool("kubectl", KUSTOMIZE_INSTALL, run.tool_tree(directory)), "kustomize"]
    except GpulintError as no_kubectl:
        try:
            command = [find_tool("kustomize", KUSTOMIZE_INSTALL, run.tool_tree(directory)), "build"]
        except ToolInTree:
            raise
        except GpulintError:
            if isinstance(no_kubectl, ToolInTree):
                raise no_kubectl from None
            raise
    key = render_key([command[1], tool_identity(command[0])], files)
    cached = read_render(cache_dir, key)
    if cached is not None:
        return cached
    what = f"{directory}: kustomize build failed"
    try:
        text = run_tool([*command, "--", os.path.abspath(directory)], what, run)
    except ToolFailed as exc:
        named = _resource_named(str(exc).removeprefix(f"{what}: "), directory)
        if named is None:
            raise
        raise ToolFailed(str(exc), named.pos, exc.fix, named.file) from None
    write_render(cache_dir, key, text)
    return text


#: kustomize's refusal of a resource of the overlay's own kustomization that is not YAML
#: (`resources: [x.yaml]`, named relative to the overlay; a base's resource follows a
#: `recursed accumulation of path` and is not matched): the line go-yaml gives, if any.
_RESOURCE_YAML = re.compile(
    r"^(?:[Ee]rror: )?accumulating resources: accumulating resources from '([^'\s]{1,500})': "
    r"MalformedYAMLError: yaml: (?:line (\d{1,7}): )?(.*) in File: \1$"
)


def _resource_named(message: str, overlay: Path) -> Named | None:
    """The resource file of `overlay` and the line in it kustomize's `message` names, if any:
    the line go-yaml gives when it is the problem's own and the file one document, else the
    file's first line."""
    match = _RESOURCE_YAML.search(message)
    if match is None:
        return None
    found = inside_file(overlay, match.group(1).split("/"))
    if found is None:
        return None
    return yaml_problem_named(found, match, KUSTOMIZE_YAML_PROBLEMS, kustomize_document_line)


#: Fields whose entries are files or directories (bases, components, generator configs).
_PATH_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
)
#: Fields holding a list of mappings with a `path:` to a file.
_PATH_ITEMS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
# How kustomize recognises a remote resource (api/internal/git/repospec.go and the file
# loader, which fetches http(s) URLs), and go-getter's `//` subdirectory.
_REMOTE_PREFIXES = ("git::", "gh:", "git@", "github.com/", "github.com:")


def is_remote(entry: str) -> bool:
    """Whether kustomize would fetch `entry` (a URL, a git repository) rather than read it."""
    lowered = entry.strip().lower()
    return (
        "://" in lowered
        or lowered.startswith(_REMOTE_PREFIXES)
        or "_git/" in lowered
        or "?" in lowered
        or "//" in lowered
    )


def check_overlay(directory: Path, label: str, run: RenderRun) -> list[Path]:
    """Every file the key of the overlay in `directory` reads, once the overlay is safe to build.

    Each kustomization of the build (the overlay, its bases and components) is a directory
    inside the checked tree whose files are regular (gpulint.render.confine); every file or
    directory a kustomization names is local and exists. A remote resource, base, component,
    patch or generator file (`https://...`, `git@...`, `github.com/...`, `?ref=`, `//`) is a
    RenderError naming it, raised before kubectl could fetch it.
    """
    files: list[Path] = []
    tree = run.tree(directory)
    pending, seen = [directory], set()
    while pending:
        current = pending.pop()
        real = current.resolve()
        if real in seen:
            continue
        seen.add(real)
        if not is_inside(current, tree):
            raise RenderError(
                f"{label}: `{current}` is outside the checked tree {tree}; gpulint builds "
                "only kustomizations inside it"
            )
        files.extend(checked_files(current, label, "overlay", skip_vcs=True))
        relative = os.path.relpath(current, directory)
        # The entry named as `field` entry `x` (of ../base): the label is the overlay.
        where = f"{label}: `{{}}` entry `{{}}`" + ("" if relative == "." else f" of {relative}")
        read = _checked_kustomization(current, label, directory)
        for field, entry, pos in _named_paths(read):
            named = where.format(field, entry)
            # A position is one in the overlay's own kustomization, where GPU030 reports.
            at = pos if relative == "." else None
            target = _local_target(current, field, entry, named, tree, at)
            if target is not None and target.is_dir():
                pending.append(target)
    return files


def _checked_kustomization(directory: Path, label: str, overlay: Path) -> YMap:
    """The kustomization of `directory`; RenderError when gpulint cannot read all of it, so
    an entry it cannot check never reaches kustomize (whose YAML reader accepts more).
    Files are named relative to the `overlay` built, which `label` names."""
    path = kustomization_file(directory)
    if path is None:
        return YMap()
    shown = Path(os.path.relpath(path, overlay)).as_posix()
    text = read_text(path)
    if text is None:
        raise RenderError(f"{label}: cannot read {shown} as UTF-8 text")
    parsed = parse(text)
    if parsed.error is not None:
        raise RenderError(
            f"{label}: {shown}:{parsed.error}; gpulint builds only kustomizations it can read whole"
        )
    value = parsed.documents[0].value if parsed.documents else None
    return value if isinstance(value, YMap) else YMap()


def _named_paths(data: YMap) -> Iterator[tuple[str, str, Pos]]:
    """(field, entry, where it is written) of each file or directory the kustomization `data`
    names."""
    for field in _PATH_LISTS:
        for entry, pos in _entries_at(data, (field,)):
            # A patch or a generator configuration may be written inline.
            if "\n" not in entry:
                yield field, entry, pos
    for field in _PATH_ITEMS:
        items = data.get(field)
        for item in items if isinstance(items, YSeq) else ():
            if isinstance(item, YMap) and isinstance(item.get("path"), str):
                yield field, item["path"], item.pos_of_value("path")
    openapi = data.get("openapi")
    if isinstance(openapi, YMap) and isinstance(openapi.get("path"), str):
        yield "openapi", openapi["path"], openapi.pos_of_value("path")
    for field in _GENERATORS:
        generators = data.get(field)
        for generator in generators if isinstance(generators, YSeq) else ():
            if not isinstance(generator, YMap):
                continue
            for entry, pos in _entries_at(generator, ("files", "envs")):
                # `files` entries may be `key=path`.
                yield field, entry.split("=", 1)[-1], pos
            if isinstance(generator.get("env"), str):
                yield field, generator["env"], generator.pos_of_value("env")


def _local_target(
    directory: Path, field: str, entry: str, named: str, tree: Path, pos: Pos | None = None
) -> Path | None:
    """The file or directory `entry` names (`named` in messages, written at `pos` of the
    overlay's kustomization); RenderError when it is remote, missing or not regular; None
    for a `patchesStrategicMerge` entry written inline."""
    if is_remote(entry):
        raise RenderError(
            f"{named} is remote; gpulint never fetches kustomize resources (vendor them into "
            "the repository)"
        )
    target = _joined(directory, entry)
    if not os.path.lexists(target):
        if field == "patchesStrategicMerge":
            return None  # an inline patch: kustomize parses it
        raise Unbuildable(
            f"{named}: no such file or directory",
            pos,
            f"Create `{entry}` (relative to the kustomization), or remove the entry: kustomize "
            "refuses an overlay that names a file it cannot find.",
        )
    if not is_inside(target, tree):
        raise RenderError(
            f"{named} is outside the checked tree {tree}; gpulint reads only files inside it"
        )
    if not target.is_dir():
        regular_file(target, named.split(":", 1)[0], f"`{field}` entry")
    return target


@dataclass(frozen=True)
class KustomizeOrigin:
    """How to trace findings of one overlay build back to its patches and resources."""

    directory: Path
    label: str  # the overlay directory as reported

    def locate(self, findings: Sequence[Finding], rendered: str) -> list[Finding]:
        """`findings` (at positions of `rendered`) moved to the patch or resource file."""
        if not findings:
            return []
        _, found = tokens(rendered)
        documents = [d.value for d in parse(rendered).documents]
        files = overlay_files(self.directory)
        home = kustomization_file(self.directory)
        fallback = home.as_posix() if home is not None else self.label
        located = []
        for finding in findings:
            at = RenderedAt(self.label, finding.line, finding.column)
            token = found.get((finding.line, finding.column))
            where = None
            if token is not None and isinstance(documents[token.path[0]], YMap):
                where = _written_in(token, documents[token.path[0]], files)
            path, line, column = where or (fallback, 1, 1)
            located.append(
                replace(
                    finding,
                    path=path,
                    line=line,
                    column=column,
                    rendered=at,
                    edits=(),
                    applicability=None,
                )
            )
        return located


def _written_in(token: Token, root: YMap, files: OverlayFiles) -> tuple[str, int, int] | None:
    path = _semantic_path(root, token.path[1:])
    if path is None:
        return None
    kind, name = root.get("kind"), _name(root)
    renamed = bool(files.renaming)
    for group in (files.patches, files.resources):
        matches = [m for f in group for m in _matches(f, kind, name, renamed, path, token)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            return None
    return None


def _name(obj: YMap) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, YMap) else None
    return name if isinstance(name, str) else ""


def _semantic_path(root: YMap, path: Sequence[Any]) -> tuple[Any, ...] | None:
    """`path` with each list index replaced by the item's `name`, when the item has one."""
    node: Any = root
    out: list[Any] = []
    for step in path:
        if isinstance(node, YSeq) and isinstance(step, int):
            item = node[step] if step < len(node) else None
            name = item.get("name") if isinstance(item, YMap) else None
            out.append(("name", name) if isinstance(name, str) else step)
            node = item
        elif isinstance(node, YMap):
            out.append(step)
            node = node.get(step)
        else:
            return None
    return tuple(out)


def _matches(
    path: Path, kind: Any, name: str, renamed: bool, steps: tuple[Any, ...], token: Token
) -> Iterator[tuple[str, int, int]]:
    """Where `path` writes `token` in an object of `kind` that kustomize builds as `name`;
    `renamed`: some kustomization of the overlay may add to the names written."""
    text = read_text(path)
    if text is None:
        return
    _, written = tokens(text)
    for document in parse(text).documents:
        obj = document.value
        if not isinstance(obj, YMap) or obj.get("kind") != kind:
            continue
        # A name prefix or suffix (namePrefix, nameSuffix) keeps the written name inside;
        # without one, the name is built as written.
        source_name = _name(obj)
        if not source_name or source_name not in name or (not renamed and source_name != name):
            continue
        pos = _position(obj, steps, token.is_key)
        candidate = written.get(pos) if pos is not None else None
        if candidate is not None and candidate.text == token.text:
            yield path.as_posix(), pos[0], pos[1]


def _position(obj: YMap, steps: tuple[Any, ...], is_key: bool) -> tuple[int, int] | None:
    node: Any = obj
    for number, step in enumerate(steps):
        last = number == len(steps) - 1
        if isinstance(step, tuple):  # ("name", value): the list item of that name
            if not isinstance(node, YSeq):
                return None
            found = [
                i
                for i, item in enumerate(node)
                if isinstance(item, YMap) and item.get("name") == step[1]
            ]
            if len(found) != 1:
                return None
            if last:
                return node.pos_of_item(found[0])
            node = node[found[0]]
        elif isinstance(node, YMap):
            if step not in node:
                return None
            if last:
                return node.pos_of_key(step) if is_key else node.pos_of_value(step)
            node = node[step]
        elif isinstance(node, YSeq) and isinstance(step, int) and step < len(node):
            if last:
                return node.pos_of_item(step)
            node = node[step]
        else:
            return None
    return None
