"""Rule text -> rule IR (compiler.rules_ast), with grammar/rules.lark (LALR, built once).

String escapes, numeric literals and the macros (`has`, `all`, `exists`, `exists_one`, `map`,
`filter`) are read here; what the subset leaves out (unsigned integers, bytes, CEL's reserved
words) is a `RuleError` of kind "unsupported", never a silent reading.
"""
from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Literal, cast

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from skillc.compiler import rules_ast as A
from skillc.runtime.words.errors import SkillcError

RuleErrorKind = Literal["syntax", "unsupported", "name", "type", "constant"]

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
MACROS = ("all", "exists", "exists_one", "filter", "map")
MacroKind = Literal["all", "exists", "exists_one", "filter", "map"]
# CEL reserves these words; an identifier spelled like one is refused (CEL does the same).
RESERVED = frozenset({"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop",
                      "package", "namespace", "return", "var", "void", "while"})
_TERMINALS = {"IDENT": "a name", "INT": "a number", "FLOAT": "a number", "STRING": "a string", "RPAR": "')'",
              "RSQB": "']'", "RBRACE": "'}'", "COLON": "':'", "COMMA": "','", "$END": "the end"}


class RuleError(SkillcError, ValueError):
    """A rule expression that cannot be compiled: `start`/`end` are 0-based offsets in its text."""

    def __init__(self, message: str, start: int = 0, end: int | None = None, kind: RuleErrorKind = "syntax") -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = start + 1 if end is None else max(end, start + 1)
        self.kind = kind


def _pos_of(meta: Any) -> A.Pos:
    return (meta.start_pos, meta.end_pos)


def _tok_pos(tok: Token) -> A.Pos:
    start = tok.start_pos or 0
    return (start, tok.end_pos if tok.end_pos is not None else start + len(tok))


_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                   "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}


