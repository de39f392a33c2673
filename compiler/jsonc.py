"""skill_contract text as JSON with // and /* */ comments (§19), positions kept.

The LALR parser of grammar/contract.lark turns the text into `J` values (a JSON value plus its
span) without building a parse tree; syntax errors become diagnostics that say what was expected
where, with help from a table of known bad inputs (`JSON_ERRORS`, tested row by row).
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any, Callable, cast

from lark import Lark, Token, Transformer
from lark.lexer import Lexer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, make
from skillc.compiler.json_value import J
from skillc.compiler.studio_border import CODE as BORDER_CODE
from skillc.compiler.studio_border import LIMITS, contract_refusal, number_too_long
from skillc.runtime.text.border import clean_text


# Spans are built with model_construct: their fields are a token's own integers, and validating
# ~130 of them per contract was a fifth of a cold compile. (Typed loosely: lark types a token's
# positions as optional, and the basic lexer always sets them.)
_SPAN: Callable[..., ir.Span] = ir.Span.model_construct


def _tspan(t: Token) -> ir.Span:
    return _SPAN(line=t.line, column=t.column, end_line=t.end_line, end_column=t.end_column, start=t.start_pos, end=t.end_pos)


def _between(a: Token, b: Token) -> ir.Span:
    return _SPAN(line=a.line, column=a.column, end_line=b.end_line, end_column=b.end_column, start=a.start_pos, end=b.end_pos)


def _decode(t: Token) -> str:
    s = str(t)
    return s[1:-1] if "\\" not in s else json.loads(s)


class _TooLong(Exception):
    """An integer literal past the border's digit limit, raised from the parser's callback."""

    def __init__(self, token: Token) -> None:
        super().__init__(str(token)[:20])
        self.token = token


def _number(s: str) -> int | float:
    return int(s) if s.lstrip("-").isdigit() else float(s)


class _ToJ(Transformer[Token, Any]):
    """Inline LALR callbacks: each reduction yields a J (no tree is built)."""

    def start(self, c: list[J]) -> J:
        return c[0]

    def string(self, c: list[Token]) -> J:
        return J("string", _decode(c[0]), _tspan(c[0]))

    def number(self, c: list[Token]) -> J:
        if number_too_long(c[0]):
            raise _TooLong(c[0])  # int() would raise past Python's 4300 digits: refused at its token
        return J("number", _number(str(c[0])), _tspan(c[0]))

    def true(self, c: list[Token]) -> J:
        return J("bool", True, _tspan(c[0]))

    def false(self, c: list[Token]) -> J:
        return J("bool", False, _tspan(c[0]))

    def null(self, c: list[Token]) -> J:
        return J("null", None, _tspan(c[0]))

    def pair(self, c: list[Any]) -> tuple[str, ir.Span, J]:
        return (_decode(c[0]), _tspan(c[0]), c[1])

    def object(self, c: list[Any]) -> J:
        return J("object", c[1:-1], _between(c[0], c[-1]))

    def array(self, c: list[Any]) -> J:
        return J("array", c[1:-1], _between(c[0], c[-1]))


class _FastLexer(Lexer):
    """Lark's terminals of contract.lark as one compiled alternation, positions counted lazily.

    Same tokens as lark's basic lexer (built from the grammar's own terminal definitions, so the
    grammar stays the single source), about three times faster: the front end runs on every
    compile and lexing was half of its time.
    """

    def __init__(self, conf: Any) -> None:
        self.ignore = frozenset(conf.ignore)
        # Literal terminals first so `true` is not read as part of something longer; the JSON
        # terminals do not overlap otherwise.
        terms = sorted(conf.terminals, key=lambda t: (-t.priority, t.pattern.type != "str"))
        # Named outer groups: m.lastgroup is the terminal even when its own regex has groups.
        self.regex = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms))
        self.allowed = {t.name for t in terms} - self.ignore

    def lex(self, data: Any, *_: Any) -> Iterator[Token]:  # lark hands a custom lexer the text
        text = getattr(data, "text", data)
        match, ignore = self.regex.match, self.ignore
        pos, n, line, line_start = 0, len(text), 1, 0
        while pos < n:
            m = match(text, pos)
            if m is None:
                raise UnexpectedCharacters(text, pos, line, pos - line_start + 1, allowed=self.allowed)  # type: ignore[no-untyped-call]  # lark leaves it unannotated
            end = m.end()
            name = m.lastgroup
            assert name is not None  # every alternative of the regex is a named group
            if name in ignore:
                nl = text.count("\n", pos, end)
                if nl:
                    line += nl
                    line_start = text.rfind("\n", pos, end) + 1
            else:
                col = pos - line_start + 1
                yield Token(name, m.group(), pos, line, col, line, col + end - pos, end)
            pos = end


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files("skillc.grammar").joinpath("contract.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer=_FastLexer, transformer=_ToJ(), maybe_placeholders=False)


# ---------------------------------------------------------------- friendly syntax errors

_TOKEN_NAMES: dict[str, str] = {
    "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'", "_COMMA": "','", "_COLON": "':'",
    "STRING": "a string", "NUMBER": "a number", "TRUE": "true", "FALSE": "false", "NULL": "null",
    "$END": "end of text",
}
_VALUE_STARTS = {"LBRACE", "LSQB", "STRING", "NUMBER", "TRUE", "FALSE", "NULL"}

# Known bad inputs -> a human explanation (lark's GRAMMAR_ERRORS idea): an error whose parser
# state and token match one of the examples gets that explanation as help. Tested row by row.
JSON_ERRORS: list[tuple[str, list[str]]] = [
    ("a ',' is missing between two members", ['{"a": 1 "b": 2}', '{"a": {} "b": 2}', '{"a": "x" "b": 2}']),
    ("a trailing comma is not allowed in JSON", ['{"a": 1,}', '{"a": {"b": 1,}}']),
    ("a trailing comma is not allowed in a list", ['[1,]', '{"a": [1,]}']),
    ("a key must be followed by ':'", ['{"a" 1}', '{"a" "b"}']),
    ("a member needs a value after ':'", ['{"a": }', '{"a": ,}']),
    ("a ',' is missing between two list items", ['[1 2]', '{"a": [1 2]}', '["a" "b"]']),
    ("a '[' list is closed with '}'", ['{"a": [1}', '[1}']),
    ("a '{' object is closed with ']'", ['{"a": 1]', '[{"a": 1]']),
    ("the text ends before every '{' and '[' is closed", ['{"a": 1', '{"a": [1', '{"a": {"b": 1}']),
    ("there is text after the end of the contract's object", ['{"a": 1} 2', '{} {}', '{}}']),
]


def _position(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _describe_char(text: str, pos: int) -> tuple[str, str | None, int]:
    """Message, help and length for an UnexpectedCharacters at `pos`."""
    ch = text[pos]
    if ch == '"':
        i = pos + 1
        while i < len(text):
            c = text[i]
            if c == '"':
                break
            if c == "\\":
                if i + 1 < len(text) and text[i + 1] not in '"\\/bfnrtu':
                    return f"invalid escape '\\{text[i + 1]}' in a string", "JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", i - pos + 2
                if text[i + 1 : i + 2] == "u" and not all(h in "0123456789abcdefABCDEF" for h in text[i + 2 : i + 6]) or text[i + 1 : i + 2] == "u" and len(text) < i + 6:
                    return "invalid \\u escape in a string (needs 4 hex digits)", None, i - pos + 2
                i += 2
                continue
            if c == "\n":
                return "unterminated string: a line ends inside it", "close the string with '\"' (write a line break as \\n)", i - pos
            if ord(c) < 0x20:
                return f"control character U+{ord(c):04X} inside a string", "escape it (\\t, \\n, \\uXXXX)", i - pos + 1
            i += 1
        return "unterminated string", "close the string with '\"'", max(i - pos, 1)
    if ch == "'":
        return "strings and keys need double quotes, not single quotes", None, 1
    if ch == "/":
        if text.startswith("/*", pos):
            return "unterminated /* comment", "close it with */", 2
        return "a single '/' begins no comment", "comments are // to the end of the line, or /* ... */", 1
    if ch.isalpha() or ch == "_":
        end = pos
        while end < len(text) and (text[end].isalnum() or text[end] in "_$-"):
            end += 1
        word = text[pos:end]
        if word in ("True", "False", "None", "TRUE", "FALSE", "NULL", "Null"):
            return f"'{word}' is not JSON", "JSON spells them true, false and null", end - pos
        return f"unquoted word '{word}'", "keys and strings need double quotes", end - pos
    if ch in "+." or ch.isdigit():
        return f"malformed number at '{ch}'", "JSON numbers: -12, 0.5, 1e3 (no leading +, . or zeros)", 1
    return f"unexpected character {ch!r}", None, 1


def _syntax_error(text: str, exc: UnexpectedInput, skill: str | None, file: str | None) -> Diagnostic:
    """SC101 saying what was expected where, with the JSON_ERRORS explanation when one matches."""
    help_text: str | None = None
    if isinstance(exc, UnexpectedCharacters):
        pos = cast(int, exc.pos_in_stream)  # the lexer's offset (lark's base class declares it None)
        message, help_text, length = _describe_char(text, pos)
        line, col = _position(text, pos)
        end_line, end_col = _position(text, min(pos + length, len(text)))
        if end_line != line:
            end_line, end_col = line, col + 1
    else:
        assert isinstance(exc, UnexpectedToken)
        accepts = set(getattr(exc, "accepts", None) or exc.expected)
        if accepts >= _VALUE_STARTS:
            wanted = ["a value"] + sorted(_TOKEN_NAMES[t] for t in accepts - _VALUE_STARTS if t in _TOKEN_NAMES)
        else:
            wanted = sorted(_TOKEN_NAMES.get(t, t) for t in accepts)
        tok = exc.token
        if tok.type == "$END":
            found = "the end of the text"
            pos = len(text.rstrip())
            line, col = _position(text, pos)
            end_line, end_col = line, col + 1
        else:
            found = _TOKEN_NAMES.get(tok.type, tok.type) if tok.type not in ("STRING", "NUMBER") else repr(str(tok))
            line, col, end_line, end_col = tok.line, tok.column, tok.end_line, tok.end_column
        message = f"expected {' or '.join(wanted)}, found {found}"
        try:
            help_text = exc.match_examples(_parser().parse, JSON_ERRORS, use_accepts=True)
        except Exception:  # noqa: BLE001 - a help text is optional; never fail the diagnostic
            help_text = None
    span = ir.Span(line=line, column=col, end_line=end_line, end_column=end_col)
    return make("SC101", "error", f"invalid JSON: {message}", text=text, span=span, skill=skill, file=file, help=help_text)


def parse_json(text: str, *, skill: str | None = None, file: str | None = None) -> tuple[J | None, list[Diagnostic]]:
    """The contract text as a J tree (JSON with comments), or None and an SC101 diagnostic."""
    if not text or not text.strip():
        span = ir.Span(line=1, column=1, end_line=1, end_column=2)
        return None, [make("SC101", "error", "skill_contract is empty (§16 rule 1)", text=text, span=span, skill=skill, file=file)]
    try:
        root = cast(J, _parser().parse(text))  # the inline transformer builds J; Lark types a tree
    except UnexpectedInput as exc:
        return None, [_syntax_error(text, exc, skill, file)]
    except _TooLong as exc:
        return None, [make(BORDER_CODE, "error", f"an integer over {LIMITS.max_int_digits} digits in the contract: "
                           "the skill cannot be read and is dropped", text=text, span=_tspan(exc.token), skill=skill, file=file)]
    except RecursionError:
        span = ir.Span(line=1, column=1, end_line=1, end_column=2)
        return None, [make("SC101", "error", "invalid JSON: nested too deeply", text=text, span=span, skill=skill, file=file)]
    # The border (runtime.border's limits) before anything recurses over the value or writes it
    # out: a lone surrogate from a "\ud800" escape, nesting past 64, a number too long.
    refused = contract_refusal(root)
    if refused is not None:
        message, span = refused
        shown = clean_text(text, len(text))  # a raw lone surrogate in the excerpt could not be printed
        return None, [make(BORDER_CODE, "error", f"{message}: the skill cannot be read and is dropped", text=shown,
                           span=span, skill=skill, file=file)]
    return root, []


def plain(j: J) -> Any:
    """The Python value of a J (objects: last duplicate key wins, as in most JSON readers)."""
    if j.kind == "object":
        return {k: plain(v) for k, _, v in j.value}
    if j.kind == "array":
        return [plain(v) for v in j.value]
    return j.value


KIND_NAMES = {"object": "an object", "array": "a list", "string": "a string", "number": "a number", "bool": "a boolean", "null": "null"}
