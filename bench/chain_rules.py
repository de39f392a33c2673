"""Benchmark: the cost of a tool call with 0, 5 and 20 contract rules, side by side.

Run from the checkout: `python bench/chain_rules.py [--quick]` (bench/chain.py prints the same
rows). Three skills of one compiled studio differ only in the rules of their read tool
`check_order`; each round times `run_chain` of that call (all of the chain's steps, the rules
step included, the evidence written to a `:memory:` store, a gateway stub answering at once) for
the three call by call (one call of each count in turn, the order rotating from round to round),
so all three meet the same load at the same moment. Each call is timed on its own and a round's
figure for a count is the median of its calls, so a call that another process preempted (an
outlier) does not count. Each row is the median of the rounds' figures with their spread
(min-max), and the median of the per-round ratios to no rules with theirs. The rules are typical
ones: a looked-up record's field, an enum-like `in`, a range, an `exists` over evidence, exact
decimal arithmetic. Target: 5 rules within 1.2x of none, on the median per-round ratio (printed,
not asserted).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme",
            "organType": "COMPANY", "deptPath": "/1/9"}
ORDER = {"id": "W1", "status": "pending", "total": 54.5, "items": [{"sku": "a", "price": 10}, {"sku": "b", "price": 44.5}]}
ARGS = '{"order_id": "W1", "reason": "no longer needed", "qty": 2}'
TYPICAL = [
    "latest.get_order.status == 'pending'",
    "args.reason in ['no longer needed', 'ordered by mistake', 'found cheaper']",
    "args.qty > 0 && args.qty <= 10",
    "evidence.get_order.exists(o, o.id == args.order_id)",
    "sum(latest.get_order.items.map(i, decimal(i.price))) == decimal(latest.get_order.total)",
]
COUNTS = (0, 5, 20)


def _contract(count: int) -> str:
    rules = [{"name": f"r{i}", "expr": TYPICAL[i % len(TYPICAL)], "message": "not allowed"} for i in range(count)]
    check: dict[str, Any] = {"args": {"order_id": {"sources": ["USER", "MODEL"]}, "reason": {"sources": ["MODEL"]},
                                      "qty": {"sources": ["MODEL"]}},
                             "success": {"path": "ok", "op": "TRUTHY"}}
    if rules:
        check["rules"] = rules
    return json.dumps({"tools": {"get_order": {"args": {"order_id": {"sources": ["USER", "MODEL"]}},
                                               "success": {"path": "status", "op": "EXISTS"}},
                                 "check_order": check}})


class InstantGateway:
    """A gateway stub: two tools, every call answered at once."""

    def __init__(self) -> None:
        from skillc.runtime.mcp.result import ToolInfo

        schema = {"type": "object"}
        self.catalog = {t: ToolInfo(t, None, None, schema, "stub") for t in ("get_order", "check_order")}
        self._answers = {"get_order": ORDER, "check_order": {"ok": True}}

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None) -> Any:
        """Answer `tool` at once."""
        from skillc.runtime.mcp.result import CallOutcome

        return CallOutcome(self._answers[tool], None, "", "stub")


async def fixtures(out: Path, gateway: Any = None) -> tuple[dict[int, Any], Any]:
    """count -> a coroutine function making one `check_order` call through the whole chain
    (over `gateway`, or the instant stub), and the session env they share (which each call
    leaves as it found it: the bench measures one call, not a session growing by a record a call)."""
    from skillc.compiler import ir
    from skillc.compiler.build import compile_studio
    from skillc.runtime.call.chain import run_chain
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime
    from skillc.runtime.seam.state import NodeState, TaskState
    from skillc.runtime.store import Store

    skills = [ir.SkillProfile(skill_key=f"bench.rules{c}", skill_name=f"{c} rules", skill_manual="m",
                              skill_contract=_contract(c), tool_names=["get_order", "check_order"]) for c in COUNTS]
    agent = ir.AgentProfile(agent_code="bench", agent_name="Bench", skills=[s.skill_key for s in skills])
    result = compile_studio(ir.Studio(agents=[agent], skills=skills), out)
    assert not result.rejected, result.rejected
    runtime = Runtime(load_compiled(out), gateway or InstantGateway(), ScriptedModel(), Store(":memory:"), Settings(),
                      seed=7)
    env = (await runtime.open_session(PLATFORM, session_id="bench")).env
    env.session.turn = 1
    env.session.user_messages.append({"turn": 1, "text": "cancel W1"})
    env.task = TaskState(id="t1", session=env.id, agent="bench", message="cancel W1", turn=1)
    calls: dict[int, Any] = {}
    for c in COUNTS:
        node = NodeState(id=f"n{c}", task="t1", skill=f"bench.rules{c}", state="RUNNING")
        env.task.nodes[node.id] = node
        env.task.order.append(node.id)
        looked = await run_chain(env, node, "get_order", '{"order_id": "W1"}')
        assert looked.ok, looked
        kept = list(node.evidence)

        async def call(node: Any = node, kept: list[str] = kept) -> None:
            node.fp_sig, node.fp_count = None, 0  # no fingerprint streak
            result = await run_chain(env, node, "check_order", ARGS)
            assert result.ok, result.observation()
            for eid in node.evidence[len(kept):]:  # every call meets the same session, not one grown by the last
                env.evidence.pop(eid, None)
                env.dirty.pop(eid, None)
            node.evidence[:] = kept

        calls[c] = call
    return calls, env


CANNED = [{"name": "get_order", "responses": [{"json": ORDER}]}, {"name": "check_order", "responses": [{"json": {"ok": True}}]}]


async def bench_rules(n: int, rounds: int, mcp: bool = False) -> dict[int, list[float]]:
    """count -> seconds per call, one value per round (the order rotating over the rounds); with
    `mcp`, each call also makes its round trip to an in-process MCP server (the scenario runner's
    canned server, answering at once)."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        gateway = None
        if mcp:
            from skillc.runtime.mcp.gateway import McpGateway
            from skillc.scenario.canned import build_canned_server

            canned = build_canned_server(CANNED, on_invoked=lambda tool, a: None, on_crash=lambda: None)
            gateway = await stack.enter_async_context(McpGateway({"canned": canned}, timeout=30))
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="skillc-bench-rules-"))
        calls, _ = await fixtures(Path(tmp), gateway)
        for call in calls.values():
            for _ in range(min(n, 50)):
                await call()
        seen: dict[int, list[float]] = {c: [] for c in COUNTS}
        clock = time.perf_counter
        for r in range(rounds):
            order = COUNTS[r % len(COUNTS):] + COUNTS[:r % len(COUNTS)]
            samples: dict[int, list[float]] = {c: [] for c in COUNTS}
            gc.collect()
            gc.disable()
            try:
                for _ in range(n):
                    for c in order:  # one call of each count in turn: all three meet the same load
                        start = clock()
                        await calls[c]()
                        samples[c].append(clock() - start)
            finally:
                gc.enable()
            for c in COUNTS:  # a call another process preempted is an outlier the median ignores
                seen[c].append(statistics.median(samples[c]))
        return seen


