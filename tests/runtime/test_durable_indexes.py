"""runtime/seam/indexes.py answers exactly what a scan of every record answers (hypothesis), and the
intent prompt rendered once per studio version is the prompt rendered every time."""
from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime.call.context import _nodes, _same
from skillc.runtime.seam.indexes import Indexes, entity_index, evidence_index
from skillc.runtime.seam.state import Evidence, SessionState

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([1.0, 2.5, -0.0]),
                    st.sampled_from(["a", "b", "1", "True", ""]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["k", "id", "x"]), inner, max_size=3), max_leaves=6)
records = st.lists(st.tuples(st.sampled_from(["SUCCESS", "FAILED", "STARTED", "UNKNOWN"]),
                             st.sampled_from([True, False, None]), st.sampled_from(["n1", "n2"]),
                             st.sampled_from(["t1", "t2"]), st.sampled_from(["w", "r"]),
                             st.dictionaries(st.sampled_from(["a", "b"]), values, max_size=2)), max_size=12)


def _env(rows: list[tuple[Any, ...]]) -> SimpleNamespace:
    session = SessionState(id="s1", platform={})
    env = SimpleNamespace(session=session, evidence={}, indexes=Indexes())
    for i, (status, ok, node, task, tool, vals) in enumerate(rows, 1):
        env.evidence[f"e{i}"] = Evidence(id=f"e{i}", task=task, node=node, tool=tool, args={}, status=status,
                                         business_ok=ok, values=vals, seq=i)
    session.next_evidence = len(rows) + 1
    return env


@settings(max_examples=120, deadline=None)
@given(rows=records, probe=scalars, later=records)
def test_the_value_index_finds_what_a_scan_finds(rows: list[Any], probe: Any, later: list[Any]) -> None:
    env = _env(rows)
    for batch in (None, later):  # and again after more records arrive and earlier ones settle
        if batch is not None:
            for i, (status, ok, node, task, tool, vals) in enumerate(batch, len(env.evidence) + 1):
                env.evidence[f"e{i}"] = Evidence(id=f"e{i}", task=task, node=node, tool=tool, args={},
                                                 status=status, business_ok=ok, values=vals, seq=i)
            env.session.next_evidence = len(env.evidence) + 1
            for ev in env.evidence.values():
                if ev.status == "STARTED":
                    ev.status, ev.business_ok = "SUCCESS", True
        index = evidence_index(env)
        scan = {ev.id for ev in env.evidence.values() if ev.status == "SUCCESS"
                and any(_same(probe, n) for sub in ev.values.values() for n in _nodes(sub, False))}
        assert set(index.holding(probe)) == scan
        for task in ("t1", "t2"):
            for node in ("n1", "n2"):
                mine = [ev for ev in env.evidence.values() if ev.task == task and ev.node == node]
                assert [e.id for e in index.open_of(task, node)] == [
                    e.id for e in mine if e.status not in ("SUCCESS", "FAILED")]
                for tool in ("w", "r", None):
                    assert index.completed_in(task, node, tool) == any(
                        e.completed and (tool is None or e.tool == tool) for e in mine)


entities = st.lists(st.fixed_dictionaries({"type": st.sampled_from(["doc", "user"]), "id": scalars,
                                           "name": st.sampled_from(["A", "B"])}), max_size=8)


@settings(max_examples=120, deadline=None)
@given(first=entities, more=entities, probe=scalars)
def test_the_entity_index_finds_what_a_scan_finds(first: list[Any], more: list[Any], probe: Any) -> None:
    env = SimpleNamespace(session=SessionState(id="s1", platform={}, entities=list(first)), indexes=Indexes())
    for batch in ([], more):
        env.session.entities.extend(batch)
        index = entity_index(env)
        ents = env.session.entities
        assert index.has_id(probe) == any(_same(e["id"], probe) or str(e["id"]) == str(probe)
                                          and not isinstance(probe, bool) for e in ents)
        for kind in ("doc", "user"):
            newest = next((e for e in reversed(ents) if e["type"] == kind), None)
            assert index.latest(kind, None) is newest
            for e in ents:
                want = next(x for x in reversed(ents) if x["type"] == e["type"] and str(x["id"]) == str(e["id"]))
                assert index.latest(e["type"], str(e["id"])) is want


def test_the_intent_prompt_is_rendered_once_per_studio_version() -> None:
    from skillc.runtime.loop import prompting

    calls: list[int] = []

    def values(tag: str) -> Any:
        def make() -> dict[str, Any]:
            calls.append(1)
            return {"agent": SimpleNamespace(agent_name="Ed", agent_code="ed"),
                    "skills": [{"key": "k", "semantic_desc": tag, "name": "K"}]}
        return make

    module_a, module_b = object(), object()
    direct = prompting.render("intent.j2", message="hello {{ x }}", **values("first")())
    calls.clear()
    one = prompting.render_for_message("intent.j2", ("ed", ("k",)), (module_a,), "hello {{ x }}", values("first"))
    two = prompting.render_for_message("intent.j2", ("ed", ("k",)), (module_a,), "bye", values("first"))
    assert one == direct and "bye" in two and len(calls) == 1
    three = prompting.render_for_message("intent.j2", ("ed", ("k",)), (module_b,), "bye", values("second"))
    assert "second" in three and len(calls) == 2  # a reloaded skill (a new module object) renders again


def test_ids_numbered_but_not_held_are_not_looked_at_again() -> None:
    # A checked value's cost must not grow with ids the session numbered but does not hold
    # (bench/chain.py resets its evidence between iterations); held unsettled ones stay watched.
    env = _env([("SUCCESS", True, "n1", "t1", "r", {"a": 1})])
    evidence_index(env)
    env.session.next_evidence = 1002  # e2 … e1001 numbered, none held
    env.evidence["e1002"] = Evidence(id="e1002", task="t1", node="n1", tool="w", args={}, status="STARTED", seq=1002)
    env.session.next_evidence = 1003
    index = evidence_index(env)
    assert index.unsettled == {"e1002"}
    env.evidence["e1002"].status = "SUCCESS"
    assert evidence_index(env).unsettled == set() and evidence_index(env).completed_in("t1", "n1", "w")


def test_the_set_of_unsettled_ids_does_not_keep_the_size_it_once_had() -> None:
    # A Python set never shrinks: one that held 10,000 ids and had them discarded still costs
    # 10,000 slots to iterate, at every later sync (the 10 vs 10,000 records write of bench/turns.py).
    env = _env([("SUCCESS", True, "n1", "t1", "r", {"a": i}) for i in range(10_000)])
    index = evidence_index(env)
    assert index.unsettled == set()
    assert sys.getsizeof(index.unsettled) == sys.getsizeof(set())


class _CountingDict(dict):  # type: ignore[type-arg]
    lookups = 0

    def get(self, key: Any, default: Any = None) -> Any:
        type(self).lookups += 1
        return super().get(key, default)


def test_a_new_index_looks_at_the_records_held_not_every_number_since_e1() -> None:
    # A session at turn 1,000 holds its active task's few records, numbered in the tens of
    # thousands; its index (rebuilt for each task) must not walk every number since e1.
    env = _env([])
    env.evidence = _CountingDict()
    for i in (50_001, 50_002, 50_003):
        env.evidence[f"e{i}"] = Evidence(id=f"e{i}", task="t9", node="n1", tool="r", args={}, status="SUCCESS",
                                         business_ok=True, values={"a": i}, seq=i)
    env.session.next_evidence = 50_004
    index = evidence_index(env)
    assert _CountingDict.lookups <= 3 and index.holding(50_002) == ["e50002"]
