"""The health server, for real: a free port on 127.0.0.1, hit with an aiohttp client.

Status codes and bodies follow kube-scheduler's endpoints (see asched.serving.health); the leader
watchdog is driven by a fake elector and a fake clock, so its boundary is exact.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from asched import metrics
from asched.serving import health


class FakeElector:
    """Only what the watchdog reads."""

    def __init__(self) -> None:
        self.last_renewed: float | None = None


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def state() -> health.HealthState:
    return health.HealthState()


@pytest.fixture
async def server(state) -> AsyncIterator[health.Serving]:
    async with health.serve(state, "127.0.0.1", 0) as serving:
        yield serving


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def fetch(http, server, path: str) -> tuple[int, str]:
    async with http.get(server.url + path) as response:
        return response.status, await response.text()


async def test_server_binds_a_free_port_and_closes_it(state, http) -> None:
    async with health.serve(state, "127.0.0.1", 0) as serving:
        assert serving.port > 0
        assert await fetch(http, serving, "/healthz") == (200, "ok")
    with pytest.raises(aiohttp.ClientConnectionError):
        await fetch(http, serving, "/healthz")


@pytest.mark.parametrize("path", ["/healthz", "/livez"])
async def test_liveness_is_ok_without_checks(server, http, path) -> None:
    assert await fetch(http, server, path) == (200, "ok")


async def test_failing_check_is_500_with_its_reason(state, server, http) -> None:
    state.add_check("ping", lambda: None)
    state.add_check("informers", lambda: "pod watch stalled")

    status, body = await fetch(http, server, "/healthz")
    assert status == 500
    assert body == "[-]informers failed: pod watch stalled\nhealthz check failed\n"
    assert await fetch(http, server, "/livez") == (
        500,
        "[-]informers failed: pod watch stalled\nlivez check failed\n",
    )


def test_check_names_are_unique(state) -> None:
    state.add_check("leaderElection", lambda: None)
    with pytest.raises(ValueError, match="already registered"):
        state.add_check("leaderElection", lambda: None)


async def test_readyz_needs_sync_and_live_informers(state, server, http) -> None:
    assert await fetch(http, server, "/readyz") == (
        503,
        "[-]informers not synced yet\n[-]API server not contacted yet\nreadyz check failed\n",
    )
    state.mark_ready()
    assert await fetch(http, server, "/readyz") == (
        503,
        "[-]API server not contacted yet\nreadyz check failed\n",
    )
    state.set_informers([])
    assert await fetch(http, server, "/readyz") == (200, "ok")

    state.set_informers(["pods (watch pods: 503 Service Unavailable)", "nodes (not listed yet)"])
    assert await fetch(http, server, "/readyz") == (
        503,
        "[-]informers not live: pods (watch pods: 503 Service Unavailable); nodes (not listed"
        " yet)\nreadyz check failed\n",
    )
    # Readiness problems are not liveness problems.
    assert await fetch(http, server, "/healthz") == (200, "ok")


async def test_leader_watchdog_fails_after_lease_plus_20_seconds(state, server, http) -> None:
    elector, clock = FakeElector(), FakeClock()
    state.add_check("leaderElection", health.leader_watchdog(elector, 15.0, clock=clock))

    # Standby: never concerned.
    assert await fetch(http, server, "/healthz") == (200, "ok")

    # Leading, last renew at 1000: healthy up to 1000 + 15 + 20 = 1035 inclusive.
    elector.last_renewed = 1000.0
    clock.now = 1035.0
    assert await fetch(http, server, "/healthz") == (200, "ok")
    clock.now = 1035.5
    status, body = await fetch(http, server, "/livez")
    assert status == 500
    assert body == (
        "[-]leaderElection failed: leader lease not renewed for 35.5s (limit 35.0s)\n"
        "livez check failed\n"
    )

    # Leadership given up (hold() raised or release()): healthy again.
    elector.last_renewed = None
    assert await fetch(http, server, "/healthz") == (200, "ok")


async def test_metrics_endpoint_serves_the_asched_registry(server, http) -> None:
    def attempts(body: str) -> float:
        for family in text_string_to_metric_families(body):
            for sample in family.samples:
                if sample.name == "asched_schedule_attempts_total" and sample.labels == {
                    "result": "scheduled",
                    "profile": "health-test",
                }:
                    return sample.value
        return 0.0

    async with http.get(server.url + "/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        before = attempts(await response.text())

    metrics.observe_attempt("scheduled", "health-test", 0.003)
    metrics.set_leader(leading=True)

    status, body = await fetch(http, server, "/metrics")
    assert status == 200
    assert attempts(body) == before + 1
    assert "asched_leader 1.0" in body
    assert "asched_pending_pods" in body
    # Only our registry: none of prometheus-client's default process/python collectors.
    assert "python_gc_objects_collected_total" not in body
    metrics.set_leader(leading=False)


@pytest.mark.parametrize(
    ("serving", "url"),
    [
        pytest.param(health.Serving("127.0.0.1", 10259), "http://127.0.0.1:10259", id="http"),
        pytest.param(
            health.Serving("0.0.0.0", 10259, "https"), "https://0.0.0.0:10259", id="https"
        ),
        pytest.param(health.Serving("::1", 8443, "https"), "https://[::1]:8443", id="IPv6"),
    ],
)
def test_serving_url(serving: health.Serving, url: str) -> None:
    assert serving.url == url
