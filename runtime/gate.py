"""Write-gate decisions (§14): who needs approval, the idempotency key, the approval summary."""
from __future__ import annotations

import hashlib
from typing import Any

from skillc.runtime import support as rt
from skillc.runtime.trace import MASK


def path_text(parts: tuple) -> str:
    """The dotted text of a parts tuple (`lines[].goodsCode`)."""
    out = ""
    for part in parts:
        if part[0] == "e":
            out += "[]"
        else:
            out += ("." if out else "") + str(part[1])
    return out


def approval_needed(tool: str, meta: rt.ToolMeta, settings: Any) -> bool:
    """Approval is bypassed only with confirm: false AND the tool in the bypass list (§4, §14.1)."""
    if meta.side_effect != "WRITE":
        return False
    return bool(meta.confirm) or tool not in settings.write_confirm_bypass_tools


def idempotency_key(tool: str, meta: rt.ToolMeta, args: dict[str, Any]) -> str:
    """§14.2: SHA-256 of the listed values in path order (missing skipped), else of all arguments."""
    values = []
    for parts in sorted(meta.idempotency_key, key=path_text):
        v = rt.get_path(args, parts)
        if rt.has_value(v):
            values.append(path_text(parts) + "=" + rt.canonical(v))
    material = "\n".join(values) if values else "*" + rt.canonical(args)
    return tool + ":" + hashlib.sha256(material.encode()).hexdigest()


def approval_summary(meta: rt.ToolMeta, args: dict[str, Any]) -> str:
    """"Label: value" lines; sensitive values masked, platform-injected arguments not shown."""
    lines = []
    configured = {a.path: a for a in meta.args.values()}
    shown: set[str] = set()
    for a in meta.args.values():
        if a.platform:
            shown.add(a.path)
            continue
        values = rt.arg_values(args, a.parts)
        if values is None:
            continue
        shown.add(a.path)
        text = MASK if a.sensitive else ", ".join(_show(v) for v in values)
        lines.append(f"{a.label or a.path}: {text}")
    for key, value in args.items():
        if key in shown or key in configured or any(p.startswith(key + ".") or p.startswith(key + "[") for p in shown):
            continue
        lines.append(f"{key}: {_show(value)}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is rt.MISSING:
        return "?"
    return rt.canonical(value)
