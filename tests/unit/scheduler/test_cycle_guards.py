"""Nothing one pod reaches may raise out of the cycle (issue 10).

A plugin that raises while one pod is decided, diagnosed, reserved or permitted turns
into an Error status for that pod: logged with its key, reported on it, requeued with
backoff, counted in ``asched_internal_errors_total``. The table returns to its exact
previous values, no bind job comes out (so the loop returns its binder slot), and the
next pod is scheduled as usual. PostFilter's error is upstream's: its message joins the
FitError and the pod stays Unschedulable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from builders import make_node, make_pod

from asched import metrics
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.engine.algorithm import Algorithm
from asched.framework.registry import Registry
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder, Slot
from asched.scheduler.cycle import Scheduler
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.parts import ProfileRuntime
from tests.configs import load_config

PROFILE = "asched"
SLOTS = 4


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class RecordingReporter:
    """The reporter seam: what would be said on each pod (no API involved)."""

    def __init__(self) -> None:
        self.said: dict[str, str] = {}
        self.errors: set[str] = set()

    def unschedulable(
        self, pod: PodInfo, message: str, nominated: str | None = None, *, error: bool = False
    ) -> None:
        self.said[pod.key] = message
        if error:
            self.errors.add(pod.key)

    def forget_nomination(self, key: str) -> None:
        pass


class Raising:
    """``inner`` with one method replaced by one that raises (everything else delegated)."""

    def __init__(self, inner: Any, *methods: str) -> None:
        self._inner = inner
        self._methods = methods

    def __getattr__(self, name: str) -> Any:
        if name in self._methods and hasattr(self._inner, name):

            def boom(*args: Any, **kwargs: Any) -> Any:
                raise ZeroDivisionError(f"{self._inner.name}.{name} exploded")

            return boom
        return getattr(self._inner, name)


class Stub:
    """A Reserve/Permit plugin of the test's own (``permit`` answers ``answer``)."""

    def __init__(self, name: str, answer: Status | None = None) -> None:
        self.name = name
        self.answer = answer or Status.success()
        self.unreserved = 0

    def reserve(self, state: Any, pod: PodInfo, node: str) -> Status:
        return Status.success()

    def unreserve(self, state: Any, pod: PodInfo, node: str) -> None:
        self.unreserved += 1

    def permit(self, state: Any, pod: PodInfo, node: str) -> tuple[Status, float]:
        return self.answer, 0.0


def build(
    profile: Profile | None = None, registry: Registry | None = None
) -> tuple[Scheduler, Framework, NodeTable, RecordingReporter]:
    """A scheduler over n1 and n2 (4 cpu, 8Gi each) with one profile (default: the
    defaults, named ``PROFILE``), its plugins built from ``registry`` (default: installed)."""
    if profile is None:
        config = load_config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": PROFILE}],
            }
        )
        profile = config.profiles[0]
    framework = Framework(profile, registry=registry)
    table = NodeTable()
    for name in ("n1", "n2"):
        table.upsert_node(decode_node(make_node(name, cpu="4", memory="8Gi")))
    clock = FakeClock()
    reporter = RecordingReporter()
    scheduler = Scheduler(
        profiles={
            profile.scheduler_name: ProfileRuntime(framework, Algorithm(framework, table, seed=1))
        },
        queue=SchedulingQueue(clock=clock),
        ledger=Ledger(table),
        binder_factory=lambda s: Binder(s, max_in_flight=SLOTS),
        observer=Observers(reporter=reporter),
        clock=clock,
    )
    return scheduler, framework, table, reporter


async def pop_with_slot(scheduler: Scheduler) -> tuple[Slot, Any]:
    """What the loop does before a cycle: take a binder slot, then pop."""
    slot = await scheduler.binder.take_slot()
    qp = scheduler.queue.pop()
    assert qp is not None
    return slot, qp


def cycle(scheduler: Scheduler, slot: Slot, qp: Any) -> None:
    """One cycle as the loop runs it; no bind job may come out of a failed one."""
    job = scheduler.schedule_one(qp)  # must not raise
    assert job is None
    slot.release()  # the loop's: no job to hand it to
    assert scheduler.binder.free_slots == SLOTS


