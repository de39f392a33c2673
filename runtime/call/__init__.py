"""One tool call and what it leaves: the §13 chain (`chain`), its rules step (`rules`: a
contract's rules judged over `rules.Scope`), approval and idempotency (§14, `gate`), the node's
view of provenance (§5.3, §9: `context`, `usermatch`), evidence registered, settled and
verified (`evidence`) and every node state transition (`lifecycle`). Imports the seam and the
folders below it, never a node's loop or the session.
"""
