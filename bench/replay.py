"""Benchmark: `skillc replay` judging recorded tool calls, beside the live chain on the same calls
(not a test; prints one table).

The workload is recorded billing conversations of 20 tool calls each over the compiled example
studio (`skillc.generated`, agent `billing`): an order listing, five order reads, ten invoice
lookups, a void of an invented invoice number (refused), a void the user confirms (approval
asked, then run approved), its repeat (an idempotent replay) and one more lookup.

- replay: `skillc.runtime.replay.replay` over a JSONL file of those conversations, reading
  included: calls judged per second;
- live chain: the same calls through `chain.run_chain` on a live `Session` (a SQLite store in
  memory, a gateway stub answering each call with its recorded answer at once), one session per
  conversation, a gated write run again approved as after the user's CONFIRM: calls per second.

The two are measured in interleaved rounds (which side goes first alternates), so load from other
processes falls on both alike; the table gives each side's median and spread (min-max), per
second of wall time and per CPU second of this one-threaded process (what one core does, whatever
else the machine runs). Then one full replay of 1,000 conversations (20,000 calls). Targets
(issue 23), on one core: at least 2,000 calls per second, the 1,000 conversations within 10 s.

    python bench/replay.py [--conversations 200] [--rounds 5] [--full 1000]
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

PLATFORM = {"userId": 7, "organId": 9, "deptPath": "/1/9"}
CALLS_PER_CONVERSATION = 20


def conversation(n: int) -> dict[str, Any]:
    """One recorded conversation of 20 tool calls (see the module's docstring)."""
    invoices = [f"INV-{n}-{k:02d}" for k in range(10)]
    orders = [f"SO-{n}-{k}" for k in range(5)]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"Which orders are open? Also check invoices {', '.join(invoices)}; "
                                    f"void {invoices[0]}, it was a duplicate"}]
    k = 0

    def step(tool: str, args: dict[str, Any], answer: Any) -> None:
        nonlocal k
        k += 1
        cid = f"call_{n}_{k}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "content": json.dumps(answer)})

    step("inv_order_list", {"status": "OPEN"}, {"code": 0, "data": {"records": [
        {"orderNo": o, "buyerName": f"Buyer {o}"} for o in orders], "total": len(orders)}})
    for o in orders:
        step("inv_order_get", {"orderNo": o}, {"code": 0, "data": {"orderNo": o, "status": "OPEN", "buyerName": "B",
                                                                   "items": [{"code": "G", "qty": 1, "amount": 10}]}})
    for inv in invoices:
        step("inv_invoice_find", {"invoiceNo": inv}, {"code": 0, "data": {"total": 1, "records": [
            {"invoiceNo": inv, "status": "ISSUED"}]}})
    voided = {"code": 0, "data": {"invoiceNo": invoices[0], "status": "VOIDED"}}
    step("inv_invoice_void", {"invoiceNo": f"INV-X-{n}", "reason": "duplicate"}, voided)
    messages.append({"role": "assistant", "content": f"Void {invoices[0]}?"})
    messages.append({"role": "user", "content": "yes"})
    step("inv_invoice_void", {"invoiceNo": invoices[0], "reason": "duplicate"}, voided)
    step("inv_invoice_void", {"invoiceNo": invoices[0], "reason": "duplicate"}, voided)
    step("inv_invoice_find", {"invoiceNo": invoices[0]}, {"code": 0, "data": {"total": 1, "records": [
        {"invoiceNo": invoices[0], "status": "VOIDED"}]}})
    assert k == CALLS_PER_CONVERSATION
    return {"id": f"bench-{n}", "messages": messages}


def write_log(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for n in range(count):
            fh.write(json.dumps(conversation(n)) + "\n")


class RecordedGateway:
    """The live side's gateway: every call answered at once with the answer queued for it."""

    catalog: dict[str, Any] = {}

    def __init__(self) -> None:
        self.next: Any = None

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None) -> Any:
        """The queued answer."""
        from skillc.runtime.mcp.result import CallOutcome

        return CallOutcome(self.next, None, "", "stub")


def recorded_calls(doc: dict[str, Any]) -> list[tuple[str, str, Any, list[str]]]:
    """(tool, raw arguments, answer, user texts so far) per call of one conversation."""
    answers = {m["tool_call_id"]: json.loads(m["content"]) for m in doc["messages"] if m["role"] == "tool"}
    said: list[str] = []
    out = []
    for m in doc["messages"]:
        if m["role"] == "user":
            said.append(m["content"])
        for tc in m.get("tool_calls") or ():
            out.append((tc["function"]["name"], tc["function"]["arguments"], answers[tc["id"]], list(said)))
    return out


SKILL_OF = {"inv_order_list": "inv.order.lookup", "inv_order_get": "inv.order.lookup",
            "inv_invoice_find": "inv.invoice.void", "inv_invoice_void": "inv.invoice.void"}


