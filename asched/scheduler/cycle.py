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

Nothing one pod carries may stop the loop: every extension point runs in the
:class:`~asched.framework.runtime.Framework`, which contains a plugin's exception as an
Error status for that pod (:mod:`asched.framework.contain`: logged with its key and
traceback, counted in ``asched_internal_errors_total``); the decision and its diagnosis
are contained the same way here, so the pod is reported and retried with backoff and the
loop goes on. One last-resort guard (``_last_resort``), around ``schedule_one`` and
``conclude``, contains a bug in asched's own bookkeeping.

The cycle tells one :class:`~asched.scheduler.observe.Observers` what happens (metrics,
the reporter, the debug pages' recorder, composed by the app); it imports none of them.

``schedule_one`` returns the bind job (or None): the loop that took a binder slot for the
cycle is the one place that hands it to a binding task or releases it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial

import numpy as np

from asched.engine.algorithm import Algorithm, Decision
from asched.extenders import consult, extender, preempt_bind
from asched.extenders.consult import Consultation, Pending, Preemption
from asched.extenders.extender import Extender
from asched.framework import contain
from asched.framework.events import ClusterEvent
from asched.framework.status import Code, Status
from asched.framework.waiting import WaitingPod, WaitingPods
from asched.queue.queued import QueuedPod
from asched.queue.scheduling_queue import IN_FLIGHT, SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.failures import FailureHandler, gang_refusal, rollback_message
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.parts import (
    Assumed,
    CycleStats,
    Failed,
    GangAdmission,
    Outcome,
    ProfileRuntime,
    RolledBack,
)
from asched.scheduler.raw import RawObjects

logger = logging.getLogger(__name__)


class Scheduler:
    """Decides and hands off; owns the rollback. See the module docstring."""

    def __init__(
        self,
        *,
        profiles: Mapping[str, ProfileRuntime],
        queue: SchedulingQueue,
        ledger: Ledger,
        binder_factory: Callable[[Scheduler], Binder],
        observer: Observers | None = None,
        clock: Callable[[], float] = time.monotonic,
        extenders: Sequence[Extender] = (),
        raw: RawObjects | None = None,
        waiting: WaitingPods | None = None,
        gangs: GangAdmission | None = None,
    ) -> None:
        self.profiles = profiles
        #: gang scheduling's bookkeeping (None: no profile enables Coscheduling)
        self.gangs = gangs
        #: who hears of every attempt: metrics, the reporter, the debug pages' recorder
        #: (composed by the app; :mod:`asched.scheduler.observe`)
        self.observer = observer if observer is not None else Observers()
        #: the configured extenders, in upstream's call order
        self.extenders = tuple(extenders)
        self._binders = tuple(e for e in self.extenders if e.is_binder)
        self._preempters = tuple(e for e in self.extenders if e.supports_preemption)
        #: the JSON extenders are sent (filled by the ingest)
        self.raw = raw if raw is not None else RawObjects(nodes=False)
        self.queue = queue
        self.ledger = ledger
        self.clock = clock
        self.waiting = waiting if waiting is not None else WaitingPods()
        self.stats = CycleStats()
        self.binder = binder_factory(self)
        #: what becomes of an attempt that found no node (and of a failed eviction)
        self.failures = FailureHandler(
            queue=queue,
            ledger=ledger,
            observer=self.observer,
            stats=self.stats,
            raw=self.raw,
            extenders=self.extenders,
        )

    def schedule_one(self, qp: QueuedPod) -> BindJob | Pending | None:
        """One synchronous cycle for a popped pod: the job to hand to a binding task, the
        consultation to hand to an extender task (:mod:`asched.extenders.consult`), or
        None when the pod went back to the queue (or away).

        The caller holds a binder slot for the cycle: it gives the slot to the task with
        the job or the consultation, or releases it on None (one owner, see
        ``App.schedule_loop``). Never raises (see the module docstring)."""
        return self._last_resort(qp, "cycle", partial(self._schedule_one, qp))

    def _last_resort(
        self, qp: QueuedPod, where: str, step: Callable[[], BindJob | Pending | None]
    ) -> BindJob | Pending | None:
        """Run a synchronous step of the pod's attempt; a bug in the cycle's own
        bookkeeping (an exception) is contained there: logged and counted as ``where``,
        whatever of the pod is assumed forgotten, the pod requeued and told why."""
        try:
            return step()
        except Exception as exc:
            status = contain.failed(qp.pod, where, exc)
            self.stats.errors += 1
            self._recover(qp, status)
            return None

    def _recover(self, qp: QueuedPod, status: Status) -> None:
        key = qp.key
        waiting = self.waiting.get(qp.pod.uid)
        if waiting is not None:
            waiting.reject("", "internal error")
            self.waiting.remove(waiting)
        if self.ledger.node_of(key) is not None:
            self.ledger.forget(key)
        requeued = self.queue.where(key) == IN_FLIGHT and self.queue.requeue(qp, status)
        if requeued:
            self.observer.unschedulable(qp.pod, status.message, error=True)

    def _schedule_one(self, qp: QueuedPod) -> BindJob | Pending | None:
        pod = qp.pod
        profile = self.profiles.get(pod.scheduler_name)
        if profile is None or pod.deleting:
            self.queue.done(pod.key)
            return None
        self.stats.attempts += 1
        start = self.clock()
        return self._settle(qp, profile, start, self._decide(qp, profile, start))

    def _settle(
        self, qp: QueuedPod, profile: ProfileRuntime, start: float, outcome: Outcome
    ) -> BindJob | Pending | None:
        """The one handler of a decision's outcome: the attempt's metric, then the job to
        bind, the consultation to run, or the failure's requeue and report (or the
        preemption to ask the extenders about first)."""
        if outcome is None or isinstance(outcome, Consultation):
            return outcome  # nothing to count: the pod went, or the attempt goes on
        if isinstance(outcome, Assumed):
            self._attempt(None, profile, start)
            return outcome.job
        if isinstance(outcome, RolledBack):
            self._attempt(outcome.status, profile, start)
            return None
        self._attempt(outcome.decision.status, profile, start)
        return self.failures.handle(
            qp, profile, outcome.decision, extender_filtered=outcome.extender_filtered
        )

    def _decide(
        self,
        qp: QueuedPod,
        profile: ProfileRuntime,
        start: float,
        *,
        rounds: int = 1,
        nominated: bool = True,
    ) -> Outcome:
        """The in-tree decision; for a pod an extender wants to see, the consultation to
        run instead of choosing (see :mod:`asched.extenders.consult`)."""
        pod = qp.pod
        algorithm = profile.algorithm
        if pod.gang and profile.gang_need is not None and self.gangs is not None:
            refused = gang_refusal(self.gangs, pod, profile)
            if refused is not None:
                return refused
        pod_json = self.raw.pod(pod) if self.extenders else None
        consulting = pod_json is not None and consult.interested(self.extenders, pod_json)
        decided = contain.guarded(
            pod,
            "decide",
            partial(algorithm.candidates, pod, nominated=nominated, keep_pre_state=consulting),
        )
        decision = Decision(pod, decided) if isinstance(decided, Status) else decided
        if decision.candidates is None:
            return Failed(decision)
        if consulting:
            assert pod_json is not None
            table = self.ledger.table
            sent, rows = consult.names_of(table, decision.candidates)
            return Consultation(
                qp,
                profile,
                pod_json,
                sent,
                rows,
                table.epoch,
                decision.nominated_only,
                start,
                rounds,
                pre_state=decision.pre_state,
            )
        candidates = decision.candidates
        chosen = contain.guarded(pod, "decide", partial(algorithm.choose, decision, candidates))
        if isinstance(chosen, Status):
            return Failed(Decision(pod, chosen))
        self.observer.chosen(qp, algorithm, decision, candidates)
        return self._assume(qp, profile, decision, start)

    def _assume(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision, start: float
    ) -> Assumed | RolledBack:
        """Assume, Reserve and Permit the chosen node: the bind job, or rolled back."""
        pod = qp.pod
        node = decision.node
        assert node is not None
        framework = profile.framework
        self.ledger.assume(pod, node)
        job = BindJob(qp, pod, node, framework, decision.state, started=start)
        if self._binders:
            job.extender_bind = partial(
                preempt_bind.run_bind, self._binders, pod, self.raw.pod(pod), node
            )
        status = framework.run_reserve(job.state, pod, node)
        waits: dict[str, float] = {}
        if status.ok:
            status, waits = framework.run_permit(job.state, pod, node)
        if not status.ok:
            self.rollback(job, status)
            return RolledBack(status)
        if waits:
            job.waiting = WaitingPod(pod.key, pod.uid, node, waits)
            self.waiting.add(job.waiting)
        self.observer.assumed(pod.key, node, waits)
        self.stats.scheduled += 1
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "pod %s: %s of %d feasible nodes (%d examined)",
                pod.key,
                node,
                decision.feasible,
                decision.examined,
                extra={"pod": pod.key, "node": node, "profile": framework.name},
            )
        return Assumed(job)

    async def ask(self, pending: Pending) -> None:
        """The extender calls of a consultation or preemption (in its task, outside the
        cycle)."""
        if isinstance(pending, Preemption):
            await consult.ask_preemption(self._preempters, pending, self.ledger.table)
        else:
            await consult.ask(self.extenders, pending, self.raw.node)

    def conclude(self, pending: Pending) -> BindJob | Pending | None:
        """The extenders answered: decide (or preempt) against the current table
        (synchronous, see :mod:`asched.extenders.consult`). Never raises."""
        if isinstance(pending, Preemption):
            return self._last_resort(
                pending.qp, "extenders", partial(self.failures.conclude_preemption, pending)
            )
        consultation = pending
        return self._last_resort(
            consultation.qp,
            "extenders",
            lambda: self._settle(
                consultation.qp,
                consultation.profile,
                consultation.started,
                self._conclude(consultation),
            ),
        )

    def abandon(self, pending: Pending, status: Status) -> None:
        """A consultation that cannot finish (cancelled, or a bug in its calls): the pod
        goes back, with backoff, and is told why."""
        qp = pending.qp
        self.stats.errors += 1
        requeued = self.queue.where(qp.key) == IN_FLIGHT and self.queue.requeue(qp, status)
        if requeued:
            self.observer.unschedulable(qp.pod, status.message, error=True)

    def _conclude(self, consultation: Consultation) -> Outcome:
        qp, profile, start = consultation.qp, consultation.profile, consultation.started
        pod = qp.pod
        if self.queue.deleted_in_flight(pod.key):
            self.queue.done(pod.key)  # deleted meanwhile: nothing to bind
            return None
        if consultation.error is not None:
            status = Status.error(str(consultation.error), plugin=extender.EXTENDER_NAME)
            return Failed(Decision(pod, status))
        outcome = consultation.outcome
        assert outcome is not None
        table = self.ledger.table
        rows = consult.feasible_rows(table, consultation)
        accepted = np.zeros(table.size, dtype=np.bool_)
        accepted[rows] = True
        # the in-tree Filters again, on the accepted rows only (PreFilter over the table)
        algorithm = profile.algorithm
        decided = contain.guarded(
            pod,
            "decide",
            partial(
                algorithm.candidates,
                pod,
                nominated=False,
                sample=False,
                within=accepted,
                pre_state=consultation.pre_state,
            ),
        )
        consultation.pre_state = None  # the conclusion's own now, whatever comes
        if isinstance(decided, Status):  # a plugin raised: the pod's attempt fails, contained
            return Failed(Decision(pod, decided))
        decision = decided
        if decision.pre_filter is None or not decision.pre_filter.status.ok:
            return Failed(decision)  # the cluster changed that much
        if decision.candidates is not None:  # some row left (feasible: their count)
            mask = decision.candidates
            extra = consult.score_rows(table, consultation)
            chose = contain.guarded(pod, "decide", partial(algorithm.choose, decision, mask, extra))
            if isinstance(chose, Status):
                return Failed(Decision(pod, chose))
            answers = partial(consult.consulted, consultation, self.extenders)
            self.observer.chosen(qp, algorithm, decision, mask, answers)
            return self._assume(qp, profile, decision, start)
        again = bool(rows.size) or (consultation.nominated_only and not outcome.feasible)
        if again and consultation.rounds < consult.MAX_ROUNDS:
            # what the extenders accepted no longer fits (or upstream's nominated-node
            # shortcut failed): decide again, with a new consultation
            return self._decide(
                qp,
                profile,
                start,
                rounds=consultation.rounds + 1,
                nominated=not consultation.nominated_only,
            )
        return self._extenders_refused(consultation, algorithm)

    def _extenders_refused(self, consultation: Consultation, algorithm: Algorithm) -> Failed:
        """No node is left of what the extenders accepted: the failure, explained over
        every row, as an unrestricted conclusion would, with the extenders' reasons."""
        pod = consultation.qp.pod
        outcome = consultation.outcome
        assert outcome is not None
        table = self.ledger.table
        explained = contain.guarded(
            pod, "decide", partial(algorithm.candidates, pod, nominated=False, sample=False)
        )
        if isinstance(explained, Status):
            return Failed(Decision(pod, explained))
        decision = explained
        for name, status in outcome.statuses.items():
            row = table.row_of(name)
            if row is not None:
                decision.extender_failures[row] = status
        decision.status = Status.unschedulable(plugin="")
        decision.candidates = None
        return Failed(decision, extender_filtered=outcome.filtered)

    def _attempt(self, failure: Status | None, profile: ProfileRuntime, start: float) -> None:
        self.observer.attempted(failure, profile.framework.name, self.clock() - start)

    def bound(self, job: BindJob) -> None:
        """The API accepted the binding. The ledger keeps it until the watch confirms."""
        self.stats.bound += 1
        if job.waiting is not None:
            self.waiting.remove(job.waiting)  # allowed at Permit, and bound since
        self.queue.done(job.pod.key)
        job.framework.run_post_bind(job.state, job.pod, job.node)
        self.observer.bound(job, self.clock())

    def rollback(self, job: BindJob, status: Status) -> None:
        """The single way back from any failure after assume; see the module docstring."""
        self.stats.rolled_back += 1
        job.framework.run_unreserve(job.state, job.pod, job.node)
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
            message = rollback_message(job.pod, status, self.gangs)
            requeued = self.queue.requeue(job.qp, Status(status.code, (message,), status.plugin))
            if requeued:
                self.observer.unschedulable(job.pod, message, error=status.code == Code.ERROR)
        self.observer.outcome(job.pod.key, f"rolled back from {job.node}: {status.message}")
        self.queue.move(ClusterEvent.ASSIGNED_POD_DELETE)  # what it held may help others
        logger.debug("rolled back %s from %s: %s", job.pod.key, job.node, status.message)
