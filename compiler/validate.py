"""Load validation of a parsed contract (§16) and lint warnings (§5.3, §5.5, §11, §16's list).

Errors (a skill with any is dropped at load, the others still load): exactly the 13 load rules
that the IR can still break after parsing (rules 3–9, 11, 12; rules 1, 2, 10, 13 are caught while
parsing). Warnings: what §16 says is "not validated at load", the pitfalls §5.3 and §11 name, and
(docs/interpretations.md: What drops a skill) an output key equal to a platform field (§8, §11:
writing it is refused at run time) and verify.args other than `const` / `from: call.*` (§6.4:
left out of the verify call). docs/diagnostics.md lists every code.
"""
from __future__ import annotations

import re

from skillc.compiler import ir
from skillc.compiler.authoring import did_you_mean
from skillc.compiler.diagnostics import Diagnostic, Severity, make

_NEVER_MATCH = frozenset({"PLATFORM", "CONTRACT"})  # §5.3: only from/const produce these


def _path_text(parts: list[ir.PathPart]) -> str:
    out = ""
    for p in parts:
        if p.kind == "each":
            out += "[]"
        else:
            out += ("." if out else "") + ((p.name or "") if p.kind == "key" else str(p.index))
    return out


def _names_param(args: dict[str, ir.ArgContract], text: str) -> bool:
    """Whether `text` is a listed parameter path or a parent of one (`orderInfo` of `orderInfo.taxNo`)."""
    return any(k == text or k.startswith(text + ".") or k.startswith(text + "[]") for k in args)


