"""The bundled example studio: well formed, valid by the spec's load rules (§16), and covering
every contract property of §2 and every expression prefix of §9, over tools the demo servers
really serve with matching argument names. Users copy these contracts: breaking one fails here.

Self-contained on purpose (its own comment stripper and rule checks), so it does not depend on
the compiler it helps to test; `test_compiler_accepts_the_studio` adds the compiler's verdict.
"""
from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

STUDIO = Path(__file__).resolve().parent.parent / "examples" / "studio"
SCENARIO_01 = "01-create-article-with-approval.yaml"  # in the shared public scenarios, when present

PLATFORM_FIELDS = {"userId", "memberId", "name", "organId", "organName", "organType", "deptPath"}
FROM_PREFIXES = ("inputs.", "outputs.", "shared.", "session.", "prior.", "platform.", "evidence.")
ENUMS = {
    "mode": {"REACT", "PLAN"}, "sideEffect": {"NONE", "WRITE"}, "when": {"ALWAYS", "UNIQUE"},
    "sources": {"USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK", "MODEL", "CONTRACT",
                "PLATFORM"},
    "action": {"ASK_USER", "CALL_TOOL", "FAIL"}, "op": {"EQ", "NE", "IN", "NOT_IN", "TRUTHY", "EXISTS"},
    "type": {"VALUE", "LIST"}, "share": {"TASK", "SESSION"},
}
AGENT_FIELDS = ("agent_code", "agent_name", "identity_desc", "mission_desc", "boundary_desc", "style_desc",
                "principle_desc", "status", "skills")

# Every property of the §2 tree (and every enum value where §2 has one) that the studio as a
# whole must use somewhere.
REQUIRED_FEATURES = {
    "mode=REACT", "mode=PLAN", "delegatable", "target",
    "inputs.from", "inputs.required", "inputs.provider",
    "outputs.type=VALUE", "outputs.type=LIST", "outputs.fields", "outputs.minItems", "outputs.hint",
    "outputs.required", "outputs.share=TASK", "outputs.share=SESSION", "outputs.entity.type",
    "outputs.entity.id", "outputs.entity.name", "outputs.entity.scalar", "outputs.sources",
    "outputs.constant", "outputs.sensitive",
    "tools.label", "tools.sideEffect=NONE", "tools.sideEffect=WRITE", "tools.confirm=true",
    "tools.confirm=false", "tools.idempotencyKey", "tools.args", "tools.success", "tools.error",
    "tools.extracts", "tools.verify",
    "args.from", "args.const", "args.when=ALWAYS", "args.when=UNIQUE", "args.sources", "args.required",
    "args.enum", "args.missing.action=ASK_USER", "args.missing.action=CALL_TOOL", "args.missing.action=FAIL",
    "args.missing.tool", "args.missing.message", "args.sensitive", "args.label", "args.fresh",
    "success.path", "success.value",
    "success.op=EQ", "success.op=NE", "success.op=IN", "success.op=NOT_IN", "success.op=TRUTHY",
    "success.op=EXISTS", "error.code", "error.message",
    "extracts.key", "extracts.path", "extracts.fields", "extracts.entity",
    "verify.tool", "verify.args.const", "verify.args.from=call",
}
# Every expression form of §9 (and §7's inputs.from), plus the §5.4 array template.
REQUIRED_PREFIXES = {
    "inputs.", "outputs.", "shared.", "session.", "prior.<type>.<attr>", "prior.<type:id>.<attr>",
    "prior.<type>", "platform.", "evidence.<key>.<path>", "call.", "array-template",
}

_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)


def strip_comments(text: str) -> str:
    """JSONC -> JSON: drop `//` and `/* */` comments outside strings (newlines kept for positions)."""
    def keep(m: re.Match[str]) -> str:
        tok = m.group(0)
        return tok if tok.startswith('"') else re.sub(r"[^\n]", " ", tok)
    return _TOKEN.sub(keep, text)


def _yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def load_agents() -> dict[str, dict[str, Any]]:
    """agent_code -> the agent's YAML record."""
    return {p.stem: _yaml(p) for p in sorted((STUDIO / "agents").glob("*.yaml"))}


def load_skills() -> dict[str, dict[str, Any]]:
    """skill_key -> skill.yaml record plus `manual` text and parsed `contract`."""
    skills = {}
    for folder in sorted(p for p in (STUDIO / "skills").iterdir() if p.is_dir()):
        record = _yaml(folder / "skill.yaml")
        record["manual"] = (folder / "manual.md").read_text(encoding="utf-8")
        record["contract"] = json.loads(strip_comments((folder / "contract.jsonc").read_text(encoding="utf-8")))
        skills[folder.name] = record
    return skills


AGENTS = load_agents()
SKILLS = load_skills()


