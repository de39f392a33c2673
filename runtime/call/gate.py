"""Write-gate decisions (§14): who needs approval, the idempotency key, the approval summary."""
from __future__ import annotations

import copy
import hashlib
from typing import Any

from skillc.runtime.compiled.paths import arg_values, at_path, get_path, path_text, split_each
from skillc.runtime.compiled.skillmeta import ToolMeta
from skillc.runtime.compiled.values import MISSING, canonical, has_value
from skillc.runtime.outside.redact import MASK
from skillc.runtime.words.vocab import SideEffect


def approval_needed(tool: str, meta: ToolMeta, settings: Any) -> bool:
    """Approval is bypassed only with confirm: false AND the tool in the bypass list (§4, §14.1)."""
    if meta.side_effect != SideEffect.WRITE:
        return False
    return bool(meta.confirm) or tool not in settings.write_confirm_bypass_tools


def idempotency_key(tool: str, meta: ToolMeta, args: dict[str, Any]) -> str:
    """§14.2: SHA-256 of the listed values in path order (missing skipped), else of all arguments."""
    values = []
    for parts in sorted(meta.idempotency_key, key=path_text):
        v = get_path(args, parts)
        if has_value(v):
            values.append(path_text(parts) + "=" + canonical(v))
    material = "\n".join(values) if values else "*" + canonical(args)
    return tool + ":" + hashlib.sha256(material.encode()).hexdigest()


def approval_summary(meta: ToolMeta, args: dict[str, Any]) -> str:
    """"Label: value" lines; sensitive values masked, platform-injected arguments not shown (§14.1,
    §11). Arguments the contract does not list follow as "name: value", with any configured
    member inside them left out (it is shown by its own line, or hidden when platform-injected).
    A list whose items carry two or more fields is shown item by item, one numbered line each
    (`approval_tables`), so a reviewer can tell whose date of birth is whose."""
    lines = []
    rest = copy.deepcopy(args)
    tables = {t["list"]: t for t in _tables(meta, args, rest)}  # takes every configured member out of rest
    drawn: set[str] = set()
    for a in meta.args.values():
        if a.platform:
            continue
        name = _list_of(a)
        if name is not None and name in tables:
            if name not in drawn:  # at the place of the list's first configured member
                drawn.add(name)
                table = tables[name]
                lines.append(f"{name}:")
                lines += [f"  {i}. " + " · ".join(f"{c}: {v}" for c, v in zip(table["columns"], row) if v != "")
                          for i, row in enumerate(table["rows"], 1)]
            continue
        values = arg_values(args, a.parts)
        if values is None:
            continue
        text = MASK if a.sensitive else ", ".join(_show(v) for v in values)
        lines.append(f"{a.label or a.path}: {text}")
    for key, value in rest.items():
        if isinstance(value, (dict, list)) and not _has_scalar(value) and args.get(key) != value:
            continue  # nothing left once the configured members are taken out
        lines.append(f"{key}: {_show(value)}")
    return "\n".join(lines)


def approval_tables(meta: ToolMeta, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The lists of a write's arguments shown item by item: for each list whose items carry two
    or more fields (configured `[]` arguments and the items' other members), {"list": its path,
    "columns": labels, "rows": one list of shown values per item ("" where an item has none)};
    sensitive values masked, platform-injected ones left out, as in the summary."""
    return _tables(meta, args, copy.deepcopy(args))


def _list_of(a: Any) -> str | None:
    """The path text of the list a `[]` argument is a member of, None for a plain argument."""
    split = split_each(a.parts)
    return path_text(split[0]) if split is not None and split[0] else None


def _tables(meta: ToolMeta, args: dict[str, Any], rest: dict[str, Any]) -> list[dict[str, Any]]:
    """The tables of `approval_tables`; the lists they show are removed from `rest` (the
    unconfigured remainder), their configured members first."""
    groups: dict[str, list[Any]] = {}
    for a in meta.args.values():
        at_path(rest, a.parts, _remove)
        if not a.platform and (name := _list_of(a)) is not None:
            groups.setdefault(name, []).append(a)
    tables = []
    for name, members in groups.items():
        before, _ = split_each(members[0].parts) or ((), ())
        items = get_path(args, before)
        if not isinstance(items, list) or not items:
            continue
        left = get_path(rest, before)
        extra: dict[str, None] = {}
        for item in left if isinstance(left, list) else []:
            if isinstance(item, dict):
                extra.update((k, None) for k, v in item.items() if _has_scalar(v))
        columns = [a.label or a.path for a in members] + list(extra)
        if len(columns) < 2:
            continue
        rows = []
        for i, item in enumerate(items):
            row = []
            for a in members:
                after = (split_each(a.parts) or ((), ()))[1]
                v = get_path(item, after) if after else item
                row.append("" if not has_value(v) else MASK if a.sensitive else _show(v))
            other = left[i] if isinstance(left, list) and i < len(left) and isinstance(left[i], dict) else {}
            row += [_show(other[k]) if k in other and _has_scalar(other[k]) else "" for k in extra]
            rows.append(row)
        at_path(rest, before, _remove)
        tables.append({"list": name, "columns": columns, "rows": rows})
    return tables


def _has_scalar(value: Any) -> bool:
    """True when a value holds anything but (nested) empty containers."""
    if isinstance(value, dict):
        return any(_has_scalar(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_scalar(v) for v in value)
    return True


def _remove(container: Any, key: Any) -> None:
    del container[key]


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is MISSING:
        return "?"
    return canonical(value)
