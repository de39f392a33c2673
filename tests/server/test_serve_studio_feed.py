"""The studio feed against a studio service that answers garbage: the last good studio stays,
marked stale, and an unchanged studio costs a 304 (no recompilation)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from skillc.commands.studio import document
from skillc.compile_on_load import compile_on_load
from skillc.compiler.sources import load_studio
from skillc.runtime.server.studio_feed import StudioFeed

from serve_harness import ROOT


def test_garbage_keeps_the_last_good_studio(tmp_path: Path) -> None:
    good = document(load_studio(ROOT / "examples" / "studio"))
    answers = [httpx.Response(200, json=good, headers={"ETag": f'"{good["version"]}"'}),
               httpx.Response(304),
               httpx.Response(200, content=b"<html>oops</html>"),
               httpx.Response(200, json={"format": "skillc.studio/1", "agents": "no", "skills": []}),
               httpx.Response(500)]
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    feed = StudioFeed("http://studio.test", tmp_path / "compiled", interval=0, compiler=compile_on_load)
    feed._client = httpx.AsyncClient(transport=httpx.MockTransport(reply))

    async def go() -> list[str | None]:
        out = [await feed.update(force=True)]
        first = dict(feed.skills)
        out.append(await feed.update(force=True))  # 304: nothing recompiled or re-imported
        assert feed.skills == first and all(feed.skills[k] is m for k, m in first.items())
        for _ in range(3):
            out.append(await feed.update(force=True))
        assert feed.skills == first  # still the last good one
        await feed.aclose()
        return out

    errors = asyncio.run(go())
    assert errors[:2] == [None, None] and all(errors[2:])
    assert "not JSON" in str(errors[2]) and "lists" in str(errors[3]) and "HTTP 500" in str(errors[4])
    assert seen[1].headers["if-none-match"] == f'"{good["version"]}"'
    status = feed.status()
    assert status["ok"] and status["stale"] and status["skills"] == len(good["skills"]) and status["version"] == good["version"]
    assert json.dumps(status)  # /readyz can say so


def test_studio_serve_exposes_a_sqlite_studio(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from skillc.commands.studio import make_app
    from skillc.compiler.sources import write_studio_sqlite

    db = tmp_path / "studio.sqlite"
    write_studio_sqlite(load_studio(ROOT / "examples" / "studio"), db)
    client = TestClient(make_app(db))
    first = client.get("/studio")
    doc = first.json()
    assert first.status_code == 200 and doc["format"] == "skillc.studio/1"
    assert doc == document(load_studio(ROOT / "examples" / "studio"))  # the same studio, whichever source
    assert first.headers["etag"] == f'"{doc["version"]}"'
    assert client.get("/studio", headers={"If-None-Match": first.headers["etag"]}).status_code == 304
    lifecycle = next(s for s in doc["skills"] if s["skill_key"] == "cms.article.lifecycle")
    assert lifecycle["tools"] == ["cms_space_list", "cms_article_create"] and len(lifecycle["sha256"]) == 64


def test_a_source_without_a_compiler_is_refused_not_compiled(tmp_path: Path) -> None:
    # the runtime has no compiler of its own: compile-on-load is the callable its caller passes
    feed = StudioFeed(str(ROOT / "examples" / "studio"), tmp_path / "compiled", interval=0)
    error = asyncio.run(feed.update(force=True))
    assert error is not None and "needs a compiler" in error and not feed.loaded
    assert not (tmp_path / "compiled" / "manifest.json").exists()
