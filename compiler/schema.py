"""JSON Schema of skill_contract as authors write it, generated from the IR (`skillc schema`).

`AUTHOR_KEYS` maps each IR model's fields to the contract's property names; types, enums and
defaults come from the pydantic field annotations, so a change to the IR shows up here (a test
checks every IR field is either mapped or deliberately internal).
"""
from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from skillc.compiler import ir

# IR fields that are not contract properties: positions, map keys, and "was it set" flags.
INTERNAL_FIELDS = frozenset({"span", "key_span", "prop_spans", "name", "path", "has_const", "has_value", "has_constant"})

# model -> {contract property: IR field}
AUTHOR_KEYS: dict[type[BaseModel], dict[str, str]] = {
    ir.Contract: {"mode": "mode", "delegatable": "delegatable", "target": "target", "inputs": "inputs", "outputs": "outputs", "tools": "tools"},
    ir.ToolContract: {"label": "label", "sideEffect": "side_effect", "confirm": "confirm", "idempotencyKey": "idempotency_key", "args": "args",
                      "success": "success", "error": "error", "extracts": "extracts", "verify": "verify", "rules": "rules"},
    ir.Rule: {"name": "name", "when": "when", "let": "lets", "expr": "expr", "message": "message"},
    ir.ArgContract: {"from": "from_", "const": "const", "when": "when", "sources": "sources", "required": "required", "enum": "enum",
                     "missing": "missing", "sensitive": "sensitive", "label": "label", "fresh": "fresh",
                     "evidence": "evidence"},
    ir.Missing: {"action": "action", "tool": "tool", "message": "message"},
    ir.Success: {"path": "path", "op": "op", "value": "value"},
    ir.ErrorPaths: {"code": "code", "message": "message"},
    ir.Extract: {"key": "key", "path": "path", "fields": "fields", "entity": "entity"},
    ir.Entity: {"type": "type", "id": "id", "name": "name", "scalar": "scalar", "keyed": "keyed"},
    ir.Verify: {"tool": "tool", "args": "args"},
    ir.VerifyArg: {"from": "from_", "const": "const"},
    ir.InputSpec: {"from": "from_", "required": "required", "provider": "provider"},
    ir.OutputSpec: {"type": "type", "fields": "fields", "minItems": "min_items", "hint": "hint", "required": "required", "share": "share",
                    "entity": "entity", "sources": "sources", "constant": "constant", "sensitive": "sensitive"},
}

DESCRIPTIONS: dict[str, str] = {
    "Contract.mode": "Execution mode (§3). A single REACT candidate skips LLM planning.",
    "Contract.delegatable": "Whether other nodes may delegate to this skill; requires no WRITE tool (§3, §15).",
    "Contract.target": "Default completion target: one WRITE tool of this skill (§3, §10).",
    "Contract.inputs": "Inputs bound when a node starts (§7).",
    "Contract.outputs": "Outputs a node may write with builtin_output_set (§8).",
    "Contract.tools": "Tool contracts; keys equal toolNames entries (§4).",
    "ToolContract.label": "Display name of the tool (§4).",
    "ToolContract.sideEffect": "WRITE enables approval, pre-registration, idempotency and settlement (§4, §14).",
    "ToolContract.confirm": "Whether the user must confirm; true only on WRITE. Default: true for WRITE (§4).",
    "ToolContract.idempotencyKey": "Parameter paths forming the idempotency key (§14.2).",
    "ToolContract.args": "Parameter contracts keyed by parameter path: title, orderInfo.taxNo, lines[].goodsCode (§5).",
    "ToolContract.success": "Business success condition; required on WRITE tools (§6.1).",
    "ToolContract.error": "Where the business error code and message are in the response (§6.2).",
    "ToolContract.extracts": "Semantic extracts of the response: evidence.<key>, counts, entities (§6.3).",
    "ToolContract.verify": "How to check an uncertain write with a read tool (§6.4).",
    "ToolContract.rules": "Business rules judged before the call, each a CEL-subset expression (skillc extension, docs/reference/rules.md).",
    "Rule.name": "Identifier of the rule, unique on the tool; refusals and approvals name it.",
    "Rule.when": "Optional guard: the rule applies only when this expression is true.",
    "Rule.let": "Local names bound to expressions, in order; later ones may use earlier ones.",
    "Rule.expr": "The rule: a boolean expression over args, platform, shared, inputs, now, evidence.TOOL, latest.TOOL, origin(args.PATH).",
    "Rule.message": "What the model is told when the rule refuses a call: what is wrong and what to do next.",
    "ArgContract.from": "Value expression (§9): inputs. outputs. shared. session. prior. platform. evidence.",
    "ArgContract.const": "Constant value; always overrides the model. Exclusive with from.",
    "ArgContract.when": "Binding condition of from (§5.4).",
    "ArgContract.sources": "Accepted provenance of the value when there is no from/const (§5.3).",
    "ArgContract.required": "Whether the parameter is required; a missing value is handled by missing (§5.5).",
    "ArgContract.enum": "Allowed values; a mismatch becomes a question to the user.",
    "ArgContract.missing": "What to do when a required value is missing (§5.5); a bare action string is accepted.",
    "ArgContract.sensitive": "Mask the value in summaries and approval texts.",
    "ArgContract.label": "Display name used in approvals and questions.",
    "ArgContract.fresh": "Not in effect (§19).",
    "ArgContract.evidence": "skillc extension: the record fields that may back an EVIDENCE value, as <tool>:<response path> "
                            "or <extract key>[.<path>] (one, or a list).",
    "Missing.tool": "CALL_TOOL: the tool to call first (in toolNames, not the argument's own tool).",
    "Missing.message": "FAIL: the failure explanation.",
    "Success.path": "Dotted response path; a numeric segment indexes a list.",
    "Success.value": "Expected value; an array for IN / NOT_IN.",
    "Extract.key": "Name used by evidence.<key> expressions.",
    "Extract.path": "Response path of the extracted subtree (required, non-empty).",
    "Extract.fields": "Counting: an object counts 1 if any of these fields has a value.",
    "Entity.scalar": "Field name given to a scalar value so that it becomes an entity.",
    "Entity.keyed": "skillc extension: the object is a map from entity id to entity (each member one entity, its key the id).",
    "Verify.tool": "A read tool (sideEffect NONE) of this contract and of toolNames.",
    "Verify.args": "Only const or from: call.<path> (the original write's request).",
    "VerifyArg.from": "call.<path>: a parameter of the original write request.",
    "InputSpec.from": "session. shared. outputs. prior.<type>[.<attr>]; no prefix: the upstream output of that name.",
    "InputSpec.provider": "skill_key of the skill that provides this input (planned before this node).",
    "OutputSpec.type": "LIST requires fields.",
    "OutputSpec.share": "Share the value as shared.<key> (TASK) or session.<key> (SESSION).",
    "OutputSpec.sources": "Accepted provenance; empty means all but MODEL; MODEL is never allowed.",
    "OutputSpec.constant": "With source CONTRACT, the value must equal this.",
    "OutputSpec.sensitive": "Not in effect (§19).",
}

