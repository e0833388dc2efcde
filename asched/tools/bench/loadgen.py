"""Creating a workload's objects: N requests in flight, transient failures retried; churn.

:func:`create_many` is scheduler_perf's ``createPods`` with its client rate limit lifted:
a fixed number of requests in flight (64 by default), objects built lazily one at a time
so 50,000 pods are never all in memory. A node is a POST and then a status PATCH (a
genuine API server ignores ``status`` on create). 409 AlreadyExists counts as created (a
retried POST that had in fact succeeded); 429, 5xx and dropped connections are retried
with exponential backoff; anything else is a bug in the workload and raises.

:class:`Churner` runs a workload's ``churn`` while the measured pods are created.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import aiohttp

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import RestClient, nodes_path, pods_path
from asched.tools.bench import objects, volume_objects
from asched.tools.bench.observe import PHASE_LABEL
from asched.tools.bench.workload import Churn, NodeGroup, PodGroup

logger = logging.getLogger(__name__)

Raw = dict[str, Any]
RETRIES: Final = 6
#: The PodGroup collection of a namespace (scheduler-plugins' CRD, see gang_objects).
PODGROUPS_PATH: Final = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"
_RETRYABLE: Final = frozenset({429, 500, 502, 503, 504})


class Writer(Protocol):
    """What creating objects needs: a POST to a collection and a merge patch (a
    :class:`~asched.tools.backends.rest.RestClient`, or the leaner
    :class:`~asched.tools.bench.fast_create.FastCreator`). Both raise
    :class:`~asched.tools.backends.errors.StatusError` for a non-2xx answer."""

    async def create(self, path: str, obj: Mapping[str, Any]) -> Any:
        """POST ``obj`` to the collection ``path``."""

    async def patch(self, path: str, patch: Any) -> Any:
        """Merge-patch ``path`` with ``patch``."""


@dataclass(slots=True)
class CreateStats:
    """What one :func:`create_many` call did; ``seconds`` of wall time."""

    created: int = 0
    retries: int = 0
    seconds: float = 0.0

    def rate(self) -> float | None:
        """Objects per second."""
        return self.created / self.seconds if self.seconds > 0 else None


def labelled(raw: Raw, phase: str) -> Raw:
    """``raw`` with the benchmark's phase label set (in place; returns it)."""
    raw.setdefault("metadata", {}).setdefault("labels", {})[PHASE_LABEL] = phase
    return raw


def node_objects(groups: Iterable[NodeGroup], phase: str = "node") -> Iterator[Raw]:
    """Every node of ``groups``, named ``<namePrefix>-<index>`` (index within the group)."""
    for group in groups:
        for index in range(group.count):
            yield labelled(objects.node(group, f"{group.name_prefix}-{index}", index), phase)


def pod_objects(
    groups: Iterable[PodGroup], phase: str, *, scheduler_name: str, name_prefix: str | None = None
) -> Iterator[Raw]:
    """Every pod of ``groups``, named ``<phase>-<group>-<index>`` (``<name_prefix>-<group>-
    <index>`` when given)."""
    for number, group in enumerate(groups):
        for index in range(group.count):
            name = f"{name_prefix or phase}-{number}-{index}"
            yield labelled(objects.pod(group, name, scheduler_name=scheduler_name), phase)


def pod_chains(
    groups: Iterable[PodGroup], phase: str, *, scheduler_name: str, name_prefix: str | None = None
) -> Iterator[tuple[Raw, ...]]:
    """Every pod of ``groups`` (as :func:`pod_objects` names them) after the storage objects
    it needs, in creation order: a pre-bound PV and its claim (upstream's
    ``CreatePodWithPersistentVolume`` creates the claim first, with no PV controller
    running; see :func:`volume_objects.bound_pair`), the unbound claims of its claim
    templates, then the pod."""
    groups = tuple(groups)
    pods = pod_objects(groups, phase, scheduler_name=scheduler_name, name_prefix=name_prefix)
    for group in groups:
        for _ in range(group.count):
            pod = next(pods)
            name, namespace = pod["metadata"]["name"], pod["metadata"]["namespace"]
            chain: list[Raw] = []
            if group.bound_volumes is not None:
                chain += volume_objects.bound_pair(group.bound_volumes, name, namespace, phase)
            chain += [
                volume_objects.unbound_claim(t, name, namespace, phase)
                for t in group.claim_templates
            ]
            yield (*chain, pod)


