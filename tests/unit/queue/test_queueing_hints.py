"""Queueing hints: a rejector's hint decides whether an event's object may help a pod.

Upstream's QueueingHintFn, as asched asks it: for a parked pod waiting for the event,
each rejecting plugin that declared the event is asked; one "may help" (or a plugin
without a hint, or a hint that raises) moves the pod; all "no" leave it parked.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.plugin import testing
from asched.queue.scheduling_queue import SchedulingQueue
from tests.configs import default_config

E = ClusterEvent
FRAMEWORK = Framework(default_config().profiles[0])
PROFILE = "default-scheduler"
NO_SCHEDULE = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
TOLERATES = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]


class FakeClock:
    def __call__(self) -> float:
        return 100.0


def queue(**hints: Any) -> SchedulingQueue:
    all_hints = {(PROFILE, name): hint for name, hint in FRAMEWORK.hints.items()}
    all_hints.update({(PROFILE, name): hint for name, hint in hints.items()})
    return SchedulingQueue(clock=FakeClock(), interests=FRAMEWORK.interests, hints=all_hints)


def parked(q: SchedulingQueue, pod: PodInfo, *rejectors: str) -> None:
    q.add(pod)
    qp = q.pop()
    assert qp is not None
    status = Status.unschedulable("no", plugin=rejectors[0])
    assert q.requeue(qp, status, frozenset(rejectors))
    assert q.where(pod.key) == "unschedulable"


def pod(**spec: Any) -> PodInfo:
    raw = testing.pod("p")
    raw["spec"].update(spec)
    return decode_pod(raw)


def node(name: str = "n", **kwargs: Any):
    return decode_node(testing.node(name, **kwargs))


@pytest.mark.parametrize(
    ("the_pod", "rejectors", "event", "changed", "moves"),
    [
        pytest.param(
            pod(),
            ("TaintToleration",),
            E.NODE_ADD,
            node(taints=[NO_SCHEDULE]),
            False,
            id="a new node the pod does not tolerate",
        ),
        pytest.param(
            pod(tolerations=TOLERATES),
            ("TaintToleration",),
            E.NODE_ADD,
            node(taints=[NO_SCHEDULE]),
            True,
            id="a new node the pod tolerates",
        ),
        pytest.param(
            pod(), ("TaintToleration",), E.NODE_TAINT, node(), True, id="the taint is gone"
        ),
        pytest.param(
            pod(nodeSelector={"zone": "a"}),
            ("NodeAffinity",),
            E.NODE_LABEL,
            node(labels={"zone": "b"}),
            False,
            id="relabelled to another zone",
        ),
        pytest.param(
            pod(nodeSelector={"zone": "a"}),
            ("NodeAffinity",),
            E.NODE_LABEL,
            node(labels={"zone": "a"}),
            True,
            id="relabelled into the zone",
        ),
        pytest.param(
            pod(),
            ("NodeUnschedulable",),
            E.NODE_SCHEDULABLE,
            node(unschedulable=True),
            False,
            id="still cordoned",
        ),
        pytest.param(
            pod(), ("NodeUnschedulable",), E.NODE_SCHEDULABLE, node(), True, id="uncordoned"
        ),
        # NodeResourcesFit has no hint: its "queue" wins over TaintToleration's "skip"
        pytest.param(
            pod(),
            ("TaintToleration", "NodeResourcesFit"),
            E.NODE_ADD,
            node(taints=[NO_SCHEDULE]),
            True,
            id="any rejector's yes moves it",
        ),
        # only rejectors that declared the event are asked: NodeAffinity did not declare
        # NodeTaintChange, so TaintToleration's "no" is the answer
        pytest.param(
            pod(nodeSelector={"zone": "a"}),
            ("TaintToleration", "NodeAffinity"),
            E.NODE_TAINT,
            node(taints=[NO_SCHEDULE]),
            False,
            id="a rejector that did not declare the event is not asked",
        ),
        pytest.param(
            pod(),
            ("TaintToleration",),
            E.NODE_ADD,
            None,
            True,
            id="no object: every waiting pod moves",
        ),
    ],
)
def test_hints(the_pod, rejectors, event, changed, moves) -> None:
    q = queue()
    parked(q, the_pod, *rejectors)
    assert q.move(event, changed) == int(moves)
    assert (q.where(the_pod.key) == "unschedulable") is not moves


def test_a_raising_hint_moves_the_pod() -> None:
    def broken(event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        raise RuntimeError("hint bug")

    q = queue(TaintToleration=broken)
    the_pod = pod()
    parked(q, the_pod, "TaintToleration")
    assert q.move(E.NODE_ADD, node(taints=[NO_SCHEDULE])) == 1


def test_hints_are_per_profile() -> None:
    """A plugin's args (NodeAffinity's addedAffinity) may differ per profile, so its hint
    is looked up with the pod's profile; another profile's hint is not used."""
    calls: list[str] = []

    def other(event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        calls.append("other")
        return False

    q = SchedulingQueue(
        clock=FakeClock(),
        interests=FRAMEWORK.interests,
        hints={("other-profile", "TaintToleration"): other},
    )
    the_pod = pod()
    parked(q, the_pod, "TaintToleration")
    assert q.move(E.NODE_ADD, node(taints=[NO_SCHEDULE])) == 1  # no hint for its profile
    assert calls == []
