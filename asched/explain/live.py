"""Read what ``asched explain`` needs straight from a live cluster, read-only.

The pod to explain is read with one GET, then every collection a snapshot holds
(:data:`COLLECTIONS`: the kinds :func:`asched.cluster.snapshot.build_snapshot` keeps)
with paged LISTs of raw JSON (:meth:`asched.api.client.KubeClient.list_all`, ``limit`` /
``continue``), the way the scheduler's reflectors list. Pods are listed with the field
selector kube-scheduler's informer uses (no Succeeded or Failed pod: they hold nothing on
their node); the scheduler's ingest drops the same pods as it reads them. Every collection
is at a fixed path on every server asched supports (v1.34 on, docs/deploy.md), but the
gangs' (PodGroups, a CRD; Workloads, an alpha API), listed at the paths the scheduler
watches (:data:`~asched.cluster.gangs.GANG_APIS`): they are ``optional``, and a server that
does not serve one (404) has none of it. Forbidden is an error for them as for any other.

What was read becomes a :class:`ClusterRead`: the objects in snapshot order (the pod
being explained left out, so that a pod already bound is not counted on its own node),
decoded by the same :func:`~asched.cluster.snapshot.build_snapshot` as a snapshot file,
and the List document ``--snapshot-out`` saves (those objects, then the pod).

Read-only by construction: everything here goes through :class:`Reader`, a protocol with
only ``get_json`` and ``list_all`` (GETs), so a write does not type-check.

Collections are read one after another, not at once: the answer is the same, the first
failure is deterministic (the first collection in :data:`COLLECTIONS` order), and the
pods' list dominates the time anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol
from urllib.parse import quote

from asched.api.objects import KubeObject
from asched.cluster.gangs import GANG_APIS
from asched.cluster.snapshot import Snapshot, build_snapshot
from asched.errors import ApiError, ApiUnavailable, AschedError, InputError

logger = logging.getLogger(__name__)

#: Objects per LIST page (the scheduler's reflectors use the same).
PAGE_SIZE: Final = 500

#: kube-scheduler's pod informer selector: a finished pod holds nothing on its node.
NOT_FINISHED: Final = "status.phase!=Succeeded,status.phase!=Failed"


class Reader(Protocol):
    """The read-only part of :class:`~asched.api.client.KubeClient` this module uses."""

    @property
    def host(self) -> str: ...

    async def get_json(self, path: str, params: Mapping[str, str | int] | None = None) -> Any: ...

    async def list_all(
        self, path: str, *, page_size: int = 500, params: Mapping[str, str | int] | None = None
    ) -> tuple[list[KubeObject], str]: ...


class LiveReadError(AschedError):
    """A read the answer needs failed: forbidden, unauthorized, unreachable, a server
    error. The message is one line naming what was read and why it was needed; the
    command exits 1 with it. (A pod that is not there is bad input: :class:`InputError`.)
    """


@dataclass(frozen=True, slots=True)
class Collection:
    """One collection explain lists.

    ``path``: the cluster-wide collection;
    ``kind`` / ``api_version``: set on each item (a LIST's items carry neither);
    ``needed_for``: what it is read for, said when it cannot be;
    ``optional``: a server may not serve it (a CRD, an alpha API): a 404 is none of it.
    """

    resource: str
    path: str
    kind: str
    api_version: str
    needed_for: str
    optional: bool = False


#: What a snapshot holds, in the order a snapshot file lists it.
COLLECTIONS: Final[tuple[Collection, ...]] = (
    Collection("nodes", "/api/v1/nodes", "Node", "v1", "the nodes the pod could go to"),
    Collection(
        "pods",
        "/api/v1/pods",
        "Pod",
        "v1",
        "the pods already on the nodes: resources, affinity, spreading, preemption",
    ),
    Collection(
        "namespaces",
        "/api/v1/namespaces",
        "Namespace",
        "v1",
        "namespace selectors of pod affinity terms",
    ),
    Collection(
        "services", "/api/v1/services", "Service", "v1", "default topology spreading selectors"
    ),
    Collection(
        "replicationcontrollers",
        "/api/v1/replicationcontrollers",
        "ReplicationController",
        "v1",
        "default topology spreading selectors",
    ),
    Collection(
        "replicasets",
        "/apis/apps/v1/replicasets",
        "ReplicaSet",
        "apps/v1",
        "default topology spreading selectors",
    ),
    Collection(
        "statefulsets",
        "/apis/apps/v1/statefulsets",
        "StatefulSet",
        "apps/v1",
        "default topology spreading selectors",
    ),
    Collection(
        "poddisruptionbudgets",
        "/apis/policy/v1/poddisruptionbudgets",
        "PodDisruptionBudget",
        "policy/v1",
        "the disruption budgets preemption respects",
    ),
    Collection(
        "persistentvolumes",
        "/api/v1/persistentvolumes",
        "PersistentVolume",
        "v1",
        "volume binding, zones and attach limits",
    ),
    Collection(
        "persistentvolumeclaims",
        "/api/v1/persistentvolumeclaims",
        "PersistentVolumeClaim",
        "v1",
        "volume binding, zones, attach limits and ReadWriteOncePod",
    ),
    Collection(
        "storageclasses",
        "/apis/storage.k8s.io/v1/storageclasses",
        "StorageClass",
        "storage.k8s.io/v1",
        "volume binding modes and provisioning topology",
    ),
    Collection(
        "csinodes",
        "/apis/storage.k8s.io/v1/csinodes",
        "CSINode",
        "storage.k8s.io/v1",
        "CSI attach limits",
    ),
    Collection(
        "csidrivers",
        "/apis/storage.k8s.io/v1/csidrivers",
        "CSIDriver",
        "storage.k8s.io/v1",
        "which drivers publish storage capacity",
    ),
    Collection(
        "csistoragecapacities",
        "/apis/storage.k8s.io/v1/csistoragecapacities",
        "CSIStorageCapacity",
        "storage.k8s.io/v1",
        "the storage capacity dynamic provisioning needs",
    ),
    Collection(
        "podgroups",
        f"{GANG_APIS['podgroups']}/podgroups",
        "PodGroup",
        GANG_APIS["podgroups"].removeprefix("/apis/"),
        "gang scheduling (Coscheduling)",
        optional=True,
    ),
    Collection(
        "workloads",
        f"{GANG_APIS['workloads']}/workloads",
        "Workload",
        GANG_APIS["workloads"].removeprefix("/apis/"),
        "gang scheduling (Coscheduling)",
        optional=True,
    ),
)


@dataclass(frozen=True, slots=True)
class ClusterRead:
    """What was read: the pod (as served) and the cluster's objects in snapshot order.

    ``objects`` never holds the pod itself; ``host`` is the API server's URL.
    """

    host: str
    pod: KubeObject
    objects: list[KubeObject]

    @property
    def source(self) -> str:
        """How errors name where the objects came from."""
        return f"the API server {self.host}"

    def snapshot(self, *, keep_annotations: bool = False) -> Snapshot:
        """Decode the objects as a snapshot file is decoded (errors name the object)."""
        return build_snapshot(self.objects, self.source, keep_annotations=keep_annotations)

    def document(self) -> dict[str, Any]:
        """The ``kind: List`` that ``--snapshot-out`` writes: the objects, then the pod."""
        return {"apiVersion": "v1", "kind": "List", "items": [*self.objects, self.pod]}


def describe_failure(exc: ApiError, action: str, needed_for: str = "") -> str:
    """One line for a failed read: ``forbidden: cannot list nodes (needed for ...): ...``.

    ``action``: what was attempted (``list poddisruptionbudgets``, ``get pods "web" in
    namespace "shop"``); ``needed_for``: why, when it is worth saying.
    """
    why = f" (needed for {needed_for})" if needed_for else ""
    if isinstance(exc, ApiUnavailable):
        return f"cannot reach the API server {exc.host}: cannot {action}{why}: {exc.cause}"
    # the client's ApiError reads "<status> <reason>: GET <path>: <the server's message>"
    parts = str(exc).split(": ", 2)
    detail = f": {parts[2]}" if len(parts) == 3 else ""
    if exc.status == 403:
        return f"forbidden: cannot {action}{why}{detail}"
    if exc.status == 401:
        return f"unauthorized: cannot {action}{why}{detail} (check the kubeconfig's credentials)"
    return f"cannot {action}{why}: {exc}"


async def read_pod(reader: Reader, namespace: str, name: str) -> KubeObject:
    """GET the pod ``namespace/name``.

    Raises
    ------
    InputError
        It does not exist: ``pods "web" not found in namespace "shop"``.
    LiveReadError
        Any other failure (forbidden, unreachable...).
    """
    path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}"
    try:
        pod: KubeObject = await reader.get_json(path)
    except ApiError as exc:
        if exc.status == 404:
            raise InputError(f'pods "{name}" not found in namespace "{namespace}"') from None
        action = f'get pods "{name}" in namespace "{namespace}"'
        raise LiveReadError(describe_failure(exc, action, "the pod to explain")) from None
    pod.setdefault("kind", "Pod")
    pod.setdefault("apiVersion", "v1")
    return pod


async def list_collection(
    reader: Reader,
    collection: Collection,
    path: str,
    api_version: str,
    *,
    page_size: int = PAGE_SIZE,
) -> list[KubeObject]:
    """Every object of one collection (pages of ``page_size``), each with ``kind`` and
    ``apiVersion``; none of an ``optional`` one the server does not serve."""
    params = {"fieldSelector": NOT_FINISHED} if collection.resource == "pods" else None
    try:
        items, version = await reader.list_all(path, page_size=page_size, params=params)
    except ApiError as exc:
        if collection.optional and exc.status == 404:
            logger.info("%s are not served (%s): none", collection.resource, path)
            return []
        action = f"list {collection.resource}"
        raise LiveReadError(describe_failure(exc, action, collection.needed_for)) from None
    logger.info("listed %d %s at resourceVersion %s", len(items), collection.resource, version)
    for item in items:
        item.setdefault("kind", collection.kind)
        item.setdefault("apiVersion", api_version)
    return items


def _is(obj: KubeObject, namespace: str, name: str) -> bool:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") == namespace and meta.get("name") == name


async def read_cluster(
    reader: Reader,
    namespace: str,
    name: str,
    collections: Sequence[Collection] = COLLECTIONS,
    *,
    page_size: int = PAGE_SIZE,
    given: KubeObject | None = None,
) -> ClusterRead:
    """Read the pod ``namespace/name`` and every collection, in order (see the module
    docstring), in LIST pages of ``page_size`` objects. Raises :class:`InputError` when
    the pod is not there and :class:`LiveReadError` when a read fails.

    ``pod`` given (a pod from a file, not yet created): it is not read; a pod of the same
    namespace and name in the cluster is left out, as the pod read would be.
    """
    pod = given if given is not None else await read_pod(reader, namespace, name)
    objects: list[KubeObject] = []
    for collection in collections:
        items = await list_collection(
            reader, collection, collection.path, collection.api_version, page_size=page_size
        )
        if collection.resource == "pods":
            items = [item for item in items if not _is(item, namespace, name)]
        objects.extend(items)
    return ClusterRead(reader.host, pod, objects)
