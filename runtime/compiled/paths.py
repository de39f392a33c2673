"""Paths (docs/interpretations.md: Paths): reading, writing and walking values along compact path tuples.

Path parts are tuples: ("k", name) a member, ("i", n) a list index, ("e",) each item of a list
(`[]`). Generated code carries them as literals; text the runtime meets at run time (a
`sourceRef` path, a parameter name) goes through `parse_path` once and is cached.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

from skillc.runtime.text.idtext import ascii_int
from skillc.runtime.compiled.values import MISSING, canonical, deep_copy, has_value

Part = tuple[Any, ...]  # ("k", name) | ("i", index) | ("e",)


@lru_cache(maxsize=4096)
def parse_path(text: str, *, each: bool = True) -> tuple[Any, ...]:
    """The parts of dotted path text (`lines[].goodsCode`, `data.0.id`): a digit segment is an
    index, `name[]` is the name then each item (with each=False the `[]` is dropped, so the name
    maps over a list's items as in get_path). Cached: the same text is parsed once."""
    parts: list[tuple[Any, ...]] = []
    for seg in text.split("."):
        star = seg.endswith("[]")
        name = seg[:-2] if star else seg
        if name:
            index = ascii_int(name)  # "²" or 5,000 digits name a member: no list has such an index
            parts.append(("i", index) if index is not None else ("k", name))
        if star and each:
            parts.append(("e",))
    return tuple(parts)


def path_text(parts: tuple[Any, ...]) -> str:
    """The dotted text of a parts tuple (`lines[].goodsCode`)."""
    out = ""
    for part in parts:
        if part[0] == "e":
            out += "[]"
        else:
            out += ("." if out else "") + str(part[1])
    return out


def get_path(value: Any, parts: tuple[Any, ...]) -> Any:
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


def set_path(target: dict[str, Any], parts: tuple[Any, ...], value: Any) -> None:
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


def at_path(value: Any, parts: tuple[Any, ...], act: Callable[[Any, Any], None]) -> None:
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


def split_each(parts: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """(before, after) of the first `[]` in a path, or None when it has none."""
    for i, part in enumerate(parts):
        if part[0] == "e":
            return parts[:i], parts[i + 1 :]
    return None


def arg_values(args: dict[str, Any], parts: tuple[Any, ...]) -> list[Any] | None:
    """An argument's value(s): one value for a plain path, one per item for a `[]` path.

    None when the argument has no value at all; MISSING entries for items lacking it.
    """
    split = split_each(parts)
    if split is None:
        v = get_path(args, parts)
        return [v] if has_value(v) else None
    return each_values(args, split[0], split[1])


def each_values(args: dict[str, Any], before: tuple[Any, ...], after: tuple[Any, ...]) -> list[Any] | None:
    """`arg_values` of a `[]` path split at its first `[]` ahead of time (a generated check splits
    it once, at compile time). The common shape, one key before and one after (`lines[].sku`) on
    dict items, is read with plain dict lookups: what get_path does there, without the calls."""
    if len(before) == 1 and before[0][0] == "k" and type(args) is dict:
        items = args.get(before[0][1], MISSING)
    else:
        items = get_path(args, before)
    if not isinstance(items, list) or not items:
        return None
    out = []
    if len(after) == 1 and after[0][0] == "k":
        key = after[0][1]
        for item in items:
            v = item.get(key, MISSING) if type(item) is dict else get_path(item, after)
            out.append(v if v is not MISSING and v is not None and v != "" else MISSING)
        return out
    for item in items:
        v = get_path(item, after) if after else item
        out.append(v if has_value(v) else MISSING)
    return out


def fill_template(args: dict[str, Any], parts: tuple[Any, ...], values: Any) -> bool:
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


def unique_path(root: Any, parts: tuple[Any, ...]) -> Any:
    """`when: UNIQUE` on other prefixes (docs/interpretations.md: when: UNIQUE): the list before the first `[]` must
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


def set_all(target: dict[str, Any], parts: tuple[Any, ...], value: Any) -> None:
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
