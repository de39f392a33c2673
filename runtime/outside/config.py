"""`skillc.toml`: where the studio, store, model and MCP servers are, and the spec's settings.

```toml
[studio]
source = "studio/"                 # a directory, a SQLite file, or an http(s) URL
# url = "http://studio:8780"       # a studio service only (serve prefers it over `source`)
[store]
path = "skillc.db"                 # or: url = "postgresql://user@db/skillc" (or $SKILLC_STORE_URL)
# pool_size = 10                   # PostgreSQL: connections per process
[model]
adapter = "openai"                 # or "scripted"
base_url = "http://127.0.0.1:8080/v1"
model = "qwen2.5"
api_key_env = "OPENAI_API_KEY"
[mcp]
timeout = 30                       # seconds per tools/call
[mcp.servers.cms]
command = "python"
args = ["-m", "cms_server"]
env = {CMS_DB = "{tmp}/cms.db"}    # {tmp}: substituted by the caller (McpServerConfig.with_tmp)
[mcp.servers.search]
url = "http://127.0.0.1:9000/mcp"  # streamable HTTP
[server]                           # `skillc serve` only (docs/API.md §7)
port = 8765
[telemetry]                        # metrics and OpenTelemetry spans (docs/observability.md)
# enabled = true                   # also switched on by OTEL_* / SKILLC_TELEMETRY (TelemetryConfig.choice)
[settings]                         # the spec's names; top-level dotted keys work too
"state.reconfirm-after" = "24h"
fingerprint-limit = 3
```

Relative filesystem paths (studio source, store path, server cwd) are resolved against the
folder of the config file (a store `path = ":memory:"` stays in memory). Unknown keys are
reported in `Config.warnings` (and logged), never fatal; malformed TOML and invalid values raise
`ConfigError` naming the file (and line).
"""
from __future__ import annotations

import logging
import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skillc.runtime.words.errors import SkillcError

log = logging.getLogger(__name__)

DEFAULT_CONFIG_NAME = "skillc.toml"

# §11: platform fields that exist upstream but are never exposed to skills.
DEFAULT_PLATFORM_HIDDEN: tuple[str, ...] = ("passportId", "clientId", "sessionType", "adminUser", "adminCompany")


class ConfigError(SkillcError, ValueError):
    """A configuration file or settings mapping that cannot be used; the message names where."""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(value: Any) -> float:
    """Seconds from `90s`, `15m`, `24h`, `2d`, `500ms`, or a bare number (seconds)."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.match(value)):
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    else:
        raise ValueError(f"not a duration: {value!r} (expected e.g. 90s, 15m, 24h, 2d or seconds)")
    if seconds < 0 or not math.isfinite(seconds):
        raise ValueError(f"duration must be a finite number of seconds >= 0, got {value!r}")
    return seconds


# Spec setting name -> python attribute name. The spec's names are the public interface
# (skillc.toml, scenario `config:` blocks); attributes are what the runtime reads.
SETTING_NAMES: dict[str, str] = {
    "state.write-confirm-bypass-tools": "write_confirm_bypass_tools",
    "state.reconfirm-after": "reconfirm_after",
    "state.delegate-max-depth": "delegate_max_depth",
    "platform.hidden": "platform_hidden",
    "fingerprint-limit": "fingerprint_limit",
    "user-messages-searched": "user_messages_searched",
    "node-step-limit": "node_step_limit",
    "no-progress-limit": "no_progress_limit",
    "provenance.follow-up-answer-must-contain": "follow_up_answer_must_contain",
}


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"state": {"reconfirm-after": "1h"}}` -> `{"state.reconfirm-after": "1h"}` (TOML dotted keys)."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


class Settings(BaseModel):
    """The spec's run-time settings (frozen); build from spec names with `from_mapping`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    write_confirm_bypass_tools: tuple[str, ...] = ()
    """§14.1: write tools that skip approval (only together with `confirm: false`)."""
    reconfirm_after: float = 24 * 3600.0
    """§14.1 step 4: seconds after which a pending approval must be confirmed again."""
    delegate_max_depth: int = Field(2, ge=0)
    """§15 (docs/interpretations.md: Delegation depth): depth at which a node may no longer
    delegate (the main node is depth 0)."""
    platform_hidden: tuple[str, ...] = DEFAULT_PLATFORM_HIDDEN
    """§11: platform fields never exposed."""
    fingerprint_limit: int = Field(3, ge=1)
    """§13 step 4: consecutive identical successful calls allowed before the breaker trips."""
    user_messages_searched: int = Field(10, ge=1)
    """How many recent user messages `USER` provenance searches (docs/interpretations.md: USER
    provenance)."""
    follow_up_answer_must_contain: bool = False
    """§5.3: an argument a follow-up expected is USER only if its answer states the value (off:
    any value, as the spec says; on is safer, see docs/interpretations.md)."""
    node_step_limit: int = Field(30, ge=1)
    """docs/interpretations.md: Limits: model steps before a node fails."""
    no_progress_limit: int = Field(5, ge=1)
    """docs/interpretations.md: Limits: consecutive refused or failed calls before a node fails."""

    @field_validator("reconfirm_after", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float:
        return parse_duration(value)

    @field_validator("write_confirm_bypass_tools", "platform_hidden", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        # A single string is almost certainly a one-item list written carelessly; a
        # character-by-character tuple would silently match nothing.
        if isinstance(value, str):
            raise ValueError("expected a list of names, got a string")
        return value

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None, *, unknown: list[str] | None = None) -> Settings:
        """Settings from spec names (`state.reconfirm-after`; nested tables flatten to dotted names).

        Python attribute names are accepted as well. An unknown name raises `ConfigError`, unless
        an `unknown` list is given: then it is appended there and ignored.
        """
        values: dict[str, Any] = {}
        for name, value in _flatten(mapping or {}).items():
            attr = SETTING_NAMES.get(name) or (name if name in cls.model_fields else None)
            if attr is None:
                if unknown is None:
                    raise ConfigError(f"unknown setting {name!r} (known: {', '.join(SETTING_NAMES)})")
                unknown.append(name)
                continue
            values[attr] = value
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, names={v: k for k, v in SETTING_NAMES.items()})) from None