def node_storage_objects(groups: Iterable[NodeGroup]) -> Iterator[Raw]:
    """The CSINodes and local PVs of every node of ``groups`` (named as
    :func:`node_objects` names the nodes)."""
    for group in groups:
        if group.csi_node is None and group.local_volumes is None:
            continue
        for index in range(group.count):
            name = objects.node(group, f"{group.name_prefix}-{index}", index)["metadata"]["name"]
            if group.csi_node is not None:
                yield volume_objects.csi_node(group.csi_node, name)
            if group.local_volumes is not None:
                yield from volume_objects.local_pvs(group.local_volumes, name)


async def _retrying(call: Callable[[], Awaitable[Any]], stats: CreateStats, what: str) -> None:
    delay = 0.05
    for attempt in range(RETRIES + 1):
        try:
            await call()
            return
        except StatusError as exc:
            if exc.status == 409 and exc.reason == "AlreadyExists":
                return
            if exc.status not in _RETRYABLE or attempt == RETRIES:
                raise
        except (OSError, TimeoutError, aiohttp.ClientError):
            if attempt == RETRIES:
                raise
        stats.retries += 1
        logger.debug("retrying %s (attempt %d)", what, attempt + 1)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


#: kinds whose ``status`` a genuine API server ignores on create: written after the POST
_STATUS_AFTER_CREATE: Final = frozenset({"Node", "PersistentVolume", "PersistentVolumeClaim"})


def collection(raw: Raw) -> str:
    """The collection (API path) an object of ``raw``'s kind is POSTed to."""
    kind = str(raw.get("kind"))
    meta = raw.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    if kind == "Node":
        return nodes_path()
    if kind == "Pod":
        return pods_path(namespace)
    if kind == "PodGroup":
        api_version = str(raw.get("apiVersion") or "")
        if api_version.startswith("scheduling.k8s.io/"):  # v1.37's own PodGroup
            return f"/apis/{api_version}/namespaces/{namespace}/podgroups"
        return PODGROUPS_PATH.format(namespace=namespace)
    if kind in _NAMESPACED:
        return f"/api/v1/namespaces/{namespace}/{_NAMESPACED[kind]}"
    if kind in _CLUSTER:
        return _CLUSTER[kind]
    raise ValueError(f"no collection known for kind {kind!r}")


_NAMESPACED: Final = {"Service": "services", "PersistentVolumeClaim": "persistentvolumeclaims"}
_CLUSTER: Final = {
    "Namespace": "/api/v1/namespaces",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
}


async def _post(rest: Writer, raw: Raw) -> None:
    body = raw
    if raw.get("kind") in _STATUS_AFTER_CREATE:
        body = {k: v for k, v in raw.items() if k != "status"}
    await rest.create(collection(raw), body)


async def _write_status(rest: Writer, raw: Raw) -> None:
    """PATCH the object's ``status`` subresource with ``raw``'s status (a merge patch)."""
    await rest.patch(
        f"{collection(raw)}/{raw['metadata']['name']}/status", {"status": raw["status"]}
    )


async def create_object(rest: Writer, raw: Raw) -> None:
    """POST one object to its collection; a Node, PV or claim then gets its status
    PATCHed (a genuine API server resets ``status`` on create)."""
    await _post(rest, raw)
    if raw.get("kind") in _STATUS_AFTER_CREATE and raw.get("status"):
        await _write_status(rest, raw)


async def create_retrying(rest: Writer, raw: Raw, stats: CreateStats) -> None:
    """:func:`create_object` with retries, the POST and the status write retried apart (a
    retried POST answered AlreadyExists still gets its status written)."""
    kind = str(raw.get("kind"))
    await _retrying(functools.partial(_post, rest, raw), stats, f"create {kind}")
    if kind in _STATUS_AFTER_CREATE and raw.get("status"):
        await _retrying(functools.partial(_write_status, rest, raw), stats, f"{kind} status")


async def delete_object(rest: RestClient, raw: Raw) -> None:
    """DELETE one object created by :func:`create_object` (pods with grace period 0)."""
    kind = raw.get("kind")
    meta = raw["metadata"]
    try:
        if kind == "Node":
            await rest.delete(nodes_path(meta["name"]))
        elif kind == "Pod":
            await rest.delete(pods_path(meta["namespace"], meta["name"]), grace_period_seconds=0)
        elif kind == "Service":
            await rest.delete(f"/api/v1/namespaces/{meta['namespace']}/services/{meta['name']}")
    except StatusError as exc:
        if exc.status != 404:
            raise


@dataclass(slots=True)
class DeleteStats:
    """What one :func:`delete_pods` did so far: pods listed, DELETE calls answered."""

    listed: int = 0
    deleted: int = 0


