"""Terraform read as untrusted input: what tfparse may read is checked before it runs, and it
runs in a child process with bounded memory and time.

tfparse resolves `file("../../x")` and local module sources relative to the module without
any bound (an attacker's `file("../../../proc/self/environ")` becomes a pool name), reads a
FIFO among the `.tf` files forever, recurses without end on `module "self" { source = "./" }`
and takes minutes on `count = 10000`. So, before it is called:

- every file it reads (`.tf`, `.tf.json`, `.tfvars`, the module manifest under `.terraform`)
  in the root module's directory and in each local module's must be a regular file whose real
  path is inside the tree (the root given, else the working directory, when the module is
  inside it; else the module's own directory);
- every call of a function that reads a file (`file`, `templatefile`, `fileset`, ...) that
  names its path as a string literal (`"${path.module}/groups.yaml"`) must name such a file;
  a path computed from variables cannot be checked before evaluation: it is refused unless
  the kernel bounds the child's reads to the tree (gpulint.profile.sandbox);
- a local module that calls itself, directly or through others, or module calls that fan out
  past MAX_MODULE_CALLS, and a `count` literal above MAX_COUNT are refused;
- a block a module declares twice (`resource`, `data`, `module`, `variable`, `output` of the
  same labels), which Terraform refuses and tfparse would merge, is refused.

What the text checks cannot bound (a `for_each` over `range(1e6)`, a deep `for` expression)
the child's limits do: MEMORY_LIMIT of address space and TIME_LIMIT seconds, each an error
naming the module.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

from gpulint.errors import GpulintError
from gpulint.views import NamedTuple

#: The most module instances the local module calls may create (each call of each module).
MAX_MODULE_CALLS = 500
#: The largest `count` literal read: tfparse takes seconds per thousand instances.
MAX_COUNT = 1000
#: Bounds of the child process that evaluates the module.
TIME_LIMIT = 30
MEMORY_LIMIT = 2 << 30
#: The largest Terraform file read (the API's node pools are a few kilobytes).
MAX_TF_BYTES = 8 << 20

#: Files tfparse reads in a module's directory.
_READ_SUFFIXES = (".tf", ".tf.json", ".tfvars", ".tfvars.json")
#: The functions that read files, by the name Terraform (and tfparse) gives them.
_FILE_FUNCTIONS = (
    "file|fileexists|fileset|filebase64|filebase64sha256|filebase64sha512|filemd5|filesha1"
    "|filesha256|filesha512|templatefile"
)
# Between a function's name and its `(`, HCL allows spaces and comments (a line comment
# holds its line break).
_GAP = r"(?:\s|/\*.*?\*/|(?:#|//)[^\n]*\n)*"
_CALL = re.compile(rf"\b({_FILE_FUNCTIONS}){_GAP}\(", re.DOTALL)
# The one argument form checked: a string literal, with at most `${path.module}/` (or
# `${path.root}/`) in front; nothing an expression could make.
_LITERAL_PATH = re.compile(
    r'\s*"(?:\$\{\s*path\.(module|root)\s*\}/)?([^"$%\\\x00-\x1f]*)"\s*([,)])'
)
_SECOND_LITERAL = re.compile(r'\s*"([^"$%\\\x00-\x1f]*)"\s*\)')
_MODULE = re.compile(r'\bmodule\s+"[^"\n]*"\s*\{')
_SOURCE = re.compile(r'\bsource\s*=\s*"([^"\n]*)"')
_COUNT = re.compile(r"\bcount\s*=\s*(\d+)")
#: A top-level block Terraform allows once per module by its labels (`resource "a" "b" {`).
_LABEL = r'(?:"[^"\n]*"|[A-Za-z_][\w-]*)'
_DECLARATION = re.compile(
    rf"^(resource|data|module|variable|output)[ \t]+({_LABEL}(?:[ \t]+{_LABEL})?)[ \t]*\{{",
    re.MULTILINE,
)
#: Text no block header is read from: block comments and heredocs (their lines kept).
_UNREAD = re.compile(
    r"/\*.*?\*/|<<-?([A-Za-z_]\w*)[ \t]*\n.*?\n[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE
)


def tree_boundary(directory: str, root: str | None) -> str:
    """The real path of the tree Terraform may read: `root` (else the working directory) when
    the module is inside it, else the module's own directory."""
    real = os.path.realpath(directory)
    top = os.path.realpath(root if root is not None else os.curdir)
    return top if _inside(real, top) else real


