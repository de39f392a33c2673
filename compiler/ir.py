"""The typed IR of a skill contract (spec §2) and of the studio records (§1).

Every node carries the span of its value in the contract's own text (`span`) and, where it is
the value of an object member, the span of its key (`key_span`). Parsed expressions and paths are
typed IR too. The front end (`skillc.compiler.parse`) builds these; codegen consumes them.
Defaults follow the spec's tables; "unset" is `None` (an empty string in the source is unset, §19).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field


class Span(BaseModel):
    """A region of source text: 1-based line/column, 0-based character offsets (end exclusive)."""

    model_config = ConfigDict(frozen=True)

    line: int
    column: int
    end_line: int
    end_column: int
    start: int = 0
    end: int = 0


class Node(BaseModel):
    """Base of every IR node: where it stands in the contract text."""

    model_config = ConfigDict(extra="forbid")

    span: Span | None = None
    key_span: Span | None = None
    # Spans of this node's scalar properties by their contract name ("confirm", "target", ...):
    # the front end points diagnostics at them. Left out of dumps: codegen never needs them.
    prop_spans: dict[str, Span] = Field(default_factory=dict, exclude=True, repr=False)


# ---------------------------------------------------------------- paths and expressions


class PathPart(BaseModel):
    """One step of a path: a member name, a list index, or `[]` (each item)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["key", "index", "each"]
    name: str | None = None
    index: int | None = None


class Path(Node):
    """A dotted path: parameter paths (`lines[].goodsCode`), response paths (`data.records.0.id`)."""

    text: str
    parts: list[PathPart] = Field(default_factory=list)


class InputsRef(Node):
    """`inputs.<path>`: a bound input of this node (source NODE_OUTPUT)."""

    kind: Literal["inputs"] = "inputs"
    text: str
    path: list[PathPart]


class OutputsRef(Node):
    """`outputs.<path>`: an output (this node's in args.from; upstream's in inputs.from)."""

    kind: Literal["outputs"] = "outputs"
    text: str
    path: list[PathPart]


class SharedRef(Node):
    """`shared.<path>`: a task-level shared value (source SHARED)."""

    kind: Literal["shared"] = "shared"
    text: str
    path: list[PathPart]


class SessionRef(Node):
    """`session.<path>`: a session-level shared value (source SESSION)."""

    kind: Literal["session"] = "session"
    text: str
    path: list[PathPart]


class PriorRef(Node):
    """`prior.<type>[.<attr>]` or `prior.<type:id>.<attr>`: an entity of the session (PRIOR_TASK).

    `attr` None means the display name (`prior.<type>` in inputs.from).
    """

    kind: Literal["prior"] = "prior"
    text: str
    entity_type: str
    entity_id: str | None = None
    attr: str | None = None


class PlatformRef(Node):
    """`platform.<field>`: the turn's login identity (source PLATFORM)."""

    kind: Literal["platform"] = "platform"
    text: str
    field: str


class EvidenceRef(Node):
    """`evidence.<key>[.<path>]`: extracted content of successful evidence (source EVIDENCE)."""

    kind: Literal["evidence"] = "evidence"
    text: str
    key: str
    path: list[PathPart] = Field(default_factory=list)


class CallRef(Node):
    """`call.<path>`: the original write's request arguments (verify.args only)."""

    kind: Literal["call"] = "call"
    text: str
    path: list[PathPart]


class BareRef(Node):
    """An inputs.from without a known prefix: the nearest finished upstream's same-named output."""

    kind: Literal["bare"] = "bare"
    text: str
    path: list[PathPart]


Expr = Annotated[
    Union[InputsRef, OutputsRef, SharedRef, SessionRef, PriorRef, PlatformRef, EvidenceRef, CallRef, BareRef],
    Field(discriminator="kind"),
]

SOURCE_OF_PREFIX: dict[str, str] = {
    "inputs": "NODE_OUTPUT",
    "outputs": "NODE_OUTPUT",
    "shared": "SHARED",
    "session": "SESSION",
    "prior": "PRIOR_TASK",
    "platform": "PLATFORM",
    "evidence": "EVIDENCE",
    "call": "CONTRACT",
    "bare": "NODE_OUTPUT",
}

