"""DefaultPreemption candidate search (asched.tools.reference.preemption.dry_run).

Cases transcribed from upstream ``defaultpreemption/default_preemption_test.go``
TestDryRunPreemption (19 cases; TestSelectNodesForPreemption is its older name) and
``framework/preemption/preemption_test.go`` TestNodesWherePreemptionMightHelp (9 cases).
The two fake-plugin cases of preemption_test.go's TestDryRunPreemption are left out: they
replace SelectVictimsOnNode itself, which the reference has no hook for.

As upstream, the dry run visits every node here (sorted by name), and candidates and
their victims are compared sorted by name. Nodes have 500m cpu, 500 bytes of memory and
32 pods; pods request small = 100m/100, medium = 200m/200, large = 300m/300,
veryLarge = 500m/500. Priorities: neg -100, low 0, mid 100, high 1000, veryHigh 10000.
The ``fits`` callback is the reference filter chain (NodeResourcesFit unless told).

Victim selection (upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go, SelectVictimsOnNode): remove every lower-priority pod; if the pod then fits,
add them back most important first (PDB-violating ones before the others), keeping each
one that still fits; the rest are victims.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from asched.cluster.records import NodeInfo, PodInfo
from asched.config.types import DefaultPreemptionArgs
from asched.framework.status import Code, Status
from asched.tools.reference import preemption
from asched.tools.reference.fits import filter_chain
from asched.tools.reference.preemption import DryRun, FitsFn
from tests.builders import (
    affinity_term,
    cluster_inputs,
    exists,
    label_selector,
    make_node,
    make_pod,
    pdb_object,
    pod_affinity_rules,
    pod_info,
    profile_with,
    spread_constraint,
    with_pod_fields,
)
from tests.unit.preemption import engine_adapter

DryRunFn = Callable[..., DryRun]


def _reference(
    me: PodInfo, ordered: Any, by_node: Any, fits: Any, extras: Any, offset: int, count: int
) -> DryRun:
    budgets = preemption.decode_pdbs(extras.get("PodDisruptionBudget", ()))
    return preemption.dry_run(me, ordered, by_node, fits, budgets, offset, count)


def _vectorised(
    me: PodInfo, ordered: Any, by_node: Any, fits: Any, extras: Any, offset: int, count: int
) -> DryRun:
    profile = getattr(fits, "profile", None)
    if profile is None:
        pytest.skip("a hand-made filter stand-in has no profile for the engine")
    found, _ = engine_adapter.dry_run(me, ordered, by_node, profile, extras, offset, count)
    return found


#: Each takes (pod, nodes in visiting order, pods by node, fits, raw extras, offset, count).
IMPLEMENTATIONS: dict[str, DryRunFn] = {"reference": _reference, "vectorised": _vectorised}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def dry_run(request: Any) -> DryRunFn:
    return IMPLEMENTATIONS[request.param]


NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = (
    ("100m", "100"),
    ("200m", "200"),
    ("300m", "300"),
    ("500m", "500"),
)
LABEL_KEYS = ("hostname", "zone", "region")


def nodes(*names: str) -> list[dict[str, Any]]:
    """veryLarge nodes; "node-a/zone1" is named node-a, labelled hostname and zone."""
    out = []
    for spec in names:
        parts = spec.split("/")
        out.append(
            make_node(
                parts[0],
                cpu="500m",
                memory="500",
                pods="32",
                labels=dict(zip(LABEL_KEYS, parts, strict=False)),
            )
        )
    return out


def pod(
    name: str,
    priority: int,
    res: tuple[str, str] | None = None,
    node: str = "",
    started: int | None = None,
    **kw: Any,
) -> dict[str, Any]:
    cpu, memory = res if res is not None else (None, None)
    raw = make_pod(name, node_name=node, priority=priority, cpu=cpu, memory=memory, **kw)
    return with_pod_fields(raw, started=started) if started is not None else raw


RESOURCES = profile_with(filter=["NodeResourcesFit"])


def resource_fits(incoming: PodInfo, infos: list[NodeInfo], by_node: Any, extras: Any) -> FitsFn:
    fits = filter_chain(incoming, infos, by_node, RESOURCES)
    fits.profile = RESOURCES  # type: ignore[attr-defined]  # for the engine adapter
    return fits


def always(code: Code) -> Callable[..., FitsFn]:
    """A stand-in for upstream's fake filter plugins: every node gets ``code``."""

    def build(*_: Any) -> FitsFn:
        return lambda node, pods: Status(code, ("fake filter",))

    return build


