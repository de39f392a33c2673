"""The typed IR of one rule expression (grammar/rules.lark): small frozen nodes, each with the
character range it was read from (`pos`, 0-based offsets into the expression text, end
exclusive), so the checker and codegen point their diagnostics inside the rule text."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

Pos = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Lit:
    """A literal: int, double, string, bool or null (`kind` says which)."""

    pos: Pos
    kind: Literal["int", "double", "string", "bool", "null"]
    value: Any


@dataclass(frozen=True, slots=True)
class Ident:
    """A name: a root (args, platform, …), a `let` binding or a macro's variable."""

    pos: Pos
    name: str


@dataclass(frozen=True, slots=True)
class Select:
    """`operand.field`."""

    pos: Pos
    operand: "Node"
    field: str


@dataclass(frozen=True, slots=True)
class Index:
    """`operand[index]`."""

    pos: Pos
    operand: "Node"
    index: "Node"


@dataclass(frozen=True, slots=True)
class Call:
    """A function `f(args)` (target None) or a method `target.f(args)`."""

    pos: Pos
    func: str
    args: tuple["Node", ...]
    target: "Node | None" = None


@dataclass(frozen=True, slots=True)
class ListLit:
    """`[a, b, …]`."""

    pos: Pos
    items: tuple["Node", ...]


@dataclass(frozen=True, slots=True)
class MapLit:
    """`{k: v, …}`."""

    pos: Pos
    entries: tuple[tuple["Node", "Node"], ...]


@dataclass(frozen=True, slots=True)
class Unary:
    """`!x` or `-x`."""

    pos: Pos
    op: Literal["!", "-"]
    operand: "Node"


@dataclass(frozen=True, slots=True)
class Binary:
    """An infix operator: arithmetic, comparison, `in`, `&&`, `||`."""

    pos: Pos
    op: str
    left: "Node"
    right: "Node"


@dataclass(frozen=True, slots=True)
class Cond:
    """`cond ? then : other`."""

    pos: Pos
    cond: "Node"
    then: "Node"
    other: "Node"


@dataclass(frozen=True, slots=True)
class Macro:
    """`target.all(x, p)`, `exists`, `exists_one`, `filter`, `map(x, e)` and `map(x, p, e)`."""

    pos: Pos
    kind: Literal["all", "exists", "exists_one", "filter", "map"]
    target: "Node"
    var: str
    var_pos: Pos
    pred: "Node | None"  # the filter of a map (None for a two-argument map)
    transform: "Node | None" = None  # map's result expression


@dataclass(frozen=True, slots=True)
class Has:
    """`has(operand.field)`: whether the field is present."""

    pos: Pos
    operand: "Node"
    field: str


Node = Union[Lit, Ident, Select, Index, Call, ListLit, MapLit, Unary, Binary, Cond, Macro, Has]


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-expressions of a node, in reading order."""
    if isinstance(node, (Select, Has)):
        return (node.operand,)
    if isinstance(node, Index):
        return (node.operand, node.index)
    if isinstance(node, Call):
        return ((node.target,) if node.target is not None else ()) + node.args
    if isinstance(node, ListLit):
        return node.items
    if isinstance(node, MapLit):
        return tuple(x for kv in node.entries for x in kv)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Cond):
        return (node.cond, node.then, node.other)
    if isinstance(node, Macro):
        return tuple(n for n in (node.target, node.pred, node.transform) if n is not None)
    return ()
