"""What a unit of work sends to SQLite: after its first commit a session's units append history
without asking how much is stored (runtime/store/rows.StoredHistory)."""
from __future__ import annotations

from pathlib import Path

from skillc.runtime.seam.state import SessionState
from skillc.runtime.store import SQLiteStore


def test_a_unit_after_this_process_committed_the_version_asks_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite")
    sent: list[str] = []
    store.db.set_trace_callback(sent.append)
    s = SessionState(id="s1", platform={})
    for turn in range(1, 4):
        s.user_messages.append({"turn": turn, "text": f"m{turn}"})
        with store.unit("s1") as uow:
            uow.put_session(s, float(turn))
    assert not [q for q in sent if q.lstrip().upper().startswith("SELECT")], sent
    other = SQLiteStore(tmp_path / "s.sqlite")  # a process that did not write it asks
    state = other.get_session("s1")
    state.user_messages.append({"turn": 4, "text": "m4"})
    asked: list[str] = []
    other.db.set_trace_callback(asked.append)
    with other.unit("s1") as uow:
        uow.put_session(state, 4.0)
    assert any("MAX(seq)" in q for q in asked)
    assert [m["text"] for m in SQLiteStore(tmp_path / "s.sqlite").get_session("s1").user_messages] == \
        ["m1", "m2", "m3", "m4"]