# ---------------------------------------------------------------- enums (§18)

Mode = Literal["REACT", "PLAN"]
SideEffect = Literal["NONE", "WRITE"]
When = Literal["ALWAYS", "UNIQUE"]
SourceKind = Literal["USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK", "MODEL", "CONTRACT", "PLATFORM"]
MissingAction = Literal["ASK_USER", "CALL_TOOL", "FAIL"]
SuccessOp = Literal["EQ", "NE", "IN", "NOT_IN", "TRUTHY", "EXISTS", "MATCHES"]  # MATCHES: a skillc extension
OutputType = Literal["VALUE", "LIST"]
ShareScope = Literal["TASK", "SESSION"]

ENUMS: dict[str, tuple[str, ...]] = {
    "mode": ("REACT", "PLAN"),
    "sideEffect": ("NONE", "WRITE"),
    "when": ("ALWAYS", "UNIQUE"),
    "sources": ("USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK", "MODEL", "CONTRACT", "PLATFORM"),
    "action": ("ASK_USER", "CALL_TOOL", "FAIL"),
    "op": ("EQ", "NE", "IN", "NOT_IN", "TRUTHY", "EXISTS", "MATCHES"),
    "type": ("VALUE", "LIST"),
    "share": ("TASK", "SESSION"),
}

PLATFORM_FIELDS: dict[str, str] = {
    "userId": "Long",
    "memberId": "Long",
    "name": "String",
    "organId": "Long",
    "organName": "String",
    "organType": "Enum",
    "deptPath": "String",
}
HIDDEN_PLATFORM_FIELDS: tuple[str, ...] = ("passportId", "clientId", "sessionType", "adminUser", "adminCompany")

# ---------------------------------------------------------------- contract tree (§2)


class Missing(Node):
    """args.<p>.missing (§5.5)."""

    action: MissingAction = "ASK_USER"
    tool: str | None = None
    message: str | None = None


class EvidenceField(Node):
    """One entry of args.<p>.evidence (a skillc extension, docs/reference/contract.md §5.3): the
    record fields that may back the argument. `tool` set: `<tool>:<response path>`; unset:
    `<extract key>[.<path>]` (the key is the path's first part)."""

    text: str
    tool: str | None = None
    path: list[PathPart] = Field(default_factory=list)


class ArgContract(Node):
    """args.<paramPath> (§5.2)."""

    path: Path
    from_: Expr | None = None
    has_const: bool = False
    const: Any = None
    when: When = "ALWAYS"
    sources: list[SourceKind] = Field(default_factory=list)
    required: bool = True
    enum: list[Any] = Field(default_factory=list)
    missing: Missing = Field(default_factory=Missing)
    sensitive: bool = False
    label: str | None = None
    fresh: bool | None = None
    evidence: list[EvidenceField] = Field(default_factory=list)  # typed evidence (extension)


class Success(Node):
    """success (§6.1). `op` None is allowed at load (§16) and then judged as no condition."""

    path: Path | None = None
    op: SuccessOp | None = None
    has_value: bool = False
    value: Any = None


class ErrorPaths(Node):
    """error (§6.2)."""

    code: Path | None = None
    message: Path | None = None


class Entity(Node):
    """entity {type, id, name, scalar} (§6.3, §8)."""

    type: str | None = None
    id: str = "id"
    name: str = "name"
    scalar: str | None = None
    keyed: bool = False  # skillc extension: the object is a map from entity id to entity


class Extract(Node):
    """extracts[] (§6.3)."""

    key: str | None = None
    path: Path | None = None
    fields: list[str] = Field(default_factory=list)
    entity: Entity | None = None


class VerifyArg(Node):
    """verify.args.<k>: only `const` or `from: call.<path>` (§6.4)."""

    name: str
    from_: Expr | None = None
    has_const: bool = False
    const: Any = None


class Verify(Node):
    """verify (§6.4)."""

    tool: str | None = None
    args: dict[str, VerifyArg] = Field(default_factory=dict)


class RuleLet(Node):
    """One `let` binding of a rule: a name and its expression text (span: the text's string)."""

    name: str
    text: str