async def live_round(runtime: Any, gateway: RecordedGateway, docs: list[dict[str, Any]]) -> tuple[float, float]:
    """The conversations' calls through run_chain on live sessions; (wall, CPU) seconds taken."""
    from skillc.runtime.call.chain import run_chain
    from skillc.runtime.words.errors import ErrorName
    from skillc.runtime.seam.state import NodeState, TaskState

    work = [recorded_calls(d) for d in docs]
    gc.collect()
    gc.disable()
    start, cpu = time.perf_counter(), time.process_time()
    try:
        for n, calls in enumerate(work):
            env = (await runtime.open_session(PLATFORM)).env
            env.task = TaskState(id="t1", session=env.id, agent="billing", message="", turn=1)
            nodes: dict[str, NodeState] = {}
            for tool, raw, answer, said in calls:
                while len(env.session.user_messages) < len(said):
                    env.session.user_messages.append({"turn": 1, "text": said[len(env.session.user_messages)]})
                skill = SKILL_OF[tool]
                node = nodes.get(skill)
                if node is None:
                    node = nodes[skill] = NodeState(id=f"n{len(nodes) + 1}", task="t1", skill=skill, state="RUNNING",
                                                    deps=[x.id for x in nodes.values()])
                    for other in nodes.values():
                        if other is not node:
                            other.deps.append(node.id)
                    env.task.nodes[node.id] = node
                gateway.next = answer
                result = await run_chain(env, node, tool, raw)
                if result.error == ErrorName.APPROVAL_REQUIRED and said and said[-1] == "yes":
                    await run_chain(env, node, tool, raw, approved=True)
                    node.pending = None
    finally:
        gc.enable()
    return time.perf_counter() - start, time.process_time() - cpu


def replay_round(studio: Any, log: Path) -> tuple[float, float, int]:
    """One replay of the log; (wall seconds, CPU seconds, calls judged)."""
    from skillc.runtime.replay import JudgeOptions, replay

    gc.collect()
    gc.disable()
    start, cpu = time.perf_counter(), time.process_time()
    try:
        report = replay(studio, [str(log)], JudgeOptions(agent="billing", platform=PLATFORM))
    finally:
        gc.enable()
    return time.perf_counter() - start, time.process_time() - cpu, len(report.calls())


def _spread(samples: list[float]) -> str:
    return f"{min(samples):,.0f}-{max(samples):,.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=200, help="conversations per round (default 200)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--full", type=int, default=1000, help="conversations of the full run (default 1000)")
    args = parser.parse_args()

    import skillc.generated
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime
    from skillc.runtime.store import Store

    studio = load_compiled(Path(skillc.generated.__file__).parent)
    gateway = RecordedGateway()
    runtime = Runtime(studio, gateway, ScriptedModel(), Store(":memory:"), Settings(), seed=7)
    docs = [conversation(n) for n in range(args.conversations)]
    calls = len(docs) * CALLS_PER_CONVERSATION
    # calls per second of wall time, and per CPU second of this one-threaded process (one core's
    # worth: on a machine shared with other work the wall-clock rate says more about the load)
    replay_rates: list[float] = []
    live_rates: list[float] = []
    replay_cpu: list[float] = []
    live_cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="skillc-bench-replay-") as tmp:
        log = Path(tmp) / "round.jsonl"
        write_log(log, args.conversations)
        for r in range(args.rounds):
            sides = ("replay", "live") if r % 2 == 0 else ("live", "replay")
            for side in sides:
                if side == "replay":
                    seconds, cpu, judged = replay_round(studio, log)
                    assert judged == calls, (judged, calls)
                    replay_rates.append(judged / seconds)
                    replay_cpu.append(judged / cpu)
                else:
                    seconds, cpu = asyncio.run(live_round(runtime, gateway, docs))
                    live_rates.append(calls / seconds)
                    live_cpu.append(calls / cpu)
        full = Path(tmp) / "full.jsonl"
        write_log(full, args.full)
        full_seconds, full_cpu, full_calls = replay_round(studio, full)
    rate, live = statistics.median(replay_rates), statistics.median(live_rates)
    rate_cpu, live_cpu_rate = statistics.median(replay_cpu), statistics.median(live_cpu)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"skillc replay benchmark: {args.conversations} conversations x {CALLS_PER_CONVERSATION} calls per round, "
          f"{args.rounds} interleaved rounds (medians, spread min-max); load average {load:.1f} on "
          f"{os.cpu_count()} cores")
    print(f"  {'':<32} {'calls/s (wall)':>15} {'spread':>13} {'calls/CPU-s':>12} {'spread':>13}")
    print(f"  {'replay (reading included)':<32} {rate:>15,.0f} {_spread(replay_rates):>13} {rate_cpu:>12,.0f} "
          f"{_spread(replay_cpu):>13}")
    print(f"  {'live chain (run_chain, SQLite)':<32} {live:>15,.0f} {_spread(live_rates):>13} {live_cpu_rate:>12,.0f} "
          f"{_spread(live_cpu):>13}")
    print(f"  {'replay / live':<32} {rate / live:>14.2f}x {'':>13} {rate_cpu / live_cpu_rate:>11.2f}x")
    print(f"  full run: {full_calls:,} calls of {args.full:,} conversations in {full_seconds:.2f} s wall, "
          f"{full_cpu:.2f} s CPU ({full_calls / full_cpu:,.0f} calls per CPU second)")
    met = rate_cpu >= 2000 and full_cpu <= 10 * args.full / 1000
    print("target (one core: CPU time of this one-threaded process): >= 2,000 calls/s and 1,000 conversations "
          f"of 20 calls within 10 s: {'MET' if met else 'MISSED'}"
          + ("" if full_seconds <= 10 * args.full / 1000 else f" (wall clock {full_seconds:.1f} s under load {load:.1f})"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