async def delete_pods(
    rest: RestClient,
    namespace: str,
    label_selector: str = "",
    *,
    per_second: int = 0,
    stats: DeleteStats | None = None,
) -> DeleteStats:
    """Delete the pods of ``namespace`` matching ``label_selector`` as listed now, one every
    ``1 / per_second`` seconds (0: all at once), with default delete options (graceful, as
    scheduler_perf's ``deletePods``); a pod already gone is skipped. ``stats`` is updated as
    it goes (it may be cancelled half way) and returned."""
    stats = stats if stats is not None else DeleteStats()
    path = pods_path(namespace)
    items = await (
        rest.list_all(path, label_selector=label_selector)
        if label_selector
        else rest.list_all(path)
    )
    names = [str(item["metadata"]["name"]) for item in items]
    stats.listed = len(names)
    loop = asyncio.get_running_loop()
    tick = loop.time()
    for name in names:
        if per_second > 0:
            tick += 1.0 / per_second
            await asyncio.sleep(max(0.0, tick - loop.time()))
        try:
            await rest.delete(pods_path(namespace, name))
        except StatusError as exc:
            if exc.status != 404:
                raise
        stats.deleted += 1
    return stats


async def ensure(rest: Writer, raws: Iterable[Raw]) -> None:
    """Create cluster-scoped helpers (namespaces, priority classes); existing ones are fine."""
    stats = CreateStats()
    for raw in raws:
        await create_retrying(rest, raw, stats)


#: One item for :func:`create_many`: an object, or a chain of objects created in order
#: by one worker and counted once (a pod after its claim and PV)
Item = Raw | tuple[Raw, ...]


async def create_many(
    rest: Writer,
    items: Iterable[Item],
    *,
    in_flight: int = 64,
    on_created: Callable[[], None] | None = None,
) -> CreateStats:
    """Create every object of ``items`` with ``in_flight`` chains at a time.

    ``items`` is consumed lazily and shared by the workers (safe: one event loop). A chain
    (a tuple) is created in order and counts once in ``created``: a pod's claim and PV
    before the pod, so the figures count pods, as scheduler_perf's do.
    """
    iterator = iter(items)
    stats = CreateStats()
    start = time.monotonic()

    async def worker() -> None:
        for item in iterator:
            for raw in item if isinstance(item, tuple) else (item,):
                await create_retrying(rest, raw, stats)
            stats.created += 1
            if on_created is not None:
                on_created()

    async with asyncio.TaskGroup() as group:
        for number in range(max(1, in_flight)):
            group.create_task(worker(), name=f"create worker {number}")
    stats.seconds = time.monotonic() - start
    return stats


@dataclass(slots=True)
class Churner:
    """Run a workload's churn until cancelled (see :class:`~asched.tools.bench.workload.Churn`).

    Failures are logged and counted, never fatal: churn is background noise.
    """

    rest: RestClient
    churn: Churn
    scheduler_name: str
    created: int = 0
    deleted: int = 0
    failures: int = 0
    _live: list[list[Raw]] = field(default_factory=list)
    _serial: int = 0

    def _make(self, position: int) -> Raw:
        self._serial += 1
        obj = self.churn.objects[position]
        if obj.node is not None:
            name = f"{obj.node.name_prefix}-{self._serial}"
            return labelled(objects.node(obj.node, name, self._serial), "churn")
        if obj.pod is not None:
            name = f"churn-{position}-{self._serial}"
            raw = objects.pod(obj.pod, name, scheduler_name=self.scheduler_name)
            return labelled(raw, "churn")
        return labelled(objects.service(f"churn-svc-{self._serial}", "bench-churn"), "churn")

    async def _step(self, position: int) -> None:
        live = self._live[position]
        try:
            if self.churn.mode == "recreate" and len(live) >= self.churn.number:
                await delete_object(self.rest, live.pop(0))
                self.deleted += 1
            raw = self._make(position)
            await create_object(self.rest, raw)
            live.append(raw)
            self.created += 1
        except (StatusError, OSError, TimeoutError, aiohttp.ClientError) as exc:
            self.failures += 1
            logger.warning("churn step failed: %s", exc)

    async def run(self) -> None:
        """Tick every ``interval`` seconds (loop time; missed ticks are skipped)."""
        loop = asyncio.get_running_loop()
        self._live = [[] for _ in self.churn.objects]
        next_tick = loop.time()
        while True:
            for position in range(len(self.churn.objects)):
                await self._step(position)
            next_tick += self.churn.interval
            now = loop.time()
            if next_tick < now:  # fell behind: skip missed ticks, like a Go ticker
                next_tick = now + self.churn.interval - (now - next_tick) % self.churn.interval
            await asyncio.sleep(next_tick - now)
