"""The seam between a session and the modules that work for it (node, chain, builtins, planner,
completion, context, prompting, evidence, lifecycle, tasks).

Those modules take a `SessionEnv` (`turn_env.TurnEnv` is the one a session gives them) and import
nothing above them, so the runtime's imports form no cycle and mypy checks every call through
this interface.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.seam.indexes import Indexes
    from skillc.runtime.compiled.loader import ProviderInput
    from skillc.runtime.mcp.result import CallOutcome, ToolInfo
    from skillc.runtime.model.base import Model
    from skillc.runtime.seam.state import Evidence, NodeState, SessionState, TaskState
    from skillc.runtime.compiled.skillmeta import SkillModule
    from skillc.runtime.words.event_types import TraceEvent


def active_task(env: SessionEnv) -> TaskState:
    """The session's active task, for code that runs only while there is one."""
    task = env.task
    assert task is not None, "no active task"
    return task


class SessionEnv(Protocol):
    """What the runtime's working modules may ask of the session they run in."""

    settings: Settings
    """The spec's run-time settings."""
    session: SessionState
    """The session's durable record (values, entities, user messages, counters)."""
    task: TaskState | None
    """The active task, if any."""
    evidence: dict[str, Evidence]
    """Every evidence record of the session by id."""
    rng: random.Random
    """The runtime's seeded random source (builtin_env_* tools)."""
    indexes: Indexes
    """The indexes over the session's evidence and entities (runtime/seam/indexes.py keeps them caught up)."""

    @property
    def model(self) -> Model:
        """The model adapter."""
        ...

    @property
    def catalog(self) -> Mapping[str, ToolInfo]:
        """The MCP gateway's tool catalog."""
        ...

    @property
    def platform(self) -> dict[str, Any]:
        """The platform identity of §11."""
        ...

    def now(self) -> float:
        """The runtime clock (seconds)."""
        ...

    def emit(self, event: TraceEvent) -> None:
        """Record one trace event of this session's turn: the producer gives its `type`, `node`
        and fields (runtime/words/event_types.py), the env stamps session, turn and task."""
        ...

    async def save(self) -> None:
        """A stopping point: write the session, its task and changed evidence, and commit."""
        ...

    def put_evidence(self, ev: Evidence) -> None:
        """Mark an evidence record changed: it is written at the next `save`."""
        ...

    async def find_evidence(self, evidence_id: str) -> Evidence | None:
        """An evidence record by id: held in memory, else an earlier task's from the store."""
        ...

    async def call_tool(self, node: NodeState, tool: str, args: dict[str, Any]) -> CallOutcome:
        """Call a business tool through the gateway on behalf of `node` (`mcp.invoked` names it)."""
        ...

    def skill_module(self, key: str) -> SkillModule:
        """The generated module of a loaded skill."""
        ...

    def agent_skills(self, agent: str | None = None) -> list[str]:
        """The loadable skills of an agent (the active task's when None)."""
        ...

    def agent_delegables(self) -> list[str]:
        """The skills of the active task's agent that a node may delegate to."""
        ...

    def provider_inputs(self, agent: str, skill: str) -> tuple[ProviderInput, ...]:
        """The provider inputs of `skill` in `agent`'s compiled template (§7), contract order."""
        ...

    def agent_profile(self, agent: str | None = None) -> dict[str, Any]:
        """An agent's descriptions, for prompts."""
        ...

    def loadable_agents(self) -> list[str]:
        """Agents with at least one loadable skill."""
        ...

    def value_exists(self, prefix: str | None, parts: Any) -> bool:
        """A shared.* / session.* value exists at `parts`."""
        ...

    def progress(self, node: NodeState, tool: str) -> None:
        """Report that `tool` starts (the caller's progress callback)."""
        ...

    def share_outputs(self, node: NodeState) -> None:
        """§8 at DONE: share a node's outputs and index its entities."""
        ...

    def add_delegate(self, parent: NodeState, skill: str, objective: str) -> NodeState:
        """Insert a delegate node before `parent` (§15)."""
        ...
