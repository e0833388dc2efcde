"""Objects, the resourceVersion counter and the bounded watch history.

One :class:`Store` holds one :class:`Table` per storage (``pods``, ``nodes``, ...); all
tables share a single monotonic resourceVersion counter, as etcd's revision is shared by
every key. Each table keeps its own bounded history of events, like the per-resource
watch cache of kube-apiserver: a watch from a version older than the retained history
gets ``410 Expired`` with the message ``too old resource version: X (Y)``.

Invariants:

* A stored object (``Entry.obj``) is never mutated after :meth:`Store.commit`. Writers
  build a new dict (sharing untouched sub-values is fine) and hand it over; the store
  takes ownership and only replaces its top-level ``metadata`` with a copy carrying the
  new ``resourceVersion``.
* ``Entry.raw`` is the object encoded once with orjson, without ``kind``/``apiVersion``
  (the view's prefix adds them); GET, LIST and every watcher reuse these bytes.
* Subscribers are notified synchronously inside :meth:`Store.commit` / :meth:`Store.remove`,
  so a watch registered in the same event-loop step as a history replay sees every
  event exactly once.
"""

from __future__ import annotations

import bisect
import logging
from collections import deque
from collections.abc import Iterable
from typing import Any, Literal, Protocol

import orjson

logger = logging.getLogger(__name__)

JSON = dict[str, Any]
EventType = Literal["ADDED", "MODIFIED", "DELETED"]


class Entry:
    """One stored object version: the dict, its bytes and its resourceVersion."""

    __slots__ = ("key", "name", "namespace", "obj", "raw", "rv")

    def __init__(self, key: str, namespace: str, name: str, obj: JSON, rv: int) -> None:
        self.key = key
        self.namespace = namespace
        self.name = name
        self.obj = obj
        self.rv = rv
        self.raw = orjson.dumps(obj)


class Event:
    """One change: the new (or, for DELETED, the final) entry and the previous one."""

    __slots__ = ("entry", "lines", "prev", "rv", "type")

    def __init__(self, type_: EventType, entry: Entry, prev: Entry | None) -> None:
        self.type = type_
        self.entry = entry
        self.prev = prev
        self.rv = entry.rv
        #: encoded watch lines, keyed by (view, variant); filled lazily by the encoders.
        self.lines: dict[object, bytes] = {}


class Subscriber(Protocol):
    """Something that wants every event of a table (a watcher)."""

    def offer(self, event: Event) -> None:
        """Take one event; must not block and must not raise."""

    def close(self) -> None:
        """Stop (server shutdown): finish what is queued, then end."""


class TooOld(Exception):
    """A watch start version older than the retained history."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


def object_key(namespace: str, name: str) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped ones."""
    return f"{namespace}/{name}" if namespace else name


class Table:
    """The objects and history of one storage (e.g. all pods)."""

    def __init__(self, name: str, history_limit: int, start_rv: int) -> None:
        self.name = name
        self.objects: dict[str, Entry] = {}
        self.history: deque[Event] = deque()
        self.history_limit = history_limit
        self.subscribers: set[Subscriber] = set()
        self.last_rv = start_rv
        self._start_rv = start_rv
        self._evicted_rv = 0
        self._sorted: list[str] | None = None

    def get(self, key: str) -> Entry | None:
        """The current entry under ``key``."""
        return self.objects.get(key)

    def sorted_keys(self) -> list[str]:
        """All keys in etcd order (cached until an object is added or removed)."""
        if self._sorted is None:
            self._sorted = sorted(self.objects)
        return self._sorted

    def keys_in(self, namespace: str | None, start: str = "") -> list[str]:
        """Sorted keys of one namespace (or all), from ``start`` on."""
        keys = self.sorted_keys()
        if namespace is None:
            low, high = 0, len(keys)
        else:
            low = bisect.bisect_left(keys, namespace + "/")
            high = bisect.bisect_left(keys, namespace + "0")  # "0" sorts right after "/"
        if start:
            low = max(low, bisect.bisect_left(keys, start, low, high))
        return keys[low:high]

    def oldest_allowed(self) -> int:
        """The smallest resourceVersion a watch may start from (Go's ``oldest - 1``)."""
        if self.history and self._evicted_rv:
            return self.history[0].rv - 1
        return max(self._start_rv, self._evicted_rv)

    def since(self, rv: int) -> list[Event]:
        """The retained events after ``rv``; raise :class:`TooOld` if some were dropped."""
        oldest = self.oldest_allowed()
        if rv < oldest:
            raise TooOld(rv, oldest)
        events: list[Event] = []
        for event in reversed(self.history):
            if event.rv <= rv:
                break
            events.append(event)
        events.reverse()
        return events

    def record(self, event: Event) -> None:
        """Append to the history (evicting the oldest) and notify every subscriber."""
        self.last_rv = event.rv
        if self.history_limit > 0:
            self.history.append(event)
            while len(self.history) > self.history_limit:
                self._evicted_rv = self.history.popleft().rv
        else:
            self._evicted_rv = event.rv
        for subscriber in tuple(self.subscribers):
            try:
                subscriber.offer(event)
            except Exception:  # a broken watcher must not fail the write that fed it
                logger.exception("dropping a watcher of %s that failed on an event", self.name)
                self.subscribers.discard(subscriber)
                subscriber.close()

    def shrink(self, limit: int) -> None:
        """Set a new history bound, evicting at once if needed."""
        self.history_limit = limit
        while len(self.history) > max(limit, 0):
            self._evicted_rv = self.history.popleft().rv

    def reset(self, rv: int) -> None:
        """Forget the history, as a restarted server's empty watch cache."""
        self.history.clear()
        self._start_rv = rv
        self._evicted_rv = 0
        self.last_rv = max(self.last_rv, rv)

    def _put(self, entry: Entry) -> Entry | None:
        prev = self.objects.get(entry.key)
        if prev is None:
            self._sorted = None
        self.objects[entry.key] = entry
        return prev


