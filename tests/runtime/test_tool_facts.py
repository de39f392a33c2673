"""The facts the chain reads of a tool (which arguments the trace masks, which are bound and so
exempt from the schema's required check, the rules' names) are stated by the generated module on
its ToolMeta, not worked out at run time into a process-wide cache: a ToolMeta lives exactly as
long as the studio that made it (issue 29, item 4)."""
from __future__ import annotations

import dataclasses
import gc
import json
import weakref
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from skillc.runtime.call.chain import Call, step_arg_policy
from skillc.runtime.mcp.result import ToolInfo
from skillc.runtime.compiled.skillmeta import ArgMeta, RuleMeta, ToolMeta
from helpers.by_path import load_module

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = {"tools": {"pay": {
    "args": {"card": {"sources": ["USER"], "sensitive": True},
             "owner": {"from": "platform.userId"},
             "note": {"sources": ["MODEL"], "required": False},
             "payer.pin": {"sources": ["USER"], "sensitive": True, "required": False}},
    "rules": [{"name": "small", "expr": "args.note != 'x'", "message": "no x"},
              {"name": "other", "expr": "true", "message": "never"}]}}}


def _compiled(tmp: Path) -> Any:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.compiled.loader import load_compiled

    studio = studio_from_mapping({
        "agents": [{"agent_code": "a", "agent_name": "A", "identity_desc": "i", "mission_desc": "m",
                    "boundary_desc": "b", "style_desc": "s", "principle_desc": "p", "status": "ACTIVE",
                    "skills": ["u.pay"]}],
        "skills": [{"skill_key": "u.pay", "skill_name": "S", "semantic_desc": "d", "skill_manual": "m",
                    "status": "ACTIVE", "tools": ["pay"], "contract": json.dumps(CONTRACT)}],
    }, origin="test")
    compile_studio(studio, tmp)
    compiled = load_compiled(tmp)
    assert "u.pay" in compiled.skills, compiled.rejected
    return compiled


def test_the_generated_module_states_the_tool_facts(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path)
    meta = compiled.skills["u.pay"].TOOLS["pay"]
    assert meta.sensitive_paths == ((("k", "card"),), (("k", "payer"), ("k", "pin")))
    assert meta.bound_names == ("owner",)
    assert meta.rule_names == ("small", "other")
    text = next(tmp_path.glob("skills/*.py")).read_text(encoding="utf-8")
    assert "sensitive_paths=" in text and "bound_names=" in text and "rule_names=" in text


def _derived(meta: ToolMeta) -> ToolMeta:
    """The record with the stated facts left out: what a hand-built record gets."""
    return dataclasses.replace(meta, sensitive_paths=(), bound_names=(), rule_names=())


def _modules() -> list[Path]:
    return sorted((ROOT / "generated" / "skills").glob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.stem)
def test_stated_facts_agree_with_the_records(path: Path) -> None:
    """What the compiler states is what the ArgMeta and RuleMeta records say (the committed studio)."""
    module = load_module(path, f"facts_{path.stem.replace('.', '_')}")
    for meta in module.TOOLS.values():
        derived = _derived(meta)
        assert (meta.sensitive_paths, meta.bound_names, meta.rule_names) == (
            derived.sensitive_paths, derived.bound_names, derived.rule_names)


def test_a_record_that_states_no_facts_derives_them() -> None:
    """A module generated before the facts existed (or a record built by hand) still masks its
    sensitive arguments and exempts its bound ones."""
    meta = ToolMeta(name="t", args={"pin": ArgMeta(path="pin", parts=(("k", "pin"),), sensitive=True),
                                    "org": ArgMeta(path="org", parts=(("k", "org"),), bound=True)},
                    rules=(RuleMeta(name="r", check=lambda s: True, message="m"),))
    assert (meta.sensitive_paths, meta.bound_names, meta.rule_names) == (
        ((("k", "pin"),),), ("org",), ("r",))


def test_the_chain_keeps_no_tool_alive() -> None:
    """A studio reloaded drops its ToolMeta records: the chain holds none of them (it kept every
    one it had seen, by id(), in a module-level dict)."""
    meta = ToolMeta(name="t", args={"pin": ArgMeta(path="pin", parts=(("k", "pin"),), sensitive=True),
                                    "org": ArgMeta(path="org", parts=(("k", "org"),), bound=True)})
    schema = {"type": "object", "required": ["org", "pin"]}
    env = SimpleNamespace(catalog={"t": ToolInfo("t", None, None, schema, "test")})
    call = Call(env=env, node=None, tool="t", raw={"pin": "1234"}, meta=meta)  # type: ignore[arg-type]
    assert step_arg_policy(call) is None  # org is bound: not missing
    assert call.trace_args() == {"pin": "***"}
    gone = weakref.ref(meta)
    schema_gone = weakref.ref(env.catalog["t"])
    del meta, call, env
    gc.collect()
    assert gone() is None and schema_gone() is None
