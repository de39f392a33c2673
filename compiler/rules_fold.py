"""What the rule compiler works out from literals alone: a rule or guard whose value is fixed
(it reads no name, or `x || true`), and a `matches()` pattern outside textpattern's language."""
from __future__ import annotations

from typing import Any

from skillc.compiler import rules_ast as A
from skillc.compiler.rules_run import evaluate_node
from skillc.runtime import cel
from skillc.runtime.compiled import textpattern


def regex_problem(pattern: str) -> str | None:
    """Why a `matches()` pattern is refused, or None: the language of runtime/compiled/textpattern.py (the
    `MATCHES` operator's), which leaves out what needs backtracking (backreferences, lookaround,
    atomic or possessive groups) so every match runs in linear time."""
    problem = textpattern.pattern_problem(pattern)
    return None if problem is None else f"{problem[0]} (column {problem[1]} of the pattern)"


def constant_value(node: A.Node) -> tuple[bool, Any]:
    """(True, value) when a node reads no name at all (so its value is fixed), else (False, None);
    the value is worked out by the rule's own generated code (compiler.rules_run). A constant
    that cannot be decided has an `Undecidable` as its value."""
    if _reads_names(node):
        return False, None
    try:
        return True, evaluate_node(node, "")
    except cel.Undecidable as exc:
        return True, exc


def _reads_names(node: A.Node, bound: frozenset[str] = frozenset()) -> bool:
    if isinstance(node, A.Ident):
        return node.name not in bound
    if isinstance(node, A.Macro):
        inner = bound | {node.var}
        return _reads_names(node.target, bound) or any(
            _reads_names(n, inner) for n in (node.pred, node.transform) if n is not None)
    return any(_reads_names(c, bound) for c in A.children(node))


def fixed_truth(node: A.Node) -> bool | None:
    """True or False when a boolean expression's value does not depend on any name (also
    `x || true`, `x && false`), else None."""
    if isinstance(node, A.Binary) and node.op in ("&&", "||"):
        absorbing = node.op == "||"
        sides = [fixed_truth(node.left), fixed_truth(node.right)]
        if absorbing in sides:
            return absorbing
        if sides == [not absorbing, not absorbing]:
            return not absorbing
        return None
    if isinstance(node, A.Unary) and node.op == "!":
        inner = fixed_truth(node.operand)
        return None if inner is None else not inner
    const, value = constant_value(node)
    if const and isinstance(value, bool):
        return value
    return None


