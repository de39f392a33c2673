"""The small support API that generated validator modules import (and nothing else of skillc).

A generated module is straight-line code per contract; what it shares with every other module
lives here: the metadata records it fills with literals, path access (DESIGN decision 1), the
comparison rules of §6.1, counting and entities of §6.3, and the result types of the parameter
contract (§5.3, §5.5). The runtime hands generated code a `BindContext` (see the Protocol below).

Path parts in generated code are compact tuples: ("k", name) a member, ("i", n) a list index,
("e",) each item of a list (`[]`).
"""
from __future__ import annotations

import json
import math
import re
import unicodedata
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol


class _Missing:
    """The absence of a value (distinct from JSON null)."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

Part = tuple  # ("k", name) | ("i", index) | ("e",)

# ---------------------------------------------------------------- metadata records


@dataclass(frozen=True)
class EntitySpec:
    """entity {type, id, name, scalar} (§6.3, §8)."""

    type: str | None
    id: str = "id"
    name: str = "name"
    scalar: str | None = None


@dataclass(frozen=True)
class ArgMeta:
    """What the runtime needs to know of one configured argument outside the decision code."""

    path: str
    parts: tuple
    label: str | None = None
    sensitive: bool = False
    bound: bool = False  # has from/const: exempt from the schema's required check (§13 step 1)
    platform: bool = False  # from platform.*: hidden from approval text (§11)
    sources: tuple[str, ...] = ()
    expected_evidence: bool = False  # may come from EVIDENCE (a source, or from: evidence.*)

    @property
    def expected_user(self) -> bool:
        """May come from USER: a follow-up may expect it (§12)."""
        return "USER" in self.sources


@dataclass(slots=True)
class Extraction:
    """What §6.3 extracts from one response."""

    values: dict[str, Any] = field(default_factory=dict)  # key -> subtree at path
    empty: bool = False
    entities: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class Judgement:
    """The response contract's verdict (§6.1, §6.2)."""

    business_ok: bool
    error_code: Any = None
    error_message: Any = None


@dataclass(frozen=True)
class ParamIssue:
    """One argument's problem: what the runtime must do about it (§5.3 step 4, §5.5)."""

    action: str  # "REJECT" | "FAIL" | "CALL_TOOL" | "ASK_USER"
    param: str
    reason: str  # "missing" | "provenance" | "enum"
    label: str | None = None
    tool: str | None = None
    message: str | None = None


@dataclass(slots=True)
class ParamResult:
    """The parameter contract's outcome: each argument's source, and the issue to act on, if any."""

    provenance: dict[str, str]
    issue: ParamIssue | None = None


_PRIORITY = {"REJECT": 0, "FAIL": 1, "CALL_TOOL": 2, "ASK_USER": 3}


def worst(issues: list[ParamIssue]) -> ParamIssue | None:
    """The issue acted upon when several arguments fail: reject > FAIL > CALL_TOOL > ASK_USER (§5.5)."""
    if not issues:
        return None
    return min(issues, key=lambda i: _PRIORITY[i.action])


def bind_nothing(args: dict, ctx: Any) -> dict[str, str]:
    """The binding of a tool without from/const arguments: nothing is bound."""
    return {}


def check_nothing(args: dict, bound: dict[str, str], ctx: Any) -> ParamResult:
    """The parameter contract of a tool without configured arguments: nothing to check."""
    return ParamResult({})


def judge_nothing(response: Any) -> Judgement:
    """No `success` configured: no business judgement, every response succeeds (§6.1)."""
    return Judgement(True)


def extract_default(response: Any, request: dict) -> Extraction:
    """No `extracts` configured: emptiness by the response's structure (§6.3)."""
    return Extraction(empty=default_empty(response))


def bind_no_inputs(inputs: dict, ctx: Any) -> dict[str, str]:
    """The input binding of a skill without declared inputs (§7)."""
    return {}


