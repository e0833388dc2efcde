"""Watch streams: per-watcher filtering into a queue of pre-encoded lines, and the writer.

Fan-out cost is what matters here: a change is encoded once (cached on the
:class:`~asched.tools.sim.apiserver.store.Event` by :mod:`asched.tools.sim.apiserver.views`) and each watcher only
filters and enqueues the same ``bytes``. The writer drains everything queued into one
chunk per wake-up, so a burst of N events costs one socket write.

Selector semantics follow the watch cache (``cacheWatcher.convertToWatchEvent``): an
object that starts matching arrives as ADDED, one that stops matching as DELETED
(carrying its previous content at the new resourceVersion).

A watcher whose queue exceeds its bound is closed (the stream ends), as the real server
drops unresponsive watchers instead of buffering without limit.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import web

from asched.tools.sim.apiserver import views
from asched.tools.sim.apiserver.resources import ResourceSpec
from asched.tools.sim.apiserver.selectors import FieldSelector, LabelSelector
from asched.tools.sim.apiserver.store import Entry, Event, Table

logger = logging.getLogger(__name__)

JSON = dict[str, Any]


class Render(Protocol):
    """Encode ``event`` as a watch line of type ``type_`` (``previous``: old content)."""

    def __call__(self, event: Event, type_: str, *, previous: bool = False) -> bytes: ...


class Watcher:
    """One open watch on one table: filters, encodes (via the cache) and queues lines.

    The queue is a plain list the writer takes whole (:meth:`take`), with one future to
    wake the writer: cheaper per event than an :class:`asyncio.Queue`, whose put and get
    each cost more than the filtering.
    """

    __slots__ = (
        "_fields",
        "_labels",
        "_limit",
        "_namespace",
        "_plain",
        "_render",
        "_waiter",
        "closed",
        "ended",
        "pending",
        "sent_rv",
        "start_rv",
    )

    def __init__(
        self,
        render: Render,
        namespace: str | None,
        labels: LabelSelector,
        fields: FieldSelector,
        *,
        start_rv: int,
        queue_limit: int,
    ) -> None:
        self._render = render
        self._namespace = namespace
        self._labels = labels
        self._fields = fields
        self._plain = labels.empty and fields.empty
        self._limit = queue_limit
        self._waiter: asyncio.Future[None] | None = None
        #: lines queued and not yet taken by the writer, oldest first
        self.pending: list[bytes] = []
        self.start_rv = start_rv
        self.sent_rv = start_rv
        self.closed = False
        #: closed: the stream ends once :attr:`pending` is written
        self.ended = False

    def matches(self, entry: Entry) -> bool:
        """Whether ``entry`` is in this watch's namespace and selected."""
        if self._namespace is not None and entry.namespace != self._namespace:
            return False
        if self._plain:
            return True
        obj = entry.obj
        return self._labels.matches(obj["metadata"].get("labels")) and self._fields.matches(obj)

    def offer(self, event: Event) -> None:
        """Queue the line for ``event`` if this watcher should see it."""
        if self.closed or event.rv <= self.start_rv:
            return
        if self._plain:
            if self._namespace is not None and event.entry.namespace != self._namespace:
                return
            line = self._render(event, event.type)
        else:
            now = event.type != "DELETED" and self.matches(event.entry)
            before = event.prev is not None and self.matches(event.prev)
            if now and before:
                line = self._render(event, event.type)
            elif now:
                line = self._render(event, "ADDED")
            elif before:
                line = self._render(event, "DELETED", previous=event.type != "DELETED")
            else:
                return
        self.sent_rv = event.rv
        pending = self.pending
        pending.append(line)
        if len(pending) > self._limit:
            logger.warning("closing a watch that fell %d events behind", len(pending))
            self.close()
        else:
            self.wake()

    def queue_line(self, line: bytes) -> None:
        """Queue a line that is not an event of the table (initial state, errors)."""
        self.pending.append(line)
        self.wake()

    def close(self) -> None:
        """End the stream after what is already queued."""
        if not self.closed:
            self.closed = True
            self.ended = True
            self.wake()

    def take(self) -> list[bytes]:
        """Every queued line, oldest first; the queue is then empty."""
        lines, self.pending = self.pending, []
        return lines

    def wake(self) -> None:
        """Wake the writer waiting in :meth:`wait` (if it is)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Return once a line is queued, the watch has ended or :meth:`wake` is called."""
        if self.pending or self.ended:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        try:
            await waiter
        finally:
            self._waiter = None


@dataclass(slots=True)
class StreamTimes:
    """Loop-time instants that end or punctuate a stream (None: never)."""

    deadline: float
    bookmark_every: float | None
    cut_at: float | None


async def stream(
    request: web.BaseRequest,
    spec: ResourceSpec,
    table: Table,
    watcher: Watcher,
    times: StreamTimes,
    headers: dict[str, str],
) -> web.StreamResponse:
    """Write the watch until its deadline, a cut, a close or the client leaving.

    One timer wakes the writer at the next instant it must act on (deadline, cut,
    bookmark); it is set again only when that instant changes, not at every wake-up.
    """
    response = web.StreamResponse(status=200, headers=headers)
    response.enable_chunked_encoding()
    loop = asyncio.get_running_loop()
    timer: asyncio.TimerHandle | None = None
    timer_at: float | None = None

    def on_timer() -> None:
        nonlocal timer_at
        timer_at = None  # fired (perhaps a clock resolution early): set it again if needed
        watcher.wake()

    try:
        await response.prepare(request)
        next_bookmark = _first_bookmark(loop.time(), times)
        while True:
            if not watcher.pending:
                if watcher.ended:
                    break
                now = loop.time()
                if times.cut_at is not None and now >= times.cut_at:
                    if request.transport is not None:
                        request.transport.close()  # abrupt: no terminating chunk
                    return response
                if now >= times.deadline:
                    break
                if next_bookmark is not None and now >= next_bookmark:
                    if table.last_rv > watcher.start_rv:
                        rv = max(table.last_rv, watcher.sent_rv)
                        watcher.sent_rv = rv
                        await response.write(views.bookmark_line(spec, rv))
                    next_bookmark = _next_bookmark(now, times)
                    continue
                wake = min(
                    t for t in (times.deadline, times.cut_at, next_bookmark) if t is not None
                )
                if timer_at != wake:
                    if timer is not None:
                        timer.cancel()
                    timer, timer_at = loop.call_at(wake, on_timer), wake
                await watcher.wait()
                continue
            lines = watcher.take()
            await response.write(b"".join(lines) if len(lines) > 1 else lines[0])
        await response.write_eof()
    except (ConnectionResetError, RuntimeError) as exc:  # the client went away mid-write
        logger.debug("watch on %s ended: %s", spec.resource, exc)
    finally:
        if timer is not None:
            timer.cancel()
        watcher.closed = True
        table.subscribers.discard(watcher)
    return response


def _first_bookmark(now: float, times: StreamTimes) -> float | None:
    if times.bookmark_every is None:
        return None
    return min(now + times.bookmark_every, max(now, times.deadline - 2.0))


def _next_bookmark(now: float, times: StreamTimes) -> float | None:
    """Every ``bookmark_every`` seconds, then every second from 2 s before the deadline
    (what the watch cache does: measured on v1.20, bookmarks at 60 s and each second at the
    end; v1.37's cacher keeps the minute, and the contract tests pin the end)."""
    if times.bookmark_every is None:
        return None
    before_deadline = times.deadline - 2.0
    if now >= before_deadline:
        return now + 1.0
    return min(now + times.bookmark_every, before_deadline)
