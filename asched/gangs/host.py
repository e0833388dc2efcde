"""The scheduler's side of gang scheduling: the Coscheduling plugin's host, and the
whole-gang admission that runs before a gang's first member is assumed.

:class:`GangRuntime` is what :class:`~asched.framework.builtin.coscheduling.GangHost`
asks for: the gangs the ingest indexes, how many members are placed (assumed or bound:
the table's pods), which members wait at Permit, and the clock.

**Admission** (docs/gang.md, "Whole-gang feasibility"). Upstream places a gang one member
per cycle and learns at Permit, or at its timeout, that the rest does not fit; two gangs
that each need 60 % of the cluster each take half and wait until both time out. Here,
when a member of a gang that nothing holds yet is about to be decided, every member the
gang still misses (``minMember`` minus the placed ones, taken from its pending members in
queue order) is placed tentatively over the table's free columns
(:func:`~asched.gangs.fit.place_gang`), one pass per distinct member shape, with
the rows each shape's other Filters allow (one ``candidates`` pass per shape, without
sampling). The gangs admitted earlier that are still incomplete are placed first, so a
second gang sees the room the first one is about to take. A gang that does not fit is
refused before anything is assumed: its member goes back to the queue with the reason,
and holds nothing. An admitted gang keeps its admission until it has ``minMember``
members placed, or until it is rejected (PostFilter, Unreserve, a deleted group).

What the tentative placement does not see: pods of no gang decided between two members
may take the room (members of a gang leave the queue together, so the window is a few
cycles); constraints between members (anti-affinity among them, spreading over them).
Then a later member fails, and the gang is rolled back as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from asched.cluster.gangs import Gang, GangIndex
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.framework.builtin.coscheduling import NAME, gang_name
from asched.framework.resource_fit import ResourceNeed, resource_checks
from asched.framework.status import Status
from asched.framework.waiting import WaitingPod, WaitingPods
from asched.gangs.fit import Shape, place_gang

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Admission:
    """A gang admitted to placement: the members it still needed when admitted."""

    gang: str
    members: list[PodInfo] = field(default_factory=list)


class GangRuntime:
    """The Coscheduling plugin's host (see the module docstring)."""

    def __init__(
        self,
        table: NodeTable,
        waiting: WaitingPods,
        clock: Callable[[], float],
        *,
        index: GangIndex | None = None,
    ) -> None:
        """``index``: the gangs to read (default: a new one, which the ingest feeds)."""
        self.table = table
        self.index = index if index is not None else GangIndex()
        self.waiting_pods = waiting
        self.clock = clock
        #: gang key -> its admission, while it is incomplete
        self.admitted: dict[str, Admission] = {}

    @property
    def gangs(self) -> GangIndex:
        return self.index

    def _placed_members(self, gang: str) -> Iterator[str]:
        pods = self.table.pods
        return (key for key in self.index.members.get(gang, ()) if key in pods)

    def placed(self, gang: str) -> int:
        return sum(1 for _ in self._placed_members(gang))

    def placed_requests(self, gang: str) -> dict[str, int]:
        total: dict[str, int] = {}
        for key in self._placed_members(gang):
            for resource, amount in self.table.pods[key].info.requests.items():
                total[resource] = total.get(resource, 0) + amount
        return total

    def waiting(self, gang: str) -> Iterator[WaitingPod]:
        members = self.index.members.get(gang, {})
        return (pod for pod in self.waiting_pods if pod.key in members)

    def now(self) -> float:
        return self.clock()

    def gang_failed(self, gang: str) -> None:
        self.admitted.pop(gang, None)

    def describe(self, gang: str, message: str) -> str:
        """A member's message naming its gang and the count: ``pod group ns/g has 3 of 4
        members: <message>``."""
        found = self.index.gangs.get(gang)
        if found is None:
            return f"{gang_name(gang)}: {message}"
        if message.startswith(gang_name(gang)):
            return message
        count = self.placed(gang)
        return f"{gang_name(gang)} has {count} of {found.min_member} members: {message}"

    def gone(self, gang: str) -> None:
        """The gang's PodGroup or Workload was deleted: its waiting members are released at
        once (their rollbacks follow), and its admission dropped."""
        for member in list(self.waiting(gang)):
            member.reject(NAME, f"{gang_name(gang)} was deleted")
        self.admitted.pop(gang, None)

    def forget_complete(self) -> None:
        """Drop the admissions of gangs that have ``minMember`` placed (or are gone)."""
        for key in list(self.admitted):
            gang = self.index.gangs.get(key)
            if gang is None or self.placed(key) >= gang.min_member:
                del self.admitted[key]

    def admit(self, pod: PodInfo, algorithm: Algorithm, need: NeedOf) -> Status | None:
        """None when ``pod``'s gang may go on (admitted now or before, or not a gang the
        Coscheduling plugin knows); else the UnschedulableAndUnresolvable status saying why
        not (preempting for one member of a gang that cannot be placed whole helps nobody)."""
        key = pod.gang
        gang = self.index.gangs.get(key)
        if gang is None:
            return None  # Coscheduling's PreFilter says why
        self.forget_complete()
        if key in self.admitted:
            return None
        placed = self.placed(key)
        wanted = gang.min_member - placed
        if wanted <= 0:
            return None
        pending = self._pending(gang)
        if len(pending) < wanted:
            return None  # too few members: PreFilter's count says so
        members = pending[:wanted]
        earlier = [
            (admission.gang, self._still_missing(admission)) for admission in self.admitted.values()
        ]
        shapes: list[Shape] = []
        for group, (owner, missing) in enumerate([*earlier, (key, members)]):
            shapes += self._shapes(owner, missing, algorithm, need, group)
        found = place_gang(self.table, shapes)
        mine = [s.name for s in shapes if s.name.startswith(f"{key}#")]
        short = sum(max(0, found.wanted[n] - found.placed[n]) for n in mine)
        if short:
            got = wanted - short
            others = f", after the {len(earlier)} gang(s) admitted before it" if earlier else ""
            return Status.unresolvable(  # no preemption for one member of a gang
                f"{gang_name(key)} has {placed} of {gang.min_member} members placed: the "
                f"{wanted} missing cannot be placed together (room for {got}{others})",
                plugin=NAME,
            )
        self.admitted[key] = Admission(key, members)
        logger.debug("gang %s admitted: %d members to place", key, wanted)
        return None

    def _pending(self, gang: Gang) -> list[PodInfo]:
        """The gang's members not placed and not gated, in the order the queue gives them."""
        pods = self.table.pods
        members = self.index.members.get(gang.key, {})
        pending = [
            info
            for pod_key, info in members.items()
            if pod_key not in pods and not info.scheduling_gates
        ]
        return sorted(pending, key=lambda p: (-p.priority, p.creation_timestamp, p.name))

    def _still_missing(self, admission: Admission) -> list[PodInfo]:
        gang = self.index.gangs.get(admission.gang)
        if gang is None:
            return []
        wanted = gang.min_member - self.placed(admission.gang)
        pods = self.table.pods
        return [m for m in admission.members if m.key not in pods][: max(0, wanted)]

    def _shapes(
        self,
        owner: str,
        members: list[PodInfo],
        algorithm: Algorithm,
        need: NeedOf,
        group: int,
    ) -> list[Shape]:
        """One :class:`Shape` per distinct member: its requests, and the rows its
        profile's Filters allow now (one unsampled ``candidates`` pass)."""
        by_shape: dict[tuple[object, ...], list[PodInfo]] = {}
        for member in members:
            signature = (
                tuple(sorted(member.requests.items())),
                tuple(sorted(member.node_selector.items())),
                member.node_affinity,
                member.tolerations,
                member.affinity,
                member.topology_spread_constraints,
            )
            by_shape.setdefault(signature, []).append(member)
        shapes = []
        for index, same in enumerate(by_shape.values()):
            first = same[0]
            decision = algorithm.candidates(first, nominated=False, sample=False)
            allowed = (
                decision.candidates
                if decision.candidates is not None
                else np.zeros(self.table.size, dtype=np.bool_)
            )
            shapes.append(Shape(f"{owner}#{index}", need(first), len(same), allowed, group))
        return shapes


#: The member's resource need in the profile's terms (NodeResourcesFit's checks).
NeedOf = Callable[[PodInfo], ResourceNeed]


def plain_need(table: NodeTable) -> NeedOf:
    """A need counting every requested resource (no ignored ones)."""

    def need(pod: PodInfo) -> ResourceNeed:
        return ResourceNeed.of(table, resource_checks(pod, table, lambda _r: False))

    return need
