"""DefaultBinder (Bind): POST the pod's binding through the host's API client."""

from __future__ import annotations

from typing import Final

from asched.cluster.records import PodInfo
from asched.framework.cycle_state import CycleState
from asched.framework.interface import Handle
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "DefaultBinder"


class DefaultBinder:
    name: Final = NAME

    def __init__(self, handle: Handle | None) -> None:
        self._handle = handle

    async def bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        if self._handle is None:
            return Status.error("DefaultBinder has no API client", plugin=NAME)
        return await self._handle.bind(pod, node)


def factory(args: object | None, handle: Handle | None) -> DefaultBinder:
    return DefaultBinder(handle)


SPEC: Final = declare(DefaultBinder, api_version=API_VERSION, factory=factory)
