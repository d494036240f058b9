"""Files, directories and stdin -> SourceFiles and Documents, with positions and origins.

Reading is the only place that looks at raw text: once per file, for the two kinds of comment
the YAML parser drops (Helm's `# Source:` lines and `# gpulint: ignore[...]` suppressions).
"""

from __future__ import annotations

import bisect
import errno
import gc
import heapq
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpulint.data.tool_configs import is_tool_config
from gpulint.errors import GpulintError
from gpulint.fields import shown, type_name, with_article, wrong_type
from gpulint.ignores import SUPPRESSION, parse_comment
from gpulint.model import (
    Document,
    IssueKind,
    LoadIssue,
    ObjectRef,
    SourceFile,
    Suppression,
    Workload,
)
from gpulint.placeholders import (
    FILL_IN_ANYWHERE,
    SED_FILL_IN_ANYWHERE,
    Unknown,
    is_fill_in,
    not_filled,
    not_judged,
    unknown_fields,
)
from gpulint.render.rendered import RenderedInput
from gpulint.requestscan import Unchecked
from gpulint.shapes import (
    ARMADA_JOB,
    KFP_PIPELINE,
    POLYAXON_FILE,
    SPARK_GROUP,
    WorkloadShape,
    tool_pod_template,
)
from gpulint.views import NamedTuple
from gpulint.workloads import read_workload
from gpulint.yamltree import (
    DuplicateKey,
    ParsedDocument,
    Pos,
    YMap,
    YSeq,
    byte_position,
    normalize_line_breaks,
    parse,
)

if TYPE_CHECKING:
    from gpulint.render.options import RenderOptions

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"

# Patterns compiled on first use (re caches them): only a text holding `Source:` or
# `gpulint:` is searched with them.
_HELM_SOURCE = r"(?m)^#[ \t]*Source:[ \t]*(\S[^\n]*?)[ \t]*$"


class LoadResult(NamedTuple):
    """Everything read from the inputs."""

    files: tuple[SourceFile, ...]
    documents: tuple[Document, ...]
    issues: tuple[LoadIssue, ...]
    workloads: tuple[Workload, ...] = ()  # the typed views of the documents that run pods
    # The objects with accelerator requests (or pods) that no pod template read holds (GPU007).
    unchecked: tuple[Unchecked, ...] = ()
    # The fields holding envsubst placeholders, and what a rule cannot judge because of them.
    unknown: tuple[Unknown, ...] = ()

    @classmethod
    def merged(cls, results: Sequence[LoadResult]) -> LoadResult:
        """One result holding every file, document and issue of `results`, in their order."""
        return cls(
            tuple(f for r in results for f in r.files),
            tuple(d for r in results for d in r.documents),
            tuple(i for r in results for i in r.issues),
            tuple(w for r in results for w in r.workloads),
            tuple(u for r in results for u in r.unchecked),
            tuple(u for r in results for u in r.unknown),
        )


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector, restoring its previous state afterwards.

    Loading builds millions of small acyclic objects (every mapping, sequence and position) that
    all stay alive until the rules are done. Each full collection would traverse all of them
    again, which costs more than parsing them; reference counting frees them either way. Also
    usable as a decorator, so the decorated function's locals are gone before collection resumes.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: What a run checks: a file's display path, stdin as (display name, bytes), or a render.
Input = str | tuple[str, bytes] | RenderedInput


def input_name(item: Input) -> str:
    """The name an input is reported under."""
    return item if isinstance(item, str) else item[0]


