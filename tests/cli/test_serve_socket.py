"""`skillc serve`'s listening socket (cli/serve_startup.listen) gives connections without Nagle's
algorithm: asyncio turns TCP_NODELAY on for an accepted connection only when the listening socket
was made with IPPROTO_TCP, and a socket made with protocol 0 kept Nagle, so a run's last write
waited for the client's delayed ACK: about 40 ms on every run (a lone ledger turn 56 -> 12 ms)."""
from __future__ import annotations

import asyncio
import socket

from skillc.serve_startup import listen


def test_an_accepted_connection_has_tcp_nodelay() -> None:
    async def go() -> int:
        sock = listen("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                accepted = transport.get_extra_info("socket")
                seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)  # as uvicorn serves it
        try:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            value = await asyncio.wait_for(seen, 10)
            writer.close()
            return value
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(go()) != 0
