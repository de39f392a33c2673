"""What generated decision code may ask of the runtime (support.BindContext), for one node.

Evidence resolution follows §9: this node first, then its upstream nodes nearest first (along
dependency edges, delegated nodes included); within a node the newest evidence first.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

from skillc.runtime.compiled.paths import get_path, parse_path
from skillc.runtime.compiled.values import MISSING, canonical
from skillc.runtime.call.usermatch import Said, mentioned, read_message
from skillc.runtime.seam.indexes import entity_index, evidence_index
from skillc.runtime.seam.state import Evidence, NodeState
from skillc.runtime.words.vocab import EvidenceStatus, NodeStatus

# read on every evidence lookup: an enum member's attribute read costs ~15x a global's (CPython 3.11)
_SUCCESS = EvidenceStatus.SUCCESS

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv


def upstream_order(task_nodes: dict[str, NodeState], node: NodeState) -> list[NodeState]:
    """This node, then its upstream nodes nearest first (breadth-first over deps)."""
    if not node.deps:  # the common case: a node with nothing upstream
        return [node]
    seen = {node.id}
    order = [node]
    frontier = [node]
    while frontier:
        nxt = []
        for n in frontier:
            for dep in reversed(n.deps):
                if dep not in seen and dep in task_nodes:
                    seen.add(dep)
                    nxt.append(task_nodes[dep])
        order.extend(nxt)
        frontier = nxt
    return order


def _nodes(value: Any, containers: bool) -> Iterator[Any]:
    """Every value inside an extract: its scalars, and (when asked) its objects and lists too."""
    if isinstance(value, dict):
        if containers:
            yield value
        for v in value.values():
            yield from _nodes(v, containers)
    elif isinstance(value, list):
        if containers:
            yield value
        for v in value:
            yield from _nodes(v, containers)
    else:
        yield value


def _same(a: Any, b: Any) -> bool:
    """Exact equality, JSON-typed: 3 == 3.0 but 3 != "3" and True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _holds(found: Any, value: Any) -> bool:
    """Whether a named field's value is `value` or, where the path mapped over a list (or the
    field is a list), holds it: scalars JSON-typed (as evidence_has), containers as canonical JSON."""
    if found is MISSING:
        return False
    if isinstance(value, (dict, list)) and isinstance(found, (dict, list)) and canonical(found) == canonical(value):
        return True
    if isinstance(found, list):
        return any(_holds(item, value) for item in found)
    return not isinstance(value, (dict, list)) and _same(value, found)


_RECENT: dict[int, tuple[list[dict[str, Any]], int, int, list[Said]]] = {}


def _recent_user_texts(messages: list[dict[str, Any]], limit: int) -> list[Said]:
    """The last `limit` user messages, read for USER matching: worked out once per new message of
    a session rather than once per argument checked (a small bounded cache)."""
    hit = _RECENT.get(id(messages))
    if hit is None or hit[0] is not messages or hit[1] != len(messages) or hit[2] != limit:
        if len(_RECENT) >= 256:
            _RECENT.clear()
        hit = _RECENT[id(messages)] = (messages, len(messages), limit,
                                       [read_message(m["text"]) for m in messages[-limit:]])
    return hit[3]


