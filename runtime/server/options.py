"""`[server]` in skillc.toml: how the service listens, authenticates and shuts down (docs/API.md §7)."""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillc.runtime.config import ConfigError, parse_duration


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


def read_options(config_path: str | os.PathLike[str] | None, env: dict[str, str] | None = None,
                 **overrides: Any) -> ServeOptions:
    """`[server]` of the config file (if any), then the environment, then explicit overrides."""
    env = dict(os.environ) if env is None else env
    table: dict[str, Any] = {}
    raw: dict[str, Any] = {}
    base = Path(".")
    if config_path is not None and Path(config_path).is_file():
        base = Path(config_path).resolve().parent
        try:
            raw = tomllib.loads(Path(config_path).read_text(encoding="utf-8"))
            table = raw.get("server", {})
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config_path}: invalid TOML: {exc}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{config_path}: [server] must be a table")
    values: dict[str, Any] = {}
    studio = raw.get("studio", {}) if isinstance(raw.get("studio"), dict) else {}
    if isinstance(studio.get("url"), str) and studio["url"]:
        values["studio_url"] = studio["url"]
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
        raise ConfigError(f"{config_path}: [server]: {exc}") from None
    origins = table.get("cors_origins", [])
    if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
        raise ConfigError(f"{config_path}: [server] cors_origins must be a list of origins")
    values["cors_origins"] = tuple(origins)
    auth = table.get("auth", "hmac")
    if auth not in ("hmac", "dev"):
        raise ConfigError(f"{config_path}: [server] auth must be \"hmac\" or \"dev\", got {auth!r}")
    values["dev"] = auth == "dev" or env.get("SKILLC_SERVE_DEV", "") in ("1", "true", "yes")
    secret_env = str(table.get("secret_env", "SKILLC_GATEWAY_SECRET"))
    values["secret"] = env.get(secret_env) or table.get("secret") or None
    if table.get("trace_dir"):
        tdir = Path(str(table["trace_dir"]))
        values["trace_dir"] = str(tdir if tdir.is_absolute() else (base / tdir).resolve())
    values.update({k: v for k, v in overrides.items() if v is not None})
    return ServeOptions(**values)
