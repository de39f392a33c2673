"""The border: every value entering from outside is checked once, where it enters.

Model arguments, tool responses, studio text and stored rows can carry what the runtime cannot
keep: lone surrogates (not encodable as UTF-8, so neither storable nor traceable), nesting deep
enough to exhaust recursion, numbers too long to convert, strings too large to hold. `check`
walks a value iteratively and raises `Refused` naming what and where; `parse` does the same for
JSON text; `clean` makes a copy of a refused value that is safe to show in a trace or a message.
The callers decide what a refusal means (ARG_JSON_INVALID / ARG_REJECTED for model arguments, a
business failure for a tool's answer, `StoreCorrupt` for a stored row).
"""
from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from skillc.runtime.text import jsontext
from skillc.runtime.words.errors import SkillcError

_SURROGATE = re.compile("[\ud800-\udfff]")
_BITS_PER_DIGIT = math.log2(10)


@dataclass(frozen=True)
class Limits:
    """What the runtime accepts from outside. Generous for real data, far below what breaks it."""

    max_depth: int = 64  # nesting of arrays/objects
    max_string: int = 1_000_000  # characters in one string (or key)
    max_int_digits: int = 400  # decimal digits of one integer
    max_items: int = 200_000  # values in one document
    max_text: int = 8_000_000  # characters of a JSON text before it is parsed


DEFAULT = Limits()


class Refused(SkillcError, ValueError):
    """A value the border does not let in: `reason` is unicode | depth | number | string | size | json."""

    def __init__(self, reason: str, where: str, detail: str) -> None:
        super().__init__(f"{detail} at {where}" if where else detail)
        self.reason, self.where, self.detail = reason, where, detail


