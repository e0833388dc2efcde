"""Coscheduling: gangs placed all together or not at all (scheduler-plugins' plugin).

Semantics of scheduler-plugins' ``pkg/coscheduling`` (``coscheduling.go``, ``core/core.go``),
with asched's differences marked *(asched)*; docs/gang.md says the same for users.

* **QueueSort**: higher priority first; then the gang's creation time (a pod of no gang:
  its own creation time); then arrival order *(asched: upstream breaks the last tie by
  ``namespace/name``; the queue's keys are numbers, and members of one gang created
  together arrive together)*. So a gang's members leave the queue together.
* **PreFilter** rejects a member, ``UnschedulableAndUnresolvable`` (no preemption for it):
  - its gang's PodGroup does not exist *(asched: upstream passes PreFilter and refuses at
    Permit with "PodGroup not found"; refusing before anything is assumed holds nothing)*,
    or does not decode (the field error);
  - the gang failed recently and ``podGroupBackoffSeconds`` has not passed:
    ``podGroup ns/g failed recently``;
  - fewer than ``minMember`` pods name the gang (pending or placed, any scheduler):
    ``pre-filter pod p cannot find enough sibling pods, current pods number: 3,
    minMember of group: 4``, prefixed with the gang (``pod group ns/g has 3 of 4
    members: ...``); or fewer than ``minMember`` once the gated ones (``schedulingGates``)
    are left out: ``... cannot proceed due to gated pods in the same PodGroup``;
  - ``minResources`` does not fit in the cluster's free capacity (upstream's
    ``CheckClusterResource``: the free amounts of all nodes added up, this gang's own
    placed members' requests counted back in): ``resource gap: ...``.
  The whole-gang placement check (every missing member placed at once, before the first
  is assumed) is the scheduler's (:mod:`asched.gangs.host`): it needs the profile's
  other Filters, which a plugin does not run.
* **Permit**: once ``minMember`` members are assumed or bound (this one included), every
  waiting sibling is allowed and this one passes; otherwise this one waits, up to the
  PodGroup's ``scheduleTimeoutSeconds`` or ``permitWaitingTimeSeconds``. A timeout
  rejects the pod, and its Unreserve rejects the siblings still waiting.
* **PostFilter** (a member fits nowhere): unless ``minMember`` members are placed already,
  or the members still missing are at most ``podGroupRejectPercentage`` % of
  ``minMember``, every waiting sibling is rejected at once (its resources come back), the
  gang is backed off (``podGroupBackoffSeconds``, when the gang has its members) and the
  message is ``PodGroup ns/g gets rejected due to Pod p is unschedulable even after
  PostFilter``.
* **Unreserve** (a member rolled back: timeout, bind failure, rejection): the waiting
  siblings are rejected, the gang is marked failed. After ``minMember`` were permitted no
  sibling waits any more, so a member whose bind fails is retried alone.

The gang's bookkeeping (which pods name which gang, which are placed, which wait) is the
host's (:class:`GangHost`): the plugin reads it, and allows or rejects waiting pods
through it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.gangs import Gang
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import CoschedulingArgs
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.hosts import GangHost
from asched.framework.interface import PRE_FILTER_SUCCESS, Handle, PostFilterResult, PreFilterResult
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "Coscheduling"


def _split_sum(amounts: npt.NDArray[np.int64]) -> int:
    """The exact sum of non-negative amounts up to 2**53 - 1: the high and low 32 bits are
    summed apart (neither sum can wrap int64 over any number of nodes) and joined."""
    return (int((amounts >> 32).sum()) << 32) + int((amounts & 0xFFFFFFFF).sum())


def _total(column: npt.NDArray[np.int64]) -> int:
    """The exact sum of a free column (an over-committed node's amount is negative, and
    counts, as upstream's ``CheckClusterResource`` counts it). A plain int64 sum could
    wrap over thousands of nodes of clamped (2**53 - 1) amounts."""
    return _split_sum(np.maximum(column, 0)) - _split_sum(np.maximum(-column, 0))


def gang_name(gang: str) -> str:
    """How messages name a gang: ``pod group ns/job-a``."""
    return f"pod group {gang}"


def _epoch(timestamp: str) -> float | None:
    """An RFC 3339 timestamp as seconds since the epoch (None when absent or malformed)."""
    if not timestamp:
        return None
    try:
        return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Coscheduling:
    """The plugin; see the module docstring."""

    name: Final = NAME
    events: Final = frozenset(
        {ClusterEvent.UNSCHEDULED_POD_ADD, ClusterEvent.GANG_CHANGE, ClusterEvent.NODE_ADD}
        | {ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ALLOCATABLE}
    )

    def __init__(self, args: CoschedulingArgs, host: GangHost | None) -> None:
        self.args = args
        self.host = host
        #: gang key -> loop time until which its members are refused
        self._backoff: dict[str, float] = {}

    def _gang(self, pod: PodInfo) -> Gang | None:
        if self.host is None or not pod.gang:
            return None
        return self.host.gangs.gangs.get(pod.gang)

    def timeout(self, gang: Gang) -> float:
        """Seconds a member waits at Permit (upstream's ``GetWaitTimeDuration``)."""
        if gang.timeout_seconds is not None:
            return gang.timeout_seconds
        return float(self.args.permit_waiting_time_seconds)

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """A new unscheduled pod, or a changed PodGroup or Workload (``changed``: its gang
        key), helps only a pod of its own gang."""
        if event == ClusterEvent.UNSCHEDULED_POD_ADD:
            return isinstance(changed, PodInfo) and bool(pod.gang) and changed.gang == pod.gang
        if event == ClusterEvent.GANG_CHANGE:
            return bool(pod.gang) and changed == pod.gang
        return True

    def sort_key(self, pod: PodInfo, timestamp: float) -> tuple[float, ...]:
        """Priority, then the gang's creation time (the pod's own without a gang)."""
        created = None
        gang = self._gang(pod)
        if gang is not None:
            created = _epoch(gang.created)
        if created is None:
            created = _epoch(pod.creation_timestamp)
        return (-pod.priority, created if created is not None else timestamp)

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): a pod outside a gang is let through; a gang's members
        are pods."""
        return bool(pod.gang)

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        host = self.host
        if host is None or not pod.gang:
            return PRE_FILTER_SUCCESS
        status = self._admissible(host, pod, table)
        return PreFilterResult(status)

    def _admissible(self, host: GangHost, pod: PodInfo, table: NodeTable) -> Status:
        key = pod.gang
        gang = host.gangs.gangs.get(key)
        if gang is None:
            why = host.gangs.why_invalid(key)
            return Status.unresolvable(
                f"{gang_name(key)}: {why}" if why else f"{gang_name(key)} not found",
                plugin=NAME,
            )
        until = self._backoff.get(key)
        if until is not None:
            if host.now() < until:
                return Status.unresolvable(f"podGroup {key} failed recently", plugin=NAME)
            del self._backoff[key]
        members = host.gangs.member_count(key)
        if members < gang.min_member:
            return Status.unresolvable(
                f"{gang_name(key)} has {members} of {gang.min_member} members: pre-filter pod "
                f"{pod.name} cannot find enough sibling pods, current pods number: {members}, "
                f"minMember of group: {gang.min_member}",
                plugin=NAME,
            )
        # gated siblings cannot be scheduled: they count toward the total above, but the
        # gang proceeds only if it reaches minMember without them (quorumGap in core.go)
        gated = sum(1 for info in host.gangs.members.get(key, {}).values() if info.scheduling_gates)
        if members - gated < gang.min_member:
            return Status.unresolvable(
                f"{gang_name(key)} has {members} of {gang.min_member} members, {gated} of them "
                f"gated: pre-filter pod {pod.name} cannot proceed due to gated pods in the same "
                "PodGroup",
                plugin=NAME,
            )
        if gang.min_resources:
            gap = self._resource_gap(host, gang, table)
            if gap:
                shown = ", ".join(f"{name}: {amount}" for name, amount in sorted(gap.items()))
                return Status.unresolvable(f"{gang_name(key)}: resource gap: {shown}", plugin=NAME)
        return Status.success()

    @staticmethod
    def _resource_gap(host: GangHost, gang: Gang, table: NodeTable) -> dict[str, int]:
        """What ``minResources`` (plus ``minMember`` pods) lacks over all nodes' free
        amounts, this gang's placed members counted back in (upstream's
        ``CheckClusterResource``); empty when it fits."""
        wanted = dict(gang.min_resources)
        wanted["pods"] = gang.min_member
        back = host.placed_requests(gang.key)
        back["pods"] = host.placed(gang.key)
        alive = table.alive[: table.size]
        gap = {}
        for resource, amount in wanted.items():
            axis = table.axis_index.get(resource)
            free = 0 if axis is None else _total(table.free[axis][: table.size][alive])
            short = amount - free - back.get(resource, 0)
            if short > 0:
                gap[resource] = short
        return gap

    def permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, float]:
        host = self.host
        gang = self._gang(pod)
        if host is None or not pod.gang:
            return Status.success(), 0.0
        if gang is None:
            return Status.unschedulable("PodGroup not found", plugin=NAME), 0.0
        if host.placed(gang.key) >= gang.min_member:  # this pod is assumed: it counts
            for member in host.waiting(gang.key):
                member.allow(NAME)
            return Status.success(), 0.0
        return Status.wait(NAME), self.timeout(gang)

    def post_filter(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        statuses: object,
        framework: object,
    ) -> PostFilterResult:
        host = self.host
        gang = self._gang(pod)
        if host is None or gang is None:
            return PostFilterResult(Status.unschedulable("can not find pod group", plugin=NAME))
        placed = host.placed(gang.key)
        if placed >= gang.min_member:
            return PostFilterResult(Status.unschedulable(plugin=NAME))
        missing = (gang.min_member - placed) / gang.min_member
        if missing <= self.args.pod_group_reject_percentage / 100:
            return PostFilterResult(Status.unschedulable(plugin=NAME))
        self.reject_waiting(gang.key, "optimistic rejection in PostFilter")
        if self.args.pod_group_backoff_seconds > 0 and (
            host.gangs.member_count(gang.key) >= gang.min_member
        ):
            self._backoff[gang.key] = host.now() + self.args.pod_group_backoff_seconds
        host.gang_failed(gang.key)
        return PostFilterResult(
            Status.unschedulable(
                f"PodGroup {gang.key} gets rejected due to Pod {pod.name} is unschedulable "
                "even after PostFilter",
                plugin=NAME,
            )
        )

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        return Status.success()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        host = self.host
        if host is None or self._gang(pod) is None:
            return
        self.reject_waiting(pod.gang, "rejection in Unreserve")
        host.gang_failed(pod.gang)

    def reject_waiting(self, gang: str, message: str) -> None:
        """Reject every member of ``gang`` waiting at Permit (their rollbacks follow)."""
        if self.host is None:
            return
        for member in list(self.host.waiting(gang)):
            member.reject(NAME, f"{gang_name(gang)}: {message}")


def factory(args: object | None, handle: Handle | None) -> Coscheduling:
    """Built with the scheduler as its host when the handle is one (:class:`GangHost`);
    without (``asched explain``), PreFilter and Permit let every pod through."""
    host = handle.gang_host if handle is not None else None
    return Coscheduling(args if isinstance(args, CoschedulingArgs) else CoschedulingArgs(), host)


#: Bundled, not in kube-scheduler's tree: off unless a profile enables it.
ORIGIN: Final = "bundled (scheduler-plugins)"
SPEC: Final = dataclasses.replace(
    declare(Coscheduling, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]),
    origin=ORIGIN,
)
