"""Code generation: one validator module per skill, rendered from Jinja2 templates.

Contract text is untrusted input. It reaches generated code only as a Python literal built here
from whitelisted types (`literal`), or inside a comment as such a literal (`comment`); every
identifier in generated code is made by the compiler from a counter, never from contract text.
The template environment enforces this: an expression output that is not a `Code` value made by
one of those filters is an error (`_finalize`), so a template cannot splice raw text by mistake.

Decisions are compiled to straight-line code: the template unrolls every argument, source, op and
extract of the contract; the generated module never loops over contract data.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Iterable

import jinja2

from skillc import __version__
from skillc.compiler import ir

# Bump when the generated code changes for the same input, so incremental builds regenerate.
CODEGEN_REVISION = 1
COMPILER_VERSION = f"{__version__}+codegen.{CODEGEN_REVISION}"

# Python's parser refuses deeply nested brackets (about 200 levels); deeper constants go through
# JSON text instead (a string literal, then `rt.json_value`).
_MAX_LITERAL_DEPTH = 40

_ROOT_OF_PREFIX = {"inputs": "ctx.inputs", "outputs": "ctx.outputs", "shared": "ctx.shared", "session": "ctx.session"}


# The ParamIssue constants of the module being generated (a context variable: codegen may run in
# threads, and issue numbering must restart at 0 for every module).
_ISSUES: ContextVar[list[Code]] = ContextVar("_ISSUES")


class UnsafeLiteral(ValueError):
    """A contract value that cannot be written as a literal of a whitelisted type."""


class Code(str):
    """Text the compiler vouches for as Python source (a literal, an identifier, a comment)."""


@lru_cache(maxsize=1)
def generator_fingerprint() -> str:
    """A hash of the generator itself (this module, graphs, templates): part of each skill's
    incremental-build key, so editing the generator regenerates every module even when
    CODEGEN_REVISION was not bumped."""
    from importlib import resources
    from pathlib import Path

    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in (here / "codegen.py", here / "graphs.py"):
        h.update(path.read_bytes())
    for entry in sorted(resources.files("skillc.compiler.templates").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".j2"):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return h.hexdigest()[:16]


def contract_sha256(text: str) -> str:
    """The sha256 of a contract's text, as written in the module header and the manifest."""
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


def expr_code(expr: ir.Node) -> Code:
    """Python code evaluating a from-expression against a `BindContext` named `ctx`."""
    kind = getattr(expr, "kind", None)
    if kind in _ROOT_OF_PREFIX:
        return Code(f"rt.get_path({_ROOT_OF_PREFIX[kind]}, {literal(parts_of(expr.path))})")
    if kind == "platform":
        return Code(f"ctx.platform.get({literal(expr.field)}, rt.MISSING)")
    if kind == "prior":
        return Code(f"ctx.prior({literal(expr.entity_type)}, {literal(expr.entity_id)}, {literal(expr.attr)})")
    if kind == "evidence":
        return Code(f"ctx.evidence_value({literal(expr.key)}, {literal(parts_of(expr.path))})")
    if kind == "bare":
        return Code(f"ctx.upstream_output({literal(parts_of(expr.path))})")
    return Code("rt.MISSING")  # call.* outside verify.args: rejected by the front end


def _unique_code(expr: ir.Node) -> Code:
    kind = getattr(expr, "kind", None)
    if kind == "evidence":
        return Code(f"rt.unique_evidence({expr_code(expr)})")
    if kind in _ROOT_OF_PREFIX:
        return Code(f"rt.unique_path({_ROOT_OF_PREFIX[kind]}, {literal(parts_of(expr.path))})")
    return Code(f"rt.unique_path({expr_code(expr)}, ())")


# ---------------------------------------------------------------- the view the template renders


@dataclass
class _ArgView:
    param: Code
    note: Code
    parts: Code
    has_each: bool
    label: Code
    required: bool
    const: Code | None = None
    bind_kind: str = ""  # "const" | "value" | "template" | ""
    bind_code: Code | None = None
    bind_source: Code | None = None
    bound: bool = False
    matchers: list[tuple[Code, Code, Code]] = field(default_factory=list)  # (if/elif, source, test)
    model_allowed: bool = False
    user_allowed: bool = False
    missing_issue: Code | None = None
    enum_name: Code | None = None
    meta: Code = Code("")
    read: Code = Code("")  # code reading a plain (no `[]`) argument's value from `args`
    provenance_issue: Code | None = None
    enum_issue: Code | None = None