class Inputs:
    """The inputs of a run in report order (by display path), each file once.

    Nothing is held per file: every iteration walks the given directories again, in report
    order, so a corpus of any size costs the memory of one walk. Only when a file can be
    reached twice (several paths given, or a symlinked file walked) does an iteration keep
    the real paths it has met, to read such a file once, under the first of its paths.
    """

    def __init__(
        self,
        roots: Sequence[str],
        is_excluded: Callable[[str], bool],
        stdin: tuple[str, bytes] | None = None,
        overlay: Mapping[str, bytes] | None = None,
        render: RenderOptions | None = None,
        allow_empty: bool = True,
        ignored: Callable[[str, bool], bool] | None = None,
        base: str | None = None,
        jobs: int = 1,
        listed: bool = False,
    ) -> None:
        self._roots = tuple(roots)  # as given: the paths to read
        self._base = base  # inputs are reported relative to it (display_path)
        self._is_excluded = is_excluded
        self._ignored = ignored  # (path, is_dir) -> skip it while walking (.gitignore)
        self._stdin = stdin
        # Text to check instead of what a path (or stdin's name) holds: fixes not yet written.
        self._overlay = overlay or {}
        # A pipe given by name (`gpulint check <(helm template ...)`) can be read only once, and
        # a run reads its inputs more than once: it is read now.
        self._piped: dict[str, tuple[str, bytes]] = {}
        self.files = self.size = 0  # files to read and their bytes, counted by one walk
        self._twice = len(self._roots) > 1
        # Charts and overlays met by the counting walk, rendered once it is done.
        self._marks: dict[str, str] | None = {}
        self._renders: dict[str, list[RenderedInput]] = {}
        self._kinds: dict[str, str | None] = {}  # directory -> "helm", "kustomize" or None
        # With `listed`, the caller lists every input anyway: the counting walk keeps what it
        # finds, and iterating does not walk the tree again (unless a chart or overlay was met).
        self._listed: dict[str, list[Input]] | None = {} if listed else None
        # With `listed`: the stat the walk took of each regular file it met by its own name
        # (not through a symlink), which a caller that stats every input need not take again.
        self.stats: dict[str, os.stat_result] = {}
        for root in self._roots:
            data = None if is_excluded(root) else _pipe_bytes(root)
            if data is not None:
                self._piped[root] = (root, data)
            found: list[Input] = []
            for item, is_link, size in self._files_of(root):
                self.files += 1
                self.size += size
                self._twice = self._twice or is_link
                if listed:
                    found.append(item)
            if self._listed is not None:
                self._listed[root] = found
        marks, self._marks = self._marks, None
        if marks:
            self._listed = None  # the renders come after the walk: iterating walks again
            from gpulint.render.options import RenderOptions
            from gpulint.render.plan import plan_renders

            def check(name: str, data: bytes) -> None:
                _require_objects(display_path(name, base), data)

            try:
                self._renders = plan_renders(
                    marks.items(), render or RenderOptions(), None if allow_empty else check, jobs
                )
            except GpulintError as exc:
                raise _named_for_display(exc, marks, base) from None
            if not allow_empty:
                _require_renders(self._roots, marks, self._renders, base)
            rendered = [item for items in self._renders.values() for item in items]
            self.files += len(rendered)
            self.size += sum(len(item.data) for item in rendered)
            # Two files of one chart given by name stand for one render.
            self._twice = self._twice or len(marks) < len(self._roots)

    def __len__(self) -> int:
        return self.files + (self._stdin is not None)

    @property
    def renders(self) -> dict[str, RenderedInput]:
        """Every chart or overlay render among the inputs (stdin too, if rendered), by name."""
        found = {item.name: item for items in self._renders.values() for item in items}
        if isinstance(self._stdin, RenderedInput):
            found[self._stdin.name] = self._stdin
        return found

    def __iter__(self) -> Iterator[Input]:
        listed = self._listed
        streams: list[Iterable[Input]] = [
            listed[root] if listed is not None else (path for path, _, _ in self._files_of(root))
            for root in self._roots
        ]
        if self._stdin is not None:
            streams.append((self._stdin,))
        merged = heapq.merge(*streams, key=self.report_name)
        if self._overlay:
            merged = map(self._overlaid, merged)
        return _once(merged) if self._twice else merged

    def report_name(self, item: Input) -> str:
        """What the report names `item` by, which orders the inputs."""
        name = input_name(item)
        return name if self._base is None else display_path(name, self._base)

    def _overlaid(self, item: Input) -> Input:
        name = input_name(item)
        return (name, self._overlay[name]) if name in self._overlay else item

    def _files_of(self, root: str) -> Iterator[tuple[Input, bool, int]]:
        if os.path.isdir(root):
            stats = self.stats if self._listed is not None else None
            yield from _walk(root, self._is_excluded, self._rendered, self._ignored, stats)
        elif root in self._piped:
            yield self._piped[root], False, len(self._piped[root][1])
        elif not self._is_excluded(root):
            owner = _render_owner(root, self._kinds)
            if owner is not None:
                # A file of a chart or overlay is checked as part of its render.
                yield from self._rendered(*owner)
                return
            # A dangling or looping symlink is read, and fails, later.
            yield root, False, _size(root)

    def _rendered(self, directory: str, kind: str) -> Iterator[tuple[Input, bool, int]]:
        """The renders of a chart or overlay (none yet while the counting walk notes it)."""
        if self._marks is not None:
            self._marks.setdefault(directory, kind)
            return
        for item in self._renders.get(directory, ()):
            yield item, False, len(item.data)


def discover(
    paths: Sequence[str],
    is_excluded: Callable[[str], bool] = lambda _: False,
    stdin: tuple[str, bytes] | None = None,
    overlay: Mapping[str, bytes] | None = None,
    render: RenderOptions | None = None,
    allow_empty: bool = True,
    ignored: Callable[[str, bool], bool] | None = None,
    base: str | None = None,
    jobs: int = 1,
    listed: bool = False,
) -> Inputs:
    """Files to check: given files, and manifests found recursively under given directories.

    A Helm chart (a directory with `Chart.yaml`) or a kustomize overlay (with a kustomization
    file), walked into or holding a file given by name, is rendered as `render` says and its
    stream checked instead of its files (see gpulint.render.plan). With `allow_empty` False
    (the command line's default), a render or stdin without any Kubernetes object raises
    GpulintError. Up to `jobs` charts and overlays are rendered at once.

    Hidden files and directories (`.git`, `.github` ...) are skipped inside directories, and
    anything `is_excluded` matches is skipped everywhere; `ignored(path, is_dir)` skips what
    it matches inside directories only (`.gitignore` rules). Files are named by their paths
    as given (a directory's files by the directory's path and their own) and come in report
    order (by `display_path(name, base)`), with `stdin` among them. A file reached
    twice (given twice, through a directory and by name, or through a symlink) is read once,
    under the first of its paths. An input named in `overlay` is read from there instead.
    With `listed` (for a caller that lists every input anyway), the files found are kept and
    the tree is walked once. Raises GpulintError for a missing path.
    """
    roots = []
    for raw in paths:
        refuse_url(raw)
        if not _exists(raw):
            raise GpulintError(f"{display_path(raw, base)}: no such file or directory")
        roots.append(Path(raw).as_posix())
    if stdin is not None and not allow_empty:
        _require_objects(display_path(stdin[0], base), stdin[1])
    return Inputs(
        roots, is_excluded, stdin, overlay, render, allow_empty, ignored, base, jobs, listed
    )


def _named_for_display(
    error: GpulintError, directories: Iterable[str], base: str | None
) -> GpulintError:
    """`error`, which a render's message starts with the directory it read, with that
    directory named as the run shows paths (`display_path`)."""
    message = str(error)
    for directory in sorted(directories, key=len, reverse=True):
        if message.startswith(f"{directory}:"):
            return type(error)(display_path(directory, base) + message[len(directory) :])
    return error


def _require_renders(
    roots: Iterable[str],
    marks: Mapping[str, str],
    renders: Mapping[str, Sequence[RenderedInput]],
    base: str | None,
) -> None:
    """Raise GpulintError for a chart given by its directory that has nothing to render: a
    library chart, which helm renders only as another chart's dependency."""
    for root in roots:
        if marks.get(root) != "helm" or renders.get(root):
            continue
        from gpulint.render.helm import is_library_chart

        if is_library_chart(Path(root)):
            raise GpulintError(
                f"{display_path(root, base)} is a library chart, which helm renders only as a "
                "dependency of another chart: check a chart that depends on it (pass "
                "--allow-empty to accept that)"
            )


def _require_objects(name: str, data: bytes) -> None:
    """Raise GpulintError when `data` holds no Kubernetes object and nothing to report."""
    loaded = load_bytes(name, data)
    if not loaded.documents and not loaded.issues:
        raise GpulintError(f"no Kubernetes objects in {name} (pass --allow-empty to accept that)")