def has_surrogate(text: str) -> bool:
    """True when `text` holds a lone surrogate (cannot be encoded as UTF-8)."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _where(path: tuple[Any, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _check_scalar(v: Any, path: tuple[Any, ...], limits: Limits) -> None:
    if isinstance(v, str):
        if len(v) > limits.max_string:
            raise Refused("string", _where(path), f"a string of {len(v)} characters (limit {limits.max_string})")
        if has_surrogate(v):
            raise Refused("unicode", _where(path), "invalid Unicode (a lone surrogate)")
    elif isinstance(v, bool) or v is None:
        return
    elif isinstance(v, int):
        # bit_length avoids converting a huge int to text (which itself raises past 4300 digits)
        if v.bit_length() > limits.max_int_digits * _BITS_PER_DIGIT:
            raise Refused("number", _where(path), f"an integer over {limits.max_int_digits} digits")
    elif isinstance(v, float):
        if not math.isfinite(v):
            raise Refused("number", _where(path), "a number that is not finite")


def _acceptable(value: Any, limits: Limits) -> bool:
    """True when `check` would accept `value`: the same walk without building paths (the hot
    path: every model argument and tool answer crosses it); `check` finds the spot when not.
    It may doubt what `check` accepts (a long integer, a subclass): `check` then decides."""
    isfinite, surrogate = math.isfinite, _SURROGATE.search
    short = 1 << 64  # an integer below this is far from the digit limit
    max_string, max_depth, max_items = limits.max_string, limits.max_depth, limits.max_items
    t = type(value)
    if t is not dict and t is not list and t is not tuple:
        value, t = [value], list  # a scalar alone: walked as the only item of a list
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        v, depth = stack.pop()
        if depth >= max_depth:
            return False
        seen += len(v)
        if seen > max_items:
            return False
        if type(v) is dict:
            for k in v:
                if type(k) is str and (len(k) > max_string or (not k.isascii() and surrogate(k))):
                    return False
            v = v.values()
        for sub in v:
            t = type(sub)
            if t is str:
                if len(sub) > max_string or (not sub.isascii() and surrogate(sub)):
                    return False
            elif t is int:
                if not -short < sub < short:
                    return False
            elif t is dict or t is list or t is tuple:
                stack.append((sub, depth + 1))
            elif t is float:
                if not isfinite(sub):
                    return False
            elif sub is not None and t is not bool:
                return False
    return True


def check(value: Any, limits: Limits = DEFAULT) -> Any:
    """`value` itself when every part is acceptable; otherwise `Refused` for the first bad part."""
    if _acceptable(value, limits):
        return value
    if not isinstance(value, (dict, list, tuple)):
        _check_scalar(value, (), limits)
        return value
    stack: list[tuple[Any, tuple[Any, ...], int]] = [(value, (), 1)]
    seen = 0
    while stack:
        v, path, depth = stack.pop()
        if depth > limits.max_depth:
            raise Refused("depth", _where(path[: limits.max_depth]), f"nesting deeper than {limits.max_depth}")
        items = v.items() if isinstance(v, dict) else enumerate(v)
        for k, sub in items:
            seen += 1
            if seen > limits.max_items:
                raise Refused("size", _where(path), f"more than {limits.max_items} values")
            if isinstance(k, str):
                _check_scalar(k, path, limits)
            if isinstance(sub, (dict, list, tuple)):
                stack.append((sub, path + (k,), depth + 1))
            else:
                _check_scalar(sub, path + (k,), limits)
    return value


def checked_copy(value: Any, limits: Limits = DEFAULT) -> Any:
    """A copy of `value` (its dicts, lists and tuples new; what `copy.deepcopy` would give for
    JSON values) when the border lets it in; otherwise `Refused`, as `check`."""
    check(value, limits)
    return _copy(value)


def _copy(v: Any) -> Any:
    t = type(v)
    if t is dict:
        return {k: _copy(x) for k, x in v.items()}
    if t is list:
        return [_copy(x) for x in v]
    if t is tuple:
        return tuple(_copy(x) for x in v)
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    return copy.deepcopy(v)


def refusal(value: Any, limits: Limits = DEFAULT) -> str | None:
    """Why `value` cannot be kept (what `check` would refuse), or None when it can."""
    try:
        check(value, limits)
    except Refused as exc:
        return str(exc)
    return None


def parse(text: str | bytes, limits: Limits = DEFAULT) -> Any:
    """JSON text to a checked value; `Refused` (reason "json" when it is not JSON at all)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Refused("unicode", "", f"not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    if len(text) > limits.max_text:
        raise Refused("size", "", f"a text of {len(text)} characters (limit {limits.max_text})")
    try:
        try:
            value = jsontext.loads_exact(text)
        except ValueError:  # what orjson refuses or would misread: the standard library reads it or says why not
            value = jsontext.loads_standard(text)
        else:
            if len(text) <= min(limits.max_string, 2 * limits.max_items) \
                    and text.count("[") + text.count("{") <= limits.max_depth:
                # No string, value count or nesting of a text this short can pass a limit, and
                # orjson refused lone surrogates and non-finite numbers (jsontext: and long
                # integers): the value needs no walk.
                return value
    except json.JSONDecodeError as exc:
        raise Refused("json", "", f"not valid JSON: {exc.msg} at column {exc.colno}") from exc
    except jsontext.TooDeep as exc:  # refused by a scan before the recursive reader saw it
        raise Refused("depth", "", f"nesting deeper than {limits.max_depth}") from exc
    except ValueError as exc:  # an integer past Python's conversion limit
        raise Refused("number", "", f"a number too long to read ({str(exc)[:60]})") from exc
    return check(value, limits)


def clean_text(text: str, limit: int = 2000) -> str:
    """`text` safe to store and show: lone surrogates become U+FFFD, cut to `limit` characters."""
    if has_surrogate(text):
        text = _SURROGATE.sub("\ufffd", text)
    return text if len(text) <= limit else text[:limit] + "…"


def clean(value: Any, limits: Limits = DEFAULT, *, text_limit: int = 2000) -> Any:
    """A copy of `value` safe to put in a trace or a conversation: bad strings repaired and cut,
    nesting past the limit replaced by "…", huge numbers as a short text."""
    def walk(v: Any, depth: int) -> Any:
        if isinstance(v, str):
            return clean_text(v, text_limit)
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, int):
            if v.bit_length() > limits.max_int_digits * _BITS_PER_DIGIT:
                return f"<an integer of about {int(v.bit_length() / _BITS_PER_DIGIT)} digits>"
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else str(v)
        if isinstance(v, (dict, list, tuple)):
            if depth >= limits.max_depth:
                return "…"
            if isinstance(v, dict):
                return {clean_text(str(k), text_limit): walk(x, depth + 1) for k, x in list(v.items())[:1000]}
            return [walk(x, depth + 1) for x in list(v)[:1000]]
        return clean_text(str(v), text_limit)
    return walk(value, 0)


def safe(value: Any, limits: Limits = DEFAULT) -> Any:
    """`value` itself when the border lets it in, else a cleaned copy (strings kept whole up to
    the string limit): for keeping what came from outside in a conversation or a trace."""
    if isinstance(value, str):
        return clean_text(value, limits.max_string) if has_surrogate(value) or len(value) > limits.max_string else value
    try:
        return check(value, limits)
    except Refused:
        return clean(value, limits, text_limit=limits.max_string)
