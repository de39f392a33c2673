"""The trace's event types, spelled once: every event a session writes has one of these `type`s
(docs/reference/scenarios.md lists each with its fields; a test keeps the two the same).

`EventName` members are vocab words (`StrEnum`): equal to, hashed and serialised as their plain
strings, so trace lines stay byte-identical and traces read back from files (plain strings)
compare equal. Producers (`SessionEnv.emit`) and consumers (the AG-UI mapping, the audit chain,
telemetry, the CLI renderer, the scenario checker) name a type only through this module.
"""
from __future__ import annotations

from skillc.runtime.words.vocab import Word


class EventName(Word):
    """A trace event's `type`, in the order a turn writes them."""

    STUDIO_STALE = "studio.stale"  # the service noticed its studio source unreachable (before the turn)
    TURN_STARTED = "turn.started"
    TURN_REPLAYED = "turn.replayed"  # a re-sent message answered with its first reply
    SKILL_REJECTED = "skill.rejected"
    AGENT_ROUTED = "agent.routed"
    TASK_PLANNED = "task.planned"
    NODE_STARTED = "node.started"
    NODE_SKIPPED = "node.skipped"
    TOOL_CALL = "tool.call"
    MCP_INVOKED = "mcp.invoked"
    OUTPUT_SET = "output.set"
    NODE_SUSPENDED = "node.suspended"
    NODE_RESUMED = "node.resumed"
    WRITE_SETTLED = "write.settled"
    AUDIT_APPROVAL = "audit.approval"  # follows node.suspended / node.resumed of an approval
    AUDIT_SETTLEMENT = "audit.settlement"  # follows write.settled
    NODE_FINISHED = "node.finished"
    TASK_FINISHED = "task.finished"
    TURN_REPLY = "turn.reply"
    ERROR = "error"


EVENT_NAMES: frozenset[EventName] = frozenset(EventName)
