"""Watch events of a parked pod, through the single writer (Ingest) into the queue.

The event the scheduler's own PodScheduled write brings back, and a relist, must leave a
parked pod parked; a change of its spec gives it another chance (upstream's
``updatePodInSchedulingQueue`` with ``isPodUpdated``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from asched.api.watch import Relisted, WatchEvent
from asched.cluster.table import NodeTable
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.tools.bench import templates

Raw = dict[str, Any]
KEY = "default/p"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _own_write(raw: Raw) -> None:
    raw["metadata"]["resourceVersion"] = "11"
    raw["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient cpu.",
                "lastTransitionTime": "2024-05-01T12:00:00Z",
            }
        ],
    }


def _labels(raw: Raw) -> None:
    raw["metadata"]["resourceVersion"] = "12"
    raw["metadata"]["labels"]["tier"] = "web"


@pytest.mark.parametrize(
    ("edit", "event", "where"),
    [
        pytest.param(_own_write, "MODIFIED", "unschedulable", id="own status write"),
        pytest.param(_own_write, "relist", "unschedulable", id="relist with the write"),
        pytest.param(lambda raw: None, "relist", "unschedulable", id="relist, unchanged"),
        # 1 attempt -> 1 s backoff from the requeue, 5 s ago: straight to activeQ
        pytest.param(_labels, "MODIFIED", "active", id="label change"),
    ],
)
def test_watch_event_of_a_parked_pod(edit: Callable[[Raw], None], event: str, where: str) -> None:
    clock = FakeClock()
    table = NodeTable()
    queue = SchedulingQueue(clock=clock)
    ingest = Ingest(table, Ledger(table), queue, ["default-scheduler"])
    raw = templates.pod("p", cpu="9")
    raw["metadata"].update(uid="u-1", resourceVersion="10")
    ingest.apply(WatchEvent("pods", "ADDED", copy.deepcopy(raw)))
    qp = queue.pop()
    assert qp is not None
    queue.requeue(qp, Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit"))
    clock.now += 5
    edit(raw)
    if event == "relist":
        ingest.apply(Relisted("pods", [raw]))
    else:
        ingest.apply(WatchEvent("pods", event, raw))
    assert queue.where(KEY) == where
    assert ingest.pending[KEY].scheduled_condition == (
        ("False", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")
        if edit is _own_write
        else None
    )
