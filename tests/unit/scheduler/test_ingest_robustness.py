"""Ingest never raises, and says something about every pending pod of ours (issue 10).

Before: a pod that did not decode was logged and dropped, and stayed Pending forever with
nothing on it; an unexpected exception while applying one event stopped the scheduling
loop. Now an undecodable pending pod of ours leaves the queue and is handed to
``on_bad_pod`` once per distinct error (the App reports it on the pod), every undecodable
object is counted in ``asched_undecodable_objects_total``, and a bug while applying one
event is logged, counted and skipped.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import make_node, make_pod

from asched import metrics
from asched.api.watch import Relisted, WatchEvent
from asched.cluster import pod_shapes
from asched.cluster.table import NodeTable
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from tests.configs import default_config

OURS = "asched"


def build() -> tuple[Ingest, list[tuple[str, str]], list[str]]:
    table = NodeTable()
    bad: list[tuple[str, str]] = []
    gone: list[str] = []
    ingest = Ingest(
        table,
        Ledger(table),
        SchedulingQueue(clock=lambda: 0.0),
        {OURS},
        on_bad_pod=lambda obj, error: bad.append((obj["metadata"]["name"], str(error))),
        on_pod_gone=gone.append,
    )
    return ingest, bad, gone


def pod(name: str, scheduler: str = OURS, node: str = "", cpu: Any = "1") -> dict[str, Any]:
    raw = make_pod(name, cpu="1", memory="1Gi")
    raw["spec"]["schedulerName"] = scheduler
    raw["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    if node:
        raw["spec"]["nodeName"] = node
    return raw


def counted(kind: str) -> float:
    return (
        metrics.REGISTRY.get_sample_value("asched_undecodable_objects_total", {"kind": kind}) or 0.0
    )


# a mapping where a quantity string belongs: the API server would refuse it, a snapshot or
# an older simulator might not
BROKEN_CPU: dict[str, Any] = {"amount": 1}
FIELD = "spec.containers[0].resources.requests.cpu"


@pytest.mark.parametrize(
    ("raw", "reported"),
    [
        pytest.param(pod("mine", cpu=BROKEN_CPU), True, id="pending pod of ours: reported"),
        pytest.param(
            pod("theirs", scheduler="default-scheduler", cpu=BROKEN_CPU),
            False,
            id="another scheduler's pod: only counted",
        ),
        pytest.param(pod("bound", node="n1", cpu=BROKEN_CPU), False, id="bound pod: only counted"),
    ],
)
def test_undecodable_pods_are_counted_and_ours_reported(
    raw: dict[str, Any], reported: bool
) -> None:
    ingest, bad, _ = build()
    before = counted("pods")
    ingest.apply(WatchEvent("pods", "ADDED", raw))
    assert counted("pods") - before == 1
    assert ingest.decode_errors == 1
    if reported:
        [(name, message)] = bad
        assert name == raw["metadata"]["name"]
        assert FIELD in message
    else:
        assert bad == []


def test_a_pod_that_stops_decoding_leaves_the_queue_and_is_reported_once() -> None:
    ingest, bad, _ = build()
    good = pod("p")
    ingest.apply(WatchEvent("pods", "ADDED", good))
    assert ingest.queue.where("default/p") == "active"
    broken = pod("p", cpu=BROKEN_CPU)
    for _ in range(3):  # e.g. the echoes of our own status writes: same error, said once
        ingest.apply(WatchEvent("pods", "MODIFIED", copy.deepcopy(broken)))
    assert ingest.queue.where("default/p") is None
    assert "default/p" not in ingest.pending
    assert len(bad) == 1
    other = pod("p", cpu="abc")  # a different error is said again
    ingest.apply(WatchEvent("pods", "MODIFIED", other))
    assert len(bad) == 2
    assert "abc" in bad[1][1]
    ingest.apply(WatchEvent("pods", "MODIFIED", good))  # fixed: back in the queue
    assert ingest.queue.where("default/p") == "active"
    assert "default/p" not in ingest.undecodable


def test_gone_pods_are_announced() -> None:
    ingest, _, gone = build()
    ingest.apply(WatchEvent("nodes", "ADDED", make_node("n1")))
    ingest.apply(WatchEvent("pods", "ADDED", pod("a")))
    ingest.apply(WatchEvent("pods", "ADDED", pod("b")))
    ingest.apply(WatchEvent("pods", "MODIFIED", pod("a", node="n1")))  # bound by someone else
    ingest.apply(WatchEvent("pods", "DELETED", pod("b")))
    assert gone == ["default/a", "default/b"]


def test_a_bug_while_applying_one_event_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    ingest, _bad, _ = build()
    internal = metrics.REGISTRY.get_sample_value(
        "asched_internal_errors_total", {"phase": "ingest"}
    )

    def broken_upsert(node: Any) -> int:
        raise IndexError("table bug")

    monkeypatch.setattr(ingest.table, "upsert_node", broken_upsert)
    ingest.apply(WatchEvent("nodes", "ADDED", make_node("n1")))  # must not raise
    after = metrics.REGISTRY.get_sample_value("asched_internal_errors_total", {"phase": "ingest"})
    assert (after or 0) - (internal or 0) == 1
    ingest.apply(WatchEvent("pods", "ADDED", pod("next")))  # the next event is applied
    assert ingest.queue.where("default/next") == "active"


def test_a_decoder_bug_becomes_a_report_naming_the_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    ingest, bad, _ = build()

    def decoder_bug(raw: Any, **flags: Any) -> Any:
        raise ZeroDivisionError("decoder bug")

    monkeypatch.setattr(pod_shapes, "decode_pod", decoder_bug)  # what the ingest calls
    ingest.apply(WatchEvent("pods", "ADDED", pod("p")))
    [(name, message)] = bad
    assert name == "p"
    assert message == "Pod default/p: cannot be decoded (ZeroDivisionError: decoder bug)"


def parked_by_affinity(ingest: Ingest) -> None:
    ingest.apply(WatchEvent("pods", "ADDED", pod("waiting")))
    qp = ingest.queue.pop()
    assert qp is not None
    ingest.queue.requeue(qp, Status.unschedulable("anti-affinity", plugin="InterPodAffinity"))
    assert ingest.queue.where("default/waiting") == "unschedulable"


def test_only_a_newly_bound_pod_wakes_affinity_pods_not_its_status_updates() -> None:
    """Found in review: every update of a running pod (kubelet status) raised AssignedPodAdd
    and sent the pods InterPodAffinity rejected to backoff, again and again."""
    interests = Framework(default_config().profiles[0]).interests
    table = NodeTable()
    ingest = Ingest(
        table, Ledger(table), SchedulingQueue(clock=lambda: 0.0, interests=interests), {OURS}
    )
    ingest.apply(WatchEvent("nodes", "ADDED", make_node("n1")))
    running = pod("web", scheduler="default-scheduler", node="n1")
    ingest.apply(WatchEvent("pods", "ADDED", running))
    parked_by_affinity(ingest)
    ready = copy.deepcopy(running)
    ready["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    ingest.apply(WatchEvent("pods", "MODIFIED", ready))
    assert ingest.queue.where("default/waiting") == "unschedulable"  # before: backoff
    ingest.apply(
        WatchEvent("pods", "ADDED", pod("web-2", scheduler="default-scheduler", node="n1"))
    )
    assert ingest.queue.where("default/waiting") == "backoff"  # a new pod on a node may help


def test_a_bug_on_one_object_of_a_relist_skips_that_object_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ingest, _, _ = build()
    ingest.apply(WatchEvent("nodes", "ADDED", make_node("n1")))
    real = ingest.ledger.observe_bound

    def observe(p: Any) -> None:
        if p.name == "bad":
            raise RuntimeError("bookkeeping bug")
        real(p)

    monkeypatch.setattr(ingest.ledger, "observe_bound", observe)
    objects = [pod(n, scheduler="default-scheduler", node="n1") for n in ("a", "bad", "c")]
    ingest.apply(Relisted("pods", objects))
    assert set(ingest.table.pods) == {"default/a", "default/c"}  # before: only a
