"""The env builtins of §12: every tool, every unit, the pattern table row by row, errors, determinism."""
from __future__ import annotations

import hashlib
import random
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime.loop import envtools
from skillc.runtime.loop.envtools import EnvToolError, run

NOW = 1796048759.0  # 2026-11-30 14:25:59 UTC, a Monday
CST = timezone(timedelta(hours=8))


def call(name: str, args: dict[str, Any] | None = None, *, now: float = NOW, seed: int = 7,
         tz: Any = envtools.UTC) -> Any:
    """Run one env tool with a fixed clock and a seeded generator."""
    return run(f"builtin_env_{name}", {} if args is None else args, now=now, rng=random.Random(seed), tz=tz)


def fails(name: str, args: dict[str, Any], match: str) -> None:
    """The call is refused with an EnvToolError whose message matches `match`."""
    with pytest.raises(EnvToolError, match=match):
        call(name, args)


# ---- specs -------------------------------------------------------------------------------------

SPEC_ARGS = {  # §12: each env tool and its arguments, required ones without '?'
    "builtin_env_current_datetime": [],
    "builtin_env_generate_uuid": ["length?"],
    "builtin_env_format_datetime": ["input", "inputPattern?", "outputPattern?"],
    "builtin_env_add_datetime": ["base", "amount", "unit?"],
    "builtin_env_diff_datetime": ["from", "to", "unit?"],
    "builtin_env_get_weekday": ["date"],
    "builtin_env_random_int": ["min", "max"],
    "builtin_env_hash": ["input", "algorithm?", "length?"],
}


def test_specs_match_section_12() -> None:
    specs = {s.name: s for s in envtools.SPECS}
    assert list(specs) == list(SPEC_ARGS)
    for name, params in SPEC_ARGS.items():
        schema = specs[name].parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        assert sorted(schema["properties"]) == sorted(p.rstrip("?") for p in params)
        assert sorted(schema["required"]) == sorted(p for p in params if not p.endswith("?"))
        assert specs[name].description and "\n" not in specs[name].description


def test_spec_schemas_accept_good_and_reject_misspelt_arguments() -> None:
    schema = {s.name: s.parameters for s in envtools.SPECS}["builtin_env_add_datetime"]
    jsonschema.validate({"base": "2026-11-30", "amount": 2, "unit": "months"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"base": "2026-11-30", "amount": 2, "units": "days"}, schema)


# ---- current_datetime --------------------------------------------------------------------------

def test_current_datetime_uses_the_injected_clock() -> None:
    assert call("current_datetime") == {"datetime": "2026-11-30 14:25:59", "date": "2026-11-30",
                                        "iso": "2026-11-30T14:25:59+00:00", "epochMillis": 1796048759000,
                                        "timezone": "UTC"}
    later = call("current_datetime", now=NOW + 86400.25)
    assert later["datetime"] == "2026-12-01 14:25:59" and later["epochMillis"] == 1796135159250
    assert later["iso"] == "2026-12-01T14:25:59.250+00:00"


def test_current_datetime_in_a_zone() -> None:
    got = call("current_datetime", tz=ZoneInfo("Asia/Shanghai"))
    assert (got["datetime"], got["timezone"], got["epochMillis"]) == ("2026-11-30 22:25:59", "Asia/Shanghai", 1796048759000)
    assert call("current_datetime", tz=CST)["iso"] == "2026-11-30T22:25:59+08:00"


def test_current_datetime_takes_no_arguments() -> None:
    fails("current_datetime", {"tz": "UTC"}, r"unknown argument 'tz'.*expected: none")


# ---- generate_uuid -----------------------------------------------------------------------------

def test_uuid_is_a_v4_from_the_seeded_generator() -> None:
    first = call("generate_uuid")["uuid"]
    value = uuid.UUID(first)
    assert value.version == 4 and str(value) == first
    assert call("generate_uuid")["uuid"] == first  # same seed, same uuid
    assert call("generate_uuid", seed=8)["uuid"] != first


