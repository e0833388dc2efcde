"""The extender half of an attempt: decided in the cycle, asked outside it, concluded
against the table as it is then (asched.extenders.consult).

Each test drives the three steps by hand: ``schedule_one`` (the in-tree half, returning a
Consultation), ``ask`` (the real HTTP calls to a test extender), then ``conclude``, and
changes the table in between where the case needs it, as other pods would while the
calls are in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from builders import make_node, make_pod

from asched import metrics
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.extenders import consult, filter_score
from asched.extenders.consult import Consultation, Preemption
from asched.extenders.fast import AlignedScores
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.queue.scheduling_queue import BACKOFF, IN_FLIGHT, UNSCHEDULABLE
from asched.scheduler.binder import BindJob
from asched.scheduler.cycle import Scheduler
from asched.scheduler.observe import Observers
from asched.tools.bench.extender_server import ExtenderRules
from tests.configs import load_config
from tests.unit.extender._cycle import PROFILE, build_scheduler
from tests.unit.extender._support import Spec, names_sent, spec, started
from tests.unit.scheduler.test_cycle_guards import RecordingReporter

NODES = ("n1", "n2", "n3", "n4")
GPU = "example.com/gpu"


@dataclass
class Rig:
    scheduler: Scheduler
    table: NodeTable
    reporter: RecordingReporter
    servers: list[Any]

    def add(
        self, name: str, *, nominated: str = "", extra: dict[str, str] | None = None
    ) -> PodInfo:
        raw = make_pod(name, requests=[{"cpu": "1", "memory": "1Gi", **(extra or {})}])
        raw["spec"]["schedulerName"] = PROFILE
        if nominated:
            raw["status"] = {"nominatedNodeName": nominated}
        pod = decode_pod(raw)
        self.scheduler.raw.pods[pod.key] = raw
        self.scheduler.queue.add(pod)
        return pod

    def pop(self) -> Any:
        qp = self.scheduler.queue.pop()
        assert qp is not None
        return qp

    def fill(self, node: str) -> None:
        """Another pod takes all of ``node``'s cpu (as one assumed meanwhile would)."""
        other = decode_pod(make_pod(f"filler-{node}", cpu="4", memory="1Gi"))
        self.scheduler.ledger.assume(other, node)

    async def consult(self, consultation: Consultation) -> BindJob | Consultation | None:
        await self.scheduler.ask(consultation)
        return self.scheduler.conclude(consultation)


@asynccontextmanager
async def rig(*specs: Spec) -> AsyncIterator[Rig]:
    """A scheduler over n1..n4 (4 cpu, 8Gi each: identical, so the in-tree scores tie)
    with the test extenders of ``specs``."""
    async with started(*specs) as running:
        entries = [
            server.entry(**s.fields) for server, s in zip(running.servers, specs, strict=True)
        ]
        config = load_config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": PROFILE}],
                "extenders": entries,  # managedResources' ignoredByScheduler reach the fit
            }
        )
        framework = Framework(config.profiles[0])
        table = NodeTable()
        for name in NODES:
            table.upsert_node(decode_node(make_node(name, cpu="4", memory="8Gi")))
        raw_nodes = {name: make_node(name, cpu="4", memory="8Gi") for name in NODES}
        scheduler, reporter = build_scheduler(framework, table, running.extenders, raw_nodes)
        yield Rig(scheduler, table, reporter, running.servers)


async def test_nothing_changed_is_upstreams_answer() -> None:
    """n1 is refused; the in-tree scores tie on n2..n4, so the extender's 10 x weight 1 x 10
    = 100 points on n3 decide."""
    rules = ExtenderRules(fail=frozenset({"n1"}), scores={"n3": 10})
    async with rig(spec(rules, nodeCacheCapable=True)) as r:
        pod = r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        assert r.table.pods.get(pod.key) is None  # nothing assumed while the calls are out
        job = await r.consult(consultation)
        assert isinstance(job, BindJob)
        assert job.node == "n3"
        assert r.scheduler.ledger.node_of(pod.key) == "n3"
        [server] = r.servers
        assert names_sent(server, "filter") == [list(NODES)]
        assert names_sent(server, "prioritize") == [["n2", "n3", "n4"]]


