"""InterPodAffinity PreScore + Score + NormalizeScore (asched.tools.reference.interpod.score_nodes).

Cases transcribed from upstream ``interpodaffinity/scoring_test.go``: TestPreferredAffinity
(26 cases) and TestPreferredAffinityWithHardPodAffinitySymmetricWeight (5 cases).

Raw score of a node = sum over the topology keys it carries of ``topologyScore[key][value]``;
each existing pod P on node N adds, at N's label for the term's key: +w for each incoming
preferred affinity term P matches, -w per incoming preferred anti-affinity term,
+hardPodAffinityWeight per required affinity term of P the incoming pod matches, +w / -w
per preferred affinity / anti-affinity term of P the incoming pod matches.
Normalized = int(100 * (raw - min) / (max - min)) over the scored nodes, 0 when flat.
Upstream's empty namespace is our ``default``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.config.types import InterPodAffinityArgs
from asched.framework.status import Code
from asched.tools.reference import interpod
from asched.tools.reference.crosspod import ScoreResult
from tests.builders import (
    affinity_term,
    bound_pod,
    cluster_inputs,
    expr,
    label_selector,
    make_node,
    make_pod,
    namespace_object,
    pod_affinity_rules,
    pod_info,
)
from tests.unit.interpod import engine_adapter

ScoreNodes = Callable[..., ScoreResult]

#: A second implementation with the same signature is added here as a new entry.
IMPLEMENTATIONS: dict[str, ScoreNodes] = {
    "reference": interpod.score_nodes,
    "vectorised": engine_adapter.score_nodes,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def score_nodes(request: Any) -> ScoreNodes:
    return IMPLEMENTATIONS[request.param]


CHINA, INDIA = {"region": "China"}, {"region": "India"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
S1, S2 = {"security": "S1"}, {"security": "S2"}
TEAM1, TEAM2 = {"team": "team1"}, {"team": "team2"}
NAMESPACES = [
    namespace_object("subteam1.team1", TEAM1),
    namespace_object("subteam2.team1", TEAM1),
    namespace_object("subteam1.team2", TEAM2),
    namespace_object("subteam2.team2", TEAM2),
]
IN_TEAM1 = label_selector(None, expr("team", "In", "team1"))


def security_term(topology: str, *values: str, **kw: Any) -> dict[str, Any]:
    return affinity_term(label_selector(None, expr("security", "In", *values)), topology, **kw)


def prefer(*weighted: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return pod_affinity_rules(preferred=weighted)


STAY_WITH_S1_IN_REGION = {"pod_affinity": prefer((5, security_term("region", "S1")))}
STAY_WITH_S2_IN_REGION = {"pod_affinity": prefer((6, security_term("region", "S2")))}
AFFINITY3 = {
    "pod_affinity": prefer(
        (
            8,
            affinity_term(
                label_selector(None, expr("security", "NotIn", "S1"), expr("security", "In", "S2")),
                "region",
            ),
        ),
        (
            2,
            affinity_term(
                label_selector(None, expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
                "region",
            ),
        ),
    )
}
HARD_AFFINITY = {
    "pod_affinity": pod_affinity_rules(
        required=[
            security_term("region", "S1", "value2"),
            affinity_term(
                label_selector(None, expr("security", "Exists"), expr("wrongkey", "DoesNotExist")),
                "region",
            ),
        ]
    )
}
AWAY_FROM_S1_IN_AZ = {"pod_anti_affinity": prefer((5, security_term("az", "S1")))}
AWAY_FROM_S2_IN_AZ = {"pod_anti_affinity": prefer((5, security_term("az", "S2")))}
STAY_S1_REGION_AWAY_S2_AZ = {
    "pod_affinity": prefer((8, security_term("region", "S1"))),
    "pod_anti_affinity": prefer((5, security_term("az", "S2"))),
}
NS_TERM = security_term("region", "S1", namespaces=["subteam2.team2"], namespace_selector=IN_TEAM1)
AFFINITY_NS_SELECTOR = {"pod_affinity": prefer((5, NS_TERM))}
ANTI_AFFINITY_NS_SELECTOR = {"pod_anti_affinity": prefer((5, NS_TERM))}
INVALID_AFFINITY = {"pod_affinity": prefer((8, security_term("region", "{{.bad-value.}}")))}
INVALID_ANTI_AFFINITY = {"pod_anti_affinity": prefer((5, security_term("az", "{{.bad-value.}}")))}


def pod(
    labels: dict[str, str] | None = None, rules: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    return make_pod("incoming", labels=labels, **(rules or {}), **kw)


def on(
    node: str, labels: dict[str, str] | None = None, rules: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    return bound_pod(node, labels=labels, **(rules or {}), **kw)


def nodes(*labels: dict[str, str]) -> list[dict[str, Any]]:
    return [make_node(f"node{i}", labels=lbl) for i, lbl in enumerate(labels, start=1)]


SKIP = Code.SKIP
ERROR = Code.ERROR

PREFERRED_CASES = [
    pytest.param(
        pod(S1),
        [],
        nodes(CHINA, INDIA, AZ1),
        False,
        SKIP,
        id="all nodes are same priority as Affinity is nil",
    ),
    # the S1 pod on node1 matches: China += 5; node3's S1 pod is on a node without region
    # raw [5, 0, 0] -> [100, 0, 0]
    pytest.param(
        pod(S1, STAY_WITH_S1_IN_REGION),
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [100, 0, 0],
        id="Affinity: matching topology key and pods gets the high score",
    ),
    # China += 5; node2 is in China too: raw [5, 5, 0] -> [100, 100, 0]
    pytest.param(
        pod(None, STAY_WITH_S1_IN_REGION),
        [on("node1", S1)],
        nodes(CHINA, CHINA_AZ1, INDIA),
        False,
        [100, 100, 0],
        id="nodes with the same topology value as a matching pod share its score",
    ),
    # S2 pods: China 4 (node1 x2, node3, node4) x 6 = 24, India 2 (node2, node5) x 6 = 12
    # min 12, max 24: China 100, India 0
    pytest.param(
        pod(S1, STAY_WITH_S2_IN_REGION),
        [
            on("node1", S2),
            on("node1", S2),
            on("node2", S2),
            on("node3", S2),
            on("node4", S2),
            on("node5", S2),
        ],
        nodes(CHINA, INDIA, CHINA, CHINA, INDIA),
        False,
        [100, 0, 100, 100, 0],
        id="Affinity: the region with more matching pods gets the high score",
    ),
    # w8 [NotIn S1, In S2] matches node2's S2 pod: India += 8; w2 [Exists, DoesNotExist]
    # matches every pod: China += 2, India += 2 (node3 has no region)
    # raw [2, 10, 0] -> [20, 100, 0]
    pytest.param(
        pod(S1, AFFINITY3),
        [on("node1", S1), on("node2", S2), on("node3", S1)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [20, 100, 0],
        id="Affinity: different label operators and values, some match failures",
    ),
    # node2's pod prefers S2 in its region and the incoming pod is S2: India += 6
    pytest.param(
        pod(S2),
        [on("node1", S1, STAY_WITH_S1_IN_REGION), on("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [0, 100, 0],
        id="Affinity symmetry: preferred terms of existing pods",
    ),
    # node1's pod term: namespaces subteam2.team2 + selector team=team1; the incoming pod
    # is in subteam1.team1 (team1): China += 5
    pytest.param(
        pod(S1, namespace="subteam1.team1"),
        [on("node1", S1, AFFINITY_NS_SELECTOR), on("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [100, 0, 0],
        id="Affinity symmetry with namespace selector",
    ),
    # China -= 5: raw [-5, 0, 0] -> min -5, max 0 -> [0, 100, 100]
    pytest.param(
        pod(S1, namespace="subteam1.team1"),
        [on("node1", S1, ANTI_AFFINITY_NS_SELECTOR), on("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [0, 100, 100],
        id="AntiAffinity symmetry with namespace selector",
    ),
    # both hard terms of each existing pod match the S1 pod: China += 2, India += 2
    pytest.param(
        pod(S1),
        [on("node1", S1, HARD_AFFINITY), on("node2", S2, HARD_AFFINITY)],
        nodes(CHINA, INDIA, AZ1),
        False,
        [100, 100, 0],
        id="Affinity symmetry: required terms of existing pods weigh hardPodAffinityWeight",
    ),
    # az1 -= 5 (node1's S1 pod): raw [-5, 0] -> [0, 100]
    pytest.param(
        pod(S1, AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node2", S2)],
        nodes(AZ1, CHINA),
        False,
        [0, 100],
        id="Anti Affinity: a node without matching pods gets the high score",
    ),
    # node2's S1 pod is on a node without az: only az1 -= 5
    pytest.param(
        pod(S1, AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node2", S1)],
        nodes(AZ1, CHINA),
        False,
        [0, 100],
        id="Anti Affinity: a node without the topology key gets the higher score",
    ),
    # az1 -= 10: raw [-10, 0] -> [0, 100]
    pytest.param(
        pod(S1, AWAY_FROM_S1_IN_AZ),
        [on("node1", S1), on("node1", S1), on("node2", S2)],
        nodes(AZ1, INDIA),
        False,
        [0, 100],
        id="Anti Affinity: the node with more matching pods gets the low score",
    ),
    # node1's pod avoids S2 in its az: az1 -= 5; node2's pod avoids S1: no match
    pytest.param(
        pod(S2),
        [on("node1", S1, AWAY_FROM_S2_IN_AZ), on("node2", S2, AWAY_FROM_S1_IN_AZ)],
        nodes(AZ1, AZ2),
        False,
        [0, 100],
        id="Anti Affinity symmetry: existing pods' preferred anti-affinity",
    ),
    # China += 8 (node1's S1 pod), no S2 pod: raw [8, 0] -> [100, 0]
    pytest.param(
        pod(S1, STAY_S1_REGION_AWAY_S2_AZ),
        [on("node1", S1), on("node2", S1)],
        nodes(CHINA, AZ1),
        False,
        [100, 0],
        id="Affinity and Anti Affinity: preferred terms of both kinds",
    ),
    # China: 5 S1 pods x 8 = 40, India: 2 x 8 = 16 -> China 100, India 0
    pytest.param(
        pod(S1, STAY_S1_REGION_AWAY_S2_AZ),
        [
            on("node1", S1),
            on("node1", S1),
            on("node2", S1),
            on("node3", S1),
            on("node3", S1),
            on("node4", S1),
            on("node5", S1),
        ],
        nodes(CHINA_AZ1, INDIA, CHINA, CHINA, INDIA),
        False,
        [100, 0, 100, 100, 0],
        id="Affinity and Anti Affinity: the pod and existing pods have the same labels",
    ),
    # affinity: China += 8 (node1 S1); anti: az1 -= 5 (node2 S2); symmetry: node3's pod
    # prefers S1 in its region: India += 8; node4's pod avoids S1 in its az: az2 -= 5
    # raw [8, -5, 8, -5] -> [100, 0, 100, 0]
    pytest.param(
        pod(S1, STAY_S1_REGION_AWAY_S2_AZ),
        [
            on("node1", S1),
            on("node2", S2),
            on("node3", None, STAY_S1_REGION_AWAY_S2_AZ),
            on("node4", None, AWAY_FROM_S1_IN_AZ),
        ],
        nodes(CHINA, AZ1, INDIA, AZ2),
        False,
        [100, 0, 100, 0],
        id="Affinity, Anti Affinity and symmetry together",
    ),
    # node2's pod prefers S1 in China: both nodes are in China, raw [8, 8] -> flat -> 0
    pytest.param(
        pod(S1),
        [on("node1", S1), on("node2", None, STAY_S1_REGION_AWAY_S2_AZ)],
        nodes(CHINA, CHINA),
        False,
        [0, 0],
        id="Avoid panic when partial nodes in a topology don't have pods with affinity",
    ),
    pytest.param(
        pod(None, INVALID_AFFINITY),
        [],
        nodes(CHINA, CHINA),
        False,
        ERROR,
        id="invalid Affinity fails PreScore",
    ),
    pytest.param(
        pod(None, INVALID_ANTI_AFFINITY),
        [],
        nodes(CHINA, CHINA),
        False,
        ERROR,
        id="invalid AntiAffinity fails PreScore",
    ),
    # the term resolves to {subteam2.team2, subteam1.team1, subteam2.team1}:
    # China += 2 x 5 (the subteam1.team2 pod does not count), India += 5
    pytest.param(
        pod(S1, AFFINITY_NS_SELECTOR, namespace="subteam1.team1"),
        [
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam1.team2"),
            on("node2", S1, namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [100, 0],
        id="Affinity with pods matching NamespaceSelector",
    ),
    # China += 3 x 5 (subteam2.team2 by name), India += 5
    pytest.param(
        pod(S1, AFFINITY_NS_SELECTOR, namespace="subteam1.team1"),
        [
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam2.team2"),
            on("node2", S1, namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [100, 0],
        id="Affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    # China -= 10, India -= 5: raw [-10, -5] -> [0, 100]
    pytest.param(
        pod(S1, ANTI_AFFINITY_NS_SELECTOR, namespace="subteam1.team1"),
        [
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam1.team2"),
            on("node2", S1, namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [0, 100],
        id="Anti-affinity with pods matching NamespaceSelector",
    ),
    # China -= 15, India -= 5: raw [-15, -5] -> [0, 100]
    pytest.param(
        pod(S1, ANTI_AFFINITY_NS_SELECTOR, namespace="subteam1.team1"),
        [
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam1.team1"),
            on("node1", S1, namespace="subteam2.team2"),
            on("node2", S1, namespace="subteam2.team1"),
        ],
        nodes(CHINA, INDIA),
        False,
        [0, 100],
        id="Anti-affinity with pods matching both NamespaceSelector and Namespaces fields",
    ),
    # the pod has no preferred terms and existing pods' preferences are ignored: Skip
    pytest.param(
        pod(S2),
        [on("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), on("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA),
        True,
        SKIP,
        id="Ignore preferred terms of existing pods",
    ),
    # node1's pod: S1 affinity misses, S2 anti-affinity is on az (node1 has none);
    # node2's pod prefers S2 in India: India += 6 -> [0, 100]
    pytest.param(
        pod(S2),
        [on("node1", S1, STAY_S1_REGION_AWAY_S2_AZ), on("node2", S2, STAY_WITH_S2_IN_REGION)],
        nodes(CHINA, INDIA),
        False,
        [0, 100],
        id="Do not ignore preferred terms of existing pods",
    ),
    pytest.param(pod(S2), [], [], False, SKIP, id="No nodes to score"),
]


@pytest.mark.parametrize(("incoming", "pods", "node_list", "ignore", "expected"), PREFERRED_CASES)
def test_preferred_affinity(
    score_nodes: ScoreNodes,
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    node_list: list[dict[str, Any]],
    ignore: bool,
    expected: Any,
) -> None:
    infos, by_node, ns_labels, _ = cluster_inputs(node_list, [*pods, *NAMESPACES])
    args = InterPodAffinityArgs(
        hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=ignore
    )
    result = score_nodes(infos, by_node, ns_labels, pod_info(incoming), args)
    if isinstance(expected, Code):
        assert result.pre_score.code == expected
        assert result.normalized == {}
        if expected == ERROR:
            assert 'Invalid value: "{{.bad-value.}}"' in result.pre_score.message
        return
    assert result.pre_score.ok
    assert [result.normalized[n.name] for n in infos] == expected


# The existing pods' required term: service In [S1], namespaces ["default" (upstream: ""),
# "subteam2.team2"], namespaceSelector team In team1, on region.
HARD_POD_AFFINITY = {
    "pod_affinity": pod_affinity_rules(
        required=[
            affinity_term(
                label_selector(None, expr("service", "In", "S1")),
                "region",
                namespaces=["default", "subteam2.team2"],
                namespace_selector=IN_TEAM1,
            )
        ]
    )
}
SERVICE_S1 = {"service": "S1"}
HARD_NODES = nodes(CHINA, INDIA, AZ1)
HARD_PODS = [on("node1", None, HARD_POD_AFFINITY), on("node2", None, HARD_POD_AFFINITY)]

HARD_WEIGHT_CASES = [
    # each existing pod's term matches the default-namespace pod: China += 1, India += 1
    pytest.param("default", 1, [100, 100, 0], id="with default weight"),
    pytest.param("default", 0, SKIP, id="with zero weight"),
    # subteam1.team2 is neither listed nor team1: nothing -> Skip
    pytest.param("subteam1.team2", 1, SKIP, id="with no matching namespace"),
    pytest.param("subteam1.team1", 1, [100, 100, 0], id="with matching NamespaceSelector"),
    pytest.param("subteam2.team2", 1, [100, 100, 0], id="with matching Namespaces"),
]


@pytest.mark.parametrize(("namespace", "weight", "expected"), HARD_WEIGHT_CASES)
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(
    score_nodes: ScoreNodes, namespace: str, weight: int, expected: Any
) -> None:
    infos, by_node, ns_labels, _ = cluster_inputs(HARD_NODES, [*HARD_PODS, *NAMESPACES])
    incoming = pod_info(pod(SERVICE_S1, namespace=namespace))
    result = score_nodes(infos, by_node, ns_labels, incoming, InterPodAffinityArgs(weight))
    if isinstance(expected, Code):
        assert result.pre_score.code == expected
        return
    assert result.pre_score.ok
    assert [result.normalized[n.name] for n in infos] == expected


def test_raw_scores_are_kept_next_to_the_normalized_ones(score_nodes: ScoreNodes) -> None:
    # Same cluster as "Affinity: different label operators ...": raw [2, 10, 0]
    infos, by_node, ns_labels, _ = cluster_inputs(
        nodes(CHINA, INDIA, AZ1), [on("node1", S1), on("node2", S2), on("node3", S1)]
    )
    result = score_nodes(
        infos, by_node, ns_labels, pod_info(pod(S1, AFFINITY3)), InterPodAffinityArgs()
    )
    assert dict(result.raw) == {"node1": 2, "node2": 10, "node3": 0}
    # only the feasible nodes are scored, and min/max are taken over them: raw [2, 0]
    feasible = score_nodes(
        infos,
        by_node,
        ns_labels,
        pod_info(pod(S1, AFFINITY3)),
        InterPodAffinityArgs(),
        ["node1", "node3"],
    )
    assert dict(feasible.normalized) == {"node1": 100, "node3": 0}
