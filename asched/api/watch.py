"""List + watch one resource, forever, delivering raw events to a sink.

Protocol (client-go's reflector, simplified): LIST (paginated) and hand the full set to
the sink as one :class:`Relisted` so the consumer can reconcile deletions it missed;
then WATCH from the list's resourceVersion with bookmarks, advancing the version with
every event. A 410 (expired version) relists; a dropped connection or a server error
re-watches from the last version after a jittered exponential backoff (a relist only
if no version is known). The reflector never touches scheduler state: the single
writer drains the sink between cycles.

**State that goes back in time.** An API server restored from an etcd backup, or a
simulator restarted with fresh state on the same address, serves resourceVersions lower
than the one being watched from. Such a watch is not refused: kube-apiserver v1.37
answers 200 and sends nothing until the store catches up, so new pods would stay
pending, silently. So before every re-watch (after a lost connection, a server error or
a watch the server ended) the reflector asks for the collection's current version (one
LIST of one item) and, when it is lower than its own, says so and relists. The relist's
full set replaces what the consumer held. A reflector is :attr:`live` only while its
watch runs from a version the server has (readiness reports the others).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from asched.api.client import KubeClient
from asched.api.objects import ChangeType, KubeObject
from asched.errors import RETRYABLE, WatchExpired

logger = logging.getLogger(__name__)

INITIAL_BACKOFF: Final = 0.2
MAX_BACKOFF: Final = 10.0


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One ADDED / MODIFIED / DELETED event for ``kind`` (a resource name like ``pods``)."""

    kind: str
    type: ChangeType
    obj: KubeObject


@dataclass(frozen=True, slots=True)
class Relisted:
    """The current set of ``kind`` objects after a (re)list: the whole set, or one page of
    it (:data:`PAGED` kinds). Pages come in order, the first with ``first``, the last with
    ``last``; a consumer removes what no page of the list held once it has the last one.
    A whole set is both first and last."""

    kind: str
    objects: list[KubeObject]
    first: bool = True
    last: bool = True


#: kinds handed over page by page: a big cluster's pods and nodes are applied as they
#: arrive, so their parsed JSON is not all held at once (at 500,000 pods, about a
#: gigabyte); the other kinds are small, and their consumers replace the whole set
PAGED: Final = frozenset({"pods", "nodes"})


Sink = Callable[[WatchEvent | Relisted], None]


class Reflector:
    """Keeps one resource's events flowing into ``sink``; see the module docstring."""

    def __init__(
        self,
        client: KubeClient,
        kind: str,
        path: str,
        sink: Sink,
        *,
        page_size: int = 500,
        watch_timeout: int = 300,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.path = path
        self.sink = sink
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.synced = asyncio.Event()
        self.healthy = False
        #: The last failure, as ``list pods: 401 Unauthorized: ...`` (None before any);
        #: kept after recovery, so read it together with :attr:`healthy` and :attr:`synced`.
        self.last_error: str | None = None
        self.relists = 0
        self.reconnects = 0
        self.rewinds = 0
        self._rng = rng or random.Random()

    async def _list(self) -> str:
        kind = _KINDS.get(self.kind, "")
        if self.kind in PAGED:
            count, first, version = 0, True, ""
            async for items, listed_at, last in self.client.list_pages(
                self.path, page_size=self.page_size
            ):
                version = listed_at
                for item in items:
                    item.setdefault("kind", kind)
                self.sink(Relisted(self.kind, items, first=first, last=last))
                count, first = count + len(items), False
        else:
            items, version = await self.client.list_all(self.path, page_size=self.page_size)
            for item in items:
                item.setdefault("kind", kind)
            self.sink(Relisted(self.kind, items))
            count = len(items)
        self.relists += 1
        self.synced.set()
        logger.info("listed %d %s at resourceVersion %s", count, self.kind, version)
        return version

    @property
    def live(self) -> bool:
        """Listed, and watching (or about to re-watch) from a version the server has."""
        return self.synced.is_set() and self.healthy

    async def _went_back(self, version: str) -> str | None:
        """The server's current version when it is lower than ``version``, else None.

        Versions are compared as integers (etcd revisions, as every server asched supports
        issues them); a version that is not one is never judged.
        """
        async for _items, current, _last in self.client.list_pages(self.path, page_size=1):
            try:
                went_back = int(current) < int(version)
            except ValueError:
                return None
            return current if went_back else None
        return None

    async def run(self) -> None:
        """Run until cancelled."""
        version = ""
        delay = INITIAL_BACKOFF
        resuming = False  # the next watch resumes from a version an earlier one reached
        while True:
            try:
                if not version:
                    version = await self._list()
                elif resuming:
                    current = await self._went_back(version)
                    if current is not None:
                        self.rewinds += 1
                        self.healthy = False
                        logger.warning(
                            "the resourceVersion of %s went back from %s to %s (the API"
                            " server's state was restored or replaced): relisting",
                            self.kind,
                            version,
                            current,
                        )
                        version = await self._list()
                resuming = True
                self.healthy = True
                async for event in self.client.watch(
                    self.path, resource_version=version, timeout_seconds=self.watch_timeout
                ):
                    kind = event.get("type", "")
                    obj = event.get("object") or {}
                    version = (obj.get("metadata") or {}).get("resourceVersion") or version
                    if kind in ("ADDED", "MODIFIED", "DELETED"):
                        obj.setdefault("kind", _KINDS.get(self.kind, ""))
                        self.sink(WatchEvent(self.kind, kind, obj))
                delay = INITIAL_BACKOFF
            except WatchExpired:
                logger.info("watch of %s expired at %s: relisting", self.kind, version)
                version = ""
            except RETRYABLE as exc:
                self.healthy = False
                self.reconnects += 1
                self.last_error = f"{'watch' if version else 'list'} {self.kind}: {describe(exc)}"
                wait = delay * (0.5 + self._rng.random())
                logger.warning("%s; retrying in %.2fs", self.last_error, wait)
                await asyncio.sleep(wait)
                delay = min(delay * 2, MAX_BACKOFF)


def describe(exc: BaseException) -> str:
    """An exception as one line for a log: its text, or its class when it has none."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


_KINDS: Final = {
    "pods": "Pod",
    "nodes": "Node",
    "namespaces": "Namespace",
    "services": "Service",
    "replicasets": "ReplicaSet",
    "statefulsets": "StatefulSet",
    "replicationcontrollers": "ReplicationController",
    "poddisruptionbudgets": "PodDisruptionBudget",
    "podgroups": "PodGroup",
    "workloads": "Workload",
}
