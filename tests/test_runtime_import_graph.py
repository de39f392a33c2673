"""runtime/ imports form no cycle: every import of one runtime module by another counts, at module
level, under `if TYPE_CHECKING:`, inside a function body and as an `importlib.import_module("…")`
string (tests/helpers/import_graph.py): a type-only or deferred loop is still a loop a reader must
hold in their head."""
from __future__ import annotations

from pathlib import Path

import networkx as nx

import skillc.runtime
from helpers.import_graph import describe_cycles
from helpers.import_graph import import_graph as package_graph

ROOT = Path(skillc.runtime.__file__).parent
PACKAGE = "skillc.runtime"
P = PACKAGE + "."

# Each entry must still be real, so the list shrinks when one is fixed (issue 29 item 4 emptied it).
KNOWN_CYCLE_EDGES: set[tuple[str, str]] = set()


def import_graph() -> nx.DiGraph:
    """module -> module it imports, inside skillc.runtime, by any kind of import."""
    return package_graph(ROOT, PACKAGE)


def test_runtime_has_no_import_cycle() -> None:
    graph = import_graph()
    for edge in KNOWN_CYCLE_EDGES:
        assert graph.has_edge(*edge), f"{edge} is no longer imported: drop it from KNOWN_CYCLE_EDGES"
    graph.remove_edges_from(KNOWN_CYCLE_EDGES)
    assert not list(nx.simple_cycles(graph)), "import cycles in runtime/:\n" + describe_cycles(graph)


def test_graph_sees_imports() -> None:
    # the test would pass vacuously if it found no edges
    graph = import_graph()
    assert graph.has_edge(P + "chain", P + "evidence")
    assert graph.has_edge(P + "node", P + "seams")  # a TYPE_CHECKING import
    assert graph.has_edge(P + "session", P + "tasks")
    hows = {imp.how for _, _, data in graph.edges(data=True) for imp in data["imports"]}
    assert hows == {"module", "type", "function", "string"}


def test_working_modules_do_not_import_the_session() -> None:
    graph = import_graph()
    for mod in ("builtins", "chain", "completion", "context", "evidence", "lifecycle", "node", "planner",
                "prompting", "tasks"):
        for above in ("session", "turn", "turn_env"):  # the face, a turn's dispatch, the env they are given
            assert not graph.has_edge(f"{PACKAGE}.{mod}", f"{PACKAGE}.{above}"), (mod, above)
