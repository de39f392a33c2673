"""The studio at the border: the compiler's outside input checked like the runtime's (runtime.border).

A studio's text (YAML fields, manual.md, contract.jsonc, SQLite rows, a studio given as data) can
carry what nothing downstream can keep: a lone surrogate from a `"\\ud800"` escape or from bytes
that are not UTF-8 (not encodable, so neither storable, traceable nor loadable), a text too long to
hold, a contract nested too deep or with a number too long to convert. Such a record is unreadable:
it is refused here with a position and reported as SC506 (an error: the skill or agent is dropped,
as a "contract that cannot be read" is in docs/interpretations.md's "What drops a skill", widened
to the record), never written into a compiled studio and never a traceback.

Sources call `record_refusal` for each record and `read_file` for the files beside skill.yaml;
`contract_refusal` checks a parsed contract (jsonc.parse_json calls it).
"""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

from skillc.compiler import ir
from skillc.compiler.json_value import J
from skillc.runtime.text import border

CODE = "SC506"
NOT_YAML = "SC507"  # a skill.yaml or agent file that is not a YAML mapping: that record unreadable
LIMITS = border.DEFAULT
# A file bigger than this many bytes cannot decode to a string within the limit (UTF-8 takes at
# least one byte a character), so it is refused without being read into memory.
_MAX_FILE_BYTES = LIMITS.max_string * 4
_BITS = LIMITS.max_int_digits * math.log2(10)

Kind = Literal["skill", "agent"]


def problem(text: str) -> str | None:
    """What the border refuses in one string (its detail), or None when it can be kept."""
    if len(text) <= LIMITS.max_string and (text.isascii() or not border.has_surrogate(text)):
        return None
    try:
        border.check(text, LIMITS)
    except border.Refused as exc:
        return exc.detail
    return None


