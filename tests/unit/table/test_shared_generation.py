"""Which changes move NodeTable.shared_generation (asched.framework.pre_state).

It must move on every change a pod's PreFilter or PreScore may read but the plain pods
on the nodes: a node added, updated or removed, a resource axis, a pod with affinity
terms or volumes counted or taken off, the storage objects, the namespaces' labels and
the workloads (the last two noted by the Ingest). A plain pod counted or taken off, an
assumption included, must not move it: that is what lets an extender conclusion reuse
its decision's state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from asched.api.watch import Relisted, WatchEvent
from asched.cluster.decode import decode_pod
from asched.cluster.table import NodeTable
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.tools.bench import templates
from tests.builders import make_pod

Raw = dict[str, Any]


def bound(raw: Raw, node: str, uid: str) -> Raw:
    raw["spec"]["nodeName"] = node
    raw["metadata"].update(uid=uid, resourceVersion="5")
    return raw


PLAIN = bound(make_pod("plain", cpu="100m"), "n0", "u-plain")
ANTI = bound(
    make_pod(
        "anti",
        cpu="100m",
        pod_anti_affinity={
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
            ]
        },
    ),
    "n0",
    "u-anti",
)
WITH_VOLUME = bound(
    make_pod("vol", cpu="100m", volumes=[{"name": "scratch", "emptyDir": {}}]), "n0", "u-vol"
)
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {}}}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"selector": {"app": "web"}},
}
NODE_RELABELLED = templates.node("n0", zone="z2")


def _events(*events: WatchEvent | Relisted) -> Callable[[Ingest], None]:
    def apply(ingest: Ingest) -> None:
        for event in events:
            ingest.apply(copy.deepcopy(event))

    return apply


@pytest.mark.parametrize(
    ("change", "moves"),
    [
        pytest.param(_events(WatchEvent("pods", "ADDED", PLAIN)), False, id="a plain pod"),
        pytest.param(
            _events(WatchEvent("pods", "ADDED", PLAIN), WatchEvent("pods", "DELETED", PLAIN)),
            False,
            id="a plain pod, then gone",
        ),
        pytest.param(
            _events(WatchEvent("pods", "ADDED", ANTI)), True, id="a pod with anti-affinity"
        ),
        pytest.param(
            _events(WatchEvent("pods", "ADDED", WITH_VOLUME)), True, id="a pod with a volume"
        ),
        pytest.param(
            _events(WatchEvent("nodes", "MODIFIED", NODE_RELABELLED)), True, id="a node update"
        ),
        pytest.param(
            _events(WatchEvent("nodes", "ADDED", templates.node("n9"))), True, id="a node added"
        ),
        pytest.param(_events(WatchEvent("namespaces", "ADDED", NAMESPACE)), True, id="a namespace"),
        pytest.param(_events(Relisted("namespaces", [NAMESPACE])), True, id="namespaces relist"),
        pytest.param(_events(WatchEvent("services", "ADDED", SERVICE)), True, id="a service"),
    ],
)
def test_what_moves_the_shared_generation(change: Callable[[Ingest], None], moves: bool) -> None:
    table = NodeTable()
    ingest = Ingest(table, Ledger(table), SchedulingQueue(clock=lambda: 0.0), ["default-scheduler"])
    ingest.apply(WatchEvent("nodes", "ADDED", templates.node("n0", zone="z1")))
    before = table.shared_generation
    change(ingest)
    assert (table.shared_generation != before) == moves


def test_an_assumption_of_a_plain_pod_keeps_it() -> None:
    """The scheduler's own assume and forget of a plain pod (what happens between an
    extender consultation's decision and its conclusion) leave it where it was."""
    table = NodeTable()
    ledger = Ledger(table)
    ingest = Ingest(table, ledger, SchedulingQueue(clock=lambda: 0.0), ["default-scheduler"])
    ingest.apply(WatchEvent("nodes", "ADDED", templates.node("n0")))
    before = table.shared_generation
    pod = decode_pod(make_pod("p", cpu="100m"))
    ledger.assume(pod, "n0")
    assert table.shared_generation == before
    ledger.forget(pod.key)
    assert table.shared_generation == before
