"""The extender/v1 wire format: request bodies, and answers read as kube-scheduler reads them.

Answers here are canned (parsed JSON handed to the parsers, or to an Extender through a
transport that answers from a list), to reach shapes the test extender never produces:
keys in another case, nulls, wrong types, a node both feasible and failed. Every bad
answer is an ExtenderError naming the field, never a KeyError or TypeError.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.config.types import ExtenderConfig
from asched.errors import ExtenderError
from asched.extenders import protocol
from asched.extenders.extender import Extender
from asched.extenders.filter_score import run_filters
from asched.extenders.protocol import CallSite, FilterAnswer
from asched.framework.status import Code
from tests.unit.extender._support import nodes, pod

SITE = CallSite("http://ext/filter", "filter")
SENT = dict.fromkeys(["node1", "node2", "node3"])


def node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {}}


FILTER_ANSWERS = [
    pytest.param(
        {"NodeNames": ["node1"], "FailedNodes": {"node2": "busy"}},
        True,
        FilterAnswer(("node1",), {"node2": "busy"}, {}),
        id="nodeCacheCapable: NodeNames",
    ),
    pytest.param(
        {"Nodes": {"items": [node("node3"), node("node1")]}},
        False,
        FilterAnswer(("node3", "node1"), {}, {}),
        id="full nodes: the names of Nodes.items, in the extender's order",
    ),
    pytest.param(
        {"nodenames": ["node2"], "failednodes": {"node1": "x"}, "ERROR": ""},
        True,
        FilterAnswer(("node2",), {"node1": "x"}, {}),
        id="keys match case-insensitively, as Go's encoding/json matches them",
    ),
    pytest.param(
        {"NodeNames": ["node1"], "Comment": "ignored", "Nodes": None, "Error": None},
        True,
        FilterAnswer(("node1",), {}, {}),
        id="unknown keys are ignored, null is the zero value",
    ),
    pytest.param(
        {"NodeNames": None, "Nodes": {"items": [node("node2")]}},
        True,
        FilterAnswer(("node2",), {}, {}),
        id="nodeCacheCapable with NodeNames null: Nodes is used",
    ),
    pytest.param(
        {"NodeNames": ["node1"]},
        False,
        FilterAnswer((), {}, {}),
        id="not nodeCacheCapable: NodeNames is not read, nothing is feasible (upstream)",
    ),
    pytest.param(
        {"NodeNames": []},
        True,
        FilterAnswer((), {}, {}),
        id="an empty NodeNames list: nothing feasible",
    ),
    pytest.param(
        {},
        True,
        FilterAnswer((), {}, {}),
        id="an empty object: nothing feasible, no reasons",
    ),
    pytest.param(
        {"NodeNames": ["node1", "node1"]},
        True,
        FilterAnswer(("node1",), {}, {}),
        id="a node named twice counts once",
    ),
    pytest.param(
        {
            "NodeNames": [],
            "FailedNodes": {"node1": "a", "elsewhere": "b"},
            "FailedAndUnresolvableNodes": {"node2": "c", "gone": "d"},
        },
        True,
        FilterAnswer((), {"node1": "a"}, {"node2": "c"}),
        id="failed nodes that were not sent are dropped",
    ),
]


@pytest.mark.parametrize(("answer", "cache", "expected"), FILTER_ANSWERS)
def test_filter_answers(answer, cache, expected) -> None:
    got = protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=cache)
    assert got == expected


BAD_FILTER_ANSWERS = [
    pytest.param(["node1"], "the answer must be a JSON object, got a list", id="a list"),
    pytest.param(None, "the answer must be a JSON object, got null", id="null"),
    pytest.param({"Error": "out of GPUs"}, "out of GPUs", id="the Error field"),
    pytest.param({"Error": 3}, "Error must be a string, got the number 3", id="Error not a string"),
    pytest.param(
        {"NodeNames": "node1"},
        'NodeNames must be a list of strings, got the string "node1"',
        id="NodeNames a string",
    ),
    pytest.param(
        {"NodeNames": ["node1", 2]},
        "NodeNames[1] must be a string, got the number 2",
        id="NodeNames with a number",
    ),
    pytest.param(
        {"NodeNames": ["node9"]},
        'NodeNames names node "node9", which was not sent',
        id="NodeNames with a node that was not sent",
    ),
    pytest.param(
        {"FailedNodes": ["node1"]},
        "FailedNodes must be an object of node name to reason, got a list",
        id="FailedNodes a list",
    ),
    pytest.param(
        {"FailedAndUnresolvableNodes": {"node1": False}},
        'FailedAndUnresolvableNodes["node1"] must be a string, got the boolean false',
        id="a reason that is not a string",
    ),
    pytest.param(
        {"NodeNames": ["node1"], "FailedNodes": {"node1": "no"}},
        'node "node1" is both feasible and failed',
        id="a node both feasible and failed",
    ),
]


@pytest.mark.parametrize(("answer", "detail"), BAD_FILTER_ANSWERS)
def test_bad_filter_answers(answer, detail) -> None:
    with pytest.raises(ExtenderError) as caught:
        protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=True)
    assert caught.value.detail == detail


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        pytest.param({"Nodes": []}, "Nodes must be a JSON object, got a list", id="Nodes a list"),
        pytest.param(
            {"Nodes": {"items": {}}}, "Nodes.items must be a list, got an object", id="items"
        ),
        pytest.param(
            {"Nodes": {"items": [{"metadata": {}}]}},
            "Nodes.items[0].metadata.name is missing",
            id="a node without a name",
        ),
        pytest.param(
            {"Nodes": {"items": ["node1"]}},
            'Nodes.items[0] must be a JSON object, got the string "node1"',
            id="a node that is a string",
        ),
    ],
)
def test_bad_node_lists(answer, detail) -> None:
    with pytest.raises(ExtenderError) as caught:
        protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=False)
    assert caught.value.detail == detail


PRIORITY_SITE = CallSite("http://ext/prioritize", "prioritize")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            [{"Host": "node1", "Score": 3}, {"Host": "node2", "Score": 10}],
            [("node1", 3), ("node2", 10)],
            id="host priorities",
        ),
        pytest.param([{"host": "node1", "score": 4}], [("node1", 4)], id="keys in another case"),
        pytest.param(None, [], id="null: no scores"),
        pytest.param(
            [{"Host": "node1", "Score": 20}, {"Host": "node2", "Score": -1}],
            [("node1", 20), ("node2", -1)],
            id="scores outside 0..10 are taken as they come (upstream does not clamp)",
        ),
        pytest.param(
            [{"Host": "node9", "Score": 5}, {"Host": "node1", "Score": 1}],
            [("node1", 1)],
            id="a host that was not sent is dropped",
        ),
    ],
)
def test_host_priorities(answer, expected) -> None:
    assert protocol.parse_host_priorities(PRIORITY_SITE, answer, SENT) == expected


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        pytest.param(
            {"Host": "node1", "Score": 1},
            "the answer must be a JSON list of host priorities, got an object",
            id="an object, not a list",
        ),
        pytest.param(
            [{"Host": "node1", "Score": 2.5}],
            "[0].Score must be an integer, got the number 2.5",
            id="a fractional score",
        ),
        pytest.param(
            [{"Host": "node1", "Score": 5.0}],
            "[0].Score must be an integer, got the number 5.0",
            id="an integral float (Go refuses 5.0 for an int64)",
        ),
        pytest.param(
            [{"Host": "node1", "Score": "5"}],
            '[0].Score must be an integer, got the string "5"',
            id="a score in a string",
        ),
        pytest.param(
            [{"Host": "node1", "Score": True}],
            "[0].Score must be an integer, got the boolean true",
            id="a boolean score",
        ),
        pytest.param(
            [{"Host": "node1", "Score": 2**63}],
            f"[0].Score must fit in int64, got {2**63}",
            id="a score beyond int64",
        ),
        pytest.param([{"Score": 1}], "[0].Host is missing", id="no host"),
        pytest.param([{"Host": "node1"}], "[0].Score is missing", id="no score"),
        pytest.param(
            [{"Host": 1, "Score": 1}], "[0].Host must be a string, got the number 1", id="host"
        ),
        pytest.param(["node1"], '[0] must be a JSON object, got the string "node1"', id="entry"),
    ],
)
def test_bad_host_priorities(answer, detail) -> None:
    with pytest.raises(ExtenderError) as caught:
        protocol.parse_host_priorities(PRIORITY_SITE, answer, SENT)
    assert caught.value.detail == detail
    assert caught.value.verb == "prioritize"


def test_request_bodies_use_the_go_field_names() -> None:
    pod_json = {"metadata": {"name": "p", "uid": "u"}}
    assert protocol.extender_args(pod_json, ["a", "b"], None) == {
        "Pod": pod_json,
        "Nodes": None,
        "NodeNames": ["a", "b"],
    }
    assert protocol.extender_args(pod_json, ["a"], [node("a")]) == {
        "Pod": pod_json,
        "Nodes": {"metadata": {}, "items": [node("a")]},
        "NodeNames": None,
    }
    assert protocol.binding_args("ns", "p", "u", "n1") == {
        "PodName": "p",
        "PodNamespace": "ns",
        "PodUID": "u",
        "Node": "n1",
    }


class Canned:
    """A transport that answers each call with the next canned answer."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.bodies: list[tuple[str, Any]] = []

    def url(self, verb: str) -> str:
        return f"http://canned/{verb}"

    async def post(self, verb: str, body: Any) -> Any:
        self.bodies.append((verb, body))
        return self.answers.pop(0)

    async def close(self) -> None:
        pass


