"""DefaultPreemption's choice and PostFilter outcome (asched.tools.reference.preemption).

Cases transcribed from upstream ``defaultpreemption/default_preemption_test.go``:
TestSelectBestCandidate (9 cases), TestPodEligibleToPreemptOthers (5), TestPostFilter
(9 of 10: the extender case is left out, the reference has no extenders) and TestPreempt
(4 of 7: the three extender cases are left out). Node and pod sizes and priorities as in
test_preemption_dry_run.py; start times are seconds after the epoch.

pickOneNodeForPreemption (upstream: pkg/scheduler/framework/preemption/preemption.go), in order: fewest PDB violations, lowest highest
victim priority, smallest sum of (priority + 2^31), fewest victims, latest start among
the highest-priority victims, then the first candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.config.types import DefaultPreemptionArgs
from asched.framework.status import Code, Status
from asched.tools.reference import preemption
from asched.tools.reference.fits import filter_chain
from asched.tools.reference.preemption import PreemptionResult
from tests.builders import (
    cluster_inputs,
    exists,
    make_node,
    make_pod,
    pod_info,
    profile_with,
    spread_constraint,
    with_pod_fields,
)
from tests.unit.preemption import engine_adapter

PreemptFn = Callable[..., PreemptionResult]


def _reference(*inputs: Any, profile: Any, extras: Any) -> PreemptionResult:
    infos, by_node, me, statuses, fits = inputs
    return preemption.preempt(infos, by_node, me, statuses, fits)


def _vectorised(*inputs: Any, profile: Any, extras: Any) -> PreemptionResult:
    infos, by_node, me, statuses, _fits = inputs
    return engine_adapter.preempt(infos, by_node, me, statuses, profile, extras=extras)


#: Each implementation takes (nodes, pods by node, pod, statuses, fits, profile=, extras=).
IMPLEMENTATIONS: dict[str, PreemptFn] = {"reference": _reference, "vectorised": _vectorised}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def preempt(request: Any) -> PreemptFn:
    return IMPLEMENTATIONS[request.param]


NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = (
    ("100m", "100"),
    ("200m", "200"),
    ("300m", "300"),
    ("500m", "500"),
)
RESOURCES = profile_with(filter=["NodeResourcesFit"])
LABEL_KEYS = ("hostname", "zone", "region")


def node(
    spec: str, cpu: str | None = "500m", memory: str | None = "500", pods: str = "32"
) -> dict[str, Any]:
    parts = spec.split("/")
    return make_node(
        parts[0],
        cpu=cpu,
        memory=memory,
        pods=pods,
        labels=dict(zip(LABEL_KEYS, parts, strict=False)),
    )


def pod(
    name: str,
    priority: int | None,
    res: tuple[str, str] | None = None,
    node_name: str = "",
    started: int | None = None,
    **kw: Any,
) -> dict[str, Any]:
    cpu, memory = res if res is not None else (None, None)
    raw = make_pod(name, node_name=node_name, priority=priority, cpu=cpu, memory=memory, **kw)
    return with_pod_fields(raw, started=started) if started is not None else raw


def run(
    impl: PreemptFn,
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    statuses: dict[str, Status] | None = None,
    fits_wrapper: Callable[..., Any] | None = None,
    profile: Any = RESOURCES,
) -> PreemptionResult:
    """Run PostFilter; statuses default to the filter chain's own verdicts."""
    infos, by_node, _, extras = cluster_inputs(nodes, pods)
    me = pod_info(incoming)
    fits = filter_chain(me, infos, by_node, profile, extras=extras)
    if statuses is None:
        statuses = {n.name: fits(n, by_node.get(n.name, ())) for n in infos}
    if fits_wrapper is not None:
        if impl is _vectorised:
            pytest.skip("the case injects a failing reference filter callback")
        fits = fits_wrapper(fits)
    return impl(infos, by_node, me, statuses, fits, profile=profile, extras=extras)


# --- TestSelectBestCandidate ------------------------------------------------------------------