def test_uuid_length_truncates_the_hex() -> None:
    full = uuid.UUID(call("generate_uuid")["uuid"]).hex
    assert call("generate_uuid", {"length": 8})["uuid"] == full[:8]
    assert call("generate_uuid", {"length": 32})["uuid"] == full
    assert call("generate_uuid", {"length": "12"})["uuid"] == full[:12]


@pytest.mark.parametrize("length", [0, -1, 33, "x", True, 2.5])
def test_uuid_bad_length(length: Any) -> None:
    fails("generate_uuid", {"length": length}, r"^length: ")


# ---- the pattern table, row by row -------------------------------------------------------------

AM = datetime(2026, 3, 5, 9, 7, 4, 123456, tzinfo=CST)  # a Thursday morning
PM = datetime(2026, 12, 15, 15, 30, 45, tzinfo=timezone(timedelta(hours=-5, minutes=-30)))  # a Tuesday
MIDNIGHT = datetime(2026, 1, 1, 0, 5, tzinfo=envtools.UTC)

TABLE = [  # token, strptime directive, rendered AM, rendered PM, rendered MIDNIGHT
    ("yyyy", "%Y", "2026", "2026", "2026"),
    ("yy", "%y", "26", "26", "26"),
    ("MMMM", "%B", "March", "December", "January"),
    ("MMM", "%b", "Mar", "Dec", "Jan"),
    ("MM", "%m", "03", "12", "01"),
    ("M", "%m", "3", "12", "1"),
    ("dd", "%d", "05", "15", "01"),
    ("d", "%d", "5", "15", "1"),
    ("HH", "%H", "09", "15", "00"),
    ("H", "%H", "9", "15", "0"),
    ("hh", "%I", "09", "03", "12"),
    ("h", "%I", "9", "3", "12"),
    ("mm", "%M", "07", "30", "05"),
    ("m", "%M", "7", "30", "5"),
    ("ss", "%S", "04", "45", "00"),
    ("s", "%S", "4", "45", "0"),
    ("SSS", "%f", "123", "000", "000"),
    ("EEEE", "%A", "Thursday", "Tuesday", "Thursday"),
    ("EEE", "%a", "Thu", "Tue", "Thu"),
    ("E", "%a", "Thu", "Tue", "Thu"),
    ("a", "%p", "AM", "PM", "AM"),
    ("XXX", "%z", "+08:00", "-05:30", "+00:00"),
    ("Z", "%z", "+0800", "-0530", "+0000"),
]


def test_table_covers_every_token() -> None:
    assert sorted(row[0] for row in TABLE) == sorted(envtools.TOKENS)


@pytest.mark.parametrize("token, directive, am, pm, midnight", TABLE)
def test_token(token: str, directive: str, am: str, pm: str, midnight: str) -> None:
    assert envtools.to_strptime(token) == directive
    assert [envtools.format_dt(d, token) for d in (AM, PM, MIDNIGHT)] == [am, pm, midnight]


@pytest.mark.parametrize("pattern, strptime, rendered", [
    ("yyyy-MM-dd HH:mm:ss", "%Y-%m-%d %H:%M:%S", "2026-03-05 09:07:04"),
    ("yyyy/M/d", "%Y/%m/%d", "2026/3/5"),
    ("yyyyMMddHHmmssSSS", "%Y%m%d%H%M%S%f", "20260305090704123"),
    ("yyyy年MM月dd日", "%Y年%m月%d日", "2026年03月05日"),
    ("EEE, d MMM yyyy hh:mm a", "%a, %d %b %Y %I:%M %p", "Thu, 5 Mar 2026 09:07 AM"),
    ("yyyy-MM-dd'T'HH:mm:ssXXX", "%Y-%m-%dT%H:%M:%S%z", "2026-03-05T09:07:04+08:00"),
    ("'week of' d MMMM", "week of %d %B", "week of 5 March"),
    ("h 'o''clock'", "%I o'clock", "9 o'clock"),
    ("''yy''", "'%y'", "'26'"),
    ("d '100%'", "%d 100%%", "5 100%"),
])
def test_whole_patterns(pattern: str, strptime: str, rendered: str) -> None:
    assert envtools.to_strptime(pattern) == strptime
    assert envtools.format_dt(AM, pattern) == rendered


