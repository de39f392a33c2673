"""The rule type checker: names, types, constant rules and guards (docs/reference/rules.md).

`Checker.check(node)` returns a node's type and records findings (a stable SC code, a message
and the range inside the expression text); an error finding makes the rule, and so the skill,
unloadable. Values not known until run time are `dyn` and pass; what is known (literals, enum
arguments, platform fields, the functions' signatures) is checked as CEL's checker would.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from skillc.compiler import ir
from skillc.compiler import rules_ast as A
from skillc.compiler import rules_types as T
from skillc.compiler.codegen_rules import namespace_tool
from skillc.compiler.rules_names import CEL_FUNCTIONS, CEL_METHODS, NAMESPACES, ROOTS, TIME_PARTS
from skillc.compiler.rules_fold import regex_problem
from skillc.runtime import cel

Type = T.Type
SEVERITY = {"SC701": "error", "SC702": "error", "SC703": "error", "SC704": "error", "SC705": "warning",
            "SC706": "warning", "SC707": "error", "SC708": "warning", "SC709": "warning", "SC710": "error"}
FUNCTIONS = sorted(set(CEL_FUNCTIONS) | {"origin", "has"})
METHODS = sorted(set(CEL_METHODS) | set(TIME_PARTS) | {"all", "exists", "exists_one", "filter", "map"})
_DURATION_PARTS = ("getHours", "getMinutes", "getSeconds", "getMilliseconds")


@dataclass
class Finding:
    """One problem in one expression text: `start`/`end` are offsets inside that text."""

    code: str
    message: str
    start: int
    end: int
    help: str | None = None

    @property
    def severity(self) -> str:
        """The code's severity (one per code, as in the diagnostics table)."""
        return SEVERITY[self.code]


@dataclass
class Env:
    """What the rules of one tool see: the shapes of their names and the tools with evidence."""

    args: Type = field(default_factory=lambda: T.record({}, label="the arguments"))
    platform: Type = field(default_factory=T.platform_shape)
    inputs: Type = field(default_factory=lambda: T.record({}, label="inputs"))
    shared: Type = field(default_factory=lambda: T.map_of(T.STRING, T.DYN))
    responses: dict[str, Type] = field(default_factory=dict)  # tool -> its response's shape
    tools: frozenset[str] | None = None  # the tools evidence can come from; None: any (the REPL)
    variables: dict[str, Type] = field(default_factory=dict)  # extra names (the REPL's --vars)

    def root(self, name: str) -> Type | None:
        if name in self.variables:
            return self.variables[name]
        return {"args": self.args, "platform": self.platform, "inputs": self.inputs, "shared": self.shared,
                "now": T.TIMESTAMP}.get(name)


def _num(t: Type) -> bool:
    return t.kind in T.NUMERIC