def _once(inputs: Iterable[Input]) -> Iterator[Input]:
    """`inputs` without a second path to a file already given."""
    seen: set[str] = set()
    real_dirs: dict[str, str] = {}
    for item in inputs:
        # Bytes already read (stdin, a pipe) are told apart by name.
        identity = _identity(item, real_dirs) if isinstance(item, str) else f"\0{item[0]}"
        if identity not in seen:
            seen.add(identity)
            yield item


def _identity(path: str, real_dirs: dict[str, str]) -> str:
    """The file's real path, resolving each directory once rather than once per file."""
    if os.path.islink(path):
        return os.path.realpath(path)
    parent, name = os.path.split(path)
    real_dir = real_dirs.get(parent)
    if real_dir is None:
        real_dir = real_dirs[parent] = os.path.realpath(parent or os.curdir)
    return os.path.join(real_dir, name)


def refuse_url(path: str) -> None:
    """Raise GpulintError for a URL given as a path (nothing by that name on disk): gpulint
    reads local files only and never reaches the network."""
    scheme, colon, _ = path.partition("://")
    url = colon and scheme[:1].isalpha() and all(c.isalnum() or c in "+.-" for c in scheme)
    if url and scheme.isascii() and not _exists(path):
        raise GpulintError(
            f"{shown(path)}: not a local path; gpulint reads files, not URLs: download the "
            "manifest and check the file"
        )


