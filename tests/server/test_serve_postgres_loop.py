"""`skillc serve` on PostgreSQL: a run's store calls, its request's nonce claim among them, are
awaited on the server's own loop (runtime/store/postgres_home.py), never handed to a thread or to
the store's loop; a replayed request is refused all the same (issue 28)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pg_cluster import postgres_cluster, postgres_url  # noqa: F401  (fixtures)
from serve_harness import ALICE, SECRET, Client, ServerThread, write_config
from skillc.runtime.server import create_app
from skillc.runtime.store import offloop
from skillc.runtime.store.storeloop import StoreLoop

ROUTE = {"answer": {"agent": "editor"}}


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


FOLLOW_UP = _call("builtin_node_follow_up", question="Which title?", expectedFields=["title"])


def test_a_served_run_on_postgres_stays_on_the_servers_loop(compiled: Path, fake_model: Any, tmp_path: Path,
                                                            postgres_url: str,  # noqa: F811
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    config = write_config(tmp_path, str(compiled), fake_model.url)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[store]\n", f"[store]\nurl = {postgres_url!r}\n", 1), encoding="utf-8")
    handed: list[str] = []
    run, submit, executor_of = StoreLoop.run, StoreLoop.submit, offloop.executor_of

    def counted_run(self: Any, coro: Any) -> Any:
        handed.append(f"store loop, waited: {coro.__qualname__}")
        return run(self, coro)

    def counted_submit(self: Any, coro: Any) -> Any:
        handed.append(f"store loop, awaited: {coro.__qualname__}")
        return submit(self, coro)

    def counted_executor_of(store: Any) -> Any:
        handed.append("a store thread")
        return executor_of(store)

    app = create_app(config_path=config)
    with ServerThread(app) as server:
        client = Client(server.url, SECRET, ALICE)
        try:
            fake_model.add(ROUTE, FOLLOW_UP)
            first = client.run("pg", "pg-1", "Create an article please", validate=False)
            assert first.interrupt["reason"] == "skillc.follow_up"
            monkeypatch.setattr(StoreLoop, "run", counted_run)
            monkeypatch.setattr(StoreLoop, "submit", counted_submit)
            monkeypatch.setattr(offloop, "executor_of", counted_executor_of)
            # the session is live: its version is compared with the store's, the nonce claimed first
            fake_model.add(_call("cms_space_list"), _call("cms_article_create", title="Autumn", spaceId=3),
                           _call("builtin_node_approval", summary="Create Autumn", toolName="cms_article_create"))
            raw = client.run_body("pg", "pg-2", resume=[{"interruptId": first.interrupt["id"],
                                                         "status": "resolved", "payload": {"text": "Autumn"}}])
            headers = client.signed("POST", "/agui", raw)
            second = client.post_run(raw, validate=False, headers=headers)
            assert second.interrupt["reason"] == "skillc.approval", (second.error, second.events[-3:])
            assert handed == [], handed
            replayed = client.post_run(raw, validate=False, headers=headers)
            assert replayed.status == 401 and replayed.error["code"] == "AUTH_REPLAYED"
        finally:
            client.close()
    assert fake_model.remaining == 0
