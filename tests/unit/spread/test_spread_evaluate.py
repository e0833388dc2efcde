"""PodTopologySpread inside whole evaluations: both implementations, the Error paths.

A constraint that does not decode is an Error: at PreFilter (DoNotSchedule) it ends the
evaluation for every node; at PreScore (ScheduleAnyway) it ends it only when some node
is feasible (upstream's PreScore sees the feasible nodes only). Either way nothing is
selected and the message is the error itself, not a ``0/N nodes are available`` one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.engine.result import Evaluation
from asched.framework.status import Code
from tests.builders import (
    default_profile,
    expr,
    label_selector,
    make_node,
    make_pod,
    pod_info,
    scores_of,
    service_object,
    snapshot_of,
    spread_constraint,
)

Evaluate = Callable[..., Evaluation]
HOST = "kubernetes.io/hostname"
BAD_SELECTOR = label_selector(None, expr("app", "Equals", "web"))
NODES = [make_node(n, labels={HOST: n}, cpu="2") for n in ("n1", "n2")]


@pytest.fixture(params=["reference", "vectorised"])
def evaluate(request: Any) -> Evaluate:
    if request.param == "reference":
        from asched.tools.reference import evaluate as reference

        return reference
    from asched.explain.engine import evaluate as vectorised

    return vectorised


def test_a_hard_constraint_that_does_not_decode_ends_the_evaluation(evaluate: Evaluate) -> None:
    pod = make_pod("p", topology_spread=[spread_constraint(1, HOST, "DoNotSchedule", BAD_SELECTOR)])
    evaluation = evaluate(snapshot_of(NODES), pod_info(pod), default_profile())
    assert evaluation.selected is None
    assert {v.code for v in evaluation.nodes.values()} == {Code.ERROR}
    assert {v.plugin for v in evaluation.nodes.values()} == {"PodTopologySpread"}
    assert evaluation.message is not None
    assert evaluation.message.startswith(
        "obtaining pod's hard topology spread constraints: Pod default/p"
    )


def test_a_soft_constraint_that_does_not_decode_ends_the_evaluation(evaluate: Evaluate) -> None:
    pod = make_pod(
        "p",
        cpu="1",
        topology_spread=[spread_constraint(1, HOST, "ScheduleAnyway", BAD_SELECTOR)],
    )
    nodes = [*NODES, make_node("small", labels={HOST: "small"}, cpu="500m")]
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), default_profile())
    assert evaluation.selected is None
    assert evaluation.message is not None
    assert evaluation.message.startswith("calculating preScoreState: Pod default/p")
    assert [evaluation.nodes[n].code for n in ("n1", "n2")] == [Code.ERROR, Code.ERROR]
    assert evaluation.nodes["small"].plugin == "NodeResourcesFit"


def test_a_soft_constraint_that_does_not_decode_is_harmless_when_nothing_fits(
    evaluate: Evaluate,
) -> None:
    pod = make_pod(
        "p", cpu="4", topology_spread=[spread_constraint(1, HOST, "ScheduleAnyway", BAD_SELECTOR)]
    )
    evaluation = evaluate(snapshot_of(NODES), pod_info(pod), default_profile())
    # every pod has priority 0: preemption finds no lower-priority victim anywhere
    assert evaluation.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


def test_a_service_gives_the_default_constraints(evaluate: Evaluate) -> None:
    # system defaults: hostname (maxSkew 3) and zone (5); the nodes have no zone, so only
    # hostname counts (and, under the System defaults, they are not ignored). n1 holds two
    # web pods: raw n1 = round(2 * ln 4 + 2) = 5, n2 = round(0 + 2) = 2;
    # normalized 100 * (5 + 2 - s) // 5 -> n1 40, n2 100
    pods = [make_pod(f"w{i}", labels={"app": "web"}, node_name="n1") for i in range(2)]
    objects = [*pods, service_object("web", {"app": "web"})]
    evaluation = evaluate(
        snapshot_of(NODES, objects),
        pod_info(make_pod("p", labels={"app": "web"})),
        default_profile(),
    )
    assert scores_of(evaluation, "PodTopologySpread") == {"n1": 40, "n2": 100}
    # without the Service the pod has no constraints: the plugin's score is absent
    evaluation = evaluate(
        snapshot_of(NODES, pods), pod_info(make_pod("p", labels={"app": "web"})), default_profile()
    )
    assert scores_of(evaluation, "PodTopologySpread") == {"n1": None, "n2": None}