@pytest.mark.parametrize(
    ("prefer", "filled", "expected"),
    [
        # n3 preferred by the extender but full by the time it answered: n4, the other
        # node it accepted, still fits
        pytest.param("n3", "n3", "n4", id="preferred node filled meanwhile"),
        # a node the extender did not prefer filled: the preferred one still holds
        pytest.param("n3", "n4", "n3", id="other accepted node filled meanwhile"),
    ],
)
async def test_rows_changed_meanwhile_are_filtered_again(
    prefer: str, filled: str, expected: str
) -> None:
    rules = ExtenderRules(passes=frozenset({"n3", "n4"}), scores={prefer: 10})
    async with rig(spec(rules)) as r:
        pod = r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        r.fill(filled)
        job = await r.consult(consultation)
        assert isinstance(job, BindJob)
        assert job.node == expected
        # no over-commit: every node holds at most its 4 cpu (in millicores)
        for row in range(len(NODES)):
            assert r.table.free_of("cpu")[row] >= 0
        assert r.scheduler.ledger.node_of(pod.key) == expected


async def test_a_choice_that_no_longer_holds_is_decided_again() -> None:
    """The extender accepts n3 alone; n3 fills up meanwhile. The pod is decided again: the
    second consultation is sent n1, n2, n4 (n3 now fails in-tree), all refused, and the
    FitError counts both kinds of reason: 0/4 = 1 Insufficient cpu + 3 refused."""
    rules = ExtenderRules(passes=frozenset({"n3"}), fail_reason="not on the list")
    async with rig(spec(rules)) as r:
        pod = r.add("p")
        first = r.scheduler.schedule_one(r.pop())
        assert isinstance(first, Consultation)
        r.fill("n3")
        second = await r.consult(first)
        assert isinstance(second, Consultation)
        assert second.rounds == 2
        assert await r.consult(second) is None
        [server] = r.servers
        assert names_sent(server, "filter") == [list(NODES), ["n1", "n2", "n4"]]
        message = r.reporter.said[pod.key]
        assert message == (
            "0/4 nodes are available: 1 Insufficient cpu, 3 not on the list. "
            # preemption sees the extender's refusals as Unschedulable, as upstream; the
            # filler on n3 has the pod's own priority, so it is no victim
            "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
        )
        # parked; the extender's refusals make any cluster event move it (upstream
        # registers extenders for every event)
        assert r.scheduler.queue.where(pod.key) == UNSCHEDULABLE
        assert r.scheduler.queue.move(ClusterEvent.NODE_LABEL) == 1
        assert r.scheduler.ledger.node_of(pod.key) is None


async def test_rounds_are_bounded() -> None:
    """Each round, every node the extender accepted fills up before its answer, and a new
    node appears (but after the last): the pod is decided 3 times (MAX_ROUNDS), then
    reported with the reasons of the last decision: 4 + 2 nodes, all full by then."""
    async with rig(spec(ExtenderRules())) as r:
        pod = r.add("p")
        consultation: Any = r.scheduler.schedule_one(r.pop())
        rounds = 0
        while isinstance(consultation, Consultation):
            rounds += 1
            for name in consultation.names:
                r.fill(name)
            if rounds < 3:
                new = f"m{rounds}"
                r.table.upsert_node(decode_node(make_node(new, cpu="4", memory="8Gi")))
            consultation = await r.consult(consultation)
        assert consultation is None
        assert rounds == 3
        [server] = r.servers
        assert names_sent(server, "filter") == [list(NODES), ["m1"], ["m2"]]
        assert r.reporter.said[pod.key].startswith("0/6 nodes are available: 6 Insufficient cpu.")
        assert r.scheduler.ledger.node_of(pod.key) is None


