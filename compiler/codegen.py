"""Code generation: one validator module per skill, rendered from Jinja2 templates.

Contract text is untrusted input. It reaches generated code only as a Python literal built here
from whitelisted types (`literal`), or inside a comment as such a literal (`comment`). Generated
names derive from what they denote (`codegen_views.ident`: a tool name, an argument path, an
issue kind), never from a position, so an edit to one tool changes only that tool's block of the
module; a name that is not a plain ASCII identifier gets a hash-based fragment. The template
environment enforces this: an expression output that is not a `Code` value made here is an error
(`_finalize`), so a template cannot splice raw text by mistake.

Decisions are compiled to straight-line code: the template unrolls every argument, source, op and
extract of the contract; the generated module never loops over contract data. Only what the
runtime reads is emitted (a metadata field at its default is left out; a tool without bindings,
arguments, success rule or extracts uses the shared default of `skillc.runtime.support`), plus
short comments for the reviewer of a diff (what a tool may do, spec sections).
"""
from __future__ import annotations

import hashlib
import json
import math
from functools import lru_cache
from typing import Any, Iterable

import jinja2

from skillc import __version__
from skillc.compiler import ir
from skillc.runtime.errors import SkillcError

# Bump when the generated code changes for the same input, so incremental builds regenerate.
CODEGEN_REVISION = 2
COMPILER_VERSION = f"{__version__}+codegen.{CODEGEN_REVISION}"

# Python's parser refuses deeply nested brackets (about 200 levels); deeper constants go through
# JSON text instead (a string literal, then `rt.json_value`).
_MAX_LITERAL_DEPTH = 40

_ROOT_OF_PREFIX = {"inputs": "ctx.inputs", "outputs": "ctx.outputs", "shared": "ctx.shared", "session": "ctx.session"}
# The references read under one of those roots (the keys above, as IR classes for isinstance).
_ROOT_REFS = (ir.InputsRef, ir.OutputsRef, ir.SharedRef, ir.SessionRef)


class UnsafeLiteral(SkillcError, ValueError):
    """A contract value that cannot be written as a literal of a whitelisted type."""


class Code(str):
    """Text the compiler vouches for as Python source (a literal, an identifier, a comment)."""


@lru_cache(maxsize=1)
def generator_fingerprint() -> str:
    """A hash of the generator itself (this module, its views, graphs, templates), kept in the build cache
    (build.STAMPS, not in the manifest): editing the generator regenerates every module even when
    CODEGEN_REVISION was not bumped, and the committed manifest does not change unless output does."""
    from importlib import resources
    from pathlib import Path

    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in sorted(here.glob("codegen*.py")) + [here / "graphs.py"]:  # codegen, its views, args, names
        h.update(path.read_bytes())
    for entry in sorted(resources.files("skillc.compiler.templates").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".j2"):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return h.hexdigest()[:16]


def contract_sha256(text: str) -> str:
    """The sha256 of a contract's text, as written in the module header and the manifest."""
    # surrogatepass kept: codegen stays safe on IR built directly (tests/test_security_codegen.py).
    # Studio text with a lone surrogate is refused at the border (compiler.studio_border), and
    # compiler.build writes and hashes strictly, so such text still cannot reach a compiled studio.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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


def parts_of(path: Iterable[ir.PathPart]) -> tuple:
    """IR path parts as the compact tuples of `skillc.runtime.support` (("k", n), ("i", i), ("e",))."""
    out: list[tuple] = []
    for p in path:
        if p.kind == "key":
            out.append(("k", p.name or ""))
        elif p.kind == "index":
            out.append(("i", int(p.index or 0)))
        else:
            out.append(("e",))
    return tuple(out)


def _has_each(parts: tuple) -> bool:
    return any(p[0] == "e" for p in parts)


# ---------------------------------------------------------------- expressions


def expr_code(expr: ir.Expr) -> Code:
    """Python code evaluating a from-expression against a `BindContext` named `ctx`."""
    if isinstance(expr, _ROOT_REFS):
        return Code(f"rt.get_path({_ROOT_OF_PREFIX[expr.kind]}, {literal(parts_of(expr.path))})")
    if isinstance(expr, ir.PlatformRef):
        return Code(f"ctx.platform.get({literal(expr.field)}, rt.MISSING)")
    if isinstance(expr, ir.PriorRef):
        return Code(f"ctx.prior({literal(expr.entity_type)}, {literal(expr.entity_id)}, {literal(expr.attr)})")
    if isinstance(expr, ir.EvidenceRef):
        return Code(f"ctx.evidence_value({literal(expr.key)}, {literal(parts_of(expr.path))})")
    if isinstance(expr, ir.BareRef):
        return Code(f"ctx.upstream_output({literal(parts_of(expr.path))})")
    return Code("rt.MISSING")  # call.* outside verify.args: rejected by the front end


def _unique_code(expr: ir.Expr) -> Code:
    if isinstance(expr, ir.EvidenceRef):
        return Code(f"rt.unique_evidence({expr_code(expr)})")
    if isinstance(expr, _ROOT_REFS):
        return Code(f"rt.unique_path({_ROOT_OF_PREFIX[expr.kind]}, {literal(parts_of(expr.path))})")
    return Code(f"rt.unique_path({expr_code(expr)}, ())")


# ---------------------------------------------------------------- rendering


def _finalize(value: Any) -> Any:
    if isinstance(value, Code):
        return value
    if type(value) is int:  # loop counters and indices made by the template itself
        return value
    raise TypeError(f"template printed an unvetted value of type {type(value).__name__}: {value!r:.60}")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("skillc.compiler", "templates"),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters["lit"] = literal
    env.filters["comment"] = comment
    return env


def generate_module(skill: ir.SkillProfile, contract: ir.Contract, *, sha256: str | None = None) -> str:
    """The source text of the validator module of `skill` (deterministic for the same input).

    Raises UnsafeLiteral when a contract value is not JSON-like, or two contract names would
    share a generated name (the build reports it).
    """
    from skillc.compiler import codegen_views as views  # it builds on this module's literals

    names = views.Names()
    tools = [views.tool_view(names, contract.tools[name], contract) for name in sorted(contract.tools)]
    digest = sha256 or contract_sha256(skill.skill_contract)
    template = _environment().get_template("skill_module.py.j2")
    return template.render(
        version=Code(COMPILER_VERSION),
        sha=Code(digest),
        key_note=comment(skill.skill_key),
        skill_meta=views.skill_meta(skill, contract),
        tools=tools,
        has_rules=any(t["rules"] for t in tools),
        inputs=[views.input_view(s) for s in contract.inputs.values()],
        outputs=[(literal(name), views.output_meta(s)) for name, s in contract.outputs.items()],
    )
