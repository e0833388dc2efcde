"""The one handler of a failed attempt: diagnose, PostFilter, nominate, requeue, report.

Upstream splits the same work between ``schedulingCycle``'s PostFilter call and the
``FailureHandler`` (pkg/scheduler/schedule_one.go, ``handleSchedulingFailure``). Here a
failed decision comes to :meth:`FailureHandler.handle`, which

* diagnoses it: the status with upstream's message, and the plugins that rejected the pod
  somewhere (the queue's hints key on them);
* runs PostFilter (preemption) and acts on its nomination (records it, ends the
  nominations it supersedes, starts evicting the victims);
* or, when preempting extenders are interested in the pod, stops at the candidates and
  returns the :class:`~asched.extenders.consult.Preemption` for their task;
* requeues the pod (with the rejectors) and reports why, once.

Cold path: nothing here runs for a pod that fits.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial

from asched import metrics
from asched.cluster.names import PodKey
from asched.cluster.records import PodInfo
from asched.engine.algorithm import Decision
from asched.extenders import consult, extender
from asched.extenders.consult import Preemption
from asched.extenders.extender import Extender
from asched.extenders.preemption import NO_CANDIDATE, preempting
from asched.framework import contain, diagnosis
from asched.framework.builtin.coscheduling import NAME as COSCHEDULING
from asched.framework.builtin.default_preemption import PREFIX as PREEMPTION_PREFIX
from asched.framework.events import ClusterEvent
from asched.framework.interface import PostFilterResult, PreFilterOutcome
from asched.framework.preemption import CandidateSelector
from asched.framework.status import Code, Status
from asched.queue.queued import QueuedPod
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.evictions import Evictions
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.parts import CycleStats, Failed, GangAdmission, ProfileRuntime
from asched.scheduler.raw import RawObjects

logger = logging.getLogger(__name__)

#: what a diagnosis comes to when no extender is asked first: the status, PostFilter's
#: nomination (None: none; "": cleared) and the rejecting plugins
Diagnosis = tuple[Status, str | None, frozenset[str]]


class FailureHandler:
    """Handles the attempts that found no node (see the module docstring).

    ``extenders``: the configured ones (their names are folded into upstream's one
    extender rejector; the preempting ones are asked before a nomination);
    ``evictions``: where a nomination's victims go (None: nobody evicts, as in tests;
    set once they are built, as they report their failures here)."""

    def __init__(
        self,
        *,
        queue: SchedulingQueue,
        ledger: Ledger,
        observer: Observers,
        stats: CycleStats,
        raw: RawObjects,
        extenders: Sequence[Extender],
        evictions: Evictions | None = None,
    ) -> None:
        self._queue = queue
        self._ledger = ledger
        self._observer = observer
        self._stats = stats
        self._raw = raw
        self._preempters = tuple(e for e in extenders if e.supports_preemption)
        self._extender_names = frozenset(e.name for e in extenders)
        self.evictions = evictions

    def handle(
        self,
        qp: QueuedPod,
        profile: ProfileRuntime,
        decision: Decision,
        *,
        extender_filtered: bool = False,
    ) -> Preemption | None:
        """No node: record who rejected it, requeue, and tell the pod why; or, when
        preempting extenders must be asked first, the :class:`Preemption` to hand to
        their task (the pod stays in flight until it concludes).

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
            self._observer.failed(qp, None, decision, status.message)
        else:
            status, nominated, rejectors = diagnosed
        if extender_filtered:
            rejectors = self._with_extender(rejectors)
        self.requeue(qp, status, nominated, rejectors)
        return None

    def conclude_preemption(self, preemption: Preemption) -> None:
        """The preempting extenders answered: keep the candidates they left whose victims
        are all still where they were, select one and nominate (synchronous)."""
        qp, decision = preemption.qp, preemption.decision
        if self._queue.deleted_in_flight(qp.key):
            self._queue.done(qp.key)
            return
        table = self._ledger.table
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
        status = _failure(decision, preemption.rejectors, post_filter)
        self._observer.failed(qp, preemption.profile.algorithm, decision, status.message, result)
        self.requeue(qp, status, result.nominated_node, preemption.rejectors)

    def preemption_failed(self, preemptor: PodInfo, node: str) -> None:
        """Evictions for ``preemptor`` on ``node`` failed: drop that nomination (not a newer
        one) so the pod tries afresh."""
        table = self._ledger.table
        if table.nominations.node_of(preemptor.key) != node:
            return
        table.nominations.clear(preemptor.key)
        self._observer.unschedulable(preemptor, "preemption: evicting victims failed", "")
        self._queue.move(ClusterEvent.ASSIGNED_POD_DELETE)

    def requeue(
        self, qp: QueuedPod, status: Status, nominated: str | None, rejectors: frozenset[str]
    ) -> None:
        """Count the failure, requeue the pod with its rejectors and report it once."""
        if status.code == Code.ERROR:
            self._stats.errors += 1
        else:
            self._stats.unschedulable += 1
        message = status.message
        if self._queue.requeue(qp, status, rejectors):
            error = status.code == Code.ERROR
            self._observer.unschedulable(qp.pod, message, nominated, error=error)
        self._observer.outcome(qp.key, "requeued")
        logger.debug("pod %s unschedulable: %s", qp.pod.key, message)

    def _with_extender(self, rejectors: frozenset[str]) -> frozenset[str]:
        return (rejectors - self._extender_names) | {extender.EXTENDER_NAME}

    def _diagnose(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision
    ) -> Diagnosis | Preemption:
        """The failed attempt's status (with upstream's message), PostFilter's nomination
        and the plugins that rejected the pod somewhere; or the preemption to finish once
        the preempting extenders have answered."""
        if decision.status.code == Code.ERROR:
            status = Status.error(decision.status.message)
            self._observer.failed(qp, profile.algorithm, decision, status.message)
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
        status = _failure(decision, rejectors, post_filter)
        self._observer.failed(qp, profile.algorithm, decision, status.message, result)
        return status, nominated, rejectors

    def _post_filter(
        self, qp: QueuedPod, profile: ProfileRuntime, decision: Decision
    ) -> PostFilterResult | Preemption:
        """Run PostFilter (preemption) and act on a nomination. With preempting extenders
        interested in the pod, stop at the candidates: the :class:`Preemption` to finish
        after their answer."""
        table = self._ledger.table
        if self.evictions is not None and self.evictions.running(qp.pod.key):
            # its victims are still being evicted: no second preemption meanwhile (upstream
            # gates such a pod until its preemption finishes)
            waiting = "waiting for the preemption for this pod to be finished"
            return PostFilterResult(Status.unschedulable(waiting, plugin="DefaultPreemption"))
        framework = profile.framework
        selector = _candidate_selector(framework.post_filter) if self._preempters else None
        if selector is not None:
            pod_json = self._raw.pod(qp.pod)
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
        table = self._ledger.table
        node = result.nominated_node
        if node is None:
            return result
        table.nominations.set(qp.pod, node)
        for key in result.cleared:
            table.nominations.supersede(key)
            self._observer.nomination_superseded(PodKey(key))  # (a plugin's str)
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


