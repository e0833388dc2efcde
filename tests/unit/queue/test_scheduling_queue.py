"""The scheduling queue (upstream: pkg/scheduler/backend/queue/scheduling_queue.go), driven by a fake clock: no sleeps, exact times."""

from __future__ import annotations

import pytest

from asched.cluster.decode import decode_pod
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.backoff import backoff_seconds
from asched.queue.scheduling_queue import SchedulingQueue
from asched.tools.bench import templates
from tests.configs import default_config

#: what the in-tree plugins declare (EnqueueExtensions.events), as the App gives the queue
INTERESTS = Framework(default_config().profiles[0]).interests


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pod(name: str, priority: int = 0, gates: tuple[str, ...] = ()):
    raw = templates.pod(name)
    raw["spec"]["priority"] = priority
    if gates:
        raw["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    return decode_pod(raw)


def gate_check(p):
    return Status.unresolvable("gated") if p.scheduling_gates else Status.success()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> SchedulingQueue:
    return SchedulingQueue(interests=INTERESTS, clock=clock, pre_enqueue=gate_check)


@pytest.mark.parametrize(
    ("attempts", "expected"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0), (60, 10.0)],
)
def test_backoff_doubles_to_the_cap(attempts: int, expected: float) -> None:
    # TestBackOffFlow: 1 s initial doubling per attempt, capped at 10 s
    assert backoff_seconds(attempts, 1.0, 10.0) == expected


def test_priority_then_arrival_order(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("low-early", priority=1))
    clock.now += 1
    queue.add(pod("high", priority=10))
    clock.now += 1
    queue.add(pod("low-late", priority=1))
    order = [queue.pop().pod.name for _ in range(3)]
    assert order == ["high", "low-early", "low-late"]
    assert queue.pop() is None


def test_unschedulable_pod_parks_until_an_interesting_event(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    queue.add(pod("p"))
    qp = queue.pop()
    assert queue.requeue(qp, Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit"))
    assert queue.where("default/p") == "unschedulable"
    assert queue.move(ClusterEvent.NODE_LABEL) == 0  # Fit does not care about labels
    assert queue.move(ClusterEvent.NODE_ADD) == 1
    # attempts 1 -> 1 s backoff from the requeue time, still running: backoffQ
    assert queue.where("default/p") == "backoff"
    clock.now += 1.0
    assert queue.pop().pod.name == "p"


def test_event_during_the_cycle_sends_the_pod_to_backoff(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qp = queue.pop()
    queue.move(ClusterEvent.NODE_ADD)  # arrives while p is in flight
    queue.requeue(qp, Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit"))
    assert queue.where("default/p") == "backoff"


def test_error_goes_to_backoff_with_doubling(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("p"))
    for attempt, wait in [(1, 1.0), (2, 2.0), (3, 4.0)]:
        qp = queue.pop()
        assert qp.attempts == attempt
        queue.requeue(qp, Status.error("boom"))
        clock.now += wait - 0.001
        assert queue.pop() is None  # still backing off
        clock.now += 0.001
    assert queue.pop().attempts == 4


def test_parked_pod_returns_after_five_minutes(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("p"))
    queue.requeue(queue.pop(), Status.unresolvable("nope", plugin="NodeAffinity"))
    assert queue.next_wakeup() == clock.now + 300
    clock.now += 299.9
    assert queue.pop() is None
    clock.now += 0.1
    assert queue.pop().pod.name == "p"


def test_delete_while_in_flight_drops_the_pod(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qp = queue.pop()
    queue.delete("default/p")
    assert not queue.requeue(qp, Status.error("bind failed"))
    assert len(queue) == 0


def test_update_while_in_flight_is_kept_for_the_requeue(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    qp = queue.pop()
    queue.update(pod("p", priority=7))
    queue.requeue(qp, Status.error("x"))
    assert qp.pod.priority == 7


def test_no_pod_is_queued_twice(queue: SchedulingQueue) -> None:
    queue.add(pod("p"))
    queue.add(pod("p"))
    queue.update(pod("p"))
    assert queue.pending()["active"] == 1
    assert queue.pop() is not None
    assert queue.pop() is None


def test_gated_pod_waits_for_its_gates_to_go(queue: SchedulingQueue) -> None:
    queue.add(pod("g", gates=("example.com/wait",)))
    assert queue.pending()["gated"] == 1
    assert queue.move(ClusterEvent.NODE_ADD) == 0
    assert queue.pop() is None
    queue.update(pod("g"))
    assert queue.pop().pod.name == "g"


def test_update_of_parked_pod_moves_it(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("p"))
    queue.requeue(queue.pop(), Status.unresolvable("x", plugin="NodeAffinity"))
    clock.now += 5  # past the 1 s backoff of attempt 1
    queue.update(pod("p", priority=3))
    assert queue.where("default/p") == "active"
