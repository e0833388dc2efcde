"""The lean HTTP/1.1 front (asched.tools.sim.apiserver.front): hot requests answered inline, as aiohttp would.

Raw HTTP over real sockets: the front's own answers carry no ``Server`` header (aiohttp's
do), which tells who answered. The same requests go to a server with the front and one
without; status and body must match.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ssl
from dataclasses import dataclass, replace
from typing import Any

import orjson
import pytest
from aiohttp import web

from asched.tools.sim import command
from asched.tools.sim.apiserver import front
from asched.tools.sim.apiserver.handlers import BOUND, MAX_BODY_BYTES, PlainAnswer
from asched.tools.sim.server import SimConfig, SimServer
from tests.tools.sim.conftest import TIME_SCALE, TOKEN, binding, pod

CONFIG = SimConfig(nodes=2, token=TOKEN, time_scale=TIME_SCALE, seed=7)
AUTH = f"Authorization: Bearer {TOKEN}\r\n"


@dataclass
class Answer:
    """One HTTP answer read off the wire."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def by_front(self) -> bool:
        """Answered by the lean front (aiohttp always sends ``Server``)."""
        return "server" not in self.headers

    def json(self) -> Any:
        return orjson.loads(self.body)


def request(
    method: str,
    target: str,
    body: Any = None,
    *,
    auth: bool = True,
    raw: bytes | None = None,
    extra: str = "",
) -> bytes:
    """One HTTP/1.1 request's bytes (a JSON body unless ``raw``)."""
    data = raw if raw is not None else (orjson.dumps(body) if body is not None else b"")
    head = f"{method} {target} HTTP/1.1\r\nHost: sim\r\n{AUTH if auth else ''}{extra}"
    if data or method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return head.encode() + b"\r\n" + data


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    """One answer: a Content-Length or chunked body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            body += chunk[:-2]
        return Answer(status, headers, body)
    return Answer(status, headers, await reader.readexactly(int(headers["content-length"])))


class Client:
    """One raw connection to a simulator."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, server: SimServer, context: ssl.SSLContext | None = None) -> Client:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=context)
        return cls(reader, writer)

    async def send(self, *requests: bytes) -> list[Answer]:
        """Write ``requests`` in one write; read as many answers."""
        self.writer.write(b"".join(requests))
        await self.writer.drain()
        return [await read_answer(self.reader) for _ in requests]

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            await self.writer.wait_closed()


async def exchange(server: SimServer, *requests: bytes) -> list[Answer]:
    """Send ``requests`` one after the other on one new connection."""
    client = await Client.connect(server)
    try:
        return [(await client.send(one))[0] for one in requests]
    finally:
        await client.close()


BIND_A = "/api/v1/namespaces/default/pods/a/binding"
PODS = "/api/v1/namespaces/default/pods"
SETUP = (request("POST", PODS, pod("a")), request("POST", PODS, pod("b")))


def _comparable(answer: Answer) -> tuple[int, Any]:
    """Status and body, without what differs between two servers (uid, timestamps)."""
    try:
        body = answer.json()
    except orjson.JSONDecodeError:
        return answer.status, answer.body
    if isinstance(body, dict) and body.get("kind") != "Status":
        metadata = body["metadata"]
        metadata.pop("uid")
        metadata.pop("creationTimestamp")
    return answer.status, body


