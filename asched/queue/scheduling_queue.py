"""The scheduling queue: activeQ, backoffQ and the parked unschedulable pods.

Upstream: pkg/scheduler/backend/queue/scheduling_queue.go, PriorityQueue.

State machine of one pending pod (keyed by ``namespace/name``)::

          add                        pop                    bound / gone
    ───────────> active ───────────────────> in flight ─────────────────> (done)
                  ^   ^                          │
       expiry     │   │ event / 5 min            │ failed
    backoff ──────┘   └────── unschedulable <────┤ (rejected, no event since its cycle)
       ^                                         │
       └─────────────────────────────────────────┘ (error, or an event during its cycle)

A pod is in exactly one place at a time (``_where``); heaps use lazy deletion, so moves
are O(log n). Times are loop time from the injected ``clock`` (tests pass a fake one).
Everything here is synchronous: the caller owns the event loop and wakes the cycle when
``wakeup`` fires.

A parked pod stays parked until an event one of its rejectors declares
(:class:`~asched.framework.interface.EnqueueExtensions`, given as ``interests``) and, when
that rejector has a queueing hint (:class:`~asched.framework.interface.QueueingHints`,
given as ``hints``), the hint says the event's object may help it; or until the
``max_unschedulable`` flush or an update of the pod itself; an update of its status
alone (:func:`~asched.queue.updates.pod_updated`), such as the scheduler's own
PodScheduled write, keeps the newer copy where it is, with its backoff and parking time.

Costs: parked pods are indexed by the events that can move them, so ``move(event)`` costs
the pods it moves (a pod no one waits for costs a dict lookup, which lets ingest raise an
event for every bound pod it sees); unschedulable pods are kept in the order they were
parked, so the 5-minute flush and :meth:`next_wakeup` look at the oldest only; gated pods
live apart. A pod that fails goes to backoff instead of parking only when an event one of
its rejectors declares happened while it was in flight (at the granularity of event types:
the hints are not asked there, which may only retry a pod sooner).
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Final

from asched.cluster.names import PodKey
from asched.cluster.records import PodInfo
from asched.framework.events import ANY, UNIVERSAL, ClusterEvent
from asched.framework.interface import QueueingHint
from asched.framework.status import Code, Status
from asched.queue.backoff import backoff_seconds
from asched.queue.queued import QueuedPod
from asched.queue.updates import pod_updated

logger = logging.getLogger(__name__)

ACTIVE: Final = "active"
BACKOFF: Final = "backoff"
UNSCHEDULABLE: Final = "unschedulable"
GATED: Final = "gated"
IN_FLIGHT: Final = "in-flight"
DEFAULT_MAX_UNSCHEDULABLE_SECONDS: Final = 300.0

SortKey = Callable[[PodInfo, float], tuple[float, ...]]


def priority_sort_key(pod: PodInfo, timestamp: float) -> tuple[float, ...]:
    """PrioritySort: higher priority first, then earlier queue time."""
    return (-pod.priority, timestamp)


_Place = tuple[str, int, QueuedPod]


class _Places(dict[PodKey, _Place]):
    """key -> (place, heap token or -1, the queued pod), counting the pods in each place
    as it changes (so the once-a-second pending gauge costs no scan of every pod)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = dict.fromkeys((ACTIVE, BACKOFF, UNSCHEDULABLE, GATED), 0)

    def __setitem__(self, key: PodKey, value: _Place) -> None:
        old = super().get(key)
        if old is not None:
            self.counts[old[0]] -= 1
        self.counts[value[0]] += 1
        super().__setitem__(key, value)

    def __delitem__(self, key: PodKey) -> None:
        self.counts[self[key][0]] -= 1
        super().__delitem__(key)

    def pop(self, key: PodKey, default: None = None) -> _Place | None:  # type: ignore[override]
        found = super().pop(key, None)
        if found is not None:
            self.counts[found[0]] -= 1
        return found


