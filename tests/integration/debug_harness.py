"""A scheduler with its debug listener on, against a test's cluster (both backends).

As :func:`scheduler_harness.running_scheduler`, with ``--debug-addr 127.0.0.1:0``: the
App records its decisions and serves the debug pages on a free loopback port
(``running.app.debug_listening.url``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from scheduler_harness import config_for, until

from asched.api.client import KubeClient
from asched.scheduler.app import App
from asched.scheduler.options import Options
from asched.serving.health import HealthState
from tests.configs import load_config


@dataclass
class Debugged:
    """A running App with debug pages, and an HTTP session for them."""

    app: App
    base: str
    http: aiohttp.ClientSession
    task: asyncio.Task[None]

    async def json(self, path: str) -> Any:
        async with self.http.get(self.base + path) as response:
            assert response.status == 200, (path, response.status, await response.text())
            return await response.json()


@asynccontextmanager
async def debugged_scheduler(
    cluster: Any, name: str, *, decisions: int = 100
) -> AsyncIterator[Debugged]:
    config = load_config(config_for(cluster, name))
    client = await KubeClient.connect(str(cluster.kubeconfig))
    options = Options(
        seed=7, watch_timeout=30, debug_address="127.0.0.1:0", debug_decisions=decisions
    )
    app = App(config, client, options)
    task = asyncio.create_task(app.run(health=HealthState()))
    http = aiohttp.ClientSession()
    try:
        async with asyncio.timeout(60):
            await app.ready.wait()
        listening = app.debug_listening
        assert listening is not None
        yield Debugged(app, f"http://127.0.0.1:{listening.port}", http, task)
    finally:
        await http.close()
        app.stop()
        try:
            if not task.done():
                async with asyncio.timeout(30):
                    await task
        finally:
            await client.close()


async def pod_decided(debugged: Debugged, key: str, *, within: float = 30) -> dict[str, Any]:
    """The newest decision recorded for ``key``, once there is one."""
    found: dict[str, Any] = {}

    async def decided() -> bool:
        listed = await debugged.json("/debug/api/decisions")
        ids = [d["id"] for d in listed["decisions"] if d["pod"] == key]
        if ids:
            found.update(await debugged.json(f"/debug/api/decision?id={ids[0]}"))
        return bool(ids)

    await until(decided, within=within)
    return found


__all__ = ["Debugged", "debugged_scheduler", "pod_decided", "until"]
