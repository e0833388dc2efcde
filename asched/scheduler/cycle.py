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
from dataclasses import dataclass
from functools import partial

import numpy as np

from asched import metrics
from asched.cluster.names import PodKey
from asched.cluster.records import PodInfo
from asched.engine.algorithm import Algorithm, Decision
from asched.extenders import consult, extender
from asched.extenders.consult import Consultation, Pending, Preemption
from asched.extenders.extender import Extender
from asched.extenders.preemption import NO_CANDIDATE, preempting
from asched.framework import contain, diagnosis
from asched.framework.builtin.coscheduling import NAME as COSCHEDULING
from asched.framework.builtin.default_preemption import PREFIX as PREEMPTION_PREFIX
from asched.framework.events import ClusterEvent
from asched.framework.interface import PostFilterResult, PreFilterOutcome
from asched.framework.preemption import CandidateSelector
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.framework.waiting import WaitingPod, WaitingPods
from asched.gangs.host import GangRuntime, NeedOf
from asched.metrics import AttemptResult
from asched.queue.queued import QueuedPod
from asched.queue.scheduling_queue import IN_FLIGHT, SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.evictions import Evictions
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.raw import RawObjects

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class ProfileRuntime:
    """One profile's framework and its decision algorithm (cache, start index, rng).

    ``gang_need``: how a gang member's resources are counted for the whole-gang check,
    when the profile enables Coscheduling (None: it does not; gangs are not checked)."""

    framework: Framework
    algorithm: Algorithm
    gang_need: NeedOf | None = None


@dataclass(slots=True)
class CycleStats:
    """Counters the benchmarks and tests read (metrics have their own registry)."""

    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    bound: int = 0
    rolled_back: int = 0


@dataclass(frozen=True, slots=True)
class Assumed:
    """The pod is assumed, reserved and permitted (or waiting): its bind job."""

    job: BindJob


@dataclass(frozen=True, slots=True)
class Failed:
    """No node: the decision that says why (its status: Unschedulable, or an Error).

    ``extender_filtered``: an extender removed nodes; upstream then counts
    :data:`~asched.extenders.extender.EXTENDER_NAME` among the rejectors, so that any
    cluster event requeues the pod."""

    decision: Decision
    extender_filtered: bool = False


@dataclass(frozen=True, slots=True)
class RolledBack:
    """Reserve or Permit refused the assumed pod; the rollback has requeued it."""

    status: Status


