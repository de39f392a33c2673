"""Rule IR -> straight-line Python in the skill's validator module (docs/reference/rules.md).

Each rule becomes one function `_<tool>__rule__<name>(r)` over the runtime's rule scope `r`
(`skillc.runtime.rules.Scope`): its `let` bindings as assignments, its guard as an early
`return cel.SKIPPED`, its expression as one `return cel.result(…)`. Every operator is a call of
`skillc.runtime.cel`; `&&`, `||` and the macros take lambdas, so CEL's short-circuit and
error-absorbing semantics hold. Contract text reaches the code only as literals (`literal`,
`comment`); a CEL name becomes `v_<name>` (CEL names are ASCII identifiers, so the result is one
too, and never a Python keyword or builtin).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillc.compiler import ir
from skillc.compiler import rules_ast as A
from skillc.compiler.codegen import Code, UnsafeLiteral, comment, literal
from skillc.compiler.rules_syntax import RuleError, parse_rule_expr

# The names a rule sees, and the scope attribute each one reads.
ROOTS: dict[str, str] = {"args": "r.args", "platform": "r.platform", "shared": "r.shared", "inputs": "r.inputs",
                         "now": "r.now"}
NAMESPACES = ("evidence", "latest")

_BINARY = {"+": "cel.add", "-": "cel.sub", "*": "cel.mul", "/": "cel.div", "%": "cel.mod", "==": "cel.eq",
           "!=": "cel.ne", "<": "cel.lt", "<=": "cel.le", ">": "cel.gt", ">=": "cel.ge", "in": "cel.in_"}
_FUNCTIONS = {"size": "cel.size", "int": "cel.to_int", "double": "cel.to_double", "string": "cel.to_string",
              "bool": "cel.to_bool", "dyn": "cel.dyn", "timestamp": "cel.timestamp", "duration": "cel.duration",
              "decimal": "cel.to_decimal", "sum": "cel.sum_", "min": "cel.min_", "max": "cel.max_",
              "matches": "cel.matches"}
_METHODS = {"size": "cel.size", "contains": "cel.contains", "startsWith": "cel.starts_with",
            "endsWith": "cel.ends_with", "matches": "cel.matches", "lowerAscii": "cel.lower_ascii",
            "upperAscii": "cel.upper_ascii", "trim": "cel.trim"}
TIME_PARTS = ("getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
              "getMinutes", "getSeconds", "getMilliseconds")
_MACROS = {"all": "cel.all_", "exists": "cel.exists", "exists_one": "cel.exists_one", "filter": "cel.filter_"}


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def local_name(name: str) -> str:
    """The Python name of a CEL `let` binding or macro variable."""
    return "v_" + name


def namespace_tool(node: A.Node) -> tuple[str, str] | None:
    """`evidence.T`, `latest.T`, `evidence['t-1']`: (namespace, tool) for such a node, else None."""
    if isinstance(node, A.Select) and isinstance(node.operand, A.Ident) and node.operand.name in NAMESPACES:
        return node.operand.name, node.field
    if (isinstance(node, A.Index) and isinstance(node.operand, A.Ident) and node.operand.name in NAMESPACES
            and isinstance(node.index, A.Lit) and node.index.kind == "string"):
        return node.operand.name, node.index.value
    return None


@dataclass
class Emitter:
    """Python for the nodes of one expression text; `bound` are the CEL names bound here (lets
    and macro variables), which shadow nothing: the checker refuses a let named like a root."""

    text: str
    bound: frozenset[str] = frozenset()

    def src(self, node: A.Node) -> str:
        """The expression's own text of a node (for messages naming what was missing)."""
        return self.text[node.pos[0]:node.pos[1]]

    def code(self, node: A.Node) -> str:
        """Python evaluating `node`."""
        if isinstance(node, A.Lit):
            return str(literal(node.value))
        if isinstance(node, A.Ident):
            if node.name in self.bound:
                return local_name(node.name)
            if node.name in ROOTS:
                return ROOTS[node.name]
            return f"r.var({literal(node.name)})"  # a `rules eval --vars` name (a contract's checker refuses others)
        ns = namespace_tool(node)
        if ns is not None:
            kind, tool = ns
            return f"r.{kind}({literal(tool)})"
        if isinstance(node, A.Select):
            return f"cel.select({self.code(node.operand)}, {literal(node.field)}, {literal(self.src(node))})"
        if isinstance(node, A.Has):
            return f"cel.has({self.code(node.operand)}, {literal(node.field)}, {literal(self.src(node))})"
        if isinstance(node, A.Index):
            return f"cel.index({self.code(node.operand)}, {self.code(node.index)}, {literal(self.src(node))})"
        if isinstance(node, A.ListLit):
            return "[" + ", ".join(self.code(i) for i in node.items) + "]"
        if isinstance(node, A.MapLit):
            pairs = ", ".join(f"({self.code(k)}, {self.code(v)})" for k, v in node.entries)
            return f"cel.make_map([{pairs}])"
        if isinstance(node, A.Unary):
            return f"cel.{'not_' if node.op == '!' else 'neg'}({self.code(node.operand)})"
        if isinstance(node, A.Binary):
            if node.op == "&&":
                return f"cel.and_(lambda: {self.code(node.left)}, lambda: {self.code(node.right)})"
            if node.op == "||":
                return f"cel.or_(lambda: {self.code(node.left)}, lambda: {self.code(node.right)})"
            return f"{_BINARY[node.op]}({self.code(node.left)}, {self.code(node.right)})"
        if isinstance(node, A.Cond):
            return f"({self.code(node.then)} if cel.truth({self.code(node.cond)}) else {self.code(node.other)})"
        if isinstance(node, A.Macro):
            inner = Emitter(self.text, self.bound | {node.var})
            var = local_name(node.var)
            if node.kind == "map":
                fn = f"lambda {var}: {inner.code(node.transform)}" if node.transform is not None else ""
                if node.pred is not None:
                    return f"cel.map_({self.code(node.target)}, {fn}, lambda {var}: {inner.code(node.pred)})"
                return f"cel.map_({self.code(node.target)}, {fn})"
            assert node.pred is not None
            return f"{_MACROS[node.kind]}({self.code(node.target)}, lambda {var}: {inner.code(node.pred)})"
        if isinstance(node, A.Call):
            return self._call(node)
        raise AssertionError(f"unhandled rule node {node!r}")  # pragma: no cover - the parser makes no other

    def _call(self, node: A.Call) -> str:
        args = [self.code(a) for a in node.args]
        if node.target is None:
            if node.func == "origin" and len(args) == 1:
                return f"r.origin({args[0]}, {literal(self.src(node.args[0]))})"
            if node.func not in _FUNCTIONS:  # the checker refuses it; codegen never guesses
                raise UnsafeLiteral(f"unknown rule function {node.func!r}")
            return f"{_FUNCTIONS[node.func]}({', '.join(args)})"
        target = self.code(node.target)
        if node.func in TIME_PARTS:
            return f"cel.ts_part({target}, {literal(node.func)}{''.join(', ' + a for a in args)})"
        if node.func not in _METHODS:
            raise UnsafeLiteral(f"unknown rule method {node.func!r}")
        return f"{_METHODS[node.func]}({', '.join([target] + args)})"


