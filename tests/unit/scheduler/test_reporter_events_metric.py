"""``asched_events_total`` counts the Events the reporter wrote, by type and reason (issue 30).

One count per write the API server took: an Event created, or a series' count raised on
it. What was not written is not counted: a ``Scheduled`` event dropped by the rate limit,
a repeat folded into its series between two series writes, a create the server refused.
The API below answers every write with the status the case gives it (no network).
"""

from __future__ import annotations

from typing import Any

import pytest

from asched import metrics
from asched.api.client import Response
from asched.cluster.decode import decode_pod
from asched.cluster.names import NodeName
from asched.cluster.records import PodInfo
from asched.scheduler.reporting import Reporter
from asched.tools.bench import templates

NODE = NodeName("n1")
UNFIT = "0/3 nodes are available: 3 Insufficient cpu."
KINDS = (("Normal", "Scheduled"), ("Warning", "FailedScheduling"), ("Normal", "Preempted"))


class Api:
    """Takes every write with ``event_status`` (events) or 200 (pod status), and records
    the event paths written."""

    def __init__(self, event_status: int = 201) -> None:
        self.event_status = event_status
        self.created: list[str] = []
        self.patched: list[str] = []

    async def patch_pod_status(self, namespace: str, name: str, patch: Any) -> Response:
        return Response(200, {})

    async def create(self, path: str, body: Any) -> Response:
        self.created.append(body["reason"])
        return Response(self.event_status, {})

    async def patch(self, path: str, body: Any, content_type: str = "") -> Response:
        self.patched.append(path)
        return Response(200 if self.event_status < 300 else self.event_status, {})


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def counts() -> dict[tuple[str, str], float]:
    return {
        (kind, reason): metrics.REGISTRY.get_sample_value(
            "asched_events_total", {"type": kind, "reason": reason}
        )
        or 0.0
        for kind, reason in KINDS
    }


def moved(before: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """The counts that changed since ``before`` (the registry is shared by the session)."""
    return {key: value - before[key] for key, value in counts().items() if value != before[key]}


def pod(name: str) -> PodInfo:
    return decode_pod(templates.pod(name))


def reporter(api: Api, clock: Clock, **kwargs: Any) -> Reporter:
    return Reporter(api, instance="i", series_interval=10.0, clock=clock, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("case", "event_status", "expected"),
    [
        # a Scheduled, a FailedScheduling and a Preempted event, each created once
        pytest.param(
            "one of each",
            201,
            {
                ("Normal", "Scheduled"): 1,
                ("Warning", "FailedScheduling"): 1,
                ("Normal", "Preempted"): 1,
            },
            id="created: counted",
        ),
        # the server refuses every create: nothing was posted, nothing counted
        pytest.param("one of each", 500, {}, id="refused: not counted"),
    ],
)
async def test_each_event_created_is_counted_once(
    case: str, event_status: int, expected: dict[tuple[str, str], float]
) -> None:
    api, clock = Api(event_status), Clock()
    sender = reporter(api, clock)
    before = counts()
    sender.scheduled(pod("bound"), NODE)
    sender.unschedulable(pod("unfit"), UNFIT)
    sender.preempted(pod("victim"), "Preempted by pod x on node n1")
    await sender.flush()
    assert sorted(api.created) == ["FailedScheduling", "Preempted", "Scheduled"], case
    assert moved(before) == expected
    assert sender.events_created == (3 if event_status < 300 else 0)


async def test_a_series_counts_each_write_not_each_repeat() -> None:
    api, clock = Api(), Clock()
    sender = reporter(api, clock)
    before = counts()
    unfit = pod("unfit")
    sender.unschedulable(unfit, UNFIT)
    await sender.flush()  # t=0: created (count 1)
    for step in range(3):  # t=1, 2, 3: within the 10 s interval, folded into the series
        clock.now = 1.0 + step
        sender.unschedulable(unfit, UNFIT)
        await sender.flush()
    assert api.patched == []
    clock.now = 10.0  # 10 s after the create: the series is written (count 1 + 3 + 1 = 5)
    sender.unschedulable(unfit, UNFIT)
    await sender.flush()
    assert len(api.patched) == 1
    # two writes, one create and one series update: 2 (not the 5 occurrences)
    assert moved(before) == {("Warning", "FailedScheduling"): 2}
    assert (sender.events_created, sender.events_updated) == (1, 1)


async def test_scheduled_events_dropped_by_the_rate_limit_are_not_counted() -> None:
    api, clock = Api(), Clock()
    sender = reporter(api, clock, scheduled_rate=1.0, scheduled_burst=2.0)
    before = counts()
    for index in range(5):  # a burst of 2 admitted at t=0, the other 3 dropped
        sender.scheduled(pod(f"p{index}"), NODE)
    await sender.flush()
    assert sender.dropped == 3
    # 5 pods bound - 3 dropped = 2 Scheduled events posted, and counted
    assert moved(before) == {("Normal", "Scheduled"): 2}
