"""The planner's dependency order (no graph library at start-up) equals networkx's
lexicographical topological sort over random plans, cycles included."""
from __future__ import annotations

import random

import networkx as nx

from skillc.runtime.graph.planner import PlannedNode, _topological_order


def _reference(nodes: list[PlannedNode]) -> dict[str, int] | None:
    graph = nx.DiGraph()
    graph.add_nodes_from(n.node for n in nodes)
    for n in nodes:
        for d in n.deps:
            graph.add_edge(d, n.node)
    if not nx.is_directed_acyclic_graph(graph):
        return None
    ids = [n.node for n in nodes]
    return {nid: i for i, nid in enumerate(nx.lexicographical_topological_sort(graph, key=ids.index))}


def test_order_matches_networkx_on_random_plans() -> None:
    rng = random.Random(20261201)
    cycles = 0
    for _ in range(2000):
        size = rng.randint(1, 7)
        ids = [f"n{i}" for i in rng.sample(range(20), size)]
        nodes = [PlannedNode(nid, "s", None, [rng.choice(ids) for _ in range(rng.randint(0, 3))]) for nid in ids]
        expected = _reference(nodes)
        cycles += expected is None
        assert _topological_order(nodes) == expected, [(n.node, n.deps) for n in nodes]
    assert 0 < cycles < 2000  # both kinds of plan were tried
