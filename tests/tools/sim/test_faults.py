"""Fault injection and the admin endpoints: errors, latency, cut watches, 410s, restarts."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from asched.tools.sim.server import SimConfig

from .conftest import TIME_SCALE, TOKEN, Api, binding, pod

NS = "/api/v1/namespaces/default"


@pytest.mark.parametrize(
    ("code", "reason"),
    [pytest.param(500, "InternalError", id="500"), pytest.param(409, "Conflict", id="409")],
)
async def test_binding_errors(api: Api, code, reason):
    await api.post(f"{NS}/pods", pod("p"))
    settings = await api.post("/admin/faults", {"bindErrorRate": 1.0, "bindErrorCode": code})
    assert settings.status == 200
    assert settings.body["bindErrorRate"] == 1.0
    failed = await api.post(f"{NS}/pods/p/binding", binding("p", "node-0"))
    assert (failed.status, failed.reason) == (code, reason)
    assert "nodeName" not in (await api.get(f"{NS}/pods/p")).body["spec"]  # not bound
    await api.post("/admin/faults", {"bindErrorRate": 0})
    assert (await api.post(f"{NS}/pods/p/binding", binding("p", "node-0"))).status == 201
    stats = (await api.get("/admin/stats")).body
    assert (stats["bindings"], stats["bind_faults"]) == (2, 1)


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({"bindErrorRate": 2}, id="rate above 1"),
        pytest.param({"bindErrorCode": 418}, id="unsupported code"),
        pytest.param({"latencyMs": -1}, id="negative latency"),
        pytest.param({"nope": 1}, id="unknown setting"),
        pytest.param([1], id="not an object"),
    ],
)
async def test_bad_fault_settings_are_400(api: Api, settings):
    reply = await api.post("/admin/faults", settings)
    assert (reply.status, reply.reason) == (400, "BadRequest")


async def test_latency_is_added_to_every_request(api: Api):
    await api.post("/admin/faults", {"latencyMs": 100})
    loop = asyncio.get_running_loop()
    started = loop.time()
    await api.get("/version")
    assert loop.time() - started >= 0.1


async def test_history_shrink_forces_410(api: Api):
    start = (await api.get(f"{NS}/pods")).body["metadata"]["resourceVersion"]
    for name in ("a", "b", "c"):
        await api.post(f"{NS}/pods", pod(name))
    await api.post("/admin/faults", {"history": 1})
    events = await api.watch(f"{NS}/pods?watch=1&resourceVersion={start}")
    assert [e["type"] for e in events] == ["ERROR"]
    assert events[0]["object"]["code"] == 410


class TestCutWatches:
    @pytest.fixture
    def sim_config(self) -> SimConfig:
        return SimConfig(token=TOKEN, time_scale=TIME_SCALE, watch_cut_after=0.2)

    async def test_watches_are_cut(self, api: Api):
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(
            (
                aiohttp.ClientPayloadError,
                aiohttp.ServerDisconnectedError,
                aiohttp.ClientConnectionError,
            )
        ):
            await api.watch(f"{NS}/pods?watch=1&timeoutSeconds=30")
        assert 0.15 <= loop.time() - started < 5


async def test_restart_keeps_objects_cuts_watches_and_expires_history(api: Api):
    await api.post(f"{NS}/pods", pod("kept"))
    start = (await api.get(f"{NS}/pods")).body["metadata"]["resourceVersion"]
    watch = asyncio.create_task(
        api.watch(f"{NS}/pods?watch=1&resourceVersion={start}&timeoutSeconds=30")
    )
    await api.post(f"{NS}/pods", pod("later"))  # so that ``start`` predates the restart
    await asyncio.sleep(0.05)
    reply = await api.post("/admin/restart", {"downtimeSeconds": 0.1})
    assert reply.status == 202
    with pytest.raises(
        (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientConnectionError)
    ):
        await watch
    await asyncio.sleep(0.3)  # the downtime
    assert (await api.get(f"{NS}/pods/kept")).status == 200
    events = await api.watch(f"{NS}/pods?watch=1&resourceVersion={start}&timeoutSeconds=1")
    assert [e["type"] for e in events] == ["ERROR"]
    stats = (await api.get("/admin/stats")).body
    assert stats["restarts"] == 1
    assert stats["objects"]["pods"] == 2


async def test_stats(api: Api):
    stats = (await api.get("/admin/stats")).body
    assert stats["objects"]["nodes"] == 3
    assert stats["cpuSeconds"] >= 0
    assert stats["resourceVersion"] > 0
    assert stats["faults"] == {
        "watchCutAfterSeconds": None,
        "bindErrorRate": 0.0,
        "bindErrorCode": 500,
        "latencyMs": 0.0,
        "history": None,
        "volumeBindingPaused": False,
        "volumeBindingDelaySeconds": 0.0,
    }
