"""Rule IR -> straight-line Python in the skill's validator module (docs/reference/rules.md).

Each rule becomes one function `_<tool>__rule__<name>(r)` over the runtime's rule scope `r`
(`skillc.runtime.call.rules.Scope`): its `let` bindings as assignments, its guard as an early
`return cel.SKIPPED`, its expression as one `return cel.result(…)` (just `return …` when the
expression always yields a bool: a comparison, logic, `all`/`exists`). Every operator is a call of
`skillc.runtime.cel`, except where Python's own operator decides the same (`==`, `!=` and `in`
against string literals, `==` and `!=` between exact decimals, `sum` of decimals) and `map`/`filter`
(comprehensions); `&&`, `||` and the other macros take lambdas, so CEL's short-circuit and
error-absorbing semantics hold, except at the top of a rule, where `a && b && …` (or `||`) of bool
sides is statements and `all`/`exists` over a bool condition a loop, handing the whole to the
general helper when a side or item cannot be decided. A rule that reads a field has a fast form
first that reads fields by subscript; a missing field or a value that is not a map raises
KeyError/TypeError there and the general form (`cel.select`) decides, naming what was missing.
Contract text reaches the code only as literals (`literal`, `comment`); a CEL name becomes
`v_<name>` (CEL names are ASCII identifiers, so the result is one too, and never a Python keyword
or builtin).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from skillc.compiler import ir
from skillc.compiler import rules_ast as A
from skillc.compiler.codegen_literals import Code, UnsafeLiteral, comment, literal
from skillc.compiler.rules_names import CEL_FUNCTIONS, CEL_METHODS, NAMESPACES, ROOTS, TIME_PARTS
from skillc.compiler.rules_syntax import RuleError, parse_rule_expr


_BINARY = {"+": "cel.add", "-": "cel.sub", "*": "cel.mul", "/": "cel.div", "%": "cel.mod", "==": "cel.eq",
           "!=": "cel.ne", "<": "cel.lt", "<=": "cel.le", ">": "cel.gt", ">=": "cel.ge", "in": "cel.in_"}
_TYPED_OPS = ("==", "!=", "<", "<=", ">", ">=")  # compared with a number literal by type first (fast form)
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


@dataclass(frozen=True)
class Py:
    """Generated Python in a shape that can be laid out: an atom (`head` only), a call
    `head(args…)` (with `brackets` "[]" a list), a lambda `head` + body, or a conditional."""

    head: str
    args: tuple["Py", ...] = ()
    kind: str = "atom"  # atom | call | lambda | cond | comp (`[elt for head in iterable]`) | infix (`(a head b)`)
    #                     | sub (`operand[head]`) | typed (`(cmp if type(_v := operand) is head else general)`)
    #                     | same (`(_a head _b if type(_a := a) is type(_b := b) and … else general)`)
    brackets: str = "()"

    def flat(self) -> str:
        """The code on one line."""
        if self.kind == "call":
            return self.head + self.brackets[0] + ", ".join(a.flat() for a in self.args) + self.brackets[1]
        if self.kind == "lambda":
            return self.head + self.args[0].flat()
        if self.kind == "cond":
            then, cond, other = (a.flat() for a in self.args)
            return f"({then} if cel.truth({cond}) else {other})"
        if self.kind == "infix":
            return f"({self.args[0].flat()} {self.head} {self.args[1].flat()})"
        if self.kind == "sub":
            return f"{self.args[0].flat()}[{self.head}]"
        if self.kind == "comp":
            return f"[{self.args[0].flat()} for {self.head} in {self.args[1].flat()}{self._cond_flat()}]"
        if self.kind == "typed":
            cmp, operand, general = (a.flat() for a in self.args)
            return f"({cmp} if type(_v := {operand}) is {self.head} else {general})"
        if self.kind == "same":
            left, right, general = (a.flat() for a in self.args)
            return f"(_a {self.head} _b if {_SAME_KIND.format(left, right)} else {general})"
        return self.head

    def _cond_flat(self) -> str:
        return f" if cel.truth({self.args[2].flat()}, \"filter\")" if len(self.args) > 2 else ""

    def layout(self, indent: int, lead: int = 0) -> str:
        """The code laid out as black would: on one line if it fits in 100 columns (from `indent`,
        after `lead` characters of the line), else one argument per line."""
        flat = self.flat()
        if indent + lead + len(flat) <= 100 or self.kind == "atom":
            return flat
        pad = " " * (indent + 4)
        if self.kind == "call":
            inner = "".join(f"{pad}{a.layout(indent + 4)},\n" for a in self.args)
            return f"{self.head}{self.brackets[0]}\n{inner}{' ' * indent}{self.brackets[1]}"
        if self.kind == "lambda":
            return self.head + self.args[0].layout(indent, lead + len(self.head))
        if self.kind == "sub":
            return f"{self.args[0].layout(indent, lead)}[{self.head}]"
        if self.kind == "infix":
            left, right = self.args
            return (f"(\n{pad}{left.layout(indent + 4)}\n{pad}{self.head} "
                    f"{right.layout(indent + 4, len(self.head) + 1)}\n{' ' * indent})")
        if self.kind == "typed":
            cmp, operand, general = self.args
            return (f"(\n{pad}{cmp.layout(indent + 4)}\n{pad}if type(_v := {operand.layout(indent + 4, 16)}) "
                    f"is {self.head}\n{pad}else {general.layout(indent + 4, 5)}\n{' ' * indent})")
        if self.kind == "same":
            left, right, general = self.args
            guard = _SAME_KIND.format(left.layout(indent + 4, 16), right.layout(indent + 4, 16))
            return (f"(\n{pad}_a {self.head} _b\n{pad}if {guard}\n{pad}else {general.layout(indent + 4, 5)}"
                    f"\n{' ' * indent})")
        if self.kind == "comp":
            elt, iterable = self.args[0], self.args[1]
            tail = ""
            if len(self.args) > 2:
                tail = f"\n{pad}if cel.truth({self.args[2].layout(indent + 4, 12)}, \"filter\")"
            return (f"[\n{pad}{elt.layout(indent + 4)}\n{pad}for {self.head} in "
                    f"{iterable.layout(indent + 4, 8 + len(self.head))}{tail}\n{' ' * indent}]")
        then, cond, other = self.args
        return (f"(\n{pad}{then.layout(indent + 4)}\n{pad}if cel.truth({cond.layout(indent + 4, 13)})\n"
                f"{pad}else {other.layout(indent + 4, 5)}\n{' ' * indent})")


# two values of one plain kind (str, int, bool), where CEL's `==` is Python's
_SAME_KIND = "type(_a := {}) is type(_b := {}) and type(_a) in cel.PLAIN_KINDS"


def _assigns_same(code: Py) -> bool:
    """Whether `code` holds a `same` comparison (which assigns `_a` and `_b`)."""
    return code.kind == "same" or any(_assigns_same(a) for a in code.args)


def _atom(text: str) -> Py:
    return Py(text)


def _call(head: str, *args: Py) -> Py:
    return Py(head, tuple(args), "call")


def _comp(var: str, elt: Py, iterable: Py, cond: Py | None = None) -> Py:
    return Py(var, (elt, iterable) + ((cond,) if cond is not None else ()), "comp")


def _string_lit(node: A.Node) -> bool:
    return isinstance(node, A.Lit) and node.kind == "string"


def _decimal_valued(node: A.Node) -> bool:
    """Whether `node`'s code yields an exact decimal whenever it yields at all: `decimal(x)`, or
    `sum` of a list mapped to decimals (the int 0 when it is empty, which Python compares with a
    decimal exactly as CEL does)."""
    if not isinstance(node, A.Call) or node.target is not None or len(node.args) != 1:
        return False
    if node.func == "decimal":
        return True
    arg = node.args[0]
    return (node.func == "sum" and isinstance(arg, A.Macro) and arg.kind == "map" and arg.pred is None
            and arg.transform is not None and _decimal_valued(arg.transform))


def _items(node: A.Node, code: Py, macro: str) -> Py:
    """What a macro ranges over: `evidence.T` is a list (its code gives one), anything else goes
    through cel.items (a list's items, a map's keys, else undecidable)."""
    ns = namespace_tool(node)
    if ns is not None and ns[0] == "evidence":
        return code
    return _call("cel.items", code, _atom(literal(macro)))


def _lambda(var: str, body: Py) -> Py:
    return Py(f"lambda {var}: " if var else "lambda: ", (body,), "lambda")


@dataclass
class Emitter:
    """Python for the nodes of one expression text; `bound` are the CEL names bound here (lets
    and macro variables), which shadow nothing: the checker refuses a let named like a root."""

    text: str
    bound: frozenset[str] = frozenset()
    fast: bool = False  # a field is read by subscript (a rule's fast form: see rule_body)
    iterable: bool = False  # inside a comprehension's iterable, where Python allows no `:=`
    # (namespace, tool) -> the local a rule's fast form read it into once (see _hoisted_reads)
    hoisted: dict[tuple[str, str], str] = field(default_factory=dict)
    # id of a node -> the local holding its value, worked out by statements before (_sum_return)
    given: dict[int, str] = field(default_factory=dict)

    def src(self, node: A.Node) -> str:
        """The expression's own text of a node (for messages naming what was missing)."""
        return self.text[node.pos[0]:node.pos[1]]

    def code(self, node: A.Node) -> str:
        """Python evaluating `node`, on one line."""
        return self.tree(node).flat()

    def _what(self, node: A.Node) -> Py:
        return _atom(literal(self.src(node)))

    def tree(self, node: A.Node) -> Py:
        """Python evaluating `node`, as a layout tree."""
        if id(node) in self.given:
            return _atom(self.given[id(node)])
        if isinstance(node, A.Lit):
            return _atom(literal(node.value))
        if isinstance(node, A.Ident):
            if node.name in self.bound:
                return _atom(local_name(node.name))
            if node.name in ROOTS:
                return _atom(ROOTS[node.name])
            return _call("r.var", _atom(literal(node.name)))  # a `rules eval --vars` name (the checker refuses others)
        ns = namespace_tool(node)
        if ns is not None:
            kind, tool = ns
            if kind == "evidence" and ns in self.hoisted:
                return _atom(self.hoisted[ns])
            return _call(f"r.{kind}", _atom(literal(tool)))
        if isinstance(node, A.Select):
            if self.fast:
                held = self.hoisted.get(namespace_tool(node.operand) or ("", ""))
                return Py(literal(node.field), (_atom(held) if held else self.tree(node.operand),), "sub")
            return _call("cel.select", self.tree(node.operand), _atom(literal(node.field)), self._what(node))
        if isinstance(node, A.Has):
            return _call("cel.has", self.tree(node.operand), _atom(literal(node.field)), self._what(node))
        if isinstance(node, A.Index):
            return _call("cel.index", self.tree(node.operand), self.tree(node.index), self._what(node))
        if isinstance(node, A.ListLit):
            return Py("", tuple(self.tree(i) for i in node.items), "call", "[]")
        if isinstance(node, A.MapLit):
            pairs = tuple(Py("", (self.tree(k), self.tree(v)), "call") for k, v in node.entries)
            return _call("cel.make_map", Py("", pairs, "call", "[]"))
        if isinstance(node, A.Unary):
            return _call("cel.not_" if node.op == "!" else "cel.neg", self.tree(node.operand))
        if isinstance(node, A.Binary):
            if node.op in ("&&", "||"):
                head = "cel.and_" if node.op == "&&" else "cel.or_"
                return _call(head, _lambda("", self.tree(node.left)), _lambda("", self.tree(node.right)))
            if node.op in ("==", "!=") and (_string_lit(node.left) or _string_lit(node.right)):
                # a string equals only a string, and Python's == never holds between a str and
                # another kind of value: CEL's `==` against a string literal is Python's
                return Py(node.op, (self.tree(node.left), self.tree(node.right)), "infix")
            if node.op in ("==", "!=") and _decimal_valued(node.left) and _decimal_valued(node.right):
                # two exact decimals: Python's == compares them as CEL does
                return Py(node.op, (self.tree(node.left), self.tree(node.right)), "infix")
            if (node.op == "in" and isinstance(node.right, A.ListLit) and node.right.items
                    and all(_string_lit(i) for i in node.right.items)):
                # `x in ['a', 'b']`: only a string equal to one is in it, as in a Python tuple
                return Py("in", (self.tree(node.left), self.tree(node.right)), "infix")
            if self.fast and not self.iterable and node.op in _TYPED_OPS:
                typed = self._typed(node)
                if typed is not None:
                    return typed
            left, right = self.tree(node.left), self.tree(node.right)
            if (self.fast and not self.iterable and node.op in ("==", "!=") and not isinstance(node.left, A.Lit)
                    and not isinstance(node.right, A.Lit) and not _assigns_same(left) and not _assigns_same(right)):
                # two values of one plain kind (str, int, bool): Python's operator, as cel.eq's
                # first case; any other pair keeps the CEL operator
                return Py(node.op, (left, right, _call(_BINARY[node.op], _atom("_a"), _atom("_b"))), "same")
            return _call(_BINARY[node.op], left, right)
        if isinstance(node, A.Cond):
            return Py("", (self.tree(node.then), self.tree(node.cond), self.tree(node.other)), "cond")
        if isinstance(node, A.Macro):
            inner = replace(self, bound=self.bound | {node.var})
            var = local_name(node.var)
            comp = node.kind == "filter" or (node.kind == "map" and node.pred is None)  # a comprehension's iterable
            target = (replace(self, iterable=True) if comp else self).tree(node.target)
            if node.kind == "map":
                assert node.transform is not None
                if node.pred is not None:  # every item's condition is judged before any is mapped
                    fn = _lambda(var, inner.tree(node.transform))
                    return _call("cel.map_", target, fn, _lambda(var, inner.tree(node.pred)))
                return _comp(var, inner.tree(node.transform), _items(node.target, target, "map"))
            assert node.pred is not None
            if node.kind == "filter":
                return _comp(var, _atom(var), _items(node.target, target, "filter"), inner.tree(node.pred))
            return _call(_MACROS[node.kind], target, _lambda(var, inner.tree(node.pred)))
        if isinstance(node, A.Call):
            return self._call(node)
        raise AssertionError(f"unhandled rule node {node!r}")  # pragma: no cover - the parser makes no other

    def _typed(self, node: A.Binary) -> Py | None:
        """A comparison of a value with an int or double literal, in the fast form: Python's own
        operator when the value is of the literal's very type (what the CEL operator does then:
        bool is not int, and an int never meets a double here), else the CEL operator."""
        for lit, other, left in ((node.right, node.left, True), (node.left, node.right, False)):
            if isinstance(lit, A.Lit) and lit.kind in ("int", "double"):
                py_type = "int" if lit.kind == "int" else "float"
                value, held = self.tree(lit), _atom("_v")
                pair = (held, value) if left else (value, held)
                return Py(py_type, (Py(node.op, pair, "infix"), self.tree(other), _call(_BINARY[node.op], *pair)), "typed")
        return None

    def _call(self, node: A.Call) -> Py:
        args = [self.tree(a) for a in node.args]
        if node.target is None:
            if node.func == "origin" and len(args) == 1:
                return _call("r.origin", args[0], self._what(node.args[0]))
            if node.func not in CEL_FUNCTIONS:  # the checker refuses it; codegen never guesses
                raise UnsafeLiteral(f"unknown rule function {node.func!r}")
            if node.func == "sum" and _decimal_valued(node):
                # a list of exact decimals (a comprehension): Python's sum adds them as cel.sum_
                # does, and gives the int 0 for none, as it does
                return _call("sum", *args)
            return _call(CEL_FUNCTIONS[node.func], *args)
        target = self.tree(node.target)
        if node.func in TIME_PARTS:
            return _call("cel.ts_part", target, _atom(literal(node.func)), *args)
        if node.func not in CEL_METHODS:
            raise UnsafeLiteral(f"unknown rule method {node.func!r}")
        return _call(CEL_METHODS[node.func], target, *args)


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