def _exists(path: str) -> bool:
    """False only when nothing is at `path`: a file in a directory that cannot be searched
    exists, and reading it says why it cannot be read."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


class _Enter(NamedTuple):
    """A subdirectory _walk_level found, for _walk to walk next."""

    path: str


def _walk(
    directory: str,
    is_excluded: Callable[[str], bool],
    rendered: Callable[[str, str], Iterable[tuple[Input, bool, int]]],
    ignored: Callable[[str, bool], bool] | None = None,
    stats: dict[str, os.stat_result] | None = None,
) -> Iterator[tuple[Input, bool, int]]:
    """Manifest files under `directory` as (path, is a symlink, size), sorted by path; with
    `stats`, the stat of each regular file that is no symlink noted there by its path.

    A subdirectory sorts as its name and a `/`, so the files come in the order of their whole
    paths as strings. Symlinked directories are not entered; an unreadable one is given as a
    file, whose reading reports why. A chart or overlay directory gives
    `rendered(directory, kind)` instead of its files. The tree is walked with a stack, not by
    recursion: a tree of any depth is walked.
    """
    levels = [_walk_level(directory, is_excluded, rendered, ignored, stats)]
    while levels:
        found = next(levels[-1], None)
        if found is None:
            levels.pop()
        elif isinstance(found, _Enter):
            levels.append(_walk_level(found.path, is_excluded, rendered, ignored, stats))
        else:
            yield found


def _walk_level(
    directory: str,
    is_excluded: Callable[[str], bool],
    rendered: Callable[[str, str], Iterable[tuple[Input, bool, int]]],
    ignored: Callable[[str, bool], bool] | None = None,
    stats: dict[str, os.stat_result] | None = None,
) -> Iterator[tuple[Input, bool, int] | _Enter]:
    """The files of `directory` and its subdirectories to enter, in path order (`stats`: as
    `_walk`)."""
    prefix = "" if directory == os.curdir else f"{directory.rstrip('/')}/"
    try:
        with os.scandir(directory) as scan:
            entries = sorted((_entry_key(e), e) for e in scan if not e.name.startswith("."))
    except OSError:
        yield directory, False, 0  # reading it reports why (permission denied)
        return
    kind = _render_kind(e.name for _, e in entries)
    if kind is not None:
        yield from rendered(directory, kind)
        if kind == "helm":
            return
        # An overlay's build reads only what its kustomizations name: a manifest it does not
        # name, or a subdirectory it names nothing in (examples applied on their own), is
        # walked as any other.
        entries = [
            (key, entry)
            for key, entry in entries
            if entry.name not in _KUSTOMIZATION_FILES
            and not (
                _overlay_reads_under(directory, prefix + entry.name)
                if _is_dir(entry)
                else _overlay_reads(directory, prefix + entry.name)
            )
        ]
    for _, entry in entries:
        path = prefix + entry.name
        if _is_dir(entry):
            if (
                not entry.is_symlink()
                and not is_excluded(path)
                and not (ignored and ignored(path, True))
            ):
                yield _Enter(path)
        elif (
            entry.name.endswith(MANIFEST_SUFFIXES)
            and not is_excluded(path)
            and not (ignored and ignored(path, False))
        ):
            try:
                info = entry.stat()
            except OSError:  # dangling or looping symlink: reading it reports why
                yield path, True, 0
                continue
            # A FIFO, socket or device found in a tree could block a read forever.
            if stat.S_ISREG(info.st_mode):
                linked = entry.is_symlink()
                if stats is not None and not linked:
                    stats[path] = info
                yield path, linked, info.st_size


_CHART_FILE = "Chart.yaml"
_KUSTOMIZATION_FILES = frozenset(("kustomization.yaml", "kustomization.yml", "Kustomization"))


def _render_kind(names: Iterable[str]) -> str | None:
    """ "helm" or "kustomize" when a directory holding files `names` is a chart or an overlay."""
    kind = None
    for name in names:
        if name == _CHART_FILE:
            return "helm"
        if name in _KUSTOMIZATION_FILES:
            kind = "kustomize"
    return kind


def _render_owner(path: str, kinds: dict[str, str | None]) -> tuple[str, str] | None:
    """(directory, kind) of the chart or overlay holding file `path`, if any.

    The nearest such directory above the file wins, searching no higher than the working
    directory for a relative path; a subchart (`<chart>/charts/<sub>`) belongs to its chart,
    and a file belongs to an overlay only when its build may read it (not an example in a
    subdirectory no kustomization names, which is applied on its own).
    `kinds` keeps what each directory was found to be: pre-commit passes many files of a few
    directories.
    """

    def kind_of(directory: str) -> str | None:
        if directory not in kinds:
            kinds[directory] = _kind_of(directory)
        return kinds[directory]

    directory = os.path.dirname(os.path.normpath(path))
    while (kind := kind_of(directory or os.curdir)) is None or (
        kind == "kustomize" and not _overlay_reads(directory or os.curdir, path)
    ):
        parent = os.path.dirname(directory)
        if not directory or parent == directory or os.path.basename(directory) == os.pardir:
            return None
        directory = parent
    while kind == "helm":
        holder = os.path.dirname(directory)
        if os.path.basename(holder) != "charts":
            break
        outer = os.path.dirname(holder)
        if kind_of(outer or os.curdir) != "helm":
            break
        directory = outer
    return directory or os.curdir, kind


def _overlay_reads(directory: str, path: str) -> bool:
    """Whether building the overlay in `directory` may read the file `path`."""
    from gpulint.render.kustomize import reads_file

    return reads_file(Path(directory), Path(path))


def _overlay_reads_under(directory: str, subdirectory: str) -> bool:
    """Whether building the overlay in `directory` may read anything under `subdirectory`."""
    from gpulint.render.kustomize import reads_under

    return reads_under(Path(directory), Path(subdirectory))


def checked_when_changed(path: str, kinds: dict[str, str | None]) -> bool:
    """Whether a commit's changed file (`gpulint check --changed-files`) is checked: a file of
    a chart or overlay stands for its render, any other one is checked when it is a manifest
    by its name (.yaml, .yml, .json) outside a `templates/` directory (a Helm template outside
    a chart is no manifest). `kinds` keeps what each directory was found to be."""
    if path == STDIN or os.path.isdir(path) or _render_owner(path, kinds) is not None:
        return True
    parts = Path(path).parts
    return path.endswith(MANIFEST_SUFFIXES) and "templates" not in parts[:-1]


def render_kind_of(directory: str) -> str | None:
    """ "helm" or "kustomize" when `directory` is a chart or an overlay (which a walk renders
    rather than enters); None otherwise."""
    return _kind_of(directory)


def _kind_of(directory: str) -> str | None:
    # A few stats, not a listing: the directory may hold thousands of manifests.
    names = (_CHART_FILE, *_KUSTOMIZATION_FILES)
    return _render_kind(n for n in names if os.path.isfile(os.path.join(directory, n)))


def _entry_key(entry: os.DirEntry[str]) -> str:
    return f"{entry.name}/" if _is_dir(entry) else entry.name


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _pipe_bytes(path: str) -> bytes | None:
    """The bytes of `path` if it is a pipe the shell named (`<(...)`), read once; None for
    anything else (a device or a FIFO of the tree is refused when it is read)."""
    from gpulint.filetypes import is_pipe_name

    if not is_pipe_name(path):
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    data = read_bytes(Path(path))
    return data if isinstance(data, bytes) else None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def display_path(path: Path | str, base: str | None = None) -> str:
    """The path as findings report it: relative to the directory `base` when inside it (and
    `base` given), else as written."""
    text = Path(path).as_posix()
    if base is None:
        return text
    prefix = base.rstrip("/") + "/"
    return text[len(prefix) :] if text.startswith(prefix) else text


def load(paths: Iterable[Path], stdin: tuple[str, bytes] | None = None) -> LoadResult:
    """Read and parse every file of `paths`, then stdin as (display name, bytes) if given.

    A file that cannot be read (permissions, a directory, a symlink loop) is a load issue at
    its line 1, and the other files are still read.
    """
    results = [load_path(p) for p in paths]
    if stdin is not None:
        results.append(load_bytes(*stdin))
    return LoadResult.merged(results)


def load_path(
    path: Path,
    variables: Mapping[str, str] | None = None,
    shapes: Sequence[WorkloadShape] = (),
) -> LoadResult:
    """Read and parse one file; one that cannot be read is a load issue at its line 1.

    `variables` are substituted for `$NAME`/`${NAME}` first, and `shapes` type workloads
    besides the built-in kinds (see load_text).
    """
    name = display_path(path)
    data = read_bytes(path)
    if isinstance(data, OSError):
        source_file = SourceFile(name)
        what, reason = "file", data.strerror or type(data).__name__
        if os.path.isdir(path):
            # A directory the walk could not list: say why it could not.
            try:
                os.scandir(path).close()
            except OSError as exc:
                what, reason = "directory", exc.strerror or type(exc).__name__
        message = f"cannot read {what}: {reason}"
        issue = LoadIssue(IssueKind.UNREADABLE, source_file, (1, 1), message)
        return LoadResult((source_file,), (), (issue,))
    return load_bytes(name, data, variables, shapes)


#: The largest file gpulint reads: no Kubernetes manifest comes near it (the API server
#: stores objects of at most 1.5 MB), and a larger one, or a device such as /dev/zero, would
#: cost memory without end.
MAX_FILE_BYTES = 128 << 20


def read_bytes(path: Path) -> bytes | OSError:
    """The file's bytes, or why they cannot be read (one larger than MAX_FILE_BYTES cannot,
    nor a device, a FIFO or a socket: see gpulint.filetypes)."""
    from gpulint.filetypes import open_input

    try:
        with os.fdopen(open_input(str(path)), "rb") as stream:
            # A regular file says its size; a pipe is read up to the limit.
            too_large = os.fstat(stream.fileno()).st_size > MAX_FILE_BYTES
            data = b"" if too_large else stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return exc
    if too_large or len(data) > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES >> 20
        return OSError(errno.EFBIG, f"larger than {limit} MiB, which gpulint refuses")
    return data


def load_bytes(
    name: str,
    data: bytes,
    variables: Mapping[str, str] | None = None,
    shapes: Sequence[WorkloadShape] = (),
    rendered: bool = False,
) -> LoadResult:
    """Parse one file's bytes: its SourceFile, Documents, load issues and workloads
    (`rendered`: the output of a chart or overlay, whose findings are placed in its files)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        source_file = SourceFile(name)
        pos = byte_position(data, exc.start)
        issue = LoadIssue(IssueKind.NOT_UTF8, source_file, pos, "file is not valid UTF-8 text")
        return LoadResult((source_file,), (), (issue,))
    return load_text(name, text, variables, shapes, rendered)


