"""The ingest decodes pods through the per-shape cache: pods of one shape still queue,
count and confirm as each one's own full decode would."""

from __future__ import annotations

import copy
from typing import Any

from asched.api.watch import WatchEvent
from asched.cluster.decode import decode_node
from asched.cluster.table import NodeTable
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.tools.bench import templates

Raw = dict[str, Any]


def _pod(name: str) -> Raw:
    raw = copy.deepcopy(templates.pod(name))
    raw["metadata"]["uid"] = f"uid-{name}"
    token = f"kube-api-access-{name}"  # a real API server's per-pod token volume
    raw["spec"]["volumes"] = [{"name": token, "projected": {"sources": []}}]
    raw["spec"]["containers"][0]["volumeMounts"] = [{"name": token, "mountPath": "/t"}]
    raw["status"] = {"phase": "Pending"}
    return raw


def _ingest() -> tuple[Ingest, NodeTable]:
    table = NodeTable()
    ingest = Ingest(table, Ledger(table), SchedulingQueue(clock=lambda: 0.0), ["default-scheduler"])
    for name in ("n1", "n2"):
        table.upsert_node(decode_node(templates.node(name)))
    return ingest, table


def test_pods_of_one_shape_queue_each_with_its_own_identity() -> None:
    ingest, _ = _ingest()
    for name in ("a", "b", "c"):
        ingest.apply(WatchEvent("pods", "ADDED", _pod(name)))
    assert (ingest.shapes.hits, ingest.shapes.misses) == (2, 1)
    assert sorted(ingest.pending) == ["default/a", "default/b", "default/c"]
    assert [ingest.pending[k].uid for k in sorted(ingest.pending)] == ["uid-a", "uid-b", "uid-c"]
    assert ingest.pending["default/c"].volumes[0].name == "kube-api-access-c"


def test_our_binding_is_confirmed_and_a_later_update_counts_the_pod_where_it_is() -> None:
    ingest, table = _ingest()
    pending = _pod("a")
    ingest.apply(WatchEvent("pods", "ADDED", pending))
    ingest.apply(WatchEvent("pods", "ADDED", _pod("b")))  # a second pod of the shape
    ingest.ledger.assume(ingest.pending["default/a"], "n1")
    bound = copy.deepcopy(pending)
    bound["spec"]["nodeName"] = "n1"
    ingest.apply(WatchEvent("pods", "MODIFIED", bound))  # the echo of our binding
    assert ingest.ledger.node_of("default/a") is None  # confirmed: left the ledger
    assert "default/a" not in ingest.pending
    assert table.pods["default/a"].row == table.row_of("n1")
    running = copy.deepcopy(bound)
    running["status"] = {"phase": "Running"}
    ingest.apply(WatchEvent("pods", "MODIFIED", running))  # decoded, from its shape
    assert ingest.shapes.hits == 2
    assert table.pods["default/a"].row == table.row_of("n1")  # still counted once, there
    assert ingest.queue.where("default/a") is None
    # someone else binds b elsewhere: counted where it really is
    other = _pod("b")
    other["spec"]["nodeName"] = "n2"
    ingest.apply(WatchEvent("pods", "MODIFIED", other))
    assert table.pods["default/b"].row == table.row_of("n2")
    assert "default/b" not in ingest.pending
