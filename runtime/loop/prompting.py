"""Prompts (Jinja2 templates under runtime/prompts/) and the tool catalog the model sees (§1.3, §4)."""
from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

import jinja2

from skillc.runtime.loop import builtins
from skillc.runtime.compiled.skillmeta import ArgMeta
from skillc.runtime.model.base import ToolSpec
from skillc.runtime.seam.state import NodeState
from skillc.runtime.words.vocab import NodeKind, Source
from skillc.runtime.seam.seams import active_task

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("skillc.runtime", "prompts"),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def render(name: str, **values: Any) -> str:
    """Render one prompt template."""
    return _env().get_template(name).render(**values)


# Prompts whose only per-turn value is the user's message (the intent catalog): rendered once per
# version of what the studio shows in them, the message put in afterwards. Bounded: studios change.
_FOR_MESSAGE: dict[tuple[str, Any], tuple[tuple[Any, ...], str]] = {}
_MESSAGE = "\x00skillc:message\x00"


def render_for_message(name: str, key: Any, sources: tuple[Any, ...], message: str,
                       values: Callable[[], dict[str, Any]]) -> str:
    """Render `name` with `message`; the rest (`values()`, worked out only on a miss) is rendered
    once per `key` and the very objects it comes from (`sources`: a reloaded skill is a new module
    object, so it renders again; identity, not id(), so a reused id never hits)."""
    hit = _FOR_MESSAGE.get((name, key))
    if hit is None or len(hit[0]) != len(sources) or any(a is not b for a, b in zip(hit[0], sources)):
        if len(_FOR_MESSAGE) >= 256:
            _FOR_MESSAGE.clear()
        hit = _FOR_MESSAGE[(name, key)] = (sources, render(name, message=_MESSAGE, **values()))
    return hit[1].replace(_MESSAGE, message)


def arg_rule(a: ArgMeta) -> str:
    """One line on where an argument's value may come from."""
    if a.bound:
        return "filled by the runtime" + (" (platform identity)" if a.platform else "")
    if not a.sources:
        return "bound by the runtime only; any value you give is refused"
    if Source.MODEL in a.sources:
        return "you may fill it"
    names = {"USER": "the user's words", Source.EVIDENCE: "a tool result", Source.NODE_OUTPUT: "the node's inputs/outputs",
             Source.SHARED: "shared task values", Source.SESSION: "session values", Source.PRIOR_TASK: "an entity of an earlier task"}
    return "must come from " + " or ".join(names.get(s, s) for s in a.sources if s in names)


# Node prompts by everything they show (the skill module by identity, as `_FOR_MESSAGE`): the same
# node of the same skill for the same agent renders once, not once per session. Bounded: emptied when full.
_NODE_PROMPTS: dict[tuple[Any, ...], tuple[Any, str]] = {}


def node_system_prompt(env: SessionEnv, node: NodeState) -> str:
    """The node prompt: agent descriptions, manual, catalog, inputs, outputs."""
    module = env.skill_module(node.skill)
    agent = env.agent_profile()
    offered = tuple(builtins.offered(env, node))
    values = tuple((i.name, i.required, json.dumps(node.inputs.get(i.name), ensure_ascii=False, default=str)
                    if i.name in node.inputs else None) for i in module.INPUTS.values())
    key = (node.skill, tuple(agent.values()), node.objective, node.target, values, offered)
    hit = _NODE_PROMPTS.get(key)
    if hit is not None and hit[0] is module:
        return hit[1]
    if len(_NODE_PROMPTS) >= 256:
        _NODE_PROMPTS.clear()
    text = _node_system_prompt(env, node, module, agent, list(offered))
    _NODE_PROMPTS[key] = (module, text)
    return text


def _node_system_prompt(env: SessionEnv, node: NodeState, module: Any, agent: dict[str, Any], offered: list[str]) -> str:
    tools = []
    for name in module.SKILL.tool_names:
        meta = module.TOOLS.get(name)
        if meta is None:
            continue
        tools.append({"name": name, "label": meta.label, "side_effect": meta.side_effect, "confirm": meta.confirm,
                      "args": [{"path": a.path, "label": a.label, "rule": arg_rule(a)} for a in meta.args.values()]})
    inputs = [{"name": i.name, "required": i.required, "missing": i.name not in node.inputs,
               "value": json.dumps(node.inputs.get(i.name), ensure_ascii=False, default=str)}
              for i in module.INPUTS.values()]
    outputs = [{"name": o.name, "type": o.type, "fields": list(o.fields), "min_items": o.min_items,
                "required": o.required, "sources": list(o.sources), "hint": o.hint} for o in module.OUTPUTS.values()]
    skill = {"key": module.SKILL.key, "name": module.SKILL.name, "manual": module.SKILL.manual}
    # §1.3: the catalog lists the builtins too (those offered now; approval joins once a write is gated)
    node_builtins = [{"name": n, "description": builtins.SPECS[n].description}
                     for n in offered if not n.startswith("builtin_env_")]
    env_builtins = [n for n in offered if n.startswith("builtin_env_")]
    return render("node_system.j2", agent=agent, skill=skill, node=node, tools=tools,
                  inputs=inputs, outputs=outputs, builtins=node_builtins, env_builtins=env_builtins)


def step_messages(env: SessionEnv, node: NodeState) -> list[dict[str, Any]]:
    """The first messages of a node's conversation."""
    # a delegate works toward its delegator's objective; any other node toward the user's message
    # (a provider's title is in its system prompt)
    goal = (node.objective if node.kind == NodeKind.DELEGATE else "") or active_task(env).message
    return [{"role": "system", "content": node_system_prompt(env, node)}, {"role": "user", "content": goal}]


def tool_specs(env: SessionEnv, node: NodeState) -> list[ToolSpec]:
    """Builtins offered now, then the skill's business tools with their MCP schemas."""
    specs = [builtins.SPECS[n] for n in builtins.offered(env, node)]
    module = env.skill_module(node.skill)
    for name in module.SKILL.tool_names:
        info = env.catalog.get(name)
        meta = module.TOOLS.get(name)
        desc = (meta.label if meta and meta.label else None) or (info.title if info and info.title else None) or \
            (info.description if info else "") or name
        schema = info.input_schema if info and info.input_schema else {"type": "object"}
        specs.append(ToolSpec(name, desc, schema))
    return specs