@dataclass
class RulePlan:
    """One rule ready to render: its parsed texts (lets in order) and which lets the guard needs."""

    name: str
    message: str
    expr_text: str
    expr: A.Node
    when_text: str | None = None
    when: A.Node | None = None
    lets: tuple[tuple[str, str, A.Node], ...] = ()  # (name, text, node)
    guard_lets: frozenset[str] = frozenset()  # lets the guard uses (directly or through another let)


def names_used(node: A.Node, bound: frozenset[str] = frozenset()) -> set[str]:
    """The free names an expression reads (macro variables excluded)."""
    if isinstance(node, A.Ident):
        return set() if node.name in bound else {node.name}
    out: set[str] = set()
    if isinstance(node, A.Macro):
        out |= names_used(node.target, bound)
        for n in (node.pred, node.transform):
            if n is not None:
                out |= names_used(n, bound | {node.var})
        return out
    for c in A.children(node):
        out |= names_used(c, bound)
    return out


def plan_rule(rule: ir.Rule) -> RulePlan:
    """The parsed rule codegen renders (the front end has already refused a rule that fails here)."""
    if rule.name is None or rule.expr is None or rule.message is None:
        raise UnsafeLiteral("a rule without name, expr or message")  # the front end refuses it first
    for let in rule.lets:
        # a let's name becomes a Python name: only a CEL identifier may (the front end says so too)
        if not _IDENT.fullmatch(let.name) or let.name in ROOTS or let.name in NAMESPACES:
            raise UnsafeLiteral(f"rule let name {let.name!r} is not an identifier")
    try:
        lets = tuple((let.name, let.text, parse_rule_expr(let.text)) for let in rule.lets)
        when = parse_rule_expr(rule.when) if rule.when is not None else None
        expr = parse_rule_expr(rule.expr)
    except RuleError as exc:  # the front end reports it first, with its place
        raise UnsafeLiteral(f"rule {rule.name!r}: {exc.message}") from None
    needed: set[str] = set()
    if when is not None:
        let_names = {name for name, _, _ in lets}
        needed = names_used(when) & let_names
        for name, _, node in reversed(lets):  # a needed let's own lets (only earlier ones) are needed too
            if name in needed:
                needed |= names_used(node) & let_names
    return RulePlan(name=rule.name, message=rule.message, expr_text=rule.expr, expr=expr,
                    when_text=rule.when, when=when, lets=lets, guard_lets=frozenset(needed))


