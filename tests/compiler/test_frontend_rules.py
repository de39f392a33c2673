"""Every load rule (§16), error and warning of the front end: a failing and a passing contract each,
asserting the code, the severity and the line/column the diagnostic points at."""
from __future__ import annotations

import pytest

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic
from skillc.compiler.frontend import check_skill

TOOLS = ["art_create", "art_get", "space_list"]

BASE = """{
  "target": "art_create",
  "tools": {
    "art_create": {
      "sideEffect": "WRITE",
      "idempotencyKey": ["spaceId", "title"],
      "args": {
        "spaceId": {"from": "evidence.spaces.0.id"},
        "title": {"sources": ["USER"], "missing": {"action": "CALL_TOOL", "tool": "space_list"}},
        "operatorId": {"from": "platform.userId"}
      },
      "success": {"path": "code", "op": "EQ", "value": 200},
      "extracts": [{"key": "article", "path": "data", "entity": {"type": "article"}}],
      "verify": {"tool": "art_get", "args": {"title": {"from": "call.title"}}}
    },
    "art_get": {"success": {"path": "data", "op": "EXISTS"}},
    "space_list": {"extracts": [{"key": "spaces", "path": "data.records"}]}
  },
  "inputs": {"spaceName": {"from": "spaceName", "provider": "cms.space.lookup"}},
  "outputs": {"articleId": {"share": "TASK"}}
}"""


def run(text: str, tools: list[str] | None = None, key: str = "cms.article.create") -> tuple[ir.Contract | None, list[Diagnostic]]:
    profile = ir.SkillProfile(skill_key=key, skill_contract=text, tool_names=TOOLS if tools is None else tools,
                              source=ir.SourceRef(origin="t", contract_file="c.jsonc"))
    return check_skill(profile)


def at(text: str, needle: str) -> tuple[int, int]:
    """1-based line/column of the first occurrence of needle."""
    pos = text.index(needle)
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def test_base_contract_is_clean() -> None:
    contract, diags = run(BASE)
    assert contract is not None
    assert diags == []


