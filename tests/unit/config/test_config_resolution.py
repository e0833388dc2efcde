"""Plugin set merging, multiPoint expansion and score weights (upstream v1 behaviour)."""

from __future__ import annotations

import dataclasses

import pytest

from asched.config import load, resolve
from asched.config.catalogue import PluginInfo
from asched.config.types import NodeResourcesFitArgs, PluginRef, PluginSet
from asched.errors import ConfigError
from tests.configs import CATALOGUE, load_config

TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

DEFAULT_FILTER = (
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
)
DEFAULT_SCORE = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)


def resolved_with(plugins):
    """The resolved plugins of a single profile with this ``plugins`` section."""
    config = load_config({**TYPE_META, "profiles": [{"plugins": plugins}]})
    return config.profiles[0].resolved


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param(
            {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]}},
            # "*" stops expansion at score, so score runs exactly the explicit list; an
            # explicit entry without weight gets 1.
            (("NodeResourcesFit", 1),),
            id="disable all score plugins then enable one",
        ),
        pytest.param(
            {
                "score": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "ImageLocality", "weight": 7}],
                }
            },
            (("ImageLocality", 7),),
            id="disable all score plugins then enable one with a weight",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "NodeAffinity", "weight": 10}]}},
            # NodeAffinity is also in multiPoint, so it is an override: it moves to the
            # front (overrides first), with the explicit weight.
            (("NodeAffinity", 10), *[p for p in DEFAULT_SCORE if p[0] != "NodeAffinity"]),
            id="explicit score entry replaces a default weight and moves first",
        ),
        pytest.param(
            {"score": {"enabled": [{"name": "TaintToleration"}]}},
            # getScoreWeights looks at score.enabled first: weight unset -> 1, not 3.
            (("TaintToleration", 1), *DEFAULT_SCORE[1:]),
            id="explicit score entry without weight resets the default weight to 1",
        ),
        pytest.param(
            {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 50}]}},
            # Same name as a default: replaced in place, order kept.
            (("TaintToleration", 50), *DEFAULT_SCORE[1:]),
            id="multiPoint entry replaces a default weight in place",
        ),
        pytest.param(
            {"score": {"disabled": [{"name": "ImageLocality"}, {"name": "TaintToleration"}]}},
            tuple(p for p in DEFAULT_SCORE if p[0] not in ("ImageLocality", "TaintToleration")),
            id="disable two score plugins by name",
        ),
        pytest.param(
            {"multiPoint": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
            tuple(p for p in DEFAULT_SCORE if p[0] != "NodeResourcesBalancedAllocation"),
            id="disable a plugin at multiPoint removes it everywhere",
        ),
        pytest.param(
            {
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                },
            },
            (),
            id="multiPoint without defaults has no score plugins",
        ),
    ],
)
def test_score_resolution(plugins, expected) -> None:
    assert resolved_with(plugins).score == expected


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param({"filter": {"disabled": [{"name": "*"}]}}, (), id="no filter plugins"),
        pytest.param(
            {
                "filter": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "NodeName"}, {"name": "NodeUnschedulable"}],
                }
            },
            ("NodeName", "NodeUnschedulable"),
            id="explicit list only, in the user's order",
        ),
        pytest.param(
            {"filter": {"enabled": [{"name": "NodeResourcesFit"}, {"name": "NodeName"}]}},
            # Overrides first (in the explicit order), then the other multiPoint plugins.
            (
                "NodeResourcesFit",
                "NodeName",
                *[p for p in DEFAULT_FILTER if p not in ("NodeResourcesFit", "NodeName")],
            ),
            id="explicit filter entries of multiPoint plugins move first",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "TaintToleration"}, {"name": "NodePorts"}]}},
            tuple(p for p in DEFAULT_FILTER if p not in ("TaintToleration", "NodePorts")),
            id="disabled by name at filter only",
        ),
        pytest.param(
            {
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "NodeResourcesFit"},
                        {"name": "TaintToleration"},
                        {"name": "NodeName"},
                        {"name": "DefaultBinder"},
                    ],
                }
            },
            ("NodeResourcesFit", "TaintToleration", "NodeName"),
            id="custom multiPoint list keeps its own order",
        ),
        pytest.param(
            {
                "multiPoint": {
                    "disabled": [{"name": "*"}],
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "DefaultBinder"},
                        {"name": "NodeName"},
                    ],
                },
                "filter": {"enabled": [{"name": "TaintToleration"}]},
            },
            # multiPoint-only plugins first, then the explicit ones that are not overrides.
            ("NodeName", "TaintToleration"),
            id="explicit non-multiPoint filter plugin goes after multiPoint ones",
        ),
        pytest.param(
            {"filter": {"disabled": [{"name": "NodeName"}], "enabled": [{"name": "NodeName"}]}},
            # Disabled at filter (not expanded from multiPoint) but explicitly enabled: last.
            (*[p for p in DEFAULT_FILTER if p != "NodeName"], "NodeName"),
            id="disabled and re-enabled goes to the end",
        ),
    ],
)
def test_filter_resolution(plugins, expected) -> None:
    assert resolved_with(plugins).filter == expected


