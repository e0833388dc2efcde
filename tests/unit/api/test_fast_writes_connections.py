"""The fast path's connections against a scripted server on loopback: replays, deadlines, aborts.

The server (``asyncio.start_server``) reads each request whole, records it, and answers
with the next scripted answer: raw bytes, or ``DROP`` (close the connection without a
byte of answer) or ``HANG`` (never answer). What is checked is what reached the server:
a binding is never sent twice, a status patch is replayed once on a kept connection the
server dropped, a connection whose exchange failed or was cancelled is never reused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest
import yaml

from asched.api.client import KubeClient
from asched.errors import ApiUnavailable
from asched.tools.sim.apiserver import kubeconfig as sim_kubeconfig
from tests.scripted_http import read_request

TOKEN = "scripted-bearer-token-0123456789"
BOUND = orjson.dumps({"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201})
CREATED = (
    b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
    % (
        len(BOUND),
        BOUND,
    )
)
PATCHED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
#: close the connection without answering (at the end of an answer: close after it)
DROP = b"<drop>"
#: never answer
HANG = b"<hang>"
BIND_PATH = "/api/v1/namespaces/default/pods/web-1/binding"


@dataclass
class Script:
    """What the server answers, in order, and what it saw."""

    answers: list[bytes]
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    #: set when a request arrives
    received: asyncio.Event = field(default_factory=asyncio.Event)
    #: set when a connection ends (the client closed or aborted it)
    ended: asyncio.Event = field(default_factory=asyncio.Event)


@asynccontextmanager
async def serving(
    script: Script, tmp_path: Path, *, max_connections: int = 128
) -> AsyncIterator[KubeClient]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        script.connections += 1
        try:
            while (request := await read_request(reader)) is not None:
                script.requests.append(request)
                script.received.set()
                answer = script.answers.pop(0)
                if answer == DROP:
                    break
                if answer == HANG:
                    await reader.read()  # until the client gives up
                    break
                writer.write(answer.removesuffix(DROP))
                await writer.drain()
                if answer.endswith(DROP):  # a partial answer, then the end
                    break
        finally:
            writer.close()
            script.ended.set()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(sim_kubeconfig.render(f"http://127.0.0.1:{port}", TOKEN)))
    client = await KubeClient.connect(str(path), max_connections=max_connections)
    try:
        assert client.fast_writes
        yield client
    finally:
        await client.close()
        server.close()
        await server.wait_closed()


async def test_the_request_as_sent(tmp_path: Path) -> None:
    script = Script([CREATED])
    async with serving(script, tmp_path) as client:
        answer = await client.bind("default", "web-1", "u-1", "node-a")
    assert (answer.status, answer.body["status"]) == (201, "Success")
    head, _, body = script.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST %s HTTP/1.1" % BIND_PATH.encode()
    assert b"Authorization: Bearer %s" % TOKEN.encode() in lines
    assert b"Content-Type: application/json" in lines
    assert orjson.loads(body)["metadata"] == {"name": "web-1", "namespace": "default", "uid": "u-1"}


async def test_a_binding_on_a_kept_connection_dropped_under_it_is_not_sent_twice(
    tmp_path: Path,
) -> None:
    # the first binding keeps its connection; the server then drops it as the second
    # binding arrives: that binding may have been applied, so it is an error, not a replay
    script = Script([CREATED, DROP, CREATED])
    async with serving(script, tmp_path) as client:
        assert (await client.bind("default", "web-0", "", "node-a")).status == 201
        with pytest.raises(ApiUnavailable) as caught:
            await client.bind("default", "web-1", "", "node-a")
        assert len(script.requests) == 2  # the second binding reached the server once
        assert script.connections == 1
        # the next call opens a new connection and works
        assert (await client.bind("default", "web-2", "", "node-a")).status == 201
    exc = caught.value
    assert (exc.method, exc.path) == ("POST", BIND_PATH)
    assert "ConnectionClosed" in str(exc)
    assert TOKEN not in str(exc)
    assert script.connections == 2


async def test_a_status_patch_on_a_dropped_kept_connection_is_replayed_once(
    tmp_path: Path,
) -> None:
    # a merge of the same status twice is harmless: replayed on a new connection
    script = Script([PATCHED, DROP, PATCHED])
    async with serving(script, tmp_path) as client:
        assert (await client.patch_pod_status("default", "web-1", {"status": {}})).ok
        assert (await client.patch_pod_status("default", "web-1", {"status": {}})).ok
    assert len(script.requests) == 3  # 1 + (dropped + replayed)
    assert script.connections == 2
    assert script.requests[1] == script.requests[2]


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        pytest.param(
            b"HTTP/1.1 201 Created\r\nContent-Length: 100\r\n\r\n{" + DROP,
            "ConnectionClosed",
            id="closed in the middle of the body",
        ),
        pytest.param(b"SMTP ready\r\n\r\n", "HTTPProtocolError", id="not HTTP"),
        pytest.param(
            b"HTTP/1.1 201 Created\r\nContent-Length: 9\r\n\r\n<html/>\r\n",
            "HTTP 201 answer is not JSON",
            id="a 2xx that is not JSON",
        ),
    ],
)
async def test_broken_answers_are_api_unavailable(
    tmp_path: Path, answer: bytes, cause: str
) -> None:
    script = Script([answer, CREATED])
    async with serving(script, tmp_path) as client:
        with pytest.raises(ApiUnavailable) as caught:
            await client.bind("default", "web-1", "", "node-a")
        assert str(caught.value).startswith(f"POST {BIND_PATH} on http://127.0.0.1:")
        assert cause in str(caught.value)
        if cause.startswith("HTTP 201"):
            # the answer was whole: the connection is fine, kept, and the next call works
            assert (await client.bind("default", "web-2", "", "node-a")).status == 201
    assert len(script.requests) == (2 if cause.startswith("HTTP 201") else 1)


async def test_a_non_json_error_answer_is_a_status_without_body(tmp_path: Path) -> None:
    page = b"<html>bad gateway</html>"
    answer = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: %d\r\n\r\n%s" % (len(page), page)
    script = Script([answer])
    async with serving(script, tmp_path) as client:
        response = await client.bind("default", "web-1", "", "node-a")
    assert (response.status, response.body) == (502, None)


@pytest.mark.looptime
async def test_no_answer_within_the_timeout(tmp_path: Path, looptime: float) -> None:
    # looptime: the 30 s request timeout (DEFAULT_TIMEOUT) passes in fake time
    script = Script([HANG, CREATED])
    async with serving(script, tmp_path) as client:
        with pytest.raises(ApiUnavailable) as caught:
            await client.bind("default", "web-1", "", "node-a")
        assert "TimeoutError" in str(caught.value)
        assert looptime == pytest.approx(30, abs=0.1)
        await asyncio.wait_for(script.ended.wait(), 5)  # the connection was aborted
        assert client._fast is not None
        assert client._fast.pool._idle == []
        assert (await client.bind("default", "web-2", "", "node-a")).status == 201
    assert script.connections == 2


async def test_cancellation_aborts_the_connection_in_use(tmp_path: Path) -> None:
    script = Script([HANG, CREATED])
    async with serving(script, tmp_path) as client:
        task = asyncio.ensure_future(client.bind("default", "web-1", "", "node-a"))
        await asyncio.wait_for(script.received.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(script.ended.wait(), 5)  # the server saw it closed
        assert client._fast is not None
        assert client._fast.pool._idle == []
        assert (await client.bind("default", "web-2", "", "node-a")).status == 201
    assert script.connections == 2


@pytest.mark.looptime
async def test_the_deadline_covers_the_wait_for_a_free_connection(
    tmp_path: Path, looptime: float
) -> None:
    # one connection allowed: the first binding holds it unanswered, the second waits for
    # it; both fail when their 30 s pass, and the second never reached the server
    script = Script([HANG, CREATED])
    async with serving(script, tmp_path, max_connections=1) as client:
        first = asyncio.ensure_future(client.bind("default", "web-1", "", "node-a"))
        await asyncio.wait_for(script.received.wait(), 5)
        second = asyncio.ensure_future(client.bind("default", "web-2", "", "node-a"))
        results = await asyncio.gather(first, second, return_exceptions=True)
        assert looptime == pytest.approx(30, abs=0.1)
        assert [type(result) for result in results] == [ApiUnavailable, ApiUnavailable]
        assert all("TimeoutError" in str(result) for result in results)
        assert len(script.requests) == 1
        # the slot is free again
        assert (await client.bind("default", "web-3", "", "node-a")).status == 201
