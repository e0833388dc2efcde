"""TaintToleration Filter and Score.

Cases transcribed from upstream ``tainttoleration/taint_toleration_test.go``
(TestTaintTolerationScore, TestTaintTolerationFilter), without the v1.35 numeric
``Gt``/``Lt`` toleration cases. The filter reason is the v1.28-v1.33 one, naming the
first untolerated taint: ``node(s) had untolerated taint {key: value}``.
Score: raw = number of PreferNoSchedule taints not tolerated (by tolerations with
effect PreferNoSchedule or empty), normalized in reverse: 100 - 100 * raw // max(raw).
"""

from __future__ import annotations

import pytest

from asched.framework.status import Code
from tests.builders import (
    FITS,
    make_node,
    make_pod,
    outcome,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
    toleration,
)

TAINTS = "TaintToleration"
PREFER = "PreferNoSchedule"


def untolerated(key: str, value: str) -> tuple[str, Code, tuple[str, ...]]:
    return (
        TAINTS,
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        (f"node(s) had untolerated taint {{{key}: {value}}}",),
    )


SCORE_CASES = [
    # nodeA: foo=bar tolerated -> raw 0; nodeB: foo=blah not tolerated -> raw 1 (the max)
    # normalized: nodeA 100 - 0 = 100, nodeB 100 - 100 * 1 / 1 = 0
    pytest.param(
        [toleration("foo", "Equal", "bar", PREFER)],
        {"nodeA": [("foo", "bar", PREFER)], "nodeB": [("foo", "blah", PREFER)]},
        {"nodeA": 100, "nodeB": 0},
        id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
    ),
    # every taint tolerated: all raw 0 -> reverse normalization gives 100 to all
    pytest.param(
        [
            toleration("cpu-type", "Equal", "arm64", PREFER),
            toleration("disk-type", "Equal", "ssd", PREFER),
        ],
        {
            "nodeA": [],
            "nodeB": [("cpu-type", "arm64", PREFER)],
            "nodeC": [("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 100},
        id="the nodes that all of their taints are tolerated by the pod, get the same score",
    ),
    # raw 0, 1, 2 -> 100 - 0, 100 - 50, 100 - 100
    pytest.param(
        [toleration("foo", "Equal", "bar", PREFER)],
        {
            "nodeA": [],
            "nodeB": [("cpu-type", "arm64", PREFER)],
            "nodeC": [("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)],
        },
        {"nodeA": 100, "nodeB": 50, "nodeC": 0},
        id="the more intolerable taints a node has, the lower score it gets",
    ),
    # NoSchedule tolerations do not count for scoring, NoSchedule taints are not scored:
    # raw 0, 0, 2 -> 100, 100, 0
    pytest.param(
        [
            toleration("cpu-type", "Equal", "arm64", "NoSchedule"),
            toleration("disk-type", "Equal", "ssd", "NoSchedule"),
        ],
        {
            "nodeA": [],
            "nodeB": [("cpu-type", "arm64", "NoSchedule")],
            "nodeC": [("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)],
        },
        {"nodeA": 100, "nodeB": 100, "nodeC": 0},
        id="only taints and tolerations that have effect PreferNoSchedule are checked",
    ),
    pytest.param(
        [],
        {"nodeA": [], "nodeB": [("cpu-type", "arm64", PREFER)]},
        {"nodeA": 100, "nodeB": 0},
        id="Default behaviour No taints and tolerations, lands on node with no taints",
    ),
    # asched: a toleration with an empty effect also counts for scoring
    pytest.param(
        [toleration("cpu-type", "Exists")],
        {"nodeA": [("cpu-type", "arm64", PREFER)], "nodeB": [("disk-type", "ssd", PREFER)]},
        {"nodeA": 100, "nodeB": 0},
        id="a toleration with an empty effect tolerates PreferNoSchedule taints",
    ),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"), SCORE_CASES)
def test_taint_toleration_score(evaluate, tolerations, taints, want) -> None:
    nodes = [make_node(name, taints=node_taints) for name, node_taints in taints.items()]
    pod = make_pod("pod1", tolerations=tolerations)
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), profile_with(score=((TAINTS, 3),)))
    assert scores_of(evaluation, TAINTS) == want


FILTER_CASES = [
    pytest.param(
        [],
        [("dedicated", "user1", "NoSchedule")],
        untolerated("dedicated", "user1"),
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        [toleration("dedicated", "", "user1", "NoSchedule")],
        [("dedicated", "user1", "NoSchedule")],
        FITS,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
    ),
    pytest.param(
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [("dedicated", "user1", "NoSchedule")],
        untolerated("dedicated", "user1"),
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
    ),
    pytest.param(
        [toleration("foo", "Exists", effect="NoSchedule")],
        [("foo", "bar", "NoSchedule")],
        FITS,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists",
    ),
    pytest.param(
        [
            toleration("dedicated", "Equal", "user2", "NoSchedule"),
            toleration("foo", "Exists", effect="NoSchedule"),
        ],
        [("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")],
        FITS,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
    ),
    pytest.param(
        [toleration("foo", "Equal", "bar", PREFER)],
        [("foo", "bar", "NoSchedule")],
        untolerated("foo", "bar"),
        id="A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match",
    ),
    pytest.param(
        [toleration("foo", "Equal", "bar")],
        [("foo", "bar", "NoSchedule")],
        FITS,
        id="The pod has a toleration that keys and values match the taint, the effect of toleration is empty",
    ),
    pytest.param(
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [("dedicated", "user1", PREFER)],
        FITS,
        id="The taint on node is PreferNoSchedule: the pod can be scheduled onto the node",
    ),
    pytest.param(
        [],
        [("dedicated", "user1", PREFER)],
        FITS,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule",
    ),
    # asched: NoExecute filters too, and the first untolerated taint in node order is named
    pytest.param(
        [toleration("a", "Exists")],
        [
            ("a", "1", "NoExecute"),
            ("b", "2", PREFER),
            ("c", "", "NoExecute"),
            ("d", "4", "NoSchedule"),
        ],
        untolerated("c", ""),
        id="the first untolerated NoSchedule or NoExecute taint is named, empty value included",
    ),
    # asched: an empty key with Exists tolerates every taint
    pytest.param(
        [toleration(operator="Exists")],
        [("a", "1", "NoExecute"), ("d", "4", "NoSchedule")],
        FITS,
        id="an empty key with operator Exists tolerates everything",
    ),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"), FILTER_CASES)
def test_taint_toleration_filter(evaluate, tolerations, taints, want) -> None:
    node = make_node("nodeA", taints=taints)
    pod = make_pod("pod1", tolerations=tolerations)
    evaluation = evaluate(snapshot_of([node]), pod_info(pod), profile_with(filter=(TAINTS,)))
    assert outcome(evaluation, "nodeA") == want


def test_filter_message_counts_each_named_taint(evaluate) -> None:
    # two nodes name {dedicated: user1}, one {gpu: }: "1 ..." sorts before "2 ..."
    nodes = [
        make_node("n1", taints=[("dedicated", "user1", "NoSchedule")]),
        make_node("n2", taints=[("dedicated", "user1", "NoSchedule")]),
        make_node("n3", taints=[("gpu", "", "NoExecute")]),
    ]
    evaluation = evaluate(snapshot_of(nodes), pod_info(make_pod()), profile_with(filter=(TAINTS,)))
    assert evaluation.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: }, "
        "2 node(s) had untolerated taint {dedicated: user1}."
    )