async def test_a_failing_extender_fails_the_attempt_unless_ignorable() -> None:
    down = ExtenderRules(faults={"filter": "status-500"})
    async with rig(spec(down)) as r:
        pod = r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        assert await r.consult(consultation) is None
        assert pod.key in r.reporter.errors
        assert r.servers[0].url in r.reporter.said[pod.key]
        assert r.scheduler.queue.where(pod.key) == BACKOFF
        assert r.scheduler.stats.errors == 1
    async with rig(spec(down, ignorable=True)) as r:
        r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        job = await r.consult(consultation)
        assert isinstance(job, BindJob)  # the ignorable extender was skipped


async def test_a_pod_deleted_while_its_extenders_are_asked_is_dropped() -> None:
    async with rig(spec(ExtenderRules())) as r:
        pod = r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        r.scheduler.queue.delete(pod.key)
        assert await r.consult(consultation) is None
        assert r.scheduler.ledger.node_of(pod.key) is None
        assert r.scheduler.queue.where(pod.key) is None
        assert pod.key not in r.reporter.said


async def test_a_refused_nominated_node_means_every_node_is_evaluated() -> None:
    """Upstream tries the nominated node alone first; when the extenders refuse it, it
    evaluates every node (with the extenders again)."""
    rules = ExtenderRules(fail=frozenset({"n2"}), scores={"n4": 10})
    async with rig(spec(rules)) as r:
        pod = r.add("p", nominated="n2")
        assert pod.nominated_node_name == "n2"
        r.table.nominations.observed(pod)
        first = r.scheduler.schedule_one(r.pop())
        assert isinstance(first, Consultation)
        assert first.nominated_only
        second = await r.consult(first)
        assert isinstance(second, Consultation)
        job = await r.consult(second)
        assert isinstance(job, BindJob)
        assert job.node == "n4"
        [server] = r.servers
        assert names_sent(server, "filter") == [["n2"], list(NODES)]


async def test_a_pod_no_extender_is_interested_in_is_decided_in_the_cycle() -> None:
    managed = [{"name": GPU, "ignoredByScheduler": True}]
    async with rig(spec(ExtenderRules(), managedResources=managed)) as r:
        r.add("plain")
        job = r.scheduler.schedule_one(r.pop())
        assert isinstance(job, BindJob)
        gpu = r.add("gpu", extra={GPU: "1"})
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        assert consultation.qp.key == gpu.key
        assert r.scheduler.queue.where(gpu.key) == IN_FLIGHT
        assert [c.verb for c in r.servers[0].calls] == []


def _full_nodes_and_an_important_pod(r: Rig) -> PodInfo:
    """Every node full of one priority-0 pod of 4 cpu (uid ``uid-<node>``), and a pending
    priority-100 pod asking 1 cpu."""
    for name in NODES:
        raw = make_pod(f"victim-{name}", cpu="4", memory="1Gi", priority=0)
        raw["metadata"]["uid"] = f"uid-{name}"
        r.table.add_pod(decode_pod(raw), name)
    raw = make_pod("important", cpu="1", memory="1Gi", priority=100)
    raw["spec"]["schedulerName"] = PROFILE
    pod = decode_pod(raw)
    r.scheduler.raw.pods[pod.key] = raw
    r.scheduler.queue.add(pod)
    return pod


