"""A lean HTTP/1.1 client: small requests over kept-alive connections, one write each.

Used by the extender client (:mod:`asched.extenders.client`) and by the API writes on the
scheduler's hot path (:mod:`asched.api.fast_writes`: bindings and pod status patches).

Why not aiohttp's client, as the rest of :mod:`asched.api` uses: these calls are small
requests and small answers, thousands of times a second, and aiohttp's per-request
machinery (request and response objects, header multidicts, a writer task, timers, several
small writes each encrypted on their own under TLS) cost more CPU than the call's own
bytes. ``bench/extender_cpu.py`` part (c) measured the client's CPU per extender call at
about 140 µs (filter, 500 names) and 200 µs (prioritize, 450 entries) with aiohttp, and
about 60 and 100 µs with this client, JSON decoding included; ``bench/bind_client_cpu.py``
measures a binding.

What it speaks (enough for any HTTP/1.1 server, Go's ``net/http`` included):

- the request: whatever bytes the caller renders (request line, headers, body), written
  to the connection in one ``write`` (under TLS: one record, not one per header block);
- the answer: ``1xx`` interim answers skipped; a body delimited by ``Content-Length``,
  by ``Transfer-Encoding: chunked`` (extensions and trailers ignored), or by the end of
  the connection; ``Content-Encoding`` gzip or deflate decoded (a server may compress
  though not asked), any other refused;
- connections: one exchange at a time each, kept for the next call unless the answer
  says ``Connection: close`` (or is HTTP/1.0 without keep-alive, or ends with the
  connection); at most ``limit`` at once, the others wait. A request sent on a kept
  connection that the server closes before any byte of its answer is sent once more on
  a new connection (the server dropped the idle connection just as it was used, as Go's
  transport retries ``errServerClosedIdle``), unless the caller says the call has effects
  (an extender's bind verb, an API binding): that is never sent twice.

Deadlines: the caller may bound the whole exchange itself (``asyncio.timeout``, as the
extender client does), or pass ``deadline`` (loop time, seconds): then one
``loop.call_at`` handle per exchange aborts the connection in use when it passes (about
1.4 µs per call on uvloop, against about 6 µs for an ``asyncio.timeout`` block), and the
rare waits for a free slot or a new connection run under ``asyncio.timeout_at``.

Failures leave as :class:`CannotConnect`, :class:`OSError` (a connection lost,
:class:`ssl.SSLError` for TLS), :class:`HTTPProtocolError` (a malformed answer) or
:class:`TimeoutError` (a deadline passed); the caller names the call. A connection in use
when anything goes wrong (cancellation included) is aborted, never reused.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from typing import Final, cast

from asched.api.http_head import HeadError, closes, content_length, header_fields

_CHUNK_END: Final = b"\r\n"
_HEAD_END: Final = b"\r\n\r\n"
#: the longest head or chunk-size line accepted (bytes)
_LINE_LIMIT: Final = 64 * 1024


class HTTPProtocolError(Exception):
    """The server's answer is not HTTP/1.x as this client reads it."""


class ConnectionClosed(ConnectionError):
    """The server closed the connection before its answer was complete."""


class CannotConnect(ConnectionError):
    """No connection could be made (refused, unreachable, no such host); the message
    names the host and port and the underlying error."""


class _Connection(asyncio.Protocol):
    """One connection's incoming bytes, read by the exchange that owns it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.closed = False
        self.error: BaseException | None = None
        #: bytes received since the current request was sent
        self.received = 0
        self._waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.Transport", transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self.received += len(data)
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.error is None:  # a deadline's TimeoutError stays the cause
            self.error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _more(self) -> None:
        """Wait for more bytes; raise if none can come."""
        if self.closed:
            if self.error is not None:
                raise self.error
            raise ConnectionClosed("the server closed the connection before answering in full")
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def until(self, marker: bytes) -> bytes:
        """The bytes before ``marker`` (consumed with it)."""
        start = 0
        while True:
            found = self.buffer.find(marker, start)
            if found >= 0:
                out = bytes(self.buffer[:found])
                del self.buffer[: found + len(marker)]
                return out
            if len(self.buffer) > _LINE_LIMIT:
                raise HTTPProtocolError(f"no end of line within {_LINE_LIMIT} bytes")
            start = max(0, len(self.buffer) - len(marker) + 1)
            await self._more()

    async def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            await self._more()
        if len(self.buffer) == size:  # the usual case: one copy, not a slice and a copy
            out = bytes(self.buffer)
            self.buffer.clear()
            return out
        out = bytes(self.buffer[:size])
        del self.buffer[:size]
        return out

    async def to_end(self) -> bytes:
        while not self.closed:
            await self._more()
        if self.error is not None:
            raise self.error
        out = bytes(self.buffer)
        self.buffer.clear()
        return out

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def expire(self) -> None:
        """The exchange's deadline passed: abort, and make the reader raise TimeoutError."""
        if self.error is None:
            self.error = TimeoutError("no complete answer before the deadline")
        self.abort()
        self._wake()


class _Head:
    """The status line and the headers this client reads."""

    __slots__ = ("close", "encoding", "length", "status", "transfer")

    def __init__(self, raw: bytes) -> None:
        lines = raw.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise HTTPProtocolError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        self.status = int(parts[1])
        try:
            fields = header_fields(lines[1:])
        except HeadError as exc:
            raise HTTPProtocolError(str(exc)) from None
        self.length = content_length(fields)
        self.transfer = fields.get(b"transfer-encoding", b"").lower()
        self.encoding = fields.get(b"content-encoding", b"").lower()
        self.close = closes(parts[0], fields)


