"""The composition root of ``asched run``: builds everything and runs it in one TaskGroup.

Tasks (all owned by the group; if one fails, the process fails fast and Kubernetes
restarts it): one reflector per watched resource, the reporter, the binder, the
scheduling loop, and (when enabled) the leader's renew loop. Order of life:

1. list+watch everything; ready once every reflector has synced;
2. acquire the lease (when leader election is on);
3. schedule: drain watch events (the single writer), take a binder slot, pop, run one
   synchronous cycle; sleep only when there is nothing to do;
4. on stop: stop popping, let in-flight binds finish (or roll back), flush reports,
   release the lease. Losing the lease instead cancels everything at once (binding
   tasks roll back) and the run ends with LeadershipLost.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from asched import metrics
from asched.api.client import KubeClient
from asched.api.watch import Relisted, WatchEvent
from asched.config.types import SchedulerConfig
from asched.debug import server as debug_server
from asched.extenders.extender import Extender
from asched.scheduler import assembly
from asched.scheduler.binder import BindJob, Slot
from asched.scheduler.leader import LeaderElector
from asched.scheduler.options import Options
from asched.scheduler.readiness import Readiness, unless_set
from asched.scheduler.watches import Watches
from asched.serving.health import HealthState

logger = logging.getLogger(__name__)

T = TypeVar("T")


class App:
    """One scheduler process. Build with :meth:`create` inside the running loop."""

    def __init__(
        self,
        config: SchedulerConfig,
        client: KubeClient,
        options: Options,
        *,
        extenders: Sequence[Extender] | None = None,
    ) -> None:
        """``extenders``: the configured ones already built (default: built here)."""
        loop = asyncio.get_running_loop()
        self.config = config
        self.client = client
        self.options = options
        self._work = asyncio.Event()
        self._events: list[WatchEvent | Relisted] = []
        self.stopping = asyncio.Event()
        self.ready = asyncio.Event()
        self.on_ready: list[Callable[[], None]] = []
        parts = assembly.assemble(
            config, client, options, extenders=extenders, clock=loop.time, wakeup=self._work.set
        )
        self.table = parts.table
        self.ledger = parts.ledger
        self.volume_host = parts.volume_host
        #: gang scheduling (None: no profile enables Coscheduling)
        self.gangs = parts.gangs
        self.extenders = parts.extenders
        self.raw = parts.raw
        self.profiles = parts.profiles
        self.queue = parts.queue
        self.reporter = parts.reporter
        self.ingest = parts.ingest
        self.scheduler = parts.scheduler
        self.evictions = parts.evictions
        #: PodGroup statuses (None: no profile enables Coscheduling)
        self.gang_status = parts.gang_status
        #: the debug pages and their recorder (None unless ``options.debug_address``)
        self._pages = parts.pages
        self.recorder = parts.recorder
        #: the debug listener's address once it listens
        self.debug_listening: debug_server.Listening | None = None
        self._elector: LeaderElector | None = None
        self.watches = Watches(client, self._sink, watch_timeout=options.watch_timeout)
        self.reflectors = self.watches.reflectors
        self.readiness = Readiness(self.reflectors, client.host, self.ready)

    def _sink(self, event: WatchEvent | Relisted) -> None:
        self._events.append(event)
        self._work.set()

    def drain(self) -> int:
        """Apply every pending watch event (the single writer); return how many."""
        events, self._events = self._events, []
        for event in events:
            self.ingest.apply(event)
        return len(events)

    async def _wait_for_work(self) -> None:
        if self._events:
            return
        loop = asyncio.get_running_loop()
        wakeup = self.queue.next_wakeup()
        delay = None if wakeup is None else max(0.0, wakeup - loop.time())
        self._work.clear()
        try:
            async with asyncio.timeout(delay):
                await self._work.wait()
        except TimeoutError:
            pass

    async def schedule_loop(self) -> None:
        """Pop and schedule until ``stopping``; never awaits between pop and permit."""
        binder = self.scheduler.binder
        while not self.stopping.is_set():
            self.drain()
            slot = await self._take_slot()
            try:
                if self.stopping.is_set():
                    break
                self.drain()
                qp = self.queue.pop()
                if qp is not None:
                    job = self.scheduler.schedule_one(qp)
                    if isinstance(job, BindJob):
                        binder.start(job, slot.hand_over())  # the binding task owns it now
                    elif job is not None:
                        binder.consult(job, slot.hand_over())  # the extenders' task does
            finally:
                slot.release()  # unless handed over: no pod, or none to bind
            if qp is None:
                await self._unless_stopped(self._wait_for_work())
                continue
            await asyncio.sleep(0)  # let watchers and binding tasks run

    async def _take_slot(self) -> Slot:
        """A binder slot; while every slot is taken, go on applying watch events: the
        binding tasks holding them may be waiting for exactly those (PreBind for the PV
        controller to bind a claim), and would otherwise wait for their timeouts."""
        binder = self.scheduler.binder
        while not binder.slot_free() and not self.stopping.is_set():
            self._work.clear()  # set again by a watch event or a released slot
            if self.drain():
                continue
            await self._unless_stopped(self._work.wait())
        return await binder.take_slot()

    async def wait_synced(self) -> None:
        """Apply what the informers list as it arrives (a big cluster's pods come page by
        page, and a page applied is a page of JSON freed), until every one has synced.
        What each drain built is frozen at once: the records live on, and collections over
        them would rescan a growing heap again and again (a quarter of the sync's CPU);
        the GC itself stays on, so a start that keeps failing (an API server that cannot
        be listed) still has its garbage collected."""
        while not all(r.synced.is_set() for r in self.reflectors):
            self._work.clear()
            if not self._events:
                await self._work.wait()
            self.drain()
            gc.freeze()
        self.drain()
        gc.collect()
        gc.freeze()  # the initial objects live on: keep the cyclic GC from rescanning them
        self.ready.set()
        for callback in self.on_ready:
            callback()
        logger.info(
            "synced: %d nodes, %d pods counted, %d pending",
            self.table.n_nodes,
            len(self.table.pods),
            len(self.queue),
        )

    async def run(
        self, *, elector: LeaderElector | None = None, health: HealthState | None = None
    ) -> None:
        """:meth:`_run`, with the debug listener (when on) from start to end."""
        self._elector = elector
        async with self._debug_pages():
            await self._run(elector=elector, health=health)

    @contextlib.asynccontextmanager
    async def _debug_pages(self) -> AsyncIterator[None]:
        """Serve the debug pages while the block runs (nothing when they are off)."""
        if self._pages is None:
            yield
            return
        async with self._pages.serve(
            queue=self.queue,
            waiting=self.scheduler.waiting,
            binder=self.scheduler.binder,
            identity=self.options.identity,
            leader=lambda: self._elector,
        ) as listening:
            self.debug_listening = listening
            yield

    async def _run(
        self, *, elector: LeaderElector | None = None, health: HealthState | None = None
    ) -> None:
        """Run until :attr:`stopping` is set (graceful) or a root task fails.

        With an ``elector`` nothing is scheduled before the lease is held, and losing it
        (``hold()`` raising LeadershipLost) cancels the whole group at once: binding
        tasks roll back and the error propagates (the process exits non-zero).

        :attr:`stopping` is observed in every state: before the informers have synced
        and while waiting for the lease, setting it cancels that wait, logs why this
        replica never became ready (one WARNING line; INFO for a standby that was only
        waiting for the lease) and returns. Until it schedules, the same line is logged
        every :data:`~asched.scheduler.readiness.NOT_READY_LOG_INTERVAL` seconds.
        """
        absent = await self._watch_at_start()
        if absent is None:
            return
        ended = False
        try:
            async with asyncio.TaskGroup() as group:
                background = [
                    group.create_task(r.run(), name=f"watch {r.kind}") for r in self.reflectors
                ]
                background.append(group.create_task(self.reporter.run(), name="reporter"))
                background.append(group.create_task(self._gauges(health), name="gauges"))
                background += [
                    group.create_task(self.watches.watch_when_served(r), name=f"discover {r}")
                    for r in absent
                ]
                reminder = group.create_task(self.readiness.remind(elector), name="not ready")
                active = await self._unless_stopped(self._become_active(elector, health))
                reminder.cancel()
                if active is None:
                    self.readiness.log_waiting("stopped", elector)
                else:
                    await self._lead(group, background, elector)
                for task in background:
                    task.cancel()
            ended = True
        except Exception:
            ended = True  # a root task failed (a bug): the process exits 1 and restarts
            raise
        finally:
            await self._wind_down(elector, ended=ended)

    async def _watch_at_start(self) -> list[str] | None:
        """Add the reflectors a run adds at its start; the gang resources not served yet
        (to be looked for again), or None when stopped while discovering them."""
        self.watches.add_at_start(n for p in self.config.profiles for n in assembly.enabled(p))
        if self.gangs is None:
            return []
        absent = await self._unless_stopped(self.watches.find_gang_apis())
        if absent is None:
            self.readiness.stopped_discovering(str(self.watches.discovering))
        return absent

    async def _lead(
        self,
        group: asyncio.TaskGroup,
        background: list[asyncio.Task[Any]],
        elector: LeaderElector | None,
    ) -> None:
        """Schedule (holding the lease, with an elector) until stopped, then stop in
        order: the pods held at Permit, the binds in flight, the evictions, the reports."""
        if elector is not None:
            background.append(group.create_task(elector.hold(), name="lease"))
        binder = group.create_task(self.scheduler.binder.run(), name="binder")
        if self.gang_status is not None:  # the leader keeps PodGroup statuses
            background.append(group.create_task(self.gang_status.run(), name="podgroup status"))
        await self.scheduler.binder.running.wait()
        await self.schedule_loop()
        # pods held at Permit would wait out their timeouts (a gang's: minutes): rejected
        # now, their binding tasks roll them back and requeue nothing bound (the next
        # leader decides afresh)
        self.scheduler.waiting.reject_all("the scheduler is stopping")
        self.scheduler.binder.stop()
        await binder
        await self.evictions.drain()
        await self.reporter.flush()

    async def _wind_down(self, elector: LeaderElector | None, *, ended: bool) -> None:
        """What every end of a run does, graceful or not (``ended``: not cancelled)."""
        # a crash or lost lease: evictions still in flight stop at once (another leader
        # decides afresh); after a graceful stop there are none left
        await self.evictions.drain(deadline=0)
        # after a graceful stop, and after a crash too, a leader gives the lease back,
        # so a standby takes over within a retry period rather than a lease duration;
        # a lost lease is not held, and a cancelled run (a killed process) keeps it
        if ended and elector is not None and elector.is_leader:
            await elector.release()
        for extender in self.extenders:
            await extender.close()

    async def _become_active(
        self, elector: LeaderElector | None, health: HealthState | None
    ) -> bool:
        """Wait for the informers, then (with an elector) for the lease; True when done."""
        await self.wait_synced()
        if health is not None:
            health.mark_ready()
        if elector is not None:
            await elector.acquire()
            logger.info("leading as %s", elector.identity)
        return True

    async def _unless_stopped(self, work: Coroutine[Any, Any, T]) -> T | None:
        """``work``'s result, or None when :attr:`stopping` is set first."""
        return await unless_set(self.stopping, work)

    def not_ready_reason(self, elector: LeaderElector | None = None) -> str:
        """Why this replica is not scheduling yet, in one line (never a token)."""
        return self.readiness.reason(elector)

    async def _gauges(self, health: HealthState | None) -> None:
        """Refresh gauges and API reachability once a second."""
        while True:
            metrics.set_pending(self.queue.pending())
            metrics.set_cache_size(self.table.n_nodes, len(self.table.pods), len(self.ledger))
            metrics.BINDS_INFLIGHT.set(len(self.scheduler.binder.in_flight))
            metrics.EXTENDERS_INFLIGHT.set(self.scheduler.binder.consulting)
            metrics.PERMIT_WAITING.set(len(self.scheduler.waiting))
            if health is not None:
                health.set_informers(
                    [
                        f"{r.kind} ({r.last_error or 'not listed yet'})"
                        for r in self.reflectors
                        if not r.live
                    ]
                )
            await asyncio.sleep(1.0)

    def stop(self) -> None:
        self.stopping.set()
        self._work.set()
