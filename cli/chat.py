"""`skillc chat`: an interactive terminal session with a real model over the configured MCP servers.

Shows tool labels as progress, asks the person to confirm or reject approvals and to answer
follow-up and verification questions, and resumes a session by id (the store keeps everything).
Works on an already compiled directory without the compiler installed (`--compiled DIR`).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Callable

from skillc.runtime.errors import SkillcError
from skillc.servers import startup_report

HELP_TEXT = """\
Type a message for your agents. While a write waits for approval, answer y (confirm),
n (reject: nothing is written) or c (cancel the task); while a write's outcome is unknown,
answer y or n (did it take effect?). Commands: /session (the id to resume with), /pending,
/help, /quit."""


class ChatError(SkillcError):
    """Chat cannot start: bad configuration, no studio, no model."""


def parse_platform(items: list[str]) -> dict[str, Any]:
    """`key=value` pairs (numbers kept as numbers) → the platform identity (§11)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ChatError(f"--platform takes key=value, got {item!r}")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def load_studio(config: Any, compiled: str | None, workdir: Path) -> Any:
    """A compiled directory as is, or the configured source compiled on load (needs the compiler)."""
    from skillc.runtime.loader import load_compiled

    if compiled:
        return load_compiled(compiled)
    source = config.studio.source
    if not source:
        raise ChatError("no studio: set [studio] source in skillc.toml or pass --compiled DIR")
    if (Path(source) / "manifest.json").exists():
        return load_compiled(source)
    try:
        import lark  # noqa: F401  (compile-on-load needs the compiler extra)
    except ImportError as exc:
        raise ChatError(f"{source} is a studio source; compiling it needs `pip install skillc[compiler]`, "
                        "or pass --compiled DIR") from exc
    return load_compiled(workdir / "compiled", source=source)