class StudioConfig(BaseModel):
    """`[studio]`: where skills and agents come from (directory, SQLite file or http(s) URL)."""

    model_config = ConfigDict(extra="forbid")
    source: str | None = None
    url: str | None = None
    """A studio service (`skillc studio serve`), as the serve issue spells it; `serve` prefers it."""

    @field_validator("url")
    @classmethod
    def _service_url(cls, value: str | None) -> str | None:
        # A directory or SQLite studio belongs in `source`; `url` naming a path is a slip.
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("`url` must be an http(s):// studio service (a directory or SQLite file is `source`)")
        return value


STORE_URL_ENV = "SKILLC_STORE_URL"


class StoreConfig(BaseModel):
    """`[store]`: where sessions, evidence and approvals live: a SQLite file (`path`, the default)
    or a database URL (`url = "postgresql://…"`, shared by several workers)."""

    model_config = ConfigDict(extra="forbid")
    path: str = "skillc.db"
    url: str | None = None
    pool_size: int | None = Field(None, ge=1)
    """PostgreSQL only: the most connections one process keeps to the database (the store's
    default when unset); a SQLite store has one connection and ignores it."""
    lease_ttl: float | None = Field(None, gt=0)
    """Seconds a session's lease lasts without renewal (default 30; a running turn renews it every
    third of that): how long a stalled or dead worker on another host keeps a session busy."""
    lock_timeout: float | None = Field(None, gt=0)
    """PostgreSQL only: seconds a statement waits for a row lock (default 2): a lease that cannot
    be had in that time answers SESSION_BUSY."""
    statement_timeout: float | None = Field(None, gt=0)
    """PostgreSQL only: seconds any statement may run (default 15)."""

    @field_validator("url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("`url` must be a postgresql:// URL (a SQLite store is given by `path`)")
        return value

    def target(self) -> str:
        """What to open: $SKILLC_STORE_URL when set (deployments keep credentials out of files),
        else `url`, else the SQLite `path`."""
        return os.environ.get(STORE_URL_ENV) or self.url or self.path

    def options(self, target: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """Keyword arguments for `open_store(target)` (default target: `target()`): the lease ttl
        when set; for a postgresql:// store the pool size and timeouts that are set."""
        text = str(self.target() if target is None else target)
        out: dict[str, Any] = {} if self.lease_ttl is None else {"lease_ttl": self.lease_ttl}
        if text.startswith(("postgresql://", "postgres://")):
            out.update({k: v for k in ("pool_size", "lock_timeout", "statement_timeout")
                        if (v := getattr(self, k)) is not None})
        return out


class ModelConfig(BaseModel):
    """`[model]`: which adapter answers the runtime's LLM requests, and its endpoint."""

    model_config = ConfigDict(extra="forbid")
    adapter: Literal["openai", "scripted"] = "openai"
    base_url: str = "https://api.openai.com/v1"
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)


class McpServerConfig(BaseModel):
    """`[mcp.servers.<name>]`: a stdio server (`command`, `args`, `env`, `cwd`) or an HTTP `url`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None

    @field_validator("env", mode="before")
    @classmethod
    def _env_strings(cls, value: Any) -> Any:
        # TOML integers/booleans in env tables are common slips; the process env needs text.
        if isinstance(value, Mapping):
            return {str(k): v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
                    for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of `command` (stdio) or `url` (streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("`args`, `env` and `cwd` apply to stdio servers (`command`), not to `url`")
        return self

    def with_tmp(self, tmp: str | Path) -> McpServerConfig:
        """A copy with `{tmp}` in env values and args replaced by the caller's temp folder."""
        text = str(tmp)
        return self.model_copy(update={
            "env": {k: v.replace("{tmp}", text) for k, v in self.env.items()},
            "args": tuple(a.replace("{tmp}", text) for a in self.args),
        })


class ServerConfig(BaseModel):
    """`[server]`: how `skillc serve` listens, authenticates and shuts down (docs/API.md §7).

    Only the key names are checked here (unknown ones are reported like any other); the values are
    read and checked by `skillc.runtime.server.options.read_options`, so `chat` never fails on a
    serve-only value and serve keeps one place that spells its defaults.
    """

    model_config = ConfigDict(extra="forbid")
    host: Any = None
    port: Any = None
    auth: Any = None
    secret_env: Any = None
    secret: Any = None
    clock_skew: Any = None
    shutdown_grace: Any = None
    trace_dir: Any = None
    studio_refresh: Any = None
    studio_timeout: Any = None
    cors_origins: Any = None
    body_limit: Any = None
    body_limits: Any = None

    def table(self) -> dict[str, Any]:
        """The keys the file gave (what `read_options` reads), without the unset ones."""
        return self.model_dump(exclude_none=True)


_OTEL_VARS = ("OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER")
_YES = ("1", "true", "on", "yes")


AUDIT_KEY_ENV = "SKILLC_AUDIT_KEY"


def audit_key(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The trace's audit key (its chain's digests become HMACs): `SKILLC_AUDIT_KEY`, else None.
    Read here, by whoever opens a runtime's trace (`open_runtime`, `skillc serve`, the CLI),
    never by a `TraceWriter` itself."""
    value = (os.environ if environ is None else environ).get(AUDIT_KEY_ENV)
    return value.encode() if value else None


class TelemetryChoice(BaseModel):
    """What telemetry a runtime gets: metrics, and spans too when `spans` (`sdk_from_env`: set up
    an SDK tracer provider from OTEL_* variables unless the application set one)."""

    spans: bool
    metrics: bool = True
    sdk_from_env: bool = False


class TelemetryConfig(BaseModel):
    """`[telemetry]`: `enabled`, `spans`, `metrics` (booleans). Whether a runtime gets telemetry is
    decided here, from this table and the environment (`choice`), and nowhere else: `open_runtime`
    and `create_app` install what it answers."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = False
    spans: bool = True
    metrics: bool = True

    def choice(self, environ: Mapping[str, str] | None = None, *, service: bool = False) -> TelemetryChoice | None:
        """The telemetry to install (None: off). The environment switches it on with any of
        OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_EXPORTER (unless
        OTEL_SDK_DISABLED=true) or SKILLC_TELEMETRY=1 (`=metrics`: metrics only). A service
        (`service=True`, `skillc serve`) keeps metrics on otherwise, for `GET /metrics`, unless
        `metrics = false`."""
        if self.enabled:
            return TelemetryChoice(spans=self.spans, metrics=self.metrics, sdk_from_env=self.spans)
        env = os.environ if environ is None else environ
        switch = env.get("SKILLC_TELEMETRY", "").strip().lower()
        if switch == "metrics":
            return TelemetryChoice(spans=False)
        if switch in _YES or (env.get("OTEL_SDK_DISABLED", "").strip().lower() != "true"
                              and any(env.get(name) for name in _OTEL_VARS)):
            return TelemetryChoice(spans=True, sdk_from_env=True)
        if service and self.metrics:
            return TelemetryChoice(spans=False)
        return None


class McpConfig(BaseModel):
    """`[mcp]`: per-call timeout, connect timeout and the servers whose tools form the catalog."""

    model_config = ConfigDict(extra="forbid")
    timeout: float = Field(30.0, gt=0)
    # seconds for a server to start and list its tools: a stdio server is a new Python process,
    # and on a loaded machine its imports alone have taken more than 10 s
    connect_timeout: float = Field(30.0, gt=0)
    servers: dict[str, McpServerConfig] = Field(default_factory=dict)


class Config(BaseModel):
    """A loaded `skillc.toml`: sections, the spec settings, and what was ignored."""

    studio: StudioConfig = Field(default_factory=StudioConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig)
    settings: Settings = Field(default_factory=Settings)
    path: Path | None = None
    """The file this was loaded from (None for defaults)."""
    warnings: list[str] = Field(default_factory=list)
    """Unknown keys that were ignored, one message each."""


_SECTIONS: dict[str, type[BaseModel]] = {
    "studio": StudioConfig, "store": StoreConfig, "model": ModelConfig, "mcp": McpConfig,
    "server": ServerConfig, "telemetry": TelemetryConfig,
}
# Top-level roots under which the spec's dotted setting names live (`state.…`, `platform.…`).
_SETTING_ROOTS = {name.split(".", 1)[0] for name in SETTING_NAMES}


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Load `path` (or `./skillc.toml` if it exists, else defaults); raise `ConfigError` if unusable."""
    if path is None:
        candidate = Path.cwd() / DEFAULT_CONFIG_NAME
        if not candidate.is_file():
            return Config()
        path = candidate
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no config file {file.name!r} in {file.resolve().parent} (a skillc.toml names the "
                          "studio, MCP servers, store and model; examples/skillc.toml is one)") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read config: {exc.strerror or exc}") from None
    return parse_config(text, file)


def parse_config(text: str, path: Path | None = None) -> Config:
    """Parse TOML text as a config; relative paths resolve against `path`'s folder."""
    where = str(path) if path is not None else "<config>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}:{_toml_position(exc)}: invalid TOML: {_toml_message(exc)}") from None
    warnings: list[str] = []
    sections: dict[str, Any] = {}
    raw_settings: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: [{key}] must be a table")
            sections[key] = _known_only(value, _SECTIONS[key], key, warnings, where)
        elif key == "settings":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: [settings] must be a table")
            raw_settings.update(_flatten(value))
        elif key in _SETTING_ROOTS or key in SETTING_NAMES:
            raw_settings.update(_flatten({key: value}))
        else:
            warnings.append(f"{where}: unknown key {key!r} ignored")
    unknown: list[str] = []
    try:
        settings = Settings.from_mapping(raw_settings, unknown=unknown)
    except ConfigError as exc:
        raise ConfigError(f"{where}: settings: {exc}") from None
    warnings.extend(f"{where}: unknown setting {name!r} ignored" for name in unknown)
    try:
        config = Config.model_validate({**sections, "settings": settings, "path": path, "warnings": warnings})
    except ValidationError as exc:
        raise ConfigError(f"{where}: {_describe(exc)}") from None
    for message in warnings:
        log.warning("%s", message)
    return _resolve_paths(config, path.parent if path is not None else None)