def test_custom_multipoint_expands_to_every_point_in_order() -> None:
    resolved = resolved_with(
        {
            "multiPoint": {
                "disabled": [{"name": "*"}],
                "enabled": [
                    {"name": "DefaultBinder"},
                    {"name": "InterPodAffinity", "weight": 5},
                    {"name": "NodeAffinity"},
                    {"name": "PrioritySort"},
                ],
            }
        }
    )
    assert resolved.queue_sort == ("PrioritySort",)
    assert resolved.pre_filter == ("InterPodAffinity", "NodeAffinity")
    assert resolved.filter == ("InterPodAffinity", "NodeAffinity")
    assert resolved.pre_score == ("InterPodAffinity", "NodeAffinity")
    assert resolved.score == (("InterPodAffinity", 5), ("NodeAffinity", 1))
    assert resolved.bind == ("DefaultBinder",)
    assert resolved.pre_enqueue == ()
    assert resolved.post_filter == ()


def test_merge_replaces_defaults_in_place_and_appends_new_entries() -> None:
    merged = resolve.merge_plugin_set(
        PluginSet((PluginRef("A"), PluginRef("B", 2), PluginRef("C"))),
        PluginSet((PluginRef("X", 9), PluginRef("B", 5)), ("C",)),
    )
    # C disabled, B replaced in place with the custom weight, X appended.
    assert merged == PluginSet((PluginRef("A"), PluginRef("B", 5), PluginRef("X", 9)), ("C",))


def test_weight_on_a_non_score_multipoint_plugin_changes_nothing() -> None:
    resolved = resolved_with({"multiPoint": {"enabled": [{"name": "NodeName", "weight": 4}]}})
    assert resolved.filter == DEFAULT_FILTER
    assert resolved.score == DEFAULT_SCORE


def test_merge_with_wildcard_keeps_only_custom_entries() -> None:
    merged = resolve.merge_plugin_set(
        PluginSet((PluginRef("A"), PluginRef("B"))), PluginSet((PluginRef("B", 3),), ("*",))
    )
    assert merged == PluginSet((PluginRef("B", 3),), ("*",))


def test_user_sets_are_kept_as_written() -> None:
    config = load_config(
        {
            **TYPE_META,
            "profiles": [
                {
                    "plugins": {
                        "score": {
                            "enabled": [{"name": "ImageLocality", "weight": 4}],
                            "disabled": [{"name": "*"}],
                        }
                    }
                }
            ],
        }
    )
    plugins = config.profiles[0].plugins
    assert plugins["score"] == PluginSet((PluginRef("ImageLocality", 4),), ("*",))
    assert plugins["filter"] == PluginSet()


def test_plugin_args_follow_the_resolved_plugins() -> None:
    config = load_config(
        {
            **TYPE_META,
            "profiles": [
                {
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "InterPodAffinity"}, {"name": "VolumeBinding"}]
                        }
                    },
                    "pluginConfig": [
                        {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}}
                    ],
                }
            ],
        }
    )
    # Configured args of a plugin that does not run are validated, then dropped.
    assert set(config.profiles[0].plugin_args) == {
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
    }


def test_multiple_profiles() -> None:
    config = load_config(
        {
            **TYPE_META,
            "percentageOfNodesToScore": 40,
            "profiles": [
                {"schedulerName": "default-scheduler"},
                {
                    "schedulerName": "bin-packing",
                    "percentageOfNodesToScore": 100,
                    "plugins": {
                        "score": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "NodeResourcesFit", "weight": 5}],
                        }
                    },
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "MostAllocated"}},
                        }
                    ],
                },
            ],
        }
    )
    default, packing = config.profiles
    assert config.percentage_of_nodes_to_score == 40
    assert default.scheduler_name == "default-scheduler"
    assert default.percentage_of_nodes_to_score is None
    assert packing.scheduler_name == "bin-packing"
    assert packing.percentage_of_nodes_to_score == 100
    assert packing.resolved.score == (("NodeResourcesFit", 5),)
    assert packing.resolved.filter == default.resolved.filter
    fit = packing.args("NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs)
    assert fit.scoring_strategy.type == "MostAllocated"
    default_fit = default.args("NodeResourcesFit")
    assert isinstance(default_fit, NodeResourcesFitArgs)
    assert default_fit.scoring_strategy.type == "LeastAllocated"
    assert config.profile("bin-packing") is packing


def test_profiles_must_share_one_queue_sort_plugin() -> None:
    # Only PrioritySort implements queueSort in-tree; add a second one to exercise the rule.
    fake = PluginInfo("FakeSort", frozenset({"queueSort"}), origin="fake 1.0")
    catalogue = dataclasses.replace(CATALOGUE, plugins={**CATALOGUE.plugins, "FakeSort": fake})
    other_sort = {"queueSort": {"disabled": [{"name": "*"}], "enabled": [{"name": "FakeSort"}]}}
    with pytest.raises(ConfigError) as caught:
        load.load_config(
            {
                **TYPE_META,
                "profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "plugins": other_sort}],
            },
            catalogue=catalogue,
        )
    assert [str(e) for e in caught.value.errors] == [
        "profiles[1].plugins.queueSort: all profiles must use the same queueSort plugin: "
        "profiles[0] uses PrioritySort, this one FakeSort"
    ]
