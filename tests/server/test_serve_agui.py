"""`skillc serve` over loopback: AG-UI runs with approval, VERIFY and FOLLOW_UP interrupts and their
resumes, repeated runIds, one run per session, disconnects; every stream passes ag-ui-validate."""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import httpx

from ag_ui.core import PROTOCOL_VERSION

from skillc.runtime.server import create_app
from skillc.runtime.server.auth import encode_identity, sign_request

from serve_harness import ALICE, SECRET, Client, ServerThread, Stream, check_stream, read_sse, write_config

ROUTE = {"answer": {"agent": "editor"}}


def call(name: str, **args: Any) -> dict[str, Any]:
    """A canned model step calling one tool."""
    return {"tool_calls": [{"name": name, "arguments": args}]}


def approval_script(title: str) -> list[dict[str, Any]]:
    """Route, look up the space, try the write (gated), ask for approval."""
    return [ROUTE, call("cms_space_list"), call("cms_article_create", title=title, spaceId=3),
            call("builtin_node_approval", summary=f"Create {title}", toolName="cms_article_create")]


def resume(interrupt: dict[str, Any], payload: Any, status: str = "resolved") -> list[dict[str, Any]]:
    """The resume entry answering an interrupt."""
    return [{"interruptId": interrupt["id"], "status": status, "payload": payload}]


def invocations(client: Client, session: str, tool: str) -> list[dict[str, Any]]:
    """The session's `mcp.invoked` events of one tool (what really reached the server)."""
    return [e for e in client.trace(session) if e["type"] == "mcp.invoked" and e["tool"] == tool]