@pytest.mark.parametrize(
    ("sent", "status", "hot"),
    [
        pytest.param(request("POST", PODS, pod("c")), 201, True, id="create"),
        pytest.param(request("POST", BIND_A, binding("a", "hollow-0")), 201, True, id="bind"),
        pytest.param(
            request("POST", PODS, pod("c"), auth=False), 401, True, id="create-without-token"
        ),
        pytest.param(
            request("POST", BIND_A, binding("a", "hollow-0"), auth=False),
            401,
            True,
            id="bind-without-token",
        ),
        pytest.param(
            request("POST", PODS + "/ghost/binding", binding("ghost", "hollow-0")),
            404,
            True,
            id="bind-unknown-pod",
        ),
        pytest.param(
            request("POST", PODS + "/b/binding", binding("b", "hollow-1")),
            409,
            True,
            id="bind-bound-pod",
        ),
        pytest.param(request("POST", PODS, raw=b'{"kind": '), 400, True, id="create-bad-json"),
        pytest.param(request("POST", BIND_A, raw=b"{nope"), 400, True, id="bind-bad-json"),
        pytest.param(
            request("POST", BIND_A, binding("z", "hollow-0")), 400, True, id="bind-name-mismatch"
        ),
        pytest.param(request("POST", PODS, pod("b")), 409, True, id="create-existing"),
        pytest.param(
            request("POST", "/api/v1/namespaces/default/nopes", {}),
            404,
            False,
            id="create-no-such-resource",
        ),
        pytest.param(
            request("POST", BIND_A + "?dryRun=All", binding("a", "hollow-0")),
            201,
            False,
            id="bind-dry-run-delegated",
        ),
        pytest.param(
            request("POST", PODS + "?fieldManager=x", pod("c")),
            201,
            False,
            id="create-query-delegated",
        ),
        pytest.param(
            request("POST", "/api/v1/namespaces", {"metadata": {"name": "n"}}),
            201,
            True,
            id="create-cluster-scoped",
        ),
        pytest.param(
            request("PATCH", PODS + "/a", {"metadata": {"labels": {"x": "y"}}}).replace(
                b"application/json", b"application/merge-patch+json"
            ),
            200,
            True,
            id="patch-merge",
        ),
        pytest.param(
            request("PATCH", PODS + "/a/status", {"status": {"phase": "Running"}}).replace(
                b"application/json", b"application/strategic-merge-patch+json"
            ),
            200,
            True,
            id="patch-status-strategic",
        ),
        pytest.param(
            request("PATCH", PODS + "/ghost", {"metadata": {"labels": {"x": "y"}}}).replace(
                b"application/json", b"application/merge-patch+json"
            ),
            404,
            True,
            id="patch-unknown-pod",
        ),
        pytest.param(
            request("PATCH", PODS + "/a", {"metadata": {}}), 415, True, id="patch-json-is-415"
        ),
        pytest.param(
            request("PATCH", PODS + "/a?dryRun=All", {"metadata": {}}).replace(
                b"application/json", b"application/merge-patch+json"
            ),
            200,
            False,
            id="patch-dry-run-delegated",
        ),
        pytest.param(
            request("PATCH", BIND_A, {}).replace(
                b"application/json", b"application/merge-patch+json"
            ),
            405,
            False,
            id="patch-binding-delegated",
        ),
        pytest.param(request("GET", PODS + "/a"), 200, False, id="get-delegated"),
        pytest.param(
            request("POST", PODS, pod("c")).replace(b"HTTP/1.1", b"HTTP/1.0", 1),
            201,
            False,
            id="http-1.0-delegated",
        ),
        pytest.param(
            f"POST {PODS} HTTP/1.1\r\nHost: sim\r\n{AUTH}Content-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(orjson.dumps(pod("c"))), orjson.dumps(pod("c"))),
            201,
            False,
            id="chunked-delegated",
        ),
        pytest.param(
            request("POST", PODS, pod("c")).replace(b"POST ", b"POST /junk ", 1),
            400,
            False,
            id="malformed-request-line-delegated",
        ),
        pytest.param(
            request("POST", PODS, pod("c")).replace(b"Host: sim\r\n", b""),
            400,  # HTTP/1.1 requires Host (Go's server answers 400 too)
            False,
            id="no-host-delegated",
        ),
    ],
)
async def test_front_answers_as_aiohttp_does(sent: bytes, status: int, hot: bool) -> None:
    answers: list[list[Answer]] = []
    for lean in (True, False):
        async with SimServer(replace(CONFIG, lean_front=lean)) as server:
            setup = await exchange(
                server, *SETUP, request("POST", PODS + "/b/binding", binding("b", "hollow-0"))
            )
            assert [answer.status for answer in setup] == [201, 201, 201]
            answers.append(await exchange(server, sent))
    (with_front,), (without,) = answers
    assert with_front.status == status
    assert _comparable(with_front) == _comparable(without)
    assert with_front.headers["content-type"].startswith(without.headers["content-type"])
    assert with_front.by_front == hot
    assert not without.by_front


async def test_pipelined_requests_are_answered_in_order_then_aiohttp_takes_over() -> None:
    async with SimServer(CONFIG) as server:
        client = await Client.connect(server)
        answers = await client.send(
            request("POST", PODS, pod("a")),
            request("POST", BIND_A, binding("a", "hollow-1")),
            request("POST", PODS, pod("a")),  # 409: exists
            request("GET", PODS + "/a"),  # aiohttp's from here on
            request("POST", PODS, pod("b")),
        )
        await client.close()
        assert [answer.status for answer in answers] == [201, 201, 409, 200, 201]
        assert [answer.by_front for answer in answers] == [True, True, True, False, False]
        assert answers[1].body == BOUND
        assert answers[3].json()["spec"]["nodeName"] == "hollow-1"
        # 5 requests, 1 of them a binding (the stats count both paths alike)
        assert (server.stats.requests, server.stats.bindings) == (5, 1)


async def test_a_request_split_across_reads_is_answered_once_complete() -> None:
    async with SimServer(CONFIG) as server:
        client = await Client.connect(server)
        whole = request("POST", PODS, pod("a")) + request("POST", BIND_A, binding("a", "hollow-0"))
        for cut in (10, 70, len(whole) - 5):  # in the request line, the head, the second body
            client.writer.write(whole[:cut])
            await client.writer.drain()
            await asyncio.sleep(0.01)
            whole = whole[cut:]
        client.writer.write(whole)
        answers = [await read_answer(client.reader) for _ in range(2)]
        await client.close()
        assert [(answer.status, answer.by_front) for answer in answers] == [(201, True)] * 2


async def test_connection_close_is_honoured() -> None:
    async with SimServer(CONFIG) as server:
        client = await Client.connect(server)
        (answer,) = await client.send(
            request("POST", PODS, pod("a"), extra="Connection: close\r\n")
        )
        assert (answer.status, answer.headers.get("connection")) == (201, "close")
        assert await client.reader.read() == b""  # the server closed it
        await client.close()


