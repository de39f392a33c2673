"""Finding 1: a studio file that is a link leaving the studio folder is refused where the compiler
reads it (SC506, the record dropped) and so is never compiled, served by `skillc serve`, nor
served by `skillc studio serve`. A link that stays inside the studio is read as before."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import httpx
import pytest

from skillc.compiler.sources import load_studio
from skillc.main import run as skillc

TAG = "cms.article.tag"
SECRET = "SKILLC_GATEWAY_SECRET=hunter2-not-for-you"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the studio holding what a link must never hand out."""
    secret = tmp_path / "elsewhere" / "environ"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n", encoding="utf-8")
    return secret


def _link(at: Path, target: Path) -> None:
    at.unlink()
    os.symlink(target, at)


def _studio_doc(root: Path) -> tuple[int, str]:
    """GET /studio of `skillc studio serve ROOT`'s app, in process."""
    from skillc.commands.studio import make_app

    async def get() -> tuple[int, str]:
        transport = httpx.ASGITransport(app=make_app(root))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            resp = await client.get("/studio")
            return resp.status_code, resp.text
    return asyncio.run(get())


def test_a_manual_linked_outside_the_studio_is_refused_and_never_served(studio: Path, outside: Path, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _link(studio / "skills" / TAG / "manual.md", outside)
    loaded = load_studio(studio)
    skill = next(s for s in loaded.skills if s.skill_key == TAG)
    assert skill.source is not None and skill.source.refusal is not None
    assert "outside the studio folder" in skill.source.refusal.message
    assert all(SECRET not in s.skill_manual for s in loaded.skills)

    status = skillc(["compile", str(studio), "-o", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert status == 1 and "error[SC506]" in out.out + out.err and "Traceback" not in out.out + out.err
    assert all(SECRET not in f.read_text(encoding="utf-8") for f in (tmp_path / "out").rglob("*") if f.is_file())

    code, body = _studio_doc(studio)
    assert code == 200 and SECRET not in body and "hunter2" not in body
    assert TAG not in {s["skill_key"] for s in json.loads(body)["skills"] if s["skill_manual"]}


@pytest.mark.parametrize("which", ["skill.yaml", "contract.jsonc", "agent"])
def test_every_studio_file_linked_outside_is_refused(studio: Path, outside: Path, which: str) -> None:
    if which == "agent":
        agent = next((studio / "agents").glob("*.yaml"))
        _link(agent, outside)
    else:
        _link(studio / "skills" / TAG / which, outside)
    loaded = load_studio(studio)
    text = json.dumps(loaded.model_dump(mode="json"))
    assert "hunter2" not in text
    messages = [r.message for r in loaded.refused] + [s.source.refusal.message for s in loaded.skills
                                                        if s.source and s.source.refusal]
    assert any("outside the studio folder" in m for m in messages), messages


def test_a_skill_folder_linked_outside_the_studio_is_refused(studio: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "foreign-skill"
    (studio / "skills" / TAG).rename(elsewhere)
    os.symlink(elsewhere, studio / "skills" / TAG)
    (elsewhere / "manual.md").write_text(SECRET, encoding="utf-8")
    loaded = load_studio(studio)
    skill = next(s for s in loaded.skills if s.skill_key == TAG)
    assert skill.source is not None and skill.source.refusal is not None
    assert SECRET not in json.dumps(loaded.model_dump(mode="json"))


def test_a_link_inside_the_studio_is_read(studio: Path) -> None:
    manual = studio / "skills" / TAG / "manual.md"
    shared = studio / "shared-manual.md"
    shared.write_text("# Shared manual\n", encoding="utf-8")
    _link(manual, Path("..") / ".." / "shared-manual.md")
    skill = next(s for s in load_studio(studio).skills if s.skill_key == TAG)
    assert skill.skill_manual == "# Shared manual\n" and skill.source is not None and skill.source.refusal is None