@pytest.mark.parametrize("pattern", [
    "yyyy-MM-dd HH:mm:ss", "yyyy/M/d H:m:s", "yyyyMMddHHmmss", "yyyy年MM月dd日 HH时mm分",
    "EEEE, MMMM d yyyy hh:mm:ss a", "dd.MM.yy HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ssXXX",
])
def test_patterns_round_trip(pattern: str) -> None:
    text = envtools.format_dt(PM, pattern)
    again = call("format_datetime", {"input": text, "inputPattern": pattern, "outputPattern": pattern})
    assert again["formatted"] == text


def test_strftime_patterns_are_used_as_they_are() -> None:
    assert envtools.to_strptime("%d/%m/%Y") == "%d/%m/%Y"
    assert envtools.format_dt(AM, "%-d %% %H") == "5 % 09"
    assert not envtools.is_strftime("d '100%'") and envtools.is_strftime("%%")
    got = call("format_datetime", {"input": "30/11/2026 08:00", "inputPattern": "%d/%m/%Y %H:%M",
                                   "outputPattern": "%Y-%m-%dT%H:%M"})
    assert got == {"formatted": "2026-11-30T08:00"}


@pytest.mark.parametrize("pattern, match", [
    ("yyyy-MM-dd HH:mm:ss.SS", r"outputPattern: unsupported pattern letters 'SS'"),
    ("YYYY-MM-dd", r"outputPattern: unsupported pattern letters 'YYYY'"),
    ("yyy", r"unsupported pattern letters 'yyy'"),
    ("dd 'unterminated", r"outputPattern: unterminated quoted text"),
    ("date: dd", r"unsupported pattern letters 't'"),  # unquoted text is letters, as in Java
])
def test_bad_output_patterns(pattern: str, match: str) -> None:
    fails("format_datetime", {"input": "2026-11-30", "outputPattern": pattern}, match)


# ---- format_datetime ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, formatted", [
    ("2026-11-30", "2026-11-30 00:00:00"),
    ("2026-11-30T14:25:59", "2026-11-30 14:25:59"),
    ("2026-11-30 14:25", "2026-11-30 14:25:00"),
    ("2026-11-30T14:25:59.500Z", "2026-11-30 14:25:59"),
    ("2026-11-30T14:25:59+08:00", "2026-11-30 14:25:59"),  # its own offset, not converted
    ("20261130", "2026-11-30 00:00:00"),
    ("2026/11/30", "2026-11-30 00:00:00"),
    ("2026/11/30 14:25:59", "2026-11-30 14:25:59"),
    ("  2026-11-30  ", "2026-11-30 00:00:00"),
])
def test_format_reads_iso_and_plain_dates_by_default(text: str, formatted: str) -> None:
    assert call("format_datetime", {"input": text}) == {"formatted": formatted}


def test_format_with_patterns() -> None:
    got = call("format_datetime", {"input": "30.11.2026 2:25 PM", "inputPattern": "dd.MM.yyyy h:mm a",
                                   "outputPattern": "EEEE yyyy年M月d日 HH:mm"})
    assert got == {"formatted": "Monday 2026年11月30日 14:25"}


def test_format_reads_epoch_millis_in_the_zone() -> None:
    got = call("format_datetime", {"input": 1796048759123, "outputPattern": "yyyy-MM-dd HH:mm:ss.SSS XXX"}, tz=CST)
    assert got == {"formatted": "2026-11-30 22:25:59.123 +08:00"}


