"""The JSON behind every debug page, read from the running scheduler's own objects.

Every function here is synchronous and only reads: it runs in a request handler on the
scheduler's loop, between two of its cycles, so what it reads is consistent and nothing
it does can change a decision. The pages (:mod:`asched.debug.pages`) render these
documents; scripts may read them directly (``/debug/api/...``).

Places of a pending pod (the queue page): the queue's own (``active``, ``backoff``,
``unschedulable``, ``gated``) and, for a pod in flight, where its attempt is:
``waiting-on-permit`` (a Permit plugin holds it), ``binding`` (its binding cycle runs),
``consulting-extenders`` (its extenders are being asked), else ``in-cycle``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from asched.debug.rates import Rates
from asched.debug.recorder import Recorder
from asched.framework.waiting import WaitingPods
from asched.queue.scheduling_queue import BACKOFF, IN_FLIGHT, SchedulingQueue

#: The order places are listed in.
PLACES: Final = (
    "active",
    "backoff",
    "unschedulable",
    "gated",
    "waiting-on-permit",
    "binding",
    "consulting-extenders",
    "in-cycle",
)
#: Pods listed at most per page load (the counts cover them all).
DEFAULT_LIMIT: Final = 1000


class Binding(Protocol):
    """What the views read of the binder: the pods bound now and the consultations."""

    @property
    def in_flight(self) -> Mapping[Any, Any]: ...

    @property
    def consulting(self) -> int: ...


@dataclass(slots=True)
class Sources:
    """What the debug pages read. ``loop_time`` is the queue's clock (seconds);
    ``leader`` says who leads (identity, and whether this replica does)."""

    queue: SchedulingQueue
    waiting: WaitingPods
    binder: Binding
    recorder: Recorder
    rates: Rates
    identity: str
    loop_time: Callable[[], float]
    leader: Callable[[], dict[str, Any]] = field(default=lambda: {"election": False})
    wall: Callable[[], float] = time.time


def _place(sources: Sources, place: str, key: str, uid: str) -> tuple[str, dict[str, Any]]:
    """The place of a pod in flight, refined, with what holds it there."""
    if place != IN_FLIGHT:
        return place, {}
    waiting = sources.waiting.get(uid) if uid else None
    if waiting is None:
        waiting = next((w for w in sources.waiting if w.key == key), None)
    if waiting is not None and not waiting.decided:
        return "waiting-on-permit", {"node": waiting.node, "plugins": list(waiting.pending_plugins)}
    job = sources.binder.in_flight.get(key)
    if job is not None:
        return "binding", {"node": str(getattr(job, "node", ""))}
    if sources.binder.consulting:
        return "consulting-extenders", {}
    return "in-cycle", {}


def queue_view(sources: Sources, *, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    """Pending pods by place, oldest first within a place, each with its attempts, age
    (seconds since it entered the queue), last reported reason and newest decision."""
    now = sources.loop_time()
    rows: list[dict[str, Any]] = []
    counts = dict.fromkeys(PLACES, 0)
    for queue_place, qp in sources.queue.snapshot():
        pod = qp.pod
        place, extra = _place(sources, queue_place, qp.key, pod.uid)
        counts[place] += 1
        since = qp.initial_attempt if qp.initial_attempt is not None else qp.timestamp
        record = sources.recorder.latest(qp.key)
        row: dict[str, Any] = {
            "pod": qp.key,
            "place": place,
            "profile": pod.scheduler_name,
            "priority": pod.priority,
            "attempts": qp.attempts,
            "age": max(0.0, now - since),
            "reason": sources.recorder.last_reason(qp.key),
            "rejectedBy": sorted(qp.rejected_by),
            "decision": None if record is None else record.seq,
            **extra,
        }
        if queue_place == BACKOFF:
            row["backoffLeft"] = max(0.0, sources.queue.backoff_expiry(qp) - now)
        rows.append(row)
    order = {place: index for index, place in enumerate(PLACES)}
    rows.sort(key=lambda r: (order[r["place"]], -r["age"], r["pod"]))
    return {
        "time": sources.wall(),
        "counts": counts,
        "total": len(rows),
        "truncated": len(rows) > limit,
        "pods": rows[:limit],
    }


def decisions_view(sources: Sources) -> dict[str, Any]:
    """The kept decisions, newest first, without per-node data."""
    recorder = sources.recorder
    return {
        "capacity": recorder.capacity,
        "dropped": recorder.dropped,
        "decisions": [record.summary() for record in recorder.records()],
    }


def now_view(sources: Sources, *, seconds: int = 300) -> dict[str, Any]:
    """Throughput and latency over the last ``seconds``, binds in flight, the leader."""
    rates = sources.rates
    return {
        "time": sources.wall(),
        "identity": sources.identity,
        "leader": sources.leader(),
        "bindsInFlight": len(sources.binder.in_flight),
        "consultingExtenders": sources.binder.consulting,
        "waitingOnPermit": len(sources.waiting),
        "pending": sources.queue.pending(),
        "lastMinute": rates.totals(60),
        "window": rates.totals(seconds),
        "series": rates.series(seconds),
    }
