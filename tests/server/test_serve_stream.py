"""A run's SSE response in as few writes as it can (issue 28): a run that ends within the linger
is the headers, one body and the end, back to back; a slower run still shows its events before it
ends; the reply is acknowledged after the response ended, never for a client gone before it; and
a session's next run waits for that acknowledgement."""
from __future__ import annotations

import asyncio
from typing import Any

from skillc.runtime.server.run_stream import RunStream
from skillc.runtime.server.runs import RunLog


class Wire:
    """An ASGI receive/send pair that records what was sent (and when the client goes away)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.log: list[str] = []

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.log.append("end" if message["type"] == "http.response.body" and not message["more_body"] else "write")

    def bodies(self) -> list[tuple[bytes, bool]]:
        return [(m["body"], m["more_body"]) for m in self.sent if m["type"] == "http.response.body"]


def _run(wire: Wire) -> RunLog:
    run = RunLog(run_id="r1", thread_id="t1", owner="9:7")

    async def ack() -> None:
        wire.log.append("ack")

    run.acknowledge = ack
    return run


async def _finish(run: RunLog, events: int, gap: float = 0.0) -> None:
    for k in range(events):
        if gap:
            await asyncio.sleep(gap)
        run.append(f'{{"type":"E{k}"}}')
    run.finished = True
    run.close()


def test_a_run_that_ends_within_the_linger_is_one_body_with_the_end() -> None:
    async def go() -> Wire:
        wire = Wire()
        run = _run(wire)
        run.append('{"type":"RUN_STARTED"}')
        turn = asyncio.create_task(_finish(run, 3, gap=0.001))
        await RunStream(run, 0, linger=1.0)({"type": "http"}, wire.receive, wire.send)
        await turn
        return wire

    wire = asyncio.run(go())
    assert [m["type"] for m in wire.sent] == ["http.response.start", "http.response.body"]
    body, more = wire.bodies()[0]
    assert not more and body.decode().count("data: ") == 4 and body.decode().startswith("id: 0\n")
    assert wire.log == ["write", "end", "ack"]  # acknowledged after the end, not before it


def test_a_run_ended_before_the_first_write_goes_with_its_length() -> None:
    """The whole body is known: sent with content-length, so the server writes no chunked end
    (one write fewer; the client reads a length). A run still going is sent chunked."""
    async def go(linger: float, gap: float) -> Wire:
        wire = Wire()
        run = _run(wire)
        run.append('{"type":"RUN_STARTED"}')
        turn = asyncio.create_task(_finish(run, 2, gap=gap))
        await RunStream(run, 0, linger=linger)({"type": "http"}, wire.receive, wire.send)
        await turn
        return wire

    wire = asyncio.run(go(linger=1.0, gap=0.0))
    headers = dict(wire.sent[0]["headers"])
    body, more = wire.bodies()[0]
    assert not more and headers[b"content-length"] == str(len(body)).encode()
    assert headers[b"content-type"] == b"text/event-stream; charset=utf-8"
    slow = asyncio.run(go(linger=0.001, gap=0.05))
    assert b"content-length" not in dict(slow.sent[0]["headers"]) and len(slow.bodies()) >= 2


def test_a_slow_run_shows_its_events_before_it_ends() -> None:
    async def go() -> Wire:
        wire = Wire()
        run = _run(wire)
        turn = asyncio.create_task(_finish(run, 3, gap=0.05))
        await RunStream(run, 0, linger=0.005)({"type": "http"}, wire.receive, wire.send)
        await turn
        return wire

    bodies = asyncio.run(go()).bodies()
    assert len(bodies) >= 3 and all(more for _, more in bodies[:-1]) and not bodies[-1][1]
    assert b"".join(b for b, _ in bodies).decode().count("data: ") == 3


def test_a_client_gone_before_the_end_acknowledges_nothing() -> None:
    async def go() -> Wire:
        wire = Wire()
        run = _run(wire)
        run.append('{"type":"RUN_STARTED"}')

        async def turn() -> None:
            await asyncio.sleep(0.02)
            wire.gone.set()  # the client goes away while the run still runs
            await asyncio.sleep(0.02)
            await _finish(run, 2)

        task = asyncio.create_task(turn())
        await RunStream(run, 0, linger=0.001, keepalive=10.0)({"type": "http"}, wire.receive, wire.send)
        await task
        return wire

    wire = asyncio.run(go())
    assert "ack" not in wire.log and "end" not in wire.log


def test_the_next_run_of_a_session_waits_for_the_last_ones_acknowledgement(alice: Any, model: Any,
                                                                            monkeypatch: Any) -> None:
    """The acknowledgement is stored after the response ended; a run the client sends at once with
    the same text (a new message id: a person sending it again) must see the reply delivered, or
    it would be answered with the stored reply instead of being a new request."""
    from skillc.runtime.session import Session

    from test_serve_agui import ROUTE, call

    slow = Session.acknowledge

    async def acknowledge(self: Session, turn: int) -> None:
        await asyncio.sleep(0.3)  # the store slow to mark the reply delivered
        await slow(self, turn)

    monkeypatch.setattr(Session, "acknowledge", acknowledge)
    model.add(ROUTE, call("builtin_node_fail", reason="nothing to do"))
    first = alice.run("ackorder", "ackorder-1", "Do nothing", msg_id="ackorder-m1")
    assert first.outcome == {"type": "success"}
    asked = len(model.requests)
    model.add(ROUTE, call("builtin_node_fail", reason="nothing again"))
    second = alice.run("ackorder", "ackorder-2", "Do nothing", msg_id="ackorder-m2")
    assert len(model.requests) == asked + 2 and "nothing again" in second.reply