_BOOL_OPS = ("==", "!=", "<", "<=", ">", ">=", "in", "&&", "||")
_BOOL_METHODS = ("contains", "startsWith", "endsWith")


def always_bool(node: A.Node) -> bool:
    """Whether the code of `node` yields a bool whenever it yields at all (a comparison, `in`,
    logic, `has`, `all`/`exists`/`exists_one`, a string test): its value needs no bool check."""
    if isinstance(node, A.Binary):
        return node.op in _BOOL_OPS
    if isinstance(node, A.Unary):
        return node.op == "!"
    if isinstance(node, A.Macro):
        return node.kind in ("all", "exists", "exists_one")
    if isinstance(node, A.Call):
        return node.target is not None and node.func in _BOOL_METHODS
    return isinstance(node, A.Has)


def rule_body(plan: RulePlan) -> list[str]:
    """The lines of a rule function's body, indented: the lets the guard needs, the guard, the
    other lets, the rule's value; laid out within 100 columns. A rule that reads a field has a
    fast form first, reading fields by subscript: where a field is there it is what
    `cel.select` gives, and where one is missing or the value is not a map the subscript raises
    KeyError or TypeError (which nothing on the way absorbs), and the general form after it
    decides as CEL does, naming what was missing. (A fast form that adds up a sum item by item,
    _sum_return, hands an arithmetic error to the general form too, which converts every item
    before it adds any, as CEL's sum of a map does.)"""
    general = _body(plan, False)
    if not _reads_a_field(plan):
        return general
    fast = _body(plan, True)
    caught = "(KeyError, TypeError):  # a field missing, or not a map: the general form says which"
    if _leading_sum(plan.expr, frozenset(name for name, _, _ in plan.lets)) is not None:
        caught = "(KeyError, TypeError, ArithmeticError):  # field, map or sum: the general form decides"
    return ["    try:"] + ["    " + line for line in fast] + [f"    except {caught}", "        pass"] + general


