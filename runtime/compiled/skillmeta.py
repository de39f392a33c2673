"""The metadata records a generated skill module fills with literals (ToolMeta, ArgMeta, …), the
defaults it names only when it differs, the result types of the parameter and response contracts
(§5.3, §5.5, §6), and the two Protocols across the generated-code border: `SkillModule` (what a
generated module provides) and `BindContext` (what its code may ask of the runtime)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from skillc.runtime.compiled.values import MISSING, default_empty, has_value


@dataclass(frozen=True)
class EntitySpec:
    """entity {type, id, name, scalar} (§6.3, §8), and skillc's `keyed`: the object is a map
    from entity id to entity (a profile's `payment_methods: {"credit_card_7334": {...}}`)."""

    type: str | None
    id: str = "id"
    name: str = "name"
    scalar: str | None = None
    keyed: bool = False


@dataclass(frozen=True)
class ArgMeta:
    """What the runtime needs to know of one configured argument outside the decision code."""

    path: str
    parts: tuple[Any, ...]
    label: str | None = None
    sensitive: bool = False
    bound: bool = False  # has from/const: exempt from the schema's required check (§13 step 1)
    platform: bool = False  # from platform.*: hidden from approval text (§11)
    sources: tuple[str, ...] = ()
    expected_evidence: bool = False  # may come from EVIDENCE (a source, or from: evidence.*)
    # typed evidence: the (tool or None, extract key, path) fields that may back an EVIDENCE
    # value; empty: any extracted value (the spec's rule). Read by `skillc diff`.
    evidence_fields: tuple[tuple[Any, ...], ...] = ()

    @property
    def expected_user(self) -> bool:
        """May come from USER: a follow-up may expect it (§12)."""
        return "USER" in self.sources


@dataclass(slots=True)
class Extraction:
    """What §6.3 extracts from one response."""

    values: dict[str, Any] = field(default_factory=dict)  # key -> subtree at path
    empty: bool = False
    entities: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class Judgement:
    """The response contract's verdict (§6.1, §6.2)."""

    business_ok: bool
    error_code: Any = None
    error_message: Any = None


@dataclass(frozen=True)
class ParamIssue:
    """One argument's problem: what the runtime must do about it (§5.3 step 4, §5.5)."""

    action: str  # "REJECT" | "FAIL" | "CALL_TOOL" | "ASK_USER"
    param: str
    reason: str  # "missing" | "provenance" | "enum"
    label: str | None = None
    tool: str | None = None
    message: str | None = None


# An argument's source (§5.3): one source name, or for a `[]` argument whose items came from
# different sources, each item's source in item order.
Provenance = dict[str, "str | list[str]"]


@dataclass(slots=True)
class ParamResult:
    """The parameter contract's outcome: each argument's source, the issue to act on, if any, and
    every argument's issue (a refusal names them all, each with its next step)."""

    provenance: Provenance
    issue: ParamIssue | None = None
    issues: tuple[ParamIssue, ...] = ()

    @property
    def all_issues(self) -> tuple[ParamIssue, ...]:
        """Every issue found (a module generated before `issues` existed gives only `issue`)."""
        return self.issues or ((self.issue,) if self.issue is not None else ())


_PRIORITY = {"REJECT": 0, "FAIL": 1, "CALL_TOOL": 2, "ASK_USER": 3}


def worst(issues: list[ParamIssue]) -> ParamIssue | None:
    """The issue acted upon when several arguments fail: reject > FAIL > CALL_TOOL > ASK_USER (§5.5)."""
    if not issues:
        return None
    return min(issues, key=lambda i: _PRIORITY[i.action])


def items_source(sources: list[str]) -> str | list[str]:
    """The source of a `[]` argument from its items' sources (§5.3, judged item by item):
    MODEL when any item has no legal source, the one source when all agree, else the list."""
    if "MODEL" in sources:
        return "MODEL"
    first = sources[0] if sources else "MODEL"
    return first if all(s == first for s in sources) else list(sources)


def bind_nothing(args: dict[str, Any], ctx: Any) -> dict[str, str]:
    """The binding of a tool without from/const arguments: nothing is bound."""
    return {}


def check_nothing(args: dict[str, Any], bound: dict[str, str], ctx: Any) -> ParamResult:
    """The parameter contract of a tool without configured arguments: nothing to check."""
    return ParamResult({})


def judge_nothing(response: Any) -> Judgement:
    """No `success` configured: no business judgement, every response succeeds (§6.1)."""
    return Judgement(True)


def extract_default(response: Any, request: dict[str, Any]) -> Extraction:
    """No `extracts` configured: emptiness by the response's structure (§6.3)."""
    return Extraction(empty=default_empty(response))


def bind_no_inputs(inputs: dict[str, Any], ctx: Any) -> dict[str, str]:
    """The input binding of a skill without declared inputs (§7)."""
    return {}


def bound_names(args: Iterable[ArgMeta]) -> tuple[str, ...]:
    """The top-level names of the arguments bound by from/const, each once, in order."""
    return tuple(dict.fromkeys(str(a.parts[0][1]) for a in args if a.bound and a.parts and len(a.parts[0]) > 1))


@dataclass(frozen=True)
class RuleMeta:
    """One compiled rule of a tool contract (docs/reference/rules.md): `check(scope)` returns
    True (held), False (violated) or None (its guard does not apply), or raises
    `cel.Undecidable`; `message` is what the model is told when the rule refuses a call."""

    name: str
    check: Callable[[Any], bool | None]
    message: str
    expr: str = ""  # the rule's texts as written (skillc diff and explain read them)
    when: str | None = None
    lets: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ToolMeta:
    """One configured tool of a skill: its metadata and its compiled decision functions (a
    generated module names only what differs from these defaults)."""

    name: str
    label: str | None = None
    side_effect: str = "NONE"
    confirm: bool = False
    idempotency_key: tuple[tuple[Any, ...], ...] = ()
    args: Mapping[str, ArgMeta] = field(default_factory=dict)
    verify_tool: str | None = None
    bind: Callable[[dict[str, Any], "BindContext"], dict[str, str]] = bind_nothing
    check: Callable[[dict[str, Any], dict[str, str], "BindContext"], ParamResult] = check_nothing
    judge: Callable[[Any], Judgement] = judge_nothing
    extract: Callable[[Any, dict[str, Any]], Extraction] = extract_default
    verify_args: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    rules: tuple[RuleMeta, ...] = ()
    # What the chain reads of the records above, stated by the compiler so that nothing works it
    # out per call or keeps it in a cache. A record that leaves them out (a module generated before
    # they existed, a record built by hand) gets them derived here, once per record.
    sensitive_paths: tuple[tuple[Any, ...], ...] = ()  # the sensitive arguments' parts: masked in the trace
    bound_names: tuple[str, ...] = ()  # top-level names of from/const arguments: exempt from the schema's required check (§13 step 1)
    rule_names: tuple[str, ...] = ()  # the rules' names in order (an approval lists those that held)

    def __post_init__(self) -> None:
        if not self.sensitive_paths:
            object.__setattr__(self, "sensitive_paths", tuple(a.parts for a in self.args.values() if a.sensitive))
        if not self.bound_names:
            object.__setattr__(self, "bound_names", bound_names(self.args.values()))
        if not self.rule_names:
            object.__setattr__(self, "rule_names", tuple(r.name for r in self.rules))


@dataclass(frozen=True)
class InputMeta:
    """inputs.<name> (§7): `prefix` is the from-expression's prefix (or None)."""

    name: str
    required: bool = True
    provider: str | None = None
    prefix: str | None = None
    share_key: tuple[Any, ...] | None = None  # path under shared./session. when prefix is one of them


@dataclass(frozen=True)
class OutputMeta:
    """outputs.<name> (§8)."""

    name: str
    type: str = "VALUE"
    fields: tuple[str, ...] = ()
    min_items: int = 1
    hint: str | None = None
    required: bool = True
    share: str | None = None
    entity: EntitySpec | None = None
    sources: tuple[str, ...] = ()
    has_constant: bool = False
    constant: Any = None


@dataclass(frozen=True)
class SkillMeta:
    """The skill's profile and root contract properties."""

    key: str
    name: str = ""
    mode: str = "REACT"
    delegatable: bool = False
    target: str | None = None
    tool_names: tuple[str, ...] = ()
    semantic_desc: str = ""
    manual: str = ""


class SkillModule(Protocol):
    """What a generated skill module provides (the loader checks nothing more)."""

    SKILL: SkillMeta
    TOOLS: Mapping[str, ToolMeta]
    INPUTS: Mapping[str, InputMeta]
    OUTPUTS: Mapping[str, OutputMeta]

    def bind_inputs(self, inputs: dict[str, Any], ctx: Any) -> dict[str, str]:
        """Bind the node's inputs (§7); returns input name -> source."""


class BindContext(Protocol):
    """What generated code may ask of the runtime while binding and judging arguments."""

    @property
    def platform(self) -> Mapping[str, Any]:
        """The platform identity (§11)."""

    @property
    def inputs(self) -> Mapping[str, Any]:
        """The node's inputs."""

    @property
    def outputs(self) -> Mapping[str, Any]:
        """The node's written outputs."""

    @property
    def shared(self) -> Mapping[str, Any]:
        """The task's shared values."""

    @property
    def session(self) -> Mapping[str, Any]:
        """The session's values."""

    def evidence_value(self, key: str, parts: tuple[Any, ...]) -> Any:
        """`evidence.<key>.<path>`: first hit in §9's order, else MISSING."""

    def prior(self, entity_type: str, entity_id: str | None, attr: str | None) -> Any:
        """An entity attribute of the session's index (most recent first), else MISSING."""

    def upstream_output(self, parts: tuple[Any, ...]) -> Any:
        """The nearest finished upstream node's output at `parts`, else MISSING."""

    def user_mentions(self, param: str, value: Any) -> bool:
        """USER provenance (§5.3; docs/interpretations.md)."""

    def evidence_has(self, value: Any) -> bool:
        """EVIDENCE provenance: equal to a value in an extract of successful evidence."""

    def evidence_in(self, value: Any, fields: tuple[Any, ...]) -> bool:
        """Typed EVIDENCE: equal to a value at one of the named (tool, extract key, path) fields."""

    def node_output_has(self, param: str, value: Any) -> bool:
        """NODE_OUTPUT provenance: inputs/outputs hold `value` under the parameter path."""

    def shared_has(self, param: str, value: Any) -> bool:
        """SHARED provenance."""

    def session_has(self, param: str, value: Any) -> bool:
        """SESSION provenance."""

    def prior_has(self, value: Any, ref: tuple[Any, ...] | None) -> bool:
        """PRIOR_TASK provenance: an entity id (or the `from: prior.*` path's value)."""


# ---------------------------------------------------------------- entities (§6.3, §8)


def make_entities(sub: Any, spec: EntitySpec, base: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Entities of `sub` (object, or each item of an array; a scalar only when `scalar` names it).

    For write tools `base` is the request: merged under the response ("入参为底、返回为准").
    """
    if spec.type is None or sub is MISSING or sub is None:
        return []
    if spec.keyed:
        return _keyed_entities(sub, spec)
    items = sub if isinstance(sub, list) else [sub]
    out = []
    for item in items:
        if not isinstance(item, dict):
            if spec.scalar is None or isinstance(item, (list, dict)):
                continue
            item = {spec.scalar: item}
        merged = {**(base or {}), **item} if base is not None and not isinstance(sub, list) else dict(item)
        ident = merged.get(spec.id)
        if not has_value(ident) or isinstance(ident, (list, dict)):
            continue
        name = merged.get(spec.name)
        attrs = {k: v for k, v in merged.items() if isinstance(v, (str, int, float, bool)) or v is None}
        out.append({"type": spec.type, "id": ident, "name": name if isinstance(name, (str, int, float)) else None,
                    "attrs": attrs})
    return out


def _keyed_entities(sub: Any, spec: EntitySpec) -> list[dict[str, Any]]:
    """Entities of a map keyed by id: one per member, its key the id (over any `id` field the
    member holds: the map says which id it is filed under); a scalar member becomes the attribute
    `scalar` names (else the entity has no attributes). Not a map: no entities. The write's
    request is not merged in: the members are whole records."""
    if not isinstance(sub, dict):
        return []
    out = []
    for key, member in sub.items():
        if isinstance(member, dict):
            attrs = {k: v for k, v in member.items() if isinstance(v, (str, int, float, bool)) or v is None}
        elif isinstance(member, list) or spec.scalar is None:
            attrs = {}
        else:
            attrs = {spec.scalar: member}
        attrs[spec.id] = key
        name = attrs.get(spec.name)
        out.append({"type": spec.type, "id": key, "name": name if isinstance(name, (str, int, float)) else None,
                    "attrs": attrs})
    return out
