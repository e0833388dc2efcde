"""The per-node plugin form against the vectorised one, and where it runs.

``SlotsPerNode`` and ``SlotsVectorised`` define the same policy twice (a node passes when
its ``slots`` label is at least the pod's ``slots`` label, and scores ``10 * slots`` up
to 100): once a node at a time, once over all rows. On every cluster of a seeded random
family the two must give identical verdicts, reasons and scores, through the runtime
(``asched.plugin.testing.evaluate``). The per-node form must also run only where it
matters: Filter on the rows other filters passed, Score on the rows taking part.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Hashable
from typing import Any, ClassVar

import numpy as np
import pytest

from asched.cluster.decode import decode_pod
from asched.config.types import Profile
from asched.engine.algorithm import Algorithm
from asched.explain.engine import evaluate_table, table_of
from asched.framework.registry import in_tree
from asched.framework.runtime import Framework
from asched.framework.spec import declare
from asched.framework.status import Status
from asched.plugin import testing

REASON = "node(s) have too few slots"


def _slots(labels: Any) -> int:
    text = labels.get("slots", "0")
    return int(text) if text.isdigit() else 0


class SlotsPerNode:
    name = "Slots"
    calls: ClassVar[list[str]] = []

    def filter_node(self, state, pod, node) -> Status:
        SlotsPerNode.calls.append(f"filter {node.name}")
        if _slots(node.labels) >= _slots(pod.labels):
            return Status.success()
        return Status.unschedulable(REASON)

    def score_node(self, state, pod, node) -> int:
        SlotsPerNode.calls.append(f"score {node.name}")
        return min(100, 10 * _slots(node.labels))


class SlotsVectorised:
    name = "Slots"
    row_local = True
    normalizes = False

    def sign(self, pod) -> Hashable:
        return _slots(pod.labels)

    def _values(self, nodes) -> np.ndarray:
        codes, values = nodes.label_codes("slots")
        table = np.array([int(v) if v.isdigit() else 0 for v in values] + [0], dtype=np.int64)
        return table[codes]

    def filter(self, state, pod, nodes, rows):
        return self._values(nodes)[rows] >= _slots(pod.labels)

    def explain(self, state, pod, nodes, row):
        return Status.unschedulable(REASON)

    def score(self, state, pod, nodes, rows):
        return np.minimum(100, 10 * self._values(nodes)[rows]).astype(np.int64)

    def normalize(self, state, scores, taking_part):
        return scores


PER_NODE = declare(SlotsPerNode, api_version="1.0")
VECTORISED = declare(SlotsVectorised, api_version="1.0")


def random_cluster(seed: int) -> tuple[Any, dict[str, Any]]:
    rng = random.Random(seed)
    nodes = []
    for index in range(rng.randint(1, 30)):
        labels = {}
        if rng.random() < 0.8:
            labels["slots"] = rng.choice(["0", "1", "3", "5", "9", "12", "x"])
        nodes.append(testing.node(f"n{index}", labels=labels, unschedulable=rng.random() < 0.2))
    pod = testing.pod("p", labels={"slots": str(rng.randint(0, 10))})
    return testing.cluster(*nodes), pod


def test_the_per_node_form_is_declared_as_such() -> None:
    assert PER_NODE.per_node
    assert PER_NODE.points == frozenset({"filter", "score"})
    assert not VECTORISED.per_node


@pytest.mark.parametrize("seed", range(40))
def test_both_forms_give_the_same_answers(seed: int) -> None:
    cluster, pod = random_cluster(seed)
    per_node = testing.evaluate(PER_NODE, pod, cluster)
    vectorised = testing.evaluate(VECTORISED, pod, cluster)
    assert per_node.nodes == vectorised.nodes
    assert per_node.top == vectorised.top
    assert per_node.message == vectorised.message


CORDONED = testing.cluster(
    testing.node("n-big", labels={"slots": "9"}),
    testing.node("n-small", labels={"slots": "1"}),
    testing.node("n-cordoned", labels={"slots": "9"}, unschedulable=True),
    testing.node("n-mid", labels={"slots": "5"}),
)
POD = decode_pod(testing.pod("p", labels={"slots": "3"}))


def profile_after_node_unschedulable() -> Profile:
    """Slots (per-node) with NodeUnschedulable's Filter before it."""
    profile = testing.profile_for(PER_NODE)
    resolved = dataclasses.replace(profile.resolved, filter=("NodeUnschedulable", "Slots"))
    return dataclasses.replace(profile, resolved=resolved)


def calls(kind: str) -> list[str]:
    return sorted(c.split()[1] for c in SlotsPerNode.calls if c.startswith(kind))


def test_explain_asks_it_only_about_the_rows_that_decide() -> None:
    """Filter: not n-cordoned (NodeUnschedulable rejected it first); Score: only the
    feasible rows (n-small fails its filter)."""
    SlotsPerNode.calls.clear()
    result = evaluate_table(
        table_of(CORDONED),
        POD,
        profile_after_node_unschedulable(),
        registry=in_tree().adding(PER_NODE),
    )
    assert result.nodes["n-cordoned"].plugin == "NodeUnschedulable"
    assert result.nodes["n-small"].reasons == (REASON,)
    # the rejected row is asked once more, for its reason (explain)
    assert calls("filter") == ["n-big", "n-mid", "n-small", "n-small"]
    assert calls("score") == ["n-big", "n-mid"]
    assert result.selected == "n-big"  # 90 > 50


def test_the_scheduling_cycle_asks_it_only_about_the_rows_that_decide() -> None:
    framework = Framework(profile_after_node_unschedulable(), registry=in_tree().adding(PER_NODE))
    algorithm = Algorithm(framework, table_of(CORDONED), percentage=100, seed=1)
    SlotsPerNode.calls.clear()
    decision = algorithm.schedule(POD)
    assert decision.node == "n-big"
    assert calls("filter") == ["n-big", "n-mid", "n-small"]
    assert calls("score") == ["n-big", "n-mid"]
