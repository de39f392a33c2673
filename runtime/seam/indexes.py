"""Indexes over a session's evidence values and entity index, so a check costs the same with 10
or 10,000 records (issue 12, item 7).

Both follow the lists they index instead of being told about every change: evidence ids are
`e1, e2, …` in registration order and the entity index only grows, so an index catches up from
where it stopped; evidence that is not settled yet (STARTED, UNKNOWN) is looked at again until it
is. An index belongs to one evidence dict / entity list (a reloaded session gets new ones); a
session's env keeps both in its declared `indexes` field (`Indexes`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from skillc.runtime.seam.state import Evidence, SessionState
from skillc.runtime.words.vocab import EvidenceStatus

_SUCCESS = EvidenceStatus.SUCCESS
_FINAL = (_SUCCESS, EvidenceStatus.FAILED)


def scalar_key(value: Any) -> tuple[Any, ...] | None:
    """A key equal for exactly the scalars `context._same` calls equal (3 == 3.0, 3 != "3",
    True != 1); None for containers."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, (dict, list)):
        return None
    return (type(value).__name__, value)


def _scalars(value: Any, out: set[tuple[Any, ...]]) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        else:
            try:
                out.add(scalar_key(v))  # type: ignore[arg-type]
            except TypeError:  # an unhashable oddity: left out of the index, found by no one
                pass


class EvidenceIndex:
    """Scalar values inside each settled evidence record's extracts -> the records holding them."""

    def __init__(self, evidence: dict[str, Evidence]) -> None:
        self.evidence = evidence
        self.upto = 0  # the next evidence number not looked at yet (0: none looked at)
        self.unsettled: set[str] = set()  # registered ids not SUCCESS/FAILED yet (or not seen yet)
        self.by_value: dict[tuple[Any, ...], list[str]] = {}
        self.completed: set[tuple[str, str, str | None]] = set()  # (task, node, tool) / (task, node, None)

    def sync(self, next_evidence: int) -> None:
        """Take in records registered or settled since the last call."""
        if self.upto == 0:
            # first look: the records held now, not every number since e1 (a session at turn
            # 1,000 holds its active task's few, numbered in the thousands)
            self.unsettled.update(self.evidence)
            self.upto = next_evidence
        elif self.upto < next_evidence:
            self.unsettled.update(f"e{n}" for n in range(self.upto, next_evidence))
            self.upto = next_evidence
        # A new set each time, not discards from the old one: a set never shrinks, and iterating
        # one that once held 10,000 ids costs as much when it is empty (bench/turns.py).
        waiting: set[str] = set()
        for eid in self.unsettled:
            ev = self.evidence.get(eid)
            if ev is None:  # numbered but not held (register fills both at once): nothing to index
                continue
            if ev.status not in _FINAL:
                waiting.add(eid)
                continue
            if ev.completed:
                self.completed.add((ev.task, ev.node, ev.tool))
                self.completed.add((ev.task, ev.node, None))
            if ev.status == _SUCCESS and ev.values:
                keys: set[tuple[Any, ...]] = set()
                for sub in ev.values.values():
                    _scalars(sub, keys)
                for key in keys:
                    self.by_value.setdefault(key, []).append(eid)
        self.unsettled = waiting

    def open_of(self, task: str, node: str) -> list[Evidence]:
        """The node's records not settled yet (STARTED, UNKNOWN, UNKNOWN_PRE_CALL), oldest first."""
        out = [ev for ev in (self.evidence.get(eid) for eid in self.unsettled)
               if ev is not None and ev.task == task and ev.node == node and ev.status not in _FINAL]
        return sorted(out, key=lambda ev: ev.seq)

    def completed_in(self, task: str, node: str, tool: str | None = None) -> bool:
        """A record of the node completed (§10.2), of `tool` when given."""
        return (task, node, tool) in self.completed

    def holding(self, value: Any) -> list[str]:
        """Ids of settled records whose extracts hold the scalar `value` somewhere."""
        key = scalar_key(value)
        if key is None:
            return []
        try:
            return self.by_value.get(key, [])
        except TypeError:
            return []


class EntityIndex:
    """The session's entity index by id, and the newest entity by type and by (type, id)."""

    def __init__(self, entities: list[dict[str, Any]]) -> None:
        self.entities = entities
        self.upto = 0
        self.id_keys: set[tuple[Any, ...]] = set()
        self.id_texts: set[str] = set()
        self.newest: dict[tuple[str, str | None], dict[str, Any]] = {}

    def sync(self) -> "EntityIndex":
        """Take in entities appended since the last call."""
        for ent in self.entities[self.upto:]:
            ent_id = ent.get("id")
            try:
                key = scalar_key(ent_id)
                if key is not None:
                    self.id_keys.add(key)
            except TypeError:
                pass
            self.id_texts.add(str(ent_id))
            self.newest[(str(ent.get("type")), None)] = ent
            self.newest[(str(ent.get("type")), str(ent_id))] = ent
        self.upto = len(self.entities)
        return self

    def has_id(self, value: Any) -> bool:
        """An entity's id equals `value` (or, for a non-boolean, its text does)."""
        key = scalar_key(value)
        try:
            if key is not None and key in self.id_keys:
                return True
        except TypeError:
            pass
        return not isinstance(value, bool) and str(value) in self.id_texts

    def latest(self, entity_type: str, entity_id: str | None) -> dict[str, Any] | None:
        """The newest entity of a type (with that id when given)."""
        return self.newest.get((entity_type, entity_id))


@dataclass
class Indexes:
    """A session's two indexes, built on first use and rebuilt when the list they index is
    replaced (a reloaded session); kept by its env (`turn_env.TurnEnv.indexes`)."""

    evidence: EvidenceIndex | None = None
    entities: EntityIndex | None = None


class Indexed(Protocol):
    """What the indexes read of a session: its records, its state and where the indexes are kept."""

    session: SessionState
    evidence: dict[str, Evidence]
    indexes: Indexes


def evidence_index(env: Indexed) -> EvidenceIndex:
    """The index of a session's evidence, caught up. Kept by the session's env, so it lives and
    dies with it; a session whose evidence dict was replaced (reloaded) gets a new one."""
    index = env.indexes.evidence
    if index is None or index.evidence is not env.evidence:
        index = env.indexes.evidence = EvidenceIndex(env.evidence)
    # ids are e1, e2, … (evidence.register); the dict's size covers records put there directly
    index.sync(max(env.session.next_evidence, len(env.evidence) + 1))
    return index


def entity_index(env: Indexed) -> EntityIndex:
    """The index of a session's entity list, caught up (kept by the session's env)."""
    entities = env.session.entities
    index = env.indexes.entities
    if index is None or index.entities is not entities or index.upto > len(entities):
        index = env.indexes.entities = EntityIndex(entities)
    return index.sync()
