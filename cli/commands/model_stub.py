"""`skillc model-stub`: a fake OpenAI-compatible model on loopback, for trying chat/serve without one."""
from __future__ import annotations

import argparse

HELP = "a fake OpenAI-compatible model server playing canned responses (try chat/serve without a model)"
DESCRIPTION = """\
Serves OpenAI-style /v1/chat/completions on loopback and answers each request with the next
canned response of a JSON script (then with an error saying the script is used up). Point
`skillc chat --base-url URL` or `[model] base_url` at the printed URL to try the runtime without
a real model; tests use it to script the model over real HTTP.

A script is a JSON list (or {"responses": [...]}) of entries such as:
  {"tool_calls": [{"name": "cms_space_list", "arguments": {}}]}   one step calling a tool
  {"answer": {"agent": "cms"}}                                    a route/intent/plan answer
  {"text": "hello"}                                               a plain reply
  {"status": 500}                                                 an HTTP error

examples:
  skillc model-stub --port 8090 --script script.json &
  skillc chat --base-url http://127.0.0.1:8090/v1 --model stub

exit status: 0 stopped by Ctrl-C or SIGTERM, 2 the script cannot be read.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc model-stub` (the server itself loads only when it runs)."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    parser.add_argument("--script", help="JSON file of canned responses")
    parser.add_argument("--log", help="append each request as a JSON line to this file")


def run(args: argparse.Namespace) -> int:
    """Run the stub until interrupted; returns the exit status."""
    from skillc import model_stub

    return model_stub.serve(args)
