"""The evidence fields a rule reads, against the MCP tools' declared `outputSchema`s (`skillc
check --servers`, SC712).

A rule reading `latest.T.x`, `evidence.T.exists(o, o.x …)`, `latest.T.items[0].y` or a `let`
bound to one of them follows T's outputSchema down those fields; `origin(args.a).x` may be any
object inside any record, so it is followed only when every served tool declares its answers
completely. A field is reported when the object schema it is read from lists its `properties`,
the field is not one of them and the schema does not allow others (`additionalProperties` absent
or false): no answer of that tool has the field, so the rule cannot be decided on any call.
Anything the schemas leave open (no outputSchema, a map, `anyOf`, `$ref` outside the schema) is
not followed. `has(x.f)` asks whether a field is there, so its own field is never reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from skillc.compiler import rules_ast as A
from skillc.compiler.codegen_rules import namespace_tool

_DEPTH = 32  # $ref inlining and walking stop here (a recursive schema stays open below)


@dataclass(frozen=True)
class Shape:
    """A value's declared shape: a JSON Schema node, the tool whose answer holds it and the path
    to it as a rule reads it (`latest.get_order.items[]`), for the message."""

    schema: dict[str, Any]
    tool: str | None  # None: an object found by origin(), in any tool's answer
    path: str


@dataclass(frozen=True)
class Unread:
    """A field no answer has: where the rule reads it, the shape it is read from, the fields
    that shape does have."""

    node: A.Node
    field: str
    shape: Shape
    known: tuple[str, ...]


def inline_refs(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """`schema` with its local `$ref`s (`#/$defs/X`, `#/definitions/X`) replaced by their
    targets; one that cannot be resolved (or too deep) becomes an open schema."""
    root = schema if root is None else root
    if depth > _DEPTH:
        return {}
    if isinstance(schema, list):
        return [inline_refs(s, root, depth + 1) for s in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target: Any = root
        if not ref.startswith("#/"):
            return {}
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return inline_refs(target, root, depth + 1) if isinstance(target, dict) else {}
    return {k: inline_refs(v, root, depth + 1) if k not in ("const", "enum", "default", "examples") else v
            for k, v in schema.items()}


def _closed_properties(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The fields an object schema declares when it allows no others, else None."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return None
    if schema.get("additionalProperties", False) is not False or "patternProperties" in schema:
        return None
    if any(k in schema for k in ("anyOf", "oneOf", "allOf", "not", "if", "$ref", "unevaluatedProperties")):
        return None
    return props


def _objects(schema: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every object schema inside `schema` (itself included), through properties, items and maps."""
    if depth > _DEPTH or not isinstance(schema, dict):
        return
    if schema.get("type") == "object" or "properties" in schema or "additionalProperties" in schema:
        yield schema
    for sub in (schema.get("properties") or {}).values() if isinstance(schema.get("properties"), dict) else ():
        yield from _objects(sub, depth + 1)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _objects(schema[key], depth + 1)


def origin_fields(outputs: dict[str, Any]) -> tuple[str, ...] | None:
    """Every field any object of any answer can have, when all the served tools declare their
    answers completely (every object closed); else None (origin() is not followed)."""
    if not outputs or any(not isinstance(s, dict) for s in outputs.values()):
        return None
    names: set[str] = set()
    for schema in outputs.values():
        for obj in _objects(schema):
            props = _closed_properties(obj)
            if props is None:
                # a map of objects (additionalProperties: an object schema) holds no scalar itself:
                # its values' objects are walked; any other open object (a map of scalars
                # included) may hold a value under any field, which leaves origin() open
                extra = obj.get("additionalProperties")
                if obj.get("properties") or not (isinstance(extra, dict) and (extra.get("type") == "object"
                                                                              or "properties" in extra)):
                    return None
                continue
            names.update(props)
    return tuple(sorted(names))


