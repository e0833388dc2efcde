"""``TestSchedulerWithExtenders`` (pkg/scheduler/extender_test.go), transcribed over real HTTP.

Upstream runs SchedulePod with fake in-process extenders. Here every fake extender is a
test extender server on loopback, configured through a real KubeSchedulerConfiguration
and called by the real client, and :func:`schedule_pod` below is the part of SchedulePod
the cases exercise, built on :func:`run_filters` / :func:`run_prioritizers`: every node
passes the in-tree filters (upstream's TrueFilter); the extenders filter; one feasible
node wins without scoring; otherwise plugin scores (given per case) plus the extenders'
scaled scores decide, and the cases are chosen so the highest total is unique.

The fakes, as test-extender rules:

* TruePredicateExtender: every node passes; ErrorPredicateExtender: the answer's Error
  says "some error"; FalsePredicateExtender: every node fails; Node1/Node2PredicateExtender:
  only node1/node2 passes (the reason is the fake's ``FakeExtender: node "x" failed``);
* NodeNPrioritizerExtender with the fake's prioritizer weight 10: nodeN scores 10 * 10 =
  100 and the others 1 * 10 = 10 (the fake multiplies before answering);
  ErrorPrioritizerExtender: HTTP 500;
* UnInterested: the extender manages a resource the pod does not ask for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import pytest

from asched.benchmark.extender_server import ExtenderRules
from asched.errors import ExtenderError
from asched.framework.extender import (
    Extender,
    any_filter,
    any_prioritizer,
    run_filters,
    run_prioritizers,
)
from asched.framework.status import Code
from tests.unit.extender._support import Spec, names_sent, nodes, pod, spec, started

TRUE = ExtenderRules()
ERROR = ExtenderRules(faults={"filter": "error"}, fault_message="some error")
FAILED = 'FakeExtender: node "{node}" failed'
FALSE = ExtenderRules(passes=frozenset(), fail_reason=FAILED)
NODE1 = ExtenderRules(passes=frozenset({"node1"}), fail_reason=FAILED)
NODE2 = ExtenderRules(passes=frozenset({"node2"}), fail_reason=FAILED)
NODE1_PRIORITIZER = {"node1": 100, "node2": 10}  # fake weight 10: 10*10 and 1*10
NODE2_PRIORITIZER = {"node1": 10, "node2": 100}
ERROR_PRIORITIZER = {"prioritize": "status-500"}


def predicates(rules: ExtenderRules, **fields) -> Spec:
    """A fake with Predicates only: a filter verb, nothing else."""
    return spec(rules, prioritizeVerb="", **fields)


def with_prioritizer(rules: ExtenderRules, weight: int, *, scores=None, faults=None) -> Spec:
    """A fake with Predicates and Prioritizers (and the extender ``Weight``)."""
    rules = dataclasses.replace(
        rules, scores=scores or {}, faults={**rules.faults, **(faults or {})}
    )
    return spec(rules, weight=weight)


@dataclasses.dataclass(frozen=True)
class Result:
    """Upstream's ScheduleResult."""

    host: str
    evaluated: int
    feasible: int


class FitError(Exception):
    def __init__(self, statuses) -> None:
        self.statuses = statuses


async def schedule_pod(
    extenders: tuple[Extender, ...], names: list[str], plugin_scores: Mapping[str, int] | None
) -> Result:
    info, raw = pod()
    node_objects = nodes(*names)
    candidates = list(names)
    if plugin_scores is None and not any_filter(extenders) and not any_prioritizer(extenders):
        candidates = candidates[:1]  # numFeasibleNodesToFind is 1: stop at the first feasible
    outcome = await run_filters(extenders, info, raw, candidates, node_objects.__getitem__)
    evaluated = len(outcome.feasible) + len(outcome.statuses)
    if not outcome.feasible:
        raise FitError(outcome.statuses)
    if len(outcome.feasible) == 1:
        return Result(outcome.feasible[0], evaluated, 1)
    totals = {name: (plugin_scores or {}).get(name, 0) for name in outcome.feasible}
    scores = await run_prioritizers(
        extenders, info, raw, outcome.feasible, node_objects.__getitem__
    )
    for name, score in scores.totals().items():
        totals[name] += score
    best = max(totals.values())
    (host,) = (name for name in outcome.feasible if totals[name] == best)
    return Result(host, evaluated, len(outcome.feasible))


EQUAL = {"node1": 1, "node2": 1}  # EqualPrioritizerPlugin, weight 1