def _call(func: str, kwargs: list[tuple[str, Code]], indent: int, lead: int = 0) -> Code:
    """A constructor call on one line when it fits in 100 columns, else one keyword per line
    (black's layout); `indent` is the column of the line it starts on, `lead` what precedes it."""
    flat = f"{func}({', '.join(f'{k}={v}' for k, v in kwargs)})"
    if indent + lead + len(flat) <= 100 or not kwargs:
        return Code(flat)
    pad = " " * (indent + 4)
    body = "".join(f"{pad}{k}={v},\n" for k, v in kwargs)
    return Code(f"{func}(\n{body}{' ' * indent})")


def _issue(action: str, param: str, reason: str, label: str | None, **extra: str | None) -> Code:
    """A ParamIssue constant: defined once at module level (issues are immutable, and building one
    per call would dominate a failing check); the call site names it and says what it is."""
    args = [literal(action), literal(param), literal(reason)]
    if label is not None:
        args.append(Code(f"label={literal(label)}"))
    for k, v in extra.items():
        if v is not None:
            args.append(Code(f"{k}={literal(v)}"))
    table = _ISSUES.get()
    name = f"_ISSUE_{len(table)}"
    table.append(Code(f"{name} = rt.ParamIssue({', '.join(args)})"))
    code = Code(name)
    code.note = Code(f"{action}: {reason}")  # type: ignore[attr-defined]
    return code


_MATCHER = {
    "USER": "ctx.user_mentions({p}, v)",
    "EVIDENCE": "ctx.evidence_has(v)",
    "NODE_OUTPUT": "ctx.node_output_has({p}, v)",
    "SHARED": "ctx.shared_has({p}, v)",
    "SESSION": "ctx.session_has({p}, v)",
    "PRIOR_TASK": "ctx.prior_has(v, None)",
}


def _arg_view(param: str, arg: ir.ArgContract, enums: list[Code], enum_index: int) -> _ArgView:
    parts = parts_of(arg.path.parts) if arg.path.parts else (("k", param),)
    view = _ArgView(
        param=literal(param),
        note=comment(param),
        parts=literal(parts),
        has_each=_has_each(parts),
        label=literal(arg.label),
        required=arg.required,
    )
    if len(parts) == 1 and parts[0][0] == "k":
        view.read = Code(f"args.get({literal(parts[0][1])}, rt.MISSING)")  # get_path on one member
    else:
        view.read = Code(f"rt.get_path(args, {literal(parts)})")
    expr = arg.from_
    if arg.has_const:
        view.bind_kind, view.const, view.bind_source = "const", literal(arg.const), literal("CONTRACT")
    elif expr is not None:
        source = ir.SOURCE_OF_PREFIX.get(expr.kind, "NODE_OUTPUT")
        view.bind_source = literal(source)
        from_parts = parts_of(getattr(expr, "path", []) or [])
        if arg.when == "UNIQUE":
            view.bind_kind, view.bind_code = "value", _unique_code(expr)
        elif expr.kind in _ROOT_OF_PREFIX and _has_each(parts) and _has_each(from_parts):
            view.bind_kind = "template"
            view.bind_code = Code(f"rt.get_path({_ROOT_OF_PREFIX[expr.kind]}, {literal(from_parts)})")
        else:
            view.bind_kind, view.bind_code = "value", expr_code(expr)
    view.bound = arg.has_const or expr is not None
    sources = list(dict.fromkeys(arg.sources))
    view.model_allowed = "MODEL" in sources
    view.user_allowed = "USER" in sources
    if not view.bound:
        for s in sources:
            if s == "MODEL":
                break
            if s in _MATCHER:
                keyword = Code("elif" if view.matchers else "if")
                view.matchers.append((keyword, literal(s), Code(_MATCHER[s].format(p=literal(param)))))
    m = arg.missing
    if arg.required:
        if m.action == "ASK_USER":
            view.missing_issue = _issue("ASK_USER", param, "missing", arg.label)
        elif m.action == "CALL_TOOL" and m.tool:
            view.missing_issue = _issue("CALL_TOOL", param, "missing", arg.label, tool=m.tool)
        elif m.action == "FAIL":
            view.missing_issue = _issue("FAIL", param, "missing", arg.label, message=m.message)
    if arg.enum:
        from skillc.runtime import support as rt

        keys = sorted({rt.enum_key(v) for v in arg.enum}, key=repr)
        view.enum_name = Code(f"_ENUM_{enum_index}")
        enums.append(Code(f"_ENUM_{enum_index} = frozenset({literal(keys)})"))
    is_platform = expr is not None and expr.kind == "platform"
    evidence = "EVIDENCE" in sources or (expr is not None and expr.kind == "evidence")
    view.meta = _call(
        "rt.ArgMeta",
        [
            ("path", literal(param)),
            ("parts", literal(parts)),
            ("label", literal(arg.label)),
            ("sensitive", literal(arg.sensitive)),
            ("bound", literal(view.bound)),
            ("platform", literal(is_platform)),
            ("sources", literal(tuple(sources))),
            ("required", literal(arg.required)),
            ("expected_user", literal("USER" in sources)),
            ("expected_evidence", literal(evidence)),
        ],
        12,
        len(view.param) + 2,
    )
    if not view.model_allowed:
        action = "ASK_USER" if view.user_allowed else "REJECT"
        view.provenance_issue = _issue(action, param, "provenance", arg.label)
    if arg.enum:
        view.enum_issue = _issue("ASK_USER", param, "enum", arg.label)
    return view


