"""Extender consultations: the part of an attempt that waits for scheduler extenders.

Upstream calls extenders inside its cycle, so an extender's latency becomes the whole
scheduler's. asched splits an attempt whose pod some filtering or prioritizing extender
is interested in (:meth:`~asched.scheduler.cycle.Scheduler.schedule_one`):

1. **in the cycle** (synchronous): PreFilter, PreScore, the Filters and the sampling run
   as for any pod; the candidates' names go into a :class:`Consultation`, and the cycle
   moves on to the next pod. Nothing is assumed.
2. **in a task** (:func:`ask`, owned by the binder's TaskGroup, holding the pod's binder
   slot): the extenders' filters, chained, then every interested prioritizer at once
   when more than one node is left.
3. **in the same task, synchronous again**
   (:meth:`~asched.scheduler.cycle.Scheduler.conclude`): the in-tree Filters run again
   over the current table, the answer is kept to the nodes the extenders accepted, the
   in-tree scores are normalized over those and the extenders' scores added, and the
   pod is assumed, reserved and permitted as in the cycle. When the nodes the extenders
   accepted no longer fit, the pod is decided again (a new consultation), at most
   :data:`MAX_ROUNDS` times in all.

Whatever happened in between is seen by step 3: no over-commit, no pod bound twice. When
nothing changed, the filters answer as in step 1, so the nodes left, the scores and the
choice are upstream's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from asched.errors import ExtenderError
from asched.framework.extender import (
    Extender,
    ExtenderScores,
    FilterOutcome,
    NodeObjects,
    run_filters,
    run_prioritizers,
)
from asched.framework.extender_protocol import RawObject
from asched.queue.queued import QueuedPod

if TYPE_CHECKING:
    from asched.scheduler.cycle import ProfileRuntime

#: Decisions of one attempt, the first included, before a pod whose extender-accepted
#: nodes keep changing under it is reported with the current reasons and retried later.
MAX_ROUNDS: Final = 3


@dataclass(slots=True)
class Consultation:
    """One pod's attempt while its extenders are asked (see the module docstring).

    ``names`` are the candidates of the in-tree half, in node order; ``nominated_only``
    says they are the pod's nominated node alone (upstream then evaluates every node
    when the extenders reject it). The task fills ``outcome`` and ``scores``, or
    ``error`` when a non-ignorable filter failed.
    """

    qp: QueuedPod
    profile: ProfileRuntime
    pod_json: RawObject
    names: tuple[str, ...]
    nominated_only: bool
    started: float
    rounds: int = 1
    outcome: FilterOutcome | None = None
    scores: ExtenderScores | None = None
    error: ExtenderError | None = None


def interested(extenders: Sequence[Extender], pod_json: RawObject) -> bool:
    """Whether a filtering or prioritizing extender is interested in the pod."""
    return any(
        (extender.is_filter or extender.is_prioritizer) and extender.is_interested(pod_json)
        for extender in extenders
    )


async def ask(
    extenders: Sequence[Extender], consultation: Consultation, node_objects: NodeObjects
) -> None:
    """Fill ``consultation`` with the extenders' answers (upstream's
    findNodesThatPassExtenders, then the extender half of prioritizeNodes)."""
    pod = consultation.qp.pod
    try:
        outcome = await run_filters(
            extenders, pod, consultation.pod_json, consultation.names, node_objects
        )
    except ExtenderError as exc:
        consultation.error = exc
        return
    consultation.outcome = outcome
    if len(outcome.feasible) > 1:  # upstream scores only when there is a choice
        consultation.scores = await run_prioritizers(
            extenders, pod, consultation.pod_json, outcome.feasible, node_objects
        )
