"""The contract and expression grammars: IR shape, spans, friendly syntax errors row by row."""
from __future__ import annotations

import pytest

from skillc.compiler import ir
from skillc.compiler.diagnostics import render
from skillc.compiler.expr import ExprError, parse_expression, parse_param_path, parse_response_path
from skillc.compiler.parse import JSON_ERRORS, parse_contract

# ---------------------------------------------------------------- JSON syntax errors


@pytest.mark.parametrize("help_text,example", [(h, e) for h, examples in JSON_ERRORS for e in examples])
def test_json_error_table_row(help_text: str, example: str) -> None:
    """Every example of the GRAMMAR_ERRORS-style table gets its explanation."""
    contract, diags = parse_contract(example)
    assert contract is None
    assert [d.code for d in diags] == ["SC101"]
    assert diags[0].help == help_text


# (text, message fragment, line, column) — what the author sees for common mistakes.
KNOWN_BAD: list[tuple[str, str, int, int]] = [
    ('{"a": 1 "b": 2}', "expected ',' or '}', found '\"b\"'", 1, 9),
    ('{\n  "a": 1,\n}', "expected a string, found '}'", 3, 1),
    ('{"a": [1, 2}', "expected ',' or ']', found '}'", 1, 12),
    ('{"a" 1}', "expected ':', found '1'", 1, 6),
    ('{"a": }', "expected a value, found '}'", 1, 7),
    ('{"a": 1', "expected ',' or '}', found the end of the text", 1, 8),
    ("{'a': 1}", "strings and keys need double quotes", 1, 2),
    ("{a: 1}", "unquoted word 'a'", 1, 2),
    ('{"a": True}', "'True' is not JSON", 1, 7),
    ('{"a": "x\\q"}', "invalid escape '\\q'", 1, 7),
    ('{"a": "line\nbreak"}', "unterminated string: a line ends inside it", 1, 7),
    ('{"a": "tab\there"}', "control character U+0009", 1, 7),
    ('{"a": 1} /* open', "unterminated /* comment", 1, 10),
    ('{"a": 1} / x', "a single '/' begins no comment", 1, 10),
    ('{"a": +1}', "malformed number", 1, 7),
    ('{"a": 01}', "expected ',' or '}', found '1'", 1, 8),
    ("", "skill_contract is empty", 1, 1),
    ("  // only a comment\n", "expected a value, found the end of the text", 1, 20),
    ('"text"', "skill_contract must be a JSON object, found a string", 1, 1),
    ("{}}", "expected end of text, found '}'", 1, 3),
]


@pytest.mark.parametrize("text,fragment,line,column", KNOWN_BAD)
def test_known_bad_input(text: str, fragment: str, line: int, column: int) -> None:
    contract, diags = parse_contract(text, skill="s.k", file="c.jsonc")
    assert contract is None
    (d,) = diags
    assert d.code == "SC101" and d.severity == "error"
    assert fragment in d.message
    assert (d.line, d.column) == (line, column)
    assert render(d).startswith(f"c.jsonc:{line}:{column}: error[SC101]: ")


def test_caret_excerpt_and_wide_characters() -> None:
    text = '{"mode": "REACT",\n "说明": 1, "tools": {"t": {"sideEffect": "write"}}}'
    _, diags = parse_contract(text, file="c.jsonc")
    (bad,) = [d for d in diags if d.code == "SC113"]
    src, carets = bad.excerpt.split("\n")
    assert src == ' "说明": 1, "tools": {"t": {"sideEffect": "write"}}}'
    # "说明" is two wide characters: the caret sits under the value in a terminal.
    assert carets.index("^") == src.index('"write"') + 2
    assert carets.endswith("^~~~~~~")
    assert bad.help == "did you mean 'WRITE'? enum values are case-sensitive"


# ---------------------------------------------------------------- IR shape and spans


