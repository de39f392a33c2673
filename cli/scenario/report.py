"""A scenario's verdict as text: what failed and where, and what explains it.

A failing run shows the unmet expectations (turn, expectation, nearest event), runtime errors,
the studio's diagnostics (a rejected skill explains a turn that did nothing), the replies the user
got, and the events of the turn around the first unmet expectation. A passing run still shows the
studio's warnings: a misspelled rule key passes its scenario while its check is silently gone.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillc.runtime.words.event_types import TraceEvent
from skillc.runtime.words.events import EventName

if TYPE_CHECKING:
    from skillc.scenario.runner import ScenarioResult

AROUND = 12  # events of the failing turn shown (a turn of a scenario rarely has more)
# what identifies an event in one line, after its type
_FIELDS = ("agent", "skill", "node", "tool", "error", "kind", "state", "status", "via", "reason", "message", "text")


def event_line(ev: TraceEvent) -> str:
    """`seq 7 tool.call tool=cms_article_create error=APPROVAL_REQUIRED`: one event, one line."""
    fields: Mapping[str, Any] = ev  # whichever of _FIELDS its type has
    parts = [f"seq {ev.get('seq')} {ev.get('type')}"]
    for key in _FIELDS:
        if fields.get(key) not in (None, ""):
            value = fields[key] if isinstance(fields[key], str) else json.dumps(fields[key], ensure_ascii=False, default=str)
            parts.append(f"{key}={value[:80] + '…' if len(value) > 80 else value}")
    if ev["type"] == EventName.SKILL_REJECTED:
        codes = [d.get("code") for d in ev.get("diagnostics") or [] if isinstance(d, dict)]
        parts.append(f"diagnostics={','.join(str(c) for c in codes)}")
    return " ".join(parts)


def _failing_turn(problems: list[str]) -> int | None:
    for problem in problems:
        found = re.match(r"turn (\d+):", problem)
        if found:
            return int(found.group(1))
    return None


def _around(result: ScenarioResult) -> list[str]:
    """The events of the turn of the first unmet expectation (at most AROUND, the last ones)."""
    number = _failing_turn(result.problems)
    if number is None:
        return []
    in_turn = [ev for ev in result.events if ev.get("turn") == number]
    if not in_turn:
        return []
    shown = in_turn[-AROUND:]
    head = f"  trace of turn {number}" + (f" (last {len(shown)} of {len(in_turn)} events)" if len(shown) < len(in_turn) else "") + ":"
    return [head] + [f"    {event_line(ev)}" for ev in shown]


def _diagnostic_lines(result: ScenarioResult, *, warnings_only: bool) -> list[str]:
    from skillc.compiler.diagnostics import render

    lines = []
    for d in result.diagnostics:
        if warnings_only and d.severity != "warning":
            continue
        if d.file and os.path.isabs(d.file):  # as the user would type it, from where they ran the scenario
            relative = os.path.relpath(d.file)
            d = d.model_copy(update={"file": d.file if relative.startswith("..") else relative})
        first, *rest = render(d).splitlines()
        lines.append(f"  {first}")
        lines += [f"    {line}" for line in rest]
    return lines


def report(result: ScenarioResult, *, verbose: bool = True) -> str:
    """A readable verdict: what failed and where (turn, expectation, nearest event), runtime
    errors, the studio's diagnostics, the replies and the trace around the first unmet
    expectation; unused script entries and notes (unless `verbose` is False). A pass shows the
    studio's warnings."""
    if result.error:
        return f"ERROR {result.path}\n  {result.error}"
    status = "PASS" if result.ok else "FAIL"
    lines = [f"{status} {result.name} ({result.path}, {len(result.events)} events)"]
    if result.crash:
        lines.append(f"  ! the runtime raised {result.crash}")
    lines += [f"  - {p}" for p in result.problems]
    if not result.ok:
        errors = [e for e in result.events if e["type"] == EventName.ERROR]
        lines += [f"  ! turn {e.get('turn')}: runtime error: {e.get('message')}" for e in errors]
        if result.diagnostics:
            lines.append("  the studio's diagnostics:")
            lines += _diagnostic_lines(result, warnings_only=False)
        if result.replies:
            lines.append("  replies:")
            lines += [f"    {reply}" for reply in result.replies]
        lines += _around(result)
    else:
        warned = _diagnostic_lines(result, warnings_only=True)
        if warned:
            lines.append("  the studio's warnings (the scenario passed; `skillc check` says the same):")
            lines += warned
    if verbose or not result.ok:
        lines += [f"  · {n}" for n in result.notes]
        lines += [f"  · {u}" for u in result.unused]
    return "\n".join(lines)
