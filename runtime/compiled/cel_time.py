"""CEL's timestamps and durations for compiled rule code: `timestamp()`, `duration()`, their text
and their calendar parts in UTC or a zone (docs/reference/rules.md). Microsecond precision."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from skillc.runtime.compiled.cel_values import Undecidable, _dur, _is_int, type_name

# ---------------------------------------------------------------- timestamps and durations

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)
_DUR_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|ns|h|m|s)", re.ASCII)
_DUR_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def timestamp(v: Any) -> datetime:
    """`timestamp(text)` (RFC 3339, e.g. '2026-05-01T10:00:00Z') or `timestamp(epoch seconds)`."""
    if isinstance(v, datetime):
        return v
    if _is_int(v):
        try:
            return _EPOCH + timedelta(seconds=v)
        except OverflowError:
            raise Undecidable("timestamp", "out of range") from None
    if not isinstance(v, str):
        raise Undecidable("timestamp", f"a {type_name(v)} is not a timestamp")
    m = _TS.fullmatch(v.strip())
    if m is None:
        raise Undecidable("timestamp", f"{v!r} is not an RFC 3339 timestamp")
    year, month, day, hour, minute, second, frac, zone = m.groups()
    frac = frac or ""
    if frac[6:].strip("0"):
        raise Undecidable("timestamp", f"{v!r}: finer than microseconds is not supported")
    micros = int((frac + "000000")[:6])
    tz = timezone.utc
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        out = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo=tz)
        return out.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise Undecidable("timestamp", f"{v!r} is not a valid time") from None


def duration(v: Any) -> timedelta:
    """`duration(text)`: a signed sequence of numbers with units h, m, s, ms, us, ns ('24h', '1h30m')."""
    if isinstance(v, timedelta):
        return v
    if not isinstance(v, str):
        raise Undecidable("duration", f"a {type_name(v)} is not a duration")
    text = v.strip()
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return timedelta(0)
    pos, total_ns = 0, 0
    while pos < len(body):
        m = _DUR_PART.match(body, pos)
        if m is None:
            raise Undecidable("duration", f"{v!r} is not a duration (e.g. '24h', '1h30m', '1.5s')")
        total_ns += int(Decimal(m.group(1)) * Decimal(repr(_DUR_UNIT[m.group(2)])) * 10 ** 9)
        pos = m.end()
    if not body:
        raise Undecidable("duration", f"{v!r} is not a duration")
    if total_ns % 1000:
        raise Undecidable("duration", f"{v!r}: finer than microseconds is not supported")
    return _dur(timedelta(microseconds=sign * total_ns // 1000), "duration")


def format_timestamp(t: datetime) -> str:
    """RFC 3339 text in UTC, with the fraction only when there is one."""
    u = t.astimezone(timezone.utc)
    frac = f".{u.microsecond:06d}".rstrip("0") if u.microsecond else ""
    return u.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def format_duration(d: timedelta) -> str:
    """Seconds with a fraction when needed, as CEL prints a duration ('90s', '1.5s')."""
    micros = d // timedelta(microseconds=1)
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), 1_000_000)
    return f"{sign}{whole}" + (f".{frac:06d}".rstrip("0") if frac else "") + "s"


@lru_cache(maxsize=64)
def _zone(name: str) -> Any:
    m = re.fullmatch(r"([+-])?(\d{2}):(\d{2})", name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise Undecidable("time zone", f"unknown time zone {name!r}") from None


def _local(t: Any, tz: Any, fn: str) -> datetime:
    if not isinstance(t, datetime):
        raise Undecidable(fn, f"a {type_name(t)} is not a timestamp")
    if tz is None:
        return t.astimezone(timezone.utc)
    if not isinstance(tz, str):
        raise Undecidable(fn, f"a time zone is a string, found {type_name(tz)}")
    return t.astimezone(_zone(tz))


def ts_part(t: Any, part: str, tz: Any = None) -> int:
    """A timestamp's calendar field (`getFullYear`, `getMonth` 0-based, `getDate` 1-based,
    `getDayOfMonth` 0-based, `getDayOfWeek` 0 = Sunday, `getDayOfYear` 0-based, `getHours`,
    `getMinutes`, `getSeconds`, `getMilliseconds`), in UTC or in the zone given."""
    if isinstance(t, timedelta) and tz is None:
        return dur_part(t, part)
    lt_ = _local(t, tz, part)
    if part == "getFullYear":
        return lt_.year
    if part == "getMonth":
        return lt_.month - 1
    if part == "getDate":
        return lt_.day
    if part == "getDayOfMonth":
        return lt_.day - 1
    if part == "getDayOfWeek":
        return (lt_.weekday() + 1) % 7
    if part == "getDayOfYear":
        return lt_.timetuple().tm_yday - 1
    if part == "getHours":
        return lt_.hour
    if part == "getMinutes":
        return lt_.minute
    if part == "getSeconds":
        return lt_.second
    if part == "getMilliseconds":
        return lt_.microsecond // 1000
    raise Undecidable(part, "not a timestamp function")


def dur_part(d: Any, part: str) -> int:
    """A duration's length in whole hours, minutes, seconds or milliseconds (`getHours`, …)."""
    if not isinstance(d, timedelta):
        raise Undecidable(part, f"a {type_name(d)} is not a duration")
    micros = d // timedelta(microseconds=1)
    unit = {"getHours": 3_600_000_000, "getMinutes": 60_000_000, "getSeconds": 1_000_000,
            "getMilliseconds": 1000}.get(part)
    if unit is None:
        raise Undecidable(part, "not a duration function")
    q = abs(micros) // unit
    if part == "getMilliseconds":
        q = (abs(micros) // 1000) % 1000
    return q if micros >= 0 else -q