def served_tools() -> dict[str, dict[str, Any]]:
    """tool name -> input schema, from both demo servers built in-process."""
    import tempfile

    from mcp.server.mcpserver import MCPServer

    from skillc.examples import cms_server, invoice_server

    async def listing(server: MCPServer) -> dict[str, dict[str, Any]]:
        return {t.name: t.input_schema for t in await server.list_tools()}

    with tempfile.TemporaryDirectory() as tmp:
        out = asyncio.run(listing(cms_server.build_server(f"{tmp}/cms.sqlite")))
        out.update(asyncio.run(listing(invoice_server.build_server(f"{tmp}/inv.sqlite"))))
    return out


def schema_has(schema: dict[str, Any], path: str) -> bool:
    """Whether a parameter path (`orderInfo.taxNo`, `lines[].goodsCode`) exists in a JSON schema."""
    defs = schema.get("$defs", {})

    def resolve(node: dict[str, Any]) -> list[dict[str, Any]]:
        if "$ref" in node:
            return resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "anyOf" in node:
            return [n for alt in node["anyOf"] for n in resolve(alt)]
        return [node]

    nodes = [schema]
    for segment in path.split("."):
        each = segment.endswith("[]")
        name = segment.removesuffix("[]")
        nodes = [n["properties"][name] for node in nodes for n in resolve(node) if name in n.get("properties", {})]
        if each:
            nodes = [n["items"] for node in nodes for n in resolve(node) if "items" in n]
        if not nodes:
            return False
    return True


def features(contract: dict[str, Any]) -> Iterator[str]:
    """Every §2 property (and enum value) one contract uses, as `section.property[=value]`."""
    for key in ("delegatable", "target"):
        if key in contract:
            yield key
    if "mode" in contract:
        yield f"mode={contract['mode']}"
    for spec in contract.get("inputs", {}).values():
        yield from (f"inputs.{k}" for k in spec)
    for spec in contract.get("outputs", {}).values():
        for key, value in spec.items():
            if key in ("type", "share"):
                yield f"outputs.{key}={value}"
            elif key == "entity":
                yield from (f"outputs.entity.{k}" for k in value)
            else:
                yield f"outputs.{key}"
    for tool in contract.get("tools", {}).values():
        for key, value in tool.items():
            if key == "sideEffect":
                yield f"tools.sideEffect={value}"
            elif key == "confirm":
                yield f"tools.confirm={json.dumps(value)}"
            else:
                yield f"tools.{key}"
        yield "tools.sideEffect=NONE" if tool.get("sideEffect", "NONE") == "NONE" else "tools.sideEffect=WRITE"
        for arg in tool.get("args", {}).values():
            for key, value in arg.items():
                if key == "when":
                    yield f"args.when={value}"
                elif key == "missing":
                    yield from (f"args.missing.{k}" for k in value if k != "action")
                    yield f"args.missing.action={value.get('action', 'ASK_USER')}"
                else:
                    yield f"args.{key}"
        if "success" in tool:
            yield from (f"success.{k}" for k in tool["success"] if k != "op")
            yield f"success.op={tool['success']['op']}"
        yield from (f"error.{k}" for k in tool.get("error", {}))
        for extract in tool.get("extracts", []):
            yield from (f"extracts.{k}" for k in extract)
        if "verify" in tool:
            yield "verify.tool"
            for varg in tool["verify"].get("args", {}).values():
                if "const" in varg:
                    yield "verify.args.const"
                if str(varg.get("from", "")).startswith("call."):
                    yield "verify.args.from=call"


def expression_forms(contract: dict[str, Any]) -> Iterator[str]:
    """Every §9 expression form one contract uses (args.from, inputs.from, verify.args.from)."""
    froms = [(None, s["from"]) for s in contract.get("inputs", {}).values() if "from" in s]
    for tool in contract.get("tools", {}).values():
        froms += [(param, a["from"]) for param, a in tool.get("args", {}).items() if "from" in a]
        froms += [(None, a["from"]) for a in tool.get("verify", {}).get("args", {}).values() if "from" in a]
    for param, expr in froms:
        if re.fullmatch(r"prior\.\w+:[^.]+\.\w+", expr):
            yield "prior.<type:id>.<attr>"
        elif re.fullmatch(r"prior\.\w+\.\w+", expr):
            yield "prior.<type>.<attr>"
        elif re.fullmatch(r"prior\.\w+", expr):
            yield "prior.<type>"
        elif re.fullmatch(r"evidence\.\w+\.[\w.]+", expr):
            yield "evidence.<key>.<path>"
        else:
            yield expr.split(".", 1)[0] + "."
        if param is not None and "[]" in param and "[]" in expr:
            yield "array-template"


