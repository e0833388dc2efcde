"""The framework's handle onto the API: DefaultBinder binds through it.

Binding answers map to statuses the rollback understands: 201 is success; 404 (the pod
is gone) and 409 (it already has a node, or its uid changed) are
UnschedulableAndUnresolvable from the bind plugin, which makes the rollback drop the pod
instead of retrying (the watch reports where it went); anything else is an Error and
the pod is retried with backoff.
"""

from __future__ import annotations

from asched.api.client import KubeClient
from asched.cluster.records import PodInfo
from asched.framework.status import Status


class ApiHandle:
    """Implements :class:`asched.framework.interface.Handle` over a KubeClient."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client

    async def bind(self, pod: PodInfo, node: str) -> Status:
        response = await self.client.bind(pod.namespace, pod.name, pod.uid, node)
        if response.ok:
            return Status.success()
        message = response.body.get("message", "") if isinstance(response.body, dict) else ""
        if response.status in (404, 409):
            return Status.unresolvable(f"binding rejected ({response.status}): {message}")
        return Status.error(f"binding failed ({response.status}): {message}")
