"""``TestSchedulerWithExtenders`` (pkg/scheduler/extender_test.go), through the real Scheduler.

Upstream runs SchedulePod with fake in-process extenders. Here every fake extender is a
test extender server on loopback, configured through a real KubeSchedulerConfiguration
and called by the real client, and the pod goes through the real Scheduler
(:mod:`tests.unit.extender._cycle`): ``schedule_one``, then, while the extenders are
asked, ``ask`` and ``conclude``. The nodes are identical, so every in-tree filter passes
them (upstream's TrueFilter); the profile has no default Score or PostFilter plugin, and
the case's plugin scores (total per node, None: no Score plugin) come from the
``NodeScores`` test plugin, its 0..100 scores scaled by its weight. The cases are chosen
so the highest total is unique.

The fakes, as test-extender rules:

* TruePredicateExtender: every node passes; ErrorPredicateExtender: the answer's Error
  says "some error"; FalsePredicateExtender: every node fails; Node1/Node2PredicateExtender:
  only node1/node2 passes (the reason is the fake's ``FakeExtender: node "x" failed``);
* NodeNPrioritizerExtender with the fake's prioritizer weight 10: nodeN scores 10 * 10 =
  100 and the others 1 * 10 = 10 (the fake multiplies before answering);
  ErrorPrioritizerExtender: HTTP 500;
* UnInterested: the extender manages a resource the pod does not ask for.

What upstream returns, read from the real path: the host is the bind job's node; a
FitError is the message reported on the pod (the pod parked unschedulable); an
ExtenderError is the Error reported on the pod (the pod in backoff). EvaluatedNodes and
FeasibleNodes: for a pod the extenders were asked about, the nodes the cycle sent the
first filtering extender (no node fails in-tree here) and the nodes the extenders' filters
left; for a pod decided in the cycle, the decision's numbers as the cycle logs them.
"""

from __future__ import annotations

import dataclasses

import pytest

from asched.errors import ExtenderError
from asched.framework.status import Code
from asched.queue.scheduling_queue import BACKOFF, UNSCHEDULABLE
from asched.tools.bench.extender_server import ExtenderRules
from tests.unit.extender._cycle import Attempt, Rig, scheduler_with
from tests.unit.extender._support import Spec, names_sent, spec

TRUE = ExtenderRules()
ERROR = ExtenderRules(faults={"filter": "error"}, fault_message="some error")
FAILED = 'FakeExtender: node "{node}" failed'
FALSE = ExtenderRules(passes=frozenset(), fail_reason=FAILED)
NODE1 = ExtenderRules(passes=frozenset({"node1"}), fail_reason=FAILED)
NODE2 = ExtenderRules(passes=frozenset({"node2"}), fail_reason=FAILED)
NODE1_PRIORITIZER = {"node1": 100, "node2": 10}  # fake weight 10: 10*10 and 1*10
NODE2_PRIORITIZER = {"node1": 10, "node2": 100}
ERROR_PRIORITIZER = {"prioritize": "status-500"}
NODES = ["node1", "node2"]


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


@dataclasses.dataclass(frozen=True)
class FitError:
    """Upstream's FitError: its message, as reported on the pod."""

    message: str


@dataclasses.dataclass(frozen=True)
class Failed:
    """An ExtenderError from the extender of spec ``server``, with the extender's text."""

    server: int
    text: str


# 0/2: each node refused with its own reason, so each counted once ("1 <reason>"), the
# parts sorted as strings; no PostFilter in the profile, so no preemption part
BOTH_FAILED = FitError(
    '0/2 nodes are available: 1 FakeExtender: node "node1" failed, '
    '1 FakeExtender: node "node2" failed.'
)


EQUAL = {"node1": 1, "node2": 1}  # EqualPrioritizerPlugin, weight 1
UNINTERESTED = dataclasses.replace(
    with_prioritizer(ERROR, 1, faults=ERROR_PRIORITIZER),
    fields={"managedResources": [{"name": "example.com/not-requested"}]},
)
BINDER = spec(TRUE, bind=True, filterVerb="", prioritizeVerb="")  # upstream's Binder only

CASES = [
    pytest.param(
        [predicates(TRUE), predicates(ERROR)],
        None,
        ["node1", "node2"],
        Failed(server=1, text="some error"),
        id="test 1",
    ),
    pytest.param(
        [predicates(TRUE), predicates(FALSE)], None, ["node1", "node2"], BOTH_FAILED, id="test 2"
    ),
    pytest.param(
        [predicates(TRUE), predicates(NODE1)],
        EQUAL,
        ["node1", "node2"],
        Result("node1", evaluated=2, feasible=1),
        id="test 3",
    ),
    pytest.param(
        # node1 refused by the first extender, node2 by the second
        [predicates(NODE2), predicates(NODE1)],
        None,
        ["node1", "node2"],
        BOTH_FAILED,
        id="test 4",
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
        [UNINTERESTED],
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
        [BINDER],
        None,
        ["node1", "node2"],
        Result("node1", evaluated=1, feasible=1),
        id="test 11 - no scoring, no prefilters or  extender filters configured, a single feasible node is evaluated",
    ),
]


