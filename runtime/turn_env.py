"""A session in memory and the runtime it runs on: the `seams.SessionEnv` the working modules
(tasks, node, chain, evidence, …) are given, and the `durable.HeldSession` its durability commits.

As pydantic-ai splits a run's state (GraphAgentState) from the services it runs on
(GraphAgentDeps), a `TurnEnv` keeps the session's data in declared fields (its record, evidence,
active task, what changed since the last commit, the turn's pinned studio, the indexes) and reaches
every service through one field, `rt` (`RuntimeParts`: the `session.Runtime` it belongs to).
One env lives as long as its `session.Session`; the fields marked per turn are set by
`turn.play` at a turn's start and cleared at its end.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from skillc.runtime.words.events import EventName
from skillc.runtime.graph import tasks
from skillc.runtime.durable import Durability
from skillc.runtime.seam.indexes import Indexes
from skillc.runtime.compiled.paths import get_path
from skillc.runtime.store import offloop
from skillc.runtime.telemetry.audit import TRIGGERS as AUDIT_TRIGGERS
from skillc.runtime.telemetry.audit import follow
from skillc.runtime.compiled.values import has_value

if TYPE_CHECKING:
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import ProviderInput
    from skillc.runtime.mcp.result import CallOutcome, ToolInfo
    from skillc.runtime.model.base import Model
    from skillc.runtime.seam.state import Evidence, NodeState, SessionState, TaskState
    from skillc.runtime.store.base import Store
    from skillc.runtime.telemetry.trace import TraceWriter
    from skillc.runtime.words.event_types import TraceEvent


class RuntimeParts(Protocol):
    """The services a session runs on (`session.Runtime` is the one)."""

    studio: Any
    """The compiled studio: `skills`, `agents`, and optionally `refresh()` and `rejected`."""
    gateway: Any
    """The MCP gateway: `catalog` and `call(tool, args, on_invoked=…)`."""
    model: Model
    store: Store
    settings: Settings
    clock: Callable[[], float]
    trace: TraceWriter
    on_progress: Callable[[str, str], None] | None
    rng: random.Random
    strict: bool
    """An unexpected exception inside a turn propagates instead of being answered."""
    reports_invocations: bool
    """The gateway leaves `mcp.invoked` to the caller: each call carries the env's callback."""
    acknowledges_delivery: bool
    """A reply counts as delivered once the client acknowledged it (`Session.acknowledge`)."""


class PinnedStudio(NamedTuple):
    """The studio's skill modules and agent templates as one turn began (`turn.reload`)."""

    skills: dict[str, Any]
    agents: dict[Any, Any]