def pod(name: str, cpu: str = "1") -> PodInfo:
    raw = make_pod(name, cpu=cpu, memory="1Gi")
    raw["spec"]["schedulerName"] = PROFILE
    return decode_pod(raw)


def break_first(points: list[Any], *methods: str) -> str:
    points[0] = Raising(points[0], *methods)
    return str(points[0].name)


def break_named(points: list[Any], name: str, *methods: str) -> str:
    [index] = [i for i, p in enumerate(points) if p.name == name]
    points[index] = Raising(points[index], *methods)
    return name


def break_filter(f: Framework) -> str:
    return break_first(f.filter, "filter")


def break_pre_filter(f: Framework) -> str:
    return break_first(f.pre_filter, "pre_filter")


def break_score(f: Framework) -> str:
    f.score[0] = (Raising(f.score[0][0], "score"), f.score[0][1])
    return str(f.score[0][0].name)


class Answering:
    """``inner`` with one method answering ``answer(*args)`` instead."""

    def __init__(self, inner: Any, method: str, answer: Callable[..., Any]) -> None:
        self._inner, self._method, self._answer = inner, method, answer

    def __getattr__(self, name: str) -> Any:
        return self._answer if name == self._method else getattr(self._inner, name)


def wrong_shape_filter(f: Framework) -> str:
    # one bool for however many rows were asked: the array contract is broken
    f.filter[0] = Answering(f.filter[0], "filter", lambda *a: np.ones(1, dtype=np.bool_))
    return str(f.filter[0].name)


def out_of_range_scores(f: Framework) -> str:
    [index] = [i for i, (p, _) in enumerate(f.score) if p.name == "NodeResourcesFit"]
    plugin, weight = f.score[index]

    def thousand(state: Any, pod: Any, table: NodeTable, rows: Any) -> Any:
        return np.full(len(plugin.score(state, pod, table, rows)), 1000, dtype=np.int64)

    wrapped = Answering(Answering(plugin, "score", thousand), "normalizes", False)
    f.score[index] = (wrapped, weight)
    return str(plugin.name)


def break_reserve(f: Framework) -> str:
    f.reserve.append(Raising(Stub("Exploding"), "reserve"))
    return "Exploding"


def break_permit(f: Framework) -> str:
    f.permit.append(Raising(Stub("Exploding"), "permit"))
    return "Exploding"


def requested_columns(table: NodeTable) -> list[np.ndarray[Any, Any]]:
    return [c.copy() for c in (*table.requested, *table.free, table.nonzero_cpu)]


@pytest.mark.parametrize(
    ("breaker", "phase", "cpu"),
    [
        pytest.param(break_pre_filter, "PreFilter", "1", id="PreFilter raises"),
        pytest.param(break_filter, "Filter", "1", id="Filter raises"),
        pytest.param(break_score, "Score", "1", id="Score raises"),
        # 5 cpu fits nowhere (4 each): diagnosing the failure runs the filters' explain
        pytest.param(
            lambda f: break_named(f.filter, "NodeResourcesFit", "explain", "explain_rows"),
            "Filter",
            "5",
            id="explaining a rejection raises",
        ),
        pytest.param(wrong_shape_filter, "decide", "1", id="Filter answers a wrong shape"),
        pytest.param(out_of_range_scores, "decide", "1", id="Score answers 1000"),
        pytest.param(break_reserve, "Reserve", "1", id="Reserve raises"),
        pytest.param(break_permit, "Permit", "1", id="Permit raises"),
    ],
)
async def test_a_raising_plugin_becomes_an_error_status_for_that_pod(
    breaker: Callable[[Framework], str], phase: str, cpu: str
) -> None:
    scheduler, framework, table, reporter = build()
    plugin = breaker(framework)
    before = requested_columns(table)
    errors = metrics.REGISTRY.get_sample_value("asched_internal_errors_total", {"phase": phase})
    victim = pod("victim", cpu=cpu)
    scheduler.queue.add(victim)
    slot, qp = await pop_with_slot(scheduler)

    cycle(scheduler, slot, qp)

    assert scheduler.queue.where(victim.key) == "backoff"  # Error: retried with backoff
    assert "internal error in" in reporter.said[victim.key]
    assert (
        "exploded" in reporter.said[victim.key]
        or "PluginContractError" in reporter.said[victim.key]
    )
    assert victim.key in reporter.errors  # condition reason SchedulerError, as upstream
    # the extension point and the plugin's name, as issue 12 asks of a faulty plugin
    assert f"internal error in {phase} of plugin {plugin}:" in reporter.said[victim.key]
    if phase in ("Reserve", "Permit"):
        assert scheduler.stats.rolled_back == 1  # after assume: the one rollback path
    else:
        assert scheduler.stats.errors == 1
    assert len(scheduler.ledger) == 0  # nothing stays assumed
    for got, want in zip(requested_columns(table), before, strict=True):
        np.testing.assert_array_equal(got, want)
    after = metrics.REGISTRY.get_sample_value("asched_internal_errors_total", {"phase": phase})
    assert (after or 0) - (errors or 0) == 1


