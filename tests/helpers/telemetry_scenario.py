"""A scenario for the telemetry tests: a refusal, an approval, a write that times out and is
settled by its verify tool, and a sensitive argument (a card PIN) that must never be exported."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SECRET = "739164"  # the sensitive value: never in an exported attribute, a metric or an audit digest input

SCENARIO = """\
name: telemetry-approval-refusal-verify
platform: {userId: 7, memberId: 70, name: alice, organId: 9, organName: Acme, organType: COMPANY, deptPath: /1/9}
studio:
  agents:
    - {agent_code: editor, agent_name: Editor, identity_desc: Edits, mission_desc: Creates articles,
       boundary_desc: Never deletes, style_desc: Brief, principle_desc: Ask first, status: ACTIVE,
       skills: [cms.article.lifecycle]}
  skills:
    - skill_key: cms.article.lifecycle
      skill_name: Article lifecycle
      semantic_desc: Create articles in a CMS space.
      skill_manual: Find the space, then create the article.
      status: ACTIVE
      tools: [cms_space_list, cms_article_create, cms_article_find]
      contract: |
        {
          "target": "cms_article_create",
          "tools": {
            "cms_space_list": {
              "args": { "organId": { "from": "platform.organId" } },
              "success": { "path": "code", "op": "EQ", "value": 200 },
              "extracts": [ { "key": "spaces", "path": "data", "entity": { "type": "space" } } ]
            },
            "cms_article_create": {
              "sideEffect": "WRITE",
              "idempotencyKey": ["spaceId", "title"],
              "args": {
                "title":   { "sources": ["USER"], "label": "Title" },
                "pin":     { "sources": ["MODEL"], "sensitive": true, "label": "PIN" },
                "spaceId": { "sources": ["EVIDENCE"], "label": "Space",
                             "missing": { "action": "CALL_TOOL", "tool": "cms_space_list" } },
                "authorId": { "from": "platform.userId" }
              },
              "success": { "path": "code", "op": "EQ", "value": 200 },
              "verify": { "tool": "cms_article_find", "args": { "title": { "from": "call.title" } } }
            },
            "cms_article_find": { "success": { "path": "data.found", "op": "TRUTHY" } }
          }
        }
tools:
  - name: cms_space_list
    input_schema: {type: object, properties: {organId: {type: integer}}, required: [organId]}
    responses:
      - json: {code: 200, data: [{id: 3, name: Website}]}
  - name: cms_article_create
    input_schema: {type: object, properties: {title: {type: string}, pin: {type: string}, spaceId: {type: integer},
                   authorId: {type: integer}}, required: [title, authorId]}
    responses:
      - fault: timeout
  - name: cms_article_find
    input_schema: {type: object, properties: {title: {type: string}}}
    responses:
      - json: {code: 200, data: {found: true}}
turns:
  - user: "Please create an article titled Spring launch"
    model:
      - call: {tool: cms_article_create, args: {title: Spring launch, pin: "SECRET"}}
      - call: {tool: cms_space_list, args: {}}
      - call: {tool: cms_article_create, args: {title: Spring launch, spaceId: 3, pin: "SECRET"}}
      - call: {tool: builtin_node_approval, args: {summary: Create the article, toolName: cms_article_create}}
    expect:
      - {type: tool.call, tool: cms_article_create, error: PARAM_PROVENANCE_CALL_TOOL}
      - {type: tool.call, tool: cms_article_create, error: APPROVAL_REQUIRED}
      - {type: node.suspended, kind: APPROVAL}
  - answer: {decision: CONFIRM}
    model:
      - call: {tool: builtin_node_finish, args: {output: Created the article}}
    expect:
      - {type: node.resumed, kind: APPROVAL}
      - {type: tool.call, tool: cms_article_create, error: TOOL_TIMEOUT, status: UNKNOWN}
      - {type: write.settled, tool: cms_article_create, status: SUCCESS, via: verify}
      - {type: node.finished, state: DONE}
final:
  invocations: {cms_article_create: 1, cms_article_find: 1}
""".replace("SECRET", SECRET)


def write_scenario(folder: Path) -> Path:
    """The scenario as a file in `folder`."""
    path = folder / "telemetry.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def run_async(coro: Any) -> Any:
    """`asyncio.run(coro)`, in a worker thread when this thread already runs an event loop (a
    browser fixture of another test module may keep one running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
