"""What `skillc chat` and `skillc serve` say once their MCP servers are up: each reachable server's
tool count, and each loaded skill's toolNames that no server serves (every call of them would
fail). Read from the gateway's catalog; nothing is called."""
from __future__ import annotations

from typing import Any


def unserved_tools(studio: Any, catalog: Any, some_down: bool) -> list[str]:
    """One line per toolName of a loaded skill that no MCP server serves (none when a server is
    down: it may serve them, and the gateway said it was down)."""
    if some_down:
        return []
    lines = []
    for key, module in sorted(getattr(studio, "skills", {}).items()):
        meta = getattr(module, "SKILL", None)
        missing = [t for t in getattr(meta, "tool_names", ()) if t not in catalog]
        if missing:
            lines.append(f"skill {key}: {', '.join(missing)} served by no MCP server (calls will fail; "
                         "`skillc check --servers` shows what each server serves)")
    return lines


def startup_report(servers: Any, studio: Any, gateway: Any) -> tuple[list[str], list[str]]:
    """What `chat` and `serve` say once their MCP servers are up: a line per reachable configured
    server with its tool count, and a warning per loaded skill whose toolNames no server serves
    (said before a user approves a write that could only fail). An unreachable server was
    already reported by the gateway."""
    unreachable = getattr(gateway, "unreachable_servers", None) or {}
    counts: dict[str, int] = {}
    for info in gateway.catalog.values():
        counts[info.server] = counts.get(info.server, 0) + 1
    lines = [f"MCP server {name}: {counts.get(name, 0)} tools" for name in sorted(set(servers) - set(unreachable))]
    return lines, unserved_tools(studio, gateway.catalog, bool(unreachable))
