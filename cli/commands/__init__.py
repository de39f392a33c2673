"""One module per `skillc` sub-command: HELP, DESCRIPTION, configure(parser), run(args) -> int."""
from __future__ import annotations

import os
from typing import Any

from skillc.runtime.outside.redact import redact_urls

SOURCE_HELP = ("studio directory or SQLite file (default: [studio] source of the config, else ./examples/studio, "
               "else the bundled example studio)")
CONFIG_HELP = "skillc.toml to read the studio and MCP servers from (default: $SKILLC_CONFIG, else ./skillc.toml)"
CONFIG_ENV = "SKILLC_CONFIG"


def config_file(given: str | None) -> tuple[str | None, str]:
    """The config file a command reads and how it was chosen: --config, $SKILLC_CONFIG, or
    ./skillc.toml when it exists; (None, "") when there is none."""
    if given:
        return given, "--config"
    if os.environ.get(CONFIG_ENV):
        return os.environ[CONFIG_ENV], f"${CONFIG_ENV}"
    if os.path.isfile("skillc.toml"):
        return "skillc.toml", "./skillc.toml"
    return None, ""


def read_config(command: str, given: str | None) -> Any:
    """The loaded config (`skillc.runtime.outside.config.Config`; defaults when there is no file), or None
    after printing why it cannot be read (the caller exits 2)."""
    import sys

    from skillc.runtime.outside.config import Config, ConfigError, load_config

    path, _ = config_file(given)
    if path is None:
        return Config()
    try:
        config = load_config(path)
    except ConfigError as exc:
        print(f"skillc {command}: error: {exc}", file=sys.stderr)
        return None
    return config  # its warnings (unknown keys) were logged once by load_config


def choose_studio(command: str, given: str | None, config_given: str | None, loaded: Any = None) -> str | None:
    """The studio a command reads, saying on stderr which one and why: SOURCE as given (quietly), else the
    config's [studio] source, else the example studio (said plainly: the user's own studio was
    not read). None when the config cannot be read (the caller exits 2). `loaded`: the config when
    the caller already read it (read_config), so its warnings print once."""
    import sys

    if given:
        return given  # named on the command line: the command's own output names it
    path, how = config_file(config_given)
    config = loaded if loaded is not None else read_config(command, config_given)
    if config is None:
        return None
    if config.studio.source:
        origin = f"{how} {path}" if how.startswith(("-", "$")) else path
        print(f"skillc {command}: studio {redact_urls(str(config.studio.source))} (from {origin})", file=sys.stderr)
        return str(config.studio.source)
    source = studio_source(None)
    why = f"{path} sets no [studio] source" if path else "no skillc.toml here and no --config"
    print(f"skillc {command}: {why}: using the example studio {source} (pass SOURCE or --config to check yours)",
          file=sys.stderr)
    return source


def studio_source(given: str | None) -> str:
    """The studio a command reads: the one given, else ./examples/studio when it exists, else the
    example studio shipped inside the package (so `skillc check` works from any directory)."""
    if given:
        return given
    if os.path.isdir(os.path.join("examples", "studio")):
        return os.path.join("examples", "studio")
    import skillc.examples

    return os.path.join(os.path.dirname(os.path.abspath(skillc.examples.__file__)), "studio")


def load_source(command: str, given: str | None, config: str | None = None, loaded: Any = None) -> tuple[str, Any]:
    """Resolve (see choose_studio) and load a command's studio source; on an unreadable source or
    config print one line naming the command and return (source, None): the caller exits 2. The
    studio is an `ir.Studio`. Imports the compiler lazily."""
    import sys

    from skillc.compiler.sources import SourceError, load_studio

    source = choose_studio(command, given, config, loaded)
    if source is None:
        return "", None
    try:
        return source, load_studio(source)
    except SourceError as exc:
        print(f"skillc {command}: error: {exc}", file=sys.stderr)
        return source, None
