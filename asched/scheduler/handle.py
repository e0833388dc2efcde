"""The framework's handle onto the API: DefaultBinder binds through it.

Binding answers: 201 is success; anything else (404 pod gone, 409 already assigned or a
changed uid, 5xx) is an Error, and the rollback requeues the pod with backoff. That is
safe for a pod that really is gone or bound elsewhere: the watch reports it, and the
queue drops a pod the watch reported deleted or bound, whether it is in flight or
waiting in backoff. It is also what makes a spurious 409 lose nothing. A binding that got
no answer at all (:class:`~asched.errors.ApiUnavailable`: refused, reset, timed out) is
an Error the same way, naming the request and the cause.
"""

from __future__ import annotations

from asched.api.client import KubeClient
from asched.cluster.records import PodInfo
from asched.errors import ApiUnavailable
from asched.framework.hosts import GangHost, VolumeHost
from asched.framework.status import Status


class ApiHandle:
    """Implements :class:`asched.framework.interface.Handle` over a KubeClient, with the
    hosts the app built: the gang engine (:class:`~asched.gangs.host.GangRuntime`, when a
    profile enables Coscheduling) and VolumeBinding's
    :class:`~asched.scheduler.volume_host.ApiVolumeHost`."""

    __slots__ = ("_gang_host", "_volume_host", "client")

    def __init__(
        self,
        client: KubeClient,
        *,
        gang_host: GangHost | None = None,
        volume_host: VolumeHost | None = None,
    ) -> None:
        self.client = client
        self._gang_host = gang_host
        self._volume_host = volume_host

    @property
    def gang_host(self) -> GangHost | None:
        return self._gang_host

    @property
    def volume_host(self) -> VolumeHost | None:
        return self._volume_host

    async def bind(self, pod: PodInfo, node: str) -> Status:
        try:
            response = await self.client.bind(pod.namespace, pod.name, pod.uid, node)
        except ApiUnavailable as exc:
            return Status.error(f"binding failed: {exc}")
        if response.ok:
            return Status.success()
        message = response.body.get("message", "") if isinstance(response.body, dict) else ""
        return Status.error(f"binding rejected ({response.status}): {message}")