def result_of(attempt: Attempt, rig: Rig) -> Result:
    """The ScheduleResult of a pod that got a node (see the module docstring)."""
    job = attempt.job
    assert job is not None
    if not attempt.consultations:
        assert attempt.decided is not None
        feasible, examined = attempt.decided
        return Result(job.node, evaluated=examined, feasible=feasible)
    [consultation] = attempt.consultations  # one round: nothing changed meanwhile
    assert consultation.outcome is not None
    # the first filtering extender in call order (ignorable ones last) is sent them all
    servers = {server.url: server for server in rig.servers}
    first = next(e for e in rig.scheduler.extenders if e.is_filter)
    [sent] = names_sent(servers[first.name], "filter")
    assert sent == list(consultation.names)
    return Result(job.node, evaluated=len(sent), feasible=len(consultation.outcome.feasible))


@pytest.mark.parametrize(("specs", "plugin_scores", "names", "expected"), CASES)
async def test_scheduler_with_extenders(specs, plugin_scores, names, expected) -> None:
    async with scheduler_with(specs, names, plugin_scores) as rig:
        attempt = await rig.attempt()
        key = attempt.pod.key
        where = rig.scheduler.queue.where(key)
        said = rig.reporter.said.get(key)
        if isinstance(expected, Result):
            assert said is None
            assert result_of(attempt, rig) == expected
            assert rig.scheduler.ledger.node_of(key) == expected.host
        elif isinstance(expected, FitError):
            assert attempt.job is None
            assert said == expected.message
            assert key not in rig.reporter.errors
            assert where == UNSCHEDULABLE
        else:
            assert attempt.job is None
            url = rig.servers[expected.server].url
            assert said == f"extender filter call to {url}/filter failed: {expected.text}"
            assert key in rig.reporter.errors
            assert where == BACKOFF


async def test_1_the_error_names_the_extender_and_carries_its_text() -> None:
    async with scheduler_with([predicates(TRUE), predicates(ERROR)], NODES, None) as rig:
        attempt = await rig.attempt()
        [consultation] = attempt.consultations
        error = consultation.error
        assert isinstance(error, ExtenderError)
        assert str(error) == (
            f"extender filter call to {rig.servers[1].url}/filter failed: some error"
        )
        assert error.detail == "some error"  # the extender's own text, as upstream reports it
        assert rig.reporter.said[attempt.pod.key] == str(error)


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
    """Per node, the status the extenders answered (and which extender: the status's
    plugin is its URL), as the consultation carries them into the FitError."""
    async with scheduler_with(specs, NODES, None) as rig:
        attempt = await rig.attempt()
        [consultation] = attempt.consultations
        assert consultation.outcome is not None
        urls = [server.url for server in rig.servers]
        got = {
            node: (status.code, status.message, urls.index(status.plugin))
            for node, status in consultation.outcome.statuses.items()
        }
        assert got == expected
        assert rig.reporter.said[attempt.pod.key] == BOTH_FAILED.message


async def test_4_chain_sends_only_survivors() -> None:
    async with scheduler_with([predicates(NODE2), predicates(NODE1)], NODES, None) as rig:
        attempt = await rig.attempt()
        assert attempt.job is None
        assert names_sent(rig.servers[0], "filter") == [["node1", "node2"]]
        assert names_sent(rig.servers[1], "filter") == [["node2"]]


async def test_5_and_8_uncalled_verbs() -> None:
    async with scheduler_with(
        [with_prioritizer(TRUE, 1, faults=ERROR_PRIORITIZER)], ["node1"], None
    ) as rig:
        attempt = await rig.attempt()
        assert attempt.job is not None
        assert rig.servers[0].verbs_called() == ["filter"]
    async with scheduler_with([UNINTERESTED], NODES, {"node1": 10, "node2": 100}) as rig:
        attempt = await rig.attempt()
        assert attempt.job is not None
        assert attempt.consultations == []  # decided in the cycle
        assert rig.servers[0].calls == []


async def test_6_and_7_the_prioritizers_are_sent_both_nodes() -> None:
    specs = [
        with_prioritizer(TRUE, 1, scores=NODE1_PRIORITIZER),
        with_prioritizer(TRUE, 5, scores=NODE2_PRIORITIZER),
    ]
    async with scheduler_with(specs, NODES, None) as rig:
        await rig.attempt()
        for server in rig.servers:
            assert names_sent(server, "prioritize") == [list(NODES)]


async def test_11_the_binding_extender_binds_the_chosen_node() -> None:
    async with scheduler_with([BINDER], NODES, None) as rig:
        attempt = await rig.attempt()
        assert attempt.consultations == []  # binding only: not asked in the cycle
        job = attempt.job
        assert job is not None
        assert job.extender_bind is not None
        status = await job.extender_bind()
        assert status is not None
        assert status.ok
        [call] = rig.servers[0].calls_of("bind")
        assert call.body["Node"] == "node1"
