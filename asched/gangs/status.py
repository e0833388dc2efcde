"""PodGroup status, kept current by the leading scheduler.

scheduler-plugins keeps a PodGroup's status with a controller of its own; asched ships no
controller, so the leader writes it, from what it already watches, with the controller's
rules (``pkg/controllers/podgroup_controller.go``):

* ``Pending`` while fewer than ``minMember`` pods name the group;
* ``Scheduling`` once they do, until ``minMember`` of them run or succeeded;
* ``Running`` when ``running + succeeded >= minMember``;
* ``Failed`` when some member failed and ``failed + running + succeeded >= minMember``;
* ``Finished`` when ``succeeded >= minMember`` (final, as is ``Failed``: not written again).

``scheduled`` counts the members bound or assumed and allowed to bind (not the ones waiting
at Permit); ``running``, ``succeeded`` and ``failed`` the members in those phases;
``scheduleStartTime`` is set once, when the group first leaves ``Pending``. ``occupiedBy``
is not written (it names the owning workload, which asched does not watch).

A group's status is patched (JSON merge patch on ``/status``) only when it changed, at most
once per :data:`INTERVAL` seconds for all groups; a failed write is logged and tried again
at the next round, and never stops the scheduler.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable
from typing import Any, Final

from asched.api.client import KubeClient
from asched.errors import RETRYABLE
from asched.gangs.host import GangRuntime

logger = logging.getLogger(__name__)

INTERVAL: Final = 1.0
FINAL: Final = frozenset({"Finished", "Failed"})
PATH: Final = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups/{name}/status"


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class GangStatusWriter:
    """Writes PodGroup statuses; :meth:`run` is a task the leader owns."""

    def __init__(
        self, client: KubeClient, gangs: GangRuntime, *, wall: Callable[[], str] = _now
    ) -> None:
        self.client = client
        self.gangs = gangs
        self.wall = wall
        #: gang key -> the status last written
        self.written: dict[str, dict[str, Any]] = {}
        self.writes = 0

    def status_of(self, key: str) -> dict[str, Any] | None:
        """The status the PodGroup ``key`` should have (None: not a PodGroup we know)."""
        index = self.gangs.index
        gang = index.gangs.get(key)
        if gang is None or gang.source != "PodGroup":
            return None
        members = index.members.get(key, {})
        finished = index.finished.get(key, {})
        waiting = {pod.key for pod in self.gangs.waiting(key)}
        placed = self.gangs.table.pods
        scheduled = sum(1 for k in members if k in placed and k not in waiting)
        running = sum(1 for info in members.values() if getattr(info, "phase", "") == "Running")
        succeeded = sum(1 for phase in finished.values() if phase == "Succeeded")
        failed = sum(1 for phase in finished.values() if phase == "Failed")
        previous = self.written.get(key, {})
        total = len(members) + len(finished)
        if total < gang.min_member:
            phase = "Pending"
        elif failed and failed + running + succeeded >= gang.min_member:
            phase = "Failed"
        elif succeeded >= gang.min_member:
            phase = "Finished"
        elif running + succeeded >= gang.min_member:
            phase = "Running"
        else:
            phase = "Scheduling"
        status: dict[str, Any] = {
            "phase": phase,
            "scheduled": scheduled,
            "running": running,
            "succeeded": succeeded,
            "failed": failed,
        }
        start = previous.get("scheduleStartTime")
        if start is None and phase != "Pending":
            start = self.wall()
        if start is not None:
            status["scheduleStartTime"] = start
        return status

    async def write_changed(self) -> int:
        """Patch every PodGroup whose status changed; return how many were written."""
        written = 0
        for key in list(self.gangs.index.gangs):
            if self.written.get(key, {}).get("phase") in FINAL:
                continue
            status = self.status_of(key)
            if status is None or status == self.written.get(key):
                continue
            namespace, name = key.split("/", 1)
            try:
                response = await self.client.patch(
                    PATH.format(namespace=namespace, name=name), {"status": status}
                )
            except RETRYABLE as exc:
                logger.warning("PodGroup %s: status not written (%s): retrying", key, exc)
                continue
            if response.status == 404:
                self.written.pop(key, None)
                continue
            if not response.ok:
                logger.warning(
                    "PodGroup %s: status not written (%d): retrying", key, response.status
                )
                continue
            self.written[key] = status
            written += 1
        self.writes += written
        for key in [k for k in self.written if k not in self.gangs.index.gangs]:
            del self.written[key]
        return written

    async def run(self) -> None:
        """Until cancelled: write what changed every :data:`INTERVAL` seconds."""
        while True:
            try:
                await self.write_changed()
            except Exception:  # a bug here must not stop the scheduler
                logger.exception("writing PodGroup statuses failed")
            await asyncio.sleep(INTERVAL)