def rows(seen: dict[int, list[float]], what: str) -> list[str]:
    """The table: one row per rule count, median (min-max) and the ratio to no rules."""
    out = []
    for c in COUNTS:
        med = statistics.median(seen[c])
        ratios = round_ratios(seen, c)
        out.append(f"  call with {c:>2} rules ({what})  {med * 1e6:10.1f} µs   "
                   f"({min(seen[c]) * 1e6:.1f}-{max(seen[c]) * 1e6:.1f})   {statistics.median(ratios):5.2f}x of none "
                   f"per round ({min(ratios):.2f}-{max(ratios):.2f})")
    return out


def round_ratios(seen: dict[int, list[float]], count: int) -> list[float]:
    """`count` rules against none within each round (measured back to back, so a change of load
    between rounds cancels out)."""
    return [a / b for a, b in zip(seen[count], seen[0])]


def target(seen: dict[int, list[float]], what: str) -> str:
    """The target line: 5 rules within 1.2x of none, on the median of the per-round ratios (the
    ratio of the medians beside it)."""
    per_round = round_ratios(seen, 5)
    ratio = statistics.median(per_round)
    of_medians = statistics.median(seen[5]) / statistics.median(seen[0])
    return (f"target 5 rules within 1.2x of none ({what}): {ratio:.2f}x per round "
            f"({min(per_round):.2f}-{max(per_round):.2f}; ratio of medians {of_medians:.2f}x)  "
            f"{'MET' if ratio <= 1.2 else 'MISSED'}")


async def measure(n: int, rounds: int) -> list[str]:
    """Both tables and their targets: the chain alone, and the call with its MCP round trip."""
    alone = await bench_rules(n, rounds)
    full = await bench_rules(max(n // 4, 50), rounds, mcp=True)
    return (rows(alone, "chain alone, instant stub") + rows(full, "chain + in-process MCP round trip")
            + [target(alone, "chain alone"), target(full, "chain + in-process MCP round trip")])


def main() -> int:
    """Parse options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds (a smoke run)")
    args = parser.parse_args()
    n, rounds = (200, 5) if args.quick else (1000, 9)
    lines = asyncio.run(measure(n, rounds))
    print(f"skillc bench/chain_rules.py  (n={n} per round, median of {rounds} interleaved rounds; "
          f"python {sys.version.split()[0]})")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