# (code, severity, bad contract, needle locating the expected line/column in it, tools override)
CASES: list[tuple[str, str, str, str, list[str] | None]] = [
    # §16 rule 1: empty or not JSON
    ("SC101", "error", "", "", None),
    ("SC101", "error", edit('"target": "art_create",', '"target": "art_create"'), '"tools"', None),
    ("SC101", "error", "[]", "[]", None),
    # rule 2: prefixes of args.*.from
    ("SC102", "error", edit('"evidence.spaces.0.id"', '"space.0.id"'), "space.0.id", None),
    ("SC102", "error", edit('"evidence.spaces.0.id"', '"spaceId"'), "spaceId\"}", None),
    # rule 3: target is a WRITE tool of tools
    ("SC103", "error", edit('"target": "art_create"', '"target": "space_list"'), '"space_list"', None),
    ("SC103", "error", edit('"target": "art_create"', '"target": "art_delete"'), '"art_delete"', None),
    # rule 4: delegatable with a WRITE tool
    ("SC104", "error", edit("{\n", '{\n  "delegatable": true,\n'), "true", None),
    # rule 5: empty tools key
    ("SC105", "error", edit('"art_get": {', '"": {}, "art_get": {'), '""', None),
    # rule 6: WRITE without success
    ("SC106", "error", edit('"success": {"path": "code", "op": "EQ", "value": 200},', ""), '"art_create": {', None),
    # rule 7: confirm true on a read tool
    ("SC107", "error", edit('"art_get": {', '"art_get": {"confirm": true, '), "true", None),
    # rule 8: verify.tool present, in tools, NONE
    ("SC108", "error", edit('"tool": "art_get"', '"tool": "art_gone"'), '"art_gone"', None),
    ("SC108", "error", edit('"tool": "art_get"', '"tool": "art_create"'), '"art_create", "args"', None),
    ("SC108", "error", edit('"tool": "art_get", ', ""), '"verify"', None),
    # rule 9: from and const together
    ("SC109", "error", edit('{"from": "evidence.spaces.0.id"}', '{"from": "evidence.spaces.0.id", "const": 3}'), '"spaceId": {', None),
    # rule 10: platform fields
    ("SC110", "error", edit("platform.userId", "platform.passportId"), "passportId", None),
    ("SC110", "error", edit("platform.userId", "platform.uid"), "uid", None),
    # rule 11: extracts[].path non-empty
    ("SC111", "error", edit('"path": "data.records"', '"path": ""'), '{"key": "spaces"', None),
    # rule 12: LIST outputs need fields
    ("SC112", "error", edit('{"share": "TASK"}', '{"type": "LIST", "share": "TASK"}'), '"LIST"', None),
    # rule 13: enums, case-sensitive
    ("SC113", "error", edit('"sideEffect": "WRITE"', '"sideEffect": "write"'), '"write"', None),
    ("SC113", "error", edit('"op": "EXISTS"', '"op": "exists"'), '"exists"', None),
    ("SC113", "error", edit('"sources": ["USER"]', '"sources": ["USER", "user"]'), '"user"', None),
    # shape and expression errors outside the 13 rules
    ("SC114", "error", edit("{\n", '{\n  "delegatable": "yes",\n'), '"yes"', None),
    ("SC115", "error", edit('"title": {', '"title[0]": {'), "[0]", None),
    ("SC115", "error", edit('"evidence.spaces.0.id"', '"shared."'), '"},\n        "title"', None),  # where the name was expected
    ("SC116", "error", edit('"evidence.spaces.0.id"', '"call.spaceId"'), "call.spaceId", None),
    # docs/interpretations.md: What drops a skill: these load (warnings) and are enforced where they act
    ("SC117", "warning", edit('"articleId": {', '"organId": {'), '"organId"', None),
    ("SC118", "warning", edit('"call.title"', '"shared.title"'), '"shared.title"', None),
    ("SC118", "warning", edit('"call.title"', '"title"'), 'title"}}}', None),
    ("SC118", "warning", edit('{"title": {"from": "call.title"}}', '{"title": {}}'), '"title": {}', None),
    # §19 parse rules
    ("SC001", "note", edit('"art_get": {', '"art_get": {"lable": "x", '), '"lable"', None),
    # a misspelled rule-carrying property: the rule is silently lost, so a warning
    ("SC004", "warning", edit('"art_get": {', '"art_get": {"sideeffect": "NONE", '), '"sideeffect"', None),
    ("SC004", "warning", edit('"sideEffect": "WRITE"', '"sideEffect": "WRITE", "idempotencyKeys": ["title"]'), '"idempotencyKeys"', None),
    ("SC004", "warning", edit('"sources": ["USER"], ', '"sources": ["USER"], "sensitve": true, '), '"sensitve"', None),
    ("SC002", "warning", edit('"target": "art_create",', '"target": "art_create",\n  "target": "art_create",'), '"target": "art_create",\n  "tools"', None),
    ("SC003", "warning", edit('"sources": ["USER"], ', '"sources": ["USER"], "constant": 1, '), '"constant"', None),
    ("SC003", "warning", edit('{"share": "TASK"}', '{"share": "TASK", "const": 1}'), '"const"', None),
    # warnings: §16 "not validated at load"
    ("SC201", "warning", BASE, '"art_create"', ["art_get", "space_list"]),
    ("SC202", "warning", edit('"tool": "space_list"', '"tool": "space_search"'), '"space_search"', None),
    ("SC203", "warning", BASE, '"art_get", "args"', ["art_create", "space_list"]),
    ("SC204", "warning", edit('["spaceId", "title"]', '["spaceId", "subject"]'), '"subject"', None),
    ("SC205", "warning", edit('"call.title"', '"call.subject"'), '"call.subject"', None),
    ("SC206", "warning", edit('{"path": "data", "op": "EXISTS"}', '{"path": "data"}'), '"success": {"path": "data"}', None),
    # §5.3's two pitfalls (and required args with no satisfiable source)
    ("SC207", "warning", edit('{"sources": ["USER"], ', "{"), '"title": {', None),
    ("SC207", "warning", edit('"sources": ["USER"]', '"sources": ["PLATFORM"]'), '["PLATFORM"]', None),
    ("SC208", "warning", edit('{"from": "evidence.spaces.0.id"}', '{"from": "evidence.spaces.0.id", "sources": ["USER"]}'), '["USER"]}', None),
    # §11 platform-named leaf without from: platform.*
    ("SC209", "warning", edit('"operatorId": {"from": "platform.userId"}', '"owner.userId": {"from": "inputs.owner"}'), '"owner.userId"', None),
    # §5.5 missing.tool
    ("SC210", "warning", edit('"tool": "space_list"}', '"tool": "art_create"}'), '"art_create"}', None),
    ("SC211", "warning", edit(', "tool": "space_list"}', "}"), '{"action": "CALL_TOOL"}', None),
    ("SC212", "warning", BASE, '"cms.space.lookup"', None),
    ("SC213", "note", BASE, '{\n    "art_create"', TOOLS + ["art_delete"]),
    ("SC214", "note", edit('"sideEffect": "WRITE",', '"sideEffect": "WRITE", "confirm": false,'), "false", None),
    ("SC215", "warning", edit('"sources": ["USER"], ', '"sources": ["USER"], "when": "UNIQUE", '), '"UNIQUE"', None),
]