class Rule(Node):
    """One business rule of a tool (rules[], a skillc extension: docs/reference/rules.md).

    Its texts as written; the front end parses and checks them (compiler.rules_front), codegen
    compiles them. `prop_spans` holds the spans of the name, when, expr and message strings."""

    name: str | None = None
    when: str | None = None
    lets: list[RuleLet] = Field(default_factory=list)
    expr: str | None = None
    message: str | None = None


class ToolContract(Node):
    """tools.<toolName> (§4)."""

    name: str
    label: str | None = None
    side_effect: SideEffect = "NONE"
    confirm: bool | None = None  # unset -> WRITE: true, NONE: false
    idempotency_key: list[Path] = Field(default_factory=list)
    args: dict[str, ArgContract] = Field(default_factory=dict)
    success: Success | None = None
    error: ErrorPaths | None = None
    extracts: list[Extract] = Field(default_factory=list)
    verify: Verify | None = None
    rules: list[Rule] = Field(default_factory=list)

    @property
    def effective_confirm(self) -> bool:
        """confirm with its default applied (§4)."""
        if self.confirm is None:
            return self.side_effect == "WRITE"
        return self.confirm


class InputSpec(Node):
    """inputs.<name> (§7)."""

    name: str
    from_: Expr | None = None
    required: bool = True
    provider: str | None = None


class OutputSpec(Node):
    """outputs.<name> (§8)."""

    name: str
    type: OutputType = "VALUE"
    fields: list[str] = Field(default_factory=list)
    min_items: int = 1
    hint: str | None = None
    required: bool = True
    share: ShareScope | None = None
    entity: Entity | None = None
    sources: list[SourceKind] = Field(default_factory=list)
    has_constant: bool = False
    constant: Any = None
    sensitive: bool = False


class Contract(Node):
    """The root of skill_contract (§3)."""

    mode: Mode = "REACT"
    delegatable: bool = False
    target: str | None = None
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    outputs: dict[str, OutputSpec] = Field(default_factory=dict)
    tools: dict[str, ToolContract] = Field(default_factory=dict)


# ---------------------------------------------------------------- studio records (§1)


class Refusal(BaseModel):
    """A studio record's text the border refused (runtime.border: a lone surrogate, bytes that are
    not UTF-8, a text too long): where it stands and what was wrong. `excerpt` is the offending
    source line made safe to print (empty when there is none to show)."""

    kind: Literal["skill", "agent"]
    key: str
    message: str
    file: str
    code: str = "SC506"  # SC506: text the border refuses; SC507: a record file that is not YAML
    line: int = 1
    column: int = 1
    end_column: int = 2
    excerpt: str = ""


class SourceRef(BaseModel):
    """Where a studio record came from: a file path, or a label such as `sqlite:db#skill_profile/3`."""

    origin: str
    contract_file: str | None = None  # the file the contract text's line/column refer to
    # Set when the record's text cannot be kept: the skill's text fields are then cleaned copies
    # and the front end rejects it with this refusal (SC506) without reading its contract.
    refusal: Refusal | None = None


class AgentProfile(BaseModel):
    """agent_profile (+ its enabled skill bindings, as skill keys)."""

    agent_code: str
    agent_name: str = ""
    identity_desc: str = ""
    mission_desc: str = ""
    boundary_desc: str = ""
    style_desc: str = ""
    principle_desc: str = ""
    status: str = "ACTIVE"
    skills: list[str] = Field(default_factory=list)
    source: SourceRef | None = None


class SkillProfile(BaseModel):
    """skill_profile (+ its enabled tool bindings, as toolNames)."""

    skill_key: str
    skill_name: str = ""
    semantic_desc: str = ""
    skill_manual: str = ""
    skill_contract: str = ""
    status: str = "ACTIVE"
    tool_names: list[str] = Field(default_factory=list)
    source: SourceRef | None = None


class Studio(BaseModel):
    """What a studio source yields: profiles with bindings already resolved (only enabled ones)."""

    agents: list[AgentProfile] = Field(default_factory=list)
    skills: list[SkillProfile] = Field(default_factory=list)
    origin: str = ""
    # Agents whose text the border refused: dropped from `agents`, reported as SC506 by the front
    # end and the build. (A refused skill stays in `skills`, rejected, so bindings to it resolve.)
    refused: list[Refusal] = Field(default_factory=list)
