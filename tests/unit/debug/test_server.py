"""The debug listener's rules: read-only, loopback unless protected, addresses parsed strictly.

The HTTP cases run the real aiohttp application on a real socket (aiohttp's test server)
over an empty scheduler's queue: no Kubernetes API is involved in these rules.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from asched.debug import server
from asched.debug.rates import Rates
from asched.debug.recorder import Recorder
from asched.debug.views import Sources
from asched.errors import InputError
from asched.framework.waiting import WaitingPods
from asched.queue.scheduling_queue import SchedulingQueue


class NoBinder:
    in_flight: dict[str, object] = {}  # noqa: RUF012 - read-only here
    consulting = 0


def sources() -> Sources:
    return Sources(
        queue=SchedulingQueue(clock=lambda: 0.0),
        waiting=WaitingPods(),
        binder=NoBinder(),
        recorder=Recorder(5),
        rates=Rates(clock=lambda: 0.0),
        identity="replica-1",
        loop_time=lambda: 0.0,
    )


@pytest.fixture
async def client() -> AsyncIterator[TestClient[web.Request, web.Application]]:
    async with TestClient(TestServer(server.build_app(sources()))) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("method", "path"),
    [
        pytest.param("POST", "/debug/api/queue", id="POST to a JSON document"),
        pytest.param("PUT", "/debug/", id="PUT to the index"),
        pytest.param("DELETE", "/debug/api/decision?id=1", id="DELETE a decision"),
        pytest.param("PATCH", "/debug/now", id="PATCH a page"),
        pytest.param("OPTIONS", "/debug/queue", id="OPTIONS"),
        pytest.param("POST", "/no/such/path", id="POST to a path that does not exist"),
    ],
)
async def test_anything_but_get_and_head_is_405(
    client: TestClient[web.Request, web.Application], method: str, path: str
) -> None:
    response = await client.request(method, path)
    assert response.status == 405
    assert {m.strip() for m in response.headers["Allow"].split(",")} == {"GET", "HEAD"}


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        pytest.param("GET", "/debug/", "text/html", id="the index"),
        pytest.param("HEAD", "/debug/queue", "text/html", id="HEAD of a page"),
        pytest.param("GET", "/debug/api/queue", "application/json", id="the queue's JSON"),
        pytest.param("GET", "/debug/static/debug.js", "text/javascript", id="the script"),
    ],
)
async def test_pages_are_served_with_a_strict_policy(
    client: TestClient[web.Request, web.Application], method: str, path: str, kind: str
) -> None:
    response = await client.request(method, path)
    assert response.status == 200
    assert response.content_type == kind
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy
    assert response.headers["Cache-Control"] == "no-store"


async def test_a_decision_not_kept_is_404_with_the_reason(
    client: TestClient[web.Request, web.Application],
) -> None:
    response = await client.get("/debug/api/decision?id=7")
    assert response.status == 404
    assert "decision #7 is not kept (the last 5 decisions are" in await response.text()
    response = await client.get("/debug/api/decision?id=x")
    assert response.status == 400


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("127.0.0.1:10260", ("127.0.0.1", 10260), id="IPv4"),
        pytest.param("[::1]:8080", ("::1", 8080), id="IPv6 in brackets"),
        pytest.param("localhost:0", ("localhost", 0), id="a name, port 0"),
        pytest.param(":10260", ("", 10260), id="every interface"),
    ],
)
def test_addresses(value: str, expected: tuple[str, int]) -> None:
    assert server.parse_address(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("10260", id="no host"),
        pytest.param("127.0.0.1:http", id="a port name"),
        pytest.param("127.0.0.1:70000", id="port out of range"),
        pytest.param("::1:8080", id="IPv6 without brackets"),
    ],
)
def test_bad_addresses_name_the_flag(value: str) -> None:
    with pytest.raises(InputError, match=r"^--debug-addr "):
        server.parse_address(value)


@pytest.mark.parametrize(
    ("host", "protected", "allowed"),
    [
        pytest.param("127.0.0.1", False, True, id="loopback v4: plain HTTP"),
        pytest.param("127.1.2.3", False, True, id="anywhere in 127/8"),
        pytest.param("::1", False, True, id="loopback v6"),
        pytest.param("localhost", False, True, id="localhost"),
        pytest.param("0.0.0.0", False, False, id="every interface, unprotected: refused"),
        pytest.param("", False, False, id="empty host (every interface): refused"),
        pytest.param("10.0.0.5", False, False, id="a pod IP, unprotected: refused"),
        pytest.param("scheduler.local", False, False, id="a host name: refused"),
        pytest.param("0.0.0.0", True, True, id="every interface with TLS and authorization"),
    ],
)
def test_loopback_or_protected(host: str, protected: bool, allowed: bool) -> None:
    async def authorize(request: web.Request, handler: server.Handler) -> web.StreamResponse:
        return await handler(request)

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH) if protected else None
    middlewares = [authorize] if protected else []
    if allowed:
        server.check_exposure(host, 10260, ssl_context=context, middlewares=middlewares)
    else:
        with pytest.raises(InputError, match="needs TLS and delegated authorization"):
            server.check_exposure(host, 10260, ssl_context=context, middlewares=middlewares)


def test_tls_without_authorization_is_still_refused() -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with pytest.raises(InputError, match=r"^--debug-addr 0\.0\.0\.0:1: a non-loopback"):
        server.check_exposure("0.0.0.0", 1, ssl_context=context, middlewares=())
