"""Text patterns for the `MATCHES` success operator (a skillc extension beside §6.1's operators),
matched in linear time.

A pattern is a small regular-expression language, parsed here and run as a Thompson NFA: every
position of the text is visited once with the set of states live there, so a match costs at
most (text length) × (pattern size) steps whatever the pattern; no backtracking, hence no
catastrophic case. The language (anything else is refused when the contract is compiled):

- literal characters; `.` (any character but a line break); `\\d \\D \\w \\W \\s \\S`; escaped
  punctuation (`\\.`, `\\(`, `\\\\` …) and `\\t \\n \\r`;
- classes `[abc]`, `[^abc]`, ranges `[a-z0-9]`, the escapes above inside them;
- `^` and `$` (the start and end of the whole text), groups `( … )` and `(?: … )`, `|`;
- `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` (m, n ≤ 100), each optionally followed by `?` (lazy and
  greedy find the same texts, and only "found or not" is asked);
- `(?i)` at the very start: case-insensitive.

Not supported, because they need backtracking or more: backreferences, lookaround, atomic and
possessive groups, named groups, other flags. The pattern is searched for anywhere in the text.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

MAX_PATTERN = 1000
MAX_REPEAT = 100
MAX_STATES = 10_000


class PatternError(ValueError):
    """A pattern outside the supported language; `column` is 1-based within the pattern."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message, self.column = message, column


Test = Callable[[str], bool]
_CLASS_ESCAPES: dict[str, Test] = {
    "d": str.isdigit, "D": lambda c: not c.isdigit(),
    "w": lambda c: c.isalnum() or c == "_", "W": lambda c: not (c.isalnum() or c == "_"),
    "s": str.isspace, "S": lambda c: not c.isspace(),
}
_CHAR_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}


# ---------------------------------------------------------------- parsing


@dataclass
class _Node:
    kind: str  # "char" | "cat" | "alt" | "rep" | "bol" | "eol"
    test: Test | None = None
    items: list["_Node"] | None = None
    low: int = 0
    high: int | None = None


