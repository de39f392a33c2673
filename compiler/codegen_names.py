"""Names and call snippets of a generated skill module: every generated name derives from what it
denotes (`ident`: a tool name, an argument path, an issue kind), never from a position, and is
checked per module (`Names`); reviewer comments from vetted pieces; constructor calls laid out
as black would, keywords at their defaults left out (`changed_kwargs`)."""
from __future__ import annotations

import hashlib
import re
from typing import Any, Iterable

from skillc.compiler.codegen_literals import Code, UnsafeLiteral, comment, literal


# ---------------------------------------------------------------- names


_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*", re.ASCII)


def ident(text: str) -> str:
    """The identifier fragment of a contract name (tool name, argument path).

    A plain ASCII name (letters, digits, single inner underscores, up to 64 characters) is used as
    it is; anything else becomes `0x<10 hex digits of its sha256>` plus its ASCII letters and
    digits for the reader. The two forms never meet (a plain name starts with a letter) and no
    fragment holds `__`, so `_<tool>__<arg>__<KIND>` names are unambiguous. The hash form is
    checked for collisions per module (`Names`)."""
    if len(text) <= 64 and _PLAIN_NAME.fullmatch(text):
        return text
    # surrogatepass only to hash a name into an identifier (no text of it is written): codegen stays
    # safe on IR built directly (tests/compiler/test_security_codegen.py); studio text is refused earlier,
    # at the border (compiler.studio_border), and the module's literals escape what they hold.
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    tail = "_".join(re.findall(r"[A-Za-z0-9]+", text, re.ASCII))[:32].strip("_")
    return f"0x{digest}" + (f"_{tail}" if tail else "")


class Names:
    """The names one module defines, each with what it denotes: a second meaning for a name is
    refused (only a sha256 prefix collision between two odd names could cause one)."""

    def __init__(self) -> None:
        self._meaning: dict[str, tuple[Any, ...]] = {}

    def make(self, meaning: tuple[Any, ...], *parts: str) -> Code:
        name = "_" + "__".join(parts)
        if self._meaning.setdefault(name, meaning) != meaning:
            raise UnsafeLiteral(f"two contract names map to the generated name {name}")
        return Code(name)


def reviewer_note(*pieces: str | Code) -> Code:
    """A reviewer comment from vetted pieces (literals via `comment`, fixed words otherwise)."""
    text = " ".join(p for p in pieces if p)
    if any(ch in text for ch in "\r\n\x0c\x0b\x85\u2028\u2029"):
        raise UnsafeLiteral("line break in comment")
    return Code(text)


def names_note(values: Iterable[Any]) -> Code:
    """A comma-separated list of values, each as its comment literal."""
    return Code(", ".join(comment(v) for v in values))


def changed_kwargs(pairs: list[tuple[str, Any, Any]]) -> list[tuple[str, Code]]:
    """(keyword, value, default) -> the keywords whose value differs from the field's default."""
    return [(k, v if isinstance(v, Code) else literal(v)) for k, v, d in pairs if not _same(v, d)]


def _same(value: Any, default: Any) -> bool:
    return not isinstance(value, Code) and type(value) is type(default) and value == default


def call_code(func: str, kwargs: list[tuple[str, Code]], indent: int, lead: int = 0, positional: list[Code] | None = None) -> Code:
    """A constructor call on one line when it fits in 100 columns, else one argument per line
    (black's layout); `indent` is the column of the line it starts on, `lead` what precedes it."""
    items = [str(p) for p in positional or []] + [f"{k}={v}" for k, v in kwargs]
    flat = f"{func}({', '.join(items)})"
    if indent + lead + len(flat) <= 100 or not items:
        return Code(flat)
    pad = " " * (indent + 4)
    body = "".join(f"{pad}{item},\n" for item in items)
    return Code(f"{func}(\n{body}{' ' * indent})")


def param_issue(names: Names, tool_name: str, param: str, kind: str, action: str, label: str | None, **extra: str | None) -> tuple[Code, Code]:
    """A ParamIssue constant named after its tool, argument and kind (issues are immutable, and
    building one per call would dominate a failing check). Returns (definition, name)."""
    args = [literal(action), literal(param), literal(kind.lower())]
    if label is not None:
        args.append(Code(f"label={literal(label)}"))
    for k, v in extra.items():
        if v is not None:
            args.append(Code(f"{k}={literal(v)}"))
    name = names.make(("issue", tool_name, param, kind), ident(tool_name), ident(param), kind)
    return Code(f"{name} = rt.ParamIssue({', '.join(args)})"), name
