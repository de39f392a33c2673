"""skillc.toml loading and the spec settings."""
from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from skillc.runtime.outside.config import (
    DEFAULT_PLATFORM_HIDDEN,
    ConfigError,
    McpServerConfig,
    Settings,
    load_config,
    parse_duration,
)

FULL = """
[studio]
source = "studio"
[store]
path = "/var/lib/skillc.db"
[model]
adapter = "scripted"
base_url = "http://127.0.0.1:8080/v1"
model = "tiny"
api_key_env = "LOCAL_KEY"
timeout = 12.5
max_retries = 0
[mcp]
timeout = 4
[mcp.servers.cms]
command = "python"
args = ["-m", "cms", "--db", "{tmp}/cms.db"]
env = {CMS_DB = "{tmp}/cms.db", DEBUG = true}
cwd = "servers"
[mcp.servers.search]
url = "http://127.0.0.1:9000/mcp"
[settings]
"state.write-confirm-bypass-tools" = ["cms_tag_add"]
"state.reconfirm-after" = "90s"
state.delegate-max-depth = 1
platform.hidden = ["passportId"]
fingerprint-limit = 5
user-messages-searched = 4
node-step-limit = 12
no-progress-limit = 2
provenance.follow-up-answer-must-contain = true
"""


def write(tmp_path: Path, text: str, name: str = "skillc.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_full_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, FULL))
    assert config.warnings == []
    assert config.studio.source == str(tmp_path / "studio")  # relative to the config file
    assert config.store.path == "/var/lib/skillc.db"
    assert (config.model.adapter, config.model.base_url, config.model.model) == (
        "scripted", "http://127.0.0.1:8080/v1", "tiny")
    assert (config.model.api_key_env, config.model.timeout, config.model.max_retries) == ("LOCAL_KEY", 12.5, 0)
    assert config.mcp.timeout == 4.0
    cms = config.mcp.servers["cms"]
    assert (cms.command, cms.cwd, cms.url) == ("python", str(tmp_path / "servers"), None)
    assert cms.env == {"CMS_DB": "{tmp}/cms.db", "DEBUG": "true"}
    assert config.mcp.servers["search"].url == "http://127.0.0.1:9000/mcp"
    assert config.settings == Settings(
        write_confirm_bypass_tools=("cms_tag_add",), reconfirm_after=90.0, delegate_max_depth=1,
        platform_hidden=("passportId",), fingerprint_limit=5, user_messages_searched=4,
        node_step_limit=12, no_progress_limit=2, follow_up_answer_must_contain=True)


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config.path is None and config.mcp.timeout == 30.0 and config.mcp.servers == {}
    s = config.settings
    assert (s.write_confirm_bypass_tools, s.reconfirm_after, s.delegate_max_depth) == ((), 86400.0, 2)
    assert s.platform_hidden == DEFAULT_PLATFORM_HIDDEN == (
        "passportId", "clientId", "sessionType", "adminUser", "adminCompany")
    assert (s.fingerprint_limit, s.user_messages_searched, s.node_step_limit, s.no_progress_limit) == (3, 10, 30, 5)
    assert s.follow_up_answer_must_contain is False  # the spec's reading unless asked for


def test_none_finds_skillc_toml_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "[mcp]\ntimeout = 7\n")
    monkeypatch.chdir(tmp_path)
    assert load_config(None).mcp.timeout == 7.0


def test_top_level_dotted_setting_keys(tmp_path: Path) -> None:
    text = 'state.reconfirm-after = "15m"\nfingerprint-limit = 2\n[store]\npath = "x.db"\n'
    settings = load_config(write(tmp_path, text)).settings
    assert (settings.reconfirm_after, settings.fingerprint_limit) == (900.0, 2)


def test_unknown_keys_warn_but_load(tmp_path: Path) -> None:
    text = ('colour = "red"\nstate.frobnicate = 1\n[model]\nadapter = "openai"\ntemperature = 0\n'
            '[mcp.servers.a]\ncommand = "x"\nretries = 3\n[settings]\nfoo-limit = 1\n')
    config = load_config(write(tmp_path, text))
    assert config.model.adapter == "openai" and config.mcp.servers["a"].command == "x"
    joined = "\n".join(config.warnings)
    for word in ("'colour'", "'state.frobnicate'", "'temperature' in [model]", "'retries' in [mcp.servers.a]",
                 "'foo-limit'"):
        assert word in joined
    assert len(config.warnings) == 5


