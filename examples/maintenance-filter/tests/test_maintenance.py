"""Maintenance and ZoneWeights through asched's test kit: verdicts, scores, args errors."""

from __future__ import annotations

import pytest
from asched_maintenance_filter import MAINTENANCE, ZONE_WEIGHTS
from asched_maintenance_filter.plugin import REASON, Maintenance, MaintenanceArgs

from asched import plugin as ap
from asched.plugin import testing

IN_MAINTENANCE = {"example.com/maintenance": "true"}
IGNORES = {"example.com/ignore-maintenance": "true"}
ZONE = "topology.kubernetes.io/zone"

NODES = testing.cluster(
    testing.node("down", annotations=IN_MAINTENANCE),
    testing.node("back", annotations={"example.com/maintenance": "false"}),
    testing.node("plain"),
    testing.node("other", annotations={"example.com/owner": "team-a"}),
)


def verdicts(result) -> dict[str, str]:
    return {
        name: "pass" if v.feasible else f"{v.plugin} {v.code.name}: {'; '.join(v.reasons)}"
        for name, v in result.nodes.items()
    }


REJECTED = f"Maintenance UNSCHEDULABLE_AND_UNRESOLVABLE: {REASON}"


@pytest.mark.parametrize(
    ("annotations", "args", "expected"),
    [
        pytest.param(
            {},
            None,
            {"down": REJECTED, "back": "pass", "plain": "pass", "other": "pass"},
            id="only the node annotated true is rejected",
        ),
        pytest.param(
            IGNORES,
            None,
            {"down": "pass", "back": "pass", "plain": "pass", "other": "pass"},
            id="a pod that ignores maintenance goes anywhere",
        ),
        pytest.param(
            {"example.com/ignore-maintenance": "True"},
            None,
            {"down": REJECTED, "back": "pass", "plain": "pass", "other": "pass"},
            id='only "true" ignores it',
        ),
        pytest.param(
            {},
            {"nodeAnnotation": "example.com/owner"},
            {"down": "pass", "back": "pass", "plain": "pass", "other": "pass"},
            id="another key: team-a is not true",
        ),
    ],
)
def test_verdicts(annotations, args, expected) -> None:
    pod = testing.pod("web", annotations=annotations)
    assert verdicts(testing.evaluate(MAINTENANCE, pod, NODES, args=args)) == expected


@pytest.mark.parametrize("annotations", [{}, IGNORES, {"example.com/ignore-maintenance": "no"}])
def test_matches_its_per_node_definition(annotations) -> None:
    def definition(pod, node) -> bool:
        ignores = pod.annotations.get("example.com/ignore-maintenance") == "true"
        return ignores or node.annotations.get("example.com/maintenance") != "true"

    pod = testing.pod("web", annotations=annotations)
    testing.check_filter(MAINTENANCE, pod, NODES, definition)


@pytest.mark.parametrize(
    ("changed", "helps"),
    [
        pytest.param(ap.NodeInfo("n", annotations={}), True, id="maintenance over"),
        pytest.param(ap.NodeInfo("n", annotations=IN_MAINTENANCE), False, id="still in it"),
        pytest.param(None, True, id="no node given: may help"),
    ],
)
def test_queueing_hint(changed, helps) -> None:
    plugin = Maintenance(MaintenanceArgs())
    pod = ap.PodInfo("default", "web")
    assert plugin.queueing_hint(ap.ClusterEvent.NODE_ANNOTATION, pod, changed) is helps


ZONES = testing.cluster(
    testing.node("a1", labels={ZONE: "zone-a"}),
    testing.node("a2", labels={ZONE: "zone-a"}),
    testing.node("b1", labels={ZONE: "zone-b"}),
    testing.node("c1", labels={ZONE: "zone-c"}),
    testing.node("none"),
)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            {"zoneWeights": {"zone-a": 100, "zone-b": 50}},
            # listed zones score their weight; zone-c and no zone the default 0
            {"a1": 100, "a2": 100, "b1": 50, "c1": 0, "none": 0},
            id="weights",
        ),
        pytest.param(
            {"zoneWeights": {"zone-c": 80}, "defaultWeight": 20},
            {"a1": 20, "a2": 20, "b1": 20, "c1": 80, "none": 20},
            id="a default weight",
        ),
        pytest.param(None, {"a1": 0, "a2": 0, "b1": 0, "c1": 0, "none": 0}, id="no args"),
    ],
)
def test_zone_scores(args, expected) -> None:
    result = testing.evaluate(ZONE_WEIGHTS, testing.pod("web"), ZONES, args=args)
    assert {n: v.scores["ZoneWeights"] for n, v in result.nodes.items()} == expected


def test_zone_scores_match_their_definition() -> None:
    weights = {"zone-a": 30, "zone-b": 70}

    def definition(pod, node) -> int:
        return weights.get(node.labels.get(ZONE, ""), 10)

    args = {"zoneWeights": weights, "defaultWeight": 10}
    testing.check_score(ZONE_WEIGHTS, testing.pod("web"), ZONES, definition, args=args)


@pytest.mark.parametrize(
    ("plugin", "args", "messages"),
    [
        pytest.param(
            ZONE_WEIGHTS,
            {"zoneWeights": {"zone-a": 101, "zone-b": "high"}},
            [
                "args.zoneWeights.zone-a: must be in 0..100, got 101",
                "args.zoneWeights.zone-b: must be an integer, got 'high'",
            ],
            id="bad weights",
        ),
        pytest.param(
            ZONE_WEIGHTS,
            {"zoneWeights": ["zone-a"], "defaultWeight": -1},
            [
                "args.zoneWeights: must be an object, got a list",
                "args.defaultWeight: must be in 0..100, got -1",
            ],
            id="not a map, and a bad default",
        ),
        pytest.param(
            MAINTENANCE,
            {"nodeAnnotation": "", "podAnotation": "x"},
            ["args.podAnotation: unknown field", "args.nodeAnnotation: must not be empty"],
            id="typo and an empty key",
        ),
    ],
)
def test_bad_args_name_the_field(plugin, args, messages) -> None:
    with pytest.raises(ap.ConfigError) as caught:
        testing.profile_for(plugin, args=args)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].{m}" for m in messages
    ]