def _reads_a_field(plan: RulePlan) -> bool:
    nodes = [node for _, _, node in plan.lets] + [plan.expr] + ([plan.when] if plan.when is not None else [])
    while nodes:
        n = nodes.pop()
        if isinstance(n, A.Select) and namespace_tool(n) is None:
            return True
        nodes.extend(A.children(n))
    return False


def _hoisted_reads(plan: RulePlan) -> dict[tuple[str, str], str]:
    """The namespace reads a rule's fast form makes once, into a local, when its texts read them
    more than once: `evidence.T` wherever it is read (a list, read without error), and `latest.T`
    where a field of it is read (`r.newest` gives None when there is none, whose subscript raises
    TypeError there, so the general form decides and names what was missing, as before)."""
    counts: dict[tuple[str, str], int] = {}
    nodes = [node for _, _, node in plan.lets] + [plan.expr] + ([plan.when] if plan.when is not None else [])
    while nodes:
        n = nodes.pop()
        ns = namespace_tool(n)
        if ns is not None and ns[0] == "evidence":
            counts[ns] = counts.get(ns, 0) + 1
        elif isinstance(n, A.Select) and (read := namespace_tool(n.operand)) is not None and read[0] == "latest":
            counts[read] = counts.get(read, 0) + 1
        nodes.extend(A.children(n))
    hoisted = sorted(ns for ns, count in counts.items() if count > 1)
    return {ns: f"_{ns[0]}{i}" for i, ns in enumerate(hoisted, 1)}


