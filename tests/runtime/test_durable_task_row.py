"""Where a session's tasks are kept (store schema 7): its open active task rides in the session
row, so a unit that changed only that task writes one row; a task that ended, or that a new task
replaced while it was still open, gets a row of its own (runtime/durable.py, `Durability._write`)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from skillc.runtime.durable import Durability
from skillc.runtime.seam.state import Evidence, NodeState, SessionState, TaskState
from skillc.runtime.store import SQLiteStore


class Held:
    """A session in memory over a real store, without a runtime (durable.HeldSession)."""

    def __init__(self, store: Any) -> None:
        self.session = SessionState(id="s1", platform={})
        self.evidence: dict[str, Evidence] = {}
        self.task: TaskState | None = None
        self.dirty: dict[str, Evidence] = {}
        self.store = store
        self.trace = SimpleNamespace(flush=lambda: None)  # chains nothing
        self.acknowledges_delivery = False

    @property
    def id(self) -> str:
        return self.session.id

    def now(self) -> float:
        return 1.0


def _start(held: Held, tid: str) -> TaskState:
    task = TaskState(id=tid, session="s1", agent="a", message="hi")
    task.nodes["n1"] = NodeState(id="n1", task=tid, skill="k")
    task.order.append("n1")
    held.task, held.session.active_task = task, tid
    held.session.tasks.append(tid)
    return task


def test_only_tasks_that_left_the_session_row_get_rows_of_their_own(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    held = Held(store)
    durable = Durability(held)

    def own_rows() -> list[tuple[Any, ...]]:
        return store.raw("SELECT id, state FROM tasks WHERE session = 's1' ORDER BY n")

    async def go() -> None:
        await durable.commit()  # the new session
        first = _start(held, "t1")
        await durable.commit()
        first.nodes["n1"].skill = "k2"
        await durable.commit()
        assert own_rows() == []  # carried by the session row
        assert store.get_task("s1", "t1").nodes["n1"].skill == "k2"
        _start(held, "t2")  # a new task while t1 is still open: t1 leaves the session row
        await durable.commit()
        assert own_rows() == [("t1", "RUNNING")]
        assert [t.id for t in store.open_tasks("s1")] == ["t1", "t2"]
        assert store.get_session("s1").tasks == ["t1", "t2"]
        assert held.task is not None
        held.task.state = "DONE"
        await durable.commit()  # ended: its own row, and the session row carries none
        assert own_rows() == [("t1", "RUNNING"), ("t2", "DONE")]
        assert store.raw("SELECT task FROM sessions WHERE id = 's1'") == [(None,)]
        assert [t.id for t in store.open_tasks("s1")] == ["t1"]

    try:
        asyncio.run(go())
    finally:
        store.close()