_OPS = {
    "EQ": "rt.op_eq(actual, {v})",
    "NE": "rt.op_ne(actual, {v})",
    "IN": "rt.op_in(actual, {v})",
    "NOT_IN": "rt.op_not_in(actual, {v})",
    "TRUTHY": "rt.op_truthy(actual)",
    "EXISTS": "rt.op_exists(actual)",
}


def _tool_view(index: int, tool: ir.ToolContract, enums: list[Code], enum_counter: list[int]) -> dict[str, Any]:
    fn = f"_t{index}"
    args = []
    for param, arg in tool.args.items():
        args.append(_arg_view(param, arg, enums, enum_counter[0]))
        if arg.enum:
            enum_counter[0] += 1
    success = tool.success
    op_code = None
    success_parts = None
    if success is not None and success.op is not None:
        value = success.value if success.has_value else None
        op_code = Code(_OPS[success.op].format(v=literal(value)))
        success_parts = literal(parts_of(success.path.parts) if success.path else ())
    err = tool.error
    err_code = literal(parts_of(err.code.parts)) if err and err.code else None
    err_msg = literal(parts_of(err.message.parts)) if err and err.message else None
    extracts = []
    keys: list[str] = []
    for i, ex in enumerate(tool.extracts):
        path_text = ex.path.text if ex.path else ""
        key = ex.key or path_text
        entity = None
        if ex.entity is not None and ex.entity.type is not None:
            entity = _entity_literal(ex.entity)
        extracts.append(
            {
                "n": Code(f"n{i}"),
                "sub": Code(f"sub{i}"),
                "key": literal(key),
                "note": comment(key),
                "first": key not in keys,
                "parts": literal(parts_of(ex.path.parts) if ex.path else ()),
                "fields": literal(tuple(ex.fields)),
                "entity": entity,
            }
        )
        if key not in keys:
            keys.append(key)
    verify = None
    if tool.verify is not None:
        vargs = []
        for name, va in tool.verify.args.items():
            if va.has_const:
                vargs.append({"name": literal(name), "const": literal(va.const), "parts": None})
            elif va.from_ is not None and va.from_.kind == "call":
                vargs.append({"name": literal(name), "const": None, "parts": literal(parts_of(va.from_.path))})
        verify = {"args": vargs, "copy_all": not tool.verify.args}
    idem = tuple(parts_of(p.parts) for p in tool.idempotency_key)
    return {
        "fn": Code(fn),
        "name": literal(tool.name),
        "note": comment(tool.name),
        "label": literal(tool.label),
        "side_effect": literal(tool.side_effect),
        "write": tool.side_effect == "WRITE",
        "confirm": literal(tool.effective_confirm),
        "idempotency_key": literal(idem),
        "args": args,
        "has_success": success is not None,
        "has_success_lit": literal(success is not None),
        "op_code": op_code,
        "success_parts": success_parts,
        "err_code": err_code,
        "err_msg": err_msg,
        "extracts": extracts,
        "extract_keys": literal(tuple(keys)),
        "verify": verify,
        "verify_fn": Code(f"{fn}_verify_args" if verify else "None"),
        "entity_base": Code("request" if tool.side_effect == "WRITE" else "None"),
        "empty_code": Code(" and ".join(f"n{i} == 0" for i in range(len(tool.extracts))) or "True"),
        "verify_tool": literal(tool.verify.tool if tool.verify else None),
    }


