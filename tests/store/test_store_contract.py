"""The store interface (runtime/store/base.py), checked on every backend: units of work, versions,
append-only history, leases, replies, corrupt rows."""
from __future__ import annotations

import subprocess
import sys
from typing import Any, Callable

import pytest

from skillc.runtime.seam.state import Evidence, NodeState, SessionState, TaskState
from skillc.runtime.store import (
    LeaseLost,
    ReplyRecord,
    StoreConflict,
    StoreProtocol,
    new_holder,
)

Factory = Callable[[], Any]


def _session(sid: str = "s1") -> SessionState:
    return SessionState(id=sid, platform={"userId": 7})


def _task(sid: str = "s1", tid: str = "t1", state: str = "RUNNING") -> TaskState:
    t = TaskState(id=tid, session=sid, agent="a", message="hi", state=state)
    t.nodes["n1"] = NodeState(id="n1", task=tid, skill="k")
    t.order.append("n1")
    return t


def test_backend_satisfies_the_protocol(store_factory: Factory) -> None:
    assert isinstance(store_factory(), StoreProtocol)


def test_unit_commits_everything_together(store_factory: Factory) -> None:
    store = store_factory()
    s = _session()
    s.user_messages.append({"turn": 1, "text": "hello"})
    s.tasks.append("t1")
    with store.unit("s1") as uow:
        uow.put_session(s, 1.0)
        uow.put_task(_task())
        uow.put_evidence("s1", Evidence(id="e1", task="t1", node="n1", tool="x", args={}, seq=1))
    other = store_factory()
    back = other.get_session("s1")
    assert back is not None and back.user_messages == [{"turn": 1, "text": "hello"}]
    assert back.tasks == ["t1"] and back.version == 1 == s.version
    assert other.get_task("s1", "t1").nodes["n1"].skill == "k"
    assert [e.id for e in other.evidence_of("s1")] == ["e1"]


def test_a_unit_that_raises_leaves_nothing(store_factory: Factory) -> None:
    store = store_factory()
    with pytest.raises(RuntimeError):
        with store.unit("s1") as uow:
            uow.put_session(_session(), 1.0)
            uow.put_task(_task())
            raise RuntimeError("boom")
    assert store.get_session("s1") is None and store.get_task("s1", "t1") is None
    with store.unit("s1") as uow:  # and the store works on
        uow.put_session(_session(), 1.0)
    assert store.get_session("s1") is not None


def _stale_copy(store_factory: Factory) -> tuple[Any, SessionState]:
    """A store and its copy of session "s1" made stale by another store's write since it read it."""
    a, b = store_factory(), store_factory()
    with a.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
    mine, theirs = a.get_session("s1"), b.get_session("s1")
    with b.unit("s1") as uow:
        uow.put_session(theirs, 2.0)
    return a, mine


def test_a_unit_whose_later_write_fails_keeps_none_of_its_earlier_ones(store_factory: Factory) -> None:
    """The task is written before the stale session row fails its version check: the unit is one
    transaction (on PostgreSQL the implicit one of its single flight, no BEGIN sent), so the task
    is not kept either, nor the history the unit would append."""
    a, mine = _stale_copy(store_factory)
    mine.user_messages.append({"turn": 1, "text": "lost"})
    with pytest.raises(StoreConflict):
        with a.unit("s1") as uow:
            uow.put_task(TaskState(id="t1", session="s1", agent="a", message="m"))
            uow.put_session(mine, 3.0)
    assert a.get_task("s1", "t1") is None and a.get_session("s1").user_messages == []
    with a.unit("s1") as uow:  # the store goes on: the next unit of a current copy commits
        current = a.get_session("s1")
        uow.put_task(TaskState(id="t1", session="s1", agent="a", message="m"))
        uow.put_session(current, 4.0)
    assert a.get_task("s1", "t1") is not None and a.version_of("s1") == 3