def test_naive_input_is_read_in_the_zone() -> None:
    got = call("format_datetime", {"input": "2026-11-30 10:00", "outputPattern": "HH:mm Z"}, tz=ZoneInfo("Europe/Berlin"))
    assert got == {"formatted": "10:00 +0100"}


@pytest.mark.parametrize("args, match", [
    ({}, r"^input: expected a date string"),
    ({"input": ""}, r"^input: expected a date string"),
    ({"input": ["2026-11-30"]}, r"^input: expected a date string"),
    ({"input": "next tuesday"}, r"^input: cannot read 'next tuesday' as a date"),
    ({"input": "2026-02-30"}, r"^input: cannot read"),
    ({"input": "2026-11-30", "inputPattern": "dd/MM/yyyy"}, r"^input: '2026-11-30' does not match inputPattern 'dd/MM/yyyy'"),
    ({"input": "2026-11-30", "inputPattern": "QQ"}, r"^inputPattern: unsupported pattern letters 'QQ'"),
    ({"input": "2026-11-30", "inputPattern": ""}, r"^inputPattern: expected a non-empty string"),
    ({"input": "2026-11-30", "outputPattern": 5}, r"^outputPattern: expected a non-empty string"),
    ({"input": "2026-11-30", "pattern": "yyyy"}, r"unknown argument 'pattern'.*inputPattern, outputPattern"),
    ({"input": 10 ** 20}, r"^input: epoch milliseconds .* out of range"),
])
def test_format_errors(args: dict[str, Any], match: str) -> None:
    fails("format_datetime", args, match)


# ---- add_datetime -------------------------------------------------------------------------------

@pytest.mark.parametrize("base, amount, unit, expected", [
    ("2026-11-30 14:25:59", 1, "years", "2027-11-30 14:25:59"),
    ("2024-02-29", 1, "years", "2025-02-28 00:00:00"),
    ("2024-02-29", 4, "years", "2028-02-29 00:00:00"),
    ("2026-01-31", 1, "months", "2026-02-28 00:00:00"),
    ("2024-01-31", 1, "months", "2024-02-29 00:00:00"),
    ("2026-03-31", -1, "months", "2026-02-28 00:00:00"),
    ("2026-11-30", 2, "months", "2027-01-30 00:00:00"),
    ("2026-01-15", -13, "months", "2024-12-15 00:00:00"),
    ("2026-11-30", 2, "weeks", "2026-12-14 00:00:00"),
    ("2026-11-30", 3, None, "2026-12-03 00:00:00"),  # default unit: days
    ("2026-12-30", 5, "days", "2027-01-04 00:00:00"),
    ("2026-03-01", -1, "days", "2026-02-28 00:00:00"),
    ("2026-11-30 23:00:00", 2, "hours", "2026-12-01 01:00:00"),
    ("2026-11-30 00:00:00", -90, "minutes", "2026-11-29 22:30:00"),
    ("2026-11-30 23:59:59", 1, "seconds", "2026-12-01 00:00:00"),
    ("2026-11-30", 0, "days", "2026-11-30 00:00:00"),
])
def test_add_every_unit(base: str, amount: int, unit: str | None, expected: str) -> None:
    args: dict[str, Any] = {"base": base, "amount": amount}
    if unit is not None:
        args["unit"] = unit
    assert call("add_datetime", args)["datetime"] == expected


@pytest.mark.parametrize("unit", ["DAYS", "day", "Days", " days "])
def test_unit_spellings(unit: str) -> None:
    assert call("add_datetime", {"base": "2026-11-30", "amount": 1, "unit": unit})["date"] == "2026-12-01"


