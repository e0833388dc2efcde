"""The reporter sends one report per pod at a time, so each decision sees the last write.

Whether a PodScheduled patch is needed depends on what was last written to the pod; a
second report sent while the first is still in flight would decide from older knowledge
(and its answer could overtake the first). The API below only records the order of the
status patches and holds each one until the test lets it finish.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asched.api.client import Response
from asched.cluster.decode import decode_pod
from asched.scheduler.reporting import Reporter
from asched.tools.bench import templates

FIRST = "0/3 nodes are available: 3 Insufficient cpu."
SECOND = "0/4 nodes are available: 4 Insufficient cpu."


class HeldApi:
    """Status patches wait for ``release``; events are accepted at once."""

    def __init__(self) -> None:
        self.patches: list[str] = []
        self.arrived: asyncio.Queue[str] = asyncio.Queue()
        self.release = asyncio.Event()

    async def patch_pod_status(self, namespace: str, name: str, patch: Any) -> Response:
        message = patch["status"]["conditions"][0]["message"]
        self.patches.append(message)
        self.arrived.put_nowait(message)
        await self.release.wait()
        return Response(200, {})

    async def create(self, path: str, body: Any) -> Response:
        return Response(201, {})

    async def patch(self, path: str, body: Any, content_type: str = "") -> Response:
        return Response(200, {})


async def test_a_newer_report_waits_for_the_one_in_flight() -> None:
    api = HeldApi()
    reporter = Reporter(api, instance="i", workers=4)  # type: ignore[arg-type]
    pod = decode_pod(templates.pod("p"))
    worker = asyncio.create_task(reporter.run())
    try:
        reporter.unschedulable(pod, FIRST)
        async with asyncio.timeout(5):
            assert await api.arrived.get() == FIRST
        reporter.unschedulable(pod, SECOND)  # 3 idle workers, but the pod is busy
        for _ in range(20):
            await asyncio.sleep(0)
        assert api.patches == [FIRST]
        assert reporter.backlog == 1
        api.release.set()
        async with asyncio.timeout(5):
            assert await api.arrived.get() == SECOND
        assert api.patches == [FIRST, SECOND]
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)


async def test_a_pod_forgotten_while_its_report_is_in_flight_stays_forgotten() -> None:
    """Found in review: ``forget`` (the pod was deleted) ran while its report was sent, and
    the send recorded what it wrote afterwards: a slow leak, and a recreated pod of the
    same name would have been judged by the old pod's record."""
    api = HeldApi()
    reporter = Reporter(api, instance="i", workers=2)  # type: ignore[arg-type]
    pod = decode_pod(templates.pod("p"))
    worker = asyncio.create_task(reporter.run())
    try:
        reporter.unschedulable(pod, FIRST)
        async with asyncio.timeout(5):
            assert await api.arrived.get() == FIRST
        reporter.forget(pod.key)  # the watch: the pod is gone, its patch still in flight
        api.release.set()
        for _ in range(50):
            await asyncio.sleep(0)
        assert reporter.conditions_patched == 1
        assert pod.key not in reporter._said  # before: recorded again after the send
        assert pod.key not in reporter._series
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