class TurnEnv:
    """One session in memory over the runtime it runs on; the working modules' `SessionEnv`."""

    # every field is declared here: nothing hangs attributes of its own on an env
    __slots__ = ("rt", "settings", "rng", "session", "evidence", "task", "dirty", "indexes", "studio",
                 "current_node", "ended", "durable")

    def __init__(self, rt: RuntimeParts, state: SessionState, evidence: dict[str, Evidence],
                 task: TaskState | None = None, *, recover: bool = False) -> None:
        # ---- the services (read through `rt`; settings and rng are the Protocol's fields)
        self.rt = rt
        self.settings: Settings = rt.settings
        self.rng: random.Random = rt.rng
        # ---- the session's data
        self.session: SessionState = state
        """The session's durable record (values, entities, user messages, counters)."""
        self.evidence: dict[str, Evidence] = evidence
        """The evidence records held: the active task's and every unsettled write (durable.load_held)."""
        self.task: TaskState | None = task
        """The active task, if any."""
        self.dirty: dict[str, Evidence] = {}
        """Evidence records changed since the last commit (`put_evidence`; written by the next unit)."""
        self.indexes = Indexes()
        """The evidence and entity indexes (runtime/seam/indexes.py)."""
        # ---- per turn
        self.studio: PinnedStudio | None = None
        """The studio as this turn began (None between turns: the live studio answers)."""
        self.current_node: str | None = None
        """The node whose tool call is under way (`mcp.invoked` names it)."""
        self.ended: TaskState | None = None
        """The active task, when it had ended before this turn began (this turn's events name no task)."""
        # ---- its link to the store: lease, units of work, lost replies
        self.durable = Durability(self, recover)

    # ------------------------------------------------------------ what durability reads

    @property
    def id(self) -> str:
        """The session id."""
        return self.session.id

    @property
    def store(self) -> Store:
        """The store the session is kept in."""
        return self.rt.store

    @property
    def trace(self) -> TraceWriter:
        """The runtime's trace writer."""
        return self.rt.trace

    @property
    def acknowledges_delivery(self) -> bool:
        """A reply counts as delivered once the client acknowledged it."""
        return self.rt.acknowledges_delivery

    # ------------------------------------------------------------ the SessionEnv

    @property
    def platform(self) -> dict[str, Any]:
        """The platform identity of §11."""
        return self.session.platform

    @property
    def catalog(self) -> Mapping[str, ToolInfo]:
        """The MCP gateway's tool catalog."""
        catalog: Mapping[str, ToolInfo] = self.rt.gateway.catalog
        return catalog

    @property
    def model(self) -> Model:
        """The model adapter."""
        return self.rt.model

    def now(self) -> float:
        """The runtime clock."""
        return self.rt.clock()

    def emit(self, event: TraceEvent, *, before_turn: bool = False) -> None:
        """Record one trace event of this session's turn, stamped with its session, turn and task
        (the writer adds `seq` and the chain; the event's own `type` and `node` keep their places,
        so a line is the same bytes as a keyword-built one). `before_turn`: an event its service
        noticed as it starts the session's next turn (`studio.stale`), recorded as that turn's
        and with no task (none is this turn's yet)."""
        trace = self.rt.trace
        if before_turn:
            trace.emit(event, session=self.session.id, turn=self.session.turn + 1)
            return
        # A task that had already ended when this turn began is not this turn's task: the turn's
        # events carry no task until a new one is made (or name the task they act on).
        task = self.task.id if self.task is not None and self.task is not self.ended else None
        written = trace.emit(event, session=self.session.id, turn=self.session.turn, task=task)
        if event["type"] in AUDIT_TRIGGERS and trace.audit:  # who, what and when, from this session's facts
            for audit in follow(written, self, trace.chain):
                trace.emit(audit, session=self.session.id, turn=self.session.turn, task=task)

    def invoked(self, tool: str, args: dict[str, Any]) -> None:
        """An `mcp.invoked` event for a tool really reached, stamped with the calling node."""
        node = self.current_node
        self.emit({"type": EventName.MCP_INVOKED, "node": node, "tool": tool, "args": args} if node is not None
                  else {"type": EventName.MCP_INVOKED, "tool": tool, "args": args})

    async def call_tool(self, node: NodeState, tool: str, args: dict[str, Any]) -> CallOutcome:
        """Call a business tool for `node`; a gateway that leaves reporting to the runtime gets
        this session's callback with the call (never a runtime-wide slot)."""
        self.current_node = node.id
        await self.durable.fence()  # a turn that lost its lease sends nothing
        outcome: CallOutcome
        if self.rt.reports_invocations:
            outcome = await self.rt.gateway.call(tool, args, on_invoked=self.invoked)
        else:
            outcome = await self.rt.gateway.call(tool, args)
        return outcome

    def _skills(self) -> dict[str, Any]:
        """The studio's skill modules: during a turn, those of the studio as the turn began."""
        return self.studio.skills if self.studio is not None else self.rt.studio.skills

    def _agents(self) -> dict[Any, Any]:
        """The studio's agent templates: during a turn, those of the studio as the turn began."""
        return self.studio.agents if self.studio is not None else self.rt.studio.agents

    def skill_module(self, key: str) -> Any:
        """The generated module of a loaded skill."""
        return self._skills()[key]

    def loadable_agents(self) -> list[str]:
        """Agents with at least one loadable skill."""
        return [code for code, a in sorted(self._agents().items()) if self.agent_skills(code)]

    def agent_skills(self, agent: str | None = None) -> list[str]:
        """The loadable skills of an agent (the active task's when None)."""
        code = agent or (self.task.agent if self.task else None)
        template = self._agents().get(code)
        if template is None:
            return []
        return [k for k in template.skills if k in self._skills()]

    def agent_delegables(self) -> list[str]:
        """The skills of the active task's agent that a node may delegate to: the compiled
        template's delegation catalog (delegatable and read-only, §15), as far as they are loaded."""
        template = self._agents().get(self.task.agent if self.task else None)
        if template is None:
            return []
        loaded = set(self.agent_skills())
        return [k for k in template.delegation_catalog if k in loaded]

    def provider_inputs(self, agent: str, skill: str) -> tuple[ProviderInput, ...]:
        """The provider inputs of `skill` in `agent`'s compiled template (§7), contract order."""
        template = self._agents().get(agent)
        return template.providers.get(skill, ()) if template is not None else ()

    def agent_profile(self, agent: str | None = None) -> dict[str, Any]:
        """An agent's descriptions, for prompts."""
        code = agent or (self.task.agent if self.task else "")
        t = self._agents()[code]
        return {f: getattr(t, f) for f in ("agent_code", "agent_name", "identity_desc", "mission_desc",
                                           "boundary_desc", "style_desc", "principle_desc")}

    def value_exists(self, prefix: str | None, parts: Any) -> bool:
        """A shared.* / session.* value exists at `parts`."""
        if not parts:
            return False
        pool = self.session.values if prefix == "session" else (self.task.shared if self.task else {})
        return has_value(get_path(pool, tuple(tuple(p) for p in parts)))

    async def find_evidence(self, evidence_id: str) -> Evidence | None:
        """An evidence record by id: held in memory, else an earlier task's from the store
        (a reopened session holds only its active task's, see durable.load_held), read off the
        event loop like every store call: a slow read stalls this turn, never the others."""
        held = self.evidence.get(evidence_id)
        if held is not None or not evidence_id:
            return held
        return await offloop.call(self.rt.store, self.rt.store.evidence_record, self.session.id, evidence_id)

    def put_evidence(self, ev: Evidence) -> None:
        """Mark an evidence record changed."""
        # Written at the next save(): every model step ends with one, and a write's STARTED
        # pre-registration saves before its tool is called.
        self.dirty[ev.id] = ev

    async def save(self) -> None:
        """A stopping point inside a turn: a write pre-registered or settled since the last
        commit is committed now (before its tool is called / once its outcome is known);
        everything else is committed once, with the turn's reply (runtime/durable.py)."""
        await self.durable.checkpoint()

    def progress(self, node: NodeState, tool: str) -> None:
        """Report that `tool` starts to the runtime's progress callback, with its label."""
        if self.rt.on_progress is None:
            return
        meta = self.skill_module(node.skill).TOOLS.get(tool)
        info = self.catalog.get(tool)
        label = (meta.label if meta and meta.label else None) or (info.title if info and info.title else None) or "正在处理"
        self.rt.on_progress(tool, label)

    def add_delegate(self, parent: NodeState, skill: str, objective: str) -> NodeState:
        """Insert a delegate node before `parent` (§15)."""
        return tasks.add_delegate(self, parent, skill, objective)

    def share_outputs(self, node: NodeState) -> None:
        """§8 at DONE: share a node's outputs and index its entities."""
        tasks.share_outputs(self, node)
