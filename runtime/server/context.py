"""What every route module gets: the runtime, caller identification, session ownership, runs.

One `Runtime` serves every session of the process (sessions run concurrently; one run per session
at a time). A run is an asyncio task owned by the server, so a request that goes away cancels
nothing; its AG-UI events are mapped from the trace by the run of the event's session (one run
per session at a time; docs/API.md §4).
"""
from __future__ import annotations

import asyncio
import functools
import logging
import secrets
import tempfile
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from starlette.requests import Request

from skillc.runtime import opener
from skillc.runtime.outside.config import audit_key
from skillc.runtime.words.event_types import TraceEvent
from skillc.runtime.words.events import EventName
from skillc.runtime.words.errors import CallerError, SessionBusy, UnknownAgent
from skillc.runtime.outside.redact import redact_urls
from skillc.runtime.server.auth import GatewayAuth, Identity, StoredNonces, owner_of
from skillc.runtime.server.errors import IN_STREAM, ApiError
from skillc.runtime.server.interrupts import answer_of, interrupt_of
from skillc.runtime.server.mapping import RunMapper
from skillc.runtime.server.options import ServeOptions
from skillc.runtime.server.runs import RunLog, RunRegistry
from skillc.runtime.server.studio_feed import StudioFeed
from skillc.runtime.server.traces import TraceFiles, check_id
from skillc.runtime.store import offloop
from skillc.runtime.telemetry.trace import current_env
from skillc.runtime.words.vocab import FINAL_TASK, NodeStatus

log = logging.getLogger("skillc.server")
LIVE_SESSIONS = 5000
Claim = tuple[str, float]  # a verified request's nonce and when it was checked, not claimed yet
READY_WAIT = 0.08  # seconds /readyz waits for the store's answer (it answers within 100 ms)
RECORD_DELAY = 0.05  # seconds a finished run waits to be recorded with the others that finish meanwhile


