"""skill_contract text -> typed IR (spec §2–§9, §19), with diagnostics pointing into the text.

Two layers: the LALR parser of grammar/contract.lark turns the text into `J` values (a JSON value
plus its span) without building a parse tree; `_Builder` then reads the J tree into
`ir.Contract`, applying §19: unknown properties are ignored with a note, an empty string (or
null) is unset, enums are case-sensitive. Rules the IR cannot represent
(bad enums, bad expressions: load rules 2, 10, 13) are reported here; the rest in validate.py.
"""
from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer
from lark.lexer import Lexer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, make
from skillc.compiler.expr import ExprError, Where, parse_expression, parse_param_path, parse_response_path


@dataclass(slots=True)
class J:
    """A JSON value with its span. `value`: list of (key, key_span, J) for objects, list of J for
    arrays, the Python value for scalars."""

    kind: str  # object | array | string | number | bool | null
    value: Any
    span: ir.Span


def _tspan(t: Token) -> ir.Span:
    return ir.Span(line=t.line, column=t.column, end_line=t.end_line, end_column=t.end_column, start=t.start_pos, end=t.end_pos)


def _between(a: Token, b: Token) -> ir.Span:
    return ir.Span(line=a.line, column=a.column, end_line=b.end_line, end_column=b.end_column, start=a.start_pos, end=b.end_pos)


def _decode(t: Token) -> str:
    s = str(t)
    return s[1:-1] if "\\" not in s else json.loads(s)


def _number(s: str) -> int | float:
    return int(s) if s.lstrip("-").isdigit() else float(s)


class _ToJ(Transformer):
    """Inline LALR callbacks: each reduction yields a J (no tree is built)."""

    def start(self, c: list[J]) -> J:
        return c[0]

    def string(self, c: list[Token]) -> J:
        return J("string", _decode(c[0]), _tspan(c[0]))

    def number(self, c: list[Token]) -> J:
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
                raise UnexpectedCharacters(text, pos, line, pos - line_start + 1, allowed=self.allowed)
            end = m.end()
            name = m.lastgroup
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
        pos = exc.pos_in_stream
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
        return _parser().parse(text), []
    except UnexpectedInput as exc:
        return None, [_syntax_error(text, exc, skill, file)]
    except RecursionError:
        span = ir.Span(line=1, column=1, end_line=1, end_column=2)
        return None, [make("SC101", "error", "invalid JSON: nested too deeply", text=text, span=span, skill=skill, file=file)]


def plain(j: J) -> Any:
    """The Python value of a J (objects: last duplicate key wins, as in most JSON readers)."""
    if j.kind == "object":
        return {k: plain(v) for k, _, v in j.value}
    if j.kind == "array":
        return [plain(v) for v in j.value]
    return j.value


def parse_contract(text: str, *, skill: str | None = None, file: str | None = None) -> tuple[ir.Contract | None, list[Diagnostic]]:
    """Parse skill_contract text into IR. None (with SC101) if it is not JSON or not an object.

    Never raises on bad text: everything wrong is a diagnostic. Errors here (bad enums, bad
    expressions, wrong JSON types) make the skill unloadable, like validate()'s errors.
    """
    root, diags = parse_json(text, skill=skill, file=file)
    if root is None:
        return None, diags
    if root.kind != "object":
        return None, [make("SC101", "error", f"skill_contract must be a JSON object, found {_KIND_NAMES[root.kind]} (§2)", text=text, span=root.span, skill=skill, file=file)]
    builder = _Builder(text, skill, file)
    contract = builder.contract(root)
    return contract, diags + builder.diags


_KIND_NAMES = {"object": "an object", "array": "a list", "string": "a string", "number": "a number", "bool": "a boolean", "null": "null"}


# ---------------------------------------------------------------- J tree -> IR

