"""Updates of pending pods: only what the scheduler reads outside the status gives another chance.

Upstream's ``isPodUpdated`` strips ``resourceVersion``, ``generation``, ``managedFields``,
``finalizers`` and ``status`` before comparing; ``PriorityQueue.Update`` then leaves an
unschedulable pod where it is (with the newer object) unless that comparison differs. The
queue runs on a fake clock: no sleeps, exact times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.cluster.decode import decode_pod
from asched.cluster.records import PodInfo
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.queue.updates import pod_updated
from asched.tools.bench import templates
from tests.configs import default_config

#: what the in-tree plugins declare (EnqueueExtensions.events), as the App gives the queue
INTERESTS = Framework(default_config().profiles[0]).interests

Raw = dict[str, Any]
FIT = "NodeResourcesFit"
INSUFFICIENT = Status.unschedulable("0/3 nodes are available: 3 Insufficient cpu.", plugin=FIT)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def raw_pod(name: str = "p") -> Raw:
    raw = templates.pod(name)
    raw["metadata"].update(uid="u-1", resourceVersion="10")
    return raw


def changed(edit: Callable[[Raw], None], name: str = "p") -> PodInfo:
    raw = raw_pod(name)
    edit(raw)
    return decode_pod(raw)


def _condition(raw: Raw) -> None:
    raw["status"] = {
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 Insufficient cpu.",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ]
    }


def _own_write(raw: Raw) -> None:
    """What the scheduler's PodScheduled patch does to the object the watch sends."""
    _condition(raw)
    raw["status"]["nominatedNodeName"] = "n1"
    raw["metadata"]["resourceVersion"] = "11"
    raw["metadata"]["managedFields"] = [{"manager": "asched", "operation": "Update"}]


def _labels(raw: Raw) -> None:
    raw["metadata"]["labels"]["tier"] = "web"


def _annotation(raw: Raw) -> None:
    raw["metadata"]["annotations"] = {"note": "read by nothing in the scheduler"}


def _priority(raw: Raw) -> None:
    raw["spec"]["priority"] = 5


def _cpu(raw: Raw) -> None:
    raw["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "50m"}}


def _toleration(raw: Raw) -> None:
    raw["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]


def _recreated(raw: Raw) -> None:
    raw["metadata"]["uid"] = "u-2"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        pytest.param(lambda raw: None, False, id="identical"),
        pytest.param(
            lambda raw: raw["metadata"].update(resourceVersion="99"), False, id="resourceVersion"
        ),
        pytest.param(
            lambda raw: raw["metadata"].update(managedFields=[{"manager": "x"}]),
            False,
            id="managedFields",
        ),
        pytest.param(_condition, False, id="PodScheduled condition"),
        pytest.param(
            lambda raw: raw.update(status={"nominatedNodeName": "n1"}), False, id="nomination"
        ),
        pytest.param(lambda raw: raw.update(status={"phase": "Pending"}), False, id="phase"),
        pytest.param(_own_write, False, id="the scheduler's own status write"),
        pytest.param(_annotation, False, id="annotation (not read)"),
        pytest.param(_labels, True, id="labels"),
        pytest.param(_priority, True, id="priority"),
        pytest.param(_cpu, True, id="requests"),
        pytest.param(_toleration, True, id="tolerations"),
        pytest.param(_recreated, True, id="uid (recreated)"),
    ],
)
def test_pod_updated_ignores_the_status(edit: Callable[[Raw], None], expected: bool) -> None:
    assert pod_updated(decode_pod(raw_pod()), changed(edit)) is expected


def parked(queue: SchedulingQueue) -> None:
    queue.add(decode_pod(raw_pod()))
    qp = queue.pop()
    assert qp is not None
    assert queue.requeue(qp, INSUFFICIENT)
    assert queue.where("default/p") == "unschedulable"


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        pytest.param(_own_write, "unschedulable", id="own status write: stays parked"),
        pytest.param(_condition, "unschedulable", id="condition only: stays parked"),
        pytest.param(_annotation, "unschedulable", id="annotation: stays parked"),
        # 1 attempt -> 1 s backoff from the requeue, 5 s ago: straight to activeQ
        pytest.param(_labels, "active", id="labels: moves"),
        pytest.param(_toleration, "active", id="tolerations: moves"),
    ],
)
def test_update_of_parked_pod(edit: Callable[[Raw], None], where: str) -> None:
    clock = FakeClock()
    queue = SchedulingQueue(interests=INTERESTS, clock=clock)
    parked(queue)
    clock.now += 5
    newer = changed(edit)
    queue.update(newer)
    assert queue.where("default/p") == where
    if where == "unschedulable":
        # the newer copy is kept, and the 5-minute flush still counts from the requeue
        assert queue.next_wakeup() == 100.0 + 300
        clock.now = 100.0 + 300
        qp = queue.pop()
        assert qp is not None
        assert qp.pod is newer


