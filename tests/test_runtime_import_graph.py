"""runtime/ imports form no cycle: every module-level import of one runtime module by another
counts, those under `if TYPE_CHECKING:` too (a type-only loop is still a loop a reader must hold in
their head). Imports inside a function body are deliberate deferrals and are not counted."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import skillc.runtime

ROOT = Path(skillc.runtime.__file__).parent
PACKAGE = "skillc.runtime"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join([PACKAGE, *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The runtime module an imported name lives in (a package's submodule when it is one)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """Statements run at import: the module body and the bodies of its if/try blocks."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        stmt = todo.pop()
        out.append(stmt)
        if isinstance(stmt, ast.If):
            todo += stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            todo += stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body]
    return out


def import_graph() -> nx.DiGraph:
    """module -> module it imports, inside skillc.runtime."""
    known = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for mod, path in known.items():
        is_package = path.name == "__init__.py"
        for node in _module_level(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = mod.split(".") if is_package else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                # `from pkg import sub` names the submodule when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
            for target in targets:
                if not target.startswith(PACKAGE):
                    continue
                dest = _resolve(target, known)
                if dest == PACKAGE and target != PACKAGE:
                    continue  # a module being written right now, not the package's __init__
                if dest is not None and dest != mod:
                    graph.add_edge(mod, dest)
    return graph


def test_runtime_has_no_import_cycle() -> None:
    graph = import_graph()
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "import cycles in runtime/: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles[:5])


def test_graph_sees_imports() -> None:
    # the test would pass vacuously if it found no edges
    graph = import_graph()
    assert graph.has_edge("skillc.runtime.chain", "skillc.runtime.evidence")
    assert graph.has_edge("skillc.runtime.node", "skillc.runtime.seams")  # a TYPE_CHECKING import
    assert graph.has_edge("skillc.runtime.session", "skillc.runtime.tasks")


def test_working_modules_do_not_import_the_session() -> None:
    graph = import_graph()
    for mod in ("builtins", "chain", "completion", "context", "evidence", "lifecycle", "node", "planner",
                "prompting", "tasks"):
        assert not graph.has_edge(f"{PACKAGE}.{mod}", f"{PACKAGE}.session"), mod
