"""NodeResourcesFit scoring, RequestedToCapacityRatio strategy, and its shape function.

Cases transcribed from upstream ``noderesources/requested_to_capacity_ratio_test.go``:
TestRequestedToCapacityRatioScoringStrategy, TestBrokenLinearFunction,
TestResourceBinPackingSingleExtended and TestResourceBinPackingMultipleExtended.
Shape scores (0..10) are multiplied by 10; per resource ``util = req * 100 // alloc``
(100 when over capacity), ``f(util)`` from the shape, and only resources with
``f > 0`` enter ``round(sum(f * w) / sum(w))``.
"""

from __future__ import annotations

import pytest

from asched.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy, ShapePoint
from asched.tools.reference.plugins.resource_scoring import broken_linear
from tests.builders import (
    MB,
    bound_pod,
    make_node,
    make_pod,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
)

FIT = "NodeResourcesFit"
FALLING = (ShapePoint(0, 10), ShapePoint(100, 0))
RISING_TO_1 = (ShapePoint(0, 0), ShapePoint(100, 1))


def rtcr_profile(resources: tuple[ResourceSpec, ...], shape: tuple[ShapePoint, ...]):
    strategy = ScoringStrategy(type="RequestedToCapacityRatio", resources=resources, shape=shape)
    return profile_with(
        score=((FIT, 1),), args={FIT: NodeResourcesFitArgs(scoring_strategy=strategy)}
    )


STRATEGY = [
    # nothing requested: util 0 -> f(0) = 100 for cpu and memory -> 100
    pytest.param(
        make_pod(),
        [
            make_node("node1", cpu="4000", memory="10000"),
            make_node("node2", cpu="4000", memory="10000"),
        ],
        [bound_pod("node1"), bound_pod("node1")],
        {"node1": 100, "node2": 100},
        id="nothing scheduled, nothing requested (default - least requested nodes have priority)",
    ),
    # node1: cpu 3000 * 100 / 4000 = 75 -> 100 - 75 = 25; memory 50 -> 50; round(75 / 2) = 38
    # node2: cpu 3000 * 100 / 6000 = 50 -> 50; memory 50 -> 50; 50
    pytest.param(
        make_pod(requests=[{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]),
        [
            make_node("node1", cpu="4000", memory="10000"),
            make_node("node2", cpu="6000", memory="10000"),
        ],
        [bound_pod("node1"), bound_pod("node1")],
        {"node1": 38, "node2": 50},
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    # the same usage coming from the pods already there: 38 and 50
    pytest.param(
        make_pod(),
        [
            make_node("node1", cpu="4000", memory="10000"),
            make_node("node2", cpu="6000", memory="10000"),
        ],
        [
            bound_pod("node1", cpu="3000", memory="5000"),
            bound_pod("node2", cpu="3000", memory="5000"),
        ],
        {"node1": 38, "node2": 50},
        id="no resources requested, pods scheduled with resources",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), STRATEGY)
def test_requested_to_capacity_ratio(evaluate, pod, nodes, existing, want) -> None:
    profile = rtcr_profile((ResourceSpec("cpu", 1), ResourceSpec("memory", 1)), FALLING)
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, FIT) == want


BROKEN_LINEAR = [
    # points (10,1) (90,9): flat 1 below 10, slope 1/10 (truncated), flat 9 above 90
    pytest.param(
        ((10, 1), (90, 9)),
        {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9},
        id="case_0",
    ),
    # points (0,2) (40,10) (100,0): 20 -> 2 + 8 * 20 / 40 = 6; 70 -> 10 + (-10) * 30 / 60 = 5
    pytest.param(
        ((0, 2), (40, 10), (100, 0)),
        {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0},
        id="case_1",
    ),
    pytest.param(
        ((0, 2), (40, 2), (100, 2)),
        {-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2},
        id="case_2",
    ),
    # asched: a falling segment truncates toward zero like Go:
    # 100 + (0 - 100) * 7 / 30 = 100 + (-700 / 30 = -23.3 -> -23) = 77 (floor would give 76)
    pytest.param(((0, 100), (30, 0)), {7: 77, 30: 0}, id="falling segment truncates toward zero"),
]


@pytest.mark.parametrize(("shape", "points"), BROKEN_LINEAR)
def test_broken_linear_function(shape, points) -> None:
    assert {p: broken_linear(shape, p) for p in points} == points


def test_falling_segment_truncation_end_to_end(evaluate) -> None:
    # shape (0,10)->(30,0), scaled (0,100)->(30,0); cpu only.
    # util = 7000 * 100 / 100000 = 7 -> 100 + (-100 * 7) / 30 = 100 - 23 = 77 (Go truncation)
    nodes = [make_node("node1", cpu="100", memory="1Gi")]
    pod = make_pod(cpu="7")
    profile = rtcr_profile((ResourceSpec("cpu", 1),), (ShapePoint(0, 10), ShapePoint(30, 0)))
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), profile)
    assert scores_of(evaluation, FIT) == {"node1": 77}


