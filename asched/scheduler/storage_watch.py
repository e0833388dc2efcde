"""Which storage resources the scheduler watches, and where (the volume plugins' inputs).

Watched when some profile enables a volume plugin (the default profile enables all four).
PersistentVolumes, claims, StorageClasses, CSINodes and CSIDrivers are served at fixed
paths by every server asched supports (v1.20 on). CSIStorageCapacity moved: ``v1`` since
Kubernetes 1.24, ``v1beta1`` from 1.21, ``v1alpha1`` behind a feature gate before; the
first version whose discovery document lists the resource is watched, and a server that
serves none is not (a class whose driver asks for capacity then finds none, as upstream's
informer would on such a server).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Final

from asched.api.client import KubeClient
from asched.errors import RETRYABLE
from asched.queue.backoff import backoff_seconds

logger = logging.getLogger(__name__)

#: The plugins that read the storage objects.
VOLUME_PLUGINS: Final = frozenset(
    {"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"}
)

#: resource -> collection path, for the resources with one path on every server.
FIXED_PATHS: Final = {
    "persistentvolumes": "/api/v1/persistentvolumes",
    "persistentvolumeclaims": "/api/v1/persistentvolumeclaims",
    "storageclasses": "/apis/storage.k8s.io/v1/storageclasses",
    "csinodes": "/apis/storage.k8s.io/v1/csinodes",
    "csidrivers": "/apis/storage.k8s.io/v1/csidrivers",
}
CAPACITY: Final = "csistoragecapacities"
#: the group versions that may serve CSIStorageCapacity, newest first
CAPACITY_VERSIONS: Final = (
    "/apis/storage.k8s.io/v1",
    "/apis/storage.k8s.io/v1beta1",
    "/apis/storage.k8s.io/v1alpha1",
)


def needs_storage(enabled: Iterable[str]) -> bool:
    """Whether any of the ``enabled`` plugin names reads storage objects."""
    return not VOLUME_PLUGINS.isdisjoint(enabled)


async def capacity_path(client: KubeClient) -> str | None:
    """The collection path of CSIStorageCapacity on this server, or None when not served.

    A discovery request that gets no answer (an unreachable server, a 5xx) is asked again
    after a backoff of 1, 2, 4 ... 10 s (so is a 429 or 5xx): no informer can sync before the server answers,
    and guessing "not served" would leave capacity unconsidered for the process's life.
    A server that answers but lists the resource in no version: None, logged once.
    """
    for group_version in CAPACITY_VERSIONS:
        attempts = 0
        while True:
            try:
                found = await client.request("GET", group_version)
                if found.status < 500 and found.status != 429:
                    break
                problem = f"HTTP {found.status}"
            except RETRYABLE as exc:
                problem = str(exc)
            attempts += 1
            delay = backoff_seconds(attempts, 1.0, 10.0)
            logger.warning(
                "discovering %s failed (%s): asking again in %.0fs", group_version, problem, delay
            )
            await asyncio.sleep(delay)
        if found.status != 200 or not isinstance(found.body, dict):
            continue
        resources = found.body.get("resources")
        if isinstance(resources, list) and any(
            isinstance(r, dict) and r.get("name") == CAPACITY for r in resources
        ):
            return f"{group_version}/{CAPACITY}"
    logger.info(
        "CSIStorageCapacity is not served (looked in %s): storage capacity is not considered",
        ", ".join(CAPACITY_VERSIONS),
    )
    return None
