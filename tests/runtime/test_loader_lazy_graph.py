"""Loading a compiled studio does not import networkx (~100+ ms of a cold start): a turn reads only
the agents' profiles, skills and delegation catalogs; the networkx graph is built on first use."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loading_a_studio_leaves_networkx_unimported_until_a_graph_is_asked_for() -> None:
    script = f"""
import sys
from skillc.runtime.compiled.loader import load_compiled
studio = load_compiled({str(ROOT / 'generated')!r})
assert studio.agents, "the example studio has agents"
assert "networkx" not in sys.modules, "loading imported networkx"
for t in studio.agents.values():
    g = t.graph
    assert tuple(sorted(g.nodes)) == t.skills
    assert list(g.graph.get("delegation_catalog", ())) == list(t.delegation_catalog)
    assert t.graph is g  # built once
assert "networkx" in sys.modules
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
