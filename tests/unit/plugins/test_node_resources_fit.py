"""NodeResourcesFit Filter and Score.

Cases transcribed from upstream ``noderesources/fit_test.go``: TestEnoughRequests,
TestNotEnoughRequests, TestStorageRequests, TestRestartableInitContainers (sidecars
enabled) and TestFitScore. The filter cases use one node whose allocatable is upstream's
``makeAllocatableResources(10, 20, 32, 5, 20, 5)``: cpu 10m, memory 20, pods 32,
example.com/aaa 5, ephemeral-storage 20, hugepages-2Mi 5; one pod already runs on it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from asched.config.types import NodeResourcesFitArgs, ScoringStrategy, ShapePoint
from asched.framework.status import Code
from tests.builders import (
    FITS,
    container,
    make_node,
    make_pod,
    outcome,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
)

FIT = "NodeResourcesFit"
EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_A = "kubernetes.io/something"
K8S_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"


def rl(cpu_m: int = 0, memory: int = 0, **scalars: int) -> dict[str, str]:
    """A request list like upstream's ``framework.Resource``: cpu in m, memory in bytes.

    Scalar names with ``/`` or ``-`` are passed as ``ext_a=``, ``ext_b=``, ``k8s_a=``,
    ``k8s_b=``, ``huge_a=``, ``storage=``.
    """
    names = {
        "ext_a": EXT_A,
        "ext_b": EXT_B,
        "k8s_a": K8S_A,
        "k8s_b": K8S_B,
        "huge_a": HUGE_A,
        "storage": "ephemeral-storage",
    }
    out = {"cpu": f"{cpu_m}m", "memory": str(memory)}
    out.update({names[k]: str(v) for k, v in scalars.items()})
    return out


def unfit(*reasons: str) -> tuple[str, Code, tuple[str, ...]]:
    return (FIT, Code.UNSCHEDULABLE, reasons)


def fit_node(pods: str = "32", **extra: str) -> dict[str, object]:
    allocatable = {EXT_A: "5", "ephemeral-storage": "20", HUGE_A: "5"}
    allocatable.update(extra)
    return make_node("node", cpu="10m", memory="20", pods=pods, allocatable=allocatable)


def run_filter(
    evaluate,
    pod: dict[str, object],
    existing: Mapping[str, str],
    *,
    node: dict[str, object] | None = None,
    args: NodeResourcesFitArgs | None = None,
):
    snapshot = snapshot_of(
        [node or fit_node()], [make_pod("existing", node_name="node", requests=[existing])]
    )
    profile = profile_with(filter=(FIT,), args={FIT: args} if args else None)
    return evaluate(snapshot, pod_info(pod), profile)


ENOUGH_REQUESTS = [
    # the pod asks for nothing: no resource is compared
    pytest.param(make_pod(), rl(10, 20), None, FITS, id="no resources requested always fits"),
    # free cpu = 10m - 10m = 0 < 1m; free memory = 20 - 20 = 0 < 1
    pytest.param(
        make_pod(requests=[rl(1, 1)]),
        rl(10, 20),
        None,
        unfit("Insufficient cpu", "Insufficient memory"),
        id="too many resources fails",
    ),
    # cpu = max(app 1m, init 3m) = 3m > free 10m - 8m = 2m; memory max(1, 1) = 1 <= 1
    pytest.param(
        make_pod(requests=[rl(1, 1)], init=[rl(3, 1)]),
        rl(8, 19),
        None,
        unfit("Insufficient cpu"),
        id="too many resources fails due to init container cpu",
    ),
    # cpu = max(1m, 3m, 2m) = 3m > 2m free
    pytest.param(
        make_pod(requests=[rl(1, 1)], init=[rl(3, 1), rl(2, 1)]),
        rl(8, 19),
        None,
        unfit("Insufficient cpu"),
        id="too many resources fails due to highest init container cpu",
    ),
    # memory = max(1, 3) = 3 > free 20 - 19 = 1; cpu 1m <= 1m free
    pytest.param(
        make_pod(requests=[rl(1, 1)], init=[rl(1, 3)]),
        rl(9, 19),
        None,
        unfit("Insufficient memory"),
        id="too many resources fails due to init container memory",
    ),
    # memory = max(1, 3, 2) = 3 > 1 free
    pytest.param(
        make_pod(requests=[rl(1, 1)], init=[rl(1, 3), rl(1, 2)]),
        rl(9, 19),
        None,
        unfit("Insufficient memory"),
        id="too many resources fails due to highest init container memory",
    ),
    # max(1m, 1m) = 1m <= 1m free; max(1, 1) = 1 <= 1 free (not the sum 2)
    pytest.param(
        make_pod(requests=[rl(1, 1)], init=[rl(1, 1)]),
        rl(9, 19),
        None,
        FITS,
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(
        make_pod(requests=[rl(1, 1)], init=[rl(1, 1), rl(1, 1)]),
        rl(9, 19),
        None,
        FITS,
        id="multiple init containers fit because it's the max, not sum",
    ),
    # 1m <= 10m - 5m; 1 <= 20 - 5
    pytest.param(make_pod(requests=[rl(1, 1)]), rl(5, 5), None, FITS, id="both resources fit"),
    # cpu 2m > 10m - 9m = 1m; memory 1 <= 15
    pytest.param(
        make_pod(requests=[rl(2, 1)]),
        rl(9, 5),
        None,
        unfit("Insufficient cpu"),
        id="one resource memory fits",
    ),
    # memory 2 > 20 - 19 = 1; cpu 1m <= 5m
    pytest.param(
        make_pod(requests=[rl(1, 2)]),
        rl(5, 19),
        None,
        unfit("Insufficient memory"),
        id="one resource cpu fits",
    ),
    # cpu 5m == 10m - 5m free: equality fits; memory 1 == 1
    pytest.param(make_pod(requests=[rl(5, 1)]), rl(5, 19), None, FITS, id="equal edge case"),
    # cpu max(4m, 5m) = 5m == 5m free
    pytest.param(
        make_pod(requests=[rl(4, 1)], init=[rl(5, 1)]),
        rl(5, 19),
        None,
        FITS,
        id="equal edge case for init container",
    ),
    # example.com/aaa 1 <= 5 - 0
    pytest.param(make_pod(requests=[rl(ext_a=1)]), rl(), None, FITS, id="extended resource fits"),
    pytest.param(
        make_pod(requests=[rl()], init=[rl(ext_a=1)]),
        rl(),
        None,
        FITS,
        id="extended resource fits for init container",
    ),
    # example.com/aaa 10 > 5 - 0
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_a=10)]),
        rl(ext_a=0),
        None,
        unfit(f"Insufficient {EXT_A}"),
        id="extended resource capacity enforced",
    ),
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, ext_a=10)]),
        rl(ext_a=0),
        None,
        unfit(f"Insufficient {EXT_A}"),
        id="extended resource capacity enforced for init container",
    ),
    # example.com/aaa 1 > 5 - 5 = 0
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_a=1)]),
        rl(ext_a=5),
        None,
        unfit(f"Insufficient {EXT_A}"),
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, ext_a=1)]),
        rl(ext_a=5),
        None,
        unfit(f"Insufficient {EXT_A}"),
        id="extended resource allocatable enforced for init container",
    ),
    # example.com/aaa 3 + 3 = 6 > 5 - 2 = 3
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_a=3), rl(1, 1, ext_a=3)]),
        rl(ext_a=2),
        None,
        unfit(f"Insufficient {EXT_A}"),
        id="extended resource allocatable enforced for multiple containers",
    ),
    # init containers take the max: max(3, 3) = 3 <= 3 free
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, ext_a=3), rl(1, 1, ext_a=3)]),
        rl(ext_a=2),
        None,
        FITS,
        id="extended resource allocatable admits multiple init containers",
    ),
    # max(6, 3) = 6 > 3 free
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, ext_a=6), rl(1, 1, ext_a=3)]),
        rl(ext_a=2),
        None,
        unfit(f"Insufficient {EXT_A}"),
        id="extended resource allocatable enforced for multiple init containers",
    ),
    # example.com/bbb: the node has none, 1 > 0
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_b=1)]),
        rl(),
        None,
        unfit(f"Insufficient {EXT_B}"),
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, ext_b=1)]),
        rl(),
        None,
        unfit(f"Insufficient {EXT_B}"),
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    # kubernetes.io/something: 10 > 0
    pytest.param(
        make_pod(requests=[rl(1, 1, k8s_a=10)]),
        rl(),
        None,
        unfit(f"Insufficient {K8S_A}"),
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, k8s_b=10)]),
        rl(),
        None,
        unfit(f"Insufficient {K8S_B}"),
        id="kubernetes.io resource capacity enforced for init container",
    ),
    # hugepages-2Mi: 10 > 5 - 0
    pytest.param(
        make_pod(requests=[rl(1, 1, huge_a=10)]),
        rl(huge_a=0),
        None,
        unfit(f"Insufficient {HUGE_A}"),
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        make_pod(requests=[rl()], init=[rl(1, 1, huge_a=10)]),
        rl(huge_a=0),
        None,
        unfit(f"Insufficient {HUGE_A}"),
        id="hugepages resource capacity enforced for init container",
    ),
    # hugepages-2Mi: 3 + 3 = 6 > 5 - 2 = 3
    pytest.param(
        make_pod(requests=[rl(1, 1, huge_a=3), rl(1, 1, huge_a=3)]),
        rl(huge_a=2),
        None,
        unfit(f"Insufficient {HUGE_A}"),
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_b=1)]),
        rl(),
        NodeResourcesFitArgs(ignored_resources=(EXT_B,)),
        FITS,
        id="skip checking ignored extended resource",
    ),
    # cpu 1m + 3m overhead = 4m <= 5m free; memory 1 + 13 = 14 <= 15 free
    pytest.param(
        make_pod(requests=[rl(1, 1)], overhead={"cpu": "3m", "memory": "13"}),
        rl(5, 5),
        None,
        FITS,
        id="resources + pod overhead fits",
    ),
    # memory 1 + 15 = 16 > 15 free; cpu 1m + 1m = 2m <= 5m
    pytest.param(
        make_pod(requests=[rl(1, 1)], overhead={"cpu": "1m", "memory": "15"}),
        rl(5, 5),
        None,
        unfit("Insufficient memory"),
        id="requests + overhead does not fit for memory",
    ),
    # example.com/bbb is in an ignored group; kubernetes.io/something is not extended
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_b=1, k8s_a=1)]),
        rl(),
        NodeResourcesFitArgs(ignored_resource_groups=("example.com",)),
        unfit(f"Insufficient {K8S_A}"),
        id="skip checking ignored extended resource via resource groups",
    ),
    # example.com/aaa requested 0: not compared although 6 > 5 are in use
    pytest.param(
        make_pod(requests=[rl(1, 1, ext_a=0)]),
        rl(ext_a=6),
        None,
        FITS,
        id="skip checking extended resource request with quantity zero",
    ),
    # the node is over-committed (20m > 10m cpu, 30 > 20 memory) but the pod asks 0 of both;
    # example.com/aaa 1 <= 5 - 1
    pytest.param(
        make_pod(requests=[rl(ext_a=1)]),
        rl(20, 30, ext_a=1),
        None,
        FITS,
        id="skip checking resource request with quantity zero",
    ),
    # asched: scalar reasons come in sorted name order (upstream: map order)
    pytest.param(
        make_pod(requests=[rl(11, 1, ext_b=1, ext_a=6, huge_a=6)]),
        rl(),
        None,
        unfit(
            "Insufficient cpu",
            f"Insufficient {EXT_A}",
            f"Insufficient {EXT_B}",
            f"Insufficient {HUGE_A}",
        ),
        id="all reasons, scalar resources sorted by name",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "args", "want"), ENOUGH_REQUESTS)
def test_enough_requests(evaluate, pod, existing, args, want) -> None:
    evaluation = run_filter(evaluate, pod, existing, args=args)
    assert outcome(evaluation, "node") == want


NOT_ENOUGH_PODS = [
    # 1 pod on the node + this one = 2 > 1 allowed; nothing else is compared
    pytest.param(
        make_pod(),
        rl(10, 20),
        unfit("Too many pods"),
        id="even without specified resources, predicate fails when there's no space for additional pod",
    ),
    pytest.param(
        make_pod(requests=[rl(1, 1)]),
        rl(5, 5),
        unfit("Too many pods"),
        id="even if both resources fit, predicate fails when there's no space for additional pod",
    ),
    pytest.param(
        make_pod(requests=[rl(5, 1)]),
        rl(5, 19),
        unfit("Too many pods"),
        id="even for equal edge case, predicate fails when there's no space for additional pod",
    ),
    pytest.param(
        make_pod(requests=[rl(5, 1)], init=[rl(5, 1)]),
        rl(5, 19),
        unfit("Too many pods"),
        id="even for equal edge case, fails when there's no space for additional pod due to init container",
    ),
    # asched: the pod count and the resources are all reported: 6m > 10m - 5m
    pytest.param(
        make_pod(requests=[rl(6, 1)]),
        rl(5, 19),
        unfit("Too many pods", "Insufficient cpu"),
        id="too many pods and insufficient cpu together",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), NOT_ENOUGH_PODS)
def test_not_enough_requests(evaluate, pod, existing, want) -> None:
    # makeAllocatableResources(10, 20, 1, 0, 0, 0): room for one pod only
    node = make_node(
        "node",
        cpu="10m",
        memory="20",
        pods="1",
        allocatable={EXT_A: "0", "ephemeral-storage": "0", HUGE_A: "0"},
    )
    evaluation = run_filter(evaluate, pod, existing, node=node)
    assert outcome(evaluation, "node") == want


STORAGE_REQUESTS = [
    pytest.param(
        make_pod(requests=[rl(1, 1)]),
        rl(2, 10),
        FITS,
        id="empty storage requested, and pod fits",
    ),
    # ephemeral-storage 25 > 20 - 0
    pytest.param(
        make_pod(requests=[rl(storage=25)]),
        rl(2, 2),
        unfit("Insufficient ephemeral-storage"),
        id="storage ephemeral local storage request exceeds allocatable",
    ),
    # 5 <= 20 - 10
    pytest.param(
        make_pod(requests=[rl(storage=5)]),
        rl(2, 2, storage=10),
        FITS,
        id="ephemeral local storage is sufficient",
    ),
    # 10 <= 20 - 0
    pytest.param(make_pod(requests=[rl(storage=10)]), rl(2, 2), FITS, id="pod fits"),
]


@pytest.mark.parametrize(("pod", "existing", "want"), STORAGE_REQUESTS)
def test_storage_requests(evaluate, pod, existing, want) -> None:
    evaluation = run_filter(evaluate, pod, existing)
    assert outcome(evaluation, "node") == want


def test_restartable_init_container_is_allowed(evaluate) -> None:
    # TestRestartableInitContainers with SidecarContainers enabled (always, in asched):
    # a node with room for one pod and no cpu/memory takes a request-less sidecar pod.
    node = make_node("node", cpu="0", memory="0", pods="1")
    pod = make_pod(
        containers=[container("regular")],
        init_containers=[container("restartable-init", restart_policy="Always")],
    )
    evaluation = evaluate(snapshot_of([node]), pod_info(pod), profile_with(filter=(FIT,)))
    assert outcome(evaluation, "node") == FITS


def test_message_counts_every_reason_of_every_node(evaluate) -> None:
    # node-a lacks cpu (2 > 1) and memory (2Gi > 1Gi): 2 reasons; node-b lacks cpu only.
    # counts: cpu 2, memory 1; parts sorted as strings: "1 Insufficient memory" first.
    nodes = [
        make_node("node-a", cpu="1", memory="1Gi"),
        make_node("node-b", cpu="1", memory="8Gi"),
    ]
    pod = make_pod(cpu="2", memory="2Gi")
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), profile_with(filter=(FIT,)))
    assert evaluation.selected is None
    assert evaluation.message == (
        "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
    )


# --- TestFitScore ----------------------------------------------------------------------
# node1: cpu 4000 (cores), memory 10000; node2: cpu 6000, memory 10000.
# existing: node1 cpu 2000 memory 4000; node2 cpu 1000 memory 2000.

RTCR_FALLING = ScoringStrategy(
    type="RequestedToCapacityRatio", shape=(ShapePoint(0, 10), ShapePoint(100, 0))
)
RTCR_RISING = ScoringStrategy(
    type="RequestedToCapacityRatio", shape=(ShapePoint(0, 0), ShapePoint(100, 10))
)

FIT_SCORE = [
    # shape (0,100)->(100,0); pod cpu 3000 memory 5000.
    # node1: cpu 5000 > 4000 -> util 100 -> 0 (left out, score 0);
    #        memory 9000*100/10000 = 90 -> 100 - 90 = 10; round(10/1) = 10
    # node2: cpu 4000*100/6000 = 66 -> 34; memory 7000*100/10000 = 70 -> 30; round(64/2) = 32
    pytest.param(RTCR_FALLING, ("3000", "5000"), {"node1": 10, "node2": 32}, id="RTCR case1"),
    # shape (0,0)->(100,100). node1: cpu 100, memory 90 -> round(190/2) = 95
    # node2: cpu 66, memory 70 -> round(136/2) = 68
    pytest.param(RTCR_RISING, ("3000", "5000"), {"node1": 95, "node2": 68}, id="RTCR case2"),
    # pod cpu 1000 memory 2000. node1: 3000*100/4000 = 75, 6000*100/10000 = 60 -> 135/2 = 67
    # node2: 2000*100/6000 = 33, 4000*100/10000 = 40 -> 73/2 = 36
    pytest.param(
        ScoringStrategy(type="MostAllocated"),
        ("1000", "2000"),
        {"node1": 67, "node2": 36},
        id="MostAllocated",
    ),
    # node1: (4000-3000)*100/4000 = 25, (10000-6000)*100/10000 = 40 -> 65/2 = 32
    # node2: (6000-2000)*100/6000 = 66, (10000-4000)*100/10000 = 60 -> 126/2 = 63
    pytest.param(
        ScoringStrategy(type="LeastAllocated"),
        ("1000", "2000"),
        {"node1": 32, "node2": 63},
        id="LeastAllocated",
    ),
]


@pytest.mark.parametrize("run_pre_score", [True, False], ids=["with PreScore", "without PreScore"])
@pytest.mark.parametrize(("strategy", "request_", "want"), FIT_SCORE)
def test_fit_score(evaluate, strategy, request_, want, run_pre_score) -> None:
    nodes = [
        make_node("node1", cpu="4000", memory="10000"),
        make_node("node2", cpu="6000", memory="10000"),
    ]
    existing = [
        make_pod("p1", node_name="node1", cpu="2000", memory="4000"),
        make_pod("p2", node_name="node2", cpu="1000", memory="2000"),
    ]
    pod = make_pod(cpu=request_[0], memory=request_[1])
    profile = profile_with(
        score=((FIT, 1),),
        pre_score=None if run_pre_score else (),
        args={FIT: NodeResourcesFitArgs(scoring_strategy=strategy)},
    )
    evaluation = evaluate(snapshot_of(nodes, existing), pod_info(pod), profile)
    assert scores_of(evaluation, FIT) == want
