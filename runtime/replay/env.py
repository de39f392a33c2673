"""The session a recorded conversation is replayed in: a `SessionEnv` whose tools are the
recording.

The chain (runtime/call/chain.py) runs unchanged against it. Where a live session reaches a business
tool through the MCP gateway, this one hands back the answer recorded for the call being judged
and notes that the tool would have been reached; nothing is stored, traced or sent anywhere.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from skillc.runtime.words.errors import ErrorName
from skillc.runtime.seam.indexes import Indexes
from skillc.runtime.mcp.result import CallOutcome, ToolInfo
from skillc.runtime.compiled.paths import get_path
from skillc.runtime.seam.state import Evidence, NodeState, SessionState, TaskState
from skillc.runtime.compiled.values import has_value

if TYPE_CHECKING:
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import ProviderInput
    from skillc.runtime.model.base import Model
    from skillc.runtime.compiled.skillmeta import SkillModule
    from skillc.runtime.words.event_types import TraceEvent

# Replay's clock stands still: approvals never expire mid-conversation (there is no waiting).
CLOCK = 0.0
NO_ANSWER = "no answer was recorded for this call"


class ReplayEnv:
    """One recorded conversation as a session with one task (see docs/replay.md)."""

    def __init__(self, studio: Any, settings: Settings, agent: str, conversation_id: str,
                 platform: dict[str, Any], catalog: Mapping[str, ToolInfo]) -> None:
        self.studio = studio
        self.settings = settings
        self.session = SessionState(id=conversation_id, platform=dict(platform), turn=1)
        self.task: TaskState | None = TaskState(id="t1", session=conversation_id, agent=agent, message="")
        self.session.tasks.append("t1")
        self.session.active_task = "t1"
        self.evidence: dict[str, Evidence] = {}
        self.rng = random.Random(0)
        self.indexes = Indexes()
        self._catalog = catalog
        self.answer: CallOutcome | None = None  # what the call being judged was answered
        self.reached = 0  # how many times the chain reached the (recorded) tool

    def stand_in(self, answer: Any, *, recorded: bool, failed: str | None = None) -> None:
        """The recorded answer the next tool call gets (`failed`: a recorded call error)."""
        if failed:
            self.answer = CallOutcome(response=answer, error=failed, message=f"the recorded call failed ({failed})")
        elif not recorded:
            self.answer = CallOutcome(response=None, error=ErrorName.TOOL_IO_ERROR, message=NO_ANSWER)
        else:
            self.answer = CallOutcome(response=answer, error=None, message="")

    # ------------------------------------------------------------ SessionEnv

    @property
    def model(self) -> Model:
        """Replay judges recorded calls; no model is ever asked."""
        raise RuntimeError("replay has no model")

    @property
    def catalog(self) -> Mapping[str, ToolInfo]:
        """The recorded tool definitions (empty when the recording has none)."""
        return self._catalog

    @property
    def platform(self) -> dict[str, Any]:
        """The identity given with --platform."""
        return self.session.platform

    def now(self) -> float:
        """A clock that stands still."""
        return CLOCK

    def emit(self, event: TraceEvent) -> None:
        """Replay writes no trace: its report is the record."""

    async def save(self) -> None:
        """Nothing is stored."""

    def put_evidence(self, ev: Evidence) -> None:
        """Evidence lives in memory for the conversation only."""

    async def find_evidence(self, evidence_id: str) -> Evidence | None:
        """An evidence record of this conversation by id."""
        return self.evidence.get(evidence_id)

    async def call_tool(self, node: NodeState, tool: str, args: dict[str, Any]) -> CallOutcome:
        """The recorded answer stands in for the tool's."""
        self.reached += 1
        answer = self.answer
        if answer is None:
            return CallOutcome(response=None, error=ErrorName.TOOL_IO_ERROR, message=NO_ANSWER)
        return answer

    def skill_module(self, key: str) -> SkillModule:
        """The generated module of a loaded skill."""
        module: SkillModule = self.studio.skills[key]
        return module

    def agent_skills(self, agent: str | None = None) -> list[str]:
        """The loadable skills of an agent (the conversation's when None)."""
        template = self.studio.agents.get(agent or (self.task.agent if self.task else None))
        return [k for k in template.skills if k in self.studio.skills] if template is not None else []

    def agent_delegables(self) -> list[str]:
        """The agent's delegation catalog, as far as it is loaded."""
        template = self.studio.agents.get(self.task.agent if self.task else None)
        loaded = set(self.agent_skills())
        return [k for k in template.delegation_catalog if k in loaded] if template is not None else []

    def provider_inputs(self, agent: str, skill: str) -> tuple[ProviderInput, ...]:
        """The provider inputs of `skill` in `agent`'s compiled template."""
        template = self.studio.agents.get(agent)
        return template.providers.get(skill, ()) if template is not None else ()

    def agent_profile(self, agent: str | None = None) -> dict[str, Any]:
        """An agent's descriptions."""
        t = self.studio.agents[agent or (self.task.agent if self.task else "")]
        return {f: getattr(t, f) for f in ("agent_code", "agent_name", "identity_desc", "mission_desc",
                                           "boundary_desc", "style_desc", "principle_desc")}

    def loadable_agents(self) -> list[str]:
        """Agents with at least one loadable skill."""
        return [code for code in sorted(self.studio.agents) if self.agent_skills(code)]

    def value_exists(self, prefix: str | None, parts: Any) -> bool:
        """A shared.* / session.* value exists at `parts`."""
        if not parts:
            return False
        pool = self.session.values if prefix == "session" else (self.task.shared if self.task else {})
        return has_value(get_path(pool, tuple(tuple(p) for p in parts)))

    def progress(self, node: NodeState, tool: str) -> None:
        """No progress labels: nothing waits on a tool."""

    def share_outputs(self, node: NodeState) -> None:
        """No node finishes in replay, so nothing is shared."""

    def add_delegate(self, parent: NodeState, skill: str, objective: str) -> NodeState:
        """Recorded conversations carry no skillc delegation."""
        raise RuntimeError("replay does not delegate")
