"""What every backend shares about stored rows: how documents are encoded, checked and read back.

The SQLite and PostgreSQL stores differ in SQL and transactions only; the documents they hold
(session row, task, evidence, reply) are the same JSON, written and checked here, so neither
backend depends on the other's private helpers and a stored row means one thing everywhere.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from skillc.runtime.text import jsontext
from skillc.runtime.seam.state import Evidence, NodeState, SessionState, TaskState, node_from_doc, to_doc, without_retired
from skillc.runtime.store.base import ReplyRecord, StoreCorrupt
from skillc.runtime.words.vocab import FINAL_TASK, OPEN_STATUSES

# Every document through one encoder and decoder (runtime/text/jsontext.py: orjson where it is exact).
ENCODE = jsontext.dumps
DECODE = jsontext.loads
# The ended tasks as an SQL list, from the vocabulary: ('DONE', 'FAILED', 'CANCELLED').
_ENDED_SQL = "(" + ", ".join(f"'{state}'" for state in FINAL_TASK) + ")"
# The session's history lists live in their own tables, never in the session row.
HISTORY = ("user_messages", "entities", "tasks", "version")
# Fields of a reply that are columns of its row, not parts of its document.
_REPLY_COLUMNS = ("session", "turn", "delivered")
# Whether reply row `r` reached its caller: stored so (a reply handed over with a later turn's),
# marked so (the client's acknowledgement), or at most the turn the session row says was handed
# over when its lease was given back (schema 6: written with the chain head, one statement).
REPLY_DELIVERED = ("CASE WHEN r.delivered = 1 OR r.turn <= (SELECT s.delivered FROM sessions AS s "
                   "WHERE s.id = r.session) THEN 1 ELSE 0 END")


class StoredHistory:
    """How many user messages and entities of each session the store holds, as of the session
    row's version this process last committed. A unit that writes the row at that version (its
    version check proves nobody wrote since) appends the new items without asking for the counts
    first: a statement less in SQLite, a round trip less in PostgreSQL. Counts are noted only
    after a commit; any other version asks the store."""

    LIMIT = 10_000  # sessions remembered; past it the memory starts again

    def __init__(self) -> None:
        self._known: dict[str, tuple[int, int, int]] = {}

    def counts(self, session: str, version: int) -> tuple[int, int] | None:
        """(messages, entities) stored at `version`, when this process committed that version."""
        if version == 0:
            return (0, 0)  # a new row: no history can be stored for it (its insert is checked)
        known = self._known.get(session)
        return (known[1], known[2]) if known is not None and known[0] == version else None

    def note(self, noted: list[tuple[str, int, int, int]]) -> None:
        """After a commit: each (session, version, messages, entities) its unit wrote."""
        if len(self._known) >= self.LIMIT:
            self._known.clear()
        for session, version, messages, entities in noted:
            self._known[session] = (version, messages, entities)


class Sweep:
    """When a store should next delete what has expired (request nonces): at most once a minute
    per process, so recording a nonce is one statement almost always."""

    def __init__(self, every: float = 60.0) -> None:
        self.every = every
        self._next = 0.0

    def due(self, now: float) -> bool:
        """True (and the next sweep scheduled) when a sweep is due at `now`."""
        if now < self._next:
            return False
        self._next = now + self.every
        return True


def task_number(task_id: str) -> int:
    """The order of a task id ("t12" -> 12; anything else 0), stored beside the task's row."""
    return int(task_id[1:]) if task_id[:1] == "t" and task_id[1:].isdigit() else 0


_SCHEMAS: dict[type, tuple[dict[str, type | None], frozenset[str]]] = {}


def _schema(cls: type) -> tuple[dict[str, type | None], frozenset[str]]:
    """Per dataclass, once: the kind each field's default has (None: any), and the required fields."""
    hit = _SCHEMAS.get(cls)
    if hit is None:
        kinds: dict[str, type | None] = {}
        required = set()
        for f in fields(cls):
            default = f.default_factory() if f.default_factory is not MISSING else f.default
            if default is MISSING:
                required.add(f.name)
            kind = type(default) if default is not MISSING and default is not None else None
            kinds[f.name] = str if kind is not None and issubclass(kind, str) else kind  # a vocab word is stored as text
        hit = _SCHEMAS[cls] = (kinds, frozenset(required))
    return hit