def load_rule_violations(key: str, skill: dict[str, Any]) -> Iterator[str]:
    """The 13 load rules of §16 plus the author-side rules §16 leaves unchecked at load."""
    c, tool_names = skill["contract"], set(skill["tools"])
    tools = c.get("tools", {})
    writes = {name for name, t in tools.items() if t.get("sideEffect") == "WRITE"}
    for prop in ("mode",):
        if prop in c and c[prop] not in ENUMS[prop]:
            yield f"rule 13: mode {c[prop]}"
    if "target" in c and (c["target"] not in writes or c["target"] not in tool_names):
        yield "rule 3: target is not a WRITE tool of the skill"
    if c.get("delegatable") and writes:
        yield "rule 4: delegatable skill with a WRITE tool"
    for name in c.get("inputs", {}).values():
        if "from" in name and not name["from"]:
            yield "empty inputs.from"
    for out_key, out in c.get("outputs", {}).items():
        if out_key in PLATFORM_FIELDS:
            yield f"output {out_key} is a platform field name"
        if out.get("type") == "LIST" and not out.get("fields"):
            yield f"rule 12: LIST output {out_key} without fields"
        for prop in ("type", "share"):
            if prop in out and out[prop] not in ENUMS[prop]:
                yield f"rule 13: outputs.{out_key}.{prop}"
        if not set(out.get("sources", [])) <= ENUMS["sources"]:
            yield f"rule 13: outputs.{out_key}.sources"
        if "MODEL" in out.get("sources", []):
            yield f"outputs.{out_key}: MODEL is never an allowed output source"
    for tool_name, tool in tools.items():
        where = f"{key}/{tool_name}"
        if not tool_name:
            yield "rule 5: empty tool key"
        if tool_name not in tool_names:
            yield f"{where}: configured but not in toolNames"
        if tool.get("sideEffect", "NONE") not in ENUMS["sideEffect"]:
            yield f"rule 13: {where}.sideEffect"
        if tool_name in writes and "success" not in tool:
            yield f"rule 6: {where} WRITE without success"
        if tool.get("confirm") is True and tool_name not in writes:
            yield f"rule 7: {where} confirm:true on a read tool"
        if "success" in tool and tool["success"].get("op") not in ENUMS["op"]:
            yield f"rule 13: {where}.success.op"
        for extract in tool.get("extracts", []):
            if not extract.get("path"):
                yield f"rule 11: {where} extract without path"
        if "verify" in tool:
            vtool = tool["verify"].get("tool")
            if not vtool or vtool not in tools or tools[vtool].get("sideEffect", "NONE") != "NONE":
                yield f"rule 8: {where} verify.tool"
            if vtool not in tool_names:
                yield f"{where}: verify.tool not in toolNames"
            for vname, varg in tool["verify"].get("args", {}).items():
                if "from" in varg and not varg["from"].startswith("call."):
                    yield f"{where}: verify.args.{vname} is neither const nor call.*"
        for param, arg in tool.get("args", {}).items():
            at = f"{where}.args.{param}"
            if "from" in arg and "const" in arg:
                yield f"rule 9: {at} has from and const"
            expr = arg.get("from")
            if expr is not None and not expr.startswith(FROM_PREFIXES):
                yield f"rule 2: {at} prefix {expr}"
            if expr and expr.startswith("platform.") and expr.split(".", 1)[1] not in PLATFORM_FIELDS:
                yield f"rule 10: {at} {expr}"
            if param.rsplit(".", 1)[-1] in PLATFORM_FIELDS and not str(expr).startswith("platform."):
                yield f"lint: {at} is named like a platform field without from: platform.*"
            for prop in ("when",):
                if prop in arg and arg[prop] not in ENUMS[prop]:
                    yield f"rule 13: {at}.{prop}"
            if not set(arg.get("sources", [])) <= ENUMS["sources"]:
                yield f"rule 13: {at}.sources"
            missing = arg.get("missing", {})
            if missing.get("action", "ASK_USER") not in ENUMS["action"]:
                yield f"rule 13: {at}.missing.action"
            if missing.get("action") == "CALL_TOOL" and (missing.get("tool") not in tool_names
                                                         or missing.get("tool") == tool_name):
                yield f"{at}: missing.tool must be another tool of toolNames"
            has_source = "from" in arg or "const" in arg or arg.get("sources") or arg.get("required") is False
            if not has_source:
                yield f"{at}: no from/const/sources: every model value would be refused"


def test_studio_size_and_records() -> None:
    """At least 3 agents and 10 skills, every record complete and cross-referenced."""
    assert len(AGENTS) >= 3 and len(SKILLS) >= 10
    bound: set[str] = set()
    for code, agent in AGENTS.items():
        assert all(agent.get(f) for f in AGENT_FIELDS), code
        assert agent["agent_code"] == code and agent["status"] == "ACTIVE"
        assert set(agent["skills"]) <= set(SKILLS), code
        bound |= set(agent["skills"])
    assert bound == set(SKILLS), "every example skill belongs to an agent"
    for key, skill in SKILLS.items():
        assert skill["skill_key"] == key and skill["status"] == "ACTIVE"
        assert skill["skill_name"] and skill["semantic_desc"] and skill["manual"].strip()
        assert skill["tools"] and all(not t.startswith("builtin_") for t in skill["tools"])
        assert key == key.lower() and "." in key


