"""The runtime deploys without the compiler: runtime/ never imports it or Lark, nor the CLI, in any
form (a deferred import, an `importlib` string: compile-on-load is a callable the CLI passes in);
run-time commands work with Lark blocked, and commands that do not talk to MCP do not import the
mcp SDK."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from helpers.import_graph import all_imports, modules

ROOT = Path(__file__).resolve().parents[1]
IMPORT = re.compile(r"^\s*(from|import)\s+(skillc\.compiler|lark)\b", re.M)
NAMES_COMPILER = re.compile(r"^(skillc\.compiler|lark)(\.|$)")


def test_runtime_sources_never_import_the_compiler_or_lark() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "runtime").rglob("*.py") if IMPORT.search(p.read_text())]
    assert offenders == []


def _outside_the_runtime(target: str) -> bool:
    """A `skillc` module that is not the runtime's (the compiler, the CLI) or Lark."""
    if NAMES_COMPILER.match(target):
        return True
    return (target == "skillc" or target.startswith("skillc.")) and not target.startswith(("skillc.runtime", "skillc.generated"))


def test_runtime_never_names_the_compiler_or_the_cli_in_any_import() -> None:
    offenders = sorted(f"{imp.source}:{imp.line} {imp.how} import of {imp.target}"
                       for imp in all_imports(ROOT / "runtime", "skillc.runtime") if _outside_the_runtime(imp.target))
    assert offenders == []


def test_runtime_never_spells_a_compiler_module_as_a_string() -> None:
    offenders = []
    for mod, path in modules(ROOT / "runtime", "skillc.runtime").items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAMES_COMPILER.match(node.value):
                offenders.append(f"{mod}:{node.lineno} {node.value!r}")
    assert offenders == []


def test_generated_modules_import_only_the_runtime_support() -> None:
    for path in (ROOT / "generated").rglob("*.py"):
        for line in path.read_text().splitlines():
            m = re.match(r"^\s*(?:from|import)\s+([\w.]+)", line)
            if m:
                assert m.group(1).split(".")[0] != "lark", path
                if m.group(1).startswith("skillc"):
                    assert m.group(1).startswith("skillc.runtime"), (path, line)


BLOCK_LARK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "lark" or name.startswith("lark.") or name.startswith("skillc.compiler"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
"""


def test_a_compiled_studio_runs_with_lark_blocked(tmp_path: Path) -> None:
    from skillc.compiler.build import compile_studio

    compile_studio(ROOT / "examples" / "studio", tmp_path / "compiled")
    script = BLOCK_LARK + f"""
import asyncio
from skillc.runtime.compiled.loader import load_compiled
from skillc.runtime.session import Runtime
from skillc.runtime.store import Store
from skillc.runtime.outside.config import Settings
from skillc.runtime.model.scripted import ScriptedModel
from skillc.main import build_parser
build_parser().parse_args(["chat", "--help"]) if False else None
studio = load_compiled({str(tmp_path / 'compiled')!r})
class Gateway:
    catalog = {{}}
    on_invoked = None
    async def call(self, tool, args, timeout=None):
        raise AssertionError("no tool call expected")
model = ScriptedModel()
rt = Runtime(studio, Gateway(), model, Store({str(tmp_path / 's.sqlite')!r}), Settings())
async def main():
    s = await rt.open_session({{"userId": 7}}, session_id="x")
    model.load_turn([{{"route": "editor"}}, {{"call": {{"tool": "builtin_node_fail", "args": {{"reason": "just a test"}}}}}}])
    reply = await s.send("hello")
    assert "just a test" in reply.text, reply
    assert "lark" not in sys.modules and not any(m.startswith("skillc.compiler") for m in sys.modules)
asyncio.run(main())
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_chat_help_works_with_lark_blocked() -> None:
    script = BLOCK_LARK + "from skillc.main import run\nimport sys\ntry:\n    run(['chat', '--help'])\nexcept SystemExit as e:\n    sys.exit(e.code)\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--session" in done.stdout, done.stderr


def test_check_does_not_import_the_mcp_sdk() -> None:
    script = ("import sys\nfrom skillc.main import run\nrun(['check', 'examples/studio'])\n"
              "assert 'mcp' not in sys.modules, 'check imported mcp'\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.strip().endswith("ok"), done.stdout + done.stderr
