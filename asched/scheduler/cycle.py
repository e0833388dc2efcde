"""The serial scheduling cycle, and the one rollback path.

``schedule_one`` is synchronous from pop to Permit's answer: decide (filters, scores,
select over the whole table), assume (the pod's requests enter its row), Reserve,
Permit, then hand the pod to a binding task. No ``await`` happens in between, so no
watch event, other cycle or binding result can change the table under a decision.

``rollback`` is the only way back from any failure after assume (reserve error, permit
rejection or timeout, bind error or conflict, pod deleted, shutdown, leadership lost):
unreserve in reverse order (idempotent), forget the assumed pod (the row returns to its
exact previous values), then requeue (the queue drops a pod the watch has meanwhile
reported deleted or bound). It is synchronous, so cancellation cannot interrupt it.

Nothing one pod carries may stop the loop: plugin code (filters and scores, PostFilter,
Reserve, Permit, Unreserve, PostBind) runs under :meth:`Scheduler._guarded`, which turns
an unexpected exception into an Error status for that pod (logged with its key and
traceback, counted in ``asched_internal_errors_total``), so the pod is reported and retried
with backoff and the loop goes on. ``schedule_one`` itself has a last-resort guard for a
bug in asched's own bookkeeping.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from asched import metrics
from asched.cluster.records import PodInfo
from asched.framework import diagnosis
from asched.framework.algorithm import Algorithm, Decision
from asched.framework.interface import PostFilterResult
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.waiting import WaitingPod, WaitingPods
from asched.metrics import AttemptResult
from asched.queue.events import ClusterEvent
from asched.queue.queued import QueuedPod
from asched.queue.scheduling_queue import IN_FLIGHT, SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.evictions import Evictions
from asched.scheduler.ledger import Ledger
from asched.scheduler.reporting import Reporter

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(slots=True)
class ProfileRuntime:
    """One profile's framework and its decision algorithm (cache, start index, rng)."""

    framework: Framework
    algorithm: Algorithm


@dataclass(slots=True)
class CycleStats:
    """Counters the benchmarks and tests read (metrics have their own registry)."""

    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    bound: int = 0
    rolled_back: int = 0


class _Slot:
    """The binder slot the caller took for one cycle: released once, or handed over."""

    __slots__ = ("binder", "held")

    def __init__(self, binder: Binder) -> None:
        self.binder = binder
        self.held = True

    def release(self) -> None:
        if self.held:
            self.held = False
            self.binder.release_slot()


