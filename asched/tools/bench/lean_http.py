"""A minimal HTTP/1.1 server on an asyncio Protocol, for the benchmark's extender.

Why not aiohttp's server: the benchmark extender answers tens of thousands of small
calls on the same two cores as the scheduler it stands in for an extender to, and
aiohttp's request and response objects, its stream reader and its header writer cost
more CPU per call than the extender's own work. This one parses what an extender's
callers send (kube-scheduler's Go client, asched's :mod:`asched.api.http1`, aiohttp's
client) and nothing more:

* requests with a ``Content-Length`` body (or none), kept alive (HTTP/1.1, or HTTP/1.0
  with ``Connection: keep-alive``); pipelined requests are answered in order, one at a
  time per connection; ``Expect: 100-continue`` gets its interim answer;
* a chunked request body, a malformed request line or header, or a head over
  :data:`HEAD_LIMIT` bytes: 400 (411 for chunked) and the connection is closed.

The handler gets ``(method, path, body)`` (the path without its query) and returns a
:data:`Reply` or a coroutine of one (awaited in a task of its own, so a slow answer
holds no other connection).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Coroutine
from http import HTTPStatus
from typing import Any, Final, cast

from asched.api.http_head import closes, content_length, header_fields

#: status, Content-Type, body
Reply = tuple[int, str, bytes]
Handler = Callable[[str, str, bytes], Reply | Coroutine[Any, Any, Reply]]

#: the most bytes of a request's line and headers
HEAD_LIMIT: Final = 64 * 1024
_TEXT: Final = "text/plain; charset=utf-8"


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def encode_reply(reply: Reply, *, close: bool) -> bytes:
    """One whole HTTP/1.1 answer."""
    status, content_type, body = reply
    head = (
        f"HTTP/1.1 {status} {_reason(status)}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n{'Connection: close' if close else ''}"
    )
    return head.encode("latin-1") + (b"\r\n\r\n" if close else b"\r\n") + body


class _Request:
    """The parts of a request head this server reads."""

    __slots__ = ("close", "continue_", "length", "method", "path")

    def __init__(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            raise ValueError(f"not an HTTP/1.x request line: {lines[0][:80]!r}")
        self.method = parts[0].decode("latin-1")
        self.path = parts[1].split(b"?", 1)[0].decode("latin-1")
        fields = header_fields(lines[1:])  # HeadError is a ValueError: a 400
        if b"transfer-encoding" in fields:
            raise LookupError("chunked request bodies are not supported")
        self.length = content_length(fields) or 0
        self.continue_ = fields.get(b"expect", b"").lower() == b"100-continue"
        self.close = closes(parts[2], fields)


class _Connection(asyncio.Protocol):
    """One client connection: read a request, answer it, then the next."""

    def __init__(self, handler: Handler, connections: set[_Connection]) -> None:
        self.handler = handler
        self.connections = connections
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.request: _Request | None = None
        self.busy = False  # a request is being answered
        self.task: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)  # uvloop's is no subclass
        self.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.connections.discard(self)
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next()

    def _refuse(self, status: int, text: str) -> None:
        if self.transport is not None:
            self.transport.write(encode_reply((status, _TEXT, text.encode()), close=True))
            self.transport.close()
        self.buffer.clear()
        self.busy = True  # nothing more is read from this connection

    def _next(self) -> None:
        """Answer the requests whose bytes are all in, one after another."""
        while not self.busy and self.transport is not None:
            request = self.request
            if request is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buffer) > HEAD_LIMIT:
                        self._refuse(400, f"no end of the request head within {HEAD_LIMIT} bytes")
                    return
                try:
                    request = _Request(bytes(self.buffer[:end]))
                except LookupError as exc:
                    self._refuse(411, str(exc))
                    return
                except ValueError as exc:
                    self._refuse(400, str(exc))
                    return
                del self.buffer[: end + 4]
                self.request = request
                if request.continue_ and len(self.buffer) < request.length:
                    self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            if len(self.buffer) < request.length:
                return
            body = bytes(self.buffer[: request.length])
            del self.buffer[: request.length]
            self.request = None
            reply = self.handler(request.method, request.path, body)
            if isinstance(reply, tuple):
                self._send(reply, close=request.close)
            else:
                self.busy = True
                self.task = asyncio.get_running_loop().create_task(
                    self._later(reply, close=request.close)
                )

    async def _later(self, reply: Coroutine[Any, Any, Reply], *, close: bool) -> None:
        answer = await reply
        self.busy = False
        self.task = None
        self._send(answer, close=close)
        if self.buffer:
            self._next()

    def _send(self, reply: Reply, *, close: bool) -> None:
        transport = self.transport
        if transport is None:
            return
        transport.write(encode_reply(reply, close=close))
        if close:
            transport.close()
            self.busy = True

    def abort(self) -> None:
        if self.task is not None:
            self.task.cancel()
        if self.transport is not None:
            self.transport.abort()


class LeanServer:
    """Listening sockets and their connections (see the module docstring)."""

    def __init__(self, server: asyncio.Server, connections: set[_Connection]) -> None:
        self.server = server
        self._connections = connections

    @property
    def port(self) -> int:
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and drop every connection (answers in wait are cancelled)."""
        self.server.close()
        for connection in list(self._connections):
            connection.abort()
        await self.server.wait_closed()


async def start_server(
    handler: Handler,
    host: str,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    backlog: int = 1024,
) -> LeanServer:
    """Listen on ``host:port`` (0: a free port), over TLS with ``ssl_context``."""
    connections: set[_Connection] = set()
    server = await asyncio.get_running_loop().create_server(
        lambda: _Connection(handler, connections), host, port, ssl=ssl_context, backlog=backlog
    )
    return LeanServer(server, connections)