#: What only a Helm template names inside `{{ }}`: the objects helm gives it and its own
#: functions. Other templates (a test tool's `{{.namespace}}`, Jinja's `{{ name }}`) are
#: filled by other tools, so the note does not send their users to helm.
_HELM_NAMES = (
    r"\{\{[^}]*?(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b"
    r"|\b(?:include|template|tpl|required|lookup|toYaml)\b)"
)


def _template_opening(text: str) -> int | None:
    """Where the first template tag of `text` opens: a `{{` anywhere, or a Jinja `{%` that
    begins a line (after indentation); None when it holds neither."""
    found = [i for i in (text.find("{{"),) if i >= 0]
    statement = re.search(r"^[ \t]*(\{%)", text, re.M) if "{%" in text else None
    if statement is not None:
        found.append(statement.start(1))
    return min(found) if found else None


def _tool_json(name: str, text: str) -> bool:
    """Whether a `.json` file that does not parse names neither `kind` nor `apiVersion`: a tool's
    config written with comments or trailing commas (tsconfig.json, .vscode/settings.json), which
    would not be a Kubernetes object if it parsed, rather than a broken manifest."""
    return name.lower().endswith(".json") and "kind" not in text and "apiVersion" not in text


def load_text(
    name: str,
    text: str,
    variables: Mapping[str, str] | None = None,
    shapes: Sequence[WorkloadShape] = (),
    rendered: bool = False,
) -> LoadResult:
    """Parse one file's text: its SourceFile, Documents, load issues, workloads and unchecked
    accelerator requests.

    `$NAME` and `${NAME}` are replaced by `variables[NAME]` first, as envsubst would (names not
    in `variables` stay). A file still holding placeholders where the API needs a value (a
    quantity, a count, a name) is one ENV_TEMPLATE issue listing them; the file is checked,
    less what they decide (`unknown`, gpulint.placeholders).

    Each object is walked once: that walk types its workload (the built-in kinds, and the
    kinds `shapes` declare, which the config's `workloads:` gives), finds the fields on the
    way to its pods that hold the wrong type (MALFORMED issues), for declared kinds as for
    built-in ones, and the accelerator requests no pod template it typed holds (see
    workloads.read_workload).
    """
    text = normalize_line_breaks(text)
    if variables and "$" in text:
        try:
            text = substitute(text, variables, MAX_FILE_BYTES)
        except ValueError as exc:
            source_file = SourceFile(name)
            issue = LoadIssue(IssueKind.UNREADABLE, source_file, (1, 1), str(exc))
            return LoadResult((source_file,), (), (issue,))
    # `$` for envsubst placeholders; `<` and `__` too when some value may be one to fill in.
    watch = ("$",)
    if "<" in text and re.search(FILL_IN_ANYWHERE, text):
        watch += ("<",)
    if "__" in text and re.search(SED_FILL_IN_ANYWHERE, text):
        watch += ("__",)
    result = parse(text, line_breaks_normalized=True, watch=watch)
    source_file = SourceFile(name, _suppressions(text))
    issues: list[LoadIssue] = []
    # `{%`: a Jinja statement (an Ansible role's `{% if deploy_ofed %}`), which no YAML holds
    # outside a quoted string; where it opens a line of a file that does not parse, the file is
    # an unrendered template as much as one holding `{{`.
    opening = _template_opening(text) if result.error is not None else None
    if opening is not None:
        line, column = _line_col(text, opening)
        message = (
            "this looks like an unrendered Helm template; render it first "
            "(helm template RELEASE CHART | gpulint check -) and check the output"
            if re.search(_HELM_NAMES, text)
            else "this looks like an unrendered template, not a Helm chart's (it names no "
            "`.Values`, `.Release`, `.Chart` or `include`); render it with the tool that fills "
            "it and check the output (... | gpulint check -)"
        )
        issue = LoadIssue(IssueKind.UNRENDERED_TEMPLATE, source_file, (line, column), message)
        return LoadResult((source_file,), (), (issue,))
    if result.error is not None and _tool_json(name, text):
        return LoadResult((source_file,), (), ())
    if result.error is not None:
        error = result.error
        pos = (error.line, error.column)
        issues.append(LoadIssue(IssueKind.SYNTAX, source_file, pos, error.problem))
    sources = _helm_sources(text)
    documents: list[Document] = []
    workloads: list[Workload] = []
    unchecked: list[Unchecked] = []
    stray: list[ParsedDocument] = []
    unknown: list[Unknown] = []  # fields holding placeholders where the API reads them
    previous_line = 0  # a `# Source:` comment belongs to the document right after it
    for parsed in result.documents:
        value = parsed.value
        if value is None:
            continue
        value_line = parsed.value_pos[0]
        if parsed.pos[0] < value_line:
            # This document opens with its own `---`: a comment above that line belonged to an
            # earlier document, even an empty one.
            previous_line = max(previous_line, parsed.pos[0])
        source = _source_between(sources, previous_line, value_line)
        previous_line = value_line
        if not isinstance(value, YMap):
            stray.append(parsed)
            continue
        if _is_object(value):
            objects: Iterable[YMap | Pos | tuple[YMap, ObjectRef]] = _expand_lists(value)
        else:
            jobs = (
                _armada_jobs(value)
                or _kfp_pipeline(value)
                or _polyaxonfile(value)
                or _airflow_spark_application(value)
            )
            if jobs is None:
                if _lacks_kind(value):
                    issues.append(_kind_missing(source_file, value.pos))
                continue
            objects = jobs
        for found in objects:
            if isinstance(found, YMap):
                obj, ref = found, _ref(found)
            elif isinstance(found[0], YMap):  # an Armada job and the ref it is given
                obj, ref = found
            else:  # the position of an item without kind: kubectl refuses the list
                issues.append(_kind_missing(source_file, found))
                continue
            document = Document(source_file, obj, ref, source)
            documents.append(document)
            if parsed.watched:
                unknown.extend(
                    unknown_fields(source_file, parsed.watched, obj, _NOT_READ_BY_THE_API)
                )
            reading = read_workload(document, shapes)
            if reading.workload is not None:
                workloads.append(reading.workload)
            if reading.unchecked is not None:
                unchecked.append(reading.unchecked)
            issues.extend(_object_issues(document, reading.malformed))
        issues.extend(
            LoadIssue(
                IssueKind.DUPLICATE_KEY, source_file, dup.pos, _duplicate_message(dup, rendered)
            )
            for dup in parsed.duplicates
        )
    # One note for an envsubst template's placeholders, one for a sample's values to fill in.
    for kind, note, to_fill in (
        (IssueKind.ENV_TEMPLATE, not_judged, False),
        (IssueKind.FILL_IN, not_filled, True),
    ):
        held = [u for u in unknown if is_fill_in(u.placeholder) is to_fill]
        if held:
            first = min(held, key=_at_pos)
            issues.append(LoadIssue(kind, source_file, first.pos, note(held)))
    if documents or result.error is not None:
        issues.extend(
            LoadIssue(
                IssueKind.NOT_A_MAPPING,
                source_file,
                parsed.value_pos,
                f"document is {with_article(type_name(parsed.value))}, "
                "not a Kubernetes object (a mapping)",
            )
            for parsed in stray
        )
    return LoadResult(
        (source_file,),
        tuple(documents),
        tuple(issues),
        tuple(workloads),
        tuple(unchecked),
        tuple(unknown),
    )