def check_module_tree(
    directory: str, boundary: str, shown: Any, bounded: bool = False
) -> list[str]:
    """The directories of the local modules the module in `directory` calls.

    Raises GpulintError (naming the file and line) when the module, or a local module it calls,
    would make tfparse read outside `boundary`, read something that is not a regular file, or
    never end. `shown(path)` is a path as messages name it. When the kernel `bounded` the
    child's reads to the tree (gpulint.profile.sandbox), a path computed from variables is
    left to that bound rather than refused (`file(var.public_key)` is common)."""
    return module_tree(directory, boundary, shown, bounded).modules


class ModuleTree(NamedTuple):
    """A checked module tree: what tfparse will read of it."""

    modules: list[str]  # the directories of the local modules called, as check_module_tree
    # Each file tfparse reads (its path as read, its bytes; None for a file `fileexists`
    # finds missing), in the order met; None when what it reads is known only once evaluated
    # (a path computed from variables, a `fileset` pattern, an unreadable file).
    files: list[tuple[str, bytes | None]] | None


def module_tree(directory: str, boundary: str, shown: Any, bounded: bool = False) -> ModuleTree:
    """check_module_tree, and the files tfparse will read (a cache key is made of them)."""
    walk = _Walk(boundary, shown, os.path.realpath(directory), bounded)
    walk.module(directory, (), 1)
    return ModuleTree(walk.modules[1:], walk.files)


