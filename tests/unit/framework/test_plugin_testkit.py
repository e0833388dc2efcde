"""The test kit with annotations, owner references and a wrong ``explain`` (issue 30).

``Maintenance`` is the policy a plugin author could not write before: a node annotated
``example.com/maintenance: "true"`` is rejected unless the pod is annotated
``example.com/ignore-maintenance: "true"``. It is written twice, vectorised (over
``Nodes.annotation_values``) and per node (``Node.annotations``), and the kit runs both as
the scheduler would: annotations reach a plugin only when its declaration says
``reads_annotations=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from asched import plugin as ap
from asched.cluster.decode import decode_pod
from asched.plugin import testing

MAINTENANCE = "example.com/maintenance"
IGNORE = "example.com/ignore-maintenance"
REASON = "node(s) are in maintenance"


class Maintenance:
    name = "Maintenance"
    row_local = True

    def sign(self, pod: ap.PodInfo) -> object:
        return pod.annotations.get(IGNORE) == "true"

    def filter(self, state: Any, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows) -> ap.BoolMask:
        if pod.annotations.get(IGNORE) == "true":
            return np.ones(len(nodes.alive[rows]), dtype=np.bool_)
        passing: ap.BoolMask = nodes.annotation_values(MAINTENANCE)[rows] != "true"
        return passing

    def explain(self, state: Any, pod: ap.PodInfo, nodes: ap.Nodes, row: int) -> ap.Status:
        return ap.Status.unresolvable(REASON)


class MaintenancePerNode:
    name = "Maintenance"

    def filter_node(self, state: Any, pod: ap.PodInfo, node: ap.Node) -> ap.Status:
        if pod.annotations.get(IGNORE) == "true" or node.annotations.get(MAINTENANCE) != "true":
            return ap.Status.success()
        return ap.Status.unresolvable(REASON)


class ExplainsWithAString(Maintenance):
    def explain(self, state: Any, pod: ap.PodInfo, nodes: ap.Nodes, row: int) -> ap.Status:
        return REASON  # type: ignore[return-value]  # what the docs' "the reason" suggested


READING = ap.declare(Maintenance, api_version="1.4", reads_annotations=True)
PER_NODE = ap.declare(MaintenancePerNode, api_version="1.4", reads_annotations=True)
UNDECLARED = ap.declare(Maintenance, api_version="1.4")

CLUSTER = testing.cluster(
    testing.node("a", annotations={MAINTENANCE: "true"}),
    testing.node("b", annotations={MAINTENANCE: "false"}),
    testing.node("c"),
)


def _verdicts(result: Any) -> dict[str, str]:
    return {
        name: "pass" if v.feasible else f"{v.plugin}: {'; '.join(v.reasons)}"
        for name, v in result.nodes.items()
    }


@pytest.mark.parametrize(
    "spec", [pytest.param(READING, id="vectorised"), pytest.param(PER_NODE, id="per-node")]
)
@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param(
            {},
            {"a": f"Maintenance: {REASON}", "b": "pass", "c": "pass"},
            id="a in maintenance: rejected",
        ),
        pytest.param(
            {IGNORE: "true"}, {"a": "pass", "b": "pass", "c": "pass"}, id="the pod ignores it"
        ),
        pytest.param(
            {IGNORE: "yes"},
            {"a": f"Maintenance: {REASON}", "b": "pass", "c": "pass"},
            id='only "true" ignores it',
        ),
    ],
)
def test_a_plugin_reads_pod_and_node_annotations(
    spec: ap.PluginSpec, annotations: dict[str, str], expected: dict[str, str]
) -> None:
    result = testing.evaluate(spec, testing.pod("web", annotations=annotations), CLUSTER)
    assert _verdicts(result) == expected


def test_the_kit_holds_the_vectorised_form_to_its_definition() -> None:
    def definition(pod: ap.PodInfo, node: ap.Node) -> bool:
        return pod.annotations.get(IGNORE) == "true" or node.annotations.get(MAINTENANCE) != "true"

    for given in ({}, {IGNORE: "true"}):
        testing.check_filter(READING, testing.pod("web", annotations=given), CLUSTER, definition)


def test_without_the_declaration_annotations_read_empty_as_in_the_scheduler() -> None:
    result = testing.evaluate(UNDECLARED, testing.pod("web"), CLUSTER)
    assert _verdicts(result) == {"a": "pass", "b": "pass", "c": "pass"}  # none seen


def test_a_decoded_pod_given_to_the_kit_follows_the_declaration_too() -> None:
    info = decode_pod(testing.pod("web", annotations={IGNORE: "true"}), keep_annotations=True)
    assert _verdicts(testing.evaluate(READING, info, CLUSTER))["a"] == "pass"
    # undeclared: the pod's annotation is dropped as the scheduler drops it, and a's too
    assert _verdicts(testing.evaluate(UNDECLARED, info, CLUSTER))["a"] == "pass"


def test_an_explain_that_returns_a_string_says_what_was_expected() -> None:
    spec = ap.declare(ExplainsWithAString, api_version="1.4", reads_annotations=True)
    with pytest.raises(ap.PluginContractError) as caught:
        testing.evaluate(spec, testing.pod("web"), CLUSTER)
    assert str(caught.value) == (
        "plugin 'Maintenance' explain returned str, expected Status "
        "(e.g. Status.unschedulable(reason))"
    )


@pytest.mark.parametrize(
    ("references", "expected"),
    [
        pytest.param(
            [ap.OwnerReference("apps/v1", "ReplicaSet", "web-7d9f", "rs-1", controller=True)],
            (ap.OwnerReference("apps/v1", "ReplicaSet", "web-7d9f", "rs-1", controller=True),),
            id="an OwnerReference",
        ),
        pytest.param(
            [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "ds-1"}],
            (ap.OwnerReference("apps/v1", "DaemonSet", "agent", "ds-1", controller=False),),
            id="its JSON",
        ),
        pytest.param([], (), id="none"),
    ],
)
def test_pods_with_owner_references(references: list[Any], expected: tuple[Any, ...]) -> None:
    assert decode_pod(testing.pod("web", owner_references=references)).owner_references == expected


class NoDaemonSets:
    """Rejects every node for a pod a DaemonSet controls (owner references, no declaration)."""

    name = "NoDaemonSets"

    def filter_node(self, state: Any, pod: ap.PodInfo, node: ap.Node) -> ap.Status:
        if any(ref.controller and ref.kind == "DaemonSet" for ref in pod.owner_references):
            return ap.Status.unschedulable("DaemonSet pods are not scheduled here")
        return ap.Status.success()


def test_owner_references_reach_the_plugin_without_a_declaration() -> None:
    spec = ap.declare(NoDaemonSets, api_version="1.4")
    owner = ap.OwnerReference("apps/v1", "DaemonSet", "agent", "ds-1", controller=True)
    result = testing.evaluate(spec, testing.pod("agent-x", owner_references=[owner]), CLUSTER)
    assert result.selected is None
    assert {v.reasons for v in result.nodes.values()} == {
        ("DaemonSet pods are not scheduled here",)
    }


def test_the_kit_raises_the_exported_config_error() -> None:
    class Weighted:
        name = "Weighted"
        row_local = True
        normalizes = False

        def __init__(self, weights: dict[str, int]) -> None:
            self.weights = weights

        def score(self, state: Any, pod: Any, nodes: ap.Nodes, rows: ap.Rows) -> ap.ScoreArray:
            return np.zeros(len(nodes.alive[rows]), dtype=np.int64)

        def normalize(
            self, state: Any, scores: ap.ScoreArray, taking_part: ap.BoolMask
        ) -> ap.ScoreArray:
            return scores

    spec = ap.declare(
        Weighted,
        api_version="1.4",
        args=ap.ArgsSpec(
            kind="WeightedArgs",
            fields=frozenset({"zoneWeights"}),
            read=lambda args: args.integer_map("zoneWeights", low=0, high=100),
        ),
    )
    with pytest.raises(ap.ConfigError) as caught:
        testing.profile_for(spec, args={"zoneWeights": {"zone-a": 101}})
    assert [str(e) for e in caught.value.errors] == [
        "profiles[0].pluginConfig[0].args.zoneWeights.zone-a: must be in 0..100, got 101"
    ]
