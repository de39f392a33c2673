"""Prompt snapshots (syrupy): the node system prompt and the tool list a node of each example skill
is offered, so that every prompt or catalog change shows up in review.

The example studio is compiled into a temp folder and loaded as a deployment would; the session
runs over a fake gateway whose catalog lists each skill's toolNames (schemas are the servers'
business, not the prompt's: they are kept minimal here so the snapshot tracks the runtime only).
Regenerate with `python -m pytest tests/runtime/test_prompt_snapshots.py --snapshot-update`.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.node_harness import Harness

from skillc.runtime.loop.completion import resolve_target
from skillc.runtime.loop.prompting import node_system_prompt, tool_specs
from skillc.runtime.seam.state import NodeState, TaskState

ROOT = Path(__file__).resolve().parents[2]
STUDIO = ROOT / "examples" / "studio"
SKILLS = sorted(p.name for p in (STUDIO / "skills").iterdir() if (p / "contract.jsonc").exists())


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from skillc.compiler.build import compile_studio
    from skillc.runtime.compiled.loader import load_compiled

    out = tmp_path_factory.mktemp("studio") / "compiled"
    compile_studio(STUDIO, out)
    return load_compiled(out)


def test_every_example_skill_is_loaded(compiled: Any) -> None:
    assert SKILLS and sorted(compiled.skills) == SKILLS
    assert not getattr(compiled, "rejected", {})


def render_node(compiled: Any, key: str, tmp_path: Path) -> str:
    """The system prompt and the offered tools of a fresh main node of skill `key`."""
    module = compiled.skills[key]
    tools = {name: {"responses": [{}]} for s in compiled.skills.values() for name in s.SKILL.tool_names}
    h = Harness(tmp_path, {}, tools, compiled=compiled)
    agent = next(code for code, a in sorted(compiled.agents.items()) if key in a.skills)

    async def build() -> str:
        s = (await h.session()).env
        s.task = TaskState(id="t1", session=s.id, agent=agent, message="(the user's request)")
        node = NodeState(id="n1", task="t1", skill=key, target=resolve_target(module, None))
        s.task.nodes[node.id] = node
        s.task.order.append(node.id)
        node.input_sources = module.bind_inputs(node.inputs, _Empty()) or {}
        specs = [{"name": t.name, "description": t.description, "parameters": t.parameters}
                 for t in tool_specs(s, node)]
        return node_system_prompt(s, node) + "\n---- tools ----\n" + json.dumps(specs, indent=1, ensure_ascii=False)

    return asyncio.run(build())


class _Empty:
    """A binding context with nothing in it: every input is missing."""

    platform: dict[str, Any] = {}
    inputs: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    session: dict[str, Any] = {}

    def prior(self, *args: Any) -> Any:
        from skillc.runtime import support as rt

        return rt.MISSING

    def upstream_output(self, parts: tuple) -> Any:
        from skillc.runtime import support as rt

        return rt.MISSING


@pytest.mark.parametrize("key", SKILLS)
def test_node_prompt_and_tools(key: str, compiled: Any, tmp_path: Path, snapshot: Any) -> None:
    assert render_node(compiled, key, tmp_path) == snapshot


def test_a_node_prompt_is_rendered_once_for_what_it_shows_and_again_when_that_changes(
        compiled: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`prompting._NODE_PROMPTS`: the same node of the same skill renders once across sessions; a
    different input value, objective, target or offered builtin, another agent's descriptions or a
    reloaded skill module renders again, and each gives the prompt a fresh render gives."""
    from skillc.runtime.loop import prompting

    renders: list[str] = []
    real = prompting.render
    monkeypatch.setattr(prompting, "render", lambda name, **v: renders.append(name) or real(name, **v))
    prompting._NODE_PROMPTS.clear()
    key = next(k for k in SKILLS if compiled.skills[k].INPUTS)
    first = render_node(compiled, key, tmp_path / "a")
    assert render_node(compiled, key, tmp_path / "b") == first and renders == ["node_system.j2"]
    module = compiled.skills[key]
    h = Harness(tmp_path / "c", {}, {}, compiled=compiled)
    agent = next(code for code, a in sorted(compiled.agents.items()) if key in a.skills)

    async def prompt(**node_fields: Any) -> str:
        s = (await h.session()).env
        s.task = TaskState(id="t1", session=s.id, agent=agent, message="(the user's request)")
        node = NodeState(id="n1", task="t1", skill=key, target=resolve_target(module, None), **node_fields)
        s.task.nodes[node.id] = node
        s.task.order.append(node.id)
        return node_system_prompt(s, node)

    name = next(iter(module.INPUTS))
    variants = [prompt(inputs={name: "A-1"}), prompt(inputs={name: "B-2"}), prompt(objective="another goal")]
    texts = [asyncio.run(v) for v in variants]
    assert len(set(texts)) == 3 and "A-1" in texts[0] and "B-2" in texts[1] and "another goal" in texts[2]
    assert len(renders) == 4
    prompting._NODE_PROMPTS.clear()  # a fresh render of each gives the same text
    assert asyncio.run(prompt(inputs={name: "B-2"})) == texts[1]
    monkeypatch.setitem(compiled.skills, key, type(module)(module.__name__))  # a reloaded module: a new object
    for attr in dir(module):
        if not attr.startswith("__"):
            setattr(compiled.skills[key], attr, getattr(module, attr))
    before = len(renders)
    asyncio.run(prompt(inputs={name: "B-2"}))
    assert len(renders) == before + 1