class ServerContext:
    """The running service: built by `create_app`, started and stopped by its lifespan."""

    def __init__(self, *, config: Any, options: ServeOptions, feed: StudioFeed, auth: GatewayAuth,
                 model: Any = None, gateway: Any = None, store: Any = None, servers: Any = None,
                 telemetry: Any = None) -> None:
        self.config = config
        self.options = options
        self.feed = feed
        self.auth = auth
        store_dir = Path(config.store.path).resolve().parent if config.store.path else Path(tempfile.gettempdir())
        trace_root = Path(options.trace_dir) if options.trace_dir else store_dir / "traces"
        self.runs = RunRegistry(options.run_history, trace_root / "runs")
        # The approval digest's key: the gateway secret (every worker checks every digest), or in
        # development mode a random one per process (a fixed, public key let anyone compute a
        # digest and CONFIRM blind).
        self.digest_key = secrets.token_bytes(32) if options.dev or not options.secret else options.secret.encode()
        self.runtime: Any = None
        self.shutting_down = False
        self.started = False
        self.on_shutdown: list[Callable[[], None]] = []  # called as shutdown begins (e.g. leave a balancer)
        self._given = {"model": model, "gateway": gateway, "store": store, "servers": servers, "telemetry": telemetry}
        self.telemetry: Any = None  # installed on the runtime at start (None: off)
        self._stack = AsyncExitStack()  # what start opened (store, gateway, model), closed by stop
        # Live sessions, least recently used first; an idle one beyond the limit is let go (its
        # state is in the store; it is reopened on its next request).
        self._sessions: OrderedDict[str, Any] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._gated: dict[str, str | None] = {}  # session -> toolCallId of the write awaiting approval
        self._mappers: dict[str, RunMapper] = {}  # session -> its run's mapper, while the run runs (under its lock)
        # session -> its last run's acknowledgement while it is being stored (after that run's
        # response ended): the session's next run waits for it, as if it came before the end
        self._acking: dict[str, asyncio.Future[None]] = {}
        self._open_lock = asyncio.Lock()
        self._probe: asyncio.Future[dict[str, Any]] | None = None  # /readyz's store check in flight
        self._probe_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillc-readyz")
        # a finished run's record is written on a thread of its own: creating a file costs the
        # loop a quarter of a millisecond, on the way to the run's last frames; the runs that
        # finish within RECORD_DELAY go to it together (one wake-up of the thread, not one per run)
        self._record_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillc-runs")
        self._unrecorded: list[RunLog] = []
        self._record_timer: asyncio.TimerHandle | None = None
        self.traces = TraceFiles(trace_root)

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Open store, MCP servers and model (opener's parts, as `open_runtime` opens them); load
        the studio; build the runtime."""
        from skillc.runtime import Runtime, TraceWriter

        store = self._given["store"]
        if store is None:
            target = self.config.store.target()  # $SKILLC_STORE_URL, else [store] url, else path
            store = opener.open_store_in(self._stack, target, self.config.store.options(target))
        gateway = self._given["gateway"]
        if gateway is None:
            gateway = await opener.open_gateway_in(self._stack, self.config, self._given["servers"])
        model = self._given["model"] or opener.open_model_in(self._stack, self.config)
        await self.feed.update(force=True)
        if self._given["gateway"] is None:
            self._report_servers(gateway)
        trace = TraceWriter(keep=False, seq_from=self.traces.last_seq(), key=audit_key())
        trace.listeners.append(self._on_trace)
        trace.flushers.append(self.traces.flush)
        self.runtime = Runtime(self.feed, gateway, model, store, self.config.settings, trace=trace,
                               on_progress=self._on_progress)
        # a reply counts as delivered once its client read the run's stream to RUN_FINISHED
        # (runs.RunLog.acknowledge), not when the turn ends
        self.runtime.acknowledges_delivery = True
        # [telemetry] / OTEL_*: spans; metrics for GET /metrics either way (a given one wins)
        self.telemetry = opener.install_telemetry(self._stack, self.runtime, self.config, self._given["telemetry"],
                                                  service=True)
        if hasattr(store, "claim_nonce"):  # replays refused by every worker sharing the store
            self.auth.nonces = StoredNonces(store, self.auth.skew)
        self.started = True
        if self.auth.dev:
            log.warning("skillc serve runs in DEVELOPMENT MODE: requests are NOT authenticated")

    def _report_servers(self, gateway: Any) -> None:
        """Once at start, the check `skillc chat` prints: each server's tool count, and a warning
        per loaded skill whose toolNames no server serves (every call of them would fail)."""
        from skillc.runtime.mcp.startup import startup_report  # the mcp package, only once it is up

        counted, unserved = startup_report(self._given["servers"] or self.config.mcp.servers, self.feed, gateway)
        for line in counted:
            log.info("%s", line)
        for line in unserved:
            log.warning("%s", line)

    async def stop(self) -> None:
        """Graceful shutdown: refuse new runs, let running turns reach a stopping point, close."""
        self.shutting_down = True
        for hook in self.on_shutdown:
            hook()
        running = [r.task for r in self.runs.running() if r.task is not None]
        if running:
            log.info("waiting up to %gs for %d running turn(s)", self.options.shutdown_grace, len(running))
            await asyncio.wait(running, timeout=self.options.shutdown_grace)
        try:  # what start opened, last first; every closer runs even when one fails
            await self._stack.aclose()
        except Exception:  # closing is best effort: the process is going away
            log.exception("closing the store, MCP servers or model")
        await self.feed.aclose()
        if self._record_timer is not None:
            self._record_timer.cancel()
        self._record_now()
        self._record_thread.shutdown(wait=True)  # every finished run on disk before the process goes
        self.traces.close()

    # ------------------------------------------------------------ callers and sessions

    async def identify(self, request: Request) -> Identity:
        """The caller of a request (ApiError 401 when its signature does not hold). The headers
        are checked before the body is read: an unsigned or expired request costs no read."""
        caller, claim = await self.verify(request)
        await self.claim(claim)
        return caller

    async def verify(self, request: Request) -> tuple[Identity, Claim | None]:
        """`identify` but for a nonce kept in the store: (the caller, the claim still to make,
        before anything is done for the request: `claim` or `session(claim=)`, which makes it in
        the same store call as its first read). The signature is checked here, on the loop."""
        self.auth.precheck(request.headers)
        body = await request.body()
        target = request.scope.get("raw_path", request.url.path.encode()).decode("latin-1")
        if request.scope.get("query_string"):
            target += "?" + request.scope["query_string"].decode("latin-1")
        caller, nonce, now = self.auth.verify(request.method, target, request.headers, body)
        if nonce is None:
            return caller, None
        if self.runtime is None or not isinstance(self.auth.nonces, StoredNonces):
            self.auth.claim(nonce, now)  # in this process's memory: at once, on the loop
            return caller, None
        return caller, (nonce, now)

    async def claim(self, claim: Claim | None) -> None:
        """Make a claim `verify` left (ApiError AUTH_REPLAYED for a replayed request)."""
        if claim is not None:
            await self._io_claiming(claim, None)

    async def _io_claiming(self, claim: Claim | None, fn: Callable[..., Any] | None, *args: Any) -> Any:
        """`_io(fn, *args)` (None when `fn` is None), the request's nonce claimed first when there
        is one to claim: in the same store call for a store called on its threads or the loop
        (SQLite: one call for the two); one awaited after the other on a store with an async face
        (PostgreSQL: two flights on the runtime's loop, where the two in one call on a thread
        crossed threads six times)."""
        if claim is not None and offloop.native(self.runtime.store):
            await self.auth.claim_awaited(*claim)
            claim = None
        if claim is None:
            return None if fn is None else await self._io(fn, *args)
        return await self._io(self._claimed, claim, fn, *args)

    @offloop.bounded
    def _claimed(self, claim: Claim | None, fn: Callable[..., Any] | None, *args: Any) -> Any:
        """On a store thread: the request's nonce claimed (when there is one to claim), then
        `fn(*args)`: the two in one round trip."""
        if claim is not None:
            self.auth.claim(*claim)
        return fn(*args) if fn is not None else None

    async def session(self, identity: Identity, session_id: str, *, create: bool = False,
                      claim: Claim | None = None) -> Any:
        """The caller's session (opened on first use); 403 for another caller's, 404 if absent.
        `claim`: the request's nonce, claimed in the first store call made here (before the
        session is opened or created), or alone when none is made."""
        check_id(session_id, "a session id")
        # the store is asked once per request whether it holds a newer version (one round trip):
        # a session just opened from the store, or a live one just compared with it, is current
        async with self._open_lock:
            session = self._sessions.get(session_id)
            if session is not None and self.lock_of(session_id).locked():
                await self.claim(claim)  # a turn of it runs here: nothing to compare, the claim alone
                claim = None
            elif session is not None:
                stored_version: int = await self._io_claiming(claim, self.runtime.store.version_of, session_id)
                claim = None
                if stored_version != 0 and stored_version != session.env.session.version:
                    session = None  # another worker changed it (a shared store): reopen it from the store
            if session is not None:
                self._sessions.move_to_end(session_id)
            else:
                # the owner from the session's row alone: its history is read once, by open_session
                stored = await self._io_claiming(claim, self.runtime.store.session_head, session_id)
                if stored is None and not create:
                    raise ApiError("SESSION_NOT_FOUND", f"no session {session_id}")
                if stored is not None and owner_of(stored.platform) != identity.owner:
                    raise ApiError("SESSION_FORBIDDEN", f"session {session_id} belongs to another caller")
                session = await self.runtime.open_session(dict(identity.platform), session_id=session_id)
                self.adopt(session)
        if owner_of(session.env.platform) != identity.owner:
            raise ApiError("SESSION_FORBIDDEN", f"session {session_id} belongs to another caller")
        return session

    async def _io(self, fn: Any, *args: Any) -> Any:
        """A store call on the store's threads (runtime/store/offloop.py): the loop never waits."""
        return await offloop.call(self.runtime.store, fn, *args)

    def adopt(self, session: Any) -> None:
        """Keep a session opened elsewhere (REST open) as this process's live one."""
        self._sessions[session.id] = session
        while len(self._sessions) > LIVE_SESSIONS:
            idle = next((sid for sid in self._sessions if not self.lock_of(sid).locked()), None)
            if idle is None:
                break
            del self._sessions[idle]
            self._locks.pop(idle, None)

    async def sessions_of(self, identity: Identity) -> list[dict[str, Any]]:
        """The caller's sessions, most recent first: id, updated, turn, pending kind (the rows
        read on the store's threads; a live session answers for itself)."""
        out = []
        for sid, updated, state, task in await self._io(self._stored_sessions, identity.owner):
            live = self._sessions.get(sid)
            if live is not None:
                p = live.pending()
                pending = p["kind"] if p else None
            elif task is not None and task.state not in FINAL_TASK:
                pending = next((n.suspended for n in task.nodes.values() if n.state == NodeStatus.SUSPENDED), None)
            else:
                pending = None
            out.append({"id": sid, "updated": updated, "turn": state.turn, "pending": pending})
        out.sort(key=lambda s: s["updated"] or 0, reverse=True)
        return out

    def _stored_sessions(self, owner: str) -> list[tuple[str, Any, Any, Any]]:
        store, rows = self.runtime.store, []
        for sid, updated in store.sessions():
            state = store.session_head(sid)  # the row only: a list must not read every history
            if state is None or owner_of(state.platform) != owner:
                continue
            task = store.get_task(sid, state.active_task) if state.active_task and sid not in self._sessions else None
            rows.append((sid, updated, state, task))
        return rows

    def interrupt_of(self, session: Any) -> dict[str, Any] | None:
        """The session's pending question as the AG-UI interrupt JSON (docs/API.md §2)."""
        found = interrupt_of(session, self.digest_key, self._gated.get(session.id))
        return None if found is None else found.model_dump(by_alias=True)

    def lock_of(self, session_id: str) -> asyncio.Lock:
        """The in-process lock that keeps one run per session (until the store's lease serves)."""
        return self._locks.setdefault(session_id, asyncio.Lock())

    # ------------------------------------------------------------ runs

    async def start_run(self, identity: Identity, thread_id: str, run_id: str, message: tuple[str, str] | None,
                        resume: list[Any] | None, agent: str | None = None, claim: Claim | None = None) -> RunLog:
        """Check the input under the session's lock, then run it as a task; the run's log follows.
        `agent`: the agent the user picked for a task the message starts (422 UNKNOWN_AGENT when
        it is not loadable). `claim`: the request's nonce not claimed yet (`verify`), claimed
        before anything else touches the store."""
        if self.shutting_down:
            await self.claim(claim)  # a replay is told so first, as before
            raise ApiError("SHUTTING_DOWN", "the service is shutting down; retry on another instance")
        acking = self._acking.get(thread_id)
        if acking is not None:  # the last run's reply is being marked delivered: that comes first
            await asyncio.shield(acking)
        session = await self.session(identity, thread_id, create=True, claim=claim)
        lock = self.lock_of(thread_id)
        if lock.locked():
            raise ApiError(SessionBusy.name, f"session {thread_id} has a run in progress")
        await lock.acquire()  # no await since `session` compared it with the store: it is current
        try:
            if agent is not None and agent not in (loadable := session.env.loadable_agents()):
                raise ApiError(UnknownAgent.name, f"no loadable agent {agent!r} "
                               f"(loadable: {', '.join(loadable) or 'none'})")
            if resume:
                try:
                    action, payload = answer_of(session, resume, self.digest_key, identity, self.runtime.clock())
                except ApiError as exc:
                    if exc.code not in IN_STREAM:
                        raise
                    if "pending" in exc.extra:  # as the run that asked showed it (with its toolCallId)
                        exc.extra["pending"] = self.interrupt_of(session)
                    action, payload = "refuse", exc  # the run's own RUN_ERROR (docs/API.md §3)
            elif message is not None:
                # the session answers a re-sent message id itself, with its reply (docs/interpretations.md: A lost reply)
                action, payload = "send", message[1]
            elif session.pending() is not None:
                action, payload = "repeat", None
            else:
                raise ApiError("NO_INPUT", "no new user message and nothing pending to answer")
            # The id the session dedupes on: the user message's own, or for a resume this run's (the
            # history sent with a resume holds old messages whose ids must not be reused).
            client_id = message[0] if message is not None and not resume else f"run:{run_id}"
            run = RunLog(run_id=run_id, thread_id=thread_id, owner=identity.owner)
            self.runs.add(run)
        except BaseException:
            lock.release()
            raise
        run.task = asyncio.get_running_loop().create_task(
            self._execute(run, session, action, payload, client_id, lock, agent))
        return run

    async def _execute(self, run: RunLog, session: Any, action: str, payload: Any, message_id: str | None,
                       lock: asyncio.Lock, agent: str | None = None) -> None:
        mapper = RunMapper(run, session, self.digest_key)
        self._mappers[session.id] = mapper
        try:
            mapper.start()
            if action == "refuse":
                mapper.refused(payload)
                return
            stale = await self.feed.update()
            if stale is not None:
                fields = {"source": self.feed.shown, "error": stale, "since": self.feed.since}
                session.env.emit({"type": EventName.STUDIO_STALE, "source": self.feed.shown, "error": stale,
                                  "since": self.feed.since}, before_turn=True)
                mapper.custom("skillc.studio_stale", fields)
            if action == "answer" and "decision" in payload:
                pending = session.pending() or {}
                mapper.custom("skillc.approval", {"node": pending.get("node"), "tool": pending.get("tool"),
                                                  **{k: payload.get(k) for k in ("decision", "digest", "approver",
                                                                                 "decided_at")}})
            if action == "send":
                reply = await session.send(payload, client_message_id=message_id, agent=agent)
            elif action == "answer":
                # a decision re-sent under the same runId (its reply lost in a crash) is answered again,
                # not applied twice (docs/interpretations.md: A lost reply)
                reply = await session.answer(payload, client_message_id=message_id)
            else:  # the same question again, e.g. a re-sent message whose reply was lost
                pending = session.pending()
                reply = SimpleNamespace(text=pending["question"] if pending else "", task=session.env.task.id)
            mapper.finish(reply)
            if action != "repeat":
                run.acknowledge = functools.partial(self._acknowledge, session, session.env.session.turn)
            self._gated[session.id] = mapper.gated_call()
        except CallerError as exc:  # the store's lease held elsewhere (another process), or a failed commit
            mapper.error(str(exc), exc.name)
        except Exception as exc:  # the service lives on; the stream says what happened, the log why
            log.exception("run %s of session %s failed", run.run_id, run.thread_id)
            mapper.failed(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            del self._mappers[session.id]
            lock.release()
            run.close()
            self._unrecorded.append(run)
            if self._record_timer is None:
                self._record_timer = asyncio.get_running_loop().call_later(RECORD_DELAY, self._record_now)

    async def _acknowledge(self, session: Any, turn: int) -> None:
        """Mark the reply of `turn` delivered (its run's response has ended); the session's next
        run waits until this is stored (`start_run`)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._acking[session.id] = done
        try:
            await session.acknowledge(turn)
        finally:
            done.set_result(None)
            if self._acking.get(session.id) is done:
                del self._acking[session.id]

    def _record_now(self) -> None:
        """Hand the finished runs not yet recorded to the record thread (here when it is gone)."""
        self._record_timer = None
        runs, self._unrecorded = self._unrecorded, []
        if not runs:
            return
        try:
            self._record_thread.submit(self._record, runs)
        except RuntimeError:  # shutting down: the thread is gone, record them here
            self._record(runs)

    def _record(self, runs: list[RunLog]) -> None:
        try:
            self.runs.finished(*runs)
        except OSError:  # the runs are still in memory; only a restart would forget them
            log.exception("cannot record runs %s", ", ".join(r.run_id for r in runs))

    def _on_trace(self, event: TraceEvent) -> None:
        self.traces.write(event)
        mapper = self._mappers.get(event["session"]) if self._mappers else None
        if mapper is not None:
            mapper.trace(event)

    def _on_progress(self, tool: str, label: str) -> None:
        env = current_env()  # the session whose turn reports the progress (trace's context variable)
        mapper = self._mappers.get(env.id) if env is not None else None
        if mapper is not None:
            mapper.progress(tool, label)

    # ------------------------------------------------------------ health

    async def readiness(self) -> dict[str, Any]:
        """What /readyz reports: store, MCP servers, studio, auth mode, shutdown. The store is
        asked on a thread of its own and given READY_WAIT seconds: a database that hangs makes
        the answer "store down" at once, never a readyz that hangs with it."""
        out: dict[str, Any] = {"auth": "dev-insecure" if self.auth.dev else "hmac",
                               "shutting_down": self.shutting_down, "studio": self.feed.status()}
        if self.runtime is None:
            out.update(ready=False, store={"ok": False, "error": "not started"}, mcp={})
            return out
        if self._probe is None or self._probe.done():  # one probe at a time; a slow one is waited for again
            self._probe = asyncio.get_running_loop().run_in_executor(self._probe_thread, self._probe_store)
        try:
            out["store"] = await asyncio.wait_for(asyncio.shield(self._probe), READY_WAIT)
        except asyncio.TimeoutError:
            out["store"] = {"ok": False, "error": f"the store did not answer within {READY_WAIT * 1000:.0f} ms"}
        gateway = self.runtime.gateway
        down = dict(getattr(gateway, "unreachable_servers", {}) or {})
        conns = getattr(gateway, "_conns", {}) or {}
        out["mcp"] = {name: ({"ok": False, "error": redact_urls(str(down[name]))} if name in down else {"ok": True})
                      for name in sorted(set(conns) | set(down))}
        out["ready"] = (out["store"]["ok"] and all(m["ok"] for m in out["mcp"].values())
                        and self.feed.loaded and not self.shutting_down)
        return out

    def _probe_store(self) -> dict[str, Any]:
        try:
            self.runtime.store.version_of("-readyz-")  # one indexed read
            return {"ok": True}
        except Exception as exc:  # any store failure means not ready
            return {"ok": False, "error": redact_urls(f"{type(exc).__name__}: {exc}")}
