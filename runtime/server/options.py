"""`[server]` in skillc.toml: how the service listens, authenticates and shuts down (docs/API.md §7)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillc.runtime.outside.config import Config, ConfigError, load_config, parse_duration
from skillc.runtime.server.limits import DEFAULT_LIMIT, DEFAULT_ROUTE_LIMITS, limits_of


@dataclass(frozen=True)
class ServeOptions:
    """The service's own settings (the runtime's stay in `Config`)."""

    host: str = "127.0.0.1"
    port: int = 8765
    dev: bool = False
    """Development mode: no signature checks (loud)."""
    secret: str | None = None
    clock_skew: float = 300.0
    shutdown_grace: float = 30.0
    trace_dir: str | None = None
    studio_refresh: float = 2.0
    studio_timeout: float = 5.0
    run_history: int = 2000
    cors_origins: tuple[str, ...] = ()
    """Browser origins allowed to call the service directly (a front end's dev server)."""
    studio_url: str | None = None
    """`[studio] url`: a studio service (same as an http(s) `[studio] source`)."""
    body_limit: int = DEFAULT_LIMIT
    """Bytes of a request body on a route without its own limit (413 past it, unread)."""
    body_limits: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ROUTE_LIMITS))
    """Path prefix -> bytes: a route's own body limit."""
    dev_identity: dict[str, Any] | None = None
    """Development mode: who a request without X-Skillc-Identity acts as (`--dev-identity`)."""


def read_options(config_path: str | os.PathLike[str] | None, env: dict[str, str] | None = None, *,
                 config: Config | None = None, **overrides: Any) -> ServeOptions:
    """`[server]` (and `[studio] url`) of the parsed config, then the environment, then explicit
    overrides. Without `config`, the file at `config_path` (if any) is loaded with `load_config`."""
    env = dict(os.environ) if env is None else env
    if config is None:
        config = load_config(config_path) if config_path is not None and Path(config_path).is_file() else Config()
    where = str(config.path or config_path or "skillc.toml")
    # load_config already made a relative trace_dir absolute against the file's folder.
    base = config.path.resolve().parent if config.path is not None else Path(".")
    table: dict[str, Any] = config.server.table()
    values: dict[str, Any] = {}
    if config.studio.url:
        values["studio_url"] = config.studio.url
    try:
        for key in ("host",):
            if key in table:
                values[key] = str(table[key])
        if "port" in table:
            values["port"] = int(table["port"])
        for key in ("clock_skew", "shutdown_grace", "studio_refresh", "studio_timeout"):
            if key in table:
                values[key] = parse_duration(table[key])
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: [server]: {exc}") from None
    origins = table.get("cors_origins", [])
    if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
        raise ConfigError(f"{where}: [server] cors_origins must be a list of origins")
    values["cors_origins"] = tuple(origins)
    try:
        values["body_limit"], values["body_limits"] = limits_of(table, where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    auth = table.get("auth", "hmac")
    if auth not in ("hmac", "dev"):
        raise ConfigError(f"{where}: [server] auth must be \"hmac\" or \"dev\", got {auth!r}")
    values["dev"] = auth == "dev" or env.get("SKILLC_SERVE_DEV", "") in ("1", "true", "yes")
    secret_env = str(table.get("secret_env", "SKILLC_GATEWAY_SECRET"))
    values["secret"] = env.get(secret_env) or table.get("secret") or None
    if table.get("trace_dir"):
        tdir = Path(str(table["trace_dir"]))
        values["trace_dir"] = str(tdir if tdir.is_absolute() else (base / tdir).resolve())
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ServeOptions(**values)
