"""The import structure: rules import only downward, and no module imports itself in a circle.

Read from the sources with `ast`, so it covers imports inside functions (taken lazily, to keep
start-up fast) as well as those at the top; imports under `if TYPE_CHECKING:` never run and
are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "gpulint"
#: The engine's own modules under gpulint/rules: rule modules may import these.
RULE_ENGINE = {"gpulint.rules", "gpulint.rules.base"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, modules: set[str], package: str) -> set[str]:
    """The gpulint modules `tree`, a module of `package`, imports when it runs (not those
    under TYPE_CHECKING); relative imports (`from . import quota`) are read from `package`."""
    found: set[str] = set()
    # Imports are statements: only the statements of bodies (of functions, classes, `if`,
    # `try`, `with`, loops, `except` and `case` clauses) are walked, not their expressions.
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gpulint"))
        elif isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith("gpulint")
        ):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            for alias in node.names:
                # `from gpulint import constraints` imports a module, not a name.
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in modules else base)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, field, ()))
    return found


def import_graph() -> dict[str, set[str]]:
    """Every gpulint module and the gpulint modules it imports."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {
        name: _imports(ast.parse(path.read_text(encoding="utf-8")), modules, _package(name, path))
        - {name}
        for name, path in paths.items()
    }


def _package(name: str, path: Path) -> str:
    """The package a relative import in module `name` (read from `path`) starts from."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


GRAPH = import_graph()


def _rule_modules() -> list[str]:
    return sorted(m for m in GRAPH if m.startswith("gpulint.rules.") and m not in RULE_ENGINE)


def test_the_graph_sees_the_rule_modules() -> None:
    assert {"gpulint.rules.placement", "gpulint.rules.quota"} <= set(_rule_modules())
    assert "gpulint.model" in GRAPH["gpulint.rules.placement"]


def test_relative_imports_name_the_modules_they_import() -> None:
    modules = set(GRAPH)
    source = "from . import quota\nfrom .placement import gpu_requests\nfrom .. import gpus\n"
    assert _imports(ast.parse(source), modules, "gpulint.rules") == {
        "gpulint.rules.quota",
        "gpulint.rules.placement",
        "gpulint.gpus",
    }
    assert _imports(ast.parse("from .rules import base\n"), modules, "gpulint") == {
        "gpulint.rules.base"
    }


#: The layers of CONTRIBUTING.md, bottom up: a module (or package, with its submodules) of one
#: imports none of a higher one. Every module of gpulint/ is placed (the package itself, which
#: holds only the version, matches by its own name alone).
LAYERS = (
    # Foundations: no knowledge of Kubernetes.
    (
        "gpulint",
        "gpulint.views",
        "gpulint.errors",
        "gpulint.cachedir",
        "gpulint.data",
        "gpulint.atomic",
        "gpulint.filetypes",
    ),
    # Parsing and values.
    (
        "gpulint.yamltree",
        "gpulint.quantity",
        "gpulint.fields",
        "gpulint.accelerators",
        "gpulint.images",
        "gpulint.files",
        "gpulint.schema",
        "gpulint.ignores",
        "gpulint.edits",
        "gpulint.gitignore",
    ),
    # Typed views, and the inputs they are read from.
    (
        "gpulint.model",
        "gpulint.placeholders",
        "gpulint.constraints",
        "gpulint.shapes",
        "gpulint.operators",
        "gpulint.requestscan",
        "gpulint.workloads",
        "gpulint.loader",
        "gpulint.render",
        "gpulint.findings",
    ),
    # Domain logic shared by rules, diagnose and the front ends; the cluster and the config.
    (
        "gpulint.gpus",
        "gpulint.replicas",
        "gpulint.scheduling",
        "gpulint.device_plugins",
        "gpulint.admission",
        "gpulint.cuda_containers",
        "gpulint.cuda",
        "gpulint.validation",
        "gpulint.profile",
        "gpulint.dra",
        "gpulint.kueue",
        "gpulint.pods",
        "gpulint.live",
        "gpulint.clusters",
        "gpulint.config",
    ),
    # Rules.
    ("gpulint.rules", "gpulint._registry"),
    # The engine.
    ("gpulint.engine", "gpulint.suppressions", "gpulint.spool"),
    # Front ends.
    (
        "gpulint.catalogue",
        "gpulint.api",
        "gpulint.diagnose",
        "gpulint.output",
        "gpulint.fixing",
        "gpulint.smoke",
        "gpulint.cli_io",
        "gpulint.cli_options",
        "gpulint.cli",
        "gpulint.cli_tools",
        "gpulint.__main__",
    ),
)
ROOT = "gpulint"
#: Upward imports known and not yet undone, each with its reason: the test fails on any other,
#: and on one of these once it is gone (remove it here then).
KNOWN_UPWARD = {
    # Rendered charts are cached next to the profile cache, whose place profile.cache knows;
    # imported only when a chart is rendered with the cache on.
    "gpulint.render.options": ["gpulint.profile.cache"],
}


def _layer(module: str) -> int | None:
    for number, names in enumerate(LAYERS):
        if any(_is_under(module, n) for n in names):
            return number
    return None


def _is_under(module: str, name: str) -> bool:
    """Whether `module` is `name` or, unless `name` is the package itself, one of its
    submodules."""
    return module == name or (name != ROOT and module.startswith(f"{name}."))


def test_every_module_is_placed_in_a_layer() -> None:
    assert sorted(m for m in GRAPH if _layer(m) is None) == []


def test_the_package_itself_places_only_itself() -> None:
    assert _layer("gpulint") == 0
    assert _layer("gpulint.newmodule") is None


def _upward(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each placed module's imports of modules placed in a higher layer."""
    found = {}
    for module, imported in graph.items():
        own = _layer(module)
        if own is None:
            continue
        up = sorted(i for i in imported if (layer := _layer(i)) is not None and layer > own)
        if up:
            found[module] = up
    return found


