"""Write-gate decisions (§14): who needs approval, the idempotency key, the approval summary."""
from __future__ import annotations

import copy
import hashlib
from typing import Any

from skillc.runtime.paths import arg_values, at_path, get_path, path_text
from skillc.runtime.skillmeta import ToolMeta
from skillc.runtime.values import MISSING, canonical, has_value
from skillc.runtime.trace import MASK
from skillc.runtime.vocab import SideEffect


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
    member inside them left out (it is shown by its own line, or hidden when platform-injected)."""
    lines = []
    rest = copy.deepcopy(args)
    for a in meta.args.values():
        at_path(rest, a.parts, _remove)  # shown by its own line, or hidden
        if a.platform:
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
