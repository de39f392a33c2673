"""The public CEL conformance files (google/cel-spec `tests/simple/testdata/*.textproto`) read
and run against skillc's rule language, for tests/runtime/test_cel_conformance.py.

The files are not part of this repository: a directory is given by `SKILLC_CEL_SPEC_DIR`, or
`../shared/cel-spec/tests/simple/testdata` beside the checkout. The text format is parsed here,
minimally (messages, scalars, strings with C escapes, comments), which is all those files use.
Each test comes out `pass`, `wrong` (a value that is not the expected one, a value where an
error is expected, or a refusal of something the subset claims to support), `unsupported` (a
clear compile error for a feature the subset leaves out) or `stricter` (a type error skillc's
checker reports at compile time where the test turns CEL's checker off and expects the error, or
a value, only at run time).
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

FILES = ("basic", "comparisons", "logic", "integer_math", "lists", "macros", "string", "timestamps")
REASON = ("the CEL conformance files are not here: set SKILLC_CEL_SPEC_DIR to google/cel-spec's "
          "tests/simple/testdata (or put it at ../shared/cel-spec/tests/simple/testdata)")


def spec_dir() -> Path | None:
    """The folder of the .textproto files, or None."""
    env = os.environ.get("SKILLC_CEL_SPEC_DIR")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2].parent / "shared" / "cel-spec" / "tests" / "simple" / "testdata")
    for c in candidates:
        if (c / "basic.textproto").is_file():
            return c
    return None


# ---------------------------------------------------------------- text format

_TOKEN = re.compile(r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(?P<punct>[{}:<>\[\],;])|(?P<word>[^\s{}:<>\[\],;"'#]+)""")
_ESC = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}


def _bytes_of(literal: str) -> bytes:
    """A text-format string literal's bytes (C escapes, octal and hex byte escapes)."""
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESC:
            out.append(_ESC[nxt])
            i += 2
        elif nxt in "01234567":
            j = i + 1
            while j < min(i + 4, len(body)) and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8) & 0xFF)
            i = j
        elif nxt == "x":
            j = i + 2
            while j < min(i + 4, len(body)) and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16))
            i = j
        elif nxt in "uU":
            width = 4 if nxt == "u" else 8
            out += chr(int(body[i + 2:i + 2 + width], 16)).encode("utf-8")
            i += 2 + width
        else:
            out.append(ord(nxt))
            i += 2
    return bytes(out)


class _Bytes(bytes):
    """A string field's raw bytes (kept so bytes_value can be told from string_value)."""


def parse_textproto(text: str) -> dict[str, list[Any]]:
    """A text-format message as {field: [values]}: a nested message is such a dict, a string
    `_Bytes`, anything else its word (numbers, enums, true/false)."""
    tokens = [m for m in _TOKEN.finditer(text) if m.lastgroup]
    pos = 0

    def message(end: str | None) -> dict[str, list[Any]]:
        nonlocal pos
        out: dict[str, list[Any]] = {}
        while pos < len(tokens):
            tok = tokens[pos]
            if end is not None and tok.group() == end:
                pos += 1
                return out
            name = tok.group()
            pos += 1
            if name == "[":  # an extension or Any type URL: [type.googleapis.com/x.Y]
                name = "[" + tokens[pos].group() + "]"
                pos += 2
            if tokens[pos].group() == ":":
                pos += 1
            t = tokens[pos]
            if t.group() in ("{", "<"):
                pos += 1
                value: Any = message("}" if t.group() == "{" else ">")
            else:
                pos += 1
                value = _Bytes(_bytes_of(t.group())) if t.lastgroup == "str" else t.group()
                while pos < len(tokens) and tokens[pos].lastgroup == "str" and value.__class__ is _Bytes:
                    value = _Bytes(value + _bytes_of(tokens[pos].group()))  # adjacent literals concatenate
                    pos += 1
            out.setdefault(name, []).append(value)
            if pos < len(tokens) and tokens[pos].group() in (",", ";"):
                pos += 1
        return out

    return message(None)


# ---------------------------------------------------------------- values


class Unsupported(Exception):
    """An expected value skillc's values cannot hold (uint, bytes, types, messages)."""


def _one(msg: dict[str, list[Any]], key: str) -> Any:
    return msg[key][0]


def _num(word: str) -> float:
    w = word.lower()
    return {"inf": math.inf, "-inf": -math.inf, "infinity": math.inf, "-infinity": -math.inf, "nan": math.nan}.get(w) or float(word)


