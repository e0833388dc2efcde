"""NodeResourcesBalancedAllocation.

Cases transcribed from upstream ``noderesources/balanced_allocation_test.go``
(TestNodeResourcesBalancedAllocation), with the v1.33 behaviour: fractions are capped
at 1 (not scored 0), and a best-effort pod (0 requested of every configured resource)
is skipped at PreScore, so the plugin is absent from its scores. Real requests only
(no non-zero defaults). Score = int((1 - std) * 100) with, for two resources,
std = |f_cpu - f_mem| / 2, else the population standard deviation.
"""

from __future__ import annotations

import pytest

from asched.config.types import NodeResourcesBalancedAllocationArgs, ResourceSpec
from tests.builders import (
    bound_pod,
    make_node,
    make_pod,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
)

BALANCED = "NodeResourcesBalancedAllocation"
GPU = "nvidia.com/gpu"

CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]


def machine(name: str, cpu_m: int, memory: int, gpu: str | None = None) -> dict[str, object]:
    """Upstream's ``makeNode(name, milliCPU, memory)``."""
    return make_node(
        name, cpu=f"{cpu_m}m", memory=str(memory), allocatable={GPU: gpu} if gpu else None
    )


ABSENT = {"machine1": None, "machine2": None}

CASES = [
    # the pod requests nothing: best-effort, PreScore skips
    pytest.param(
        make_pod(),
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)],
        [],
        ABSENT,
        id="nothing scheduled, nothing requested",
    ),
    # machine1: cpu 3000 / 4000 = 0.75, memory 5000 / 10000 = 0.5 -> std 0.125 -> 87
    # machine2: cpu 3000 / 6000 = 0.5, memory 0.5 -> std 0 -> 100
    pytest.param(
        make_pod(requests=CPU_AND_MEMORY),
        [machine("machine1", 4000, 10000), machine("machine2", 6000, 10000)],
        [],
        {"machine1": 87, "machine2": 100},
        id="nothing scheduled, resources requested, differently sized machines",
    ),
    pytest.param(
        make_pod(),
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)],
        [bound_pod("machine1"), bound_pod("machine1"), bound_pod("machine2")],
        ABSENT,
        id="no resources requested, pods scheduled",
    ),
    pytest.param(
        make_pod(),
        [machine("machine1", 10000, 20000), machine("machine2", 10000, 20000)],
        [
            bound_pod("machine1", requests=CPU_ONLY),
            bound_pod("machine2", requests=CPU_AND_MEMORY),
        ],
        ABSENT,
        id="no resources requested, pods scheduled with resources",
    ),
    # machine1: cpu 6000 / 10000 = 0.6, memory 5000 / 20000 = 0.25 -> std 0.175 -> 82
    # machine2: cpu 0.6, memory 10000 / 20000 = 0.5 -> std 0.05 -> 95
    pytest.param(
        make_pod(requests=CPU_AND_MEMORY),
        [machine("machine1", 10000, 20000), machine("machine2", 10000, 20000)],
        [
            bound_pod("machine1", requests=CPU_ONLY),
            bound_pod("machine2", requests=CPU_AND_MEMORY),
        ],
        {"machine1": 82, "machine2": 95},
        id="resources requested, pods scheduled with resources",
    ),
    # machine2: cpu 0.6, memory 10000 / 50000 = 0.2 -> std 0.2 -> 80
    pytest.param(
        make_pod(requests=CPU_AND_MEMORY),
        [machine("machine1", 10000, 20000), machine("machine2", 10000, 50000)],
        [
            bound_pod("machine1", requests=CPU_ONLY),
            bound_pod("machine2", requests=CPU_AND_MEMORY),
        ],
        {"machine1": 82, "machine2": 80},
        id="resources requested, pods scheduled with resources, differently sized machines",
    ),
    # cpu 6000 / 4000 -> capped at 1 on both.
    # machine1: memory 0 -> std 0.5 -> 50; machine2: memory 5000 / 10000 = 0.5 -> std 0.25 -> 75
    pytest.param(
        make_pod(requests=CPU_ONLY),
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)],
        [
            bound_pod("machine1", requests=CPU_ONLY),
            bound_pod("machine2", requests=CPU_AND_MEMORY),
        ],
        {"machine1": 50, "machine2": 75},
        id="requested resources exceed node capacity",
    ),
    # no allocatable: every resource is left out, no fraction -> std 0 -> 100
    pytest.param(
        make_pod(requests=CPU_ONLY),
        [machine("machine1", 0, 0), machine("machine2", 0, 0)],
        [
            bound_pod("machine1", requests=CPU_ONLY),
            bound_pod("machine2", requests=CPU_AND_MEMORY),
        ],
        {"machine1": 100, "machine2": 100},
        id="zero node resources, pods scheduled with resources",
    ),
    # asched: only the configured resources decide best-effort (cpu, memory here)
    pytest.param(
        make_pod(requests=[{"ephemeral-storage": "1Gi"}]),
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)],
        [],
        ABSENT,
        id="a pod requesting only unconfigured resources is best-effort",
    ),
    # memory only: machine1 cpu 0 / 4000 = 0, memory 5000 / 10000 = 0.5 -> std 0.25 -> 75
    pytest.param(
        make_pod(memory="5000"),
        [machine("machine1", 4000, 10000), machine("machine2", 4000, 20000)],
        [],
        # machine2: cpu 0, memory 5000 / 20000 = 0.25 -> std 0.125 -> 87
        {"machine1": 75, "machine2": 87},
        id="a pod requesting one configured resource is scored",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), CASES)
