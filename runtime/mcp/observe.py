"""Stream observers under every gateway connection: what happened to a call on the wire.

The SDK reports a broken connection with the same error whether or not the request left, so
the gateway wraps each transport's streams: the write side notes whether the current call's
`tools/call` was written (and fires `on_invoked` just before), the read side notes end of stream.
"""
from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OnInvoked = Callable[[str, dict[str, Any]], None]


@dataclass
class CallRecord:
    """What the stream wrapper saw of one `tools/call` (set through a context variable)."""

    tool: str
    args: dict[str, Any]
    on_invoked: OnInvoked | None
    sent: bool = False
    refused: bool = False
    callback_error: BaseException | None = None


# The SDK writes a request from the caller's own task, so the write wrapper can find the call
# it belongs to without parsing request ids.
CURRENT_CALL: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar("skillc_mcp_call", default=None)


@dataclass
class Link:
    """Per-connection transport facts, kept by the stream wrappers."""

    eof: bool = False
    write_failed: bool = False


class StreamWrapper:
    """A stream that forwards to another one: closing and `async with` delegate to the inner stream."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def close(self) -> None:
        """Close without waiting (memory streams)."""
        closer = getattr(self._inner, "close", None)
        if closer is not None:
            closer()

    async def aclose(self) -> None:
        """Close the inner stream."""
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class ObservedRead(StreamWrapper):
    """Read side: notes the end of the stream (the peer hung up or the transport closed)."""

    def __init__(self, inner: Any, link: Link) -> None:
        super().__init__(inner)
        self._link = link

    @property
    def last_context(self) -> Any:
        """The sender's context, when the inner stream carries one (SDK duck typing)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        """Next message; a closed stream marks the link ended."""
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._link.eof = True
            raise

    def __aiter__(self) -> ObservedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None



class ObservedWrite(StreamWrapper):
    """Write side: reports `on_invoked` just before a `tools/call` goes out and whether it went."""

    def __init__(self, inner: Any, link: Link) -> None:
        super().__init__(inner)
        self._link = link

    async def send(self, item: Any) -> None:
        """Send one message; for the current call's `tools/call`, record the write's fate."""
        import anyio

        message = getattr(item, "message", None)
        record = CURRENT_CALL.get()
        is_call = (record is not None and not record.sent and getattr(message, "method", None) == "tools/call")
        if is_call and record is not None and record.on_invoked is not None:
            try:
                record.on_invoked(record.tool, record.args)
            except BaseException as exc:  # a callback bug: re-raised by `call`, not a tool failure
                record.callback_error = exc
                raise
        try:
            await self._inner.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._link.write_failed = True
            if is_call and record is not None:
                record.refused = True
            raise
        if is_call and record is not None:
            record.sent = True



class ObservedTransport:
    """A `Transport` wrapping another one's streams in the observers above."""

    def __init__(self, inner: Any, link: Link) -> None:
        self._inner = inner
        self._link = link

    async def __aenter__(self) -> tuple[ObservedRead, ObservedWrite]:
        read, write = await self._inner.__aenter__()
        return ObservedRead(read, self._link), ObservedWrite(write, self._link)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)
