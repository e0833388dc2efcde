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

from collections.abc import Callable

from asched.api.client import KubeClient
from asched.cluster.records import PodInfo
from asched.errors import ApiUnavailable
from asched.framework.builtin.coscheduling import GangHost
from asched.framework.builtin.volume_binding import VolumeHost
from asched.framework.status import Status


class ApiHandle:
    """Implements :class:`asched.framework.interface.Handle` over a KubeClient.

    ``gang_host`` (set when a profile enables Coscheduling) gives that plugin its host,
    :class:`~asched.gangs.host.GangRuntime`. ``volume_host`` (set by the scheduler)
    gives VolumeBinding's PreBind its host,
    :class:`~asched.scheduler.volume_host.ApiVolumeHost`."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.gang_host: Callable[[], GangHost] | None = None
        self.volume_host: VolumeHost | None = None

    async def bind(self, pod: PodInfo, node: str) -> Status:
        try:
            response = await self.client.bind(pod.namespace, pod.name, pod.uid, node)
        except ApiUnavailable as exc:
            return Status.error(f"binding failed: {exc}")
        if response.ok:
            return Status.success()
        message = response.body.get("message", "") if isinstance(response.body, dict) else ""
        return Status.error(f"binding rejected ({response.status}): {message}")
