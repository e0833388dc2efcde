"""The benchmark extender's HTTP server (asched.tools.bench.lean_http), over loopback sockets.

What its callers send must work (Content-Length bodies, kept-alive connections, pipelined
requests answered in order, ``Expect: 100-continue``, HTTP/1.0); what it does not support
gets one answer and a closed connection (chunked bodies, a malformed head).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest

from asched.tools.bench.lean_http import HEAD_LIMIT, Reply, start_server

JSON = "application/json"


def handler(method: str, path: str, body: bytes) -> Reply | Coroutine[Any, Any, Reply]:
    """Echoes ``method path body``; ``/slow`` answers after a sleep (a coroutine)."""
    text = b"%s %s %s" % (method.encode(), path.encode(), body)
    if path == "/slow":

        async def later() -> Reply:
            await asyncio.sleep(0.01)
            return 200, JSON, text

        return later()
    return 200, JSON, text


@asynccontextmanager
async def connected() -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    server = await start_server(handler, "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        yield reader, writer
    finally:
        writer.close()
        await server.close()


async def answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split(" ")[1])
    headers = {}
    for line in head[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body


def post(path: str, body: bytes, *extra: str, version: str = "HTTP/1.1") -> bytes:
    headers = "".join(f"{line}\r\n" for line in extra)
    return (
        f"POST {path} {version}\r\nHost: x\r\nContent-Length: {len(body)}\r\n{headers}\r\n"
    ).encode() + body


async def test_kept_alive_requests_and_pipelined_ones_in_order() -> None:
    async with connected() as (reader, writer):
        writer.write(post("/a?q=1", b'{"x":1}'))
        assert await answer(reader) == (
            200,
            {"content-type": JSON, "content-length": "15"},  # len('POST /a {"x":1}')
            b'POST /a {"x":1}',
        )
        # three at once, the slow one first: answered one after another, in order
        writer.write(post("/slow", b"1") + post("/b", b"2") + b"GET /c HTTP/1.1\r\n\r\n")
        assert [(await answer(reader))[2] for _ in range(3)] == [
            b"POST /slow 1",
            b"POST /b 2",
            b"GET /c ",
        ]


async def test_a_body_in_pieces_and_expect_continue() -> None:
    async with connected() as (reader, writer):
        writer.write(b"POST /d HTTP/1.1\r\nContent-Length: 6\r\nExpect: 100-continue\r\n\r\n")
        assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        writer.write(b"abc")
        await asyncio.sleep(0.01)
        writer.write(b"def")
        assert (await answer(reader))[2] == b"POST /d abcdef"


async def test_http_10_and_connection_close_end_the_connection() -> None:
    async with connected() as (reader, writer):
        writer.write(post("/e", b"", version="HTTP/1.0"))
        status, headers, _ = await answer(reader)
        assert (status, headers["connection"]) == (200, "close")
        assert await reader.read() == b""  # closed
    async with connected() as (reader, writer):
        writer.write(post("/e", b"", "Connection: close"))
        assert (await answer(reader))[1]["connection"] == "close"
        assert await reader.read() == b""


@pytest.mark.parametrize(
    ("request_bytes", "status", "text"),
    [
        pytest.param(
            b"POST /f HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            411,
            "chunked request bodies are not supported",
            id="chunked",
        ),
        pytest.param(b"HELLO\r\n\r\n", 400, "not an HTTP/1.x request line: b'HELLO'", id="line"),
        pytest.param(
            b"POST /f HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            400,
            "bad Content-Length: b'x'",
            id="length",
        ),
        pytest.param(
            b"POST /f HTTP/1.1\r\nno colon\r\n\r\n",
            400,
            "a header line without a colon: b'no colon'",
            id="header",
        ),
        pytest.param(
            b"GET /" + b"x" * (HEAD_LIMIT + 1),
            400,
            f"no end of the request head within {HEAD_LIMIT} bytes",
            id="head too long",
        ),
    ],
)
async def test_what_it_does_not_read_gets_one_answer_and_a_close(
    request_bytes: bytes, status: int, text: str
) -> None:
    async with connected() as (reader, writer):
        writer.write(request_bytes)
        got, headers, body = await answer(reader)
        assert (got, headers["connection"], body.decode()) == (status, "close", text)
        assert await reader.read() == b""