def _known_only(table: dict[str, Any], model: type[BaseModel], section: str, warnings: list[str],
                where: str) -> dict[str, Any]:
    """Drop (and report) keys the section's model does not declare, recursing into servers."""
    kept: dict[str, Any] = {}
    for key, value in table.items():
        if key not in model.model_fields:
            warnings.append(f"{where}: unknown key {key!r} in [{section}] ignored")
            continue
        kept[key] = value
    if model is McpConfig and isinstance(kept.get("servers"), dict):
        kept["servers"] = {
            name: _known_only(entry, McpServerConfig, f"mcp.servers.{name}", warnings, where)
            if isinstance(entry, dict) else entry
            for name, entry in kept["servers"].items()
        }
    return kept


def _resolve_paths(config: Config, base: Path | None) -> Config:
    """Make relative filesystem paths absolute against the config file's folder."""
    if base is None:
        return config

    def resolve(value: str | None) -> str | None:
        if value is None or value == ":memory:" or "://" in value or Path(value).is_absolute():
            return value  # ":memory:": an in-memory SQLite store, not a file of that name
        return str((base / value).resolve())

    servers = {name: s.model_copy(update={"cwd": resolve(s.cwd)}) for name, s in config.mcp.servers.items()}
    trace_dir = config.server.trace_dir
    return config.model_copy(update={
        "server": config.server.model_copy(update={
            "trace_dir": resolve(trace_dir) if isinstance(trace_dir, str) and trace_dir else trace_dir}),
        "studio": config.studio.model_copy(update={"source": resolve(config.studio.source)}),
        "store": config.store.model_copy(update={"path": resolve(config.store.path)}),
        "mcp": config.mcp.model_copy(update={"servers": servers}),
    })


def _describe(exc: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """One line per pydantic error: `mcp.servers.cms: give exactly one of …`."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if names and loc in names:
            loc = names[loc]
        message = str(err["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {message}" if loc else message)
    return "; ".join(parts)


def _toml_position(exc: tomllib.TOMLDecodeError) -> str:
    """`line:col` of a TOML error (tomllib only puts it in the message before 3.14)."""
    line = getattr(exc, "lineno", None)
    col = getattr(exc, "colno", None)
    if line is None:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        if match:
            line, col = int(match.group(1)), int(match.group(2))
    if line is None:
        return "1"
    return f"{line}:{col}" if col is not None else str(line)


def _toml_message(exc: tomllib.TOMLDecodeError) -> str:
    return re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)$", "", getattr(exc, "msg", None) or str(exc))