@dataclass(frozen=True)
class ToolMeta:
    """One configured tool of a skill: its metadata and its compiled decision functions (a
    generated module names only what differs from these defaults)."""

    name: str
    label: str | None = None
    side_effect: str = "NONE"
    confirm: bool = False
    idempotency_key: tuple[tuple, ...] = ()
    args: Mapping[str, ArgMeta] = field(default_factory=dict)
    verify_tool: str | None = None
    bind: Callable[[dict, "BindContext"], dict[str, str]] = bind_nothing
    check: Callable[[dict, dict[str, str], "BindContext"], ParamResult] = check_nothing
    judge: Callable[[Any], Judgement] = judge_nothing
    extract: Callable[[Any, dict], Extraction] = extract_default
    verify_args: Callable[[dict], dict] | None = None


@dataclass(frozen=True)
class InputMeta:
    """inputs.<name> (§7): `prefix` is the from-expression's prefix (or None)."""

    name: str
    required: bool = True
    provider: str | None = None
    prefix: str | None = None
    share_key: tuple | None = None  # path under shared./session. when prefix is one of them


@dataclass(frozen=True)
class OutputMeta:
    """outputs.<name> (§8)."""

    name: str
    type: str = "VALUE"
    fields: tuple[str, ...] = ()
    min_items: int = 1
    hint: str | None = None
    required: bool = True
    share: str | None = None
    entity: EntitySpec | None = None
    sources: tuple[str, ...] = ()
    has_constant: bool = False
    constant: Any = None


@dataclass(frozen=True)
class SkillMeta:
    """The skill's profile and root contract properties."""

    key: str
    name: str = ""
    mode: str = "REACT"
    delegatable: bool = False
    target: str | None = None
    tool_names: tuple[str, ...] = ()
    semantic_desc: str = ""
    manual: str = ""


class SkillModule(Protocol):
    """What a generated skill module provides (the loader checks nothing more)."""

    SKILL: SkillMeta
    TOOLS: Mapping[str, ToolMeta]
    INPUTS: Mapping[str, InputMeta]
    OUTPUTS: Mapping[str, OutputMeta]

    def bind_inputs(self, inputs: dict[str, Any], ctx: Any) -> dict[str, str]:
        """Bind the node's inputs (§7); returns input name -> source."""


class BindContext(Protocol):
    """What generated code may ask of the runtime while binding and judging arguments."""

    @property
    def platform(self) -> Mapping[str, Any]:
        """The platform identity (§11)."""

    @property
    def inputs(self) -> Mapping[str, Any]:
        """The node's inputs."""

    @property
    def outputs(self) -> Mapping[str, Any]:
        """The node's written outputs."""

    @property
    def shared(self) -> Mapping[str, Any]:
        """The task's shared values."""

    @property
    def session(self) -> Mapping[str, Any]:
        """The session's values."""

    def evidence_value(self, key: str, parts: tuple) -> Any:
        """`evidence.<key>.<path>`: first hit in §9's order, else MISSING."""

    def prior(self, entity_type: str, entity_id: str | None, attr: str | None) -> Any:
        """An entity attribute of the session's index (most recent first), else MISSING."""

    def upstream_output(self, parts: tuple) -> Any:
        """The nearest finished upstream node's output at `parts`, else MISSING."""

    def user_mentions(self, param: str, value: Any) -> bool:
        """USER provenance (§5.3, DESIGN decision 3)."""

    def evidence_has(self, value: Any) -> bool:
        """EVIDENCE provenance: equal to a value in an extract of successful evidence."""

    def node_output_has(self, param: str, value: Any) -> bool:
        """NODE_OUTPUT provenance: inputs/outputs hold `value` under the parameter path."""

    def shared_has(self, param: str, value: Any) -> bool:
        """SHARED provenance."""

    def session_has(self, param: str, value: Any) -> bool:
        """SESSION provenance."""

    def prior_has(self, value: Any, ref: tuple | None) -> bool:
        """PRIOR_TASK provenance: an entity id (or the `from: prior.*` path's value)."""


# ---------------------------------------------------------------- paths (DESIGN decision 1)


