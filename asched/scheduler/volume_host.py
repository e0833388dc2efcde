"""VolumeBinding's host in the live scheduler: PUTs through the KubeClient, node labels
and the catalog from the node table.

Implements :class:`~asched.framework.builtin.volume_binding.VolumeHost`. A PUT answered
with anything but 200 (409 Conflict when the object changed since the scheduler read
it, 404 when it is gone, 422, 5xx) or not answered at all raises
:class:`~asched.framework.builtin.volume_binding.prebind.VolumeWriteError` naming the object,
the status and the server's message; PreBind turns it into an Error status.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from asched.api.client import KubeClient
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.volumes import VolumeCatalog
from asched.errors import ApiUnavailable
from asched.framework.builtin.volume_binding import Resource
from asched.framework.builtin.volume_binding.prebind import VolumeWriteError

_KINDS = {
    "persistentvolumes": "PersistentVolume",
    "persistentvolumeclaims": "PersistentVolumeClaim",
}


def _path(resource: Resource, obj: Mapping[str, Any]) -> tuple[str, str]:
    """The object's API path and its name for messages."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = str(meta.get("name", ""))
    if resource == "persistentvolumes":
        return f"/api/v1/persistentvolumes/{name}", name
    namespace = str(meta.get("namespace") or "default")
    return (
        f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}",
        f"{namespace}/{name}",
    )


class ApiVolumeHost:
    """A :class:`VolumeHost` over a KubeClient and the scheduler's node table.

    ``pod_exists``: whether the scheduler still knows the pod (the watch's view); by
    default every pod is taken to exist. :meth:`pod_gone` is the watch telling it a pod
    went: it wakes the PreBinds waiting for that pod (:attr:`pod_listeners`).
    """

    def __init__(
        self,
        client: KubeClient,
        table: NodeTable,
        pod_exists: Callable[[PodInfo], bool] | None = None,
    ) -> None:
        self.client = client
        self.table = table
        self._pod_exists = pod_exists
        self.pod_listeners: list[Callable[[str], None]] = []

    @property
    def catalog(self) -> VolumeCatalog:
        return self.table.volumes

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        row = self.table.row_of(node)
        return None if row is None else self.table.node_at(row).labels

    def pod_exists(self, pod: PodInfo) -> bool:
        return True if self._pod_exists is None else self._pod_exists(pod)

    def ask_pod_exists(self, pod_exists: Callable[[PodInfo], bool]) -> None:
        """Answer :meth:`pod_exists` with ``pod_exists`` from now on: the scheduling
        queue's view, given once the queue exists (it is built after the plugins that
        hold this host)."""
        self._pod_exists = pod_exists

    def pod_gone(self, key: str) -> None:
        """The watch saw pod ``key`` deleted."""
        for listener in list(self.pod_listeners):
            listener(key)

    async def replace(self, resource: Resource, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        path, name = _path(resource, obj)
        what = f"{_KINDS[resource]} {name}"
        try:
            response = await self.client.replace(path, obj)
        except ApiUnavailable as exc:
            raise VolumeWriteError(f"updating {what} failed: {exc}") from exc
        body = response.body if isinstance(response.body, Mapping) else {}
        if not response.ok:
            message = body.get("message", "")
            raise VolumeWriteError(f"updating {what} rejected ({response.status}): {message}")
        return body
