"""Transport failures leave KubeClient as asched errors (the seam), against real loopback servers.

Each row starts a real server on 127.0.0.1 that fails in one way (or none at all, for the
refused connection), points a kubeconfig with a bearer token at it, and checks that the
call raises :class:`~asched.errors.ApiUnavailable` naming the method, the path and the
host, that the retry rule accepts it, and that the token is nowhere in the text.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from aiohttp import web

from asched.api.client import KubeClient
from asched.api.watch import Reflector, Relisted
from asched.cluster.decode import decode_pod
from asched.errors import RETRYABLE, ApiUnavailable
from asched.scheduler.handle import ApiHandle
from asched.tools.sim.apiserver import kubeconfig as sim_kubeconfig
from asched.tools.sim.server import SimConfig, SimServer

TOKEN = "s3cret-bearer-token-0123456789"
PODS = "/api/v1/pods"
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> None:
    """Read one request's head (the clients here send no body on GET)."""
    await reader.readuntil(b"\r\n\r\n")


async def _close_mid_response(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # promises 100 bytes, sends 10, hangs up
    await _read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    writer.write(b'Content-Length: 100\r\n\r\n{"items": ')
    await writer.drain()
    writer.close()


async def _never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await _read_request(reader)
    await asyncio.Event().wait()


async def _watch_then_cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # a chunked watch stream: one whole event, then the connection drops mid-stream
    # (no terminating zero-length chunk), as when an API server restarts
    await _read_request(reader)
    event = b'{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"7"}}}\n'
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.close()


async def _watch_not_json(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await _read_request(reader)
    body = b'{"type":"ADDED","object":{}}\n<html>proxy error</html>\n'
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    writer.close()


def _kubeconfig(tmp_path: Path, url: str, ca_pem: bytes | None = None) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(sim_kubeconfig.render(url, TOKEN, ca_pem)))
    return str(path)


@asynccontextmanager
async def _raw_server(handler: Handler) -> AsyncIterator[str]:
    """A TCP server on a free loopback port running ``handler`` per connection."""
    tasks: set[asyncio.Task[None]] = set()
    writers: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        with suppress(asyncio.IncompleteReadError, ConnectionError):
            await handler(reader, writer)

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for writer in writers:
            writer.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


@asynccontextmanager
async def _closed_port() -> AsyncIterator[str]:
    """A loopback port nothing listens on: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def _html_server() -> AsyncIterator[str]:
    """An aiohttp server answering 200 with an HTML page (a captive proxy, say)."""

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>hello</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get(PODS, page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def _tls_sim_without_ca(tmp_path: Path) -> AsyncIterator[str]:
    """The simulator serving HTTPS with its own CA, which the kubeconfig does not carry."""
    async with SimServer(SimConfig(tls=True, token=TOKEN)) as server:
        yield server.url


Call = Callable[[KubeClient], Awaitable[Any]]


async def _get_json(client: KubeClient) -> Any:
    return await client.get_json(PODS)


async def _request(client: KubeClient) -> Any:
    return await client.request("GET", PODS, request_timeout=0.5)


async def _watch(client: KubeClient) -> list[dict[str, Any]]:
    return [event async for event in client.watch(PODS, resource_version="1")]


def _server(kind: str, tmp_path: Path) -> Any:
    return {
        "refused": _closed_port,
        "closed mid-response": lambda: _raw_server(_close_mid_response),
        "not json": _html_server,
        "never answers": lambda: _raw_server(_never_answer),
        "tls without ca": lambda: _tls_sim_without_ca(tmp_path),
    }[kind]()


@pytest.mark.parametrize(
    ("kind", "call", "cause"),
    [
        pytest.param("refused", _get_json, "Cannot connect", id="connection-refused"),
        pytest.param("closed mid-response", _get_json, "Payload", id="closed-mid-response"),
        pytest.param("not json", _get_json, "HTTP 200 answer is not JSON", id="200-not-json"),
        pytest.param("never answers", _request, "TimeoutError", id="timeout"),
        pytest.param("tls without ca", _get_json, "certificate verify failed", id="tls-unverified"),
        pytest.param("refused", _watch, "Cannot connect", id="watch-refused"),
    ],
)
async def test_transport_failure_maps_to_api_unavailable(
    tmp_path: Path, kind: str, call: Call, cause: str
) -> None:
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(_server(kind, tmp_path))
        client = await KubeClient.connect(_kubeconfig(tmp_path, url))
        stack.push_async_callback(client.close)
        with pytest.raises(ApiUnavailable) as caught:
            await call(client)
    exc = caught.value
    assert (exc.method, exc.path, exc.host) == ("GET", PODS, url)
    assert str(exc).startswith(f"GET {PODS} on {url}: ")
    assert cause in str(exc)
    assert "\n" not in str(exc)
    assert TOKEN not in str(exc)
    assert (exc.status, exc.reason) == (0, "Unavailable")
    assert isinstance(exc, RETRYABLE)


@pytest.mark.parametrize(
    ("handler", "delivered", "cause"),
    [
        pytest.param(_watch_then_cut, ["a"], "watch: ClientPayloadError", id="connection-cut"),
        pytest.param(_watch_not_json, [None], "watch event is not JSON", id="line-not-json"),
    ],
)
async def test_watch_interrupted_midway_raises_api_unavailable(
    tmp_path: Path, handler: Handler, delivered: list[str | None], cause: str
) -> None:
    names: list[str | None] = []
    async with _raw_server(handler) as url:
        client = await KubeClient.connect(_kubeconfig(tmp_path, url))
        try:
            with pytest.raises(ApiUnavailable) as caught:
                await _names_until_failure(client, names)
        finally:
            await client.close()
    assert names == delivered  # the events before the failure were delivered
    assert str(caught.value).startswith(f"GET {PODS} on {url}: ")
    assert cause in str(caught.value)
    assert TOKEN not in str(caught.value)


async def _names_until_failure(client: KubeClient, names: list[str | None]) -> None:
    """Append each watched object's name to ``names`` until the stream ends or fails."""
    async for event in client.watch(PODS, resource_version="1"):
        # one at a time, not extend(): the names seen before the failure must be kept
        names.append(event["object"].get("metadata", {}).get("name"))  # noqa: PERF401


async def test_cancellation_is_never_mapped(tmp_path: Path) -> None:
    async with _raw_server(_never_answer) as url:
        client = await KubeClient.connect(_kubeconfig(tmp_path, url))
        try:
            task = asyncio.ensure_future(client.get_json(PODS))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            await client.close()


async def test_binding_over_a_dead_connection_is_a_status_error(tmp_path: Path) -> None:
    # DefaultBinder's handle turns the mapped error into Status.error, like a 5xx
    pod = decode_pod(
        {
            "metadata": {"name": "web-1", "namespace": "default", "uid": "u1"},
            "spec": {"containers": []},
        }
    )
    async with _closed_port() as url:
        client = await KubeClient.connect(_kubeconfig(tmp_path, url))
        try:
            status = await ApiHandle(client).bind(pod, "node-1")
        finally:
            await client.close()
    assert not status.ok
    assert "POST /api/v1/namespaces/default/pods/web-1/binding" in status.message
    assert TOKEN not in status.message


class _NoJitter(random.Random):
    """``random()`` is always 0: the reflector waits exactly half its backoff."""

    def random(self) -> float:
        return 0.0


async def test_reflector_rewatches_from_last_version_after_a_cut(tmp_path: Path) -> None:
    # LIST at resourceVersion 5, a watch that delivers rv 7 and is cut mid-stream, then a
    # second watch, which must resume from 7 (no relist: the server is at 7, as the probe's
    # one-item LIST says) after one logged, counted failure
    watches: list[str] = []
    lists: list[str] = []
    second_watch = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        target = head.split(" ", 2)[1]
        if "watch=true" not in target:
            lists.append(parse_qs(urlsplit(target).query)["limit"][0])
            version = b"5" if not watches else b"7"
            body = b'{"kind":"PodList","metadata":{"resourceVersion":"%s"},"items":[]}' % version
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            writer.write(b"Connection: close\r\n")  # one request per connection here
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            writer.close()
            return
        watches.append(parse_qs(urlsplit(target).query)["resourceVersion"][0])
        if len(watches) == 1:
            await _watch_then_cut(_replayed(head), writer)
        else:
            second_watch.set()
            await asyncio.Event().wait()

    async with _raw_server(handler) as url:
        client = await KubeClient.connect(_kubeconfig(tmp_path, url))
        events: list[object] = []
        reflector = Reflector(client, "pods", PODS, events.append, rng=_NoJitter())
        task = asyncio.create_task(reflector.run())
        try:
            await asyncio.wait_for(second_watch.wait(), timeout=30)
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            await client.close()
    assert watches == ["5", "7"]
    assert lists == ["500", "1"]  # the list, then the probe before the second watch
    assert (reflector.relists, reflector.reconnects, reflector.rewinds) == (1, 1, 0)
    assert reflector.last_error is not None
    assert reflector.last_error.startswith(f"watch pods: GET {PODS} on {url}: watch: ")
    assert TOKEN not in reflector.last_error


@pytest.mark.parametrize(
    ("after_cut", "relisted"),
    [
        # the state was restored from an older backup, or a fresh server took the address:
        # a watch from 7 would wait for versions that come only after 7 more writes
        pytest.param("3", True, id="the server's version went back: relist"),
        pytest.param("7", False, id="the same version: resume"),
        pytest.param("9", False, id="a later version: resume"),
        pytest.param("x9", False, id="not a number: never judged"),
    ],
)
async def test_reflector_relists_when_the_servers_version_went_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, after_cut: str, relisted: bool
) -> None:
    watches: list[str] = []
    second_watch = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        target = head.split(" ", 2)[1]
        if "watch=true" not in target:
            version = ("5" if not watches else after_cut).encode()
            body = b'{"kind":"PodList","metadata":{"resourceVersion":"%s"},"items":[]}' % version
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            writer.write(b"Connection: close\r\n")
            writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            writer.close()
            return
        watches.append(parse_qs(urlsplit(target).query)["resourceVersion"][0])
        if len(watches) == 1:
            await _watch_then_cut(_replayed(head), writer)  # delivers version 7, then cuts
        else:
            second_watch.set()
            await asyncio.Event().wait()

    caplog.set_level(logging.WARNING, logger="asched.api.watch")
    async with _raw_server(handler) as url:
        client = await KubeClient.connect(_kubeconfig(tmp_path, url))
        events: list[object] = []
        reflector = Reflector(client, "pods", PODS, events.append, rng=_NoJitter())
        task = asyncio.create_task(reflector.run())
        try:
            await asyncio.wait_for(second_watch.wait(), timeout=30)
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            await client.close()
    relists = [e for e in events if isinstance(e, Relisted)]
    if relisted:
        assert watches == ["5", "3"]  # the second watch runs from the relist's version
        assert (reflector.relists, reflector.rewinds, len(relists)) == (2, 1, 2)
        warnings = [r.getMessage() for r in caplog.records if r.name == "asched.api.watch"]
        assert warnings[-1] == (
            "the resourceVersion of pods went back from 7 to 3 (the API server's state was"
            " restored or replaced): relisting"
        )
    else:
        assert watches == ["5", "7"]
        assert (reflector.relists, reflector.rewinds, len(relists)) == (1, 0, 1)


def _replayed(head: str) -> asyncio.StreamReader:
    """A reader that yields ``head`` again (the handler above has consumed it already)."""
    reader = asyncio.StreamReader()
    reader.feed_data(head.encode())
    reader.feed_eof()
    return reader


async def test_a_cause_that_quotes_the_token_is_redacted(tmp_path: Path) -> None:
    # aiohttp's texts carry no headers today; the seam still blanks the token if one does
    client = await KubeClient.connect(_kubeconfig(tmp_path, "http://127.0.0.1:1"))
    try:
        exc = client._unavailable("GET", PODS, OSError(f"echoed Authorization: Bearer {TOKEN}"))
    finally:
        await client.close()
    assert TOKEN not in str(exc)
    assert str(exc) == (
        f"GET {PODS} on http://127.0.0.1:1: OSError: echoed Authorization: Bearer <redacted>"
    )
