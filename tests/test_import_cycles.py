"""No import cycles in tunelog/: layers import one way (ARCHITECTURE.md).

The graph holds every import a module's source names, wherever it is written: at the top, inside
a function (deferred for start-up) or under TYPE_CHECKING. A cycle through any of them means two
modules each need the other, whichever of them runs first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tunelog"

# Cycles another step of issue 28 removes; each entry is one cycle's modules. The test fails when
# one is gone too, so that its entry is removed with it.
KNOWN_CYCLES: set[frozenset[str]] = set()


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of the package."""
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_modules(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` imports anywhere in its source."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = name.split(".") if is_package else name.split(".")[:-1]
                parent = parent[: len(parent) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in known:  # `from tunelog import api`: the module itself
                    found.add(submodule)
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    known = module_files(package)
    return {name: imported_modules(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_tunelog_has_no_import_cycle_but_the_known_ones() -> None:
    found = cycles(import_graph(PACKAGE))
    assert {tuple(sorted(c)) for c in found - KNOWN_CYCLES} == set()
    assert {tuple(sorted(c)) for c in KNOWN_CYCLES - found} == set(), "remove it from KNOWN_CYCLES"


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": set(), "b": {"a"}}, set()),
        ({"a": {"b"}, "b": {"a"}}, {frozenset({"a", "b"})}),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, {frozenset({"a", "b", "c"})}),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, {frozenset("ab"), frozenset("cd")}),
    ],
)
def test_cycles_finds_every_cycle_of_a_graph(
    graph: dict[str, set[str]], expected: set[frozenset[str]]
) -> None:
    assert cycles(graph) == expected


def test_the_graph_holds_deferred_and_type_only_imports(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import b\n")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.sub import b\n"
        "def f() -> None:\n    import pkg.c\n"
    )
    (package / "sub" / "b.py").write_text("from ..a import f\n")
    (package / "c.py").write_text("from pkg import a\n")
    assert import_graph(package) == {
        "pkg": set(),
        "pkg.a": {"pkg.sub.b", "pkg.c"},
        "pkg.c": {"pkg.a"},
        "pkg.sub": {"pkg.sub.b"},
        "pkg.sub.b": {"pkg.a"},
    }


# -- layers: imports go one way (ARCHITECTURE.md) -------------------------------------------------

# A module's layer, by its package; the rest of tunelog is the pure layer (rules, parsers).
LAYERS = {"tunelog.store": 1, "tunelog.api": 2, "tunelog.cli": 3}
# The package's facade (`tunelog.layers(store)`, `python -m tunelog`, the console script)
# stands above them all.
FACADES = {"tunelog", "tunelog.__main__", "tunelog.console"}
# Third-party modules only one layer may import: SQLite is the store's, the terminal the CLI's.
ONLY_IN = {"sqlite3": 1, "sqlite_utils": 1, "typer": 3, "click": 3, "tabulate": 3, "rich": 3}


def layer_of(module: str) -> int:
    """0 pure, 1 store, 2 api, 3 cli; 4 for the package's facade."""
    if module in FACADES:
        return 4
    return next((n for p, n in LAYERS.items() if module == p or module.startswith(p + ".")), 0)


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of the modules a source file imports from outside tunelog."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found - {"tunelog"}


def test_every_import_goes_down_the_layers() -> None:
    """pure -> store -> api -> cli: no module imports one of a layer above its own."""
    upward = {
        (module, imported)
        for module, imports in import_graph(PACKAGE).items()
        for imported in imports
        if layer_of(imported) > layer_of(module) and module not in FACADES
    }
    upward.discard(("tunelog.cli.app", "tunelog"))  # the CLI reads the facade's version
    assert upward == set()


def test_sqlite_is_imported_by_the_store_and_the_terminal_by_the_cli_only() -> None:
    misplaced = {
        (module, name)
        for module, path in module_files(PACKAGE).items()
        for name in third_party_imports(path)
        if name in ONLY_IN and layer_of(module) not in (ONLY_IN[name], 4)
    }
    assert misplaced == set()


@pytest.mark.parametrize(
    ("module", "layer"),
    [
        ("tunelog.rules.slots", 0),
        ("tunelog.store", 1),
        ("tunelog.store.importer", 1),
        ("tunelog.storefront", 0),
        ("tunelog.api.listing", 2),
        ("tunelog.cli", 3),
        ("tunelog", 4),
    ],
)
def test_layer_of_reads_the_package(module: str, layer: int) -> None:
    assert layer_of(module) == layer