def get_path(value: Any, parts: tuple) -> Any:
    """The value at `parts`, MISSING when absent. A name applied to a list maps over its items."""
    for i, part in enumerate(parts):
        kind = part[0]
        if kind == "k":
            if isinstance(value, dict):
                if part[1] not in value:
                    return MISSING
                value = value[part[1]]
            elif isinstance(value, list):
                rest = parts[i:]
                out = [v for v in (get_path(item, rest) for item in value) if v is not MISSING]
                return out
            else:
                return MISSING
        elif kind == "i":
            if isinstance(value, list) and -len(value) <= part[1] < len(value):
                value = value[part[1]]
            elif isinstance(value, dict) and str(part[1]) in value:
                value = value[str(part[1])]
            else:
                return MISSING
        else:  # each
            if not isinstance(value, list):
                return MISSING
            rest = parts[i + 1 :]
            return [v for v in (get_path(item, rest) for item in value) if v is not MISSING]
    return value


def set_path(target: dict, parts: tuple, value: Any) -> None:
    """Set a key path (no `[]`), creating intermediate objects."""
    cur: Any = target
    for part in parts[:-1]:
        key = part[1] if part[0] == "k" else part[1]
        if isinstance(cur, dict):
            nxt = cur.get(key)
            if not isinstance(nxt, (dict, list)):
                nxt = {}
                cur[key] = nxt
            cur = nxt
        elif isinstance(cur, list) and isinstance(key, int) and key < len(cur):
            cur = cur[key]
        else:
            return
    last = parts[-1]
    if isinstance(cur, dict):
        cur[last[1]] = value
    elif isinstance(cur, list) and last[0] == "i" and last[1] < len(cur):
        cur[last[1]] = value


def at_path(value: Any, parts: tuple, act: Callable[[Any, Any], None]) -> None:
    """Call act(container, key) at every place `parts` reaches in `value` (each item for `[]`, a
    name mapped over a list's items as in get_path). The caller edits there: mask, delete, …"""
    if not parts:
        return
    head, rest = parts[0], parts[1:]
    if head[0] == "e":
        if isinstance(value, list):
            if rest:
                for item in value:
                    at_path(item, rest, act)
            else:
                for i in reversed(range(len(value))):
                    act(value, i)
        return
    key = head[1]
    if isinstance(value, dict):
        if key in value:
            at_path(value[key], rest, act) if rest else act(value, key)
    elif isinstance(value, list):
        if head[0] == "i" and -len(value) <= key < len(value):
            at_path(value[key], rest, act) if rest else act(value, key)
        elif head[0] == "k":
            for item in value:
                at_path(item, parts, act)


def split_each(parts: tuple) -> tuple[tuple, tuple] | None:
    """(before, after) of the first `[]` in a path, or None when it has none."""
    for i, part in enumerate(parts):
        if part[0] == "e":
            return parts[:i], parts[i + 1 :]
    return None


def has_value(v: Any) -> bool:
    """An argument "has a value" (§5.3): present, not null, not an empty string."""
    return v is not MISSING and v is not None and v != ""


def arg_values(args: dict, parts: tuple) -> list[Any] | None:
    """An argument's value(s): one value for a plain path, one per item for a `[]` path.

    None when the argument has no value at all; MISSING entries for items lacking it.
    """
    split = split_each(parts)
    if split is None:
        v = get_path(args, parts)
        return [v] if has_value(v) else None
    before, after = split
    items = get_path(args, before)
    if not isinstance(items, list) or not items:
        return None
    out = []
    for item in items:
        v = get_path(item, after) if after else item
        out.append(v if has_value(v) else MISSING)
    return out


