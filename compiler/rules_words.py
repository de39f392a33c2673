"""A rule told in words, for `skillc explain`: operators become English, paths stay as written
(`order.status is 'pending' and args.qty is at most 5`)."""
from __future__ import annotations

from skillc.compiler import ir
from skillc.compiler import rules_ast as A
from skillc.compiler.codegen_rules import namespace_tool
from skillc.compiler.rules_syntax import RuleError, parse_rule_expr

_RELATION = {"==": "is", "!=": "is not", "<": "is less than", "<=": "is at most", ">": "is more than",
             ">=": "is at least", "in": "is one of"}
_ARITH = {"+": "+", "-": "−", "*": "×", "/": "÷", "%": "mod"}
_QUANT = {"all": "every", "exists": "some", "exists_one": "exactly one"}


class _Words:
    def __init__(self, text: str) -> None:
        self.text = text

    def src(self, node: A.Node) -> str:
        return self.text[node.pos[0]:node.pos[1]]

    def say(self, node: A.Node, outer: str = "") -> str:
        """`node` in words; `outer` is the enclosing logical operator (to bracket mixed and/or)."""
        ns = namespace_tool(node)
        if ns is not None:
            kind, tool = ns
            return f"the latest {tool} response" if kind == "latest" else f"the {tool} responses"
        if isinstance(node, A.Binary):
            if node.op in ("&&", "||"):
                word = "and" if node.op == "&&" else "or"
                inner = f"{self.say(node.left, node.op)} {word} {self.say(node.right, node.op)}"
                return f"({inner})" if outer and outer != node.op else inner
            if node.op in _RELATION:
                return f"{self.say(node.left)} {_RELATION[node.op]} {self.say(node.right)}"
            return f"{self.say(node.left)} {_ARITH[node.op]} {self.say(node.right)}"
        if isinstance(node, A.Unary) and node.op == "!":
            return f"not ({self.say(node.operand)})"
        if isinstance(node, A.Has):
            return f"{self.say(node.operand)} has {node.field}"
        if isinstance(node, A.Cond):
            return f"(if {self.say(node.cond)} then {self.say(node.then)} else {self.say(node.other)})"
        if isinstance(node, A.Macro):
            target = self.say(node.target)
            if node.kind in _QUANT and node.pred is not None:
                return f"{_QUANT[node.kind]} {node.var} of {target} has {self.say(node.pred, 'macro')}"
            if node.kind == "filter" and node.pred is not None:
                return f"the {node.var} of {target} where {self.say(node.pred, 'macro')}"
            where = f" where {self.say(node.pred)}" if node.pred is not None else ""
            assert node.transform is not None
            return f"{self.say(node.transform)} for each {node.var} of {target}{where}"
        if isinstance(node, A.Call):
            if node.target is None and node.func == "origin" and node.args:
                return f"the record {self.src(node.args[0])} was taken from"
            if node.target is None and node.func == "size" and node.args:
                return f"the size of {self.say(node.args[0])}"
            if node.target is None and node.func == "sum" and node.args:
                return f"the sum of {self.say(node.args[0])}"
        if isinstance(node, A.Select):
            base = node.operand
            if namespace_tool(base) is not None or isinstance(base, A.Call):
                return f"{node.field} of {self.say(base)}"
        return self.src(node)


def rule_in_words(rule: ir.Rule) -> list[str]:
    """The lines `skillc explain` prints for one rule (the rule's own texts if one does not parse)."""
    def words(text: str | None) -> str:
        if text is None:
            return ""
        try:
            return _Words(text).say(parse_rule_expr(text))
        except RuleError:
            return text

    lines = [f"  rule {rule.name}: {words(rule.expr)}"]
    if rule.when is not None:
        lines.append(f"    applies only when {words(rule.when)}")
    for let in rule.lets:
        lines.append(f"    where {let.name} is {words(let.text)}")
    if rule.message:
        lines.append(f"    else refused, telling the model: {rule.message!r}")
    return lines
