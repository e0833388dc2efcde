"""The reporter's budget for informational events, on a fake clock (no API calls made)."""

from __future__ import annotations

from asched.cluster.decode import decode_pod
from asched.scheduler.reporting import Reporter
from asched.tools.bench import templates


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pod(index: int):
    return decode_pod(templates.pod(f"p{index}"))


async def test_scheduled_events_are_rate_limited_but_failures_are_not() -> None:
    clock = Clock()
    reporter = Reporter(
        client=None, instance="i", scheduled_rate=10.0, scheduled_burst=5.0, clock=clock
    )  # type: ignore[arg-type]
    for index in range(8):
        reporter.scheduled(pod(index), "n1")
    # a burst of 5 is admitted, the other 3 dropped
    assert reporter.backlog == 5
    assert reporter.dropped == 3
    clock.now += 0.25  # 10/s for 0.25 s refills 2.5 tokens: 2 more pass
    for index in range(8, 12):
        reporter.scheduled(pod(index), "n1")
    assert reporter.backlog == 7
    assert reporter.dropped == 5
    for index in range(12, 40):
        reporter.unschedulable(pod(index), "0/3 nodes are available: 3 Insufficient cpu.")
    assert reporter.backlog == 7 + 28  # failures are never dropped
