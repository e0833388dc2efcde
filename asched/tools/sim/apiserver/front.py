"""A lean HTTP/1.1 front: the simulator's hot requests answered without aiohttp.

Why: through aiohttp's low-level server a request cost the simulator 52-65 µs of CPU,
where a bare asyncio protocol costs about 19 µs, and a benchmark pod makes two or three
hot requests (the load generator's create, the scheduler's binding and event). See
bench/RESULTS.md, issue 14.

Each accepted connection (plain or TLS: the transport hands over decrypted bytes) starts
with a :class:`LeanConnection`. It reads HTTP/1.1 requests itself (request line, headers,
a ``Content-Length`` body; several in one read are answered in order) and answers the hot
ones (creates, bindings, patches: see :meth:`asched.tools.sim.apiserver.handlers.Api.answer_plain`, which
runs the same code as the aiohttp path) inline. At the first request it does not answer
(any other verb or path, a query string, no ``Host``, ``Transfer-Encoding``, ``Expect``,
``Upgrade``, HTTP/1.0, a body over :data:`~asched.tools.sim.apiserver.handlers.MAX_BODY_BYTES`, a head it
cannot read) it hands the whole connection, from that request's first byte on, to
aiohttp's protocol for good. A hand-over happens only at a request boundary: nothing of an
answered request is left behind. Patches are hot because the load generator's pool sends
node status patches before its pod creates: one aiohttp-bound request would hand each of
its connections to aiohttp for the rest of the run.

Ownership: :class:`Front` keeps the set of lean connections so the server can cut them
(restart, stop); handed-over connections are aiohttp's (``web.Server.connections``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from http import HTTPStatus
from ssl import SSLContext
from typing import Final, cast

from aiohttp import web

from asched.api.http_head import HeadError, content_length, header_fields
from asched.tools.sim.apiserver.handlers import MAX_BODY_BYTES, Api, PlainAnswer

logger = logging.getLogger(__name__)

_HEAD_END: Final = b"\r\n\r\n"
#: the longest request head read here (bytes); a longer one goes to aiohttp, which refuses it.
HEAD_LIMIT: Final = 16 * 1024
#: headers that make a request aiohttp's (body framing, interim answers, protocol switches).
_DELEGATED_HEADERS: Final = frozenset({b"transfer-encoding", b"expect", b"upgrade"})
#: methods answered here (the rest are aiohttp's without asking the handler).
_HOT_METHODS: Final = frozenset({"POST", "PATCH"})
#: how long an idle connection is kept (seconds): aiohttp's default ``keepalive_timeout``,
#: so a connection is closed alike whichever side holds it
KEEPALIVE_SECONDS: Final = 75.0
#: what :meth:`LeanConnection._one` says of a request left to aiohttp
_AIOHTTP: Final = (1, None, False)


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


_STATUS_LINES: Final = {
    status: f"HTTP/1.1 {status} {_reason(status)}\r\n".encode("latin-1")
    for status in range(100, 600)
}


def render(answer: PlainAnswer, *, close: bool) -> bytes:
    """The whole HTTP/1.1 response of ``answer`` (``Connection: close`` when ``close``)."""
    return (
        b"%sContent-Type: %s\r\nCache-Control: no-cache, private\r\nContent-Length: %d\r\n%s\r\n%s"
        % (
            _STATUS_LINES.get(answer.status) or b"HTTP/1.1 %d \r\n" % answer.status,
            answer.content_type.encode("latin-1"),
            len(answer.body),
            b"Connection: close\r\n" if close else b"",
            answer.body,
        )
    )


class Front:
    """The protocol factory of a listening socket, and the lean connections it made."""

    def __init__(
        self, api: Api, aiohttp_server: web.Server, *, keepalive: float = KEEPALIVE_SECONDS
    ) -> None:
        self.api = api
        self.aiohttp_server = aiohttp_server
        #: seconds a connection may sit idle between requests before it is closed
        self.keepalive = keepalive
        self.connections: set[LeanConnection] = set()

    def __call__(self) -> LeanConnection:
        return LeanConnection(self)

    def cut(self) -> None:
        """Close every lean connection (handed-over ones are aiohttp's to close)."""
        for connection in list(self.connections):
            connection.close()


class LeanConnection(asyncio.Protocol):
    """One accepted connection, until it answers a request it leaves to aiohttp."""

    def __init__(self, front: Front) -> None:
        self.front = front
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self._loop = asyncio.get_running_loop()
        #: loop time of the last bytes received; the idle timer compares against it
        self._active = 0.0
        self._idle: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TLS transport is no asyncio.Transport subclass, though it is one in kind
        self.transport = cast(asyncio.Transport, transport)
        self.front.connections.add(self)
        self._active = self._loop.time()
        self._idle = self._loop.call_at(self._active + self.front.keepalive, self._idle_check)

    def connection_lost(self, exc: Exception | None) -> None:
        self._forget()

    def _forget(self) -> None:
        self.front.connections.discard(self)
        self.transport = None
        self.buffer = b""
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _idle_check(self) -> None:
        """Close the connection once idle for ``keepalive`` seconds (one timer per
        connection, re-armed from the last activity, not per request)."""
        self._idle = None
        if self.transport is None:
            return
        due = self._active + self.front.keepalive
        if self._loop.time() >= due:
            logger.debug("closing a lean connection idle for %.0f s", self.front.keepalive)
            self.transport.close()
            return
        self._idle = self._loop.call_at(due, self._idle_check)

    def close(self) -> None:
        """Close the connection (its unanswered bytes are dropped)."""
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        self._active = self._loop.time()
        buffer = self.buffer + data if self.buffer else data
        start = 0
        answers: list[bytes] = []
        transport = self.transport
        while transport is not None and start < len(buffer):
            consumed, answer, close = self._one(buffer, start)
            if consumed == 0:  # the request is not complete yet
                break
            if answer is None:  # aiohttp's from here on
                self._write(answers)
                self._hand_over(buffer[start:])
                return
            answers.append(answer)
            start = consumed
            if close:
                self._write(answers)
                transport.close()
                self.buffer = b""
                return
        self._write(answers)
        self.buffer = buffer[start:] if start else buffer

    def _write(self, answers: list[bytes]) -> None:
        if answers and self.transport is not None:
            self.transport.write(answers[0] if len(answers) == 1 else b"".join(answers))

    def _one(self, buffer: bytes, start: int) -> tuple[int, bytes | None, bool]:
        """Read the request at ``start``: (its end, its rendered answer, close after it).

        ``(0, None, False)`` when it is not complete yet; ``(1, None, False)`` (``_AIOHTTP``)
        when it is aiohttp's to answer.
        """
        head_end = buffer.find(_HEAD_END, start)
        if head_end < 0:
            if len(buffer) - start > HEAD_LIMIT:
                return _AIOHTTP
            return 0, None, False
        if head_end - start > HEAD_LIMIT:
            return _AIOHTTP
        lines = buffer[start:head_end].split(b"\r\n")
        request_line = lines[0].split(b" ")
        if len(request_line) != 3 or request_line[2] != b"HTTP/1.1":
            return _AIOHTTP
        method, path = request_line[0].decode("latin-1"), request_line[1].decode("latin-1")
        if (
            method not in _HOT_METHODS
            or path[:1] != "/"
            or "?" in path
            or "%" in path
            or "/." in path
            or "#" in path
        ):
            return _AIOHTTP
        try:
            fields = header_fields(lines[1:])
        except HeadError:  # aiohttp refuses it, with its own words
            return _AIOHTTP
        if b"host" not in fields or not fields.keys().isdisjoint(_DELEGATED_HEADERS):
            return _AIOHTTP
        length = content_length(fields) or 0
        if length > MAX_BODY_BYTES:
            return _AIOHTTP
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in fields.items()}
        body_start = head_end + len(_HEAD_END)
        end = body_start + length
        if len(buffer) < end:
            return 0, None, False
        answer = self.front.api.answer_plain(method, path, headers, buffer[body_start:end])
        if answer is None:
            return _AIOHTTP
        close = "close" in headers.get("connection", "").lower()
        return end, render(answer, close=close), close

    def _hand_over(self, unread: bytes) -> None:
        """Give the connection to aiohttp, ``unread`` being the start of its next request."""
        transport = self.transport
        self._forget()
        if transport is None or transport.is_closing():
            return
        handler = self.front.aiohttp_server()
        transport.set_protocol(handler)
        handler.connection_made(transport)
        if unread:
            handler.data_received(unread)


class FrontSite(web.BaseSite):
    """A TCP site of an aiohttp runner whose connections start with the lean front."""

    __slots__ = ("_front", "_host", "_port", "_reuse_address")

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        *,
        front: Callable[[], asyncio.Protocol],
        ssl_context: SSLContext | None = None,
        backlog: int = 128,
        reuse_address: bool = True,
    ) -> None:
        super().__init__(runner, ssl_context=ssl_context, backlog=backlog)
        self._front = front
        self._host = host
        self._port = port
        self._reuse_address = reuse_address

    @property
    def name(self) -> str:
        scheme = "https" if self._ssl_context else "http"
        return f"{scheme}://{self._host}:{self._port} (lean front)"

    async def start(self) -> None:
        await super().start()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._front,
            self._host,
            self._port,
            ssl=self._ssl_context,
            backlog=self._backlog,
            reuse_address=self._reuse_address,
        )
