"""The runtime's words: the spec's enums and the runtime's own as `StrEnum`s (`vocab`), the §17
error table with `SkillcError` (`errors`), the trace's event types (`events`) and its events as
typed dicts, `TraceEvent` their union (`event_types`).
Imports nothing else of skillc.
"""