@pytest.mark.parametrize("amount", ["3", " -3 ", 3.0])
def test_amount_given_as_text_or_integral_float(amount: Any) -> None:
    days = int(float(amount))
    got = call("add_datetime", {"base": "2026-11-30", "amount": amount})
    assert got["date"] == (datetime(2026, 11, 30) + timedelta(days=days)).date().isoformat()


def test_add_answer_shape_keeps_the_offset() -> None:
    got = call("add_datetime", {"base": "2026-11-30T14:25:59+08:00", "amount": 1, "unit": "hours"})
    assert got == {"datetime": "2026-11-30 15:25:59", "date": "2026-11-30", "iso": "2026-11-30T15:25:59+08:00",
                   "epochMillis": 1796023559000, "timezone": "UTC+08:00"}


def test_add_across_a_dst_change() -> None:
    berlin = ZoneInfo("Europe/Berlin")  # clocks go forward on 2026-03-29 at 02:00
    day = call("add_datetime", {"base": "2026-03-28 12:00", "amount": 1, "unit": "days"}, tz=berlin)
    hours = call("add_datetime", {"base": "2026-03-28 12:00", "amount": 24, "unit": "hours"}, tz=berlin)
    assert day["iso"] == "2026-03-29T12:00:00+02:00"  # a calendar day: same wall time
    assert hours["iso"] == "2026-03-29T13:00:00+02:00"  # 24 elapsed hours
    assert day["timezone"] == "Europe/Berlin"


@pytest.mark.parametrize("args, match", [
    ({"amount": 1}, r"^base: expected a date string"),
    ({"base": "2026-11-30"}, r"^amount is required"),
    ({"base": "2026-11-30", "amount": 1.5}, r"^amount: expected a whole number, got 1.5"),
    ({"base": "2026-11-30", "amount": "two"}, r"^amount: expected a whole number, got 'two'"),
    ({"base": "2026-11-30", "amount": True}, r"^amount: expected a whole number"),
    ({"base": "2026-11-30", "amount": 1, "unit": "fortnights"}, r"^unit: unknown unit 'fortnights'; use one of years"),
    ({"base": "2026-11-30", "amount": 1, "unit": "ms"}, r"^unit: unknown unit"),
    ({"base": "2026-11-30", "amount": 10 ** 6, "unit": "years"}, r"^amount: result year .* out of range"),
    ({"base": "2026-11-30", "amount": 10 ** 9, "unit": "days"}, r"^amount: .* out of the supported date range"),
    ({"base": "9999-12-31 23:59:59", "amount": 1, "unit": "seconds"}, r"^amount: .* out of the supported date range"),
    ({"base": "yesterday", "amount": 1}, r"^base: cannot read 'yesterday'"),
])
def test_add_errors(args: dict[str, Any], match: str) -> None:
    fails("add_datetime", args, match)


# ---- diff_datetime ------------------------------------------------------------------------------

@pytest.mark.parametrize("start, end, unit, expected", [
    ("2024-02-29", "2025-02-28", "years", 1),
    ("2024-03-01", "2025-02-28", "years", 0),
    ("2026-11-30", "2020-12-01", "years", -5),
    ("2026-01-31", "2026-02-28", "months", 1),
    ("2026-01-31", "2026-02-27", "months", 0),
    ("2026-03-31", "2026-02-28", "months", -1),
    ("2026-01-15", "2027-03-14", "months", 13),
    ("2026-11-30", "2026-12-14", "weeks", 2),
    ("2026-11-30", "2026-12-13", "weeks", 1),
    ("2026-11-30", "2026-11-17", "weeks", -1),  # 13 days back: truncated toward zero
    ("2026-11-30", "2026-12-03", None, 3),  # default unit: days
    ("2026-11-30 12:00", "2026-12-01 11:59", "days", 0),
    ("2026-12-03", "2026-11-30", "days", -3),
    ("2026-11-30 14:00", "2026-11-30 16:59:59", "hours", 2),
    ("2026-11-30 14:00", "2026-11-30 11:30", "hours", -2),
    ("2026-11-30 14:00", "2026-11-30 14:45:30", "minutes", 45),
    ("2026-11-30 14:00", "2026-11-30 14:00:59.999", "seconds", 59),
    ("2026-11-30", "2026-11-30", "seconds", 0),
])
def test_diff_every_unit(start: str, end: str, unit: str | None, expected: int) -> None:
    args: dict[str, Any] = {"from": start, "to": end}
    if unit is not None:
        args["unit"] = unit
    assert call("diff_datetime", args) == {"diff": expected, "unit": unit or "days"}