def test_server_table_and_studio_url_are_known(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = ('[studio]\nurl = "http://studio.internal:8780"\n[server]\nhost = "0.0.0.0"\nport = 9000\n'
            'auth = "dev"\nsecret_env = "GW"\nclock_skew = "60s"\nshutdown_grace = "5s"\n'
            'trace_dir = "traces"\nstudio_refresh = "1s"\nstudio_timeout = "2s"\ncors_origins = []\n')
    with caplog.at_level("WARNING", logger="skillc.runtime.outside.config"):
        config = load_config(write(tmp_path, text))
    assert config.warnings == [] and caplog.records == []
    assert config.studio.url == "http://studio.internal:8780"
    assert config.server.port == 9000 and config.server.trace_dir == str(tmp_path / "traces")
    misspelt = load_config(write(tmp_path, "[server]\nprot = 1\n"))
    assert misspelt.warnings == [f"{tmp_path / 'skillc.toml'}: unknown key 'prot' in [server] ignored"]


def test_studio_url_is_a_service_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="studio service"):
        load_config(write(tmp_path, '[studio]\nurl = "studio/"\n'))


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, '[store]\npath = "a.db"\ntimeout = = 3\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:3:")
    assert "invalid TOML" in str(info.value)


def test_missing_file_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no config file"):
        load_config(tmp_path / "absent.toml")


@pytest.mark.parametrize(("server", "message"), [
    ('command = "a"\nurl = "http://x/mcp"', "exactly one of"),
    ('args = ["x"]', "exactly one of"),
    ('url = "http://x/mcp"\nargs = ["y"]', "stdio servers"),
])
def test_server_needs_exactly_one_transport(tmp_path: Path, server: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, f"[mcp.servers.cms]\n{server}\n"))
    assert "mcp.servers.cms" in str(info.value) and message in str(info.value)


@pytest.mark.parametrize(("text", "where"), [
    ('[model]\nadapter = "gpt"\n', "model.adapter"),
    ('[mcp]\ntimeout = 0\n', "mcp.timeout"),
    ('fingerprint-limit = 0\n', "fingerprint-limit"),
    ('state.reconfirm-after = "soon"\n', "state.reconfirm-after"),
    ('platform.hidden = "passportId"\n', "platform.hidden"),
])
def test_invalid_values_name_the_key(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert where in str(info.value)


def test_with_tmp_substitutes_env_and_args() -> None:
    server = McpServerConfig(command="node", args=["server.js", "--data={tmp}/d"],
                             env={"MEMORY_FILE_PATH": "{tmp}/memory.jsonl", "OTHER": "plain"})
    fresh = server.with_tmp("/tmp/run1")
    assert fresh.env == {"MEMORY_FILE_PATH": "/tmp/run1/memory.jsonl", "OTHER": "plain"}
    assert fresh.args == ("server.js", "--data=/tmp/run1/d")
    assert server.env["MEMORY_FILE_PATH"] == "{tmp}/memory.jsonl"  # the original is untouched


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90.0), ("15m", 900.0), ("24h", 86400.0), ("2d", 172800.0), ("500ms", 0.5),
    (45, 45.0), (1.5, 1.5), ("30", 30.0), (" 2h ", 7200.0),
])
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["24 hours", "-5s", "h", "", True, None, [1]])
def test_bad_durations(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(bad)


def test_settings_from_scenario_config_block() -> None:
    settings = Settings.from_mapping({
        "state.write-confirm-bypass-tools": ["cms_tag_add"],
        "state.reconfirm-after": "24h",
        "state.delegate-max-depth": 0,
        "fingerprint-limit": 1,
    })
    assert settings.write_confirm_bypass_tools == ("cms_tag_add",)
    assert (settings.reconfirm_after, settings.delegate_max_depth, settings.fingerprint_limit) == (86400.0, 0, 1)
    assert settings.node_step_limit == 30  # untouched defaults stay


def test_settings_accept_nested_and_python_names() -> None:
    nested = Settings.from_mapping({"state": {"reconfirm-after": 60}, "node_step_limit": 7})
    assert (nested.reconfirm_after, nested.node_step_limit) == (60.0, 7)
    assert Settings.from_mapping(None) == Settings()


def test_settings_unknown_name_raises_or_is_collected() -> None:
    with pytest.raises(ConfigError, match="fingerprint-limt"):
        Settings.from_mapping({"fingerprint-limt": 3})
    unknown: list[str] = []
    assert Settings.from_mapping({"fingerprint-limt": 3}, unknown=unknown) == Settings()
    assert unknown == ["fingerprint-limt"]


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.fingerprint_limit = 9  # type: ignore[misc]


def test_a_missing_config_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's embedding snippet without its skillc.toml: which file, where, what it is for."""
    import asyncio

    from skillc.runtime import open_runtime
    from skillc.runtime.outside.config import ConfigError

    monkeypatch.chdir(tmp_path)

    async def main() -> None:
        async with open_runtime("skillc.toml"):
            pass

    with pytest.raises(ConfigError) as caught:
        asyncio.run(main())
    message = str(caught.value)
    assert "\n" not in message and caught.value.__cause__ is None
    assert message.startswith(f"no config file 'skillc.toml' in {tmp_path.resolve()}"), message
    assert "MCP servers, store and model" in message
