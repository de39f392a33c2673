"""`skillc check --servers`: compare a studio with the tools its MCP servers really serve.

Each configured server is started (stdio) or reached (HTTP) once and its tools listed with their
MCP annotations. Findings: a toolName no server serves (SC601), a tool the contract treats as a
read that the server marks `destructiveHint` (SC602), a contract WRITE the server marks
`readOnlyHint` (SC603), a server that cannot be listed (SC604). A contract tool missing from
toolNames is found without servers (SC216, the front end).
"""
from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListedTool:
    """One tool as a server lists it: its name and the MCP hints that matter to a contract."""

    name: str
    server: str
    read_only: bool | None = None
    destructive: bool | None = None
    input_schema: Any = None
    output_schema: Any = None  # the tool's declared outputSchema, when it has one


@dataclass
class ServerListing:
    """What one server answered: its tools, or why it could not be listed."""

    name: str
    tools: list[ListedTool] = field(default_factory=list)
    error: str | None = None
    where: str = ""  # the server's URL, or its command line


def _target(spec: Any) -> Any:
    """What `mcp.Client` connects to for a `[mcp.servers.<name>]` entry."""
    if spec.url is not None:
        return spec.url
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    # The server's stderr needs a real file: a replaced sys.stderr (pytest, an embedding app) may have none.
    try:
        sys.stderr.fileno()
        errlog = sys.stderr
    except (AttributeError, OSError, ValueError):
        errlog = sys.__stderr__
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd)
    return stdio_client(params, errlog=errlog)


def _where(spec: Any) -> str:
    """The server as the config names it: its URL, or its command line."""
    if spec.url is not None:
        return str(spec.url)
    return " ".join([str(spec.command), *map(str, spec.args)])


async def _list_one(name: str, spec: Any, timeout: float) -> ServerListing:
    from mcp import Client

    from skillc.runtime.mcp.gateway import describe_failure

    tools: list[ListedTool] = []
    try:
        async with asyncio.timeout(timeout):
            async with Client(_target(spec)) as client:
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    for t in page.tools:
                        hints = t.annotations
                        tools.append(ListedTool(t.name, name, getattr(hints, "read_only_hint", None),
                                                getattr(hints, "destructive_hint", None), dict(t.input_schema or {}),
                                                getattr(t, "output_schema", None)))
                    cursor = page.next_cursor
                    if not cursor:
                        break
    except TimeoutError:
        return ServerListing(name, error=f"no answer within {timeout:g} s", where=_where(spec))
    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - any failure is this server's finding
        # the innermost failure (a task group wraps it, sometimes twice), not the group
        return ServerListing(name, error=describe_failure(exc), where=_where(spec))
    return ServerListing(name, tools=tools, where=_where(spec))


async def list_servers(servers: Mapping[str, Any], *, timeout: float = 10.0, tmp: str | None = None) -> list[ServerListing]:
    """List every server's tools concurrently (`servers`: name -> McpServerConfig); `{tmp}` in
    args/env becomes `tmp` (a fresh temp folder when None)."""
    import tempfile

    folder = tmp or tempfile.mkdtemp(prefix="skillc-check-")
    specs = {name: spec.with_tmp(folder) for name, spec in servers.items()}
    # in the configured order: the gateway names a clash by the server listed later
    return list(await asyncio.gather(*(_list_one(n, s, timeout) for n, s in specs.items())))


def _server_table(config_path: Any, server: str) -> dict[str, Any]:
    """file/text/span of a server's `[mcp.servers.<name>]` table in the config (None if unknown)."""
    from skillc.compiler import ir

    if config_path is None or not Path(config_path).is_file():
        return {"file": None, "text": None, "span": None}
    text = Path(config_path).read_text(encoding="utf-8")
    heads = (f"[mcp.servers.{server}]", f'[mcp.servers."{server}"]')
    lines = text.split("\n")
    row = next((i for i, line in enumerate(lines) if line.strip() in heads), None)
    if row is None:
        return {"file": str(config_path), "text": None, "span": None}
    span = ir.Span(line=row + 1, column=1, end_line=row + 1, end_column=len(lines[row]) + 1)
    return {"file": str(config_path), "text": text, "span": span}


