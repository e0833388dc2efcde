"""The parts ``App`` runs, built from the configuration and the options
(:func:`assemble`): the node table and its ledger, the profiles (one framework and
algorithm each), the scheduling queue they share, the ingest of watch events, the cycle
with its binder and evictions, the reporter, the gang engine and the debug pages.

Kept apart from the App so that what a run *is* (its tasks and their order of life, in
:mod:`asched.scheduler.app`) reads apart from how its parts are put together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from asched import metrics
from asched.api.client import KubeClient
from asched.cluster.names import PodKey
from asched.cluster.table import NodeTable
from asched.config.types import Profile, SchedulerConfig
from asched.debug.recorder import Recorder
from asched.engine.algorithm import Algorithm
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
from asched.framework.interface import Handle
from asched.framework.runtime import Framework
from asched.framework.waiting import WaitingPods
from asched.gangs.host import GangRuntime, plain_need
from asched.gangs.status import GangStatusWriter
from asched.queue.scheduling_queue import SchedulingQueue, priority_sort_key
from asched.scheduler.binder import Binder
from asched.scheduler.cycle import Scheduler
from asched.scheduler.debug_wiring import DebugPages, callbacks
from asched.scheduler.evictions import Evictions
from asched.scheduler.handle import ApiHandle
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.options import Options
from asched.scheduler.parts import ProfileRuntime
from asched.scheduler.raw import RawObjects
from asched.scheduler.reporting import Reporter
from asched.scheduler.volume_host import ApiVolumeHost


@dataclass(slots=True)
class Parts:
    """Everything one run is made of (see the module docstring)."""

    table: NodeTable
    ledger: Ledger
    #: VolumeBinding's waits for the PV controller
    volume_host: ApiVolumeHost
    #: gang scheduling (None: no profile enables Coscheduling)
    gangs: GangRuntime | None
    #: the configured extenders, in upstream's call order
    extenders: tuple[Extender, ...]
    raw: RawObjects
    profiles: dict[str, ProfileRuntime]
    queue: SchedulingQueue
    reporter: Reporter
    #: the debug pages (None unless the options give them an address)
    pages: DebugPages | None
    ingest: Ingest
    scheduler: Scheduler
    #: the nominations' victims, evicted off the cycle
    evictions: Evictions
    #: PodGroup statuses (None: no profile enables Coscheduling)
    gang_status: GangStatusWriter | None

    @property
    def recorder(self) -> Recorder | None:
        """The debug pages' decision recorder (None when they are off)."""
        return self.pages.recorder if self.pages is not None else None


def assemble(
    config: SchedulerConfig,
    client: KubeClient,
    options: Options,
    *,
    extenders: Sequence[Extender] | None,
    clock: Callable[[], float],
    wakeup: Callable[[], None],
) -> Parts:
    """The parts of one run. ``extenders``: the configured ones already built (None:
    built here); ``clock``: the loop's; ``wakeup``: wakes the scheduling loop (a queue
    change, a binder slot released)."""
    table = NodeTable(capacity=1024)
    waiting = WaitingPods()
    gangs = GangRuntime(table, waiting, clock) if gangs_enabled(config) else None
    built = (
        tuple(extenders)
        if extenders is not None
        else build_extenders(config.extenders, ExtenderClient)
    )
    raw = RawObjects(nodes=any(not e.config.node_cache_capable for e in built))
    volume_host = ApiVolumeHost(client, table)
    handle = ApiHandle(client, gang_host=gangs, volume_host=volume_host)
    profiles = build_profiles(config, table, handle, built, seed=options.seed)
    queue = build_queue(config, profiles, extenders=bool(built), clock=clock, wakeup=wakeup)
    # a pod deleted while its PreBind waits for the PV controller fails that wait at
    # once (the binding task rolls back and frees its slot) instead of timing out
    volume_host.ask_pod_exists(lambda pod: not queue.deleted_in_flight(pod.key))
    reporter = Reporter(client, instance=options.identity)
    pages = _debug_pages(options, clock)
    ledger = Ledger(table)
    kept = raw if built else None  # the raw JSON is kept only for extenders
    ingest = _ingest(table, ledger, queue, profiles, reporter, volume_host, kept, gangs)
    scheduler = _scheduler(
        client, options, profiles, queue, ledger, reporter, pages, built, raw, waiting, gangs, clock
    )
    scheduler.binder.on_release = wakeup
    # the victims of a nomination are evicted off the cycle; a failed eviction drops it
    evictions = Evictions(
        client, reporter, scheduler.waiting, on_failed=scheduler.failures.preemption_failed
    )
    scheduler.failures.evictions = evictions
    return Parts(
        table=table,
        ledger=ledger,
        volume_host=volume_host,
        gangs=gangs,
        extenders=built,
        raw=raw,
        profiles=profiles,
        queue=queue,
        reporter=reporter,
        pages=pages,
        ingest=ingest,
        scheduler=scheduler,
        evictions=evictions,
        gang_status=GangStatusWriter(client, gangs) if gangs is not None else None,
    )


