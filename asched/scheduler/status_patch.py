"""The PodScheduled=False patch of a failed attempt, sent only when it changes something.

Upstream's ``updatePod`` (``schedule_one.go``) applies ``podutil.UpdatePodCondition`` and
the nomination to a copy of the pod's status and patches only when that copy differs:
an unchanged condition (type, status, reason, message) and an unchanged
``nominatedNodeName`` cost no write, and ``lastTransitionTime`` moves only when the
condition's status does. Without that, every retry of a pod that fits nowhere would
write the pod again, and each write's watch event would reach every watcher of pods.

"What the pod has" is what this scheduler last wrote to it (:class:`Said`, for the same
pod ``uid``), which is newer than the watch's copy while the watch catches up, else the
pod as last seen (after a restart, the condition written by the previous process). The
scheduler is the only writer of its pods' PodScheduled condition and nomination, as
:mod:`asched.cluster.nominations` also assumes; the one other path that changes a
nomination (evictions clearing superseded ones) tells the reporter, which records it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from asched.api.objects import PodConditionJSON, PodStatusJSON, PodStatusPatchJSON
from asched.cluster.records import PodInfo

#: The condition's reason for a pod that fits nowhere (``v1.PodReasonUnschedulable``).
REASON: Final = "Unschedulable"
#: The condition's reason for an attempt that ended in an internal error
#: (``v1.PodReasonSchedulerError``).
SCHEDULER_ERROR: Final = "SchedulerError"


@dataclass(frozen=True, slots=True)
class Said:
    """What this scheduler last wrote of one pod; None where unknown."""

    uid: str
    message: str | None = None
    nominated: str | None = None
    reason: str = REASON


def _believed(pod: PodInfo, said: Said | None) -> tuple[tuple[str, str, str] | None, str]:
    """The pod's PodScheduled ``(status, reason, message)`` and nomination, newest known."""
    if said is not None and said.uid != pod.uid:
        said = None  # another pod of the same name
    condition = pod.scheduled_condition
    if said is not None and said.message is not None:
        condition = ("False", said.reason, said.message)
    nominated = pod.nominated_node_name
    if said is not None and said.nominated is not None:
        nominated = said.nominated
    return condition, nominated


def status_patch(
    pod: PodInfo,
    message: str,
    nominated: str | None,
    said: Said | None,
    stamp: str,
    reason: str = REASON,
) -> PodStatusPatchJSON | None:
    """The strategic-merge patch of ``pod``'s status, or None when nothing would change.

    ``message`` is the PodScheduled=False message; ``nominated`` the node to nominate
    (``""`` removes the nomination, None leaves it); ``stamp`` the RFC 3339 time used as
    ``lastTransitionTime`` when the condition is new or its status changes (otherwise the
    field is left out, and the strategic merge keeps the old time); ``reason`` the
    condition's reason (:data:`REASON` or :data:`SCHEDULER_ERROR`).
    """
    condition, current = _believed(pod, said)
    status: PodStatusJSON = {}
    if condition != ("False", reason, message):
        entry: PodConditionJSON = {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastProbeTime": None,
        }
        if condition is None or condition[0] != "False":
            entry["lastTransitionTime"] = stamp
        status["conditions"] = [entry]
    if nominated is not None and nominated != current:
        status["nominatedNodeName"] = nominated or None
    return {"status": status} if status else None


def after_write(
    pod: PodInfo, message: str, nominated: str | None, said: Said | None, reason: str = REASON
) -> Said:
    """What the scheduler has said once ``status_patch``'s patch (or none) is applied."""
    if nominated is None and said is not None and said.uid == pod.uid:
        nominated = said.nominated
    return Said(pod.uid, message, nominated, reason)
