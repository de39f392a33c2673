"""The task graph: routing, intent and planning (`planner`), providers (§7), running a task's
nodes in order, delegates (§15), output sharing (§8) and the turn's `Reply` (`tasks`).
Imports `loop` (one node) and the folders below it, never the session.
"""
