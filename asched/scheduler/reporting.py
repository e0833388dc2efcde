"""Telling the cluster what happened: pod conditions and events, coalesced per pod.

The cycle is synchronous and must not wait for the API, so it only records what should
be said; one owned worker task says it. Reports are keyed by pod: a pod that fails a
hundred times while the API is slow is reported once with the latest message, and a
repeated FailedScheduling with the same message updates one event's ``series.count``
(at most every ``series_interval`` seconds) instead of creating a hundred events. The
PodScheduled condition is patched only when it (or the nomination) changes
(:mod:`asched.scheduler.status_patch`): a pod retried with the same answer is not written.

Events go to events.k8s.io/v1 (``eventTime`` with microseconds; every supported server
serves it), and each one written, created or a series' count raised, is counted in
``asched_events_total`` by type and reason.

``workers`` requests run at once. Failure reports (condition + event) are never dropped
(coalescing bounds them by the number of pending pods). ``Scheduled`` events are
informational and rate-limited: a token bucket (``scheduled_rate`` per second, burst
``scheduled_burst``) admits them, and the rest are dropped and counted, as are any once
``max_backlog`` reports wait. At thousands of pods per second an event per pod would cost
the API server and etcd as much as the bindings themselves (measured: see
bench/RESULTS.md); kube-scheduler's events are throttled by its client QPS and event spam
filter for the same reason. The shutdown flush has a deadline.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from asched import metrics
from asched.api.client import KubeClient
from asched.api.objects import EventJSON, ObjectReferenceJSON
from asched.cluster.names import NodeName, PodKey
from asched.cluster.records import PodInfo
from asched.errors import DecodeError
from asched.scheduler.status_patch import REASON, SCHEDULER_ERROR, Said, after_write, status_patch

logger = logging.getLogger(__name__)

NOTE_LIMIT: Final = 1024
COMPONENT: Final = "asched"


def truncate_note(message: str) -> str:
    """Upstream's event note limit: 1,024 characters, longer ones end in `` ...``."""
    return message if len(message) <= NOTE_LIMIT else message[: NOTE_LIMIT - 4] + " ..."


def micro_time(epoch: float | None = None) -> str:
    """A MicroTime string (``%Y-%m-%dT%H:%M:%S.%fZ``, UTC)."""
    stamp = time.time() if epoch is None else epoch
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stamp)) + f".{int(stamp % 1 * 1e6):06d}Z"


def rfc3339(epoch: float | None = None) -> str:
    stamp = time.time() if epoch is None else epoch
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


@dataclass(slots=True)
class Report:
    """The latest thing to say about one pod."""

    pod: PodInfo
    reason: str  # Scheduled | FailedScheduling
    message: str
    condition: bool  # patch PodScheduled=False (when it changes)
    #: set ``status.nominatedNodeName`` with the condition ("" removes it; None: leave it)
    nominated: str | None = None
    #: the PodScheduled condition's reason (Unschedulable, or SchedulerError for an error)
    condition_reason: str = REASON


#: events.k8s.io ``action`` per reason (upstream's wording).
_ACTIONS = {"FailedScheduling": "Scheduling", "Scheduled": "Binding", "Preempted": "Preempting"}


@dataclass(slots=True)
class _Series:
    name: str
    note: str
    count: int
    last_sent: float
    kind: str


