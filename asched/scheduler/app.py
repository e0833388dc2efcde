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
import socket
import ssl
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from asched import metrics
from asched.api.client import KubeClient
from asched.api.watch import Reflector, Relisted, WatchEvent
from asched.cluster.gangs import GANG_APIS
from asched.cluster.names import PodKey
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import Profile, SchedulerConfig
from asched.debug import server as debug_server
from asched.debug.rates import Rates
from asched.debug.recorder import DEFAULT_DECISIONS, Recorder
from asched.debug.views import Sources
from asched.engine.algorithm import Algorithm
from asched.errors import RETRYABLE, DecodeError
from asched.extenders.client import ExtenderClient
from asched.extenders.extender import (
    EXTENDER_NAME,
    Extender,
    any_filter,
    any_prioritizer,
    build_extenders,
)
from asched.framework.builtin.coscheduling import NAME as COSCHEDULING
from asched.framework.events import ANY, ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.waiting import WaitingPods
from asched.gangs.host import GangRuntime, plain_need
from asched.gangs.status import GangStatusWriter
from asched.metrics import AttemptResult
from asched.queue.scheduling_queue import SchedulingQueue, priority_sort_key
from asched.scheduler import storage_watch
from asched.scheduler.binder import Binder, BindJob, Slot
from asched.scheduler.cycle import ProfileRuntime, Scheduler
from asched.scheduler.evictions import Evictions
from asched.scheduler.handle import ApiHandle
from asched.scheduler.ingest import Ingest
from asched.scheduler.leader import LeaderElector
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.raw import RawObjects
from asched.scheduler.reporting import Reporter
from asched.scheduler.volume_host import ApiVolumeHost
from asched.serving.health import HealthState

logger = logging.getLogger(__name__)

#: PodDisruptionBudgets (policy/v1 on every supported server, v1.34 on: docs/deploy.md).
BUDGETS_PATH: Final = "/apis/policy/v1/poddisruptionbudgets"

T = TypeVar("T")

#: Seconds between the log lines saying why the scheduler is not ready yet.
NOT_READY_LOG_INTERVAL: Final = 30.0

#: kind -> collection path, for what the scheduler and its plugins read.
#: (Where gangs are declared, :data:`~asched.cluster.gangs.GANG_APIS`, is watched when
#: served and a profile enables Coscheduling; a cluster without the CRD is polled for it.)
#: Seconds between looks for a gang API the cluster does not serve (yet).
GANG_API_POLL_SECONDS: Final = 30.0

WATCHED: dict[str, str] = {
    "nodes": "/api/v1/nodes",
    "pods": "/api/v1/pods",
    "namespaces": "/api/v1/namespaces",
    "services": "/api/v1/services",
    "replicationcontrollers": "/api/v1/replicationcontrollers",
    "replicasets": "/apis/apps/v1/replicasets",
    "statefulsets": "/apis/apps/v1/statefulsets",
}


def _enabled(profile: Profile) -> tuple[str, ...]:
    """Every plugin the profile runs."""
    return profile.resolved.all_names()


@dataclass(slots=True)
class Options:
    """Run-time options that are not part of KubeSchedulerConfiguration."""

    max_in_flight_binds: int = 64
    seed: int | None = None
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}_{uuid.uuid4()}")
    watch_timeout: int = 300
    #: ``HOST:PORT`` of the read-only debug pages (None: off, and nothing is recorded)
    debug_address: str | None = None
    #: decisions the debug pages keep (the ring's size)
    debug_decisions: int = DEFAULT_DECISIONS
    #: TLS for the debug listener (required with authorization off loopback)
    debug_ssl_context: ssl.SSLContext | None = None
    #: aiohttp middlewares authorizing debug requests (required off loopback)
    debug_middlewares: Sequence[debug_server.Middleware] = ()


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


def _extension_point_observer(profile: str) -> Callable[[str, str, float], None]:
    """``observe(point, status, seconds)`` with the histogram children cached per label set."""
    children: dict[tuple[str, str], Callable[[float], None]] = {}

    def observe(point: str, status: str, seconds: float) -> None:
        child = children.get((point, status))
        if child is None:
            histogram = metrics.FRAMEWORK_EXTENSION_POINT_DURATION
            child = children[(point, status)] = histogram.labels(point, status, profile).observe
        child(seconds)

    return observe


def _observe_bound(job: BindJob, now: float) -> None:
    first = job.qp.initial_attempt if job.qp.initial_attempt is not None else job.started
    metrics.observe_scheduled(job.framework.name, job.qp.attempts, now - first)


