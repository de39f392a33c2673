"""The command line every example MCP server shares: stdio by default, streamable HTTP on
127.0.0.1 with `--http PORT`, its SQLite file from `--db` or the server's environment variable."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def serve_main(build_server: Callable[[str | None], Any], *, module: str, env: str, description: str | None,
               argv: list[str] | None = None) -> None:
    """Parse the example server's arguments and serve `build_server(db)` until stdin or the
    process ends."""
    parser = argparse.ArgumentParser(prog=f"python -m skillc.examples.{module}", description=description)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT")
    parser.add_argument("--db", help=f"SQLite file (default: ${env} or a file in the temp folder)")
    args = parser.parse_args(argv)
    server = build_server(args.db)
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()
