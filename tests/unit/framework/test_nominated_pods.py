"""Nominated pods hold their room (upstream: RunFilterPluginsWithNominatedPods), in both of the engine's ways of checking.

A pod nominated to a node by preemption counts there against pods of at most its
priority, not against higher ones; the nominated pod itself goes to its node when it
fits. The vectorised check (resources held back from the free columns) runs when only
NodeResourcesFit depends on a node's pods; with host ports or a cross-row filter the
nominated pods are counted in a what-if of the table instead. Both must agree.

Nodes: n1 and n2, 1 CPU each; n2 already runs 600m. A pod nominated to n1 asks 600m.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.framework.runtime import Framework
from tests.builders import default_profile, make_node, make_pod, with_pod_fields

ANTI_NOTHING = {
    # a cross-row filter that never rejects: sends the check down the table path
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"absent": "x"}}, "topologyKey": "kubernetes.io/hostname"}
    ]
}


def _table() -> NodeTable:
    table = NodeTable()
    for name in ("n1", "n2"):
        table.upsert_node(decode_node(make_node(name, cpu="1", memory="1Gi")))
    table.add_pod(decode_pod(make_pod("busy", cpu="600m", node_name="n2")), "n2")
    nominee = decode_pod(
        with_pod_fields(make_pod("nominee", cpu="600m", priority=100), nominated_node="n1")
    )
    table.nominations.set(nominee, "n1")
    return table


@pytest.mark.parametrize("path", ["vectorised", "table"])
@pytest.mark.parametrize(
    ("case", "priority", "cpu", "expected"),
    [
        # 500m + the nominee's 600m > 1000m on n1; n2 has 400m free: nowhere
        ("lower priority: the nominee's room is held", 50, "500m", None),
        # same priority counts too (>=)
        ("equal priority: held as well", 100, "500m", None),
        # higher priority ignores the nomination: n1 (1000m free) is the only fit
        ("higher priority: the nomination does not count", 200, "500m", {"n1"}),
        # 300m fits beside the nominee on n1 (900m) and on n2 (900m): both feasible
        ("small pods still fit beside it", 50, "300m", {"n1", "n2"}),
    ],
)
def test_nominated_pods_hold_room(
    path: str, case: str, priority: int, cpu: str, expected: Any
) -> None:
    table = _table()
    extra = {"pod_anti_affinity": ANTI_NOTHING} if path == "table" else {}
    pod = decode_pod(make_pod("incoming", cpu=cpu, priority=priority, **extra))
    algorithm = Algorithm(Framework(default_profile()), table, percentage=100, seed=1)
    marks = (table.generation, table.shared_generation, table.change_mark, table.epoch)
    decision = algorithm.schedule(pod)
    # the check left no trace: the table's generations and change log never moved
    assert (table.generation, table.shared_generation, table.change_mark, table.epoch) == marks
    if expected is None:
        assert decision.node is None, case
        # n1 fails only with the nominee counted (pass 1), n2 outright
        assert "2 Insufficient cpu" in decision.message(), case
    else:
        assert decision.feasible == len(expected), case  # percentage 100: every node counted
        assert decision.node in expected, case
    # the check left the table exactly as it was: the nominee is not counted anywhere
    assert "default/nominee" not in table.pods


@pytest.mark.parametrize("path", ["vectorised", "table"])
def test_the_nominee_goes_to_its_nominated_node(path: str) -> None:
    table = _table()
    extra = {"pod_anti_affinity": ANTI_NOTHING} if path == "table" else {}
    nominee = decode_pod(
        with_pod_fields(make_pod("nominee", cpu="300m", priority=100, **extra), nominated_node="n2")
    )
    table.nominations.set(nominee, "n2")  # replaces _table()'s nomination of the same pod
    algorithm = Algorithm(Framework(default_profile()), table, percentage=100, seed=1)
    # the empty n1 scores higher (least allocated), but the nominated n2 (400m free fits
    # 300m) is tried first and taken
    assert {algorithm.schedule(nominee).node for _ in range(8)} == {"n2"}
