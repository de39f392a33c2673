"""One error tree (`SkillcError`), one error table (`ErrorName` + codes), one vocabulary."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from skillc.runtime import vocab
from skillc.runtime.errors import ERRORS, ErrorName, SkillcError, code_of

USER_FACING = [
    ("skillc.runtime.model.base", "ModelError"),
    ("skillc.runtime.config", "ConfigError"),
    ("skillc.runtime.loader", "CompiledStudioError"),
    ("skillc.runtime.store.base", "StoreError"),
    ("skillc.runtime.mcp.gateway", "GatewayConfigError"),
    ("skillc.runtime.planner", "PlanningFailed"),
    ("skillc.runtime.errors", "CallerError"),
    ("skillc.runtime.errors", "SessionBusy"),
    ("skillc.runtime.border", "Refused"),
    ("skillc.runtime.server.errors", "ApiError"),
    ("skillc.runtime.server.studio_feed", "StudioUnavailable"),
    ("skillc.compiler.sources", "SourceError"),
    ("skillc.compiler.expr", "ExprError"),
    ("skillc.compiler.codegen", "UnsafeLiteral"),
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


def test_runtime_spells_no_error_name_outside_errors_py() -> None:
    # the working modules name errors through ErrorName, never as bare strings
    root = Path(importlib.import_module("skillc.runtime").__file__).parent
    names = "|".join(sorted(ERRORS, key=len, reverse=True))
    found = []
    for mod in ("builtins", "chain", "completion", "context", "evidence", "lifecycle", "node", "planner",
                "prompting", "session", "tasks"):
        text = (root / f"{mod}.py").read_text(encoding="utf-8")
        found += [f"{mod}: {m.group(0)}" for m in re.finditer(rf'"({names})"', text)]
    assert not found, found


def test_vocabulary_matches_the_compiler_enums() -> None:
    from skillc.compiler import ir

    assert set(ir.ENUMS["sources"]) == set(vocab.Source)
    assert set(ir.ENUMS["sideEffect"]) == set(vocab.SideEffect)
    assert set(ir.ENUMS["op"]) == set(vocab.Op)
    assert set(ir.ENUMS["mode"]) == set(vocab.Mode)
    assert set(ir.ENUMS["share"]) == set(vocab.Share)
    assert set(ir.ENUMS["action"]) == set(vocab.Action) - {vocab.Action.REJECT}
    assert set(ir.PLATFORM_FIELDS) == set(vocab.PlatformField)
