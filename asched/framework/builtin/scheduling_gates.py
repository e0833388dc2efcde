"""SchedulingGates (PreEnqueue): a pod with scheduling gates waits outside the queue."""

from __future__ import annotations

from typing import Final

from asched.cluster.records import PodInfo
from asched.framework.interface import Handle
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Code, Status

NAME: Final = "SchedulingGates"


class SchedulingGates:
    name: Final = NAME

    def pre_enqueue(self, pod: PodInfo) -> Status:
        if pod.scheduling_gates:
            gates = " ".join(pod.scheduling_gates)
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                (f"waiting for scheduling gates: [{gates}]",),
                NAME,
            )
        return Status.success()


def factory(args: object | None, handle: Handle | None) -> SchedulingGates:
    return SchedulingGates()


SPEC: Final = declare(SchedulingGates, api_version=API_VERSION, factory=factory)