def test_diff_compares_instants_across_offsets() -> None:
    got = call("diff_datetime", {"from": "2026-11-30T08:00:00+08:00", "to": "2026-11-30T00:00:00Z", "unit": "hours"})
    assert got["diff"] == 0
    got = call("diff_datetime", {"from": "2026-11-30T23:00:00+08:00", "to": "2026-11-30T16:00:00Z", "unit": "days"})
    assert got["diff"] == 0  # 2026-12-01 00:00 in the from zone: one hour later, not a day


@settings(max_examples=150, deadline=None)
@given(base=st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 12, 31)),
       amount=st.integers(-500, 500), unit=st.sampled_from(envtools.UNITS))
def test_diff_inverts_add(base: datetime, amount: int, unit: str) -> None:
    start = base.replace(tzinfo=CST)
    end = envtools.add(start, amount, unit)
    assert envtools.diff(start, end, unit) == amount


@pytest.mark.parametrize("args, match", [
    ({"to": "2026-11-30"}, r"^from: expected a date string"),
    ({"from": "2026-11-30"}, r"^to: expected a date string"),
    ({"from": "2026-11-30", "to": "soon"}, r"^to: cannot read 'soon'"),
    ({"from": "2026-11-30", "to": "2026-12-01", "unit": "decades"}, r"^unit: unknown unit 'decades'"),
    ({"from": "2026-11-30", "to": "2026-12-01", "unit": 3}, r"^unit: expected a non-empty string"),
])
def test_diff_errors(args: dict[str, Any], match: str) -> None:
    fails("diff_datetime", args, match)


# ---- get_weekday ---------------------------------------------------------------------------------

@pytest.mark.parametrize("offset, name", enumerate(envtools.DAY_NAMES))
def test_weekday_every_day(offset: int, name: str) -> None:
    date = (datetime(2026, 11, 30) + timedelta(days=offset)).date().isoformat()
    assert call("get_weekday", {"date": date}) == {"date": date, "weekday": name, "isoWeekday": offset + 1}


def test_weekday_of_a_date_time_in_its_own_offset() -> None:
    assert call("get_weekday", {"date": "2026-11-29T23:30:00-05:00"})["weekday"] == "Sunday"


@pytest.mark.parametrize("args, match", [({}, r"^date: expected a date string"),
                                         ({"date": "Funday"}, r"^date: cannot read 'Funday'")])
def test_weekday_errors(args: dict[str, Any], match: str) -> None:
    fails("get_weekday", args, match)


# ---- random_int -----------------------------------------------------------------------------------

def test_random_int_bounds_are_inclusive() -> None:
    rng = random.Random(3)
    seen = {run("builtin_env_random_int", {"min": 1, "max": 3}, now=NOW, rng=rng)["value"] for _ in range(200)}
    assert seen == {1, 2, 3}
    assert call("random_int", {"min": -5, "max": -5}) == {"value": -5}
    assert call("random_int", {"min": "10", "max": 12.0})["value"] in (10, 11, 12)


def test_random_int_is_deterministic_under_a_seed() -> None:
    draws = [call("random_int", {"min": 0, "max": 10 ** 9}, seed=s)["value"] for s in range(5)]
    assert draws == [call("random_int", {"min": 0, "max": 10 ** 9}, seed=s)["value"] for s in range(5)]
    assert draws[0] == random.Random(0).randint(0, 10 ** 9)
    assert len(set(draws)) == 5