def test_history_is_appended_not_rewritten(store_factory: Factory) -> None:
    store = store_factory()
    s = _session()
    for turn in range(1, 4):
        s.user_messages.append({"turn": turn, "text": f"m{turn}"})
        s.entities.append({"type": "article", "id": turn})
        with store.unit("s1") as uow:
            uow.put_session(s, float(turn))
    assert store.raw("SELECT seq FROM messages WHERE session = 's1' ORDER BY seq") == [(1,), (2,), (3,)]
    assert store.raw("SELECT COUNT(*) FROM entities WHERE session = 's1'") == [(3,)]
    # the session row holds no history
    (doc,) = store.raw("SELECT doc FROM sessions WHERE id = 's1'")[0]
    assert "m1" not in doc and "article" not in doc
    assert store_factory().get_session("s1").entities[-1] == {"type": "article", "id": 3}


def test_stale_writer_gets_a_conflict_and_overwrites_nothing(store_factory: Factory) -> None:
    a, b = store_factory(), store_factory()
    with a.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
    mine, theirs = a.get_session("s1"), b.get_session("s1")
    mine.values["k"] = "mine"
    with a.unit("s1") as uow:
        uow.put_session(mine, 2.0)
    theirs.values["k"] = "theirs"
    with pytest.raises(StoreConflict):
        with b.unit("s1") as uow:
            uow.put_session(theirs, 3.0)
    assert a.get_session("s1").values == {"k": "mine"}
    with pytest.raises(StoreConflict):  # a second new session with a taken id
        with b.unit("s1") as uow:
            uow.put_session(_session(), 4.0)


def test_lease_one_holder_at_a_time(store_factory: Factory) -> None:
    a, b = store_factory(), store_factory()
    ha, hb = new_holder(), new_holder()
    assert a.acquire_lease("s1", ha, now=100.0, ttl=30.0).granted
    refused = b.acquire_lease("s1", hb, now=110.0, ttl=30.0)
    assert not refused.granted and refused.holder == ha
    assert a.acquire_lease("s1", ha, now=111.0, ttl=30.0).granted  # the holder again: renewed
    with pytest.raises(LeaseLost):  # a unit fenced by a lease it does not hold
        with b.unit("s1", holder=hb, expires=200.0) as uow:
            uow.put_session(_session(), 1.0)
    assert b.get_session("s1") is None
    assert b.acquire_lease("s1", hb, now=142.0, ttl=30.0).granted  # expired: taken over
    with pytest.raises(LeaseLost):  # the old holder can no longer write
        with a.unit("s1", holder=ha, expires=300.0) as uow:
            uow.put_session(_session(), 1.0)
    b.release_lease("s1", hb)
    assert a.acquire_lease("s1", ha, now=143.0, ttl=30.0).granted


def test_every_grant_has_a_larger_fencing_token_that_fences_units_and_renewals(store_factory: Factory) -> None:
    """A lease taken over (expired) fences its old holder out by token, even when the old holder
    takes it again later: a unit or renewal with the old token is refused, nothing is written."""
    a, b = store_factory(), store_factory()
    ha, hb = new_holder(), new_holder()
    with a.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
    first = a.acquire_lease("s1", ha, now=100.0, ttl=30.0)
    assert first.granted and not first.taken_over and first.fence > 0
    assert a.renew_lease("s1", ha, first.fence, 140.0)  # the heartbeat: now until 140
    assert not b.acquire_lease("s1", hb, now=135.0, ttl=30.0).granted
    second = b.acquire_lease("s1", hb, now=141.0, ttl=30.0)  # expired: taken over
    assert second.granted and second.taken_over and second.fence > first.fence
    assert not a.renew_lease("s1", ha, first.fence, 200.0)
    b.release_lease("s1", hb, fence=second.fence)
    third = a.acquire_lease("s1", ha, now=142.0, ttl=30.0)  # the first holder again, a new grant
    assert third.granted and not third.taken_over and third.fence > second.fence
    state = a.get_session("s1")
    with pytest.raises(LeaseLost):  # its stale token (a unit of the turn that lost the lease)
        with a.unit("s1", holder=ha, fence=first.fence, expires=200.0) as uow:
            uow.put_session(state, 2.0)
    assert a.version_of("s1") == 1
    a.release_lease("s1", ha, fence=first.fence)  # the stale token gives nothing back
    assert not b.acquire_lease("s1", hb, now=143.0, ttl=30.0).granted
    with a.unit("s1", holder=ha, fence=third.fence, expires=200.0) as uow:
        uow.put_session(a.get_session("s1"), 2.0)  # a failed unit's copy is reloaded, as the runtime does
    assert a.version_of("s1") == 2


