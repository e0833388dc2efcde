"""GPUPacking through asched's test kit: the filter, the score, and their definitions."""

from __future__ import annotations

import pytest
from asched_gpu_packing import PLUGIN

from asched.errors import ConfigError
from asched.plugin import testing

GPU = "nvidia.com/gpu"


def cluster():
    """g1: 8 GPUs, 6 used; g2: 8 GPUs, 2 used; g3: 8 GPUs free; cpu: no GPUs."""
    return testing.cluster(
        testing.node("g1", extended={GPU: 8}),
        testing.node("g2", extended={GPU: 8}),
        testing.node("g3", extended={GPU: 8}),
        testing.node("cpu"),
        testing.pod("train-a", requests={GPU: 6}, node_name="g1"),
        testing.pod("train-b", requests={GPU: 2}, node_name="g2"),
    )


def verdicts(result):
    out = {}
    for name, verdict in result.nodes.items():
        out[name] = verdict.scores.get("GPUPacking") if verdict.feasible else verdict.plugin
    return out


@pytest.mark.parametrize(
    ("pending", "expected", "selected"),
    [
        pytest.param(
            testing.pod("notebook", requests={GPU: 2}),
            # used after / 8: g1 (6+2)/8 -> 100, g2 (2+2)/8 -> 50, g3 2/8 -> 25;
            # cpu has no GPU: NodeResourcesFit is not in this profile, so it is scored 0
            {"g1": 100, "g2": 50, "g3": 25, "cpu": 0},
            "g1",
            id="a small GPU pod fills the fullest node",
        ),
        pytest.param(
            testing.pod("infer", requests={GPU: 1}),
            # g1 7/8 -> 87, g2 3/8 -> 37, g3 1/8 -> 12
            {"g1": 87, "g2": 37, "g3": 12, "cpu": 0},
            "g1",
            id="one GPU",
        ),
        pytest.param(
            testing.pod("web", requests={"cpu": "1"}),
            # no GPU request: the GPU nodes are reserved, PreScore skips the score
            {"g1": "GPUPacking", "g2": "GPUPacking", "g3": "GPUPacking", "cpu": None},
            "cpu",
            id="a CPU pod stays off GPU nodes",
        ),
    ],
)
def test_verdicts(pending, expected, selected) -> None:
    result = testing.evaluate(PLUGIN, pending, cluster())
    assert verdicts(result) == expected
    assert result.selected == selected


def test_reason_is_reported() -> None:
    result = testing.evaluate(PLUGIN, testing.pod("web"), cluster())
    assert result.nodes["g3"].reasons == ("node(s) reserve their GPUs for GPU pods",)


def test_reservation_can_be_turned_off() -> None:
    result = testing.evaluate(
        PLUGIN, testing.pod("web"), cluster(), args={"reserveGPUNodes": False}
    )
    assert all(verdict.feasible for verdict in result.nodes.values())


@pytest.mark.parametrize("gpus", [0, 1, 2, 4, 8])
def test_filter_matches_its_definition(gpus) -> None:
    def definition(pod, node) -> bool:
        return pod.requests.get(GPU, 0) > 0 or node.allocatable.get(GPU, 0) == 0

    testing.check_filter(PLUGIN, testing.pod("p", requests={GPU: gpus}), cluster(), definition)


@pytest.mark.parametrize("gpus", [1, 2, 3, 8])
def test_score_matches_its_definition(gpus) -> None:
    def definition(pod, node) -> int:
        total = node.allocatable.get(GPU, 0)
        if total == 0:
            return 0
        used_after = min(total, node.requested.get(GPU, 0) + pod.requests[GPU])
        return 100 * used_after // total

    testing.check_score(PLUGIN, testing.pod("p", requests={GPU: gpus}), cluster(), definition)


def test_bad_resource_name() -> None:
    with pytest.raises(ConfigError) as caught:
        testing.profile_for(PLUGIN, args={"resourceName": "gpu"})
    assert [str(e) for e in caught.value.errors] == [
        "profiles[0].pluginConfig[0].args.resourceName: must be an extended resource name "
        "(domain/name), got 'gpu'"
    ]