def fill_template(args: dict, parts: tuple, values: Any) -> bool:
    """§5.4 array template: fill `parts` (with `[]`) item by item from `values`, only where the
    model gave none. True when the argument now comes wholly from the template: every item holds
    the template's value at its index. A value the model gave that differs (or an item beyond the
    template) keeps the model as the source, so it is still checked (§5.3 step 3: MODEL)."""
    split = split_each(parts)
    if split is None or not isinstance(values, list):
        return False
    before, after = split
    items = get_path(args, before)
    if not isinstance(items, list):
        items = []
        set_path(args, before, items)
        if get_path(args, before) is not items:
            return False
    for i, v in enumerate(values):
        if v is MISSING:
            continue
        while len(items) <= i:
            items.append({} if after else None)
        if after:
            if not isinstance(items[i], dict):
                continue
            if has_value(get_path(items[i], after)):
                continue
            set_path(items[i], after, v)
        else:
            if has_value(items[i]):
                continue
            items[i] = v
    if not items or len(items) > len(values):
        return False
    for i, item in enumerate(items):
        got = (get_path(item, after) if isinstance(item, dict) else MISSING) if after else item
        if values[i] is MISSING or canonical(got) != canonical(values[i]):
            return False
    return True


def unique_evidence(value: Any) -> Any:
    """`when: UNIQUE` on `evidence.*` (§5.4): the value must be a list of length 1; the list is bound."""
    return value if isinstance(value, list) and len(value) == 1 else MISSING


def unique_path(root: Any, parts: tuple) -> Any:
    """`when: UNIQUE` on other prefixes (DESIGN decision 2): the list before the first `[]` must
    have exactly one item, and the value found through that item is bound. Without `[]`, a list
    value must have one item (that item is bound); any other value is bound as it is."""
    split = split_each(parts)
    if split is None:
        value = get_path(root, parts)
        if isinstance(value, list):
            return value[0] if len(value) == 1 else MISSING
        return value
    before, after = split
    items = get_path(root, before)
    if not isinstance(items, list) or len(items) != 1:
        return MISSING
    return get_path(items[0], after) if after else items[0]


# ---------------------------------------------------------------- comparisons (§6.1)


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(v: Any) -> Decimal | None:
    """The exact decimal value of a number or of plain decimal text, else None (§6.1 EQ).

    Exact (not float): "9007199254740993" and 9007199254740992 are different numbers. Only plain
    decimal text converts: Python's float() would also take "1_000", "inf", "nan" and non-ASCII
    digits, which are text, not numbers.
    """
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, float):
        return Decimal(repr(v)) if math.isfinite(v) else None
    if isinstance(v, str):
        text = v.strip()
        if not _DECIMAL.fullmatch(text):
            return None
        return Decimal(text)
    return None


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if v is MISSING:
        return ""
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def op_eq(actual: Any, expected: Any) -> bool:
    """EQ: numerically when both sides convert to numbers ("200" == 200), else as strings."""
    if actual is MISSING:
        return False
    if type(actual) is int and type(expected) is int:  # the common `code == 200`, exactly
        return actual == expected
    a, b = _number(actual), _number(expected)
    if a is not None and b is not None:
        return a == b
    return _text(actual) == _text(expected)


def op_ne(actual: Any, expected: Any) -> bool:
    """NE: the negation of EQ (a missing value is "not equal")."""
    return not op_eq(actual, expected)


def op_in(actual: Any, options: Any) -> bool:
    """IN: EQ to one of the listed values."""
    return isinstance(options, list) and any(op_eq(actual, o) for o in options)


def op_not_in(actual: Any, options: Any) -> bool:
    """NOT_IN: EQ to none of the listed values."""
    return not op_in(actual, options)


def op_truthy(actual: Any) -> bool:
    """TRUTHY: not null/false/0/""/"0"/"false", not an empty container."""
    if actual is MISSING or actual is None or actual is False:
        return False
    if isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return actual != 0
    if isinstance(actual, str):
        return actual not in ("", "0", "false")
    if isinstance(actual, (list, dict)):
        return len(actual) > 0
    return True


def op_exists(actual: Any) -> bool:
    """EXISTS: the path is present (null counts)."""
    return actual is not MISSING


def is_empty_response(response: Any) -> bool:
    """An empty response (DESIGN decision 11): null, {}, [] or ""."""
    return response is None or response is MISSING or response == {} or response == [] or response == ""


