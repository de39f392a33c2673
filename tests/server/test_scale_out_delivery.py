"""Lost replies judged by delivery (issue 25, findings 3 and 4), with real `skillc serve` workers
on one real PostgreSQL database and bookings counted at the ledger MCP server.

A reply counts as delivered once the client has read its run's stream to RUN_FINISHED. Here the
client cuts the stream while the (slow) booking is under way, so the reply is stored but never
reaches it; the same text is then sent again *with a new message id*, as a person retyping or an
AG-UI client (which mints an id per message) does: to the same worker, or to the other one after
the first was SIGKILLed. Either way the stored reply comes back and nothing is booked again.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers.serve_workers import Caller, invocations, outcome, reply_text
from helpers.wait import wait_for
from pg_cluster import query
from test_scale_out import _call, compiled  # noqa: F401  (a fixture)
from test_scale_out_durable import cluster, fake_model, farm  # noqa: F401  (fixtures)

TEXT = "Book 270 under reference R-7101"


def _cut_after_first_event(caller: Caller, worker: Any, thread: str, run_id: str, text: str) -> None:
    """Post a run and close the connection after its first event (an SSE cut)."""
    body = json.dumps({"threadId": thread, "runId": run_id,
                       "messages": [{"id": f"{run_id}.m", "role": "user", "content": text}]}).encode()
    headers = {**caller._headers("POST", "/agui", body), "Accept": "text/event-stream",
               "Content-Type": "application/json"}
    with httpx.Client(timeout=60) as http, http.stream("POST", worker.url + "/agui", content=body,
                                                       headers=headers) as resp:
        assert resp.status_code == 200
        for line in resp.iter_lines():
            if line.startswith("data: "):
                return  # the client goes away: the run goes on, its reply is never read


@pytest.fixture
def booked_unread(farm: dict[str, Any], fake_model: Any) -> Iterator[dict[str, Any]]:  # noqa: F811
    """Worker A booked R-7101 (slowly) for a client that cut the stream: the reply is stored,
    the lease given back, the reply not delivered."""
    a, b = farm["workers"]({"delay": 3.0}, {})
    fake_model.add(_call("ledger_post", ref="R-7101", amount=270), _call("builtin_node_finish", output="Booked R-7101"))
    _cut_after_first_event(farm["caller"], a, "lost", "lost-1", TEXT)
    url = farm["url"]
    wait_for(lambda: query(url, "SELECT turn, delivered FROM replies WHERE session = 'lost'") == [(1, 0)],
             "the turn's reply to be stored")
    wait_for(lambda: query(url, "SELECT holder FROM leases WHERE session = 'lost'") == [], "the lease to be given back")
    yield {**farm, "a": a, "b": b}


@pytest.mark.parametrize("where", ["same-worker", "other-worker-after-a-kill"])
def test_the_same_text_after_an_unread_reply_gets_that_reply_whatever_its_message_id(
        booked_unread: dict[str, Any], where: str) -> None:
    farm, records, url = booked_unread, booked_unread["records"], booked_unread["url"]
    worker = farm["a"]
    if where != "same-worker":
        farm["a"].kill()
        worker = farm["b"]
    again = farm["caller"].run(worker, "lost", "lost-2", TEXT)  # a new runId and a new message id
    assert again["status"] == 200 and outcome(again) == {"type": "success"}, again
    assert "Booked R-7101" in reply_text(again)
    assert invocations(records, "ledger_post") == [{"amount": 270, "ref": "R-7101"}]
    replayed = [e for e in again["events"] if e["type"] == "CUSTOM"]
    assert not any(e.get("name") == "skillc.write_settled" for e in replayed)  # nothing ran again
    # read to RUN_FINISHED this time: delivered, so the same text later is a new request
    wait_for(lambda: query(url, "SELECT delivered FROM replies WHERE session = 'lost' ORDER BY turn DESC LIMIT 1")
             == [(1,)], "the read reply to be marked delivered")


def test_a_reply_read_to_its_end_is_not_given_again(farm: dict[str, Any], fake_model: Any) -> None:  # noqa: F811
    """The other side of the rule: once read, the reply is delivered; the next turn's reply does
    not carry it and the same text is a new request (the ledger is asked again)."""
    (a,) = farm["workers"]({})
    caller, records = farm["caller"], farm["records"]
    fake_model.add(_call("ledger_post", ref="R-7201", amount=5), _call("builtin_node_finish", output="Booked R-7201"))
    first = caller.run(a, "read", "read-1", "Book 5 under reference R-7201")
    assert "Booked R-7201" in reply_text(first)
    wait_for(lambda: query(farm["url"], "SELECT delivered FROM replies WHERE session = 'read'") == [(1,)],
             "the reply to be marked delivered")
    fake_model.add(_call("ledger_post", ref="R-7201", amount=5),
                   *[_call("builtin_node_fail", reason="already booked")] * 3)  # the 409 ends the node
    second = caller.run(a, "read", "read-2", "Book 5 under reference R-7201")
    assert "Booked R-7201" not in reply_text(second), second  # not the first reply again
    assert len(invocations(records, "ledger_post")) == 2  # the second one asked (and was told 409)