class Store:
    """All tables plus the shared resourceVersion counter."""

    def __init__(self, names: Iterable[str], history_limit: int) -> None:
        self.rv = 1
        self.history_limit = history_limit
        self.tables: dict[str, Table] = {
            name: Table(name, history_limit, self.rv) for name in names
        }

    def table(self, name: str) -> Table:
        """The table of one storage."""
        return self.tables[name]

    def add_table(self, name: str) -> Table:
        """The table of a storage created while serving (a custom resource); kept if it exists.

        Its history starts now: a watch from an older resourceVersion gets 410, as a new
        watch cache's would.
        """
        table = self.tables.get(name)
        if table is None:
            table = Table(name, self.history_limit, self.rv)
            self.tables[name] = table
        return table

    def drop_table(self, name: str) -> None:
        """Forget an empty table and end its watches (a deleted custom resource's storage)."""
        table = self.tables.pop(name, None)
        if table is None:
            return
        for subscriber in tuple(table.subscribers):
            subscriber.close()

    def commit(self, table: Table, obj: JSON, *, record: bool = True) -> Entry:
        """Store ``obj`` (taking ownership) under a new resourceVersion; emit ADDED/MODIFIED."""
        self.rv += 1
        rv = self.rv
        meta = dict(obj["metadata"])
        meta["resourceVersion"] = str(rv)
        obj["metadata"] = meta
        namespace = meta.get("namespace") or ""
        name = meta["name"]
        entry = Entry(object_key(namespace, name), namespace, name, obj, rv)
        prev = table._put(entry)
        if record:
            table.record(Event("MODIFIED" if prev is not None else "ADDED", entry, prev))
        else:
            table.last_rv = rv
        return entry

    def remove(self, table: Table, key: str) -> Entry:
        """Delete ``key``; the DELETED event carries the final object at a new version, and
        so does the entry returned (what v1.37 answers a DELETE with: the removal's version)."""
        prev = table.objects.pop(key)
        table._sorted = None
        self.rv += 1
        obj = dict(prev.obj)
        meta = dict(obj["metadata"])
        meta["resourceVersion"] = str(self.rv)
        obj["metadata"] = meta
        final = Entry(prev.key, prev.namespace, prev.name, obj, self.rv)
        table.record(Event("DELETED", final, prev))
        return final

    def set_history_limit(self, limit: int) -> None:
        """Change every table's history bound (the ``history`` fault)."""
        self.history_limit = limit
        for table in self.tables.values():
            table.shrink(limit)

    def reset_history(self) -> None:
        """Drop all history (what a server restart does to the watch cache)."""
        for table in self.tables.values():
            table.reset(self.rv)

    def counts(self) -> dict[str, int]:
        """Number of objects per storage."""
        return {name: len(table.objects) for name, table in self.tables.items()}
