"""NodeResourcesFit scoring, MostAllocated strategy.

Cases transcribed from upstream ``noderesources/most_allocated_test.go``
(TestMostAllocatedScoringStrategy); the config-validation cases belong to the config
tests. Score = sum((min(req, alloc) * 100 // alloc) * w) // sum(w); cpu and memory use
the non-zero requests (100m / 200Mi for a container that sets none).
"""

from __future__ import annotations

import pytest

from asched.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from tests.builders import (
    bound_pod,
    container,
    make_node,
    make_pod,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
)

FIT = "NodeResourcesFit"
EXT = "example.com/extended-resource"
DEFAULT = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
WITH_EXTENDED = (*DEFAULT, ResourceSpec(EXT, 1))


def node(name: str, cpu: str, memory: str, ext: str | None = None) -> dict[str, object]:
    """A node with cpu/memory and optionally the extended resource."""
    return make_node(name, cpu=cpu, memory=memory, allocatable={EXT: ext} if ext else None)


TWO_CONTAINERS = make_pod(
    requests=[{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]
)

CASES = [
    # nothing used, nothing requested: 0 * 100 / alloc = 0 everywhere
    pytest.param(
        make_pod(),
        [node("node1", "4000", "10000"), node("node2", "4000", "10000")],
        [],
        DEFAULT,
        {"node1": 0, "node2": 0},
        id="nothing scheduled, nothing requested",
    ),
    # node1: cpu 3000 * 100 / 4000 = 75, memory 5000 * 100 / 10000 = 50 -> 125 / 2 = 62
    # node2: cpu 3000 * 100 / 6000 = 50, memory 50 -> 50
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "4000", "10000"), node("node2", "6000", "10000")],
        [],
        DEFAULT,
        {"node1": 62, "node2": 50},
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    # explicit memory 0 stays 0. node1: cpu 6000 * 100 / 10000 = 60, memory 0 -> 30
    # node2: cpu 60, memory 5000 * 100 / 20000 = 25 -> 85 / 2 = 42
    pytest.param(
        make_pod(),
        [node("node1", "10000", "20000"), node("node2", "10000", "20000")],
        [
            bound_pod("node1", cpu="3000", memory="0"),
            bound_pod("node1", cpu="3000", memory="0"),
            bound_pod("node2", cpu="3000", memory="0"),
            bound_pod("node2", cpu="3000", memory="5000"),
        ],
        DEFAULT,
        {"node1": 30, "node2": 42},
        id="no resources requested, pods scheduled with resources",
    ),
    # node1: cpu 60, memory 5000 * 100 / 20000 = 25 -> 42
    # node2: cpu 60, memory 10000 * 100 / 20000 = 50 -> 55
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "10000", "20000"), node("node2", "10000", "20000")],
        [bound_pod("node1", cpu="3000", memory="0"), bound_pod("node2", cpu="3000", memory="5000")],
        DEFAULT,
        {"node1": 42, "node2": 55},
        id="resources requested, pods scheduled with resources",
    ),
    # node1: cpu 5000 * 100 / 5000 = 100, memory 9000 * 100 / 10000 = 90 -> 95
    # node2: cpu 5000 * 100 / 10000 = 50, memory 9000 * 100 / 9000 = 100 -> 75
    pytest.param(
        make_pod(requests=[{"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}]),
        [node("node1", "5000", "10000"), node("node2", "10000", "9000")],
        [],
        DEFAULT,
        {"node1": 95, "node2": 75},
        id="resources requested equal node capacity",
    ),
    # node1: cpu 75, memory 50 -> (75 * 1 + 50 * 2) / 3 = 58; node2: (50 + 100) / 3 = 50
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "4000", "10000"), node("node2", "6000", "10000")],
        [],
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        {"node1": 58, "node2": 50},
        id="nothing scheduled, resources requested with different weight on CPU and memory",
    ),
    # every container without requests counts 100m cpu and 200Mi memory.
    # node1: cpu 3 * 100m = 300m > 250m -> min(300m, 250m) = 250m -> 100;
    #        memory 3 * 200Mi = 600Mi * 100 / 1000Mi = 60 -> (100 + 60) / 2 = 80
    # node2: cpu 100m * 100 / 250m = 40, memory 200Mi * 100 / 1000Mi = 20 -> 30
    pytest.param(
        make_pod(containers=[container("container")]),
        [node("node1", "250m", "1000Mi"), node("node2", "250m", "1000Mi")],
        [
            bound_pod("node1", containers=[container("container")]),
            bound_pod("node1", containers=[container("container")]),
        ],
        DEFAULT,
        {"node1": 80, "node2": 30},
        id="no resources requested, pods scheduled, nonzero request for resource",
    ),
    # extended not requested: left out; cpu 3000 * 100 / 6000 = 50, memory 50 -> 50
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", ext="4")],
        [],
        WITH_EXTENDED,
        {"node1": 50, "node2": 50},
        id="bypass extended resource if the pod does not request",
    ),
    # extended: node1 2 * 100 / 4 = 50 -> 50; node2 2 * 100 / 10 = 20 -> (50 + 50 + 20) / 3 = 40
    pytest.param(
        make_pod(requests=[{"cpu": "3000", "memory": "5000", EXT: "2"}]),
        [node("node1", "6000", "10000", ext="4"), node("node2", "6000", "10000", ext="10")],
        [],
        WITH_EXTENDED,
        {"node1": 50, "node2": 40},
        id="honor extended resource if the pod request",
    ),
    # extended (weight 2) not requested: cpu 3000 * 100 / 6000 = 50, memory 40 -> 45
    pytest.param(
        make_pod(cpu="3000", memory="4000"),
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", ext="4")],
        [],
        (ResourceSpec(EXT, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)),
        {"node1": 45, "node2": 45},
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), CASES)
def test_most_allocated(evaluate, pod, nodes, existing, resources, want) -> None:
    strategy = ScoringStrategy(type="MostAllocated", resources=resources)
    profile = profile_with(
        score=((FIT, 1),), args={FIT: NodeResourcesFitArgs(scoring_strategy=strategy)}
    )
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, FIT) == want