CASES = [
    pytest.param(
        [predicates(TRUE), predicates(ERROR)],
        None,
        ["node1", "node2"],
        ExtenderError,
        id="test 1",
    ),
    pytest.param(
        [predicates(TRUE), predicates(FALSE)], None, ["node1", "node2"], FitError, id="test 2"
    ),
    pytest.param(
        [predicates(TRUE), predicates(NODE1)],
        EQUAL,
        ["node1", "node2"],
        Result("node1", evaluated=2, feasible=1),
        id="test 3",
    ),
    pytest.param(
        [predicates(NODE2), predicates(NODE1)], None, ["node1", "node2"], FitError, id="test 4"
    ),
    pytest.param(
        # one feasible node: no scoring, so the failing prioritizer is never called
        [with_prioritizer(TRUE, 1, faults=ERROR_PRIORITIZER)],
        None,
        ["node1"],
        Result("node1", evaluated=1, feasible=1),
        id="test 5",
    ),
    pytest.param(
        # node1: 100*1*10 + 10*5*10 = 1000 + 500 = 1500
        # node2:  10*1*10 + 100*5*10 = 100 + 5000 = 5100
        [
            with_prioritizer(TRUE, 1, scores=NODE1_PRIORITIZER),
            with_prioritizer(TRUE, 5, scores=NODE2_PRIORITIZER),
        ],
        None,
        ["node1", "node2"],
        Result("node2", evaluated=2, feasible=2),
        id="test 6",
    ),
    pytest.param(
        # Node2Prioritizer plugin (node2 100, others 10) with weight 20:
        # node1: 10*20 + 100*1*10 = 200 + 1000 = 1200
        # node2: 100*20 + 10*1*10 = 2000 + 100 = 2100
        [with_prioritizer(TRUE, 1, scores=NODE1_PRIORITIZER)],
        {"node1": 200, "node2": 2000},
        ["node1", "node2"],
        Result("node2", evaluated=2, feasible=2),
        id="test 7",
    ),
    pytest.param(
        # not interested: neither the failing filter nor the failing prioritizer is called;
        # Node2Prioritizer plugin with weight 1: node1 10, node2 100
        [
            dataclasses.replace(
                with_prioritizer(ERROR, 1, faults=ERROR_PRIORITIZER),
                fields={"managedResources": [{"name": "example.com/not-requested"}]},
            )
        ],
        {"node1": 10, "node2": 100},
        ["node1", "node2"],
        Result("node2", evaluated=2, feasible=2),
        id="test 8",
    ),
    pytest.param(
        # the failing extender is ignorable: skipped
        [predicates(ERROR, ignorable=True), predicates(NODE1)],
        EQUAL,
        ["node1", "node2"],
        Result("node1", evaluated=2, feasible=1),
        id="test 9",
    ),
    pytest.param(
        [predicates(TRUE), predicates(NODE1)],
        None,
        ["node1", "node2"],
        Result("node1", evaluated=2, feasible=1),
        id="test 10 - no scoring, extender filters configured, multiple feasible nodes are evaluated",
    ),
    pytest.param(
        [spec(TRUE, bind=True, filterVerb="", prioritizeVerb="")],
        None,
        ["node1", "node2"],
        Result("node1", evaluated=1, feasible=1),
        id="test 11 - no scoring, no prefilters or  extender filters configured, a single feasible node is evaluated",
    ),
]


@pytest.mark.parametrize(("specs", "plugin_scores", "names", "expected"), CASES)
async def test_scheduler_with_extenders(specs, plugin_scores, names, expected) -> None:
    async with started(*specs) as running:
        if isinstance(expected, Result):
            assert await schedule_pod(running.extenders, names, plugin_scores) == expected
        else:
            with pytest.raises(expected):
                await schedule_pod(running.extenders, names, plugin_scores)


async def test_1_the_error_names_the_extender_and_carries_its_text() -> None:
    async with started(predicates(TRUE), predicates(ERROR)) as running:
        with pytest.raises(ExtenderError) as caught:
            await schedule_pod(running.extenders, ["node1", "node2"], None)
    assert str(caught.value) == (
        f"extender filter call to {running.servers[1].url}/filter failed: some error"
    )
    assert caught.value.detail == "some error"  # the extender's own text, as upstream reports it


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        pytest.param(
            [predicates(TRUE), predicates(FALSE)],
            {
                "node1": (Code.UNSCHEDULABLE, 'FakeExtender: node "node1" failed', 1),
                "node2": (Code.UNSCHEDULABLE, 'FakeExtender: node "node2" failed', 1),
            },
            id="test 2: both nodes Unschedulable with the extender's reason",
        ),
        pytest.param(
            [predicates(NODE2), predicates(NODE1)],
            {
                "node1": (Code.UNSCHEDULABLE, 'FakeExtender: node "node1" failed', 0),
                "node2": (Code.UNSCHEDULABLE, 'FakeExtender: node "node2" failed', 1),
            },
            id="test 4: the second extender only sees node2",
        ),
    ],
)
async def test_fit_error_statuses(specs, expected) -> None:
    async with started(*specs) as running:
        with pytest.raises(FitError) as caught:
            await schedule_pod(running.extenders, ["node1", "node2"], None)
    got = {
        node: (status.code, status.message, running.servers.index(_server(running, status)))
        for node, status in caught.value.statuses.items()
    }
    assert got == expected


def _server(running, status):
    return next(server for server in running.servers if server.url == status.plugin)


async def test_4_chain_sends_only_survivors() -> None:
    async with started(predicates(NODE2), predicates(NODE1)) as running:
        with pytest.raises(FitError):
            await schedule_pod(running.extenders, ["node1", "node2"], None)
    assert names_sent(running.servers[0], "filter") == [["node1", "node2"]]
    assert names_sent(running.servers[1], "filter") == [["node2"]]


async def test_5_and_8_uncalled_verbs() -> None:
    async with started(with_prioritizer(TRUE, 1, faults=ERROR_PRIORITIZER)) as running:
        await schedule_pod(running.extenders, ["node1"], None)
    assert running.servers[0].verbs_called() == ["filter"]
    uninterested = dataclasses.replace(
        with_prioritizer(ERROR, 1, faults=ERROR_PRIORITIZER),
        fields={"managedResources": [{"name": "example.com/not-requested"}]},
    )
    async with started(uninterested) as running:
        await schedule_pod(running.extenders, ["node1", "node2"], {"node1": 10, "node2": 100})
    assert running.servers[0].calls == []
