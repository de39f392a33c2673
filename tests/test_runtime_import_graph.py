"""runtime/ imports form no cycle: every import of one runtime module by another counts, at module
level, under `if TYPE_CHECKING:`, inside a function body and as an `importlib.import_module("…")`
string (tests/helpers/import_graph.py): a type-only or deferred loop is still a loop a reader must
hold in their head."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx

import skillc.runtime
from helpers.import_graph import describe_cycles
from helpers.import_graph import import_graph as package_graph
from helpers.import_graph import modules

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
    assert graph.has_edge(P + "call.chain", P + "call.evidence")
    assert graph.has_edge(P + "loop.node", P + "seam.seams")  # a TYPE_CHECKING import
    assert graph.has_edge(P + "session", P + "graph.tasks")
    hows = {imp.how for _, _, data in graph.edges(data=True) for imp in data["imports"]}
    assert hows == {"module", "type", "function", "string"}


def test_working_modules_do_not_import_the_session() -> None:
    graph = import_graph()
    for mod in ("loop.builtins", "call.chain", "loop.completion", "call.context", "call.evidence", "call.lifecycle",
                "loop.node", "graph.planner", "loop.prompting", "graph.tasks"):
        for above in ("session", "turn", "turn_env"):  # the face, a turn's dispatch, the env they are given
            assert not graph.has_edge(f"{PACKAGE}.{mod}", f"{PACKAGE}.{above}"), (mod, above)


# The rooms of docs/ARCHITECTURE.md are folders: runtime/'s top level holds the public face (and the
# session's own parts) and the two faces generated code imports; every other module is in its room.
TOP_LEVEL = {"__init__", "opener", "session", "turn", "turn_env", "durable", "support", "cel"}


def _room(path: Path) -> str:
    """The folder of runtime/ a module lives in ("runtime" for the top level)."""
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else "runtime"


def room_graph() -> nx.DiGraph:
    """room -> room it imports (a folder of runtime/, or its top level), each edge with the module
    imports that make it."""
    room = {mod: _room(path) for mod, path in modules(ROOT, PACKAGE).items()}
    rooms = nx.DiGraph()
    for a, b in import_graph().edges:
        if room[a] != room[b]:
            if not rooms.has_edge(room[a], room[b]):
                rooms.add_edge(room[a], room[b], made_by=[])
            rooms.edges[room[a], room[b]]["made_by"].append(f"{a.removeprefix(P)} -> {b.removeprefix(P)}")
    return rooms


def test_the_top_level_holds_only_the_faces() -> None:
    top = {p.stem for p in ROOT.glob("*.py")}
    assert top == TOP_LEVEL, f"put {sorted(top - TOP_LEVEL)} in its room's folder (docs/ARCHITECTURE.md)"


def test_rooms_import_one_way() -> None:
    # a folder never imports a folder that imports it back, nor the top level that imports them all
    rooms = room_graph()
    assert rooms.has_edge("graph", "loop") and rooms.has_edge("call", "seam")  # not vacuous
    cycles = list(nx.simple_cycles(rooms))
    made = {cycle: [", ".join(rooms.edges[a, b]["made_by"][:3]) for a, b in zip(cycle, cycle[1:] + cycle[:1])]
            for cycle in map(tuple, cycles)}
    assert not cycles, f"rooms of runtime/ importing each other back: {made}"


def test_every_folder_says_what_it_is_for() -> None:
    for init in sorted(ROOT.glob("*/__init__.py")):
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), init.relative_to(ROOT)


ARCHITECTURE = ROOT.parents[0] / "docs" / "ARCHITECTURE.md"


def _drawn() -> tuple[list[str], dict[str, set[str]]]:
    """docs/ARCHITECTURE.md's room order (the drawing under "Rooms of the runtime") and its table of
    every import between rooms."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Rooms of the runtime", 1)[1].split("\n## ", 1)[0]
    drawing = section.split("```", 2)[1]
    order = [word.rstrip("/") for word in re.findall(r"[a-z_]+/", drawing)]
    table: dict[str, set[str]] = {}
    for row in re.findall(r"^\| `([a-z_]+)/` \| (.*) \|$", section, re.M):
        table[row[0]] = set(re.findall(r"`([a-z_]+)/`", row[1]))
    return order, table


def test_the_architecture_draws_every_import_between_rooms_and_no_other() -> None:
    order, table = _drawn()
    rooms = room_graph()
    assert set(order) == set(rooms.nodes) == set(table), (order, sorted(rooms.nodes), sorted(table))
    real = {(a, b) for a, b in rooms.edges}
    drawn = {(a, b) for a, outs in table.items() for b in outs}
    assert not drawn - real, f"drawn in docs/ARCHITECTURE.md but imported by nothing: {sorted(drawn - real)}"
    missing = {edge: rooms.edges[edge]["made_by"][:3] for edge in real - drawn}
    assert not missing, f"imports docs/ARCHITECTURE.md's table of rooms does not draw: {missing}"
    backwards = [(a, b) for a, b in real if order.index(b) <= order.index(a)]
    assert not backwards, f"rooms importing one before them in the drawn order: {backwards}"
