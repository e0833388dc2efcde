"""InterPodAffinity PreFilter + Filter (asched.tools.reference.interpod.filter_nodes).

Cases transcribed from upstream ``interpodaffinity/filtering_test.go``:
TestRequiredAffinitySingleNode (26 cases) and TestRequiredAffinityMultipleNodes (18).
Upstream's empty namespace is our ``default`` (the decoder's default). Statuses:

* AFFINITY  = UnschedulableAndUnresolvable "node(s) didn't match pod affinity rules"
* ANTI      = Unschedulable "node(s) didn't match pod anti-affinity rules"
* EXISTING  = Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules"

Counting (upstream: pkg/scheduler/framework/plugins/interpodaffinity/filtering.go, PreFilter): ``affinity[(k, v)]`` counts existing pods matching *all* the
incoming pod's required affinity terms; ``anti[(k, v)]`` existing pods matching one of
its required anti-affinity terms; ``existing[(k, v)]`` existing pods' required
anti-affinity terms matching the incoming pod; v is the label of the existing pod's node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.framework.status import Code, Status
from asched.tools.reference import interpod
from asched.tools.reference.crosspod import FilterResult
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

FilterNodes = Callable[..., FilterResult]

#: A second implementation with the same signature is added here as a new entry.
IMPLEMENTATIONS: dict[str, FilterNodes] = {
    "reference": interpod.filter_nodes,
    "vectorised": engine_adapter.filter_nodes,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def filter_nodes(request: Any) -> FilterNodes:
    return IMPLEMENTATIONS[request.param]


OK = None
AFFINITY = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, interpod.REASON_AFFINITY)
ANTI = (Code.UNSCHEDULABLE, interpod.REASON_ANTI_AFFINITY)
EXISTING = (Code.UNSCHEDULABLE, interpod.REASON_EXISTING_ANTI_AFFINITY)
SKIP = Code.SKIP
SUCCESS = Code.SUCCESS


def term(key: str, operator: str, topology: str, *values: str, **kw: Any) -> dict[str, Any]:
    """A required term with one expression (upstream's PodAffinityIn/NotIn/Exists)."""
    return affinity_term(label_selector(None, expr(key, operator, *values)), topology, **kw)


def terms(*expressions: dict[str, Any], topology: str) -> dict[str, Any]:
    """A required term whose selector ANDs several expressions."""
    return affinity_term(label_selector(None, *expressions), topology)


def required(*items: dict[str, Any]) -> dict[str, Any]:
    return pod_affinity_rules(required=items)


def pod(labels: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    return make_pod("incoming", labels=labels, **kw)


def outcome(status: Status) -> tuple[Code, str] | None:
    if status.ok:
        return OK
    return (status.code, status.message)


# --- TestRequiredAffinitySingleNode --------------------------------------------------------

SERVICE = {"service": "securityscan"}
SECURITY = {"security": "S1"}
NODE1 = make_node("node1", labels={"region": "r1", "zone": "z11"})
TEAM1, TEAM2 = {"team": "team1"}, {"team": "team2"}
NAMESPACES = [
    namespace_object("subteam1.team1", TEAM1),
    namespace_object("subteam2.team1", TEAM1),
    namespace_object("subteam1.team2", TEAM2),
    namespace_object("subteam2.team2", TEAM2),
]
IN_TEAM1 = label_selector(None, expr("team", "In", "team1"))
SCAN_OR_V2 = ("securityscan", "value2")
AV_OR_V2 = ("antivirusscan", "value2")


def existing(labels: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    """The existing pod of the single-node cases (on node1 unless told otherwise)."""
    return bound_pod(kw.pop("node", "node1"), labels=labels, **kw)


SINGLE_NODE_CASES = [
    # no required terms, no existing anti-affinity: PreFilter skips, Filter does not run
    pytest.param(pod(), [], SKIP, OK, id="no required pod affinity, node with no existing pods"),
    # existing service=securityscan on node1 (region r1): affinity[(region, r1)] = 1
    pytest.param(
        pod(SECURITY, pod_affinity=required(term("service", "In", "region", *SCAN_OR_V2))),
        [existing(SERVICE)],
        SUCCESS,
        OK,
        id="satisfies required PodAffinity using In that matches the existing pod",
    ),
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(term("service", "NotIn", "region", "securityscan3", "value3")),
        ),
        [existing(SERVICE)],
        SUCCESS,
        OK,
        id="satisfies required PodAffinity using NotIn that matches the existing pod",
    ),
    # the term selects namespace DiffNameSpace only, the pod is in ns; the term has no
    # topologyKey either: node1 lacks the key "" -> affinity fails
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(
                affinity_term(
                    label_selector(None, expr("service", "In", *SCAN_OR_V2)),
                    "",
                    namespaces=["DiffNameSpace"],
                )
            ),
        ),
        [existing(SERVICE, namespace="ns")],
        SUCCESS,
        AFFINITY,
        id="does not satisfy PodAffinity because of a different namespace",
    ),
    pytest.param(
        pod(SERVICE, pod_affinity=required(term("service", "In", "", *AV_OR_V2))),
        [existing(SERVICE)],
        SUCCESS,
        AFFINITY,
        id="does not satisfy PodAffinity because of an unmatching labelSelector",
    ),
    # both terms match the existing pod: [Exists service, DoesNotExist wrongkey] and
    # [In securityscan, NotIn WrongValue]
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(
                terms(
                    expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topology="region"
                ),
                terms(
                    expr("service", "In", "securityscan"),
                    expr("service", "NotIn", "WrongValue"),
                    topology="region",
                ),
            ),
        ),
        [existing(SERVICE)],
        SUCCESS,
        OK,
        id="satisfies PodAffinity with different operators in multiple required terms",
    ),
    # the second term wants securityscan2: no existing pod matches all terms
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(
                terms(
                    expr("service", "Exists"), expr("wrongkey", "DoesNotExist"), topology="region"
                ),
                terms(
                    expr("service", "In", "securityscan2"),
                    expr("service", "NotIn", "WrongValue"),
                    topology="region",
                ),
            ),
        ),
        [existing(SERVICE)],
        SUCCESS,
        AFFINITY,
        id="matchExpressions are ANDed, one item does not match",
    ),
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(term("service", "In", "region", *SCAN_OR_V2)),
            pod_anti_affinity=required(term("service", "In", "node", *AV_OR_V2)),
        ),
        [existing(SERVICE)],
        SUCCESS,
        OK,
        id="satisfies PodAffinity and PodAntiAffinity with the existing pod",
    ),
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(term("service", "In", "region", *SCAN_OR_V2)),
            pod_anti_affinity=required(term("service", "In", "node", *AV_OR_V2)),
        ),
        [existing(SERVICE, pod_anti_affinity=required(term("service", "In", "node", *AV_OR_V2)))],
        SUCCESS,
        OK,
        id="satisfies PodAffinity, PodAntiAffinity and anti-affinity symmetry",
    ),
    # anti term service In [securityscan, value2] on zone: anti[(zone, z11)] = 1
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(term("service", "In", "region", *SCAN_OR_V2)),
            pod_anti_affinity=required(term("service", "In", "zone", *SCAN_OR_V2)),
        ),
        [existing(SERVICE)],
        SUCCESS,
        ANTI,
        id="satisfies PodAffinity but not PodAntiAffinity with the existing pod",
    ),
    # the existing pod's anti term matches the incoming pod: existing[(zone, z11)] = 1
    pytest.param(
        pod(
            SERVICE,
            pod_affinity=required(term("service", "In", "region", *SCAN_OR_V2)),
            pod_anti_affinity=required(term("service", "In", "node", *AV_OR_V2)),
        ),
        [existing(SERVICE, pod_anti_affinity=required(term("service", "In", "zone", *SCAN_OR_V2)))],
        SUCCESS,
        EXISTING,
        id="satisfies PodAffinity and PodAntiAffinity but not anti-affinity symmetry",
    ),
    # the only matching pod is on node2, which is not in the snapshot; the pod's own labels
    # fail its NotIn term, so the first-pod rule does not apply
    pytest.param(
        pod(SERVICE, pod_affinity=required(term("service", "NotIn", "region", *SCAN_OR_V2))),
        [existing(SERVICE, node="node2")],
        SUCCESS,
        AFFINITY,
        id="pod matches its own label in PodAffinity and that matches the existing pod labels",
    ),
    pytest.param(
        pod(SERVICE),
        [existing(SERVICE, pod_anti_affinity=required(term("service", "In", "zone", *SCAN_OR_V2)))],
        SUCCESS,
        EXISTING,
        id="existing pod anti-affinity respected without own anti-affinity, not satisfied",
    ),
    # NotIn excludes the incoming pod: no existing anti count and no own terms -> Skip
    pytest.param(
        pod(SERVICE),
        [
            existing(
                SERVICE, pod_anti_affinity=required(term("service", "NotIn", "zone", *SCAN_OR_V2))
            )
        ],
        SKIP,
        OK,
        id="existing pod anti-affinity respected without own anti-affinity, satisfied",
    ),
    # incoming anti [security Exists] on region matches the existing pod: anti[(region, r1)]
    pytest.param(
        pod(
            SERVICE,
            pod_anti_affinity=required(
                term("service", "Exists", "region"), term("security", "Exists", "region")
            ),
        ),
        [existing(SECURITY, pod_anti_affinity=required(term("security", "Exists", "zone")))],
        SUCCESS,
        ANTI,
        id="satisfies anti-affinity of the existing pod but not the incoming pod's",
    ),
    pytest.param(
        pod(
            SERVICE,
            pod_anti_affinity=required(
                term("service", "Exists", "zone"), term("security", "Exists", "zone")
            ),
        ),
        [existing(SECURITY, pod_anti_affinity=required(term("security", "Exists", "zone")))],
        SUCCESS,
        ANTI,
        id="anti-affinity symmetry a1: pods partially match each other's terms",
    ),
    # the incoming pod's term misses the existing pod (no security label); the existing
    # pod's second term [security Exists] matches the incoming pod -> existing[(zone, z11)]
    pytest.param(
        pod(SECURITY, pod_anti_affinity=required(term("security", "Exists", "zone"))),
        [
            existing(
                SERVICE,
                pod_anti_affinity=required(
                    term("service", "Exists", "zone"), term("security", "Exists", "zone")
                ),
            )
        ],
        SUCCESS,
        EXISTING,
        id="anti-affinity symmetry a2: pods partially match each other's terms",
    ),
    pytest.param(
        pod(
            {"abc": "", "xyz": ""},
            pod_anti_affinity=required(
                term("abc", "Exists", "zone"), term("def", "Exists", "zone")
            ),
        ),
        [
            existing(
                {"def": "", "xyz": ""},
                pod_anti_affinity=required(
                    term("abc", "Exists", "zone"), term("def", "Exists", "zone")
                ),
            )
        ],
        SUCCESS,
        ANTI,
        id="anti-affinity symmetry b1: pods partially match each other's terms",
    ),
    pytest.param(
        pod(
            {"def": "", "xyz": ""},
            pod_anti_affinity=required(
                term("abc", "Exists", "zone"), term("def", "Exists", "zone")
            ),
        ),
        [
            existing(
                {"abc": "", "xyz": ""},
                pod_anti_affinity=required(
                    term("abc", "Exists", "zone"), term("def", "Exists", "zone")
                ),
            )
        ],
        SUCCESS,
        ANTI,
        id="anti-affinity symmetry b2: pods partially match each other's terms",
    ),
    pytest.param(
        pod(
            SERVICE,
            pod_affinity=required(
                term("service", "In", "region", "{{.bad-value.}}"),
                term("service", "In", "node", *AV_OR_V2),
            ),
        ),
        [],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "parsing",
        id="PodAffinity fails PreFilter with an invalid affinity label syntax",
    ),
    pytest.param(
        pod(
            SERVICE,
            pod_affinity=required(
                term("service", "In", "region", "foo"),
                term("service", "In", "node", "{{.bad-value.}}"),
            ),
        ),
        [],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "parsing",
        id="PodAffinity fails PreFilter with an invalid label syntax in a later term",
    ),
    # namespaceSelector team In team1 resolves to subteam1.team1 and subteam2.team1
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(
                term("service", "In", "region", *SCAN_OR_V2, namespace_selector=IN_TEAM1)
            ),
        ),
        [existing(SERVICE, namespace="subteam1.team1")],
        SUCCESS,
        OK,
        id="affinity with NamespaceSelector",
    ),
    pytest.param(
        pod(
            SECURITY,
            pod_affinity=required(
                term("service", "In", "region", *SCAN_OR_V2, namespace_selector=IN_TEAM1)
            ),
        ),
        [existing(SERVICE, namespace="subteam1.team2")],
        SUCCESS,
        AFFINITY,
        id="affinity with non-matching NamespaceSelector",
    ),
    pytest.param(
        pod(
            SECURITY,
            namespace="subteam1.team1",
            pod_anti_affinity=required(
                term("service", "In", "zone", *SCAN_OR_V2, namespace_selector=IN_TEAM1)
            ),
        ),
        [existing(SERVICE, namespace="subteam2.team1")],
        SUCCESS,
        ANTI,
        id="anti-affinity with matching NamespaceSelector",
    ),
    # namespaceSelector {} selects every namespace
    pytest.param(
        pod(
            SECURITY,
            namespace="subteam1.team1",
            pod_anti_affinity=required(
                term("service", "In", "zone", *SCAN_OR_V2, namespace_selector=label_selector())
            ),
        ),
        [existing(SERVICE, namespace="subteam2.team1")],
        SUCCESS,
        ANTI,
        id="anti-affinity with matching all NamespaceSelector",
    ),
    pytest.param(
        pod(
            SECURITY,
            namespace="subteam1.team1",
            pod_anti_affinity=required(
                term("service", "In", "zone", *SCAN_OR_V2, namespace_selector=IN_TEAM1)
            ),
        ),
        [existing(SERVICE, namespace="subteam1.team2")],
        SUCCESS,
        OK,
        id="anti-affinity with non-matching NamespaceSelector",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "pre_filter", "expected"), SINGLE_NODE_CASES)
