"""The evaluation as a whole: weights, totals, the tie-break, messages, the default profile."""

from __future__ import annotations

import numpy as np
import pytest

from asched.framework.status import Code
from tests.builders import (
    default_profile,
    make_node,
    make_pod,
    outcome,
    pod_info,
    profile_with,
    snapshot_of,
)

DEFAULT_WEIGHTS = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}


def test_zero_nodes(evaluate) -> None:
    evaluation = evaluate(snapshot_of([]), pod_info(make_pod("web", "shop")), default_profile())
    assert evaluation.pod == "shop/web"
    assert evaluation.profile == "default-scheduler"
    assert (evaluation.nodes, evaluation.selected, evaluation.top) == ({}, None, ())
    # the weights describe the profile, not the nodes: present even with no node
    assert evaluation.weights["TaintToleration"] == 3
    assert evaluation.message == "no nodes available to schedule pods"


def test_default_profile_worked_example(evaluate) -> None:
    # pod: 1 cpu, 2Gi; nodes: 4 cpu, 8Gi; n2 has one PreferNoSchedule taint.
    # TaintToleration: raw n1 0, n2 1 -> reverse-normalized 100, 0 (weight 3)
    # NodeAffinity: no preferred terms -> absent; PodTopologySpread, InterPodAffinity: absent
    # NodeResourcesFit: (4000 - 1000) * 100 / 4000 = 75, (8Gi - 2Gi) * 100 / 8Gi = 75 -> 75
    # BalancedAllocation: fractions 0.25, 0.25 -> std 0 -> 100
    # ImageLocality: no node holds the image -> 0
    # totals: n1 3 * 100 + 75 + 100 + 0 = 475; n2 3 * 0 + 75 + 100 + 0 = 175
    nodes = [
        make_node("n1", cpu="4", memory="8Gi"),
        make_node("n2", cpu="4", memory="8Gi", taints=[("spot", "true", "PreferNoSchedule")]),
    ]
    evaluation = evaluate(
        snapshot_of(nodes), pod_info(make_pod(cpu="1", memory="2Gi")), default_profile()
    )
    assert evaluation.weights == DEFAULT_WEIGHTS
    assert dict(evaluation.nodes["n1"].scores) == {
        "TaintToleration": 100,
        "NodeResourcesFit": 75,
        "NodeResourcesBalancedAllocation": 100,
        "ImageLocality": 0,
    }
    assert [evaluation.nodes[n].total for n in ("n1", "n2")] == [475, 175]
    assert (evaluation.top, evaluation.selected, evaluation.message) == (("n1",), "n1", None)


@pytest.mark.parametrize("seed", range(6))
def test_ties_are_broken_by_the_seeded_generator(evaluate, seed) -> None:
    # identical nodes, identical totals: top is all of them in snapshot order
    nodes = [make_node(name) for name in ("a", "b", "c", "d")]
    evaluation = evaluate(
        snapshot_of(nodes), pod_info(make_pod(cpu="1")), default_profile(), seed=seed
    )
    assert evaluation.top == ("a", "b", "c", "d")
    want = evaluation.top[int(np.random.default_rng(seed).integers(4))]
    assert evaluation.selected == want


def test_infeasible_nodes_have_no_scores_and_are_not_in_top(evaluate) -> None:
    nodes = [make_node("small", cpu="1"), make_node("big-1", cpu="8"), make_node("big-2", cpu="8")]
    evaluation = evaluate(snapshot_of(nodes), pod_info(make_pod(cpu="2")), default_profile())
    small = evaluation.nodes["small"]
    assert (small.feasible, dict(small.scores), small.total) == (False, {}, 0)
    assert outcome(evaluation, "small") == (
        "NodeResourcesFit",
        Code.UNSCHEDULABLE,
        ("Insufficient cpu",),
    )
    assert evaluation.top == ("big-1", "big-2")
    assert evaluation.selected in evaluation.top


def test_a_single_feasible_node_is_still_scored(evaluate) -> None:
    nodes = [make_node("only", cpu="4", memory="8Gi")]
    evaluation = evaluate(
        snapshot_of(nodes), pod_info(make_pod(cpu="1", memory="2Gi")), default_profile()
    )
    # 3 * 100 (no taints) + 75 + 100 + 0
    assert evaluation.nodes["only"].total == 475
    assert evaluation.selected == "only"


def test_without_score_plugins_every_feasible_node_ties_at_zero(evaluate) -> None:
    nodes = [make_node("a"), make_node("b")]
    evaluation = evaluate(
        snapshot_of(nodes), pod_info(make_pod()), profile_with(filter=("NodeName",))
    )
    assert evaluation.weights == {}
    assert [evaluation.nodes[n].total for n in ("a", "b")] == [0, 0]
    assert evaluation.top == ("a", "b")


def test_filter_order_decides_which_plugin_reports(evaluate) -> None:
    # the node is cordoned, tainted and too small: NodeUnschedulable runs first
    node = make_node("n", cpu="1", unschedulable=True, taints=[("x", "y", "NoSchedule")])
    evaluation = evaluate(snapshot_of([node]), pod_info(make_pod(cpu="2")), default_profile())
    assert outcome(evaluation, "n") == (
        "NodeUnschedulable",
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) were unschedulable",),
    )
    assert evaluation.message == (
        "0/1 nodes are available: 1 node(s) were unschedulable. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_profile_name_and_custom_weights(evaluate) -> None:
    nodes = [make_node("a", cpu="4", memory="8Gi")]
    profile = profile_with(score=(("NodeResourcesFit", 7),), scheduler_name="packer")
    evaluation = evaluate(snapshot_of(nodes), pod_info(make_pod(cpu="1", memory="2Gi")), profile)
    assert evaluation.profile == "packer"
    assert evaluation.weights == {"NodeResourcesFit": 7}
    # 7 * 75
    assert evaluation.nodes["a"].total == 525