#: What one decision comes to: the pod to bind, the extenders to ask first, the failure
#: to handle, a rollback already done, or None (the pod went away: nothing to count).
Outcome = Assumed | Consultation | Failed | RolledBack | None


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
        evictions_factory: Callable[[Scheduler], Evictions] | None = None,
        extenders: Sequence[Extender] = (),
        raw: RawObjects | None = None,
        waiting: WaitingPods | None = None,
        gangs: GangRuntime | None = None,
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
        self._extender_names = frozenset(e.name for e in self.extenders)
        #: the JSON extenders are sent (filled by the ingest)
        self.raw = raw if raw is not None else RawObjects(nodes=False)
        self.queue = queue
        self.ledger = ledger
        self.clock = clock
        self.waiting = waiting if waiting is not None else WaitingPods()
        self.stats = CycleStats()
        self.binder = binder_factory(self)
        self.evictions = evictions_factory(self) if evictions_factory is not None else None

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
            self._attempt("scheduled", profile, start)
            return outcome.job
        if isinstance(outcome, RolledBack):
            self._attempt(_result(outcome.status), profile, start)
            return None
        self._attempt(_result(outcome.decision.status), profile, start)
        return self._failed(
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
            admit = partial(self.gangs.admit, pod, algorithm, profile.gang_need)
            refused = contain.guarded(pod, "decide", admit)
            if refused is not None:
                outcome = PreFilterOutcome(refused)
                return Failed(Decision(pod, refused, pre_filter=outcome, _algorithm=algorithm))
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
                extender.run_bind, self._binders, pod, self.raw.pod(pod), node
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
                pending.qp, "extenders", partial(self._conclude_preemption, pending)
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
        # the failure is explained over every row, as an unrestricted conclusion would
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

    def _attempt(self, result: AttemptResult, profile: ProfileRuntime, start: float) -> None:
        self.observer.attempted(result, profile.framework.name, self.clock() - start)

    def _failed(
        self,
        qp: QueuedPod,
        profile: ProfileRuntime,
        decision: Decision,
        *,
        extender_filtered: bool = False,
    ) -> Preemption | None:
        """No node: record who rejected it, requeue, and tell the pod why (cold path);
        or, when preempting extenders must be asked first, the :class:`Preemption` to
        hand to their task (the pod stays in flight until it concludes).

        ``extender_filtered``: an extender removed nodes; upstream then counts
        :data:`~asched.extenders.extender.EXTENDER_NAME` among the rejectors, so that any
        cluster event requeues the pod."""
        diagnosed = contain.guarded(
            qp.pod, "diagnose", partial(self._diagnose, qp, profile, decision)
        )
        if isinstance(diagnosed, Preemption):
            if extender_filtered:
                diagnosed.rejectors = self._with_extender(diagnosed.rejectors)
            return diagnosed
        if isinstance(diagnosed, Status):
            status, nominated, rejectors = diagnosed, None, frozenset[str]()
            self.observer.failed(qp, None, decision, status.message)
        else:
            status, nominated, rejectors = diagnosed
        if extender_filtered:
            rejectors = self._with_extender(rejectors)
        self._requeue_failed(qp, status, nominated, rejectors)
        return None

    def _with_extender(self, rejectors: frozenset[str]) -> frozenset[str]:
        return (rejectors - self._extender_names) | {extender.EXTENDER_NAME}

    def _requeue_failed(
        self, qp: QueuedPod, status: Status, nominated: str | None, rejectors: frozenset[str]
    ) -> None:
        if status.code == Code.ERROR:
            self.stats.errors += 1
        else:
            self.stats.unschedulable += 1
        message = status.message
        if self.queue.requeue(qp, status, rejectors):
            self.observer.unschedulable(qp.pod, message, nominated, error=status.code == Code.ERROR)
        self.observer.outcome(qp.key, "requeued")
        logger.debug("pod %s unschedulable: %s", qp.pod.key, message)

    def _diagnose(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision
    ) -> tuple[Status, str | None, frozenset[str]] | Preemption:
        """The failed attempt's status (with upstream's message), PostFilter's nomination
        and the plugins that rejected the pod somewhere; or the preemption to finish once
        the preempting extenders have answered."""
        if decision.status.code == Code.ERROR:
            status = Status.error(decision.status.message)
            self.observer.failed(qp, profile.algorithm, decision, status.message)
            return status, None, frozenset()
        rejectors = frozenset(s.plugin for s in decision.failures().values() if s.plugin)
        if decision.pre_filter is not None and not decision.pre_filter.status.ok:
            rejectors = frozenset({decision.pre_filter.status.plugin})
        nominated: str | None = None
        post_filter = ""
        result: PostFilterResult | None = None
        if profile.framework.post_filter:
            found = self._post_filter(qp, profile, decision)
            if isinstance(found, Preemption):
                found.rejectors = rejectors
                return found
            result = found
            nominated = result.nominated_node
            post_filter = "" if result.status.ok else result.status.message
        status = self._failure(decision, rejectors, post_filter)
        self.observer.failed(qp, profile.algorithm, decision, status.message, result)
        return status, nominated, rejectors

    @staticmethod
    def _failure(decision: Decision, rejectors: frozenset[str], post_filter: str) -> Status:
        message = decision.message(post_filter=post_filter)
        return Status(decision.status.code, (message,), next(iter(sorted(rejectors)), ""))

    def _post_filter(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision
    ) -> PostFilterResult | Preemption:
        """Run PostFilter (preemption) and act on a nomination (cold path). With preempting
        extenders interested in the pod, stop at the candidates: the :class:`Preemption`
        to finish after their answer."""
        table = self.ledger.table
        if self.evictions is not None and self.evictions.running(qp.pod.key):
            # its victims are still being evicted: no second preemption meanwhile (upstream
            # gates such a pod until its preemption finishes)
            waiting = "waiting for the preemption for this pod to be finished"
            return PostFilterResult(Status.unschedulable(waiting, plugin="DefaultPreemption"))
        framework = profile.framework
        selector = _candidate_selector(framework.post_filter) if self._preempters else None
        if selector is not None:
            pod_json = self.raw.pod(qp.pod)
            if preempting(self._preempters, pod_json):
                metrics.count_preemption_attempt()
                found = selector.find_candidates(
                    decision.state, qp.pod, table, decision.statuses(), framework
                )
                if not isinstance(found, PostFilterResult):
                    return Preemption(qp, profile, pod_json, decision, selector, found)
                return self._nominate(qp, profile, found)
        result = framework.run_post_filter(decision.state, qp.pod, table, decision.statuses())
        return self._nominate(qp, profile, result)

    def _nominate(
        self, qp: QueuedPod, profile: ProfileRuntime, result: PostFilterResult
    ) -> PostFilterResult:
        """Act on PostFilter's nomination: record it, end the nominations it supersedes,
        start evicting its victims."""
        table = self.ledger.table
        node = result.nominated_node
        if node is None:
            return result
        table.nominations.set(qp.pod, node)
        for key in result.cleared:
            table.nominations.supersede(key)
            self.observer.nomination_superseded(PodKey(key))  # (a plugin's str)
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

    def _conclude_preemption(self, preemption: Preemption) -> None:
        """The preempting extenders answered: keep the candidates they left whose victims
        are all still where they were, select one and nominate (synchronous)."""
        qp, decision = preemption.qp, preemption.decision
        if self.queue.deleted_in_flight(qp.key):
            self.queue.done(qp.key)
            return
        table = self.ledger.table
        if preemption.error is not None:
            message = f"{PREEMPTION_PREFIX}{preemption.error}"
            result = PostFilterResult(Status.error(message, plugin=extender.EXTENDER_NAME))
        else:
            candidates = consult.still_valid(table, preemption.answer)
            if candidates:
                chosen = preemption.selector.select_candidate(qp.pod, table, candidates)
                result = self._nominate(qp, preemption.profile, chosen)
            else:
                message = f"{PREEMPTION_PREFIX}{NO_CANDIDATE}"
                result = PostFilterResult(Status.unschedulable(message, plugin=""))
        post_filter = "" if result.status.ok else result.status.message
        status = self._failure(decision, preemption.rejectors, post_filter)
        self.observer.failed(qp, preemption.profile.algorithm, decision, status.message, result)
        self._requeue_failed(qp, status, result.nominated_node, preemption.rejectors)

    def preemption_failed(self, preemptor: PodInfo, node: str) -> None:
        """Evictions for ``preemptor`` on ``node`` failed: drop that nomination (not a newer
        one) so the pod tries afresh."""
        table = self.ledger.table
        if table.nominations.node_of(preemptor.key) != node:
            return
        table.nominations.clear(preemptor.key)
        self.observer.unschedulable(preemptor, "preemption: evicting victims failed", "")
        self.queue.move(ClusterEvent.ASSIGNED_POD_DELETE)

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
            message = (
                diagnosis.fit_error_message(1, status.reasons)
                if status.code.rejected
                else status.message
            )
            if job.pod.gang and status.plugin == COSCHEDULING and self.gangs is not None:
                message = self.gangs.describe(job.pod.gang, message)
            requeued = self.queue.requeue(job.qp, Status(status.code, (message,), status.plugin))
            if requeued:
                self.observer.unschedulable(job.pod, message, error=status.code == Code.ERROR)
        self.observer.outcome(job.pod.key, f"rolled back from {job.node}: {status.message}")
        self.queue.move(ClusterEvent.ASSIGNED_POD_DELETE)  # what it held may help others
        logger.debug("rolled back %s from %s: %s", job.pod.key, job.node, status.message)


def _candidate_selector(post_filter: Sequence[object]) -> CandidateSelector | None:
    """The profile's PostFilter plugin when it is the only one and preempts in two halves
    (DefaultPreemption); preempting extenders are consulted through it."""
    if len(post_filter) == 1 and isinstance(post_filter[0], CandidateSelector):
        return post_filter[0]
    return None


def _result(status: Status) -> AttemptResult:
    """How a failed attempt counts: an error, or unschedulable."""
    return "error" if status.code == Code.ERROR else "unschedulable"
