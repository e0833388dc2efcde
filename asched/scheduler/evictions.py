"""Carrying out a preemption decision against the API server.

Upstream: pkg/scheduler/framework/preemption/preemption.go, prepareCandidate.

First the lower-priority pods whose nomination to the node ended get
``status.nominatedNodeName`` removed. Then for each victim, concurrently: a victim still
waiting at Permit is rejected (its
rollback frees the room, nothing to delete); otherwise its ``DisruptionTarget``
condition is patched (``PreemptionByScheduler``) and it is deleted with its own grace
period (never forced) and a uid precondition, so a re-created pod of the same name is
never hit; a Normal ``Preempted`` event names the preemptor. While a preemptor's
evictions are in flight (:meth:`Evictions.running`) the scheduler does not preempt for it
again.

A victim already gone (404) or replaced (409) counts as evicted. Any other failure is
logged and reported through ``on_failed`` so the scheduler drops the preemptor's
nomination and lets it try again. The tasks are owned here: :meth:`drain` waits for
them at shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from asched.api.client import KubeClient
from asched.api.objects import PodConditionJSON
from asched.cluster.records import PodInfo
from asched.framework.waiting import WaitingPods
from asched.scheduler.reporting import Reporter, rfc3339

logger = logging.getLogger(__name__)

_GONE = (404, 409)


@dataclass(slots=True)
class EvictionStats:
    evicted: int = 0
    rejected_waiting: int = 0
    failed: int = 0
    nominations_cleared: int = 0


class Evictions:
    """Owns the eviction tasks; see the module docstring."""

    def __init__(
        self,
        client: KubeClient,
        reporter: Reporter | None,
        waiting: WaitingPods,
        *,
        on_failed: Callable[[PodInfo, str], None] | None = None,
    ) -> None:
        self.client = client
        self.reporter = reporter
        self.waiting = waiting
        self.on_failed = on_failed
        self.stats = EvictionStats()
        #: preemptor key -> its task (one at a time: the scheduler waits for it)
        self._running: dict[str, asyncio.Task[None]] = {}

    def running(self, preemptor: str) -> bool:
        """Whether evictions for the pod ``preemptor`` (a key) are still in flight."""
        return preemptor in self._running

    def start(
        self,
        preemptor: PodInfo,
        node: str,
        victims: Sequence[PodInfo],
        cleared: Sequence[str],
        scheduler_name: str,
    ) -> None:
        """Evict ``victims`` for ``preemptor`` on ``node`` and clear nominations, in a task."""
        task = asyncio.get_running_loop().create_task(
            self._run(preemptor, node, tuple(victims), tuple(cleared), scheduler_name),
            name=f"preempt-{preemptor.key}",
        )
        self._running[preemptor.key] = task
        task.add_done_callback(lambda done: self._finished(preemptor.key, done))

    def _finished(self, preemptor: str, task: asyncio.Task[None]) -> None:
        if self._running.get(preemptor) is task:
            del self._running[preemptor]

    async def drain(self, deadline: float = 10.0) -> None:
        """Wait (at most ``deadline`` seconds) for evictions in flight, then cancel the rest."""
        if not self._running:
            return
        _, pending = await asyncio.wait(set(self._running.values()), timeout=deadline)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def _run(
        self,
        preemptor: PodInfo,
        node: str,
        victims: tuple[PodInfo, ...],
        cleared: tuple[str, ...],
        scheduler_name: str,
    ) -> None:
        # the superseded nominations first: they hold room the preemptor is about to take
        await asyncio.gather(
            *(self._clear_nomination(key) for key in cleared), return_exceptions=True
        )
        results = await asyncio.gather(
            *(self._evict(v, preemptor, node, scheduler_name) for v in victims),
            return_exceptions=True,
        )
        failures = [r for r in results if r is not True]
        for failure in failures:
            if isinstance(failure, BaseException) and not isinstance(failure, Exception):
                raise failure  # cancellation
        if failures:
            self.stats.failed += len(failures)
            logger.warning(
                "preempting for %s on %s: %d of %d evictions failed",
                preemptor.key,
                node,
                len(failures),
                len(victims),
            )
            if self.on_failed is not None:
                self.on_failed(preemptor, node)

    async def _evict(
        self, victim: PodInfo, preemptor: PodInfo, node: str, scheduler_name: str
    ) -> bool:
        waiting = self.waiting.get(victim.uid or victim.key)
        if waiting is not None:
            waiting.reject("DefaultPreemption", "preempted")
            self.stats.rejected_waiting += 1
            return True
        path = f"/api/v1/namespaces/{quote(victim.namespace)}/pods/{quote(victim.name)}"
        condition: PodConditionJSON = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
            "lastTransitionTime": rfc3339(),
        }
        patched = await self.client.patch_pod_status(
            victim.namespace, victim.name, {"status": {"conditions": [condition]}}
        )
        if patched.status in _GONE:
            return True
        if not patched.ok:
            logger.warning("preemption: condition on %s: HTTP %d", victim.key, patched.status)
            return False
        body: dict[str, object] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if victim.uid:
            body["preconditions"] = {"uid": victim.uid}
        deleted = await self.client.request("DELETE", path, body=body)
        if not deleted.ok and deleted.status not in _GONE:
            logger.warning("preemption: deleting %s: HTTP %d", victim.key, deleted.status)
            return False
        self.stats.evicted += 1
        if self.reporter is not None:
            self.reporter.preempted(victim, f"Preempted by pod {preemptor.uid} on node {node}")
        return True

    async def _clear_nomination(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        response = await self.client.patch_pod_status(
            namespace, name, {"status": {"nominatedNodeName": None}}
        )
        if response.ok:
            self.stats.nominations_cleared += 1