def _body(plan: RulePlan, fast: bool) -> list[str]:
    lines: list[str] = []
    bound: frozenset[str] = frozenset()
    hoisted = _hoisted_reads(plan) if fast else {}

    def statement(lead: str, code: Py, tail: str = "", indent: int = 4) -> None:
        lines.extend((" " * indent + lead + code.layout(indent, len(lead)) + tail).split("\n"))

    for (kind, tool), name in hoisted.items():
        lines.append(f"    {name} = r.{'evidence' if kind == 'evidence' else 'newest'}({literal(tool)})")
    for name, text, node in plan.lets:
        if name in plan.guard_lets:
            statement(f"{local_name(name)} = ", Emitter(text, bound, fast, hoisted=hoisted).tree(node))
            bound = bound | {name}
    if plan.when is not None and plan.when_text is not None:
        guard = Emitter(plan.when_text, bound, fast, hoisted=hoisted).tree(plan.when)
        statement("if not ", guard if always_bool(plan.when) else _call("cel.truth", guard, _atom('"when"')), ":")
        lines.append("        return cel.SKIPPED")
    for name, text, node in plan.lets:
        if name not in plan.guard_lets:
            statement(f"{local_name(name)} = ", Emitter(text, bound, fast, hoisted=hoisted).tree(node))
            bound = bound | {name}
    emitter = Emitter(plan.expr_text, bound, fast, hoisted=hoisted)
    sides = _sides(plan.expr)
    if len(sides) > 1:
        _logic_return(plan.expr, sides, emitter, statement, lines)
        return lines
    if _loop_quantifier(plan.expr, bound):
        _quantifier_return(plan.expr, emitter, statement, lines)
        return lines
    total = _leading_sum(plan.expr, bound) if fast else None
    if total is not None:
        emitter = _sum_return(total, emitter, statement, lines)
    value = emitter.tree(plan.expr)
    statement("return ", value if always_bool(plan.expr) else _call("cel.result", value))
    return lines