class SchedulingQueue:
    """Pending pods of all profiles; see the module docstring for the state machine."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        sort_key: SortKey = priority_sort_key,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_unschedulable: float = DEFAULT_MAX_UNSCHEDULABLE_SECONDS,
        pre_enqueue: Callable[[PodInfo], Status] | None = None,
        wakeup: Callable[[], None] | None = None,
        interests: Mapping[str, frozenset[ClusterEvent]] | None = None,
        hints: Mapping[tuple[str, str], QueueingHint] | None = None,
    ) -> None:
        self._clock = clock
        self._sort_key = sort_key
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._max_unschedulable = max_unschedulable
        self._pre_enqueue = pre_enqueue
        self._wakeup = wakeup
        self._active: list[tuple[tuple[float, ...], int, int, QueuedPod]] = []
        self._backoff: list[tuple[float, int, int, QueuedPod]] = []
        #: plugin name -> the events that may undo its rejection (the plugins' declarations)
        self._interests: Mapping[str, frozenset[ClusterEvent]] = interests or {}
        #: (profile, plugin) -> its queueing hint (a plugin's args may differ per profile)
        self._hints: Mapping[tuple[str, str], QueueingHint] = hints or {}
        #: unschedulable pods, in the order they were parked (oldest first); an OrderedDict
        #: because a plain dict's first item is found past the holes of removed ones
        self._parked: OrderedDict[PodKey, QueuedPod] = OrderedDict()
        #: gated pods (PreEnqueue said no), which only their own update releases
        self._gated_pods: dict[PodKey, QueuedPod] = {}
        #: event -> the parked pods it may help
        self._waiting: dict[ClusterEvent, dict[PodKey, QueuedPod]] = {event: {} for event in ANY}
        #: event -> the last scheduling cycle during which it happened
        self._event_cycle: dict[ClusterEvent, int] = {}
        #: key -> (place, heap token or -1, the queued pod)
        self._where = _Places()
        self._in_flight: dict[PodKey, QueuedPod] = {}
        self._deleted_in_flight: set[PodKey] = set()
        #: a pod created again under the name of one deleted while in flight, queued once
        #: the old attempt ends (until then the key is the old pod's)
        self._recreated: dict[PodKey, PodInfo] = {}
        self._sequence = itertools.count()
        self.scheduling_cycle = 0

    def _now(self) -> float:
        return self._clock()

    def _token(self) -> int:
        return next(self._sequence)

    def _push_active(self, qp: QueuedPod) -> None:
        token = self._token()
        if qp.initial_attempt is None:
            qp.initial_attempt = self._now()
        heapq.heappush(self._active, (self._sort_key(qp.pod, qp.timestamp), token, token, qp))
        self._where[qp.key] = (ACTIVE, token, qp)
        if self._wakeup is not None:
            self._wakeup()

    def _backoff_expiry(self, qp: QueuedPod) -> float:
        return qp.timestamp + backoff_seconds(qp.attempts, self._initial_backoff, self._max_backoff)

    def _push_backoff_or_active(self, qp: QueuedPod) -> None:
        expiry = self._backoff_expiry(qp)
        if expiry <= self._now():
            self._push_active(qp)
            return
        token = self._token()
        heapq.heappush(self._backoff, (expiry, token, token, qp))
        self._where[qp.key] = (BACKOFF, token, qp)

    def _events_for(self, rejected_by: frozenset[str]) -> frozenset[ClusterEvent]:
        """The events that may help a pod its ``rejected_by`` plugins rejected."""
        if not rejected_by:
            return ANY  # an error, or zero nodes: any node or pod change may help
        events: frozenset[ClusterEvent] = frozenset()
        for plugin in rejected_by:
            events |= self._interests.get(plugin, frozenset())
        return events & ANY  # universal events move every parked pod anyway

    def _park(self, qp: QueuedPod, place: str = UNSCHEDULABLE) -> None:
        qp.unschedulable_since = self._now()
        self._where[qp.key] = (place, -1, qp)
        if place == GATED:
            self._gated_pods[qp.key] = qp
            return
        self._parked[qp.key] = qp
        qp.waiting_for = self._events_for(qp.rejected_by)
        for event in qp.waiting_for:
            self._waiting[event][qp.key] = qp

    def _unpark(self, key: PodKey) -> QueuedPod:
        """Remove a parked (unschedulable or gated) pod from its dict and the event index."""
        qp = self._gated_pods.pop(key, None)
        if qp is not None:
            return qp
        qp = self._parked.pop(key)
        for event in qp.waiting_for:
            del self._waiting[event][key]
        qp.waiting_for = frozenset()
        return qp

    def _holds(self, key: PodKey, token: int) -> bool:
        """Whether the heap entry ``token`` is where ``key`` is (tokens are never reused)."""
        found = self._where.get(key)
        return found is not None and found[1] == token

    def _take(self, key: PodKey) -> QueuedPod | None:
        """Remove a queued (not in-flight) pod from wherever it is; lazy for heaps."""
        found = self._where.pop(key, None)
        if found is None:
            return None
        if found[0] in (UNSCHEDULABLE, GATED):
            self._unpark(key)
        return found[2]

    def _gated(self, pod: PodInfo) -> bool:
        return self._pre_enqueue is not None and not self._pre_enqueue(pod).ok

    def add(self, pod: PodInfo) -> None:
        """A new pending pod (or one seen again after a relist)."""
        if pod.key in self._in_flight:
            self._in_flight_update(pod)
            return
        if pod.key in self._where:
            self.update(pod)
            return
        qp = QueuedPod(pod, timestamp=self._now())
        if self._gated(pod):
            qp.gated = True
            self._park(qp, GATED)
        else:
            self._push_active(qp)

    def update(self, pod: PodInfo) -> None:
        """A pending pod changed: update it in place, or give a parked pod another chance.

        Only a change to something the scheduler reads outside the pod's status moves it
        (upstream's ``isPodUpdated``); otherwise the newer copy replaces the old one where
        it is, with its backoff and parking time unchanged.
        """
        key = pod.key
        if key in self._in_flight:
            self._in_flight_update(pod)
            return
        found = self._where.get(key)
        if found is None:
            self.add(pod)
            return
        place, _, qp = found
        if not pod_updated(qp.pod, pod):
            qp.pod = pod  # same sort key: heaps stay ordered
            return
        if place in (UNSCHEDULABLE, GATED):
            self._unpark(key)
            del self._where[key]
            qp.pod = pod
            if self._gated(pod):
                qp.gated = True
                self._park(qp, GATED)
            elif qp.gated:
                qp.gated = False
                qp.timestamp = self._now()
                self._push_active(qp)
            else:
                self._push_backoff_or_active(qp)
            return
        del self._where[key]  # lazy: the old heap entry is skipped when it comes up
        qp.pod = pod
        if place == ACTIVE:
            self._push_active(qp)
        else:
            self._push_backoff_or_active(qp)

    def _in_flight_update(self, pod: PodInfo) -> None:
        """A pod changed while its attempt runs: a new pod under a deleted one's name waits
        for that attempt to end; a change the scheduler reads makes the attempt's failure
        go to backoff rather than park (upstream does not lose such an update)."""
        key = pod.key
        if key in self._deleted_in_flight:
            self._recreated[key] = pod
            return
        qp = self._in_flight[key]
        if pod_updated(qp.pod, pod):
            qp.updated_in_flight = True
        qp.pod = pod

    def _release_recreated(self, key: PodKey) -> None:
        pod = self._recreated.pop(key, None)
        if pod is not None:
            self.add(pod)

    def delete(self, key: PodKey) -> None:
        """The pod is gone (deleted, or bound by someone else): forget it everywhere."""
        if key in self._in_flight:
            self._deleted_in_flight.add(key)
        self._recreated.pop(key, None)
        self._take(key)

    def pop(self) -> QueuedPod | None:
        """The next pod to schedule, or None when activeQ is empty (after a flush)."""
        self.flush()
        while self._active:
            _, _, token, qp = heapq.heappop(self._active)
            if not self._holds(qp.key, token):
                continue  # stale heap entry of a pod that moved or left
            del self._where[qp.key]
            qp.attempts += 1
            self.scheduling_cycle += 1
            qp.generation = self.scheduling_cycle
            self._in_flight[qp.key] = qp
            return qp
        return None

    def done(self, key: PodKey) -> None:
        """The pod left the scheduler's hands (bound, or dropped)."""
        self._in_flight.pop(key, None)
        self._deleted_in_flight.discard(key)
        self._release_recreated(key)

    def requeue(
        self, qp: QueuedPod, status: Status, rejectors: frozenset[str] | None = None
    ) -> bool:
        """Put a pod whose attempt failed back; False if it is gone (upstream:
        AddUnschedulableIfNotPresent).

        ``rejectors``: every plugin that rejected the pod on some node (default: the
        status's plugin). A rejected pod parks, unless an event one of them declares (or a
        universal one) happened while it was in flight: then it goes to backoff."""
        key = qp.key
        self._in_flight.pop(key, None)
        if key in self._deleted_in_flight:
            self._deleted_in_flight.discard(key)
            self._release_recreated(key)
            return False
        qp.timestamp = self._now()
        rejected = status.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        if not rejected:
            qp.rejected_by = frozenset()
        elif rejectors is not None:
            qp.rejected_by = rejectors
        else:
            qp.rejected_by = frozenset({status.plugin}) if status.plugin else frozenset()
        updated, qp.updated_in_flight = qp.updated_in_flight, False
        if not rejected or updated or self._happened_since(qp):
            self._push_backoff_or_active(qp)
        else:
            self._park(qp)
        return True

    def _happened_since(self, qp: QueuedPod) -> bool:
        """Whether an event that may help ``qp`` happened since it was popped."""
        since = qp.generation
        return any(
            self._event_cycle.get(event, -1) >= since
            for event in (*self._events_for(qp.rejected_by), *UNIVERSAL)
        )

    def move(self, event: ClusterEvent, changed: object = None) -> int:
        """Move parked pods that ``event`` may help; return how many moved.

        ``changed``: the object of the event (a node's new NodeInfo, a pod's PodInfo), for
        the rejecting plugins' queueing hints; None moves every pod waiting for the event.
        Costs the pods waiting for the event (the index), so it may be called for every
        watch event."""
        self._event_cycle[event] = self.scheduling_cycle
        waiting = self._waiting.get(event)
        if waiting is None:  # a universal event: every unschedulable pod
            moved = list(self._parked.values())
        elif not waiting:
            return 0
        elif changed is not None and self._hints:
            moved = [qp for qp in waiting.values() if self._may_help(qp, event, changed)]
        else:
            moved = list(waiting.values())
        for qp in moved:
            self._unpark(qp.key)
            del self._where[qp.key]
            self._push_backoff_or_active(qp)
        return len(moved)

    def _may_help(self, qp: QueuedPod, event: ClusterEvent, changed: object) -> bool:
        """Whether a plugin that rejected ``qp`` and declared ``event`` says it may help
        (upstream: any rejector's Queue hint requeues; no hint, or an error, is Queue)."""
        if not qp.rejected_by:
            return True
        profile = qp.pod.scheduler_name
        for plugin in qp.rejected_by:
            if event not in self._interests.get(plugin, frozenset()):
                continue
            hint = self._hints.get((profile, plugin))
            if hint is None:
                return True
            try:
                if hint(event, qp.pod, changed):
                    return True
            except Exception:  # a plugin's hint must not keep a pod parked
                logger.exception("queueing hint of %s for %s raised", plugin, qp.key)
                return True
        return False

    def flush(self) -> None:
        """Backoff expiries to activeQ; pods parked too long back into play."""
        now = self._now()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, token, qp = heapq.heappop(self._backoff)
            if self._holds(qp.key, token):
                self._push_active(qp)
        while self._parked:  # oldest first: stop at the first that is not stale
            qp = next(iter(self._parked.values()))
            if now - qp.unschedulable_since < self._max_unschedulable:
                break
            self._unpark(qp.key)
            del self._where[qp.key]
            self._push_backoff_or_active(qp)

    def next_wakeup(self) -> float | None:
        """Loop time of the next backoff expiry or parked-pod timeout, if any."""
        times = [entry[0] for entry in self._backoff[:1]]
        if self._parked:
            oldest = next(iter(self._parked.values()))
            times.append(oldest.unschedulable_since + self._max_unschedulable)
        return min(times) if times else None

    def pending(self) -> dict[str, int]:
        """Pending pods per queue (``active``, ``backoff``, ``unschedulable``, ``gated``)."""
        return dict(self._where.counts)

    def deleted_in_flight(self, key: PodKey) -> bool:
        """Whether ``key`` was deleted while being scheduled or bound."""
        return key in self._deleted_in_flight

    def where(self, key: PodKey) -> str | None:
        """Which queue holds ``key`` (``in-flight`` while being scheduled or bound)."""
        if key in self._in_flight:
            return IN_FLIGHT
        found = self._where.get(key)
        return None if found is None else found[0]

    def snapshot(self) -> Iterator[tuple[str, QueuedPod]]:
        """Every pending pod with its place (``active``, ``backoff``, ``unschedulable``,
        ``gated`` or ``in-flight``), for read-only views (the debug pages).

        A list is taken first, so the caller may await between items; the QueuedPods are
        the queue's own: read them, never change them."""
        items = [(place, qp) for place, _, qp in self._where.values()]
        items.extend((IN_FLIGHT, qp) for qp in self._in_flight.values())
        return iter(items)

    def backoff_expiry(self, qp: QueuedPod) -> float:
        """Loop time at which a pod in backoff becomes active again (read-only)."""
        return self._backoff_expiry(qp)

    def __len__(self) -> int:
        return len(self._where) + len(self._in_flight)
