"""The served runtime for tests/server: example studio, the CMS double over stdio, the fake model."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.model_stub import FakeOpenAIServer
from serve_harness import ALICE, BOB, ROOT, SECRET, Client, ServerThread, write_config


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example studio, compiled once."""
    from skillc.compiler.build import compile_studio

    out = tmp_path_factory.mktemp("compiled")
    compile_studio(ROOT / "examples" / "studio", out)
    return out


@pytest.fixture(scope="session")
def fake_model() -> Iterator[FakeOpenAIServer]:
    """The fake OpenAI-compatible model server."""
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture(scope="session")
def served(compiled: Path, fake_model: FakeOpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`skillc serve` of the compiled example studio on loopback, signing required."""
    from skillc.runtime.server import create_app

    tmp = tmp_path_factory.mktemp("served")
    app = create_app(config_path=write_config(tmp, str(compiled), fake_model.url))
    with ServerThread(app) as server:
        server.tmp = tmp
        server.app = app
        yield server


@pytest.fixture
def alice(served: Any) -> Iterator[Client]:
    """The gateway's client for alice."""
    client = Client(served.url, SECRET, ALICE)
    yield client
    client.close()


@pytest.fixture
def bob(served: Any) -> Iterator[Client]:
    """The gateway's client for bob (same organisation, another user)."""
    client = Client(served.url, SECRET, BOB)
    yield client
    client.close()


@pytest.fixture
def model(fake_model: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The fake model; every canned response a test adds must be used by the test."""
    yield fake_model
    left = fake_model.remaining
    while fake_model.remaining:  # do not leak into the next test
        fake_model._next()
    assert left == 0, f"{left} canned model responses were not used"


@pytest.fixture
def gate(served: Any) -> Iterator[Path]:
    """Hold the CMS double's space lookup until the test releases it."""
    gate_dir = served.tmp / "gate"
    (gate_dir / "release").unlink(missing_ok=True)
    (gate_dir / "hold").write_text("", encoding="utf-8")
    yield gate_dir
    (gate_dir / "release").write_text("", encoding="utf-8")
    (gate_dir / "hold").unlink(missing_ok=True)
    (gate_dir / "release").unlink(missing_ok=True)
