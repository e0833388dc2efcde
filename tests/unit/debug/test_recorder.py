"""The recorder keeps what the live cycle decided, as ``asched explain`` would show it.

Differential: over the same table, a decision the real Scheduler made with every node
examined is recorded with the verdicts, scores, totals and message that
:func:`asched.explain.engine.evaluate_table` computes. With sampling, the examined nodes
are the ones the cycle examined and the others are listed as not examined. The ring is
bounded, and a bug in recording never reaches the cycle.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from builders import make_node, make_pod

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.debug.record import NOT_EXAMINED, SCORED, DecisionRecord
from asched.debug.recorder import Recorder
from asched.engine.algorithm import Algorithm
from asched.explain.engine import evaluate_table
from asched.framework.runtime import Framework
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.cycle import Scheduler
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.parts import ProfileRuntime
from tests.configs import load_config
from tests.unit.scheduler.test_cycle_guards import FakeClock, RecordingReporter

PROFILE = "recorded"


def build(
    nodes: list[dict[str, Any]],
    *,
    bound: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
    percentage: int = 100,
    capacity: int = 10,
) -> tuple[Scheduler, Recorder, NodeTable]:
    """A Scheduler with the default plugins and a recorder, over ``nodes`` holding
    ``bound`` pods ((node, raw pod))."""
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        }
    )
    framework = Framework(config.profiles[0])
    table = NodeTable()
    for raw in nodes:
        table.upsert_node(decode_node(raw))
    for node, raw in bound:
        table.add_pod(decode_pod(raw), node)
    clock = FakeClock()
    recorder = Recorder(capacity)
    algorithm = Algorithm(framework, table, percentage=percentage, seed=1)
    scheduler = Scheduler(
        profiles={PROFILE: ProfileRuntime(framework, algorithm)},
        queue=SchedulingQueue(clock=clock),
        ledger=Ledger(table),
        binder_factory=lambda s: Binder(s),
        observer=Observers(reporter=RecordingReporter(), recorder=recorder),
        clock=clock,
    )
    return scheduler, recorder, table


def pending(name: str, **fields: Any) -> PodInfo:
    raw = make_pod(name, **fields)
    raw["spec"]["schedulerName"] = PROFILE
    return decode_pod(raw)


def attempt(scheduler: Scheduler, pod: PodInfo) -> Any:
    scheduler.queue.add(pod)
    qp = scheduler.queue.pop()
    assert qp is not None
    return scheduler.schedule_one(qp)


# four nodes: small (1 cpu) rejects a 2-cpu pod; tainted rejects any pod; big and busy fit,
# busy holding 3 of its 8 cpu, so the resource scores differ
NODES = [
    make_node("small", cpu="1", memory="4Gi"),
    make_node("tainted", cpu="8", memory="16Gi", taints=[("dedicated", "x", "NoSchedule")]),
    make_node("big", cpu="8", memory="16Gi"),
    make_node("busy", cpu="8", memory="16Gi"),
    make_node("medium", cpu="4", memory="16Gi"),
]
BOUND = [("busy", make_pod("resident", cpu="3", memory="4Gi"))]


@pytest.mark.parametrize(
    ("cpu", "scheduled"),
    [
        pytest.param("2", True, id="fits on three nodes: scored, one chosen"),
        pytest.param("16", False, id="fits nowhere: every node rejected, FitError message"),
    ],
)
def test_recorded_decision_equals_explain_when_every_node_is_examined(
    cpu: str, scheduled: bool
) -> None:
    scheduler, recorder, table = build(NODES, bound=BOUND)
    pod = pending("web", cpu=cpu, memory="1Gi")
    profile = scheduler.profiles[PROFILE].framework.profile
    explained = evaluate_table(table, pod, profile)  # before the cycle assumes anything
    outcome = attempt(scheduler, pod)
    assert isinstance(outcome, BindJob) == scheduled
    record = recorder.latest(pod.key)
    assert record is not None
    recorded = record.evaluation()
    assert recorded.nodes == explained.nodes
    assert recorded.weights == explained.weights
    assert recorded.top == explained.top
    assert recorded.message == explained.message
    assert recorded.preemption == explained.preemption
    assert record.not_examined() == []
    if scheduled:
        assert outcome.node in recorded.top
        assert recorded.selected == outcome.node
        assert record.outcome == f"assumed on {outcome.node}"
    else:
        assert recorded.selected is None
        assert record.outcome == "requeued"
        assert recorder.last_reason(pod.key) == explained.message


def test_recorded_verdicts_name_the_rejecting_plugin() -> None:
    scheduler, recorder, _ = build(NODES, bound=BOUND)
    pod = pending("web", cpu="2", memory="1Gi")
    attempt(scheduler, pod)
    record = recorder.latest(pod.key)
    assert record is not None
    document = record.to_json()
    assert document["nodes"]["small"] == {
        "feasible": False,
        "plugin": "NodeResourcesFit",
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
    }
    assert document["nodes"]["tainted"]["plugin"] == "TaintToleration"
    # big (8 cpu, nothing bound) is less allocated than busy (3 of 8 cpu): scored higher
    big, busy = document["nodes"]["big"], document["nodes"]["busy"]
    assert big["scores"]["NodeResourcesFit"] > busy["scores"]["NodeResourcesFit"]
    assert document["examined"] == 5
    assert document["feasible"] == 3
    assert document["sampled"] is False


def test_one_feasible_node_is_chosen_without_scores() -> None:
    # upstream scores only when there is a choice: the record says so, no made-up scores
    scheduler, recorder, _ = build([make_node("only", cpu="4"), make_node("tiny", cpu="1")])
    pod = pending("web", cpu="2", memory="1Gi")
    job = attempt(scheduler, pod)
    assert isinstance(job, BindJob)
    record = recorder.latest(pod.key)
    assert record is not None
    document = record.to_json()
    assert document["nodes"]["only"] == {"feasible": True, "scores": {}, "total": 0}
    assert document["scoredCount"] == 0
    assert document["selected"] == "only"


def test_sampling_records_which_nodes_were_examined() -> None:
    # 200 nodes, every 4th tainted (50 rejected), 10 %: upstream's formula wants
    # max(200 * 10 // 100, 100) = 100 feasible nodes, so the cycle examines nodes in node
    # order from its start index until it has found 100 feasible ones and stops
    taint = [("dedicated", "x", "NoSchedule")]
    nodes = [
        make_node(f"n{index:03}", cpu="4", taints=taint if index % 4 == 0 else [])
        for index in range(200)
    ]
    scheduler, recorder, table = build(nodes, percentage=10)
    profile = scheduler.profiles[PROFILE].framework.profile
    taints = scheduler.profiles[PROFILE].framework.plugins["TaintToleration"]
    explained_rows: list[int] = []
    explain = taints.explain

    def counting(state: Any, pod: PodInfo, nodes: Any, row: int) -> Any:
        explained_rows.append(row)
        return explain(state, pod, nodes, row)

    taints.explain = counting
    algorithm = scheduler.profiles[PROFILE].algorithm
    records: list[DecisionRecord] = []
    for name in ("a", "b"):
        pod = pending(name, cpu="1", memory="1Gi")
        start = algorithm.sampler.start
        explained = evaluate_table(table, pod, profile)
        explained_rows.clear()
        attempt(scheduler, pod)
        record = recorder.latest(pod.key)
        assert record is not None
        records.append(record)
        order = [table.name_of(row) for row in table.order()]
        # the rotating start index: the second decision starts where the first stopped,
        # and goes on until it has passed 100 feasible nodes
        examined: list[str] = []
        while sum(1 for n in examined if explained.nodes[n].feasible) < 100:
            examined.append(order[(start + len(examined)) % 200])
        feasible = [n for n in examined if explained.nodes[n].feasible]
        assert [record.names[p] for p in record.scored.tolist()] == sorted(
            feasible, key=order.index
        )
        assert set(record.not_examined()) == set(order) - set(examined)
        assert record.examined == len(examined)
        assert record.sampled
        assert int((record.verdicts == SCORED).sum()) == 100
        assert int((record.verdicts == NOT_EXAMINED).sum()) == 200 - len(examined)
        recorded = record.evaluation().nodes
        assert set(recorded) == set(examined)
        rejected = [n for n in examined if not explained.nodes[n].feasible]
        assert rejected  # every 4th node: the rejections among the examined are recorded
        assert {n: recorded[n] for n in rejected} == {n: explained.nodes[n] for n in rejected}
        # only the examined nodes are explained (not the 50 tainted ones of the cluster)
        assert sorted(table.name_of(r) for r in explained_rows) == sorted(rejected)
    assert records[0].names is records[1].names  # same node set: the names are shared
    assert set(records[0].not_examined()) != set(records[1].not_examined())


def test_ring_keeps_the_last_n_decisions() -> None:
    scheduler, recorder, _ = build(NODES, capacity=3)
    pods = [pending(f"p{index}", cpu="1", memory="1Gi") for index in range(5)]
    for pod in pods:
        attempt(scheduler, pod)
    assert len(recorder) == 3
    assert [r.pod for r in recorder.records()] == [p.key for p in reversed(pods[2:])]
    assert [r.seq for r in recorder.records()] == [5, 4, 3]
    assert recorder.latest(pods[0].key) is None  # evicted with its record
    assert recorder.get(1) is None
    latest = recorder.latest(pods[4].key)
    assert latest is not None
    assert recorder.get(5) is latest


def test_a_bug_in_recording_is_logged_once_and_never_reaches_the_cycle(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduler, recorder, _ = build(NODES)

    def broken(*args: Any) -> Any:
        raise ZeroDivisionError("recorder bug")

    monkeypatch.setattr(recorder, "_positions", broken)
    caplog.set_level(logging.DEBUG, logger="asched.debug.recorder")
    jobs = [attempt(scheduler, pending(f"p{index}", cpu="1", memory="1Gi")) for index in range(3)]
    assert all(isinstance(job, BindJob) for job in jobs)  # scheduled as without a recorder
    assert recorder.dropped == 3
    assert len(recorder) == 0
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "recorder bug" in caplog.text
