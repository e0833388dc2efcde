"""Before a replica schedules: waits that give way to a stop, and the line that says why
it is not ready yet.

A replica waits for its informers to sync, then (with leader election) for the lease.
Every such wait observes a stop request (:func:`unless_set`); while it lasts, one line is
logged every :data:`NOT_READY_LOG_INTERVAL` seconds saying what it waits for, at WARNING
before the informers have synced (something is wrong) and at INFO for a standby that only
waits for the lease (normal). The line never holds a token: it names the API server by
its host and repeats the reflectors' last errors, which hold none.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from typing import Any, Final, TypeVar

from asched.api.watch import Reflector
from asched.scheduler.leader import LeaderElector

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds between the log lines saying why the scheduler is not ready yet.
NOT_READY_LOG_INTERVAL: Final = 30.0


async def unless_set(event: asyncio.Event, work: Coroutine[Any, Any, T]) -> T | None:
    """``work``'s result, or None when ``event`` is set first (``work`` is then cancelled).

    ``work``'s exception propagates; cancelling the caller cancels ``work`` too. This is
    how every wait before the scheduler is ready observes a stop request.
    """
    task = asyncio.ensure_future(work)
    stop = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in (task, stop):
            waiter.cancel()
        await asyncio.gather(task, stop, return_exceptions=True)
    if task.cancelled():
        return None
    return task.result()


class Readiness:
    """What one replica waits for before it schedules, said in one line.

    ``reflectors`` is the run's list itself (reflectors added later are counted), ``host``
    the API server's, ``ready`` set once the informers have synced."""

    def __init__(self, reflectors: Sequence[Reflector], host: str, ready: asyncio.Event) -> None:
        self._reflectors = reflectors
        self._host = host
        self._ready = ready

    def reason(self, elector: LeaderElector | None = None) -> str:
        """Why this replica is not scheduling yet, in one line (never a token)."""
        reflectors = self._reflectors
        pending = [r for r in reflectors if not r.synced.is_set()]
        if pending:
            if len(pending) == len(reflectors):
                what = "no informer has synced"
            else:
                kinds = ", ".join(r.kind for r in pending)
                what = f"{len(pending)} of {len(reflectors)} informers not synced ({kinds})"
            errors = [r.last_error for r in pending if r.last_error]
            if errors:
                return f"{what}; last error: {errors[0]} (API server {self._host})"
            return f"{what}; no answer yet from {self._host}"
        if elector is not None and not elector.is_leader:
            why = elector.last_failure or "no attempt finished yet"
            return f"waiting for the leader lease {elector.lease_name} ({why})"
        return "starting"

    def log_waiting(self, what: str, elector: LeaderElector | None) -> None:
        """One line saying what this replica waits for: WARNING before the informers have
        synced, INFO for a standby waiting for the lease."""
        reason = self.reason(elector)
        if self._ready.is_set():
            logger.info("%s as a standby: %s", what, reason)
        else:
            logger.warning("%s before ready: %s", what, reason)

    async def remind(self, elector: LeaderElector | None) -> None:
        """Log what this replica waits for every :data:`NOT_READY_LOG_INTERVAL` seconds of
        loop time, until cancelled."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            await asyncio.sleep(NOT_READY_LOG_INTERVAL)
            self.log_waiting(f"still waiting after {loop.time() - started:.0f}s", elector)

    def stopped_discovering(self, what: str) -> None:
        """The one line a replica stopped while discovering ``what`` logs."""
        logger.warning("stopped before ready: discovering %s at %s", what, self._host)