NODES3 = [node("node1"), node("node2"), node("node3")]
SELECT_CASES = [
    # both candidates evict one mid pod started at 0: every criterion ties
    pytest.param(
        pod("p", HIGH, LARGE),
        [node("node1"), node("node2")],
        [pod("p1", MID, LARGE, "node1", 0), pod("p2", MID, LARGE, "node2", 0)],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    # a veryLarge pod evicts everything: highest victim priority mid, mid, low -> node3
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", MID, MEDIUM, "node1", 0),
            pod("p1.2", MID, LARGE, "node1", 0),
            pod("p2.1", MID, MEDIUM, "node2", 0),
            pod("p2.2", LOW, MEDIUM, "node2", 0),
            pod("p3.1", LOW, MEDIUM, "node3", 0),
            pod("p3.2", LOW, MEDIUM, "node3", 0),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    # highest mid everywhere; sums (+2^31 each): 200, 100, 200 -> node2
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", MID, MEDIUM, "node1", 0),
            pod("p1.2", MID, LARGE, "node1", 0),
            pod("p2.1", MID, LARGE, "node2", 0),
            pod("p2.2", LOW, MEDIUM, "node2", 0),
            pod("p3.1", MID, MEDIUM, "node3", 0),
            pod("p3.2", MID, MEDIUM, "node3", 0),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    # sums: node1 100 - 100 + 100 - 100 + 4 x 2^31, node2 0 + 2 x 2^31, node3 0 + 3 x 2^31
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", MID, SMALL, "node1", 0),
            pod("p1.2", NEG, SMALL, "node1", 0),
            pod("p1.3", MID, SMALL, "node1", 0),
            pod("p1.4", NEG, SMALL, "node1", 0),
            pod("p2.1", MID, LARGE, "node2", 0),
            pod("p2.2", NEG, MEDIUM, "node2", 0),
            pod("p3.1", MID, MEDIUM, "node3", 0),
            pod("p3.2", NEG, SMALL, "node3", 0),
            pod("p3.3", LOW, SMALL, "node3", 0),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    # raw sums would favour node1 (-100); adjusted: node1 -100 + 3 x 2^31,
    # node2 0 + 2 x 2^31, node3 0 + 3 x 2^31 -> node2
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", MID, SMALL, "node1", 0),
            pod("p1.2", NEG, SMALL, "node1", 0),
            pod("p1.3", NEG, SMALL, "node1", 0),
            pod("p2.1", MID, LARGE, "node2", 0),
            pod("p2.2", NEG, MEDIUM, "node2", 0),
            pod("p3.1", MID, MEDIUM, "node3", 0),
            pod("p3.2", NEG, SMALL, "node3", 0),
            pod("p3.3", LOW, SMALL, "node3", 0),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    # highest: mid, high, mid, mid; sums among 1, 3, 4: 100 + 3 x 2^31, 100 + 4 x 2^31,
    # 200 + 4 x 2^31 -> node1
    pytest.param(
        pod("p", VERY_HIGH, VERY_LARGE),
        [*NODES3, node("node4")],
        [
            pod("p1.1", MID, SMALL, "node1", 0),
            pod("p1.2", LOW, SMALL, "node1", 0),
            pod("p1.3", LOW, SMALL, "node1", 0),
            pod("p2.1", HIGH, LARGE, "node2", 0),
            pod("p3.1", MID, MEDIUM, "node3", 0),
            pod("p3.2", LOW, SMALL, "node3", 0),
            pod("p3.3", LOW, SMALL, "node3", 0),
            pod("p3.4", LOW, MEDIUM, "node3", 0),
            pod("p4.1", MID, MEDIUM, "node4", 0),
            pod("p4.2", MID, SMALL, "node4", 0),
            pod("p4.3", MID, SMALL, "node4", 0),
            pod("p4.4", NEG, SMALL, "node4", 0),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    # earliest start among the top-priority victims: 2, 3, 1 -> the latest is node2
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", MID, MEDIUM, "node1", 2),
            pod("p1.2", MID, MEDIUM, "node1", 2),
            pod("p2.1", MID, MEDIUM, "node2", 3),
            pod("p2.2", MID, MEDIUM, "node2", 3),
            pod("p3.1", MID, MEDIUM, "node3", 1),
            pod("p3.2", MID, MEDIUM, "node3", 1),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    # earliest per node: min(4, 2) = 2, min(5, 1) = 1, min(3, 6) = 3 -> node3
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", MID, MEDIUM, "node1", 4),
            pod("p1.2", MID, MEDIUM, "node1", 2),
            pod("p2.1", MID, MEDIUM, "node2", 5),
            pod("p2.2", MID, MEDIUM, "node2", 1),
            pod("p3.1", MID, MEDIUM, "node3", 3),
            pod("p3.2", MID, MEDIUM, "node3", 6),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    # only the mid victims count: node1 2, node2 6, node3 5 -> node2
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        [
            pod("p1.1", LOW, MEDIUM, "node1", 4),
            pod("p1.2", MID, MEDIUM, "node1", 2),
            pod("p2.1", MID, MEDIUM, "node2", 6),
            pod("p2.2", LOW, MEDIUM, "node2", 1),
            pod("p3.1", LOW, MEDIUM, "node3", 3),
            pod("p3.2", MID, MEDIUM, "node3", 5),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("incoming", "nodes", "pods", "expected"), SELECT_CASES)
def test_select_best_candidate(
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    expected: set[str],
) -> None:
    infos, by_node, _, _ = cluster_inputs(nodes, pods)
    me = pod_info(incoming)
    fits = filter_chain(me, infos, by_node, RESOURCES)
    found = preemption.dry_run(me, infos, by_node, fits, (), 0, len(infos))
    best = preemption.pick_one_node(found.candidates)
    assert best is not None
    assert best.node in expected


def test_the_first_candidate_wins_a_full_tie() -> None:
    # upstream picks an arbitrary one (Go map order); the reference the first visited
    tie = [
        preemption.Candidate("node2", (pod_info(pod("a", MID, node_name="node2", started=0)),), 0),
        preemption.Candidate("node1", (pod_info(pod("b", MID, node_name="node1", started=0)),), 0),
    ]
    best = preemption.pick_one_node(tie)
    assert best is not None
    assert best.node == "node2"


# --- TestPodEligibleToPreemptOthers -------------------------------------------------------------

TERMINATING_LOW = with_pod_fields(pod("p1", LOW, node_name="node1"), terminating=True)
PREEMPTED_LOW = with_pod_fields(TERMINATING_LOW, preempted_by_scheduler=True)
NOMINATED = with_pod_fields(pod("p_with_nominated_node", HIGH), nominated_node="node1")

ELIGIBLE_CASES = [
    # the nominated node is now UnschedulableAndUnresolvable: try again anyway
    pytest.param(
        NOMINATED,
        [PREEMPTED_LOW],
        Status.unresolvable("node(s) had untolerated taint {foo: bar}"),
        True,
        "",
        id="Pod with nominated node",
    ),
    pytest.param(
        pod("p_without_nominated_node", HIGH), [], None, True, "", id="Pod without nominated node"
    ),
    pytest.param(
        with_pod_fields(pod("p_with_preempt_never_policy", HIGH), preemption_policy="Never"),
        [],
        None,
        False,
        preemption.NOT_ELIGIBLE_NEVER,
        id="Pod with 'PreemptNever' preemption policy",
    ),
    pytest.param(
        NOMINATED,
        [PREEMPTED_LOW],
        None,
        False,
        preemption.NOT_ELIGIBLE_TERMINATING,
        id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
    ),
    pytest.param(NOMINATED, [TERMINATING_LOW], None, True, "", id="non-victim Pods terminating"),
]


@pytest.mark.parametrize(
    ("incoming", "pods", "nominated_status", "expected", "why"), ELIGIBLE_CASES
)
def test_pod_eligible_to_preempt_others(
    incoming: dict[str, Any],
    pods: list[dict[str, Any]],
    nominated_status: Status | None,
    expected: bool,
    why: str,
) -> None:
    _infos, by_node, _, _ = cluster_inputs([node("node1")], pods)
    victims = {
        f"default/{p['metadata']['name']}" for p in pods if preemption.is_preemption_victim(p)
    }
    got = preemption.eligible_to_preempt(pod_info(incoming), by_node, nominated_status, victims)
    assert got == (expected, why)


# --- TestPostFilter -------------------------------------------------------------------------------

ONE_POD = {"cpu": None, "memory": None, "pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
U = Status.unschedulable()
UU = Status.unresolvable()


def failing_on_error_label(fits: Any) -> Any:
    """Upstream's TestPlugin: RemovePod fails on nodes labelled error=true."""

    def wrapped(target: Any, pods: Any) -> Status:
        if target.labels.get("error") == "true":
            return Status.error(
                'running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'
            )
        return fits(target, pods)

    return wrapped


POST_FILTER_CASES = [
    # node1 holds one pod: evicting p1 (priority 0 < 1000) makes room
    pytest.param(
        pod("p", HIGH),
        [node("node1", **ONE_POD)],
        [pod("p1", None, node_name="node1")],
        {"node1": U},
        None,
        Status.success(),
        "node1",
        ["p1"],
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        pod("p", None),
        [node("node1", **ONE_POD)],
        [pod("p1", None, node_name="node1")],
        {"node1": U},
        None,
        Status.unschedulable(
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        ),
        "",
        [],
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        pod("p", HIGH),
        [node("node1", **ONE_POD)],
        [pod("p1", None, node_name="node1")],
        {"node1": UU},
        None,
        Status.unschedulable(
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        ),
        "",
        [],
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        pod("p", MID),
        [node("node1", **ONE_POD), node("node2", **ONE_POD)],
        [pod("p1", HIGH, node_name="node1"), pod("p2", LOW, node_name="node2")],
        {"node1": U, "node2": U},
        None,
        Status.success(),
        "node2",
        ["p2"],
        id="pod can be made schedulable on one node",
    ),
    # 300m > 200m even on an empty node
    pytest.param(
        pod("p", HIGH, LARGE),
        [node("node1", **NODE_RES), node("node2", **NODE_RES)],
        [pod("p1", None, node_name="node1"), pod("p2", None, node_name="node2")],
        {"node1": U, "node2": U},
        None,
        Status.unschedulable("preemption: 0/2 nodes are available: 2 Insufficient cpu."),
        "",
        [],
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        [node("node1", **ONE_POD), node("node2", **NODE_RES), node("node3", **ONE_POD)],
        [
            pod("p1", HIGH, node_name="node1"),
            pod("p2", None, node_name="node2"),
            pod("p3", HIGH, node_name="node3"),
        ],
        {"node1": U, "node2": U, "node3": U},
        None,
        Status.unschedulable(
            "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."
        ),
        "",
        [],
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
    ),
    # node3 has no status (absent: not helpful), node4 is UnschedulableAndUnresolvable
    pytest.param(
        pod("p", HIGH, LARGE),
        [node(f"node{i}", **NODE_RES) for i in range(1, 5)],
        [pod("p1", None, node_name="node1"), pod("p2", None, node_name="node2")],
        {"node1": U, "node2": U, "node4": UU},
        None,
        Status.unschedulable(
            "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."
        ),
        "",
        [],
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        ["error-node1"],
        [pod("p1", None, node_name="node1")],
        {"node1": U},
        "error",
        Status.error(
            'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'
        ),
        None,
        [],
        id="only one node but failed with TestPlugin",
    ),
    # node1 errs; node2: 200m + 300m > 300m, evicting p2 makes room
    pytest.param(
        pod("p", HIGH, LARGE),
        ["error-node1", node("node2", cpu="300m", memory="300")],
        [pod("p1", None, node_name="node1"), pod("p2", None, MEDIUM, "node2")],
        {"node1": U, "node2": U},
        "error",
        Status.success(),
        "node2",
        ["p2"],
        id="one failed with TestPlugin and the other pass",
    ),
]


def _materialize(nodes: list[Any]) -> list[dict[str, Any]]:
    out = []
    for item in nodes:
        if item == "error-node1":
            item = node("node1", cpu="300m", memory="300")
        out.append(item)
    return out


@pytest.mark.parametrize(
    ("incoming", "nodes", "pods", "statuses", "plugin", "status", "nominated", "victims"),
    POST_FILTER_CASES,
)
def test_post_filter(
    preempt: PreemptFn,
    incoming: dict[str, Any],
    nodes: list[Any],
    pods: list[dict[str, Any]],
    statuses: dict[str, Status],
    plugin: str | None,
    status: Status,
    nominated: str | None,
    victims: list[str],
) -> None:
    node_list = _materialize(nodes)
    if plugin == "error":
        node_list[0]["metadata"]["labels"]["error"] = "true"
    result = run(
        preempt, incoming, node_list, pods, statuses, failing_on_error_label if plugin else None
    )
    assert result.status == status
    assert result.nominated_node == nominated
    assert sorted(v.name for v in result.victims) == victims


# --- TestPreempt --------------------------------------------------------------------------------

SPREAD_POD = pod(
    "p",
    HIGH,
    labels={"foo": ""},
    topology_spread=[
        spread_constraint(1, "zone", "DoNotSchedule", exists("foo")),
        spread_constraint(1, "hostname", "DoNotSchedule", exists("foo")),
    ],
)
BASIC_PODS = [
    pod("p1.1", LOW, SMALL, "node1"),
    pod("p1.2", LOW, SMALL, "node1"),
    pod("p2.1", HIGH, LARGE, "node2"),
    pod("p3.1", MID, MEDIUM, "node3"),
]

PREEMPT_CASES = [
    # node1 (two low victims) beats node3 (one mid victim) on the highest victim priority
    pytest.param(
        with_pod_fields(pod("p", HIGH, VERY_LARGE), preemption_policy="PreemptLowerPriority"),
        NODES3,
        BASIC_PODS,
        RESOURCES,
        "node1",
        ["p1.1", "p1.2"],
        Code.SUCCESS,
        id="basic preemption logic",
    ),
    # zone1 3, zone2 2; hosts 2/1/2: only node-b has a lower-priority pod, and evicting it
    # balances both constraints
    pytest.param(
        SPREAD_POD,
        [node("node-a/zone1"), node("node-b/zone1"), node("node-x/zone2")],
        [
            pod("p-a1", HIGH, node_name="node-a", labels={"foo": ""}),
            pod("p-a2", HIGH, node_name="node-a", labels={"foo": ""}),
            pod("p-b1", LOW, node_name="node-b", labels={"foo": ""}),
            pod("p-x1", HIGH, node_name="node-x", labels={"foo": ""}),
            pod("p-x2", HIGH, node_name="node-x", labels={"foo": ""}),
        ],
        profile_with(filter=["PodTopologySpread"]),
        "node-b",
        ["p-b1"],
        Code.SUCCESS,
        id="preemption for topology spread constraints",
    ),
    pytest.param(
        with_pod_fields(pod("p", HIGH, VERY_LARGE), preemption_policy="Never"),
        NODES3,
        BASIC_PODS,
        RESOURCES,
        None,
        [],
        Code.UNSCHEDULABLE,
        id="no preempting in pod",
    ),
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        NODES3,
        BASIC_PODS,
        RESOURCES,
        "node1",
        ["p1.1", "p1.2"],
        Code.SUCCESS,
        id="PreemptionPolicy is nil",
    ),
]


@pytest.mark.parametrize(
    ("incoming", "nodes", "pods", "profile", "nominated", "victims", "code"), PREEMPT_CASES
)
def test_preempt(
    preempt: PreemptFn,
    incoming: dict[str, Any],
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    profile: Any,
    nominated: str | None,
    victims: list[str],
    code: Code,
) -> None:
    result = run(preempt, incoming, nodes, pods, profile=profile)
    assert result.status.code == code
    assert result.nominated_node == nominated
    assert sorted(v.name for v in result.victims) == victims
    if code == Code.UNSCHEDULABLE:
        assert result.status.message == "preemption: " + preemption.NOT_ELIGIBLE_NEVER


def test_lower_priority_nominations_on_the_chosen_node_are_cleared() -> None:
    infos, by_node, _, _ = cluster_inputs(NODES3, BASIC_PODS)
    me = pod_info(pod("p", HIGH, VERY_LARGE))
    fits = filter_chain(me, infos, by_node, RESOURCES)
    statuses = {n.name: fits(n, by_node[n.name]) for n in infos}
    nominated = [
        pod_info(with_pod_fields(pod("low", LOW), nominated_node="node1")),
        pod_info(with_pod_fields(pod("higher", VERY_HIGH), nominated_node="node1")),
        pod_info(with_pod_fields(pod("elsewhere", LOW), nominated_node="node3")),
    ]
    result = preemption.preempt(
        infos, by_node, me, statuses, fits, args=DefaultPreemptionArgs(), nominated_pods=nominated
    )
    assert result.nominated_node == "node1"
    assert result.cleared_nominations == ("default/low",)


def test_fewest_victims_breaks_a_tie_of_equal_adjusted_sums() -> None:
    # Not upstream: with priorities 0 and -2^31, two victims sum to 0 - 2^31 + 2 x 2^31 =
    # 2^31, the same as one victim of priority 0 (0 + 2^31); same highest priority 0
    two = preemption.Candidate(
        "two", (pod_info(pod("a", 0, started=0)), pod_info(pod("b", -(2**31), started=0))), 0
    )
    one = preemption.Candidate("one", (pod_info(pod("c", 0, started=0)),), 0)
    best = preemption.pick_one_node([two, one])
    assert best is not None
    assert best.node == "one"
