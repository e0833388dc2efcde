"""Loopback listeners answer only requests that name a loopback host (DNS rebinding).

A page served from evil.example.com whose name then resolves to 127.0.0.1 can make the
browser send requests to the scheduler's debug pages and ``/metrics``; they carry
``Host: evil.example.com``. The health server and the debug pages are started for real on
127.0.0.1 and asked with each Host header.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import aiohttp
import pytest

from asched.debug import server as debug_server
from asched.serving import health
from asched.serving.listen import MISDIRECTED, loopback_host
from tests.unit.debug.test_server import sources


@pytest.mark.parametrize(
    ("header", "loopback"),
    [
        pytest.param("127.0.0.1:10259", True, id="the address and port"),
        pytest.param("127.0.0.1", True, id="the address alone"),
        pytest.param("127.8.9.10:1", True, id="anywhere in 127.0.0.0/8"),
        pytest.param("localhost:10260", True, id="localhost"),
        pytest.param("LocalHost", True, id="any case"),
        pytest.param("[::1]:10259", True, id="IPv6 loopback"),
        pytest.param("evil.example.com", False, id="another name"),
        pytest.param("evil.example.com:10259", False, id="another name, our port"),
        pytest.param("127.0.0.1.nip.io", False, id="a name that starts like loopback"),
        pytest.param("localhost.evil.example.com", False, id="a name that starts with localhost"),
        pytest.param("10.0.0.1:10259", False, id="another address"),
        pytest.param("localhost:http", False, id="a port that is not a number"),
        pytest.param("[::1]x", False, id="junk after the IPv6 address"),
        pytest.param("", False, id="no host"),
    ],
)
def test_loopback_host(header: str, loopback: bool) -> None:
    assert loopback_host(header) is loopback


def _health() -> AbstractAsyncContextManager[Any]:
    return health.serve(health.HealthState(), "127.0.0.1", 0)


def _debug() -> AbstractAsyncContextManager[Any]:
    return debug_server.serve(sources(), "127.0.0.1", 0)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.mark.parametrize(
    ("serve", "path"),
    [
        pytest.param(_health, "/metrics", id="metrics"),
        pytest.param(_health, "/healthz", id="health"),
        pytest.param(_debug, "api/queue", id="debug pages"),  # its url ends in /debug/
    ],
)
@pytest.mark.parametrize(
    ("host", "status"),
    [
        pytest.param(None, 200, id="the address the client dialled"),
        pytest.param("localhost", 200, id="localhost"),
        pytest.param("evil.example.com", 421, id="a rebound name"),
    ],
)
async def test_a_loopback_listener_refuses_other_host_names(
    http: aiohttp.ClientSession,
    serve: Callable[[], AbstractAsyncContextManager[Any]],
    path: str,
    host: str | None,
    status: int,
) -> None:
    async with serve() as serving:
        headers = {"Host": host} if host is not None else {}
        async with http.get(serving.url + path, headers=headers) as response:
            assert response.status == status
            if status == 421:
                assert await response.text() == MISDIRECTED