ROOT_KEYS = frozenset({"mode", "delegatable", "target", "inputs", "outputs", "tools"})
TOOL_KEYS = frozenset({"label", "sideEffect", "confirm", "idempotencyKey", "args", "success", "error", "extracts", "verify"})
ARG_KEYS = frozenset({"from", "const", "when", "sources", "required", "enum", "missing", "sensitive", "label", "fresh"})
MISSING_KEYS = frozenset({"action", "tool", "message"})
SUCCESS_KEYS = frozenset({"path", "op", "value"})
ERROR_KEYS = frozenset({"code", "message"})
EXTRACT_KEYS = frozenset({"key", "path", "fields", "entity"})
ENTITY_KEYS = frozenset({"type", "id", "name", "scalar"})
VERIFY_KEYS = frozenset({"tool", "args"})
VERIFY_ARG_KEYS = frozenset({"from", "const"})
INPUT_KEYS = frozenset({"from", "required", "provider"})
OUTPUT_KEYS = frozenset({"type", "fields", "minItems", "hint", "required", "share", "entity", "sources", "constant", "sensitive"})

# The §19 constant-key mix-up: silently ignored by the runtime, so it earns a warning, not a note.
_MIXUPS = {("arg", "constant"): "const", ("output", "const"): "constant"}
_EXPR_CODES = {"syntax": "SC115", "prefix": "SC102", "platform": "SC110", "call": "SC116"}
_JSON_KIND = {"string": "a string", "bool": "a boolean", "number": "a number", "object": "an object", "array": "a list"}

Props = dict[str, tuple[ir.Span, J]]