def unescape(body: str, start: int) -> str:
    """The text of a quoted (non-raw) CEL string body; `start` is its offset, for errors."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[nxt])
            i += 2
            continue
        width = {"x": 2, "X": 2, "u": 4, "U": 8}.get(nxt)
        if width is not None:
            digits = body[i + 2:i + 2 + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise RuleError(f"bad escape \\{nxt}: expected {width} hex digits", start + i, start + i + 2 + width)
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise RuleError(f"escape \\{nxt}{digits} is not a Unicode character", start + i, start + i + 2 + width)
            out.append(chr(code))
            i += 2 + width
            continue
        if nxt in "0123":
            digits = body[i + 1:i + 4]
            if len(digits) != 3 or any(c not in "01234567" for c in digits):
                raise RuleError("bad octal escape: expected three octal digits", start + i, start + i + 4)
            out.append(chr(int(digits, 8)))
            i += 4
            continue
        raise RuleError(f"unknown escape \\{nxt}", start + i, start + i + 2)
    return "".join(out)


def _string_value(tok: Token) -> str:
    text = str(tok)
    start = tok.start_pos or 0
    raw = text[0] in "rR"
    if raw:
        text, start = text[1:], start + 1
    q = 3 if text[:3] in ("'''", '"""') else 1
    body = text[q:-q]
    if raw:
        return body
    return unescape(body, start + q)


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    """Parse tree -> rule IR; each node keeps its source range."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    # ------------------------------------------------------------ literals

    def int_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        text = str(c[0])
        value = int(text, 16) if text.lower().startswith("0x") else int(text)
        return A.Lit(_tok_pos(c[0]), "int", value)  # range checked once the sign is known (unary)

    def uint_lit(self, meta: Any, c: list[Token]) -> A.Node:
        raise RuleError(f"unsigned integers ({c[0]}) are not supported: write a plain integer", *_tok_pos(c[0]),
                        kind="unsupported")

    def float_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(_tok_pos(c[0]), "double", float(str(c[0])))

    def string_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(_tok_pos(c[0]), "string", _string_value(c[0]))

    def bytes_lit(self, meta: Any, c: list[Token]) -> A.Node:
        raise RuleError("bytes literals (b'…') are not supported", *_tok_pos(c[0]), kind="unsupported")

    def message_lit(self, meta: Any, c: list[Any]) -> A.Node:
        raise RuleError("protocol buffer messages (Type{field: …}) are not supported", *_pos_of(meta), kind="unsupported")

    def true_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(_tok_pos(c[0]), "bool", True)

    def false_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(_tok_pos(c[0]), "bool", False)

    def null_lit(self, meta: Any, c: list[Token]) -> A.Lit:
        return A.Lit(_tok_pos(c[0]), "null", None)

    # ------------------------------------------------------------ names, members, calls

    def _name(self, tok: Token) -> str:
        name = str(tok)
        if name in RESERVED:
            raise RuleError(f"'{name}' is a reserved word in CEL and cannot be a name", *_tok_pos(tok), kind="unsupported")
        return name

    def ident(self, meta: Any, c: list[Token]) -> A.Ident:
        return A.Ident(_tok_pos(c[0]), self._name(c[0]))

    def select(self, meta: Any, c: list[Any]) -> A.Select:
        return A.Select(_pos_of(meta), c[0], self._name(c[1]))

    def index(self, meta: Any, c: list[Any]) -> A.Index:
        return A.Index(_pos_of(meta), c[0], c[1])

    def args(self, meta: Any, c: list[A.Node]) -> tuple[A.Node, ...]:
        return tuple(c)

    def entry(self, meta: Any, c: list[A.Node]) -> tuple[A.Node, A.Node]:
        return (c[0], c[1])

    def list_lit(self, meta: Any, c: list[Any]) -> A.ListLit:
        return A.ListLit(_pos_of(meta), tuple(x for x in c if x is not None))

    def map_lit(self, meta: Any, c: list[Any]) -> A.MapLit:
        return A.MapLit(_pos_of(meta), tuple(x for x in c if x is not None))

    def call(self, meta: Any, c: list[Any]) -> A.Node:
        name, args = str(c[0]), tuple[Any, ...](c[1] or ())
        pos = _pos_of(meta)
        if name == "has":
            if len(args) != 1 or not isinstance(args[0], A.Select):
                raise RuleError("has() takes one field selection, e.g. has(args.note)", *pos)
            return A.Has(pos, args[0].operand, args[0].field)
        return A.Call(pos, self._name(c[0]), tuple(args))

    def method(self, meta: Any, c: list[Any]) -> A.Node:
        target, name, args = c[0], str(c[1]), tuple[Any, ...](c[2] or ())
        pos = _pos_of(meta)
        if name in MACROS:
            want = (2, 3) if name == "map" else (2,)
            if len(args) not in want:
                raise RuleError(f"{name}() takes {' or '.join(map(str, want))} arguments: a variable name and "
                                f"{'an expression' if name == 'map' else 'a condition'}", *pos)
            var = args[0]
            if not isinstance(var, A.Ident):
                raise RuleError(f"the first argument of {name}() must be a variable name", *var.pos)
            if name == "map":
                pred, transform = (args[1], args[2]) if len(args) == 3 else (None, args[1])
                return A.Macro(pos, "map", target, var.name, var.pos, pred, transform)
            kind = cast(MacroKind, name)
            return A.Macro(pos, kind, target, var.name, var.pos, args[1])
        return A.Call(pos, self._name(c[1]), tuple(args), target)

    # ------------------------------------------------------------ operators

    def unary(self, meta: Any, c: list[Any]) -> A.Node:
        op, operand = str(c[0]), c[1]
        pos = _pos_of(meta)
        # `-1` is a literal (so -9223372036854775808 is in range); `-(1)` stays a negation
        bare = "(" not in self.text[pos[0] + 1:operand.pos[0]]
        if op == "-" and isinstance(operand, A.Lit) and operand.kind in ("int", "double") and bare:
            return A.Lit(pos, operand.kind, -operand.value)
        return A.Unary(pos, "!" if op == "!" else "-", operand)

    def binary(self, meta: Any, c: list[Any]) -> A.Binary:
        return A.Binary(_pos_of(meta), str(c[1]), c[0], c[2])

    def cond(self, meta: Any, c: list[Any]) -> A.Cond:
        return A.Cond(_pos_of(meta), c[0], c[1], c[2])


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("skillc.grammar").joinpath("rules.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def _syntax_error(text: str, exc: UnexpectedInput) -> RuleError:
    """A one-line message: what was found where, and what would have been accepted."""
    pos = getattr(exc, "pos_in_stream", None)
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        pos = len(text)
    if not isinstance(pos, int) or pos < 0:
        pos = len(text)
    if isinstance(exc, UnexpectedCharacters):
        found = repr(text[pos]) if pos < len(text) else "the end"
        return RuleError(f"unexpected character {found}", pos, pos + 1)
    tok = exc.token if isinstance(exc, UnexpectedToken) else None
    found = "the end of the rule" if tok is None or tok.type == "$END" else repr(str(tok))
    expected = sorted({_TERMINALS[t] for t in getattr(exc, "expected", ()) or () if t in _TERMINALS})
    hint = f"; expected {' or '.join(expected)}" if expected and len(expected) <= 4 else ""
    end = pos + (len(str(tok)) if tok is not None and tok.type != "$END" else 1)
    return RuleError(f"unexpected {found}{hint}", pos, end)


MAX_DEPTH = 64  # nesting of one rule expression: far beyond any real rule, well within the recursion limit


def _depth(node: A.Node) -> int:
    """How deeply the expression nests (iteratively: a hostile text cannot exhaust the stack here)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in A.children(n))
    return deepest


def _check_ints(node: A.Node) -> None:
    """Integer literals must fit CEL's 64-bit int (after the sign is applied)."""
    if isinstance(node, A.Lit) and node.kind == "int" and not INT64_MIN <= node.value <= INT64_MAX:
        raise RuleError(f"integer literal {node.value} does not fit a 64-bit int", *node.pos)
    for child in A.children(node):
        _check_ints(child)


@functools.lru_cache(maxsize=2048)
def parse_rule_expr(text: str) -> A.Node:
    """Parse one rule expression into rule IR; raises RuleError (syntax or unsupported)."""
    if not text.strip():
        raise RuleError("empty expression", 0, max(len(text), 1))
    deep = RuleError(f"the expression nests more than {MAX_DEPTH} levels deep: split it with let", 0, len(text))
    try:
        tree = _parser().parse(text)
        node: A.Node = _ToAst(text).transform(tree)
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    except VisitError as exc:
        if isinstance(exc.orig_exc, RuleError):
            raise exc.orig_exc from None
        if isinstance(exc.orig_exc, RecursionError):
            raise deep from None
        raise
    except RecursionError:
        raise deep from None
    if _depth(node) > MAX_DEPTH:
        raise deep
    _check_ints(node)
    return node
