"""The console's router on its own: assets served from the app (nothing from other hosts), and its
studio routes built from the compiled example studio, behind the caller's identification."""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.testclient import TestClient

from skillc.runtime import support as rt
from skillc.runtime.compiled.loader import load_compiled

# The console is a route module of the server package (docs/API.md section 9).
console = pytest.importorskip("skillc.runtime.server.console", reason="the server package is not in this checkout")
studio_view = console.studio_view

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "runtime" / "server" / "console" / "static"


class Denied(Exception):
    """What the stand-in context raises for a request without identity."""


class StandIn:
    """The part of ServerContext the console uses: identify + runtime.studio."""

    def __init__(self, studio: Any) -> None:
        self.runtime = SimpleNamespace(studio=studio)
        self.dev_mode = True

    async def identify(self, request: Request) -> Any:
        if request.headers.get("X-Test-User") is None:
            raise Denied()
        return SimpleNamespace(platform={"userId": int(request.headers["X-Test-User"]), "name": "alice"},
                               owner=f"1:{request.headers['X-Test-User']}")


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The example studio, compiled now (the compiler is a test dependency; the router is not)."""
    from skillc.compiler.build import compile_studio

    out = tmp_path_factory.mktemp("compiled")
    compile_studio(ROOT / "examples" / "studio", out)
    return load_compiled(out)


@pytest.fixture
def client(studio: Any) -> TestClient:
    ApiError = pytest.importorskip("skillc.runtime.server.errors").ApiError

    async def denied(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": {"code": "AUTH_MISSING"}}, status_code=401)

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return exc.response()

    app = Starlette(routes=console.routes(StandIn(studio)), exception_handlers={Denied: denied, ApiError: api_error})
    return TestClient(app)


USER = {"X-Test-User": "7"}


def test_assets_are_served_without_identity_and_load_nothing_from_other_hosts(client: TestClient) -> None:
    page = client.get("/console/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert page.headers["cache-control"] == "no-cache"
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert client.get("/console", follow_redirects=False).headers["location"] == "/console/"
    for asset in sorted(STATIC.rglob("*")):
        if asset.is_file():
            rel = asset.relative_to(STATIC).as_posix()
            got = client.get(f"/console/{rel}")
            assert got.status_code == 200, rel
            # no external host anywhere: no http(s):// URL, no protocol-relative //host (the SVG
            # namespace is a name, never fetched)
            text = got.text.replace("http://www.w3.org/2000/svg", "")
            assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), rel
    assert "application/javascript" in client.get("/console/js/main.js").headers["content-type"] or \
        "text/javascript" in client.get("/console/js/main.js").headers["content-type"]


def test_data_routes_need_identity(client: TestClient) -> None:
    for path in ("/api/me", "/api/studio", "/api/studio/skills/cms.article.lifecycle", "/api/studio/agents/editor/graph"):
        assert client.get(path).status_code == 401, path


def test_me_says_who_and_development_mode(client: TestClient) -> None:
    me = client.get("/api/me", headers=USER).json()
    assert me == {"platform": {"userId": 7, "name": "alice"}, "owner": "1:7", "dev_mode": True}


def test_studio_index_lists_agents_skills_and_labels(client: TestClient, studio: Any) -> None:
    data = client.get("/api/studio", headers=USER).json()
    assert [a["agent_code"] for a in data["agents"]] == sorted(studio.agents)
    editor = next(a for a in data["agents"] if a["agent_code"] == "editor")
    assert editor["skills"] == ["cms.article.lifecycle"]
    lifecycle = next(s for s in data["skills"] if s["key"] == "cms.article.lifecycle")
    assert lifecycle["tool_labels"] == {"cms_article_create": "Creating the article", "cms_space_list": "Looking up spaces"}
    assert lifecycle["read_only"] is False and lifecycle["target"] == "cms_article_create"


def test_skill_table_says_what_explain_says_per_argument(client: TestClient) -> None:
    skill = client.get("/api/studio/skills/cms.article.lifecycle", headers=USER).json()
    create = next(t for t in skill["tools"] if t["name"] == "cms_article_create")
    assert create["side_effect"] == "WRITE" and create["confirm"] is True
    assert create["idempotency_key"] == ["spaceId", "title"]
    rows = {r["param"]: r for r in create["args"]}
    assert rows["title"]["sources"] == ["USER"] and "PARAM_PROVENANCE_ASK_USER" in rows["title"]["when_missing"]
    assert "'cms_space_list' is called (PARAM_PROVENANCE_CALL_TOOL)" in rows["spaceId"]["when_missing"]
    assert "PARAM_PROVENANCE_REJECTED" in rows["spaceId"]["when_unproven"]
    assert rows["authorId"]["platform"] is True and "platform identity" in rows["authorId"]["bound"]
    assert client.get("/api/studio/skills/no.such.skill", headers=USER).status_code == 404


def test_skill_shows_extract_keys_and_the_manifest_hashes(client: TestClient, studio: Any) -> None:
    skill = client.get("/api/studio/skills/cms.article.lifecycle", headers=USER).json()
    extracts = {t["name"]: t["extracts"] for t in skill["tools"]}
    assert extracts == {"cms_article_create": ["article"], "cms_space_list": ["spaces"]}
    entry = studio.manifest["skills"]["cms.article.lifecycle"]
    assert len(skill["contract_sha256"]) == 64 and skill["contract_sha256"] == entry["contract_sha256"]
    assert skill["module_sha256"] == entry["module_sha256"]
    assert skill["compiler_version"] == studio.manifest["compiler_version"]
    tag = client.get("/api/studio/skills/cms.article.tag", headers=USER).json()
    assert all(t["extracts"] == [] and t["extracts_configured"] is False for t in tag["tools"])
    # a studio without a manifest (a stand-in) still answers, without hashes
    bare = studio_view.skill_view(studio.skills["cms.article.lifecycle"], studio_view.manifest_of(object()))
    assert (bare["contract_sha256"], bare["compiler_version"]) == (None, None) and bare["tools"][0]["extracts"]


def test_each_tool_keeps_its_own_issues_when_two_tools_share_an_argument_name(studio: Any) -> None:
    # every tool's table is built from the ParamIssue constants its own compiled check names
    for module in studio.skills.values():
        for tool in module.TOOLS.values():
            names = tool.check.__code__.co_names
            for row in studio_view.arg_rows(module, tool):
                if row["when_missing"] and "PARAM_PROVENANCE" in row["when_missing"]:
                    issues = [getattr(module, n) for n in names if isinstance(getattr(module, n, None), rt.ParamIssue)]
                    assert any(i.param == row["param"] and i.reason == "missing" for i in issues)


def test_agent_graph_has_provider_edges(client: TestClient) -> None:
    graph = client.get("/api/studio/agents/publisher/graph", headers=USER).json()
    assert {"source": "cms.article.find", "target": "cms.article.rename", "inputs": ["articleId"]} in graph["edges"]
    assert {n["id"] for n in graph["nodes"]} >= {"cms.article.find", "cms.space.lookup"}
    assert next(n for n in graph["nodes"] if n["id"] == "cms.space.lookup")["delegatable"] is True
    assert client.get("/api/studio/agents/nobody/graph", headers=USER).status_code == 404
