"""PodTopologySpread in the live decision path: the incremental and cached paths stay exact.

A Deployment's replicas are scheduled one after another by
:class:`asched.engine.algorithm.Algorithm` on one table (each assumed with
``table.add_pod``, as the ledger does), so the equivalence-class cache of the row-local
plugins and the cached default selector are reused from pod to pod. Before each pod is
placed, the scalar reference evaluates the same cluster: the decision must be one of
its best nodes, with the same number of feasible nodes, or fail with its message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from asched.api.watch import Relisted, WatchEvent
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.snapshot import Snapshot
from asched.cluster.spread import SELECTOR_KINDS
from asched.cluster.table import NodeTable
from asched.cluster.workloads import SelectorSources
from asched.config.types import PodTopologySpreadArgs
from asched.engine.algorithm import Algorithm
from asched.framework.runtime import Framework
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.tools.reference import evaluate as reference_evaluate
from tests.builders import (
    controller_object,
    default_profile,
    exists,
    label_selector,
    make_node,
    make_pod,
    pod_info,
    service_object,
    spread_constraint,
)

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web", "pod-template-hash": "5d8f"}


def cluster_nodes() -> list[dict[str, Any]]:
    """Seven nodes in three zones (c is small), one without a zone, one tainted."""
    nodes = []
    for index, zone in enumerate(["a", "a", "a", "b", "b", "c", None]):
        labels = {HOST: f"n{index}"}
        if zone is not None:
            labels[ZONE] = f"zone-{zone}"
        taints = [("dedicated", "x", "NoSchedule")] if index == 4 else []
        pods = "3" if zone == "c" else "20"
        nodes.append(make_node(f"n{index}", labels=labels, taints=taints, cpu="4", pods=pods))
    return nodes


def replica(index: int, constraints: list[dict[str, Any]]) -> dict[str, Any]:
    return make_pod(f"web-{index}", labels=WEB, cpu="300m", topology_spread=constraints)


HARD_ZONE = spread_constraint(1, ZONE, "DoNotSchedule", label_selector({"app": "web"}))
SOFT_HOST = spread_constraint(1, HOST, "ScheduleAnyway", label_selector({"app": "web"}))
HARD_HOST_HONOUR_TAINTS = spread_constraint(
    2, HOST, "DoNotSchedule", exists("app"), node_taints_policy="Honor", min_domains=3
)
WEB_SERVICE = service_object("web", {"app": "web"})
WEB_REPLICASET = controller_object(
    "ReplicaSet", "web-5d8f", label_selector({"app": "web", "pod-template-hash": "5d8f"})
)

CASES = [
    pytest.param([HARD_ZONE, SOFT_HOST], [], None, id="own constraints: hard zone, soft host"),
    pytest.param(
        [HARD_HOST_HONOUR_TAINTS, SOFT_HOST], [], None, id="own: taints honoured, minDomains"
    ),
    pytest.param([], [WEB_SERVICE, WEB_REPLICASET], None, id="system defaults from a Service"),
    pytest.param(
        [],
        [WEB_REPLICASET],
        PodTopologySpreadArgs(
            "List",
            (
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"},
            ),
        ),
        id="List defaults from a ReplicaSet",
    ),
]


@pytest.mark.parametrize(("constraints", "objects", "args"), CASES)
def test_a_deployment_is_spread_as_the_reference_spreads_it(
    constraints: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    args: PodTopologySpreadArgs | None,
) -> None:
    profile = default_profile({"PodTopologySpread": args} if args is not None else None)
    nodes = [decode_node(raw) for raw in cluster_nodes()]
    table = NodeTable(capacity=4)
    for node in nodes:
        table.upsert_node(node)
    extras: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        extras.setdefault(obj["kind"], []).append(obj)
    for kind in SELECTOR_KINDS:
        table.workloads.replace(kind, extras.get(kind, ()))
    # an unrelated pod of another namespace and a terminating replica: never counted
    other = decode_pod(make_pod("other", "elsewhere", labels=WEB, node_name="n3"))
    leaving = dataclasses.replace(
        decode_pod(make_pod("web-old", labels=WEB, node_name="n0")), deleting=True
    )
    placed = [other, leaving]
    for pod in placed:
        table.add_pod(pod, pod.node_name)
    algorithm = Algorithm(Framework(profile), table, percentage=100, seed=7)
    outcomes = []
    for index in range(24):
        pod = pod_info(replica(index, constraints))
        snapshot = Snapshot(nodes=list(nodes), pods=list(placed), extras=dict(extras))
        want = reference_evaluate(snapshot, pod, profile)
        decision = algorithm.schedule(pod)
        feasible = [name for name, v in want.nodes.items() if v.feasible]
        if decision.node is None:
            assert want.selected is None
            preempted = want.preemption.message if want.preemption else ""
            assert decision.message(post_filter=preempted) == want.message
            outcomes.append(None)
            continue
        assert decision.feasible == len(feasible)
        assert decision.node in want.top
        bound = dataclasses.replace(pod, node_name=decision.node)
        table.add_pod(bound, decision.node)
        placed.append(bound)
        outcomes.append(decision.node)
    # the replicas spread: more than two nodes used, and some scheduling happened
    assert len({node for node in outcomes if node is not None}) > 2
    if not constraints:
        assert table.workloads.misses == 1  # one shape, one default selector computed


def test_default_selectors_are_cached_and_invalidated_by_selector_changes() -> None:
    sources = SelectorSources()
    pod = pod_info(make_pod("web-0", labels=WEB))
    service = service_object("web", {"app": "web"})
    sources.upsert("Service", service)
    first = sources.default_selector(pod)
    assert first.matches(WEB)
    assert not first.matches({"app": "db"})
    assert sources.default_selector(pod_info(make_pod("web-1", labels=WEB))) is first
    assert (sources.hits, sources.misses) == (1, 1)
    # a status-only update keeps the cached selector
    sources.upsert("Service", {**service, "status": {"loadBalancer": {}}})
    assert sources.default_selector(pod) is first
    assert (sources.hits, sources.misses) == (2, 1)
    # a new ReplicaSet selecting the pod narrows it: recomputed
    sources.upsert("ReplicaSet", WEB_REPLICASET)
    narrowed = sources.default_selector(pod)
    assert (sources.hits, sources.misses) == (2, 2)
    assert not narrowed.matches({"app": "web"})
    assert narrowed.matches(WEB)
    # another namespace's objects leave this namespace's cache alone
    sources.upsert("Service", service_object("web", {"app": "web"}, namespace="other"))
    assert sources.default_selector(pod) is narrowed
    # deleting both leaves no default selector
    sources.delete("Service", service)
    sources.delete("ReplicaSet", WEB_REPLICASET)
    assert sources.default_selector(pod).empty
    # a relist replaces a kind entirely
    sources.replace("Service", [service])
    assert sources.default_selector(pod).matches(WEB)
    sources.replace("Service", [])
    assert sources.default_selector(pod).empty


def test_the_cache_is_bounded() -> None:
    sources = SelectorSources(cache_limit=4)
    sources.upsert("StatefulSet", controller_object("StatefulSet", "db", exists("app")))
    for index in range(10):
        labels = {"app": "db", "statefulset.kubernetes.io/pod-name": f"db-{index}"}
        assert sources.default_selector(pod_info(make_pod(f"db-{index}", labels=labels)))
    assert sources.misses == 10
    assert sum(len(c) for c in sources._cache.values()) <= 4


def test_the_ingest_keeps_the_selecting_objects() -> None:
    table = NodeTable()
    queue = SchedulingQueue(clock=lambda: 0.0)
    ingest = Ingest(table, Ledger(table), queue, ["default-scheduler"])
    pod = pod_info(make_pod("web-0", labels=WEB))
    ingest.apply(Relisted("services", [WEB_SERVICE]))
    assert table.workloads.default_selector(pod).matches(WEB)
    ingest.apply(WatchEvent("replicasets", "ADDED", WEB_REPLICASET))
    assert not table.workloads.default_selector(pod).matches({"app": "web"})
    ingest.apply(WatchEvent("replicasets", "DELETED", WEB_REPLICASET))
    ingest.apply(WatchEvent("services", "DELETED", WEB_SERVICE))
    assert table.workloads.default_selector(pod).empty
    ingest.apply(WatchEvent("statefulsets", "MODIFIED", WEB_REPLICASET | {"kind": "StatefulSet"}))
    assert not table.workloads.default_selector(pod).empty
    ingest.apply(Relisted("statefulsets", []))
    assert table.workloads.default_selector(pod).empty
