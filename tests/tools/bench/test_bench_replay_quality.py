"""Placement quality by replay, differentially against the explain engine; invariants.

The observer is fed watch events directly (no server); the replay's regret must equal
the explain engine's best total minus the chosen node's total, computed the slow way.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.explain.engine import evaluate_table
from asched.tools.bench import templates
from asched.tools.bench.observe import PHASE_LABEL, Observer
from asched.tools.bench.quality import replay
from asched.tools.bench.schedulers import asched_config
from tests.configs import load_config

PROFILE = load_config(asched_config(100)).profiles[0]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pod(name: str, *, cpu: str = "100m", node: str = "", phase: str = "measured") -> dict[str, Any]:
    raw = templates.pod(name, cpu=cpu, node_name=node or None)
    raw["metadata"]["uid"] = f"uid-{name}"
    raw["metadata"]["labels"][PHASE_LABEL] = phase
    return raw


def observer_with(nodes: list[dict[str, Any]]) -> tuple[Observer, FakeClock]:
    clock = FakeClock()
    observer = Observer(rest=None, clock=clock)  # type: ignore[arg-type]
    for node in nodes:
        observer._node_event("ADDED", node, initial=True)
    return observer, clock


def bind(observer: Observer, clock: FakeClock, raw: dict[str, Any], node: str, at: float) -> None:
    clock.now = at - 0.5
    observer._pod_event("ADDED", raw, clock.now)
    clock.now = at
    bound = {**raw, "spec": {**raw["spec"], "nodeName": node}}
    observer._pod_event("MODIFIED", bound, clock.now)


def test_regret_matches_the_explain_engine() -> None:
    # n-a is empty, n-b already runs a 2-CPU init pod: every default score prefers n-a.
    observer, clock = observer_with([templates.node("n-a"), templates.node("n-b")])
    bind(observer, clock, pod("init-0", cpu="2", phase="init"), "n-b", 1.0)
    observer.mark("measure-start")
    bind(observer, clock, pod("m-0"), "n-b", 2.0)  # the worse node
    bind(observer, clock, pod("m-1"), "n-a", 3.0)  # the better node (after m-0)
    observer.mark("measure-end")

    # The slow way: rebuild the table as it was before m-0, evaluate every node.
    table = NodeTable()
    for raw in (templates.node("n-a"), templates.node("n-b")):
        table.upsert_node(decode_node(raw))
    init = decode_pod(pod("init-0", cpu="2", node="n-b", phase="init"))
    table.add_pod(init, "n-b")
    evaluation = evaluate_table(table, decode_pod(pod("m-0")), PROFILE)
    totals = {name: v.total for name, v in evaluation.nodes.items()}
    expected_m0 = max(totals.values()) - totals["n-b"]
    assert expected_m0 > 0

    result = replay(observer, PROFILE)
    assert result.quality is not None
    assert result.measured_seen == 2
    # m-1 went to n-a, still the best after m-0 landed on n-b: regret 0.
    assert sorted(result.quality.regrets) == [0, expected_m0]
    assert result.quality.regret_max == expected_m0
    assert result.quality.zero_regret_fraction == 0.5
    assert result.overcommitted == []


def test_events_after_measure_end_are_not_replayed() -> None:
    observer, clock = observer_with([templates.node("n-a")])
    observer.mark("measure-start")
    bind(observer, clock, pod("m-0"), "n-a", 1.0)
    observer.mark("measure-end")
    bind(observer, clock, pod("ceiling-0", phase="ceiling", cpu="9"), "n-a", 2.0)
    result = replay(observer, PROFILE)
    assert result.measured_seen == 1
    assert result.overcommitted == []  # the 9-CPU ceiling pod came after the end


def test_overcommitted_nodes_are_reported() -> None:
    # Two 3-CPU pods on a 4-CPU node: 6000m requested > 4000m allocatable.
    observer, clock = observer_with([templates.node("n-a")])
    observer.mark("measure-start")
    bind(observer, clock, pod("m-0", cpu="3"), "n-a", 1.0)
    bind(observer, clock, pod("m-1", cpu="3"), "n-a", 2.0)
    observer.mark("measure-end")
    result = replay(observer, PROFILE, evaluate=False)
    assert [(o.node, o.resource, o.requested, o.allocatable) for o in result.overcommitted] == [
        ("n-a", "cpu", 6000, 4000)
    ]


def test_balance_and_fragmentation() -> None:
    # n-a holds 3 x 1 CPU, n-b 1 x 1 CPU: utilisation 0.75 and 0.25, mean 0.5, std-dev 0.25.
    # 1-CPU pods that still fit: 1 on n-a + 3 on n-b = 4; pooled: 4000m free / 1000m = 4.
    observer, clock = observer_with([templates.node("n-a"), templates.node("n-b")])
    observer.mark("measure-start")
    for number, node in enumerate(["n-a", "n-a", "n-a", "n-b"]):
        bind(observer, clock, pod(f"m-{number}", cpu="1"), node, 1.0 + number)
    observer.mark("measure-end")
    q = replay(observer, PROFILE).quality
    assert q is not None
    assert q.cpu_utilisation_mean == pytest.approx(0.5)
    assert q.balance_cpu_stddev == pytest.approx(0.25)
    assert q.largest_shape["cpu"] == 1000
    assert (q.fits_more, q.fits_if_pooled) == (4, 4)
    assert q.fragmentation == pytest.approx(0.0)


def test_a_second_node_name_is_a_rebind() -> None:
    observer, clock = observer_with([templates.node("n-a"), templates.node("n-b")])
    raw = pod("m-0")
    bind(observer, clock, raw, "n-a", 1.0)
    moved = {**raw, "spec": {**raw["spec"], "nodeName": "n-b"}}
    observer._pod_event("MODIFIED", moved, 2.0)
    assert observer.rebinds == [("default/m-0", "n-a", "n-b")]
    # The same node again is not a rebind, and the bind time is the first one seen.
    observer._pod_event("MODIFIED", {**raw, "spec": {**raw["spec"], "nodeName": "n-a"}}, 3.0)
    assert len(observer.rebinds) == 1
    record = observer.pods["uid-m-0"]
    assert (record.added, record.bound) == (0.5, 1.0)
    assert observer.bound["measured"] == 1


def test_deleted_pods_leave_the_table() -> None:
    # Churn: a pod bound then deleted no longer counts on its node.
    observer, clock = observer_with([templates.node("n-a")])
    observer.mark("measure-start")
    churned = pod("c-0", cpu="3", phase="churn")
    bind(observer, clock, churned, "n-a", 1.0)
    observer._pod_event("DELETED", churned, 1.5)
    bind(observer, clock, pod("m-0", cpu="3"), "n-a", 2.0)
    observer.mark("measure-end")
    result = replay(observer, PROFILE, evaluate=False)
    assert result.overcommitted == []


def test_queue_order_removes_the_noise_of_bind_order() -> None:
    # n-b already runs a 100m init pod. The scheduler takes A, then B (arrival order): A goes
    # to the empty n-a (best); then both nodes hold 100m and B's n-b is a best node too.
    # The bindings commit B first. Replayed in bind order, B is judged against a table
    # without A, where n-a is strictly better: a spurious regret. In queue order: none.
    def observed() -> Observer:
        observer, clock = observer_with([templates.node("n-a"), templates.node("n-b")])
        bind(observer, clock, pod("init-0", phase="init"), "n-b", 1.0)
        observer.mark("measure-start")
        a, b = pod("a"), pod("b")
        observer._pod_event("ADDED", a, 2.0)
        observer._pod_event("ADDED", b, 2.1)
        for raw, node, at in ((b, "n-b", 3.0), (a, "n-a", 3.1)):
            observer._pod_event("MODIFIED", {**raw, "spec": {**raw["spec"], "nodeName": node}}, at)
        observer.mark("measure-end")
        return observer

    queued = replay(observed(), PROFILE, order="queue").quality
    by_bind = replay(observed(), PROFILE, order="bind").quality
    assert queued is not None
    assert by_bind is not None
    assert queued.regrets == [0, 0]
    assert sorted(by_bind.regrets)[0] == 0
    assert sorted(by_bind.regrets)[1] > 0
