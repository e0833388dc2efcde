"""The extender client's HTTP/1.1 over a scripted server on loopback (asched.api.http1).

The server (``asyncio.start_server``) reads each request whole and answers with the next
scripted answer: raw bytes, written as they are, so every framing an HTTP server may use
is exercised (Content-Length, chunked, close-delimited, gzip, interim 1xx answers,
``Connection: close``, HTTP/1.0), and so are the failures (a malformed answer, a
connection dropped before or while answering, an answer that never ends).
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import orjson
import pytest

from asched.config.types import ExtenderConfig
from asched.errors import ExtenderError
from asched.extenders.client import ExtenderClient
from tests.scripted_http import read_request

BODY = orjson.dumps({"NodeNames": ["n1"]})
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
    len(BODY),
    BODY,
)
GZIPPED = gzip.compress(BODY)
#: answer nothing and close the connection (at the end of an answer: close after it)
DROP = b"<drop>"
#: answer nothing and keep the connection open
HANG = b"<hang>"


@dataclass
class Script:
    """What the server answers, in order, and what it saw."""

    answers: list[bytes]
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    #: close each connection right after its first answer (as an idle timeout would)
    close_after_answer: bool = False
    #: seconds to wait before each answer
    delay: float = 0.0


@asynccontextmanager
async def serving(script: Script) -> AsyncIterator[ExtenderClient]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        script.connections += 1
        try:
            while (request := await read_request(reader)) is not None:
                script.requests.append(request)
                answer = script.answers.pop(0)
                if answer == DROP:
                    break
                await asyncio.sleep(script.delay)
                if answer.endswith(HANG):
                    writer.write(answer.removesuffix(HANG))
                    await asyncio.sleep(3600)
                writer.write(answer.removesuffix(DROP))
                await writer.drain()
                if script.close_after_answer or answer.endswith(DROP):
                    break
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    config = ExtenderConfig(
        url_prefix=f"http://127.0.0.1:{port}/prefix/",
        filter_verb="filter",
        bind_verb="bind",
        http_timeout_seconds=0.5,
    )
    client = ExtenderClient(config)
    try:
        yield client
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


def _answer(head: bytes, body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + head + b"\r\n" + body


@pytest.mark.parametrize(
    ("answer", "reused"),
    [
        pytest.param(OK, True, id="Content-Length: the connection is kept"),
        pytest.param(
            _answer(
                b"Transfer-Encoding: chunked\r\n",
                b"5;ext=1\r\n"
                + BODY[:5]
                + b"\r\n%x\r\n" % (len(BODY) - 5)
                + BODY[5:]
                # the last chunk, a trailer, the end
                + b"\r\n0\r\nX-Trailer: 1\r\n\r\n",
            ),
            True,
            id="chunked, with an extension and a trailer: kept",
        ),
        pytest.param(
            _answer(b"Content-Encoding: gzip\r\nContent-Length: %d\r\n" % len(GZIPPED), GZIPPED),
            True,
            id="gzip, though not asked for: decoded",
        ),
        pytest.param(
            b"HTTP/1.1 100 Continue\r\n\r\n" + OK, True, id="an interim 100 answer is skipped"
        ),
        pytest.param(
            OK.replace(b"OK\r\n", b"OK\r\nConnection: close\r\n"),
            False,
            id="Connection: close: a new connection next",
        ),
        pytest.param(OK.replace(b"HTTP/1.1", b"HTTP/1.0"), False, id="HTTP/1.0 without keep-alive"),
    ],
)
async def test_answer_framings(answer: bytes, reused: bool) -> None:
    script = Script([answer, OK])
    async with serving(script) as client:
        assert await client.post("filter", {"a": 1}) == {"NodeNames": ["n1"]}
        assert await client.post("filter", {"a": 2}) == {"NodeNames": ["n1"]}
    # one connection when the first was kept, else two
    assert script.connections == (1 if reused else 2)


async def test_a_close_delimited_answer() -> None:
    """No length, no chunking: the body ends with the connection (never kept)."""
    script = Script([b"HTTP/1.1 200 OK\r\n\r\n" + BODY], close_after_answer=True)
    async with serving(script) as client:
        assert await client.post("filter", {}) == {"NodeNames": ["n1"]}


async def test_the_request_as_sent() -> None:
    script = Script([OK])
    async with serving(script) as client:
        await client.post("filter", {"Pod": {}, "NodeNames": ["n1"]})
    [request] = script.requests
    head, _, body = request.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /prefix/filter HTTP/1.1"
    assert b"Content-Type: application/json" in lines
    assert b"Content-Length: %d" % len(body) in lines
    assert orjson.loads(body) == {"Pod": {}, "NodeNames": ["n1"]}


async def test_a_kept_connection_dropped_as_it_is_used_is_replaced_once() -> None:
    """The server reads the second request on the kept connection and closes it without
    a byte of answer (an idle timeout racing the call): the request goes again, once,
    on a new connection."""
    script = Script([OK, DROP, OK])
    async with serving(script) as client:
        await client.post("filter", {})
        assert await client.post("filter", {}) == {"NodeNames": ["n1"]}
    assert script.connections == 2
    assert len(script.requests) == 3


async def test_a_bind_on_a_kept_connection_dropped_as_it_is_used_is_not_sent_twice() -> None:
    """The same race for the bind verb: the server may have bound the pod before it
    closed, so the call fails rather than bind twice (Go never replays a written POST)."""
    script = Script([OK, DROP, OK])
    async with serving(script) as client:
        await client.post("filter", {})
        with pytest.raises(ExtenderError, match="lost: ConnectionClosed"):
            await client.post("bind", {})
    assert script.connections == 1
    assert len(script.requests) == 2  # the filter, then the one bind


async def test_a_kept_connection_closed_while_idle_is_not_used() -> None:
    script = Script([OK, OK], close_after_answer=True)
    async with serving(script) as client:
        await client.post("filter", {})
        await asyncio.sleep(0.05)  # the close reaches the client
        assert await client.post("filter", {}) == {"NodeNames": ["n1"]}
    assert script.connections == 2
    assert len(script.requests) == 2


@pytest.mark.parametrize(
    ("answers", "detail"),
    [
        pytest.param(
            [DROP],
            "connection to 127.0.0.1:{port} lost: ConnectionClosed: the server closed the "
            "connection before answering in full",
            id="a new connection closed before the answer",
        ),
        pytest.param(
            [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{" + DROP],
            "connection to 127.0.0.1:{port} lost: ConnectionClosed: the server closed the "
            "connection before answering in full",
            id="closed in the middle of the body",
        ),
        pytest.param(
            [b"SMTP ready\r\n\r\n"],
            "a malformed HTTP answer: HTTPProtocolError: not an HTTP/1.x status line: "
            "b'SMTP ready'",
            id="not HTTP",
        ),
        pytest.param(
            [_answer(b"Content-Length: x\r\n", b"")],
            "a malformed HTTP answer: HTTPProtocolError: bad Content-Length: b'x'",
            id="a bad Content-Length",
        ),
        pytest.param(
            [_answer(b"Transfer-Encoding: chunked\r\n", b"zz\r\n")],
            "a malformed HTTP answer: HTTPProtocolError: bad chunk size: b'zz'",
            id="a bad chunk size",
        ),
        pytest.param(
            [_answer(b"Content-Encoding: br\r\nContent-Length: 2\r\n", b"{}")],
            "a malformed HTTP answer: HTTPProtocolError: unsupported Content-Encoding 'br'",
            id="an encoding it cannot decode",
        ),
        pytest.param(
            [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{" + HANG],
            "no answer within httpTimeout (0.5s)",
            id="an answer that never ends",
        ),
    ],
)
async def test_broken_answers_name_the_call(answers: list[bytes], detail: str) -> None:
    script = Script([*answers, OK, OK])
    async with serving(script) as client:
        port = client._port
        with pytest.raises(ExtenderError) as caught:
            await client.post("filter", {})
        assert caught.value.detail == detail.format(port=port)
        assert caught.value.url.endswith("/prefix/filter")
        # the broken connection is never reused: the next call works
        assert await client.post("filter", {}) == {"NodeNames": ["n1"]}


async def test_calls_in_flight_share_a_bounded_set_of_connections() -> None:
    script = Script([OK] * 6)
    async with serving(script) as client:
        client._connections = 2
        await client.close()  # the limit applies to the next pool
        answers = await asyncio.gather(*(client.post("filter", {"i": i}) for i in range(6)))
    assert answers == [{"NodeNames": ["n1"]}] * 6
    assert script.connections == 2


async def test_a_connection_in_use_when_the_client_closes_is_not_kept() -> None:
    script = Script([OK, OK], delay=0.05)
    async with serving(script) as client:
        call = asyncio.create_task(client.post("filter", {}))
        await asyncio.sleep(0.01)
        pool = client._pool
        assert pool is not None
        await client.close()
        assert await call == {"NodeNames": ["n1"]}
        assert pool._idle == []  # closed, not kept
        assert await client.post("filter", {}) == {"NodeNames": ["n1"]}  # a new pool
    assert script.connections == 2
