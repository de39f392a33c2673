"""Trace event types are spelled once (runtime/words/events.py): no runtime or CLI module spells one
as a bare string, and a vocab word keeps a trace line byte-identical to the plain string's (the
reference's table of events and their fields: tests/runtime/test_event_types.py).

And events are read typed: a module tells event types apart by a handler table keyed by
`EventName` or by comparing the event's own `ev["type"]`, which narrows the `TraceEvent` union to
the member whose fields mypy --strict then checks. A type read into an alias (`kind = ev["type"]`)
or by `.get("type")` narrows nothing, so no comparison with an `EventName` (or a set of them) may
take one."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import skillc.runtime
from skillc.runtime.text import jsontext
from skillc.runtime.words.events import EventName

ROOT = Path(skillc.runtime.__file__).parent.parent
SPELLED = re.compile(r"""["'](%s)["']""" % "|".join(re.escape(name.value) for name in EventName if name != "error"))


def test_no_module_spells_an_event_type() -> None:
    spelled = []
    for folder in ("runtime", "cli"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "runtime" / "words" / "events.py":
                continue
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if SPELLED.search(code) and not code.lstrip().startswith(("skillc ", "jq ")):
                    spelled.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    # docstrings and examples may name an event; code names it through EventName
    spelled = [s for s in spelled if "select(.type" not in s]
    assert not spelled, "\n".join(spelled)


def test_a_word_writes_the_same_trace_line() -> None:
    event = {"seq": 1, "type": EventName.TOOL_CALL, "session": "s1", "turn": 1}
    assert jsontext.dumps(event) == jsontext.dumps({**event, "type": "tool.call"})
    assert EventName.TOOL_CALL == "tool.call" and "tool.call" in frozenset({EventName.TOOL_CALL})


def _event_words(node: ast.expr, sets: set[str]) -> bool:
    """`EventName.X`, a literal tuple/set/list holding one, or a known set of event types."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "EventName":
        return True
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        return any(_event_words(e, sets) for e in node.elts)
    return (isinstance(node, ast.Name) and node.id in sets) or (isinstance(node, ast.Attribute) and node.attr in sets)


def _own_type(node: ast.expr) -> bool:
    """`<event>["type"]`: the read that narrows a TypedDict union."""
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "type"


def _mentions_event_name(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "EventName"
               for n in ast.walk(node))


def event_type_sets(trees: list[ast.Module]) -> set[str]:
    """Names a module binds to a collection of event types (FLUSH_AT, TRIGGERS, …: not the handler
    tables, which are looked up), and the names they are imported as."""
    sets: set[str] = set()
    for tree in trees:
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if value is None or isinstance(value, ast.Dict) or not _mentions_event_name(value):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[union-attr]
            sets.update(t.id for t in targets if isinstance(t, ast.Name))
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                sets.update(a.asname for a in node.names if a.name in sets and a.asname)
    return sets


def untyped_reads(tree: ast.Module, sets: set[str]) -> Iterator[int]:
    """The lines that compare something other than an event's own `["type"]` with event types."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_event_words(o, sets) for o in operands) and not any(_own_type(o) for o in operands):
                yield node.lineno
        elif isinstance(node, ast.Match) and not _own_type(node.subject):
            if any(isinstance(c.pattern, ast.MatchValue) and _event_words(c.pattern.value, sets) for c in node.cases):
                yield node.lineno


def test_the_scan_finds_an_alias_a_get_and_a_match() -> None:
    bad = [
        'kind = ev["type"]\nif kind == EventName.TOOL_CALL:\n    pass',
        'if ev.get("type") == EventName.ERROR:\n    pass',
        'x = [e for e in events if e.get("type") in (EventName.NODE_STARTED, EventName.NODE_RESUMED)]',
        'FLUSH = frozenset({EventName.MCP_INVOKED})\nif kind in FLUSH:\n    pass',
        'match kind:\n    case EventName.TURN_REPLY:\n        pass',
    ]
    good = [
        'if ev["type"] == EventName.TOOL_CALL:\n    pass',
        'if ev["type"] in (EventName.NODE_STARTED, EventName.NODE_RESUMED):\n    pass',
        'FLUSH = frozenset({EventName.MCP_INVOKED})\nif ev["type"] in FLUSH:\n    pass',
        'handler = HANDLERS.get(ev["type"])',
        'if kind == Suspension.APPROVAL:\n    pass',
    ]
    for text in bad:
        tree = ast.parse(text)
        assert list(untyped_reads(tree, event_type_sets([tree]))), text
    for text in good:
        tree = ast.parse(text)
        assert not list(untyped_reads(tree, event_type_sets([tree]))), text


def test_no_module_reads_an_event_type_untyped() -> None:
    paths = [p for folder in ("runtime", "cli") for p in sorted((ROOT / folder).rglob("*.py"))]
    trees = {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in paths}
    sets = event_type_sets(list(trees.values()))
    assert {"FLUSH_AT", "TRIGGERS", "AUDIT_TRIGGERS"} <= sets  # the scan sees the sets the code uses
    found = [f"{p.relative_to(ROOT)}:{line}" for p, tree in trees.items() for line in untyped_reads(tree, sets)]
    assert not found, "compare the event's own ev[\"type\"] (or look its handler up): " + ", ".join(found)
