"""skill_contract text -> typed IR (spec §2–§9, §19), with diagnostics pointing into the text.

Two layers: `skillc.compiler.jsonc` parses the text (JSON with comments) into `J` values with
spans; `_Builder` here reads the J tree into `ir.Contract`, applying §19: unknown properties are
ignored with a note, an empty string (or null) is unset, enums are case-sensitive. Rules the IR
cannot represent (bad enums, bad expressions: load rules 2, 10, 13) are reported here; the rest
in validate.py.
"""
from __future__ import annotations

import difflib
from typing import Any

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, Severity, make
from skillc.compiler.expr import ExprError, Where, parse_expression, parse_param_path, parse_response_path
from skillc.compiler.json_value import J
from skillc.compiler.jsonc import JSON_ERRORS, KIND_NAMES, parse_json, plain  # noqa: F401 (JSON_ERRORS re-exported)


def parse_contract(text: str, *, skill: str | None = None, file: str | None = None) -> tuple[ir.Contract | None, list[Diagnostic]]:
    """Parse skill_contract text into IR. None (with SC101) if it is not JSON or not an object.

    Never raises on bad text: everything wrong is a diagnostic. Errors here (bad enums, bad
    expressions, wrong JSON types) make the skill unloadable, like validate()'s errors.
    """
    root, diags = parse_json(text, skill=skill, file=file)
    if root is None:
        return None, diags
    if root.kind != "object":
        return None, [make("SC101", "error", f"skill_contract must be a JSON object, found {KIND_NAMES[root.kind]} (§2)", text=text, span=root.span, skill=skill, file=file)]
    builder = _Builder(text, skill, file)
    contract = builder.contract(root)
    return contract, diags + builder.diags


# ---------------------------------------------------------------- J tree -> IR

ROOT_KEYS = frozenset({"mode", "delegatable", "target", "inputs", "outputs", "tools"})
TOOL_KEYS = frozenset({"label", "sideEffect", "confirm", "idempotencyKey", "args", "success", "error", "extracts", "verify",
                       "rules"})
RULE_ITEM_KEYS = frozenset({"name", "when", "let", "expr", "message"})
ARG_KEYS = frozenset({"from", "const", "when", "sources", "required", "enum", "missing", "sensitive", "label", "fresh",
                      "evidence"})
MISSING_KEYS = frozenset({"action", "tool", "message"})
SUCCESS_KEYS = frozenset({"path", "op", "value"})
ERROR_KEYS = frozenset({"code", "message"})
EXTRACT_KEYS = frozenset({"key", "path", "fields", "entity"})
ENTITY_KEYS = frozenset({"type", "id", "name", "scalar", "keyed"})
VERIFY_KEYS = frozenset({"tool", "args"})
VERIFY_ARG_KEYS = frozenset({"from", "const"})
INPUT_KEYS = frozenset({"from", "required", "provider"})
OUTPUT_KEYS = frozenset({"type", "fields", "minItems", "hint", "required", "share", "entity", "sources", "constant", "sensitive"})

# Properties whose loss changes what the runtime allows (a misspelling of one is SC004, a warning);
# the rest only shape prompts or are not in effect (§19), so a misspelling of those stays a note.
RULE_KEYS = frozenset({
    "target", "delegatable", "inputs", "outputs", "tools", "sideEffect", "confirm", "idempotencyKey", "args",
    "success", "error", "extracts", "verify", "from", "const", "when", "sources", "required", "enum", "missing",
    "sensitive", "action", "tool", "op", "path", "value", "code", "entity", "share", "constant", "provider",
    "type", "fields", "id", "key", "rules", "expr", "let",
})

# The §19 constant-key mix-up: silently ignored by the runtime, so it earns a warning, not a note.
_MIXUPS = {("arg", "constant"): "const", ("output", "const"): "constant"}
_EXPR_CODES = {"syntax": "SC115", "prefix": "SC102", "platform": "SC110", "call": "SC116"}
_JSON_KIND = {"string": "a string", "bool": "a boolean", "number": "a number", "object": "an object", "array": "a list"}