async def chat(args: Any, read: Callable[[str], str], write: Callable[[str], None]) -> int:
    """The interactive loop; `read(prompt)` raises EOFError at the end of input."""
    from skillc.render import Renderer
    from skillc.runtime.config import load_config
    from skillc.runtime import open_runtime
    from skillc.runtime.model.openai import OpenAIChatModel
    from skillc.runtime.store import Store
    from skillc.runtime.config import ConfigError
    from skillc.runtime.loader import CompiledStudioError
    from skillc.runtime.mcp.gateway import GatewayConfigError
    from skillc.runtime.errors import SessionBusy, SessionUnavailable
    from skillc.runtime.store import StoreError
    from skillc.runtime.trace import TraceWriter

    try:
        config = load_config(args.config or os.environ.get("SKILLC_CONFIG") or None)
    except ConfigError as exc:
        raise ChatError(str(exc)) from None
    # config.warnings were logged once by load_config (the CLI's log handler shows them).
    # Only what the file sets: defaults such as api_key_env must not make a missing key an error.
    model_cfg = {k: v for k, v in config.model.model_dump(exclude_defaults=True).items() if v is not None}
    model_cfg.setdefault("base_url", os.environ.get("SKILLC_MODEL_BASE_URL") or config.model.base_url)
    if args.base_url:
        model_cfg["base_url"] = args.base_url
    if args.model:
        model_cfg["model"] = args.model
    try:
        model = OpenAIChatModel.from_config(model_cfg, os.environ)
    except ValueError as exc:
        raise ChatError(str(exc)) from exc
    platform = parse_platform(args.platform)
    store_path = args.store or config.store.path or ".skillc/store.sqlite"
    workdir = Path(store_path).resolve().parent
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        studio = load_studio(config, args.compiled, workdir)
        write(f"studio {args.compiled or config.studio.source}" + (f" (from {config.path})" if config.path and not args.compiled else ""))
    except (CompiledStudioError, *_source_errors()) as exc:
        raise ChatError(f"studio: {exc}") from None
    except OSError as exc:
        raise ChatError(f"{exc.filename or workdir}: {exc.strerror or exc}") from None
    if config.path is not None:  # [telemetry] enabled = true: spans and metrics (OTEL_* env works anyway)
        from skillc.runtime import telemetry

        telemetry.configure(telemetry.read_table(config.path))
    try:
        # appended: a session resumed with the same --trace file continues its audit chain there
        trace = TraceWriter(args.trace, keep=False, append=True)
    except OSError as exc:
        raise ChatError(f"--trace {args.trace}: cannot write: {exc.strerror or exc}") from None
    try:
        store = Store(store_path)
    except StoreError as exc:
        trace.close()
        raise ChatError(str(exc)) from None
    try:
        found = store.get_session(args.session) if args.session else True
    except StoreError as exc:  # a corrupt session row, or the store unreadable
        store.close()
        trace.close()
        raise ChatError(f"{exc} (other sessions are unaffected: start without --session for a new one)") from None
    if not found:
        store.close()
        trace.close()
        raise ChatError(f"no session {args.session!r} in {store_path} (start without --session for a new one)")
    renderer = Renderer(write, color=args.color)
    trace.listeners.append(renderer.event)
    # open_runtime starts the MCP servers of the config (and stops them at the end); the studio,
    # model, store and trace made above stay ours to close.
    opened = AsyncExitStack()
    try:
        runtime = await opened.enter_async_context(open_runtime(
            config, studio=studio, model=model, store=store, trace=trace, on_progress=renderer.progress))
    except GatewayConfigError as exc:  # e.g. two servers serve one tool name
        store.close()
        trace.close()
        raise ChatError(f"MCP servers: {exc}") from None
    gateway = runtime.gateway
    # the same check `skillc serve` logs at start (skillc/servers.py)
    counted, unserved = startup_report(config.mcp.servers, studio, gateway)
    for line in counted:
        write(line)
    for line in unserved:
        write(f"warning: {line}")
    session = None
    status = 0
    try:
        session = await runtime.open_session(platform, session_id=args.session)
        verb = "resumed" if args.session else "session"
        write(f"{verb} {session.id} (resume with: skillc chat --session {session.id}); /help for help")
        pending = session.pending()
        if pending:
            write(f"waiting: {pending['kind']}: {pending['question']}")
        while True:
            pending = session.pending()
            try:
                got = read(_prompt(pending))
                line = (await got if asyncio.iscoroutine(got) else got).strip()
            except EOFError:
                write("")
                break
            if not line:
                continue
            if line in ("/quit", "/exit"):
                break
            if line == "/help":
                write(HELP_TEXT)
                continue
            if line == "/session":
                write(session.id)
                continue
            if line == "/pending":
                write(json.dumps(pending, ensure_ascii=False) if pending else "nothing is waiting")
                continue
            if line.startswith("/") and " " not in line:
                write(f"unknown command {line}; /help lists them")
                continue
            answer = _decision(pending, line)
            if pending and pending["kind"] in ("APPROVAL", "VERIFY") and answer is None:
                write("please answer y, n" + (" or c" if pending["kind"] == "APPROVAL" else ""))
                continue
            try:
                if answer is not None:
                    await session.answer(answer)
                else:
                    await session.send(line)
            except (SessionBusy, SessionUnavailable, StoreError) as exc:  # said in one line, see turn_trouble
                text, fatal = turn_trouble(exc, session.id)
                write(text)
                if fatal:
                    status = 1
                    break
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl-C: everything committed so far is in the store; say how to come back.
        if session is not None:
            write(f"\ninterrupted; resume with: skillc chat --session {session.id}")
        raise
    finally:
        await opened.aclose()
        store.close()
        trace.close()
        await model.aclose()
    if status == 0:
        write(f"bye (session {session.id})")
    return status