class _Parser:
    def __init__(self, text: str, fold: bool) -> None:
        self.s, self.i, self.fold = text, 0, fold

    def error(self, message: str, at: int | None = None) -> PatternError:
        return PatternError(message, (self.i if at is None else at) + 1)

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def alternation(self) -> _Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else _Node("alt", items=branches)

    def sequence(self) -> _Node:
        items = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.repeat(self.atom()))
        return _Node("cat", items=items)

    def repeat(self, node: _Node) -> _Node:
        while True:
            c, start = self.peek(), self.i
            if c in ("*", "+", "?"):
                self.i += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{" and (bounds := self.bounds()) is not None:
                low, high = bounds
            else:
                return node
            if node.kind in ("bol", "eol"):
                raise self.error("a quantifier needs something to repeat", start)
            if self.peek() == "?":
                self.i += 1  # lazy: the same texts match
            elif self.peek() == "+":
                raise self.error("possessive quantifiers are not supported")
            node = _Node("rep", items=[node], low=low, high=high)

    def bounds(self) -> tuple[int, int | None] | None:
        close = self.s.find("}", self.i)
        inner = self.s[self.i + 1:close] if close > 0 else ""
        low_text, comma, high_text = inner.partition(",")
        if not low_text.isdigit() or (high_text and not high_text.isdigit()):
            return None  # a literal "{", as in most engines
        low, high = int(low_text), (int(high_text) if high_text else None if comma else int(low_text))
        if low > MAX_REPEAT or (high is not None and (high > MAX_REPEAT or high < low)):
            raise self.error(f"repeat counts must be 0..{MAX_REPEAT}, the first not above the second")
        self.i = close + 1
        return low, high

    def atom(self) -> _Node:
        c, start = self.peek(), self.i
        self.i += 1
        if c == "(":
            if self.s.startswith("?:", self.i):
                self.i += 2
            elif self.peek() == "?":
                raise self.error("only (?: … ) groups and a leading (?i) are supported "
                                 "(no lookaround, named or atomic groups)", start)
            inner = self.alternation()
            if self.peek() != ")":
                raise self.error("missing ')'", start)
            self.i += 1
            return inner
        if c == ")":
            raise self.error("unbalanced ')'", start)
        if c in ("*", "+", "?"):
            raise self.error("a quantifier needs something to repeat", start)
        if c == "^":
            return _Node("bol")
        if c == "$":
            return _Node("eol")
        if c == ".":
            return _Node("char", test=lambda ch: ch != "\n")
        if c == "[":
            return _Node("char", test=self.char_class(start))
        if c == "\\":
            return _Node("char", test=self.escape())
        return _Node("char", test=self.literal(c))

    def literal(self, c: str) -> Test:
        if self.fold:
            folded = c.casefold()
            return lambda ch: ch.casefold() == folded
        return lambda ch: ch == c

    def escape(self) -> Test:
        c, at = self.peek(), self.i - 1
        if not c:
            raise self.error("a pattern cannot end with '\\'", at)
        self.i += 1
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c in _CHAR_ESCAPES:
            return self.literal(_CHAR_ESCAPES[c])
        if c.isdigit() or c in "gk":
            raise self.error("backreferences are not supported", at)
        if c.isalnum():
            raise self.error(f"unknown escape '\\{c}'", at)
        return self.literal(c)

    def char_class(self, start: int) -> Test:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        tests: list[Test] = []
        first = True
        while True:
            c = self.peek()
            if not c:
                raise self.error("missing ']'", start)
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            self.i += 1
            if c == "\\":
                esc = self.s[self.i] if self.i < len(self.s) else ""
                test = self.escape()
                if esc in _CLASS_ESCAPES:
                    tests.append(test)
                    continue
                low = _CHAR_ESCAPES.get(esc, esc)
            else:
                low = c
            if self.peek() == "-" and self.i + 1 < len(self.s) and self.s[self.i + 1] != "]":
                self.i += 1
                high = self.s[self.i]
                self.i += 1
                if high == "\\":
                    high = _CHAR_ESCAPES.get(self.peek(), self.peek())
                    self.i += 1
                if high < low:
                    raise self.error(f"range {low}-{high} is backwards", start)
                tests.append(self.range_test(low, high))
            else:
                tests.append(self.literal(low))
        if negated:
            return lambda ch: not any(t(ch) for t in tests)
        return lambda ch: any(t(ch) for t in tests)

    def range_test(self, low: str, high: str) -> Test:
        if self.fold:
            return lambda ch: low <= ch <= high or low <= ch.lower() <= high or low <= ch.upper() <= high
        return lambda ch: low <= ch <= high


# ---------------------------------------------------------------- the NFA


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled pattern: `ops[i]` is ("char", test, next) | ("split", a, b) | ("bol"|"eol", next)
    | ("match",); `start` is the entry state."""

    text: str
    ops: tuple[tuple[Any, ...], ...]
    start: int

    def search(self, text: str) -> bool:
        """Whether the pattern is found anywhere in `text` (linear in its length)."""
        ops, end = self.ops, len(text)
        current: list[int] = []
        seen: set[int] = set()
        for pos in range(end + 1):
            # the entry state joins at every position: the search is unanchored
            if self._add(self.start, pos, end, current, seen):
                return True
            if pos == end:
                return False
            ch = text[pos]
            nxt: list[int] = []
            nseen: set[int] = set()
            for state in current:
                op = ops[state]
                if op[1](ch) and self._add(op[2], pos + 1, end, nxt, nseen):
                    return True
            current, seen = nxt, nseen
        return False

    def _add(self, state: int, pos: int, end: int, out: list[int], seen: set[int]) -> bool:
        """Follow the empty moves from `state` at `pos`; the char states reached go to `out`.
        True when the match state is reached."""
        stack = [state]
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            op = self.ops[s]
            kind = op[0]
            if kind == "char":
                out.append(s)
            elif kind == "split":
                stack.append(op[2])
                stack.append(op[1])
            elif kind == "bol":
                if pos == 0:
                    stack.append(op[1])
            elif kind == "eol":
                if pos == end:
                    stack.append(op[1])
            else:
                return True
        return False


class _Builder:
    def __init__(self) -> None:
        self.ops: list[list[Any]] = []

    def emit(self, *op: object) -> int:
        if len(self.ops) >= MAX_STATES:
            raise PatternError(f"the pattern is too large (over {MAX_STATES} states once its repeats are spelled out)", 1)
        self.ops.append(list(op))
        return len(self.ops) - 1

    def build(self, node: _Node, nxt: int) -> int:
        """States for `node` that continue at `nxt`; returns its entry state (built back to front)."""
        if node.kind == "char":
            return self.emit("char", node.test, nxt)
        if node.kind in ("bol", "eol"):
            return self.emit(node.kind, nxt)
        if node.kind == "cat":
            for item in reversed(node.items or []):
                nxt = self.build(item, nxt)
            return nxt
        if node.kind == "alt":
            entries = [self.build(item, nxt) for item in node.items or []]
            entry = entries[-1]
            for other in reversed(entries[:-1]):
                entry = self.emit("split", other, entry)
            return entry
        body = (node.items or [])[0]
        if node.high is None:  # body{low,}: low copies, then a loop
            loop = self.emit("split", -1, nxt)
            self.ops[loop][1] = self.build(body, loop)
            entry = loop
            for _ in range(node.low):
                entry = self.build(body, entry)
            return entry
        entry = nxt
        for _ in range(node.high - node.low):  # optional copies
            entry = self.emit("split", self.build(body, entry), nxt)
        for _ in range(node.low):
            entry = self.build(body, entry)
        return entry


@lru_cache(maxsize=512)
def compile_pattern(text: str) -> Pattern:
    """The compiled pattern; raises PatternError for anything outside the language above."""
    if len(text) > MAX_PATTERN:
        raise PatternError(f"the pattern is longer than {MAX_PATTERN} characters", 1)
    fold = text.startswith("(?i)")
    parser = _Parser(text, fold)
    parser.i = 4 if fold else 0
    tree = parser.alternation()
    if parser.i < len(text):
        raise parser.error("unbalanced ')'")
    b = _Builder()
    accept = b.emit("match")
    start = b.build(tree, accept)
    return Pattern(text=text, ops=tuple(tuple(op) for op in b.ops), start=start)


def pattern_problem(text: str) -> tuple[str, int] | None:
    """Why a pattern is refused and where (1-based column), or None when it compiles."""
    try:
        compile_pattern(text)
    except PatternError as exc:
        return exc.message, exc.column
    return None


def op_matches(actual: object, pattern: object) -> bool:
    """MATCHES: the value (a string, or a number or boolean as its JSON text) contains a match of
    the pattern; anything else (missing, null, an object or list) does not match."""
    if not isinstance(pattern, str):
        return False
    if isinstance(actual, bool):
        text = "true" if actual else "false"
    elif isinstance(actual, (int, float)):
        text = repr(actual)
    elif isinstance(actual, str):
        text = actual
    else:
        return False
    try:
        return compile_pattern(pattern).search(text)
    except PatternError:
        return False  # the compiler refuses such a contract; a hand-made module fails closed