def check(cls: type, doc: Any, session: str, what: str) -> dict[str, Any]:
    """A stored document as keyword arguments of `cls`: a dict with known keys whose values have
    the kinds the dataclass's defaults have (a wrong type fails here, not deep in a turn)."""
    if not isinstance(doc, dict):
        raise StoreCorrupt(session, what, f"a {type(doc).__name__}, not an object")
    kinds, required = _schema(cls)
    for key, value in doc.items():
        if key not in kinds:
            raise StoreCorrupt(session, what, f"unknown field {key!r}")
        kind = kinds[key]
        if kind is None or value is None or type(value) is kind:
            continue
        if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise StoreCorrupt(session, what, f"{key} is not an integer")
        if kind in (dict, list, str, bool) and not isinstance(value, kind):
            raise StoreCorrupt(session, what, f"{key} is not a {kind.__name__}")
    if not required.issubset(doc):
        raise StoreCorrupt(session, what, f"missing {', '.join(sorted(required - doc.keys()))}")
    return doc


def decode(text: Any, session: str, what: str) -> Any:
    """A stored JSON text back as a value; `StoreCorrupt` when it is not text or not JSON."""
    if not isinstance(text, str):
        raise StoreCorrupt(session, what, "not a text document")
    try:
        return DECODE(text)
    except (ValueError, RecursionError) as exc:
        raise StoreCorrupt(session, what, f"not JSON: {str(exc)[:80]}") from exc


def session_doc(state: SessionState) -> str:
    """The session row's document: the session's own fields, without its history."""
    return ENCODE({k: v for k, v in state.__dict__.items() if k not in HISTORY})


def session_fields(text: Any, session: str) -> dict[str, Any]:
    """A session row's document checked, as keyword arguments of SessionState (history left out)."""
    doc = check(SessionState, decode(text, session, "session"), session, "session")
    return {k: v for k, v in doc.items() if k not in HISTORY}


def history_items(rows: Iterable[tuple[int, Any]], session: str, table: str) -> list[dict[str, Any]]:
    """The documents of a history table's (seq, doc) rows (messages, entities), each an object.
    Read as one JSON array (a session holds thousands); when that is not exactly one object per
    row, row by row, so a damaged row is named."""
    rows = list(rows)
    if all(isinstance(text, str) for _, text in rows):
        try:
            items = DECODE("[" + ",".join(text for _, text in rows) + "]")
        except (ValueError, RecursionError):
            items = None
        if isinstance(items, list) and len(items) == len(rows) and all(isinstance(i, dict) for i in items):
            return items
    items = [decode(text, session, f"{table} {n}") for n, text in rows]
    if not all(isinstance(i, dict) for i in items):
        raise StoreCorrupt(session, table, "an item is not an object")
    return items


def task_doc(task: TaskState) -> str:
    """A task's document, in its own row or in its session's row (the open active task, schema
    7). Its nodes' evidence id lists are left out: they are the evidence rows of the node (see
    durable.attach_evidence), and a node holding 10,000 records must not re-encode them at every
    commit."""
    doc = to_doc(task)
    for node in doc["nodes"].values():
        node["evidence"] = []
    return ENCODE(doc)


def carried_doc(state: SessionState, task: TaskState | None) -> str | None:
    """The document of the task a session row carries: its open active task, or none."""
    if task is None:
        return None
    if task.id != state.active_task or task.state in FINAL_TASK or task.session != state.id:
        raise ValueError(f"a session row carries its open active task only, not {task.id} ({task.state})")
    return task_doc(task)


def task_ids(rows: Iterable[tuple[Any, ...]], carried: str | None) -> list[str]:
    """A session's task ids in creation order: its task rows', and the active task its session
    row carries (`carried`, whose own row may not exist yet)."""
    ids = [str(r[0]) for r in rows]
    if carried is not None and carried not in ids:
        ids.append(carried)
        ids.sort(key=lambda tid: (task_number(tid), tid))
    return ids