@pytest.mark.parametrize(
    "cache_capable",
    [pytest.param(True, id="victims by UID"), pytest.param(False, id="victims as objects")],
)
async def test_preempting_extenders_narrow_the_candidates(cache_capable: bool) -> None:
    """Every node is full of one priority-0 pod (4 cpu); a priority-100 pod needs 1 cpu, so
    each node is a candidate with one victim. The extender's preempt verb keeps only the
    nodes its filter rules pass (n3, n4): the nomination is one of those, made once the
    extender answered, outside the cycle."""
    rules = ExtenderRules(passes=frozenset({"n3", "n4"}))
    fields = {"preempt": True, "filterVerb": "", "prioritizeVerb": ""}
    async with rig(spec(rules, nodeCacheCapable=cache_capable, **fields)) as r:
        pod = _full_nodes_and_an_important_pod(r)
        preemption = r.scheduler.schedule_one(r.pop())
        assert isinstance(preemption, Preemption)  # no nomination before the answer
        assert not r.table.nominations.node_of(pod.key)
        assert sorted(r.table.name_of(c.row) for c in preemption.candidates) == list(NODES)
        assert await r.consult(preemption) is None
        nominated = r.table.nominations.node_of(pod.key)
        assert nominated in {"n3", "n4"}
        [call] = r.servers[0].calls_of("preempt")
        if cache_capable:
            sent = call.body["NodeNameToMetaVictims"]
            assert sent["n1"] == {"Pods": [{"UID": "uid-n1"}], "NumPDBViolations": 0}
        else:
            [victim] = call.body["NodeNameToVictims"]["n1"]["Pods"]
            assert victim["metadata"] == {
                "name": "victim-n1",
                "namespace": "default",
                "uid": "uid-n1",
            }
        assert r.scheduler.queue.where(pod.key) in {BACKOFF, UNSCHEDULABLE}
        assert r.reporter.said[pod.key].startswith("0/4 nodes are available: 4 Insufficient cpu.")


async def test_victims_gone_meanwhile_leave_no_candidate() -> None:
    """The extender keeps n3 alone; its victim is deleted before the answer arrives: the
    candidate no longer holds, and the pod is told upstream's 'no candidate' message."""
    rules = ExtenderRules(passes=frozenset({"n3"}))
    fields = {"preempt": True, "filterVerb": "", "prioritizeVerb": "", "nodeCacheCapable": True}
    async with rig(spec(rules, **fields)) as r:
        pod = _full_nodes_and_an_important_pod(r)
        preemption = r.scheduler.schedule_one(r.pop())
        assert isinstance(preemption, Preemption)
        await r.scheduler.ask(preemption)
        r.table.remove_pod("default/victim-n3")
        assert r.scheduler.conclude(preemption) is None
        assert not r.table.nominations.node_of(pod.key)
        assert r.reporter.said[pod.key].endswith("preemption: no candidate node for preemption")


async def test_every_call_is_timed_by_extender_verb_and_result() -> None:
    """An ignorable extender whose filter fails (skipped) and whose prioritize answers:
    one more error sample for filter, one more ok sample for prioritize. Counted as
    differences: the label is the extender's URL, and an earlier test's server may have
    had the same port (the registry is the process's)."""
    async with rig(spec(ExtenderRules(faults={"filter": "status-500"}), ignorable=True)) as r:
        url = r.servers[0].url

        def count(verb: str, result: str) -> float:
            labels = {"extender": url, "verb": verb, "result": result}
            name = "asched_extender_request_duration_seconds_count"
            return metrics.REGISTRY.get_sample_value(name, labels) or 0.0

        cases = [("filter", "error"), ("filter", "ok"), ("prioritize", "ok")]
        before = {case: count(*case) for case in cases}
        r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        await r.consult(consultation)
        added = {case: count(*case) - before[case] for case in cases}
        # the filter was skipped: all 4 nodes scored by the one prioritize call
        assert added == {("filter", "error"): 1, ("filter", "ok"): 0, ("prioritize", "ok"): 1}


class _Exploding:
    """An extender transport with a bug: its call raises something that is no
    ExtenderError (what run_filters lets through)."""

    def url(self, verb: str) -> str:
        return f"http://exploding.invalid/{verb}"

    async def post(self, verb: str, body: Any) -> Any:
        raise ValueError("transport bug")

    async def close(self) -> None:
        pass