def test_approval_round_trip(alice: Client, model: Any) -> None:
    model.add(*approval_script("Spring launch"))
    first = alice.run("appr", "appr-1", "Please create an article titled Spring launch")
    assert first.status == 200
    assert [e["type"] for e in first.events[:1]] == ["RUN_STARTED"] and first.events[-1]["type"] == "RUN_FINISHED"
    assert first.events[0]["protocolVersion"] == PROTOCOL_VERSION == "1.0"  # AG-UI 1.0: a producer MUST declare it
    assert [e["stepName"] for e in first.of("STEP_STARTED")] == ["n1"] == [e["stepName"] for e in first.of("STEP_FINISHED")]
    assert [e["value"]["label"] for e in first.of("CUSTOM", "skillc.progress")] == ["Looking up spaces", "Creating the article"]
    names = [e["toolCallName"] for e in first.of("TOOL_CALL_START")]
    assert names == ["cms_space_list", "cms_article_create", "builtin_node_approval"]
    args = [json.loads(e["delta"]) for e in first.of("TOOL_CALL_ARGS")]
    assert args[0] == {"organId": 9}  # bound from the signed identity, not from the model
    verdicts = first.of("CUSTOM", "skillc.verdict")
    assert [(v["value"]["error"], v["value"]["code"]) for v in verdicts] == [("APPROVAL_REQUIRED", "agent_runtime.42221")]
    assert first.of("STATE_SNAPSHOT")[-1]["snapshot"]["active_task"]["nodes"]["n1"]["state"] == "SUSPENDED"

    interrupt = first.interrupt
    gated = first.of("TOOL_CALL_START")[1]["toolCallId"]
    assert interrupt["reason"] == "skillc.approval" and interrupt["toolCallId"] == gated
    assert interrupt["metadata"]["summary"] == "Title: Spring launch\nSpace: 3"  # authorId (platform) hidden
    assert interrupt["metadata"]["digest"].startswith("hmac-sha256:") and interrupt["expiresAt"]
    assert first.reply == interrupt["message"]
    pending = alice.request("GET", "/api/sessions/appr/pending").json()
    assert pending["interrupt"] == interrupt and pending["pending"]["kind"] == "APPROVAL"

    # a digest that does not match the bound arguments is refused inside the run's stream (the
    # AG-UI way: the client's run ends in RUN_ERROR, not in a transport error); nothing runs
    wrong = alice.run("appr", "appr-2", resume=resume(interrupt, {"decision": "CONFIRM", "digest": "hmac-sha256:00"}))
    assert wrong.status == 200 and [e["type"] for e in wrong.events] == ["RUN_STARTED", "RUN_ERROR"]
    assert wrong.events[-1]["code"] == "APPROVAL_DIGEST_MISMATCH" and "nothing was run" in wrong.events[-1]["message"]
    assert wrong.events[-1]["metadata"]["pending"] == interrupt  # what to ask again
    stale = alice.run("appr", "appr-3", resume=[{"interruptId": "t9.n1.APPROVAL", "status": "resolved",
                                                  "payload": {"decision": "CONFIRM"}}])
    assert stale.status == 200 and [e["type"] for e in stale.events] == ["RUN_STARTED", "RUN_ERROR"]
    assert stale.events[-1]["code"] == "INTERRUPT_STALE" and interrupt["id"] in stale.events[-1]["message"]
    assert alice.run("appr", "appr-3", resume=[]).events == stale.events  # its runId replays the same refusal
    assert invocations(alice, "appr", "cms_article_create") == []
    assert alice.request("GET", "/api/sessions/appr/pending").json()["interrupt"] == interrupt  # still pending

    model.add(call("builtin_node_finish", output="Created article 17"))
    done = alice.run("appr", "appr-4", resume=resume(interrupt, {"decision": "CONFIRM", "digest": interrupt["metadata"]["digest"]}))
    assert done.status == 200 and done.outcome == {"type": "success"} and done.reply == "Created article 17"
    decided = done.of("CUSTOM", "skillc.approval")[0]["value"]
    assert decided["decision"] == "CONFIRM" and decided["approver"]["userId"] == 7
    assert done.of("STEP_STARTED")[0]["metadata"] == {"resumed": "APPROVAL"}
    assert done.of("CUSTOM", "skillc.write_settled")[0]["value"]["status"] == "SUCCESS"
    assert [e["args"] for e in invocations(alice, "appr", "cms_article_create")] == [
        {"title": "Spring launch", "spaceId": 3, "authorId": 7}]
    resumed = [e for e in alice.trace("appr") if e["type"] == "node.resumed"][0]
    assert resumed["answer"]["approver"] == alice.platform and resumed["answer"]["decided_at"].endswith("Z")
    assert resumed["answer"]["digest"] == interrupt["metadata"]["digest"]
    state = alice.request("GET", "/api/sessions/appr/state").json()
    assert state["active_task"]["state"] == "DONE" and state == done.of("STATE_SNAPSHOT")[-1]["snapshot"]


def test_verify_interrupt_answered_by_resume(alice: Client, model: Any) -> None:
    model.add(*approval_script("hang on"))
    first = alice.run("verify", "ver-1", "Create an article titled hang on")
    interrupt = first.interrupt
    # the confirmed write never answers: its outcome is unknown, so the user is asked (§14.3)
    second = alice.run("verify", "ver-2", resume=resume(interrupt, {"decision": "CONFIRM", "digest": interrupt["metadata"]["digest"]}))
    verify = second.interrupt
    assert verify["reason"] == "skillc.verify" and verify["metadata"]["tool"] == "cms_article_create"
    assert [v["value"]["error"] for v in second.of("CUSTOM", "skillc.verdict")] == ["TOOL_TIMEOUT"]
    bad = alice.run("verify", "ver-3", resume=resume(verify, {"verified": "yes"}))
    assert bad.status == 200 and (bad.events[-1]["type"], bad.events[-1]["code"]) == ("RUN_ERROR", "RESUME_INVALID")
    model.add(call("builtin_node_finish", output="Created it"))
    third = alice.run("verify", "ver-4", resume=resume(verify, {"verified": True}))
    assert third.outcome == {"type": "success"} and third.reply == "Created it"
    settled = third.of("CUSTOM", "skillc.write_settled")[0]["value"]
    assert (settled["status"], settled["via"]) == ("SUCCESS", "user")


