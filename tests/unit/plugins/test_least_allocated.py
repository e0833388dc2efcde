"""NodeResourcesFit scoring, LeastAllocated strategy.

Cases transcribed from upstream ``noderesources/least_allocated_test.go``
(TestLeastAllocatedScoringStrategy); the config-validation cases (weights 0, -1, 101)
belong to the config tests. Quantities are upstream's: ``cpu "4000"`` is 4000 cores,
memory is in bytes. Score = sum(((alloc - req) * 100 // alloc) * w) // sum(w), 0 for a
resource over capacity; cpu and memory use the non-zero requests.
"""

from __future__ import annotations

import pytest

from asched.config.types import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from tests.builders import (
    bound_pod,
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


def node(
    name: str, cpu: str | None, memory: str | None, ext: str | None = None
) -> dict[str, object]:
    """A node with cpu/memory (None: not reported) and optionally the extended resource."""
    return make_node(name, cpu=cpu, memory=memory, allocatable={EXT: ext} if ext else None)


def bound(node_name: str, cpu: str | None = None, memory: str | None = None) -> dict[str, object]:
    """A pod already running on ``node_name`` (no containers when cpu and memory are None)."""
    return bound_pod(node_name, cpu=cpu, memory=memory)


TWO_CONTAINERS = make_pod(
    requests=[{"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}]
)

CASES = [
    # nothing requested by anyone: every resource scores (4000 - 0) * 100 / 4000 = 100
    pytest.param(
        make_pod(),
        [node("node1", "4000", "10000"), node("node2", "4000", "10000")],
        [],
        DEFAULT,
        {"node1": 100, "node2": 100},
        id="nothing scheduled, nothing requested",
    ),
    # node1: cpu (4000 - 3000) * 100 / 4000 = 25, memory (10000 - 5000) * 100 / 10000 = 50
    #        -> (25 + 50) / 2 = 37
    # node2: cpu (6000 - 3000) * 100 / 6000 = 50, memory 50 -> 50
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "4000", "10000"), node("node2", "6000", "10000")],
        [],
        DEFAULT,
        {"node1": 37, "node2": 50},
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    # pods without containers request nothing, not even the non-zero defaults
    pytest.param(
        make_pod(),
        [node("node1", "4000", "10000"), node("node2", "4000", "10000")],
        [bound("node1"), bound("node1"), bound("node2"), bound("node2")],
        DEFAULT,
        {"node1": 100, "node2": 100},
        id="no resources requested, pods scheduled",
    ),
    # an explicit memory request of 0 stays 0 (no 200Mi default)
    # node1: cpu (10000 - 6000) * 100 / 10000 = 40, memory 100 -> (40 + 100) / 2 = 70
    # node2: cpu 40, memory (20000 - 5000) * 100 / 20000 = 75 -> (40 + 75) / 2 = 57
    pytest.param(
        make_pod(),
        [node("node1", "10000", "20000"), node("node2", "10000", "20000")],
        [
            bound("node1", "3000", "0"),
            bound("node1", "3000", "0"),
            bound("node2", "3000", "0"),
            bound("node2", "3000", "5000"),
        ],
        DEFAULT,
        {"node1": 70, "node2": 57},
        id="no resources requested, pods scheduled with resources",
    ),
    # node1: cpu (10000 - 6000) * 100 / 10000 = 40, memory (20000 - 5000) * 100 / 20000 = 75
    #        -> 57
    # node2: cpu 40, memory (20000 - 10000) * 100 / 20000 = 50 -> 45
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "10000", "20000"), node("node2", "10000", "20000")],
        [bound("node1", "3000", "0"), bound("node2", "3000", "5000")],
        DEFAULT,
        {"node1": 57, "node2": 45},
        id="resources requested, pods scheduled with resources",
    ),
    # node2: memory (50000 - 10000) * 100 / 50000 = 80 -> (40 + 80) / 2 = 60
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "10000", "20000"), node("node2", "10000", "50000")],
        [bound("node1", "3000", "0"), bound("node2", "3000", "5000")],
        DEFAULT,
        {"node1": 57, "node2": 60},
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    # cpu 3000 + 3000 = 6000 > 4000 -> 0 on both nodes
    # node1: memory 100 -> (0 + 100) / 2 = 50; node2: memory 50 -> 25
    pytest.param(
        make_pod(cpu="3000", memory="0"),
        [node("node1", "4000", "10000"), node("node2", "4000", "10000")],
        [bound("node1", "3000", "0"), bound("node2", "3000", "5000")],
        DEFAULT,
        {"node1": 50, "node2": 25},
        id="requested resources exceed node capacity",
    ),
    # no allocatable at all: every resource is left out, weight sum 0 -> 0
    pytest.param(
        make_pod(),
        [node("node1", None, None), node("node2", None, None)],
        [bound("node1", "3000", "0"), bound("node2", "3000", "5000")],
        DEFAULT,
        {"node1": 0, "node2": 0},
        id="zero node resources, pods scheduled with resources",
    ),
    # node1: cpu 25, memory 50 -> (25 * 1 + 50 * 2) / (1 + 2) = 41
    # node2: cpu 50, memory 50 -> (50 + 100) / 3 = 50
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "4000", "10000"), node("node2", "6000", "10000")],
        [],
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        {"node1": 41, "node2": 50},
        id="nothing scheduled, resources requested with different weight on CPU and memory",
    ),
    # the pod does not request the extended resource: left out on both nodes
    # cpu (6000 - 3000) * 100 / 6000 = 50, memory 50 -> 50
    pytest.param(
        TWO_CONTAINERS,
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", ext="4")],
        [],
        WITH_EXTENDED,
        {"node1": 50, "node2": 50},
        id="bypass extended resource if the pod does not request",
    ),
    # extended: node1 (4 - 2) * 100 / 4 = 50 -> (50 + 50 + 50) / 3 = 50
    #           node2 (10 - 2) * 100 / 10 = 80 -> (50 + 50 + 80) / 3 = 60
    pytest.param(
        make_pod(requests=[{"cpu": "3000", "memory": "5000", EXT: "2"}]),
        [node("node1", "6000", "10000", ext="4"), node("node2", "6000", "10000", ext="10")],
        [],
        WITH_EXTENDED,
        {"node1": 50, "node2": 60},
        id="honor extended resource if the pod requests",
    ),
    # the extended resource (weight 2) is not requested: cpu 50, memory 60 -> 55 on both
    pytest.param(
        make_pod(cpu="3000", memory="4000"),
        [node("node1", "6000", "10000"), node("node2", "6000", "10000", ext="4")],
        [],
        (ResourceSpec(EXT, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)),
        {"node1": 55, "node2": 55},
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), CASES)
def test_least_allocated(evaluate, pod, nodes, existing, resources, want) -> None:
    strategy = ScoringStrategy(type="LeastAllocated", resources=resources)
    profile = profile_with(
        score=((FIT, 1),), args={FIT: NodeResourcesFitArgs(scoring_strategy=strategy)}
    )
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, FIT) == want
