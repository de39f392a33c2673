"""`skillc diff` for a tool's `rules` (docs/reference/rules.md): which rule was removed, added,
loosened, tightened, or had its guard changed, with `risky` when calls it refused may now pass.

A rule removed is risky; one added is not. A changed expression is tightened only when the new
one is provably stricter (`old && more`), loosened when provably looser (`old || more`), and
otherwise "changed" — risky, since nothing shows it is not looser. Any change of a guard (`when`)
is risky: widened (the rule applies to more calls, `old || more` or the guard removed) or
narrowed (calls it checked are no longer checked), and a changed `let` is a changed rule.
"""
from __future__ import annotations

from typing import Any, Protocol

from skillc.compiler import rules_ast as A
from skillc.compiler.rules_syntax import RuleError, parse_rule_expr


class Sink(Protocol):
    """diff's change collector."""

    def add(self, kind: str, message: str, risky: bool = False, tool: str | None = None, arg: str | None = None,
            old: Any = None, new: Any = None) -> None: ...


def shape(node: A.Node) -> Any:
    """A node without its positions: two texts that differ only in spacing have one shape."""
    fields = [f for f in node.__dataclass_fields__ if f not in ("pos", "var_pos")]
    out: list[Any] = [type(node).__name__]
    for f in fields:
        v = getattr(node, f)
        if isinstance(v, tuple):
            v = tuple(tuple(shape(x) for x in i) if isinstance(i, tuple) else shape(i) if hasattr(i, "pos") else i
                      for i in v)
        elif hasattr(v, "pos"):
            v = shape(v)
        out.append(v)
    return tuple(out)


def _parsed(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return parse_rule_expr(text)
    except RuleError:
        return text


def _extends(new: Any, old: Any, op: str) -> bool:
    """new is `old op more` or `more op old` (as shapes)."""
    if not isinstance(new, A.Binary) or new.op != op or not hasattr(old, "pos"):
        return False
    return shape(old) in (shape(new.left), shape(new.right)) or _extends(new.left, old, op)


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "pos") and hasattr(b, "pos"):
        return bool(shape(a) == shape(b))
    return bool(a == b)


def compare_rules(c: Sink, tool: str, old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> None:
    """The changes to one tool's rules, by rule name."""
    t: dict[str, Any] = {"tool": tool}
    for name in old:
        if name not in new:
            c.add("rule.removed", f"rule {name} removed: calls it refused now pass ({old[name]['expr']})", True,
                  old=old[name], **t)
    for name in new:
        if name not in old:
            c.add("rule.added", f"rule {name} added: {new[name]['expr']}", old=None, new=new[name], **t)
            continue
        o, n = old[name], new[name]
        oe, ne = _parsed(o["expr"]), _parsed(n["expr"])
        lets_changed = o.get("lets") != n.get("lets")
        if not _same(oe, ne) or lets_changed:
            if not lets_changed and _extends(ne, oe, "&&"):
                c.add("rule.tightened", f"rule {name} tightened: {o['expr']} -> {n['expr']}", old=o, new=n, **t)
            elif not lets_changed and _extends(ne, oe, "||"):
                c.add("rule.loosened", f"rule {name} loosened: {o['expr']} -> {n['expr']}: calls it refused may pass",
                      True, old=o, new=n, **t)
            else:
                what = "its let bindings" if lets_changed and _same(oe, ne) else f"{o['expr']} -> {n['expr']}"
                c.add("rule.changed", f"rule {name} changed: {what} (not provably stricter: calls it refused may pass)",
                      True, old=o, new=n, **t)
        ow, nw = _parsed(o.get("when")), _parsed(n.get("when"))
        if not _same(ow, nw):
            if nw is None:
                c.add("rule.guard_widened", f"rule {name} now applies to every call (guard {o['when']} removed)", True,
                      old=o, new=n, **t)
            elif ow is not None and _extends(nw, ow, "||"):
                c.add("rule.guard_widened", f"rule {name} guard widened: {o['when']} -> {n['when']}", True, old=o, new=n, **t)
            elif ow is None or _extends(nw, ow, "&&"):
                c.add("rule.guard_narrowed", f"rule {name} applies to fewer calls: guard {o.get('when') or '-'} -> "
                      f"{n['when']}: calls it refused may pass", True, old=o, new=n, **t)
            else:
                c.add("rule.guard_changed", f"rule {name} guard changed: {o['when']} -> {n['when']}", True, old=o, new=n, **t)
        if o["message"] != n["message"]:
            c.add("rule.message", f"rule {name}: message changed", old=o["message"], new=n["message"], **t)