def chain(*plugins: str) -> Callable[..., FitsFn]:
    profile = profile_with(filter=list(plugins))

    def build(incoming: PodInfo, infos: list[NodeInfo], by_node: Any, extras: Any) -> FitsFn:
        fits = filter_chain(incoming, infos, by_node, profile, extras=extras)
        fits.profile = profile  # type: ignore[attr-defined]  # for the engine adapter
        return fits

    return build


Expected = list[tuple[str, list[str], int]]

AFFINITY_POD_ANTI = {
    "pod_anti_affinity": pod_affinity_rules(required=[affinity_term(exists("foo"), "hostname")])
}
FOO_PDB = [pdb_object("pdb", label_selector({"app": "foo"}), 1)]
APP_FOO = {"app": "foo"}

DRY_RUN_CASES = [
    pytest.param(
        pod("p", HIGH),
        nodes("node1", "node2"),
        [pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
        always(Code.UNSCHEDULABLE),
        [],
        None,
        0,
        [],
        id="a pod that does not fit on any node",
    ),
    # upstream: a filter that always passes, next to the fake one rejecting every node
    pytest.param(
        pod("p", HIGH),
        nodes("node1", "node2"),
        [pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
        always(Code.UNSCHEDULABLE),
        [],
        None,
        0,
        [],
        id="a pod that fits with no preemption",
    ),
    pytest.param(
        pod("node1", HIGH),
        nodes("node1", "node2"),
        [pod("p1", MID, node="node1"), pod("p2", MID, node="node2")],
        always(Code.UNSCHEDULABLE),
        [],
        None,
        0,
        [],
        id="a pod that fits on one node with no preemption",
    ),
    # 300 + 300 > 500; without p1 (p2) it fits; adding it back does not
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes("node1", "node2"),
        [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
        resource_fits,
        [],
        None,
        0,
        [("node1", ["p1"], 0), ("node2", ["p2"], 0)],
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        pod("p", LOW, LARGE),
        nodes("node1", "node2"),
        [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
        resource_fits,
        [],
        None,
        0,
        [],
        id="other pods running are higher priority, no preemption would happen",
    ),
    # node1: p1.2 (mid) is reprieved first: 300 + 300 > 500, victim; p1.1 (low):
    # 100 + 300 <= 500, stays
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes("node1", "node2"),
        [
            pod("p1.1", LOW, SMALL, "node1"),
            pod("p1.2", MID, LARGE, "node1"),
            pod("p2", MID, LARGE, "node2"),
        ],
        resource_fits,
        [],
        None,
        0,
        [("node1", ["p1.2"], 0), ("node2", ["p2"], 0)],
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    # node1 keeps p1.4 (high, 100): reprieve p1.1 (mid, 100): 500 fits; p1.3 (mid, 200):
    # 700, victim; p1.2 (low, 100): 600, victim. node2 has no lower-priority pod.
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes("node1", "node2"),
        [
            pod("p1.1", MID, SMALL, "node1"),
            pod("p1.2", LOW, SMALL, "node1"),
            pod("p1.3", MID, MEDIUM, "node1"),
            pod("p1.4", HIGH, SMALL, "node1"),
            pod("p2", HIGH, LARGE, "node2"),
        ],
        resource_fits,
        [],
        None,
        0,
        [("node1", ["p1.2", "p1.3"], 0)],
        id="mixed priority pods are preempted",
    ),
    # order: p1.3 (mid), p1.2 (low, started 4), p1.1 (low, started 5): p1.3 600 victim,
    # p1.2 500 stays, p1.1 600 victim
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes("node1", "node2"),
        [
            pod("p1.1", LOW, SMALL, "node1", started=5),
            pod("p1.2", LOW, SMALL, "node1", started=4),
            pod("p1.3", MID, MEDIUM, "node1", started=3),
            pod("p1.4", HIGH, SMALL, "node1", started=2),
            pod("p2", HIGH, LARGE, "node2", started=1),
        ],
        resource_fits,
        [],
        None,
        0,
        [("node1", ["p1.1", "p1.3"], 0)],
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    # p1.1 (low) has anti-affinity to foo pods on its hostname: evicting it (and reprieving
    # p1.2) lets the foo pod in
    pytest.param(
        pod("p", HIGH, SMALL, labels={"foo": ""}),
        nodes("node1", "node2"),
        [
            pod("p1.1", LOW, SMALL, "node1", labels={"foo": ""}, **AFFINITY_POD_ANTI),
            pod("p1.2", MID, SMALL, "node1"),
            pod("p1.3", HIGH, SMALL, "node1"),
            pod("p2", HIGH, SMALL, "node2"),
        ],
        chain("NodeResourcesFit", "InterPodAffinity"),
        [],
        None,
        0,
        [("node1", ["p1.1"], 0)],
        id="pod with anti-affinity is preempted",
    ),
    # zone1 3 (a1 a2 b1), zone2 2; hosts 2/1/2. node-a: without a1, a2 it fits; a1 (mid)
    # back: zone1 2 + 1 - 2 = 1, host 1 + 1 - 1 = 1, stays; a2 back: zone 3 + 1 - 2 = 2,
    # victim. node-b: without b1 it fits, with it not. node-x: no lower pod.
    pytest.param(
        pod(
            "p",
            HIGH,
            labels={"foo": ""},
            topology_spread=[
                spread_constraint(1, "zone", "DoNotSchedule", exists("foo")),
                spread_constraint(1, "hostname", "DoNotSchedule", exists("foo")),
            ],
        ),
        nodes("node-a/zone1", "node-b/zone1", "node-x/zone2"),
        [
            pod("pod-a1", MID, node="node-a", labels={"foo": ""}),
            pod("pod-a2", LOW, node="node-a", labels={"foo": ""}),
            pod("pod-b1", LOW, node="node-b", labels={"foo": ""}),
            pod("pod-x1", HIGH, node="node-x", labels={"foo": ""}),
            pod("pod-x2", HIGH, node="node-x", labels={"foo": ""}),
        ],
        chain("PodTopologySpread"),
        [],
        None,
        0,
        [("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)],
        id="preemption to resolve pod topology spread filter failure",
    ),
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes("node1", "node2"),
        [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
        always(Code.UNSCHEDULABLE),
        [],
        None,
        0,
        [],
        id="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
    ),
    # one disruption allowed: p1.1 uses it, p1.2 violates; both must go (200 + 500 > 500)
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        nodes("node1"),
        [
            pod("p1.1", MID, MEDIUM, "node1", labels=APP_FOO),
            pod("p1.2", MID, MEDIUM, "node1", labels=APP_FOO),
        ],
        resource_fits,
        FOO_PDB,
        None,
        0,
        [("node1", ["p1.1", "p1.2"], 1)],
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        nodes("node1"),
        [
            pod("p1.1", MID, MEDIUM, "node1", labels=APP_FOO),
            pod("p1.2", MID, MEDIUM, "node1", labels=APP_FOO),
        ],
        resource_fits,
        [pdb_object("pdb", label_selector(APP_FOO), 1, disrupted_pods=["p2"])],
        None,
        0,
        [("node1", ["p1.1", "p1.2"], 1)],
        id="pdb with a disrupted pod that is not a victim",
    ),
    # p1.2 is already in disruptedPods: it does not use up the budget
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        nodes("node1"),
        [
            pod("p1.1", MID, MEDIUM, "node1", labels=APP_FOO),
            pod("p1.2", MID, MEDIUM, "node1", labels=APP_FOO),
        ],
        resource_fits,
        [pdb_object("pdb", label_selector(APP_FOO), 1, disrupted_pods=["p1.2"])],
        None,
        0,
        [("node1", ["p1.1", "p1.2"], 0)],
        id="pdb with a disrupted pod that is a victim",
    ),
    # p1.1 takes the budget to 0, p1.2 to -1 (violating), p1.3 is in disruptedPods
    pytest.param(
        pod("p", HIGH, VERY_LARGE),
        nodes("node1"),
        [
            pod("p1.1", MID, MEDIUM, "node1", labels=APP_FOO),
            pod("p1.2", MID, MEDIUM, "node1", labels=APP_FOO),
            pod("p1.3", MID, MEDIUM, "node1", labels=APP_FOO),
        ],
        resource_fits,
        [pdb_object("pdb", label_selector(APP_FOO), 1, disrupted_pods=["p1.3"])],
        None,
        0,
        [("node1", ["p1.1", "p1.2", "p1.3"], 1)],
        id="a victim in disruptedPods is treated as non-violating",
    ),
    # 5 nodes x 40 % = 2 candidates; from offset 4: node5 yes, node1 yes -> stop
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes(*(f"node{i}" for i in range(1, 6))),
        [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)],
        resource_fits,
        [],
        DefaultPreemptionArgs(40, 1),
        4,
        [("node1", ["p1"], 0), ("node5", ["p5"], 0)],
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
    ),
    # from offset 4: node5 no (veryHigh), node1 yes, node2 no, node3 yes -> stop
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes(*(f"node{i}" for i in range(1, 6))),
        [
            pod("p1", MID, LARGE, "node1"),
            pod("p2", VERY_HIGH, LARGE, "node2"),
            pod("p3", MID, LARGE, "node3"),
            pod("p4", MID, LARGE, "node4"),
            pod("p5", VERY_HIGH, LARGE, "node5"),
        ],
        resource_fits,
        [],
        DefaultPreemptionArgs(40, 1),
        4,
        [("node1", ["p1"], 0), ("node3", ["p3"], 0)],
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
    ),
    # upstream's three scheduling cycles draw offsets 4, 1 and 3
    pytest.param(
        pod("tp2", HIGH, LARGE),
        nodes(*(f"node{i}" for i in range(1, 6))),
        [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)],
        resource_fits,
        [],
        DefaultPreemptionArgs(40, 1),
        1,
        [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
        id="preemption offset across multiple scheduling cycles (cycle 1)",
    ),
    pytest.param(
        pod("tp3", HIGH, LARGE),
        nodes(*(f"node{i}" for i in range(1, 6))),
        [pod(f"p{i}", MID, LARGE, f"node{i}") for i in range(1, 6)],
        resource_fits,
        [],
        DefaultPreemptionArgs(40, 1),
        3,
        [("node4", ["p4"], 0), ("node5", ["p5"], 0)],
        id="preemption offset across multiple scheduling cycles and wrap around (cycle 2)",
    ),
    # numCandidates 2; budget 0 for app=foo. From offset 4: node5 (violating), node1
    # (violating: 2 now, but no clean one), node2 (violating, the list of 2 is full:
    # dropped), node3 (clean: stop)
    pytest.param(
        pod("p", HIGH, LARGE),
        nodes(*(f"node{i}" for i in range(1, 6))),
        [
            pod("p1", MID, LARGE, "node1", labels=APP_FOO),
            pod("p2", MID, LARGE, "node2", labels=APP_FOO),
            pod("p3", MID, LARGE, "node3"),
            pod("p4", MID, LARGE, "node4"),
            pod("p5", MID, LARGE, "node5", labels=APP_FOO),
        ],
        resource_fits,
        [pdb_object("pdb", label_selector(APP_FOO), 0)],
        DefaultPreemptionArgs(40, 2),
        4,
        [("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)],
        id="preemption looks past numCandidates until a non-PDB violating node is found",
    ),
]


@pytest.mark.parametrize(
    ("incoming", "node_list", "pods", "fits", "pdbs", "args", "offset", "expected"), DRY_RUN_CASES
)
def test_dry_run_preemption(
    dry_run: DryRunFn,
    incoming: dict[str, Any],
    node_list: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    fits: Callable[..., FitsFn],
    pdbs: list[dict[str, Any]],
    args: DefaultPreemptionArgs | None,
    offset: int,
    expected: Expected,
) -> None:
    infos, by_node, _, extras = cluster_inputs(node_list, [*pods, *pdbs])
    me = pod_info(incoming)
    ordered = sorted(infos, key=lambda n: n.name)
    count = preemption.candidate_count(len(ordered), args or DefaultPreemptionArgs())
    found = dry_run(me, ordered, by_node, fits(me, infos, by_node, extras), extras, offset, count)
    got = sorted(
        (c.node, sorted(v.name for v in c.victims), c.num_pdb_violations) for c in found.candidates
    )
    assert got == expected


def test_clean_candidates_come_first_then_violating_in_visiting_order() -> None:
    # the last case above: visiting order node5, node1, node2, node3
    node_list = nodes(*(f"node{i}" for i in range(1, 6)))
    pods = [
        pod("p1", MID, LARGE, "node1", labels=APP_FOO),
        pod("p2", MID, LARGE, "node2", labels=APP_FOO),
        pod("p3", MID, LARGE, "node3"),
        pod("p4", MID, LARGE, "node4"),
        pod("p5", MID, LARGE, "node5", labels=APP_FOO),
    ]
    infos, by_node, _, extras = cluster_inputs(
        node_list, [*pods, pdb_object("pdb", label_selector(APP_FOO), 0)]
    )
    me = pod_info(pod("p", HIGH, LARGE))
    found = preemption.dry_run(
        me,
        infos,
        by_node,
        filter_chain(me, infos, by_node, RESOURCES),
        preemption.decode_pdbs(extras["PodDisruptionBudget"]),
        4,
        2,
    )
    assert [c.node for c in found.candidates] == ["node3", "node5", "node1"]
    # node2 was visited (and would have been a candidate): no status is recorded for it
    assert dict(found.statuses) == {}


def test_victims_are_listed_most_important_first() -> None:
    # "mixed priority pods are preempted, pick later StartTime ...": victims p1.3 (mid),
    # then p1.1 (low); a victim list mixing PDB-violating and other pods is re-sorted
    node_list = nodes("node1")
    pods = [
        pod("p1.1", LOW, SMALL, "node1", started=5),
        pod("p1.2", LOW, SMALL, "node1", started=4),
        pod("p1.3", MID, MEDIUM, "node1", started=3),
        pod("p1.4", HIGH, SMALL, "node1", started=2),
    ]
    infos, by_node, _, _ = cluster_inputs(node_list, pods)
    me = pod_info(pod("p", HIGH, LARGE))
    chosen = preemption.select_victims_on_node(
        me, infos[0], by_node["node1"], filter_chain(me, infos, by_node, RESOURCES)
    )
    assert chosen.status.ok
    assert [v.name for v in chosen.victims] == ["p1.3", "p1.1"]


def test_no_lower_priority_pod_is_unresolvable() -> None:
    infos, by_node, _, _ = cluster_inputs(nodes("node1"), [pod("p1", HIGH, node="node1")])
    me = pod_info(pod("p", HIGH))
    chosen = preemption.select_victims_on_node(
        me, infos[0], by_node["node1"], always(Code.SUCCESS)()
    )
    assert chosen.status == Status.unresolvable(preemption.REASON_NO_VICTIMS)


# --- TestNodesWherePreemptionMightHelp ------------------------------------------------------

UNSCHED, UNRESOLVABLE = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
MIGHT_HELP_CASES = [
    pytest.param(
        [
            (UNRESOLVABLE, "node(s) didn't match Pod's node affinity/selector"),
            (UNRESOLVABLE, "node(s) didn't match the requested node name"),
            (UNRESOLVABLE, "node(s) had untolerated taint {foo: bar}"),
            (UNRESOLVABLE, "node(s) didn't match pod affinity rules"),
        ],
        [],
        id="No node should be attempted",
    ),
    pytest.param(
        [
            (UNSCHED, "node(s) didn't match pod anti-affinity rules"),
            (UNRESOLVABLE, "node(s) didn't match the requested node name"),
            (UNRESOLVABLE, "node(s) were unschedulable"),
            (UNSCHED, "Unschedulable"),
        ],
        ["node1", "node4"],
        id="ErrReasonAntiAffinityRulesNotMatch should be tried",
    ),
    pytest.param(
        [
            (UNRESOLVABLE, "node(s) didn't match pod affinity rules"),
            (UNSCHED, "node(s) didn't match pod anti-affinity rules"),
            (UNSCHED, "Unschedulable"),
            (UNSCHED, "Unschedulable"),
        ],
        ["node2", "node3", "node4"],
        id="affinity failures are not tried but anti-affinity failures are",
    ),
    pytest.param(
        [
            (UNRESOLVABLE, "node(s) had no available disk"),
            (UNSCHED, "Insufficient memory"),
            (UNSCHED, "Unschedulable"),
            (UNSCHED, "Unschedulable"),
        ],
        ["node2", "node3", "node4"],
        id="Mix of failed predicates works fine",
    ),
    pytest.param(
        [
            (UNRESOLVABLE, "node(s) had unknown conditions"),
            (UNSCHED, "Unschedulable"),
            (UNSCHED, "Unschedulable"),
            (UNSCHED, "Unschedulable"),
        ],
        ["node2", "node3", "node4"],
        id="Node condition errors should be considered unresolvable",
    ),
    pytest.param(
        [
            (UNRESOLVABLE, "node(s) had no available volume zone"),
            (UNRESOLVABLE, "node(s) didn't find available persistent volumes to bind"),
            (UNRESOLVABLE, "node(s) had volume node affinity conflict"),
            (UNSCHED, "Unschedulable"),
        ],
        ["node4"],
        id="ErrVolume... errors should not be tried",
    ),
    pytest.param(
        [
            (UNSCHED, "node(s) didn't match pod topology spread constraints"),
            (UNRESOLVABLE, "node(s) didn't match the requested node name"),
            (UNSCHED, "node(s) didn't match pod topology spread constraints"),
            (UNSCHED, "Unschedulable"),
        ],
        ["node1", "node3", "node4"],
        id="ErrReasonConstraintsNotMatch should be tried",
    ),
    pytest.param(
        [(UNSCHED, ""), (UNRESOLVABLE, ""), (UNSCHED, ""), (UNRESOLVABLE, "")],
        ["node1", "node3"],
        id="UnschedulableAndUnresolvable status should be skipped but Unschedulable should be tried",
    ),
    pytest.param(
        [
            (UNSCHED, ""),
            (
                UNRESOLVABLE,
                "node(s) didn't match pod topology spread constraints (missing required label)",
            ),
            (UNSCHED, ""),
            (UNRESOLVABLE, ""),
        ],
        ["node1", "node3"],
        id="ErrReasonNodeLabelNotMatch should not be tried",
    ),
]


@pytest.mark.parametrize(("statuses", "expected"), MIGHT_HELP_CASES)
def test_nodes_where_preemption_might_help(
    statuses: Sequence[tuple[Code, str]], expected: list[str]
) -> None:
    infos, _, _, _ = cluster_inputs([make_node(f"node{i}") for i in range(1, 5)])
    by_name = {
        f"node{i}": Status(code, (reason,) if reason else ())
        for i, (code, reason) in enumerate(statuses, 1)
    }
    assert [
        n.name for n in preemption.nodes_where_preemption_might_help(infos, by_name)
    ] == expected


CANDIDATE_COUNT_CASES = [
    # max(n * 10 // 100, 100) capped at n
    pytest.param(50, DefaultPreemptionArgs(), 50, id="50 nodes: all of them"),
    pytest.param(1000, DefaultPreemptionArgs(), 100, id="1000 nodes: the absolute minimum"),
    pytest.param(5000, DefaultPreemptionArgs(), 500, id="5000 nodes: 10 percent"),
    # 5 * 40 // 100 = 2
    pytest.param(5, DefaultPreemptionArgs(40, 1), 2, id="5 nodes at 40 percent"),
]


@pytest.mark.parametrize(("count", "args", "expected"), CANDIDATE_COUNT_CASES)
def test_candidate_count(count: int, args: DefaultPreemptionArgs, expected: int) -> None:
    assert preemption.candidate_count(count, args) == expected


def test_filter_chain_counts_nominated_pods_of_at_least_the_same_priority() -> None:
    # Section 4.3: a pod nominated to node1 with priority >= the preemptor's takes its
    # place in a first pass (one pod slot: "Too many pods"); lower ones are not added
    node_list = [make_node("node1", cpu="500m", memory="500", pods="1")]
    infos, by_node, _, _ = cluster_inputs(node_list)
    me = pod_info(pod("p", MID))
    higher = pod_info(with_pod_fields(pod("n1", HIGH), nominated_node="node1"))
    lower = pod_info(with_pod_fields(pod("n2", LOW), nominated_node="node1"))
    blocked = filter_chain(me, infos, by_node, RESOURCES, nominated=[higher])(infos[0], ())
    assert blocked == Status.unschedulable("Too many pods", plugin="NodeResourcesFit")
    assert filter_chain(me, infos, by_node, RESOURCES, nominated=[lower])(infos[0], ()).ok