async def test_unreserve_raising_does_not_stop_the_rollback() -> None:
    """Permit rejects; the first Unreserve (in reverse order) raises; the others still run,
    the pod is forgotten and requeued with Permit's rejection, not the Unreserve error."""
    scheduler, framework, table, reporter = build()
    kept = Stub("Kept")
    framework.reserve.extend([kept, Raising(Stub("Exploding"), "unreserve")])
    framework.permit.append(Stub("Rejecting", Status.unschedulable("not now")))
    before = requested_columns(table)
    victim = pod("victim")
    scheduler.queue.add(victim)
    slot, qp = await pop_with_slot(scheduler)

    cycle(scheduler, slot, qp)

    assert kept.unreserved == 1
    assert len(scheduler.ledger) == 0
    for got, want in zip(requested_columns(table), before, strict=True):
        np.testing.assert_array_equal(got, want)
    assert scheduler.queue.where(victim.key) == "unschedulable"  # Permit's verdict stands
    assert "not now" in reporter.said[victim.key]


async def test_a_bug_in_the_cycle_itself_is_recovered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last-resort guard: asched's own bookkeeping raising after assume (here the
    ledger) leaves nothing assumed, returns the slot and requeues the pod as an Error."""
    scheduler, _, table, reporter = build()
    before = requested_columns(table)
    real_assume = scheduler.ledger.assume

    def assume_then_raise(p: PodInfo, node: str) -> None:
        real_assume(p, node)
        raise RuntimeError("bookkeeping bug")

    monkeypatch.setattr(scheduler.ledger, "assume", assume_then_raise)
    victim = pod("victim")
    scheduler.queue.add(victim)
    slot, qp = await pop_with_slot(scheduler)

    cycle(scheduler, slot, qp)

    assert len(scheduler.ledger) == 0
    for got, want in zip(requested_columns(table), before, strict=True):
        np.testing.assert_array_equal(got, want)
    assert scheduler.queue.where(victim.key) == "backoff"
    assert "internal error in cycle: RuntimeError: bookkeeping bug" in reporter.said[victim.key]


async def test_the_next_pod_schedules_after_one_raised() -> None:
    """The loop goes on: the plugin raises only for the first pod."""
    scheduler, framework, _, reporter = build()
    inner = framework.filter[0]
    calls = {"n": 0}

    class OnceRaising:
        def __getattr__(self, name: str) -> Any:
            if name == "filter":

                def flaky(*args: Any) -> Any:
                    calls["n"] += 1
                    if calls["n"] == 1:
                        raise ValueError("first pod only")
                    return inner.filter(*args)

                return flaky
            return getattr(inner, name)

    framework.filter[0] = OnceRaising()
    first, second = pod("first"), pod("second")
    for p in (first, second):
        scheduler.queue.add(p)
    slot, qp = await pop_with_slot(scheduler)
    cycle(scheduler, slot, qp)
    slot, qp = await pop_with_slot(scheduler)
    assert qp.key == second.key
    job = scheduler.schedule_one(qp)  # the same cycle the loop runs, no exception left over
    assert job is not None
    assert job.node in ("n1", "n2")
    assert scheduler.ledger.node_of(second.key) == job.node  # assumed, ready to bind
    assert first.key in reporter.said
    assert second.key not in reporter.said