class Checker:
    """Checks the nodes of one expression text against an Env; `bound` are lets and macro
    variables in scope, with their types."""

    def __init__(self, env: Env, text: str, bound: dict[str, Type] | None = None) -> None:
        self.env = env
        self.text = text
        self.bound = dict(bound or {})
        self.findings: list[Finding] = []

    def _f(self, code: str, message: str, node: A.Node | A.Pos, help: str | None = None) -> Type:
        pos = node if isinstance(node, tuple) else node.pos
        self.findings.append(Finding(code, message, pos[0], pos[1], help))
        return T.DYN

    def src(self, node: A.Node) -> str:
        return self.text[node.pos[0]:node.pos[1]]

    # ------------------------------------------------------------ nodes

    def check(self, node: A.Node) -> Type:
        """The type of `node` (dyn after an error, so one mistake is reported once)."""
        if isinstance(node, A.Lit):
            return {"int": T.INT, "double": T.DOUBLE, "string": T.STRING, "bool": T.BOOL, "null": T.NULL}[node.kind]
        if isinstance(node, A.Ident):
            return self._ident(node)
        ns = namespace_tool(node)
        if ns is not None:
            return self._namespace(node, *ns)
        if isinstance(node, A.Select):
            return self._member(node, self.check(node.operand), node.field)
        if isinstance(node, A.Has):
            t = self.check(node.operand)
            if t.kind not in ("record", "map", "dyn"):
                return self._f("SC704", f"has() needs a map or object, '{self.src(node.operand)}' is {t}", node)
            return T.BOOL
        if isinstance(node, A.Index):
            return self._index(node)
        if isinstance(node, A.ListLit):
            return T.list_of(T.join(self.check(i) for i in node.items))
        if isinstance(node, A.MapLit):
            keys = [self.check(k) for k, _ in node.entries]
            for (k, _), kt in zip(node.entries, keys):
                if kt.kind not in ("int", "string", "bool", "dyn"):
                    self._f("SC704", f"a map key must be a string, int or bool, not {kt}", k)
            return T.map_of(T.join(keys), T.join(self.check(v) for _, v in node.entries))
        if isinstance(node, A.Unary):
            return self._unary(node)
        if isinstance(node, A.Binary):
            return self._binary(node)
        if isinstance(node, A.Cond):
            self._want_bool(node.cond, "the condition of ?:")
            return T.join([self.check(node.then), self.check(node.other)])
        if isinstance(node, A.Macro):
            return self._macro(node)
        if isinstance(node, A.Call):
            return self._call(node)
        raise AssertionError(node)  # pragma: no cover

    def _ident(self, node: A.Ident) -> Type:
        if node.name in self.bound:
            return self.bound[node.name]
        t = self.env.root(node.name)
        if t is not None:
            return t
        if node.name in NAMESPACES:
            return self._f("SC703", f"'{node.name}' needs a tool name: {node.name}.TOOL", node)
        known = sorted(set(ROOTS) | set(NAMESPACES) | set(self.bound) | set(self.env.variables))
        close = difflib.get_close_matches(node.name, known, n=1)
        return self._f("SC703", f"unknown name '{node.name}'; a rule sees {', '.join(known)}", node,
                       help=f"did you mean '{close[0]}'?" if close else None)

    def _namespace(self, node: A.Node, kind: str, tool: str) -> Type:
        tools = self.env.tools
        if tools is not None and tool not in tools:
            close = difflib.get_close_matches(tool, sorted(tools), n=1)
            self._f("SC709", f"'{tool}' is not a tool of this skill: {kind}.{tool} is undecidable unless an upstream "
                             "node called it", node, help=f"did you mean '{close[0]}'?" if close else None)
        shape = self.env.responses.get(tool, T.record({}, label=f"a {tool} response"))
        return T.list_of(shape) if kind == "evidence" else shape

    def _member(self, node: A.Node, t: Type, name: str) -> Type:
        if t.kind == "dyn":
            return T.DYN
        if t.kind == "map":
            return t.elem or T.DYN
        if t.kind != "record":
            return self._f("SC704", f"'{self.src(node)}': a {t} has no fields", node)
        known = t.member(name)
        if known is not None:
            return known
        names = [k for k, _ in t.fields]
        close = difflib.get_close_matches(name, names, n=1)
        help = f"did you mean '{close[0]}'?" if close else None
        if t.closed:
            if t.label == "platform" and name in ir.HIDDEN_PLATFORM_FIELDS:
                return self._f("SC703", f"platform field '{name}' is hidden (§11) and a rule cannot read it", node)
            return self._f("SC703", f"{t.label or 'this object'} has no field '{name}'; it has {', '.join(names) or 'none'}",
                           node, help=help)
        if t.label.startswith("the arguments"):
            self._f("SC708", f"'{self.src(node)}' is not an argument the contract lists for this tool; the rule is "
                             "undecidable whenever the model leaves it out", node, help=help)
        return T.DYN

    def _index(self, node: A.Index) -> Type:
        t, i = self.check(node.operand), self.check(node.index)
        if t.kind == "dyn":
            return T.DYN
        if t.kind == "list":
            if i.kind not in ("int", "dyn"):
                self._f("SC704", f"a list index must be an int, not {i}", node.index)
            return t.elem or T.DYN
        if t.kind == "map":
            return t.elem or T.DYN
        if t.kind == "record":
            if isinstance(node.index, A.Lit) and node.index.kind == "string":
                return self._member(node, t, node.index.value)
            return T.DYN
        return self._f("SC704", f"'{self.src(node.operand)}' is {t} and cannot be indexed", node)

    def _want_bool(self, node: A.Node, what: str) -> None:
        t = self.check(node)
        if t.kind not in ("bool", "dyn"):
            self._f("SC704", f"{what} must be a bool, '{self.src(node)}' is {t}", node)

    def _unary(self, node: A.Unary) -> Type:
        if node.op == "!":
            self._want_bool(node.operand, "the operand of !")
            return T.BOOL
        t = self.check(node.operand)
        if _num(t) or t.kind in ("duration", "dyn"):
            return t
        return self._f("SC704", f"no operator - for {t}", node)

    def _binary(self, node: A.Binary) -> Type:
        op = node.op
        if op in ("&&", "||"):
            self._want_bool(node.left, f"each side of {op}")
            self._want_bool(node.right, f"each side of {op}")
            return T.BOOL
        a, b = self.check(node.left), self.check(node.right)
        if op in ("==", "!="):
            if _never_equal(a, b):
                self._f("SC705", f"'{self.src(node)}' compares {a} with {b}: they are never equal, so this is always "
                                 f"{'false' if op == '==' else 'true'}", node)
            return T.BOOL
        if op in ("<", "<=", ">", ">="):
            if a.kind == "dyn" or b.kind == "dyn" or (_num(a) and _num(b)) or (
                    a.kind == b.kind and a.kind in ("string", "bool", "timestamp", "duration")):
                return T.BOOL
            return self._f("SC704", f"no operator {op} for {a} and {b}", node)
        if op == "in":
            if b.kind in ("list", "map", "record", "dyn"):
                return T.BOOL
            return self._f("SC704", f"the right side of 'in' must be a list or map, '{self.src(node.right)}' is {b}", node)
        return self._arith(node, op, a, b)

    def _arith(self, node: A.Binary, op: str, a: Type, b: Type) -> Type:
        if _num(a) and _num(b):
            if a.kind == b.kind:
                if op == "%" and a.kind == "double":
                    return self._f("SC704", "no operator % for double", node)
                return a
            if "decimal" in (a.kind, b.kind):
                return T.DECIMAL
            fix = "write the int as a double (2.0), or convert with double(…)"
            return self._f("SC704", f"no operator {op} for {a} and {b}", node, help=fix)
        if a.kind == "dyn" or b.kind == "dyn":
            other = b if a.kind == "dyn" else a
            if other.kind in ("dyn", "int", "double", "decimal") or (op in "+-" and other.kind in (
                    "string", "list", "timestamp", "duration")):
                return T.DECIMAL if other.kind == "decimal" else T.DYN
            return self._f("SC704", f"no operator {op} for {other}", node)
        pair = (a.kind, b.kind)
        if op == "+":
            if pair == ("string", "string"):
                return T.STRING
            if pair == ("list", "list"):
                return T.list_of(T.join([a.elem or T.DYN, b.elem or T.DYN]))
            if pair in (("timestamp", "duration"), ("duration", "timestamp")):
                return T.TIMESTAMP
            if pair == ("duration", "duration"):
                return T.DURATION
        if op == "-":
            if pair == ("timestamp", "timestamp"):
                return T.DURATION
            if pair == ("timestamp", "duration"):
                return T.TIMESTAMP
            if pair == ("duration", "duration"):
                return T.DURATION
        return self._f("SC704", f"no operator {op} for {a} and {b}", node)

    def _macro(self, node: A.Macro) -> Type:
        t = self.check(node.target)
        if t.kind == "list":
            var = t.elem or T.DYN
        elif t.kind == "map":
            var = t.key or T.DYN
        elif t.kind == "record":
            var = T.STRING
        elif t.kind == "dyn":
            var = T.DYN
        else:
            return self._f("SC704", f"{node.kind}() needs a list or map, '{self.src(node.target)}' is {t}", node)
        if node.var in ROOTS or node.var in NAMESPACES or node.var in self.bound:
            self._f("SC707", f"the variable '{node.var}' hides a name already in scope; choose another", node.var_pos)
        inner = Checker(self.env, self.text, {**self.bound, node.var: var})
        if node.pred is not None:
            inner._want_bool(node.pred, f"the condition of {node.kind}()")
        result = inner.check(node.transform) if node.transform is not None else None
        self.findings += inner.findings
        if node.kind in ("all", "exists", "exists_one"):
            return T.BOOL
        if node.kind == "filter":
            return T.list_of(var)
        return T.list_of(result or T.DYN)

    # ------------------------------------------------------------ functions

    def _arity(self, node: A.Call, *counts: int) -> bool:
        if len(node.args) in counts:
            return True
        want = " or ".join(str(c) for c in counts)
        self._f("SC704", f"{node.func}() takes {want} argument{'s' if counts != (1,) else ''}, found {len(node.args)}", node)
        return False

    def _call(self, node: A.Call) -> Type:
        if node.target is not None:
            return self._method(node)
        f = node.func
        if f == "origin":
            return self._origin(node)
        if f not in CEL_FUNCTIONS:
            close = difflib.get_close_matches(f, FUNCTIONS, n=1)
            return self._f("SC703", f"unknown function '{f}'; functions are {', '.join(FUNCTIONS)}", node,
                           help=f"did you mean '{close[0]}'?" if close else None)
        if f == "matches":
            if self._arity(node, 2):
                return self._matches(node, node.args[0], node.args[1])
            return T.BOOL
        if not self._arity(node, 1):
            return T.DYN
        arg = node.args[0]
        t = self.check(arg)
        if f == "size":
            if t.kind not in ("string", "list", "map", "record", "dyn"):
                self._f("SC704", f"size() needs a string, list or map, '{self.src(arg)}' is {t}", node)
            return T.INT
        if f in ("sum", "min", "max"):
            if t.kind not in ("list", "dyn"):
                return self._f("SC704", f"{f}() needs a list, '{self.src(arg)}' is {t}", node)
            elem = t.elem or T.DYN
            if f == "sum" and elem.kind not in ("int", "double", "decimal", "dyn"):
                return self._f("SC704", f"sum() needs a list of numbers, '{self.src(arg)}' is {t}", node)
            return elem
        if f in ("timestamp", "duration") and isinstance(arg, A.Lit):
            try:
                cel.timestamp(arg.value) if f == "timestamp" else cel.duration(arg.value)
            except cel.Undecidable as exc:
                self._f("SC702" if "not supported" in exc.why else "SC704", f"{f}({self.src(arg)}): {exc.why}", arg)
        if f == "decimal" and isinstance(arg, A.Lit) and arg.kind == "string":
            try:
                cel.to_decimal(arg.value)
            except cel.Undecidable as exc:
                self._f("SC704", f"decimal({self.src(arg)}): {exc.why}", arg)
        accepts = {"int": ("int", "double", "decimal", "string", "timestamp"), "double": ("int", "double", "decimal", "string"),
                   "string": ("string", "int", "double", "decimal", "bool", "timestamp", "duration"),
                   "bool": ("bool", "string"), "timestamp": ("string", "int", "timestamp"), "duration": ("string", "duration"),
                   "decimal": ("int", "double", "decimal", "string"), "dyn": None}[f]
        if accepts is not None and t.kind != "dyn" and t.kind not in accepts:
            self._f("SC704", f"{f}() does not take a {t}", node)
        return {"int": T.INT, "double": T.DOUBLE, "string": T.STRING, "bool": T.BOOL, "timestamp": T.TIMESTAMP,
                "duration": T.DURATION, "decimal": T.DECIMAL, "dyn": T.DYN}[f]

    def _origin(self, node: A.Call) -> Type:
        if not self._arity(node, 1):
            return T.DYN
        arg = node.args[0]
        root = arg
        while isinstance(root, (A.Select, A.Index)):
            root = root.operand
        if not (isinstance(root, A.Ident) and root.name == "args" and root is not arg and "args" not in self.bound):
            return self._f("SC704", "origin() takes an argument's path, e.g. origin(args.payment_method_id)", arg)
        self.check(arg)
        return T.record({}, label=f"the record {self.src(arg)} was taken from")

    def _method(self, node: A.Call) -> Type:
        assert node.target is not None
        f = node.func
        if f not in CEL_METHODS and f not in TIME_PARTS:
            close = difflib.get_close_matches(f, METHODS, n=1)
            return self._f("SC703", f"unknown function '.{f}()'; methods are {', '.join(METHODS)}", node,
                           help=f"did you mean '{close[0]}'?" if close else None)
        t = self.check(node.target)
        if f in TIME_PARTS:
            if t.kind == "duration" and f in _DURATION_PARTS:
                self._arity(node, 0)
                return T.INT
            if t.kind not in ("timestamp", "dyn"):
                return self._f("SC704", f".{f}() needs a timestamp, '{self.src(node.target)}' is {t}", node)
            if self._arity(node, 0, 1) and node.args:
                tz = self.check(node.args[0])
                if tz.kind not in ("string", "dyn"):
                    self._f("SC704", f"a time zone is a string, not {tz}", node.args[0])
            return T.INT
        if f == "size":
            self._arity(node, 0)
            if t.kind not in ("string", "list", "map", "record", "dyn"):
                self._f("SC704", f".size() needs a string, list or map, '{self.src(node.target)}' is {t}", node)
            return T.INT
        if t.kind not in ("string", "dyn"):
            return self._f("SC704", f".{f}() needs a string, '{self.src(node.target)}' is {t}", node)
        if f in ("lowerAscii", "upperAscii", "trim"):
            self._arity(node, 0)
            return T.STRING
        if not self._arity(node, 1):
            return T.BOOL
        if f == "matches":
            return self._matches(node, node.target, node.args[0], checked=True)
        a = self.check(node.args[0])
        if a.kind not in ("string", "dyn"):
            self._f("SC704", f".{f}() takes a string, not {a}", node.args[0])
        return T.BOOL

    def _matches(self, node: A.Call, subject: A.Node, pattern: A.Node, checked: bool = False) -> Type:
        if not checked:
            s = self.check(subject)
            if s.kind not in ("string", "dyn"):
                self._f("SC704", f"matches() needs a string, '{self.src(subject)}' is {s}", subject)
        p = self.check(pattern)
        if p.kind not in ("string", "dyn"):
            return self._f("SC704", f"a pattern is a string, not {p}", pattern)
        if isinstance(pattern, A.Lit):
            problem = regex_problem(pattern.value)
            if problem:
                self._f("SC710", f"pattern {self.src(pattern)}: {problem}", pattern)
        return T.BOOL


def _never_equal(a: Type, b: Type) -> bool:
    """Two known types whose values are never equal (a string and an int, …)."""
    if "dyn" in (a.kind, b.kind) or a.kind == b.kind:
        return False
    if _num(a) and _num(b):
        return False
    if {a.kind, b.kind} <= {"record", "map"}:
        return False
    return True