class NodeContext:
    """The BindContext of one node of one task."""

    def __init__(self, env: SessionEnv, node: NodeState) -> None:
        self.env = env
        self.node = node
        self.platform = env.platform
        self.inputs = node.inputs
        self.shared = env.task.shared if env.task else {}
        self.session = env.session.values

    @property
    def outputs(self) -> dict[str, Any]:
        """This node's written outputs (key -> value), built when a decision asks for them."""
        return {k: v["value"] for k, v in self.node.outputs.items()}

    # ------------------------------------------------------------ evidence

    def visible_evidence(self) -> Iterator[Evidence]:
        """Business-successful evidence in §9 order (empty results included)."""
        node, held, success = self.node, self.env.evidence, _SUCCESS
        # a node with nothing upstream (the common case) is its own view, without the walk's call
        order = upstream_order(self.env.task.nodes if self.env.task else {node.id: node}, node) if node.deps else (node,)
        for n in order:
            for eid in reversed(n.evidence):
                ev = held.get(eid)
                if ev is not None and ev.status == success and ev.business_ok is not False:
                    yield ev

    def evidence_by_tool(self) -> tuple[dict[str, list[Any]], list[Any]]:
        """The response bodies of `visible_evidence` by tool (newest first) and all of them in §9
        order, in one pass without a generator: what a rule's scope reads, on every call of a
        tool whose rules read evidence."""
        node, held, success = self.node, self.env.evidence, _SUCCESS
        by_tool: dict[str, list[Any]] = {}
        seen: list[Any] = []
        ids: Iterable[str] = reversed(node.evidence)  # a node with nothing upstream: its own view
        if node.deps:
            order = upstream_order(self.env.task.nodes if self.env.task else {node.id: node}, node)
            ids = [eid for n in order for eid in reversed(n.evidence)]
        for eid in ids:
            ev = held.get(eid)
            if ev is not None and ev.status == success and ev.business_ok is not False:  # as visible_evidence
                body = ev.response
                seen.append(body)
                hit = by_tool.get(ev.tool)
                if hit is None:
                    by_tool[ev.tool] = [body]
                else:
                    hit.append(body)
        return by_tool, seen

    def evidence_value(self, key: str, parts: tuple[Any, ...]) -> Any:
        for ev in self.visible_evidence():
            if key in ev.values:
                value = get_path(ev.values[key], parts)
                if value is not MISSING:
                    return value
        return MISSING

    def evidence_has(self, value: Any) -> bool:
        # §5.3 "某个值": a scalar equals a scalar inside an extract; an object or list argument
        # (e.g. a list of ids) must equal an object or list found there, as canonical JSON.
        container = isinstance(value, (dict, list))
        if not container:
            # a scalar: the records holding it come from the session's value index (as cheap
            # with 10,000 records as with 10), then each is checked for §9 visibility
            ids = evidence_index(self.env).holding(value)
            if not ids:
                return False
            nodes = self.env.task.nodes if self.env.task else {self.node.id: self.node}
            visible = {n.id for n in upstream_order(nodes, self.node)}
            for eid in ids:
                ev = self.env.evidence.get(eid)
                if (ev is not None and ev.status == _SUCCESS and ev.business_ok is not False
                        and ev.task == self.node.task and ev.node in visible):
                    return True
            return False
        text = canonical(value)
        for ev in self.visible_evidence():
            for sub in ev.values.values():
                for node in _nodes(sub, container):
                    if container:
                        if isinstance(node, (dict, list)) and canonical(node) == text:
                            return True
                    elif _same(value, node):
                        return True
        return False

    def evidence_in(self, value: Any, fields: tuple[Any, ...]) -> bool:
        """Typed EVIDENCE: `value` is found at one of the named record fields — (tool or None,
        extract key, path inside the extract) — of visible successful evidence (§9's order);
        always within what evidence_has accepts, so naming fields only narrows."""
        for ev in self.visible_evidence():
            for tool, key, parts in fields:
                if (tool is None or ev.tool == tool) and key in ev.values:
                    if _holds(get_path(ev.values[key], parts), value):
                        return True
        return False

    # ------------------------------------------------------------ other sources

    def prior(self, entity_type: str, entity_id: str | None, attr: str | None) -> Any:
        ent = entity_index(self.env).latest(entity_type, entity_id)  # the newest of that type (and id)
        if ent is not None:
            if attr is None or attr == "displayName":
                return ent.get("name") if ent.get("name") is not None else MISSING
            if attr == "id":
                return ent["id"]
            return ent.get("attrs", {}).get(attr, MISSING)
        return MISSING

    def upstream_output(self, parts: tuple[Any, ...]) -> Any:
        nodes = self.env.task.nodes if self.env.task else {}
        for n in upstream_order(nodes, self.node)[1:]:
            if n.state != NodeStatus.DONE:
                continue
            outputs = {k: v["value"] for k, v in n.outputs.items()}
            value = get_path(outputs, parts)
            if value is not MISSING:
                return value
        return MISSING

    def user_mentions(self, param: str, value: Any) -> bool:
        answered = self.node.answered
        if answered is not None and param in answered.expected_fields:
            # §5.3 grants USER to whatever the model puts there. The stricter setting grants
            # nothing by itself: the value must be stated, and the answer is one of the recent
            # messages searched below ("I don't remember it" vouches for no user id).
            if not self.env.settings.follow_up_answer_must_contain:
                return True
        return mentioned(value, _recent_user_texts(self.env.session.user_messages,
                                                   self.env.settings.user_messages_searched))

    def _mapping_has(self, mapping: Any, param: str, value: Any) -> bool:
        found = get_path(mapping, parse_path(param, each=False))
        if found is MISSING:
            return False
        if isinstance(found, list) and not isinstance(value, list):
            return any(_same(value, f) for f in found)
        return _same(found, value) or canonical(found) == canonical(value)

    def node_output_has(self, param: str, value: Any) -> bool:
        return self._mapping_has(self.inputs, param, value) or self._mapping_has(self.outputs, param, value)

    def shared_has(self, param: str, value: Any) -> bool:
        return self._mapping_has(self.shared, param, value)

    def session_has(self, param: str, value: Any) -> bool:
        return self._mapping_has(self.session, param, value)

    def prior_has(self, value: Any, ref: tuple[Any, ...] | None) -> bool:
        if ref is not None:
            found = self.prior(*ref)
            return found is not MISSING and _same(found, value)
        return entity_index(self.env).has_id(value)