def test_balanced_allocation(evaluate, pod, nodes, existing, want) -> None:
    profile = profile_with(score=((BALANCED, 1),))
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, BALANCED) == want


THREE_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(GPU, 1))

SCALAR_CASES = [
    # machine1 (4000m, 10000, gpu 4, one pod 1000m/2000/1 gpu): fractions
    #   (1000 + 1000) / 4000 = 0.5, (2000 + 3000) / 10000 = 0.5, (1 + 1) / 4 = 0.5 -> std 0 -> 100
    # machine2 (4000m, 10000, gpu 8): 0.25, 0.3, 0.125; mean 0.225;
    #   std = sqrt((0.025^2 + 0.075^2 + 0.1^2) / 3) = sqrt(0.01625 / 3) = 0.0736 -> 92
    pytest.param(
        make_pod(requests=[{"cpu": "1000m", "memory": "3000", GPU: "1"}]),
        {"machine1": 100, "machine2": 92},
        id="scalar resource requested: population standard deviation of three fractions",
    ),
    # the gpu is not requested: left out. machine1: 0.5, 0.5 -> 100;
    # machine2: 0.25, 0.3 -> std 0.025 -> 97
    pytest.param(
        make_pod(requests=[{"cpu": "1000m", "memory": "3000"}]),
        {"machine1": 100, "machine2": 97},
        id="scalar resource not requested is left out",
    ),
]


@pytest.mark.parametrize(("pod", "want"), SCALAR_CASES)
def test_balanced_allocation_with_scalar_resource(evaluate, pod, want) -> None:
    nodes = [machine("machine1", 4000, 10000, gpu="4"), machine("machine2", 4000, 10000, gpu="8")]
    existing = [bound_pod("machine1", requests=[{"cpu": "1000m", "memory": "2000", GPU: "1"}])]
    profile = profile_with(
        score=((BALANCED, 1),),
        args={BALANCED: NodeResourcesBalancedAllocationArgs(resources=THREE_RESOURCES)},
    )
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, BALANCED) == want


def test_best_effort_pod_is_scored_when_pre_score_is_not_enabled(evaluate) -> None:
    # Without the PreScore extension nothing skips the pod: no fractions above 0 -> 100.
    nodes = [machine("machine1", 4000, 10000), machine("machine2", 4000, 10000)]
    profile = profile_with(score=((BALANCED, 1),), pre_score=())
    evaluation = evaluate(snapshot_of(nodes), pod_info(make_pod()), profile)
    assert scores_of(evaluation, BALANCED) == {"machine1": 100, "machine2": 100}