class _Walk:
    """One check of a module tree: the module calls met so far."""

    def __init__(self, boundary: str, shown: Any, root_module: str, bounded: bool) -> None:
        self.boundary = boundary
        self.bounded = bounded
        self.shown = shown
        self.root_module = root_module
        self.calls = 0
        self.scanned: set[str] = set()
        # Each module directory's blocks by kind and labels: where each is first declared.
        self.declared: dict[tuple[str, str, str], tuple[str, int]] = {}
        self.modules: list[str] = []  # each module directory once, the root module's first
        self.files: list[tuple[str, bytes | None]] | None = []  # see ModuleTree.files

    def fail(self, path: str, message: str, line: int | None = None) -> GpulintError:
        where = self.shown(path) if line is None else f"{self.shown(path)}:{line}"
        return GpulintError(f"{where}: {message}")

    def module(self, directory: str, chain: tuple[str, ...], instances: int) -> None:
        real = os.path.realpath(directory)
        if real not in map(os.path.realpath, self.modules):
            self.modules.append(directory)
        self.calls += instances
        if self.calls > MAX_MODULE_CALLS:
            raise self.fail(directory, f"modules are called more than {MAX_MODULE_CALLS} times")
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            raise self.fail(directory, f"cannot read module directory: {exc.strerror}") from None
        for name in names:
            path = os.path.join(directory, name)
            if name.endswith(_READ_SUFFIXES) and not os.path.isdir(path):
                text = self.read(path)
                if name.endswith(".tf.json"):
                    # Expressions are JSON strings: scanned as Terraform reads them, escapes
                    # decoded (`\\u0066ile(` is a call of file).
                    strings, sources = _json_strings(text)
                    self.scan(path, strings, directory, lines=False)
                elif name.endswith(".tf"):
                    self.scan(path, text, directory)
                    self.declarations(path, text, real)
                    sources = list(_module_sources(text))
                else:
                    continue
                for source, line in sources:
                    self.call(path, line, directory, source, (*chain, real), instances)
        self.manifest(directory)

    def declarations(self, path: str, text: str, module: str) -> None:
        """Refuse a block the module already declares (two `module "eks"` calls, in one file
        or two): Terraform refuses the module, and tfparse would merge them silently."""
        # A module called twice is read twice: its blocks are then found where first seen.
        read = _UNREAD.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        for match in _DECLARATION.finditer(read):
            kind, labels = (
                match.group(1),
                " ".join(label.strip('"') for label in re.findall(_LABEL, match.group(2))),
            )
            line = read.count("\n", 0, match.start()) + 1
            first = self.declared.setdefault((module, kind, labels), (path, line))
            if first != (path, line):
                where = f"{self.shown(first[0])}:{first[1]}"
                written = " ".join(f'"{label}"' for label in labels.split(" "))
                raise self.fail(
                    path,
                    f"{kind} {written} is declared twice in one module (first at {where}): "
                    "Terraform refuses the module",
                    line,
                )

    def call(
        self,
        path: str,
        line: int | None,
        directory: str,
        source: str,
        chain: tuple[str, ...],
        instances: int,
    ) -> None:
        """A module block's local `source` (others are not fetched: tfparse runs offline)."""
        if not source.startswith(("./", "../")) and source not in (".", ".."):
            return
        target = os.path.normpath(os.path.join(directory, source))
        real = os.path.realpath(target)
        if not _inside(real, self.boundary):
            raise self.fail(path, f"module source {source!r} is outside {self.boundary}", line)
        if real in chain:
            message = f"module source {source!r} calls a module that calls this one"
            raise self.fail(path, message, line)
        if os.path.isdir(target):
            self.module(target, chain, instances)

    def manifest(self, directory: str) -> None:
        """The module directories `terraform init` noted, which tfparse reads."""
        path = os.path.join(directory, ".terraform", "modules", "modules.json")
        if not os.path.lexists(path):
            return
        try:
            entries = json.loads(self.read(path)).get("Modules") or []
        except (ValueError, AttributeError):
            raise self.fail(path, "not a Terraform module manifest") from None
        for entry in entries if isinstance(entries, list) else ():
            found = entry.get("Dir") if isinstance(entry, dict) else None
            if isinstance(found, str) and found not in ("", "."):
                target = os.path.realpath(os.path.join(directory, found))
                if not _inside(target, self.boundary):
                    raise self.fail(path, f"module directory {found!r} is outside the tree")
                self.installed(os.path.join(directory, found))

    def installed(self, directory: str) -> None:
        """Note the files tfparse reads in a module directory `terraform init` installed."""
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        for name in names:
            path = os.path.join(directory, name)
            if name.endswith(_READ_SUFFIXES) and os.path.isfile(path):
                self.note_file(path)

    def read(self, path: str) -> str:
        """The text of a file tfparse will read: a regular file inside the tree."""
        self.regular(path)
        try:
            with open(path, "rb") as stream:
                data = stream.read(MAX_TF_BYTES + 1)
        except OSError as exc:
            raise self.fail(path, f"cannot read file: {exc.strerror}") from None
        if len(data) > MAX_TF_BYTES:
            raise self.fail(path, f"larger than {MAX_TF_BYTES >> 20} MiB, which gpulint refuses")
        self.noted(path, data)
        return data.decode("utf-8", errors="replace")

    def noted(self, path: str, data: bytes | None) -> None:
        """Note a file tfparse reads (None: one it finds missing)."""
        if self.files is not None:
            self.files.append((path, data))

    def unknowable(self) -> None:
        """What tfparse reads is known only once it evaluates the module."""
        self.files = None

    def note_file(self, path: str) -> None:
        """Note a file a function reads whole (`file`, `filebase64`, ...): no bound on its size
        here, where tfparse reads it; one that cannot be read leaves the files unknown."""
        if self.files is None:
            return
        try:
            with open(path, "rb") as stream:
                data = stream.read(MAX_TF_BYTES + 1)
        except OSError:
            self.unknowable()
            return
        if len(data) > MAX_TF_BYTES:
            self.unknowable()
        else:
            self.noted(path, data)

    def regular(self, path: str) -> None:
        """Raise unless `path` is (or links to) a regular file inside the tree."""
        real = os.path.realpath(path)
        if not _inside(real, self.boundary):
            raise self.fail(path, f"is a symlink to {real}, outside {self.boundary}")
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise self.fail(path, f"cannot read file: {exc.strerror}") from None
        if not stat.S_ISREG(mode):
            raise self.fail(path, "not a regular file (a device, FIFO or socket is not read)")

    def scan(self, path: str, text: str, directory: str, lines: bool = True) -> None:
        """Check each file-reading call of a file (or template) and each `count` literal;
        messages give the line of each when `lines`."""
        if path in self.scanned:
            return
        self.scanned.add(path)
        for match in _CALL.finditer(text):
            line = text.count("\n", 0, match.start()) + 1 if lines else None
            name = match.group(1)
            literal = _LITERAL_PATH.match(text, match.end())
            if literal is None:
                if self.bounded:
                    self.unknowable()
                    continue
                raise self.fail(
                    path,
                    f"`{name}(...)` reads a path gpulint cannot check before evaluating it; "
                    f'write it as a string such as "${{path.module}}/values.yaml"',
                    line,
                )
            prefix = literal.group(1)
            bases = {self.root_module if prefix == "root" else directory}
            if prefix is None:  # Terraform reads it from the root module, tfparse from here
                bases.add(self.root_module)
            targets = self.targets(path, line, bases, literal.group(2))
            if name == "fileset":
                pattern = _SECOND_LITERAL.match(text, literal.end())
                if pattern is None or ".." in pattern.group(1).split("/"):
                    raise self.fail(path, "`fileset` takes a literal pattern inside it", line)
                self.unknowable()  # the files its pattern matches
                continue
            for target in sorted(targets):
                if name == "fileexists":
                    self.noted(target, b"" if os.path.lexists(target) else None)
                elif os.path.lexists(target):
                    self.regular(target)
                    if name == "templatefile":  # a template may call file() itself
                        self.scan(target, self.read(target), directory)
                    else:
                        self.note_file(target)
                else:
                    self.noted(target, None)
        for match in _COUNT.finditer(text):
            if int(match.group(1)) > MAX_COUNT:
                line = text.count("\n", 0, match.start()) + 1 if lines else None
                raise self.fail(path, f"count {match.group(1)} is above {MAX_COUNT}", line)

    def targets(self, path: str, line: int | None, bases: set[str], written: str) -> set[str]:
        """The files a literal path may name from each of `bases`: each inside the tree."""
        found = {os.path.normpath(os.path.join(base, written)) for base in bases}
        for candidate in found:
            if not _inside(os.path.realpath(candidate), self.boundary):
                raise self.fail(path, f"reads {written!r}, outside {self.boundary}", line)
        return found