def _tools_entry(profile: Any, index: int) -> dict[str, Any]:
    """text/span of toolNames entry `index` in the skill's skill.yaml (directory studios)."""
    from skillc.compiler.authoring import yaml_span

    origin = profile.source.origin if profile.source else ""
    found = yaml_span(origin, ("tools", index)) if origin.endswith(".yaml") and Path(origin).is_file() else None
    return {"text": found[0], "span": found[1]} if found else {"text": None, "span": None}


def compare(result: Any, listings: list[ServerListing], config_path: Any = None) -> list[Any]:
    """Diagnostics (SC601–SC607) of a front-end result (`FrontendResult`) against the listings
    (in the configured order); SC604/SC605 point at the server's table of `config_path`."""
    from skillc.compiler.authoring import did_you_mean
    from skillc.compiler.diagnostics import make
    from skillc.runtime.mcp.gateway import catalog_clashes
    from skillc.server_schemas import schema_findings

    served: dict[str, ListedTool] = {}
    for t in (t for listing in listings for t in listing.tools):
        served.setdefault(t.name, t)  # the first server's, as the gateway's catalog keeps it
    down = [listing for listing in listings if listing.error is not None]
    out = [make("SC604", "warning", f"MCP server {listing.name} ({listing.where}) could not be listed: {listing.error}",
                skill=None, **_server_table(config_path, listing.name)) for listing in down]
    clashes = catalog_clashes((listing.name, [t.name for t in listing.tools]) for listing in listings)
    for clash in clashes:
        later = clash.rsplit(" and ", 1)[1].strip("'\"")
        out.append(make("SC605", "error", f"MCP servers cannot form one catalog: {clash}", skill=None,
                        **_server_table(config_path, later)))
    out += schema_findings(result, served)
    if any(t.rules for c in result.contracts.values() for t in c.tools.values()):
        from skillc.compiler.rules_servers import rule_schema_findings  # lark's rule grammar only when used

        out += rule_schema_findings(result, served)
    for profile in result.studio.skills:
        if profile.status != "ACTIVE":
            continue
        file = profile.source.origin if profile.source else None
        contract = result.contracts.get(profile.skill_key)
        for i, tool in enumerate(profile.tool_names):
            listed = served.get(tool)
            if listed is None:
                if down:
                    continue  # maybe the server that is down serves it: SC604 says so once
                out.append(make("SC601", "warning", f"tool '{tool}' of skill {profile.skill_key} is served by no "
                                "configured MCP server: every call of it would fail", skill=profile.skill_key,
                                file=file, help=did_you_mean(tool, served), **_tools_entry(profile, i)))
                continue
            spec = contract.tools.get(tool) if contract is not None else None
            write = spec is not None and spec.side_effect == "WRITE"
            if not write and listed.destructive:
                out.append(make("SC602", "warning", f"tool '{tool}' of skill {profile.skill_key} is a read in the "
                                f"contract, but server {listed.server} marks it destructiveHint: it runs with no "
                                "approval, idempotency or verification", skill=profile.skill_key, file=file,
                                help='configure it with "sideEffect": "WRITE" and a success condition',
                                **_tools_entry(profile, i)))
            elif write and listed.read_only:
                out.append(make("SC603", "note", f"tool '{tool}' of skill {profile.skill_key} is a WRITE in the "
                                f"contract, but server {listed.server} marks it readOnlyHint", skill=profile.skill_key,
                                file=file, **_tools_entry(profile, i)))
    return out


def describe(listings: list[ServerListing]) -> list[str]:
    """One line per server: its tools, or why it could not be listed."""
    lines = []
    for listing in listings:
        if listing.error is not None:
            lines.append(f"server {listing.name}: not listed ({listing.where}): {listing.error}")
        else:
            names = ", ".join(sorted(t.name for t in listing.tools)) or "(no tools)"
            lines.append(f"server {listing.name}: {len(listing.tools)} tools: {names}")
    return lines


def check_servers(command: str, config: Any, result: Any, stream: Any = None) -> list[Any] | None:
    """List the config's servers, print what each serves (to `stream`, stdout by default), and
    return the findings; None (after saying why) when the config has no servers."""
    servers = config.mcp.servers
    if not servers:
        where = config.path or "the config"
        print(f"skillc {command}: --servers: {where} configures no [mcp.servers.<name>]", file=sys.stderr)
        return None
    listings = asyncio.run(list_servers(servers, timeout=config.mcp.connect_timeout))
    for line in describe(sorted(listings, key=lambda listing: listing.name)):
        print(line, file=stream or sys.stdout)
    return compare(result, listings, config.path)