async def test_latency_fault_and_large_bodies_go_to_aiohttp() -> None:
    async with SimServer(replace(CONFIG, latency_ms=1.0)) as server:
        (answer,) = await exchange(server, request("POST", PODS, pod("a")))
        assert (answer.status, answer.by_front) == (201, False)
    async with SimServer(CONFIG) as server:
        # one byte over the limit: aiohttp reads it and answers 413 as before
        huge = request("POST", PODS, raw=b" " * (MAX_BODY_BYTES + 1))
        (answer,) = await exchange(server, huge)
        assert (answer.status, answer.by_front) == (413, False)
        assert answer.json()["reason"] == "RequestEntityTooLarge"


async def _watch_after_a_hot_request(server: SimServer, context: ssl.SSLContext | None) -> None:
    client = await Client.connect(server, context)
    (created,) = await client.send(request("POST", PODS, pod("a")))
    assert (created.status, created.by_front) == (201, True)
    client.writer.write(
        request(
            "GET",
            PODS + "?watch=1&resourceVersion=" + created.json()["metadata"]["resourceVersion"],
        )
    )
    head = await client.reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    other = await Client.connect(server, context)
    (second,) = await other.send(request("POST", PODS, pod("b")))
    await other.close()
    assert (second.status, second.by_front) == (201, True)
    async with asyncio.timeout(5):
        seen = b""
        while b'"name":"b"' not in seen:
            seen += await client.reader.read(65536)
    assert b'"type":"ADDED"' in seen
    await client.close()


async def test_a_connection_handed_to_aiohttp_serves_a_watch() -> None:
    async with SimServer(CONFIG) as server:
        await _watch_after_a_hot_request(server, None)


async def test_tls_connections_are_answered_by_the_front_and_handed_over() -> None:
    async with SimServer(replace(CONFIG, tls=True)) as server:
        assert server.ca_pem is not None
        context = ssl.create_default_context(cadata=server.ca_pem.decode())
        await _watch_after_a_hot_request(server, context)


async def test_restart_and_stop_cut_lean_connections() -> None:
    async with SimServer(CONFIG) as server:
        client = await Client.connect(server)
        (answer,) = await client.send(request("POST", PODS, pod("a")))
        assert answer.by_front
        await server.restart()
        async with asyncio.timeout(5):
            assert await client.reader.read() == b""  # cut
        await client.close()
        client = await Client.connect(server)
        (answer,) = await client.send(request("POST", PODS, pod("b")))
        assert (answer.status, answer.by_front) == (201, True)
    async with asyncio.timeout(5):
        assert await client.reader.read() == b""  # stop cut it too
    await client.close()


def test_render_sends_length_type_and_close() -> None:
    answer = front.render(PlainAnswer(404, "application/json", b"{}"), close=True)
    assert answer == (
        b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
        b"Cache-Control: no-cache, private\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    )


@pytest.mark.parametrize(
    ("flags", "lean"),
    [pytest.param((), True, id="default-on"), pytest.param(("--no-lean-front",), False, id="off")],
)
def test_the_sim_command_switches_the_front(flags: tuple[str, ...], lean: bool) -> None:
    parser = argparse.ArgumentParser()
    command.configure(parser)
    assert command.config_from(parser.parse_args(list(flags))).lean_front is lean


async def test_the_load_generators_sequence_stays_on_the_front() -> None:
    # what the benchmark's create pool sends on one connection: a node, its status, a pod
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    status = {"status": {"allocatable": {"cpu": "4", "pods": "110"}}}
    async with SimServer(CONFIG) as server:
        answers = await exchange(
            server,
            request("POST", "/api/v1/nodes", node),
            request("PATCH", "/api/v1/nodes/n1/status", status).replace(
                b"application/json", b"application/merge-patch+json"
            ),
            request("POST", PODS, pod("a")),
        )
        assert [(answer.status, answer.by_front) for answer in answers] == [
            (201, True),
            (200, True),
            (201, True),
        ]
        assert answers[1].json()["status"]["allocatable"]["cpu"] == "4"


class _Transport(asyncio.Transport):
    """A transport that records what the connection does to it (no socket)."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


@pytest.mark.looptime
async def test_an_idle_lean_connection_is_closed_after_the_keepalive(looptime: float) -> None:
    async with SimServer(CONFIG) as server:
        lean = front.Front(server.api, web.Server(server.api), keepalive=75.0)
        connection = lean()
        transport = _Transport()
        connection.connection_made(transport)
        await asyncio.sleep(60)
        connection.data_received(request("POST", PODS, pod("a")))  # active at 60 s
        assert transport.written.startswith(b"HTTP/1.1 201 Created\r\n")
        await asyncio.sleep(74)  # 134 s: idle 74 s, kept
        assert not transport.closed
        await asyncio.sleep(2)  # 136 s: idle 76 s, closed (75 s after the request)
        assert transport.closed
        connection.connection_lost(None)
        assert connection not in lean.connections
