"""A one-skill studio over the annotated test MCP server's tools (`thing_get`, `thing_put`,
`thing_list`, each taking `id`), with a skillc.toml naming that server: for `check --servers`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ANNOTATED = Path(__file__).parent / "mcp_servers" / "annotated_server.py"
# A generous connect timeout: on a loaded machine starting a Python MCP server can take seconds.
SLOW_START = "\n[mcp]\nconnect_timeout = 90\n"


def annotated(name: str) -> str:
    """The config table of the annotated server under `name`."""
    return f'[mcp.servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(ANNOTATED))}]\n'


def things_studio(tmp_path: Path, contract: dict, servers: str) -> Path:
    """A one-skill studio (skill `thing.keep`, its toolNames the contract's tools) and a config
    with `servers`; returns the config path."""
    root = tmp_path / "studio"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "things.yaml").write_text("agent_name: Things\nstatus: ACTIVE\nskills: [thing.keep]\n")
    skill = root / "skills" / "thing.keep"
    skill.mkdir(parents=True)
    (skill / "skill.yaml").write_text("skill_name: Keep things\nsemantic_desc: Things.\nstatus: ACTIVE\n"
                                      f"tools: [{', '.join(contract['tools'])}]\n")
    (skill / "manual.md").write_text("Keep things.\n")
    (skill / "contract.jsonc").write_text(json.dumps(contract, indent=2))
    config = tmp_path / "skillc.toml"
    config.write_text(f'[studio]\nsource = "studio"\n{SLOW_START}{servers}', encoding="utf-8")
    return config
