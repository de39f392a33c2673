"""Replay: judge recorded agent conversations with the runtime's own tool-call chain, calling no
tool (`skillc replay`, docs/replay.md).

recorded (the conversation model) <- openai_format / trace_format (readers) -> judge (the chain
over a `ReplayEnv`) -> report (totals, the JSON document); `run` ties them together.
"""
from __future__ import annotations

from skillc.runtime.replay.judge import CallVerdict, ConversationResult, JudgeOptions, judge
from skillc.runtime.replay.report import Report, document, totals
from skillc.runtime.replay.run import replay, replay_async

__all__ = ["CallVerdict", "ConversationResult", "JudgeOptions", "Report", "document", "judge", "replay",
           "replay_async", "totals"]
