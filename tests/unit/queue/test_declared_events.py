"""Plugins declare the events that may undo their rejection; the queue obeys the declarations.

Before, a static table in the queue named six plugins: a pod rejected by any other plugin
(InterPodAffinity, PodTopologySpread, an out-of-tree one) waited for the 5-minute flush
even when the pod in its way was deleted, and any event during a cycle sent a failing pod
to backoff instead of parking it. Now each plugin's ``events`` (upstream's
EventsToRegister) reach the queue through the Framework, parked pods are indexed by
those events, and a failing pod goes to backoff only for an event its rejectors declare.
"""

from __future__ import annotations

import pytest

from asched.cluster.decode import decode_pod
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.tools.bench import templates
from tests.configs import default_config

E = ClusterEvent
INTERESTS = Framework(default_config().profiles[0]).interests


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pod(name: str = "p"):
    return decode_pod(templates.pod(name))


@pytest.mark.parametrize(
    ("plugin", "events"),
    [
        # upstream's EventsToRegister, restricted to the events asched raises
        pytest.param(
            "NodeResourcesFit", {E.NODE_ADD, E.NODE_ALLOCATABLE, E.ASSIGNED_POD_DELETE}, id="Fit"
        ),
        pytest.param("NodePorts", {E.NODE_ADD, E.ASSIGNED_POD_DELETE}, id="NodePorts"),
        pytest.param("NodeAffinity", {E.NODE_ADD, E.NODE_LABEL}, id="NodeAffinity"),
        pytest.param("TaintToleration", {E.NODE_ADD, E.NODE_TAINT}, id="TaintToleration"),
        pytest.param("NodeUnschedulable", {E.NODE_ADD, E.NODE_SCHEDULABLE}, id="Unschedulable"),
        pytest.param("NodeName", {E.NODE_ADD}, id="NodeName"),
        pytest.param(
            "InterPodAffinity",
            {E.ASSIGNED_POD_ADD, E.ASSIGNED_POD_DELETE, E.NODE_ADD, E.NODE_LABEL},
            id="InterPodAffinity",
        ),
        pytest.param(
            "PodTopologySpread",
            {E.ASSIGNED_POD_ADD, E.ASSIGNED_POD_DELETE, E.NODE_ADD, E.NODE_LABEL, E.NODE_TAINT},
            id="PodTopologySpread",
        ),
    ],
)
def test_in_tree_declarations(plugin: str, events: set[ClusterEvent]) -> None:
    assert INTERESTS[plugin] == events


def test_plugins_that_never_reject_on_an_event_declare_nothing() -> None:
    # scores, sorting, binding, preemption: no rejection of theirs for an event to undo
    for name in ("ImageLocality", "NodeResourcesBalancedAllocation", "DefaultBinder"):
        assert name not in INTERESTS


def test_a_plugins_own_declaration_drives_the_queue() -> None:
    """What an out-of-tree plugin gets: its declared events move the pods it rejected."""
    queue = SchedulingQueue(clock=FakeClock(), interests={"PriceGuard": frozenset({E.NODE_LABEL})})
    queue.add(pod())
    qp = queue.pop()
    assert qp is not None
    assert queue.requeue(qp, Status.unschedulable("too expensive", plugin="PriceGuard"))
    assert queue.move(E.NODE_ADD) == 0
    assert queue.move(E.NODE_ALLOCATABLE) == 0
    assert queue.move(E.NODE_LABEL) == 1


@pytest.mark.parametrize(
    ("event", "moved"),
    [
        # before: no interest was registered for InterPodAffinity, so 0 for each
        pytest.param(E.ASSIGNED_POD_DELETE, 1, id="the pod in the way is deleted"),
        pytest.param(E.ASSIGNED_POD_ADD, 1, id="a pod it wants to be near appears"),
        pytest.param(E.NODE_LABEL, 1, id="a node joins the topology domain"),
        pytest.param(E.NODE_ALLOCATABLE, 0, id="more room changes nothing for affinity"),
    ],
)
def test_a_pod_rejected_by_inter_pod_affinity_moves_on_pod_events(
    event: ClusterEvent, moved: int
) -> None:
    queue = SchedulingQueue(clock=FakeClock(), interests=INTERESTS)
    queue.add(pod())
    qp = queue.pop()
    assert qp is not None
    rejected = Status.unschedulable("node(s) didn't match pod anti-affinity rules")
    assert queue.requeue(qp, rejected.with_plugin("InterPodAffinity"))
    assert queue.where("default/p") == "unschedulable"
    assert queue.move(event) == moved


@pytest.mark.parametrize(
    ("event", "where"),
    [
        pytest.param(E.NODE_ADD, "backoff", id="an event Fit declares: backoff"),
        # before: any event during the cycle sent the pod to backoff
        pytest.param(E.NODE_LABEL, "unschedulable", id="an event Fit ignores: parked"),
        pytest.param(E.ASSIGNED_POD_ADD, "unschedulable", id="a binding elsewhere: parked"),
        pytest.param(E.UNSCHEDULABLE_TIMEOUT, "backoff", id="a universal event: backoff"),
    ],
)
def test_only_a_declared_event_during_the_cycle_sends_the_pod_to_backoff(
    event: ClusterEvent, where: str
) -> None:
    queue = SchedulingQueue(clock=FakeClock(), interests=INTERESTS)
    queue.add(pod())
    qp = queue.pop()
    assert qp is not None
    queue.move(event)  # while p is in flight
    assert queue.requeue(
        qp, Status.unschedulable("Insufficient cpu"), frozenset({"NodeResourcesFit"})
    )
    assert queue.where("default/p") == where


def test_flush_returns_the_oldest_parked_pods_first_at_their_own_time() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock=clock, interests=INTERESTS)
    for name in ("a", "b", "c"):  # parked at 100, 160 and 220
        queue.add(pod(name))
        qp = queue.pop()
        assert qp is not None
        queue.requeue(qp, Status.unresolvable("nope", plugin="NodeAffinity"))
        clock.now += 60
    # 100 + 300 = 400 is the first flush
    assert queue.next_wakeup() == 400
    clock.now = 400
    first = queue.pop()
    assert first is not None
    assert first.pod.name == "a"
    assert queue.where("default/b") == "unschedulable"
    assert queue.next_wakeup() == 460  # b's own 160 + 300


def test_a_move_that_helps_no_one_changes_nothing() -> None:
    queue = SchedulingQueue(clock=FakeClock(), interests=INTERESTS)
    queue.add(pod())
    qp = queue.pop()
    assert qp is not None
    queue.requeue(qp, Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit"))
    for _ in range(1000):  # e.g. a binding confirmed per watch event
        assert queue.move(E.ASSIGNED_POD_ADD) == 0
    assert queue.pending()["unschedulable"] == 1