def _interests(
    frameworks: Iterable[Framework], *, extenders: bool = False
) -> dict[str, frozenset[ClusterEvent]]:
    """Every profile's plugins' declared events (a plugin's are the same in each profile);
    with extenders, any event may help a pod they rejected (as upstream registers them)."""
    merged: dict[str, frozenset[ClusterEvent]] = {EXTENDER_NAME: ANY} if extenders else {}
    for framework in frameworks:
        for name, events in framework.interests.items():
            merged[name] = merged.get(name, frozenset()) | events
    return merged


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
        self.table = NodeTable(capacity=1024)
        self.ledger = Ledger(self.table)
        self._work = asyncio.Event()
        self._events: list[WatchEvent | Relisted] = []
        # a pod deleted while its PreBind waits for the PV controller fails that wait at
        # once (the binding task rolls back and frees its slot) instead of timing out
        self.volume_host = ApiVolumeHost(client, self.table, pod_exists=self._pod_not_deleted)
        waiting = WaitingPods()
        #: gang scheduling (None: no profile enables Coscheduling)
        self.gangs: GangRuntime | None = None
        if any(COSCHEDULING in _enabled(p) for p in config.profiles):
            self.gangs = GangRuntime(self.table, waiting, loop.time)
        handle = ApiHandle(client, gang_host=self.gangs, volume_host=self.volume_host)
        self.extenders = (
            tuple(extenders)
            if extenders is not None
            else build_extenders(config.extenders, ExtenderClient)
        )
        self.raw = RawObjects(nodes=any(not e.config.node_cache_capable for e in self.extenders))
        self.profiles: dict[str, ProfileRuntime] = {}
        for profile in config.profiles:
            framework = Framework(profile, handle=handle)
            algorithm = Algorithm(
                framework,
                self.table,
                percentage=config.percentage_of_nodes_to_score,
                seed=options.seed,
                extender_filters=any_filter(self.extenders),
                extender_scores=any_prioritizer(self.extenders),
            )
            framework.observe = _extension_point_observer(profile.scheduler_name)
            need = plain_need(self.table) if COSCHEDULING in _enabled(profile) else None
            self.profiles[profile.scheduler_name] = ProfileRuntime(framework, algorithm, need)
        first = next(iter(self.profiles.values())).framework
        self.queue = SchedulingQueue(
            clock=loop.time,
            # the profiles' QueueSort (the configuration holds it to one for all profiles)
            sort_key=first.queue_sort[0].sort_key if first.queue_sort else priority_sort_key,
            initial_backoff=float(config.pod_initial_backoff_seconds),
            max_backoff=float(config.pod_max_backoff_seconds),
            wakeup=self._work.set,
            pre_enqueue=first.run_pre_enqueue if first.pre_enqueue else None,
            interests=_interests(
                (p.framework for p in self.profiles.values()), extenders=bool(self.extenders)
            ),
            hints={
                (name, plugin): hint
                for name, runtime in self.profiles.items()
                for plugin, hint in runtime.framework.hints.items()
            },
        )
        self.reporter = Reporter(client, instance=options.identity)
        #: the debug pages' recorder and rates (None unless ``options.debug_address``)
        self.recorder: Recorder | None = None
        self.rates: Rates | None = None
        self._debug_at: tuple[str, int] | None = None
        on_attempt: Callable[[AttemptResult, str, float], None] = metrics.observe_attempt
        on_bound: Callable[[BindJob, float], None] = _observe_bound
        if options.debug_address is not None:
            host, port = debug_server.parse_address(options.debug_address)
            debug_server.check_exposure(
                host,
                port,
                ssl_context=options.debug_ssl_context,
                middlewares=options.debug_middlewares,
            )
            self._debug_at = host, port
            self.recorder = Recorder(options.debug_decisions)
            self.rates = rates = Rates(clock=loop.time)

            def on_attempt(result: AttemptResult, profile: str, seconds: float) -> None:
                metrics.observe_attempt(result, profile, seconds)
                rates.attempt(result, seconds)

            def on_bound(job: BindJob, now: float) -> None:
                _observe_bound(job, now)
                first = job.qp.initial_attempt
                rates.bound(now - (first if first is not None else job.started))

        self._elector: LeaderElector | None = None
        #: the debug listener's address once it listens
        self.debug_listening: debug_server.Listening | None = None
        self.ingest = Ingest(
            self.table,
            self.ledger,
            self.queue,
            self.profiles,
            on_bad_pod=self._report_bad_pod,
            on_pod_gone=self._pod_gone,
            raw=self.raw if self.extenders else None,
            gangs=self.gangs.index if self.gangs is not None else None,
            on_gang_gone=self.gangs.gone if self.gangs is not None else None,
            keep_annotations=any(p.framework.reads_annotations for p in self.profiles.values()),
        )
        self.scheduler = Scheduler(
            profiles=self.profiles,
            queue=self.queue,
            ledger=self.ledger,
            binder_factory=lambda s: Binder(s, max_in_flight=options.max_in_flight_binds),
            observer=Observers(
                reporter=self.reporter,
                recorder=self.recorder,
                on_attempt=on_attempt,
                on_bound=on_bound,
            ),
            clock=loop.time,
            evictions_factory=lambda s: Evictions(
                client, self.reporter, s.waiting, on_failed=s.preemption_failed
            ),
            extenders=self.extenders,
            raw=self.raw,
            waiting=waiting,
            gangs=self.gangs,
        )
        self.scheduler.binder.on_release = self._work.set
        #: PodGroup statuses (None: no profile enables Coscheduling)
        self.gang_status = GangStatusWriter(client, self.gangs) if self.gangs is not None else None
        self.reflectors = [
            Reflector(client, kind, path, self._sink, watch_timeout=options.watch_timeout)
            for kind, path in WATCHED.items()
        ]
        self.stopping = asyncio.Event()
        self.ready = asyncio.Event()
        self.on_ready: list[Callable[[], None]] = []

    def _report_bad_pod(self, obj: Mapping[str, Any], error: DecodeError) -> None:
        """A pending pod of ours that does not decode: say why on the pod itself."""
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        name, namespace, uid = (meta.get(k) for k in ("name", "namespace", "uid"))
        if not isinstance(name, str) or not name:
            return  # nothing to address a report to
        pod = PodInfo(
            namespace=namespace if isinstance(namespace, str) and namespace else "default",
            name=name,
            uid=uid if isinstance(uid, str) else "",
        )
        self.reporter.unschedulable(pod, f"pod cannot be scheduled: {error}")

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
        if self._debug_at is None or self.recorder is None or self.rates is None:
            yield
            return
        host, port = self._debug_at
        sources = Sources(
            queue=self.queue,
            waiting=self.scheduler.waiting,
            binder=self.scheduler.binder,
            recorder=self.recorder,
            rates=self.rates,
            identity=self.options.identity,
            loop_time=asyncio.get_running_loop().time,
            leader=self._leader,
        )
        async with debug_server.serve(
            sources,
            host,
            port,
            ssl_context=self.options.debug_ssl_context,
            middlewares=self.options.debug_middlewares,
        ) as listening:
            self.debug_listening = listening
            yield

    def _leader(self) -> dict[str, Any]:
        """Who leads, as this replica knows it (for the debug pages)."""
        elector = self._elector
        if elector is None:
            return {"election": False}
        return {
            "election": True,
            "lease": elector.lease_name,
            "leading": elector.is_leader,
            "holder": elector.observed_holder,
        }

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
        every :data:`NOT_READY_LOG_INTERVAL` seconds.
        """
        self.reflectors.append(
            Reflector(
                self.client,
                "poddisruptionbudgets",
                BUDGETS_PATH,
                self._sink,
                watch_timeout=self.options.watch_timeout,
            )
        )
        if storage_watch.needs_storage(n for p in self.config.profiles for n in _enabled(p)):
            paths = storage_watch.PATHS
            self.reflectors += [
                Reflector(
                    self.client, kind, path, self._sink, watch_timeout=self.options.watch_timeout
                )
                for kind, path in paths.items()
            ]
        absent: list[str] = []
        if self.gangs is not None:
            for resource, group_version in GANG_APIS.items():
                served = await self._unless_stopped(self._served(group_version))
                if served is None:
                    self._stopped_discovering(group_version)
                    return
                if served:
                    self.reflectors.append(self._gang_reflector(resource))
                else:
                    absent.append(resource)
        ended = False
        try:
            async with asyncio.TaskGroup() as group:
                background = [
                    group.create_task(r.run(), name=f"watch {r.kind}") for r in self.reflectors
                ]
                background.append(group.create_task(self.reporter.run(), name="reporter"))
                background.append(group.create_task(self._gauges(health), name="gauges"))
                background += [
                    group.create_task(self._await_gang_api(r), name=f"discover {r}") for r in absent
                ]
                reminder = group.create_task(self._log_not_ready(elector), name="not ready")
                active = await self._unless_stopped(self._become_active(elector, health))
                reminder.cancel()
                if active is None:
                    self._log_waiting("stopped", elector)
                else:
                    if elector is not None:
                        background.append(group.create_task(elector.hold(), name="lease"))
                    binder = group.create_task(self.scheduler.binder.run(), name="binder")
                    if self.gang_status is not None:  # the leader keeps PodGroup statuses
                        background.append(
                            group.create_task(self.gang_status.run(), name="podgroup status")
                        )
                    await self.scheduler.binder.running.wait()
                    await self.schedule_loop()
                    # pods held at Permit would wait out their timeouts (a gang's: minutes):
                    # rejected now, their binding tasks roll them back and requeue nothing
                    # bound (the next leader decides afresh)
                    self.scheduler.waiting.reject_all("the scheduler is stopping")
                    self.scheduler.binder.stop()
                    await binder
                    if self.scheduler.evictions is not None:
                        await self.scheduler.evictions.drain()
                    await self.reporter.flush()
                for task in background:
                    task.cancel()
            ended = True
        except Exception:
            ended = True  # a root task failed (a bug): the process exits 1 and restarts
            raise
        finally:
            if self.scheduler.evictions is not None:
                # a crash or lost lease: evictions still in flight stop at once (another
                # leader decides afresh); after a graceful stop there are none left
                await self.scheduler.evictions.drain(deadline=0)
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
        pending = [r for r in self.reflectors if not r.synced.is_set()]
        if pending:
            if len(pending) == len(self.reflectors):
                what = "no informer has synced"
            else:
                kinds = ", ".join(r.kind for r in pending)
                what = f"{len(pending)} of {len(self.reflectors)} informers not synced ({kinds})"
            errors = [r.last_error for r in pending if r.last_error]
            if errors:
                return f"{what}; last error: {errors[0]} (API server {self.client.host})"
            return f"{what}; no answer yet from {self.client.host}"
        if elector is not None and not elector.is_leader:
            why = elector.last_failure or "no attempt finished yet"
            return f"waiting for the leader lease {elector.lease_name} ({why})"
        return "starting"

    def _log_waiting(self, what: str, elector: LeaderElector | None) -> None:
        """One line saying what this replica waits for: WARNING before the informers have
        synced (something is wrong), INFO for a standby waiting for the lease (normal)."""
        reason = self.not_ready_reason(elector)
        if self.ready.is_set():
            logger.info("%s as a standby: %s", what, reason)
        else:
            logger.warning("%s before ready: %s", what, reason)

    async def _log_not_ready(self, elector: LeaderElector | None) -> None:
        """Log what this replica waits for every NOT_READY_LOG_INTERVAL s until cancelled."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            await asyncio.sleep(NOT_READY_LOG_INTERVAL)
            self._log_waiting(f"still waiting after {loop.time() - started:.0f}s", elector)

    def _pod_not_deleted(self, pod: PodInfo) -> bool:
        """Whether the watch has not reported ``pod`` deleted while in flight (asked by
        VolumeBinding's PreBind, so only once the queue exists)."""
        return not self.queue.deleted_in_flight(pod.key)

    def _pod_gone(self, key: PodKey) -> None:
        """The watch saw a pending or in-flight pod go."""
        self.reporter.forget(key)
        self.volume_host.pod_gone(key)

    def _stopped_discovering(self, what: str) -> None:
        """The one line a replica stopped while discovering ``what`` logs."""
        logger.warning("stopped before ready: discovering %s at %s", what, self.client.host)

    def _gang_reflector(self, resource: str) -> Reflector:
        return Reflector(
            self.client,
            resource,
            f"{GANG_APIS[resource]}/{resource}",
            self._sink,
            watch_timeout=self.options.watch_timeout,
        )

    async def _served(self, group_version: str) -> bool:
        """Whether the API server serves ``group_version`` (a failed look: assume not)."""
        try:
            found = await self.client.request("GET", group_version)
        except RETRYABLE as exc:
            logger.warning("discovering %s failed (%s): looking again later", group_version, exc)
            return False
        return found.status == 200

    async def _await_gang_api(self, resource: str) -> None:
        """Watch ``resource`` once the cluster serves it (its CRD installed later)."""
        group_version = GANG_APIS[resource]
        logger.info(
            "%s are not served (%s): gang members naming one wait; looking again every %.0fs",
            resource,
            group_version,
            GANG_API_POLL_SECONDS,
        )
        served = await self._served(group_version)
        while not served:  # a poll of the API server: there is no event to wait for
            await asyncio.sleep(GANG_API_POLL_SECONDS)
            served = await self._served(group_version)
        logger.info("%s are served now: watching them", resource)
        reflector = self._gang_reflector(resource)
        self.reflectors.append(reflector)
        await reflector.run()

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