def test_a_reply_is_marked_delivered_on_its_own(store_factory: Factory) -> None:
    """The client's acknowledgement, after the lease is given back: only that reply's flag."""
    store = store_factory()
    with store.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
        uow.put_reply(ReplyRecord(session="s1", turn=1, text="done", message="book it"))
    h = new_holder()
    store.release_lease("s1", h, fence=store.acquire_lease("s1", h, now=0.0, ttl=60.0).fence)
    assert not store.last_reply("s1").delivered
    store.mark_delivered("s1", 1)
    assert store.last_reply("s1").delivered


def test_a_dead_holders_lease_is_free(store_factory: Factory) -> None:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    host = new_holder().split(":")[0]
    dead = f"{host}:{int(proc.stdout)}:deadbeef"
    a = store_factory()
    assert a.acquire_lease("s1", dead, now=0.0, ttl=1e9).granted
    assert a.acquire_lease("s1", new_holder(), now=1.0, ttl=30.0).granted


def test_release_marks_the_reply_delivered(store_factory: Factory) -> None:
    store = store_factory()
    h = new_holder()
    lease = store.acquire_lease("s1", h, now=0.0, ttl=60.0)
    assert lease.granted and lease.version == 0
    with store.unit("s1", holder=h, expires=60.0) as uow:
        uow.put_session(_session(), 1.0)
        uow.put_reply(ReplyRecord(session="s1", turn=1, text="done", task="t1", message="book it",
                                  client_message_id="c-1"))
    reply = store.last_reply("s1")
    assert reply is not None and not reply.delivered and reply.message == "book it" and reply.client_message_id == "c-1"
    store.release_lease("s1", h, delivered_turn=1)
    assert store.last_reply("s1").delivered
    assert store.acquire_lease("s1", new_holder(), now=1.0, ttl=60.0).version == 1


def test_open_tasks(store_factory: Factory) -> None:
    store = store_factory()
    with store.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
        uow.put_task(_task(tid="t1", state="DONE"))
        uow.put_task(_task(tid="t2", state="RUNNING"))
        uow.put_task(_task(tid="t10", state="SUSPENDED"))
    assert [t.id for t in store.open_tasks("s1")] == ["t2", "t10"]
    assert store.get_session("s1").tasks == ["t1", "t2", "t10"]


def test_version_of_tells_another_process_its_copy_is_stale(store_factory: Factory) -> None:
    a, b = store_factory(), store_factory()
    assert a.version_of("s1") == 0  # absent
    with a.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
    copy = b.get_session("s1")
    assert copy is not None and b.version_of("s1") == copy.version == 1
    mine = a.get_session("s1")
    with a.unit("s1") as uow:  # another process commits a turn
        uow.put_session(mine, 2.0)
    assert b.version_of("s1") == 2 != copy.version  # b sees its copy is stale without loading it
    with pytest.raises(StoreConflict):
        with b.unit("s1") as uow:
            uow.put_session(copy, 3.0)
    assert a.version_of("s1") == 2 and a.version_of("other") == 0


def test_the_trace_head_is_kept_with_the_unit_and_at_release(store_factory: Factory) -> None:
    a, b = store_factory(), store_factory()
    assert a.trace_head("s1") is None
    h = new_holder()
    assert a.acquire_lease("s1", h, now=0.0, ttl=60.0).granted
    with a.unit("s1", holder=h, expires=60.0) as uow:
        uow.put_session(_session(), 1.0)
        uow.put_trace_head("s1", "aa" * 32)
    assert b.trace_head("s1") == "aa" * 32  # committed with the unit, seen by another process
    with pytest.raises(RuntimeError):
        with a.unit("s1", holder=h, expires=60.0) as uow:
            uow.put_trace_head("s1", "bb" * 32)
            raise RuntimeError("the unit fails")
    assert b.trace_head("s1") == "aa" * 32  # nothing of a failed unit
    b.release_lease("s1", new_holder(), trace_head="cc" * 32)  # not the holder: nothing stored
    assert b.trace_head("s1") == "aa" * 32
    a.release_lease("s1", h, trace_head="dd" * 32)  # the turn's last events, after its last unit
    assert b.trace_head("s1") == "dd" * 32 and b.trace_head("s2") is None


