"""The service face under hostile requests, against the ASGI app in process (findings 3, 4, 5, 8, 9
of the hardening issue): what is read before a request is refused, dev mode's reach, owner keys,
digits that are not ASCII, ids."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.server.auth import owner_of

from helpers.asgi_app import broken, ALICE, serving

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example studio, compiled once for the module."""
    from skillc.compiler.build import compile_studio

    out = tmp_path_factory.mktemp("compiled")
    compile_studio(Path(__file__).resolve().parents[2] / "examples" / "studio", out)
    return out


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _wire(value: str) -> bytes:
    """A header value's bytes: latin-1 as HTTP has it ("²" is the byte 0xB2), else UTF-8."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if broken(r)]
    assert not bad, [r.getMessage() for r in bad]


# ---------------------------------------------------------------- finding 3: bodies


def test_an_anonymous_64_mib_post_is_refused_before_its_body_is_read(tmp_path: Path, compiled: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            chunks = [b"x" * MIB] * 64
            # announced: refused on its Content-Length alone
            big = await app.call("POST", "/agui", headers={"Content-Type": "application/json",
                                                           "Content-Length": str(64 * MIB)}, body=chunks)
            assert big.status in (401, 413) and big.pulled == 0, (big.status, big.pulled)
            # not announced (chunked), unsigned: the missing signature is told before any byte is read
            anon = await app.call("POST", "/agui", headers={"Content-Type": "application/json"}, body=chunks)
            assert anon.status == 401 and anon.pulled == 0, (anon.status, anon.pulled)
            # not announced but signed headers present: reading stops past the route's limit
            headers = app.signed(ALICE, "POST", "/agui", b"")
            signed = await app.call("POST", "/agui", headers={**headers, "Content-Type": "application/json"}, body=chunks)
            assert signed.status == 413 and signed.json()["error"]["code"] == "BODY_TOO_LARGE"
            assert signed.pulled <= 2 * MIB, signed.pulled
    run(scenario())


def test_the_body_limit_is_configurable_per_route(tmp_path: Path, compiled: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled, extra='body_limit = 2048\n[server.body_limits]\n"/agui" = 4096\n') as app:
            body = json.dumps({"pad": "x" * 3000}).encode()
            headers = {**app.signed(ALICE, "POST", "/api/sessions", body), "Content-Type": "application/json"}
            sessions = await app.call("POST", "/api/sessions", headers=headers, body=body)
            assert sessions.status == 413 and sessions.pulled == 0
            headers = {**app.signed(ALICE, "POST", "/agui", body), "Content-Type": "application/json"}
            agui = await app.call("POST", "/agui", headers=headers, body=body)
            assert agui.status == 422 and agui.json()["error"]["code"] == "INVALID_INPUT"  # read, then judged
    run(scenario())


# ---------------------------------------------------------------- finding 5: owners


def test_owner_keys_are_injective() -> None:
    a = {"organId": "1", "userId": "2:3"}
    b = {"organId": "1:2", "userId": "3"}
    assert owner_of(a) != owner_of(b)
    assert owner_of({"organId": 1, "userId": 2}) == owner_of({"organId": 1, "userId": 2})


def test_colliding_identities_do_not_share_sessions(tmp_path: Path, compiled: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            a, b = {"organId": "1", "userId": "2:3"}, {"organId": "1:2", "userId": "3"}
            body = json.dumps({"id": "shared-one"}).encode()
            made = await app.post(a, "/api/sessions", body)
            assert made.status == 201, made.body
            other = await app.call("GET", "/api/sessions/shared-one", headers=app.signed(b, "GET", "/api/sessions/shared-one"))
            assert other.status == 403 and other.json()["error"]["code"] == "SESSION_FORBIDDEN"
            listed = await app.call("GET", "/api/sessions", headers=app.signed(b, "GET", "/api/sessions"))
            assert listed.status == 200 and listed.json()["sessions"] == []
    run(scenario())


# ---------------------------------------------------------------- finding 8: digits


@pytest.mark.parametrize("stamp", ["²", "١٧٠٠٠٠٠٠٠٠", "9" * 5000, "+1700000000", " 1700000000"],
                         ids=["superscript", "arabic-indic", "5000-digits", "plus", "space"])
def test_a_timestamp_that_is_not_ascii_digits_is_expired_not_a_500(tmp_path: Path, compiled: Path, stamp: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            headers = app.signed(ALICE, "GET", "/api/sessions")
            headers["X-Skillc-Timestamp"] = stamp
            raw = [(k.lower().encode(), _wire(v)) for k, v in headers.items()] + [(b"host", b"127.0.0.1")]
            answer = await app.call("GET", "/api/sessions", headers=raw)
            assert answer.status == 401 and answer.json()["error"]["code"] == "AUTH_EXPIRED"
    run(scenario())
    _no_traceback(caplog)


def test_after_and_last_event_id_take_ascii_digits_only(tmp_path: Path, compiled: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            body = json.dumps({"id": "digits"}).encode()
            made = await app.post(ALICE, "/api/sessions", body)
            assert made.status == 201
            for after in ("%C2%B2", "9" * 5000, "-1"):
                target = f"/api/sessions/digits/trace?after={after}"
                answer = await app.call("GET", target, headers=app.signed(ALICE, "GET", target))
                assert answer.status == 422 and answer.json()["error"]["code"] == "INVALID_INPUT", (after, answer.status)
            ok = await app.call("GET", "/api/sessions/digits/trace?after=0",
                                headers=app.signed(ALICE, "GET", "/api/sessions/digits/trace?after=0"))
            assert ok.status == 200
            run_body = json.dumps({"threadId": "digits", "runId": "r-digits", "messages": [
                {"id": "m1", "role": "user", "content": "hello"}]}).encode()
            first = await app.post(ALICE, "/agui", run_body)
            assert first.status == 200
            for last in ("²", "9" * 5000):
                headers = app.signed(ALICE, "GET", "/agui/runs/r-digits")
                raw = [(k.lower().encode(), _wire(v)) for k, v in headers.items()]
                raw += [(b"host", b"127.0.0.1"), (b"last-event-id", _wire(last))]
                again = await app.call("GET", "/agui/runs/r-digits", headers=raw)
                assert again.status in (200, 422), (last[:5], again.status)
    run(scenario())
    _no_traceback(caplog)


def test_path_segments_that_are_not_ascii_digits_are_names() -> None:
    from skillc.runtime.compiled.paths import get_path, parse_path

    assert parse_path("data.²") == (("k", "data"), ("k", "²"))
    long = "9" * 5000
    assert parse_path(f"data.{long}") == (("k", "data"), ("k", long))
    assert get_path({"data": [1, 2]}, parse_path("data.1")) == 2
    from skillc.runtime.compiled.values import MISSING

    assert get_path({"data": [1, 2]}, parse_path(f"data.{long}")) in (MISSING, [])


# ---------------------------------------------------------------- finding 9: ids


@pytest.mark.parametrize("sid", ["abc\n", "a" * 129, "\ud800", "x\ud800y", "../etc", ""],
                         ids=["newline", "129-chars", "surrogate", "inner-surrogate", "dotdot", "empty"])
def test_a_session_id_outside_the_rule_is_refused(tmp_path: Path, compiled: Path, sid: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            body = json.dumps({"id": sid}).encode()
            made = await app.post(ALICE, "/api/sessions", body)
            assert made.status == 422 and made.json()["error"]["code"] == "INVALID_INPUT", made.body
            run_body = json.dumps({"threadId": sid, "runId": "r1", "messages": [
                {"id": "m1", "role": "user", "content": "hi"}]}).encode()
            agui = await app.post(ALICE, "/agui", run_body)
            assert agui.status == 422, agui.body
            assert not any(p.name.startswith("abc") for p in (tmp_path / "traces").rglob("*"))
    run(scenario())
    _no_traceback(caplog)


def test_a_deep_session_body_is_refused_not_a_500(tmp_path: Path, compiled: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            body = b"[" * 3000 + b"]" * 3000
            made = await app.post(ALICE, "/api/sessions", body)
            assert made.status == 422 and made.json()["error"]["code"] == "INVALID_INPUT"
            deep = b'{"id": "ok1", "x": ' + b"[" * 3000 + b"]" * 3000 + b"}"
            made = await app.post(ALICE, "/api/sessions", deep)
            assert made.status == 422
    run(scenario())
    _no_traceback(caplog)


def test_a_run_id_outside_the_rule_is_refused(tmp_path: Path, compiled: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            for rid in ("r\n", "\ud800", "r" * 129):
                run_body = json.dumps({"threadId": "t1", "runId": rid, "messages": [
                    {"id": "m1", "role": "user", "content": "hi"}]}).encode()
                agui = await app.post(ALICE, "/agui", run_body)
                assert agui.status == 422, (rid, agui.status, agui.body)
    run(scenario())
    _no_traceback(caplog)



# ---------------------------------------------------------------- finding 4: development mode

RUN = json.dumps({"threadId": "dev-t", "runId": "dev-r", "messages": [{"id": "m1", "role": "user", "content": "hi"}]}).encode()


@pytest.mark.parametrize("headers", [
    {"Content-Type": "text/plain", "Origin": "http://evil.example"},  # a form POST from another site
    {"Content-Type": "text/plain"},  # no Origin (an old browser): still not JSON
    {"Content-Type": "application/json", "Origin": "http://evil.example"},
    {"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"},
], ids=["text-plain-cross-site", "text-plain", "json-cross-origin", "json-cross-site-fetch"])
def test_dev_mode_refuses_what_another_site_can_send(tmp_path: Path, compiled: Path, headers: dict[str, str]) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled, dev=True) as app:
            answer = await app.call("POST", "/agui", headers=headers, body=RUN)
            assert answer.status in (403, 415), (answer.status, answer.body)
            assert answer.headers.get("x-skillc-auth") == "dev-insecure"
            assert app.model.requests == [] and app.ctx.runs.get("dev-r") is None  # nothing ran
    run(scenario())


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io:8765", ""],
                         ids=["name", "name-port", "rebinding-name", "none"])
def test_dev_mode_serves_only_a_loopback_host(tmp_path: Path, compiled: Path, host: str) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled, dev=True) as app:
            for method, target, body in (("GET", "/api/sessions", b""), ("POST", "/agui", RUN)):
                raw = [(b"content-type", b"application/json")] + ([(b"host", host.encode())] if host else [])
                answer = await app.call(method, target, headers=raw, body=body)
                assert answer.status == 421 and answer.json()["error"]["code"] == "DEV_HOST_REFUSED"
            assert app.model.requests == []
    run(scenario())


def test_dev_mode_serves_its_own_origin(tmp_path: Path, compiled: Path) -> None:
    async def scenario() -> None:
        async with serving(tmp_path, compiled, dev=True) as app:
            for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765"):
                answer = await app.call("GET", "/api/sessions", host=host)
                assert answer.status == 200, (host, answer.body)
            same = {"Content-Type": "application/json", "Origin": "http://localhost:8765", "Sec-Fetch-Site": "same-origin"}
            answer = await app.call("POST", "/agui", headers=same, body=RUN, host="localhost:8765")
            assert answer.status == 200 and b"RUN_STARTED" in answer.body  # served (the test model then fails)
    run(scenario())


def test_dev_mode_digest_key_is_random_per_process(tmp_path: Path, compiled: Path) -> None:
    async def keys() -> list[bytes]:
        found = []
        for n in range(2):
            (tmp_path / str(n)).mkdir()
            async with serving(tmp_path / str(n), compiled, dev=True) as app:
                found.append(app.ctx.digest_key)
        return found
    first, second = run(keys())
    assert first != second and len(first) >= 32 and b"skillc-dev-insecure" not in (first, second)


def test_a_5000_digit_path_segment_in_a_contract_is_no_internal_error(tmp_path: Path) -> None:
    from skillc.compiler.frontend import check_studio
    from skillc.compiler.sources import studio_from_mapping

    for segment in ("9" * 5000, "²"):
        contract = json.dumps({"tools": {"t": {"success": {"path": f"data.{segment}", "op": "EQ", "value": 0},
                                              "extracts": [{"key": "k", "path": f"items.{segment}.id"}]}}})
        studio = studio_from_mapping({"agents": [], "skills": [{"skill_key": "k.s", "skill_name": "S", "semantic_desc": "d",
                                                                "skill_manual": "m", "status": "ACTIVE", "tools": ["t"],
                                                                "contract": contract}]}, origin="digits")
        result = check_studio(studio)
        codes = [d.code for d in result.diagnostics]
        assert "SC900" not in codes, [(d.code, d.message) for d in result.diagnostics]


# ---------------------------------------------------------------- a store that does not answer


def test_a_store_that_does_not_answer_is_503_not_500(tmp_path: Path, compiled: Path, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """The database down while a caller's sessions are read (or one is opened): 503 with
    Retry-After and nothing written, not a 500 "internal error" with a traceback."""
    from skillc.runtime.store.base import StoreUnavailable

    async def scenario() -> None:
        async with serving(tmp_path, compiled) as app:
            store = app.ctx.runtime.store
            made = await app.post(ALICE, "/api/sessions", json.dumps({"id": "s-up"}).encode())
            assert made.status == 201, made.body[:300]

            def gone(*_: Any, **__: Any) -> Any:
                raise StoreUnavailable("could not connect to the database")

            monkeypatch.setattr(store, "session_head", gone)
            monkeypatch.setattr(store, "version_of", gone)
            listed = await app.call("GET", "/api/sessions", headers=app.signed(ALICE, "GET", "/api/sessions"))
            body = json.dumps({"id": "s-down"}).encode()
            opened = await app.post(ALICE, "/api/sessions", body)
            for answer in (listed, opened):
                assert answer.status == 503, (answer.status, answer.body[:300])
                assert json.loads(answer.body)["error"]["code"] == "STORE_UNAVAILABLE"
                assert answer.headers.get("retry-after") == "5"

    run(scenario())
    _no_traceback(caplog)
