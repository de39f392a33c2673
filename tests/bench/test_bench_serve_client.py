"""bench/serve.py's lean HTTP client (`LoopbackHttp`): it must read what uvicorn writes (a chunked
stream, an error with a length, a connection closed after it), or the served figure measures a
client that reads wrong."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from helpers.by_path import load_module

_PATH = Path(__file__).resolve().parents[2] / "bench" / "serve.py"


def _serve_module() -> Any:
    return load_module(_PATH, "bench_serve")


STREAM = b"id: 0\ndata: {\"type\":\"RUN_STARTED\"}\n\nid: 1\ndata: {\"type\":\"RUN_FINISHED\",\"interrupt\":{}}\n\n"


async def _exchange() -> tuple[list[tuple[int, bytes]], list[bytes], int]:
    requests: list[bytes] = []
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            requests.append(head + await reader.readexactly(length))
            if len(requests) == 1:  # a stream: chunks cut across frames, one with an extension
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")
                for part in (STREAM[:10], STREAM[10:50], STREAM[50:]):
                    writer.write(b"%x;ext=1\r\n%s\r\n" % (len(part), part))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
            elif len(requests) == 2:  # an error with a length, and the connection closed after it
                body = b'{"error":"AUTH_REPLAYED"}'
                writer.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                             % (len(body), body))
                await writer.drain()
                break
            else:  # an answer with a length, then the connection closed unannounced (a keep-alive timeout)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
                break
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = _serve_module().LoopbackHttp("127.0.0.1", port)
    answers = [await client.post("/agui", b'{"a":1}', {"X-Test": "one"}),
               await client.post("/agui", b"{}", {}),
               await client.post("/agui", b"{}", {}),  # a new connection: the last one was closed
               await client.post("/agui", b"{}", {})]  # that one closed unannounced: opened again
    await client.aclose()
    server.close()
    await server.wait_closed()
    return answers, requests, connections


def test_the_lean_client_reads_a_chunked_stream_and_a_closed_connection() -> None:
    """Four requests: two on the first connection, one on a second; the server closes that one
    without a word, and the fourth request goes on a third (sent once there: 4 requests read)."""
    answers, requests, connections = asyncio.run(_exchange())
    assert answers[0] == (200, STREAM)
    assert answers[1] == (401, b'{"error":"AUTH_REPLAYED"}')
    assert answers[2] == answers[3] == (200, b"ok")
    assert connections == 3  # kept alive until the server said close, or closed it
    first = requests[0].split(b"\r\n")
    assert first[0] == b"POST /agui HTTP/1.1" and b"X-Test: one" in first and b"Content-Length: 7" in first
    assert requests[0].endswith(b'\r\n\r\n{"a":1}') and len(requests) == 4


def test_the_turns_last_event_is_found_in_the_stream() -> None:
    serve = _serve_module()
    last = serve.last_event(STREAM)
    assert last == 'data: {"type":"RUN_FINISHED","interrupt":{}}\n\n'
    serve.check_finished(last)
    try:
        serve.check_finished(serve.last_event(STREAM.split(b"\n\n")[0] + b"\n\n"))
    except AssertionError:
        pass
    else:
        raise AssertionError("a stream that ends on RUN_STARTED passed as finished")
