"""Value expressions (§5.1, §7, §9, §6.4) and paths, parsed with grammar/expr.lark into typed IR.

One LALR parser with three start symbols is built on first use and kept for the process; the
transformer runs inline (no parse tree). Results are memoised per (text, where): the same
expressions (`platform.userId`, `evidence.space_list.id`) recur across a studio's contracts.
"""
from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Literal, cast

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from skillc.compiler import ir
from skillc.runtime.words.errors import SkillcError
from skillc.runtime.text.idtext import ascii_int

Where = Literal["arg", "input", "verify"]
ExprKind = Literal["syntax", "prefix", "platform", "call"]

ARG_PREFIXES: tuple[str, ...] = ("inputs.", "outputs.", "shared.", "session.", "prior.", "platform.", "evidence.")

_TERMINAL_NAMES: dict[str, str] = {
    "NAME": "a name",
    "ENTITY_ID": "an entity id",
    "_DOT": "'.'",
    "_COLON": "':'",
    "EACH": "'[]'",
    "$END": "the end",
}


class ExprError(SkillcError, ValueError):
    """An expression or path that cannot be used; `column` is 1-based inside the expression text.

    `kind` says which rule it breaks: "syntax" (malformed), "prefix" (§9 unknown prefix, load
    rule 2), "platform" (§11 unknown or hidden platform field, load rule 10), "call" (`call.*`
    outside verify.args, §9).
    """

    def __init__(self, message: str, column: int = 1, kind: ExprKind = "syntax") -> None:
        super().__init__(message)
        self.message = message
        self.column = column
        self.kind = kind


def _part(name: str) -> ir.PathPart:
    return ir.PathPart(kind="key", name=name)


def _segment(name: str) -> ir.PathPart:
    # A numeric segment indexes a list (docs/interpretations.md: Paths), e.g. `evidence.tag_list.0.id`.
    index = ascii_int(name)  # as the runtime reads a path: 5,000 digits name a member, no index
    if index is not None:
        return ir.PathPart(kind="index", index=index)
    return _part(name)


class _ToIR(Transformer[Token, Any]):
    """Builds IR straight from the LALR reductions (span-less; spans are added by the caller)."""

    def segment(self, c: list[Token]) -> list[ir.PathPart]:
        return [_segment(str(c[0]))]

    def each_segment(self, c: list[Token]) -> list[ir.PathPart]:
        return [_part(str(c[0])), ir.PathPart(kind="each")]

    def path(self, c: list[list[ir.PathPart]]) -> list[ir.PathPart]:
        return [p for seg in c for p in seg]

    def param_path(self, c: list[list[ir.PathPart]]) -> list[ir.PathPart]:
        return c[0]

    def response_path(self, c: list[Token]) -> list[ir.PathPart]:
        # A numeric segment indexes a list (docs/interpretations.md: Paths).
        return [_segment(str(t)) for t in c]

    def inputs_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("inputs", c[1])

    def outputs_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("outputs", c[1])

    def shared_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("shared", c[1])

    def session_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("session", c[1])

    def call_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("call", c[1])

    def prior_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("prior", (str(c[1]), None if c[2] is None else str(c[2]), None if c[3] is None else str(c[3])))

    def platform_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("platform", c[1])

    def evidence_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("evidence", (str(c[1]), c[2] or []))

    def bare_ref(self, c: list[Any]) -> tuple[str, Any]:
        return ("bare", c[0])


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("skillc.grammar").joinpath("expr.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        start=["expr", "param_path", "response_path"],
        transformer=_ToIR(),
        maybe_placeholders=True,
    )


def _syntax_error(text: str, exc: UnexpectedInput, what: str) -> ExprError:
    """A one-line message saying what was found where, and what would have been accepted."""
    column = getattr(exc, "column", None)
    if not isinstance(column, int) or column < 1:
        column = len(text) + 1
    if isinstance(exc, UnexpectedCharacters):
        pos = cast(int, exc.pos_in_stream)  # the lexer's offset (lark's base class declares it None)
        found = repr(text[pos]) if pos < len(text) else "end of text"
        expected = exc.allowed
    elif isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            found, column = "end of text", len(text) + 1
        else:
            found = repr(str(exc.token))
        expected = exc.expected
    else:  # pragma: no cover - lark raises only the two above for LALR
        found, expected = "input", set()
    names = sorted({_TERMINAL_NAMES.get(t, t.lower()) for t in expected if not t.isupper() or t in _TERMINAL_NAMES})
    hint = f"; expected {' or '.join(names)}" if names and len(names) <= 4 else ""
    if not text:
        return ExprError(f"empty {what}", 1)
    return ExprError(f"{what} {text!r}: unexpected {found} at column {column}{hint}", column)