# ---------------------------------------------------------------- extraction (§6.3)


def count_items(sub: Any, fields: tuple[str, ...]) -> int:
    """Array -> its length; object -> 1 if it has content (any of `fields` when given), else 0."""
    if isinstance(sub, list):
        return len(sub)
    if isinstance(sub, dict):
        if fields:
            return 1 if any(has_value(sub.get(f, MISSING)) and sub.get(f) != [] for f in fields) else 0
        return 1 if sub else 0
    if sub is MISSING or sub is None or sub == "":
        return 0
    return 1


def make_entities(sub: Any, spec: EntitySpec, base: dict | None = None) -> list[dict[str, Any]]:
    """Entities of `sub` (object, or each item of an array; a scalar only when `scalar` names it).

    For write tools `base` is the request: merged under the response ("入参为底、返回为准").
    """
    if spec.type is None or sub is MISSING or sub is None:
        return []
    items = sub if isinstance(sub, list) else [sub]
    out = []
    for item in items:
        if not isinstance(item, dict):
            if spec.scalar is None or isinstance(item, (list, dict)):
                continue
            item = {spec.scalar: item}
        merged = {**(base or {}), **item} if base is not None and not isinstance(sub, list) else dict(item)
        ident = merged.get(spec.id)
        if not has_value(ident) or isinstance(ident, (list, dict)):
            continue
        name = merged.get(spec.name)
        attrs = {k: v for k, v in merged.items() if isinstance(v, (str, int, float, bool)) or v is None}
        out.append({"type": spec.type, "id": ident, "name": name if isinstance(name, (str, int, float)) else None,
                    "attrs": attrs})
    return out


def default_empty(response: Any) -> bool:
    """No extracts configured: empty by the response's structure (null/{}/[]/"", or an empty `data`)."""
    if is_empty_response(response):
        return True
    if isinstance(response, dict) and "data" in response:
        return is_empty_response(response["data"])
    return False


# ---------------------------------------------------------------- values


_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str).encode


def canonical(value: Any) -> str:
    """Canonical JSON text of a value (sorted keys, no spaces): fingerprints, idempotency, equality."""
    return _CANONICAL(value)


def normalize_text(value: Any) -> str:
    """USER matching text (DESIGN decision 3): NFKC, all whitespace removed, lower case."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = unicodedata.normalize("NFKC", text)
    return "".join(text.split()).lower()


# ---------------------------------------------------------------- helpers of generated code (codegen)


def set_all(target: dict, parts: tuple, value: Any) -> None:
    """Set a parameter path that may hold `[]`: with `[]`, a copy of `value` goes into every
    existing item (a `const` or a non-template `from` on `lines[].taxRate`)."""
    split = split_each(parts)
    if split is None:
        set_path(target, parts, value)
        return
    before, after = split
    items = get_path(target, before)
    if not isinstance(items, list):
        return
    for i, item in enumerate(items):
        if after:
            if isinstance(item, dict):
                set_all(item, after, deep_copy(value))
        else:
            items[i] = deep_copy(value)


def value_or_none(v: Any) -> Any:
    """None for MISSING, the value otherwise (error paths of §6.2 that are absent)."""
    return None if v is MISSING else v


def deep_copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (verify arguments must not alias the write's request)."""
    import copy

    return copy.deepcopy(value)


def json_value(text: str) -> Any:
    """A contract constant too deeply nested for a Python literal, carried as JSON text."""
    return json.loads(text)


def enum_key(value: Any) -> tuple:
    """A hashable key with exact JSON equality (`1`, `1.0`, `true` and `"1"` all differ), for the
    `enum` sets of generated code (§5.3 step 5): scalars by kind, containers by canonical JSON."""
    if value is None:
        return ("n", None)
    cls = type(value)
    if cls is str:
        return ("s", value)
    if cls is bool:
        return ("b", value)
    if cls is int:
        return ("i", value)
    if cls is float:
        return ("f", value)
    return ("j", canonical(value))
