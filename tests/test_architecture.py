"""The package's shape (ARCHITECTURE.md, "Layers"): imports flow one way, with no cycle, and no
module reads another's private names. Both are read from the source, so a change that breaks
them fails here, naming the modules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "pontoon"

# Names with a leading underscore that are public API of the type they are read on.
PUBLIC_UNDERSCORED = {
    "_asdict",  # named tuples
    "_replace",
    "_fields",
    "_make",
    "_mapping",  # sqlalchemy.engine.Row
    "_upgrade_revs",  # alembic's ScriptDirectory, as its docs run migrations on a connection
}


def modules() -> dict[str, Path]:
    """The package's modules: its Python files, and its compiled ones by their sources
    (Cython: they import nothing of the package)."""
    out = {}
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")]):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module of the package that an import of ``name`` runs."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every module of the package that ``module`` imports, anywhere in its source (at the
    top, inside functions, or only for type checking: each is a dependency)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if path.suffix != ".py":
        return
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            # a submodule by its name, or a name the module ``base`` defines
            names = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for name in names:
            target = _resolve(name, known)
            if target is not None and target != module:
                yield target


def graph() -> dict[str, set[str]]:
    known = modules()
    return {m: set(imports(m, p, known)) for m, p in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_package_has_no_import_cycle() -> None:
    edges = graph()
    assert "pontoon.round" in edges["pontoon.replay"]  # the graph is read at all
    assert cycles(edges) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = graph()
    edges["pontoon.legality"] = {*edges["pontoon.legality"], "pontoon.round"}
    found = cycles(edges)
    assert any({"pontoon.round", "pontoon.legality"} <= set(c) for c in found), found


def test_data_flows_rules_shoe_round_events_store_screen() -> None:
    """Data flows one way: rules -> shoe -> round -> events -> settlement -> store / screen
    (ARCHITECTURE.md). The core never imports a front end, the store, the simulator or the
    analysis; the store never imports a screen (the server or the terminal)."""
    edges = graph()
    core = {
        "pontoon.cards",
        "pontoon.rules",
        "pontoon.shoe",
        "pontoon.hand",
        "pontoon.vocab",
        "pontoon.legality",
        "pontoon.layout",
        "pontoon.dealer",
        "pontoon.round",
        "pontoon.events",
        "pontoon.settlement",
        "pontoon.irregularities",
        "pontoon.replay",
    }
    edges_out = {
        (m, t)
        for m in core
        for t in edges[m]
        if t.startswith(("pontoon.store", "pontoon.server", "pontoon.sim", "pontoon.analysis"))
        or t in ("pontoon.terminal", "pontoon.cli", "pontoon.scenario")
    }
    assert edges_out == set()
    store = {m for m in edges if m.startswith("pontoon.store")}
    assert {
        (m, t)
        for m in store
        for t in edges[m]
        if t.startswith("pontoon.server") or t == "pontoon.terminal"
    } == set()


def _own_private_names(tree: ast.Module) -> set[str]:
    """The private names a module defines: functions, classes, attributes it assigns."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return {n for n in out if n.startswith("_")}


def private_reads(path: Path) -> list[str]:
    """Where ``path`` reads a private name that another module defines: ``x._name`` (on
    anything but ``self``/``cls``) that this module does not define itself, or
    ``from m import _name``."""
    out = []
    tree = ast.parse(path.read_text("utf-8"))
    own = _own_private_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
            base = node.value
            mine = isinstance(base, ast.Name) and base.id in ("self", "cls")
            if (
                name.startswith("_")
                and not name.startswith("__")
                and name not in PUBLIC_UNDERSCORED
                and not mine
                and name not in own
            ):
                out.append(f"{path.name}:{node.lineno} .{name}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pontoon"):
            out += [
                f"{path.name}:{node.lineno} import {a.name}"
                for a in node.names
                if a.name.startswith("_")
            ]
    return out


def test_no_module_reads_another_modules_private_names() -> None:
    sources = [path for path in modules().values() if path.suffix == ".py"]
    found = [hit for path in sources for hit in private_reads(path)]
    assert found == []
