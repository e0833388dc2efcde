"""The queue page's document: every pending pod in its place, with attempts, age, reason.

A real SchedulingQueue on a fake clock holds one pod in each of its places; of three pods
in flight, one waits at Permit, one is being bound, one is in its cycle. The queue's
``snapshot()`` is read-only: reading it changes no place and no order.
"""

from __future__ import annotations

from typing import Any

from builders import make_pod

from asched.cluster.decode import decode_pod
from asched.cluster.records import PodInfo
from asched.debug.rates import Rates
from asched.debug.recorder import Recorder
from asched.debug.views import Sources, queue_view
from asched.framework.status import Status
from asched.framework.waiting import WaitingPod, WaitingPods
from asched.queue.scheduling_queue import SchedulingQueue


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Job:
    def __init__(self, node: str) -> None:
        self.node = node


class Binder:
    def __init__(self) -> None:
        self.in_flight: dict[str, Any] = {}
        self.consulting = 0


def pod(name: str) -> PodInfo:
    raw = make_pod(name, cpu="1")
    raw["metadata"]["uid"] = f"uid-{name}"
    return decode_pod(raw)


def gate(p: PodInfo) -> Status:
    return Status.unschedulable("gated", plugin="Gate") if p.name == "gated" else Status()


async def test_every_place_with_attempts_age_and_reason() -> None:
    clock = Clock()
    queue = SchedulingQueue(clock=clock, pre_enqueue=gate, initial_backoff=4, max_backoff=10)
    recorder, binder, waiting = Recorder(10), Binder(), WaitingPods()
    for name in ("parked", "backing", "permit", "binding", "cycle", "gated", "active"):
        queue.add(pod(name))
    popped = {}
    for _ in range(5):  # in priority then queue order: the first five added
        qp = queue.pop()
        assert qp is not None
        popped[qp.pod.name] = qp
    clock.now = 103.0
    # parked: rejected with no event since: unschedulable; backing: an error: backoff 4 s
    queue.requeue(popped["parked"], Status.unschedulable("no", plugin="NodeResourcesFit"))
    recorder.reason("default/parked", "0/3 nodes are available: 3 Insufficient cpu.")
    queue.requeue(popped["backing"], Status.error("boom"))
    waiting.add(WaitingPod("default/permit", "uid-permit", "n1", {"Gang": 30.0}))
    binder.in_flight["default/binding"] = Job("n2")
    clock.now = 104.5
    sources = Sources(
        queue=queue,
        waiting=waiting,
        binder=binder,
        recorder=recorder,
        rates=Rates(),
        identity="me",
        loop_time=clock,
    )
    before = [(place, qp.key) for place, qp in queue.snapshot()]
    document = queue_view(sources)
    assert [(place, qp.key) for place, qp in queue.snapshot()] == before  # read-only
    rows = {row["pod"].split("/")[1]: row for row in document["pods"]}
    assert {name: row["place"] for name, row in rows.items()} == {
        "active": "active",
        "backing": "backoff",
        "parked": "unschedulable",
        "gated": "gated",
        "permit": "waiting-on-permit",
        "binding": "binding",
        "cycle": "in-cycle",
    }
    assert [row["pod"].split("/")[1] for row in document["pods"]][:4] == [
        "active",
        "backing",
        "parked",
        "gated",
    ]
    assert rows["parked"]["reason"] == "0/3 nodes are available: 3 Insufficient cpu."
    assert rows["parked"]["rejectedBy"] == ["NodeResourcesFit"]
    assert rows["parked"]["attempts"] == 1
    assert rows["active"]["attempts"] == 0
    # in the queue since its first push at 100.0: 104.5 - 100.0 = 4.5 s
    assert rows["parked"]["age"] == 4.5
    # requeued at 103.0 after its first attempt: backoff 4 s -> active at 107.0, 2.5 s left
    assert rows["backing"]["backoffLeft"] == 2.5
    assert rows["permit"]["node"] == "n1"
    assert rows["permit"]["plugins"] == ["Gang"]
    assert rows["binding"]["node"] == "n2"
    assert document["counts"]["unschedulable"] == 1
    assert document["total"] == 7
    assert queue_view(sources, limit=2)["pods"] == document["pods"][:2]
    assert queue_view(sources, limit=2)["truncated"] is True
    for waiter in waiting:
        waiter.reject("", "test over")
