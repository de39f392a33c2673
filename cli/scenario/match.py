"""Matching expectations against trace events (docs/reference/scenarios.md, "Matching").

This must agree with the conformance suite's independent checker (`check.py`, beside the repository
when present: tests/helpers/conformance.py); a test runs both on the
same traces.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

from skillc.runtime.words.event_types import TraceEvent
from skillc.runtime.words.events import EventName

MISSING: Any = object()


def _operator(expected: Any) -> tuple[str, Any] | None:
    if isinstance(expected, dict) and len(expected) == 1:
        ((key, arg),) = expected.items()
        if isinstance(key, str) and key.startswith("$"):
            return key, arg
    return None


def _apply(op: str, arg: Any, actual: Any) -> bool:
    if op == "$absent":
        return (actual is MISSING) == bool(arg)
    if op == "$not_contains":
        return actual is MISSING or (isinstance(actual, str) and str(arg) not in actual)
    if op == "$contains":
        return isinstance(actual, str) and str(arg) in actual
    if op == "$prefix":
        return isinstance(actual, str) and actual.startswith(str(arg))
    if op == "$in":
        return any(matches(option, actual) for option in arg)
    raise ValueError(f"unknown operator {op}")


def matches(expected: Any, actual: Any) -> bool:
    """Does `actual` (MISSING when absent) satisfy `expected`?"""
    if expected == "*":
        return actual is not MISSING
    op = _operator(expected)
    if op:
        return _apply(op[0], op[1], actual)
    if actual is MISSING:
        return expected is None
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(matches(v, actual.get(k, MISSING)) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(
            matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    return bool(expected == actual)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def closest(expected: dict[str, Any], events: list[TraceEvent], after: int = 0) -> TraceEvent | None:
    """The event of the expected type that matches the most of its keys (for a readable report);
    on a tie, the first one at or after index `after` (where the ordered search was looking)."""
    best, score = None, (-1, False)
    for index, ev in enumerate(events):
        if isinstance(expected.get("type"), str) and ev.get("type") != expected["type"]:
            continue
        s = (sum(1 for k, v in expected.items() if matches(v, ev.get(k, MISSING))), index >= after)
        if s > score:
            best, score = ev, s
    return best


def check(scenario: dict[str, Any], events: list[TraceEvent]) -> list[str]:
    """Every unmet expectation of the scenario, as readable lines."""
    problems: list[str] = []
    last = 0
    for ev in events:
        for key in ("seq", "type", "session", "turn"):
            if key not in ev:
                problems.append(f"event {_show(ev)[:120]} lacks '{key}'")
        seq = ev.get("seq", 0)
        if isinstance(seq, int) and seq <= last:
            problems.append(f"seq {seq} does not increase (after {last})")
        last = seq if isinstance(seq, int) else last
    for number, turn in enumerate(scenario.get("turns") or [], 1):
        in_turn = [ev for ev in events if ev.get("turn") == number]
        if not in_turn:
            problems.append(f"turn {number}: no events")
        pos = 0
        for exp in turn.get("expect") or []:
            start = pos
            while pos < len(in_turn) and not matches(exp, in_turn[pos]):
                pos += 1
            if pos == len(in_turn):
                line = f"turn {number}: expected, in order, {_show(exp)}"
                near = closest(exp, in_turn, start) if isinstance(exp, dict) else None
                if near is not None:
                    diff = {k: near.get(k, "<missing>") for k, v in exp.items() if not matches(v, near.get(k, MISSING))}
                    line += f"\n    nearest: seq {near.get('seq')} differs in {_show(diff)}"
                    if in_turn.index(near) < start:
                        line += " (and comes before the previous expectation's match)"
                problems.append(line)
                break
            pos += 1
        for exp in turn.get("absent") or []:
            for ev in in_turn:
                if matches(exp, ev):
                    problems.append(f"turn {number}: absent {_show(exp)} but seq {ev.get('seq')} matches")
                    break
    final = scenario.get("final") or {}
    if "invocations" in final:
        seen = Counter(ev["tool"] for ev in events if ev["type"] == EventName.MCP_INVOKED)
        for tool, count in final["invocations"].items():
            if seen.get(tool, 0) != count:
                problems.append(f"final: {tool} invoked {seen.get(tool, 0)} times, expected {count}")
    return problems