def test_every_contract_obeys_the_load_rules() -> None:
    """§16 rules 1-13 and the author-side rules (targets, missing/verify tools in toolNames)."""
    problems = [p for key, skill in SKILLS.items() for p in load_rule_violations(key, skill)]
    assert problems == []


def test_providers_and_delegation() -> None:
    """inputs.provider names another skill of the same agent; a delegatable read-only skill exists."""
    providers = 0
    for agent in AGENTS.values():
        for key in agent["skills"]:
            for spec in SKILLS[key]["contract"].get("inputs", {}).values():
                if "provider" in spec:
                    providers += 1
                    assert spec["provider"] != key and spec["provider"] in agent["skills"], key
    assert providers >= 1
    delegatable = [k for k, s in SKILLS.items() if s["contract"].get("delegatable")]
    assert delegatable
    for key in delegatable:
        tools = SKILLS[key]["contract"]["tools"].values()
        assert all(t.get("sideEffect", "NONE") == "NONE" for t in tools), key


def test_contracts_cover_every_property_of_section_2() -> None:
    """Together the contracts use every property and enum value of the §2 tree."""
    seen = {f for skill in SKILLS.values() for f in features(skill["contract"])}
    assert REQUIRED_FEATURES - seen == set()


def test_contracts_use_every_expression_prefix() -> None:
    """Every §9 prefix, both prior forms, evidence with a path, call.*, and an array template."""
    seen = {f for skill in SKILLS.values() for f in expression_forms(skill["contract"])}
    assert REQUIRED_PREFIXES - seen == set()
    spec_paths = {p for s in SKILLS.values() for t in s["contract"].get("tools", {}).values() for p in t.get("args", {})}
    assert {"orderInfo.taxNo", "lines[].goodsCode"} <= spec_paths, "the spec's own parameter paths"


def test_every_tool_is_served_with_matching_arguments() -> None:
    """toolNames exist on the demo servers; every contracted argument path exists in the schema."""
    served = served_tools()
    problems = []
    for key, skill in SKILLS.items():
        problems += [f"{key}: {t} not served" for t in skill["tools"] if t not in served]
        tools = skill["contract"].get("tools", {})
        for name, tool in tools.items():
            schema = served.get(name, {})
            paths = [*tool.get("args", {}), *tool.get("idempotencyKey", [])]
            if "verify" in tool:
                vschema = served.get(tool["verify"]["tool"], {})
                for vname, varg in tool["verify"].get("args", {}).items():
                    problems += [f"{key}: verify arg {vname}"] if not schema_has(vschema, vname) else []
                    if "from" in varg:
                        paths.append(varg["from"].removeprefix("call."))
            problems += [f"{key}: {name}.{p} not in the tool's schema" for p in paths if not schema_has(schema, p)]
    assert problems == []


def test_editor_agent_plays_public_scenario_01(conformance: Path) -> None:
    """The editor agent is exactly scenario 01's studio (the demo replays that scenario)."""
    assert AGENTS["editor"]["skills"] == ["cms.article.lifecycle"]
    scenario = _yaml(conformance / "public" / SCENARIO_01)["studio"]
    assert AGENTS["editor"] == scenario["agents"][0]
    want = scenario["skills"][0]
    have = SKILLS["cms.article.lifecycle"]
    assert have["contract"] == json.loads(strip_comments(want["contract"]))
    assert have["manual"].strip() == want["skill_manual"].strip()
    assert (have["skill_name"], have["semantic_desc"], have["tools"]) == (
        want["skill_name"], want["semantic_desc"], want["tools"])


def test_comment_stripper() -> None:
    """Comments go, strings that look like comments stay."""
    text = '{ // a\n "u": "http://x/*y*/", /* b\n c */ "v": 1 }'
    assert json.loads(strip_comments(text)) == {"u": "http://x/*y*/", "v": 1}


def test_compiler_accepts_the_studio() -> None:
    """The project's own front end loads every example skill with no error or warning."""
    pytest.importorskip("lark")
    sources = pytest.importorskip("skillc.compiler.sources")
    frontend = pytest.importorskip("skillc.compiler.frontend")
    result = frontend.check_studio(sources.load_studio(str(STUDIO)))
    assert result.rejected == {}
    bad = [f"{d.skill}: {d.code} {d.message}" for d in result.diagnostics if d.severity in ("error", "warning")]
    assert bad == []