def test_follow_up_then_reject(alice: Client, model: Any) -> None:
    model.add(ROUTE, call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
    first = alice.run("fu", "fu-1", "Create an article please")
    follow = first.interrupt
    assert follow["reason"] == "skillc.follow_up" and follow["message"] == "Which title?"
    assert follow["metadata"]["expected_fields"] == ["title"]
    model.add(call("cms_space_list"), call("cms_article_create", title="Autumn news", spaceId=3),
              call("builtin_node_approval", summary="Create Autumn news", toolName="cms_article_create"))
    # a client sends its history with the resume: the old message is not taken for a new one
    second = alice.run("fu", "fu-2", "Create an article please", msg_id="fu-1.m",
                       resume=resume(follow, {"text": "Autumn news"}))
    approval = second.interrupt
    assert approval["metadata"]["summary"] == "Title: Autumn news\nSpace: 3"
    third = alice.run("fu", "fu-3", resume=resume(approval, None, status="cancelled"))
    assert third.outcome == {"type": "success"} and "nothing was changed" in third.reply
    assert third.of("CUSTOM", "skillc.task_finished")[0]["value"]["state"] == "CANCELLED"
    assert invocations(alice, "fu", "cms_article_create") == []


def test_signatures_are_required_and_checked(alice: Client, served: Any) -> None:
    def status(resp: httpx.Response) -> tuple[int, str]:
        return resp.status_code, resp.json()["error"]["code"]

    assert status(alice.request("GET", "/api/sessions", headers={})) == (401, "AUTH_MISSING")
    forged = Client(served.url, "not-the-secret", alice.platform)
    assert status(forged.request("GET", "/api/sessions")) == (401, "AUTH_BAD_SIGNATURE")
    forged.close()
    other_body = alice.signed("POST", "/api/sessions", b'{"id": "x1"}')
    assert status(alice.request("POST", "/api/sessions", {"id": "x2"}, headers=other_body)) == (401, "AUTH_BAD_SIGNATURE")
    as_bob = alice.signed("GET", "/api/sessions")
    as_bob["X-Skillc-Identity"] = encode_identity({**alice.platform, "userId": 8})  # a swapped identity
    assert status(alice.request("GET", "/api/sessions", headers=as_bob)) == (401, "AUTH_BAD_SIGNATURE")

    old = sign_request(alice.secret, "GET", "/api/sessions", b"", alice.platform, now=1_000_000_000)
    assert status(alice.request("GET", "/api/sessions", headers=old)) == (401, "AUTH_EXPIRED")
    once = alice.signed("GET", "/api/sessions")
    assert alice.request("GET", "/api/sessions", headers=once).status_code == 200
    assert status(alice.request("GET", "/api/sessions", headers=once)) == (401, "AUTH_REPLAYED")
    assert httpx.get(served.url + "/healthz").json() == {"status": "ok"}  # health needs no identity
    ready = httpx.get(served.url + "/readyz").json()
    assert ready["ready"] and ready["auth"] == "hmac" and ready["mcp"] == {"cms": {"ok": True}}
    metrics = httpx.get(served.url + "/metrics")  # the telemetry module's renderer, mounted here
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")


def test_another_callers_session_is_refused(alice: Client, bob: Client, model: Any) -> None:
    opened = alice.request("POST", "/api/sessions", {"id": "alice-own"})
    assert opened.status_code == 201 and opened.json()["id"] == "alice-own"
    assert alice.request("POST", "/api/sessions", {"id": "alice-own"}).json()["error"]["code"] == "SESSION_EXISTS"
    for path in ("/api/sessions/alice-own", "/api/sessions/alice-own/pending", "/api/sessions/alice-own/trace"):
        resp = bob.request("GET", path)
        assert (resp.status_code, resp.json()["error"]["code"]) == (403, "SESSION_FORBIDDEN"), path
    run = bob.run("alice-own", "bob-1", "let me in")
    assert (run.status, run.error["code"]) == (403, "SESSION_FORBIDDEN")
    assert "alice-own" in [s["id"] for s in alice.request("GET", "/api/sessions").json()["sessions"]]
    assert "alice-own" not in [s["id"] for s in bob.request("GET", "/api/sessions").json()["sessions"]]
    assert bob.request("GET", "/api/sessions/nobody").json()["error"]["code"] == "SESSION_NOT_FOUND"


def test_a_repeated_run_id_is_not_run_twice(alice: Client, bob: Client, model: Any) -> None:
    model.add(ROUTE, call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
    first = alice.run("rep", "rep-1", "Create an article")
    asked = len(model.requests)
    again = alice.run("rep", "rep-1", "Create an article")
    assert again.events == first.events and len(model.requests) == asked
    assert [e["type"] for e in alice.trace("rep")].count("turn.started") == 1
    later = alice.refetch("rep-1", last_event_id=2)
    assert later.ids[0] == 3 and later.events == first.events[3:]
    conflict = alice.run("other-thread", "rep-1", "Create an article")
    assert (conflict.status, conflict.error["code"]) == (409, "RUN_ID_CONFLICT")
    assert bob.refetch("rep-1").error["code"] == "SESSION_FORBIDDEN"
    # the same user message again under a new runId starts nothing: the pending question stands
    same = alice.run("rep", "rep-2", "Create an article", msg_id="rep-1.m")
    assert same.interrupt["id"] == first.interrupt["id"] and len(model.requests) == asked


def _start(client: Client, thread: str, run_id: str, text: str) -> tuple[Any, Any, Stream]:
    """Open a run's stream and read it up to the held space lookup (the run is now busy)."""
    raw = client.run_body(thread, run_id, text)
    headers = {**client.signed("POST", "/agui", raw), "Content-Type": "application/json"}
    ctx = client.http.stream("POST", "/agui", content=raw, headers=headers)
    resp = ctx.__enter__()
    assert resp.status_code == 200
    stream = Stream(200)
    lines = resp.iter_lines()
    read_sse(lines, stream, until=lambda e: e.get("name") == "skillc.progress")
    return ctx, lines, stream


def test_one_run_per_session_and_sessions_run_concurrently(alice: Client, model: Any, gate: Path) -> None:
    model.add(ROUTE, call("cms_space_list"))
    ctx, resp, held = _start(alice, "busy", "busy-1", "Create an article titled Busy")
    try:
        busy = alice.run("busy", "busy-2", "and another thing")
        assert (busy.status, busy.error["code"]) == (409, "SESSION_BUSY")
        # another session is not held up by the busy one
        model.add(ROUTE, call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
        other = alice.run("free", "free-1", "Create an article")
        assert other.interrupt["reason"] == "skillc.follow_up"
        model.add(call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
        (gate / "release").write_text("", encoding="utf-8")
        read_sse(resp, held)
    finally:
        ctx.__exit__(None, None, None)
    check_stream(held)
    assert held.interrupt["reason"] == "skillc.follow_up"


def test_a_client_that_disconnects_does_not_lose_the_turn(alice: Client, model: Any, gate: Path) -> None:
    model.add(ROUTE, call("cms_space_list"))
    ctx, resp, partial = _start(alice, "gone", "gone-1", "Create an article titled Gone")
    ctx.__exit__(None, None, None)  # the client goes away mid-run
    model.add(call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
    (gate / "release").write_text("", encoding="utf-8")
    full = alice.refetch("gone-1")  # follows the run live until it ends
    check_stream(full)
    assert full.events[: len(partial.events)] == partial.events
    assert full.interrupt["reason"] == "skillc.follow_up"
    assert [e["type"] for e in alice.trace("gone")][-1] == "turn.reply"


def test_shutdown_lets_a_running_turn_finish(compiled: Path, fake_model: Any, tmp_path: Path) -> None:
    app = create_app(config_path=write_config(tmp_path, str(compiled), fake_model.url))
    ctx = app.state.ctx
    stopping = threading.Event()
    ctx.on_shutdown.append(stopping.set)
    server = ServerThread(app).__enter__()
    client = Client(server.url, SECRET, ALICE)
    try:
        (tmp_path / "gate" / "hold").write_text("", encoding="utf-8")
        fake_model.add(ROUTE, call("cms_space_list"))
        conn, _, _ = _start(client, "late", "late-1", "Create an article titled Late")
        conn.__exit__(None, None, None)  # nobody is listening any more
        stopper = threading.Thread(target=server.stop)
        stopper.start()
        assert stopping.wait(60)  # shutdown has begun, and the turn is still held in its tool call
        assert not ctx.runs.get("late-1").done
        fake_model.add(call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
        (tmp_path / "gate" / "release").write_text("", encoding="utf-8")
        stopper.join(60)
        assert not stopper.is_alive() and ctx.runs.get("late-1").done
    finally:
        client.close()
        server.stop()
    events = [json.loads(line) for line in (tmp_path / "traces" / "late.jsonl").read_text(encoding="utf-8").splitlines()]
    assert events[-1]["type"] == "turn.reply" and events[-1]["suspended"] is True
    assert fake_model.remaining == 0


def test_an_approval_answer_is_bound_to_the_arguments_it_saw(alice: Client, model: Any) -> None:
    model.add(*approval_script("First post"))
    first = alice.run("bound", "bound-1", "Create an article titled First post, then one titled Second post")
    old = first.interrupt
    # confirmed; the same node then asks to write something else: same interrupt id, new digest
    model.add(call("cms_article_create", title="Second post", spaceId=3),
              call("builtin_node_approval", summary="Create Second post", toolName="cms_article_create"))
    second = alice.run("bound", "bound-2", resume=resume(old, {"decision": "CONFIRM", "digest": old["metadata"]["digest"]}))
    new = second.interrupt
    assert new["id"] == old["id"] and new["metadata"]["digest"] != old["metadata"]["digest"]
    assert new["metadata"]["summary"] == "Title: Second post\nSpace: 3"
    replayed = alice.run("bound", "bound-3", resume=resume(new, {"decision": "CONFIRM", "digest": old["metadata"]["digest"]}))
    assert (replayed.events[-1]["type"], replayed.events[-1]["code"]) == ("RUN_ERROR", "APPROVAL_DIGEST_MISMATCH")
    assert replayed.events[-1]["metadata"]["pending"] == new
    assert [e["args"]["title"] for e in invocations(alice, "bound", "cms_article_create")] == ["First post"]
    rejected = alice.run("bound", "bound-4", resume=resume(new, {"decision": "REJECT", "digest": new["metadata"]["digest"]}))
    assert rejected.outcome == {"type": "success"} and "Second post" in rejected.reply
    assert [e["args"]["title"] for e in invocations(alice, "bound", "cms_article_create")] == ["First post"]


def test_a_message_sent_again_gets_the_reply_already_given(alice: Client, model: Any) -> None:
    model.add(ROUTE, call("builtin_node_fail", reason="nothing to do"))
    first = alice.run("again", "again-1", "Do nothing", msg_id="again-m1")
    assert first.outcome == {"type": "success"} and "nothing to do" in first.reply
    asked = len(model.requests)
    # the reply was lost on the way; the client sends the same message (same id) in a new run
    second = alice.run("again", "again-2", "Do nothing", msg_id="again-m1")
    assert second.outcome == {"type": "success"} and second.reply == first.reply
    assert len(model.requests) == asked and not second.of("TOOL_CALL_START")
    assert [e["type"] for e in alice.trace("again")].count("task.planned") == 1


def test_listing_and_checking_sessions_reads_no_history(alice: Client, bob: Client, served: Any) -> None:
    # GET /api/sessions (the console asks after every run) and the ownership check of a session
    # read each session's row only: a store with long sessions must not be read whole per request.
    assert alice.request("POST", "/api/sessions", {"id": "alice-rows"}).status_code == 201
    store = served.app.state.ctx.runtime.store
    whole = store.get_session

    def refused(session_id: str) -> Any:
        raise AssertionError(f"the whole session {session_id} was read")

    store.get_session = refused  # instance attribute: the class is untouched
    try:
        assert "alice-rows" in [s["id"] for s in alice.request("GET", "/api/sessions").json()["sessions"]]
        resp = bob.request("GET", "/api/sessions/alice-rows")
        assert (resp.status_code, resp.json()["error"]["code"]) == (403, "SESSION_FORBIDDEN")
        assert alice.request("POST", "/api/sessions", {"id": "alice-rows"}).json()["error"]["code"] == "SESSION_EXISTS"
    finally:
        store.get_session = whole


def test_a_malformed_request_keeps_a_plain_http_error(alice: Client) -> None:
    """Not a RunAgentInput, or nothing to run: the request is refused before any stream."""
    raw = b'{"threadId": "mal", "messages": []}'
    resp = alice.http.post("/agui", content=raw, headers={**alice.signed("POST", "/agui", raw),
                                                          "Content-Type": "application/json"})
    assert (resp.status_code, resp.json()["error"]["code"]) == (422, "INVALID_INPUT")
    nothing = alice.run("mal", "mal-1")
    assert (nothing.status, nothing.error["code"]) == (422, "NO_INPUT")


class _Kept(logging.Handler):
    """Keeps the records of one logger (whatever handlers other tests left on it)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_failed_run_ends_in_run_error_without_internal_detail(alice: Client, model: Any, fake_model: Any) -> None:
    """The model endpoint failing: RUN_ERROR with a code and a reference, never RUN_FINISHED; the
    end user sees neither the model's URL nor the upstream's body, the server log has both."""
    upstream = "upstream exploded: shard-7 credentials rejected"
    model.add(ROUTE, {"status": 500, "body": {"error": {"message": upstream}}})
    kept = _Kept()
    logging.getLogger("skillc.server").addHandler(kept)
    try:
        failed = alice.run("broken", "broken-1", "Please create an article titled Doomed")
    finally:
        logging.getLogger("skillc.server").removeHandler(kept)
    assert failed.status == 200 and failed.events[0]["type"] == "RUN_STARTED"
    last = failed.events[-1]
    assert last["type"] == "RUN_ERROR" and last["code"] == "MODEL_ERROR"
    assert not failed.of("RUN_FINISHED") and not failed.of("TEXT_MESSAGE_CONTENT")
    reference = last["metadata"]["reference"]
    assert reference in last["message"] and len(reference) >= 8
    shown = json.dumps(failed.events)
    host_port = fake_model.url.split("//", 1)[1].split("/", 1)[0]
    for secret in (host_port, "/chat/completions", upstream, "shard-7"):
        assert secret not in shown, secret
    logged = [r for r in kept.records if reference in r.getMessage()]
    assert len(logged) == 1 and upstream in logged[0].getMessage() and host_port in logged[0].getMessage()
    # the same message sent again (a client's retry) gets the turn's answer again: the failure,
    # not the stored error text as a successful reply
    again = alice.run("broken", "broken-1b", "Please create an article titled Doomed", msg_id="broken-1.m")
    assert again.events[-1]["type"] == "RUN_ERROR" and again.events[-1]["code"] == "MODEL_ERROR"
    assert not again.of("RUN_FINISHED") and not again.of("TEXT_MESSAGE_CONTENT")
    assert all(secret not in json.dumps(again.events) for secret in (host_port, upstream))
    # the session lives on: the next message runs normally
    model.add(call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
    again = alice.run("broken", "broken-2", "Create an article please")
    assert again.events[-1]["type"] == "RUN_FINISHED" and again.interrupt["reason"] == "skillc.follow_up"
