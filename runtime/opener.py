"""One way to open a runtime: `async with open_runtime(config or parts) as rt:`.

`open_runtime` assembles a `Runtime` from a `skillc.toml` (a `Config` or its path) and/or parts
given by the caller, opens what is missing (the MCP gateway, the store, the model) and closes on
exit exactly what it opened; parts the caller passed stay the caller's. Callbacks are passed
explicitly (`on_progress`, trace `listeners`); `mcp.invoked` events are reported per session.
Telemetry is installed here on the runtime it opens (`telemetry=`, else as `[telemetry]` and the
environment choose: `TelemetryConfig.choice`), never process-wide.
Its parts (`open_store_in`, `open_gateway_in`, `open_model_in`, each closing what it opened with
an `AsyncExitStack`) are also how `skillc serve` opens its runtime (runtime/server/context.py).
"""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillc.runtime.outside.config import Config, ConfigError, Settings, audit_key, load_config

if TYPE_CHECKING:
    from skillc.runtime.outside.config import McpServerConfig
    from skillc.runtime.model.base import Model
    from skillc.runtime.session import Runtime
    from skillc.runtime.store.base import Store
    from skillc.runtime.telemetry.core import Telemetry
    from skillc.runtime.telemetry.trace import Listener, TraceWriter


@asynccontextmanager
async def open_runtime(config: Config | str | os.PathLike[str] | None = None, *,
                       studio: Any = None, gateway: Any = None, model: Model | None = None,
                       store: Store | str | os.PathLike[str] | None = None, trace: TraceWriter | None = None,
                       settings: Settings | None = None, servers: Mapping[str, McpServerConfig | Any] | None = None,
                       listeners: Iterable[Listener] = (),
                       on_progress: Callable[[str, str], None] | None = None,
                       clock: Callable[[], float] = time.time, seed: int | None = None,
                       strict: bool = False, telemetry: Telemetry | None = None) -> AsyncIterator[Runtime]:
    """A running `Runtime`; everything it opened is closed when the block ends.

    - `config`: a loaded `Config`, a path to a `skillc.toml`, or None (defaults).
    - `studio`: a loaded studio (`load_compiled(dir)`); else `[studio] source` must be a compiled
      directory (a studio source needs the compiler: compile it first).
    - `gateway`: an MCP gateway (or a double); else one over `servers` or `[mcp.servers]`, started
      here (servers that did not start are in `rt.gateway.unreachable_servers`).
    - `model`: a model adapter; else the `[model]` adapter (`openai`, or `scripted`).
    - `store`: a store or a path / postgresql:// URL; else `[store]` (`$SKILLC_STORE_URL` first).
    - `trace`: a TraceWriter; else one kept in memory. `listeners` are added to it.
    - `telemetry`: a `Telemetry` (`skillc.runtime.telemetry.build(...)`) to install on this
      runtime; else the one `[telemetry]` and the environment choose (`install_telemetry`).
    """
    cfg = config if isinstance(config, Config) else load_config(config) if config is not None else Config()
    async with AsyncExitStack() as stack:
        from skillc.runtime.session import Runtime

        opened: Store
        if store is None or isinstance(store, (str, os.PathLike)):
            target = cfg.store.target() if store is None else store
            opened = open_store_in(stack, target, cfg.store.options(target))
        else:
            opened = store
        if studio is None:
            studio = load_studio(cfg)
        if gateway is None:
            gateway = await open_gateway_in(stack, cfg, servers)
        if model is None:
            model = open_model_in(stack, cfg)
        if trace is None:
            from skillc.runtime.telemetry.trace import TraceWriter

            trace = TraceWriter(key=audit_key())
        trace.listeners.extend(listeners)
        runtime = Runtime(studio, gateway, model, opened, settings or cfg.settings, clock=clock, trace=trace,
                          on_progress=on_progress, seed=seed, strict=strict)
        install_telemetry(stack, runtime, cfg, telemetry)
        yield runtime


def install_telemetry(stack: AsyncExitStack, runtime: Runtime, cfg: Config, telemetry: Telemetry | None = None, *,
                      service: bool = False) -> Telemetry | None:
    """Install `telemetry` on `runtime`, else the telemetry `[telemetry]` and the environment
    choose (`service`: metrics stay on by default, `skillc serve`); the one built here is closed
    with `stack`. Returns what was installed (None: off, nothing of telemetry imported)."""
    if telemetry is None:
        choice = cfg.telemetry.choice(service=service)
        if choice is None:
            return None
        from skillc.runtime.telemetry import from_choice

        telemetry = from_choice(choice)
        if telemetry is None:
            return None
        stack.callback(telemetry.close)
    telemetry.install(runtime)
    return telemetry


def open_store_in(stack: AsyncExitStack, target: str | os.PathLike[str], options: dict[str, Any]) -> Store:
    """The store at `target` (a SQLite path, `:memory:` or a postgresql:// URL), closed with `stack`."""
    from skillc.runtime.store import open_store

    text = str(target)
    if not text.startswith(("postgresql://", "postgres://")) and text != ":memory:":
        Path(text).resolve().parent.mkdir(parents=True, exist_ok=True)
    store = open_store(text, **options)  # [store] pool_size for PostgreSQL
    stack.callback(store.close)
    return store


def load_studio(cfg: Config) -> Any:
    """The compiled directory `[studio] source` names (ConfigError when it is not one)."""
    from skillc.runtime.compiled.loader import MANIFEST, load_compiled

    source = cfg.studio.source
    if not source:
        raise ConfigError("no studio: pass studio= or set [studio] source to a compiled directory")
    if not (Path(source) / MANIFEST).is_file():
        raise ConfigError(f"[studio] source {source} is not a compiled directory; compile it first "
                          "(`skillc compile`) or pass studio=")
    return load_compiled(source)


async def open_gateway_in(stack: AsyncExitStack, cfg: Config, servers: Mapping[str, Any] | None = None) -> Any:
    """A started MCP gateway over `servers` (default: `[mcp.servers]`, given a temporary directory
    removed on close), closed with `stack`."""
    from skillc.runtime.mcp.gateway import McpGateway

    if servers is None:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="skillc-mcp-"))
        servers = {name: spec.with_tmp(tmp) for name, spec in cfg.mcp.servers.items()}
    # on_invoked=None: the runtime reports each tools/call for the session that made it
    gateway = McpGateway(servers, timeout=cfg.mcp.timeout, connect_timeout=cfg.mcp.connect_timeout, on_invoked=None)
    await gateway.start()
    stack.push_async_callback(gateway.aclose)
    return gateway


def open_model_in(stack: AsyncExitStack, cfg: Config) -> Model:
    """The `[model]` adapter (`openai`, or `scripted`), closed with `stack`."""
    if cfg.model.adapter == "scripted":
        from skillc.runtime.model.scripted import ScriptedModel

        return ScriptedModel()
    from skillc.runtime.model.openai import OpenAIChatModel

    # Only what the file sets: defaults such as api_key_env must not make a missing key an error.
    model_cfg = {k: v for k, v in cfg.model.model_dump(exclude_defaults=True).items() if v is not None}
    model_cfg.setdefault("base_url", os.environ.get("SKILLC_MODEL_BASE_URL") or cfg.model.base_url)
    model = OpenAIChatModel.from_config(model_cfg, os.environ)
    stack.push_async_callback(model.aclose)
    return model
