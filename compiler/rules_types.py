"""The types the rule checker reasons with, and the shapes it infers for what a rule sees.

A type is a small frozen value: a primitive (`INT`, `STRING`, …), `DYN` (not known until run
time: JSON values from the model or a tool), a list, a map, or a record (a JSON object whose
members are partly known). Shapes come from the contract: `args` from the tool's parameter paths
(an enum of strings types the argument), `platform` from the open platform fields, `inputs`
from the declared inputs, and a tool's response from its success, error and extract paths.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from skillc.compiler import ir


@dataclass(frozen=True)
class Type:
    """One rule type; `kind` is its name ("int", "list", "record", …)."""

    kind: str
    elem: "Type | None" = None  # list item, map value
    key: "Type | None" = None  # map key
    fields: tuple[tuple[str, "Type"], ...] = ()  # record members known
    closed: bool = False  # record: a member not in `fields` is an error
    label: str = ""  # record: what it is, for messages ("the arguments of cancel_order")

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list({self.elem})"
        if self.kind == "map":
            return f"map({self.key}, {self.elem})"
        if self.kind == "record":
            return "map(string, dyn)"
        return self.kind

    def member(self, name: str) -> "Type | None":
        """A record member's type, None when not known."""
        for k, t in self.fields:
            if k == name:
                return t
        return None


INT, DOUBLE, STRING, BOOL, NULL = Type("int"), Type("double"), Type("string"), Type("bool"), Type("null")
TIMESTAMP, DURATION, DECIMAL, DYN = Type("timestamp"), Type("duration"), Type("decimal"), Type("dyn")
NUMERIC = frozenset({"int", "double", "decimal"})


def list_of(t: Type) -> Type:
    """list(t)."""
    return Type("list", elem=t)


def map_of(k: Type, v: Type) -> Type:
    """map(k, v)."""
    return Type("map", key=k, elem=v)


def record(fields: dict[str, Type], *, closed: bool = False, label: str = "") -> Type:
    """A JSON object type with the members known."""
    return Type("record", fields=tuple(sorted(fields.items())), closed=closed, label=label)


def of_value(v: Any) -> Type:
    """The type of a JSON value given in the contract (a const, an enum item, a success value)."""
    if v is None:
        return NULL
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return DOUBLE
    if isinstance(v, str):
        return STRING
    if isinstance(v, list):
        return list_of(DYN)
    return record({})


def join(types: Iterable[Type]) -> Type:
    """One type for several values: their common type, else dyn."""
    ts = list(types)
    if ts and all(t == ts[0] for t in ts):
        return ts[0]
    return DYN


# ---------------------------------------------------------------- shapes from the contract


@dataclass
class _Tree:
    """A record under construction: member -> subtree; `leaf` the type of a member with none."""

    members: dict[str, "_Tree"] = field(default_factory=dict)
    each: bool = False  # the member is a list of these records (`lines[]`)
    leaf: Type = DYN

    def at(self, parts: Iterable[ir.PathPart]) -> "_Tree":
        node = self
        for p in parts:
            if p.kind == "key" and p.name is not None:
                node = node.members.setdefault(p.name, _Tree())
            elif p.kind == "each":
                node.each = True
            # a numeric index into a response list: its items are not typed further
        return node

    def type(self, label: str = "", closed: bool = False) -> Type:
        if not self.members:
            t = self.leaf
        else:
            t = record({k: v.type() for k, v in self.members.items()}, closed=closed, label=label)
        return list_of(t) if self.each else t


def args_shape(tool: ir.ToolContract) -> Type:
    """`args` of a tool: its parameter paths, typed by enum or const where the contract says."""
    root = _Tree()
    for arg in tool.args.values():
        node = root.at(arg.path.parts)
        if arg.has_const:
            node.leaf = of_value(arg.const)
        elif arg.enum:
            node.leaf = join(of_value(e) for e in arg.enum)
        elif arg.from_ is not None and isinstance(arg.from_, ir.PlatformRef):
            node.leaf = platform_field_type(arg.from_.field)
    return root.type(label=f"the arguments of {tool.name}")


def response_shape(tool: ir.ToolContract | None) -> Type:
    """A tool's response body: the members its success, error and extract paths name."""
    root = _Tree()
    if tool is None:
        return record({}, label="a response")
    s = tool.success
    if s is not None and s.path is not None:
        node = root.at(s.path.parts)
        if s.has_value and s.op in ("EQ", "NE"):
            node.leaf = of_value(s.value)
    if tool.error is not None:
        for p in (tool.error.code, tool.error.message):
            if p is not None:
                root.at(p.parts)
    for ex in tool.extracts:
        if ex.path is not None:
            node = root.at(ex.path.parts)
            for f in ex.fields:
                node.members.setdefault(f, _Tree())
    t = root.type(label=f"a {tool.name} response")
    return t if t.kind == "record" else record({}, label=f"a {tool.name} response")


_PLATFORM_TYPES = {"Long": INT, "String": STRING, "Enum": STRING}


def platform_field_type(name: str) -> Type:
    """The type of an open platform field (§11)."""
    return _PLATFORM_TYPES.get(ir.PLATFORM_FIELDS.get(name, ""), DYN)


def platform_shape() -> Type:
    """`platform`: the open platform fields, nothing else."""
    return record({k: platform_field_type(k) for k in ir.PLATFORM_FIELDS}, closed=True, label="platform")


def inputs_shape(contract: ir.Contract | None) -> Type:
    """`inputs`: the declared inputs of the skill."""
    names = dict.fromkeys(contract.inputs, DYN) if contract is not None else {}
    return record(names, closed=contract is not None, label="inputs")
