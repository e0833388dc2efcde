"""The values the cycle and its failure handler share: one profile's runtime, the
cycle's counters, what one decision comes to (:data:`Outcome`), and what they need of
the gang engine (:class:`GangAdmission`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from asched.cluster.records import PodInfo
from asched.engine.algorithm import Algorithm, Decision
from asched.extenders.consult import Consultation
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.gangs.host import NeedOf
from asched.scheduler.binder import BindJob


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


class GangAdmission(Protocol):
    """What the cycle needs of the gang engine
    (:class:`~asched.gangs.host.GangRuntime`): the whole-gang admission of a member,
    and a member's message naming its gang."""

    def admit(self, pod: PodInfo, algorithm: Algorithm, need: NeedOf) -> Status | None: ...

    def describe(self, gang: str, message: str) -> str: ...
