"""What happens to a pod that changes, or is recreated, while its attempt is in flight.

Found in review: a pod deleted and created again under the same name during an attempt
was lost (in no queue until a relist), and a spec update during an attempt was forgotten,
so a failure parked the pod although the update might have made it fit. A plugin that
declares a universal event could also corrupt the parked-pod index.
"""

from __future__ import annotations

from asched.cluster.decode import decode_pod
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.tools.bench import templates
from tests.configs import default_config

INTERESTS = Framework(default_config().profiles[0]).interests
FIT = frozenset({"NodeResourcesFit"})


def pod(uid: str = "u1", toleration: bool = False):
    raw = templates.pod("a")
    raw["metadata"]["uid"] = uid
    if toleration:
        raw["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    return decode_pod(raw)


def queue() -> SchedulingQueue:
    return SchedulingQueue(clock=lambda: 100.0, interests=INTERESTS)


def test_a_pod_recreated_while_the_old_one_is_in_flight_is_queued_when_it_ends() -> None:
    q = queue()
    q.add(pod("u1"))
    qp = q.pop()
    assert qp is not None
    q.delete("default/a")  # the watch: deleted while its bind runs
    q.add(pod("u2"))  # and created again under the same name
    assert not q.requeue(qp, Status.error("binding failed: uid precondition"))
    assert q.where("default/a") == "active"  # before: None, lost until a relist
    popped = q.pop()
    assert popped is not None
    assert popped.pod.uid == "u2"


def test_a_recreated_pod_deleted_again_is_not_queued() -> None:
    q = queue()
    q.add(pod("u1"))
    qp = q.pop()
    assert qp is not None
    q.delete("default/a")
    q.add(pod("u2"))
    q.delete("default/a")  # gone again before the old attempt ended
    q.done(qp.key)
    assert q.where("default/a") is None


def test_a_spec_update_during_the_attempt_sends_its_failure_to_backoff() -> None:
    q = queue()
    q.add(pod())
    qp = q.pop()
    assert qp is not None
    q.update(pod(toleration=True))  # the user adds the missing toleration meanwhile
    assert q.requeue(qp, Status.unschedulable("untolerated taint"), FIT)
    assert q.where("default/a") == "backoff"  # before: parked for up to 5 minutes


def test_a_status_update_during_the_attempt_still_parks_its_failure() -> None:
    q = queue()
    q.add(pod())
    qp = q.pop()
    assert qp is not None
    q.update(pod())  # e.g. the echo of our own PodScheduled write: nothing read changed
    assert q.requeue(qp, Status.unschedulable("Insufficient cpu"), FIT)
    assert q.where("default/a") == "unschedulable"


def test_a_plugin_declaring_a_universal_event_does_not_break_the_index() -> None:
    q = SchedulingQueue(
        clock=lambda: 100.0,
        interests={"Odd": frozenset({ClusterEvent.FORCE_ACTIVATE, ClusterEvent.NODE_ADD})},
    )
    q.add(pod())
    qp = q.pop()
    assert qp is not None
    assert q.requeue(qp, Status.unschedulable("no", plugin="Odd"))  # before: KeyError
    assert q.move(ClusterEvent.FORCE_ACTIVATE) == 1