async def _chunked(connection: _Connection) -> bytes:
    body = bytearray()
    while True:
        line = await connection.until(_CHUNK_END)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise HTTPProtocolError(f"bad chunk size: {size_text[:40]!r}") from None
        if size == 0:
            while await connection.until(_CHUNK_END):  # trailers, up to the empty line
                pass
            return bytes(body)
        body += await connection.exactly(size)
        if await connection.exactly(2) != _CHUNK_END:
            raise HTTPProtocolError("a chunk does not end with CRLF")


def _decoded(encoding: bytes, body: bytes) -> bytes:
    if encoding in (b"", b"identity"):
        return body
    try:
        if encoding in (b"gzip", b"x-gzip"):
            return zlib.decompress(body, 16 + zlib.MAX_WBITS)
        if encoding == b"deflate":
            return zlib.decompress(body)
    except zlib.error as exc:
        raise HTTPProtocolError(f"cannot decode the {encoding.decode()} body: {exc}") from None
    raise HTTPProtocolError(f"unsupported Content-Encoding {encoding[:40].decode('latin-1')!r}")


async def _answer(connection: _Connection) -> tuple[int, bytes, bool]:
    """Read one answer: its status, its body (decoded) and whether the connection is
    still usable."""
    while True:
        head = _Head(await connection.until(_HEAD_END))
        if head.status >= 200:
            break  # 1xx: an interim answer, the real one follows
    if head.status in (204, 304):
        body, reusable = b"", not head.close
    elif head.transfer:
        if not head.transfer.endswith(b"chunked"):
            body, reusable = await connection.to_end(), False
        else:
            body, reusable = await _chunked(connection), not head.close
    elif head.length is not None:
        body, reusable = await connection.exactly(head.length), not head.close
    else:
        body, reusable = await connection.to_end(), False
    if connection.buffer:  # more than was asked for: never reuse
        reusable = False
    return head.status, _decoded(head.encoding, body), reusable


class Pool:
    """Kept-alive connections to one ``host:port``; build it anywhere, use it in one loop.

    Parameters
    ----------
    host, port : str, int
        Where to connect.
    ssl_context : ssl.SSLContext or None
        TLS when given (HTTPS).
    server_hostname : str or None
        The name TLS sends (SNI) and checks; None: ``host``.
    limit : int
        The most connections at once.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None,
        server_hostname: str | None,
        limit: int,
    ) -> None:
        self.host = host
        self.port = port
        self._ssl = ssl_context
        self._server_hostname = server_hostname if ssl_context is not None else None
        self._limit = limit
        self._slots: asyncio.Semaphore | None = None
        self._idle: list[_Connection] = []
        self._closed = False

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, connection = await loop.create_connection(
                _Connection,
                self.host,
                self.port,
                ssl=self._ssl,
                server_hostname=self._server_hostname,
            )
        except ssl.SSLError:
            raise
        except OSError as exc:
            where = f"{self.host}:{self.port}"
            text = " ".join(str(exc).split())
            message = f"Cannot connect to host {where}: {type(exc).__name__}: {text}"
            raise CannotConnect(message) from exc
        return connection

    def _kept(self) -> _Connection | None:
        while self._idle:
            connection = self._idle.pop()  # the most recently used: least likely dropped
            if not connection.closed and not connection.buffer:
                return connection
            connection.abort()
        return None

    async def _connect_by(self, deadline: float | None) -> _Connection:
        if deadline is None:
            return await self._connect()
        async with asyncio.timeout_at(deadline):
            return await self._connect()

    async def exchange(
        self, request: bytes, *, replayable: bool = True, deadline: float | None = None
    ) -> tuple[int, bytes]:
        """Send ``request`` (a whole HTTP/1.1 request) and read its answer: the status
        and the (decoded) body.

        ``replayable=False`` (a call with effects: a bind) is never sent twice: a kept
        connection dropped under it is an error, as Go's transport never replays a
        written POST. ``deadline`` (loop time, seconds; None: none) bounds the whole
        exchange, waiting for a free connection included: TimeoutError after it.
        """
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._limit)
        slots = self._slots
        if deadline is not None and slots.locked():
            async with asyncio.timeout_at(deadline):
                await slots.acquire()
        else:
            await slots.acquire()
        try:
            kept = self._kept()
            connection = kept if kept is not None else await self._connect_by(deadline)
            loop = asyncio.get_running_loop()
            while True:
                timer = None if deadline is None else loop.call_at(deadline, connection.expire)
                try:
                    connection.received = 0
                    assert connection.transport is not None
                    connection.transport.write(request)
                    status, body, reusable = await _answer(connection)
                except (ConnectionClosed, ConnectionResetError, BrokenPipeError):
                    connection.abort()
                    if kept is None or connection.received or not replayable:
                        raise
                    kept = None  # dropped while idle: once more, on a new connection
                    connection = await self._connect_by(deadline)
                    continue
                except BaseException:
                    connection.abort()
                    raise
                finally:
                    if timer is not None:
                        timer.cancel()
                if reusable and not self._closed:
                    self._idle.append(connection)
                else:
                    connection.abort()
                return status, body
        finally:
            slots.release()

    def close(self) -> None:
        """Close the idle connections; those in use close when their exchange ends."""
        self._closed = True
        while self._idle:
            self._idle.pop().abort()