# --- bin packing on extended resources -------------------------------------------------
# nodes: cpu 4000m, memory 10000 MiB; shape (0,0)->(100,1), scaled (0,0)->(100,10).


def ext_node(name: str, **extended: str) -> dict[str, object]:
    allocatable = {f"intel.com/{k}": v for k, v in extended.items()}
    return make_node(name, cpu="4", memory=str(10000 * MB), allocatable=allocatable)


def ext_pod(node_name: str = "", **extended: str) -> dict[str, object]:
    requests = [{f"intel.com/{k}": v for k, v in extended.items()}] if extended else None
    if node_name:
        return bound_pod(node_name, requests=requests)
    return make_pod(requests=requests)


SINGLE_EXTENDED = [
    # the pod does not request intel.com/foo: left out, no resource left -> 0
    pytest.param(
        ext_pod(), [], {"node1": 0, "node2": 0}, id="nothing scheduled, nothing requested"
    ),
    # node1: 2 * 100 / 8 = 25 -> 10 * 25 / 100 = 2; node2: 2 * 100 / 4 = 50 -> 5
    pytest.param(
        ext_pod(foo="2"),
        [bound_pod("node1")],
        {"node1": 2, "node2": 5},
        id="resources requested, pods scheduled with less resources",
    ),
    # node2: (2 + 2) * 100 / 4 = 100 -> 10
    pytest.param(
        ext_pod(foo="2"),
        [ext_pod("node2", foo="2")],
        {"node1": 2, "node2": 10},
        id="resources requested, pods scheduled with resources, on node with existing pod running",
    ),
    # node1: 4 * 100 / 8 = 50 -> 5; node2: 4 * 100 / 4 = 100 -> 10
    pytest.param(
        ext_pod(foo="4"),
        [bound_pod("node1")],
        {"node1": 5, "node2": 10},
        id="resources requested, pods scheduled with more resources",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), SINGLE_EXTENDED)
def test_bin_packing_single_extended(evaluate, pod, existing, want) -> None:
    nodes = [ext_node("node1", foo="8"), ext_node("node2", foo="4")]
    profile = rtcr_profile((ResourceSpec("intel.com/foo", 1),), RISING_TO_1)
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, FIT) == want


MULTIPLE_EXTENDED = [
    pytest.param(
        ext_pod(), [], {"node1": 0, "node2": 0}, id="nothing scheduled, nothing requested"
    ),
    # node1 (foo 8, bar 4): foo 25 -> 2, bar 50 -> 5: round((2 * 3 + 5 * 5) / 8 = 3.875) = 4
    # node2 (foo 4, bar 8): foo 50 -> 5, bar 25 -> 2: round((15 + 10) / 8 = 3.125) = 3
    pytest.param(
        ext_pod(foo="2", bar="2"),
        [bound_pod("node1")],
        {"node1": 4, "node2": 3},
        id="resources requested, pods scheduled with less resources",
    ),
    # node2 already runs foo 4 + bar 2: foo (4 + 2) > 4 -> util 100 -> 10;
    # bar (2 + 2) * 100 / 8 = 50 -> 5: round((30 + 25) / 8 = 6.875) = 7
    pytest.param(
        ext_pod(foo="2", bar="2"),
        [ext_pod("node2", foo="4", bar="2")],
        {"node1": 4, "node2": 7},
        id="resources requested, pods scheduled with resources, on node with existing pod running",
    ),
    # node1: foo 4 * 100 / 8 = 50 -> 5, bar 2 * 100 / 4 = 50 -> 5: (15 + 25) / 8 = 5
    # node2: foo 100 -> 10, bar 25 -> 2: round((30 + 10) / 8) = 5
    pytest.param(
        ext_pod(foo="4", bar="2"),
        [bound_pod("node1")],
        {"node1": 5, "node2": 5},
        id="resources requested, pods scheduled with more resources",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), MULTIPLE_EXTENDED)
def test_bin_packing_multiple_extended(evaluate, pod, existing, want) -> None:
    nodes = [ext_node("node1", foo="8", bar="4"), ext_node("node2", foo="4", bar="8")]
    resources = (ResourceSpec("intel.com/foo", 3), ResourceSpec("intel.com/bar", 5))
    evaluation = evaluate(
        snapshot_of(nodes, existing), pod_info(pod), rtcr_profile(resources, RISING_TO_1)
    )
    assert scores_of(evaluation, FIT) == want