async def test_a_bug_in_the_calls_sends_the_pod_back_told_and_frees_its_slot() -> None:
    """The consultation task contains the bug: the pod is requeued with backoff and an
    error report, the slot comes back, and the binder keeps running."""
    async with rig(spec(ExtenderRules())) as r:
        [extender] = r.scheduler.extenders
        extender.transport = _Exploding()
        binder = r.scheduler.binder
        runner = asyncio.create_task(binder.run())
        await binder.running.wait()
        pod = r.add("p")
        slot = await binder.take_slot()
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        released = asyncio.Event()
        binder.on_release = released.set
        binder.consult(consultation, slot.hand_over())
        await released.wait()  # the calls ran and failed (a stop would have cancelled them)
        binder.stop()
        await runner
        assert binder.free_slots == binder.max_in_flight  # the slot came back
        assert r.scheduler.queue.where(pod.key) == BACKOFF
        assert pod.key in r.reporter.errors
        assert "transport bug" in r.reporter.said[pod.key]


async def test_a_row_reused_meanwhile_is_not_taken_for_the_node_sent() -> None:
    """The extender accepts n3 alone. While it answers, n3 is deleted and a new node z
    takes its row (the epoch moves): the answer is resolved by name, so z (never sent,
    never accepted) is not chosen. n3 is gone and nothing else was accepted: the pod is
    reported unschedulable, not decided again, as upstream would with no node left."""
    rules = ExtenderRules(passes=frozenset({"n3"}))
    async with rig(spec(rules, nodeCacheCapable=True)) as r:
        pod = r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        row = r.table.row_of("n3")
        r.table.remove_node("n3")
        r.table.upsert_node(decode_node(make_node("z", cpu="4", memory="8Gi")))
        assert r.table.row_of("z") == row  # the free row is reused
        assert await r.consult(consultation) is None
        assert r.scheduler.ledger.node_of(pod.key) is None
        assert r.table.row_pods[row] == {}


async def test_extender_scores_land_on_the_rows_of_the_nodes_they_name() -> None:
    """score_rows: each prioritizer's contributions are added per row (n2: 30 + 5, n4:
    70); a node deleted meanwhile (n3) is dropped, and its row, reused by z, gets
    nothing."""
    async with rig(spec(ExtenderRules())) as r:
        r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        consultation.scores = filter_score.ExtenderScores(
            (("a", {"n2": 30, "n3": 100}), ("b", {"n2": 5, "n4": 70}))
        )
        rows = {name: r.table.row_of(name) for name in NODES}
        same = consult.score_rows(r.table, consultation)
        assert same is not None
        assert same.tolist() == [0, 35, 100, 70]
        r.table.remove_node("n3")
        r.table.upsert_node(decode_node(make_node("z", cpu="4", memory="8Gi")))
        assert r.table.row_of("z") == rows["n3"]
        moved = consult.score_rows(r.table, consultation)
        assert moved is not None
        assert moved.tolist() == [0, 35, 0, 70]


async def test_answers_in_the_order_sent_reach_the_rows_by_position() -> None:
    """An extender that answers in the order sent (the test server does): its feasible
    nodes come with their positions among the names sent and its scores aligned with
    them, so the conclusion maps both to rows without a lookup by name; the rows and the
    per-row scores are the name lookup's (n2: 3 x 10, n3: 0, n4: 7 x 10). Once a row
    moved (n3 deleted, z in its row: a new epoch) the names decide: n3 is gone."""
    rules = ExtenderRules(fail=frozenset({"n1"}), scores={"n2": 3, "n3": 0, "n4": 7})
    async with rig(spec(rules, nodeCacheCapable=True)) as r:
        r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        await r.scheduler.ask(consultation)
        outcome, scores = consultation.outcome, consultation.scores
        assert outcome is not None
        assert scores is not None
        assert outcome.positions is not None
        assert outcome.positions.tolist() == [1, 2, 3]  # n2, n3, n4 of n1..n4
        [(_, aligned)] = scores.by_extender
        assert isinstance(aligned, AlignedScores)
        rows = {name: r.table.row_of(name) for name in NODES}
        assert consult.feasible_rows(r.table, consultation).tolist() == [
            rows["n2"],
            rows["n3"],
            rows["n4"],
        ]
        by_position = consult.score_rows(r.table, consultation)
        consultation.scores = filter_score.ExtenderScores((("e", dict(aligned)),))
        by_name = consult.score_rows(r.table, consultation)
        assert by_position is not None
        assert by_name is not None
        assert by_position.tolist() == by_name.tolist() == [0, 30, 0, 70]
        consultation.scores = scores
        r.table.remove_node("n3")
        r.table.upsert_node(decode_node(make_node("z", cpu="4", memory="8Gi")))
        assert r.table.row_of("z") == rows["n3"]
        assert consult.feasible_rows(r.table, consultation).tolist() == [rows["n2"], rows["n4"]]
        moved = consult.score_rows(r.table, consultation)
        assert moved is not None
        assert moved.tolist() == [0, 30, 0, 70]


