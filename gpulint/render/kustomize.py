"""Kustomize overlays: built with `kubectl kustomize` (or `kustomize build`), traced to patches.

A finding in the built stream is moved to the file that writes its text: the same object (by
kind and name, allowing a name prefix or suffix), the same field path (list items of the same
`name`, as strategic merge matches them) and the same characters, in exactly one patch file of
the overlay, else in exactly one resource file. Kustomize only copies such text, so an equal
value at an equal path in a single file is where it was written; when two files could have
written it, or a transformer changed it, the finding stays on the kustomization, line 1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gpulint.errors import GpulintError
from gpulint.findings import Finding, RenderedAt
from gpulint.render.cache import read_render, render_key, tree_files, write_render
from gpulint.render.tokens import Token, tokens
from gpulint.render.tools import find_tool, run_tool, tool_identity
from gpulint.views import NamedTuple
from gpulint.yamltree import YMap, YSeq, parse

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
KUSTOMIZE_INSTALL = (
    "install kubectl (https://kubernetes.io/docs/tasks/tools/) or kustomize "
    "(https://kubectl.docs.kubernetes.io/installation/kustomize/)"
)
# Fields of a kustomization that name other directories or files it reads.
_RESOURCE_FIELDS = ("resources", "bases", "components")
_PATCH_FIELDS = ("patchesStrategicMerge",)


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
    try:
        documents = parse(path.read_text(encoding="utf-8")).documents
    except (OSError, UnicodeDecodeError):
        return YMap()
    value = documents[0].value if documents else None
    return value if isinstance(value, YMap) else YMap()


def referenced_directories(directory: Path) -> list[Path]:
    """Local directories the kustomization in `directory` builds on (bases, components)."""
    found = []
    for entry in _entries(kustomization(directory), _RESOURCE_FIELDS):
        target = _joined(directory, entry)
        if "://" not in entry and target.is_dir():
            found.append(target)
    return found


def _entries(data: YMap, keys: Sequence[str]) -> Iterator[str]:
    for key in keys:
        items = data.get(key)
        if isinstance(items, YSeq):
            yield from (item for item in items if isinstance(item, str))


class OverlayFiles(NamedTuple):
    """The files an overlay reads: its patches and its resources, nearest overlay first."""

    patches: list[Path]
    resources: list[Path]
    directories: list[Path]


def overlay_files(directory: Path) -> OverlayFiles:
    """Every local patch and resource file of the overlay in `directory` and of its bases."""
    files = OverlayFiles([], [], [])
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
    for entry in _entries(data, _PATCH_FIELDS):
        files.patches.append(_joined(directory, entry))
    patches = data.get("patches")
    for item in patches if isinstance(patches, YSeq) else ():
        if isinstance(item, YMap) and isinstance(item.get("path"), str):
            files.patches.append(_joined(directory, item["path"]))
    for entry in _entries(data, _RESOURCE_FIELDS):
        target = _joined(directory, entry)
        if "://" in entry:
            continue
        if target.is_dir():
            _collect(target, files, seen)
        elif target.is_file():
            files.resources.append(target)


def _joined(directory: Path, entry: str) -> Path:
    """`directory/entry` without `..` steps, as reports name it."""
    return Path(os.path.normpath(directory / entry))


def build_overlay(directory: Path, cache_dir: Path | None) -> str:
    """The stream `kubectl kustomize DIR` (or `kustomize build DIR`) prints for `directory`.

    Raises GpulintError when neither tool is installed, RenderError with the tool's own
    message when the build fails.
    """
    try:
        command = [find_tool("kubectl", KUSTOMIZE_INSTALL), "kustomize"]
    except GpulintError:
        command = [find_tool("kustomize", KUSTOMIZE_INSTALL), "build"]
    files = overlay_files(directory)
    key = render_key(
        [command[1], tool_identity(command[0])],
        [f for d in files.directories for f in tree_files(d)],
    )
    cached = read_render(cache_dir, key)
    if cached is not None:
        return cached
    text = run_tool([*command, str(directory)], f"{directory}: kustomize build failed")
    write_render(cache_dir, key, text)
    return text


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
    for group in (files.patches, files.resources):
        matches = [m for f in group for m in _matches(f, kind, name, path, token)]
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
    path: Path, kind: Any, name: str, steps: tuple[Any, ...], token: Token
) -> Iterator[tuple[str, int, int]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    _, written = tokens(text)
    for document in parse(text).documents:
        obj = document.value
        if not isinstance(obj, YMap) or obj.get("kind") != kind:
            continue
        # A name prefix or suffix (namePrefix, nameSuffix) keeps the written name inside.
        source_name = _name(obj)
        if not source_name or source_name not in name:
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