def _sides(node: A.Node) -> list[A.Node]:
    """The sides of a rule's `a && b && …` (or `||`) when every side always yields a bool; else
    just the node."""
    if not isinstance(node, A.Binary) or node.op not in ("&&", "||"):
        return [node]
    sides: list[A.Node] = []
    n: A.Node = node
    while isinstance(n, A.Binary) and n.op == node.op:
        sides.append(n.right)
        n = n.left
    sides.append(n)
    sides.reverse()
    return sides if all(always_bool(x) for x in sides) else [node]


def _loop_quantifier(node: A.Node, bound: frozenset[str]) -> bool:
    """Whether a rule's expression is `all` or `exists` whose condition always yields a bool (and
    whose variable names no let: the loop's name is the function's)."""
    return (isinstance(node, A.Macro) and node.kind in ("all", "exists") and node.pred is not None
            and always_bool(node.pred) and node.var not in bound)


def _leading_sum(node: A.Node, bound: frozenset[str]) -> A.Call | None:
    """The `sum(xs.map(x, decimal(…)))` a rule's comparison starts with (its left side, the first
    thing it evaluates), when the map's variable names no let (the loop's name is the
    function's); else None."""
    if not isinstance(node, A.Binary) or node.op not in _TYPED_OPS:
        return None
    left = node.left
    if not (isinstance(left, A.Call) and left.func == "sum" and _decimal_valued(left)):
        return None
    mapped = left.args[0]
    return left if isinstance(mapped, A.Macro) and mapped.var not in bound else None


