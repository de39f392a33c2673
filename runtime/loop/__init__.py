"""One node: its ReAct loop (`node`), the prompts and offered tools (`prompting`), its finish
checks (§10, `completion`), the builtin tools (§12, `builtins`, `envtools`). Imports `call`
(one tool call) and the folders below it, never the task graph or the session.
"""