def task_from(session: str, task_id: str, text: Any) -> TaskState:
    """A task row's document back as a TaskState (its nodes checked one by one)."""
    what = f"task {task_id}"
    doc = check(TaskState, decode(text, session, what), session, what)
    try:
        nodes = {key: node_from_doc(check(NodeState, without_retired(node), session, f"{what} node {key}"))
                 for key, node in doc.get("nodes", {}).items()}
        return TaskState(**dict(doc, nodes=nodes))
    except (TypeError, ValueError) as exc:  # ValueError: a state that is no word of the vocabulary
        raise StoreCorrupt(session, what, str(exc)) from exc


def evidence_from(session: str, evidence_id: str, text: Any) -> Evidence:
    """An evidence row's document back as an Evidence record."""
    what = f"evidence {evidence_id}"
    try:
        return Evidence(**check(Evidence, decode(text, session, what), session, what))
    except ValueError as exc:  # a status that is no word of the vocabulary
        raise StoreCorrupt(session, what, str(exc)) from exc


def reply_doc(reply: ReplyRecord) -> str:
    """A reply row's document: the reply without the fields that are the row's columns."""
    return ENCODE({k: v for k, v in reply.__dict__.items() if k not in _REPLY_COLUMNS})


def reply_from(session: str, turn: int, delivered: Any, text: Any) -> ReplyRecord:
    """A reply row back as a ReplyRecord."""
    what = f"reply {turn}"
    data = check(ReplyRecord, dict(decode(text, session, what) or {}, session=session, turn=turn,
                                   delivered=bool(delivered)), session, what)
    return ReplyRecord(**data)


@dataclass(frozen=True)
class ReadPlan:
    """One read both backends make alike: its SQL (`?` markers), parameters, and how its rows
    become the answer; a backend runs it its own way (synchronously, or as a coroutine)."""

    session: str
    what: str
    sql: str
    params: tuple[Any, ...]
    answer: Callable[[list[tuple[Any, ...]]], Any]


