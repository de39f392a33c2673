"""Python source the compiler vouches for, the leaf every part of codegen builds on.

Contract text is untrusted input. It reaches generated code only as a Python literal built here
from whitelisted types (`literal`), or inside a comment as such a literal (`comment`); `Code` marks
text made here (the template environment of `codegen` prints nothing else). Path tuples
(`parts_of`) and from-expressions (`expr_code`, `unique_code`) are written as code reading a
`BindContext` named `ctx`. This module imports only the IR.
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterable

from skillc.compiler import ir
from skillc.runtime.words.errors import SkillcError

# Python's parser refuses deeply nested brackets (about 200 levels); deeper constants go through
# JSON text instead (a string literal, then `rt.json_value`).
_MAX_LITERAL_DEPTH = 40

ROOT_OF_PREFIX = {"inputs": "ctx.inputs", "outputs": "ctx.outputs", "shared": "ctx.shared", "session": "ctx.session"}
# The references read under one of those roots (the keys above, as IR classes for isinstance).
ROOT_REFS = (ir.InputsRef, ir.OutputsRef, ir.SharedRef, ir.SessionRef)


class UnsafeLiteral(SkillcError, ValueError):
    """A contract value that cannot be written as a literal of a whitelisted type."""


class Code(str):
    """Text the compiler vouches for as Python source (a literal, an identifier, a comment)."""


# ---------------------------------------------------------------- literals


def _str_literal(s: str) -> str:
    # repr() escapes every line break, quote and non-printable character (bidi controls
    # included); swapping its quotes for double quotes is safe when the text has neither quote.
    r = repr(s)
    if r[0] == "'" and '"' not in s and "'" not in s:
        r = '"' + r[1:-1] + '"'
    return r


def _depth(value: Any) -> int:
    if isinstance(value, (list, tuple)):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def _lit(value: Any, depth: int) -> str:
    if depth > _MAX_LITERAL_DEPTH * 4:
        raise UnsafeLiteral("value nested too deeply")
    if value is None or value is True or value is False:
        return repr(value)
    if isinstance(value, bool):  # a bool subclass would reach here: not whitelisted
        raise UnsafeLiteral(f"unsupported type {type(value).__name__}")
    if type(value) is int:
        try:
            return repr(value)
        except ValueError as exc:  # beyond the interpreter's integer-text limit
            raise UnsafeLiteral(str(exc)) from None
    if type(value) is float:
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else '-float("inf")'
        return repr(value)
    if type(value) is str:
        return _str_literal(value)
    if type(value) is list:
        return "[" + ", ".join(_lit(v, depth + 1) for v in value) + "]"
    if type(value) is tuple:
        inner = ", ".join(_lit(v, depth + 1) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    if type(value) is dict:
        items = []
        for k, v in value.items():
            if type(k) not in (str, int, float, bool) and k is not None:
                raise UnsafeLiteral(f"unsupported key type {type(k).__name__}")
            items.append(f"{_lit(k, depth + 1)}: {_lit(v, depth + 1)}")
        return "{" + ", ".join(items) + "}"
    raise UnsafeLiteral(f"unsupported type {type(value).__name__}")


def literal(value: Any) -> Code:
    """A Python expression that evaluates to a fresh copy of `value` (JSON-like types only)."""
    if _depth(value) > _MAX_LITERAL_DEPTH and isinstance(value, (list, dict)):
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise UnsafeLiteral(str(exc)) from None
        return Code(f"rt.json_value({_str_literal(text)})")
    return Code(_lit(value, 0))


def comment(value: Any) -> Code:
    """Text safe inside a `#` comment: the value's literal (which never holds a line break)."""
    text = _lit(value, 0) if not isinstance(value, str) else _str_literal(value)
    if any(ch in text for ch in "\r\n\x0c\x0b\x85\u2028\u2029"):  # defensive: repr escapes these
        raise UnsafeLiteral("line break in comment")
    return Code(text)


def parts_of(path: Iterable[ir.PathPart]) -> tuple[Any, ...]:
    """IR path parts as the compact tuples of `skillc.runtime.support` (("k", n), ("i", i), ("e",))."""
    out: list[tuple[Any, ...]] = []
    for p in path:
        if p.kind == "key":
            out.append(("k", p.name or ""))
        elif p.kind == "index":
            out.append(("i", int(p.index or 0)))
        else:
            out.append(("e",))
    return tuple(out)


def has_each(parts: tuple[Any, ...]) -> bool:
    """Whether a path tuple holds an each-item part (`[]`)."""
    return any(p[0] == "e" for p in parts)


# ---------------------------------------------------------------- expressions


def expr_code(expr: ir.Expr) -> Code:
    """Python code evaluating a from-expression against a `BindContext` named `ctx`."""
    if isinstance(expr, ROOT_REFS):
        return Code(f"rt.get_path({ROOT_OF_PREFIX[expr.kind]}, {literal(parts_of(expr.path))})")
    if isinstance(expr, ir.PlatformRef):
        return Code(f"ctx.platform.get({literal(expr.field)}, rt.MISSING)")
    if isinstance(expr, ir.PriorRef):
        return Code(f"ctx.prior({literal(expr.entity_type)}, {literal(expr.entity_id)}, {literal(expr.attr)})")
    if isinstance(expr, ir.EvidenceRef):
        return Code(f"ctx.evidence_value({literal(expr.key)}, {literal(parts_of(expr.path))})")
    if isinstance(expr, ir.BareRef):
        return Code(f"ctx.upstream_output({literal(parts_of(expr.path))})")
    return Code("rt.MISSING")  # call.* outside verify.args: rejected by the front end


def unique_code(expr: ir.Expr) -> Code:
    """Python code reading the one value a `UNIQUE` from-expression must find (§5.2)."""
    if isinstance(expr, ir.EvidenceRef):
        return Code(f"rt.unique_evidence({expr_code(expr)})")
    if isinstance(expr, ROOT_REFS):
        return Code(f"rt.unique_path({ROOT_OF_PREFIX[expr.kind]}, {literal(parts_of(expr.path))})")
    return Code(f"rt.unique_path({expr_code(expr)}, ())")