def test_the_layer_check_finds_an_upward_import() -> None:
    graph = {"gpulint.images": {"gpulint.replicas", "gpulint.yamltree"}, "gpulint.cli": set()}
    assert _upward(graph) == {"gpulint.images": ["gpulint.replicas"]}


def test_modules_import_only_downward() -> None:
    assert _upward(GRAPH) == KNOWN_UPWARD


def test_the_engine_never_imports_the_library_entry_point() -> None:
    # api resolves options into the engine's run record; the engine knows nothing of them.
    engine = {m: GRAPH[m] for m in GRAPH if _is_under(m, "gpulint.engine")}
    assert {m: sorted(i & {"gpulint.api"}) for m, i in engine.items() if "gpulint.api" in i} == {}
    assert len(engine) >= 8


def test_no_rule_module_imports_another() -> None:
    rules = set(_rule_modules())
    found = {m: sorted(GRAPH[m] & rules) for m in rules if GRAPH[m] & rules}
    assert found == {}


def test_nothing_below_the_engine_imports_a_rule_module() -> None:
    # Shared logic lives below the rules; only the engine reaches rule modules (by the
    # records' `check:` names, never by import).
    rules = set(_rule_modules())
    found = {m: sorted(GRAPH[m] & rules) for m in GRAPH if m not in rules and GRAPH[m] & rules}
    assert found == {}


def test_diagnose_imports_no_rule_module() -> None:
    found = {
        m: sorted(i for i in GRAPH[m] if i.startswith("gpulint.rules"))
        for m in GRAPH
        if m.startswith("gpulint.diagnose")
    }
    assert {m: i for m, i in found.items() if i} == {}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == 1:
                return [*path[path.index(imported) :], imported]
            if imported not in state and (found := visit(imported)):
                return found
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    # A package imports its submodules' names and they import the package's parent: only
    # cycles between modules count, so package __init__ edges to their own children are left
    # out.
    graph = {m: {i for i in imported if not i.startswith(f"{m}.")} for m, imported in GRAPH.items()}
    assert _cycle(graph) is None
