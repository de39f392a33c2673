"""The support API that generated skill modules import (and nothing else of skillc).

A thin face: generated code says `from skillc.runtime import support as rt` and `rt.get_path`,
`rt.ToolMeta`, …; the code lives in four focused modules, which the runtime imports directly:

- `skillc.runtime.compiled.values`: MISSING, has_value, canonical, the §6.1 comparisons, §6.3 counting;
- `skillc.runtime.compiled.paths`: path tuples (docs/interpretations.md: Paths) read, written, walked and parsed;
- `skillc.runtime.compiled.skillmeta`: the metadata records, the contract result types, `SkillModule`
  and `BindContext`;
- `skillc.runtime.compiled.textpattern`: the `MATCHES` success operator's linear-time pattern engine.

Names here are a compatibility promise to compiled modules: remove one only with a codegen change.
"""
from __future__ import annotations

from skillc.runtime.compiled.paths import (
    Part,
    arg_values,
    each_values,
    at_path,
    fill_template,
    get_path,
    parse_path,
    path_text,
    set_all,
    set_path,
    split_each,
    unique_evidence,
    unique_path,
)
from skillc.runtime.compiled.skillmeta import (
    ArgMeta,
    BindContext,
    EntitySpec,
    Extraction,
    InputMeta,
    Judgement,
    OutputMeta,
    ParamIssue,
    ParamResult,
    RuleMeta,
    SkillMeta,
    SkillModule,
    ToolMeta,
    bind_no_inputs,
    bind_nothing,
    check_nothing,
    extract_default,
    items_source,
    judge_nothing,
    make_entities,
    worst,
)
from skillc.runtime.compiled.textpattern import op_matches
from skillc.runtime.compiled.values import (
    MISSING,
    canonical,
    count_items,
    deep_copy,
    default_empty,
    enum_key,
    has_value,
    is_empty_response,
    json_value,
    normalize_text,
    op_eq,
    op_exists,
    op_in,
    op_ne,
    op_not_in,
    op_truthy,
    value_or_none,
)

__all__ = [
    "MISSING", "Part", "ArgMeta", "BindContext", "EntitySpec", "Extraction", "InputMeta", "Judgement",
    "OutputMeta", "ParamIssue", "ParamResult", "RuleMeta", "SkillMeta", "SkillModule", "ToolMeta",
    "arg_values", "at_path", "bind_no_inputs", "bind_nothing", "canonical", "check_nothing",
    "count_items", "deep_copy", "default_empty", "each_values", "enum_key", "extract_default", "fill_template", "items_source",
    "get_path", "has_value", "is_empty_response", "json_value", "judge_nothing", "make_entities",
    "normalize_text", "op_eq", "op_exists", "op_in", "op_matches", "op_ne", "op_not_in", "op_truthy", "parse_path",
    "path_text", "set_all", "set_path", "split_each", "unique_evidence", "unique_path",
    "value_or_none", "worst",
]
