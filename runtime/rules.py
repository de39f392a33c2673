"""Running a tool's compiled rules (docs/reference/rules.md): the scope a rule reads and the
verdict of all of them.

`Scope` is what generated rule code calls `r`: the bound arguments, platform, shared values,
inputs, the clock, and evidence by tool (the response bodies this node may see, §9 order,
newest first). `judge` runs every rule of a tool — never stopping at the first failure — and
sorts them into held, violated, undecidable and not applying (a `when` guard that is false).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Sequence

from skillc.runtime.cel import Undecidable, eq
from skillc.runtime.context import NodeContext
from skillc.runtime.skillmeta import RuleMeta
from skillc.runtime.vocab import RuleStatus


class Scope:
    """The names a rule sees. `records` yields (tool, response body) pairs in §9 order (this
    node's newest first, then upstream nodes); it is read once, when a rule first asks."""

    __slots__ = ("args", "platform", "shared", "inputs", "_now", "_clock", "vars", "_records", "_seen", "_by_tool")

    def __init__(self, *, args: Any, platform: Any, shared: Any, inputs: Any, now: datetime | float,
                 records: Callable[[], Iterable[tuple[str, Any]]], vars: dict[str, Any] | None = None) -> None:
        self.args = args
        self.platform = platform
        self.shared = shared
        self.inputs = inputs
        # `now` as a timestamp, or the clock's epoch seconds (made a timestamp only if a rule reads it)
        self._now: datetime | None = now if isinstance(now, datetime) else None
        self._clock: float = 0.0 if isinstance(now, datetime) else now
        self.vars = vars or {}
        self._records = records
        self._seen: list[tuple[str, Any]] | None = None
        self._by_tool: dict[str, list[Any]] = {}

    @property
    def now(self) -> datetime:
        """`now`: the runtime clock as a UTC timestamp."""
        if self._now is None:
            self._now = datetime.fromtimestamp(self._clock, timezone.utc)
        return self._now

    def _all(self) -> list[tuple[str, Any]]:
        if self._seen is None:
            self._seen = list(self._records())
        return self._seen

    def evidence(self, tool: str) -> list[Any]:
        """`evidence.TOOL`: the tool's successful response bodies, newest first."""
        hit = self._by_tool.get(tool)
        if hit is None:
            hit = self._by_tool[tool] = [body for t, body in self._all() if t == tool]
        return hit

    def latest(self, tool: str) -> Any:
        """`latest.TOOL`: the newest one; undecidable when there is none."""
        found = self.evidence(tool)
        if not found:
            raise Undecidable(f"latest.{tool}", f"no successful {tool} response in evidence yet: call {tool} first")
        return found[0]

    def origin(self, value: Any, what: str) -> Any:
        """`origin(args.PATH)`: the nearest JSON object inside evidence that holds `value` as one of
        its fields (or keeps an object under `value` as its key), searched newest record first."""
        if isinstance(value, (dict, list)) or value is None:
            raise Undecidable(f"origin({what})", "only a scalar argument's origin can be looked up")
        for _, body in self._all():
            hit = _holder(body, value)
            if hit is not None:
                return hit
        raise Undecidable(f"origin({what})", f"the value {value!r} was not found in any record in evidence")

    def var(self, name: str) -> Any:
        """A variable given to `skillc rules eval --vars` beyond the contract's names."""
        if name not in self.vars:
            raise Undecidable(name, "no such variable")
        return self.vars[name]


def _holder(body: Any, value: Any) -> dict | None:
    """The first object (depth first, document order) holding `value` as a field's value, or an
    object stored under the key `value`."""
    stack: list[Any] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(v, (dict, list)) and type(v) is type(value) and eq(v, value):
                    return node
            if isinstance(value, str) and isinstance(node.get(value), dict):
                return node[value]
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return None


@dataclass(slots=True)
class Outcome:
    """One rule's verdict on one call."""

    rule: RuleMeta
    status: RuleStatus
    why: str = ""  # undecidable: what was missing and why

    def describe(self) -> dict[str, Any]:
        """The rule as the model's observation shows it."""
        out: dict[str, Any] = {"rule": self.rule.name, "status": str(self.status), "message": self.rule.message}
        if self.why:
            out["undecidable"] = self.why
        return out


@dataclass
class Verdict:
    """Every rule of a call, sorted by outcome."""

    outcomes: list[Outcome] = field(default_factory=list)

    def _with(self, status: RuleStatus) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def held(self) -> list[Outcome]:
        """Rules that applied and were true."""
        return self._with(RuleStatus.HELD)

    @property
    def failed(self) -> list[Outcome]:
        """Rules that refuse the call: false ones, then undecidable ones."""
        return self._with(RuleStatus.VIOLATED) + self._with(RuleStatus.UNDECIDABLE)

    def __iter__(self) -> Iterator[Outcome]:
        return iter(self.outcomes)


def judge(rules: Sequence[RuleMeta], scope: Scope) -> Verdict:
    """Run every rule (a broken one fails closed as undecidable, naming the error)."""
    verdict = Verdict()
    add = verdict.outcomes.append
    for rule in rules:
        try:
            value = rule.check(scope)
        except Undecidable as exc:
            add(Outcome(rule, RuleStatus.UNDECIDABLE, str(exc)))
            continue
        except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
            add(Outcome(rule, RuleStatus.UNDECIDABLE, f"{type(exc).__name__}: {exc}"))
            continue
        add(Outcome(rule, _HELD if value else (_SKIPPED if value is None else _VIOLATED)))
    return verdict


_HELD, _VIOLATED, _SKIPPED = RuleStatus.HELD, RuleStatus.VIOLATED, RuleStatus.SKIPPED


def call_scope(ctx: NodeContext, args: dict[str, Any], now: float) -> Scope:
    """The scope of one call: its bound arguments, the node's view (§9) and the runtime clock."""
    def records() -> Iterator[tuple[str, Any]]:
        for ev in ctx.visible_evidence():
            yield ev.tool, ev.response

    return Scope(args=args, platform=ctx.platform, shared=ctx.shared, inputs=ctx.inputs, now=now, records=records)
