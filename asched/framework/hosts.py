"""What plugins may reach of the scheduler that runs them, through their handle.

A plugin's factory is given a :class:`~asched.framework.interface.Handle`; besides binding,
it offers typed hosts for the plugins that need the live scheduler: Coscheduling's
:class:`GangHost` (the gang engine, :class:`~asched.gangs.host.GangRuntime`) and
VolumeBinding's :class:`VolumeHost` (the API writes and the watch's view,
:class:`~asched.scheduler.volume_host.ApiVolumeHost`). Either is None where there is no
live scheduler (``asched explain``, a unit test) or no plugin needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, Protocol

from asched.cluster.gangs import GangIndex
from asched.cluster.records import PodInfo
from asched.cluster.volumes import VolumeCatalog

#: the API resources VolumeBinding's PreBind writes
Resource = Literal["persistentvolumes", "persistentvolumeclaims"]


class WaitingMember(Protocol):
    """A member waiting at Permit (:class:`~asched.framework.waiting.WaitingPod`)."""

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class GangHost(Protocol):
    """What Coscheduling needs from the scheduler that runs it."""

    @property
    def gangs(self) -> GangIndex: ...

    def placed(self, gang: str) -> int:
        """Members of ``gang`` assumed or bound."""

    def placed_requests(self, gang: str) -> dict[str, int]:
        """What the placed members of ``gang`` request, summed (canonical units)."""

    def waiting(self, gang: str) -> Iterable[WaitingMember]:
        """Members of ``gang`` waiting at Permit."""

    def now(self) -> float:
        """Seconds on the scheduler's clock (loop time)."""

    def gang_failed(self, gang: str) -> None:
        """The gang was rejected: drop what the scheduler holds for it."""


class VolumeHost(Protocol):
    """What VolumeBinding's PreBind needs of the live scheduler (``handle.volume_host``)."""

    @property
    def catalog(self) -> VolumeCatalog:
        """The catalog the watch keeps current (its listeners wake PreBind)."""

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        """The labels of node ``node``; None when the scheduler does not know it."""

    def pod_exists(self, pod: PodInfo) -> bool:
        """Whether the pod still exists (a deleted pod cancels the binding)."""

    @property
    def pod_listeners(self) -> list[Callable[[str], None]]:
        """Called with a pod's key when the watch sees it go, so a PreBind waiting for
        that pod's claims re-checks at once (and fails: the pod does not exist)."""

    async def replace(self, resource: Resource, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """PUT ``obj`` (its ``resourceVersion`` kept) and return the stored object.

        Raises
        ------
        VolumeWriteError
            On any answer but success (a 409 conflict included) or no answer.
        """