Props = dict[str, tuple[ir.Span, J]]


class _Builder:
    """Reads a J tree into IR, collecting diagnostics instead of raising."""

    def __init__(self, text: str, skill: str | None, file: str | None) -> None:
        self.text, self.skill, self.file = text, skill, file
        self.diags: list[Diagnostic] = []

    def _d(self, code: str, severity: Severity, message: str, span: ir.Span | None, help: str | None = None) -> None:
        self.diags.append(make(code, severity, message, text=self.text, span=span, skill=self.skill, file=self.file, help=help))

    # ------------------------------------------------------------ members and typed values

    def _entries(self, obj: J, where: str) -> list[tuple[str, ir.Span, J]]:
        """Members of a map-valued property (tools, args, ...): duplicates warned, last wins."""
        seen: dict[str, tuple[str, ir.Span, J]] = {}
        for key, kspan, val in obj.value:
            if key in seen:
                self._d("SC002", "warning", f"duplicate key '{key}' in {where}; the last one wins", kspan)
            seen[key] = (key, kspan, val)
        return list(seen.values())

    def _members(self, obj: J, where: str, known: frozenset[str], role: str = "") -> Props:
        """Properties of a fixed-shape object; unknown ones are noted and ignored (§19)."""
        props: Props = {}
        for key, kspan, val in self._entries(obj, where):
            if key in known:
                props[key] = (kspan, val)
                continue
            right = _MIXUPS.get((role, key))
            if right:
                self._d("SC003", "warning", f"'{key}' is not a property of {where} and is ignored; the constant here is '{right}' (§19)", kspan, help=f"rename it to '{right}'")
                continue
            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.7)
            help = f"did you mean '{close[0]}'?" if close else None
            if close and close[0] in RULE_KEYS:  # a misspelled rule: the check it carried is silently lost
                self._d("SC004", "warning", f"unknown property '{key}' in {where} is ignored (§19), so the rule "
                        f"'{close[0]}' would carry is not applied", kspan, help=help)
                continue
            self._d("SC001", "note", f"unknown property '{key}' in {where} is ignored (§19)", kspan, help=help)
        return props

    def _val(self, props: Props, name: str, where: str, spans: dict[str, ir.Span], kinds: tuple[str, ...]) -> J | None:
        got = props.get(name)
        if got is None:
            return None
        j = got[1]
        if j.kind == "null" or (j.kind == "string" and j.value == ""):
            return None  # §19: an empty string is unset (null too)
        spans[name] = j.span
        if j.kind not in kinds:
            want = " or ".join(_JSON_KIND[k] for k in kinds)
            self._d("SC114", "error", f"{where}.{name} must be {want}, found {KIND_NAMES[j.kind]}", j.span)
            return None
        return j

    def _str(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> str | None:
        j = self._val(props, name, where, spans, ("string",))
        return None if j is None else j.value

    def _bool(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> bool | None:
        j = self._val(props, name, where, spans, ("bool",))
        return None if j is None else j.value

    def _json(self, props: Props, name: str, spans: dict[str, ir.Span]) -> tuple[bool, Any]:
        """A JSON-valued property (const, constant, value): "" is a value, null is unset."""
        got = props.get(name)
        if got is None or got[1].kind == "null":
            return False, None
        spans[name] = got[1].span
        return True, plain(got[1])

    def _enum_value(self, j: J, prop: str, where: str, allowed: tuple[str, ...]) -> str | None:
        if j.kind != "string":
            self._d("SC114", "error", f"{where} must be a string, one of {', '.join(allowed)}; found {KIND_NAMES[j.kind]}", j.span)
            return None
        if j.value in allowed:
            value: str = j.value
            return value
        same = [a for a in allowed if a.lower() == j.value.lower()]
        close = difflib.get_close_matches(j.value.upper(), allowed, n=1, cutoff=0.75)
        help = (f"did you mean '{same[0]}'? enum values are case-sensitive" if same
                else f"did you mean '{close[0]}'?" if close else None)
        self._d("SC113", "error", f"invalid {prop} '{j.value}' in {where}; expected one of {', '.join(allowed)} (§18)", j.span, help=help)
        return None

    def _enum(self, props: Props, name: str, where: str, spans: dict[str, ir.Span], prop: str | None = None) -> str | None:
        got = props.get(name)
        if got is None or got[1].kind == "null" or (got[1].kind == "string" and got[1].value == ""):
            return None
        spans[name] = got[1].span
        return self._enum_value(got[1], name, f"{where}.{name}", ir.ENUMS[prop or name])

    def _list(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> list[J]:
        j = self._val(props, name, where, spans, ("array",))
        return [] if j is None else j.value

    def _str_list(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> list[tuple[str, ir.Span]]:
        out = []
        for i, item in enumerate(self._list(props, name, where, spans)):
            if item.kind == "string":
                if item.value != "":
                    out.append((item.value, item.span))
            elif item.kind != "null":
                self._d("SC114", "error", f"{where}.{name}[{i}] must be a string, found {KIND_NAMES[item.kind]}", item.span)
        return out

    def _sources(self, props: Props, where: str, spans: dict[str, ir.Span]) -> list[str]:
        out = []
        for i, item in enumerate(self._list(props, "sources", where, spans)):
            if item.kind == "string" and item.value == "":
                continue
            v = self._enum_value(item, "source", f"{where}.sources[{i}]", ir.ENUMS["sources"])
            if v is not None:
                out.append(v)
        return out

    def _obj(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> tuple[ir.Span, J] | None:
        j = self._val(props, name, where, spans, ("object",))
        return None if j is None else (props[name][0], j)

    # ------------------------------------------------------------ expressions and paths

    def _sub_span(self, span: ir.Span, column: int) -> ir.Span:
        """The part of a string token from the expression's `column` (1-based) to its end."""
        if span.line != span.end_line:
            return span
        col = min(span.column + column, span.end_column - 1)
        return ir.Span(line=span.line, column=col, end_line=span.line, end_column=max(span.end_column - 1, col + 1))

    def _expr(self, props: Props, where: str, spans: dict[str, ir.Span], kind: Where) -> ir.Node | None:
        j = self._val(props, "from", where, spans, ("string",))
        if j is None:
            return None
        try:
            return parse_expression(j.value, where=kind, span_base=j.span)
        except ExprError as exc:
            code = "SC118" if kind == "verify" and exc.kind == "prefix" else _EXPR_CODES[exc.kind]
            help = "verify.args take only const or from: call.<path> (§6.4)" if code == "SC118" else None
            self._d(code, "warning" if code == "SC118" else "error", f"{where}.from: {exc.message}",
                    self._sub_span(j.span, exc.column), help=help)  # SC118 leaves it out ("What drops a skill")
            return None

    def _path(self, text: str, span: ir.Span, where: str, response: bool) -> ir.Path | None:
        try:
            return (parse_response_path if response else parse_param_path)(text, span=span)
        except ExprError as exc:
            self._d("SC115", "error", f"{where}: {exc.message}", self._sub_span(span, exc.column))
            return None

    def _rpath(self, props: Props, name: str, where: str, spans: dict[str, ir.Span]) -> ir.Path | None:
        j = self._val(props, name, where, spans, ("string",))
        return None if j is None else self._path(j.value, j.span, f"{where}.{name}", True)

    # ------------------------------------------------------------ the contract tree

    def contract(self, root: J) -> ir.Contract:
        """The root object (§3)."""
        w = "skill_contract"
        props = self._members(root, w, ROOT_KEYS)
        spans: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {}
        mode = self._enum(props, "mode", w, spans)
        if mode:
            kw["mode"] = mode
        if (d := self._bool(props, "delegatable", w, spans)) is not None:
            kw["delegatable"] = d
        kw["target"] = self._str(props, "target", w, spans)
        if (j := self._val(props, "inputs", w, spans, ("object",))) is not None:
            kw["inputs"] = {k: inp for k, ks, v in self._entries(j, "inputs") if (inp := self._input(k, ks, v)) is not None}
        if (j := self._val(props, "outputs", w, spans, ("object",))) is not None:
            kw["outputs"] = {k: out for k, ks, v in self._entries(j, "outputs") if (out := self._output(k, ks, v)) is not None}
        if (j := self._val(props, "tools", w, spans, ("object",))) is not None:
            kw["tools"] = {k: tool for k, ks, v in self._entries(j, "tools") if (tool := self._tool(k, ks, v)) is not None}
        return ir.Contract(span=root.span, prop_spans=spans, **kw)

    def _is_obj(self, j: J, where: str) -> bool:
        if j.kind == "object":
            return True
        self._d("SC114", "error", f"{where} must be an object, found {KIND_NAMES[j.kind]}", j.span)
        return False

    def _tool(self, name: str, kspan: ir.Span, j: J) -> ir.ToolContract | None:
        w = f"tools.{name}"
        if not self._is_obj(j, w):
            return None
        props = self._members(j, w, TOOL_KEYS)
        spans: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"label": self._str(props, "label", w, spans), "confirm": self._bool(props, "confirm", w, spans)}
        if se := self._enum(props, "sideEffect", w, spans):
            kw["side_effect"] = se
        kw["idempotency_key"] = [p for t, s in self._str_list(props, "idempotencyKey", w, spans) if (p := self._path(t, s, f"{w}.idempotencyKey", False))]
        if (a := self._val(props, "args", w, spans, ("object",))) is not None:
            kw["args"] = {k: arg for k, ks, v in self._entries(a, f"{w}.args") if (arg := self._arg(f"{w}.args", k, ks, v)) is not None}
        if got := self._obj(props, "success", w, spans):
            kw["success"] = self._success(f"{w}.success", *got)
        if got := self._obj(props, "error", w, spans):
            sp: dict[str, ir.Span] = {}
            ep = self._members(got[1], f"{w}.error", ERROR_KEYS)
            kw["error"] = ir.ErrorPaths(span=got[1].span, key_span=got[0], prop_spans=sp, code=self._rpath(ep, "code", f"{w}.error", sp), message=self._rpath(ep, "message", f"{w}.error", sp))
        kw["extracts"] = [ex for i, e in enumerate(self._list(props, "extracts", w, spans)) if (ex := self._extract(f"{w}.extracts[{i}]", e))]
        if got := self._obj(props, "verify", w, spans):
            kw["verify"] = self._verify(f"{w}.verify", *got)
        kw["rules"] = [r for i, e in enumerate(self._list(props, "rules", w, spans)) if (r := self._rule(f"{w}.rules[{i}]", e))]
        return ir.ToolContract(name=name, span=j.span, key_span=kspan, prop_spans=spans, **kw)

    def _arg(self, where: str, key: str, kspan: ir.Span, j: J) -> ir.ArgContract | None:
        w = f"{where}.{key}"
        path = self._path(key, kspan, f"parameter path {key!r} in {where}", False)
        if path is None or not self._is_obj(j, w):
            return None
        props = self._members(j, w, ARG_KEYS, role="arg")
        spans: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"from_": self._expr(props, w, spans, "arg")}
        kw["has_const"], kw["const"] = self._json(props, "const", spans)
        if when := self._enum(props, "when", w, spans):
            kw["when"] = when
        kw["sources"] = self._sources(props, w, spans)
        for flag in ("required", "sensitive", "fresh"):
            if (b := self._bool(props, flag, w, spans)) is not None:
                kw[flag] = b
        kw["enum"] = [plain(e) for e in self._list(props, "enum", w, spans)]
        kw["label"] = self._str(props, "label", w, spans)
        if "missing" in props:
            if (m := self._missing(f"{w}.missing", props["missing"], spans)) is not None:
                kw["missing"] = m
        kw["evidence"] = self._evidence_fields(props, w, spans)
        return ir.ArgContract(path=path, span=j.span, key_span=kspan, prop_spans=spans, **kw)

    def _evidence_fields(self, props: Props, where: str, spans: dict[str, ir.Span]) -> list[ir.EvidenceField]:
        """args.<p>.evidence: one `<tool>:<path>` or `<extract key>[.<path>]` text, or a list of
        them; resolved against the contract's extracts by compiler.evidence_fields."""
        j = self._val(props, "evidence", where, spans, ("string", "array"))
        if j is None:
            return []
        items = [j] if j.kind == "string" else j.value
        out = []
        for i, item in enumerate(items):
            w = f"{where}.evidence" + ("" if j.kind == "string" else f"[{i}]")
            if item.kind != "string" or item.value == "":
                self._d("SC114", "error", f"{w} must be a non-empty string, found {KIND_NAMES[item.kind]}", item.span)
                continue
            tool, sep, rest = item.value.partition(":")
            if not sep:
                tool, rest = "", item.value
            path = self._path(rest, item.span, w, False) if rest else None
            if path is None:
                if not rest:
                    self._d("SC115", "error", f"{w}: no path after '{tool}:'", item.span)
                continue
            out.append(ir.EvidenceField(span=item.span, text=item.value, tool=tool or None, path=path.parts))
        return out

    def _missing(self, where: str, got: tuple[ir.Span, J], spans: dict[str, ir.Span]) -> ir.Missing | None:
        kspan, j = got
        if j.kind == "null" or (j.kind == "string" and j.value == ""):
            return None
        spans["missing"] = j.span
        if j.kind == "string":  # shorthand `missing: "CALL_TOOL"` as the spec's prose writes it (§5.3)
            action = self._enum_value(j, "action", where, ir.ENUMS["action"])
            return ir.Missing(span=j.span, key_span=kspan, action=action) if action else None
        if not self._is_obj(j, where):
            return None
        props = self._members(j, where, MISSING_KEYS)
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"tool": self._str(props, "tool", where, sp), "message": self._str(props, "message", where, sp)}
        if action := self._enum(props, "action", where, sp):
            kw["action"] = action
        return ir.Missing(span=j.span, key_span=kspan, prop_spans=sp, **kw)

    def _success(self, where: str, kspan: ir.Span, j: J) -> ir.Success:
        props = self._members(j, where, SUCCESS_KEYS)
        sp: dict[str, ir.Span] = {}
        has, value = self._json(props, "value", sp)
        return ir.Success(span=j.span, key_span=kspan, prop_spans=sp, path=self._rpath(props, "path", where, sp), op=self._enum(props, "op", where, sp), has_value=has, value=value)

    def _entity(self, where: str, props: Props, spans: dict[str, ir.Span]) -> ir.Entity | None:
        got = self._obj(props, "entity", where, spans)
        if got is None:
            return None
        w = f"{where}.entity"
        ep = self._members(got[1], w, ENTITY_KEYS)
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {k: v for k in ("type", "id", "name", "scalar") if (v := self._str(ep, k, w, sp)) is not None}
        if (keyed := self._bool(ep, "keyed", w, sp)) is not None:
            kw["keyed"] = keyed
        return ir.Entity(span=got[1].span, key_span=got[0], prop_spans=sp, **kw)

    def _rule(self, where: str, j: J) -> ir.Rule | None:
        """One rule (docs/reference/rules.md); its texts are parsed and checked by rules_front."""
        if not self._is_obj(j, where):
            return None
        props = self._members(j, where, RULE_ITEM_KEYS)
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {k: self._str(props, k, where, sp) for k in ("name", "when", "expr", "message")}
        if (lets := self._val(props, "let", where, sp, ("object",))) is not None:
            kw["lets"] = []
            for key, kspan, val in self._entries(lets, f"{where}.let"):
                if val.kind != "string" or val.value == "":
                    self._d("SC114", "error", f"{where}.let.{key} must be an expression (a non-empty string), found "
                            f"{KIND_NAMES[val.kind]}", val.span)
                    continue
                kw["lets"].append(ir.RuleLet(name=key, text=val.value, span=val.span, key_span=kspan))
        return ir.Rule(span=j.span, prop_spans=sp, **kw)

    def _extract(self, where: str, j: J) -> ir.Extract | None:
        if not self._is_obj(j, where):
            return None
        props = self._members(j, where, EXTRACT_KEYS)
        sp: dict[str, ir.Span] = {}
        return ir.Extract(
            span=j.span, prop_spans=sp, key=self._str(props, "key", where, sp), path=self._rpath(props, "path", where, sp),
            fields=[t for t, _ in self._str_list(props, "fields", where, sp)], entity=self._entity(where, props, sp),
        )

    def _verify(self, where: str, kspan: ir.Span, j: J) -> ir.Verify:
        props = self._members(j, where, VERIFY_KEYS)
        sp: dict[str, ir.Span] = {}
        args: dict[str, ir.VerifyArg] = {}
        if (a := self._val(props, "args", where, sp, ("object",))) is not None:
            for k, ks, v in self._entries(a, f"{where}.args"):
                w = f"{where}.args.{k}"
                if not self._is_obj(v, w):
                    continue
                ap = self._members(v, w, VERIFY_ARG_KEYS, role="arg")
                asp: dict[str, ir.Span] = {}
                has, const = self._json(ap, "const", asp)
                args[k] = ir.VerifyArg(name=k, span=v.span, key_span=ks, prop_spans=asp, from_=self._expr(ap, w, asp, "verify"), has_const=has, const=const)
        return ir.Verify(span=j.span, key_span=kspan, prop_spans=sp, tool=self._str(props, "tool", where, sp), args=args)

    def _input(self, name: str, kspan: ir.Span, j: J) -> ir.InputSpec | None:
        w = f"inputs.{name}"
        if not self._is_obj(j, w):
            return None
        props = self._members(j, w, INPUT_KEYS)
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"from_": self._expr(props, w, sp, "input"), "provider": self._str(props, "provider", w, sp)}
        if (b := self._bool(props, "required", w, sp)) is not None:
            kw["required"] = b
        return ir.InputSpec(name=name, span=j.span, key_span=kspan, prop_spans=sp, **kw)

    def _output(self, name: str, kspan: ir.Span, j: J) -> ir.OutputSpec | None:
        w = f"outputs.{name}"
        if not self._is_obj(j, w):
            return None
        props = self._members(j, w, OUTPUT_KEYS, role="output")
        sp: dict[str, ir.Span] = {}
        kw: dict[str, Any] = {"hint": self._str(props, "hint", w, sp), "entity": self._entity(w, props, sp), "share": self._enum(props, "share", w, sp)}
        if t := self._enum(props, "type", w, sp):
            kw["type"] = t
        kw["fields"] = [t for t, _ in self._str_list(props, "fields", w, sp)]
        if (n := self._val(props, "minItems", w, sp, ("number",))) is not None:
            if isinstance(n.value, int) and n.value >= 0:
                kw["min_items"] = n.value
            else:
                self._d("SC114", "error", f"{w}.minItems must be a non-negative integer, found {n.value}", n.span)
        for flag in ("required", "sensitive"):
            if (b := self._bool(props, flag, w, sp)) is not None:
                kw[flag] = b
        kw["sources"] = self._sources(props, w, sp)
        kw["has_constant"], kw["constant"] = self._json(props, "constant", sp)
        return ir.OutputSpec(name=name, span=j.span, key_span=kspan, prop_spans=sp, **kw)