class RowReads:
    """The reads both backends make with the same SQL: a backend gives `_rows` (one query, its
    errors turned into the store's) and its parameter marker; `plan(name, ...)` is the read of
    method `name` for a backend that runs it otherwise (postgres.py, on its event loop)."""

    PARAM = "?"
    READS = ("get_task", "open_tasks", "session_head", "evidence_of", "evidence_record", "last_reply", "trace_head")

    def _rows(self, session: str, what: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _run(self, plan: ReadPlan) -> Any:
        sql = plan.sql if self.PARAM == "?" else plan.sql.replace("?", self.PARAM)
        return plan.answer(self._rows(plan.session, plan.what, sql, plan.params))

    def plan(self, name: str, *args: Any, **kwargs: Any) -> ReadPlan:
        """The read of the method `name` (one of READS) with its arguments."""
        return getattr(RowReads, "_" + name)(*args, **kwargs)  # type: ignore[no-any-return]

    @staticmethod
    def _get_task(session_id: str, task_id: str) -> ReadPlan:
        def answer(rows: list[tuple[Any, ...]]) -> TaskState | None:
            for carried, doc in rows:  # the session row's copy first: it is the later one
                task = task_from(session_id, task_id, doc)
                if not carried or task.id == task_id:
                    return task
            return None
        return ReadPlan(session_id, f"task {task_id}", "SELECT 1, s.task FROM sessions AS s WHERE s.id = ? AND "
                        "s.task IS NOT NULL UNION ALL SELECT 0, t.doc FROM tasks AS t WHERE t.session = ? AND t.id = ? "
                        "ORDER BY 1 DESC", (session_id, session_id, task_id), answer)

    def get_task(self, session_id: str, task_id: str) -> TaskState | None:
        """A task of a session, or None."""
        return self._run(self._get_task(session_id, task_id))  # type: ignore[no-any-return]

    @staticmethod
    def _open_tasks(session_id: str) -> ReadPlan:
        def answer(rows: list[tuple[Any, ...]]) -> list[TaskState]:
            carried = [task_from(session_id, "active", doc) for tid, doc in rows if tid is None]
            kept = {t.id for t in carried}  # its own row, if any, is an older copy
            found = [task_from(session_id, tid, doc) for tid, doc in rows if tid is not None and tid not in kept]
            return sorted(found + carried, key=lambda t: (task_number(t.id), t.id))
        return ReadPlan(session_id, "tasks", "SELECT t.id, t.doc FROM tasks AS t WHERE t.session = ? AND t.state "
                        f"NOT IN {_ENDED_SQL} UNION ALL SELECT NULL, s.task FROM sessions AS s WHERE s.id = ? "
                        "AND s.task IS NOT NULL", (session_id, session_id), answer)

    def open_tasks(self, session_id: str) -> list[TaskState]:
        """Tasks of the session not ended."""
        return self._run(self._open_tasks(session_id))  # type: ignore[no-any-return]

    @staticmethod
    def _session_head(session_id: str) -> ReadPlan:
        def answer(rows: list[tuple[Any, ...]]) -> SessionState | None:
            if not rows:
                return None
            if not isinstance(rows[0][1], int):
                raise StoreCorrupt(session_id, "session", "version is not an integer")
            return SessionState(**session_fields(rows[0][0], session_id), version=rows[0][1])
        return ReadPlan(session_id, "session", "SELECT doc, version FROM sessions WHERE id = ?", (session_id,), answer)

    def session_head(self, session_id: str) -> SessionState | None:
        """The stored session's row alone (platform, counters, values, active task, version), its
        history lists left empty; None when there is no such session. For an ownership check or
        a list of sessions, which must not read every session's whole history."""
        return self._run(self._session_head(session_id))  # type: ignore[no-any-return]

    @staticmethod
    def _evidence_of(session_id: str, since: int = 0) -> ReadPlan:
        def answer(rows: list[tuple[Any, ...]]) -> list[Evidence]:
            return [evidence_from(session_id, eid, doc) for eid, doc in rows]
        if since <= 1:
            return ReadPlan(session_id, "evidence", "SELECT id, doc FROM evidence WHERE session = ? ORDER BY seq",
                            (session_id,), answer)
        return ReadPlan(session_id, "evidence", "SELECT id, doc FROM evidence WHERE session = ? AND (seq >= ? "
                        f"OR status IN ({', '.join('?' for _ in OPEN_STATUSES)})) ORDER BY seq",
                        (session_id, since, *OPEN_STATUSES), answer)

    def evidence_of(self, session_id: str, since: int = 0) -> list[Evidence]:
        """Evidence of a session in creation order (see base.Store.evidence_of)."""
        return self._run(self._evidence_of(session_id, since))  # type: ignore[no-any-return]

    @staticmethod
    def _evidence_record(session_id: str, evidence_id: str) -> ReadPlan:
        return ReadPlan(session_id, f"evidence {evidence_id}", "SELECT id, doc FROM evidence WHERE session = ? "
                        "AND id = ?", (session_id, evidence_id),
                        lambda rows: evidence_from(session_id, rows[0][0], rows[0][1]) if rows else None)

    def evidence_record(self, session_id: str, evidence_id: str) -> Evidence | None:
        """One evidence record by id, or None."""
        return self._run(self._evidence_record(session_id, evidence_id))  # type: ignore[no-any-return]

    @staticmethod
    def _last_reply(session_id: str) -> ReadPlan:
        return ReadPlan(session_id, "replies", f"SELECT r.turn, {REPLY_DELIVERED}, r.doc FROM replies AS r "
                        "WHERE r.session = ? ORDER BY r.turn DESC LIMIT 1", (session_id,),
                        lambda rows: reply_from(session_id, *rows[0]) if rows else None)

    def last_reply(self, session_id: str) -> ReplyRecord | None:
        """The reply of the latest stored turn."""
        return self._run(self._last_reply(session_id))  # type: ignore[no-any-return]

    @staticmethod
    def _trace_head(session_id: str) -> ReadPlan:
        return ReadPlan(session_id, "trace head", "SELECT head FROM sessions WHERE id = ?", (session_id,),
                        lambda rows: str(rows[0][0]) if rows and rows[0][0] is not None else None)

    def trace_head(self, session_id: str) -> str | None:
        """The session's stored audit chain head, or None."""
        return self._run(self._trace_head(session_id))  # type: ignore[no-any-return]
