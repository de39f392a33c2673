"""One rule expression compiled and run on given values: `skillc rules eval` and the compiler's
own constant folding use it.

The expression goes through exactly what a contract's rule goes through — parse, check,
generate Python — and the generated function is loaded as a tiny module of its own and called
with a scope built from the values given (`--vars`): `args`, `platform`, `shared`, `inputs`,
`now` (RFC 3339 text), `evidence` ({tool: [response bodies, newest first]}); any other key is a
variable of that name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Iterator

from skillc.compiler import rules_ast as A
from skillc.compiler import rules_types as T
from skillc.compiler.codegen_rules import Emitter
from skillc.compiler.rules_check import Checker, Env, Finding
from skillc.compiler.rules_run import load_rule
from skillc.compiler.rules_syntax import RuleError, parse_rule_expr
from skillc.runtime import cel
from skillc.runtime.call.rules import Scope

CONTRACT_NAMES = ("args", "platform", "shared", "inputs", "now", "evidence")


@dataclass
class Evaluation:
    """What `skillc rules eval` found: a value, or an error with its place in the text."""

    text: str
    value: Any = None
    error: str | None = None  # "compile" | "undecidable"
    error_code: str = ""  # a compile error's diagnostic code (SC701…SC710)
    message: str = ""
    start: int = 0
    end: int = 0
    warnings: list[Finding] = field(default_factory=list)
    code: str = ""  # the generated Python expression

    @property
    def ok(self) -> bool:
        """True when the expression was compiled and decided."""
        return self.error is None


def scope_of(variables: dict[str, Any]) -> Scope:
    """A scope from plain values (see the module docstring)."""
    now = variables.get("now")
    when = cel.timestamp(now) if now is not None else datetime.now(timezone.utc)
    evidence = variables.get("evidence") or {}
    if not isinstance(evidence, dict):
        raise ValueError("evidence must be an object: {tool: [response bodies, newest first]}")

    def records() -> Iterator[tuple[str, Any]]:
        for tool, bodies in evidence.items():
            for body in bodies if isinstance(bodies, list) else [bodies]:
                yield tool, body

    extra = {k: v for k, v in variables.items() if k not in CONTRACT_NAMES}
    return Scope(args=variables.get("args", {}), platform=variables.get("platform", {}),
                 shared=variables.get("shared", {}), inputs=variables.get("inputs", {}), now=when, records=records,
                 vars=extra)


def compile_expression(text: str, variables: dict[str, Any] | None = None) -> tuple[Any, Evaluation]:
    """Compile `text` as a rule expression would be; (function or None, the evaluation so far)."""
    out = Evaluation(text=text)
    try:
        node = parse_rule_expr(text)
    except RuleError as exc:
        out.error, out.message, out.start, out.end = "compile", exc.message, exc.start, exc.end
        out.error_code = "SC702" if exc.kind == "unsupported" else "SC701"
        return None, out
    extra = {k: T.DYN for k in (variables or {}) if k not in CONTRACT_NAMES}
    checker = Checker(Env(tools=None, variables=extra, args=T.record({}, label="args")), text)
    checker.check(node)
    errors = [f for f in checker.findings if f.severity == "error"]
    out.warnings = [f for f in checker.findings if f.severity != "error" and f.code != "SC708"]
    if errors:
        f = errors[0]
        out.error, out.message, out.start, out.end = "compile", f.message, f.start, f.end
        out.error_code = f.code
        return None, out
    out.code = Emitter(text).code(node)
    return load_rule(out.code, Emitter(text, fast=True).code(node)), out


def eval_expression(text: str, variables: dict[str, Any] | None = None) -> Evaluation:
    """Compile one expression as a contract's rule is compiled, and run it on `variables`."""
    fn, out = compile_expression(text, variables)
    if fn is None:
        return out
    try:
        out.value = fn(scope_of(variables or {}))
    except cel.Undecidable as exc:
        out.error, out.message = "undecidable", str(exc)
    return out


def show(value: Any) -> str:
    """A value as CEL would write it: strings quoted, timestamps and durations by their functions."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, Decimal):
        return f'decimal("{value}")'
    if isinstance(value, datetime):
        return f'timestamp("{cel.format_timestamp(value)}")'
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return cel.to_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value.items()) + "}"
    try:
        return f'duration("{cel.format_duration(value)}")'
    except TypeError:
        return repr(value)
