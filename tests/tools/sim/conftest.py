"""Fixtures for the simulator's own tests: an in-process server and a small HTTP helper.

The server runs on the test's event loop on a free port (a real socket: the tests speak
HTTP like any client). Simulated durations are scaled by ``TIME_SCALE`` so a 30 s grace
period lasts 30 ms: no test sleeps for real seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from asched.tools.sim.server import SimConfig, SimServer

TIME_SCALE = 0.001
TOKEN = "test-token"


@dataclass
class Reply:
    """An HTTP answer: status and decoded JSON body (or text)."""

    status: int
    body: Any

    @property
    def reason(self) -> str | None:
        return self.body.get("reason") if isinstance(self.body, dict) else None

    @property
    def message(self) -> str | None:
        return self.body.get("message") if isinstance(self.body, dict) else None


class Api:
    """A thin JSON client for one simulated server."""

    def __init__(self, server: SimServer, session: aiohttp.ClientSession) -> None:
        self.server = server
        self.session = session

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> Reply:
        data = raw if raw is not None else (orjson.dumps(body) if body is not None else None)
        sent = {"Content-Type": content_type} if data is not None else {}
        sent.update(headers or {})
        async with self.session.request(method, path, data=data, headers=sent) as response:
            payload = await response.read()
        try:
            decoded = orjson.loads(payload)
        except orjson.JSONDecodeError:
            decoded = payload.decode(errors="replace")
        return Reply(response.status, decoded)

    async def get(self, path: str) -> Reply:
        return await self.call("GET", path)

    async def post(self, path: str, body: Any) -> Reply:
        return await self.call("POST", path, body)

    async def patch(self, path: str, body: Any, kind: str = "merge") -> Reply:
        return await self.call("PATCH", path, body, content_type=f"application/{kind}-patch+json")

    async def delete(self, path: str, body: Any = None) -> Reply:
        return await self.call("DELETE", path, body)

    async def watch(
        self,
        path: str,
        *,
        until: Callable[[list[dict[str, Any]]], bool] | None = None,
        deadline: float = 5.0,
    ) -> list[dict[str, Any]]:
        """Read watch events until ``until`` holds or the server ends the stream."""
        events: list[dict[str, Any]] = []
        async with asyncio.timeout(deadline), self.session.get(path) as response:
            assert response.status == 200, await response.text()
            async for line in response.content:
                events.append(orjson.loads(line))
                if until is not None and until(events):
                    break
        return events


def pod(name: str, *, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A minimal valid pod."""
    containers = spec.pop("containers", [{"name": "c", "image": "registry.k8s.io/pause:3.9"}])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"containers": containers, **spec},
    }


def binding(name: str, node: str) -> dict[str, Any]:
    """A Binding of pod ``name`` to ``node``."""
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


@pytest.fixture
def sim_config() -> SimConfig:
    """Override in a test module to change the server's configuration."""
    return SimConfig(nodes=3, zones=2, token=TOKEN, time_scale=TIME_SCALE, seed=7)


@pytest.fixture
async def api(sim_config: SimConfig) -> AsyncIterator[Api]:
    """A running in-process simulator and a client with its token."""
    async with SimServer(sim_config) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with aiohttp.ClientSession(base_url=server.url, headers=headers) as session:
            yield Api(server, session)
