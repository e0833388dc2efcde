"""How several extenders combine, over real HTTP: order, bodies, chaining, scores, concurrency."""

from __future__ import annotations

import asyncio

import pytest

from asched.extenders.extender import Extender
from asched.extenders.filter_score import run_filters, run_prioritizers
from asched.framework.status import Code
from asched.tools.bench.extender_server import ExtenderRules
from tests.builders import make_node
from tests.configs import load_config
from tests.unit.extender._support import names_sent, nodes, pod, spec, started

NAMES = ["node1", "node2", "node3"]
NODES = nodes(*NAMES)


async def test_ignorable_extenders_are_called_last() -> None:
    # upstream's buildExtenders: non-ignorable in order, then ignorable in order
    async with started(
        spec(ignorable=True), spec(), spec(ignorable=True), spec(), spec()
    ) as running:
        order = [running.servers.index(_server_of(running, e)) for e in running.extenders]
    assert order == [1, 3, 4, 0, 2]


def _server_of(running, extender):
    return next(server for server in running.servers if server.url == extender.name)


@pytest.mark.parametrize(
    "node_cache_capable", [True, False], ids=["nodeCacheCapable", "full nodes"]
)
async def test_filter_and_prioritize_bodies(node_cache_capable) -> None:
    _, raw = pod("web", uid="u-1", requests=[{"cpu": "1"}])
    async with started(spec(nodeCacheCapable=node_cache_capable)) as running:
        extender = running.extenders[0]
        await extender.filter(raw, NAMES, NODES.__getitem__)
        await extender.prioritize(raw, NAMES, NODES.__getitem__)
    for call in running.servers[0].calls:
        assert set(call.body) == {"Pod", "Nodes", "NodeNames"}
        assert call.body["Pod"] == raw
        if node_cache_capable:
            assert (call.body["Nodes"], call.body["NodeNames"]) == (None, NAMES)
        else:
            assert call.body["NodeNames"] is None
            assert call.body["Nodes"] == {"metadata": {}, "items": [NODES[n] for n in NAMES]}
    assert running.servers[0].verbs_called() == ["filter", "prioritize"]


async def test_node_objects_are_not_built_for_a_node_cache() -> None:
    info, raw = pod()

    def no_objects(name: str):
        raise AssertionError(f"Node object of {name} asked for")

    async with started(spec(nodeCacheCapable=True)) as running:
        outcome = await run_filters(running.extenders, info, raw, NAMES, no_objects)
    assert outcome.feasible == tuple(NAMES)


@pytest.mark.parametrize(
    ("specs", "expected_feasible", "sent"),
    [
        pytest.param(
            [spec(ExtenderRules(fail=frozenset({"node1"}))), spec(filterVerb="")],
            ("node2", "node3"),
            [[NAMES], []],
            id="no filterVerb: not called, every node passes it",
        ),
        pytest.param(
            [
                spec(ExtenderRules(passes=frozenset())),
                spec(ExtenderRules(fail=frozenset({"node2"}))),
            ],
            (),
            [[NAMES], []],
            id="no node left: later extenders are not called",
        ),
        pytest.param(
            [
                spec(ExtenderRules(fail=frozenset({"node1"}))),
                spec(ExtenderRules(passes=frozenset()), managedResources=[{"name": "x.io/y"}]),
                spec(ExtenderRules(unresolvable=frozenset({"node3"}))),
            ],
            ("node2",),
            [[NAMES], [], [["node2", "node3"]]],
            id="an extender not interested in the pod is skipped",
        ),
    ],
)
async def test_filter_chain(specs, expected_feasible, sent) -> None:
    info, raw = pod()
    async with started(*specs) as running:
        outcome = await run_filters(running.extenders, info, raw, NAMES, NODES.__getitem__)
    assert outcome.feasible == expected_feasible
    assert [names_sent(server, "filter") for server in running.servers] == sent


