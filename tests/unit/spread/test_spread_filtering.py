"""PodTopologySpread PreFilter + Filter: the reference and the vectorised plugin.

Cases transcribed from upstream ``podtopologyspread/filtering_test.go``:
TestSingleConstraint (23 cases), TestMultipleConstraints (11) and TestPreFilterState
(31 of 35: the four "feature gate disabled" cases are left out, asched implements the
gates' default-on behaviour). Upstream runs these with ``defaultingType: List``.

Filter rule (upstream: pkg/scheduler/framework/plugins/podtopologyspread/filtering.go), per DoNotSchedule constraint: a node without the key is
UnschedulableAndUnresolvable (MISSING); otherwise ``matching + self - minimum > maxSkew``
is Unschedulable (SKEW), where ``matching`` counts the node's domain, ``self`` is 1 when
the selector matches the incoming pod, and ``minimum`` is the global minimum over the
counted domains of the key (0 while fewer than minDomains domains exist). Only nodes with
every constraint key and passing the constraint's inclusion policies are counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.config.types import PodTopologySpreadArgs
from asched.framework.status import Code, Status
from asched.tools.reference import topologyspread
from asched.tools.reference.crosspod import FilterResult
from tests.builders import (
    bound_pod,
    cluster_inputs,
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
    toleration,
    with_pod_fields,
)
from tests.unit.spread import engine_adapter

FilterNodes = Callable[..., FilterResult]
PreFilter = Callable[..., Any]

#: Every implementation behind the reference's signatures.
IMPLEMENTATIONS: dict[str, tuple[FilterNodes, PreFilter]] = {
    "reference": (topologyspread.filter_nodes, topologyspread.pre_filter),
    "vectorised": (engine_adapter.filter_nodes, engine_adapter.pre_filter),
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def impl(request: Any) -> tuple[FilterNodes, PreFilter]:
    return IMPLEMENTATIONS[request.param]


LIST = PodTopologySpreadArgs(defaulting_type="List")
S = Code.SUCCESS
U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
DNS, SA = "DoNotSchedule", "ScheduleAnyway"
FOO, BAR = exists("foo"), exists("bar")
UNSCHEDULABLE_TAINT = [("node.kubernetes.io/unschedulable", "", "NoSchedule")]
FOO_NODES = {"foo": ""}


def node(
    name: str, zone: str | None = None, *, taints: bool = False, **labels: str
) -> dict[str, Any]:
    """A node labelled ``zone`` (when given) and ``node: <name>``, plus ``labels``."""
    all_labels = {"node": name, **labels}
    if zone is not None:
        all_labels = {"zone": zone, **all_labels}
    return make_node(name, labels=all_labels, taints=UNSCHEDULABLE_TAINT if taints else ())


ABXY = [
    node("node-a", "zone1"),
    node("node-b", "zone1"),
    node("node-x", "zone2"),
    node("node-y", "zone2"),
]


def foo_on(*nodes: str, labels: dict[str, str] | None = None, **kw: Any) -> list[dict[str, Any]]:
    """One pod labelled foo (or ``labels``) per entry of ``nodes``."""
    return [bound_pod(n, labels=labels if labels is not None else {"foo": ""}, **kw) for n in nodes]


def spread_pod(
    *constraints: dict[str, Any], labels: dict[str, str] | None = None, **kw: Any
) -> dict[str, Any]:
    return make_pod(
        "p", labels=labels if labels is not None else {"foo": ""}, topology_spread=constraints, **kw
    )


def codes(result: FilterResult, names: list[str]) -> list[Code]:
    return [result.nodes[n].code for n in names]


def check_reasons(result: FilterResult) -> None:
    for status in result.nodes.values():
        if status.code == UU:
            assert status.reasons == (topologyspread.REASON_MISSING_LABEL,)
        elif status.code == U:
            assert status.reasons == (topologyspread.REASON_SKEW,)


IN_A_Y = node_affinity(required=[term(expr("node", "In", "node-a", "node-y"))])
NOT_B = node_affinity(required=[term(expr("node", "NotIn", "node-b"))])
FOO_AFFINITY = node_affinity(required=[term(expr("foo", "In", ""))])
INCLUSION_NODES = [
    node("node-a", foo=""),
    node("node-b", foo=""),
    node("node-x", foo=""),
    node("node-y"),
]
TAINT_NODES = [
    node("node-a", foo=""),
    node("node-b", foo=""),
    node("node-x", foo=""),
    node("node-y", taints=True),
]
AB_Y = foo_on("node-a", "node-b", "node-y")

SINGLE_CASES = [
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, FOO)),
        ABXY,
        [],
        [S, S, S, S],
        id="no existing pods",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, BAR)),
        ABXY,
        [],
        [S, S, S, S],
        id="no existing pods, incoming pod doesn't match itself",
    ),
    # zone1 0 (both pods are in ns1/ns2), zone2 2: x, y -> 2 + 1 - 0 = 3 > 1
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, FOO)),
        ABXY,
        [
            *foo_on("node-a", namespace="ns1"),
            *foo_on("node-a", namespace="ns2"),
            *foo_on("node-x", "node-y"),
        ],
        [S, S, U, U],
        id="existing pods in a different namespace do not count",
    ),
    # a nil selector matches no pod and not the incoming pod: every skew is 0
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, None)),
        ABXY,
        foo_on("node-x", "node-y"),
        [S, S, S, S],
        id="existing pods do not match null selector",
    ),
    # zone1 3, zone2 3, min 3: 3 + 1 - 3 = 1 everywhere
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, FOO)),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        [S, S, S, S],
        id="pods spread across zones as 3/3, all nodes fit",
    ),
    # node-b has "zon" instead of "zone": not counted, and MISSING; zone1 1 (a), zone2 2
    # (x, y), min 1: a 1 + 1 - 1 = 1, x and y 2 + 1 - 1 = 2 > 1
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, FOO)),
        [
            node("node-a", "zone1"),
            make_node("node-b", labels={"zon": "zone1", "node": "node-b"}),
            node("node-x", "zone2"),
            node("node-y", "zone2"),
        ],
        foo_on("node-a", "node-b", "node-x", "node-y"),
        [S, UU, U, U],
        id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, "rack", DNS, FOO)),
        [node("node-a", "zone1"), node("node-x", "zone2")],
        [],
        [UU, UU],
        id="pod cannot be scheduled as all nodes don't have label 'rack'",
    ),
    # per node 2/1/0/3, min 0: only x (0 + 1 - 0 = 1)
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO)),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        [U, U, S, U],
        id="pods spread across nodes as 2/1/0/3, only node-x fits",
    ),
    # maxSkew 2: b 1 + 1 = 2 and x 1 fit; a 3 and y 4 do not
    pytest.param(
        spread_pod(spread_constraint(2, "node", DNS, FOO)),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        [U, S, S, U],
        id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
    ),
    # self 0: a 2 > 1 and y 3 > 1
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO), labels={"bar": ""}),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        [U, S, S, U],
        id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
    ),
    # only a (2) and y (3) are counted, min 2: a 1, b and x 0 + 1 - 2 < 1, y 3 + 1 - 2 = 2
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO), affinity=IN_A_Y),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        [S, S, S, U],
        id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
    ),
    # the terminating pod on node-a is not counted: a 0 + 1 - 0, b 1 + 1 - 0 = 2 > 1
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO)),
        [node("node-a"), node("node-b")],
        [
            with_pod_fields(bound_pod("node-a", labels={"foo": ""}), terminating=True),
            *foo_on("node-b"),
        ],
        [S, U],
        id="terminating Pods should be excluded",
    ),
    # node-b excluded: zone1 0 (a), zone2 1 (y), min 0: x and y 1 + 1 - 0 = 2 > 1
    pytest.param(
        spread_pod(spread_constraint(1, "zone", DNS, FOO), affinity=NOT_B),
        ABXY,
        foo_on("node-b", "node-b", "node-y"),
        [S, S, U, U],
        id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
    ),
    # 3 domains < minDomains 4: min 0; a and b 2 + 1 = 3 > 2, c 1 + 1 = 2
    pytest.param(
        spread_pod(spread_constraint(2, "node", DNS, FOO, min_domains=4)),
        [node("node-a"), node("node-b"), node("node-c")],
        foo_on("node-a", "node-a", "node-b", "node-b", "node-c"),
        [U, U, S],
        id="2/2/1, maxSkew 2, domains < minDomains, then the third node fits",
    ),
    # 3 domains >= minDomains 2: min 1; a and b 2 + 1 - 1 = 2
    pytest.param(
        spread_pod(spread_constraint(2, "node", DNS, FOO, min_domains=2)),
        [node("node-a"), node("node-b"), node("node-c")],
        foo_on("node-a", "node-a", "node-b", "node-b", "node-c"),
        [S, S, S],
        id="2/2/1, maxSkew 2, domains > minDomains, then all nodes fit",
    ),
    # zone1 2, zone2 1, 2 domains < 3: min 0; zone1 nodes 3 > 2, zone2 nodes 2
    pytest.param(
        spread_pod(spread_constraint(2, "zone", DNS, FOO, min_domains=3)),
        ABXY,
        foo_on("node-a", "node-b", "node-y"),
        [U, U, S, S],
        id="zones 2/1, maxSkew 2, domains < minDomains, then the third and fourth nodes fit",
    ),
    pytest.param(
        spread_pod(spread_constraint(2, "zone", DNS, FOO, min_domains=1)),
        ABXY,
        foo_on("node-a", "node-b", "node-y"),
        [S, S, S, S],
        id="zones 2/1, maxSkew 2, domains > minDomains, then all nodes fit",
    ),
    # node-y (no foo label) is not counted: a 1, b 1, x 0, min 0; y has no count: fits
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO), node_selector=FOO_NODES),
        INCLUSION_NODES,
        AB_Y,
        [U, U, S, S],
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, "node", DNS, FOO, node_affinity_policy="Ignore"),
            node_selector=FOO_NODES,
        ),
        INCLUSION_NODES,
        AB_Y,
        [U, U, S, U],
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO), affinity=FOO_AFFINITY),
        INCLUSION_NODES,
        AB_Y,
        [U, U, S, S],
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, "node", DNS, FOO, node_affinity_policy="Ignore"),
            affinity=FOO_AFFINITY,
        ),
        INCLUSION_NODES,
        AB_Y,
        [U, U, S, U],
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    # node-y's NoSchedule taint is not tolerated: not counted when honoring taints
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO, node_taints_policy="Honor")),
        TAINT_NODES,
        AB_Y,
        [U, U, S, S],
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, "node", DNS, FOO)),
        TAINT_NODES,
        AB_Y,
        [U, U, S, U],
        id="NodeTaintsPolicy ignored",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "expected"), SINGLE_CASES)
def test_single_constraint(
    impl: tuple[FilterNodes, PreFilter],
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    expected: list[Code],
) -> None:
    filter_nodes, _ = impl
    infos, by_node, _, extras = cluster_inputs(nodes, pods)
    result = filter_nodes(infos, by_node, pod_info(incoming), LIST, extras)
    assert result.pre_filter.code == S
    assert codes(result, [n.name for n in infos]) == expected
    check_reasons(result)


TWO = (spread_constraint(1, "zone", DNS, FOO), spread_constraint(1, "node", DNS, FOO))
ZONE_FOO_NODE_BAR = (spread_constraint(1, "zone", DNS, FOO), spread_constraint(1, "node", DNS, BAR))
FOO_BAR = {"foo": "", "bar": ""}
MIXED_NODES = [
    node("node-a", "zone1", foo=""),
    node("node-b", "zone1"),
    node("node-x", "zone2", foo=""),
    node("node-y", "zone2", taints=True, foo=""),
]

MULTIPLE_CASES = [
    # zone 3/3 (any node), node 2/1/0/3 (only x)
    pytest.param(
        spread_pod(*TWO),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y"),
        [U, U, S, U],
        id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
    ),
    # zone 3/4 (zone1 only), node 2/1/0/4 (x only): no node
    pytest.param(
        spread_pod(*TWO),
        ABXY,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y", "node-y"),
        [U, U, U, U],
        id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
    ),
    # zone(foo) 1/0 -> zone2 nodes; node(bar) 0/0/0/1 -> a, b, x: together x
    pytest.param(
        spread_pod(*ZONE_FOO_NODE_BAR, labels=FOO_BAR),
        ABXY,
        [*foo_on("node-a"), *foo_on("node-y", labels={"bar": ""})],
        [U, U, S, U],
        id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
    ),
    # zone(foo) 1/0 (zone2), node(bar) 0/0/1/1 (a, b): none
    pytest.param(
        spread_pod(*ZONE_FOO_NODE_BAR, labels=FOO_BAR),
        ABXY,
        [*foo_on("node-a"), *foo_on("node-x", "node-y", labels={"bar": ""})],
        [U, U, U, U],
        id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
    ),
    # zone(foo) 2/3 (zone1), node(bar) 1/0/0/1 (b, x): b
    pytest.param(
        spread_pod(*ZONE_FOO_NODE_BAR, labels=FOO_BAR),
        ABXY,
        [
            *foo_on("node-a"),
            *foo_on("node-a", labels=FOO_BAR),
            *foo_on("node-y"),
            *foo_on("node-y", labels=FOO_BAR),
            *foo_on("node-y"),
        ],
        [U, S, U, U],
        id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
    ),
    # the pod (bar only) does not match the zone selector: any zone; node(bar) 0/0/1/1: a, b
    pytest.param(
        spread_pod(*ZONE_FOO_NODE_BAR, labels={"bar": ""}),
        ABXY,
        [*foo_on("node-a"), *foo_on("node-x", "node-y", labels={"bar": ""})],
        [S, S, U, U],
        id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone'",
    ),
    # node-x lacks "node": MISSING and not counted; zone 1/1, node 1/0/-/1: b
    pytest.param(
        spread_pod(*TWO),
        [
            node("node-a", "zone1"),
            node("node-b", "zone1"),
            make_node("node-x", labels={"zone": "zone2"}),
            node("node-y", "zone2"),
        ],
        foo_on("node-a", "node-y"),
        [U, S, UU, U],
        id="two Constraints on zone and node, absence of label 'node' on node-x",
    ),
    # zone honors the nodeSelector: y (no foo) left out, zone1 2, zone2 0 -> zone2 only;
    # node ignores it: 1/1/0/1 -> x
    pytest.param(
        spread_pod(
            spread_constraint(1, "zone", DNS, FOO),
            spread_constraint(1, "node", DNS, FOO, node_affinity_policy="Ignore"),
            node_selector=FOO_NODES,
        ),
        [
            node("node-a", "zone1", foo=""),
            node("node-b", "zone1", foo=""),
            node("node-x", "zone2", foo=""),
            node("node-y", "zone2"),
        ],
        foo_on("node-a", "node-b", "node-y"),
        [U, U, S, U],
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    # zone honors taints: y left out, zone1 2, zone2 0; node counts all: 1/1/0/1 -> x
    pytest.param(
        spread_pod(
            spread_constraint(1, "zone", DNS, FOO, node_taints_policy="Honor"),
            spread_constraint(1, "node", DNS, FOO),
        ),
        [
            node("node-a", "zone1", foo=""),
            node("node-b", "zone1", foo=""),
            node("node-x", "zone2", foo=""),
            node("node-y", "zone2", taints=True),
        ],
        foo_on("node-a", "node-b", "node-y"),
        [U, U, S, U],
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    # nodeSelector foo: b left out of both; zone 1/1, node 1/-/0/1 -> b (no count) and x
    pytest.param(
        spread_pod(*TWO, node_selector=FOO_NODES),
        MIXED_NODES,
        foo_on("node-a", "node-b", "node-y"),
        [U, S, S, U],
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    # zone honors both (b and y out): zone1 1, zone2 0; node ignores both: 1/1/0/1 -> x
    pytest.param(
        spread_pod(
            spread_constraint(1, "zone", DNS, FOO, node_taints_policy="Honor"),
            spread_constraint(1, "node", DNS, FOO, node_affinity_policy="Ignore"),
            node_selector=FOO_NODES,
        ),
        MIXED_NODES,
        foo_on("node-a", "node-b", "node-y"),
        [U, U, S, U],
        id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "expected"), MULTIPLE_CASES)
def test_multiple_constraints(
    impl: tuple[FilterNodes, PreFilter],
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    expected: list[Code],
) -> None:
    filter_nodes, _ = impl
    infos, by_node, _, extras = cluster_inputs(nodes, pods)
    result = filter_nodes(infos, by_node, pod_info(incoming), LIST, extras)
    assert codes(result, [n.name for n in infos]) == expected
    check_reasons(result)


# --- TestPreFilterState -------------------------------------------------------------------

Z = "zone"
N = "node"
TWO_ZONES = [
    node("node-a", "zone1"),
    node("node-b", "zone1"),
    node("node-x", "zone2"),
    node("node-y", "zone2"),
]
ABY = [node("node-a", "zone1"), node("node-b", "zone1"), node("node-y", "zone2")]
SEVEN = foo_on("node-a", "node-a", "node-b", "node-y", "node-y", "node-y", "node-y")
FIVE = foo_on("node-a", "node-a", "node-b", "node-y", "node-y")
BAR_ON_ABB = [*foo_on("node-a", "node-b", "node-b", labels={"bar": ""}), bound_pod("node-c")]
NODES_FOO_FOO_BAR = [node("node-a", foo=""), node("node-b", foo=""), node("node-c", bar="")]
TAINTED_C = [node("node-a"), node("node-b"), node("node-c", taints=True, bar="")]
FOO_A = {"foo": "a"}
SERVICE_FOO_BAR = service_object("svc", {"foo": "bar"})
LIST_DEFAULTS = PodTopologySpreadArgs(
    defaulting_type="List",
    default_constraints=(
        {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
        {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
        {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS},
    ),
)


def counts(**per_key: dict[str, int]) -> dict[tuple[str, str], int]:
    return {(key, value): n for key, values in per_key.items() for value, n in values.items()}


PRE_FILTER_CASES = [
    # the selector foo=bar matches nothing; every domain is created with 0
    pytest.param(
        spread_pod(spread_constraint(5, Z, DNS, label_selector({"foo": "bar"}))),
        TWO_ZONES,
        [],
        LIST,
        counts(zone={"zone1": 0, "zone2": 0}),
        {Z: 0},
        id="clean cluster with one spreadConstraint",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, Z, DNS, FOO)),
        TWO_ZONES,
        FIVE,
        LIST,
        counts(zone={"zone1": 3, "zone2": 2}),
        {Z: 2},
        id="normal case with one spreadConstraint",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, Z, DNS, None)),
        TWO_ZONES,
        FIVE,
        LIST,
        counts(zone={"zone1": 0, "zone2": 0}),
        {Z: 0},
        id="normal case with null label selector",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, Z, DNS, FOO)),
        [*TWO_ZONES, node("node-o", "zone3"), node("node-p", "zone3")],
        FIVE,
        LIST,
        counts(zone={"zone1": 3, "zone2": 2, "zone3": 0}),
        {Z: 0},
        id="normal case with one spreadConstraint, on a 3-zone cluster",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, Z, DNS, FOO)),
        TWO_ZONES,
        [
            *foo_on("node-a"),
            *foo_on("node-a", namespace="ns1"),
            *foo_on("node-b"),
            *foo_on("node-y", namespace="ns2"),
            *foo_on("node-y"),
        ],
        LIST,
        counts(zone={"zone1": 2, "zone2": 1}),
        {Z: 1},
        id="namespace mismatch doesn't count",
    ),
    pytest.param(
        spread_pod(*TWO),
        TWO_ZONES,
        SEVEN,
        LIST,
        counts(
            zone={"zone1": 3, "zone2": 4}, node={"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}
        ),
        {Z: 3, N: 0},
        id="normal case with two spreadConstraints",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, SA, FOO),
            spread_constraint(1, Z, DNS, FOO),
            spread_constraint(1, N, SA, FOO),
            spread_constraint(1, N, DNS, FOO),
        ),
        ABY,
        SEVEN,
        LIST,
        counts(zone={"zone1": 3, "zone2": 4}, node={"node-a": 2, "node-b": 1, "node-y": 4}),
        {Z: 3, N: 1},
        id="soft spreadConstraints should be bypassed",
    ),
    pytest.param(
        spread_pod(*ZONE_FOO_NODE_BAR, labels=FOO_BAR),
        ABY,
        [*foo_on("node-a"), *foo_on("node-b", labels={"bar": ""})],
        LIST,
        counts(zone={"zone1": 1, "zone2": 0}, node={"node-a": 0, "node-b": 1, "node-y": 0}),
        {Z: 0, N: 0},
        id="different labelSelectors - simple version",
    ),
    pytest.param(
        spread_pod(*ZONE_FOO_NODE_BAR, labels=FOO_BAR),
        ABY,
        [
            *foo_on("node-a"),
            *foo_on("node-a", labels=FOO_BAR),
            *foo_on("node-b"),
            *foo_on("node-y"),
            *foo_on("node-y", labels=FOO_BAR),
            *foo_on("node-y"),
            *foo_on("node-y", labels=FOO_BAR),
        ],
        LIST,
        counts(zone={"zone1": 3, "zone2": 4}, node={"node-a": 1, "node-b": 0, "node-y": 2}),
        {Z: 3, N: 0},
        id="different labelSelectors - complex pods",
    ),
    # node-x is excluded by the pod's node affinity (node NotIn node-x)
    pytest.param(
        spread_pod(*TWO, affinity=node_affinity(required=[term(expr("node", "NotIn", "node-x"))])),
        TWO_ZONES,
        SEVEN,
        LIST,
        counts(zone={"zone1": 3, "zone2": 4}, node={"node-a": 2, "node-b": 1, "node-y": 4}),
        {Z: 3, N: 1},
        id="two spreadConstraints, and with podAffinity",
    ),
    # List defaults: the DoNotSchedule ones (node 3, rack 5) with the service's selector
    # foo=bar; no node at all -> no domain
    pytest.param(
        make_pod("p", labels={"foo": "bar", "baz": "kar"}),
        [],
        [SERVICE_FOO_BAR],
        LIST_DEFAULTS,
        {},
        {},
        id="default constraints and a service",
    ),
    pytest.param(
        make_pod("p", labels={"foo": "bar"}),
        [],
        [service_object("svc", {"baz": "kep"})],
        PodTopologySpreadArgs(
            "List", ({"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},)
        ),
        Code.SKIP,
        None,
        id="default constraints and a service that doesn't match",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, DNS, label_selector({"baz": "tar"})),
            spread_constraint(2, "planet", SA, label_selector({"fot": "rok"})),
            labels={"foo": "bar", "baz": "tar"},
        ),
        [],
        [SERVICE_FOO_BAR],
        PodTopologySpreadArgs(
            "List", ({"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS},)
        ),
        {},
        {},
        id="default constraints and a service, but pod has constraints",
    ),
    pytest.param(
        make_pod("p", labels={"foo": "bar"}),
        [],
        [SERVICE_FOO_BAR],
        PodTopologySpreadArgs(
            "List", ({"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},)
        ),
        Code.SKIP,
        None,
        id="default soft constraints and a service",
    ),
    pytest.param(
        spread_pod(*TWO),
        TWO_ZONES,
        SEVEN,
        LIST,
        counts(
            zone={"zone1": 3, "zone2": 4}, node={"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}
        ),
        {Z: 3, N: 0},
        id="TpKeyToDomainsNum is calculated when MinDomains is enabled",
    ),
    # nodeSelector foo: node-c is not counted
    pytest.param(
        spread_pod(spread_constraint(1, N, DNS, BAR), node_selector=FOO_NODES),
        NODES_FOO_FOO_BAR,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2}),
        {N: 1},
        id="NodeAffinityPolicy honored with labelSelectors",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, N, DNS, BAR, node_affinity_policy="Ignore"),
            node_selector=FOO_NODES,
        ),
        NODES_FOO_FOO_BAR,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2, "node-c": 0}),
        {N: 0},
        id="NodeAffinityPolicy ignored with labelSelectors",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, N, DNS, BAR), affinity=FOO_AFFINITY),
        NODES_FOO_FOO_BAR,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2}),
        {N: 1},
        id="NodeAffinityPolicy honored with nodeAffinity",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, N, DNS, BAR, node_affinity_policy="Ignore"), affinity=FOO_AFFINITY
        ),
        NODES_FOO_FOO_BAR,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2, "node-c": 0}),
        {N: 0},
        id="NodeAffinityPolicy ignored with nodeAffinity",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, N, DNS, BAR)),
        TAINTED_C,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2, "node-c": 0}),
        {N: 0},
        id="NodeTaintsPolicy ignored",
    ),
    pytest.param(
        spread_pod(spread_constraint(1, N, DNS, BAR, node_taints_policy="Honor")),
        TAINTED_C,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2}),
        {N: 1},
        id="NodeTaintsPolicy honored",
    ),
    pytest.param(
        spread_pod(
            spread_constraint(1, N, DNS, BAR, node_taints_policy="Honor"),
            tolerations=[
                toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
            ],
        ),
        TAINTED_C,
        BAR_ON_ABB,
        LIST,
        counts(node={"node-a": 1, "node-b": 2, "node-c": 0}),
        {N: 0},
        id="NodeTaintsPolicy honored with tolerated taints",
    ),
    # zone leaves node-b out (no foo): zone1 0 (a), zone2 1; node counts every node
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, DNS, FOO),
            spread_constraint(1, N, DNS, FOO, node_affinity_policy="Ignore"),
            node_selector=FOO_NODES,
        ),
        [node("node-a", "zone1", foo=""), node("node-b", "zone1"), node("node-x", "zone2", foo="")],
        foo_on("node-b", "node-b", "node-x"),
        LIST,
        counts(zone={"zone1": 0, "zone2": 1}, node={"node-a": 0, "node-b": 2, "node-x": 1}),
        {Z: 0, N: 0},
        id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
    ),
    # zone leaves the tainted node-b out
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, DNS, FOO, node_taints_policy="Honor"),
            spread_constraint(1, N, DNS, FOO),
        ),
        [
            node("node-a", "zone1", foo=""),
            node("node-b", "zone1", taints=True),
            node("node-x", "zone2", foo=""),
        ],
        foo_on("node-b", "node-b", "node-x"),
        LIST,
        counts(zone={"zone1": 0, "zone2": 1}, node={"node-a": 0, "node-b": 2, "node-x": 1}),
        {Z: 0, N: 0},
        id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
    ),
    # nodeSelector foo: only node-b and node-x are counted (for both constraints)
    pytest.param(
        spread_pod(*TWO, node_selector=FOO_NODES),
        [
            node("node-a", "zone1"),
            node("node-b", "zone1", taints=True, foo=""),
            node("node-x", "zone2", foo=""),
            node("node-y", "zone2"),
        ],
        foo_on("node-a", "node-a", "node-x", "node-y"),
        LIST,
        counts(zone={"zone1": 0, "zone2": 1}, node={"node-b": 0, "node-x": 1}),
        {Z: 0, N: 0},
        id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
    ),
    # zone counts every node (2/3); node leaves out a (no foo) and b (tainted)
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, DNS, FOO, node_affinity_policy="Ignore"),
            spread_constraint(1, N, DNS, FOO, node_taints_policy="Honor"),
            node_selector=FOO_NODES,
        ),
        [
            node("node-a", "zone1"),
            node("node-b", "zone1", taints=True, foo=""),
            node("node-x", "zone2", foo=""),
            node("node-y", "zone2", foo=""),
        ],
        foo_on("node-a", "node-a", "node-x", "node-x", "node-y"),
        LIST,
        counts(zone={"zone1": 2, "zone2": 3}, node={"node-x": 2, "node-y": 1}),
        {Z: 2, N: 1},
        id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
    ),
    # selector foo Exists AND bar=a (the pod's value): p-a2 and p-y1
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, DNS, FOO, match_label_keys=["bar"]),
            labels={"foo": "", "bar": "a"},
        ),
        TWO_ZONES,
        [
            *foo_on("node-a"),
            *foo_on("node-a", labels={"foo": "", "bar": "a"}),
            *foo_on("node-b"),
            *foo_on("node-y", labels={"foo": "", "bar": "a"}),
            *foo_on("node-y", labels={"bar": ""}),
        ],
        LIST,
        counts(zone={"zone1": 1, "zone2": 1}),
        {Z: 1},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
    ),
    # {} AND foo=a
    pytest.param(
        spread_pod(
            spread_constraint(1, Z, DNS, label_selector(), match_label_keys=["foo"]), labels=FOO_A
        ),
        TWO_ZONES,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", labels=FOO_A),
        LIST,
        counts(zone={"zone1": 3, "zone2": 2}),
        {Z: 2},
        id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
    ),
    # a nil labelSelector stays nil: nothing counted
    pytest.param(
        spread_pod(spread_constraint(1, Z, DNS, None, match_label_keys=["bar"])),
        TWO_ZONES,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", labels=FOO_A),
        LIST,
        counts(zone={"zone1": 0, "zone2": 0}),
        {Z: 0},
        id="key in matchLabelKeys is ignored when LabelSelector is nil",
    ),
    # the pod has no bar label: the selector stays foo Exists
    pytest.param(
        spread_pod(spread_constraint(1, Z, DNS, FOO, match_label_keys=["bar"])),
        TWO_ZONES,
        foo_on("node-a", "node-a", "node-b", "node-y", "node-y", labels=FOO_A),
        LIST,
        counts(zone={"zone1": 3, "zone2": 2}),
        {Z: 2},
        id="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
    ),
    pytest.param(
        make_pod("p", labels={"foo": ""}),
        [node("node-a", "zone1")],
        [],
        LIST,
        Code.SKIP,
        None,
        id="skip if not specified",
    ),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "pods", "args", "pairs", "minimum"), PRE_FILTER_CASES
)
def test_pre_filter_state(
    impl: tuple[FilterNodes, PreFilter],
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    args: PodTopologySpreadArgs,
    pairs: Any,
    minimum: Any,
) -> None:
    _, pre_filter = impl
    infos, by_node, _, extras = cluster_inputs(nodes, pods)
    status, state = pre_filter(infos, by_node, pod_info(incoming), args, extras)
    if pairs == Code.SKIP:
        assert status.code == Code.SKIP
        assert state is None
        return
    assert status == Status.success()
    assert dict(state.pair_counts) == pairs
    domains: dict[str, int] = {}
    for key, _ in pairs:
        domains[key] = domains.get(key, 0) + 1
    assert dict(state.domains) == domains
    assert dict(state.global_min) == minimum


def test_default_constraints_take_the_service_selector() -> None:
    # "default constraints and a service": the DoNotSchedule defaults node (3) and rack (5),
    # both with the service's selector foo=bar; the ScheduleAnyway one is not for Filter
    infos, by_node, _, extras = cluster_inputs([], [SERVICE_FOO_BAR])
    status, state = topologyspread.pre_filter(
        infos,
        by_node,
        pod_info(make_pod("p", labels={"foo": "bar", "baz": "kar"})),
        LIST_DEFAULTS,
        extras,
    )
    assert status.ok
    assert state is not None
    assert [(c.topology_key, c.max_skew) for c in state.constraints] == [("node", 3), ("rack", 5)]
    selector = state.constraints[0].selector
    assert selector.matches({"foo": "bar"})
    assert not selector.matches({"baz": "kar"})


def test_a_constraint_that_does_not_decode_is_an_error(
    impl: tuple[FilterNodes, PreFilter],
) -> None:
    filter_nodes, _ = impl
    bad = spread_constraint(1, Z, DNS, label_selector(None, expr("foo", "Equals", "x")))
    infos, by_node, _, extras = cluster_inputs(TWO_ZONES)
    result = filter_nodes(infos, by_node, pod_info(spread_pod(bad)), LIST, extras)
    assert result.pre_filter.code == Code.ERROR
    assert result.pre_filter.message.startswith(
        "obtaining pod's hard topology spread constraints: Pod default/p"
    )
    assert all(s.code == Code.ERROR for s in result.nodes.values())


def test_a_match_everything_selector_counts_no_pod(impl: tuple[FilterNodes, PreFilter]) -> None:
    # Not upstream: countPodsMatchSelector returns 0 for an empty selector, while the
    # incoming pod still matches it (self 1): zone1 0, zone2 0, every skew is 1
    filter_nodes, pre_filter = impl
    infos, by_node, _, extras = cluster_inputs(TWO_ZONES, FIVE)
    constraint = spread_constraint(1, Z, DNS, label_selector())
    status, state = pre_filter(infos, by_node, pod_info(spread_pod(constraint)), LIST, extras)
    assert status.ok
    assert state is not None
    assert dict(state.pair_counts) == {("zone", "zone1"): 0, ("zone", "zone2"): 0}
    result = filter_nodes(infos, by_node, pod_info(spread_pod(constraint)), LIST, extras)
    assert set(codes(result, [n.name for n in infos])) == {S}


def test_a_key_without_counted_domains_is_skipped(impl: tuple[FilterNodes, PreFilter]) -> None:
    # Not upstream: the nodeSelector leaves out every node, so no zone domain is counted;
    # upstream's minMatchNum then fails and Filter skips the constraint (node-a would
    # otherwise be 3 + 1 - 0 > 1)
    incoming = spread_pod(spread_constraint(1, Z, DNS, FOO), node_selector={"pool": "gpu"})
    filter_nodes, _ = impl
    infos, by_node, _, extras = cluster_inputs(TWO_ZONES, FIVE)
    result = filter_nodes(infos, by_node, pod_info(incoming), LIST, extras)
    assert set(codes(result, [n.name for n in infos])) == {S}