def test_required_affinity_single_node(
    filter_nodes: FilterNodes,
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    pre_filter: Code,
    expected: Any,
) -> None:
    nodes, by_node, ns_labels, _ = cluster_inputs([NODE1], [*pods, *NAMESPACES])
    result = filter_nodes(nodes, by_node, ns_labels, pod_info(incoming))
    assert result.pre_filter.code == pre_filter
    if expected == "parsing":
        # UnschedulableAndUnresolvable everywhere, naming the kind, the field and the value
        message = result.nodes["node1"].message
        assert message.startswith("parsing pod: requiredAffinityTerms: spec.affinity.podAffinity")
        assert 'Invalid value: "{{.bad-value.}}"' in message
        assert result.nodes["node1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        return
    assert outcome(result.nodes["node1"]) == expected


# --- TestRequiredAffinityMultipleNodes ------------------------------------------------------

CHINA = {"region": "China"}
CHINA_AZ1 = {"region": "China", "az": "az1"}
INDIA = {"region": "India"}


def nodes_abc(*labels: dict[str, str], names: str = "ABC") -> list[dict[str, Any]]:
    return [make_node(f"node{n}", labels=lbl) for n, lbl in zip(names, labels, strict=False)]


def rzh(region: str, zone: str, host: str) -> dict[str, str]:
    return {"region": region, "zone": zone, "hostname": host}


MULTI_NODE_CASES = [
    # p1 (foo=bar) on node1 (China): affinity[(region, China)] = 1 -> node1, node2 ok
    pytest.param(
        pod(pod_affinity=required(term("foo", "In", "region", "bar"))),
        [bound_pod("node1", labels={"foo": "bar"})],
        [
            make_node("node1", labels=CHINA),
            make_node("node2", labels=CHINA_AZ1),
            make_node("node3", labels=INDIA),
        ],
        SUCCESS,
        [OK, OK, AFFINITY],
        id="all nodes with the same topology value as a matching pod fit",
    ),
    # p1 matches only the foo term: affinity stays empty; the pod matches both its own
    # terms and every node has zone -> first pod of the group may go anywhere
    pytest.param(
        pod(
            {"foo": "bar", "service": "securityscan"},
            pod_affinity=required(
                term("foo", "In", "zone", "bar"), term("service", "In", "zone", "securityscan")
            ),
        ),
        [bound_pod("nodeA", labels={"foo": "bar"})],
        [
            make_node("nodeA", labels={"zone": "az1", "hostname": "h1"}),
            make_node("nodeB", labels={"zone": "az2", "hostname": "h2"}),
        ],
        SUCCESS,
        [OK, OK],
        id="the first pod of a collection is not blocked by its own affinity",
    ),
    pytest.param(
        pod(
            {"foo": "bar", "service": "securityscan"},
            pod_affinity=required(
                term("foo", "In", "zone", "bar"), term("service", "In", "zone", "securityscan")
            ),
        ),
        [bound_pod("nodeA", labels={"foo": "bar"})],
        [
            make_node("nodeA", labels={"zoneLabel": "az1", "hostname": "h1"}),
            make_node("nodeB", labels={"zoneLabel": "az2", "hostname": "h2"}),
        ],
        SUCCESS,
        [AFFINITY, AFFINITY],
        id="the first pod of a collection still needs the topology keys on the node",
    ),
    # foo=abc on nodeA (region r1): anti[(region, r1)] = 1 -> both r1 nodes rejected
    pytest.param(
        pod(pod_anti_affinity=required(term("foo", "In", "region", "abc"))),
        [bound_pod("nodeA", labels={"foo": "abc"})],
        [
            make_node("nodeA", labels={"region": "r1", "hostname": "nodeA"}),
            make_node("nodeB", labels={"region": "r1", "hostname": "nodeB"}),
        ],
        SUCCESS,
        [ANTI, ANTI],
        id="same region as a pod matching the anti-affinity: both nodes rejected",
    ),
    pytest.param(
        pod(
            pod_anti_affinity=required(
                term("foo", "In", "region", "abc"), term("service", "In", "zone", "securityscan")
            )
        ),
        [bound_pod("nodeA", labels={"foo": "abc", "service": "securityscan"})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [ANTI, ANTI],
        id="anti-affinity matches a pod when any term matches",
    ),
    pytest.param(
        pod(pod_anti_affinity=required(term("foo", "In", "region", "abc"))),
        [bound_pod("nodeA", labels={"foo": "abc"})],
        [
            make_node("nodeA", labels=CHINA),
            make_node("nodeB", labels=CHINA_AZ1),
            make_node("nodeC", labels=INDIA),
        ],
        SUCCESS,
        [ANTI, ANTI, OK],
        id="anti-affinity rejects nodeA and nodeB, nodeC fits",
    ),
    # the NS2 pod's anti term selects its own namespace NS2, not the incoming NS1 pod
    pytest.param(
        pod(
            {"foo": "123"},
            namespace="NS1",
            pod_anti_affinity=required(term("foo", "In", "region", "bar")),
        ),
        [
            bound_pod("nodeA", namespace="NS1", labels={"foo": "bar"}),
            bound_pod(
                "nodeC",
                namespace="NS2",
                pod_anti_affinity=required(term("foo", "In", "region", "123")),
            ),
        ],
        [
            make_node("nodeA", labels=CHINA),
            make_node("nodeB", labels=CHINA_AZ1),
            make_node("nodeC", labels=INDIA),
        ],
        SUCCESS,
        [ANTI, ANTI, OK],
        id="nodeC fits although its pod's anti-affinity matches, in a different namespace",
    ),
    # the existing term's selector matches but no node has invalid-node-label -> Skip
    pytest.param(
        pod({"foo": ""}),
        [
            bound_pod(
                "nodeA", pod_anti_affinity=required(term("foo", "Exists", "invalid-node-label"))
            )
        ],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z1", "nodeB")),
        ],
        SKIP,
        [OK, OK],
        id="existing pod's anti-affinity term with a topologyKey no node has",
    ),
    pytest.param(
        pod(
            node_name="nodeA",
            pod_anti_affinity=required(term("foo", "Exists", "invalid-node-label")),
        ),
        [bound_pod("nodeA", labels={"foo": ""})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z1", "nodeB")),
        ],
        SUCCESS,
        [OK, OK],
        id="incoming pod's anti-affinity: the topologyKey is checked after the selector",
    ),
    # existing[(zone, z1)] = 1 and existing[(region, r1)] = 1: both nodes are in r1
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [
            bound_pod("nodeA", pod_anti_affinity=required(term("foo", "Exists", "zone"))),
            bound_pod("nodeA", pod_anti_affinity=required(term("bar", "Exists", "region"))),
        ],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [EXISTING, EXISTING],
        id="incoming pod violates each existing pod's terms on all nodes",
    ),
    # anti[(zone, z1)] from the foo pod on nodeA, anti[(region, r1)] from the bar pod on nodeB
    pytest.param(
        pod(
            pod_anti_affinity=required(
                term("foo", "Exists", "zone"), term("bar", "Exists", "region")
            )
        ),
        [bound_pod("nodeA", labels={"foo": ""}), bound_pod("nodeB", labels={"bar": ""})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [ANTI, ANTI],
        id="incoming pod violates at least one anti-affinity rule on every node",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [
            bound_pod(
                "nodeA",
                pod_anti_affinity=required(
                    term("foo", "Exists", "invalid-node-label"), term("bar", "Exists", "zone")
                ),
            )
        ],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [EXISTING, OK],
        id="existing pod's anti-affinity: one term with an invalid topologyKey",
    ),
    pytest.param(
        pod(
            pod_anti_affinity=required(
                term("foo", "Exists", "invalid-node-label"), term("bar", "Exists", "zone")
            )
        ),
        [bound_pod("nodeA", labels={"foo": "", "bar": ""})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [ANTI, OK],
        id="incoming pod's anti-affinity: one term with an invalid topologyKey",
    ),
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [
            bound_pod(
                "nodeA",
                pod_anti_affinity=required(
                    term("foo", "Exists", "region"), term("bar", "Exists", "zone")
                ),
            )
        ],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [EXISTING, EXISTING],
        id="existing pod's anti-affinity: all terms with valid topologyKeys",
    ),
    pytest.param(
        pod(
            pod_anti_affinity=required(
                term("foo", "Exists", "region"), term("bar", "Exists", "zone")
            )
        ),
        [bound_pod("nodeA", labels={"foo": "", "bar": ""})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [ANTI, ANTI],
        id="incoming pod's anti-affinity: all terms with valid topologyKeys",
    ),
    # existing[(zone, z1)] and existing[(zone, z2)]: only nodeC (z3) is left
    pytest.param(
        pod({"foo": "", "bar": ""}),
        [
            bound_pod(
                "nodeA",
                pod_anti_affinity=required(
                    term("foo", "Exists", "zone"), term("labelA", "Exists", "zone")
                ),
            ),
            bound_pod(
                "nodeB",
                pod_anti_affinity=required(
                    term("bar", "Exists", "zone"), term("labelB", "Exists", "zone")
                ),
            ),
        ],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
            make_node("nodeC", labels=rzh("r1", "z3", "nodeC")),
        ],
        SUCCESS,
        [EXISTING, EXISTING, OK],
        id="existing pods on nodeA and nodeB each have a matching term: only nodeC",
    ),
    # pod1 has both labels: affinity[(region, r1)] = affinity[(zone, z1)] = 1
    pytest.param(
        pod(pod_affinity=required(term("foo", "Exists", "region"), term("bar", "Exists", "zone"))),
        [bound_pod("nodeA", labels={"foo": "", "bar": ""})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z1", "nodeB")),
        ],
        SUCCESS,
        [OK, OK],
        id="incoming affinity: all terms must match one pod, then the topology keys",
    ),
    # no single pod matches both terms: affinity is empty, and the unlabelled incoming pod
    # does not match its own terms
    pytest.param(
        pod(pod_affinity=required(term("foo", "Exists", "region"), term("bar", "Exists", "zone"))),
        [bound_pod("nodeA", labels={"foo": ""}), bound_pod("nodeB", labels={"bar": ""})],
        [
            make_node("nodeA", labels=rzh("r1", "z1", "nodeA")),
            make_node("nodeB", labels=rzh("r1", "z2", "nodeB")),
        ],
        SUCCESS,
        [AFFINITY, AFFINITY],
        id="incoming affinity: the terms must be satisfied by the same pod",
    ),
]


@pytest.mark.parametrize(("incoming", "pods", "nodes", "pre_filter", "expected"), MULTI_NODE_CASES)
def test_required_affinity_multiple_nodes(
    filter_nodes: FilterNodes,
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    pre_filter: Code,
    expected: list[Any],
) -> None:
    infos, by_node, ns_labels, _ = cluster_inputs(nodes, [*pods, namespace_object("NS1")])
    result = filter_nodes(infos, by_node, ns_labels, pod_info(incoming))
    assert result.pre_filter.code == pre_filter
    assert [outcome(result.nodes[n.name]) for n in infos] == expected


def test_pre_filter_counts() -> None:
    # Upstream's TestPreFilterStateAddRemovePod first case, after the add: existing pods
    # p1 (foo=bar) on nodeA (r1/z11), p2 (anti foo In [bar] on region) on nodeC (r2/z21),
    # added pod (foo=bar, same anti term) on nodeB (r1/z12); the pending pod has the anti
    # term too. anti[(region, r1)] = 2 (p1 and the added pod, both in r1); the pending pod
    # (foo=bar) matches the anti terms of p2 and the added pod: existing[(region, r2)] = 1,
    # existing[(region, r1)] = 1.
    anti = required(term("foo", "In", "region", "bar"))
    nodes = [
        make_node("nodeA", labels={"region": "r1", "zone": "z11"}),
        make_node("nodeB", labels={"region": "r1", "zone": "z12"}),
        make_node("nodeC", labels={"region": "r2", "zone": "z21"}),
    ]
    pods = [
        bound_pod("nodeA", labels={"foo": "bar"}),
        bound_pod("nodeC", pod_anti_affinity=anti),
        bound_pod("nodeB", labels={"foo": "bar"}, pod_anti_affinity=anti),
    ]
    infos, by_node, ns_labels, _ = cluster_inputs(nodes, pods)
    status, state = interpod.pre_filter(
        infos, by_node, ns_labels, pod_info(pod({"foo": "bar"}, pod_anti_affinity=anti))
    )
    assert status.ok
    assert state is not None
    assert dict(state.anti) == {("region", "r1"): 2}
    assert dict(state.affinity) == {}
    assert dict(state.existing_anti) == {("region", "r2"): 1, ("region", "r1"): 1}


def test_existing_terms_see_the_labels_of_the_incoming_pods_namespace() -> None:
    # Not upstream: an existing pod's anti-affinity term with namespaceSelector team=team1
    # is matched against the labels of the incoming pod's namespace (subteam1.team1 has
    # team1): existing[(zone, z11)] = 1. In subteam1.team2 the term does not apply.
    anti = required(term("service", "In", "zone", "securityscan", namespace_selector=IN_TEAM1))
    pods = [existing({"app": "db"}, namespace="subteam2.team2", pod_anti_affinity=anti)]
    nodes, by_node, ns_labels, _ = cluster_inputs([NODE1], [*pods, *NAMESPACES])
    inside = pod_info(pod(SERVICE, namespace="subteam1.team1"))
    outside = pod_info(pod(SERVICE, namespace="subteam1.team2"))
    assert (
        outcome(interpod.filter_nodes(nodes, by_node, ns_labels, inside).nodes["node1"]) == EXISTING
    )
    assert interpod.filter_nodes(nodes, by_node, ns_labels, outside).pre_filter.code == SKIP
