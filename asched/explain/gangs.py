"""Gangs in ``asched explain``: the scheduler's own gang engine, over the explain table.

When the profile enables Coscheduling, the framework is built with a read-only handle
(:class:`ExplainHandle`) whose ``gang_host`` is a
:class:`~asched.gangs.host.GangRuntime` over the table, reading the snapshot's
:class:`~asched.cluster.gangs.GangIndex` (the pod explained added to it as a pending
member), with no member waiting at Permit. So Coscheduling's PreFilter answers as in the
scheduler (a group not found or refused, too few members, ``minResources``), and before
a member is filtered the whole-gang admission the cycle runs is run too
(:meth:`GangRuntime.admit <asched.gangs.host.GangRuntime.admit>`, one home for the rule).
Explain binds nothing: the handle's ``bind`` is an Error.
"""

from __future__ import annotations

import time
from typing import Final

from asched.cluster.gangs import GangIndex
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.engine.algorithm import Algorithm
from asched.engine.result import GangVerdict
from asched.framework.builtin.coscheduling import NAME as COSCHEDULING
from asched.framework.hosts import GangHost, VolumeHost
from asched.framework.registry import Registry
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.framework.waiting import WaitingPods
from asched.gangs.host import GangRuntime, plain_need

#: What the handle's ``bind`` answers: explain never binds.
NEVER_BINDS: Final = "asched explain never binds"


class ExplainHandle:
    """A :class:`~asched.framework.interface.Handle` that reads only: the gang host, no
    volume host, and a ``bind`` that is an Error."""

    __slots__ = ("_gang_host",)

    def __init__(self, gang_host: GangHost | None) -> None:
        self._gang_host = gang_host

    @property
    def gang_host(self) -> GangHost | None:
        return self._gang_host

    @property
    def volume_host(self) -> VolumeHost | None:
        return None

    async def bind(self, pod: PodInfo, node: str) -> Status:
        return Status.error(NEVER_BINDS)


def gang_runtime(
    table: NodeTable, profile: Profile, pod: PodInfo, gangs: GangIndex | None
) -> GangRuntime | None:
    """The gang host for ``profile`` (None when it does not enable Coscheduling).

    ``gangs``: the snapshot's index (None: no gang declared); ``pod``, the pod explained,
    is recorded as a pending member of its gang (it is in no object of the snapshot: the
    objects are read without it) in a copy, so that the snapshot explains the next pod
    as it was.
    """
    if COSCHEDULING not in profile.resolved.all_names():
        return None
    index = gangs.copy() if gangs is not None else GangIndex()
    if pod.gang:
        index.set_member(pod.key, pod.gang, pod)
    # explain is one-shot: no member waits, and the clock only ages backoffs it never sets
    return GangRuntime(table, WaitingPods(), time.monotonic, index=index)


def framework_for(
    table: NodeTable,
    profile: Profile,
    pod: PodInfo,
    *,
    registry: Registry | None = None,
    gangs: GangIndex | None = None,
) -> tuple[Framework, GangRuntime | None]:
    """The profile's framework (``registry``: the plugins to build it from, default this
    installation's), with the gang host when the profile enables Coscheduling."""
    runtime = gang_runtime(table, profile, pod, gangs)
    handle = ExplainHandle(runtime) if runtime is not None else None
    return Framework(profile, handle=handle, registry=registry), runtime


def admit(
    runtime: GangRuntime, framework: Framework, table: NodeTable, pod: PodInfo
) -> Status | None:
    """The whole-gang admission the cycle runs before deciding a member: None when it may
    go on, else the refusal (UnschedulableAndUnresolvable). Unsampled, as the cycle's."""
    if not pod.gang:
        return None
    return runtime.admit(pod, Algorithm(framework, table), plain_need(table))


def verdict(
    runtime: GangRuntime, pod: PodInfo, refused: Status | None, pre_filter: Status
) -> GangVerdict | None:
    """The gang's verdict for member ``pod``: refused by the admission (``refused``), or by
    Coscheduling's PreFilter (``pre_filter``, the profile's PreFilter status), else
    admitted. None for a pod of no gang."""
    key = pod.gang
    if not key:
        return None
    reason = None
    if refused is not None:
        reason = refused.message
    elif not pre_filter.ok and pre_filter.plugin == COSCHEDULING:
        reason = pre_filter.message
    gang = runtime.index.gangs.get(key)
    return GangVerdict(
        key=key,
        min_member=gang.min_member if gang is not None else 0,
        members=runtime.index.member_count(key),
        placed=runtime.placed(key),
        admitted=reason is None,
        reason=reason,
    )