def turn_trouble(exc: BaseException, session_id: str) -> tuple[str, bool]:
    """The one line chat shows when a turn could not run or could not be stored, and whether the
    chat must end (a corrupt session cannot go on; busy or unavailable: the person retries)."""
    from skillc.runtime.errors import SessionBusy, SessionUnavailable
    from skillc.runtime.store import StoreCorrupt

    if isinstance(exc, SessionBusy):
        return (f"busy ({SessionBusy.name}): another process or chat is running a turn of session {session_id} "
                "right now; your message was not handled. Send it again once that turn has ended.", False)
    if isinstance(exc, StoreCorrupt):
        return (f"error: {exc}. This session cannot go on (other sessions are unaffected): start a new one "
                f"with `skillc chat`, or once the store is repaired resume with: skillc chat --session {session_id}",
                True)
    cause = exc.__cause__ if isinstance(exc, SessionUnavailable) and exc.__cause__ is not None else exc
    code = SessionUnavailable.name if isinstance(exc, SessionUnavailable) else "store error"
    return (f"error ({code}): the turn could not be stored ({cause}); nothing of it was kept and the session "
            "is as last saved. Fix the cause (disk space, the database), then send your message again.", False)


def _source_errors() -> tuple[type[BaseException], ...]:
    """The compiler's SourceError when the compiler is installed (compile-on-load raises it)."""
    try:
        from skillc.compiler.sources import SourceError
    except ImportError:
        return ()
    return (SourceError,)


def _prompt(pending: dict[str, Any] | None) -> str:
    if pending is None or pending["kind"] == "FOLLOW_UP":
        return "you> "
    if pending["kind"] == "APPROVAL":
        return "confirm? [y]es / [n]o, reject / [c]ancel> "
    return "did it take effect? [y/n]> "


def _decision(pending: dict[str, Any] | None, line: str) -> dict[str, Any] | None:
    if pending is None or pending["kind"] == "FOLLOW_UP":
        return None
    word = line.lower()
    if pending["kind"] == "APPROVAL":
        table = {"y": "CONFIRM", "yes": "CONFIRM", "confirm": "CONFIRM", "n": "REJECT", "no": "REJECT",
                 "reject": "REJECT", "c": "CANCEL", "cancel": "CANCEL"}
        return {"decision": table[word]} if word in table else None
    table2 = {"y": True, "yes": True, "n": False, "no": False}
    return {"verified": table2[word]} if word in table2 else None


def main(args: Any) -> int:
    """Entry point of `skillc chat`."""
    args.color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    from skillc.logs import shown_elsewhere

    shown_elsewhere("internal-error")  # a turn's unexpected error shows as its error line and reply
    try:
        return asyncio.run(_interactive(args))
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None  # Ctrl-C cancelled the chat (it said how to resume)
    except ChatError as exc:
        print(f"skillc chat: error: {exc}", file=sys.stderr)
        return 2


async def _interactive(args: Any) -> int:
    """`chat` on the real terminal: the prompt is read by the event loop, so Ctrl-C (SIGINT, on
    whichever thread the kernel delivers it) cancels the chat at once, at the prompt or mid-turn.
    A blocking input() would leave the first Ctrl-C waiting until Enter."""
    write = lambda s: print(s, flush=True)  # noqa: E731
    try:
        fd = sys.stdin.fileno()
        reader: Callable[[str], Any] = _LineReader(fd).read
    except (AttributeError, OSError, ValueError):
        reader = input
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    handled = False
    if task is not None and reader is not input:
        try:
            loop.add_signal_handler(signal.SIGINT, task.cancel)
            handled = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            pass
    try:
        return await chat(args, reader, write)
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)


class _LineReader:
    """Lines from a file descriptor, awaited on the event loop (`read(prompt)` raises EOFError)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.eof = False

    async def read(self, prompt: str) -> str:
        """Show `prompt`, then the next line without its newline."""
        sys.stdout.write(prompt)
        sys.stdout.flush()
        loop = asyncio.get_running_loop()
        while b"\n" not in self.buffer and not self.eof:
            ready: asyncio.Future[None] = loop.create_future()

            def wake(fut: asyncio.Future[None] = ready) -> None:
                if not fut.done():
                    fut.set_result(None)

            loop.add_reader(self.fd, wake)
            try:
                await ready
            finally:
                loop.remove_reader(self.fd)
            chunk = os.read(self.fd, 4096)
            self.eof = not chunk
            self.buffer += chunk
        if not self.buffer:
            raise EOFError
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode(errors="replace")