_PREFIX = "(inputs|outputs|shared|session|prior|platform|evidence)\\."
_FROM_PATTERNS = {
    ir.ArgContract: f"^$|^{_PREFIX}",
    ir.VerifyArg: "^$|^call\\.",
}


def _strip_none(annotation: Any) -> Any:
    if get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _type_schema(annotation: Any, owner: type[BaseModel], field: str) -> dict[str, Any]:
    annotation = _strip_none(annotation)
    origin = get_origin(annotation)
    if field == "evidence" and owner is ir.ArgContract:  # written as text, resolved by the front end
        return {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    if field == "from_":
        s: dict[str, Any] = {"type": "string"}
        if owner in _FROM_PATTERNS:
            s["pattern"] = _FROM_PATTERNS[owner]
        return s
    if annotation is Any:
        return {}
    if owner is ir.Rule and field == "lets":  # `let`: an object of name -> expression, in order
        return {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}
    if annotation is ir.Path:
        return {"type": "string"}
    if origin is Literal:
        return {"type": "string", "enum": [*get_args(annotation), ""]}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer", "minimum": 0}
    if annotation is str:
        return {"type": "string"}
    if origin is list:
        return {"type": "array", "items": _type_schema(get_args(annotation)[0], owner, "")}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(annotation)[1], owner, "")}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        ref = {"$ref": f"#/$defs/{annotation.__name__}"}
        if annotation is ir.Missing:  # `missing: "CALL_TOOL"` shorthand
            return {"anyOf": [ref, {"type": "string", "enum": list(ir.ENUMS["action"])}]}
        return ref
    raise TypeError(f"no schema for {owner.__name__}.{field}: {annotation!r}")  # the IR grew a type: map it


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for key, field in AUTHOR_KEYS[model].items():
        info = model.model_fields[field]
        s = _type_schema(info.annotation, model, field)
        desc = DESCRIPTIONS.get(f"{model.__name__}.{key}")
        if desc:
            s["description"] = desc
        default = info.get_default(call_default_factory=True)
        if default not in (None, [], {}) and not isinstance(default, BaseModel):
            s["default"] = default
        props[key] = s
    # Unknown properties are ignored by the runtime (§19), so the schema allows them.
    out = {"type": "object", "description": (model.__doc__ or "").strip().splitlines()[0], "properties": props}
    if model is ir.Rule:
        out["required"] = ["name", "expr", "message"]
    return out


def contract_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of skill_contract, for editors and external checks."""
    defs = {m.__name__: _model_schema(m) for m in AUTHOR_KEYS if m is not ir.Contract}
    root = _model_schema(ir.Contract)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://skillc.dev/schema/skill_contract.json",
        "title": "skill_contract",
        **root,
        "$defs": defs,
    }