def test_ir_shape_and_spans() -> None:
    text = """{
  "mode": "PLAN",
  "tools": {
    "inv_issue": {
      "sideEffect": "WRITE", "confirm": false,
      "args": {
        "orderInfo.taxNo": {"from": "prior.order:17.taxNo", "when": "UNIQUE", "sources": ["MODEL"]},
        "lines[].goodsCode": {"const": "G-1", "enum": ["G-1", 2, null]},
        "memo": {"required": false, "missing": "FAIL", "sensitive": true, "fresh": true}
      },
      "success": {"path": "data.items.0.ok", "op": "IN", "value": [true]},
      "error": {"code": "err.code", "message": "err.msg"},
      "verify": {"tool": "inv_get", "args": {"no": {"from": "call.orderInfo.taxNo"}, "k": {"const": null}}}
    }
  },
  "inputs": {"orderNo": {"from": "orderNo", "required": false}},
  "outputs": {"lines": {"type": "LIST", "fields": ["goodsCode"], "minItems": 2, "hint": "h", "sources": ["EVIDENCE"], "constant": ""}}
}"""
    c, diags = parse_contract(text)
    assert c is not None and diags == []
    assert c.mode == "PLAN"
    t = c.tools["inv_issue"]
    assert t.side_effect == "WRITE" and t.confirm is False and not t.effective_confirm
    tax = t.args["orderInfo.taxNo"]
    assert isinstance(tax.from_, ir.PriorRef)
    assert (tax.from_.entity_type, tax.from_.entity_id, tax.from_.attr) == ("order", "17", "taxNo")
    assert tax.when == "UNIQUE" and tax.sources == ["MODEL"]
    assert tax.from_.span is not None and (tax.from_.span.line, tax.from_.span.column) == (7, 37)
    assert tax.key_span is not None and (tax.key_span.line, tax.key_span.column) == (7, 9)
    goods = t.args["lines[].goodsCode"]
    assert [p.kind for p in goods.path.parts] == ["key", "each", "key"]
    assert goods.has_const and goods.const == "G-1" and goods.enum == ["G-1", 2, None]
    memo = t.args["memo"]
    assert (memo.required, memo.missing.action, memo.sensitive, memo.fresh) == (False, "FAIL", True, True)
    assert t.success is not None and t.success.op == "IN" and t.success.value == [True]
    assert t.success.path is not None and t.success.path.parts[2] == ir.PathPart(kind="index", index=0)
    assert t.error is not None and t.error.code is not None and t.error.code.text == "err.code"
    assert t.verify is not None and isinstance(t.verify.args["no"].from_, ir.CallRef)
    assert t.verify.args["k"].has_const is False  # null is unset
    assert isinstance(c.inputs["orderNo"].from_, ir.BareRef) and c.inputs["orderNo"].required is False
    out = c.outputs["lines"]
    assert (out.type, out.fields, out.min_items, out.hint, out.sources) == ("LIST", ["goodsCode"], 2, "h", ["EVIDENCE"])
    assert out.has_constant and out.constant == ""  # JSON-valued: "" is a value
    assert c.span is not None and (c.span.line, c.span.end_line) == (1, 18)
    assert t.prop_spans["confirm"].line == 5
    assert "prop_spans" not in c.model_dump()  # kept out of dumps


# ---------------------------------------------------------------- expressions


@pytest.mark.parametrize("text,where,kind", [
    ("inputs.space.id", "arg", "inputs"),
    ("outputs.articleId", "arg", "outputs"),
    ("shared.lines[].goodsCode", "arg", "shared"),
    ("session.session", "arg", "session"),
    ("prior.article", "input", "prior"),
    ("prior.article.id", "arg", "prior"),
    ("prior.article:42.displayName", "arg", "prior"),
    ("platform.organId", "arg", "platform"),
    ("evidence.tag_list", "arg", "evidence"),
    ("evidence.tag_list.0.id", "arg", "evidence"),
    ("call.orderInfo.taxNo", "verify", "call"),
    ("articleId", "input", "bare"),
    ("upstream.articleId", "input", "bare"),
    ("inputsX.y", "input", "bare"),
])
def test_expression_forms(text: str, where: str, kind: str) -> None:
    e = parse_expression(text, where=where)  # type: ignore[arg-type]
    assert e.kind == kind and e.text == text


def test_expression_parts() -> None:
    e = parse_expression("evidence.tag_list.0.id", where="arg")
    assert isinstance(e, ir.EvidenceRef) and e.key == "tag_list"
    assert e.path == [ir.PathPart(kind="index", index=0), ir.PathPart(kind="key", name="id")]
    s = parse_expression("shared.lines[].goodsCode", where="arg")
    assert isinstance(s, ir.SharedRef) and [p.kind for p in s.path] == ["key", "each", "key"]
    span = ir.Span(line=3, column=5, end_line=3, end_column=20)
    assert parse_expression("platform.userId", where="arg", span_base=span).span == span


@pytest.mark.parametrize("text,where,kind,column,fragment", [
    ("foo.bar", "arg", "prefix", 1, "unknown prefix 'foo.'"),
    ("articleId", "arg", "prefix", 1, "has no prefix"),
    ("Shared.x", "arg", "prefix", 1, "unknown prefix 'Shared.'"),
    ("platform.passportId", "arg", "platform", 10, "is not open"),
    ("platform.userid", "input", "platform", 10, "unknown platform field 'userid'"),
    ("call.x", "arg", "call", 1, "only allowed in verify.args"),
    ("call.x", "input", "call", 1, "only allowed in verify.args"),
    ("shared.", "arg", "syntax", 8, "unexpected end of text"),
    ("shared..x", "arg", "syntax", 8, "unexpected '.'"),
    ("shared.a b", "arg", "syntax", 9, "unexpected ' '"),
    ("shared.a[0]", "arg", "syntax", 9, "unexpected '['"),
    ("", "arg", "syntax", 1, "empty expression"),
    ("prior.a:", "arg", "syntax", 9, "expected an entity id"),
])
def test_expression_errors(text: str, where: str, kind: str, column: int, fragment: str) -> None:
    with pytest.raises(ExprError) as info:
        parse_expression(text, where=where)  # type: ignore[arg-type]
    assert info.value.kind == kind and info.value.column == column
    assert fragment in info.value.message


def test_paths() -> None:
    assert [p.kind for p in parse_param_path("lines[].goodsCode").parts] == ["key", "each", "key"]
    assert [p.name for p in parse_param_path("orderInfo.taxNo").parts] == ["orderInfo", "taxNo"]
    r = parse_response_path("data.records.0.id")
    assert r.parts == [ir.PathPart(kind="key", name="data"), ir.PathPart(kind="key", name="records"),
                       ir.PathPart(kind="index", index=0), ir.PathPart(kind="key", name="id")]
    with pytest.raises(ExprError):
        parse_response_path("data[0]")
    with pytest.raises(ExprError):
        parse_param_path("a..b")