def _sqlite_store_at_schema(path: Any, version: int, *rows: str) -> Any:
    """A SQLite file as release `version` of the schema left it (session s1 in it, and `rows`:
    statements of that schema), opened now."""
    import sqlite3

    from skillc.runtime.store import SQLiteStore
    from skillc.runtime.store.sqlite import MIGRATIONS

    db = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:version]:
        step(db)
    db.execute(f"PRAGMA user_version={version}")
    db.execute("""INSERT INTO sessions (id, doc, updated, version) VALUES ('s1', '{"id": "s1"}', 1.0, 1)""")
    for row in rows:
        db.execute(row)
    db.close()
    return SQLiteStore(path)


def test_a_schema_2_sqlite_file_migrates_to_keep_trace_heads(tmp_path: Any) -> None:
    from skillc.runtime.store import SCHEMA_VERSION

    store = _sqlite_store_at_schema(tmp_path / "old.sqlite", 2)  # a store written by an earlier release
    try:
        assert store.raw("PRAGMA user_version") == [(SCHEMA_VERSION,)] and SCHEMA_VERSION >= 3
        assert store.trace_head("s1") is None and store.version_of("s1") == 1
        with store.unit("s1") as uow:
            uow.put_trace_head("s1", "ee" * 32)
        assert store.trace_head("s1") == "ee" * 32
    finally:
        store.close()


def test_history_counts_known_after_a_commit_follow_other_writers(store_factory: Factory) -> None:
    # A store remembers the history counts of the versions it committed (a query less per unit);
    # a version written by another process in between must send it back to the stored counts.
    a, b = store_factory(), store_factory()
    mine = _session()
    mine.user_messages.append({"turn": 1, "text": "m1"})
    with a.unit("s1") as uow:
        uow.put_session(mine, 1.0)
    theirs = b.get_session("s1")
    theirs.user_messages.append({"turn": 2, "text": "m2"})
    theirs.entities.append({"type": "article", "id": 2})
    with b.unit("s1") as uow:
        uow.put_session(theirs, 2.0)
    with pytest.raises(StoreConflict):  # a's copy is stale; nothing it appends is kept
        with a.unit("s1") as uow:
            mine.user_messages.append({"turn": 2, "text": "stale"})
            uow.put_session(mine, 3.0)
    mine = a.get_session("s1")
    mine.user_messages.append({"turn": 3, "text": "m3"})
    with a.unit("s1") as uow:
        uow.put_session(mine, 4.0)
    mine.user_messages.append({"turn": 4, "text": "m4"})  # a's own version: counts remembered
    with a.unit("s1") as uow:
        uow.put_session(mine, 5.0)
    assert [m["text"] for m in store_factory().get_session("s1").user_messages] == ["m1", "m2", "m3", "m4"]
    assert store_factory().get_session("s1").entities == [{"type": "article", "id": 2}]
    assert store_factory().raw("SELECT seq FROM messages WHERE session = 's1' ORDER BY seq") == \
        [(1,), (2,), (3,), (4,)]


def test_a_failed_unit_does_not_leave_history_counts_behind(store_factory: Factory) -> None:
    # Counts are noted only once committed: had `a` noted them for the version its failed unit
    # would have written, the same version written by `b` would be appended to at a wrong place.
    a, b = store_factory(), store_factory()
    s = _session()
    with a.unit("s1") as uow:
        uow.put_session(s, 1.0)
    s.user_messages.append({"turn": 1, "text": "lost"})
    with pytest.raises(RuntimeError):
        with a.unit("s1") as uow:
            uow.put_session(s, 2.0)
            raise RuntimeError("boom")
    theirs = b.get_session("s1")
    theirs.user_messages += [{"turn": 1, "text": "b1"}, {"turn": 2, "text": "b2"}]
    with b.unit("s1") as uow:
        uow.put_session(theirs, 3.0)
    s = a.get_session("s1")
    assert s.version == theirs.version
    s.user_messages.append({"turn": 3, "text": "a3"})
    with a.unit("s1") as uow:
        uow.put_session(s, 4.0)
    assert [m["text"] for m in store_factory().get_session("s1").user_messages] == ["b1", "b2", "a3"]