def _json_strings(text: str) -> tuple[str, list[tuple[str, int | None]]]:
    """Every key and string value of a `.tf.json` document, decoded, one per line, and the
    `source` of each of its module blocks; the raw text and none when it is not JSON (tfparse
    then reports why)."""
    found: list[str] = []

    def keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.extend(key for key, _ in pairs)
        return dict(pairs)

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    try:
        document = json.loads(text, object_pairs_hook=keys)
    except (ValueError, RecursionError):
        return text, []
    walk(document)
    modules = document.get("module") if isinstance(document, dict) else None
    blocks = [modules] if isinstance(modules, dict) else modules
    sources: list[tuple[str, int | None]] = []
    for block in blocks if isinstance(blocks, list) else ():
        for body in block.values() if isinstance(block, dict) else ():
            for item in body if isinstance(body, list) else [body]:
                if isinstance(item, dict) and isinstance(item.get("source"), str):
                    sources.append((item["source"], None))
    return "\n".join(found), sources


def _module_sources(text: str) -> Iterator[tuple[str, int]]:
    """(source, line) of each module block: the first `source =` after its header."""
    for header in _MODULE.finditer(text):
        source = _SOURCE.search(text, header.end())
        if source is not None:
            yield source.group(1), text.count("\n", 0, source.start()) + 1


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


