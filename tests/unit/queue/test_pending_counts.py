"""The pending counts are kept as pods move: after any sequence of queue operations they
equal a count of every pod's place (what `pending()` computed by a scan before)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings, strategies as st

from asched.framework.events import ClusterEvent
from asched.framework.status import Status
from asched.queue.scheduling_queue import IN_FLIGHT, SchedulingQueue
from tests.unit.queue.test_scheduling_queue import INTERESTS, FakeClock, gate_check, pod

NAMES = ("a", "b", "c", "d")
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            (
                "add",
                "add-gated",
                "ungate",
                "pop-park",
                "pop-error",
                "pop-done",
                "delete",
                "move",
                "tick",
            )
        ),
        st.sampled_from(NAMES),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(OPERATIONS)
def test_pending_equals_a_recount(operations: list[tuple[str, str]]) -> None:
    clock = FakeClock()
    queue = SchedulingQueue(interests=INTERESTS, clock=clock, pre_enqueue=gate_check)
    for operation, name in operations:
        if operation == "add":
            queue.add(pod(name))
        elif operation == "add-gated":
            queue.add(pod(name, gates=("wait",)))
        elif operation == "ungate":
            queue.update(pod(name))
        elif operation.startswith("pop"):
            qp = queue.pop()
            if qp is None:
                continue
            if operation == "pop-park":
                queue.requeue(qp, Status.unschedulable("no", plugin="NodeResourcesFit"))
            elif operation == "pop-error":
                queue.requeue(qp, Status.error("boom"))
            else:
                queue.done(qp.key)
        elif operation == "delete":
            queue.delete(f"default/{name}")  # type: ignore[arg-type]
        elif operation == "move":
            queue.move(ClusterEvent.NODE_ADD)
        else:
            clock.now += 7.0  # backoff expiries, and in time the 5-minute flush
            queue.flush()
        recount = Counter(place for place, _ in queue.snapshot() if place != IN_FLIGHT)
        pending = queue.pending()
        assert {place: n for place, n in pending.items() if n} == dict(recount)
