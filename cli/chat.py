"""`skillc chat`: an interactive terminal session with a real model over the configured MCP servers.

Shows tool labels as progress, asks the person to confirm or reject approvals and to answer
follow-up and verification questions, and resumes a session by id (the store keeps everything).
Works on an already compiled directory without the compiler installed (`--compiled DIR`).
This module starts and ends a chat; the conversation in between is skillc.chat_loop.
"""
from __future__ import annotations

import asyncio
import os
import signal
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Callable

from skillc.runtime.outside.redact import redact_urls
from skillc.runtime.text.idtext import ascii_int
from skillc.runtime.words.errors import SkillcError


class ChatError(SkillcError):
    """Chat cannot start: bad configuration, no studio, no model."""


def parse_platform(items: list[str]) -> dict[str, Any]:
    """`key=value` pairs (numbers kept as numbers) → the platform identity (§11)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ChatError(f"--platform takes key=value, got {item!r}")
        number = ascii_int(value.removeprefix("-"))  # "²" or 5,000 digits stay text
        out[key] = value if number is None else -number if value.startswith("-") else number
    return out


def load_studio(config: Any, compiled: str | None, workdir: Path) -> Any:
    """A compiled directory as is, or the configured source compiled on load (needs the compiler)."""
    from skillc.compile_on_load import compile_on_load
    from skillc.runtime.compiled.loader import load_compiled

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
    return load_compiled(workdir / "compiled", source=source, compiler=compile_on_load)


async def chat(args: Any, read: Callable[[str], Any], write: Callable[[str], None]) -> int:
    """A whole chat: open the model, studio, store and runtime, open or resume the session, converse
    (skillc.chat_loop), close everything; the exit status. `read(prompt)` returns the line (or an
    awaitable of it) and raises EOFError at the end of input."""
    from skillc.chat_loop import converse, greet
    from skillc.render import Renderer

    config = _read_config(args.config)
    model = _make_model(config, args)
    platform = parse_platform(args.platform)
    store_path = args.store or config.store.path or ".skillc/store.sqlite"
    studio = _read_studio(config, args.compiled, store_path, write)
    trace = _open_trace(args.trace)
    store = _open_store(store_path, args.session, trace)
    renderer = Renderer(write, color=args.color)
    trace.listeners.append(renderer.event)
    # open_runtime starts the MCP servers of the config (and stops them at the end); the studio,
    # model, store and trace made above stay ours to close.
    opened = AsyncExitStack()
    runtime = await _start_runtime(opened, config, studio, model, store, trace, renderer.progress)
    _report_servers(config, studio, runtime.gateway, write)
    session = None
    try:
        session = await runtime.open_session(platform, session_id=args.session)
        greet(session, bool(args.session), write, resume_command(args, session.id))
        status = await converse(session, read, write)
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl-C: everything committed so far is in the store; say how to come back.
        if session is not None:
            write(f"\ninterrupted; resume with: {resume_command(args, session.id)}")
        raise
    finally:
        await opened.aclose()
        store.close()
        trace.close()
        await model.aclose()
    if status == 0:
        write(f"bye (session {session.id})")
    return status


def resume_command(args: Any, session_id: str) -> str:
    """The command that resumes this session as it was started: the same config, studio, store,
    model and identity options (a bare `--session ID` would lose a --config and fail), then
    --session."""
    import shlex

    argv = ["skillc", "chat"]
    for flag, value in (("--config", args.config), ("--compiled", args.compiled), ("--store", args.store),
                        ("--base-url", args.base_url), ("--model", args.model), ("--trace", args.trace)):
        if value:
            argv += [flag, str(value)]
    for item in args.platform or []:
        argv += ["--platform", item]
    return shlex.join([*argv, "--session", session_id])


def _read_config(path: str | None) -> Any:
    """The skillc.toml given, else $SKILLC_CONFIG, else the one found from here (load_config)."""
    from skillc.runtime.outside.config import ConfigError, load_config

    # config.warnings are logged once by load_config (the CLI's log handler shows them).
    try:
        return load_config(path or os.environ.get("SKILLC_CONFIG") or None)
    except ConfigError as exc:
        raise ChatError(str(exc)) from None


def _make_model(config: Any, args: Any) -> Any:
    """The model client: [model] of the config, $SKILLC_MODEL_BASE_URL, then --base-url and --model."""
    from skillc.runtime.model.openai import OpenAIChatModel

    # Only what the file sets: defaults such as api_key_env must not make a missing key an error.
    model_cfg = {k: v for k, v in config.model.model_dump(exclude_defaults=True).items() if v is not None}
    model_cfg.setdefault("base_url", os.environ.get("SKILLC_MODEL_BASE_URL") or config.model.base_url)
    if args.base_url:
        model_cfg["base_url"] = args.base_url
    if args.model:
        model_cfg["model"] = args.model
    try:
        return OpenAIChatModel.from_config(model_cfg, os.environ)
    except ValueError as exc:
        raise ChatError(str(exc)) from exc


def _read_studio(config: Any, compiled: str | None, store_path: str, write: Callable[[str], None]) -> Any:
    """The studio (load_studio, compiling beside the store), after saying which one was read."""
    from skillc.runtime.compiled.loader import CompiledStudioError

    workdir = Path(store_path).resolve().parent
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        studio = load_studio(config, compiled, workdir)
        found_by = f" (from {config.path})" if config.path and not compiled else ""
        write(f"studio {redact_urls(str(compiled or config.studio.source))}{found_by}")
    except (CompiledStudioError, *_source_errors()) as exc:
        raise ChatError(f"studio: {exc}") from None
    except OSError as exc:
        raise ChatError(f"{exc.filename or workdir}: {exc.strerror or exc}") from None
    return studio


def _open_trace(path: str | None) -> Any:
    """The --trace file (or none), appended: a session resumed with the same --trace file continues
    its audit chain there."""
    from skillc.runtime.outside.config import audit_key
    from skillc.runtime.telemetry.trace import TraceWriter

    try:
        return TraceWriter(path, keep=False, append=True, key=audit_key())
    except OSError as exc:
        raise ChatError(f"--trace {path}: cannot write: {exc.strerror or exc}") from None


def _open_store(store_path: str, session_id: str | None, trace: Any) -> Any:
    """The store, holding the --session to resume if one is given; on an error the trace is closed."""
    from skillc.runtime.store import Store, StoreError

    try:
        store = Store(store_path)
    except StoreError as exc:
        trace.close()
        raise ChatError(str(exc)) from None
    try:
        found = store.get_session(session_id) if session_id else True
    except StoreError as exc:  # a corrupt session row, or the store unreadable
        store.close()
        trace.close()
        raise ChatError(f"{exc} (other sessions are unaffected: start without --session for a new one)") from None
    if not found:
        store.close()
        trace.close()
        raise ChatError(f"no session {session_id!r} in {store_path} (start without --session for a new one)")
    return store


async def _start_runtime(opened: AsyncExitStack, config: Any, studio: Any, model: Any, store: Any, trace: Any,
                         on_progress: Callable[..., Any]) -> Any:
    """open_runtime entered on `opened` (which stops its MCP servers); on a bad server set the store
    and trace are closed."""
    from skillc.runtime import open_runtime
    from skillc.runtime.mcp.gateway import GatewayConfigError

    try:
        return await opened.enter_async_context(open_runtime(
            config, studio=studio, model=model, store=store, trace=trace, on_progress=on_progress))
    except GatewayConfigError as exc:  # e.g. two servers serve one tool name
        store.close()
        trace.close()
        raise ChatError(f"MCP servers: {exc}") from None


def _report_servers(config: Any, studio: Any, gateway: Any, write: Callable[[str], None]) -> None:
    """The same check `skillc serve` logs at start (runtime/mcp/startup.py): each server's tool count,
    and a warning for each skill whose tools no server serves."""
    from skillc.runtime.mcp.startup import startup_report  # here: the mcp package costs ~250 ms to import

    counted, unserved = startup_report(config.mcp.servers, studio, gateway)
    for line in counted:
        write(line)
    for line in unserved:
        write(f"warning: {line}")


def _source_errors() -> tuple[type[BaseException], ...]:
    """The compiler's SourceError when the compiler is installed (compile-on-load raises it)."""
    try:
        from skillc.compiler.sources import SourceError
    except ImportError:
        return ()
    return (SourceError,)


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
