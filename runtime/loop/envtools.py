"""The environment builtins of §12 (`builtin_env_*`): clock, dates, uuid, random numbers, hashes.

Pure functions of their arguments plus an injected clock (`now`), random generator (`rng`) and
time zone (`tz`), so a replayed session gets the same answers. Date patterns are the Java/ICU
patterns the original platform used (`yyyy-MM-dd HH:mm:ss`), translated token by token; a
pattern with a `%` directive (`%Y`, `%-d`, `%%`) is taken as a strftime/strptime pattern unchanged.
"""
from __future__ import annotations

import calendar
import hashlib
import random
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Callable, cast

from skillc.runtime.words.errors import SkillcError
from skillc.runtime.model.base import ToolSpec

UTC = timezone.utc
DEFAULT_PATTERN = "yyyy-MM-dd HH:mm:ss"
UNITS = ("years", "months", "weeks", "days", "hours", "minutes", "seconds")
HASHES = ("md5", "sha1", "sha256", "sha512")
# Names are rendered from these tables, not strftime, so output does not depend on the C locale.
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")


class EnvToolError(SkillcError):
    """Bad arguments to an env tool; the message names the argument and what was wrong."""


@dataclass(frozen=True)
class Token:
    """One Java pattern token: the strptime directive that parses it and how to render it."""

    directive: str
    render: Callable[[datetime], str]


def _offset(d: datetime, colon: bool) -> str:
    off = d.utcoffset() or timedelta(0)
    sign, off = ("-", -off) if off < timedelta(0) else ("+", off)
    hours, rest = divmod(int(off.total_seconds()), 3600)
    return f"{sign}{hours:02d}{':' if colon else ''}{rest // 60:02d}"


# The translation table: Java/ICU letters -> strptime directive and renderer. Unpadded tokens
# (M, d, H, …) parse with the padded directive because strptime accepts one or two digits.
TOKENS: dict[str, Token] = {
    "yyyy": Token("%Y", lambda d: f"{d.year:04d}"),
    "yy": Token("%y", lambda d: f"{d.year % 100:02d}"),
    "MMMM": Token("%B", lambda d: MONTH_NAMES[d.month - 1]),
    "MMM": Token("%b", lambda d: MONTH_NAMES[d.month - 1][:3]),
    "MM": Token("%m", lambda d: f"{d.month:02d}"),
    "M": Token("%m", lambda d: str(d.month)),
    "dd": Token("%d", lambda d: f"{d.day:02d}"),
    "d": Token("%d", lambda d: str(d.day)),
    "HH": Token("%H", lambda d: f"{d.hour:02d}"),
    "H": Token("%H", lambda d: str(d.hour)),
    "hh": Token("%I", lambda d: f"{d.hour % 12 or 12:02d}"),
    "h": Token("%I", lambda d: str(d.hour % 12 or 12)),
    "mm": Token("%M", lambda d: f"{d.minute:02d}"),
    "m": Token("%M", lambda d: str(d.minute)),
    "ss": Token("%S", lambda d: f"{d.second:02d}"),
    "s": Token("%S", lambda d: str(d.second)),
    "SSS": Token("%f", lambda d: f"{d.microsecond // 1000:03d}"),
    "EEEE": Token("%A", lambda d: DAY_NAMES[d.weekday()]),
    "EEE": Token("%a", lambda d: DAY_NAMES[d.weekday()][:3]),
    "E": Token("%a", lambda d: DAY_NAMES[d.weekday()][:3]),
    "a": Token("%p", lambda d: "AM" if d.hour < 12 else "PM"),
    "XXX": Token("%z", lambda d: _offset(d, colon=True)),
    "Z": Token("%z", lambda d: _offset(d, colon=False)),
}