def _failure(decision: Decision, rejectors: frozenset[str], post_filter: str) -> Status:
    """The attempt's status: the decision's code, upstream's message, a rejector."""
    message = decision.message(post_filter=post_filter)
    return Status(decision.status.code, (message,), next(iter(sorted(rejectors)), ""))


def _candidate_selector(post_filter: Sequence[object]) -> CandidateSelector | None:
    """The profile's PostFilter plugin when it is the only one and preempts in two halves
    (DefaultPreemption); preempting extenders are consulted through it."""
    if len(post_filter) == 1 and isinstance(post_filter[0], CandidateSelector):
        return post_filter[0]
    return None


def gang_refusal(gangs: GangAdmission, pod: PodInfo, profile: ProfileRuntime) -> Failed | None:
    """The whole-gang admission of a gang member (the profile's gang need): None when
    admitted, else the failed decision, refused at PreFilter (a raising admission is
    contained as the pod's Error)."""
    need = profile.gang_need
    assert need is not None
    algorithm = profile.algorithm
    refused = contain.guarded(pod, "decide", partial(gangs.admit, pod, algorithm, need))
    if refused is None:
        return None
    outcome = PreFilterOutcome(refused)
    return Failed(Decision(pod, refused, pre_filter=outcome, _algorithm=algorithm))


def rollback_message(pod: PodInfo, status: Status, gangs: GangAdmission | None) -> str:
    """What a rolled-back pod is told: upstream's fit error for a rejection at Reserve or
    Permit, else the status's own message; with the gang's state when Coscheduling
    refused a member."""
    if status.code.rejected:
        message = diagnosis.fit_error_message(1, status.reasons)
    else:
        message = status.message
    if pod.gang and status.plugin == COSCHEDULING and gangs is not None:
        message = gangs.describe(pod.gang, message)
    return message