def _at_pos(unknown: Unknown) -> Pos:
    return unknown.pos


# Compiled on first use: only runs with `variables` substitute.
_PLACEHOLDER = r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))"
# Text a shell, the program or a tool expands at run time: a `$VAR` there is meant to stay.
_RUNTIME_TEXT = frozenset(
    {"command", "args", "env", "annotations", "data", "stringData", "script", "value"}
)
# Text the API stores as written and no check reads for placement: an image given at deploy
# time (`repo:${VERSION}`) leaves the rest of the file checkable, and so does an Argo resource
# template's `manifest` (the object Argo creates at run time, a script's `${VAR}` in it) and a
# RayService's `serveConfigV2` (Ray Serve's config, whose runtime env Ray expands).
_FREE_TEXT = frozenset({"image", "manifest", "serveConfigV2"})
# What is below these keys, at any depth, holds no placeholder of an env template.
_NOT_READ_BY_THE_API = _RUNTIME_TEXT | _FREE_TEXT


def substitute(text: str, variables: Mapping[str, str], limit: int | None = None) -> str:
    """`text` with `$NAME` and `${NAME}` replaced for the names in `variables`.

    ValueError when the result would be longer than `limit` characters: a value of a
    kilobyte in a million placeholders is a gigabyte the size limit of the file never saw."""
    size = len(text)

    def value(match: re.Match[str]) -> str:
        nonlocal size
        name = match.group(1) or match.group(2)
        found = variables.get(name)
        if found is None:
            return match.group(0)
        size += len(found) - len(match.group(0))
        if limit is not None and size > limit:
            raise ValueError(
                f"larger than {limit >> 20} MiB once `variables` are substituted, which "
                "gpulint refuses"
            )
        return found

    return re.sub(_PLACEHOLDER, value, text)


def _duplicate_message(dup: DuplicateKey, rendered: bool = False) -> str:
    """`rendered`: the lines are the render's, not those of the file the finding is placed in."""
    key = shown(dup.key)  # a key may be of any length
    output = " of the rendered output" if rendered else ""
    if dup.by_merge:
        return (
            f"`<<` merges in key `{key}`, replacing the value written at line {dup.first[0]}"
            f"{output}: Kubernetes' YAML decoder applies a merge where it is written, so keys "
            "above it lose"
        )
    lines = (
        f"on line {dup.pos[0]}{output}"
        if dup.first[0] == dup.pos[0]
        else f"(lines {dup.first[0]} and {dup.pos[0]}{output})"
    )
    # kubectl decodes YAML to JSON before sending it, so the API server's strict field
    # validation never sees the first value; kustomize's decoder refuses the file.
    return (
        f"key `{key}` is written twice in one mapping {lines}: `kubectl apply` keeps the "
        "later value without a word (the first never reaches the API server), kustomize "
        "refuses the file"
    )


def _is_object(value: YMap) -> bool:
    api_version, kind = value.get("apiVersion"), value.get("kind")
    if not api_version or not kind:
        return False
    # Files that tools read locally (kind, kustomize, kubeconfig, kubelet configuration...)
    # share the apiVersion/kind shape but never reach the API server: they are not manifests.
    return not is_tool_config(str(api_version), str(kind))


def _expand_lists(obj: YMap) -> Iterator[YMap | Pos]:
    """A `kind: List` (or `FooList`) stands for its items; anything else for itself.

    An item that names no `kind` (an exported list edited by hand) is given as its position:
    `kubectl apply` refuses the whole list ("Object 'Kind' is missing").
    """
    kind = str(obj.get("kind"))
    items = obj.get("items")
    if kind.endswith("List") and isinstance(items, YSeq):
        for item in items:
            if isinstance(item, YMap) and _is_object(item):
                yield from _expand_lists(item)
            elif isinstance(item, YMap) and _lacks_kind(item, in_list=True):
                yield item.pos
        return
    yield obj


def _armada_jobs(value: YMap) -> list[tuple[YMap, ObjectRef]] | None:
    """The jobs of an Armada job file (`queue`, `jobSetId`, `jobs`, as `armadactl submit` reads
    it), each an object of kind ARMADA_JOB named after its job set and place; None for any
    other mapping. Each job runs one pod, in its own `namespace`."""
    jobs = value.get("jobs")
    if type(jobs) is not YSeq or ("queue" not in value and "jobSetId" not in value):
        return None
    job_set = _scalar(value.get("jobSetId")) or "jobs"
    found = [
        (item, ObjectRef("", ARMADA_JOB, _scalar(item.get("namespace")) or None, f"{job_set}[{i}]"))
        for i, item in enumerate(jobs)
        if type(item) is YMap and ("podSpec" in item or "podSpecs" in item)
    ]
    return found or None


def _kfp_pipeline(value: YMap) -> list[tuple[YMap, ObjectRef]] | None:
    """A Kubeflow Pipelines IR document (`kfp.compiler` output: `pipelineInfo`, `root` and a
    `deploymentSpec` of `executors`) as one object of kind KFP_PIPELINE named after the
    pipeline, so that its executors' accelerators are reported (GPU007) rather than passed
    over as a file of no objects; None for any other mapping."""
    deployment = value.get("deploymentSpec")
    if type(deployment) is not YMap or type(deployment.get("executors")) is not YMap:
        return None
    if "pipelineInfo" not in value or "root" not in value:
        return None
    info = value.get("pipelineInfo")
    name = _scalar(info.get("name")) if type(info) is YMap else None
    return [(value, ObjectRef("", KFP_PIPELINE, None, name or "pipeline"))]