@dataclass
class OutputReads:
    """Walks one rule text: the shape of each sub-expression (None: not known) and the fields
    read that no answer has. `outputs`: tool -> its inlined outputSchema (None: none declared)."""

    outputs: dict[str, Any]
    origin: tuple[str, ...] | None = None  # origin_fields(outputs)
    unread: list[Unread] = field(default_factory=list)

    def shape(self, node: A.Node, env: dict[str, Shape | None]) -> Shape | None:
        """The shape of `node` (recording unread fields on the way)."""
        ns = namespace_tool(node)
        if ns is not None:
            kind, tool = ns
            schema = self.outputs.get(tool)
            if not isinstance(schema, dict):
                return None
            if kind == "latest":
                return Shape(schema, tool, f"latest.{tool}")
            return Shape({"type": "array", "items": schema}, tool, f"evidence.{tool}")
        if isinstance(node, A.Ident):
            return env.get(node.name)
        if isinstance(node, A.Select):
            return self._field(self.shape(node.operand, env), node.field, node)
        if isinstance(node, A.Index):
            base = self.shape(node.operand, env)
            self.shape(node.index, env)
            if base is None:
                return None
            if base.schema.get("type") == "array" and isinstance(base.schema.get("items"), dict):
                return Shape(base.schema["items"], base.tool, base.path + "[]")
            if isinstance(node.index, A.Lit) and node.index.kind == "string":
                return self._field(base, node.index.value, node)
            extra = base.schema.get("additionalProperties")
            return Shape(extra, base.tool, base.path + "[…]") if isinstance(extra, dict) else None
        if isinstance(node, A.Macro):
            return self._macro(node, env)
        if isinstance(node, A.Call) and node.target is None and node.func == "origin" and len(node.args) == 1:
            self.shape(node.args[0], env)
            if self.origin is None:
                return None
            schema = {"type": "object", "properties": {f: {} for f in self.origin}, "additionalProperties": False}
            return Shape(schema, None, f"origin({_text(node.args[0])})")
        if isinstance(node, A.Has):  # whether the field is there: its operand is read, the field is asked
            self.shape(node.operand, env)
            return None
        for child in A.children(node):
            self.shape(child, env)
        return None

    def _macro(self, node: A.Macro, env: dict[str, Shape | None]) -> Shape | None:
        target = self.shape(node.target, env)
        item = None
        if target is not None and target.schema.get("type") == "array" and isinstance(target.schema.get("items"), dict):
            item = Shape(target.schema["items"], target.tool, target.path + "[]")
        inner = {**env, node.var: item}
        body = [self.shape(n, inner) for n in (node.pred, node.transform) if n is not None]
        if node.kind == "filter":
            return target
        if node.kind == "map" and body and body[-1] is not None:
            mapped = body[-1]
            return Shape({"type": "array", "items": mapped.schema}, mapped.tool, mapped.path)
        return None

    def _field(self, base: Shape | None, name: str, node: A.Node) -> Shape | None:
        if base is None:
            return None
        props = _closed_properties(base.schema)
        if props is None:
            extra = base.schema.get("additionalProperties")
            hit = (base.schema.get("properties") or {}).get(name) if isinstance(base.schema.get("properties"),
                                                                                dict) else None
            if isinstance(hit, dict):
                return Shape(hit, base.tool, f"{base.path}.{name}")
            return Shape(extra, base.tool, f"{base.path}.{name}") if isinstance(extra, dict) else None
        if name not in props:
            self.unread.append(Unread(node, name, base, tuple(sorted(props))))
            return None
        sub = props[name]
        return Shape(sub, base.tool, f"{base.path}.{name}") if isinstance(sub, dict) and sub else None


def _text(node: A.Node) -> str:
    """A short name of an argument path for the origin() message (args.a.b)."""
    if isinstance(node, A.Select):
        return f"{_text(node.operand)}.{node.field}"
    if isinstance(node, A.Ident):
        return node.name
    return "…"