def test_evidence_since_a_number_keeps_every_unsettled_write(store_factory: Factory) -> None:
    # what a reopened session holds: the active task's records (numbered `since` or later) and
    # any write still unsettled, however old; an earlier record is still read by its id
    store = store_factory()
    statuses = ["SUCCESS", "STARTED", "FAILED", "UNKNOWN", "SUCCESS", "UNKNOWN_PRE_CALL", "SUCCESS"]
    with store.unit("s1") as uow:
        uow.put_session(_session(), 1.0)
        for i, status in enumerate(statuses, 1):
            uow.put_evidence("s1", Evidence(id=f"e{i}", task="t1" if i < 6 else "t2", node="n1", tool="w",
                                            args={}, status=status, seq=i))
    assert [e.id for e in store.evidence_of("s1")] == [f"e{i}" for i in range(1, 8)]
    assert [e.id for e in store.evidence_of("s1", since=6)] == ["e2", "e4", "e6", "e7"]
    assert [e.id for e in store.evidence_of("s1", since=99)] == ["e2", "e4", "e6"]
    assert store.evidence_record("s1", "e1").status == "SUCCESS"
    assert store.evidence_record("s1", "e42") is None and store.evidence_record("s2", "e1") is None


def test_a_nonce_is_claimed_once_across_stores_and_forgotten_after_keep(store_factory: Factory) -> None:
    a, b = store_factory(), store_factory()
    assert a.claim_nonce("n-1", now=1000.0, keep=600.0)
    assert not a.claim_nonce("n-1", now=1001.0, keep=600.0)
    assert not b.claim_nonce("n-1", now=1002.0, keep=600.0)  # another worker on the same database
    assert b.claim_nonce("n-2", now=1003.0, keep=600.0)
    fresh = store_factory()  # a worker started later sweeps what is older than `keep`
    assert fresh.claim_nonce("n-3", now=1700.0, keep=600.0)
    assert fresh.claim_nonce("n-1", now=1701.0, keep=600.0)  # long past its timestamp window: forgotten
    assert fresh.raw("SELECT nonce FROM nonces ORDER BY nonce") == [("n-1",), ("n-3",)]


def test_a_schema_3_sqlite_file_migrates_to_record_nonces(tmp_path: Any) -> None:
    from skillc.runtime.store import SCHEMA_VERSION

    store = _sqlite_store_at_schema(tmp_path / "v3.sqlite", 3)  # written before nonces were stored
    try:
        assert store.raw("PRAGMA user_version") == [(SCHEMA_VERSION,)] and store.version_of("s1") == 1
        assert store.claim_nonce("n-1", 10.0, 600.0) and not store.claim_nonce("n-1", 11.0, 600.0)
    finally:
        store.close()


