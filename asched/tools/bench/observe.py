"""The benchmark's eyes: one LIST + WATCH of nodes and pods for the whole run.

Everything measured comes from here, the way scheduler_perf's informer does it: a pod is
*bound* at the moment this watch first sees its ``spec.nodeName`` set, and *created* when
the watch first sees it at all. Times are ``time.monotonic()`` in this process.

The observer also keeps what the placement-quality replay needs, in arrival order
(:attr:`Observer.timeline`): node upserts and deletions, pod arrivals, bindings and
deletions, and named marks (``measure-start``, ``measure-end``). Every watcher of a
resource receives its events in the same (resourceVersion) order, so the order pods are
*added* here is the order they entered the scheduler's queue. The cluster as first listed is
:attr:`Observer.initial_nodes` / :attr:`Observer.initial_pods`.

Invariants watched live: ``spec.nodeName`` never changes once set (a second, different
node is recorded in :attr:`Observer.rebinds`).

Pods and nodes created by the benchmark carry the label ``bench.asched.io/phase``
(``node``, ``init``, ``measured``, ``churn``, ``ceiling``); counts are kept per phase.
On 410 Gone the observer relists and reconciles; pods it then finds bound are stamped
with the relist time (counted in :attr:`Observer.relists`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import aiohttp

from asched.cluster import quantity
from asched.cluster.gangs import POD_GROUP_LABEL
from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import RestClient

logger = logging.getLogger(__name__)

PHASE_LABEL: Final = "bench.asched.io/phase"
NODES_PATH: Final = "/api/v1/nodes"
PODS_PATH: Final = "/api/v1/pods"
_RETRY_DELAY: Final = 0.5

Raw = dict[str, Any]
#: ("node", raw) | ("node-deleted", name) | ("added", uid) | ("bound", uid, slim pod)
#: | ("pod-deleted", uid) | ("mark", label, time)
TimelineEntry = tuple[Any, ...]


@dataclass(slots=True)
class PodRecord:
    """What the watch saw of one pod. Times are monotonic seconds."""

    key: str
    phase: str
    added: float
    bound: float | None = None
    node: str = ""
    deleted: bool = False
    #: ``namespace/name`` of the PodGroup the pod joins (its pod-group label), "" for none
    gang: str = ""
    #: the pod's CPU request in millicores (gang members only; 0 for other pods)
    cpu_milli: int = 0


def slim_pod(obj: Raw) -> Raw:
    """The parts of a pod the replay decodes (metadata identity and labels, the spec)."""
    meta = obj.get("metadata") or {}
    return {
        "metadata": {
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "uid": meta.get("uid", ""),
            "labels": meta.get("labels") or {},
        },
        "spec": obj.get("spec") or {},
    }


def gang_of(obj: Raw) -> str:
    """``namespace/name`` of the PodGroup a pod joins (its pod-group label), "" for none."""
    meta = obj.get("metadata") or {}
    name = (meta.get("labels") or {}).get(POD_GROUP_LABEL)
    return f"{meta.get('namespace', '')}/{name}" if name else ""


def cpu_request_milli(obj: Raw) -> int:
    """The CPU the pod requests, in millicores: the sum over its containers (init
    containers and overhead left out: the benchmark's pods have none). Unparseable
    quantities count as 0 (the API server has validated them)."""
    total = 0
    for container in (obj.get("spec") or {}).get("containers") or []:
        text = ((container.get("resources") or {}).get("requests") or {}).get("cpu")
        if text is None:
            continue
        try:
            total += quantity.canonical("cpu", str(text))
        except ValueError:
            continue
    return total


def phase_of(obj: Raw) -> str:
    """The benchmark phase label of an object ("" for objects we did not create)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return str(labels.get(PHASE_LABEL, ""))


class Observer:
    """LIST + WATCH of nodes and pods; see the module docstring.

    Parameters
    ----------
    rest : RestClient
        A client of its own (watches hold their connections for the whole run).
    clock : callable
        Monotonic seconds (tests pass a fake).
    """

    def __init__(self, rest: RestClient, clock: Callable[[], float] = time.monotonic) -> None:
        self.rest = rest
        self.clock = clock
        self.initial_nodes: list[Raw] = []
        self.initial_pods: list[Raw] = []
        self.timeline: list[TimelineEntry] = []
        self.pods: dict[str, PodRecord] = {}
        self.nodes: dict[str, bool] = {}  # name -> has allocatable (ready for scheduling)
        self.created: Counter[str] = Counter()
        self.bound: Counter[str] = Counter()
        self.last_bound: dict[str, float] = {}
        self.rebinds: list[tuple[str, str, str]] = []
        self.relists = 0
        self.events = 0
        self._versions: dict[str, str] = {}
        self._synced = asyncio.Event()

    async def _list(self, path: str) -> tuple[list[Raw], str]:
        items: list[Raw] = []
        token: str | None = None
        version = ""
        while True:
            chunk = await self.rest.list(path, limit=500, continue_=token)
            items.extend(chunk.get("items") or [])
            meta = chunk.get("metadata") or {}
            version = version or str(meta.get("resourceVersion", ""))
            token = meta.get("continue")
            if not token:
                return items, version

    async def sync(self) -> None:
        """The initial LIST of nodes and pods (the cluster before the benchmark)."""
        nodes, self._versions["nodes"] = await self._list(NODES_PATH)
        pods, self._versions["pods"] = await self._list(PODS_PATH)
        now = self.clock()
        for node in nodes:
            self._node_event("ADDED", node, initial=True)
        for pod in pods:
            self._pod_event("ADDED", pod, now, initial=True)
        self._synced.set()

    async def run(self) -> None:
        """Watch both resources until cancelled (call :meth:`sync` first)."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self._watch("nodes", NODES_PATH), name="observe nodes")
            group.create_task(self._watch("pods", PODS_PATH), name="observe pods")

    async def _watch(self, kind: str, path: str) -> None:
        handle = self._handle_node if kind == "nodes" else self._handle_pod
        while True:
            try:
                async for event in self.rest.watch(
                    path, resource_version=self._versions[kind], allow_watch_bookmarks=True
                ):
                    kind_of = event.get("type")
                    obj = event.get("object") or {}
                    if kind_of == "ERROR":
                        if obj.get("code") == 410:
                            await self._relist(kind, path)
                            break
                        logger.warning("watch %s: error event %s", kind, obj.get("message"))
                        break
                    version = (obj.get("metadata") or {}).get("resourceVersion")
                    if version:
                        self._versions[kind] = str(version)
                    if kind_of != "BOOKMARK":
                        self.events += 1
                        handle(str(kind_of), obj)
            except StatusError as exc:
                if exc.status == 410:
                    await self._relist(kind, path)
                else:
                    logger.warning("watch %s failed (%s); retrying", kind, exc)
                    await asyncio.sleep(_RETRY_DELAY)
            except (OSError, TimeoutError, aiohttp.ClientError) as exc:
                logger.warning("watch %s dropped (%s); retrying", kind, exc)
                await asyncio.sleep(_RETRY_DELAY)

    async def _relist(self, kind: str, path: str) -> None:
        self.relists += 1
        items, self._versions[kind] = await self._list(path)
        now = self.clock()
        if kind == "nodes":
            present = {str(n["metadata"]["name"]) for n in items}
            for name in [n for n in self.nodes if n not in present]:
                self._node_event("DELETED", {"metadata": {"name": name}})
            for node in items:
                self._node_event("MODIFIED", node)
            return
        present = {str(p["metadata"]["uid"]) for p in items}
        for uid, record in self.pods.items():
            if uid not in present and not record.deleted:
                self._pod_event("DELETED", {"metadata": {"uid": uid}}, now)
        for pod in items:
            self._pod_event("MODIFIED", pod, now)

    def _handle_node(self, kind: str, obj: Raw) -> None:
        self._node_event(kind, obj)

    def _handle_pod(self, kind: str, obj: Raw) -> None:
        self._pod_event(kind, obj, self.clock())

    def _node_event(self, kind: str, obj: Raw, *, initial: bool = False) -> None:
        name = str((obj.get("metadata") or {}).get("name", ""))
        if kind == "DELETED":
            if self.nodes.pop(name, None) is not None:
                self.timeline.append(("node-deleted", name))
            return
        ready = bool((obj.get("status") or {}).get("allocatable"))
        self.nodes[name] = ready
        if initial:
            self.initial_nodes.append(obj)
        else:
            self.timeline.append(("node", obj))

    def _pod_event(self, kind: str, obj: Raw, now: float, *, initial: bool = False) -> None:
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        record = self.pods.get(uid)
        if kind == "DELETED":
            if record is not None and not record.deleted:
                record.deleted = True
                if record.node:
                    self.timeline.append(("pod-deleted", uid))
            return
        node = str((obj.get("spec") or {}).get("nodeName") or "")
        if record is None:
            phase = phase_of(obj)
            record = PodRecord(f"{meta.get('namespace', '')}/{meta.get('name', '')}", phase, now)
            record.gang = gang_of(obj)
            if record.gang:
                record.cpu_milli = cpu_request_milli(obj)
            self.pods[uid] = record
            self.created[phase] += 1
            if not initial:
                self.timeline.append(("added", uid))
            if initial and node:
                record.node = node
                record.bound = now
                self.bound[phase] += 1
                self.initial_pods.append(slim_pod(obj))
                return
        if not node or record.deleted:
            return
        if not record.node:
            record.node = node
            record.bound = now
            self.bound[record.phase] += 1
            self.last_bound[record.phase] = now
            self.timeline.append(("bound", uid, slim_pod(obj)))
        elif node != record.node:
            self.rebinds.append((record.key, record.node, node))

    def mark(self, label: str) -> float:
        """Put a named mark in the timeline; return its time."""
        now = self.clock()
        self.timeline.append(("mark", label, now))
        return now

    def ready_nodes(self) -> int:
        """Nodes seen with an allocatable (what a scheduler can place pods on)."""
        return sum(self.nodes.values())

    def records(self, phase: str) -> list[PodRecord]:
        """Every pod of ``phase`` seen so far."""
        return [r for r in self.pods.values() if r.phase == phase]

    async def wait_until(
        self,
        done: Callable[[], bool],
        progress: Callable[[], int],
        *,
        within: float,
        stall: float,
        poll: float = 0.1,
        abort: Callable[[], bool] | None = None,
    ) -> bool:
        """Poll until ``done()``; False after ``within`` s, ``stall`` s without progress, or
        as soon as ``abort()`` is true (e.g. the scheduler process died)."""
        start = last_change = self.clock()
        last = progress()
        while not done():
            if abort is not None and abort():
                return False
            await asyncio.sleep(poll)
            now = self.clock()
            current = progress()
            if current != last:
                last, last_change = current, now
            if now - start > within or now - last_change > stall:
                return False
        return True
