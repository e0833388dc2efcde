"""PodTopologySpread PreScore + Score + NormalizeScore: the reference and the vectorised plugin.

Cases transcribed from upstream ``podtopologyspread/scoring_test.go``: TestPodTopologySpreadScore
(26 of 27: "matchLabelKeys ignored when feature gate disabled" is left out) with
``defaultingType: System``, plus TestPreScoreSkip (2) and the weights of
TestPreScoreStateEmptyNodes (4 of its cases).

Raw score (upstream: pkg/scheduler/framework/plugins/podtopologyspread/scoring.go) = round_half_away(sum over the node's keys of
``count * ln(size + 2) + (maxSkew - 1)``), where ``size`` is the number of domains among
the scored nodes (for kubernetes.io/hostname: the scored, not ignored, nodes) and
``count`` the matching pods of the node's domain over *all* nodes (for hostname: on the
node itself). Normalized = 100 * (max + min - raw) // max over the not ignored nodes;
ignored nodes (missing a key) get 0. ln 3 = 1.0986, ln 4 = 1.3863, ln 5 = 1.6094,
ln 6 = 1.7918.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from asched.config.types import PodTopologySpreadArgs
from asched.framework.status import Code
from asched.tools.reference import topologyspread
from asched.tools.reference.crosspod import ScoreResult
from tests.builders import (
    bound_pod,
    cluster_inputs,
    controller_object,
    exists,
    expr,
    label_selector,
    make_node,
    make_pod,
    node_affinity,
    pod_info,
    service_object,
    spread_constraint,
    term,
    with_pod_fields,
)
from tests.unit.spread import engine_adapter

ScoreNodes = Callable[..., ScoreResult]

#: Every implementation behind the reference's signature.
IMPLEMENTATIONS: dict[str, ScoreNodes] = {
    "reference": topologyspread.score_nodes,
    "vectorised": engine_adapter.score_nodes,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def score_nodes(request: Any) -> ScoreNodes:
    return IMPLEMENTATIONS[request.param]


SYSTEM = PodTopologySpreadArgs(defaulting_type="System")
LIST = PodTopologySpreadArgs(defaulting_type="List")
HOST = "kubernetes.io/hostname"
SA, DNS = "ScheduleAnyway", "DoNotSchedule"
FOO, BAR = exists("foo"), exists("bar")
TAINT = [("node.kubernetes.io/unschedulable", "", "NoSchedule")]


def host(name: str, zone: str | None = None, **labels: str) -> dict[str, Any]:
    """A node labelled kubernetes.io/hostname (and zone, when given)."""
    all_labels = {HOST: name, **labels}
    if zone is not None:
        all_labels["zone"] = zone
    return make_node(name, labels=all_labels)


def plain(name: str, taints: bool = False, **labels: str) -> dict[str, Any]:
    """A node labelled ``node: <name>`` (upstream's "node" key, not the hostname one)."""
    return make_node(name, labels={"node": name, **labels}, taints=TAINT if taints else ())


def pods_on(
    *spec: tuple[str, int], labels: dict[str, str] | None = None, **kw: Any
) -> list[dict[str, Any]]:
    """``count`` pods labelled foo (or ``labels``) on each ``(node, count)``."""
    chosen = labels if labels is not None else {"foo": ""}
    return [bound_pod(n, labels=chosen, **kw) for n, count in spec for _ in range(count)]


def spread_pod(
    *constraints: dict[str, Any], labels: dict[str, str] | None = None, **kw: Any
) -> dict[str, Any]:
    return make_pod(
        "p", labels=labels if labels is not None else {"foo": ""}, topology_spread=constraints, **kw
    )


ON_HOST = spread_constraint(1, HOST, SA, FOO)
ABCD = [host("node-a"), host("node-b"), host("node-c"), host("node-d")]
SPREAD_2103 = pods_on(("node-a", 2), ("node-b", 1), ("node-d", 3))
SPREAD_4321 = pods_on(("node-a", 4), ("node-b", 3), ("node-c", 2), ("node-d", 1))
SPREAD_4213 = pods_on(("node-a", 4), ("node-b", 2), ("node-x", 1), ("node-y", 3))
ZONED = [
    host("node-a", "zone1"),
    host("node-b", "zone1"),
    host("node-x", "zone2"),
    host("node-y", "zone2"),
]
ZONE_AND_HOST = (spread_constraint(1, "zone", SA, FOO), spread_constraint(1, HOST, SA, BAR))
FOO_BAR = {"foo": "", "bar": ""}
INCLUSION_NODES = [plain("node-a", foo=""), plain("node-b", foo=""), plain("node-c")]
TAINT_NODES = [plain("node-a"), plain("node-b"), plain("node-c", taints=True)]
INCLUSION_PODS = pods_on(("node-a", 2), ("node-b", 1), ("node-c", 1))
FOO_AFFINITY = node_affinity(required=[term(expr("foo", "In", ""))])
MATCH_KEY_NODES = [
    host("node-a", "zone1"),
    host("node-b", "zone1"),
    host("node-c", "zone2"),
    host("node-d", "zone2"),
]

SCORE_CASES = [
    # size 2, no pods: raw 0, 0 -> max 0 -> everyone 100
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a"), host("node-b")],
        [],
        [],
        [100, 100],
        id="one constraint on node, no existing pods",
    ),
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a")],
        [host("node-b")],
        pods_on(("node-a", 2), ("node-b", 1)),
        [100],
        id="one constraint on node, only one node is candidate",
    ),
    # raw 1 * ln 4 = 1.39 -> 1 on both: 100 * (1 + 1 - 1) // 1 = 100
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a"), host("node-b")],
        [],
        pods_on(("node-a", 1), ("node-b", 1)),
        [100, 100],
        id="one constraint on node, all nodes have the same number of matching pods",
    ),
    # 2/1/0/3 x ln 6: raw 3.58 -> 4, 1.79 -> 2, 0, 5.38 -> 5; min 0 max 5:
    # 100 * (5 - 4) // 5 = 20, 100 * 3 // 5 = 60, 100, 0
    pytest.param(
        spread_pod(ON_HOST),
        ABCD,
        [],
        SPREAD_2103,
        [20, 60, 100, 0],
        id="one constraint on node, all 4 nodes are candidates",
    ),
    # a nil selector counts nothing: raw 0 everywhere -> 100
    pytest.param(
        spread_pod(spread_constraint(1, HOST, SA, None)),
        ABCD,
        [],
        SPREAD_2103,
        [100, 100, 100, 100],
        id="one constraint on node, null selector",
    ),
    # + (2 - 1): raw 4.58 -> 5, 2.79 -> 3, 1, 6.38 -> 6; min 1 max 6:
    # 100 * 2 // 6 = 33, 100 * 4 // 6 = 66, 100, 100 * 1 // 6 = 16
    pytest.param(
        spread_pod(spread_constraint(2, HOST, SA, FOO)),
        ABCD,
        [],
        SPREAD_2103,
        [33, 66, 100, 16],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=2",
    ),
    # 4/3/2/1 x ln 6 + 2: 9.17 -> 9, 7.38 -> 7, 5.58 -> 6, 3.79 -> 4; min 4 max 9:
    # 100 * 4 // 9 = 44, 100 * 6 // 9 = 66, 100 * 7 // 9 = 77, 100
    pytest.param(
        spread_pod(spread_constraint(3, HOST, SA, FOO)),
        ABCD,
        [],
        SPREAD_4321,
        [44, 66, 77, 100],
        id="one constraint on node, all 4 nodes are candidates, maxSkew=3",
    ),
    # system defaults (hostname 3, zone 5) with the service's selector foo="": no node has a
    # zone, so only the hostname constraint scores: same as the previous case
    pytest.param(
        make_pod("p", labels={"foo": ""}),
        ABCD,
        [],
        [*SPREAD_4321, service_object("svc", {"foo": ""})],
        [44, 66, 77, 100],
        id="system defaulting, nodes don't have zone, pods match service",
    ),
    # size 3 -> ln 5: 4 -> 6.44 -> 6, 2 -> 3.22 -> 3, 1 -> 1.61 -> 2; min 2 max 6:
    # 100 * 2 // 6 = 33, 100 * 5 // 6 = 83, 100
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a"), host("node-b"), host("node-x")],
        [host("node-y")],
        SPREAD_4213,
        [33, 83, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates",
    ),
    # node-b lacks the hostname label: ignored (0); size 3 - 1 = 2 -> ln 4:
    # a 4 x 1.39 = 5.55 -> 6, x 1.39 -> 1; min 1 max 6: 100 * 1 // 6 = 16, 100
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a"), make_node("node-b", labels={"n": "node-b"}), host("node-x")],
        [host("node-y")],
        SPREAD_4213,
        [16, 0, 100],
        id="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
    ),
    # zones among the candidates: 2 -> ln 4; counts over all nodes: zone1 6, zone2 4
    # raw 8.32 -> 8, 8, 5.55 -> 6; min 6 max 8: 100 * 6 // 8 = 75, 75, 100
    pytest.param(
        spread_pod(spread_constraint(1, "zone", SA, FOO)),
        ZONED[:3],
        ZONED[3:],
        SPREAD_4213,
        [75, 75, 100],
        id="one constraint on zone, 3 out of 4 nodes are candidates",
    ),
    # zone: 2 domains -> ln 4, zone1 2 + 1 = 3, zone2 2 + 4 = 6; hostname: 2 nodes -> ln 4
    # a (3 + 2) x 1.39 = 6.93 -> 7, x (6 + 2) x 1.39 = 11.09 -> 11; min 7 max 11:
    # 100 * 11 // 11 = 100, 100 * 7 // 11 = 63
    pytest.param(
        spread_pod(spread_constraint(1, "zone", SA, FOO), ON_HOST),
        [ZONED[0], ZONED[2]],
        [ZONED[1], ZONED[3]],
        pods_on(("node-a", 2), ("node-b", 1), ("node-x", 2), ("node-y", 4)),
        [100, 63],
        id="two Constraints on zone and node, 2 out of 4 nodes are candidates",
    ),
    # zone(foo) 2/1 x ln 4, hostname(bar) 0/1/0/1 x ln 6:
    # a 2.77 -> 3, b 2.77 + 1.79 -> 5, x 1.39 -> 1, y 1.39 + 1.79 -> 3; min 1 max 5:
    # 100 * 3 // 5 = 60, 20, 100, 60
    pytest.param(
        spread_pod(*ZONE_AND_HOST, labels=FOO_BAR),
        ZONED,
        [],
        [
            *pods_on(("node-a", 1)),
            *pods_on(("node-b", 1), labels=FOO_BAR),
            *pods_on(("node-y", 1)),
            *pods_on(("node-y", 1), labels={"bar": ""}),
        ],
        [60, 20, 100, 60],
        id="two Constraints on zone and node, with different labelSelectors",
    ),
    # zone(foo) 0/2, hostname(bar) 0/1/0/1: a 0, b 1.79 -> 2, x 2.77 -> 3, y 4.56 -> 5
    # min 0 max 5: 100, 60, 40, 0
    pytest.param(
        spread_pod(*ZONE_AND_HOST, labels=FOO_BAR),
        ZONED,
        [],
        [
            *pods_on(("node-b", 1), labels={"bar": ""}),
            *pods_on(("node-x", 1)),
            *pods_on(("node-y", 1), labels=FOO_BAR),
        ],
        [100, 60, 40, 0],
        id="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
    ),
    # candidates a, b, x: zone(foo) 2/1 x ln 4 (y's foo pod still counts for zone2),
    # hostname(bar) over 3 nodes x ln 5: a 2.77 -> 3, b 2.77 + 1.61 -> 4, x 1.39 -> 1
    # min 1 max 4: 100 * 2 // 4 = 50, 25, 100
    pytest.param(
        spread_pod(*ZONE_AND_HOST, labels=FOO_BAR),
        ZONED[:3],
        ZONED[3:],
        [
            *pods_on(("node-a", 1)),
            *pods_on(("node-b", 1), labels=FOO_BAR),
            *pods_on(("node-y", 1)),
            *pods_on(("node-y", 1), labels={"bar": ""}),
        ],
        [50, 25, 100],
        id="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
    ),
    # the ns1 pod does not count: a 1 x ln 4 -> 1, b 2.77 -> 3; min 1 max 3: 100, 33
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a"), host("node-b")],
        [],
        [*pods_on(("node-a", 1), namespace="ns1"), *pods_on(("node-a", 1), ("node-b", 2))],
        [100, 33],
        id="existing pods in a different namespace do not count",
    ),
    # the terminating pod does not count: a 0, b 1.39 -> 1: 100, 0
    pytest.param(
        spread_pod(ON_HOST),
        [host("node-a"), host("node-b")],
        [],
        [
            with_pod_fields(bound_pod("node-a", labels={"foo": ""}), terminating=True),
            *pods_on(("node-b", 1)),
        ],
        [100, 0],
        id="terminating Pods should be excluded",
    ),
    # minDomains plays no part in scoring: 3 domains -> ln 5, + 1:
    # a 2 x 1.61 + 1 = 4.22 -> 4, b 4, c 2.61 -> 3; min 3 max 4: 75, 75, 100
    pytest.param(
        spread_pod(spread_constraint(2, "node", SA, FOO, min_domains=10)),
        [plain("node-a"), plain("node-b"), plain("node-c")],
        [],
        pods_on(("node-a", 2), ("node-b", 2), ("node-c", 1)),
        [75, 75, 100],
        id="minDomains has no effect when ScheduleAnyway",
    ),
    # node-c (no foo label) is left out of the counts: a 2 x ln 5 = 3.22 -> 3, b 1.61 -> 2,
    # c 0; min 0 max 3: 0, 33, 100
    pytest.param(
        spread_pod(spread_constraint(1, "node", SA, FOO), node_selector={"foo": ""}),
        INCLUSION_NODES,
        [],
        INCLUSION_PODS,
        [0, 33, 100],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    # node-c counted: 3, 2, 2; min 2 max 3: 100 * 2 // 3 = 66, 100, 100
    pytest.param(
        spread_pod(
            spread_constraint(1, "node", SA, FOO, node_affinity_policy="Ignore"),
            node_selector={"foo": ""},
        ),
        INCLUSION_NODES,
        [],
        INCLUSION_PODS,
        [66, 100, 100],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, "node", SA, FOO), affinity=FOO_AFFINITY),
        INCLUSION_NODES,
        [],
        INCLUSION_PODS,
        [0, 33, 100],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, "node", SA, FOO, node_affinity_policy="Ignore"),
            affinity=FOO_AFFINITY,
        ),
        INCLUSION_NODES,
        [],
        INCLUSION_PODS,
        [66, 100, 100],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    # node-c's taint is not tolerated: left out of the counts
    pytest.param(
        spread_pod(spread_constraint(1, "node", SA, FOO, node_taints_policy="Honor")),
        TAINT_NODES,
        [],
        INCLUSION_PODS,
        [0, 33, 100],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, "node", SA, FOO)),
        TAINT_NODES,
        [],
        INCLUSION_PODS,
        [66, 100, 100],
        id="NodeTaintsPolicy ignored",
    ),
    # zone: {} AND foo="" -> 2/1 x ln 4; hostname: {} AND bar="" -> 0/1/1/0 x ln 6
    # a 2.77 -> 3, b 4.56 -> 5, c 1.39 + 1.79 -> 3, d 1.39 -> 1; min 1 max 5: 60, 20, 60, 100
    pytest.param(
        spread_pod(
            spread_constraint(1, "zone", SA, label_selector(), match_label_keys=["foo"]),
            spread_constraint(1, HOST, SA, label_selector(), match_label_keys=["bar"]),
            labels=FOO_BAR,
        ),
        MATCH_KEY_NODES,
        [],
        [
            *pods_on(("node-a", 1)),
            *pods_on(("node-b", 1), labels=FOO_BAR),
            *pods_on(("node-c", 1)),
            *pods_on(("node-c", 1), labels={"bar": ""}),
        ],
        [60, 20, 60, 100],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    # zone foo 2/1; hostname bar AND baz="": only p-b1 and p-d3 (on node-c) -> 0/1/1/0
    pytest.param(
        spread_pod(
            spread_constraint(1, "zone", SA, FOO),
            spread_constraint(1, HOST, SA, BAR, match_label_keys=["baz"]),
            labels={"foo": "", "bar": "", "baz": ""},
        ),
        MATCH_KEY_NODES,
        [],
        [
            *pods_on(("node-a", 1)),
            *pods_on(("node-b", 1), labels={"foo": "", "bar": "", "baz": ""}),
            *pods_on(("node-c", 1)),
            *pods_on(("node-c", 1), labels={"bar": ""}),
            *pods_on(("node-c", 1), labels={"bar": "", "baz": ""}),
        ],
        [60, 20, 60, 100],
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "failed", "pods", "expected"), SCORE_CASES)
def test_pod_topology_spread_score(
    score_nodes: ScoreNodes,
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    failed: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    expected: list[int],
) -> None:
    infos, by_node, _, extras = cluster_inputs([*nodes, *failed], pods)
    feasible = [n["metadata"]["name"] for n in nodes]
    result = score_nodes(infos, by_node, pod_info(incoming), SYSTEM, extras, feasible)
    assert result.pre_score.ok
    assert [result.normalized[n] for n in feasible] == expected


