"""The runtime's own small modules facing the world outside: the settings it is opened with
(`config`: skillc.toml, the environment, `Settings`) and the one redaction of credentials and
sensitive arguments before anything is printed, traced or hashed (`redact`). Its larger
parts are the sibling packages `mcp`, `model`, `telemetry` (the trace too) and `server`.
"""
