"""The studio at the border (SC506): text the runtime could not keep is refused where the compiler
reads it, with file:line:col, the record dropped and the rest compiled into a loadable studio."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from skillc.compiler.sources import load_studio, studio_from_mapping, write_studio_sqlite
from skillc.main import run as skillc
from skillc.runtime.compiled.loader import load_compiled

STUDIO = Path(__file__).resolve().parents[2] / "examples" / "studio"
TAG = "cms.article.tag"


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run skillc in-process; no traceback and no internal error may reach the person."""
    status = skillc(args)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text and "internal error" not in text and "SC900" not in text, text
    return status, text


def check(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], dict]:
    """`skillc check` in human and json form: the status, the json diagnostics and document."""
    status, _ = cli(["check", str(root)], capsys)
    again = skillc(["check", str(root), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert again == status
    return status, doc["diagnostics"], doc


def refused(diags: list[dict]) -> dict:
    hits = [d for d in diags if d["code"] == "SC506"]
    assert len(hits) == 1, [(d["code"], d["message"]) for d in diags]
    assert hits[0]["severity"] == "error"
    return hits[0]


def compiles_without(root: Path, out: Path, capsys: pytest.CaptureFixture[str], dropped: str = TAG) -> None:
    """`skillc compile` exits 1 with SC506, and the output loads with every other skill."""
    status, text = cli(["compile", str(root), "-o", str(out)], capsys)
    assert status == 1 and "error[SC506]" in text, text
    compiled = load_compiled(str(out))
    expected = {p.name for p in (STUDIO / "skills").iterdir() if (p / "skill.yaml").is_file()} - {dropped}
    assert set(compiled.skills) == expected
    assert all(b.decode("utf-8") for b in (f.read_bytes() for f in out.rglob("*") if f.is_file()))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# ---------------------------------------------------------------- lone surrogates


def test_yaml_escape_of_a_lone_surrogate_is_refused_at_its_value(studio: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / TAG / "skill.yaml"
    edit(meta, "skill_name: Article tagging", 'skill_name: "Article \\ud800 tagging"')
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and doc["rejected"] == [TAG]
    assert (d["file"], d["line"], d["column"]) == (str(meta), 2, 13)
    assert "invalid Unicode (a lone surrogate) in skill_name" in d["message"] and d["skill"] == TAG
    status, text = cli(["check", str(studio)], capsys)
    assert f"{meta}:2:13: error[SC506]" in text
    compiles_without(studio, tmp_path / "out", capsys)


def test_a_tool_name_with_a_lone_surrogate_points_at_its_item(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / TAG / "skill.yaml"
    edit(meta, "  - cms_tag_find", '  - "cms_tag\\udfff"')
    d = refused(check(studio, capsys)[1])
    assert (d["line"], d["column"]) == (9, 5) and "in tools[1]" in d["message"]


def test_jsonc_escape_of_a_lone_surrogate_is_refused_at_its_token(studio: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    contract = studio / "skills" / TAG / "contract.jsonc"
    text = contract.read_text(encoding="utf-8")
    contract.write_text('{"label": "x\\ud800y",\n' + text.lstrip()[1:], encoding="utf-8")
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and doc["rejected"] == [TAG]
    assert (d["file"], d["line"], d["column"]) == (str(contract), 1, 11)
    assert "lone surrogate" in d["message"] and "$.label" in d["message"]
    compiles_without(studio, tmp_path / "out", capsys)


def test_a_surrogate_in_a_contract_key_is_refused(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = studio / "skills" / TAG / "contract.jsonc"
    text = contract.read_text(encoding="utf-8")
    contract.write_text('{\n  "\\udc80": 1,\n' + text.lstrip()[1:], encoding="utf-8")
    d = refused(check(studio, capsys)[1])
    assert (d["line"], d["column"]) == (2, 3) and "in a key" in d["message"]


def test_an_agent_with_a_lone_surrogate_is_left_out(studio: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    agent = studio / "agents" / "billing.yaml"
    text = agent.read_text(encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("agent_name:"))
    edit(agent, "agent_name:", 'agent_name: "\\ud83d"\nold_name:')
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and "billing" not in doc["agents"] and not doc["rejected"]
    assert (d["file"], d["line"], d["column"]) == (str(agent), line, 13) and "in agent_name" in d["message"]
    out = tmp_path / "out"
    status, text = cli(["compile", str(studio), "-o", str(out)], capsys)
    assert status == 1 and "error[SC506]" in text
    assert "billing" not in load_compiled(str(out)).agents


def test_a_folder_name_that_is_not_utf8_is_refused(studio: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    if os.name != "posix":
        pytest.skip("needs a file system that takes any bytes in a name")
    bad = os.path.join(os.fsencode(studio / "skills"), b"cms.\xff")
    shutil.copytree(studio / "skills" / TAG, os.fsdecode(bad))
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and "folder name" in d["message"] and (d["line"], d["column"]) == (1, 1)
    assert doc["rejected"] == ["cms.\ufffd"]
    status, text = cli(["compile", str(studio), "-o", str(tmp_path / "out")], capsys)
    assert status == 1
    assert TAG in load_compiled(str(tmp_path / "out")).skills


# ---------------------------------------------------------------- files that are not UTF-8 or too long


def test_a_manual_that_is_not_utf8_is_refused_at_the_byte(studio: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    manual = studio / "skills" / TAG / "manual.md"
    manual.write_bytes(b"# Tagging\n\nAdd one tag \xe9 at a time.\n")
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and doc["rejected"] == [TAG]
    assert (d["file"], d["line"], d["column"]) == (str(manual), 3, 13)
    assert "not UTF-8" in d["message"] and "\ufffd" in d["excerpt"]
    compiles_without(studio, tmp_path / "out", capsys)


def test_a_skill_yaml_that_is_not_utf8_is_refused(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / TAG / "skill.yaml"
    meta.write_bytes(meta.read_bytes().replace(b"Article tagging", b"Article \xff tagging"))
    d = refused(check(studio, capsys)[1])
    assert (d["file"], d["line"], d["column"]) == (str(meta), 2, 21) and "not UTF-8" in d["message"]


def test_a_50mb_manual_is_refused_without_a_traceback(studio: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    manual = studio / "skills" / TAG / "manual.md"
    with manual.open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB of NUL bytes, refused by its size unread
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and doc["rejected"] == [TAG] and "a file of 52428800 bytes" in d["message"]
    compiles_without(studio, tmp_path / "out", capsys)


def test_a_manual_just_over_the_string_limit_is_refused(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manual = studio / "skills" / TAG / "manual.md"
    manual.write_text("x" * 1_000_001, encoding="utf-8")
    d = refused(check(studio, capsys)[1])
    assert "1000001 characters" in d["message"]


# ---------------------------------------------------------------- contracts too deep or too long


def _nest_const(studio: Path, value: str) -> Path:
    """contract.jsonc of the tag skill with a const of `value` in front of its tools."""
    contract = studio / "skills" / TAG / "contract.jsonc"
    text = contract.read_text(encoding="utf-8")
    contract.write_text('{"extra": {"deep": ' + value + "},\n" + text.lstrip()[1:], encoding="utf-8")
    return contract


def test_a_contract_nested_5000_deep_is_refused(studio: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    contract = _nest_const(studio, "[" * 5000 + "]" * 5000)
    status, diags, doc = check(studio, capsys)
    d = refused(diags)
    assert status == 1 and doc["rejected"] == [TAG]
    assert d["file"] == str(contract) and d["line"] == 1 and d["column"] == 20 + 62
    assert "nesting deeper than 64 in the contract at $.extra.deep[0]" in d["message"]
    compiles_without(studio, tmp_path / "out", capsys)


def test_a_5000_digit_number_is_refused_at_its_token(studio: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    contract = _nest_const(studio, "1" * 5000)
    status, diags, _ = check(studio, capsys)
    d = refused(diags)
    assert (d["file"], d["line"], d["column"]) == (str(contract), 1, 20)
    assert "an integer over 400 digits" in d["message"]
    compiles_without(studio, tmp_path / "out", capsys)


def test_a_401_digit_number_and_a_non_finite_one_are_refused(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _nest_const(studio, "9" * 401)
    assert "an integer over 400 digits" in refused(check(studio, capsys)[1])["message"]
    shutil.copy(STUDIO / "skills" / TAG / "contract.jsonc", studio / "skills" / TAG / "contract.jsonc")
    _nest_const(studio, "1e999")
    assert "not finite in the contract at $.extra.deep" in refused(check(studio, capsys)[1])["message"]


def test_a_contract_within_the_limits_still_loads(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _nest_const(studio, "[" * 60 + "1" * 400 + "]" * 60)
    status, diags, doc = check(studio, capsys)
    assert status == 0 and TAG not in doc["rejected"]
    assert not [d for d in diags if d["code"] == "SC506"]


# ---------------------------------------------------------------- other sources


def test_a_sqlite_row_that_is_not_utf8_drops_only_its_skill(studio: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "studio.sqlite"
    write_studio_sqlite(load_studio(studio), db)
    con = sqlite3.connect(db)
    con.execute("UPDATE skill_profile SET skill_name = CAST(X'41ff42' AS TEXT) WHERE skill_key = ?", (TAG,))
    con.commit()
    con.close()
    status, diags, doc = check(db, capsys)
    d = refused(diags)
    assert status == 1 and doc["rejected"] == [TAG]
    assert d["file"].startswith(f"{db}#skill_profile/") and (d["line"], d["column"]) == (1, 1)
    assert "in skill_name" in d["message"]
    compiles_without(db, tmp_path / "out", capsys)


def test_a_studio_given_as_data_is_checked_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.frontend import check_studio

    contract = (STUDIO / "skills" / TAG / "contract.jsonc").read_text(encoding="utf-8")
    data = {
        "skills": [
            {"skill_key": "good", "skill_name": "ok", "contract": contract, "tools": ["cms_tag_add", "cms_tag_find"]},
            {"skill_key": "bad", "semantic_desc": "x\udc00", "contract": contract, "tools": ["cms_tag_add"]},
        ],
        "agents": [
            {"agent_code": "a", "skills": ["good", "bad"]},
            {"agent_code": "b\ud800", "skills": ["good"]},
        ],
    }
    studio = studio_from_mapping(data, origin="scenario.yaml")
    result = check_studio(studio)
    codes = [(d.code, d.file, d.line) for d in result.diagnostics if d.code == "SC506"]
    assert codes == [("SC506", "scenario.yaml#studio.skills[1]", 1), ("SC506", "scenario.yaml#studio.agents[1]", 1)]
    assert set(result.rejected) == {"bad"} and [a.agent_code for a in studio.agents] == ["a"]
    built = compile_studio(studio, tmp_path / "out")
    assert set(built.rejected) == {"bad"}
    assert set(load_compiled(str(tmp_path / "out")).skills) == {"good"}


def test_nothing_downstream_encodes_a_surrogate_quietly(tmp_path: Path) -> None:
    """The crutches are gone: a lone surrogate past the border fails loudly at the encode."""
    from skillc.compiler import ir
    from skillc.compiler.build import compile_studio, file_stem

    with pytest.raises(UnicodeEncodeError):
        file_stem("KEY\ud800")
    contract = (STUDIO / "skills" / TAG / "contract.jsonc").read_text(encoding="utf-8")
    sneaked = ir.Studio(skills=[ir.SkillProfile(skill_key="k", skill_name="x\ud800", skill_contract=contract,
                                                tool_names=["cms_tag_add", "cms_tag_find"])])
    with pytest.raises(UnicodeEncodeError):  # past the border (built directly): the build fails, writes nothing bad
        compile_studio(sneaked, tmp_path / "out")