class Reporter:
    """Coalesces and sends reports; ``run()`` is the owned worker task."""

    def __init__(
        self,
        client: KubeClient,
        *,
        instance: str,
        series_interval: float = 10.0,
        workers: int = 8,
        max_backlog: int = 2000,
        scheduled_rate: float = 50.0,
        scheduled_burst: float = 100.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.instance = instance
        self.series_interval = series_interval
        self.workers = workers
        self.max_backlog = max_backlog
        self.scheduled_rate = scheduled_rate
        self.scheduled_burst = scheduled_burst
        self._tokens = scheduled_burst
        self._refilled = clock()
        self._clock = clock
        #: report key (the pod's key; ``<key>#preempted`` for a Preempted event) -> report
        self._pending: OrderedDict[str, Report] = OrderedDict()
        self._sending: set[str] = set()  # keys of the reports in flight
        #: pods forgotten while a report of theirs was sent
        self._forget_after: set[PodKey] = set()
        self._wake = asyncio.Event()
        self._series: dict[PodKey, dict[str, _Series]] = {}  # pod key -> reason -> series
        self._said: dict[PodKey, Said] = {}  # pod key -> what its status says, as we wrote it
        self.dropped = 0
        self.events_created = 0
        self.events_updated = 0
        self.conditions_patched = 0
        self.conditions_unchanged = 0  # reports whose condition and nomination were current

    def undecodable(self, obj: Mapping[str, Any], error: DecodeError) -> None:
        """A pending pod of ours that does not decode: say why on the pod itself (as far
        as its metadata names it; a pod without a name cannot be addressed)."""
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        name, namespace, uid = (meta.get(k) for k in ("name", "namespace", "uid"))
        if not isinstance(name, str) or not name:
            return
        pod = PodInfo(
            namespace=namespace if isinstance(namespace, str) and namespace else "default",
            name=name,
            uid=uid if isinstance(uid, str) else "",
        )
        self.unschedulable(pod, f"pod cannot be scheduled: {error}")

    def unschedulable(
        self, pod: PodInfo, message: str, nominated: str | None = None, *, error: bool = False
    ) -> None:
        """Report a failed attempt; ``nominated`` also sets (or with "" removes) the pod's
        ``status.nominatedNodeName``. A nomination still pending survives a newer report.
        ``error``: the attempt ended in an internal error (condition reason SchedulerError,
        as upstream), not in "fits nowhere"."""
        earlier = self._pending.get(pod.key)
        if nominated is None and earlier is not None:
            nominated = earlier.nominated
        self._pending[pod.key] = Report(
            pod,
            "FailedScheduling",
            message,
            condition=True,
            nominated=nominated,
            condition_reason=SCHEDULER_ERROR if error else REASON,
        )
        self._pending.move_to_end(pod.key)
        self._wake.set()

    def forget_nomination(self, key: PodKey) -> None:
        """A nomination was cleared (the evictions remove it from the pod's status): a report
        still pending must not set it again, and a later one nominating the same node again
        must write it."""
        pending = self._pending.get(key)
        if pending is not None and pending.nominated:
            pending.nominated = None
        said = self._said.get(key)
        if said is not None:
            self._said[key] = Said(said.uid, said.message, "")

    def preempted(self, victim: PodInfo, message: str) -> None:
        """A Normal ``Preempted`` event on a victim."""
        key = f"{victim.key}#preempted"
        self._pending[key] = Report(victim, "Preempted", message, condition=False)
        self._pending.move_to_end(key)
        self._wake.set()

    def _admit_scheduled(self) -> bool:
        now = self._clock()
        self._tokens = min(
            self.scheduled_burst, self._tokens + (now - self._refilled) * self.scheduled_rate
        )
        self._refilled = now
        if self._tokens < 1.0 or len(self._pending) >= self.max_backlog:
            return False
        self._tokens -= 1.0
        return True

    def scheduled(self, pod: PodInfo, node: NodeName) -> None:
        if not self._admit_scheduled():
            self.dropped += 1  # informational; failures are never dropped
            self._pending.pop(pod.key, None)
            self.forget(pod.key)  # nothing more will be said of it
            return
        message = f"Successfully assigned {pod.key} to {node}"
        self._pending[pod.key] = Report(pod, "Scheduled", message, condition=False)
        self._pending.move_to_end(pod.key)
        self._wake.set()

    def forget(self, key: PodKey) -> None:
        """Drop what is remembered of a pod (it is gone, or nothing more will be said)."""
        if key in self._sending:
            self._forget_after.add(key)  # the send in flight would record it again
        self._said.pop(key, None)
        self._series.pop(key, None)

    @property
    def backlog(self) -> int:
        return len(self._pending)

    async def run(self) -> None:
        """Send reports until cancelled, ``workers`` at a time."""
        async with asyncio.TaskGroup() as group:
            for index in range(self.workers):
                group.create_task(self._worker(), name=f"reporter-{index}")

    async def _worker(self) -> None:
        while True:
            ready = self._take_ready()
            if ready is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            key, report = ready
            self._sending.add(key)
            try:
                await self._send_safely(report)
            finally:
                self._sending.discard(key)
                if key in self._forget_after:  # then ``key`` is the pod's key
                    self._forget_after.discard(report.pod.key)
                    self.forget(report.pod.key)
                if key in self._pending:
                    self._wake.set()  # its newer report waited for this one

    def _take_ready(self) -> tuple[str, Report] | None:
        """The oldest report whose pod has no report in flight (one at a time per pod, so
        that what was last said of it is known before the next one is decided)."""
        for key in self._pending:
            if key not in self._sending:
                return key, self._pending.pop(key)
        return None

    async def _send_safely(self, report: Report) -> None:
        try:
            await self._send(report)
        except Exception:  # the reporter must outlive any one bad answer
            logger.exception("reporting on %s failed", report.pod.key)

    async def flush(self, deadline: float = 5.0) -> None:
        """Send what is pending, failures first, for at most ``deadline`` seconds."""
        failures = [r for r in self._pending.values() if r.condition]
        rest = [r for r in self._pending.values() if not r.condition]
        self._pending.clear()
        try:
            async with asyncio.timeout(deadline):
                for batch in (failures, rest):
                    for start in range(0, len(batch), self.workers):
                        chunk = batch[start : start + self.workers]
                        await asyncio.gather(*(self._send_safely(r) for r in chunk))
        except TimeoutError:
            logger.warning("shutdown: %d reports not sent", len(failures) + len(rest))

    async def _send(self, report: Report) -> None:
        pod = report.pod
        if report.condition:
            await self._condition(report)
        await self._event(report)
        if report.reason in ("Scheduled", "Preempted"):
            self.forget(pod.key)  # nothing more will be said of it

    async def _condition(self, report: Report) -> None:
        """Patch PodScheduled=False (and the nomination) if that changes the pod's status."""
        pod = report.pod
        said = self._said.get(pod.key)
        patch = status_patch(
            pod, report.message, report.nominated, said, rfc3339(), report.condition_reason
        )
        if patch is None:
            self.conditions_unchanged += 1
        else:
            response = await self.client.patch_pod_status(pod.namespace, pod.name, patch)
            if not response.ok:
                self._said.pop(pod.key, None)  # unknown now: the next report reads the pod
                logger.debug("condition on %s: HTTP %d", pod.key, response.status)
                return
            self.conditions_patched += 1
        self._said[pod.key] = after_write(
            pod, report.message, report.nominated, said, report.condition_reason
        )

    async def _event(self, report: Report) -> None:
        pod = report.pod
        note = truncate_note(report.message)
        series = self._series.get(pod.key, {}).get(report.reason)
        now = self._clock()
        if series is not None and series.note == note:
            series.count += 1
            if now - series.last_sent < self.series_interval:
                return
            series.last_sent = now
            await self._update_series(pod, series, report.reason)
            return
        kind = "Warning" if report.reason == "FailedScheduling" else "Normal"
        name = f"{pod.name}.{secrets.token_hex(8)}"
        if await self._create_event(pod, name, report.reason, note, kind):
            self.events_created += 1
            metrics.count_event(kind, report.reason)
            self._series.setdefault(pod.key, {})[report.reason] = _Series(name, note, 1, now, kind)

    async def _create_event(
        self, pod: PodInfo, name: str, reason: str, note: str, kind: str
    ) -> bool:
        """Create the event; returns whether the server took it."""
        regarding: ObjectReferenceJSON = {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod.name,
            "namespace": pod.namespace,
        }
        if pod.uid:
            regarding["uid"] = pod.uid
        body: EventJSON = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": pod.namespace},
            "eventTime": micro_time(),
            "reportingController": COMPONENT,
            "reportingInstance": self.instance,
            "action": _ACTIONS.get(reason, "Binding"),
            "reason": reason,
            "regarding": regarding,
            "note": note,
            "type": kind,
        }
        path = f"/apis/events.k8s.io/v1/namespaces/{pod.namespace}/events"
        response = await self.client.create(path, body)
        if not response.ok:
            logger.debug("event for %s: %d", pod.key, response.status)
        return response.ok

    async def _update_series(self, pod: PodInfo, series: _Series, reason: str) -> None:
        path = f"/apis/events.k8s.io/v1/namespaces/{pod.namespace}/events/{series.name}"
        patch = {"series": {"count": series.count, "lastObservedTime": micro_time()}}
        response = await self.client.patch(path, patch)
        if response.ok:
            self.events_updated += 1
            metrics.count_event(series.kind, reason)
