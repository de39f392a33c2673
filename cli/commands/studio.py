"""`skillc studio serve DIR|DB`: a studio directory or SQLite file as the studio service that
`skillc serve` workers load over HTTP (docs/API.md §8)."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

HELP = "serve a studio (directory or SQLite) over HTTP for `skillc serve` workers"
DESCRIPTION = """\
`skillc studio serve DIR|DB` answers GET /studio with the four studio tables of spec §1.1 as
versioned JSON (format skillc.studio/1, an ETag per version, 304 for an unchanged studio). Point
workers at it with `[studio] source = "http://HOST:PORT"`; each turn costs them one conditional
request, and a changed skill is recompiled there, the unchanged ones are not. The source is
re-read when its files change. Only files inside the studio folder are read: a link leading out
of it is refused (SC506), never served. The service asks no identity: bind it to loopback or to
the network the workers share (docs/SECURITY.md).

examples:
  skillc studio serve examples/studio --port 8780
  skillc studio serve studio.sqlite --host 0.0.0.0

exit status: 0 stopped, 2 unreadable source or bad invocation.
"""
AGENT_FIELDS = ("agent_code", "agent_name", "identity_desc", "mission_desc", "boundary_desc", "style_desc",
                "principle_desc", "status")
SKILL_FIELDS = ("skill_key", "skill_name", "semantic_desc", "skill_manual", "skill_contract", "status")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc studio`."""
    sub = parser.add_subparsers(dest="studio_command", metavar="ACTION")
    serve = sub.add_parser("serve", help="serve a studio over HTTP", description=DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("source", metavar="DIR|DB", help="studio directory or SQLite file")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8780, help="port (default 8780)")


def document(studio: Any) -> dict[str, Any]:
    """The skillc.studio/1 JSON of an `ir.Studio`: every entry hashed, the whole versioned."""
    skills = []
    for s in sorted(studio.skills, key=lambda s: s.skill_key):
        entry: dict[str, Any] = {f: getattr(s, f) for f in SKILL_FIELDS}
        entry["tools"] = list(s.tool_names)
        entry["sha256"] = _sha(entry)
        skills.append(entry)
    agents = []
    for a in sorted(studio.agents, key=lambda a: a.agent_code):
        entry = {f: getattr(a, f) for f in AGENT_FIELDS}
        entry["skills"] = list(a.skills)
        agents.append(entry)
    return {"format": "skillc.studio/1", "version": _sha({"agents": agents, "skills": skills}),
            "agents": agents, "skills": skills}


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def _stamp(source: Path) -> tuple[Any, ...]:
    """Cheap change detection: (path, mtime, size) of every file of the source."""
    files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)


def make_app(source: str | os.PathLike[str]) -> Any:
    """The studio service's ASGI app (GET /studio, GET /healthz)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from skillc.compiler.sources import SourceError, load_studio

    root = Path(source)
    cache: dict[str, Any] = {"stamp": None, "doc": None, "body": b""}

    def current() -> tuple[dict[str, Any], bytes]:
        stamp = _stamp(root)
        if stamp != cache["stamp"]:
            doc = document(load_studio(root))
            cache.update(stamp=stamp, doc=doc, body=json.dumps(doc, ensure_ascii=False).encode())
        return cache["doc"], cache["body"]

    async def studio(request: Request) -> Response:
        try:
            doc, body = current()
        except (SourceError, OSError) as exc:
            return JSONResponse({"error": {"code": "STUDIO_UNREADABLE", "message": str(exc), "status": 503}},
                                status_code=503)
        etag = f'"{doc["version"]}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        return Response(body, media_type="application/json", headers={"ETag": etag})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(routes=[Route("/studio", studio), Route("/healthz", healthz)])


def run(args: argparse.Namespace) -> int:
    """Run `skillc studio`; returns the exit status."""
    if getattr(args, "studio_command", None) != "serve":
        print("skillc studio: say what to do: skillc studio serve DIR|DB", file=sys.stderr)
        return 2
    from skillc.compiler.sources import SourceError, load_studio

    try:
        load_studio(args.source)
    except SourceError as exc:
        print(f"skillc studio serve: error: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    print(f"skillc studio serve: {args.source} on http://{args.host}:{args.port}/studio", file=sys.stderr)
    uvicorn.run(make_app(args.source), host=args.host, port=args.port, log_level="warning")
    return 0