def canned(answer: Any, **config: Any) -> Extender:
    return Extender(ExtenderConfig(url_prefix="http://canned", **config), Canned(answer))


async def test_unresolvable_wins_over_failed_for_a_node_in_both() -> None:
    info, raw = pod()
    answer = {
        "NodeNames": ["node3"],
        "FailedNodes": {"node1": "retry later", "node2": "full"},
        "FailedAndUnresolvableNodes": {"node1": "wrong zone"},
    }
    extender = canned(answer, filter_verb="filter", node_cache_capable=True)
    outcome = await run_filters([extender], info, raw, list(SENT), nodes(*SENT).__getitem__)
    assert outcome.feasible == ("node3",)
    assert {n: (s.code, s.message, s.plugin) for n, s in outcome.statuses.items()} == {
        "node1": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "wrong zone", "http://canned"),
        "node2": (Code.UNSCHEDULABLE, "full", "http://canned"),
    }
    assert outcome.filtered


async def test_duplicated_hosts_add_up() -> None:
    _, raw = pod()
    answer = [{"Host": "node1", "Score": 2}, {"Host": "node1", "Score": 3}]
    extender = canned(answer, prioritize_verb="prioritize", weight=2, node_cache_capable=True)
    # (2 + 3) * 2 * 10 = 100; node2 not answered: no entry
    assert await extender.prioritize(raw, ["node1", "node2"], nodes().__getitem__) == {"node1": 100}
