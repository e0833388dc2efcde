"""What the cycle tells about each attempt, and who listens.

The cycle speaks to one :class:`Observers` and knows nothing of its listeners. ``App``
composes it from the parts a run has:

* the metrics (every attempt's result and latency, every bound pod's end-to-end time),
  and the debug pages' rates, as two callbacks;
* the reporter, which writes PodScheduled conditions, events and nominations
  (:class:`~asched.scheduler.reporting.Reporter`);
* the debug pages' decision recorder (:class:`~asched.debug.recorder.Recorder`), when
  the debug listener is on; off, a decision costs one ``is None`` check here.

The parts are typed by what the cycle needs of them (:class:`Reporting`,
:class:`Recording`), so this layer imports neither the API writers nor the debug pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from asched.cluster.names import NodeName, PodKey
from asched.cluster.records import PodInfo
from asched.engine.algorithm import Algorithm, Decision
from asched.extenders.consult import Consulted
from asched.framework.interface import PostFilterResult
from asched.framework.status import Code, Status
from asched.metrics import AttemptResult
from asched.queue.queued import QueuedPod
from asched.scheduler.binder import BindJob

#: a decision's extender answers, built only when a recorder wants them
ConsultedOf = Callable[[], Consulted]


class Reporting(Protocol):
    """What the observers need of the reporter (the API writes about a pod)."""

    def unschedulable(
        self, pod: PodInfo, message: str, nominated: str | None = None, *, error: bool = False
    ) -> None: ...

    def forget_nomination(self, key: PodKey) -> None: ...

    def scheduled(self, pod: PodInfo, node: NodeName) -> None: ...


class Recording(Protocol):
    """What the observers need of the debug pages' decision recorder."""

    def chosen(
        self,
        qp: QueuedPod,
        algorithm: Algorithm,
        decision: Decision,
        mask: npt.NDArray[np.bool_],
        consulted: Consulted | None = None,
    ) -> None: ...

    def failed(
        self,
        qp: QueuedPod,
        algorithm: Algorithm | None,
        decision: Decision,
        message: str,
        post_filter: PostFilterResult | None = None,
    ) -> None: ...

    def outcome(self, key: str, text: str) -> None: ...

    def reason(self, key: str, message: str) -> None: ...

    def forget_reason(self, key: str) -> None: ...


@dataclass(slots=True)
class Observers:
    """The listeners of one run, behind the one object the cycle tells every outcome of
    an attempt as it happens.

    Each part is optional: a unit test composes only what it asserts on."""

    reporter: Reporting | None = None
    recorder: Recording | None = None
    #: ``(result, profile, seconds)``: the attempt metrics (and the debug pages' rates)
    on_attempt: Callable[[AttemptResult, str, float], None] | None = None
    #: ``(job, now)``: the end-to-end metrics (and rates) of a bound pod
    on_bound: Callable[[BindJob, float], None] | None = None

    def attempted(self, failure: Status | None, profile: str, seconds: float) -> None:
        """An attempt ended: scheduled (``failure`` None), or failed with that status (an
        error, or unschedulable)."""
        if self.on_attempt is not None:
            self.on_attempt(_result(failure), profile, seconds)

    def chosen(
        self,
        qp: QueuedPod,
        algorithm: Algorithm,
        decision: Decision,
        mask: npt.NDArray[np.bool_],
        consulted: ConsultedOf | None = None,
    ) -> None:
        if self.recorder is not None:
            answers = consulted() if consulted is not None else None
            self.recorder.chosen(qp, algorithm, decision, mask, answers)

    def failed(
        self,
        qp: QueuedPod,
        algorithm: Algorithm | None,
        decision: Decision,
        message: str,
        post_filter: PostFilterResult | None = None,
    ) -> None:
        if self.recorder is not None:
            self.recorder.failed(qp, algorithm, decision, message, post_filter)

    def outcome(self, key: PodKey, text: str) -> None:
        if self.recorder is not None:
            self.recorder.outcome(key, text)

    def assumed(self, key: PodKey, node: str, waits: Iterable[str]) -> None:
        """The pod is assumed on ``node`` (waiting at Permit for ``waits``); the text is
        made only when a recorder listens (this is on every pod's path)."""
        if self.recorder is not None:
            waiting = ", ".join(waits)
            suffix = f", waiting at Permit for {waiting}" if waiting else ""
            self.recorder.outcome(key, f"assumed on {node}{suffix}")

    def unschedulable(
        self, pod: PodInfo, message: str, nominated: str | None = None, *, error: bool = False
    ) -> None:
        if self.reporter is not None:
            self.reporter.unschedulable(pod, message, nominated, error=error)
        if self.recorder is not None:
            self.recorder.reason(pod.key, message)

    def nomination_superseded(self, key: PodKey) -> None:
        if self.reporter is not None:
            self.reporter.forget_nomination(key)

    def bound(self, job: BindJob, now: float) -> None:
        if self.reporter is not None:
            self.reporter.scheduled(job.pod, job.node)
        if self.recorder is not None:
            self.recorder.outcome(job.pod.key, f"bound to {job.node}")
            self.recorder.forget_reason(job.pod.key)
        if self.on_bound is not None:
            self.on_bound(job, now)


def _result(failure: Status | None) -> AttemptResult:
    """How an attempt counts: scheduled, an error, or unschedulable."""
    if failure is None:
        return "scheduled"
    return "error" if failure.code == Code.ERROR else "unschedulable"
