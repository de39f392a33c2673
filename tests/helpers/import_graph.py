"""Every import a package's modules make, read from their source: module-level ones, those under
`if TYPE_CHECKING:`, those inside a function body, and `importlib.import_module("…")` /
`__import__("…")` calls naming a module by a string (an f-string counts by its constant head).

A deferred or string import is still an edge a reader must hold in their head, so the cycle tests
(tests/test_runtime_import_graph.py, tests/test_compiler_import_graph.py) and the boundary test
count them all.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

_STRING_IMPORTERS = {"import_module", "__import__"}


@dataclass(frozen=True)
class Import:
    """One import in `source` (a dotted module name) of `target` (absolute, as written)."""

    source: str
    target: str
    names: tuple[str, ...]  # what a `from target import …` takes; () for `import target` and strings
    line: int
    how: str  # "module" | "type" (under TYPE_CHECKING) | "function" | "string"


def modules(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file of every module under `root` (the folder of `package`)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [p for p in path.relative_to(root).with_suffix("").parts if p != "__init__"]
        out[".".join([package, *parts])] = path
    return out


def _string_target(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in _STRING_IMPORTERS or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        head = str(arg.values[0].value)
        return head.rstrip(".") or None
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def file_imports(module: str, path: Path) -> list[Import]:
    """Every import `module` (at `path`) makes, each with where it is made."""
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def absolute(node: ast.ImportFrom) -> str:
        base = node.module or ""
        if not node.level:
            return base
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - node.level + 1]
        return ".".join(anchor + ([base] if base else []))

    def visit(node: ast.AST, how: str) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(module, a.name, (), node.lineno, how) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append(Import(module, absolute(node), tuple(a.name for a in node.names), node.lineno, how))
        elif isinstance(node, ast.Call) and (target := _string_target(node)) is not None:
            found.append(Import(module, target, (), node.lineno, "string"))
        inner = how
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = "function"
        if isinstance(node, ast.If) and _is_type_checking(node.test) and how == "module":
            for child in node.body:
                visit(child, "type")
            for child in node.orelse:
                visit(child, how)
            visit(node.test, how)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), "module")
    return found


def all_imports(root: Path, package: str) -> list[Import]:
    """Every import made by a module of `package`."""
    return [imp for mod, path in modules(root, package).items() for imp in file_imports(mod, path)]


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module an imported name lives in (a package's submodule when it is one)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def edges(imp: Import, known: dict[str, Path], package: str) -> list[str]:
    """The modules of `package` that `imp` makes its module depend on."""
    if not (imp.target == package or imp.target.startswith(package + ".")):
        return []
    # `from pkg import sub` names the submodule when there is one
    targets = [f"{imp.target}.{n}" if f"{imp.target}.{n}" in known else imp.target for n in imp.names] or [imp.target]
    out: list[str] = []
    for target in targets:
        dest = _resolve(target, known)
        if dest == package and target != package:
            continue  # a module being written right now, not the package's __init__
        if dest is not None and dest != imp.source and dest not in out:
            out.append(dest)
    return out


def import_graph(root: Path, package: str) -> nx.DiGraph:
    """module -> module it imports inside `package`, by any import of `all_imports`; each edge
    carries the imports that make it (`imports`)."""
    known = modules(root, package)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for imp in all_imports(root, package):
        for dest in edges(imp, known, package):
            if graph.has_edge(imp.source, dest):
                graph.edges[imp.source, dest]["imports"].append(imp)
            else:
                graph.add_edge(imp.source, dest, imports=[imp])
    return graph


def describe_cycles(graph: nx.DiGraph, limit: int = 8) -> str:
    """The first cycles of `graph`, each edge with how and where it is imported."""
    lines = []
    for cycle in list(nx.simple_cycles(graph))[:limit]:
        hops = []
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            imp = graph.edges[a, b]["imports"][0]
            hops.append(f"{a} -[{imp.how}:{imp.line}]-> {b}")
        lines.append(" ; ".join(hops))
    return "\n".join(lines)