# Run by the child: only tfparse is imported, and what it prints is the module's JSON. A
# syntax error in a called module stops nothing when the root module is read: each module is
# read on its own first. The root module's variable files are the ones Terraform reads itself,
# in its order (terraform.tfvars, terraform.tfvars.json, then *.auto.tfvars and
# *.auto.tfvars.json by name); tfparse reads none unless it is given them.
_CHILD = """
import os, sys, tfparse
root = sys.argv[1]
for directory in (*sys.argv[2:], root):
    names = sorted(os.listdir(directory)) if directory == root else []
    names = [n for n in names if os.path.isfile(os.path.join(directory, n))]
    found = [n for n in ("terraform.tfvars", "terraform.tfvars.json") if n in names]
    found += [n for n in names if n.endswith((".auto.tfvars", ".auto.tfvars.json"))]
    try:
        result = tfparse.load_from_path(
            directory, stop_on_hcl_error=True, vars_paths=found or None
        )
    except tfparse.ParseError as exc:
        sys.stderr.write(directory + "\\n" + str(exc))
        sys.exit(3)
import json
sys.stdout.write(json.dumps(result))
"""


def _limits() -> None:  # pragma: no cover - runs in the child between fork and exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    seconds = int(TIME_LIMIT) + 1  # whole seconds; the wall-clock timeout is the exact bound
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))


def evaluate(
    directory: str,
    path: str,
    shown: Any,
    modules: list[str],
    restrict: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The blocks tfparse evaluates in module `directory` (given as `path`), in a child
    process with bounded memory and time, no environment to leak and, with `restrict` (from
    gpulint.profile.sandbox.read_only_to), no read outside the tree; a parse error in it or in
    one of the `modules` it calls is a GpulintError naming the file and line."""

    def prepare() -> None:  # pragma: no cover - runs in the child between fork and exec
        _limits()
        if restrict is not None:
            restrict()

    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", _CHILD, directory, *modules],
            capture_output=True,
            timeout=TIME_LIMIT,
            env={},
            preexec_fn=prepare if os.name == "posix" else None,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GpulintError(
            f"{path}: Terraform took more than {TIME_LIMIT} s to evaluate (a `count` or "
            "`for_each` too large?)"
        ) from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise GpulintError(f"{path}: Terraform could not be evaluated: {exc}") from None
    errors = done.stderr.decode("utf-8", errors="replace")
    if done.returncode == 3:
        failed, _, errors = errors.partition("\n")
        raise GpulintError(_parse_error(failed, errors, shown))
    if done.returncode != 0:
        if "out of memory" in errors or "MemoryError" in errors or done.returncode < 0:
            raise GpulintError(
                f"{path}: Terraform needed more than {MEMORY_LIMIT >> 30} GiB or "
                f"{TIME_LIMIT} s to evaluate (modules that call themselves, or a `for_each` "
                "too large?)"
            )
        last = errors.strip().splitlines()[-1:] or ["no output"]
        raise GpulintError(f"{path}: Terraform could not be evaluated: {last[0]}")
    try:
        result = json.loads(done.stdout)
    except ValueError:
        raise GpulintError(f"{path}: Terraform could not be evaluated") from None
    return result if isinstance(result, dict) else {}


_DIAGNOSTIC = re.compile(r"(?:unable to create TerraformConverter: )?([^:\n]+):(\d+),[\d-]+: (.*)")


def _parse_error(directory: str, errors: str, shown: Any) -> str:
    """`file:line: Terraform syntax error: summary` from tfparse's first diagnostic."""
    found = _DIAGNOSTIC.search(errors)
    if found is None:
        return f"{shown(directory)}: Terraform could not be parsed: {errors.strip()[:300]}"
    name, line, detail = found.groups()
    summary = detail.split("; ")[0].split(", and ")[0]
    where = shown(os.path.join(directory, name))
    return f"{where}:{line}: Terraform could not be parsed: {summary}"
