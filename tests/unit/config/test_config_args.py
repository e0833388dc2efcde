"""Valid pluginConfig args: what is read, and the defaults filled around it."""

from __future__ import annotations

import pytest

from asched.cluster.records import NodeAffinity, NodeSelectorTerm, PreferredTerm, Requirement
from asched.config.types import (
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    ShapePoint,
    VolumeBindingArgs,
)
from tests.configs import load_config

TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
CPU_MEMORY = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


def args_of(plugin, args):
    config = load_config(
        {**TYPE_META, "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}]}
    )
    return config.profiles[0].plugin_args[plugin]


@pytest.mark.parametrize(
    ("plugin", "args", "expected"),
    [
        pytest.param(
            "NodeResourcesFit",
            {
                "kind": "NodeResourcesFitArgs",
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "ignoredResources": ["example.com/fpga"],
                "ignoredResourceGroups": ["example.com"],
            },
            NodeResourcesFitArgs(("example.com/fpga",), ("example.com",), ScoringStrategy()),
            id="fit ignored resources with type meta",
        ),
        pytest.param(
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": 3}, {"name": "nvidia.com/gpu"}],
                }
            },
            # An absent weight is 1.
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "MostAllocated", (ResourceSpec("cpu", 3), ResourceSpec("nvidia.com/gpu", 1))
                )
            ),
            id="fit most allocated with resources",
        ),
        pytest.param(
            "NodeResourcesFit",
            {"scoringStrategy": {"resources": []}},
            NodeResourcesFitArgs(scoring_strategy=ScoringStrategy("LeastAllocated", CPU_MEMORY)),
            id="fit empty resources mean cpu and memory",
        ),
        pytest.param(
            "NodeResourcesFit",
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
                    },
                }
            },
            NodeResourcesFitArgs(
                scoring_strategy=ScoringStrategy(
                    "RequestedToCapacityRatio", CPU_MEMORY, (ShapePoint(0, 10), ShapePoint(100, 0))
                )
            ),
            id="fit requested to capacity ratio",
        ),
        pytest.param(
            "NodeResourcesBalancedAllocation",
            {"resources": [{"name": "cpu"}, {"name": "memory", "weight": 100}]},
            NodeResourcesBalancedAllocationArgs(
                (ResourceSpec("cpu", 1), ResourceSpec("memory", 100))
            ),
            id="balanced allocation resources",
        ),
        pytest.param(
            "InterPodAffinity",
            {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True},
            InterPodAffinityArgs(0, ignore_preferred_terms_of_existing_pods=True),
            id="inter-pod affinity",
        ),
        pytest.param(
            "DefaultPreemption",
            {"minCandidateNodesPercentage": 0},
            DefaultPreemptionArgs(0, 100),
            id="preemption percentage 0 with the default absolute",
        ),
        pytest.param(
            "VolumeBinding", {"bindTimeoutSeconds": 0}, VolumeBindingArgs(0), id="volume binding"
        ),
        pytest.param(
            "VolumeBinding",
            {"bindTimeoutSeconds": 30.0},
            VolumeBindingArgs(30),
            id="integral float accepted",
        ),
        pytest.param(
            "PodTopologySpread", None, PodTopologySpreadArgs("System", ()), id="null args"
        ),
        pytest.param(
            "PodTopologySpread",
            {"defaultingType": "List"},
            PodTopologySpreadArgs("List", ()),
            id="List without constraints",
        ),
        pytest.param(
            "PodTopologySpread",
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                    },
                    {
                        "maxSkew": 3,
                        "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "minDomains": 2,
                    },
                ],
            },
            PodTopologySpreadArgs(
                "List",
                (
                    {
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                    },
                    {
                        "maxSkew": 3,
                        "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "minDomains": 2,
                    },
                ),
            ),
            id="List with constraints",
        ),
        pytest.param(
            "NodeAffinity",
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "pool", "operator": "In", "values": ["batch"]}
                                ]
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 5,
                            "preference": {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                                ]
                            },
                        }
                    ],
                }
            },
            NodeAffinityArgs(
                NodeAffinity(
                    required=(NodeSelectorTerm((Requirement("pool", "In", ("batch",)),)),),
                    preferred=(
                        PreferredTerm(
                            5, NodeSelectorTerm((), (Requirement("metadata.name", "In", ("n1",)),))
                        ),
                    ),
                )
            ),
            id="node affinity added affinity",
        ),
    ],
)
def test_args(plugin, args, expected) -> None:
    assert args_of(plugin, args) == expected
