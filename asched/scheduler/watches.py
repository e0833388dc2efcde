"""What one run watches: the reflectors, and the gang APIs found as the cluster serves them.

Always watched (:data:`WATCHED`): nodes, pods and the objects the default plugins read.
Added when the run starts: PodDisruptionBudgets (preemption), the storage objects when a
profile enables a volume plugin (:mod:`asched.scheduler.storage_watch`), and, when a
profile enables Coscheduling, where gangs are declared
(:data:`~asched.cluster.gangs.GANG_APIS`): watched when the cluster serves the API, else
looked for again every :data:`GANG_API_POLL_SECONDS` (its CRD may be installed later).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Final

from asched.api.client import KubeClient
from asched.api.watch import Reflector, Relisted, WatchEvent
from asched.cluster.gangs import GANG_APIS
from asched.errors import RETRYABLE
from asched.scheduler import storage_watch

logger = logging.getLogger(__name__)

#: PodDisruptionBudgets (policy/v1 on every supported server, v1.34 on: docs/deploy.md).
BUDGETS_PATH: Final = "/apis/policy/v1/poddisruptionbudgets"

#: Seconds between looks for a gang API the cluster does not serve (yet).
GANG_API_POLL_SECONDS: Final = 30.0

#: kind -> collection path, for what the scheduler and its plugins always read.
WATCHED: Final = {
    "nodes": "/api/v1/nodes",
    "pods": "/api/v1/pods",
    "namespaces": "/api/v1/namespaces",
    "services": "/api/v1/services",
    "replicationcontrollers": "/api/v1/replicationcontrollers",
    "replicasets": "/apis/apps/v1/replicasets",
    "statefulsets": "/apis/apps/v1/statefulsets",
}


class Watches:
    """The reflectors of one run, all feeding ``sink``.

    :attr:`reflectors` is one list for the run's life: what is added later (at start, or
    a gang API found served) is appended to it, so whoever holds it sees every one."""

    def __init__(
        self,
        client: KubeClient,
        sink: Callable[[WatchEvent | Relisted], None],
        *,
        watch_timeout: int,
    ) -> None:
        self._client = client
        self._sink = sink
        self._watch_timeout = watch_timeout
        self.reflectors = [self.reflector(kind, path) for kind, path in WATCHED.items()]
        #: the group version :meth:`find_gang_apis` is asking about (None: none)
        self.discovering: str | None = None

    def reflector(self, kind: str, path: str) -> Reflector:
        """A reflector of ``kind`` at collection ``path`` (not yet in the run's list)."""
        return Reflector(self._client, kind, path, self._sink, watch_timeout=self._watch_timeout)

    def add_at_start(self, enabled: Iterable[str]) -> None:
        """Add the PodDisruptionBudgets, and the storage objects when a plugin of the
        ``enabled`` ones reads them."""
        self.reflectors.append(self.reflector("poddisruptionbudgets", BUDGETS_PATH))
        if storage_watch.needs_storage(enabled):
            self.reflectors += [
                self.reflector(kind, path) for kind, path in storage_watch.PATHS.items()
            ]

    async def find_gang_apis(self) -> list[str]:
        """Add a reflector for each gang resource the cluster serves; the resources it
        does not serve (yet), to look for with :meth:`watch_when_served`.
        :attr:`discovering` names the group version asked about meanwhile."""
        absent: list[str] = []
        for resource, group_version in GANG_APIS.items():
            self.discovering = group_version
            if await self.served(group_version):
                self.reflectors.append(self.gang_reflector(resource))
            else:
                absent.append(resource)
        self.discovering = None
        return absent

    def gang_reflector(self, resource: str) -> Reflector:
        """The reflector of a gang resource (one of :data:`GANG_APIS`)."""
        return self.reflector(resource, f"{GANG_APIS[resource]}/{resource}")

    async def served(self, group_version: str) -> bool:
        """Whether the API server serves ``group_version`` (a failed look: assume not)."""
        try:
            found = await self._client.request("GET", group_version)
        except RETRYABLE as exc:
            logger.warning("discovering %s failed (%s): looking again later", group_version, exc)
            return False
        return found.status == 200

    async def watch_when_served(self, resource: str) -> None:
        """Watch ``resource`` once the cluster serves it (its CRD installed later)."""
        group_version = GANG_APIS[resource]
        logger.info(
            "%s are not served (%s): gang members naming one wait; looking again every %.0fs",
            resource,
            group_version,
            GANG_API_POLL_SECONDS,
        )
        served = await self.served(group_version)
        while not served:  # a poll of the API server: there is no event to wait for
            await asyncio.sleep(GANG_API_POLL_SECONDS)
            served = await self.served(group_version)
        logger.info("%s are served now: watching them", resource)
        reflector = self.gang_reflector(resource)
        self.reflectors.append(reflector)
        await reflector.run()
