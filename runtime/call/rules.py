"""Running a tool's compiled rules (docs/reference/rules.md): the scope a rule reads and the
verdict of all of them.

`Scope` is what generated rule code calls `r`: the bound arguments, platform, shared values,
inputs, the clock, and evidence by tool (the response bodies this node may see, §9 order,
newest first). `judge` runs every rule of a tool — never stopping at the first failure — and
sorts them into held, violated, undecidable and not applying (a `when` guard that is false).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence

from skillc.runtime.compiled.cel_values import Undecidable, eq
from skillc.runtime.call.context import NodeContext
from skillc.runtime.compiled.skillmeta import RuleMeta
from skillc.runtime.words.vocab import RuleStatus


_NO_VARS: dict[str, Any] = {}  # the chain's scopes have no `rules eval --vars` names (never written)
_new = object.__new__  # a call's scope is made without __init__ (Scope.of_call)


class Scope:
    """The names a rule sees: `args`, and through the node's view (`NodeContext`, or the values
    given to `skillc rules eval`) `platform`, `shared`, `inputs` and evidence by tool (§9 order:
    this node's newest first, then upstream nodes), read once, when a rule first asks."""

    __slots__ = ("args", "vars", "_clock", "_of", "_by_tool", "_seen")

    def __init__(self, *, args: Any, platform: Any, shared: Any, inputs: Any, now: datetime | float,
                 records: Callable[[], Iterable[tuple[str, Any]]], vars: dict[str, Any] | None = None) -> None:
        self.args = args
        self.vars = vars or {}
        # `now` as a timestamp, or the clock's epoch seconds (made a timestamp only if a rule reads it)
        self._clock: datetime | float | Callable[[], float] = now
        self._of: _View = _Given(platform, shared, inputs, records)
        self._by_tool: dict[str, list[Any]] | None = None  # the bodies by tool, newest first
        self._seen: list[Any] = []  # every visible body, §9 order (once _by_tool is worked out)

    @staticmethod
    def of_call(ctx: NodeContext, args: dict[str, Any], now: float | Callable[[], float]) -> "Scope":
        """The scope of one call (the chain's, made on every call of a tool with rules): the
        node's view (§9) is walked only if a rule reads evidence, and the clock (`now`, its epoch
        seconds or the clock itself) read only if a rule reads `now`; nothing else is built."""
        scope = _new(Scope)
        scope.args = args
        scope.vars = _NO_VARS
        scope._clock = now
        scope._of = ctx
        scope._by_tool = None
        return scope

    @property
    def platform(self) -> Any:
        """`platform`: the caller's identity (§11)."""
        return self._of.platform

    @property
    def shared(self) -> Any:
        """`shared`: the task's shared values."""
        return self._of.shared

    @property
    def inputs(self) -> Any:
        """`inputs`: the node's inputs."""
        return self._of.inputs

    @property
    def now(self) -> datetime:
        """`now`: the runtime clock as a UTC timestamp."""
        clock = self._clock
        if isinstance(clock, datetime):
            return clock
        self._clock = now = datetime.fromtimestamp(clock if isinstance(clock, (int, float)) else clock(),
                                                   timezone.utc)
        return now

    def _view(self) -> dict[str, list[Any]]:
        """The records by tool, newest first, and all their bodies in §9 order (`_seen`): worked
        out in one pass over the node's view, the first time a rule asks."""
        self._by_tool, self._seen = self._of.evidence_by_tool()
        return self._by_tool

    def evidence(self, tool: str) -> list[Any]:
        """`evidence.TOOL`: the tool's successful response bodies, newest first."""
        return (self._by_tool if self._by_tool is not None else self._view()).get(tool) or []

    def latest(self, tool: str) -> Any:
        """`latest.TOOL`: the newest one; undecidable when there is none."""
        found = (self._by_tool if self._by_tool is not None else self._view()).get(tool)
        if found:
            return found[0]
        raise Undecidable(f"latest.{tool}", f"no successful {tool} response in evidence yet: call {tool} first")

    def newest(self, tool: str) -> Any:
        """`latest.TOOL` as a rule's fast form reads it (once, to read its fields by subscript):
        the newest body, or None when there is none, whose subscript raises TypeError there, so
        the general form decides and names what was missing."""
        found = (self._by_tool if self._by_tool is not None else self._view()).get(tool)
        return found[0] if found else None

    def origin(self, value: Any, what: str) -> Any:
        """`origin(args.PATH)`: the nearest JSON object inside evidence that holds `value` as one of
        its fields (or keeps an object under `value` as its key), searched newest record first."""
        if isinstance(value, (dict, list)) or value is None:
            raise Undecidable(f"origin({what})", "only a scalar argument's origin can be looked up")
        if self._by_tool is None:
            self._view()
        for body in self._seen:
            hit = _holder(body, value)
            if hit is not None:
                return hit
        raise Undecidable(f"origin({what})", f"the value {value!r} was not found in any record in evidence")

    def var(self, name: str) -> Any:
        """A variable given to `skillc rules eval --vars` beyond the contract's names."""
        if name not in self.vars:
            raise Undecidable(name, "no such variable")
        return self.vars[name]


class _View(Protocol):
    """Where a scope's names come from: the node's view (`NodeContext`) or given values."""

    platform: Any
    shared: Any
    inputs: Any

    def evidence_by_tool(self) -> tuple[dict[str, list[Any]], list[Any]]: ...


class _Given:
    """Given values as a view (`skillc rules eval`, tests): records are (tool, response body)
    pairs in §9 order."""

    __slots__ = ("platform", "shared", "inputs", "records")

    def __init__(self, platform: Any, shared: Any, inputs: Any, records: Callable[[], Iterable[tuple[str, Any]]]) -> None:
        self.platform, self.shared, self.inputs, self.records = platform, shared, inputs, records

    def evidence_by_tool(self) -> tuple[dict[str, list[Any]], list[Any]]:
        """The bodies by tool, newest first, and all of them in order."""
        by_tool: dict[str, list[Any]] = {}
        seen: list[Any] = []
        for tool, body in self.records():
            seen.append(body)
            by_tool.setdefault(tool, []).append(body)
        return by_tool, seen


def _holder(body: Any, value: Any) -> dict[str, Any] | None:
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
                held: dict[str, Any] = node[value]
                return held
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


_NO_WHYS: dict[int, str] = {}  # the whys of a verdict without an undecidable rule (never written)


class Verdict:
    """Every rule of a call, sorted by outcome. The rules' statuses are kept as judged; the
    `Outcome` objects a refusal describes are made only when asked for."""

    __slots__ = ("rules", "statuses", "whys", "all_held", "_outcomes")

    def __init__(self, rules: Sequence[RuleMeta], statuses: list[RuleStatus], whys: dict[int, str] | None = None) -> None:
        self.rules = rules
        self.statuses = statuses
        self.whys = whys if whys is not None else _NO_WHYS  # rule index -> why it is undecidable (read only)
        # whether every rule applied and held (the common case: nothing else needs building)
        self.all_held = statuses.count(_HELD) == len(statuses)
        self._outcomes: list[Outcome] | None = None

    @property
    def outcomes(self) -> list[Outcome]:
        """One outcome per rule, in the rules' order."""
        if self._outcomes is None:
            whys = self.whys
            self._outcomes = [Outcome(rule, status, whys.get(i, "")) for i, (rule, status)
                              in enumerate(zip(self.rules, self.statuses))]
        return self._outcomes

    def _with(self, status: RuleStatus) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def held(self) -> list[Outcome]:
        """Rules that applied and were true."""
        return self._with(RuleStatus.HELD)

    @property
    def failed(self) -> list[Outcome]:
        """Rules that refuse the call: false ones, then undecidable ones."""
        if self.all_held:
            return []
        return self._with(RuleStatus.VIOLATED) + self._with(RuleStatus.UNDECIDABLE)

    def __iter__(self) -> Iterator[Outcome]:
        return iter(self.outcomes)


def judge(rules: Sequence[RuleMeta], scope: Scope) -> Verdict:
    """Run every rule (a broken one fails closed as undecidable, naming the error)."""
    held = _ALL_HELD.get(id(rules))
    if held is not None and held.rules is rules:
        # the common case, once a tool's rules have all held: each rule in turn while it holds;
        # the first that does not (false, a guard that did not apply, an error) sends the whole
        # judgement down the full path below, which runs every rule again (rules read, never write)
        try:
            for rule in rules:
                if rule.check(scope) is not True:
                    break
            else:
                return held
        except Exception:  # noqa: BLE001 - judged, with its reason, by the full path
            pass
    statuses: list[RuleStatus] = []
    add = statuses.append
    whys: dict[int, str] | None = None
    for rule in rules:
        try:
            value = rule.check(scope)
        except Undecidable as exc:
            whys = whys or {}
            whys[len(statuses)] = str(exc)
            add(_UNDECIDABLE)
            continue
        except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
            whys = whys or {}
            whys[len(statuses)] = f"{type(exc).__name__}: {exc}"
            add(_UNDECIDABLE)
            continue
        add(_HELD if value else (_SKIPPED if value is None else _VIOLATED))
    verdict = Verdict(rules, statuses, whys)
    if verdict.all_held and type(rules) is tuple:
        # every rule held: the verdict this tool's rules share from now on (the quick path above)
        if len(_ALL_HELD) >= 1024:  # studios reloaded many times: forget the old ones' rules
            _ALL_HELD.clear()
        _ALL_HELD[id(rules)] = verdict
    return verdict


# id of a tool's rules (a tuple, as a compiled module holds them) -> its all-held verdict, which
# keeps the tuple alive, so the id is not reused while the entry stands (read only once made)
_ALL_HELD: dict[int, Verdict] = {}


_HELD, _VIOLATED, _SKIPPED, _UNDECIDABLE = RuleStatus.HELD, RuleStatus.VIOLATED, RuleStatus.SKIPPED, RuleStatus.UNDECIDABLE


# The scope of one call (`Scope.of_call`: its bound arguments, the node's view (§9) and the
# runtime clock, its epoch seconds or the clock itself, read when a rule first reads `now`).
call_scope: Callable[[NodeContext, dict[str, Any], float | Callable[[], float]], Scope] = Scope.of_call
