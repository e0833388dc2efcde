"""Defaults: the empty document resolves to upstream's default plugin set exactly
(pkg/scheduler/apis/config/v1/default_plugins.go)."""

from __future__ import annotations

import pytest

from asched.config import args as config_args
from asched.config.plugins import DEFAULT_MULTIPOINT
from asched.config.types import (
    EXTENSION_POINTS,
    ClientConnection,
    CoschedulingArgs,
    DefaultPreemptionArgs,
    InterPodAffinityArgs,
    LeaderElection,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginSet,
    PodTopologySpreadArgs,
    ResolvedPlugins,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
)
from tests.configs import CATALOGUE, default_config, load_config

DEFAULT_RESOLVED = ResolvedPlugins(
    pre_enqueue=("SchedulingGates",),
    queue_sort=("PrioritySort",),
    pre_filter=(
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    ),
    filter=(
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    ),
    post_filter=("DefaultPreemption",),
    # The multiPoint plugins with a PreScore extension, in multiPoint order.
    pre_score=(
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ),
    # Max total: 100 x (3+2+1+2+2+1+1) = 1200.
    score=(
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ),
    reserve=("VolumeBinding",),
    permit=(),
    pre_bind=("VolumeBinding",),
    bind=("DefaultBinder",),
    post_bind=(),
)

DEFAULT_ARGS = {
    "NodeAffinity": NodeAffinityArgs(None),
    "NodeResourcesFit": NodeResourcesFitArgs(
        (),
        (),
        ScoringStrategy("LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))),
    ),
    "VolumeBinding": VolumeBindingArgs(600),
    "PodTopologySpread": PodTopologySpreadArgs("System", ()),
    "InterPodAffinity": InterPodAffinityArgs(1, ignore_preferred_terms_of_existing_pods=False),
    "DefaultPreemption": DefaultPreemptionArgs(10, 100),
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs(
        (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    ),
}

TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(None, id="None"),
        pytest.param({}, id="empty mapping"),
        pytest.param(dict(TYPE_META), id="type meta only"),
        pytest.param({**TYPE_META, "profiles": []}, id="empty profile list"),
        pytest.param({**TYPE_META, "profiles": [{}]}, id="one empty profile"),
        pytest.param({**TYPE_META, "profiles": [{"plugins": {}}]}, id="empty plugins"),
    ],
)
def test_empty_documents_resolve_to_the_defaults(data) -> None:
    config = load_config(data)
    assert len(config.profiles) == 1
    profile = config.profiles[0]
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert profile.resolved == DEFAULT_RESOLVED
    assert dict(profile.plugin_args) == DEFAULT_ARGS
    assert set(profile.plugins) == set(EXTENSION_POINTS)
    assert all(plugin_set == PluginSet() for plugin_set in profile.plugins.values())


def test_default_config_top_level() -> None:
    config = default_config()
    assert config == load_config(None)
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert config.pod_initial_backoff_seconds == 1
    assert config.pod_max_backoff_seconds == 10
    assert config.delay_cache_until_active is False
    assert config.leader_election == LeaderElection(
        leader_elect=True,
        lease_duration_seconds=15.0,
        renew_deadline_seconds=10.0,
        retry_period_seconds=2.0,
        resource_lock="leases",
        resource_name="kube-scheduler",
        resource_namespace="kube-system",
    )
    assert config.client_connection == ClientConnection(
        kubeconfig="", content_type="application/vnd.kubernetes.protobuf", qps=50.0, burst=100
    )
    assert config.profile("default-scheduler") is config.profiles[0]
    assert config.profile("other") is None


def test_every_in_tree_plugin_is_in_the_default_multipoint_list_exactly_once() -> None:
    # (bundled plugins such as Coscheduling are off unless a profile enables them)
    names = [name for name, _ in DEFAULT_MULTIPOINT]
    in_tree = [name for name, info in CATALOGUE.plugins.items() if info.origin == "in-tree"]
    assert sorted(names) == sorted(in_tree)
    assert len(names) == len(set(names))


def test_default_weights_only_on_score_plugins() -> None:
    for name, weight in DEFAULT_MULTIPOINT:
        assert weight == 0 or "score" in CATALOGUE[name].points, name


def test_declared_points_are_extension_points() -> None:
    for name, info in CATALOGUE.plugins.items():
        assert info.points, name
        assert info.points <= set(EXTENSION_POINTS) - {"multiPoint"}, name


def test_every_in_tree_args_kind_is_named_after_its_plugin() -> None:
    assert set(config_args.IN_TREE_ARGS) == {
        name for name, info in CATALOGUE.plugins.items() if info.args is not None
    }
    for plugin, spec in config_args.IN_TREE_ARGS.items():
        assert spec.kind == f"{plugin}Args"


@pytest.mark.parametrize("plugin", sorted(config_args.IN_TREE_ARGS))
def test_default_args_equal_the_dataclass_defaults(plugin) -> None:
    spec = config_args.IN_TREE_ARGS[plugin]
    # the bundled plugins' args are not in the default profile: scheduler-plugins' defaults
    expected = {**DEFAULT_ARGS, "Coscheduling": CoschedulingArgs(60, 0, 10)}[plugin]
    assert config_args.default_args(spec) == expected
    # The dataclass defaults in types.py and the readers' defaults must not drift apart.
    assert config_args.default_args(spec) == type(expected)()