def position(text: str, index: int) -> tuple[int, int]:
    """1-based (line, column) of character `index` of `text`."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def excerpt(text: str, line: int, column: int, end_column: int) -> str:
    """The caret excerpt of `line` with lone surrogates shown as U+FFFD (safe to print)."""
    from skillc.compiler.diagnostics import make_excerpt

    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    src = border.clean_text(lines[line - 1], 400)
    return make_excerpt(src, 1, column, 1, end_column)


def refusal(kind: Kind, key: str, message: str, file: str, *, text: str | None = None,
            span: ir.Span | None = None, code: str = CODE) -> ir.Refusal:
    """An `ir.Refusal` at `span` of `text` (line 1 column 1 of `file` when unknown)."""
    line, column, end = (span.line, span.column, span.end_column if span.end_line == span.line else span.column + 1) \
        if span is not None else (1, 1, 2)
    end = max(end, column + 1)
    shown = excerpt(text, line, column, end) if text is not None and span is not None else ""
    return ir.Refusal(kind=kind, key=border.clean_text(key, 200), message=message, file=border.clean_text(file, 1000),
                      line=line, column=column, end_column=end, excerpt=shown, code=code)


class Unreadable(Exception):
    """A file beside skill.yaml whose text the border refuses: `message` and where (line, column)."""

    def __init__(self, message: str, line: int = 1, column: int = 1, text: str | None = None,
                 code: str = CODE) -> None:
        super().__init__(message)
        self.message, self.line, self.column, self.text, self.code = message, line, column, text, code


def leaves(path: Path, root: Path) -> bool:
    """True when `path`, its links followed, is not inside the studio folder `root`: a link to
    `/proc/self/environ` or `/etc/passwd` would hand that file to whoever can read the studio."""
    try:
        return not path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a link loop: nothing inside the studio
        return True


def read_file(path: Path, root: Path | None = None) -> str:
    """A studio file's text ("" when absent); `Unreadable` when it is not UTF-8 or too long, or
    (with the studio folder `root`) when a link takes it outside that folder.

    Decoded strictly: bytes that are not UTF-8 are refused at their line and column, not smuggled
    in as surrogates (they could not be written back out). OSError is the caller's (a source that
    cannot be read at all)."""
    if root is not None and (path.is_symlink() or path.exists()) and leaves(path, root):
        raise Unreadable(f"a link leading outside the studio folder {root.name}/ (only files inside it are read)")
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return ""
    if size > _MAX_FILE_BYTES:
        raise Unreadable(f"a file of {size} bytes (limit {LIMITS.max_string} characters of text)")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8", "replace")
        line, column = position(before + "\ufffd", len(before))
        shown = before + "\ufffd" + data[exc.end:].split(b"\n", 1)[0].decode("utf-8", "replace")
        raise Unreadable(f"not UTF-8 ({exc.reason} at byte {exc.start})", line, column, shown) from None
    if len(text) > LIMITS.max_string:
        raise Unreadable(f"a text of {len(text)} characters (limit {LIMITS.max_string})")
    return text


def record_refusal(kind: Kind, key: str, fields: dict[str, str], lists: dict[str, list[str]], file: str,
                   where: Any = None) -> ir.Refusal | None:
    """The first text of a record the border refuses, as an `ir.Refusal`, or None.

    `fields`: field name -> text; `lists`: field name -> its items (tools, skills). `where(place)`
    gives (text, span) of a YAML place such as ("tools", 1), or None; without it the refusal
    points at line 1 column 1 of `file`."""
    named: list[tuple[tuple[str | int, ...], str, str]] = [((f,), f, v) for f, v in fields.items()]
    named += [((f, i), f"{f}[{i}]", v) for f, items in lists.items() for i, v in enumerate(items)]
    for place, label, value in named:
        detail = problem(value)
        if detail is None:
            continue
        found = where(place) if where is not None else None
        text, span = found if found else (None, None)
        return refusal(kind, key, f"{detail} in {label}: the {kind} cannot be read and is dropped", file,
                       text=text, span=span)
    return None


def clean_fields(fields: dict[str, str]) -> dict[str, str]:
    """`fields` with every text made safe to hash, store and show (a refused record's copy)."""
    return {k: border.clean_text(v, LIMITS.max_string) for k, v in fields.items()}


# ---------------------------------------------------------------- the contract's value


def _where(path: tuple[str | int, ...], shown: int = 8) -> str:
    """`$.tools.x.args[0]`: the first `shown` steps of a path (then "…"), keys cleaned to print."""
    text = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{border.clean_text(p, 80)}" for p in path[:shown])
    return text + "…" if len(path) > shown else text


def contract_refusal(root: J) -> tuple[str, ir.Span] | None:
    """(message, span) of the first part of a parsed contract the border refuses, or None.

    Walks the J tree iteratively, with the runtime border's limits: nesting past 64 (the compiler
    and the generated module recurse over the value), strings and keys with a lone surrogate or
    too long, integers past 400 digits, numbers that are not finite, too many values."""
    max_depth, max_string, max_items = LIMITS.max_depth, LIMITS.max_string, LIMITS.max_items
    stack: list[tuple[J, tuple[str | int, ...], int]] = [(root, (), 1)]
    seen = 0

    def bad(detail: str, span: ir.Span, path: tuple[str | int, ...]) -> tuple[str, ir.Span]:
        return f"{detail} in the contract at {_where(path)}", span

    while stack:
        j, path, depth = stack.pop()
        kind = j.kind
        if kind == "object" or kind == "array":
            if depth > max_depth:
                return bad(f"nesting deeper than {max_depth}", j.span, path)
            seen += len(j.value)
            if seen > max_items:
                return bad(f"more than {max_items} values", j.span, path)
            if kind == "object":
                for key, kspan, sub in j.value:
                    if len(key) > max_string or (not key.isascii() and border.has_surrogate(key)):
                        return bad(f"{problem(key) or 'a text the border refuses'} in a key", kspan, path)
                    stack.append((sub, path + (key,), depth + 1))
            else:
                stack.extend((sub, path + (i,), depth + 1) for i, sub in enumerate(j.value))
        elif kind == "string":
            v = j.value
            if len(v) > max_string or (not v.isascii() and border.has_surrogate(v)):
                return bad(problem(v) or "a string the border refuses", j.span, path)
        elif kind == "number":
            v = j.value
            if isinstance(v, float) and not math.isfinite(v):
                return bad("a number that is not finite", j.span, path)
            if isinstance(v, int) and v.bit_length() > _BITS:
                return bad(f"an integer over {LIMITS.max_int_digits} digits", j.span, path)
    return None


def number_too_long(token: str) -> bool:
    """True for an integer literal past the border's digit limit (converted, it could pass
    Python's own 4300-digit limit and raise): the parser refuses it at its token."""
    return len(token) > LIMITS.max_int_digits + 1 and token.lstrip("-").isdigit()