# What a Polyaxon operation runs instead of a `run` of its own (polyaxon/polyaxon
# site/references/polyaxonfile/specification/operation.mdx).
_POLYAXON_REFS = ("component", "runPatch", "hubRef", "urlRef", "pathRef", "dagRef")


def _polyaxonfile(value: YMap) -> list[tuple[YMap, ObjectRef]] | None:
    """A Polyaxonfile as one object of kind POLYAXON_FILE named after its `name`, so that the
    accelerators its run asks for are reported (GPU007) rather than passed over as a file of
    no objects: a component (`version`, `kind: component`, a `run`), an operation (`kind:
    operation` naming its component or patching its run) or a preset (a `runPatch` and no
    kind), which `polyaxon run` submits and the agent turns into pods; None for any other
    mapping."""
    kind = value.get("kind")
    if kind == "component" and "version" in value:
        if type(value.get("run")) is not YMap:
            return None
    elif kind == "operation" and "version" in value:
        if not any(key in value for key in _POLYAXON_REFS):
            return None
    elif kind is not None or type(value.get("runPatch")) is not YMap:
        return None
    name = _scalar(value.get("name"))
    return [(value, ObjectRef("", POLYAXON_FILE, None, name or str(kind or "preset")))]


# Apache Airflow's SparkKubernetesOperator (apache/airflow providers/cncf/kubernetes, operators/
# custom_object_launcher.py at 0e39dda2): its `application_file` holds the SparkApplication under
# `spark` (with `apiGroup` and `version` standing for its apiVersion) and the pod settings of
# both roles under `kubernetes`. Where the driver writes `container_resources`, Airflow turns
# each role's into the Spark operator's fields (SparkResources): the cpu request into `cores`,
# the cpu limit into `coreLimit`, the memory limit into `memory` (divided by 1.4, for the
# overhead the operator adds) and `gpu` into `gpu` when it names a resource and a positive
# quantity; then it sets both roles' `tolerations`, `nodeSelector` and `affinity` to those of
# `kubernetes` (CustomObjectLauncher.get_body), replacing what the roles wrote.
_AIRFLOW_POD_FIELDS = (
    ("tolerations", "tolerations"),
    ("node_selector", "nodeSelector"),
    ("affinity", "affinity"),
)
_AIRFLOW_OVERHEAD = 1.4


def _airflow_spark_application(value: YMap) -> list[tuple[YMap, ObjectRef]] | None:
    """An application file of Airflow's SparkKubernetesOperator as the SparkApplication the
    operator creates from it (see above), its fields kept where the file writes them, so that
    the driver's and executors' pods are checked rather than the file passed over as one of no
    objects; None for any other mapping."""
    spark = value.get("spark")
    if type(spark) is not YMap or spark.get("kind") != "SparkApplication":
        return None
    written_spec = spark.get("spec")
    if type(written_spec) is not YMap:
        return None
    obj = YMap(spark.pos)
    obj.update_from(spark)
    dropped = ["apiGroup", "version"]
    if type(spark.get("metadata")) is not YMap:
        dropped.append("metadata")  # Airflow replaces it by a mapping (get_body)
    for key in dropped:
        obj.pop(key, None)
        obj.spans.pop(key, None)
    if not obj.get("apiVersion"):
        group, version = spark.get("apiGroup"), spark.get("version")
        written = isinstance(group, str) and isinstance(version, str) and group and version
        text = f"{group}/{version}" if written else f"{SPARK_GROUP}/v1beta2"
        _place(obj, "apiVersion", text, spark, "apiGroup")
    spec = YMap(written_spec.pos)
    spec.update_from(written_spec)
    driver = written_spec.get("driver")
    converts = type(driver) is YMap and bool(driver.get("container_resources"))
    kubernetes = value.get("kubernetes")
    for role in ("driver", "executor"):
        written = written_spec.get(role)
        if type(written) is not YMap:
            continue
        built = YMap(written.pos)
        built.update_from(written)
        resources = built.get("container_resources")
        # Unconverted (no driver's to start Airflow's conversion), the field stays for the
        # request scan to report: the API server drops it, and its GPU with it.
        if converts and type(resources) is YMap:
            del built["container_resources"]
            built.spans.pop("container_resources", None)
            _airflow_resources(built, resources)
        if type(kubernetes) is YMap:
            for source, field in _AIRFLOW_POD_FIELDS:
                if source in kubernetes:
                    _place(built, field, kubernetes[source], kubernetes, source)
        spec[role] = built
    obj["spec"] = spec
    metadata = spark.get("metadata")
    metadata = metadata if type(metadata) is YMap else YMap(spark.pos)
    name = _scalar(metadata.get("name")) or "application_file"
    namespace = _scalar(metadata.get("namespace")) or None
    return [(obj, ObjectRef(_scalar(obj.get("apiVersion")), "SparkApplication", namespace, name))]


def _airflow_resources(role: YMap, resources: YMap) -> None:
    """Give a Spark role the fields Airflow makes of its `container_resources` (see above),
    each placed where the file writes the value it comes from."""
    cpu, memory, gpu = (resources.get(key) for key in ("cpu", "memory", "gpu"))
    if type(cpu) is YMap:
        request = _airflow_number(cpu.get("request"))
        if request is not None and int(request):
            _place(role, "cores", int(request), cpu, "request")
        if cpu.get("limit"):
            _place(role, "coreLimit", str(cpu["limit"]), cpu, "limit")
    limit = memory.get("limit") if type(memory) is YMap else None
    if isinstance(limit, str) and limit:
        # Airflow strips the characters `G`, `i` and space (or `m`) from the end, as this does.
        text = limit.rstrip("Gi G") if "G" in limit else limit.rstrip("m")  # noqa: B005
        mib = _airflow_number(text)
        if mib is not None:
            mib = mib * 1024 if "G" in limit else mib
            _place(role, "memory", f"{int(mib / _AIRFLOW_OVERHEAD)}m", memory, "limit")
    elif limit:
        _place(role, "memory", limit, memory, "limit")
    if type(gpu) is YMap:
        name, quantity = gpu.get("name"), _airflow_number(gpu.get("quantity"))
        if name and quantity is not None and int(quantity):
            built = YMap(gpu.pos)
            built.update_from(gpu)
            built["quantity"] = int(quantity)
            _place(role, "gpu", built, resources, "gpu")