def test_status_update_keeps_the_backoff() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(interests=INTERESTS, clock=clock)
    queue.add(decode_pod(raw_pod()))
    for _ in range(3):
        qp = queue.pop()
        assert qp is not None
        queue.requeue(qp, Status.error("bind failed"))
        clock.now += 10
    # 3 attempts -> 4 s of backoff from the last requeue at 120
    clock.now = 121.0
    queue.update(changed(_own_write))
    assert queue.where("default/p") == "backoff"
    assert queue.next_wakeup() == 120.0 + 4
    clock.now = 123.999
    assert queue.pop() is None
    clock.now = 124.0
    qp = queue.pop()
    assert qp is not None
    assert qp.pod.nominated_node_name == "n1"


def test_status_update_keeps_the_active_order() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(interests=INTERESTS, clock=clock)
    for name in ("a", "b", "c"):
        queue.add(decode_pod(raw_pod(name)))
        clock.now += 1
    queue.update(changed(_own_write, "a"))  # a status write does not send "a" to the back
    order = []
    while (qp := queue.pop()) is not None:
        order.append(qp.pod.name)
    assert order == ["a", "b", "c"]


def test_own_status_write_during_the_cycle_still_parks_the_pod() -> None:
    queue = SchedulingQueue(interests=INTERESTS, clock=FakeClock())
    queue.add(decode_pod(raw_pod()))
    qp = queue.pop()
    assert qp is not None
    queue.update(changed(_own_write))  # arrives while the pod is in flight
    assert queue.requeue(qp, INSUFFICIENT)
    assert queue.where("default/p") == "unschedulable"
    assert qp.pod.nominated_node_name == "n1"


def test_no_retry_storm_for_a_pod_that_fits_nowhere() -> None:
    """The loop of issue 10: fail, write the condition, see the write, retry; for 10 minutes.

    Every attempt is answered by the status write the reporter sends and the watch event it
    brings back. With a fixed 1 s backoff (the harness's), retrying on each event would make
    600 attempts; parked, the pod is tried at the start and after each 5-minute flush.
    """
    clock = FakeClock()
    queue = SchedulingQueue(interests=INTERESTS, clock=clock)
    queue.add(decode_pod(raw_pod()))
    attempts = 0
    end = clock.now + 600
    while clock.now < end:
        qp = queue.pop()
        if qp is not None:
            attempts += 1
            assert queue.requeue(qp, INSUFFICIENT)
            queue.update(changed(_own_write))
        clock.now += 1.0
    # t=100 (first), t=400 and t=700 would be next: 2 attempts by t=699
    assert attempts == 2


@pytest.mark.parametrize(
    ("event", "moved"),
    [
        pytest.param(ClusterEvent.NODE_ADD, 1, id="NodeAdd"),
        pytest.param(ClusterEvent.NODE_ALLOCATABLE, 1, id="NodeAllocatableChange"),
        pytest.param(ClusterEvent.ASSIGNED_POD_DELETE, 1, id="AssignedPodDelete"),
        pytest.param(ClusterEvent.NODE_LABEL, 0, id="NodeLabelChange"),
        pytest.param(ClusterEvent.NODE_TAINT, 0, id="NodeTaintChange"),
        pytest.param(ClusterEvent.ASSIGNED_POD_ADD, 0, id="AssignedPodAdd"),
    ],
)
def test_parked_pod_moves_only_for_events_its_rejector_cares_about(
    event: ClusterEvent, moved: int
) -> None:
    queue = SchedulingQueue(interests=INTERESTS, clock=FakeClock())
    queue.add(decode_pod(raw_pod()))
    qp = queue.pop()
    assert qp is not None
    assert queue.requeue(qp, INSUFFICIENT, frozenset({FIT}))
    assert queue.move(event) == moved


def test_delete_of_a_queued_pod_is_constant_time_and_complete() -> None:
    queue = SchedulingQueue(interests=INTERESTS, clock=FakeClock())
    queue.add(decode_pod(raw_pod("a")))
    queue.add(decode_pod(raw_pod("b")))
    queue.update(changed(_labels, "a"))  # a moved once: a stale heap entry stays behind
    queue.delete("default/a")
    qp = queue.pop()
    assert qp is not None
    assert qp.pod.name == "b"
    assert queue.pop() is None
    assert len(queue) == 1  # b, in flight