async def test_filter_reasons_become_statuses_with_the_extenders_text() -> None:
    info, raw = pod()
    rules = ExtenderRules(
        fail=frozenset({"node1"}),
        unresolvable=frozenset({"node2"}),
        fail_reason="{node} has no free licence",
        unresolvable_reason="{node} is in the wrong region",
    )
    async with started(spec(rules)) as running:
        outcome = await run_filters(running.extenders, info, raw, NAMES, NODES.__getitem__)
    url = running.servers[0].url
    assert outcome.feasible == ("node3",)
    assert {n: (s.code.name, s.reasons, s.plugin) for n, s in outcome.statuses.items()} == {
        "node1": ("UNSCHEDULABLE", ("node1 has no free licence",), url),
        "node2": ("UNSCHEDULABLE_AND_UNRESOLVABLE", ("node2 is in the wrong region",), url),
    }
    assert outcome.filtered


async def test_prioritizers_scale_weight_and_add_up() -> None:
    info, raw = pod()
    labelled = {
        name: make_node(name, labels={"example.com/score": str(score)})
        for name, score in (("node1", 2), ("node2", 9), ("node3", 0))
    }
    specs = [
        spec(ExtenderRules(scores={"node1": 10, "node2": 5}, default_score=1), weight=3),
        spec(ExtenderRules(score_label="example.com/score"), weight=1),
        spec(ExtenderRules(scores={"node1": 10}), prioritizeVerb=""),  # a filter only
        spec(ExtenderRules(scores={"node1": 10}), managedResources=[{"name": "x.io/y"}]),
    ]
    async with started(*specs) as running:
        scores = await run_prioritizers(running.extenders, info, raw, NAMES, labelled.__getitem__)
    first, second = running.servers[0].url, running.servers[1].url
    assert scores.by_extender == (
        # score * weight * 10
        (first, {"node1": 10 * 3 * 10, "node2": 5 * 3 * 10, "node3": 1 * 3 * 10}),
        (second, {"node1": 2 * 1 * 10, "node2": 9 * 1 * 10, "node3": 0}),
    )
    # node1: 300 + 20 = 320; node2: 150 + 90 = 240; node3: 30 + 0 = 30
    assert scores.totals() == {"node1": 320, "node2": 240, "node3": 30}
    assert [server.verbs_called() for server in running.servers] == [
        ["prioritize"],
        ["prioritize"],
        [],
        [],
    ]


async def test_prioritizers_are_called_concurrently_and_cancel_cleanly() -> None:
    # both extenders hold their answer until the server stops: a sequential caller would
    # never get the second request out while the first one waits
    info, raw = pod()
    hang = ExtenderRules(faults={"prioritize": "hang"})
    async with started(spec(hang, httpTimeout="60s"), spec(hang, httpTimeout="60s")) as running:
        task = asyncio.create_task(
            run_prioritizers(running.extenders, info, raw, NAMES, NODES.__getitem__)
        )
        async with asyncio.timeout(10):
            for server in running.servers:
                await server.wait_for_calls(1, "prioritize")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


class _Answers:
    """A transport answering each verb with a fixed decoded body (for answers no server
    rule produces, such as a node in both failed maps)."""

    def __init__(self, **answers: object) -> None:
        self.answers = answers

    def url(self, verb: str) -> str:
        return f"http://canned/{verb}"

    async def post(self, verb: str, body: object) -> object:
        return self.answers[verb]

    async def close(self) -> None:
        pass


async def test_filter_statuses_per_node_with_unresolvable_winning() -> None:
    """node1 passes; node2 and node3 fail with the same text, node3 also unresolvably
    (that one wins, as upstream); node4 fails with its own text."""
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": [
                {"urlPrefix": "http://canned", "filterVerb": "filter", "nodeCacheCapable": True}
            ],
        }
    )
    answer = {
        "NodeNames": ["node1"],
        "FailedNodes": {"node2": "busy", "node3": "busy", "node4": "other"},
        "FailedAndUnresolvableNodes": {"node3": "gone"},
    }
    extender = Extender(config.extenders[0], _Answers(filter=answer))
    info, raw = pod()
    sent = ["node1", "node2", "node3", "node4"]
    outcome = await run_filters([extender], info, raw, sent, NODES.__getitem__)
    assert outcome.feasible == ("node1",)
    got = {n: (s.code, s.reasons, s.plugin) for n, s in outcome.statuses.items()}
    assert got == {
        "node2": (Code.UNSCHEDULABLE, ("busy",), "http://canned"),
        "node3": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gone",), "http://canned"),
        "node4": (Code.UNSCHEDULABLE, ("other",), "http://canned"),
    }