def _airflow_number(value: Any) -> float | None:
    """`float(value)` as Airflow takes it, for a finite number; None where Airflow fails."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and abs(number) < 2**53 else None


def _place(target: YMap, key: str, value: Any, holder: YMap, written: str) -> None:
    """Set `target[key]` to `value`, placed where `holder` writes `written` (where `holder`
    starts when it does not)."""
    target[key] = value
    target.spans[key] = holder.spans.get(written, (*holder.pos, *holder.pos))


def _lacks_kind(value: YMap, in_list: bool = False) -> bool:
    """An object but for its `kind`: an apiVersion and metadata (any item of a list)."""
    if value.get("kind"):
        return False
    return in_list or (bool(value.get("apiVersion")) and "metadata" in value)


def _kind_missing(source_file: SourceFile, pos: Pos) -> LoadIssue:
    return LoadIssue(
        IssueKind.NOT_A_MAPPING,
        source_file,
        pos,
        "object has no `kind`: the API server (and `kubectl apply`) refuses it "
        "(\"Object 'Kind' is missing\")",
    )


def _ref(obj: YMap) -> ObjectRef:
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, YMap) else {}
    name = _scalar(metadata.get("name")) or _scalar(metadata.get("generateName"))
    return ObjectRef(
        api_version=_scalar(obj.get("apiVersion")),
        kind=_scalar(obj.get("kind")),
        namespace=_scalar(metadata.get("namespace")) or None,
        name=name,
    )


def _scalar(value: Any) -> str:
    """A name-like field as text; a mapping or list (which the API refuses there) is empty."""
    return "" if value is None or isinstance(value, (YMap, YSeq)) else str(value)


def _object_issues(document: Document, malformed: Iterable[tuple[Pos, str]]) -> Iterator[LoadIssue]:
    """What the API server refuses in the object: top-level and metadata fields of the wrong
    type, `malformed` fields on the way to its pods, a missing name."""
    obj = document.obj
    for key, expected in _OBJECT_FIELDS:
        if key in obj and (message := wrong_type(key, obj[key], expected)):
            yield LoadIssue(
                IssueKind.MALFORMED, document.file, obj.pos_of_value(key), message, document
            )
    for pos, message in malformed:
        yield LoadIssue(IssueKind.MALFORMED, document.file, pos, message, document)
    metadata = obj.get("metadata")
    if isinstance(metadata, YMap):
        for key, field in _METADATA_FIELDS:
            value = metadata.get(key)
            if value is not None and type(value) is not str:
                pos = metadata.pos_of_value(key)
                message = wrong_type(field, value, str) or ""
                yield LoadIssue(IssueKind.MALFORMED, document.file, pos, message, document)
    if document.ref.name or not isinstance(obj.get("kind"), str):
        return
    if isinstance(metadata, YMap) and (metadata.get("name") or metadata.get("generateName")):
        return  # a name of the wrong type, reported above
    if tool_pod_template(obj) is not None:
        return  # a tool's pod template file: the tool names each pod it makes of it
    pos = obj.pos_of_key("metadata") if "metadata" in obj else document.kind_pos
    yield LoadIssue(
        IssueKind.MISSING_NAME,
        document.file,
        pos,
        f"{document.ref.kind} has neither metadata.name nor metadata.generateName",
        document,
    )


# Top-level fields every Kubernetes object types the same way.
_OBJECT_FIELDS: tuple[tuple[str, type], ...] = (
    ("apiVersion", str),
    ("kind", str),
    ("metadata", YMap),
    ("spec", YMap),
)
_METADATA_FIELDS = tuple((key, f"metadata.{key}") for key in ("name", "generateName", "namespace"))


def _line_col(text: str, offset: int) -> Pos:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _lines_of(text: str, matches: Iterable[re.Match[str]]) -> Iterator[tuple[int, re.Match[str]]]:
    """(line, match) for matches in text order, counting newlines only once overall."""
    line, offset = 1, 0
    for match in matches:
        line += text.count("\n", offset, match.start())
        offset = match.start()
        yield line, match


def _suppressions(text: str) -> dict[int, Suppression]:
    if "gpulint:" not in text:
        return {}
    found: dict[int, Suppression] = {}
    for line, match in _lines_of(text, re.finditer(SUPPRESSION, text)):
        start = match.start() + (0 if text[match.start()] == "#" else 1)
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        selectors, reason, problem = parse_comment(match.group(1).rstrip())
        found[line] = Suppression(line, column, selectors, reason, problem)
    return found


def _helm_sources(text: str) -> tuple[list[int], list[str]]:
    """Lines of Helm's `# Source: chart/templates/x.yaml` comments, and their templates."""
    if "# Source:" not in text:
        return [], []
    found = [(line, m.group(1)) for line, m in _lines_of(text, _helm_source_matches(text))]
    return [line for line, _ in found], [source for _, source in found]


def _helm_source_matches(text: str) -> Iterator[re.Match[str]]:
    """`re.finditer(_HELM_SOURCE, text)`, but trying the pattern only on lines holding `Source:`.

    A `^`-anchored pattern is otherwise tried at every line of a long rendered file.
    """
    start = 0
    while (found := text.find("Source:", start)) >= 0:
        match = re.compile(_HELM_SOURCE).match(text, text.rfind("\n", 0, found) + 1)
        if match is not None:
            yield match
            start = match.end()
        else:
            start = found + len("Source:")


def _source_between(sources: tuple[list[int], list[str]], after: int, before: int) -> str | None:
    """The template named by the last `# Source:` comment between two lines (exclusive)."""
    index = bisect.bisect_left(sources[0], before)
    if index and sources[0][index - 1] > after:
        return sources[1][index - 1]
    return None