SKIP_CASES = [
    pytest.param(
        make_pod("p"),
        [host("node-a"), host("node-b")],
        [],
        LIST,
        id="the pod doesn't have soft topology spread Constraints",
    ),
    # rs1 selects "tar" pods, the pod has foo and baz: no default selector
    pytest.param(
        make_pod("p", labels={"foo": "bar", "baz": "sup"}),
        [make_node("node-a", labels={"planet": "mars"})],
        [controller_object("ReplicaSet", "rs1", exists("tar"))],
        PodTopologySpreadArgs(
            "List", ({"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},)
        ),
        id="default constraints and a replicaset that doesn't match",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "objects", "args"), SKIP_CASES)
def test_pre_score_skip(
    score_nodes: ScoreNodes,
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    args: PodTopologySpreadArgs,
) -> None:
    infos, by_node, _, extras = cluster_inputs(nodes, objects)
    result = score_nodes(infos, by_node, pod_info(incoming), args, extras)
    assert result.pre_score.code == Code.SKIP
    assert result.normalized == {}


RS_FOO = controller_object("ReplicaSet", "rs1", exists("foo"))
STATE_CASES = [
    # zone: 2 domains among 3 nodes; hostname: 3 nodes
    pytest.param(
        spread_pod(spread_constraint(1, "zone", SA, FOO), ON_HOST),
        [host("node-a", "zone1"), host("node-b", "zone1"), host("node-x", "zone2")],
        [],
        LIST,
        set(),
        {("zone", "zone1"): 0, ("zone", "zone2"): 0},
        [2, 3],
        id="normal case",
    ),
    # node-x has no zone: ignored; zone 1 domain, hostname 3 - 1 = 2
    pytest.param(
        spread_pod(spread_constraint(1, "zone", SA, FOO), spread_constraint(1, HOST, SA, BAR)),
        [host("node-a", "zone1"), host("node-b", "zone1"), host("node-x")],
        [],
        LIST,
        {"node-x"},
        {("zone", "zone1"): 0},
        [1, 2],
        id="node-x doesn't have label zone",
    ),
    # system defaults, selector from rs1 (foo Exists); nodes without a zone are not ignored
    # and form the "" zone: zone 2 domains (mars, ""), hostname 4 nodes
    pytest.param(
        make_pod("p", labels={"foo": "tar", "baz": "sup"}),
        [
            make_node("node-a", labels={HOST: "node-a", "topology.kubernetes.io/zone": "mars"}),
            make_node("node-b", labels={HOST: "node-b", "topology.kubernetes.io/zone": "mars"}),
            host("node-c"),
            host("node-d"),
        ],
        [RS_FOO],
        SYSTEM,
        set(),
        {("topology.kubernetes.io/zone", "mars"): 0, ("topology.kubernetes.io/zone", ""): 0},
        [4, 2],
        id="system default constraints and a replicaset",
    ),
    # List defaults: the ScheduleAnyway ones (hostname 1, planet 2) with rs1's selector
    pytest.param(
        make_pod("p", labels={"foo": "tar", "baz": "sup"}),
        [make_node("node-a", labels={"rack": "rack1", HOST: "node-a", "planet": "mars"})],
        [RS_FOO],
        PodTopologySpreadArgs(
            "List",
            (
                {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": SA},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DNS},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA},
            ),
        ),
        set(),
        {("planet", "mars"): 0},
        [1, 1],
        id="default constraints and a replicaset",
    ),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "objects", "args", "ignored", "pairs", "sizes"), STATE_CASES
)
def test_pre_score_state(
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    args: PodTopologySpreadArgs,
    ignored: set[str],
    pairs: dict[tuple[str, str], int],
    sizes: list[int],
) -> None:
    infos, by_node, _, extras = cluster_inputs(nodes, objects)
    names = [n.name for n in infos]
    status, state = topologyspread.pre_score(
        infos, by_node, pod_info(incoming), args, extras, names
    )
    assert status.ok
    assert state is not None
    assert set(state.ignored) == ignored
    assert dict(state.pair_counts) == pairs
    assert list(state.weights) == [math.log(size + 2) for size in sizes]
