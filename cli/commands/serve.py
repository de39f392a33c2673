"""`skillc serve`: the runtime as an AG-UI service behind a platform's gateway (docs/API.md)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

HELP = "serve the runtime over HTTP: AG-UI runs, REST, health (behind a signing gateway)"
DESCRIPTION = """\
Runs the runtime as an ASGI service (Starlette + uvicorn): POST /agui speaks AG-UI 1.0 (a
RunAgentInput in, Server-Sent Events out; approvals, verifications and follow-up questions end a
run with an interrupt that the next run's `resume` answers), beside REST routes for sessions,
pending questions, state and traces, and /healthz, /readyz. docs/API.md is the reference.

STUDIO_OR_COMPILED_DIR is a compiled directory (no compiler needed), a studio directory or SQLite
file (compiled on load: needs the compiler extra), or a studio service URL (`skillc studio
serve`); default: [studio] source of the config.

Identity comes only from gateway-signed headers (HMAC-SHA256 with the secret in
$SKILLC_GATEWAY_SECRET, or [server] secret_env / secret). --dev-insecure accepts unsigned requests
for development, loudly: a request without an identity header acts as --dev-identity (default
userId 7 of organId 9, the example data's), and the console lets each browser pick its own.

examples:
  SKILLC_GATEWAY_SECRET=… skillc serve --config skillc.toml --port 8765
  skillc serve generated --config examples/skillc.toml --dev-insecure

exit status: 0 stopped, 2 bad configuration, one line each (no secret outside development
mode, unreadable config, a missing model setting, MCP servers listing the same tool name, a port
in use), 130 interrupted.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc serve`."""
    parser.add_argument("source", nargs="?", metavar="STUDIO_OR_COMPILED_DIR",
                        help="compiled directory, studio directory/SQLite file, or studio service URL")
    parser.add_argument("--config", metavar="PATH", help="skillc.toml (default ./skillc.toml)")
    parser.add_argument("--host", help="interface to listen on (default [server] host, else 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default [server] port, else 8765)")
    parser.add_argument("--base-url", metavar="URL", help="override the model endpoint ([model] base_url)")
    parser.add_argument("--dev-insecure", action="store_true",
                        help="development mode: do NOT check signatures (never in production)")
    parser.add_argument("--dev-identity", metavar="JSON",
                        help="development mode: who a request without X-Skillc-Identity acts as, e.g. "
                             "'{\"userId\": 7, \"organId\": 9, \"name\": \"alice\"}' (default: userId 7 of "
                             "organId 9, the example data's; the console can change it per browser)")


def run(args: argparse.Namespace) -> int:
    """Run `skillc serve`; returns the exit status."""
    from skillc.compile_on_load import compile_on_load
    from skillc.runtime.outside.config import ConfigError, load_config
    from skillc.runtime.server import create_app
    from skillc.runtime.server.options import read_options

    config_path = args.config or ("skillc.toml" if os.path.isfile("skillc.toml") else None)
    try:
        config = load_config(config_path)
        if args.base_url:
            config = config.model_copy(update={"model": config.model.model_copy(update={"base_url": args.base_url})})
        options = read_options(config_path, config=config, dev=args.dev_insecure or None, host=args.host,
                               port=args.port, dev_identity=_dev_identity(args.dev_identity))
        if options.dev_identity is not None and not options.dev:
            raise ValueError("--dev-identity is for development mode only: add --dev-insecure "
                             "(or [server] auth = \"dev\")")
        app = create_app(args.source, config=config, options=options, compiler=compile_on_load)
    except (ConfigError, ValueError) as exc:
        print(f"skillc serve: error: {exc}", file=sys.stderr)
        return 2
    if options.dev:
        print("skillc serve: WARNING: development mode, requests are NOT authenticated", file=sys.stderr)
    from skillc.serve_startup import serve

    errors = serve(app, options.host, options.port, log_level="info",
                   on_listen=lambda where: print(f"skillc serve: http://{where}/agui", file=sys.stderr),
                   timeout_graceful_shutdown=int(options.shutdown_grace) + 1)
    for line in errors:  # a configuration error found while starting: one line each, no traceback
        print(f"skillc serve: error: {line}", file=sys.stderr)
    return 2 if errors else 0


def _dev_identity(text: str | None) -> dict[str, Any] | None:
    """`--dev-identity JSON`: the platform fields of a JSON object (ValueError when unusable)."""
    if text is None:
        return None
    from skillc.runtime.server.auth import decode_identity
    from skillc.runtime.server.errors import ApiError

    if not text.strip().startswith("{"):
        raise ValueError(f"--dev-identity must be a JSON object such as '{{\"userId\": 7, \"organId\": 9}}', got {text!r}")
    try:
        return decode_identity(text)
    except ApiError as exc:
        raise ValueError(f"--dev-identity: {exc.message}") from None
