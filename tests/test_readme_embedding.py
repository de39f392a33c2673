"""The README's embedding example runs as written: compiled example studio, the example CMS
server over stdio, a model stub on loopback, a SQLite store, all named by a skillc.toml."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from skillc.model_stub import FakeOpenAIServer

README = Path(__file__).resolve().parents[1] / "README.md"


def snippet() -> str:
    """The python block of the README section "Embedding the runtime"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Embedding the runtime", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found, "no python block in the README's embedding section"
    return found.group(1)


def test_readme_embedding_snippet_runs(tmp_path: Path) -> None:
    from skillc.compiler.build import compile_studio
    from skillc.demo import studio_dir

    compile_studio(studio_dir(), tmp_path / "compiled")
    script = [{"answer": {"agent": "editor"}},
              {"tool_calls": [{"name": "cms_space_list", "arguments": {}}]},
              {"tool_calls": [{"name": "cms_article_create", "arguments": {"title": "Spring launch", "spaceId": 3}}]},
              {"tool_calls": [{"name": "builtin_node_approval",
                               "arguments": {"summary": "Create the article", "toolName": "cms_article_create"}}]}]
    with FakeOpenAIServer(script) as stub:
        (tmp_path / "skillc.toml").write_text(f"""
[store]
path = "store.sqlite"
[model]
base_url = "{stub.url}"
model = "stub"
[mcp]
connect_timeout = 120  # a loaded machine can take seconds to start a stdio server
[mcp.servers.cms]
command = {json.dumps(sys.executable)}
args = ["-m", "skillc.examples.cms_server"]
env = {{ CMS_DB = "{{tmp}}/cms.sqlite" }}
""", encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", snippet()], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "mcp.invoked cms_space_list" in out, out  # a real MCP server was reached
    assert "tool.call cms_article_create" in out  # the write, stopped by the gate
    assert "'kind': 'APPROVAL'" in out  # session.pending(): the session waits on the user
    assert "node.suspended" in out and "error" not in out
    assert (tmp_path / "store.sqlite").exists()
