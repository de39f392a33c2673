"""Typed evidence (a skillc extension beside §5.3): which record fields may back an argument.

`args.<p>.evidence` names fields as `<tool>:<response path>` (a path under one of that tool's
keyed extracts) or `<extract key>[.<path>]` (as in `evidence.<key>.<path>`, §9). Each resolves
to (tool or None, extract key, path inside the extract's subtree), what generated code hands
the runtime. A name that resolves to nothing is an error (SC801): it would back no value, and a
misspelling must not silently refuse every call; `evidence` without `EVIDENCE` among the
sources has no effect (SC802).
"""
from __future__ import annotations

from typing import Any

from skillc.compiler import ir
from skillc.compiler.codegen_literals import parts_of
from skillc.compiler.diagnostics import Diagnostic, make

Resolved = tuple[str | None, str, tuple[Any, ...]]  # (tool or None, extract key, path parts as runtime tuples)


def _under(extract: list[ir.PathPart], path: list[ir.PathPart]) -> tuple[Any, ...] | None:
    """The rest of `path` below `extract`'s path, or None when `path` is not under it. A `[]` in
    the named path may stand where the extract's path goes on (a list mapped item by item)."""
    rest = list(path)
    for part in extract:
        while rest and rest[0].kind == "each":
            rest.pop(0)
        if not rest or rest[0] != part:
            return None
        rest.pop(0)
    return parts_of(rest)


def resolve(contract: ir.Contract, field: ir.EvidenceField) -> list[Resolved]:
    """What one evidence field names: every (tool, key, rest) it can be read at; empty when it
    names nothing the contract extracts."""
    out: list[Resolved] = []
    if field.tool is not None:
        tool = contract.tools.get(field.tool)
        for e in tool.extracts if tool else []:
            if e.key and e.path is not None and (rest := _under(e.path.parts, field.path)) is not None:
                out.append((field.tool, e.key, rest))
        return out
    first = field.path[0] if field.path else None
    if first is None or first.kind != "key":
        return out
    keys = {e.key for t in contract.tools.values() for e in t.extracts if e.key}
    if first.name in keys:
        out.append((None, first.name or "", parts_of(field.path[1:])))
    return out


def resolved_fields(contract: ir.Contract, arg: ir.ArgContract) -> tuple[Resolved, ...]:
    """Every place an argument's named evidence fields may be read (order kept, repeats dropped)."""
    return tuple(dict.fromkeys(r for f in arg.evidence for r in resolve(contract, f)))


def check_evidence_fields(contract: ir.Contract, profile: ir.SkillProfile, *, file: str | None) -> list[Diagnostic]:
    """SC801 for a field naming nothing the contract extracts, SC802 for `evidence` without
    EVIDENCE among the argument's sources."""
    diags: list[Diagnostic] = []

    def d(code: str, severity: str, message: str, span: ir.Span | None, help: str | None = None) -> None:
        diags.append(make(code, severity, message, text=profile.skill_contract, span=span,  # type: ignore[arg-type]
                          skill=profile.skill_key, file=file, help=help))

    for tool in contract.tools.values():
        for param, arg in tool.args.items():
            w = f"tools.{tool.name}.args.{param}.evidence"
            for f in arg.evidence:
                if resolve(contract, f):
                    continue
                d("SC801", "error", f"{w}: '{f.text}' names no field this contract extracts", f.span, help=_help(contract, f))
            if arg.evidence and "EVIDENCE" not in arg.sources:
                d("SC802", "warning", f"{w} has no effect: EVIDENCE is not among the argument's sources",
                  arg.prop_spans.get("evidence"))
    return diags


def _help(contract: ir.Contract, f: ir.EvidenceField) -> str:
    if f.tool is not None:
        tool = contract.tools.get(f.tool)
        if tool is None:
            return f"'{f.tool}' is not configured in tools"
        paths = [e.path.text for e in tool.extracts if e.key and e.path is not None]
        if not paths:
            return f"'{f.tool}' has no extract with a key"
        return f"name a path under one of {f.tool}'s keyed extracts: {', '.join(paths)}"
    keys = sorted({e.key for t in contract.tools.values() for e in t.extracts if e.key})
    return f"extract keys here: {', '.join(keys)}" if keys else "no extract of this contract has a key"