def test_a_schema_5_sqlite_file_continues_its_chain_leases_and_replies(tmp_path: Any) -> None:
    """Schema 6 moved the chain head and the handed-over turn into the session row and dropped
    the fencing counter: what a schema 5 file holds (a head, a lease never given back, an
    undelivered reply and a delivered one) is read the same, and its sessions go on."""
    store = _sqlite_store_at_schema(
        tmp_path / "v5.sqlite", 5,
        """UPDATE sessions SET doc = '{"id": "s1", "platform": {}}'""",
        "INSERT INTO trace_heads (session, head) VALUES ('s1', '" + "ab" * 32 + "')",
        "INSERT INTO leases (session, holder, expires, fence) VALUES ('s1', 'elsewhere:1:x', 50.0, 7)",
        "UPDATE lease_fence SET n = 9",
        "INSERT INTO replies (session, turn, delivered, doc) VALUES ('s1', 1, 1, '{\"text\": \"one\"}')",
        "INSERT INTO replies (session, turn, delivered, doc) VALUES ('s1', 2, 0, '{\"text\": \"two\"}')")
    try:
        assert store.trace_head("s1") == "ab" * 32 and store.version_of("s1") == 1
        reply = store.last_reply("s1")
        assert reply is not None and reply.turn == 2 and not reply.delivered
        h = new_holder()
        assert not store.acquire_lease("s1", h, now=40.0, ttl=30.0).granted  # still held until 50
        lease = store.acquire_lease("s1", h, now=60.0, ttl=30.0)  # expired: taken over, a larger token
        assert lease.granted and lease.taken_over and lease.fence > 7 and lease.version == 1
        assert lease.head == "ab" * 32 and lease.last is not None and lease.last.turn == 2
        state = store.get_session("s1")
        with store.unit("s1", holder=h, fence=lease.fence, expires=90.0) as uow:
            uow.put_session(state, 61.0)
            uow.put_trace_head("s1", "cd" * 32)
        store.release_lease("s1", h, fence=lease.fence, delivered_turn=2, trace_head="ef" * 32)
        assert store.trace_head("s1") == "ef" * 32 and store.version_of("s1") == 2 and store.last_reply("s1").delivered
        again = store.acquire_lease("s1", new_holder(), now=62.0, ttl=30.0)  # given back: free, not taken over
        assert again.granted and not again.taken_over and again.fence > lease.fence and again.head == "ef" * 32
    finally:
        store.close()


def test_the_session_head_is_the_row_without_its_history(store_factory: Factory) -> None:
    store = store_factory()
    s = _session()
    s.user_messages.append({"turn": 1, "text": "hi"})
    s.entities.append({"type": "article", "id": 1})
    s.turn, s.active_task = 3, "t2"
    with store.unit("s1") as uow:
        uow.put_session(s, 1.0)
    head = store.session_head("s1")
    assert head is not None and head.platform == {"userId": 7} and head.turn == 3 and head.active_task == "t2"
    assert head.version == s.version and head.user_messages == [] and head.entities == []
    assert store.session_head("nope") is None


def test_the_open_active_task_rides_in_the_session_row_until_it_ends(store_factory: Factory) -> None:
    """Schema 7: a unit that changed only the open active task writes the session row alone; the
    reads find the task there, and its own row is written once, when it ended."""
    store, other = store_factory(), store_factory()
    s = _session()
    task = _task(tid="t2")
    s.tasks, s.active_task = ["t1", "t2"], "t2"
    with store.unit("s1") as uow:
        uow.put_session(s, 1.0)
        uow.put_task(_task(tid="t1", state="SUSPENDED"))  # an earlier task left open: its own row
    with store.unit("s1") as uow:
        uow.put_session(s, 2.0, task)
    assert store.raw("SELECT id FROM tasks WHERE session = 's1'") == [("t1",)]  # no row of its own yet
    task.nodes["n1"].skill = "k2"
    with store.unit("s1") as uow:
        uow.put_session(s, 3.0, task)
    assert other.get_task("s1", "t2").nodes["n1"].skill == "k2" and other.get_task("s1", "t1").state == "SUSPENDED"
    assert [t.id for t in other.open_tasks("s1")] == ["t1", "t2"] and other.get_session("s1").tasks == ["t1", "t2"]
    assert other.get_task("s1", "t3") is None and other.get_task("s2", "t2") is None
    task.state = "DONE"
    with store.unit("s1") as uow:
        uow.put_session(s, 4.0)
        uow.put_task(task)
    assert other.get_task("s1", "t2").state == "DONE" and [t.id for t in other.open_tasks("s1")] == ["t1"]
    assert other.get_session("s1").tasks == ["t1", "t2"]
    with pytest.raises(ValueError):  # only the open active task rides in the row
        with store.unit("s1") as uow:
            uow.put_session(s, 5.0, task)
    with pytest.raises(ValueError):
        with store.unit("s1") as uow:
            uow.put_session(s, 5.0, _task(tid="t1"))


