"""Before it is ready, the App says why (every 30 s) and every wait gives way to a stop.

Fake time (looptime): the intervals below are exact. The App is built against a kubeconfig
whose server is a closed port; nothing here opens a connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from asched.api.client import KubeClient
from asched.scheduler.app import App
from asched.scheduler.leader import LeaderElector
from asched.scheduler.options import Options
from asched.scheduler.readiness import unless_set
from tests.configs import default_config

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    client = await KubeClient.connect(str(path))
    try:
        yield App(default_config(), client, Options(seed=1))
    finally:
        await client.close()


@pytest.mark.looptime
async def test_reason_is_logged_every_30_seconds(
    app: App, looptime: float, caplog: pytest.LogCaptureFixture
) -> None:
    nodes = next(r for r in app.reflectors if r.kind == "nodes")
    nodes.last_error = "list nodes: 401 Unauthorized: GET /api/v1/nodes: Unauthorized"
    caplog.set_level(logging.WARNING, logger="asched.scheduler.readiness")
    reminder = asyncio.create_task(app.readiness.remind(None))
    await asyncio.sleep(95)
    reminder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reminder

    # at 30, 60 and 90 s of loop time; none at 95
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            f"still waiting after {t}s before ready: no informer has synced; last error: list "
            "nodes: 401 Unauthorized: GET /api/v1/nodes: Unauthorized (API server "
            "http://127.0.0.1:1)",
        )
        for t in (30, 60, 90)
    ]
    assert "secret-token" not in caplog.text


@pytest.mark.looptime
async def test_a_standby_says_whom_it_waits_for_at_info(
    app: App, looptime: float, caplog: pytest.LogCaptureFixture
) -> None:
    for reflector in app.reflectors:
        reflector.synced.set()
    app.ready.set()
    elector = LeaderElector(app.client, app.config.leader_election, identity="me")
    elector.last_failure = "held by the-other-replica"
    caplog.set_level(logging.INFO, logger="asched.scheduler.readiness")
    reminder = asyncio.create_task(app.readiness.remind(elector))
    await asyncio.sleep(31)
    reminder.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reminder

    # waiting for the lease is a standby's normal state: INFO, not WARNING
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "INFO",
            "still waiting after 30s as a standby: waiting for the leader lease "
            "kube-system/kube-scheduler (held by the-other-replica)",
        )
    ]


async def test_reason_names_the_informers_still_missing(app: App) -> None:
    for reflector in app.reflectors:
        if reflector.kind not in ("pods", "services"):
            reflector.synced.set()
    # 7 reflectors before run() adds the PodDisruptionBudget one; 2 have not synced
    assert app.not_ready_reason() == (
        "2 of 7 informers not synced (pods, services); no answer yet from http://127.0.0.1:1"
    )


async def sleeper(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("work_seconds", "stop_after", "expected", "ends_at"),
    [
        pytest.param(5.0, 10.0, "done", 5.0, id="work finishes first"),
        # the stop at 2 s cancels a wait that would have lasted an hour
        pytest.param(3600.0, 2.0, None, 2.0, id="stop comes first"),
    ],
)
async def test_unless_set(
    looptime: float, work_seconds: float, stop_after: float, expected: str | None, ends_at: float
) -> None:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(stop_after, event.set)
    assert await unless_set(event, sleeper(work_seconds)) == expected
    assert looptime == ends_at


@pytest.mark.looptime
async def test_unless_set_propagates_the_work_error(looptime: float) -> None:
    async def fail() -> None:
        await asyncio.sleep(1)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await unless_set(asyncio.Event(), fail())


@pytest.mark.looptime
async def test_a_stop_before_any_informer_synced_says_why(
    app: App, looptime: float, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="asched.scheduler.readiness")
    asyncio.get_running_loop().call_later(5.0, app.stop)
    await app._run()

    last = caplog.records[-1].getMessage()
    assert last.startswith("stopped before ready: no informer has synced; last error: list ")
    assert last.endswith("(API server http://127.0.0.1:1)")
    assert looptime == 5.0


def _stop_at(seconds: float) -> asyncio.Event:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, event.set)
    return event