def _sum_return(total: A.Call, emitter: Emitter, statement: Callable[..., None], lines: list[str]) -> Emitter:
    """The fast form's `sum(xs.map(x, decimal(…)))` (see _leading_sum) as a loop adding each item
    to `_sum` (no comprehension, no list), before the rule's comparison: an emitter that reads
    it from there. The items are converted in order, as the general form converts them; only an
    addition out of range comes before a later item's conversion error, and the fast form hands
    that to the general form."""
    mapped = total.args[0]
    assert isinstance(mapped, A.Macro) and mapped.transform is not None
    var = local_name(mapped.var)
    item = replace(emitter, bound=emitter.bound | {mapped.var})
    lines.append("    _sum = 0")
    statement(f"for {var} in ", _items(mapped.target, emitter.tree(mapped.target), "map"), ":")
    statement("_sum += ", item.tree(mapped.transform), "", 8)
    return replace(emitter, given={**emitter.given, id(total): "_sum"})


def _quantifier_return(node: A.Node, emitter: Emitter, statement: Callable[..., None], lines: list[str]) -> None:
    """A rule's `xs.exists(x, p)` (or `all`) as a loop: the first item that decides (true for
    `exists`, false for `all`) is the value. An item that cannot be decided hands the whole
    expression to cel.exists/cel.all_, which decide as CEL does (another item may still decide)."""
    assert isinstance(node, A.Macro) and node.pred is not None
    found = node.kind == "exists"
    var = local_name(node.var)
    pred = replace(emitter, bound=emitter.bound | {node.var}).tree(node.pred)
    lines.append("    try:")
    statement(f"for {var} in ", _items(node.target, emitter.tree(node.target), node.kind), ":", 8)
    statement("if " if found else "if not ", pred, ":", 12)
    lines.append(f"                return {found}")
    lines.append(f"    except cel.Undecidable:  # an item that cannot be decided: another may still decide {node.kind}")
    statement("return ", emitter.tree(node), "", 8)
    lines.append(f"    return {not found}")


def _logic_return(node: A.Node, sides: list[A.Node], emitter: Emitter, statement: Callable[..., None],
                  lines: list[str]) -> None:
    """A rule's `a && b && …` as statements: each side in turn until one decides (false for `&&`,
    true for `||`), the last side the value. A side that cannot be decided hands the whole
    expression to cel.and_/cel.or_, which decide as CEL does (`false && error` is false)."""
    conj = isinstance(node, A.Binary) and node.op == "&&"
    lines.append("    try:")
    for side in sides[:-1]:
        code = emitter.tree(side)
        if conj:
            statement("if not ", code, ":", 8)
        else:
            statement("if ", code, ":", 8)
        lines.append(f"            return {conj is False}")
    lines.append("    except cel.Undecidable:  # an undecidable side: CEL's " + ("&&" if conj else "||")
                 + " may still be decided by another")
    statement("return ", emitter.tree(node), "", 8)
    statement("return ", emitter.tree(sides[-1]))


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
    texts = [_atom(f"expr={literal(plan.expr_text)}")]
    if plan.when_text is not None:
        texts.append(_atom(f"when={literal(plan.when_text)}"))
    if plan.lets:
        texts.append(_atom(f"lets={literal(tuple((name, text) for name, text, _ in plan.lets))}"))
    meta = _call("rt.RuleMeta", _atom(literal(plan.name)), _atom(fn), _atom(literal(plan.message)), *texts).layout(8)
    return {"fn": fn, "notes": rule_comments(plan), "body": [Code(line) for line in rule_body(plan)], "meta": Code(meta)}