def tokenize(pattern: str, arg: str) -> list[str | Token]:
    """Split a Java pattern into literal strings and Tokens; `arg` names the argument in errors."""
    out: list[str | Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            if pattern.startswith("''", i):  # '' is a literal quote, in or out of quoted text
                out.append("'")
                i += 2
                continue
            text, i = [], i + 1
            while True:
                if i >= len(pattern):
                    raise EnvToolError(f"{arg}: unterminated quoted text in pattern {pattern!r}")
                if pattern.startswith("''", i):
                    text.append("'")
                    i += 2
                elif pattern[i] == "'":
                    i += 1
                    break
                else:
                    text.append(pattern[i])
                    i += 1
            out.append("".join(text))
        elif c.isascii() and c.isalpha():  # only ASCII letters are pattern letters (年月日 are text)
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            run = pattern[i:j]
            if run not in TOKENS:
                raise EnvToolError(f"{arg}: unsupported pattern letters {run!r} in {pattern!r}; "
                                   f"use {', '.join(TOKENS)} or quote literal text in '...'")
            out.append(TOKENS[run])
            i = j
        else:
            out.append(c)
            i += 1
    return out


# A strftime pattern has a directive (%Y, %-d, %%); a lone % (Java's '100%') does not make one.
_STRFTIME = re.compile(r"%[-#]?[A-Za-z%]")


def is_strftime(pattern: str) -> bool:
    """Whether `pattern` is a strftime/strptime pattern, to be used as it is."""
    return _STRFTIME.search(pattern) is not None


def to_strptime(pattern: str, arg: str = "pattern") -> str:
    """Translate a Java pattern to a strptime pattern (a strftime pattern is returned as it is)."""
    if is_strftime(pattern):
        return pattern
    return "".join(t.directive if isinstance(t, Token) else t.replace("%", "%%")
                   for t in tokenize(pattern, arg))


def format_dt(d: datetime, pattern: str = DEFAULT_PATTERN, arg: str = "outputPattern") -> str:
    """Render a datetime with a Java pattern, or with strftime when it is a strftime pattern."""
    if is_strftime(pattern):
        try:
            return d.strftime(pattern)
        except ValueError as exc:
            raise EnvToolError(f"{arg}: bad strftime pattern {pattern!r}: {exc}") from None
    return "".join(t.render(d) if isinstance(t, Token) else t for t in tokenize(pattern, arg))


def parse_dt(value: Any, arg: str, tz: tzinfo, pattern: str | None = None) -> datetime:
    """Parse a date argument: with `pattern`, else ISO 8601 / plain date, or epoch milliseconds.

    The result is always aware: text without an offset is read in `tz`.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:  # timedelta arithmetic keeps the milliseconds exact (a float division would not)
            return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=value)).astimezone(tz)
        except (OverflowError, ValueError):
            raise EnvToolError(f"{arg}: epoch milliseconds {value!r} out of range") from None
    if not isinstance(value, str) or not value.strip():
        raise EnvToolError(f"{arg}: expected a date string, got {value!r}")
    text = value.strip()
    if pattern is not None:
        fmt = to_strptime(pattern, "inputPattern")
        try:
            d = datetime.strptime(text, fmt)
        except ValueError as exc:
            raise EnvToolError(f"{arg}: {text!r} does not match inputPattern {pattern!r} ({exc})") from None
    else:
        try:
            d = datetime.fromisoformat(text)
        except ValueError:
            for fallback in ("%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M", "%Y/%m/%d"):
                try:
                    d = datetime.strptime(text, fallback)
                    break
                except ValueError:
                    continue
            else:
                raise EnvToolError(f"{arg}: cannot read {text!r} as a date; give ISO 8601 "
                                   "(2026-11-30 or 2026-11-30T14:25:59) or an inputPattern") from None
    return d if d.tzinfo is not None else d.replace(tzinfo=tz)


def describe(d: datetime) -> dict[str, Any]:
    """The common answer shape for one instant: default-pattern text, date, ISO, epoch ms, zone."""
    spec = "milliseconds" if d.microsecond else "seconds"
    epoch_ms = (d - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    return {"datetime": format_dt(d), "date": d.date().isoformat(), "iso": d.isoformat(timespec=spec),
            "epochMillis": epoch_ms, "timezone": getattr(d.tzinfo, "key", None) or d.tzname()}


# ---- argument helpers -----------------------------------------------------------------------

_MISSING = object()


def _int(args: dict[str, Any], name: str, default: Any = _MISSING) -> int:
    """A whole-number argument; integral floats and numeric strings are accepted (models send them)."""
    value = args.get(name, _MISSING)
    if value is _MISSING or value is None:
        if default is _MISSING:
            raise EnvToolError(f"{name} is required")
        return cast(int, default)
    if isinstance(value, bool):
        raise EnvToolError(f"{name}: expected a whole number, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise EnvToolError(f"{name}: expected a whole number, got {value!r}")


def _str(args: dict[str, Any], name: str, default: Any = _MISSING) -> Any:
    value = args.get(name)
    if value is None:
        if default is _MISSING:
            raise EnvToolError(f"{name} is required")
        return default
    if not isinstance(value, str) or not value:
        raise EnvToolError(f"{name}: expected a non-empty string, got {value!r}")
    return value


def _unit(args: dict[str, Any]) -> str:
    """`unit`, case-insensitive, singular or plural (Java's ChronoUnit spells DAYS)."""
    raw: str = _str(args, "unit", "days").strip().lower()
    unit = raw if raw.endswith("s") else raw + "s"
    if unit not in UNITS:
        raise EnvToolError(f"unit: unknown unit {args.get('unit')!r}; use one of {', '.join(UNITS)}")
    return unit


def _length(args: dict[str, Any], most: int) -> int | None:
    n = _int(args, "length", None)
    if n is not None and not 1 <= n <= most:
        raise EnvToolError(f"length: must be between 1 and {most}, got {n}")
    return n


# ---- date arithmetic -----------------------------------------------------------------------

_EXACT = {"weeks": timedelta(weeks=1), "days": timedelta(days=1), "hours": timedelta(hours=1),
          "minutes": timedelta(minutes=1), "seconds": timedelta(seconds=1)}


def add_months(d: datetime, months: int) -> datetime:
    """Calendar month arithmetic: the day is clamped to the target month (Jan 31 + 1 = Feb 28/29)."""
    total = d.year * 12 + d.month - 1 + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise EnvToolError(f"amount: result year {year} is out of range")
    return d.replace(year=year, month=month + 1, day=min(d.day, calendar.monthrange(year, month + 1)[1]))


def add(d: datetime, amount: int, unit: str) -> datetime:
    """Add `amount` units: years/months/weeks/days on the wall clock, hours and less as elapsed time."""
    if unit in ("years", "months"):
        return add_months(d, amount * (12 if unit == "years" else 1))
    try:
        if unit in ("weeks", "days"):  # wall clock: a day across a DST change is still a day
            return d + amount * _EXACT[unit]
        return (d.astimezone(UTC) + amount * _EXACT[unit]).astimezone(d.tzinfo)
    except OverflowError:
        raise EnvToolError(f"amount: {amount} {unit} is out of the supported date range") from None


def diff(start: datetime, end: datetime, unit: str) -> int:
    """Signed whole units from `start` to `end`, truncated toward zero; diff(b, add(b, n)) == n."""
    end = end.astimezone(start.tzinfo)  # compare calendars and wall clocks in start's zone
    if unit in ("years", "months"):
        step = 12 if unit == "years" else 1
        sign = 1 if end >= start else -1
        # The calendar-month count bounds the answer from above; walk down to the last whole
        # unit that does not pass `end` (day clamping can make it one less).
        n = abs((end.year - start.year) * 12 + end.month - start.month) // step
        while n > 0 and not _within(start, sign * n * step, end, sign):
            n -= 1
        return sign * n
    if unit in ("weeks", "days"):  # wall clock, like add()
        delta = end.replace(tzinfo=None) - start.replace(tzinfo=None)
    else:
        delta = end - start
    micros, per = delta // timedelta(microseconds=1), _EXACT[unit] // timedelta(microseconds=1)
    return (abs(micros) // per) * (1 if micros >= 0 else -1)


def _within(start: datetime, months: int, end: datetime, sign: int) -> bool:
    candidate = add_months(start, months)
    return candidate <= end if sign > 0 else candidate >= end


# ---- the tools ---------------------------------------------------------------------------------

def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


_DATE = {"type": "string", "description": "ISO 8601 date or date-time (2026-11-30, 2026-11-30T14:25:59+08:00)"}
_PATTERN = {"type": "string", "description": "Java-style pattern, e.g. yyyy-MM-dd HH:mm:ss"}
_UNIT = {"type": "string", "enum": list(UNITS), "description": "default days"}

SPECS: list[ToolSpec] = [
    ToolSpec("builtin_env_current_datetime", "The current date and time.", _obj({}, [])),
    ToolSpec("builtin_env_generate_uuid", "Generate a random UUID; length truncates its hex digits (no dashes).",
             _obj({"length": {"type": "integer", "minimum": 1, "maximum": 32}}, [])),
    ToolSpec("builtin_env_format_datetime", "Reformat a date from inputPattern (default ISO 8601) to "
             "outputPattern (default yyyy-MM-dd HH:mm:ss).",
             _obj({"input": _DATE, "inputPattern": _PATTERN, "outputPattern": _PATTERN}, ["input"])),
    ToolSpec("builtin_env_add_datetime", "Add (or with a negative amount subtract) an amount of a unit to a date.",
             _obj({"base": _DATE, "amount": {"type": "integer"}, "unit": _UNIT}, ["base", "amount"])),
    ToolSpec("builtin_env_diff_datetime", "Whole units from one date to another (negative if to is earlier).",
             _obj({"from": _DATE, "to": _DATE, "unit": _UNIT}, ["from", "to"])),
    ToolSpec("builtin_env_get_weekday", "The day of the week of a date.", _obj({"date": _DATE}, ["date"])),
    ToolSpec("builtin_env_random_int", "A random whole number between min and max, both included.",
             _obj({"min": {"type": "integer"}, "max": {"type": "integer"}}, ["min", "max"])),
    ToolSpec("builtin_env_hash", "Hex digest of a UTF-8 string; length truncates it.",
             _obj({"input": {"type": "string"}, "algorithm": {"type": "string", "enum": list(HASHES),
                                                               "description": "default sha256"},
                   "length": {"type": "integer", "minimum": 1}}, ["input"])),
]
_ALLOWED = {s.name: set(s.parameters["properties"]) for s in SPECS}


def run(name: str, args: dict[str, Any], *, now: float, rng: random.Random, tz: tzinfo = UTC) -> Any:
    """Run the env tool `name`; `now` is the clock (epoch seconds), `rng` the only randomness."""
    if name not in _ALLOWED:
        raise EnvToolError(f"unknown env tool {name!r}")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise EnvToolError(f"arguments must be an object, got {type(args).__name__}")
    extra = sorted(set(args) - _ALLOWED[name])
    if extra:  # a misspelt argument would otherwise be silently ignored
        expected = ", ".join(sorted(_ALLOWED[name])) or "none"
        raise EnvToolError(f"unknown argument {extra[0]!r} for {name} (expected: {expected})")

    if name == "builtin_env_current_datetime":
        return describe(datetime.fromtimestamp(now, tz))
    if name == "builtin_env_generate_uuid":
        length = _length(args, 32)
        value = uuid.UUID(int=rng.getrandbits(128), version=4)
        return {"uuid": value.hex[:length] if length is not None else str(value)}
    if name == "builtin_env_format_datetime":
        d = parse_dt(args.get("input"), "input", tz, _str(args, "inputPattern", None))
        return {"formatted": format_dt(d, _str(args, "outputPattern", DEFAULT_PATTERN))}
    if name == "builtin_env_add_datetime":
        base = parse_dt(args.get("base"), "base", tz)
        return describe(add(base, _int(args, "amount"), _unit(args)))
    if name == "builtin_env_diff_datetime":
        start, end = parse_dt(args.get("from"), "from", tz), parse_dt(args.get("to"), "to", tz)
        unit = _unit(args)
        return {"diff": diff(start, end, unit), "unit": unit}
    if name == "builtin_env_get_weekday":
        d = parse_dt(args.get("date"), "date", tz)
        return {"date": d.date().isoformat(), "weekday": DAY_NAMES[d.weekday()], "isoWeekday": d.isoweekday()}
    if name == "builtin_env_random_int":
        low, high = _int(args, "min"), _int(args, "max")
        if low > high:
            raise EnvToolError(f"min ({low}) is greater than max ({high})")
        return {"value": rng.randint(low, high)}
    # builtin_env_hash
    text = args.get("input")
    if not isinstance(text, str):
        raise EnvToolError(f"input: expected a string, got {text!r}")
    raw = _str(args, "algorithm", "sha256")
    algorithm = raw.strip().lower().replace("-", "")
    if algorithm not in HASHES:
        raise EnvToolError(f"algorithm: unknown algorithm {raw!r}; use one of {', '.join(HASHES)}")
    digest = hashlib.new(algorithm, text.encode("utf-8")).hexdigest()
    length = _length(args, len(digest))
    return {"hash": digest[:length] if length is not None else digest, "algorithm": algorithm}


__all__ = ["SPECS", "EnvToolError", "run", "TOKENS", "to_strptime", "format_dt", "parse_dt", "add", "diff",
           "add_months", "describe", "is_strftime", "UNITS", "HASHES", "DEFAULT_PATTERN", "UTC"]