class _Builder:
    """Reads a J tree into IR, collecting diagnostics instead of raising."""

    def __init__(self, text: str, skill: str | None, file: str | None) -> None:
        self.text, self.skill, self.file = text, skill, file
        self.diags: list[Diagnostic] = []

    def _d(self, code: str, severity: str, message: str, span: ir.Span | None, help: str | None = None) -> None:
        self.diags.append(make(code, severity, message, text=self.text, span=span, skill=self.skill, file=self.file, help=help))  # type: ignore[arg-type]

    # ------------------------------------------------------------ members and typed values

    def _entries(self, obj: J, where: str) -> list[tuple[str, ir.Span, J]]:
        """Members of a map-valued property (tools, args, ...): duplicates warned, last wins."""
        seen: dict[str, tuple[str, ir.Span, J]] = {}
        for key, kspan, val in obj.value:
            if key in seen:
                self._d("SC002", "warning", f"duplicate key '{key}' in {where}; the last one wins", kspan)
            seen[key] = (key, kspan, val)
        return list(seen.values())

    def _members(self, obj: J, where: str, known: frozenset[str], role: str = "") -> Props:
        """Properties of a fixed-shape object; unknown ones are noted and ignored (§19)."""
        props: Props = {}
        for key, kspan, val in self._entries(obj, where):
            if key in known:
                props[key] = (kspan, val)
                continue
            right = _MIXUPS.get((role, key))
            if right:
                self._d("SC003", "warning", f"'{key}' is not a property of {where} and is ignored; the constant here is '{right}' (§19)", kspan, help=f"rename it to '{right}'")
                continue
            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.7)
            help = f"did you mean '{close[0]}'?" if close else None
            self._d("SC001", "note", f"unknown property '{key}' in {where} is ignored (§19)", kspan, help=help)
        return props

    def _val(self, props: Props, name: str, where: str, spans: dict[str, ir.Span], kinds: tuple[str, ...]) -> J | None:
        got = props.get(name)
        if got is None:
            return None
        j = got[1]
        if j.kind == "null" or (j.kind == "string" and j.value == ""):
            return None  # §19: an empty string is unset (null too)
        spans[name] = j.span
        if j.kind not in kinds:
            want = " or ".join(_JSON_KIND[k] for k in kinds)
            self._d("SC114", "error", f"{where}.{name} must be {want}, found {_KIND_NAMES[j.kind]}", j.span)
            return None
        return j

    def _str(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> str | None:
        j = self._val(props, name, where, spans, ("string",))
        return None if j is None else j.value

    def _bool(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> bool | None:
        j = self._val(props, name, where, spans, ("bool",))
        return None if j is None else j.value

    def _json(self, props: Props, name: str, spans: dict[str, ir.Span]) -> tuple[bool, Any]:
        """A JSON-valued property (const, constant, value): "" is a value, null is unset."""
        got = props.get(name)
        if got is None or got[1].kind == "null":
            return False, None
        spans[name] = got[1].span
        return True, plain(got[1])

    def _enum_value(self, j: J, prop: str, where: str, allowed: tuple[str, ...]) -> str | None:
        if j.kind != "string":
            self._d("SC114", "error", f"{where} must be a string, one of {', '.join(allowed)}; found {_KIND_NAMES[j.kind]}", j.span)
            return None
        if j.value in allowed:
            return j.value
        same = [a for a in allowed if a.lower() == j.value.lower()]
        help = f"did you mean '{same[0]}'? enum values are case-sensitive" if same else None
        self._d("SC113", "error", f"invalid {prop} '{j.value}' in {where}; expected one of {', '.join(allowed)} (§18)", j.span, help=help)
        return None

    def _enum(self, props: Props, name: str, where: str, spans: dict[str, ir.Span], prop: str | None = None) -> str | None:
        got = props.get(name)
        if got is None or got[1].kind == "null" or (got[1].kind == "string" and got[1].value == ""):
            return None
        spans[name] = got[1].span
        return self._enum_value(got[1], name, f"{where}.{name}", ir.ENUMS[prop or name])

    def _list(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> list[J]:
        j = self._val(props, name, where, spans, ("array",))
        return [] if j is None else j.value

    def _str_list(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> list[tuple[str, ir.Span]]:
        out = []
        for i, item in enumerate(self._list(props, name, where, spans)):
            if item.kind == "string":
                if item.value != "":
                    out.append((item.value, item.span))
            elif item.kind != "null":
                self._d("SC114", "error", f"{where}.{name}[{i}] must be a string, found {_KIND_NAMES[item.kind]}", item.span)
        return out

    def _sources(self, props: Props, where: str, spans: dict[str, ir.Span]) -> list[str]:
        out = []
        for i, item in enumerate(self._list(props, "sources", where, spans)):
            if item.kind == "string" and item.value == "":
                continue
            v = self._enum_value(item, "source", f"{where}.sources[{i}]", ir.ENUMS["sources"])
            if v is not None:
                out.append(v)
        return out

    def _obj(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> tuple[ir.Span, J] | None:
        j = self._val(props, name, where, spans, ("object",))
        return None if j is None else (props[name][0], j)

    # ------------------------------------------------------------ expressions and paths

    def _sub_span(self, span: ir.Span, column: int) -> ir.Span:
        """The part of a string token from the expression's `column` (1-based) to its end."""
        if span.line != span.end_line:
            return span
        col = min(span.column + column, span.end_column - 1)
        return ir.Span(line=span.line, column=col, end_line=span.line, end_column=max(span.end_column - 1, col + 1))

    def _expr(self, props: Props, where: str, spans: dict[str, ir.Span], kind: Where) -> ir.Node | None:
        j = self._val(props, "from", where, spans, ("string",))
        if j is None:
            return None
        try:
            return parse_expression(j.value, where=kind, span_base=j.span)
        except ExprError as exc:
            code = "SC118" if kind == "verify" and exc.kind == "prefix" else _EXPR_CODES[exc.kind]
            help = "verify.args take only const or from: call.<path> (§6.4)" if code == "SC118" else None
            self._d(code, "error", f"{where}.from: {exc.message}", self._sub_span(j.span, exc.column), help=help)
            return None

    def _path(self, text: str, span: ir.Span, where: str, response: bool) -> ir.Path | None:
        try:
            return (parse_response_path if response else parse_param_path)(text, span=span)
        except ExprError as exc:
            self._d("SC115", "error", f"{where}: {exc.message}", self._sub_span(span, exc.column))
            return None

    def _rpath(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> ir.Path | None:
        j = self._val(props, name, where, spans, ("string",))
        return None if j is None else self._path(j.value, j.span, f"{where}.{name}", True)

    # ------------------------------------------------------------ the contract tree

    def contract(self, root: J) -> ir.Contract:
        """The root object (§3)."""
        w = "skill_contract"
        props = self._members(root, w, ROOT_KEYS)
        spans: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {}
        mode = self._enum(props, "mode", w, spans)
        if mode:
            kw["mode"] = mode
        if (d := self._bool(props, "delegatable", w, spans)) is not None:
            kw["delegatable"] = d
        kw["target"] = self._str(props, "target", w, spans)
        if (j := self._val(props, "inputs", w, spans, ("object",))) is not None:
            kw["inputs"] = {k: x for k, ks, v in self._entries(j, "inputs") if (x := self._input(k, ks, v)) is not None}
        if (j := self._val(props, "outputs", w, spans, ("object",))) is not None:
            kw["outputs"] = {k: x for k, ks, v in self._entries(j, "outputs") if (x := self._output(k, ks, v)) is not None}
        if (j := self._val(props, "tools", w, spans, ("object",))) is not None:
            kw["tools"] = {k: x for k, ks, v in self._entries(j, "tools") if (x := self._tool(k, ks, v)) is not None}
        return ir.Contract(span=root.span, prop_spans=spans, **kw)

    def _is_obj(self, j: J, where: str) -> bool:
        if j.kind == "object":
            return True
        self._d("SC114", "error", f"{where} must be an object, found {_KIND_NAMES[j.kind]}", j.span)
        return False

    def _tool(self, name: str, kspan: ir.Span, j: J) -> ir.ToolContract | None:
        w = f"tools.{name}"
        if not self._is_obj(j, w):
            return None
        props = self._members(j, w, TOOL_KEYS)
        spans: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"label": self._str(props, "label", w, spans), "confirm": self._bool(props, "confirm", w, spans)}
        if se := self._enum(props, "sideEffect", w, spans):
            kw["side_effect"] = se
        kw["idempotency_key"] = [p for t, s in self._str_list(props, "idempotencyKey", w, spans) if (p := self._path(t, s, f"{w}.idempotencyKey", False))]
        if (a := self._val(props, "args", w, spans, ("object",))) is not None:
            kw["args"] = {k: x for k, ks, v in self._entries(a, f"{w}.args") if (x := self._arg(f"{w}.args", k, ks, v)) is not None}
        if got := self._obj(props, "success", w, spans):
            kw["success"] = self._success(f"{w}.success", *got)
        if got := self._obj(props, "error", w, spans):
            sp: dict[str, ir.Span] = {}
            ep = self._members(got[1], f"{w}.error", ERROR_KEYS)
            kw["error"] = ir.ErrorPaths(span=got[1].span, key_span=got[0], prop_spans=sp, code=self._rpath(ep, "code", f"{w}.error", sp), message=self._rpath(ep, "message", f"{w}.error", sp))
        kw["extracts"] = [x for i, e in enumerate(self._list(props, "extracts", w, spans)) if (x := self._extract(f"{w}.extracts[{i}]", e))]
        if got := self._obj(props, "verify", w, spans):
            kw["verify"] = self._verify(f"{w}.verify", *got)
        return ir.ToolContract(name=name, span=j.span, key_span=kspan, prop_spans=spans, **kw)

    def _arg(self, where: str, key: str, kspan: ir.Span, j: J) -> ir.ArgContract | None:
        w = f"{where}.{key}"
        path = self._path(key, kspan, f"parameter path {key!r} in {where}", False)
        if path is None or not self._is_obj(j, w):
            return None
        props = self._members(j, w, ARG_KEYS, role="arg")
        spans: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"from_": self._expr(props, w, spans, "arg")}
        kw["has_const"], kw["const"] = self._json(props, "const", spans)
        if when := self._enum(props, "when", w, spans):
            kw["when"] = when
        kw["sources"] = self._sources(props, w, spans)
        for flag in ("required", "sensitive", "fresh"):
            if (b := self._bool(props, flag, w, spans)) is not None:
                kw[flag] = b
        kw["enum"] = [plain(e) for e in self._list(props, "enum", w, spans)]
        kw["label"] = self._str(props, "label", w, spans)
        if "missing" in props:
            if (m := self._missing(f"{w}.missing", props["missing"], spans)) is not None:
                kw["missing"] = m
        return ir.ArgContract(path=path, span=j.span, key_span=kspan, prop_spans=spans, **kw)

    def _missing(self, where: str, got: tuple[ir.Span, J], spans: dict[str, ir.Span]) -> ir.Missing | None:
        kspan, j = got
        if j.kind == "null" or (j.kind == "string" and j.value == ""):
            return None
        spans["missing"] = j.span
        if j.kind == "string":  # shorthand `missing: "CALL_TOOL"` as the spec's prose writes it (§5.3)
            action = self._enum_value(j, "action", where, ir.ENUMS["action"])
            return ir.Missing(span=j.span, key_span=kspan, action=action) if action else None
        if not self._is_obj(j, where):
            return None
        props = self._members(j, where, MISSING_KEYS)
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"tool": self._str(props, "tool", where, sp), "message": self._str(props, "message", where, sp)}
        if action := self._enum(props, "action", where, sp):
            kw["action"] = action
        return ir.Missing(span=j.span, key_span=kspan, prop_spans=sp, **kw)

    def _success(self, where: str, kspan: ir.Span, j: J) -> ir.Success:
        props = self._members(j, where, SUCCESS_KEYS)
        sp: dict[str, ir.Span] = {}
        has, value = self._json(props, "value", sp)
        return ir.Success(span=j.span, key_span=kspan, prop_spans=sp, path=self._rpath(props, "path", where, sp), op=self._enum(props, "op", where, sp), has_value=has, value=value)

    def _entity(self, where: str, props: Props, spans: dict[str, ir.Span]) -> ir.Entity | None:
        got = self._obj(props, "entity", where, spans)
        if got is None:
            return None
        w = f"{where}.entity"
        ep = self._members(got[1], w, ENTITY_KEYS)
        sp: dict[str, ir.Span] = {}
        kw = {k: v for k in ("type", "id", "name", "scalar") if (v := self._str(ep, k, w, sp)) is not None}
        return ir.Entity(span=got[1].span, key_span=got[0], prop_spans=sp, **kw)

    def _extract(self, where: str, j: J) -> ir.Extract | None:
        if not self._is_obj(j, where):
            return None
        props = self._members(j, where, EXTRACT_KEYS)
        sp: dict[str, ir.Span] = {}
        return ir.Extract(
            span=j.span, prop_spans=sp, key=self._str(props, "key", where, sp), path=self._rpath(props, "path", where, sp),
            fields=[t for t, _ in self._str_list(props, "fields", where, sp)], entity=self._entity(where, props, sp),
        )

    def _verify(self, where: str, kspan: ir.Span, j: J) -> ir.Verify:
        props = self._members(j, where, VERIFY_KEYS)
        sp: dict[str, ir.Span] = {}
        args: dict[str, ir.VerifyArg] = {}
        if (a := self._val(props, "args", where, sp, ("object",))) is not None:
            for k, ks, v in self._entries(a, f"{where}.args"):
                w = f"{where}.args.{k}"
                if not self._is_obj(v, w):
                    continue
                ap = self._members(v, w, VERIFY_ARG_KEYS, role="arg")
                asp: dict[str, ir.Span] = {}
                has, const = self._json(ap, "const", asp)
                args[k] = ir.VerifyArg(name=k, span=v.span, key_span=ks, prop_spans=asp, from_=self._expr(ap, w, asp, "verify"), has_const=has, const=const)
        return ir.Verify(span=j.span, key_span=kspan, prop_spans=sp, tool=self._str(props, "tool", where, sp), args=args)

    def _input(self, name: str, kspan: ir.Span, j: J) -> ir.InputSpec | None:
        w = f"inputs.{name}"
        if not self._is_obj(j, w):
            return None
        props = self._members(j, w, INPUT_KEYS)
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"from_": self._expr(props, w, sp, "input"), "provider": self._str(props, "provider", w, sp)}
        if (b := self._bool(props, "required", w, sp)) is not None:
            kw["required"] = b
        return ir.InputSpec(name=name, span=j.span, key_span=kspan, prop_spans=sp, **kw)

    def _output(self, name: str, kspan: ir.Span, j: J) -> ir.OutputSpec | None:
        w = f"outputs.{name}"
        if not self._is_obj(j, w):
            return None
        props = self._members(j, w, OUTPUT_KEYS, role="output")
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"hint": self._str(props, "hint", w, sp), "entity": self._entity(w, props, sp), "share": self._enum(props, "share", w, sp)}
        if t := self._enum(props, "type", w, sp):
            kw["type"] = t
        kw["fields"] = [t for t, _ in self._str_list(props, "fields", w, sp)]
        if (n := self._val(props, "minItems", w, sp, ("number",))) is not None:
            if isinstance(n.value, int) and n.value >= 0:
                kw["min_items"] = n.value
            else:
                self._d("SC114", "error", f"{w}.minItems must be a non-negative integer, found {n.value}", n.span)
        for flag in ("required", "sensitive"):
            if (b := self._bool(props, flag, w, sp)) is not None:
                kw[flag] = b
        kw["sources"] = self._sources(props, w, sp)
        kw["has_constant"], kw["constant"] = self._json(props, "constant", sp)
        return ir.OutputSpec(name=name, span=j.span, key_span=kspan, prop_spans=sp, **kw)