class Scheduler:
    """Decides and hands off; owns the rollback. See the module docstring."""

    def __init__(
        self,
        *,
        profiles: Mapping[str, ProfileRuntime],
        queue: SchedulingQueue,
        ledger: Ledger,
        binder_factory: Callable[[Scheduler], Binder],
        reporter: Reporter | None,
        clock: Callable[[], float] = time.monotonic,
        on_attempt: Callable[[AttemptResult, str, float], None] | None = None,
        on_bound: Callable[[BindJob, float], None] | None = None,
        evictions_factory: Callable[[Scheduler], Evictions] | None = None,
    ) -> None:
        self.profiles = profiles
        self.queue = queue
        self.ledger = ledger
        self.reporter = reporter
        self.clock = clock
        self.waiting = WaitingPods()
        self.stats = CycleStats()
        self.binder = binder_factory(self)
        self.evictions = evictions_factory(self) if evictions_factory is not None else None
        self._on_attempt = on_attempt
        self._on_bound = on_bound

    # ------------------------------------------------------------------ guards
    def _guarded(
        self, pod: PodInfo, phase: str, call: Callable[[], T], plugin: str = ""
    ) -> T | Status:
        """``call()``, or an Error status for ``pod`` when it raises (see the module
        docstring). ``CancelledError`` and other BaseExceptions are never caught."""
        try:
            return call()
        except Exception as exc:
            return self._internal_error(pod, phase, exc, plugin)

    def _internal_error(self, pod: PodInfo, phase: str, exc: Exception, plugin: str = "") -> Status:
        metrics.count_internal_error(phase)
        where = f"{phase} of plugin {plugin}" if plugin else phase
        logger.error(
            "pod %s: internal error in %s: %s: %s",
            pod.key,
            where,
            type(exc).__name__,
            exc,
            exc_info=exc,
            extra={"pod": pod.key},
        )
        return Status.error(f"internal error in {where}: {type(exc).__name__}: {exc}", plugin)

    # ------------------------------------------------------------------ cycle
    def schedule_one(self, qp: QueuedPod) -> None:
        """One synchronous cycle for a popped pod; the caller holds a binder slot for it.

        Never raises (see the module docstring): the pod ends handed to a binding task,
        requeued with a status, or dropped because it is gone."""
        slot = _Slot(self.binder)
        try:
            self._schedule_one(qp, slot)
        except Exception as exc:
            status = self._internal_error(qp.pod, "cycle", exc)
            self.stats.errors += 1
            self._recover(qp, status)
            slot.release()

    def _recover(self, qp: QueuedPod, status: Status) -> None:
        """Last resort after a bug in the cycle's own bookkeeping: whatever of the pod is
        assumed but not handed to a binding task is forgotten, and the pod requeued."""
        key = qp.key
        if key in self.binder.in_flight:
            return  # the binding task owns it now, and its rollback
        waiting = self.waiting.get(qp.pod.uid)
        if waiting is not None:
            waiting.reject("", "internal error")
            self.waiting.remove(waiting)
        if self.ledger.node_of(key) is not None:
            self.ledger.forget(key)
        requeued = self.queue.where(key) == IN_FLIGHT and self.queue.requeue(qp, status)
        if requeued and self.reporter is not None:
            self.reporter.unschedulable(qp.pod, status.message, error=True)

    def _schedule_one(self, qp: QueuedPod, slot: _Slot) -> None:
        pod = qp.pod
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None or pod.deleting:
            self.queue.done(pod.key)
            slot.release()
            return
        start = self.clock()
        self.stats.attempts += 1
        decided = self._guarded(pod, "decide", lambda: profile.algorithm.schedule(pod))
        decision = Decision(pod, decided) if isinstance(decided, Status) else decided
        if decision.node is None:
            self._failed(qp, profile, decision)
            slot.release()
            self._attempt(
                "unschedulable" if decision.status.code != Code.ERROR else "error", profile, start
            )
            return
        node = decision.node
        self.ledger.assume(pod, node)
        job = BindJob(qp, pod, node, profile.framework, decision.state, started=start)
        status = self._reserve(job)
        waits: dict[str, float] = {}
        if status.ok:
            status, waits = self._permit(job)
        if not status.ok:
            self.rollback(job, status)
            slot.release()
            self._attempt("unschedulable" if status.code != Code.ERROR else "error", profile, start)
            return
        if waits:
            job.waiting = WaitingPod(pod.key, pod.uid, node, waits)
            self.waiting.add(job.waiting)
        self.stats.scheduled += 1
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "pod %s: %s of %d feasible nodes (%d examined)",
                pod.key,
                node,
                decision.feasible,
                decision.examined,
                extra={"pod": pod.key, "node": node, "profile": profile.framework.name},
            )
        slot.held = False  # the binding task owns the slot from here on
        self.binder.start(job)
        self._attempt("scheduled", profile, start)

    def _attempt(self, result: AttemptResult, profile: ProfileRuntime, start: float) -> None:
        if self._on_attempt is not None:
            self._on_attempt(result, profile.framework.name, self.clock() - start)

    def _reserve(self, job: BindJob) -> Status:
        for plugin in job.framework.reserve:
            status = self._guarded(
                job.pod,
                "Reserve",
                functools.partial(plugin.reserve, job.state, job.pod, job.node),
                plugin.name,
            )
            if not status.ok:
                return status if status.plugin else status.with_plugin(plugin.name)
        return Status.success()

    def _permit(self, job: BindJob) -> tuple[Status, dict[str, float]]:
        waits: dict[str, float] = {}
        for plugin in job.framework.permit:
            answer = self._guarded(
                job.pod,
                "Permit",
                functools.partial(plugin.permit, job.state, job.pod, job.node),
                plugin.name,
            )
            status, timeout = (answer, 0.0) if isinstance(answer, Status) else answer
            if status.code == Code.WAIT:
                waits[plugin.name] = timeout
            elif not status.ok:
                return (status if status.plugin else status.with_plugin(plugin.name)), {}
        return Status.success(), waits

    def _failed(self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision) -> None:
        """No node: record who rejected it, requeue, and tell the pod why (cold path)."""
        diagnosed = self._guarded(
            qp.pod, "diagnose", functools.partial(self._diagnose, qp, profile, decision)
        )
        if isinstance(diagnosed, Status):
            status, nominated, rejectors = diagnosed, None, frozenset[str]()
        else:
            status, nominated, rejectors = diagnosed
        if status.code == Code.ERROR:
            self.stats.errors += 1
        else:
            self.stats.unschedulable += 1
        message = status.message
        if self.queue.requeue(qp, status):
            self.queue.reject_plugins(qp, rejectors)
            if self.reporter is not None:
                error = status.code == Code.ERROR
                self.reporter.unschedulable(qp.pod, message, nominated, error=error)
        logger.debug("pod %s unschedulable: %s", qp.pod.key, message)

    def _diagnose(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision
    ) -> tuple[Status, str | None, frozenset[str]]:
        """The failed attempt's status (with upstream's message), PostFilter's nomination
        and the plugins that rejected the pod somewhere."""
        if decision.status.code == Code.ERROR:
            return Status.error(decision.status.message), None, frozenset()
        rejectors = frozenset(s.plugin for s in decision.failures().values() if s.plugin)
        if decision.pre_filter is not None and not decision.pre_filter.status.ok:
            rejectors = frozenset({decision.pre_filter.status.plugin})
        nominated: str | None = None
        post_filter = ""
        if profile.framework.post_filter:
            result = self._post_filter(qp, profile, decision)
            nominated = result.nominated_node
            post_filter = "" if result.status.ok else result.status.message
        message = decision.message(post_filter=post_filter)
        status = Status(decision.status.code, (message,), next(iter(sorted(rejectors)), ""))
        return status, nominated, rejectors

    def _post_filter(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision
    ) -> PostFilterResult:
        """Run PostFilter (preemption) and act on a nomination (cold path)."""
        table = self.ledger.table
        if self.evictions is not None and self.evictions.running(qp.pod.key):
            # its victims are still being evicted: no second preemption meanwhile (upstream
            # gates such a pod until its preemption finishes)
            waiting = "waiting for the preemption for this pod to be finished"
            return PostFilterResult(Status.unschedulable(waiting, plugin="DefaultPreemption"))
        statuses = decision.statuses()
        result = PostFilterResult(Status.unschedulable(plugin=""))
        for plugin in profile.framework.post_filter:
            metrics.count_preemption_attempt()
            result = plugin.post_filter(decision.state, qp.pod, table, statuses, profile.framework)
            if result.status.ok or result.status.code in (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                Code.ERROR,
            ):
                break
        node = result.nominated_node
        if node is None:
            return result
        table.nominations.set(qp.pod, node)
        for key in result.cleared:
            table.nominations.supersede(key)
            if self.reporter is not None:
                self.reporter.forget_nomination(key)
        if node:
            metrics.observe_preemption_victims(len(result.victims))
            logger.info(
                "pod %s: preempting %d pod(s) on %s",
                qp.pod.key,
                len(result.victims),
                node,
                extra={"pod": qp.pod.key, "node": node, "profile": profile.framework.name},
            )
            if self.evictions is not None:
                self.evictions.start(
                    qp.pod, node, result.victims, result.cleared, profile.framework.name
                )
        return result

    def preemption_failed(self, preemptor: PodInfo, node: str) -> None:
        """Evictions for ``preemptor`` on ``node`` failed: drop that nomination (not a newer
        one) so the pod tries afresh."""
        table = self.ledger.table
        if table.nominations.node_of(preemptor.key) != node:
            return
        table.nominations.clear(preemptor.key)
        if self.reporter is not None:
            self.reporter.unschedulable(preemptor, "preemption: evicting victims failed", "")
        self.queue.move(ClusterEvent.ASSIGNED_POD_DELETE)

    # ------------------------------------------------------------------ outcomes
    def bound(self, job: BindJob) -> None:
        """The API accepted the binding. The ledger keeps it until the watch confirms."""
        self.stats.bound += 1
        self.queue.done(job.pod.key)
        for plugin in job.framework.post_bind:  # informational: a failure changes nothing
            self._guarded(
                job.pod,
                "PostBind",
                functools.partial(plugin.post_bind, job.state, job.pod, job.node),
                plugin.name,
            )
        if self.reporter is not None:
            self.reporter.scheduled(job.pod, job.node)
        if self._on_bound is not None:
            self._on_bound(job, self.clock())

    def rollback(self, job: BindJob, status: Status) -> None:
        """The single way back from any failure after assume; see the module docstring."""
        self.stats.rolled_back += 1
        for plugin in reversed(job.framework.reserve):  # each runs, whatever the others do
            self._guarded(
                job.pod,
                "Unreserve",
                functools.partial(plugin.unreserve, job.state, job.pod, job.node),
                plugin.name,
            )
        if job.waiting is not None:
            job.waiting.reject("", "rolled back")
            self.waiting.remove(job.waiting)
        self.ledger.forget(job.pod.key)
        gone = status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and status.plugin in {
            p.name for p in job.framework.bind
        }
        if gone:
            self.queue.done(job.pod.key)  # the watch tells where it went (or that it is gone)
        else:
            message = (
                diagnosis.fit_error_message(1, status.reasons)
                if status.code.rejected
                else status.message
            )
            requeued = self.queue.requeue(job.qp, Status(status.code, (message,), status.plugin))
            if requeued and self.reporter is not None:
                error = status.code == Code.ERROR
                self.reporter.unschedulable(job.pod, message, error=error)
        self.queue.move(ClusterEvent.ASSIGNED_POD_DELETE)  # what it held may help others
        logger.debug("rolled back %s from %s: %s", job.pod.key, job.node, status.message)