# The path-only references, built alike from their parsed path.
_PATH_REFS: dict[str, type[ir.InputsRef | ir.OutputsRef | ir.SharedRef | ir.SessionRef | ir.CallRef]] = {
    "inputs": ir.InputsRef,
    "outputs": ir.OutputsRef,
    "shared": ir.SharedRef,
    "session": ir.SessionRef,
    "call": ir.CallRef,
}


@functools.lru_cache(maxsize=4096)
def _parse_expr_cached(text: str, where: Where) -> ir.Expr:
    try:
        # The inline transformer turns the tree into (prefix, data); Lark types it as a tree.
        prefix, data = cast(tuple[str, Any], _parser().parse(text, start="expr"))
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc, "expression") from None
    if prefix == "call" and where != "verify":
        raise ExprError(f"'call.' is only allowed in verify.args (§9): {text!r}", 1, "call")
    if prefix == "bare":
        if where == "input":
            return ir.BareRef(text=text, path=data)
        head = text.split(".", 1)[0]
        expected = ", ".join(ARG_PREFIXES) + (", call." if where == "verify" else "")
        if "." in text:
            msg = f"unknown prefix '{head}.' in {text!r} (§9); expected one of {expected}"
        else:
            msg = f"expression {text!r} has no prefix (§9); expected one of {expected}"
        raise ExprError(msg, 1, "prefix")
    if prefix == "platform":
        field = str(data)
        if field not in ir.PLATFORM_FIELDS:
            col = len("platform.") + 1
            if field in ir.HIDDEN_PLATFORM_FIELDS:
                msg = f"platform field '{field}' is not open: it is hidden by platform.hidden (§11)"
            else:
                msg = f"unknown platform field '{field}' (§11); open fields are {', '.join(ir.PLATFORM_FIELDS)}"
            raise ExprError(msg, col, "platform")
        return ir.PlatformRef(text=text, field=field)
    if prefix == "prior":
        etype, eid, attr = data
        return ir.PriorRef(text=text, entity_type=etype, entity_id=eid, attr=attr)
    if prefix == "evidence":
        key, path = data
        return ir.EvidenceRef(text=text, key=key, path=path)
    return _PATH_REFS[prefix](text=text, path=data)


def parse_expression(text: str, *, where: Where, span_base: ir.Span | None = None) -> ir.Expr:
    """Parse a from-expression into typed IR; raises ExprError for anything §9/§11 refuse.

    `where` is the property it stands in: "arg" (args.<p>.from: a known prefix is required),
    "input" (inputs.<n>.from: no or another prefix means a same-named upstream output) or
    "verify" (verify.args: `call.*` allowed). `span_base` becomes the node's span.
    """
    node = _parse_expr_cached(text, where)
    if span_base is not None:
        node = node.model_copy(update={"span": span_base})
    return node


@functools.lru_cache(maxsize=4096)
def _parse_path_cached(text: str, start: str) -> tuple[ir.PathPart, ...]:
    try:
        # The inline transformer returns the path's parts; Lark types it as a tree.
        return tuple(cast(list[ir.PathPart], _parser().parse(text, start=start)))
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc, "path") from None


def parse_param_path(text: str, *, span: ir.Span | None = None) -> ir.Path:
    """A parameter path (§5.1): `title`, `orderInfo.taxNo`, `lines[].goodsCode`."""
    return ir.Path(text=text, parts=list(_parse_path_cached(text, "param_path")), span=span)


def parse_response_path(text: str, *, span: ir.Span | None = None) -> ir.Path:
    """A response path (§6): dotted, a numeric segment is a list index (`data.records.0.id`)."""
    return ir.Path(text=text, parts=list(_parse_path_cached(text, "response_path")), span=span)
