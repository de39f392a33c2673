"""compiler/ imports form no cycle and share no private name: every import counts (module level,
`if TYPE_CHECKING:`, inside a function, `importlib.import_module("…")`), as for the runtime
(tests/test_runtime_import_graph.py). Codegen's parts build on one leaf, `codegen_literals` (the
literal and expression emitters), and never on the entry point `codegen`."""
from __future__ import annotations

from pathlib import Path

import networkx as nx

import skillc.compiler
from helpers.import_graph import all_imports, describe_cycles, import_graph

ROOT = Path(skillc.compiler.__file__).parent
PACKAGE = "skillc.compiler"
P = PACKAGE + "."

CODEGEN_PARTS = ("codegen_views", "codegen_args", "codegen_names", "codegen_rules")


def _graph() -> nx.DiGraph:
    return import_graph(ROOT, PACKAGE)


def test_compiler_has_no_import_cycle() -> None:
    graph = _graph()
    assert not list(nx.simple_cycles(graph)), "import cycles in compiler/:\n" + describe_cycles(graph)


def test_no_private_name_is_imported_across_compiler_modules() -> None:
    found = {(imp.source, imp.target, name) for imp in all_imports(ROOT, PACKAGE)
             if imp.target.startswith(P) for name in imp.names
             if name.startswith("_") and not name.startswith("__")}
    assert found == set(), sorted(found)


def test_codegen_parts_build_on_the_literals_leaf_not_on_each_other() -> None:
    graph = _graph()
    leaf = P + "codegen_literals"
    assert {d for d in graph.successors(leaf)} <= {P + "ir"}, "codegen_literals is a leaf (the IR only)"
    for part in CODEGEN_PARTS:
        assert graph.has_edge(P + part, leaf), part
        assert not graph.has_edge(P + part, P + "codegen"), f"{part} imports the entry point codegen"
    # the one way down: views composes an argument's view and names; args uses names
    among = {(a, b) for a, b in graph.edges if a.startswith(P + "codegen") and b.startswith(P + "codegen")}
    assert among == {
        (P + "codegen", P + "codegen_literals"), (P + "codegen", P + "codegen_views"),
        (P + "codegen_views", P + "codegen_args"), (P + "codegen_views", P + "codegen_names"),
        (P + "codegen_views", P + "codegen_rules"), (P + "codegen_views", leaf),
        (P + "codegen_args", P + "codegen_names"), (P + "codegen_args", leaf),
        (P + "codegen_names", leaf), (P + "codegen_rules", leaf),
    }, sorted(among)


def test_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    # the tests above would pass vacuously if a deferred or string import were missed
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import g\n    return g\n")
    (pkg / "c.py").write_text("import importlib\ndef g():\n    return importlib.import_module('pkg.d')\n")
    (pkg / "d.py").write_text("import importlib\nM = importlib.import_module(f'pkg.a.{1}')\n")
    graph = import_graph(pkg, "pkg")
    assert [set(c) for c in nx.simple_cycles(graph)] == [{"pkg.a", "pkg.b", "pkg.c", "pkg.d"}]
    hows = {imp.how for _, _, data in graph.edges(data=True) for imp in data["imports"]}
    assert hows == {"type", "function", "string"}
    real = import_graph(ROOT, PACKAGE)
    assert real.has_edge(P + "build", P + "codegen")