class _Validator:
    def __init__(self, contract: ir.Contract, profile: ir.SkillProfile, file: str | None) -> None:
        self.c = contract
        self.p = profile
        self.file = file
        self.tool_names = set(profile.tool_names)
        self.diags: list[Diagnostic] = []

    def _d(self, code: str, severity: Severity, message: str, span: ir.Span | None, help: str | None = None) -> None:
        self.diags.append(make(code, severity, message, text=self.p.skill_contract, span=span, skill=self.p.skill_key, file=self.file, help=help))

    def run(self) -> list[Diagnostic]:
        c = self.c
        writes = [t for t in c.tools.values() if t.side_effect == "WRITE"]
        if c.target is not None:
            span = c.prop_spans.get("target")
            tool = c.tools.get(c.target)
            if tool is None or (tool.side_effect != "WRITE" and not self._bad_side_effect(tool)):
                why = "is not in tools" if tool is None else "is not a WRITE tool"
                self._d("SC103", "error", f"target '{c.target}' {why} (§16 rule 3)", span,
                        help=f"write tools here: {', '.join(t.name for t in writes)}" if writes else "configure it in tools with sideEffect: WRITE")
            if c.target not in self.tool_names:
                self._d("SC201", "warning", f"target '{c.target}' is not in the skill's toolNames; at run time it counts as unset (§16)", span)
        if c.delegatable and writes:
            self._d("SC104", "error", f"a delegatable skill must have no WRITE tool, but {', '.join(repr(t.name) for t in writes)} write (§16 rule 4)", c.prop_spans.get("delegatable"))
        for tool in c.tools.values():
            self._tool(tool)
        for out in c.outputs.values():
            self._output(out)
        for inp in c.inputs.values():
            if inp.provider is not None and inp.provider == self.p.skill_key:
                self._d("SC212", "warning", f"inputs.{inp.name}.provider names this skill itself; planning refuses that (§7)", inp.prop_spans.get("provider"))
        for name, tool in c.tools.items():
            if name and name not in self.tool_names:
                self._d("SC216", "warning", f"tools.{name} is not in the skill's toolNames: the node can never call it (§1.3)",
                        tool.key_span, help=did_you_mean(name, self.tool_names) or "add it to the skill's tools: list")
        for name in self.p.tool_names:
            if name not in c.tools:
                self._d("SC213", "note", f"tool '{name}' of toolNames has no contract in tools: it stays callable as a read with no checks (§1.3)", c.prop_spans.get("tools") or c.span)
        return self.diags

    def _bad_side_effect(self, t: ir.ToolContract) -> bool:
        """sideEffect was written but invalid (already SC113): don't pile errors on its default."""
        span = t.prop_spans.get("sideEffect")
        return span is not None and self.p.skill_contract[span.start : span.end] != f'"{t.side_effect}"'

    def _tool(self, t: ir.ToolContract) -> None:
        w = f"tools.{t.name}"
        if t.name == "":
            self._d("SC105", "error", "a tools key is empty (§16 rule 5)", t.key_span)
        if t.side_effect == "WRITE" and t.success is None:
            self._d("SC106", "error", f"WRITE tool '{t.name}' has no success condition (§16 rule 6)", t.key_span,
                    help='add e.g. "success": {"path": "code", "op": "EQ", "value": 200}')
        if t.confirm is True and t.side_effect != "WRITE" and not self._bad_side_effect(t):
            self._d("SC107", "error", f"confirm: true on '{t.name}', which is not a WRITE tool (§16 rule 7)", t.prop_spans.get("confirm"))
        if t.confirm is False and t.side_effect == "WRITE":
            self._d("SC214", "note", f"confirm: false on '{t.name}' skips approval only if the tool is also in state.write-confirm-bypass-tools (§14.1)", t.prop_spans.get("confirm"))
        if t.success is not None and t.success.op is None and "op" not in t.success.prop_spans:
            # an op that was written but is not a known one is already SC113: "has no op" would contradict it
            self._d("SC206", "warning", f"{w}.success has no op, so no business check is made (§6.1, §16)", t.success.key_span or t.success.span)
        if t.args:
            for key in t.idempotency_key:
                if not _names_param(t.args, key.text):
                    self._d("SC204", "warning", f"idempotencyKey '{key.text}' is not a parameter listed in {w}.args (§16)", key.span)
        for i, e in enumerate(t.extracts):
            if e.path is None:
                self._d("SC111", "error", f"{w}.extracts[{i}] has no path (§16 rule 11)", e.prop_spans.get("path") or e.span)
        if t.verify is not None:
            self._verify(t, t.verify)
        for arg in t.args.values():
            self._arg(t, arg)

    def _verify(self, t: ir.ToolContract, v: ir.Verify) -> None:
        w = f"tools.{t.name}.verify"
        target = self.c.tools.get(v.tool) if v.tool else None
        if v.tool is None:
            self._d("SC108", "error", f"{w}.tool is empty (§16 rule 8)", v.key_span or v.span)
        elif target is None:
            self._d("SC108", "error", f"{w}.tool '{v.tool}' is not in the contract's tools (§16 rule 8)", v.prop_spans.get("tool"))
        elif target.side_effect != "NONE":
            self._d("SC108", "error", f"{w}.tool '{v.tool}' must be a read tool (sideEffect NONE) (§16 rule 8)", v.prop_spans.get("tool"))
        if v.tool is not None and v.tool not in self.tool_names:
            self._d("SC203", "warning", f"{w}.tool '{v.tool}' is not in the skill's toolNames (§16)", v.prop_spans.get("tool"))
        for a in v.args.values():
            if a.from_ is not None and a.from_.kind != "call":
                self._d("SC118", "warning", f"{w}.args.{a.name}.from '{a.from_.text}' is not call.<path>; verify.args take only const or from: call.<path> (§6.4)", a.from_.span)
            elif a.from_ is None and not a.has_const and "from" not in a.prop_spans:
                self._d("SC118", "warning", f"{w}.args.{a.name} has neither const nor from: call.<path> (§6.4)", a.key_span)
            elif a.from_ is not None and a.has_const:
                self._d("SC109", "error", f"{w}.args.{a.name} has both from and const (§16 rule 9)", a.key_span)
            if isinstance(a.from_, ir.CallRef) and t.args and not _names_param(t.args, _path_text(a.from_.path)):
                self._d("SC205", "warning", f"{w}.args.{a.name} reads '{a.from_.text}', but '{_path_text(a.from_.path)}' is not listed in tools.{t.name}.args (§16)", a.from_.span)

    def _dropped_sources(self, a: ir.ArgContract) -> bool:
        """Whether `sources` was written with values the parser refused (each already SC113)."""
        span = a.prop_spans.get("sources")
        if span is None:
            return False
        written = re.findall(r'"(?:[^"\\]|\\.)*"', self.p.skill_contract[span.start : span.end])
        return len(written) > len(a.sources)

    def _arg(self, t: ir.ToolContract, a: ir.ArgContract) -> None:
        w = f"tools.{t.name}.args.{a.path.text}"
        if a.from_ is not None and a.has_const:
            self._d("SC109", "error", f"{w} has both from and const (§16 rule 9)", a.key_span, help="keep one: from binds a value, const fixes it")
        bound = a.from_ is not None or a.has_const
        if not bound and self._dropped_sources(a):
            pass  # an unknown source is already SC113; "has no sources" beside it would contradict it
        elif not bound and not a.sources:
            tail = " As it is required, calls can never pass." if a.required else ""
            self._d("SC207", "warning", f"{w} has no from/const and no sources: any value the model gives is rejected (§5.3).{tail}", a.key_span,
                    help='add "sources" (e.g. ["USER"]), a from, or leave the parameter out of args')
        elif not bound and set(a.sources) <= _NEVER_MATCH:
            self._d("SC207", "warning", f"{w}: sources {a.sources} never match without from/const, so the model's value is always rejected (§5.3)", a.prop_spans.get("sources"))
        if a.from_ is not None and "USER" in a.sources and "MODEL" not in a.sources:
            self._d("SC208", "warning", f"{w} has from + sources [USER] without MODEL: when binding fails the user is asked again and again, as the answer still counts as MODEL (§5.3)", a.prop_spans.get("sources"),
                    help='add "MODEL" to sources, or drop the from')
        if a.when == "UNIQUE" and a.from_ is None:
            self._d("SC215", "warning", f"{w}.when has no effect without from (§5.4)", a.prop_spans.get("when"))
        leaf = next((p.name for p in reversed(a.path.parts) if p.kind == "key"), None)
        if leaf in ir.PLATFORM_FIELDS and not isinstance(a.from_, ir.PlatformRef):
            self._d("SC209", "warning", f"parameter '{a.path.text}' of {t.name} is named like the platform field '{leaf}' but is not bound with from: platform.{leaf} (§11)", a.key_span)
        m = a.missing
        if a.required and m.action == "CALL_TOOL":
            if m.tool is None:
                self._d("SC211", "warning", f"{w}.missing is CALL_TOOL without a tool: a missing value is let through (§5.5)", m.span)
            elif m.tool == t.name:
                self._d("SC210", "warning", f"{w}.missing.tool is the argument's own tool '{t.name}' (§5.5)", m.prop_spans.get("tool") or m.span)
            elif m.tool not in self.tool_names:
                self._d("SC202", "warning", f"{w}.missing.tool '{m.tool}' is not in the skill's toolNames (§5.5, §16)", m.prop_spans.get("tool") or m.span)

    def _output(self, o: ir.OutputSpec) -> None:
        w = f"outputs.{o.name}"
        if o.name in ir.PLATFORM_FIELDS or o.name in ir.HIDDEN_PLATFORM_FIELDS:
            self._d("SC117", "warning", f"output key '{o.name}' is a reserved platform field name (§8, §11)", o.key_span)
        if o.type == "LIST" and not o.fields:
            self._d("SC112", "error", f"{w} is a LIST without fields (§16 rule 12)", o.prop_spans.get("type") or o.key_span,
                    help='add e.g. "fields": ["id", "name"]')


def validate(contract: ir.Contract, profile: ir.SkillProfile, *, file: str | None) -> list[Diagnostic]:
    """Check a parsed contract against the load rules of §16 and the spec's lint warnings.

    `profile` supplies the skill key, toolNames and the contract text (for excerpts); `file` is
    the name diagnostics carry. Any "error" means the skill must not load.
    """
    return _Validator(contract, profile, file).run()
