"""Typed evidence at compile time: `args.<p>.evidence` names are checked against the contract's
extracts (SC801 with the name's line and column, SC802 without EVIDENCE), resolved into the
generated check, and a contract without them compiles as before."""
from __future__ import annotations

import json

from skillc.compiler import ir
from skillc.compiler.codegen import generate_module
from skillc.compiler.frontend import check_skill

TEXT = """{
  "tools": {
    "profile": { "extracts": [ { "key": "passengers", "path": "data.saved" }, { "path": "data.other" } ] },
    "book": {
      "args": {
        "dob":  { "sources": ["EVIDENCE"], "evidence": "profile:data.saved[].dob" },
        "key":  { "sources": ["EVIDENCE"], "evidence": ["passengers[].dob"] },
        "bad1": { "sources": ["EVIDENCE"], "evidence": "profile:data.nope.dob" },
        "bad2": { "sources": ["EVIDENCE"], "evidence": "nosuch:data.saved" },
        "bad3": { "sources": ["EVIDENCE"], "evidence": "profile:data.other.x" },
        "bad4": { "sources": ["EVIDENCE"], "evidence": ["nokey.dob"] },
        "idle": { "sources": ["USER"], "evidence": "passengers.dob" }
      }
    }
  }
}"""


def _check(text: str) -> tuple[ir.Contract | None, list]:
    profile = ir.SkillProfile(skill_key="t.skill", skill_name="T", skill_contract=text, tool_names=["profile", "book"])
    return check_skill(profile)


def test_names_that_resolve_to_nothing_are_errors_at_their_place() -> None:
    contract, diags = _check(TEXT)
    assert contract is None  # an SC801 error drops the skill
    found = {(d.code, d.line, d.column) for d in diags if d.code in ("SC801", "SC802")}
    lines = TEXT.splitlines()

    def at(name: str, needle: str) -> tuple[int, int]:
        row = next(i for i, line in enumerate(lines) if f'"{name}"' in line)
        return row + 1, lines[row].index(needle) + 1

    assert found == {
        ("SC801", *at("bad1", '"profile:data.nope.dob"')),
        ("SC801", *at("bad2", '"nosuch:data.saved"')),
        ("SC801", *at("bad3", '"profile:data.other.x"')),  # that extract has no key
        ("SC801", *at("bad4", '"nokey.dob"')),
        ("SC802", *at("idle", '"passengers.dob"')),
    }
    helps = {d.message.split(":")[0]: d.help for d in diags if d.code == "SC801"}
    assert helps["tools.book.args.bad2.evidence"] == "'nosuch' is not configured in tools"
    assert "data.saved" in (helps["tools.book.args.bad1.evidence"] or "")


def test_resolved_names_reach_the_generated_check() -> None:
    good = json.loads(TEXT)
    args = good["tools"]["book"]["args"]
    for k in ("bad1", "bad2", "bad3", "bad4"):
        del args[k]
    contract, diags = _check(json.dumps(good))
    assert contract is not None, [d.message for d in diags]
    profile = ir.SkillProfile(skill_key="t.skill", skill_name="T", skill_contract=json.dumps(good), tool_names=["profile", "book"])
    source = generate_module(profile, contract)
    assert 'ctx.evidence_in(v, (("profile", "passengers", (("e",), ("k", "dob"))),))' in source
    assert 'ctx.evidence_in(v, ((None, "passengers", (("e",), ("k", "dob"))),))' in source
    assert source.count("ctx.evidence_in(") == 2  # `idle` has no EVIDENCE: unchanged


def test_a_wrong_type_is_a_type_error() -> None:
    text = '{"tools": {"book": {"args": {"a": {"sources": ["EVIDENCE"], "evidence": [3]}}}}}'
    _, diags = _check(text)
    assert [d.code for d in diags if d.severity == "error"] == ["SC114"]
