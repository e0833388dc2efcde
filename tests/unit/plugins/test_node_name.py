"""NodeName.

Cases transcribed from upstream ``nodename/node_name_test.go`` (TestNodeName).
"""

from __future__ import annotations

import pytest

from asched.framework.status import Code
from tests.builders import FITS, make_node, make_pod, outcome, pod_info, profile_with, snapshot_of

NODE_NAME = "NodeName"
WRONG_NODE = (
    NODE_NAME,
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ("node(s) didn't match the requested node name",),
)


@pytest.mark.parametrize(
    ("node_name", "want"),
    [
        pytest.param("", FITS, id="no host specified"),
        pytest.param("foo", FITS, id="host matches"),
        pytest.param("bar", WRONG_NODE, id="host doesn't match"),
    ],
)
def test_node_name(evaluate, node_name, want) -> None:
    pod = make_pod(node_name=node_name)
    evaluation = evaluate(
        snapshot_of([make_node("foo")]), pod_info(pod), profile_with(filter=(NODE_NAME,))
    )
    assert outcome(evaluation, "foo") == want


def test_node_name_picks_the_named_node(evaluate) -> None:
    nodes = [make_node("a"), make_node("b"), make_node("c")]
    evaluation = evaluate(
        snapshot_of(nodes), pod_info(make_pod(node_name="b")), profile_with(filter=(NODE_NAME,))
    )
    assert [n for n, v in evaluation.nodes.items() if v.feasible] == ["b"]
    assert evaluation.message is None
    evaluation = evaluate(
        snapshot_of(nodes), pod_info(make_pod(node_name="z")), profile_with(filter=(NODE_NAME,))
    )
    assert (
        evaluation.message
        == "0/3 nodes are available: 3 node(s) didn't match the requested node name."
    )