@pytest.mark.parametrize("args, match", [
    ({"min": 5, "max": 1}, r"^min \(5\) is greater than max \(1\)"),
    ({"max": 1}, r"^min is required"),
    ({"min": 1}, r"^max is required"),
    ({"min": 1, "max": 2.5}, r"^max: expected a whole number"),
    ({"min": "one", "max": 2}, r"^min: expected a whole number"),
])
def test_random_int_errors(args: dict[str, Any], match: str) -> None:
    fails("random_int", args, match)


# ---- hash -----------------------------------------------------------------------------------------

ABC = {  # published test vectors for "abc"
    "md5": "900150983cd24fb0d6963f7d28e17f72",
    "sha1": "a9993e364706816aba3e25717850c26c9cd0d89d",
    "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    "sha512": "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
              "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
}


@pytest.mark.parametrize("algorithm, digest", ABC.items())
def test_hash_every_algorithm(algorithm: str, digest: str) -> None:
    assert call("hash", {"input": "abc", "algorithm": algorithm}) == {"hash": digest, "algorithm": algorithm}


def test_hash_defaults_to_sha256_over_utf8() -> None:
    assert call("hash", {"input": "abc"})["hash"] == ABC["sha256"]
    assert call("hash", {"input": "中文"})["hash"] == hashlib.sha256(b"\xe4\xb8\xad\xe6\x96\x87").hexdigest()
    assert call("hash", {"input": ""})["hash"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_hash_length_and_algorithm_spelling() -> None:
    assert call("hash", {"input": "abc", "length": 8}) == {"hash": "ba7816bf", "algorithm": "sha256"}
    assert call("hash", {"input": "abc", "algorithm": "SHA-1", "length": 40})["hash"] == ABC["sha1"]


@pytest.mark.parametrize("args, match", [
    ({}, r"^input: expected a string, got None"),
    ({"input": 42}, r"^input: expected a string, got 42"),
    ({"input": "abc", "algorithm": "crc32"}, r"^algorithm: unknown algorithm 'crc32'; use one of md5"),
    ({"input": "abc", "algorithm": "md5", "length": 33}, r"^length: must be between 1 and 32, got 33"),
    ({"input": "abc", "length": 0}, r"^length: must be between 1 and 64"),
])
def test_hash_errors(args: dict[str, Any], match: str) -> None:
    fails("hash", args, match)


# ---- dispatch -------------------------------------------------------------------------------------

def test_unknown_tool_and_bad_argument_objects() -> None:
    with pytest.raises(EnvToolError, match=r"unknown env tool 'builtin_env_sleep'"):
        run("builtin_env_sleep", {}, now=NOW, rng=random.Random(0))
    with pytest.raises(EnvToolError, match=r"unknown env tool 'builtin_node_finish'"):
        run("builtin_node_finish", {"output": "x"}, now=NOW, rng=random.Random(0))
    with pytest.raises(EnvToolError, match=r"arguments must be an object, got list"):
        run("builtin_env_current_datetime", [], now=NOW, rng=random.Random(0))  # type: ignore[arg-type]


def test_every_tool_is_deterministic_under_fixed_now_and_seed() -> None:
    examples = {"current_datetime": {}, "generate_uuid": {"length": 10}, "format_datetime": {"input": "2026-11-30"},
                "add_datetime": {"base": "2026-11-30", "amount": 1}, "get_weekday": {"date": "2026-11-30"},
                "diff_datetime": {"from": "2026-11-30", "to": "2027-01-01"}, "random_int": {"min": 1, "max": 99},
                "hash": {"input": "abc"}}
    assert sorted(f"builtin_env_{n}" for n in examples) == sorted(SPEC_ARGS)
    for name, args in examples.items():
        assert call(name, dict(args)) == call(name, dict(args))