def value_of(v: dict[str, list[Any]]) -> Any:
    """A cel.expr.Value as the Python value skillc's rule code would produce."""
    (kind, items), = v.items()
    item = items[0]
    if kind == "int64_value":
        return int(item)
    if kind == "double_value":
        return _num(item)
    if kind == "string_value":
        return bytes(item).decode("utf-8")
    if kind == "bool_value":
        return item == "true"
    if kind == "null_value":
        return None
    if kind == "list_value":
        return [value_of(x) for x in (item.get("values") or [])] if isinstance(item, dict) else []
    if kind == "map_value":
        entries = item.get("entries") or [] if isinstance(item, dict) else []
        return {value_of(_one(e, "key")): value_of(_one(e, "value")) for e in entries}
    if kind == "object_value":
        (url, body), = item.items()
        body = body[0]
        seconds = int(_one(body, "seconds")) if "seconds" in body else 0
        nanos = int(_one(body, "nanos")) if "nanos" in body else 0
        if nanos % 1000:
            raise Unsupported("nanoseconds")
        if url.endswith("google.protobuf.Timestamp]"):
            return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds, microseconds=nanos // 1000)
        if url.endswith("google.protobuf.Duration]"):
            return timedelta(seconds=seconds, microseconds=nanos // 1000)
        raise Unsupported(url)
    raise Unsupported(kind)


def same(got: Any, want: Any) -> bool:
    """CEL value equality for the comparison of a result (types must agree: 1 is not 1.0)."""
    from decimal import Decimal

    if isinstance(got, Decimal):
        return False
    if isinstance(want, float):
        return type(got) is float and (got == want or (math.isnan(got) and math.isnan(want)))
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, int):
        return type(got) is int and got == want
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(a, b) for a, b in zip(got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and len(got) == len(want) and all(
            any(same(k, wk) and same(v, wv) for k, v in got.items()) for wk, wv in want.items())
    return type(got) is type(want) and got == want


# ---------------------------------------------------------------- running


@dataclass
class Outcome:
    """One conformance test's result."""

    file: str
    section: str
    name: str
    expr: str
    result: str  # pass | wrong | unsupported | stricter
    detail: str = ""


def run_test(file: str, section: str, test: dict[str, list[Any]]) -> Outcome:
    """Compile and run one test through `skillc rules eval`'s function."""
    from skillc.compiler.rules_eval import eval_expression, show

    name = bytes(_one(test, "name")).decode()
    expr = bytes(_one(test, "expr")).decode("utf-8")
    out = Outcome(file, section, name, expr, "pass")
    if "container" in test:
        out.result, out.detail = "unsupported", "protocol buffer containers"
        return out
    variables: dict[str, Any] = {}
    try:
        for b in test.get("bindings", []):
            variables[bytes(_one(b, "key")).decode()] = value_of(_one(_one(b, "value"), "value"))
        want_error = "eval_error" in test or "any_eval_errors" in test
        want = None if want_error else value_of(_one(test, "value")) if "value" in test else True
    except (Unsupported, KeyError, ValueError) as exc:
        out.result, out.detail = "unsupported", f"expected value: {exc}"
        return out
    result = eval_expression(expr, variables)
    if result.error == "compile":
        if want_error:
            return out  # refused at compile time: an error either way
        if result.error_code in ("SC702", "SC703"):
            out.result = "unsupported"  # a feature (or a function) the subset leaves out
        elif result.error_code == "SC704" and "disable_check" in test:
            out.result = "stricter"  # a type error the test expects only at run time, with CEL's checker off
        else:
            out.result = "wrong"
        out.detail = f"compile error {result.error_code}: {result.message}"
        return out
    if result.error == "undecidable":
        if not want_error:
            out.result, out.detail = "wrong", f"undecidable: {result.message}"
        return out
    if want_error:
        out.result, out.detail = "wrong", f"expected an error, got {show(result.value)}"
    elif not same(result.value, want):
        out.result, out.detail = "wrong", f"got {show(result.value)}, expected {show(want)}"
    return out


def run_file(path: Path) -> list[Outcome]:
    """Every test of one .textproto file."""
    doc = parse_textproto(path.read_text(encoding="utf-8"))
    outcomes = []
    for section in doc.get("section", []):
        sname = bytes(_one(section, "name")).decode()
        for test in section.get("test", []):
            outcomes.append(run_test(path.stem, sname, test))
    return outcomes