@pytest.mark.parametrize(
    "step",
    [
        pytest.param("candidates", id="the re-filter over the accepted rows raises"),
        pytest.param("choose", id="the choice among them raises"),
    ],
)
async def test_a_conclusion_that_raises_is_the_pods_error_not_the_loops(
    monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """A plugin raising while the conclusion runs (as a scalar form's broken contract
    would) fails that pod's attempt as the cycle's own guard fails one: reported as an
    error, requeued with backoff, nothing assumed; the conclusion itself returns."""
    async with rig(spec(ExtenderRules())) as r:
        pod = r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        algorithm = r.scheduler.profiles[PROFILE].algorithm

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise ValueError("a plugin bug")

        monkeypatch.setattr(algorithm, step, broken)
        attempts: list[str] = []  # what the App counts in asched_schedule_attempts_total
        r.scheduler.observer = Observers(
            reporter=r.reporter,
            on_attempt=lambda result, profile, seconds: attempts.append(result),
        )
        assert await r.consult(consultation) is None
        assert attempts == ["error"]  # counted as the attempt's error, once
        assert r.scheduler.queue.where(pod.key) == BACKOFF
        assert pod.key in r.reporter.errors
        assert "a plugin bug" in r.reporter.said[pod.key]
        assert r.scheduler.ledger.node_of(pod.key) is None


@pytest.mark.parametrize(
    ("meanwhile", "reused"),
    [
        # an assumed plain pod moves no shared state: PreFilter/PreScore's answers stand
        pytest.param("fill", 1, id="a plain pod assumed"),
        # a node updated (its labels) may change them: run afresh
        pytest.param("relabel", 0, id="a node updated"),
    ],
)
async def test_the_conclusion_reuses_prefilter_and_prescore_while_they_hold(
    meanwhile: str, reused: int
) -> None:
    """n4 filled (or relabelled) while the extender is asked; the extender prefers n3.
    The conclusion takes n3 either way, with the decision's PreFilter and PreScore state
    when only a plain pod was assumed, afresh when a node changed."""
    rules = ExtenderRules(passes=frozenset({"n3", "n4"}), scores={"n3": 10})
    async with rig(spec(rules, nodeCacheCapable=True)) as r:
        r.add("p")
        consultation = r.scheduler.schedule_one(r.pop())
        assert isinstance(consultation, Consultation)
        assert consultation.pre_state is not None
        if meanwhile == "fill":
            r.fill("n4")
        else:
            raw = make_node("n4", cpu="4", memory="8Gi", labels={"tier": "b"})
            r.table.upsert_node(decode_node(raw))
        algorithm = consultation.profile.algorithm
        before = algorithm.pre_state_reuses
        job = await r.consult(consultation)
        assert isinstance(job, BindJob)
        assert job.node == "n3"
        assert algorithm.pre_state_reuses - before == reused
        assert consultation.pre_state is None  # used once
