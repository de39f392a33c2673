"""`skillc chat`: talk to your agents with a real model over your MCP servers."""
from __future__ import annotations

import argparse

HELP = "an interactive session: a real model, your MCP servers, approvals at the prompt"
DESCRIPTION = """\
An interactive terminal session against a studio and the MCP servers of skillc.toml, with an
OpenAI-compatible model from the config ([model] base_url, model, api_key_env) or the environment
(SKILLC_MODEL_BASE_URL, SKILLC_MODEL, SKILLC_MODEL_API_KEY). Tool labels show as progress; you
confirm or reject approvals and answer follow-up questions at the prompt. Everything is kept in
the store, so `--session ID` resumes a session, even one that stopped mid-write.

At the prompt: type a message; answer an approval with y (confirm), n (reject) or c (cancel the
task); answer "did it take effect?" with y or n. /help, /session (the id), /pending, /quit;
Ctrl-D also quits. Ctrl-C stops the current turn and exits: nothing committed is lost.

examples:
  skillc chat --config examples/skillc.toml --platform userId=7 --platform organId=9
  skillc chat --compiled generated --session s18c…   (no compiler needed)

exit status: 0 normal end, 1 the session's stored state turned out unreadable during the chat
(the last line says how to go on), 2 bad configuration (missing or invalid skillc.toml, no
studio, no model, unknown or unreadable --session), 130 interrupted.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc chat`."""
    parser.add_argument("--config", metavar="PATH", help="skillc.toml (default ./skillc.toml)")
    parser.add_argument("--compiled", metavar="DIR", help="an already compiled studio directory")
    parser.add_argument("--session", metavar="ID", help="resume this session")
    parser.add_argument("--store", metavar="PATH", help="the SQLite store (default from the config)")
    parser.add_argument("--platform", metavar="KEY=VALUE", action="append", default=[],
                        help="the caller's platform identity (§11), e.g. userId=7; repeatable")
    parser.add_argument("--base-url", metavar="URL", help="override the model endpoint")
    parser.add_argument("--model", metavar="NAME", help="override the model name")
    parser.add_argument("--trace", metavar="PATH",
                        help="also append the trace (JSON lines) to PATH; a session resumed with the same PATH "
                        "continues its audit chain there (`skillc audit verify PATH`)")


def run(args: argparse.Namespace) -> int:
    """Run `skillc chat`; returns the exit status."""
    from skillc.chat import main

    return main(args)
