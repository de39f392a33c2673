"""Code generation: one validator module per skill, rendered from Jinja2 templates.

Contract text is untrusted input. It reaches generated code only as a Python literal built from
whitelisted types (`codegen_literals.literal`), or inside a comment as such a literal (`comment`).
Generated names derive from what they denote (`codegen_names.ident`: a tool name, an argument
path, an issue kind), never from a position, so an edit to one tool changes only that tool's block
of the module; a name that is not a plain ASCII identifier gets a hash-based fragment. The
template environment enforces this: an expression output that is not a `Code` value is an error
(`_finalize`), so a template cannot splice raw text by mistake.

The parts, each importing the leaf `codegen_literals` and none importing this entry point:
`codegen_views` (a tool's, input's, output's and the skill's view) over `codegen_args` (one
argument's check), `codegen_names` (generated names and call snippets) and `codegen_rules`.

Decisions are compiled to straight-line code: the template unrolls every argument, source, op and
extract of the contract; the generated module never loops over contract data. Only what the
runtime reads is emitted (a metadata field at its default is left out; a tool without bindings,
arguments, success rule or extracts uses the shared default of `skillc.runtime.support`), plus
short comments for the reviewer of a diff (what a tool may do, spec sections).
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import jinja2

from skillc import __version__
from skillc.compiler import codegen_views as views
from skillc.compiler import ir
from skillc.compiler.codegen_literals import Code, comment, literal

# Bump when the generated code changes for the same input, so incremental builds regenerate.
CODEGEN_REVISION = 3
COMPILER_VERSION = f"{__version__}+codegen.{CODEGEN_REVISION}"


@lru_cache(maxsize=1)
def generator_fingerprint() -> str:
    """A hash of the generator itself (this module, its views, graphs, templates), kept in the build cache
    (build.STAMPS, not in the manifest): editing the generator regenerates every module even when
    CODEGEN_REVISION was not bumped, and the committed manifest does not change unless output does."""
    from importlib import resources
    from pathlib import Path

    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in sorted(here.glob("codegen*.py")) + [here / "graphs.py", here / "rules_names.py"]:  # codegen, its literals, views, args, names, rules, the rules' name table
        h.update(path.read_bytes())
    for entry in sorted(resources.files("skillc.compiler.templates").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".j2"):
            h.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return h.hexdigest()[:16]


def contract_sha256(text: str) -> str:
    """The sha256 of a contract's text, as written in the module header and the manifest."""
    # surrogatepass kept: codegen stays safe on IR built directly (tests/compiler/test_security_codegen.py).
    # Studio text with a lone surrogate is refused at the border (compiler.studio_border), and
    # compiler.build writes and hashes strictly, so such text still cannot reach a compiled studio.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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