def rule_body(plan: RulePlan) -> list[str]:
    """The statements of a rule function (without indentation): lets the guard needs, the guard,
    the other lets, the rule's value."""
    lines: list[str] = []
    bound: frozenset[str] = frozenset()

    def let_line(name: str, text: str, node: A.Node) -> str:
        return f"{local_name(name)} = {Emitter(text, bound).code(node)}"

    for name, text, node in plan.lets:
        if name in plan.guard_lets:
            lines.append(let_line(name, text, node))
            bound = bound | {name}
    if plan.when is not None and plan.when_text is not None:
        guard = Emitter(plan.when_text, bound).code(plan.when)
        lines.append(f'if not cel.truth({guard}, "when"):')
        lines.append("    return cel.SKIPPED")
    for name, text, node in plan.lets:
        if name not in plan.guard_lets:
            lines.append(let_line(name, text, node))
            bound = bound | {name}
    lines.append(f"return cel.result({Emitter(plan.expr_text, bound).code(plan.expr)})")
    return lines


def rule_comments(plan: RulePlan) -> list[Code]:
    """Reviewer comments above a rule function: its texts as literals, one per line."""
    out = [Code(f"rule {comment(plan.name)}")]
    if plan.when_text is not None:
        out.append(Code(f"  when: {comment(plan.when_text)}"))
    for name, text, _ in plan.lets:
        out.append(Code(f"  let {name}: {comment(text)}"))
    out.append(Code(f"  expr: {comment(plan.expr_text)}"))
    return out


def rule_view(fn: Code, plan: RulePlan) -> dict[str, Any]:
    """What the module template renders for one rule: comments, the function and its RuleMeta."""
    meta = Code(f"rt.RuleMeta({literal(plan.name)}, {fn}, {literal(plan.message)})")
    return {"fn": fn, "notes": rule_comments(plan), "body": [Code(line) for line in rule_body(plan)], "meta": meta}