def _ids() -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for case in CASES:
        seen[case[0]] = seen.get(case[0], 0) + 1
        out.append(f"{case[0]}-{seen[case[0]]}")
    return out


@pytest.mark.parametrize("code,severity,bad,needle,tools", CASES, ids=_ids())
def test_failing_contract(code: str, severity: str, bad: str, needle: str, tools: list[str] | None) -> None:
    key = "cms.space.lookup" if code == "SC212" else "cms.article.create"
    contract, diags = run(bad, tools, key)
    hits = [d for d in diags if d.code == code]
    assert hits, f"no {code} in {[(d.code, d.message) for d in diags]}"
    d = hits[0]
    assert d.severity == severity
    assert (d.line, d.column) == (at(bad, needle) if needle else (1, 1))
    assert d.skill == key and d.file == "c.jsonc"
    if needle:
        assert "^" in d.excerpt
    if severity == "error":
        assert contract is None  # the skill is dropped (§16)
    else:
        assert contract is not None  # warnings and notes never drop a skill


@pytest.mark.parametrize("code", sorted({c[0] for c in CASES}))
def test_passing_contract(code: str) -> None:
    """The base contract triggers none of the codes (each row above is a one-place change of it)."""
    key = "cms.space.lookup" if code == "SC212" else "cms.article.create"
    contract, diags = run(BASE, None, key if code != "SC212" else "cms.other")
    assert contract is not None
    assert not [d for d in diags if d.code == code]


def test_other_skills_still_load_when_one_breaks_a_rule() -> None:
    from skillc.compiler.frontend import check_studio

    good = ir.SkillProfile(skill_key="a.good", skill_contract=BASE, tool_names=TOOLS)
    bad = ir.SkillProfile(skill_key="a.bad", skill_contract=edit('"sideEffect": "WRITE"', '"sideEffect": "Write"'), tool_names=TOOLS)
    agent = ir.AgentProfile(agent_code="ed", skills=["a.good", "a.bad"])
    result = check_studio(ir.Studio(agents=[agent], skills=[good, bad]))
    assert set(result.contracts) == {"a.good"}
    assert [d.code for d in result.rejected["a.bad"]] == ["SC113"]


def test_studio_level_warnings() -> None:
    from skillc.compiler.frontend import check_studio

    bad = ir.SkillProfile(skill_key="a.bad", skill_contract="{", tool_names=[])
    agent = ir.AgentProfile(agent_code="ed", skills=["a.bad", "a.ghost"])
    codes = [d.code for d in check_studio(ir.Studio(agents=[agent], skills=[bad])).diagnostics]
    assert codes == ["SC101", "SC301", "SC302"]


def test_empty_strings_are_unset() -> None:
    """§19: "" is unset — target "" is no target (no SC103), from "" no from (so SC207 applies)."""
    text = edit('"target": "art_create"', '"target": ""')
    contract, diags = run(text)
    assert contract is not None and contract.target is None
    assert diags == []
    contract, diags = run(edit('{"from": "evidence.spaces.0.id"}', '{"from": "", "label": "", "sources": ["MODEL"]}'))
    assert contract is not None
    arg = contract.tools["art_create"].args["spaceId"]
    assert arg.from_ is None and arg.label is None and diags == []


def test_comments_are_allowed() -> None:
    text = "// head\n" + edit('"tools": {', '/* block\n comment */ "tools": { // tail') + "\n// end"
    contract, diags = run(text)
    assert contract is not None and diags == []
    assert contract.tools["art_create"].key_span is not None
    assert contract.tools["art_create"].key_span.line == at(text, '"art_create": {')[0]
