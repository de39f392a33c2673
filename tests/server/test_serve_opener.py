"""The server opens a runtime with `opener`'s parts, so what a `skillc.toml` opens is the same under
`open_runtime` and `skillc serve`: `[model] adapter = "scripted"` serves a ScriptedModel, and
`[store] path = ":memory:"` an in-memory store (no file beside the config)."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helpers.asgi_app import AnswerAll
from skillc.runtime import open_runtime
from skillc.runtime.outside.config import load_config
from skillc.runtime.model.scripted import ScriptedModel
from skillc.runtime.server import create_app
from skillc.runtime.telemetry.core import ObservedModel


def test_serve_opens_what_open_runtime_opens(compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "skillc.toml"
    config.write_text(f'[studio]\nsource = {str(compiled)!r}\n[store]\npath = ":memory:"\n'
                      '[model]\nadapter = "scripted"\n[server]\nauth = "dev"\ntrace_dir = "traces"\n', encoding="utf-8")

    async def go() -> None:
        async with open_runtime(load_config(config), gateway=AnswerAll([])) as rt:
            direct = (type(rt.model), type(rt.store), rt.store.path)
        app = create_app(config_path=config, gateway=AnswerAll([]))
        async with app.router.lifespan_context(app):
            served = app.state.ctx.runtime
            # serve keeps metrics on (GET /metrics): its model is the adapter seen through telemetry
            assert isinstance(served.model, ObservedModel)
            model = served.model.inner
            assert (type(model), type(served.store), served.store.path) == direct
            assert isinstance(model, ScriptedModel) and served.store.path == ":memory:"

    asyncio.run(go())
    assert not (tmp_path / ":memory:").exists()