def _scheduler(
    client: KubeClient,
    options: Options,
    profiles: dict[str, ProfileRuntime],
    queue: SchedulingQueue,
    ledger: Ledger,
    reporter: Reporter,
    pages: DebugPages | None,
    extenders: tuple[Extender, ...],
    raw: RawObjects,
    waiting: WaitingPods,
    gangs: GangRuntime | None,
    clock: Callable[[], float],
) -> Scheduler:
    """The cycle, with the binder it hands bind jobs to, and its observers."""
    return Scheduler(
        profiles=profiles,
        queue=queue,
        ledger=ledger,
        binder_factory=lambda s: Binder(s, max_in_flight=options.max_in_flight_binds),
        observer=_observers(reporter, pages),
        clock=clock,
        extenders=extenders,
        raw=raw,
        waiting=waiting,
        gangs=gangs,
    )


def _ingest(
    table: NodeTable,
    ledger: Ledger,
    queue: SchedulingQueue,
    profiles: dict[str, ProfileRuntime],
    reporter: Reporter,
    volume_host: ApiVolumeHost,
    raw: RawObjects | None,
    gangs: GangRuntime | None,
) -> Ingest:
    """The single writer of the table, the ledger and the queue from watch events; it
    keeps the pods' (and nodes') raw JSON in ``raw`` (None: nobody reads it)."""

    def pod_gone(key: PodKey) -> None:
        """The watch saw a pending or in-flight pod go."""
        reporter.forget(key)
        volume_host.pod_gone(key)

    return Ingest(
        table,
        ledger,
        queue,
        profiles,
        on_bad_pod=reporter.undecodable,
        on_pod_gone=pod_gone,
        raw=raw,
        gangs=gangs.index if gangs is not None else None,
        on_gang_gone=gangs.gone if gangs is not None else None,
        keep_annotations=any(p.framework.reads_annotations for p in profiles.values()),
    )


def _observers(reporter: Reporter, pages: DebugPages | None) -> Observers:
    """Who hears of every attempt: the metrics, the reporter, and the debug pages."""
    on_attempt, on_bound = callbacks(pages)
    return Observers(
        reporter=reporter,
        recorder=pages.recorder if pages is not None else None,
        on_attempt=on_attempt,
        on_bound=on_bound,
    )


def _debug_pages(options: Options, clock: Callable[[], float]) -> DebugPages | None:
    """The run's debug pages, when ``options`` give them an address."""
    if options.debug_address is None:
        return None
    return DebugPages(
        options.debug_address,
        decisions=options.debug_decisions,
        clock=clock,
        ssl_context=options.debug_ssl_context,
        middlewares=options.debug_middlewares,
    )


def enabled(profile: Profile) -> tuple[str, ...]:
    """Every plugin the profile runs."""
    return profile.resolved.all_names()


def gangs_enabled(config: SchedulerConfig) -> bool:
    """Whether some profile schedules gangs (enables Coscheduling)."""
    return any(COSCHEDULING in enabled(p) for p in config.profiles)


def build_profiles(
    config: SchedulerConfig,
    table: NodeTable,
    handle: Handle,
    extenders: Sequence[Extender],
    *,
    seed: int | None,
) -> dict[str, ProfileRuntime]:
    """schedulerName -> the profile's framework and algorithm over ``table``, in the
    configuration's order; a profile with Coscheduling also gets the gang engine's
    per-pod need."""
    profiles: dict[str, ProfileRuntime] = {}
    for profile in config.profiles:
        framework = Framework(profile, handle=handle)
        algorithm = Algorithm(
            framework,
            table,
            percentage=config.percentage_of_nodes_to_score,
            seed=seed,
            extender_filters=any_filter(extenders),
            extender_scores=any_prioritizer(extenders),
        )
        framework.observe = _extension_point_observer(profile.scheduler_name)
        need = plain_need(table) if COSCHEDULING in enabled(profile) else None
        profiles[profile.scheduler_name] = ProfileRuntime(framework, algorithm, need)
    return profiles


def build_queue(
    config: SchedulerConfig,
    profiles: dict[str, ProfileRuntime],
    *,
    extenders: bool,
    clock: Callable[[], float],
    wakeup: Callable[[], None],
) -> SchedulingQueue:
    """The one scheduling queue of every profile: sorted by the profiles' QueueSort (the
    configuration holds it to one for all), its PreEnqueue, backoffs and the plugins'
    declared events and queueing hints."""
    first = next(iter(profiles.values())).framework
    return SchedulingQueue(
        clock=clock,
        sort_key=first.queue_sort[0].sort_key if first.queue_sort else priority_sort_key,
        initial_backoff=float(config.pod_initial_backoff_seconds),
        max_backoff=float(config.pod_max_backoff_seconds),
        wakeup=wakeup,
        pre_enqueue=first.run_pre_enqueue if first.pre_enqueue else None,
        interests=interests((p.framework for p in profiles.values()), extenders=extenders),
        hints={
            (name, plugin): hint
            for name, runtime in profiles.items()
            for plugin, hint in runtime.framework.hints.items()
        },
    )


def interests(
    frameworks: Iterable[Framework], *, extenders: bool = False
) -> dict[str, frozenset[ClusterEvent]]:
    """Every profile's plugins' declared events (a plugin's are the same in each profile);
    with extenders, any event may help a pod they rejected (as upstream registers them)."""
    merged: dict[str, frozenset[ClusterEvent]] = {EXTENDER_NAME: ANY} if extenders else {}
    for framework in frameworks:
        for name, events in framework.interests.items():
            merged[name] = merged.get(name, frozenset()) | events
    return merged


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
