"""One error tree (`SkillcError`), one error table (`ErrorName` + codes), one vocabulary."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from skillc.runtime.words import vocab
from skillc.runtime.words.errors import ERRORS, ErrorName, SkillcError, code_of

USER_FACING = [
    ("skillc.runtime.model.base", "ModelError"),
    ("skillc.runtime.outside.config", "ConfigError"),
    ("skillc.runtime.compiled.loader", "CompiledStudioError"),
    ("skillc.runtime.store.base", "StoreError"),
    ("skillc.runtime.mcp.gateway", "GatewayConfigError"),
    ("skillc.runtime.graph.planner", "PlanningFailed"),
    ("skillc.runtime.words.errors", "CallerError"),
    ("skillc.runtime.words.errors", "SessionBusy"),
    ("skillc.runtime.text.border", "Refused"),
    ("skillc.runtime.server.errors", "ApiError"),
    ("skillc.runtime.server.studio_feed", "StudioUnavailable"),
    ("skillc.compiler.sources", "SourceError"),
    ("skillc.compiler.expr", "ExprError"),
    ("skillc.compiler.codegen_literals", "UnsafeLiteral"),
    ("skillc.compiler.diff", "DiffInputError"),
    ("skillc.chat", "ChatError"),
    ("skillc.scenario.load", "ScenarioError"),
]


@pytest.mark.parametrize("module,name", USER_FACING)
def test_every_user_facing_error_is_a_skillc_error(module: str, name: str) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, SkillcError)


def test_no_error_class_outside_the_tree() -> None:
    # every Exception subclass defined in the package derives from SkillcError (or another one that does)
    root = Path(importlib.import_module("skillc").__file__).parent
    bare = []
    for path in root.rglob("*.py"):
        if "tests" in path.parts:
            continue
        for m in re.finditer(r"^class (\w+)\((Exception|ValueError|RuntimeError|TypeError|KeyError)\)",
                             path.read_text(encoding="utf-8"), re.M):
            bare.append(f"{path.relative_to(root)}: {m.group(1)}")
    assert not bare, bare


def test_code_of_raises_on_a_typo() -> None:
    assert code_of("APPROVAL_REQUIRED") == "agent_runtime.42221"
    assert code_of(ErrorName.TOOL_TIMEOUT) == "agent_runtime.40016"
    assert code_of("FINISH_NEED_TARGET") is None  # in the table, no code in the spec
    assert code_of(None) is None
    with pytest.raises(KeyError):
        code_of("APPROVAL_REQUIERD")


def test_error_names_and_table_agree() -> None:
    assert set(ErrorName) == set(ERRORS)
    assert all(ErrorName(n) == n for n in ERRORS)


RUNTIME = Path(importlib.import_module("skillc.runtime").__file__).parent


def _runtime_sources(*skip: str) -> list[tuple[str, str]]:
    """(path relative to runtime/, text) of every runtime module but `skip`."""
    return [(str(p.relative_to(RUNTIME)), p.read_text(encoding="utf-8")) for p in sorted(RUNTIME.rglob("*.py"))
            if str(p.relative_to(RUNTIME)) not in skip]


def test_runtime_spells_no_error_name_outside_errors_py() -> None:
    # every runtime module names errors through ErrorName, never as bare strings
    names = "|".join(sorted(ERRORS, key=len, reverse=True))
    found = [f"{path}: {m.group(0)}" for path, text in _runtime_sources("words/errors.py")
             for m in re.finditer(rf'"({names})"', text)]
    assert not found, found


def test_runtime_compares_no_status_as_a_bare_string() -> None:
    # node, task and evidence states, suspensions, approval decisions and call effects are vocab
    # words wherever the runtime compares, tests or sets them
    words = {*vocab.NodeStatus, *vocab.TaskStatus, *vocab.EvidenceStatus, *vocab.Suspension, *vocab.NodeKind,
             *vocab.Decision}
    alt = "|".join(sorted(words, key=len, reverse=True))
    effects = "|".join(vocab.Effect)
    patterns = [rf'(==|!=)\s*"({alt})"', rf'\bin \(("[A-Z_]+", )*"({alt})"',
                rf'\b(state|status|kind|suspended)\s*=\s*"({alt})"', rf'\beffect\s*(==|=)\s*"({effects})"']
    found = [f"{path}: {m.group(0)}" for path, text in _runtime_sources("words/vocab.py") for pattern in patterns
             for m in re.finditer(pattern, text)]
    assert not found, found


def test_a_stored_status_comes_back_as_its_word() -> None:
    # a record rebuilt from a stored document holds the vocab word, equal to the stored text
    from skillc.runtime.seam.state import Evidence, node_from_doc, task_from_doc

    node = node_from_doc({"id": "n1", "task": "t1", "skill": "k", "kind": "delegate", "state": "SUSPENDED",
                          "suspended": "APPROVAL"})
    assert (node.kind, node.state, node.suspended) == ("delegate", "SUSPENDED", "APPROVAL")
    assert type(node.kind) is vocab.NodeKind and type(node.state) is vocab.NodeStatus
    assert type(node.suspended) is vocab.Suspension
    task = task_from_doc({"id": "t1", "session": "s1", "agent": "a", "message": "hi", "state": "DONE"})
    assert type(task.state) is vocab.TaskStatus and task.state in vocab.FINAL_TASK
    ev = Evidence(id="e1", task="t1", node="n1", tool="x", args={}, side_effect="WRITE", status="UNKNOWN")
    assert type(ev.status) is vocab.EvidenceStatus and type(ev.side_effect) is vocab.SideEffect
    with pytest.raises(ValueError):
        node_from_doc({"id": "n1", "task": "t1", "skill": "k", "state": "DOZING"})


def test_a_record_holding_words_is_stored_as_the_same_text() -> None:
    # rows written with words are byte for byte the rows written with plain strings, by orjson
    # and by the standard library's encoder (jsontext's fallback, the trace's canonical form)
    import json

    from skillc.runtime.text import jsontext
    from skillc.runtime.seam.state import NodeState, to_doc

    node = NodeState(id="n1", task="t1", skill="k", kind=vocab.NodeKind.PROVIDER, state=vocab.NodeStatus.SUSPENDED,
                     suspended=vocab.Suspension.VERIFY)
    doc = to_doc(node)
    plain = {k: (str(v) if isinstance(v, vocab.Word) else v) for k, v in doc.items()}
    assert all(type(v) is str for v in (plain["kind"], plain["state"], plain["suspended"]))
    assert jsontext.dumps(doc) == jsontext.dumps(plain)
    assert json.dumps(doc, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert repr(vocab.Effect.SUSPEND) == "'suspend'" and f"{vocab.TaskStatus.DONE}" == "DONE"


def test_vocabulary_matches_the_compiler_enums() -> None:
    from skillc.compiler import ir

    assert set(ir.ENUMS["sources"]) == set(vocab.Source)
    assert set(ir.ENUMS["sideEffect"]) == set(vocab.SideEffect)
    assert set(ir.ENUMS["op"]) == set(vocab.Op)
    assert set(ir.ENUMS["mode"]) == set(vocab.Mode)
    assert set(ir.ENUMS["share"]) == set(vocab.Share)
    assert set(ir.ENUMS["action"]) == set(vocab.Action) - {vocab.Action.REJECT}
    assert set(ir.PLATFORM_FIELDS) == set(vocab.PlatformField)