def test_a_schema_6_sqlite_file_reads_its_active_task_from_its_row_then_from_the_session_row(tmp_path: Any) -> None:
    """A schema 6 file keeps its open active task in the task's own row: read from there, then
    carried by the session row from the next unit on (the older row is not read again)."""
    doc = ('{"id": "t1", "session": "s1", "agent": "a", "message": "hi", "state": "RUNNING", "order": ["n1"], '
           '"nodes": {"n1": {"id": "n1", "task": "t1", "skill": "k"}}}')
    store = _sqlite_store_at_schema(
        tmp_path / "v6.sqlite", 6,
        """UPDATE sessions SET doc = '{"id": "s1", "platform": {}, "active_task": "t1"}'""",
        f"INSERT INTO tasks (id, session, doc, n, state) VALUES ('t1', 's1', '{doc}', 1, 'RUNNING')")
    try:
        state = store.get_session("s1")
        assert state is not None and state.tasks == ["t1"] and state.active_task == "t1"
        task = store.get_task("s1", "t1")
        assert task is not None and task.nodes["n1"].skill == "k"
        task.nodes["n1"].skill = "k2"
        with store.unit("s1") as uow:
            uow.put_session(state, 2.0, task)
        assert store.get_task("s1", "t1").nodes["n1"].skill == "k2"
        assert [t.nodes["n1"].skill for t in store.open_tasks("s1")] == ["k2"]
        assert store.get_session("s1").tasks == ["t1"]
    finally:
        store.close()


def test_load_or_create_reads_a_stored_session_or_stores_the_new_one(store_factory: Factory) -> None:
    store, other = store_factory(), store_factory()
    fresh = _session()
    assert store.load_or_create(fresh, 1.0) is None  # none stored: this one is, in one call
    assert fresh.version == 1 and other.version_of("s1") == 1
    mine = other.get_session("s1")
    mine.user_messages.append({"turn": 1, "text": "hi"})
    with other.unit("s1") as uow:
        uow.put_session(mine, 2.0)
    found = store.load_or_create(_session(), 3.0)  # stored: read with its history, nothing written
    assert found is not None and found.version == 2 and found.user_messages == [{"turn": 1, "text": "hi"}]
    assert other.version_of("s1") == 2


def test_load_or_create_reads_the_session_another_process_created_meanwhile(store_factory: Factory) -> None:
    store, other = store_factory(), store_factory()
    with other.unit("s1") as uow:  # another process creates it between the read and the insert
        uow.put_session(_session(), 1.0)
    if hasattr(store, "_a_get_session"):  # PostgreSQL: its read, made to miss once
        read = store._a_get_session
        misses = [None]

        async def late(session_id: str) -> Any:
            return misses.pop() if misses else await read(session_id)
        store._a_get_session = late
    else:
        read = store._session
        misses = [None]
        store._session = lambda session_id: misses.pop() if misses else read(session_id)
    fresh = _session()
    found = store.load_or_create(fresh, 2.0)
    assert found is not None and found.version == 1 and fresh.version == 0
    assert other.version_of("s1") == 1


def test_a_leased_unit_over_a_stale_copy_is_a_conflict_and_writes_nothing(store_factory: Factory) -> None:
    """The lease held, the copy stale (another writer's version in between): the unit's version
    check fails, not its lease check (PostgreSQL checks both in the one statement that writes the
    session row), and none of its writes is kept."""
    a, mine = _stale_copy(store_factory)
    holder = new_holder()
    lease = a.acquire_lease("s1", holder, now=100.0, ttl=30.0)
    assert lease.granted
    mine.user_messages.append({"turn": 1, "text": "stale"})
    with pytest.raises(StoreConflict):
        with a.unit("s1", holder=holder, fence=lease.fence, expires=200.0) as uow:
            uow.put_session(mine, 3.0)
    assert a.version_of("s1") == 2 and a.get_session("s1").user_messages == []
    assert a.renew_lease("s1", holder, lease.fence, 150.0)  # the lease is still its own
