"""The served studio: a compiled directory kept current from its source, without blocking turns.

Sources: a compiled directory (no compiler needed), a studio directory or SQLite file (compiled on
load by the `StudioCompiler` given: `skillc serve` passes the compiler extra's, runtime/compiled/loader.py),
or a studio service over HTTP (`skillc studio serve`, docs/API.md §8). `update()` is awaited
before a turn, at most once per `interval`: an HTTP studio costs one conditional GET when
unchanged; a changed one is compiled incrementally in a worker thread (an unchanged skill keeps
its module). A source that fails leaves the last good studio serving and says so in `status`.
The engine's own per-turn `refresh()` is a no-op here: this object already did the work.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

from skillc.runtime.words.errors import SkillcError
from skillc.runtime.outside.redact import redact_urls
from skillc.runtime.compiled.loader import MANIFEST, CompiledStudio, CompiledStudioError, StudioCompiler

log = logging.getLogger("skillc.server.studio")
FORMAT = "skillc.studio/1"


class StudioUnavailable(SkillcError):
    """The studio source could not give a usable studio this time."""


_NO_COMPILER = ("compiling a studio source needs the compiler extra (pip install 'skillc[compiler]'); "
                "or serve a compiled directory")


def check_document(data: Any) -> dict[str, Any]:
    """A studio service's JSON body, checked for shape (StudioUnavailable when it is garbage)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise StudioUnavailable(f"not a {FORMAT} document")
    if not isinstance(data.get("agents"), list) or not isinstance(data.get("skills"), list):
        raise StudioUnavailable("agents and skills must be lists")
    for s in data["skills"]:
        if not isinstance(s, dict) or not isinstance(s.get("skill_key"), str):
            raise StudioUnavailable("every skill needs a skill_key")
    return data


class StudioFeed:
    """Looks like a `CompiledStudio` to the engine (`skills`, `agents`, `rejected`, `refresh`)."""

    def __init__(self, source: str | None, out_dir: Path, *, interval: float = 2.0, timeout: float = 5.0,
                 compiler: StudioCompiler | None = None) -> None:
        self.source = source
        self.compiler = compiler  # compile-on-load of a source or a studio service (the CLI passes it)
        self.shown = redact_urls(source) if source else None  # what /readyz, events and logs print
        self.out_dir = Path(out_dir)
        self.interval = interval
        self.timeout = timeout
        self.kind = ("http" if source and source.startswith(("http://", "https://")) else
                     "compiled" if source is None or (Path(source) / MANIFEST).exists() else "source")
        self.compiled = CompiledStudio(out_dir=Path(source) if self.kind == "compiled" and source else self.out_dir)
        self.version: str | None = None
        self.error: str | None = None
        self.since: float | None = None
        self.loaded = False
        self.updates = 0
        self._etag: str | None = None
        self._checked = 0.0
        self._lock = asyncio.Lock()
        self._client: Any = None

    # -------------------------------------------------------------- what the engine reads

    @property
    def skills(self) -> dict[str, Any]:
        """Loaded skill modules by key."""
        return self.compiled.skills

    @property
    def agents(self) -> dict[str, Any]:
        """Agent templates by code."""
        return self.compiled.agents

    @property
    def rejected(self) -> dict[str, list[dict[str, Any]]]:
        """Skills dropped at load, with their diagnostics."""
        return self.compiled.rejected

    def refresh(self) -> bool:
        """The engine's per-turn hook: nothing to do, `update()` ran before the turn."""
        return False

    @property
    def stale(self) -> bool:
        """The last update failed and an older studio is serving."""
        return self.error is not None

    def status(self) -> dict[str, Any]:
        """For /readyz."""
        out: dict[str, Any] = {"ok": self.loaded, "source": self.shown or str(self.compiled.out_dir),
                               "kind": self.kind, "stale": self.stale, "skills": len(self.skills)}
        if self.version:
            out["version"] = self.version
        if self.error:
            out.update(error=self.error, since=self.since)
        return out

    # -------------------------------------------------------------- keeping current

    async def update(self, *, force: bool = False) -> str | None:
        """Bring the studio up to date (rate-limited); the error text when the source failed."""
        if not force and self.loaded and time.monotonic() - self._checked < self.interval:
            return self.error
        async with self._lock:
            if not force and self.loaded and time.monotonic() - self._checked < self.interval:
                return self.error
            try:
                await self._update()
            except (StudioUnavailable, CompiledStudioError, OSError, ValueError) as exc:
                if self.error is None:
                    self.since = time.time()
                self.error = redact_urls(str(exc) or type(exc).__name__)
                log.warning("studio %s unavailable, %s: %s", self.shown,
                            "the last good studio keeps serving" if self.loaded else "nothing to serve", self.error)
            else:
                if self.error is not None:
                    log.warning("studio %s is back", self.shown)
                self.error, self.since = None, None
                self.loaded = True
            finally:
                self._checked = time.monotonic()
        return self.error

    async def _update(self) -> None:
        if self.kind == "compiled":
            self.compiled.refresh()  # a stat of manifest.json when unchanged
            return
        if self.kind == "source":
            await self._compile(str(self.source))
        else:
            data = await self._fetch()
            if data is None:  # 304: unchanged
                return
            await self._compile({"agents": data["agents"], "skills": data["skills"]}, origin=str(self.shown))
            self.version = str(data.get("version") or "")
        if self.compiled.refresh():
            self.updates += 1

    async def _compile(self, source: str | dict[str, Any], *, origin: str | None = None) -> None:
        """Rebuild the compiled directory from `source` in a worker thread, by the compiler given."""
        if self.compiler is None:
            raise StudioUnavailable("compiling a studio source needs a compiler (`create_app(compiler=...)`; "
                                    "`skillc serve` passes its own); or serve a compiled directory")
        try:
            await asyncio.to_thread(self.compiler, source, self.out_dir, origin=origin)
        except ImportError as exc:
            raise StudioUnavailable(_NO_COMPILER) from exc

    async def _fetch(self) -> dict[str, Any] | None:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout)
        headers = {"If-None-Match": self._etag} if self._etag and self.loaded else {}
        address = httpx.URL(str(self.source).rstrip("/") + "/studio")
        # credentials go as Basic auth, never in a URL a log line or an error message could print
        auth = httpx.BasicAuth(address.username, address.password) if address.userinfo else None
        address = address.copy_with(username=None, password=None)
        url = str(address)
        try:
            resp = await self._client.get(address, headers=headers, auth=auth or httpx.USE_CLIENT_DEFAULT)
        except httpx.HTTPError as exc:
            raise StudioUnavailable(f"{url}: {type(exc).__name__}: {exc}") from None
        if resp.status_code == 304:
            return None
        if resp.status_code != 200:
            raise StudioUnavailable(f"{url}: HTTP {resp.status_code}")
        try:
            data = check_document(json.loads(resp.content))
        except ValueError as exc:
            raise StudioUnavailable(f"{url}: not JSON: {exc}") from None
        self._etag = resp.headers.get("etag")
        return data

    async def aclose(self) -> None:
        """Close the HTTP client, if any."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