def _entity_literal(e: ir.Entity) -> Code:
    return Code(f"rt.EntitySpec({literal(e.type)}, {literal(e.id)}, {literal(e.name)}, {literal(e.scalar)})")


def _input_view(spec: ir.InputSpec) -> dict[str, Any]:
    expr = spec.from_
    prefix = expr.kind if expr is not None else None
    share_key = parts_of(expr.path) if prefix in ("shared", "session") else None
    if expr is None:
        code, source = Code(f"ctx.upstream_output({literal((('k', spec.name),))})"), "NODE_OUTPUT"
    elif prefix in ("shared", "session"):
        code, source = expr_code(expr), ir.SOURCE_OF_PREFIX[prefix]
    elif prefix == "outputs":
        code, source = Code(f"ctx.upstream_output({literal(parts_of(expr.path))})"), "NODE_OUTPUT"
    elif prefix == "prior":
        code, source = expr_code(expr), ir.SOURCE_OF_PREFIX[prefix]
    elif prefix == "bare":
        code, source = Code(f"ctx.upstream_output({literal(parts_of(expr.path))})"), "NODE_OUTPUT"
    else:
        # §7: "不写或其他前缀" — any other prefix (platform., evidence., inputs., …) reads the nearest
        # finished upstream node's output of the same name as this input.
        code, source = Code(f"ctx.upstream_output({literal((('k', spec.name),))})"), "NODE_OUTPUT"
    meta = _call(
        "rt.InputMeta",
        [
            ("name", literal(spec.name)),
            ("required", literal(spec.required)),
            ("provider", literal(spec.provider)),
            ("from_text", literal(expr.text if expr is not None else None)),
            ("prefix", literal(prefix)),
            ("share_key", literal(share_key)),
        ],
        4,
        len(literal(spec.name)) + 2,
    )
    return {"name": literal(spec.name), "note": comment(spec.name), "code": code, "source": literal(source), "meta": meta}


def _output_meta(spec: ir.OutputSpec) -> Code:
    entity = _entity_literal(spec.entity) if spec.entity is not None and spec.entity.type is not None else Code("None")
    return _call(
        "rt.OutputMeta",
        [
            ("name", literal(spec.name)),
            ("type", literal(spec.type)),
            ("fields", literal(tuple(spec.fields))),
            ("min_items", literal(spec.min_items)),
            ("hint", literal(spec.hint)),
            ("required", literal(spec.required)),
            ("share", literal(spec.share)),
            ("entity", entity),
            ("sources", literal(tuple(spec.sources))),
            ("has_constant", literal(spec.has_constant)),
            ("constant", literal(spec.constant if spec.has_constant else None)),
        ],
        4,
        len(literal(spec.name)) + 2,
    )


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

    Raises UnsafeLiteral when a contract value is not JSON-like (the build reports it).
    """
    enums: list[Code] = []
    issues: list[Code] = []
    token = _ISSUES.set(issues)
    counter = [0]
    try:
        tools = [_tool_view(i, contract.tools[name], enums, counter) for i, name in enumerate(sorted(contract.tools))]
    finally:
        _ISSUES.reset(token)
    digest = sha256 or contract_sha256(skill.skill_contract)
    skill_meta = Code(
        "rt.SkillMeta(\n"
        f"    key={literal(skill.skill_key)},\n"
        f"    name={literal(skill.skill_name)},\n"
        f"    mode={literal(contract.mode)},\n"
        f"    delegatable={literal(contract.delegatable)},\n"
        f"    target={literal(contract.target)},\n"
        f"    tool_names={literal(tuple(skill.tool_names))},\n"
        f"    semantic_desc={literal(skill.semantic_desc)},\n"
        f"    manual={literal(skill.skill_manual)},\n"
        f"    contract_sha256={literal(digest)},\n"
        f"    compiler_version={literal(COMPILER_VERSION)},\n"
        ")"
    )
    template = _environment().get_template("skill_module.py.j2")
    return template.render(
        version=Code(COMPILER_VERSION),
        sha=Code(digest),
        key_note=comment(skill.skill_key),
        skill_meta=skill_meta,
        tools=tools,
        enums=enums,
        issues=issues,
        inputs=[_input_view(s) for s in contract.inputs.values()],
        outputs=[(literal(name), _output_meta(s)) for name, s in contract.outputs.items()],
    )
